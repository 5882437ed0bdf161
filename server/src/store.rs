//! The Store: the one authority on workspaces, tabs and panes.
//!
//! Every change arrives as a [`Command`] and goes through [`Store::execute`]; answers are
//! typed [`Reply`] values (the wire's JSON is `protocol`'s business). The Store owns each pane's PTY (through [`Pane`]) and
//! publishes an event for every change. It must not do socket I/O or block on a child.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::commands::{Command, ReadSpec, Reply, SpawnRequest, WorkspaceSelector};
use crate::error::CommandError;
use crate::event::Event;
use crate::events::EventBus;
use crate::notifications::{
    DesktopHandle, DesktopPolicy, InboxMessage, Incoming, NotificationInbox, NotificationLog,
};
use crate::pane::{OutputPulse, PaneIo, PaneShared};
use crate::persist::stamp::now_ms;
use crate::persist::Snapshot;
use crate::process::{PaneProcess, PtySpawner, Spawner};
use crate::view::{
    AgentView, PaneInfo, Progress, ReadView, ServerInfo, StateView, TabInfo, WorkspaceView,
};
use alacritty_terminal::vte::ansi::CursorStyle;
use berth_engine::agents::{self, AgentKind};
use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::keys::encode_key_with;
use berth_engine::layout::{CellSize, Layout, SplitDir};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use berth_engine::procfs;
use berth_engine::pty::SpawnSpec;
use berth_engine::terminal::{
    PaneTerminal, ReadRequest, TermSize, ThemeColors, DEFAULT_SCROLLBACK,
};
use berth_engine::text::strip_escapes;

/// The size a tab has until a client says otherwise.
pub const DEFAULT_TAB_SIZE: CellSize = CellSize { cols: 80, rows: 24 };

/// The longest name or title accepted, in characters.
pub const MAX_NAME_CHARS: usize = 256;

/// The embedded window's number among the windows (attached windows count from 1).
pub const EMBEDDED_WINDOW: u64 = 0;

/// What the Store needs to know about the server it lives in.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The socket path, given to children as `BERTH_SOCKET`.
    pub socket_path: PathBuf,
    /// The directory used when nothing else names one.
    pub home: PathBuf,
    /// The shell started when a pane names no command.
    pub shell: String,
}

impl StoreConfig {
    /// The configuration for a server on `socket_path`, with home and shell from the
    /// environment.
    pub fn from_env(socket_path: PathBuf) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/".into());
        let shell = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty() && Path::new(s).exists())
            .unwrap_or_else(|| {
                if Path::new("/bin/bash").exists() { "/bin/bash" } else { "/bin/sh" }.to_owned()
            });
        Self { socket_path, home, shell }
    }
}

/// A workspace: a repo, project or task.
#[derive(Debug)]
pub struct Workspace {
    /// Its id.
    pub id: WorkspaceId,
    /// Its name.
    pub name: String,
    /// The default working directory of its panes.
    pub cwd: PathBuf,
    /// Its tabs, in order.
    pub tabs: Vec<TabId>,
    /// The focused tab.
    pub active_tab: Option<TabId>,
    /// Whether agents resume on their own after a restart.
    pub auto_resume: bool,
    /// Whether a person let agents in it type into its other panes (`trust`).
    pub agent_drive: bool,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
}

/// A tab: one binary split layout.
#[derive(Debug)]
pub struct Tab {
    /// Its id.
    pub id: TabId,
    /// Its workspace.
    pub workspace: WorkspaceId,
    /// A title set by a client, if any.
    pub title: Option<String>,
    /// The layout; holds every pane of the tab exactly once.
    pub layout: Layout,
    /// The focused pane.
    pub active_pane: PaneId,
    /// The tab's size in cells.
    pub size: CellSize,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
}

/// A pane: a terminal and, while live, a PTY.
pub struct Pane {
    /// Its id.
    pub id: PaneId,
    /// Its workspace.
    pub workspace: WorkspaceId,
    /// Its tab.
    pub tab: TabId,
    /// What it runs.
    pub argv: Vec<String>,
    /// Where it started.
    pub start_cwd: PathBuf,
    /// A title given at creation, shown until the program sets one.
    pub given_title: Option<String>,
    /// Terminal and metadata shared with the reader thread.
    pub shared: Arc<PaneShared>,
    /// The PTY while there is one.
    pub pty: Option<Box<dyn PaneProcess>>,
    /// Whether the user has something to look at.
    pub attention: Attention,
    /// What is known about the agent in it.
    pub agent: AgentInfo,
    /// Set while the pane is rebuilt from a snapshot and has no process.
    pub tombstone: Option<Tombstone>,
    /// Who made it and which of its processes are agents (`trust`).
    pub trust: crate::trust::PaneTrust,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
    /// When the user last looked at it, ms since the epoch.
    pub last_seen_at: u64,
}

impl Pane {
    /// How the process ended. It is known once the reader has delivered the last output after
    /// the child was reaped, so a pane never shows as ended while its final output (and its
    /// tail) is still on the way.
    pub fn exit(&self) -> Option<berth_engine::pty::ExitInfo> {
        self.shared.meta().exit.clone()
    }

    /// The pane's restore state.
    pub fn state(&self) -> RestoreState {
        if let Some(tomb) = &self.tombstone {
            return tomb.state;
        }
        match &self.pty {
            Some(_) if self.shared.meta().exit.is_none() => RestoreState::Live,
            _ => RestoreState::Exited,
        }
    }
}

/// What is known about the agent running in a pane.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentInfo {
    /// Which agent (or none).
    pub kind: AgentKind,
    /// Its session id, from a hook, report or its own argv.
    pub session_id: Option<String>,
    /// A resume command the process reported about itself; runs only on explicit resume.
    pub reported_resume_argv: Option<Vec<String>>,
    /// The model, if reported.
    pub model: Option<String>,
    /// The agent's config-dir variables, so a resume finds the same sessions.
    pub config_env: BTreeMap<String, String>,
}

impl AgentInfo {
    /// What can be told from a pane's argv and environment at spawn time.
    pub fn detect(argv: &[String], env: &[(String, String)]) -> AgentInfo {
        let kind = agents::detect_kind(argv);
        let config_env = agents::AGENT_CONFIG_ENV
            .iter()
            .filter_map(|key| {
                let value = env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .or_else(|| std::env::var(key).ok())?;
                Some((key.to_string(), value))
            })
            .collect();
        AgentInfo {
            kind,
            session_id: agents::session_from_argv(kind, argv),
            reported_resume_argv: None,
            model: None,
            config_env,
        }
    }

    /// The adapter-built official resume command, if the kind and session id allow one.
    pub fn resume_argv(&self) -> Option<Vec<String>> {
        agents::resume_argv(self.kind, self.session_id.as_deref()?)
    }
}

/// A pane rebuilt from a snapshot: no process, its last screen kept as styled lines.
#[derive(Debug, Clone)]
pub struct Tombstone {
    /// `Restored`, `Resumable` or `Exited`.
    pub state: RestoreState,
    /// The title at save time.
    pub title: String,
    /// The working directory at save time.
    pub cwd: String,
    /// The lifecycle at save time.
    pub lifecycle: Lifecycle,
    /// The exit code, if the process had ended.
    pub exit_code: Option<i32>,
    /// The foreground job at save time (information only).
    pub was_running: Option<String>,
    /// The scrollback tail with SGR styles, one line per entry, oldest first.
    pub tail: Vec<String>,
    /// Last output before the save, ms since the epoch.
    pub last_activity_at: u64,
    /// Whether the saved command line was cut to fit the snapshot: shown, never run.
    pub argv_cut: bool,
}

/// A process just started for a pane, not yet recorded in the Store.
pub(crate) struct Started {
    pub(crate) shared: Arc<PaneShared>,
    pub(crate) pty: Box<dyn PaneProcess>,
    pub(crate) argv: Vec<String>,
    pub(crate) agent: AgentInfo,
    pub(crate) cwd: PathBuf,
}

