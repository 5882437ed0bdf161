//! The closed set of commands the Store executes.
//!
//! Every way of changing or reading state (socket, CLI, window) becomes one of these values
//! first; the Store is the only thing that executes them. Decoding from the wire lives in
//! `protocol`; this module holds only the typed shapes.

use std::path::PathBuf;

use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellSize, FocusDir, Layout, Side, SplitDir};

/// Where a new tab goes: an existing workspace by id or by name, or the active one.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkspaceSelector {
    /// A workspace by id; it must exist.
    Id(WorkspaceId),
    /// A workspace by name; created if there is none of that name.
    Name(String),
    /// The active workspace, or a new one if there is none.
    Active,
}

/// What to run in a new pane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpawnRequest {
    /// Program and arguments; empty means the user's shell.
    pub argv: Vec<String>,
    /// Working directory; `None` means the workspace's.
    pub cwd: Option<PathBuf>,
    /// Extra environment for the child.
    pub env: Vec<(String, String)>,
    /// A title to show until the program sets its own.
    pub title: Option<String>,
}

/// How much of a pane's text to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadSpec {
    /// Lines with `content_seq` at or after this one.
    pub since: Option<u64>,
    /// The last N lines of scrollback and screen.
    pub last: Option<usize>,
    /// Keep colours and attributes as SGR sequences.
    pub ansi: bool,
}

/// One command for the Store.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Version and paths of the server.
    ServerInfo,
    /// Every workspace with its tabs and panes.
    WorkspaceList,
    /// A new, empty workspace.
    WorkspaceCreate {
        /// Its name; defaults to the cwd's last component.
        name: Option<String>,
        /// Its working directory; defaults to the user's home.
        cwd: Option<PathBuf>,
    },
    /// Rename a workspace.
    WorkspaceRename {
        /// Which one.
        workspace: WorkspaceId,
        /// The new name.
        name: String,
    },
    /// Close a workspace and everything in it.
    WorkspaceClose {
        /// Which one.
        workspace: WorkspaceId,
    },
    /// A new tab with one pane.
    TabCreate {
        /// Where it goes.
        workspace: WorkspaceSelector,
        /// Its title.
        title: Option<String>,
        /// What its pane runs.
        spawn: SpawnRequest,
    },
    /// Close a tab and its panes.
    TabClose {
        /// Which one.
        tab: TabId,
    },
    /// Rename a tab.
    TabRename {
        /// Which one.
        tab: TabId,
        /// The new title.
        title: String,
    },
    /// Move a tab to another place in its workspace's order.
    TabMove {
        /// Which one.
        tab: TabId,
        /// Its new index among the workspace's tabs (clamped to the last place).
        index: usize,
    },
    /// Move one divider.
    TabSetRatio {
        /// Which tab.
        tab: TabId,
        /// The path from the root to the split.
        path: Vec<Side>,
        /// The new ratio (clamped; non-finite refused).
        ratio: f64,
    },
    /// Replace a tab's whole layout (same panes, new arrangement).
    TabSetLayout {
        /// Which tab.
        tab: TabId,
        /// The new layout, already decoded (still to be validated against the tab).
        layout: Layout,
    },
    /// Set a tab's size in cells; every pane is resized from its rectangle.
    TabResize {
        /// Which tab.
        tab: TabId,
        /// The new size.
        size: CellSize,
    },
    /// A new pane in a new tab (the CLI's `berth new`).
    PaneSpawn {
        /// Where it goes.
        workspace: WorkspaceSelector,
        /// What it runs.
        spawn: SpawnRequest,
    },
    /// Split a pane; the new pane goes right of or below it.
    PaneSplit {
        /// The pane to split.
        pane: PaneId,
        /// Which way.
        dir: SplitDir,
        /// What the new pane runs; defaults to the split pane's cwd.
        spawn: SpawnRequest,
    },
    /// Close a pane (its process is ended).
    PaneClose {
        /// Which one.
        pane: PaneId,
    },
    /// Send input to a pane.
    PaneSend {
        /// Which one.
        pane: PaneId,
        /// Literal text.
        text: Option<String>,
        /// Named keys (`Enter`, `C-c`, `Up` …), sent after the text.
        keys: Vec<String>,
    },
    /// Send raw input bytes to a pane (what a window encoded: keys, mouse reports, paste).
    PaneInput {
        /// Which one.
        pane: PaneId,
        /// The bytes, as they are.
        data: Vec<u8>,
    },
    /// Read a pane's text.
    PaneRead {
        /// Which one.
        pane: PaneId,
        /// What to read.
        spec: ReadSpec,
    },
    /// Resize one pane's PTY and terminal: a pane alone in its tab resizes the tab (kept and
    /// saved); a pane in a split keeps the size until its tab is laid out again.
    PaneResize {
        /// Which one.
        pane: PaneId,
        /// The new size.
        size: CellSize,
    },
    /// Focus a pane (and its tab and workspace).
    PaneFocus {
        /// Which one.
        pane: PaneId,
    },
    /// Start a tombstone's process again: the agent's resume command, or its argv.
    PaneResume {
        /// Which one.
        pane: PaneId,
    },
    /// An agent reports its kind and session id for a pane.
    SessionReport {
        /// The pane the agent runs in.
        pane: PaneId,
        /// The agent's kind.
        kind: berth_engine::agents::AgentKind,
        /// Its session id.
        session_id: String,
        /// A resume command it reports about itself (run only on explicit resume).
        resume_argv: Option<Vec<String>>,
        /// Its model, if known.
        model: Option<String>,
        /// The caller named the pane on purpose (`berth report-session --pane`): a report for
        /// another pane than the reporter's own (by its ancestry, `trust`) needs it.
        explicit_pane: bool,
    },
    /// Turn a workspace's automatic resume of agents on or off.
    WorkspaceSetAutoResume {
        /// Which one.
        workspace: WorkspaceId,
        /// On or off.
        enabled: bool,
    },
    /// Let agents in a workspace type into its other panes, or stop them (a person only; never
    /// into a pane that waits on a permission request, never an answer to one).
    WorkspaceSetAgentDrive {
        /// Which one.
        workspace: WorkspaceId,
        /// On or off.
        enabled: bool,
    },
    /// Raise a notification (`berth notify`).
    Notify {
        /// The pane it concerns.
        pane: Option<PaneId>,
        /// Its title.
        title: String,
        /// Its body.
        body: String,
        /// Where it came from (`cli`, `hook:<agent>` …).
        source: String,
    },
    /// The kept notifications.
    NotificationsList {
        /// Only those not read yet.
        unread_only: bool,
    },
    /// Mark notifications read: these ids, or a pane's (clearing its attention), or all.
    NotificationsMarkRead {
        /// Which ones; empty with no pane means all.
        ids: Vec<berth_engine::ids::NotificationId>,
        /// A pane whose notifications are all read now.
        pane: Option<PaneId>,
    },
    /// The user looked at a pane: clear its attention, mark its notifications read.
    PaneClearAttention {
        /// Which one.
        pane: PaneId,
    },
    /// An agent hook's payload for a pane.
    HookEvent {
        /// The pane the agent runs in.
        pane: PaneId,
        /// Which agent sent it.
        kind: berth_engine::agents::AgentKind,
        /// The payload as the agent sent it.
        payload: serde_json::Value,
    },
    /// Focus the neighbour of a pane in a direction.
    PaneFocusDirection {
        /// The pane to move from.
        pane: PaneId,
        /// Which way.
        dir: FocusDir,
    },
    /// Answer the permission request a pane's agent is waiting on (`berth decide`).
    Decide {
        /// The pane.
        pane: PaneId,
        /// The answer.
        answer: crate::decisions::DecisionAnswer,
        /// A message for the agent (with a denial).
        message: Option<String>,
        /// The decision meant; an answer for another one (a newer request) is refused. `None`
        /// takes the pane's current decision.
        id: Option<berth_engine::ids::DecisionId>,
    },
    /// Every pending decision (`berth decisions`).
    Decisions,
}

