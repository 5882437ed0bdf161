//! The winit application: window and renderer lifetime, frames, layout sync and screenshots.
//!
//! Owns the window, the renderer, the embedded server handle and the window-local state
//! (grid size, font size, zoom, cursor blink, the config in use and its error banner). A frame
//! is drawn only when something changed: a wake-up from the server's event bus, input, a
//! resize, the cursor's blink, or the config file. It must not change server state except
//! through `Store::execute` (and the Store's settings the config file owns: scrollback of new
//! panes, desktop notifications). The window's parts own their state (`input.rs`,
//! `selection.rs` and `frame_text.rs`, `search.rs` and `server_search.rs`, `links.rs`,
//! `switcher.rs`, `rename.rs`, `tombstones.rs`, `frames.rs`) and return intents; `dispatch.rs` routes input to them and carries the
//! intents out. No part imports this file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use alacritty_terminal::term::TermMode;
use anyhow::Result;
use berth_engine::ids::{PaneId, TabId};
use berth_engine::layout::CellSize;
use berth_engine::model::RestoreState;
use berth_engine::terminal::PaneTerminal;
use berth_server::commands::{Command, Reply, SpawnRequest, WorkspaceSelector};
use berth_server::event::Event;
use berth_server::notifications::DesktopPolicy;
use berth_server::store::{Internal, Store, WindowView};
use berth_server::view::StateView;
use berth_server::{EmbeddedServer, Server, UiRequest};
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, OwnedDisplayHandle};
use winit::platform::wayland::WindowAttributesExtWayland;
use winit::platform::x11::WindowAttributesExtX11;
use winit::window::{Window, WindowId};

use super::chrome::{self, TAB_BAR_ROWS};
use super::decisions;
use super::frames::FrameSchedule;
use super::inbox::Inbox;
use super::input::InputState;
use super::latency::LatencyTrace;
use super::links::{LinkSource, LinkState};
use super::remote::Remote;
use super::rename::TabRenamer;
use super::review::OpenReview;
use super::review_link::{ReviewLink, ReviewRequest};
use super::search::Search;
use super::selection::PaneSelection;
use super::server_search::ServerSearch;
use super::sidebar::{self, SidebarLayout, SidebarState};
use super::source::FrameSource;
use super::switcher::WorkspaceSwitcher;
use super::tombstones::Tombstones;
use super::view::{TabView, HEADER_ROWS};
use super::wake::{UserEvent, Waker};
use crate::config::{self, Config};
use crate::render::{self, Badge, CellRectU16, HeaderScene, PaneScene, Scene, SelectionSpan};

/// The smallest and largest font sizes the zoom chords reach.
const FONT_PX_RANGE: (f32, f32) = config::FONT_SIZE_RANGE;

/// How often the loop checks, while idle, that the server thread still runs (it stops on
/// SIGTERM or SIGINT).
const HEALTH_CHECK: Duration = Duration::from_secs(1);

/// A pane shown alone, filling its tab.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Zoom {
    pub(super) tab: TabId,
    pub(super) pane: PaneId,
}

/// How the window reaches its server.
pub enum Start {
    /// Embeds this server on background threads (it ends with the window).
    Embedded(Server),
    /// Attaches to the server answering on this socket (it outlives the window).
    Attach(PathBuf),
}

/// The window application.
pub struct App {
    start: Option<Start>,
    embedded: Option<EmbeddedServer>,
    pub(super) store: Option<Arc<Mutex<Store>>>,
    /// The server in another process, when attached (`remote.rs`).
    pub(super) remote: Option<Remote>,
    /// Whether this window was the most recently active one (opened, resized, focused,
    /// typed or clicked in since its last layout sync): with several windows on one server,
    /// only that one gives the shown tab its size (tmux's `window-size latest`).
    size_claim: bool,
    pub(super) waker: Waker,
    display: OwnedDisplayHandle,
    pub(super) window: Option<Arc<Window>>,
    pub(super) renderer: Option<render::Renderer>,
    palette: render::Palette,
    fatal: Option<anyhow::Error>,
    /// The window's size in cells, from its pixels and the renderer's cell size.
    pub(super) grid: CellSize,
    pub(super) font_px: f32,
    pub(super) zoom: Option<Zoom>,
    pub(super) input: InputState,
    /// The selection, if any, by line over the pane's frames (`window/selection.rs`).
    pub(super) selection: Option<PaneSelection>,
    /// Search in the focused pane (`window/search.rs`).
    pub(super) search: Search,
    /// Search in the focused pane of an attached window, done by the server
    /// (`window/server_search.rs`).
    pub(super) server_search: ServerSearch,
    /// The link under the pointer while Ctrl is held (`window/links.rs`).
    pub(super) links: LinkState,
    title: String,
    /// Whether the Store has had a pane since the window opened (closing the last one closes
    /// the window).
    had_panes: bool,
    /// The last layout a resize was sent for because a pane's size did not match it; sent once
    /// per layout so a size the Store cannot give (a pane too small) does not loop.
    resynced: Option<(TabId, CellSize, String)>,
    /// When to draw: frames asked for, the last scene, the cursor's blink (`frames.rs`).
    frames: FrameSchedule,
    /// Tombstones' tails as cells, their scroll and resume errors (`tombstones.rs`).
    pub(super) tombstones: Tombstones,
    /// The workspace switcher (`window/switcher.rs`).
    pub(super) switcher: WorkspaceSwitcher,
    /// Set when a desktop notification was clicked: the window comes to the front.
    raise_requested: RaiseRequest,
    /// Renaming a tab in the tab bar (`window/rename.rs`).
    pub(super) renaming: TabRenamer,
    /// The sidebar of workspaces and tasks (`window/sidebar.rs`).
    pub(super) sidebar: SidebarState,
    /// The user's home directory, for `~` in the chrome.
    pub(super) home: Option<PathBuf>,
    /// The config in use: the last good one the file gave (or the defaults).
    pub(super) config: Config,
    /// Where the config file is (`None` without `HOME` or `BERTH_CONFIG`).
    config_path: Option<PathBuf>,
    /// Set by the config watcher when the file changed.
    config_changed: Arc<AtomicBool>,
    /// The config file's error (or a warning about it), shown along the bottom row.
    banner: Option<String>,
    /// The server's socket (the review view's link connects to it).
    pub(super) socket: Option<PathBuf>,
    /// A task's review view, while open (`review.rs`, `review_input.rs`).
    pub(super) review: Option<OpenReview>,
    /// The last review view's number.
    pub(super) review_serial: u64,
    /// The review view's thread on the socket, started with the first view.
    pub(super) review_link: Option<ReviewLink>,
    /// `berth review` asked the embedded window for a task's review (the bus forwarder sets
    /// it).
    pub(super) review_requests: ReviewRequest,
    /// Key-to-frame times for the benchmarks (`BERTH_LATENCY_TRACE`; `latency.rs`).
    latency: LatencyTrace,
    /// The inbox of notifications and requests, and the toast (`inbox.rs`, `inbox_input.rs`).
    pub(super) inbox: Inbox,
    /// How many events other than pane output the embedded server published (the bus
    /// forwarder counts them): the inbox lists the notifications again when it changed.
    events_seen: Arc<AtomicU64>,
}