/// What the server's own parts ask of the Store, beside clients' [`Command`]s: the window's
/// settings, the notification path, restore and auto-resume. Never on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Internal {
    /// The window reports what it shows (see [`WindowView`]).
    SetWindowView(WindowView),
    /// An attached window reports what it shows over its connection `window`, which then
    /// shows on its own desktop what this server cannot (`notification.desktop`).
    ReportWindowView {
        /// What it shows.
        view: WindowView,
        /// The number the server gave that connection.
        window: u64,
    },
    /// An attached window's connection `window` ended: its view goes, and the view of a
    /// window still open stands in (the focused one, else any).
    WindowGone {
        /// The number the server gave that connection.
        window: u64,
    },
    /// Rows of every pane's rectangle the window's pane header takes.
    SetHeaderRows(u16),
    /// Readable scrollback lines of panes started from now on.
    SetScrollback(usize),
    /// The default cursor style and the theme colours programs may ask for.
    SetTerminalDefaults {
        /// The cursor until a program sets one.
        cursor: CursorStyle,
        /// The theme's colours.
        theme: ThemeColors,
    },
    /// Which notifications go to the desktop.
    SetDesktopPolicy(DesktopPolicy),
    /// A notification from a pane's program (OSC 9/99/777) or the server itself.
    AddNotification(Incoming),
    /// A program withdrew a kitty notification (`p=close`).
    CloseKittyNotification {
        /// Its pane.
        pane: PaneId,
        /// kitty's id.
        kitty_id: String,
    },
    /// The user clicked a desktop notification.
    ActivateNotification {
        /// The notification's id.
        id: String,
        /// The notification server's activation token, for the window to raise itself with.
        token: Option<String>,
    },
    /// Rebuild the state from a snapshot (into an empty Store); nothing is started.
    Restore {
        /// The loaded snapshot.
        snapshot: Box<Snapshot>,
        /// Each pane's tail lines, by pane id.
        tails: HashMap<String, Vec<String>>,
    },
    /// Resume a restored agent through its adapter-built command only.
    AutoResume {
        /// Which pane.
        pane: PaneId,
    },
    /// A change to the tasks (`tasks::ops`).
    Task(crate::tasks::op::TaskOp),
    /// A hook holds a permission request open: the pane's pending decision, answered down
    /// `route` (`agents::decide`).
    OpenDecision {
        /// The pane the agent runs in.
        pane: PaneId,
        /// The agent.
        kind: AgentKind,
        /// The hook's payload.
        payload: serde_json::Value,
        /// The decision's id.
        id: berth_engine::ids::DecisionId,
        /// The way back to the waiting hook.
        route: crate::agents::decide::DecisionRoute,
    },
    /// A decision's hook went away or timed out: it is no longer answerable.
    DecisionRouteLost {
        /// Its pane.
        pane: PaneId,
        /// The decision.
        id: berth_engine::ids::DecisionId,
        /// How: the wait ran out, or the hook's connection closed.
        loss: crate::decisions::Loss,
    },
    /// The user invoked a desktop notification's action (a decision's option).
    NotificationAction {
        /// The notification's id.
        id: String,
        /// The action's key (`allow`, `always`, `deny`).
        action: String,
    },
    /// New git contexts of directories (`gitctx::watch`, after running git off the lock).
    SetGit(Vec<(String, Option<crate::gitctx::GitContext>)>),
}

/// Everything [`Store::execute`] runs: a client's command or an internal one.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// From a client (socket, CLI, the window's input).
    Client(Command),
    /// From the server's own parts.
    Internal(Internal),
}

impl From<Command> for Op {
    fn from(cmd: Command) -> Self {
        Op::Client(cmd)
    }
}

impl From<Internal> for Op {
    fn from(op: Internal) -> Self {
        Op::Internal(op)
    }
}

/// The one authority on the server's state.
pub struct Store {
    pub(crate) config: StoreConfig,
    pub(crate) started_at: u64,
    pub(crate) workspaces: Vec<Workspace>,
    pub(crate) tabs: HashMap<TabId, Tab>,
    pub(crate) panes: HashMap<PaneId, Pane>,
    pub(crate) active_workspace: Option<WorkspaceId>,
    /// The size of the tab most recently resized; new tabs start at it.
    pub(crate) last_tab_size: CellSize,
    pub(crate) bus: EventBus,
    pub(crate) pulse: OutputPulse,
    /// Bumped by every command that changes what a snapshot would hold.
    pub(crate) generation: u64,
    /// True when the user closed the last pane: an empty snapshot is then the truth.
    pub(crate) user_closed_all: bool,
    /// Told about every change so a save can be scheduled.
    pub(crate) on_change: Option<Box<dyn Fn() + Send>>,
    /// The kept notifications.
    pub(crate) notifications: NotificationLog,
    /// Where reader threads send parsed notifications.
    pub(crate) inbox: NotificationInbox,
    /// The receiving end, until the server takes it to drain it.
    pub(crate) inbox_rx: Option<tokio::sync::mpsc::Receiver<InboxMessage>>,
    /// The desktop sink, when there is one.
    pub(crate) desktop: Option<DesktopHandle>,
    /// Rows of each pane's rectangle taken by the window's pane header (0 when headless).
    pub(crate) header_rows: u16,
    /// What the window used last shows, as it last said (empty when headless): the view
    /// notifications and attention go by.
    pub(crate) window_view: WindowView,
    /// Every open window's last view, by window number ([`EMBEDDED_WINDOW`] or an attached
    /// window's connection number); one per connection, gone with it.
    window_views: BTreeMap<u64, WindowView>,
    /// The window used last ([`EMBEDDED_WINDOW`] or an attached window's connection number):
    /// the last to report a view with the focus, else the first to report one; when it
    /// closes, one still open (`Internal::WindowGone`). `berth review`
    /// opens the view there only.
    pub(crate) active_window: Option<u64>,
    /// Readable scrollback lines of panes started from now on (the window's config).
    pub(crate) scrollback: usize,
    /// The default cursor style and theme colours of terminals (the window's config).
    terminal_defaults: Option<(CursorStyle, ThemeColors)>,
    /// Which notifications go to the desktop (the window's config).
    pub(crate) desktop_policy: DesktopPolicy,
    /// Starts pane programs (real PTYs, or a fake in the Store's unit tests).
    spawner: Arc<dyn Spawner>,
    /// The tasks (`tasks/`), by id.
    pub(crate) tasks:
        std::collections::BTreeMap<berth_engine::ids::TaskId, crate::tasks::model::Task>,
    /// The permission requests agents' hooks wait on, by pane.
    pub(crate) decisions: crate::agents::decide::Decisions,
    /// The git context of workspaces' and panes' directories (`gitctx`), by directory.
    pub(crate) git: crate::gitctx::cache::GitCache,
    /// Who the command being executed acts for: what a pane it makes records (a person's
    /// unless `Store::execute_as` says otherwise).
    pub(crate) acting: crate::trust::Provenance,
}

/// What the window shows: which panes are on screen, which one has the keyboard, and
/// whether the window itself is focused. Notifications use it to stay off the desktop for a
/// pane the user is looking at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowView {
    /// Panes drawn on screen.
    pub visible: Vec<PaneId>,
    /// The pane with the keyboard.
    pub focused_pane: Option<PaneId>,
    /// Whether the window has the desktop's focus.
    pub window_focused: bool,
}

impl WindowView {
    /// Whether the user is looking at `pane` right now (on screen in a focused window).
    pub fn sees(&self, pane: &PaneId) -> bool {
        self.window_focused && self.visible.contains(pane)
    }

    /// Whether `pane` has the keyboard in a focused window.
    pub fn attends(&self, pane: &PaneId) -> bool {
        self.window_focused && self.focused_pane.as_ref() == Some(pane)
    }
}