/// What a [`Command`] answers. Each command has one shape of answer (see
/// `protocol::reply_kind`); commands that change something and have nothing to tell answer
/// [`Reply::Done`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `server.info`.
    ServerInfo(crate::view::ServerInfo),
    /// `workspace.list`.
    State(Box<crate::view::StateView>),
    /// Nothing to tell (rename, close, set_layout, resize …).
    Done,
    /// `workspace.create`.
    WorkspaceCreated {
        /// The new workspace.
        workspace: WorkspaceId,
    },
    /// `tab.create`.
    TabCreated {
        /// The new tab.
        tab: TabId,
        /// Its pane.
        pane: PaneId,
    },
    /// `pane.spawn`.
    Spawned {
        /// The new pane.
        pane: PaneId,
        /// Its new tab.
        tab: TabId,
        /// The workspace it went to.
        workspace: WorkspaceId,
    },
    /// `tab.move`: where the tab is now.
    TabMoved {
        /// Its index among the workspace's tabs.
        index: usize,
    },
    /// `tab.set_ratio`: the ratio now in force (clamped), if the path named a split.
    Ratio {
        /// The ratio.
        ratio: Option<f64>,
    },
    /// A pane the command made, focused or reported on (`pane.split`, `pane.focus`,
    /// `session.report`, `hook.event`).
    Pane {
        /// The pane.
        pane: PaneId,
    },
    /// `pane.send`: how many bytes went to the pane.
    Sent {
        /// The byte count.
        bytes: usize,
    },
    /// `pane.read`.
    Read(crate::view::ReadView),
    /// `pane.resume`.
    Resumed {
        /// The pane.
        pane: PaneId,
        /// Its state now.
        state: berth_engine::model::RestoreState,
    },
    /// `workspace.set_auto_resume`.
    AutoResume {
        /// Whether it is on now.
        enabled: bool,
    },
    /// `workspace.set_agent_drive`.
    AgentDrive {
        /// Whether it is on now.
        enabled: bool,
    },
    /// `notify`.
    Notified {
        /// The new notification's id.
        id: String,
    },
    /// `notifications.list`.
    Notifications(Vec<crate::view::NotificationView>),
    /// `notifications.mark_read`, `pane.clear_attention`: how many were marked read.
    Marked {
        /// The count.
        count: usize,
    },
    /// `pane.decide`: the decision that took the answer.
    Decided {
        /// The pane.
        pane: PaneId,
        /// The decision.
        id: berth_engine::ids::DecisionId,
    },
    /// `decision.list`: each pane's pending decision, in the order of the panes.
    Decisions(Vec<(PaneId, crate::decisions::PendingDecision)>),
    /// An internal restore (never on the wire): what was rebuilt.
    Restored {
        /// Panes rebuilt.
        panes: usize,
        /// Of those, resumable.
        resumable: usize,
        /// Panes that may resume themselves, most recently active first.
        auto_resume_candidates: Vec<PaneId>,
    },
}
