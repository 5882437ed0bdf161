//! The Store's typed view: what a client sees of the state, in domain types.
//!
//! The Store builds these values ([`crate::store::Store::view`]); `protocol` turns them into
//! the wire's DTOs and back, and the window draws from them directly. They carry ids,
//! layouts and enums, never wire strings, and hold no locks or handles.

use std::path::PathBuf;

use berth_engine::agents::AgentKind;
use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellSize, Layout};
use berth_engine::model::{Attention, Lifecycle, RestoreState};

pub use crate::decisions::{DecisionAnswer, DecisionOption, PendingDecision};

/// Every workspace with its tabs and panes (the answer of `workspace.list`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StateView {
    /// Every workspace, in order.
    pub workspaces: Vec<WorkspaceView>,
    /// The focused workspace.
    pub active_workspace: Option<WorkspaceId>,
}

/// One workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkspaceView {
    /// Its id.
    pub id: WorkspaceId,
    /// Its name.
    pub name: String,
    /// Its working directory, as text.
    pub cwd: String,
    /// Whether agents resume on their own after a restart.
    pub auto_resume: bool,
    /// Whether agents in it may type into its other panes (a person turned it on).
    pub agent_drive: bool,
    /// The focused tab.
    pub active_tab: Option<TabId>,
    /// Its tabs, in order.
    pub tabs: Vec<TabInfo>,
    /// The git context of its directory (cached; `None`: not in a git work tree, or not
    /// known yet).
    pub git: Option<crate::gitctx::GitContext>,
}

/// One tab.
#[derive(Debug, Clone, PartialEq)]
pub struct TabInfo {
    /// Its id.
    pub id: TabId,
    /// Its title (given, else its active pane's).
    pub title: String,
    /// The focused pane.
    pub active_pane: PaneId,
    /// Its layout.
    pub layout: Layout,
    /// Its size in cells.
    pub size: CellSize,
    /// Its panes, in layout order.
    pub panes: Vec<PaneInfo>,
}

/// One pane.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneInfo {
    /// Its id.
    pub id: PaneId,
    /// Title (OSC 0/2, else the given one, else argv[0]).
    pub title: String,
    /// Working directory (OSC 7, else the process's, else where it started).
    pub cwd: String,
    /// What it runs.
    pub argv: Vec<String>,
    /// Live, or which kind of tombstone.
    pub state: RestoreState,
    /// What its program is doing.
    pub lifecycle: Lifecycle,
    /// Whether it wants the user.
    pub attention: Attention,
    /// Agent information.
    pub agent: AgentView,
    /// Exit code once exited.
    pub exit_code: Option<i32>,
    /// The signal that ended its program (`SIGTERM`), when one did while Berth ran.
    pub exit_signal: Option<String>,
    /// The job in the foreground of a live pane's PTY when it is not the pane's own program
    /// (a shell running `yes` says `yes`).
    pub job: Option<String>,
    /// The terminal size.
    pub size: CellSize,
    /// Work in flight at the last save.
    pub was_running: Option<String>,
    /// The child's pid while live.
    pub pid: Option<i32>,
    /// Creation time, ms since the Unix epoch.
    pub created_at: u64,
    /// The progress the program reports (OSC 9;4), while it shows one.
    pub progress: Option<Progress>,
    /// Since when the pane has been in its lifecycle, ms since the Unix epoch.
    pub lifecycle_since: Option<u64>,
    /// What `pane.resume` would run now, for a pane that is not running.
    pub resume: Option<ResumePlan>,
    /// The permission request its agent is waiting on, if any (the oldest, when several).
    pub pending_decision: Option<PendingDecision>,
    /// Its turns: how the lifecycle was learned, the running turn, the last one.
    pub turn: crate::agents::turns::TurnInfo,
    /// The git context of its working directory (cached, like the workspace's).
    pub git: Option<crate::gitctx::GitContext>,
}

