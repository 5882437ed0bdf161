//! The socket link (`SocketLink`, behind `server_link.rs`'s `ServerLink`): the window
//! attached to a server in another process, through its socket (a local one, or one
//! forwarded from another machine by `berth attach ssh://…`).
//!
//! Owns five connections: one for the window's commands (answered in order on the event
//! loop's thread), one for input (`pane.input`, sent in order by a thread of its own so the
//! window never waits on the link; keys typed meanwhile go in the next request), one
//! subscribed to events (any event but output of a pane the window does not show makes the
//! window look again; one that is not pane output makes the state thread fetch the state on
//! the fourth, and the task list with it after a `task.changed`, for the sidebar), and one
//! that pulls frames (`screen.frames`, with an open search's query, so that its matches on
//! the rows come with them) for the panes the window shows, on its own thread: it asks again
//! only after the previous answer arrived and at most once per display refresh (60 Hz unless
//! the monitor says) after an answer that changed something, so the server never
//! holds more than one unread frame per pane for this window and a stopped window costs the
//! server nothing. It must not draw and holds no state the server owns beyond the copies it
//! shows.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use alacritty_terminal::term::TermMode;
use berth_engine::ids::PaneId;
use berth_engine::model::RestoreState;
use berth_server::client::{Client, ClientError};
use berth_server::commands::{Command, ReadSpec, Reply};
use berth_server::event::Event;
use berth_server::notifications::DesktopPolicy;
use berth_server::pane_search::{SearchReply, SearchRequest, WireMatch};
use berth_server::persist::task_record::TaskRecord;
use berth_server::screen::{PaneFrame, PaneHave};
use berth_server::store::WindowView;
use berth_server::tasks::request::ListParams;
use berth_server::view::StateView;

use super::desktop::WindowDesktop;
use super::keys::KeyModes;
use super::server_link::{LinkSettings, ServerLink};
use super::view::TabView;
use super::wake::Waker;

/// The shortest time between two frame pulls that brought a change, until the window says
/// its monitor's refresh: a pane's frames come at most at the display's refresh rate.
const MIN_PULL: Duration = Duration::from_micros(16_667);

/// The fastest refresh a monitor may claim for the pull interval (beyond it, 1 ms).
const MAX_REFRESH_MHZ: u32 = 1_000_000;

/// How long the puller waits without a poke before asking anyway (a cursor that moved without
/// output, a change whose event was missed).
const IDLE_PULL: Duration = Duration::from_millis(500);

/// How long a lost connection is tried again before the server counts as gone.
const RECONNECT: Duration = Duration::from_secs(3);

/// The most input bytes one `pane.input` carries (as a JSON array a byte takes up to four
/// characters of the server's 1 MiB line); a bigger paste goes in several, in order.
const MAX_INPUT_CHUNK: usize = 64 << 10;

/// How many lines of a tombstone's tail are read.
const TAIL_LINES: usize = 2000;

/// Asks the window to come to the front.
pub(super) type Raise = Box<dyn Fn(Option<String>) + Send + Sync>;

/// What the threads share with the window.
#[derive(Default)]
struct Shared {
    /// The latest frame of each shown pane.
    frames: Mutex<HashMap<PaneId, PaneFrame>>,
    /// The panes the window shows (the puller asks for these).
    shown: Mutex<Vec<PaneId>>,
    /// What the window shows, for the server's notifications (`window.view`), sent by the
    /// puller on its connection when it changed.
    view: Mutex<Option<WindowView>>,
    /// How far this window's view of each pane is scrolled back (absent: the live screen).
    offsets: Mutex<HashMap<PaneId, u32>>,
    /// The query of the open search in a pane: its matches on the view come with the frames.
    searches: Mutex<HashMap<PaneId, String>>,
    /// Those matches, as the latest frame of the pane came with them.
    matches: Mutex<HashMap<PaneId, Vec<WireMatch>>>,
    /// Set by a poke, cleared by the puller.
    poke: Mutex<bool>,
    poked: Condvar,
    /// The window's own command changed the state: the next `view` fetches it at once.
    stale: AtomicBool,
    /// The state an event said changed, fetched by the state thread (the window never waits
    /// for it).
    state: Mutex<Option<StateView>>,
    /// The tasks (the sidebar lists them), fetched by the state thread with the state.
    tasks: Mutex<Vec<TaskRecord>>,
    /// A task changed (or the list was never read): the next state fetch reads them too.
    tasks_stale: AtomicBool,
    /// Set by an event, cleared by the state thread.
    refresh: Mutex<bool>,
    refreshed: Condvar,
    /// The server went away.
    gone: AtomicBool,
    /// A desktop notification was clicked: the window comes to the front (with the
    /// notification server's activation token, if any).
    raise: Option<Raise>,
    /// `berth review TASK` asked for a task's review view (`review.requested`).
    review: Mutex<Option<String>>,
    /// The number the server gave this window's view reports (`window.view`; 0: none yet):
    /// the `notification.desktop` events naming it are this window's to show (`desktop.rs`).
    window_id: AtomicU64,
    /// Whether the window's config lets notifications reach the desktop.
    desktop_allowed: AtomicBool,
    /// The shortest time between two pulls that brought a change, in µs: one refresh of the
    /// window's monitor (0: [`MIN_PULL`]).
    min_pull_us: AtomicU64,
    /// How many events other than pane output came (the inbox lists the notifications again
    /// when it changed).
    events_seen: AtomicU64,
    /// Notifications the server named this window to show that this desktop did not (no
    /// notification service answered yet, or desktop notifications are off here): the
    /// window shows them as toasts. Bounded: the oldest go past [`MAX_TOASTS`].
    toasts: Mutex<Vec<berth_server::view::NotificationView>>,
}