impl App {
    /// An application that opens its window on the first `resumed`.
    pub fn new(start: Start, waker: Waker, display: OwnedDisplayHandle) -> Self {
        let config_path = config::path();
        let (config, banner) = match config_path.as_deref().map(config::load) {
            None => (Config::default(), None),
            Some(Ok(config)) => (config, None),
            Some(Err(e)) => {
                tracing::warn!(error = %e, "the config file did not load; using the defaults");
                (Config::default(), Some(e.to_string()))
            }
        };
        Self {
            start: Some(start),
            embedded: None,
            store: None,
            remote: None,
            size_claim: true,
            waker,
            display,
            window: None,
            renderer: None,
            palette: config.palette.clone(),
            fatal: None,
            grid: CellSize { cols: 80, rows: 24 },
            font_px: config.font_size,
            zoom: None,
            input: InputState::new(),
            selection: None,
            search: Search::default(),
            server_search: ServerSearch::default(),
            links: LinkState::default(),
            title: String::new(),
            had_panes: false,
            resynced: None,
            frames: FrameSchedule::default(),
            tombstones: Tombstones::default(),
            switcher: WorkspaceSwitcher::default(),
            renaming: TabRenamer::default(),
            sidebar: SidebarState::remembered(super::prefs::path()),
            raise_requested: RaiseRequest::default(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            config,
            config_path,
            config_changed: Arc::new(AtomicBool::new(false)),
            banner,
            socket: None,
            review: None,
            review_serial: 0,
            review_link: None,
            review_requests: ReviewRequest::default(),
            latency: LatencyTrace::from_env(),
            inbox: Inbox::default(),
            events_seen: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Stops the embedded server (saving, ending the panes' processes) and tells how the
    /// window ended.
    pub fn finish(mut self) -> Result<ExitCode> {
        self.renderer = None;
        self.window = None;
        if let Some(embedded) = self.embedded.take() {
            embedded.shutdown();
        }
        match self.fatal.take() {
            Some(err) => Err(err),
            None => Ok(ExitCode::SUCCESS),
        }
    }

    /// Opens the window, the renderer and the server; on failure the loop exits with the
    /// error.
    fn start(&mut self, event_loop: &ActiveEventLoop) -> Result<()> {
        // The desktop file's id (berth.desktop): X11's WM_CLASS and Wayland's app_id, so docks
        // group and pin the window.
        let attributes = Window::default_attributes()
            .with_title("Berth")
            .with_inner_size(LogicalSize::new(1000.0, 640.0));
        let attributes = WindowAttributesExtX11::with_name(attributes, "berth", "berth");
        let attributes = WindowAttributesExtWayland::with_name(attributes, "berth", "berth");
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| anyhow::anyhow!("cannot open a window: {e}"))?,
        );
        window.set_ime_allowed(true);
        if let Some(mhz) = window.current_monitor().and_then(|m| m.refresh_rate_millihertz()) {
            self.frames.set_refresh(mhz);
        }
        tracing::debug!(keymap = %self.config.keymap.describe(), "window key bindings");
        let instance = render::Renderer::instance_for(self.display.clone());
        let config = render::RenderConfig {
            font_size_px: self.font_px,
            scale: window.scale_factor() as f32,
            palette: self.palette.clone(),
            font_family: self.config.font_family.clone(),
            line_height: self.config.line_height,
            ligatures: self.config.ligatures,
            ..render::RenderConfig::default()
        };
        let size = window.inner_size();
        let renderer =
            render::Renderer::for_window(instance, window.clone(), size.width, size.height, config)
                .map_err(|e| match e {
                    render::RenderError::NoAdapter(msg) => {
                        anyhow::anyhow!("{msg}; run `berth server` for the headless server")
                    }
                    other => anyhow::anyhow!(
                        "no usable GPU for the window ({other}); run `berth server` for the headless server"
                    ),
                })?;
        let family = &renderer.config().font_family;
        if !family.eq_ignore_ascii_case(self.config.font_family.trim()) && self.banner.is_none() {
            self.banner = Some(format!(
                "config: font family \"{}\" is not installed; using {family}",
                self.config.font_family,
            ));
        }
        self.renderer = Some(renderer);
        self.window = Some(window.clone());
        self.watch_config();

        let server = match self.start.take().ok_or_else(|| anyhow::anyhow!("started twice"))? {
            Start::Embedded(server) => server,
            Start::Attach(socket) => {
                self.socket = Some(socket.clone());
                let desktop = self.config.notifications.policy() != DesktopPolicy::Off;
                let remote = Remote::connect(
                    &socket,
                    HEADER_ROWS,
                    self.waker.clone(),
                    {
                        let raise = self.raise_requested.clone();
                        Box::new(move |token| raise.request(token))
                    },
                    desktop,
                )
                .map_err(|e| anyhow::anyhow!("cannot attach to {}: {e}", socket.display()))?;
                if let Some(mhz) =
                    window.current_monitor().and_then(|m| m.refresh_rate_millihertz())
                {
                    remote.set_refresh(mhz);
                }
                tracing::info!(socket = %socket.display(), "attached to the server");
                self.remote = Some(remote);
                self.update_grid();
                self.first_start();
                window.request_redraw();
                return Ok(());
            }
        };
        self.socket = Some(server.socket_path());
        let embedded = server.spawn_background().map_err(|e| anyhow::anyhow!("{e}"))?;
        let waker = self.waker.clone();
        embedded.set_ui_waker(Box::new(move || {
            waker.wake();
        }));
        let requests = self.review_requests.clone();
        let seen = self.events_seen.clone();
        spawn_bus_forwarder(
            &embedded,
            self.waker.clone(),
            self.raise_requested.clone(),
            requests,
            seen,
        );
        let store = embedded.store.clone();
        self.embedded = Some(embedded);
        self.store = Some(store);
        let _ = self.lock_store().execute(Internal::SetHeaderRows(HEADER_ROWS));
        self.apply_store_settings();

        self.update_grid();
        self.first_start();
        window.request_redraw();
        Ok(())
    }

    /// With no saved state: one workspace named after the current directory, with one shell.
    fn first_start(&mut self) {
        let empty = self.state_view().workspaces.iter().all(|w| w.tabs.is_empty());
        if !empty {
            return;
        }
        let cwd = std::env::current_dir().ok();
        let created = self.exec(Command::WorkspaceCreate { name: None, cwd: cwd.clone() });
        let workspace = match created {
            Some(Reply::WorkspaceCreated { workspace }) => WorkspaceSelector::Id(workspace),
            _ => WorkspaceSelector::Active,
        };
        let spawn = SpawnRequest { cwd, ..SpawnRequest::default() };
        self.exec(Command::PaneSpawn { workspace, spawn });
    }

    /// The Store, locked. A poisoned lock still holds consistent state (the Store's own
    /// invariant), so it is used as is.
    pub(super) fn lock_store(&self) -> MutexGuard<'_, Store> {
        // `store` is set in `start` before any caller runs; callers before that are a bug.
        let store = self.store.as_ref().expect("the store is set when the window starts");
        store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The server's state: the embedded Store's view, or the attached server's.
    pub(super) fn state_view(&self) -> StateView {
        match &self.remote {
            Some(remote) => remote.view(),
            None => self.lock_store().view(),
        }
    }

    /// A pane's restore state.
    pub(super) fn pane_state(&self, pane: &PaneId) -> Option<RestoreState> {
        match &self.remote {
            Some(remote) => remote
                .view()
                .workspaces
                .iter()
                .flat_map(|w| w.tabs.iter())
                .flat_map(|t| t.panes.iter())
                .find(|p| &p.id == pane)
                .map(|p| p.state),
            None => self.lock_store().pane_state(pane),
        }
    }

    /// How many lines a tombstone's tail has.
    pub(super) fn pane_tail_len(&self, pane: &PaneId) -> Option<usize> {
        match &self.remote {
            // Only a tombstone has a tail (a live pane's text is its frame).
            Some(_) if self.pane_state(pane) == Some(RestoreState::Live) => None,
            Some(remote) => remote.tail(pane).map(|t| t.len()),
            None => self.lock_store().pane_tail_len(pane),
        }
    }

    /// A tombstone's tail as styled lines.
    pub(super) fn pane_tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        match &self.remote {
            Some(_) if self.pane_state(pane) == Some(RestoreState::Live) => None,
            Some(remote) => remote.tail(pane),
            None => self.lock_store().pane_tail(pane),
        }
    }

    /// Where the shown panes' frames come from (`source.rs`).
    pub(super) fn frame_source(&self) -> Option<&dyn FrameSource> {
        match (&self.remote, &self.store) {
            (Some(remote), _) => Some(remote),
            (None, Some(store)) => Some(store),
            (None, None) => None,
        }
    }

    /// The terminal modes of a pane (app cursor, mouse, bracketed paste, focus reports, the
    /// keyboard protocol), from its terminal or the last frame the server sent.
    pub(super) fn pane_modes(&self, pane: &PaneId) -> Option<TermMode> {
        match &self.remote {
            Some(remote) => remote.frame(pane).map(|f| TermMode::from_bits_truncate(f.meta.modes)),
            None => self.with_term(pane, |t| *t.term().mode()),
        }
    }

    /// What key encoding needs of a pane's modes, from its terminal or its last frame.
    pub(super) fn pane_key_modes(&self, pane: &PaneId) -> Option<super::keys::KeyModes> {
        match &self.remote {
            Some(remote) => remote.frame(pane).map(|f| {
                let mode = TermMode::from_bits_truncate(f.meta.modes);
                super::keys::KeyModes {
                    app_cursor: mode.contains(TermMode::APP_CURSOR),
                    app_keypad: mode.contains(TermMode::APP_KEYPAD),
                    kitty_flags: f.meta.keyboard_flags,
                    backarrow_bs: f.meta.backarrow_bs,
                }
            }),
            None => self.with_term(pane, |t| super::keys::KeyModes {
                app_cursor: t.app_cursor(),
                app_keypad: t.term().mode().contains(TermMode::APP_KEYPAD),
                kitty_flags: t.keyboard_flags(),
                backarrow_bs: t.backarrow_sends_bs(),
            }),
        }
    }

    /// Executes a command as the socket would and hands back its error's message.
    pub(super) fn exec_result(&self, cmd: Command) -> Result<Reply, String> {
        if let Some(remote) = &self.remote {
            return remote.execute(cmd);
        }
        let store = self.store.as_ref().ok_or("the window has no server")?;
        let result = store.lock().unwrap_or_else(|p| p.into_inner()).execute(cmd);
        result.map_err(|e| e.to_string())
    }

    /// Executes a command as the socket would; failures are logged (the user sees the state).
    pub(super) fn exec(&self, cmd: Command) -> Option<Reply> {
        // Only the variant's name: the fields may hold typed text.
        let debug = format!("{cmd:?}");
        let name = debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned();
        let input = matches!(cmd, Command::PaneSend { .. } | Command::PaneInput { .. });
        let result = match (&self.remote, &self.store) {
            (Some(remote), _) => remote.execute(cmd).map_err(|e| e.to_string()),
            (None, Some(store)) => store
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .execute(cmd)
                .map_err(|e| e.to_string()),
            (None, None) => return None,
        };
        match result {
            Ok(value) => Some(value),
            // Typing into a pane whose program ended fails on every key; that is not news.
            Err(e) if input => {
                tracing::debug!(error = %e, "input not sent");
                None
            }
            Err(e) => {
                tracing::warn!(command = %name, error = %e, "window command failed");
                None
            }
        }
    }

    /// The tab the window shows, if there is one.
    pub(super) fn view(&self) -> Option<TabView> {
        if self.remote.is_none() {
            self.store.as_ref()?;
        }
        TabView::active(&self.state_view())
    }

    /// The shown tab's focused pane, without building the whole state view (the embedded
    /// Store answers it directly; keys ask on every press).
    pub(super) fn focused_pane(&self) -> Option<PaneId> {
        match &self.remote {
            Some(remote) => TabView::active(&remote.view()).map(|v| v.active_pane),
            None => {
                self.store.as_ref()?;
                self.lock_store().focused_pane()
            }
        }
    }

    /// How many events other than pane output the server sent so far (the inbox lists the
    /// notifications again when it changed).
    pub(super) fn server_events(&self) -> u64 {
        match &self.remote {
            Some(remote) => remote.events_seen(),
            None => self.events_seen.load(Ordering::Acquire),
        }
    }

    /// Whether a new notification found in the list makes a toast: the embedded server's
    /// desktop shows none (no notification service answers). An attached window toasts the
    /// ones the server names it to show and its desktop cannot (`take_window_toasts`).
    pub(super) fn toasts_for_new_notifications(&self) -> bool {
        self.remote.is_none() && self.store.is_some() && !self.lock_store().desktop_delivers()
    }

    /// The notifications the server named this attached window to show that its desktop did
    /// not (no notification service here): toasts.
    pub(super) fn take_window_toasts(&self) -> Vec<berth_server::view::NotificationView> {
        self.remote.as_ref().map(Remote::take_toasts).unwrap_or_default()
    }

    /// A pane's shared state (its terminal), if it has a live one.
    pub(super) fn pane_shared(&self, pane: &PaneId) -> Option<Arc<berth_server::pane::PaneShared>> {
        self.store.as_ref()?;
        self.lock_store().pane_shared(pane)
    }

    /// Runs `f` on a pane's terminal.
    pub(super) fn with_term<R>(
        &self,
        pane: &PaneId,
        f: impl FnOnce(&PaneTerminal) -> R,
    ) -> Option<R> {
        let shared = self.pane_shared(pane)?;
        let term = shared.term.lock();
        Some(f(&term))
    }

    /// Runs `f` on a pane's terminal with write access (scrolling the view).
    pub(super) fn with_term_mut<R>(
        &self,
        pane: &PaneId,
        f: impl FnOnce(&mut PaneTerminal) -> R,
    ) -> Option<R> {
        let shared = self.pane_shared(pane)?;
        let mut term = shared.term.lock();
        Some(f(&mut term))
    }

    /// Sends input bytes to a pane, returning its view to the live screen first.
    pub(super) fn send_bytes(&self, pane: &PaneId, bytes: Vec<u8>) {
        self.with_term_mut(pane, |t| {
            if t.display_offset() > 0 {
                t.scroll_to_bottom();
            }
        });
        // Bytes as they are (legacy mouse reports past column 95 are not UTF-8); an attached
        // window does not wait for the server's answer.
        match &self.remote {
            Some(remote) => {
                remote.scroll_to_bottom(pane);
                remote.send_input(pane, bytes);
            }
            None => {
                self.exec(Command::PaneInput { pane: pane.clone(), data: bytes });
            }
        }
    }

    /// Asks for a frame that is drawn even if nothing seems to have changed.
    pub(super) fn redraw(&mut self) {
        self.frames.ask();
        if let Some(window) = &self.window {
            window.request_redraw();
        }
    }

    /// Restarts the cursor's blink in its visible phase (after input).
    pub(super) fn reset_blink(&mut self) {
        self.frames.reset_blink();
    }

    /// The shown tab's size in cells: the window's less the tab bar and the sidebar.
    pub(super) fn tab_grid(&self) -> CellSize {
        let cols = self.grid.cols.saturating_sub(self.sidebar_cols()).max(1);
        CellSize { cols, rows: self.grid.rows.saturating_sub(TAB_BAR_ROWS).max(1) }
    }

    /// The columns the sidebar takes now (0 when hidden).
    pub(super) fn sidebar_cols(&self) -> u16 {
        self.sidebar.cols(self.config.sidebar, self.config.sidebar_width, self.grid.cols)
    }

    /// The sidebar of `list` as the frame draws it, when it shows.
    pub(super) fn sidebar_layout(&self, list: &StateView) -> Option<SidebarLayout> {
        let cols = self.sidebar_cols();
        if cols == 0 {
            return None;
        }
        // Tasks live in the Store; an attached window has the list its state thread read.
        let tasks = match &self.remote {
            Some(remote) => sidebar::tasks_of(&remote.tasks()),
            None => sidebar::tasks_of(&self.lock_store().task_records(None)),
        };
        let mut git = self.sidebar.git.borrow_mut();
        let rect = sidebar::rect(self.grid.cols, self.grid.rows, cols);
        let now = berth_server::persist::stamp::now_ms();
        Some(sidebar::layout(list, &tasks, |dir| sidebar::git_of(list, &mut git, dir), rect, now))
    }

    /// Recomputes the window's size in cells from its pixels and the cell size.
    pub(super) fn update_grid(&mut self) {
        let (Some(window), Some(renderer)) = (&self.window, &self.renderer) else { return };
        let size = window.inner_size();
        let (cell_w, cell_h) = renderer.cell_size();
        let fit = |px: u32, cell: f32| {
            let n = (px as f32 / cell.max(1.0)).floor();
            // Clamped into u16 and at least one cell.
            n.clamp(1.0, f32::from(u16::MAX)) as u16
        };
        // A huge window at a tiny font stays within the terminal size limits.
        self.grid = berth_engine::limits::clamp_size(CellSize {
            cols: fit(size.width, cell_w),
            rows: fit(size.height, cell_h),
        });
    }

    /// Sets the font size (the zoom chords) and reflows.
    pub(super) fn set_font_px(&mut self, px: f32) {
        let px = px.clamp(FONT_PX_RANGE.0, FONT_PX_RANGE.1);
        if (px - self.font_px).abs() < f32::EPSILON {
            return;
        }
        self.font_px = px;
        if let Some(renderer) = &mut self.renderer {
            renderer.set_font_size(px);
        }
        self.update_grid();
        self.redraw();
    }

    /// Starts the thread that watches the config file; a change sets `config_changed` and
    /// wakes the loop.
    fn watch_config(&self) {
        let Some(path) = self.config_path.clone() else { return };
        let (flag, waker) = (self.config_changed.clone(), self.waker.clone());
        let spawned = config::watch::spawn(path, move || {
            flag.store(true, Ordering::Release);
            waker.wake()
        });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot watch the config file: edits apply after a restart");
        }
    }