impl PaneInfo {
    /// Whether the pane wants the user's attention.
    pub fn wants_attention(&self) -> bool {
        self.attention != Attention::None
    }
}

/// Where a resume command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeSource {
    /// Built by Berth's adapter from the agent's session id.
    Adapter,
    /// Reported by a process about itself (`session.report`): Berth has not checked it.
    Reported,
    /// The pane's own program again (the user's shell when it named none).
    Argv,
}

impl ResumeSource {
    /// Every source.
    pub const ALL: [Self; 3] = [Self::Adapter, Self::Reported, Self::Argv];

    /// The source of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeSource::Adapter => "adapter",
            ResumeSource::Reported => "self-reported",
            ResumeSource::Argv => "argv",
        }
    }
}

/// What resuming a pane would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePlan {
    /// The whole command line.
    pub argv: Vec<String>,
    /// Where it came from.
    pub source: ResumeSource,
}

impl ResumePlan {
    /// The command line as a shell would read it: every argument, quoted where needed, so
    /// that what is shown is exactly what runs.
    pub fn command_line(&self) -> String {
        shell_words(&self.argv)
    }
}

/// `argv` as one line a POSIX shell would split back into the same words.
pub fn shell_words(argv: &[String]) -> String {
    let quote = |arg: &String| {
        let plain = !arg.is_empty()
            && arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
        if plain {
            arg.clone()
        } else {
            format!("'{}'", arg.replace('\'', "'\\''"))
        }
    };
    argv.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// What Berth knows of the agent in a pane.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentView {
    /// Its kind (`None` for a plain program).
    pub kind: AgentKind,
    /// Its session id, if reported.
    pub session_id: Option<String>,
    /// The adapter-built resume command.
    pub resume_argv: Option<Vec<String>>,
}

/// A program's progress report (ConEmu's OSC `9;4;state;percent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Its state.
    pub state: ProgressState,
    /// Percent done, when the state has one.
    pub percent: Option<u8>,
}

/// The state of a progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressState {
    /// Going.
    Normal,
    /// Failed.
    Error,
    /// Going, amount unknown.
    Indeterminate,
    /// Paused.
    Paused,
}

impl ProgressState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Error => "error",
            Self::Indeterminate => "indeterminate",
            Self::Paused => "paused",
        }
    }

    /// The state of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Normal, Self::Error, Self::Indeterminate, Self::Paused]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

impl Progress {
    /// The progress of ConEmu's state number (1 normal, 2 error, 3 indeterminate, 4 paused)
    /// and percent; `None` for 0 (no progress) or an unknown state.
    pub fn from_conemu(state: u8, percent: Option<u8>) -> Option<Self> {
        let state = match state {
            1 => ProgressState::Normal,
            2 => ProgressState::Error,
            3 => ProgressState::Indeterminate,
            4 => ProgressState::Paused,
            _ => return None,
        };
        Some(Self { state, percent })
    }
}

/// Some of a pane's text (the answer of `pane.read`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadView {
    /// The pane.
    pub pane: PaneId,
    /// The lines, oldest first.
    pub lines: Vec<String>,
    /// `content_seq` of the first line returned.
    pub first_seq: u64,
    /// `content_seq` of the cursor's line.
    pub next_seq: u64,
    /// The oldest `content_seq` still held.
    pub oldest_seq: u64,
    /// True when lines asked for were already gone.
    pub truncated: bool,
}

/// What the server says of itself (the answer of `server.info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// Berth's version.
    pub version: String,
    /// The server's pid.
    pub pid: u32,
    /// Its socket.
    pub socket: PathBuf,
    /// When it started, ms since the Unix epoch.
    pub started_at: u64,
    /// The window used last, where `berth review` opens the view (`EMBEDDED_WINDOW` or an
    /// attached window's number); `None` while no window has said what it shows.
    pub active_window: Option<u64>,
}

/// One kept notification: the record the snapshot saves is also what clients see, on the
/// wire and in the view (one type, one shape).
pub type NotificationView = crate::persist::NotificationRecord;