/// The most toasts held for the window (it takes them at its next frame).
const MAX_TOASTS: usize = 8;

impl Shared {
    fn ask_refresh(&self) {
        *self.refresh.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.refreshed.notify_one();
    }

    fn poke(&self) {
        *self.poke.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.poked.notify_one();
    }
}

/// A window's link to a server over its socket.
pub(super) struct SocketLink {
    socket: PathBuf,
    commands: RefCell<Option<Client>>,
    tails: RefCell<HashMap<PaneId, Vec<String>>>,
    /// The view last handed to the puller.
    last_view: RefCell<Option<WindowView>>,
    shared: Arc<Shared>,
    /// Input for the input thread, which sends it in order without the window waiting.
    input: std::sync::mpsc::Sender<(PaneId, Vec<u8>)>,
}

impl SocketLink {
    /// Connects to the server at `socket`, tells it a window with `header_rows` attaches, and
    /// starts the event and frame threads.
    pub(super) fn connect(
        socket: &Path,
        header_rows: u16,
        waker: Waker,
        raise: Raise,
        desktop_allowed: bool,
    ) -> Result<Self, ClientError> {
        let mut commands = Client::connect(socket)?;
        commands.attach_window(header_rows)?;
        let shared = Arc::new(Shared {
            raise: Some(raise),
            desktop_allowed: AtomicBool::new(desktop_allowed),
            ..Shared::default()
        });
        shared.stale.store(true, Ordering::Release);
        shared.tasks_stale.store(true, Ordering::Release);
        shared.ask_refresh();
        let mut events = Client::connect(socket)?;
        events.subscribe()?;
        let frames = Client::connect(socket)?;
        let state = Client::connect(socket)?;
        let typing = Client::connect(socket)?;
        let (input, queued) = std::sync::mpsc::channel();
        spawn("berth-attach-input", {
            let socket = socket.to_path_buf();
            move || send_input(typing, &socket, &queued)
        });
        spawn("berth-attach-state", {
            let (shared, waker, socket) = (shared.clone(), waker.clone(), socket.to_path_buf());
            move || follow_state(state, &socket, &shared, &waker)
        });
        spawn("berth-attach-events", {
            let (shared, waker, socket) = (shared.clone(), waker.clone(), socket.to_path_buf());
            move || follow_events(events, &socket, &shared, &waker)
        });
        spawn("berth-attach-frames", {
            let (shared, socket) = (shared.clone(), socket.to_path_buf());
            move || pull_frames(frames, &socket, &shared, &waker)
        });
        Ok(Self {
            socket: socket.to_path_buf(),
            commands: RefCell::new(Some(commands)),
            tails: RefCell::new(HashMap::new()),
            last_view: RefCell::new(None),
            shared,
            input,
        })
    }

    /// How many events other than pane output came so far.
    pub(super) fn events_seen(&self) -> u64 {
        self.shared.events_seen.load(Ordering::Acquire)
    }