    /// Reads the config file again: a good file is applied at once and clears the banner; a
    /// bad one keeps the config in use and shows its error in the banner.
    pub(super) fn reload_config(&mut self) {
        let Some(path) = self.config_path.clone() else {
            tracing::info!("no config file: neither BERTH_CONFIG nor HOME is set");
            return;
        };
        match config::load(&path) {
            Ok(config) => {
                tracing::info!(path = %path.display(), "config loaded");
                self.banner = None;
                self.apply_config(config);
            }
            Err(e) => {
                tracing::warn!(error = %e, "the config file did not load; keeping the last good one");
                self.banner = Some(e.to_string());
            }
        }
        self.frames.forget_scene();
        self.redraw();
    }

    /// Makes `config` the one in use: renderer (font, colours), keymap, cursor, the Store's
    /// settings; the grid follows the new cell size.
    fn apply_config(&mut self, config: Config) {
        let old = std::mem::replace(&mut self.config, config);
        let new = &self.config;
        if let Some(renderer) = &mut self.renderer {
            if new.font_family != old.font_family {
                if let Err(warning) = renderer.set_font_family(&new.font_family) {
                    tracing::warn!("{warning}");
                }
            }
            let family = &renderer.config().font_family;
            if !family.eq_ignore_ascii_case(new.font_family.trim()) {
                self.banner = Some(format!(
                    "config: font family \"{}\" is not installed; using {family}",
                    new.font_family
                ));
            }
            if new.line_height != old.line_height {
                if let Err(e) = renderer.set_line_height(new.line_height) {
                    tracing::warn!(error = %e, "line height not applied");
                }
            }
            renderer.set_ligatures(new.ligatures);
            renderer.set_palette(new.palette.clone());
            if new.font_size != old.font_size {
                self.font_px = new.font_size;
                renderer.set_font_size(new.font_size);
            }
        }
        if new.palette != old.palette {
            self.palette = new.palette.clone();
            self.tombstones.forget_cells();
        }
        tracing::debug!(keymap = %self.config.keymap.describe(), "window key bindings");
        self.apply_store_settings();
        self.update_grid();
    }