fn check_name(name: &str, what: &str) -> Result<String, CommandError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(CommandError::BadParams(format!("{what} must not be empty")));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(CommandError::BadParams(format!(
            "{what} is longer than {MAX_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) || name != crate::pane::clean_title(name) {
        return Err(CommandError::BadParams(format!(
            "{what} must not hold control characters or bidirectional overrides"
        )));
    }
    Ok(name.to_owned())
}

fn term_size(size: CellSize) -> TermSize {
    // Every size was checked where it entered; clamping again keeps a missed path from making
    // a terminal allocate without bound.
    let size = berth_engine::limits::clamp_size(size);
    TermSize { cols: size.cols, rows: size.rows }
}

/// A size from a command (the socket's or the window's), within `berth_engine::limits`.
fn checked_size(size: CellSize) -> Result<CellSize, CommandError> {
    berth_engine::limits::check_size(u32::from(size.cols), u32::from(size.rows))
        .map_err(|e| CommandError::BadParams(e.to_string()))
}

impl Store {
    /// An empty Store publishing on `bus`, starting panes in real PTYs.
    pub fn new(config: StoreConfig, bus: EventBus, pulse: OutputPulse) -> Self {
        Self::with_spawner(config, bus, pulse, Arc::new(PtySpawner))
    }

    /// An empty Store that starts pane programs through `spawner`.
    pub fn with_spawner(
        config: StoreConfig,
        bus: EventBus,
        pulse: OutputPulse,
        spawner: Arc<dyn Spawner>,
    ) -> Self {
        let (inbox, inbox_rx) = NotificationInbox::new();
        Self {
            config,
            started_at: now_ms(),
            workspaces: Vec::new(),
            tabs: HashMap::new(),
            panes: HashMap::new(),
            active_workspace: None,
            last_tab_size: DEFAULT_TAB_SIZE,
            bus,
            pulse,
            generation: 0,
            user_closed_all: false,
            on_change: None,
            notifications: NotificationLog::default(),
            inbox,
            inbox_rx: Some(inbox_rx),
            desktop: None,
            header_rows: 0,
            window_view: WindowView::default(),
            window_views: BTreeMap::new(),
            active_window: None,
            scrollback: DEFAULT_SCROLLBACK,
            terminal_defaults: None,
            desktop_policy: DesktopPolicy::default(),
            spawner,
            tasks: Default::default(),
            decisions: Default::default(),
            acting: crate::trust::Provenance::Person,
            git: Default::default(),
        }
    }

    /// A window reported `view`: it is the window used last when it has the focus, or when no
    /// window is known yet.
    fn note_active_window(&mut self, window: u64, view: &WindowView) {
        if view.window_focused || self.active_window.is_none() {
            self.active_window = Some(window);
        }
    }

    /// Window `window` says what it shows. With several windows open (the embedded one and
    /// attached ones), the view that counts is the one of the window used last (the last to
    /// report with the desktop's focus): a window in the background that reports after it
    /// (it follows a pane the server focused) takes neither its notifications nor its toasts.
    fn report_window_view(&mut self, window: u64, view: WindowView) {
        self.note_active_window(window, &view);
        self.window_views.insert(window, view);
        self.use_active_window_view();
    }

    /// Connection `window` ended: the window used last is one still open (the focused one,
    /// else the highest number: the newest), or none.
    fn window_gone(&mut self, window: u64) {
        self.window_views.remove(&window);
        if self.active_window == Some(window) {
            self.active_window = self
                .window_views
                .iter()
                .find(|(_, v)| v.window_focused)
                .or_else(|| self.window_views.iter().next_back())
                .map(|(w, _)| *w);
        }
        self.use_active_window_view();
    }

    /// Takes the view of the window used last as the one notifications go by.
    fn use_active_window_view(&mut self) {
        let view = self.active_window.and_then(|w| self.window_views.get(&w)).cloned();
        self.set_window_view(view.unwrap_or_default());
    }

    /// The attached window whose view the Store goes by (`None`: the embedded window's, or
    /// none): it shows on its desktop what this server cannot.
    pub(crate) fn window_reporter(&self) -> Option<u64> {
        self.active_window.filter(|w| *w != EMBEDDED_WINDOW && self.window_views.contains_key(w))
    }

    /// The window reports what it shows. A pane that has the keyboard in a focused window is
    /// being looked at: its attention is cleared and its notifications are marked read.
    fn set_window_view(&mut self, view: WindowView) {
        if view == self.window_view {
            return;
        }
        if let Some(pane) = view.focused_pane.clone().filter(|p| view.attends(p)) {
            let unread = self.panes.get(&pane).is_some_and(|p| p.attention != Attention::None);
            if unread {
                self.clear_attention(&pane);
            }
        }
        self.window_view = view;
    }

    /// Reserves `rows` at the top of every pane's rectangle for the window's pane header; the
    /// PTY gets the rest. Every tab is resized at once.
    fn set_pane_header_rows(&mut self, rows: u16) {
        self.header_rows = rows;
        let tabs: Vec<TabId> = self.tabs.keys().cloned().collect();
        for tab in tabs {
            self.relayout(&tab);
        }
    }

    /// The terminal size of a pane whose layout rectangle is `rect`.
    pub(crate) fn pane_size_for(&self, rect: berth_engine::layout::CellRect) -> CellSize {
        CellSize { cols: rect.cols.max(1), rows: rect.rows.saturating_sub(self.header_rows).max(1) }
    }

    /// The notification inbox's receiving end, for the task that drains it (once).
    pub fn take_inbox_receiver(&mut self) -> Option<tokio::sync::mpsc::Receiver<InboxMessage>> {
        self.inbox_rx.take()
    }

    /// Sets how many lines of scrollback panes started from now on keep readable (the
    /// window's config file; running panes keep theirs).
    fn set_scrollback_lines(&mut self, lines: usize) {
        self.scrollback = lines;
    }

    /// Sets the default cursor style (until a program sets one) and the theme colours that
    /// programs asking with OSC 10/11/4 learn (the window's config file): every pane's
    /// terminal gets them now, and every terminal made from now on.
    fn set_terminal_defaults(&mut self, cursor: CursorStyle, theme: ThemeColors) {
        if self.terminal_defaults == Some((cursor, theme)) {
            return;
        }
        self.terminal_defaults = Some((cursor, theme));
        for pane in self.panes.values() {
            let mut term = pane.shared.term.lock();
            term.set_default_cursor_style(cursor);
            term.set_theme_colors(Some(theme));
        }
    }

    /// A new terminal for a pane's program, with the scrollback and the terminal defaults
    /// set now.
    pub(crate) fn new_terminal(&self, size: TermSize) -> PaneTerminal {
        let mut term = PaneTerminal::new(size, self.scrollback);
        if let Some((cursor, theme)) = self.terminal_defaults {
            term.set_default_cursor_style(cursor);
            term.set_theme_colors(Some(theme));
        }
        term
    }

    /// Sets where notifications are shown on the desktop. Wiring at start, before any
    /// command: it changes no state a client sees.
    pub fn set_desktop(&mut self, desktop: DesktopHandle) {
        self.desktop = Some(desktop);
    }

    /// Registers what to call after every change (the persistence scheduler). Wiring at start,
    /// like [`Store::set_desktop`].
    pub fn set_on_change(&mut self, on_change: impl Fn() + Send + 'static) {
        self.on_change = Some(Box::new(on_change));
    }

    /// The change counter; a snapshot taken at generation N holds every change up to N.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Records that state changed and tells the scheduler.
    pub(crate) fn touch(&mut self) {
        self.generation += 1;
        if let Some(on_change) = &self.on_change {
            on_change();
        }
    }

    /// The shared state of a pane (for readers of its terminal, such as the window).
    pub fn pane_shared(&self, pane: &PaneId) -> Option<Arc<PaneShared>> {
        self.panes.get(pane).map(|p| p.shared.clone())
    }

    /// The shown tab's active pane, picked as the window picks the shown tab from
    /// [`Store::view`] (the active workspace, else the first with tabs; its active tab, else
    /// its first), without building the view: the window asks on every key.
    pub fn focused_pane(&self) -> Option<PaneId> {
        let ws = self
            .active_workspace
            .as_ref()
            .and_then(|id| self.workspaces.iter().find(|w| w.id == *id))
            .or_else(|| {
                self.workspaces.iter().find(|w| w.tabs.iter().any(|t| self.tabs.contains_key(t)))
            })?;
        let mut tabs = ws.tabs.iter().filter_map(|t| self.tabs.get(t));
        let tab = match &ws.active_tab {
            Some(id) => tabs.clone().find(|t| t.id == *id).or_else(|| tabs.next()),
            None => tabs.next(),
        }?;
        Some(tab.active_pane.clone())
    }

    /// A pane's restore state (live, or which kind of tombstone).
    pub fn pane_state(&self, pane: &PaneId) -> Option<RestoreState> {
        Some(self.panes.get(pane)?.state())
    }

    /// How many lines a tombstone's tail holds (it only grows, by error notes), so a reader can
    /// tell whether a copy it drew from is still current; `None` for a live pane.
    pub fn pane_tail_len(&self, pane: &PaneId) -> Option<usize> {
        Some(self.panes.get(pane)?.tombstone.as_ref()?.tail.len())
    }

    /// A tombstone's saved tail (styled lines), for the window to draw; `None` for a pane
    /// with a live terminal.
    pub fn pane_tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        self.panes.get(pane)?.tombstone.as_ref().map(|t| t.tail.clone())
    }

    /// Executes one command, a client's or an internal one: the only way the Store changes.
    pub fn execute(&mut self, op: impl Into<Op>) -> Result<Reply, CommandError> {
        let cmd = match op.into() {
            Op::Client(cmd) => cmd,
            Op::Internal(op) => return self.execute_internal(op),
        };
        let mutates = !matches!(
            cmd,
            Command::ServerInfo
                | Command::WorkspaceList
                | Command::PaneRead { .. }
                | Command::PaneSend { .. }
                | Command::PaneInput { .. }
                | Command::NotificationsList { .. }
                | Command::Decisions
        );
        let closes = matches!(
            cmd,
            Command::PaneClose { .. } | Command::TabClose { .. } | Command::WorkspaceClose { .. }
        );
        let result = self.execute_inner(cmd);
        if result.is_ok() {
            if closes && self.panes.is_empty() {
                // The user emptied the server on purpose: an empty snapshot is now the truth.
                self.user_closed_all = true;
            }
            if mutates {
                self.touch();
            }
        }
        result
    }

    fn execute_internal(&mut self, op: Internal) -> Result<Reply, CommandError> {
        match op {
            Internal::SetWindowView(view) => self.report_window_view(EMBEDDED_WINDOW, view),
            Internal::ReportWindowView { view, window } => self.report_window_view(window, view),
            Internal::WindowGone { window } => self.window_gone(window),
            Internal::SetHeaderRows(rows) => self.set_pane_header_rows(rows),
            Internal::SetScrollback(lines) => self.set_scrollback_lines(lines),
            Internal::SetTerminalDefaults { cursor, theme } => {
                self.set_terminal_defaults(cursor, theme)
            }
            Internal::SetDesktopPolicy(policy) => self.desktop_policy = policy,
            Internal::AddNotification(incoming) => {
                return Ok(Reply::Notified { id: self.add_notification(incoming) })
            }
            Internal::CloseKittyNotification { pane, kitty_id } => {
                self.close_kitty_notification(&pane, &kitty_id)
            }
            Internal::ActivateNotification { id, token } => self.activate_notification(&id, token),
            Internal::Restore { snapshot, tails } => {
                let report = self.restore(&snapshot, tails);
                return Ok(Reply::Restored {
                    panes: report.panes,
                    resumable: report.resumable,
                    auto_resume_candidates: report.auto_resume_candidates,
                });
            }
            Internal::AutoResume { pane } => {
                self.auto_resume(&pane)?;
                return Ok(Reply::Pane { pane });
            }
            Internal::Task(op) => {
                self.execute_task_op(op)?;
                self.touch();
            }
            Internal::OpenDecision { pane, kind, payload, id, route } => {
                self.open_decision(&pane, kind, &payload, id, route)?;
            }
            Internal::DecisionRouteLost { pane, id, loss } => self.lose_decision(&pane, &id, loss),
            Internal::NotificationAction { id, action } => self.notification_action(&id, &action),
            Internal::SetGit(changes) => self.set_git(changes),
        }
        Ok(Reply::Done)
    }

    fn execute_inner(&mut self, cmd: Command) -> Result<Reply, CommandError> {
        match cmd {
            Command::ServerInfo => Ok(Reply::ServerInfo(ServerInfo {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                pid: std::process::id(),
                socket: self.config.socket_path.clone(),
                started_at: self.started_at,
                active_window: self.active_window,
            })),
            Command::WorkspaceList => Ok(Reply::State(Box::new(self.view()))),
            Command::WorkspaceCreate { name, cwd } => {
                let cwd = self.resolve_dir(cwd.as_deref())?;
                let name = match name {
                    Some(n) => check_name(&n, "workspace name")?,
                    None => default_workspace_name(&cwd),
                };
                let id = self.create_workspace(name, cwd);
                Ok(Reply::WorkspaceCreated { workspace: id })
            }
            Command::WorkspaceRename { workspace, name } => {
                let name = check_name(&name, "workspace name")?;
                self.workspace_mut(&workspace)?.name = name;
                self.publish(Event::WorkspaceChanged { workspace });
                Ok(Reply::Done)
            }
            Command::WorkspaceClose { workspace } => {
                self.workspace(&workspace)?;
                self.close_workspace(&workspace);
                Ok(Reply::Done)
            }
            Command::TabCreate { workspace, title, spawn } => {
                let title = title.map(|t| check_name(&t, "tab title")).transpose()?;
                let (tab, pane) = self.create_tab(workspace, title, spawn)?;
                Ok(Reply::TabCreated { tab, pane })
            }
            Command::PaneSpawn { workspace, spawn } => {
                let (tab, pane) = self.create_tab(workspace, None, spawn)?;
                let ws = self.tab(&tab)?.workspace.clone();
                Ok(Reply::Spawned { pane, tab, workspace: ws })
            }
            Command::TabClose { tab } => {
                self.tab(&tab)?;
                self.close_tab(&tab);
                Ok(Reply::Done)
            }
            Command::TabRename { tab, title } => {
                let title = check_name(&title, "tab title")?;
                self.tab_mut(&tab)?.title = Some(title);
                self.publish(Event::TabChanged { tab });
                Ok(Reply::Done)
            }
            Command::TabMove { tab, index } => {
                let ws = self.tab(&tab)?.workspace.clone();
                let tabs = &mut self.workspace_mut(&ws)?.tabs;
                let from = tabs.iter().position(|t| *t == tab).ok_or_else(|| {
                    CommandError::Internal(format!("tab {tab} is not in its workspace"))
                })?;
                let moved = tabs.remove(from);
                let to = index.min(tabs.len());
                tabs.insert(to, moved);
                self.publish(Event::TabChanged { tab });
                Ok(Reply::TabMoved { index: to })
            }
            Command::TabSetRatio { tab, path, ratio } => {
                self.tab_mut(&tab)?.layout.set_ratio(&path, ratio)?;
                self.relayout(&tab);
                Ok(Reply::Ratio { ratio: self.tab(&tab)?.layout.ratio_at(&path) })
            }
            Command::TabSetLayout { tab, mut layout } => {
                let current = self.tab(&tab)?.layout.panes();
                layout.validate(&current)?;
                layout.clamp_ratios();
                self.tab_mut(&tab)?.layout = layout;
                self.relayout(&tab);
                Ok(Reply::Done)
            }
            Command::TabResize { tab, size } => {
                let size = checked_size(size)?;
                self.tab_mut(&tab)?.size = size;
                self.last_tab_size = size;
                self.relayout(&tab);
                Ok(Reply::Done)
            }
            Command::PaneSplit { pane, dir, spawn } => {
                let new = self.split(&pane, dir, spawn)?;
                Ok(Reply::Pane { pane: new })
            }
            Command::PaneClose { pane } => {
                self.pane(&pane)?;
                self.close_pane(&pane);
                Ok(Reply::Done)
            }
            Command::PaneSend { pane, text, keys } => {
                let p = self.pane(&pane)?;
                let pty = match (&p.pty, p.shared.meta().exit.is_some()) {
                    (Some(pty), false) if !pty.is_closing() => pty,
                    _ => return Err(CommandError::PaneNotLive(pane.to_string())),
                };
                let mut bytes = text.map(String::into_bytes).unwrap_or_default();
                // Plain text needs no terminal modes: it does not wait for the reader's feed.
                let (app_cursor, kitty_flags) = if keys.is_empty() {
                    (false, 0)
                } else {
                    let term = p.shared.term.lock();
                    (term.app_cursor(), term.keyboard_flags())
                };
                for key in &keys {
                    bytes.extend(
                        encode_key_with(key, app_cursor, kitty_flags)
                            .map_err(|e| CommandError::BadParams(e.to_string()))?,
                    );
                }
                pty.send(&bytes)?;
                if crate::agents::hooks::is_interrupt(&bytes) {
                    self.end_interrupted_turn(&pane);
                }
                Ok(Reply::Sent { bytes: bytes.len() })
            }
            Command::PaneInput { pane, data } => {
                let p = self.pane(&pane)?;
                match (&p.pty, p.shared.meta().exit.is_some()) {
                    (Some(pty), false) if !pty.is_closing() => pty.send(&data)?,
                    _ => return Err(CommandError::PaneNotLive(pane.to_string())),
                }
                if crate::agents::hooks::is_interrupt(&data) {
                    self.end_interrupted_turn(&pane);
                }
                Ok(Reply::Sent { bytes: data.len() })
            }
            Command::PaneRead { pane, spec } => Ok(Reply::Read(self.read(&pane, spec)?)),
            Command::PaneResize { pane, size } => {
                self.resize_pane(&pane, checked_size(size)?)?;
                Ok(Reply::Done)
            }
            Command::PaneFocus { pane } => {
                self.focus(&pane)?;
                Ok(Reply::Pane { pane })
            }
            Command::PaneResume { pane } => {
                self.resume(&pane)?;
                let state = self.pane(&pane)?.state();
                Ok(Reply::Resumed { pane, state })
            }
            Command::SessionReport {
                pane,
                kind,
                session_id,
                resume_argv,
                model,
                explicit_pane: _,
            } => {
                // Who may report for which pane is `trust::policy`'s, before this runs.
                self.report_session(&pane, kind, session_id, resume_argv, model)?;
                Ok(Reply::Pane { pane })
            }
            Command::WorkspaceSetAutoResume { workspace, enabled } => {
                self.workspace_mut(&workspace)?.auto_resume = enabled;
                self.publish(Event::WorkspaceChanged { workspace });
                Ok(Reply::AutoResume { enabled })
            }
            Command::WorkspaceSetAgentDrive { workspace, enabled } => {
                self.set_agent_drive(&workspace, enabled)?;
                self.publish(Event::WorkspaceChanged { workspace });
                Ok(Reply::AgentDrive { enabled })
            }
            Command::Notify { pane, title, body, source } => {
                if let Some(pane) = &pane {
                    self.pane(pane)?;
                }
                let id = self.add_notification(Incoming::new(pane, &title, &body, &source));
                Ok(Reply::Notified { id })
            }
            Command::NotificationsList { unread_only } => {
                let items = self
                    .notifications
                    .iter()
                    .filter(|n| !unread_only || n.read_at.is_none())
                    .map(|n| n.record.clone())
                    .collect();
                Ok(Reply::Notifications(items))
            }
            Command::NotificationsMarkRead { ids, pane } => {
                let changed = match &pane {
                    Some(pane) => {
                        self.pane(pane)?;
                        self.clear_attention(pane)
                    }
                    None => self.notifications.mark_read(&ids, None),
                };
                Ok(Reply::Marked { count: changed })
            }
            Command::PaneClearAttention { pane } => {
                self.pane(&pane)?;
                let changed = self.clear_attention(&pane);
                Ok(Reply::Marked { count: changed })
            }
            Command::HookEvent { pane, kind, payload } => {
                let outcome = crate::agents::hooks::map_hook(kind, &payload);
                self.apply_hook(&pane, kind, outcome)?;
                Ok(Reply::Pane { pane })
            }
            Command::Decide { pane, answer, message, id } => {
                let id = self.decide(&pane, answer, message, id.as_ref())?;
                Ok(Reply::Decided { pane, id })
            }
            Command::Decisions => Ok(Reply::Decisions(self.pending_decisions())),
            Command::PaneFocusDirection { pane, dir } => {
                let tab = self.tab(&self.pane(&pane)?.tab)?;
                let target = tab.layout.neighbour(&pane, dir, tab.size).unwrap_or(pane);
                self.focus(&target)?;
                Ok(Reply::Pane { pane: target })
            }
        }
    }

    fn publish(&self, event: Event) {
        // The directories whose git context is shown change with workspaces and panes (a
        // pane's own cwd changes are its reader's to report).
        if matches!(
            event,
            Event::WorkspaceCreated { .. }
                | Event::WorkspaceClosed { .. }
                | Event::PaneCreated { .. }
                | Event::PaneClosed { .. }
        ) {
            self.git.kick.dirs_changed();
        }
        self.bus.publish(event);
    }

    // ---- lookups ----

    fn workspace(&self, id: &WorkspaceId) -> Result<&Workspace, CommandError> {
        self.workspaces
            .iter()
            .find(|w| &w.id == id)
            .ok_or_else(|| CommandError::NoSuchWorkspace(id.to_string()))
    }

    fn workspace_mut(&mut self, id: &WorkspaceId) -> Result<&mut Workspace, CommandError> {
        self.workspaces
            .iter_mut()
            .find(|w| &w.id == id)
            .ok_or_else(|| CommandError::NoSuchWorkspace(id.to_string()))
    }

    fn tab(&self, id: &TabId) -> Result<&Tab, CommandError> {
        self.tabs.get(id).ok_or_else(|| CommandError::NoSuchTab(id.to_string()))
    }

    fn tab_mut(&mut self, id: &TabId) -> Result<&mut Tab, CommandError> {
        self.tabs.get_mut(id).ok_or_else(|| CommandError::NoSuchTab(id.to_string()))
    }

    fn pane(&self, id: &PaneId) -> Result<&Pane, CommandError> {
        self.panes.get(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))
    }

    /// An existing directory, or the home directory when none is named.
    fn resolve_dir(&self, dir: Option<&Path>) -> Result<PathBuf, CommandError> {
        let Some(dir) = dir else { return Ok(self.config.home.clone()) };
        if !dir.is_absolute() {
            return Err(CommandError::BadParams(format!("cwd {dir:?} must be an absolute path")));
        }
        if !dir.is_dir() {
            return Err(CommandError::BadParams(format!("cwd {dir:?} is not a directory")));
        }
        Ok(dir.to_path_buf())
    }

    // ---- creation ----

    fn create_workspace(&mut self, name: String, cwd: PathBuf) -> WorkspaceId {
        let id = WorkspaceId::new();
        self.workspaces.push(Workspace {
            id: id.clone(),
            name,
            cwd,
            tabs: Vec::new(),
            active_tab: None,
            auto_resume: false,
            agent_drive: false,
            created_at: now_ms(),
        });
        if self.active_workspace.is_none() {
            self.active_workspace = Some(id.clone());
        }
        self.publish(Event::WorkspaceCreated { workspace: id.clone() });
        id
    }

    fn select_workspace(
        &mut self,
        selector: WorkspaceSelector,
        spawn_cwd: Option<&Path>,
    ) -> Result<WorkspaceId, CommandError> {
        match selector {
            WorkspaceSelector::Id(id) => Ok(self.workspace(&id)?.id.clone()),
            WorkspaceSelector::Name(name) => {
                let name = check_name(&name, "workspace name")?;
                if let Some(ws) = self.workspaces.iter().find(|w| w.name == name) {
                    return Ok(ws.id.clone());
                }
                let cwd = self.resolve_dir(spawn_cwd)?;
                Ok(self.create_workspace(name, cwd))
            }
            WorkspaceSelector::Active => {
                if let Some(id) = &self.active_workspace {
                    return Ok(id.clone());
                }
                let cwd = self.resolve_dir(spawn_cwd)?;
                let name = default_workspace_name(&cwd);
                Ok(self.create_workspace(name, cwd))
            }
        }
    }

    /// Starts a pane's process; nothing is recorded in the Store if it fails. `shared` is the
    /// pane's terminal when it already has one (a resumed tombstone keeps its tail above the
    /// new output).
    pub(crate) fn start_pane(
        &self,
        id: &PaneId,
        workspace: &WorkspaceId,
        spawn: &SpawnRequest,
        cwd: PathBuf,
        size: CellSize,
        shared: Option<Arc<PaneShared>>,
    ) -> Result<Started, CommandError> {
        let argv = if spawn.argv.is_empty() {
            vec![self.config.shell.clone()]
        } else {
            spawn.argv.clone()
        };
        let mut env = spawn.env.clone();
        env.push(("BERTH_SOCKET".into(), self.config.socket_path.display().to_string()));
        env.push(("BERTH_PANE".into(), id.to_string()));
        env.push(("BERTH_WORKSPACE".into(), workspace.to_string()));
        let agent = AgentInfo::detect(&argv, &env);
        let spec = SpawnSpec {
            // The agent's hooks through its own flag (claude `--settings`), so they work
            // without an install; what the pane records (and resumes) stays `argv`.
            argv: crate::agents::inject::with_hooks(&argv, agent.kind, &env, &cwd),
            cwd: cwd.clone(),
            env,
            cols: size.cols,
            rows: size.rows,
        };
        let shared = shared
            .unwrap_or_else(|| PaneShared::new(id.clone(), self.new_terminal(term_size(size))));
        let io =
            PaneIo::new(shared.clone(), self.bus.clone(), self.pulse.clone(), self.inbox.clone())
                .with_git(self.git.kick_handle());
        let pty = self.spawner.spawn(&spec, Box::new(io))?;
        shared.set_pid(pty.pid());
        tracing::info!(pane = %id, pid = pty.pid(), "pane started");
        Ok(Started { shared, pty, argv, agent, cwd })
    }

    fn spawn_cwd(&self, spawn: &SpawnRequest, fallback: &Path) -> Result<PathBuf, CommandError> {
        match &spawn.cwd {
            Some(dir) => self.resolve_dir(Some(dir)),
            None if fallback.is_dir() => Ok(fallback.to_path_buf()),
            None => Ok(self.config.home.clone()),
        }
    }

    fn create_tab(
        &mut self,
        selector: WorkspaceSelector,
        title: Option<String>,
        spawn: SpawnRequest,
    ) -> Result<(TabId, PaneId), CommandError> {
        let given_title = spawn.title.as_deref().map(|t| check_name(t, "title")).transpose()?;
        // Check the cwd before a workspace may be created for it.
        if let Some(dir) = &spawn.cwd {
            self.resolve_dir(Some(dir))?;
        }
        let ws_id = self.select_workspace(selector, spawn.cwd.as_deref())?;
        let ws_cwd = self.workspace(&ws_id)?.cwd.clone();
        let cwd = self.spawn_cwd(&spawn, &ws_cwd)?;
        let size = self.last_tab_size;
        let pane_id = PaneId::new();
        let pane_size = self.pane_size_for(berth_engine::layout::CellRect {
            col: 0,
            row: 0,
            cols: size.cols,
            rows: size.rows,
        });
        let started = self.start_pane(&pane_id, &ws_id, &spawn, cwd, pane_size, None)?;
        let tab_id = TabId::new();
        self.tabs.insert(
            tab_id.clone(),
            Tab {
                id: tab_id.clone(),
                workspace: ws_id.clone(),
                title,
                layout: Layout::single(pane_id.clone()),
                active_pane: pane_id.clone(),
                size,
                created_at: now_ms(),
            },
        );
        self.insert_pane(&pane_id, &ws_id, &tab_id, given_title, started);
        let ws = self.workspace_mut(&ws_id)?;
        ws.tabs.push(tab_id.clone());
        ws.active_tab = Some(tab_id.clone());
        self.active_workspace = Some(ws_id.clone());
        self.publish(Event::TabCreated { tab: tab_id.clone(), workspace: ws_id.clone() });
        self.publish(Event::PaneCreated { pane: pane_id.clone(), tab: tab_id.clone() });
        Ok((tab_id, pane_id))
    }

    /// A tab for a task's worker (`tasks::ops`), as `tab.create` makes one, in the workspace
    /// whose directory is the repo (made for it when there is none).
    pub(crate) fn open_task_tab(
        &mut self,
        repo: &Path,
        title: &str,
        spawn: SpawnRequest,
    ) -> Result<(TabId, PaneId), CommandError> {
        let ws = match self.workspaces.iter().find(|w| w.cwd == repo) {
            Some(ws) => ws.id.clone(),
            None => self.create_workspace(default_workspace_name(repo), repo.to_path_buf()),
        };
        self.create_tab(WorkspaceSelector::Id(ws), Some(title.to_owned()), spawn)
    }

    fn insert_pane(
        &mut self,
        id: &PaneId,
        workspace: &WorkspaceId,
        tab: &TabId,
        given_title: Option<String>,
        started: Started,
    ) {
        let now = now_ms();
        self.user_closed_all = false;
        self.panes.insert(
            id.clone(),
            Pane {
                id: id.clone(),
                workspace: workspace.clone(),
                tab: tab.clone(),
                argv: started.argv,
                start_cwd: started.cwd,
                given_title,
                shared: started.shared,
                pty: Some(started.pty),
                attention: Attention::None,
                agent: started.agent,
                tombstone: None,
                trust: crate::trust::PaneTrust {
                    made_by: self.acting.clone(),
                    ..Default::default()
                },
                created_at: now,
                last_seen_at: now,
            },
        );
    }

    fn split(
        &mut self,
        target: &PaneId,
        dir: SplitDir,
        spawn: SpawnRequest,
    ) -> Result<PaneId, CommandError> {
        let given_title = spawn.title.as_deref().map(|t| check_name(t, "title")).transpose()?;
        let pane = self.pane(target)?;
        let (tab_id, ws_id) = (pane.tab.clone(), pane.workspace.clone());
        let target_cwd = PathBuf::from(self.pane_cwd(pane));
        let cwd = self.spawn_cwd(&spawn, &target_cwd)?;
        let tab = self.tab(&tab_id)?;
        let new_id = PaneId::new();
        let mut layout = tab.layout.clone();
        layout.split(target, new_id.clone(), dir)?;
        let size = layout
            .rects(tab.size)
            .into_iter()
            .find(|(id, _)| id == &new_id)
            .map(|(_, r)| self.pane_size_for(r))
            .unwrap_or(tab.size);
        let started = self.start_pane(&new_id, &ws_id, &spawn, cwd, size, None)?;
        let tab = self.tab_mut(&tab_id)?;
        tab.layout = layout;
        tab.active_pane = new_id.clone();
        self.insert_pane(&new_id, &ws_id, &tab_id, given_title, started);
        self.relayout(&tab_id);
        self.publish(Event::PaneCreated { pane: new_id.clone(), tab: tab_id.clone() });
        Ok(new_id)
    }

    // ---- closing ----

    fn close_workspace(&mut self, id: &WorkspaceId) {
        let tabs = self.workspace(id).map(|w| w.tabs.clone()).unwrap_or_default();
        for tab in tabs {
            self.drop_tab(&tab);
        }
        self.workspaces.retain(|w| &w.id != id);
        if self.active_workspace.as_ref() == Some(id) {
            self.active_workspace = self.workspaces.last().map(|w| w.id.clone());
        }
        self.publish(Event::WorkspaceClosed { workspace: id.clone() });
    }

    /// Removes a tab and its panes; closes the workspace if it was the last tab.
    fn close_tab(&mut self, id: &TabId) {
        let Some(ws_id) = self.tabs.get(id).map(|t| t.workspace.clone()) else { return };
        self.drop_tab(id);
        let now_empty = match self.workspace_mut(&ws_id) {
            Ok(ws) => {
                let index = ws.tabs.iter().position(|t| t == id);
                ws.tabs.retain(|t| t != id);
                if ws.active_tab.as_ref() == Some(id) {
                    // Focus the tab that took the closed one's place, else the one before it.
                    let next = index.map(|i| i.min(ws.tabs.len().saturating_sub(1)));
                    ws.active_tab = next.and_then(|i| ws.tabs.get(i).cloned());
                }
                ws.tabs.is_empty()
            }
            Err(_) => false,
        };
        if now_empty {
            self.close_workspace(&ws_id);
        }
    }

    /// Removes a tab's panes and the tab itself, leaving its workspace's tab list alone.
    fn drop_tab(&mut self, id: &TabId) {
        let Some(tab) = self.tabs.remove(id) else { return };
        for pane in tab.layout.panes() {
            self.drop_pane(&pane);
        }
        self.publish(Event::TabClosed { tab: id.clone() });
    }

    /// Removes a pane from the maps and ends its process (asynchronously).
    fn drop_pane(&mut self, id: &PaneId) {
        if let Some(pane) = self.panes.remove(id) {
            // Its hooks' routes drop with it: they end with no decision.
            self.decisions.remove_pane(id);
            if let Some(pty) = &pane.pty {
                pty.close();
            }
            self.publish(Event::PaneClosed { pane: id.clone() });
        }
    }

    fn close_pane(&mut self, id: &PaneId) {
        let Some(tab_id) = self.panes.get(id).map(|p| p.tab.clone()) else { return };
        let Some(tab) = self.tabs.get_mut(&tab_id) else { return };
        match tab.layout.remove(id) {
            Ok(true) => {
                if &tab.active_pane == id {
                    // Focus moves to the first pane that is left (the layout holds at least one).
                    if let Some(first) = tab.layout.panes().into_iter().next() {
                        tab.active_pane = first;
                    }
                }
                self.drop_pane(id);
                self.relayout(&tab_id);
            }
            // The last pane: the tab goes with it.
            Ok(false) => self.close_tab(&tab_id),
            Err(e) => tracing::error!(pane = %id, error = %e, "pane missing from its tab's layout"),
        }
    }

    // ---- sizes and focus ----

    /// Resizes every pane of a tab from its layout and publishes the change.
    fn relayout(&mut self, tab_id: &TabId) {
        let Some(tab) = self.tabs.get(tab_id) else { return };
        for (pane_id, rect) in tab.layout.rects(tab.size) {
            if let Some(pane) = self.panes.get(&pane_id) {
                apply_size(pane, self.pane_size_for(rect));
            }
        }
        self.publish(Event::TabChanged { tab: tab_id.clone() });
    }

    /// `pane.resize`. A pane alone in its tab takes the size for good: the tab becomes that
    /// size (plus the window's header rows), so it is saved and a restart or resume keeps it. A
    /// pane in a split takes it only until its tab is next laid out (a tab resize, split,
    /// close or divider move): the window's zoom works this way, and the dividers stay.
    fn resize_pane(&mut self, id: &PaneId, size: CellSize) -> Result<(), CommandError> {
        let tab_id = self.pane(id)?.tab.clone();
        if self.tab(&tab_id)?.layout.pane_count() == 1 {
            let rows = size.rows.saturating_add(self.header_rows);
            self.tab_mut(&tab_id)?.size = CellSize { cols: size.cols, rows };
            self.relayout(&tab_id);
        } else {
            apply_size(self.pane(id)?, size);
        }
        self.publish(Event::PaneChanged { pane: id.clone() });
        Ok(())
    }

    fn focus(&mut self, id: &PaneId) -> Result<(), CommandError> {
        let pane = self.pane(id)?;
        let (tab_id, ws_id) = (pane.tab.clone(), pane.workspace.clone());
        self.tab_mut(&tab_id)?.active_pane = id.clone();
        self.workspace_mut(&ws_id)?.active_tab = Some(tab_id.clone());
        self.active_workspace = Some(ws_id.clone());
        self.clear_attention(id);
        self.publish(Event::FocusChanged { pane: id.clone(), tab: tab_id, workspace: ws_id });
        Ok(())
    }

    // ---- reading ----

    fn read(&self, id: &PaneId, spec: ReadSpec) -> Result<ReadView, CommandError> {
        let pane = self.pane(id)?;
        if let Some(tomb) = &pane.tombstone {
            let rows = pane.shared.term.lock().size().rows as usize;
            return Ok(read_tail_lines(id, &tomb.tail, spec, rows));
        }
        let req = ReadRequest { since: spec.since, last: spec.last, ansi: spec.ansi };
        let result = pane.shared.term.lock().read(&req);
        Ok(ReadView {
            pane: id.clone(),
            lines: result.lines,
            first_seq: result.first_seq,
            next_seq: result.next_seq,
            oldest_seq: result.oldest_seq,
            truncated: result.truncated,
        })
    }

    /// The pane's working directory: what the program reported (OSC 7), else the process's,
    /// else the saved one, else where it started.
    pub(crate) fn pane_cwd(&self, pane: &Pane) -> String {
        if let Some(tomb) = &pane.tombstone {
            return tomb.cwd.clone();
        }
        if let Some(cwd) = pane.shared.meta().reported_cwd.clone() {
            return cwd;
        }
        if let Some(pty) = pane.pty.as_ref().filter(|_| pane.shared.meta().exit.is_none()) {
            if let Some(cwd) = procfs::cwd(pty.pid()) {
                return cwd.display().to_string();
            }
        }
        pane.start_cwd.display().to_string()
    }

    /// The pane's title: the program's (OSC 0/2), else the one given at creation, else the
    /// program's name.
    pub(crate) fn pane_title(&self, pane: &Pane) -> String {
        if let Some(tomb) = &pane.tombstone {
            return tomb.title.clone();
        }
        pane.shared
            .meta()
            .program_title
            .clone()
            .filter(|t| !t.is_empty())
            .or_else(|| pane.given_title.clone())
            .unwrap_or_else(|| {
                // A program's name is as untrusted as the title it sets.
                let program = pane.argv.first().map(String::as_str).unwrap_or("");
                crate::pane::clean_title(program.rsplit('/').next().unwrap_or(program))
            })
    }

    /// The work in flight: the PTY's foreground job when it is not the pane's own program.
    pub(crate) fn pane_was_running(&self, pane: &Pane) -> Option<String> {
        if let Some(tomb) = &pane.tombstone {
            return tomb.was_running.clone();
        }
        let job = pane.pty.as_ref()?.foreground_job()?;
        Some(clean_line(&job.join(" "), MAX_NAME_CHARS))
    }

    /// A live pane's lifecycle: an agent's as its hooks said; for a plain program, `working`
    /// while a job runs in the PTY's foreground (a shell running `cargo test`), else `idle`.
    fn live_lifecycle(&self, pane: &Pane, reported: Lifecycle) -> (Lifecycle, Option<String>) {
        if pane.agent.kind != AgentKind::None {
            return (reported, None);
        }
        let job = || {
            let job = pane.pty.as_ref()?.foreground_job()?;
            Some(clean_line(&job.join(" "), MAX_NAME_CHARS))
        };
        if reported == Lifecycle::Starting {
            // Nothing read from the PTY yet (a busy machine may not have run its reader), but
            // a job in the foreground means the shell took a command: that is work, not a start.
            return match job() {
                Some(job) => (Lifecycle::Working, Some(job)),
                None => (Lifecycle::Starting, None),
            };
        }
        // Shell integration (OSC 133) says exactly whether a command runs.
        if let Some(at_prompt) = pane.shared.meta().at_prompt {
            return if at_prompt { (Lifecycle::Idle, None) } else { (Lifecycle::Working, job()) };
        }
        let job = job();
        let lifecycle = if job.is_some() { Lifecycle::Working } else { Lifecycle::Idle };
        // The process heuristic is learned here, when it is read (`pane.wait` polls it).
        pane.shared.meta().turns.probe(lifecycle, now_ms());
        (lifecycle, job)
    }

    /// A pane's lifecycle as its view shows it: a tombstone's saved one, a live pane's (see
    /// `live_lifecycle`), else `exited`.
    pub(crate) fn pane_lifecycle(&self, pane: &Pane) -> Lifecycle {
        self.pane_lifecycle_and_job(pane).0
    }

    /// [`Store::pane_lifecycle`], and the foreground job of a live plain program's PTY (the
    /// one reading of the process that gave the lifecycle).
    fn pane_lifecycle_and_job(&self, pane: &Pane) -> (Lifecycle, Option<String>) {
        let reported = pane.shared.meta().lifecycle;
        match &pane.tombstone {
            Some(tomb) => (tomb.lifecycle, None),
            None if pane.state() == RestoreState::Live => self.live_lifecycle(pane, reported),
            None => (Lifecycle::Exited, None),
        }
    }

    fn pane_info(&self, pane: &Pane) -> PaneInfo {
        // Never the terminal's lock: a flooding reader holds it (issue 28).
        let size = pane.shared.size();
        let state = pane.state();
        let live = state == RestoreState::Live;
        let (lifecycle, job) = self.pane_lifecycle_and_job(pane);
        let meta = pane.shared.meta().clone();
        let (exit_code, exit_signal) = match &pane.tombstone {
            Some(tomb) => (tomb.exit_code, None),
            None => pane
                .exit()
                .map_or((None, None), |e| (Some(e.code), e.signal.as_deref().map(signal_name))),
        };
        let cwd = self.pane_cwd(pane);
        PaneInfo {
            id: pane.id.clone(),
            title: self.pane_title(pane),
            cwd: cwd.clone(),
            argv: pane.argv.clone(),
            state,
            lifecycle,
            attention: pane.attention,
            agent: AgentView {
                kind: pane.agent.kind,
                session_id: pane.agent.session_id.clone(),
                resume_argv: pane.agent.resume_argv(),
            },
            exit_code,
            exit_signal,
            job,
            size: CellSize { cols: size.cols, rows: size.rows },
            was_running: pane.tombstone.as_ref().and_then(|t| t.was_running.clone()),
            pid: pane.pty.as_ref().filter(|_| live).map(|p| p.pid()),
            created_at: pane.created_at,
            progress: meta
                .progress
                .filter(|_| live)
                .and_then(|(state, percent)| Progress::from_conemu(state, percent)),
            lifecycle_since: Some(pane.shared.lifecycle_since(lifecycle)),
            resume: self.resume_plan(pane),
            pending_decision: self.pending_decision(&pane.id),
            turn: meta.turns.info(),
            git: self.git.get(&cwd),
        }
    }

    /// The whole state, typed (what `workspace.list` answers and the window draws).
    pub fn view(&self) -> StateView {
        let workspaces = self
            .workspaces
            .iter()
            .map(|ws| WorkspaceView {
                id: ws.id.clone(),
                name: ws.name.clone(),
                cwd: ws.cwd.display().to_string(),
                git: self.git.get(&ws.cwd.display().to_string()),
                auto_resume: ws.auto_resume,
                agent_drive: ws.agent_drive,
                active_tab: ws.active_tab.clone(),
                tabs: ws
                    .tabs
                    .iter()
                    .filter_map(|t| self.tabs.get(t))
                    .map(|tab| {
                        let panes: Vec<PaneInfo> = tab
                            .layout
                            .panes()
                            .iter()
                            .filter_map(|p| self.panes.get(p))
                            .map(|p| self.pane_info(p))
                            .collect();
                        let title = tab.title.clone().unwrap_or_else(|| {
                            panes
                                .iter()
                                .find(|p| p.id == tab.active_pane)
                                .map(|p| p.title.clone())
                                .unwrap_or_default()
                        });
                        TabInfo {
                            id: tab.id.clone(),
                            title,
                            active_pane: tab.active_pane.clone(),
                            layout: tab.layout.clone(),
                            size: tab.size,
                            panes,
                        }
                    })
                    .collect(),
            })
            .collect();
        StateView { workspaces, active_workspace: self.active_workspace.clone() }
    }

    /// Ends every pane's process; used at shutdown. Returns the panes that were live.
    pub fn close_all_ptys(&mut self) -> Vec<PaneId> {
        let mut closed = Vec::new();
        for pane in self.panes.values() {
            if let Some(pty) = &pane.pty {
                if pty.exit_info().is_none() {
                    closed.push(pane.id.clone());
                }
                pty.close();
            }
        }
        closed
    }

    /// Waits (bounded) for every pane's process to exit; used at shutdown.
    pub fn wait_all_exited(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        self.panes.values().filter_map(|p| p.pty.as_ref()).all(|pty| {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            pty.wait_exit(left).is_some()
        })
    }
}