    /// The notifications to show as toasts since the last call (`Shared::toasts`).
    pub(super) fn take_toasts(&self) -> Vec<berth_server::view::NotificationView> {
        std::mem::take(&mut *self.shared.toasts.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The task whose review view `berth review` asked for since the last call, if any.
    pub(super) fn take_review_request(&self) -> Option<String> {
        self.shared.review.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Whether the window's config lets the server's notifications reach this desktop.
    pub(super) fn allow_desktop(&self, allowed: bool) {
        self.shared.desktop_allowed.store(allowed, Ordering::Release);
    }

    /// The window's monitor refreshes at `millihertz`: frames are pulled at most that often.
    pub(super) fn set_refresh(&self, millihertz: u32) {
        let hz = u64::from(millihertz.clamp(1_000, MAX_REFRESH_MHZ));
        self.shared.min_pull_us.store(1_000_000_000 / hz, Ordering::Release);
    }

    /// Whether the server went away (the window then closes).
    pub(super) fn gone(&self) -> bool {
        self.shared.gone.load(Ordering::Acquire)
    }

    /// Executes a command on the server; a connection closed while idle is made again once.
    pub(super) fn execute(&self, cmd: Command) -> Result<Reply, String> {
        let reply =
            self.on_commands(|client| client.execute(cmd.clone())).map_err(|e| e.to_string())?;
        self.shared.stale.store(true, Ordering::Release);
        self.shared.poke();
        Ok(reply)
    }

    /// Runs `call` on the command connection, made first if there is none; a connection that
    /// broke while idle (an I/O error) is made again and `call` tried once more.
    fn on_commands<T>(
        &self,
        mut call: impl FnMut(&mut Client) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let mut slot = self.commands.borrow_mut();
        let mut retried = false;
        loop {
            let client = match slot.as_mut() {
                Some(client) => client,
                None => slot.insert(Client::connect(&self.socket)?),
            };
            match call(client) {
                Err(ClientError::Io(e)) if !retried => {
                    tracing::debug!(error = %e, "the command connection broke; connecting again");
                    *slot = None;
                    retried = true;
                }
                other => return other,
            }
        }
    }

    /// The server's state: fetched at once after the window's own command (or the first
    /// time), else as the state thread last fetched it after an event.
    pub(super) fn view(&self) -> StateView {
        let missing = self.shared.state.lock().unwrap_or_else(|p| p.into_inner()).is_none();
        if self.shared.stale.swap(false, Ordering::AcqRel) || missing {
            match self.execute_quiet(Command::WorkspaceList) {
                Ok(Reply::State(list)) => {
                    *self.shared.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(*list);
                    self.tails.borrow_mut().clear();
                }
                Ok(_) => tracing::warn!("workspace.list answered with another reply"),
                Err(e) => tracing::warn!(error = %e, "cannot read the server's state"),
            }
        }
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_default()
    }

    /// The server's tasks as the state thread last read them (oldest first).
    pub(super) fn tasks(&self) -> Vec<TaskRecord> {
        self.shared.tasks.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Scrolls this window's view of a pane by `lines` (positive: back into the scrollback);
    /// the server clamps it to the history there is.
    pub(super) fn scroll(&self, pane: &PaneId, lines: i32) {
        let held = self.frame(pane).map_or(0, |f| f.meta.display_offset);
        let mut offsets = self.shared.offsets.lock().unwrap_or_else(|p| p.into_inner());
        // From the offset asked for last (wheel clicks come faster than frames); the puller
        // brings it down to what the server could show, so scrolling past the top does not
        // pile up.
        let base = offsets.get(pane).copied().unwrap_or(held);
        let now = i64::from(base) + i64::from(lines);
        let offset = u32::try_from(now.max(0)).unwrap_or(u32::MAX);
        if offset == 0 {
            offsets.remove(pane);
        } else {
            offsets.insert(pane.clone(), offset);
        }
        drop(offsets);
        self.shared.poke();
    }

    /// Scrolls this window's view of a pane to `offset` lines back (a search's match).
    pub(super) fn scroll_to(&self, pane: &PaneId, offset: u32) {
        let mut offsets = self.shared.offsets.lock().unwrap_or_else(|p| p.into_inner());
        if offset == 0 {
            offsets.remove(pane);
        } else {
            offsets.insert(pane.clone(), offset);
        }
        drop(offsets);
        self.shared.poke();
    }

    /// How far this window's view of a pane is scrolled back: as asked for last, else as the
    /// latest frame shows it.
    pub(super) fn offset(&self, pane: &PaneId) -> u32 {
        let asked =
            self.shared.offsets.lock().unwrap_or_else(|p| p.into_inner()).get(pane).copied();
        asked.unwrap_or_else(|| self.frame(pane).map_or(0, |f| f.meta.display_offset))
    }

    /// Sets the query of the open search in a pane (`None`: closed): the frames pulled then
    /// come with its matches on their rows.
    pub(super) fn set_search(&self, pane: &PaneId, query: Option<&str>) {
        let mut searches = self.shared.searches.lock().unwrap_or_else(|p| p.into_inner());
        let changed = match query {
            Some(q) => searches.insert(pane.clone(), q.to_owned()).as_deref() != Some(q),
            None => searches.remove(pane).is_some(),
        };
        drop(searches);
        if changed {
            if query.is_none() {
                self.shared.matches.lock().unwrap_or_else(|p| p.into_inner()).remove(pane);
            }
            self.shared.poke();
        }
    }

    /// The open search's matches on the rows of the pane's latest frame.
    pub(super) fn view_matches(&self, pane: &PaneId) -> Vec<WireMatch> {
        let matches = self.shared.matches.lock().unwrap_or_else(|p| p.into_inner());
        matches.get(pane).cloned().unwrap_or_default()
    }

    /// Searches a pane's scrollback on the server (`pane.search`); the error is the server's
    /// message.
    pub(super) fn search(&self, request: SearchRequest) -> Result<SearchReply, String> {
        self.on_commands(|client| client.search(request.clone())).map_err(|e| match e {
            ClientError::Rpc { message, .. } => message,
            e => e.to_string(),
        })
    }

    /// A pane's lines from line `since` on, as plain text (`pane.read`): the rows of a
    /// selection the window does not hold. Returns the first line's number and the lines.
    pub(super) fn read_lines(&self, pane: &PaneId, since: u64) -> Option<(u64, Vec<String>)> {
        let spec = ReadSpec { since: Some(since), last: None, ansi: false };
        match self.execute_quiet(Command::PaneRead { pane: pane.clone(), spec }) {
            Ok(Reply::Read(read)) => Some((read.first_seq, read.lines)),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the selected lines");
                None
            }
        }
    }

    /// Returns this window's view of a pane to the live screen (before input).
    pub(super) fn scroll_to_bottom(&self, pane: &PaneId) {
        let had = self.shared.offsets.lock().unwrap_or_else(|p| p.into_inner()).remove(pane);
        if had.is_some() {
            self.shared.poke();
        }
    }

    /// Sends input bytes to a pane without waiting: the input thread sends them in order,
    /// what queued up meanwhile in one request.
    pub(super) fn send_input(&self, pane: &PaneId, bytes: Vec<u8>) {
        // No pull now: the echo is not there yet, and a pull in flight when its
        // `pane.output` arrives would delay the one that brings it.
        if self.input.send((pane.clone(), bytes)).is_err() {
            tracing::warn!("the input thread is gone: input dropped");
        }
    }

    /// `execute` without marking the state stale (a read).
    fn execute_quiet(&self, cmd: Command) -> Result<Reply, String> {
        self.on_commands(|client| client.execute(cmd.clone())).map_err(|e| e.to_string())
    }

    /// Says which panes the window shows (the puller asks for their frames), which has the
    /// keyboard and whether the window is focused (the server keeps a watched pane's
    /// notifications off the desktop, as for the embedded window).
    pub(super) fn show(&self, view: WindowView) {
        let mut poke = false;
        {
            let mut shown = self.shared.shown.lock().unwrap_or_else(|p| p.into_inner());
            if *shown != view.visible {
                shown.clone_from(&view.visible);
                poke = true;
            }
        }
        {
            let mut reported = self.last_view.borrow_mut();
            if reported.as_ref() != Some(&view) {
                *reported = Some(view.clone());
                *self.shared.view.lock().unwrap_or_else(|p| p.into_inner()) = Some(view);
                poke = true;
            }
        }
        if poke {
            self.shared.poke();
        }
    }

    /// The latest frame of a pane, if one arrived.
    pub(super) fn frame(&self, pane: &PaneId) -> Option<PaneFrame> {
        self.shared.frames.lock().unwrap_or_else(|p| p.into_inner()).get(pane).cloned()
    }

    /// A tombstone's saved tail, read once per state change.
    pub(super) fn tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        if let Some(lines) = self.tails.borrow().get(pane) {
            return Some(lines.clone());
        }
        let spec = ReadSpec { since: None, last: Some(TAIL_LINES), ansi: true };
        let lines = match self.execute_quiet(Command::PaneRead { pane: pane.clone(), spec }) {
            Ok(Reply::Read(read)) => read.lines,
            _ => return None,
        };
        self.tails.borrow_mut().insert(pane.clone(), lines.clone());
        Some(lines)
    }
}

/// The socket link behind the window's seam (`server_link.rs`): the methods above.
impl ServerLink for SocketLink {
    fn events_seen(&self) -> u64 {
        SocketLink::events_seen(self)
    }

    fn take_toasts(&self) -> Vec<berth_server::view::NotificationView> {
        SocketLink::take_toasts(self)
    }

    fn view(&self) -> StateView {
        SocketLink::view(self)
    }

    fn focused_pane(&self) -> Option<PaneId> {
        TabView::active(&SocketLink::view(self)).map(|v| v.active_pane)
    }

    fn pane_state(&self, pane: &PaneId) -> Option<RestoreState> {
        SocketLink::view(self)
            .workspaces
            .iter()
            .flat_map(|w| w.tabs.iter())
            .flat_map(|t| t.panes.iter())
            .find(|p| &p.id == pane)
            .map(|p| p.state)
    }

    fn tail_len(&self, pane: &PaneId) -> Option<usize> {
        ServerLink::tail(self, pane).map(|t| t.len())
    }

    fn tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        // Only a tombstone has a tail (a live pane's text is its frame).
        if self.pane_state(pane) == Some(RestoreState::Live) {
            return None;
        }
        SocketLink::tail(self, pane)
    }

    fn frame(&self, pane: &PaneId) -> Option<PaneFrame> {
        SocketLink::frame(self, pane)
    }

    fn modes(&self, pane: &PaneId) -> Option<TermMode> {
        SocketLink::frame(self, pane).map(|f| TermMode::from_bits_truncate(f.meta.modes))
    }

    fn key_modes(&self, pane: &PaneId) -> Option<KeyModes> {
        SocketLink::frame(self, pane).map(|f| {
            let mode = TermMode::from_bits_truncate(f.meta.modes);
            KeyModes {
                app_cursor: mode.contains(TermMode::APP_CURSOR),
                app_keypad: mode.contains(TermMode::APP_KEYPAD),
                kitty_flags: f.meta.keyboard_flags,
                backarrow_bs: f.meta.backarrow_bs,
            }
        })
    }

    fn execute(&self, cmd: Command) -> Result<Reply, String> {
        SocketLink::execute(self, cmd)
    }

    fn send_input(&self, pane: &PaneId, bytes: Vec<u8>) {
        // Bytes as they are (legacy mouse reports past column 95 are not UTF-8); the window
        // does not wait for the server's answer.
        SocketLink::scroll_to_bottom(self, pane);
        SocketLink::send_input(self, pane, bytes);
    }

    fn scroll(&self, pane: &PaneId, lines: i32) {
        SocketLink::scroll(self, pane, lines);
    }

    fn scroll_to(&self, pane: &PaneId, offset: u32) {
        SocketLink::scroll_to(self, pane, offset);
    }

    fn offset(&self, pane: &PaneId) -> u32 {
        SocketLink::offset(self, pane)
    }

    fn set_search(&self, pane: &PaneId, query: Option<&str>) {
        SocketLink::set_search(self, pane, query);
    }

    fn view_matches(&self, pane: &PaneId) -> Vec<WireMatch> {
        SocketLink::view_matches(self, pane)
    }

    fn search(&self, request: SearchRequest) -> Result<SearchReply, String> {
        SocketLink::search(self, request)
    }

    fn read_lines(&self, pane: &PaneId, since: u64) -> Option<(u64, Vec<String>)> {
        SocketLink::read_lines(self, pane, since)
    }

    fn show(&self, view: WindowView) {
        SocketLink::show(self, view);
    }

    fn tasks(&self) -> Vec<TaskRecord> {
        SocketLink::tasks(self)
    }

    fn take_review_request(&self) -> Option<String> {
        SocketLink::take_review_request(self)
    }

    fn apply_settings(&self, settings: &LinkSettings) {
        // The server keeps its own settings; the window's config says only whether the
        // notifications it shows for the server reach this desktop.
        self.allow_desktop(settings.desktop != DesktopPolicy::Off);
    }

    fn shared_with_other_windows(&self) -> bool {
        true
    }

    fn set_refresh(&self, millihertz: u32) {
        SocketLink::set_refresh(self, millihertz);
    }

    fn gone(&self) -> Option<&'static str> {
        SocketLink::gone(self).then_some("the attached server went away: closing the window")
    }
}