    /// Gives the Store the settings the config file owns: scrollback, desktop notifications,
    /// and the terminals' default cursor style and theme colours (what programs asking with
    /// OSC 10/11/4 learn), which the Store gives every terminal at once and every new one, so
    /// a program never sees the old theme after a reload.
    fn apply_store_settings(&self) {
        use alacritty_terminal::vte::ansi::{CursorShape as Shape, CursorStyle, Rgb};
        // An attached window leaves the server's settings to the server; its config says
        // only whether the notifications it shows for the server reach this desktop.
        if let Some(remote) = &self.remote {
            remote.allow_desktop(self.config.notifications.policy() != DesktopPolicy::Off);
            return;
        }
        if self.store.is_none() {
            return;
        }
        let shape = match self.config.cursor_style {
            config::CursorStyle::Block => Shape::Block,
            config::CursorStyle::Beam => Shape::Beam,
            config::CursorStyle::Underline => Shape::Underline,
        };
        let cursor = CursorStyle { shape, blinking: self.config.cursor_blink };
        let rgb = |c: render::Rgb| Rgb { r: c.r, g: c.g, b: c.b };
        let p = &self.palette;
        let theme = berth_engine::terminal::ThemeColors {
            foreground: rgb(p.fg),
            background: rgb(p.bg),
            cursor: rgb(p.cursor),
            ansi: p.ansi.map(rgb),
        };
        let mut store = self.lock_store();
        for op in [
            Internal::SetScrollback(self.config.scrollback_lines),
            Internal::SetDesktopPolicy(self.config.notifications.policy()),
            Internal::SetTerminalDefaults { cursor, theme },
        ] {
            let _ = store.execute(op);
        }
    }