fn apply_size(pane: &Pane, size: CellSize) {
    let size = term_size(size);
    if !pane.shared.resize(size) {
        return;
    }
    if let Some(pty) = &pane.pty {
        if let Err(e) = pty.resize(size.cols, size.rows) {
            tracing::debug!(pane = %pane.id, error = %e, "PTY resize failed");
        }
    }
}

/// Reads a tombstone's tail as `pane.read` would read a terminal: lines are numbered from 0;
/// without `since` or `last` the last screenful is returned.
fn read_tail_lines(id: &PaneId, tail: &[String], spec: ReadSpec, rows: usize) -> ReadView {
    let total = tail.len();
    let (start, truncated) = match (spec.since, spec.last) {
        (Some(since), _) => (usize::try_from(since).unwrap_or(usize::MAX).min(total), false),
        (None, Some(last)) => (total.saturating_sub(last), false),
        (None, None) => (total.saturating_sub(rows.max(1)), false),
    };
    let lines = tail[start..]
        .iter()
        .map(|line| if spec.ansi { line.clone() } else { strip_escapes(line) })
        .collect();
    ReadView {
        pane: id.clone(),
        lines,
        first_seq: start as u64,
        next_seq: total as u64,
        oldest_seq: 0,
        truncated,
    }
}

/// One line of text with control characters removed and its length bounded.
pub(crate) fn clean_line(text: &str, max_chars: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max_chars).collect()
}