/// The server's tasks (`task.list`), oldest first.
fn read_tasks(client: &mut Client) -> Result<Vec<TaskRecord>, String> {
    client
        .task_list(ListParams::default(), Some(Duration::from_secs(5)))
        .map_err(|e| format!("task.list: {e}"))
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new().name(name.into()).spawn(f) {
        tracing::error!(error = %e, thread = name, "cannot start a thread of the attached window");
    }
}

/// Connects again for up to [`RECONNECT`]; `None` when the server is gone.
fn reconnect(socket: &Path, subscribe: bool) -> Option<Client> {
    let deadline = Instant::now() + RECONNECT;
    while Instant::now() < deadline {
        if let Ok(mut client) = Client::connect(socket) {
            if !subscribe || client.subscribe().is_ok() {
                return Some(client);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// Any event: look again; one that is not pane output: the state changed. A notification
/// the server names this window to show goes to this desktop (`desktop.rs`).
fn follow_events(mut client: Client, socket: &Path, shared: &Shared, waker: &Waker) {
    let mut desktop: Option<Option<WindowDesktop>> = None;
    loop {
        match client.next_typed_event(None) {
            Ok(event) => {
                if let Event::NotificationActivated { activation_token, .. } = &event {
                    if let Some(raise) = &shared.raise {
                        raise(activation_token.clone());
                    }
                }
                if matches!(event, Event::TaskChanged { .. }) {
                    shared.tasks_stale.store(true, Ordering::Release);
                }
                if let Event::ReviewRequested { task, window } = &event {
                    // The view opens in the window used last only.
                    let mine = window.is_none_or(|w| {
                        w != berth_server::store::EMBEDDED_WINDOW
                            && w == shared.window_id.load(Ordering::Acquire)
                    });
                    if mine {
                        *shared.review.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some(task.as_str().to_owned());
                    }
                }
                if let Event::NotificationDesktop { notification, window } = &event {
                    let mine = *window != 0 && *window == shared.window_id.load(Ordering::Acquire);
                    let mut shown = false;
                    if mine && shared.desktop_allowed.load(Ordering::Acquire) {
                        let started =
                            desktop.get_or_insert_with(|| WindowDesktop::start(socket.into()));
                        if let Some(desktop) = started {
                            desktop.show(notification);
                            shown = desktop.confirmed();
                        }
                    }
                    tracing::debug!(
                        id = %notification.id,
                        window,
                        mine,
                        shown,
                        "the server names a window to show a notification"
                    );
                    if mine && !shown {
                        // No desktop here showed it (none answers, or none yet): a toast.
                        let mut toasts = shared.toasts.lock().unwrap_or_else(|p| p.into_inner());
                        if toasts.len() == MAX_TOASTS {
                            toasts.remove(0);
                        }
                        toasts.push((**notification).clone());
                    }
                }
                if !matches!(event, Event::PaneOutput { .. }) {
                    shared.events_seen.fetch_add(1, Ordering::AcqRel);
                }
                if let Event::PaneOutput { pane } = &event {
                    // Output changes only the frames: the puller fetches a shown pane's and
                    // wakes the window when one changed (a frame drawn now would be the old
                    // one, and would delay that); a pane not shown changes nothing drawn.
                    let shown = shared.shown.lock().unwrap_or_else(|p| p.into_inner());
                    if shown.contains(pane) {
                        drop(shown);
                        shared.poke();
                    }
                    continue;
                }
                shared.ask_refresh();
                shared.poke();
                if !waker.wake() {
                    return;
                }
            }
            // An event this build does not know (a newer server): something changed.
            Err(ClientError::Protocol(e)) => {
                tracing::debug!(error = %e, "an event not understood");
                shared.ask_refresh();
                shared.poke();
                if !waker.wake() {
                    return;
                }
            }
            Err(e) => {
                tracing::info!(error = %e, "the event connection ended; connecting again");
                match reconnect(socket, true) {
                    Some(again) => {
                        client = again;
                        shared.tasks_stale.store(true, Ordering::Release);
                        shared.ask_refresh();
                        waker.wake();
                    }
                    None => {
                        shared.gone.store(true, Ordering::Release);
                        waker.wake();
                        return;
                    }
                }
            }
        }
    }
}

/// Fetches the state after an event said it changed (many events, one fetch), then wakes
/// the window.
fn follow_state(mut client: Client, socket: &Path, shared: &Shared, waker: &Waker) {
    loop {
        {
            let mut asked = shared.refresh.lock().unwrap_or_else(|p| p.into_inner());
            while !*asked {
                asked = shared.refreshed.wait(asked).unwrap_or_else(|p| p.into_inner());
                if shared.gone.load(Ordering::Acquire) {
                    return;
                }
            }
            *asked = false;
        }
        match client.execute(Command::WorkspaceList) {
            Ok(Reply::State(list)) => {
                *shared.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(*list);
                if shared.tasks_stale.swap(false, Ordering::AcqRel) {
                    match read_tasks(&mut client) {
                        Ok(tasks) => {
                            *shared.tasks.lock().unwrap_or_else(|p| p.into_inner()) = tasks;
                        }
                        Err(e) => {
                            // Read again with the next fetch.
                            tracing::debug!(error = %e, "cannot read the server's tasks");
                            shared.tasks_stale.store(true, Ordering::Release);
                        }
                    }
                }
                if !waker.wake() {
                    return;
                }
            }
            Ok(_) => tracing::warn!("workspace.list answered with another reply"),
            Err(ClientError::Rpc { message, .. }) => {
                tracing::warn!(error = %message, "cannot read the server's state");
            }
            Err(e) => {
                tracing::debug!(error = %e, "the state connection ended; connecting again");
                match reconnect(socket, false) {
                    Some(again) => {
                        client = again;
                        shared.ask_refresh();
                    }
                    None => return,
                }
            }
        }
    }
}

/// Sends queued input in order; input for one pane queued while a request was in flight goes
/// in the next request, so a slow link costs latency, never order or keys.
fn send_input(
    mut client: Client,
    socket: &Path,
    queued: &std::sync::mpsc::Receiver<(PaneId, Vec<u8>)>,
) {
    let mut carry = None;
    while let Some((pane, data)) = next_batch(queued, &mut carry) {
        let cmd = Command::PaneInput { pane, data };
        match client.execute(cmd.clone()) {
            Ok(_) => {}
            Err(ClientError::Rpc { message, .. }) => {
                // A pane whose program ended refuses input on every key; not news.
                tracing::debug!(error = %message, "input not sent");
            }
            Err(e) => {
                tracing::debug!(error = %e, "the input connection ended; connecting again");
                let Some(again) = reconnect(socket, false) else { return };
                client = again;
                if let Err(e) = client.execute(cmd) {
                    tracing::warn!(error = %e, "input lost with the connection");
                }
            }
        }
    }
}

/// The next request's input: what `carry` holds (the rest of a big paste, or another pane's
/// input met while merging) or the queue's next, with whatever is queued for the same pane
/// right after it, up to [`MAX_INPUT_CHUNK`]. Order is kept; `None` once the window is gone.
fn next_batch(
    queued: &std::sync::mpsc::Receiver<(PaneId, Vec<u8>)>,
    carry: &mut Option<(PaneId, Vec<u8>)>,
) -> Option<(PaneId, Vec<u8>)> {
    let (pane, mut data) = match carry.take() {
        Some(held) => held,
        None => queued.recv().ok()?,
    };
    while data.len() < MAX_INPUT_CHUNK {
        match queued.try_recv() {
            Ok((next, more)) if next == pane => data.extend(more),
            Ok(other) => {
                *carry = Some(other);
                break;
            }
            Err(_) => break,
        }
    }
    if data.len() > MAX_INPUT_CHUNK {
        // Only merging stopped by the size can leave a rest, and then nothing is carried.
        let rest = data.split_off(MAX_INPUT_CHUNK);
        *carry = Some((pane.clone(), rest));
    }
    Some((pane, data))
}

/// Pulls the shown panes' frames: after a poke (or [`IDLE_PULL`]), at most once per
/// refresh ([`MIN_PULL`] until the window says) after a pull that brought a change (one that
/// brought none does not count, so a
/// keystroke's echo is pulled at once), each request sending the hashes of the rows already
/// held.
fn pull_frames(mut client: Client, socket: &Path, shared: &Shared, waker: &Waker) {
    let mut last = Instant::now() - MIN_PULL;
    // The view this connection reported last (sent again on a new connection).
    let mut last_view: Option<WindowView> = None;
    loop {
        {
            let mut poked = shared.poke.lock().unwrap_or_else(|p| p.into_inner());
            if !*poked {
                poked = shared
                    .poked
                    .wait_timeout(poked, IDLE_PULL)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
            *poked = false;
        }
        if shared.gone.load(Ordering::Acquire) {
            return;
        }
        let min_pull = match shared.min_pull_us.load(Ordering::Acquire) {
            0 => MIN_PULL,
            us => Duration::from_micros(us),
        };
        let since = last.elapsed();
        if since < min_pull {
            std::thread::sleep(min_pull - since);
        }
        let pulled_at = Instant::now();
        let view = shared.view.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(view) = view {
            match client.report_view(view.clone()) {
                Ok(window) => {
                    let number = window.unwrap_or(0);
                    if shared.window_id.swap(number, Ordering::AcqRel) != number {
                        tracing::info!(window = number, "the server numbers this window");
                    }
                    last_view = Some(view);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "the server did not take the window's view");
                    // Sent again after the next pull reconnects (or with the next change).
                    let mut slot = shared.view.lock().unwrap_or_else(|p| p.into_inner());
                    slot.get_or_insert(view);
                }
            }
        }
        let shown = shared.shown.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if shown.is_empty() {
            continue;
        }
        let have: Vec<PaneHave> = {
            let offsets = shared.offsets.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let searches = shared.searches.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let frames = shared.frames.lock().unwrap_or_else(|p| p.into_inner());
            shown
                .iter()
                .map(|id| {
                    let held = frames.get(id);
                    PaneHave {
                        pane_id: id.to_string(),
                        cols: held.map_or(0, |f| f.cols),
                        rows: held.map(PaneFrame::hashes).unwrap_or_default(),
                        offset: offsets.get(id).copied().unwrap_or(0),
                        search: searches.get(id).cloned(),
                    }
                })
                .collect()
        };
        let reply = match client.screen_frames(have.clone()) {
            Ok(reply) => reply,
            Err(ClientError::Rpc { message, .. }) => {
                tracing::warn!(error = %message, "the server refused a frame request");
                continue;
            }
            Err(e) => {
                tracing::info!(error = %e, "the frame connection ended; connecting again");
                match reconnect(socket, false) {
                    Some(again) => {
                        client = again;
                        // The old connection's report went with it.
                        let mut slot = shared.view.lock().unwrap_or_else(|p| p.into_inner());
                        if slot.is_none() {
                            *slot = last_view.clone();
                        }
                        drop(slot);
                        shared.poke();
                        continue;
                    }
                    None => {
                        shared.gone.store(true, Ordering::Release);
                        waker.wake();
                        return;
                    }
                }
            }
        };
        let mut changed = false;
        {
            let mut offsets = shared.offsets.lock().unwrap_or_else(|p| p.into_inner());
            for (asked, update) in have.iter().zip(&reply.frames) {
                let Ok(id) = PaneId::parse(&update.pane_id) else { continue };
                let shown = update.meta.as_ref().map_or(0, |m| m.display_offset);
                // The server had less history than asked for: the offset is what it showed.
                if asked.offset > shown && offsets.get(&id) == Some(&asked.offset) {
                    offsets.insert(id, shown);
                }
            }
        }
        {
            let mut matches = shared.matches.lock().unwrap_or_else(|p| p.into_inner());
            for update in &reply.frames {
                let Ok(id) = PaneId::parse(&update.pane_id) else { continue };
                let now = update.matches.clone().unwrap_or_default();
                if matches.get(&id).map_or(!now.is_empty(), |held| *held != now) {
                    changed = true;
                }
                matches.insert(id, now);
            }
            matches.retain(|id, _| shown.contains(id));
        }
        {
            let mut frames = shared.frames.lock().unwrap_or_else(|p| p.into_inner());
            frames.retain(|id, _| shown.contains(id));
            for update in &reply.frames {
                let Ok(id) = PaneId::parse(&update.pane_id) else { continue };
                if update.gone {
                    changed |= frames.remove(&id).is_some();
                    continue;
                }
                if !update.changed.is_empty() || update.full {
                    changed = true;
                }
                let frame = frames.entry(id.clone()).or_default();
                if update.meta.as_ref() != Some(&frame.meta) {
                    changed = true;
                }
                if !frame.apply(update) {
                    // A malformed update: ask for everything next time.
                    frames.remove(&id);
                    shared.poke();
                }
            }
        }
        tracing::trace!(panes = reply.frames.len(), changed, "frames pulled");
        if changed {
            last = pulled_at;
            if !waker.wake() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_batches_keep_order_merge_one_pane_and_split_big_pastes() {
        let (a, b) = (PaneId::new(), PaneId::new());
        let (tx, rx) = std::sync::mpsc::channel();
        for (pane, bytes) in [(&a, "ab"), (&a, "cd"), (&b, "x"), (&a, "e"), (&a, "f")] {
            tx.send((pane.clone(), bytes.as_bytes().to_vec())).unwrap();
        }
        let big = vec![b'p'; MAX_INPUT_CHUNK * 2 + 10];
        tx.send((b.clone(), big.clone())).unwrap();
        tx.send((b.clone(), b"tail".to_vec())).unwrap();
        drop(tx);
        let mut carry = None;
        let mut batches = Vec::new();
        while let Some(batch) = next_batch(&rx, &mut carry) {
            batches.push(batch);
        }
        let small: Vec<(bool, &[u8])> =
            batches[..3].iter().map(|(p, d)| (*p == a, d.as_slice())).collect();
        assert_eq!(small, [(true, &b"abcd"[..]), (false, b"x"), (true, b"ef")]);
        let rest = &batches[3..];
        assert!(rest.iter().all(|(p, d)| *p == b && d.len() <= MAX_INPUT_CHUNK), "{}", rest.len());
        let joined: Vec<u8> = rest.iter().flat_map(|(_, d)| d.clone()).collect();
        let mut want = big;
        want.extend(b"tail");
        assert_eq!(joined, want, "the paste arrives whole and in order");
        assert_eq!(rest.len(), 3);
    }
}