    /// Makes the shown tab's size the window's, each pane's PTY its rectangle's, and a zoomed
    /// pane's PTY the whole tab.
    fn sync_layout(&mut self, view: &TabView) -> bool {
        let mut changed = false;
        let grid = self.tab_grid();
        let key = (view.tab_id.clone(), grid, format!("{:?}", view.layout));
        // An attached window that another window's activity took the size from leaves it
        // alone (it draws the tab clipped or padded) until it is active again; the embedded
        // window keeps the tab at its own size.
        let may_size = self.remote.is_none() || std::mem::take(&mut self.size_claim);
        if may_size
            && (view.size != grid
                || (self.zoom.is_none()
                    && self.resynced.as_ref() != Some(&key)
                    && !sizes_match(view)))
        {
            self.exec(Command::TabResize { tab: view.tab_id.clone(), size: grid });
            self.resynced = Some(key);
            changed = true;
        }
        // A zoom ends when its pane is gone, loses focus, or another tab is shown.
        if let Some(zoom) = &self.zoom {
            if zoom.tab != view.tab_id || zoom.pane != view.active_pane {
                self.zoom = None;
                self.exec(Command::TabResize { tab: view.tab_id.clone(), size: grid });
                changed = true;
            }
        }
        if let Some(zoom) = &self.zoom {
            let want =
                CellSize { cols: grid.cols, rows: grid.rows.saturating_sub(HEADER_ROWS).max(1) };
            let have = self.frame_source().and_then(|s| s.frame(&zoom.pane));
            if have.is_some_and(|f| (f.cols, f.rows.len()) != (want.cols, usize::from(want.rows))) {
                self.exec(Command::PaneResize { pane: zoom.pane.clone(), size: want });
            }
        }
        changed
    }