fn default_workspace_name(cwd: &Path) -> String {
    cwd.file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty() && !n.chars().any(char::is_control))
        .map(|n| n.chars().take(MAX_NAME_CHARS).collect())
        .unwrap_or_else(|| "default".to_owned())
}

/// The name (`SIGTERM`) of the signal portable-pty describes as `description` (`strsignal`'s
/// words, "Terminated"); a name stays a name, and words it does not know are kept as they are.
pub(crate) fn signal_name(description: &str) -> String {
    const NAMES: &[(&str, &str)] = &[
        ("Hangup", "SIGHUP"),
        ("Interrupt", "SIGINT"),
        ("Quit", "SIGQUIT"),
        ("Illegal instruction", "SIGILL"),
        ("Trace/breakpoint trap", "SIGTRAP"),
        ("Aborted", "SIGABRT"),
        ("Bus error", "SIGBUS"),
        ("Floating point exception", "SIGFPE"),
        ("Killed", "SIGKILL"),
        ("User defined signal 1", "SIGUSR1"),
        ("Segmentation fault", "SIGSEGV"),
        ("User defined signal 2", "SIGUSR2"),
        ("Broken pipe", "SIGPIPE"),
        ("Alarm clock", "SIGALRM"),
        ("Terminated", "SIGTERM"),
        ("CPU time limit exceeded", "SIGXCPU"),
        ("File size limit exceeded", "SIGXFSZ"),
        ("Virtual timer expired", "SIGVTALRM"),
        ("Profiling timer expired", "SIGPROF"),
        ("Bad system call", "SIGSYS"),
    ];
    let words = description.trim();
    let known = NAMES.iter().find(|(w, _)| w.eq_ignore_ascii_case(words)).map(|(_, n)| *n);
    clean_line(known.unwrap_or(words), MAX_NAME_CHARS)
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;

/// A Store for unit tests: its home and socket in `home`, `/bin/sh` as the shell, programs
/// "spawned" by a [`crate::process::testing::FakeSpawner`], events on `bus`.
#[cfg(test)]
pub(crate) fn test_store(home: &std::path::Path, bus: EventBus) -> Store {
    let config = StoreConfig {
        socket_path: home.join("berth.sock"),
        home: home.to_path_buf(),
        shell: "/bin/sh".into(),
    };
    Store::with_spawner(
        config,
        bus,
        crate::pane::OutputPulse::default(),
        Arc::new(crate::process::testing::FakeSpawner::default()),
    )
}