    /// Tells the Store which panes are on screen and which has the keyboard, so that
    /// notifications for a pane the user is looking at stay off the desktop and unread marks.
    pub(super) fn report_view(&self, view: &TabView) {
        let zoomed = self.zoom.as_ref().filter(|z| z.tab == view.tab_id).map(|z| &z.pane);
        let visible: Vec<PaneId> = view.placements(zoomed).into_iter().map(|(id, _)| id).collect();
        let view = WindowView {
            visible,
            focused_pane: Some(view.active_pane.clone()),
            window_focused: self.input.window_focused,
        };
        if let Some(remote) = &self.remote {
            remote.show(view);
            return;
        }
        let _ = self.lock_store().execute(Internal::SetWindowView(view));
    }

    /// The scene of a tab as it is now: the tab bar, the tab's panes below it, and the
    /// switcher when it is open.
    fn scene(&self, list: &StateView, view: &TabView, focused_window: bool) -> Scene {
        let zoomed = self.zoom.as_ref().filter(|z| z.tab == view.tab_id).map(|z| &z.pane);
        let wall_now = berth_server::persist::stamp::now_ms();
        let mut panes = Vec::new();
        for (pane_id, rect) in view.placements(zoomed) {
            let Some(info) = view.pane(&pane_id) else { continue };
            let focused = pane_id == view.active_pane;
            let selection = self.selection.as_ref().filter(|s| s.pane == pane_id);
            // The server says since when; a clock that stepped back counts as "just now".
            let since =
                info.lifecycle_since.map(|at| Duration::from_millis(wall_now.saturating_sub(at)));
            let header = HeaderScene {
                title: info.title.clone(),
                badge: badge_of(info.state),
                focused,
                attention: info.wants_attention(),
                lifecycle: chrome::lifecycle_marker(info, since),
                progress: info.progress.as_ref().map(chrome::progress_of),
            };
            let placed = CellRectU16::new(rect.col, rect.row + TAB_BAR_ROWS, rect.cols, rect.rows);
            let ring = chrome::ring_of(info.attention);
            // An agent's permission request: a card across the top of the pane.
            let decision =
                info.pending_decision.as_ref().map(|d| decisions::card_of(d, &self.config.keymap));
            // A tombstone has no live terminal: its saved tail is what the user left, above an
            // overlay that says what Enter does.
            let rows = rect.rows.saturating_sub(HEADER_ROWS).max(1);
            let overlay = chrome::overlay_of(
                info,
                self.home.as_deref(),
                self.tombstones.resume_error(&pane_id),
            );
            let tail_rows = overlay
                .as_ref()
                .map_or(rows, |o| rows.saturating_sub(render::overlay_rows(o)).max(1));
            let len = self.pane_tail_len(&pane_id);
            let tail = || self.pane_tail(&pane_id);
            let size = (rect.cols, tail_rows);
            if let Some(screen) = self.tombstones.cells(&pane_id, size, len, tail, &self.palette) {
                panes.push(PaneScene {
                    rect: placed,
                    header,
                    screen,
                    focused,
                    ring,
                    overlay,
                    decision,
                    ..PaneScene::default()
                });
                continue;
            }
            // The same frame whichever way the server is reached (`source.rs`).
            let Some(frame) = self.frame_source().and_then(|s| s.frame(&pane_id)) else {
                continue;
            };
            let mut screen =
                render::screen_of_frame(&frame, &self.palette, focused && focused_window);
            if let Some(cursor) = &mut screen.cursor {
                if cursor.blinking && self.frames.cursor_hidden() && focused {
                    cursor.visible = false;
                }
            }
            // The selection reads the frame in both windows; search and links read the
            // embedded window's terminal, or the frame (and the server) in an attached window.
            let span = selection.and_then(|s| s.visible_span(&frame));
            let marks = if self.remote.is_some() {
                let link = self.links.spans(&pane_id, LinkSource::Frame(&frame));
                let on_view = self.remote.as_ref().map(|r| r.view_matches(&pane_id));
                let search =
                    self.server_search.scene(&pane_id, &frame, &on_view.unwrap_or_default());
                Some((search, link))
            } else {
                self.with_term(&pane_id, |term| {
                    let link = self.links.spans(&pane_id, LinkSource::Term(term));
                    (self.search.scene(&pane_id, term), link)
                })
            };
            let (search, link) = marks.unwrap_or_default();
            panes.push(PaneScene {
                rect: placed,
                header,
                screen,
                focused,
                selection: span.map(|(start, end)| SelectionSpan { start, end }),
                ring,
                search,
                link,
                decision,
                ..PaneScene::default()
            });
        }
        let dividers = view
            .dividers(zoomed)
            .iter()
            .map(|d| {
                CellRectU16::new(d.rect.col, d.rect.row + TAB_BAR_ROWS, d.rect.cols, d.rect.rows)
            })
            .collect();
        let grid_cols = view.size.cols.max(self.grid.cols);
        let grid_rows = view.size.rows + TAB_BAR_ROWS;
        let switcher = self.switcher.scene(list, self.home.as_deref(), grid_cols, grid_rows);
        Scene {
            grid_cols,
            grid_rows,
            panes,
            dividers,
            background: self.palette.bg,
            tab_bar: Some(self.tab_bar(list, view)),
            switcher,
            banner: self.banner.clone(),
            sidebar: self.sidebar_layout(list).map(|l| l.scene),
            review: self.review_scene(),
            inbox: self.inbox_scene(list),
            toast: self.toast_scene(),
        }
    }

    /// The tab bar of the shown tab, with the inbox's affordance at its right end (the frame
    /// draws it and clicks hit it).
    pub(super) fn tab_bar(&self, list: &StateView, view: &TabView) -> render::TabBarScene {
        let cols = view.size.cols.max(self.grid.cols);
        chrome::tab_bar(list, view, cols, self.renaming.editing(), &self.inbox_label(list))
    }

    /// Draws a frame of the shown tab.
    fn draw(&mut self, event_loop: &ActiveEventLoop) {
        let wake_only = self.frames.begin();
        self.refresh_inbox();
        // One reading of the Store's state per frame (it probes every pane's process).
        let mut list = self.state_view();
        self.sidebar.workspaces = list.workspaces.len();
        let Some(mut view) = TabView::active(&list) else {
            if self.had_panes {
                tracing::info!("the last pane was closed: closing the window");
                event_loop.exit();
            }
            return;
        };
        self.had_panes = true;
        self.search.end_unless_focused(&view.active_pane);
        if let Some(remote) = &self.remote {
            self.server_search.end_unless_focused(&view.active_pane, remote);
        }
        if self.sync_layout(&view) {
            list = self.state_view();
            match TabView::active(&list) {
                Some(v) => view = v,
                None => return,
            }
        }
        let title = view.window_title();
        if title != self.title {
            if let Some(window) = &self.window {
                window.set_title(&title);
            }
            self.title = title;
        }
        let scene = self.scene(&list, &view, self.input.window_focused);
        self.report_view(&view);
        let focused_cursor = scene
            .panes
            .iter()
            .find(|p| p.focused)
            .and_then(|p| p.screen.cursor.map(|c| (p.rect, c)));
        let blinking = focused_cursor.is_some_and(|(_, c)| c.blinking);
        let working = scene
            .panes
            .iter()
            .any(|p| p.header.lifecycle.as_deref().is_some_and(|l| l.contains("working")));
        // A toast keeps the clock going so that it goes in time.
        let ticking = working || self.inbox.toasting(Instant::now());
        self.frames.keep_clocks(blinking && self.input.window_focused, ticking, Instant::now());
        if self.frames.unchanged(wake_only, &scene) {
            return;
        }
        let (Some(window), Some(renderer)) = (&self.window, &mut self.renderer) else { return };
        if let Some((rect, cursor)) = focused_cursor {
            // The input method's candidate window opens at the cursor.
            let (cell_w, cell_h) = renderer.cell_size();
            let x = f64::from(cell_w) * f64::from(rect.col + cursor.col);
            let y = f64::from(cell_h) * f64::from(rect.row + HEADER_ROWS + cursor.row);
            // `rect` is already placed below the tab bar.
            window.set_ime_cursor_area(
                winit::dpi::PhysicalPosition::new(x, y),
                winit::dpi::PhysicalSize::new(f64::from(cell_w), f64::from(cell_h)),
            );
        }
        window.pre_present_notify();
        let started = Instant::now();
        match renderer.render(&scene) {
            Ok(stats) => {
                let presented = Instant::now();
                self.frames.cost(presented.duration_since(started));
                self.latency.presented(&scene, presented);
                tracing::trace!(
                    cpu_us = stats.cpu.as_micros() as u64,
                    total_us = stats.total.as_micros() as u64,
                    present_us =
                        presented.duration_since(started).saturating_sub(stats.total).as_micros()
                            as u64,
                    shaped_rows = stats.shaped_rows,
                    "frame"
                );
                self.frames.drawn(Some(scene));
            }
            Err(e) => {
                tracing::debug!(error = %e, "frame not drawn; trying again");
                self.frames.drawn(None);
                window.request_redraw();
            }
        }
    }

    /// Answers the requests that only the window can (screenshots).
    fn serve_ui_requests(&mut self) {
        let Some(embedded) = &self.embedded else { return };
        let requests: Vec<UiRequest> = embedded.ui_requests.try_iter().collect();
        for request in requests {
            match request {
                UiRequest::Screenshot { tab, reply } => {
                    let result = self.screenshot(tab.as_deref());
                    let _ = reply.send(result);
                }
            }
        }
    }

    /// A PNG of a tab (the shown one when `None`).
    fn screenshot(&mut self, tab: Option<&str>) -> Result<Vec<u8>, String> {
        let list = self.state_view();
        let view = match tab {
            Some(id) => TabId::parse(id)
                .ok()
                .and_then(|tab| TabView::by_id(&list, &tab))
                .ok_or_else(|| format!("no tab {id}"))?,
            None => TabView::active(&list).ok_or("there is no tab to draw")?,
        };
        let scene = self.scene(&list, &view, true);
        let renderer = self.renderer.as_mut().ok_or("the window has no renderer")?;
        renderer.screenshot_png(&scene).map_err(|e| e.to_string())
    }
}

/// Whether every pane's terminal has the size of its rectangle less the header.
fn sizes_match(view: &TabView) -> bool {
    view.placements(None).iter().all(|(id, rect)| {
        view.pane(id).is_none_or(|p| {
            let want = (rect.cols.max(1), rect.rows.saturating_sub(HEADER_ROWS).max(1));
            (p.size.cols, p.size.rows) == want
        })
    })
}

/// Forwards the server's events to the event loop: any event means "look again".
/// A clicked desktop notification (`notification.activated`) also sets `raise`, so the
/// window comes to the front on the pane the Store focused.
fn spawn_bus_forwarder(
    embedded: &EmbeddedServer,
    waker: Waker,
    raise: RaiseRequest,
    review: ReviewRequest,
    seen: Arc<AtomicU64>,
) {
    let mut events = embedded.bus.subscribe();
    let spawned = std::thread::Builder::new().name("berth-window-events".into()).spawn(move || {
        while let Some(delivery) = events.blocking_recv() {
            // The bus carries typed events: nothing to decode.
            let event = delivery.event();
            if !matches!(event, Some(Event::PaneOutput { .. })) {
                seen.fetch_add(1, Ordering::AcqRel);
            }
            match event {
                Some(Event::NotificationActivated { activation_token, .. }) => {
                    raise.request(activation_token.clone());
                }
                // The view opens in the window used last only (this one is number 0).
                Some(Event::ReviewRequested { task, window })
                    if window.is_none_or(|w| w == berth_server::store::EMBEDDED_WINDOW) =>
                {
                    review.request(task.as_str().to_owned());
                }
                _ => {}
            }
            if !waker.wake() {
                break;
            }
        }
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the event forwarder: the window will not follow output");
    }
}

/// A click on a desktop notification asks the window to raise itself, with the notification
/// server's activation token when it sent one (the event forwarder sets it, the event loop
/// takes it).
#[derive(Clone, Default)]
struct RaiseRequest(Arc<Mutex<Option<Option<String>>>>);

impl RaiseRequest {
    fn request(&self, token: Option<String>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(token);
    }

    /// The pending request (with its token, if any), once.
    fn take(&self) -> Option<Option<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl ApplicationHandler<UserEvent> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_some() || self.fatal.is_some() {
            return;
        }
        if let Err(e) = self.start(event_loop) {
            self.fatal = Some(e);
            event_loop.exit();
        }
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, UserEvent::Wake: UserEvent) {
        self.waker.clear();
        if self.config_changed.swap(false, Ordering::AcqRel) {
            self.reload_config();
        }
        self.serve_ui_requests();
        self.serve_review();
        if let Some(token) = self.raise_requested.take() {
            if let Some(window) = &self.window {
                // A click on a desktop notification: show the window, on its pane.
                super::activation::raise(window, token.as_deref());
            }
        }
        if let Some(window) = &self.window {
            // A frame already asked for by something else stays a full one; a wake-up soon
            // after the last frame waits for the next refresh (`frames.rs`).
            self.frames.wake();
            if self.frames.pace(Instant::now(), None).is_none() {
                window.request_redraw();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        if matches!(
            event,
            WindowEvent::Resized(_)
                | WindowEvent::ScaleFactorChanged { .. }
                | WindowEvent::Focused(true)
                | WindowEvent::KeyboardInput { .. }
                | WindowEvent::MouseInput { .. }
        ) {
            self.size_claim = true;
        }
        if let WindowEvent::KeyboardInput { event: key, is_synthetic: false, .. } = &event {
            if key.state.is_pressed() {
                self.latency.key();
            }
        }
        if matches!(
            event,
            WindowEvent::KeyboardInput { .. }
                | WindowEvent::Ime(_)
                | WindowEvent::MouseInput { .. }
        ) {
            self.frames.input(Instant::now());
        }
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::RedrawRequested => self.draw(event_loop),
            WindowEvent::Resized(size) => {
                if let Some(renderer) = &mut self.renderer {
                    renderer.resize(size.width, size.height);
                }
                self.update_grid();
                self.redraw();
            }
            WindowEvent::ScaleFactorChanged { scale_factor, .. } => {
                if let Some(renderer) = &mut self.renderer {
                    renderer.set_scale(scale_factor as f32);
                }
                self.update_grid();
                self.redraw();
            }
            WindowEvent::Focused(focused) => self.on_focus(focused),
            WindowEvent::ModifiersChanged(mods) => self.on_modifiers(mods.state()),
            WindowEvent::KeyboardInput { event, is_synthetic: false, .. } => self.on_key(&event),
            WindowEvent::Ime(ime) => self.on_ime(ime),
            WindowEvent::CursorMoved { position, .. } => self.on_cursor_moved(position),
            WindowEvent::CursorLeft { .. } => self.input.pointer = None,
            WindowEvent::MouseInput { state, button, .. } => self.on_mouse_input(state, button),
            WindowEvent::MouseWheel { delta, .. } => self.on_wheel(delta),
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.embedded.as_ref().is_some_and(|e| !e.is_running()) {
            tracing::info!("the server stopped: closing the window");
            event_loop.exit();
            return;
        }
        if self.remote.as_ref().is_some_and(Remote::gone) {
            tracing::info!("the attached server went away: closing the window");
            event_loop.exit();
            return;
        }
        let (due, next) = self.frames.due(Instant::now(), HEALTH_CHECK);
        if due.blink || due.tick || due.paced {
            if let Some(window) = &self.window {
                window.request_redraw();
            }
        }
        event_loop.set_control_flow(ControlFlow::WaitUntil(next));
    }
}

/// The badge for a pane's restore state.
fn badge_of(state: RestoreState) -> Badge {
    match state {
        RestoreState::Restored => Badge::Restored,
        RestoreState::Resumable => Badge::Resumable,
        RestoreState::Exited => Badge::Exited,
        RestoreState::Live => Badge::Live,
    }
}
