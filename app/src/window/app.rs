//! The winit application: window and renderer lifetime, frames, layout sync and screenshots.
//!
//! Owns the window, the renderer, the window's link to its server (`server_link.rs`: the
//! embedded one or one through a socket; the window never holds a Store) and the
//! window-local state (grid size, font size, zoom, cursor blink, the config in use and its
//! error banner). A frame is drawn only when something changed: a wake-up from the server's
//! event bus, input, a resize, the cursor's blink, or the config file. It must not change
//! server state except through its link's commands (and the settings the config file owns:
//! scrollback of new panes, desktop notifications). The window's parts own their state
//! (`input.rs`, `selection.rs` and `frame_text.rs`, `search.rs`, `links.rs`,
//! `switcher.rs`, `rename.rs`, `tombstones.rs`, `frames.rs`) and return intents; `dispatch.rs` routes input to them and carries the
//! intents out. No part imports this file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use alacritty_terminal::term::TermMode;
use anyhow::Result;
use berth_engine::ids::{PaneId, TabId};
use berth_engine::layout::CellSize;
use berth_engine::model::RestoreState;
use berth_server::commands::{Command, Reply, SpawnRequest, WorkspaceSelector};
use berth_server::notifications::DesktopPolicy;
use berth_server::store::WindowView;
use berth_server::view::StateView;
use berth_server::{Server, UiRequest};
use winit::application::ApplicationHandler;
use winit::dpi::LogicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, OwnedDisplayHandle};
use winit::platform::wayland::WindowAttributesExtWayland;
use winit::platform::x11::WindowAttributesExtX11;
use winit::window::{Window, WindowId};

use super::chrome::{self, TAB_BAR_ROWS};
use super::decisions;
use super::embedded_link::EmbeddedLink;
use super::frames::FrameSchedule;
use super::inbox::Inbox;
use super::input::InputState;
use super::latency::LatencyTrace;
use super::links::{LinkSource, LinkState};
use super::remote::SocketLink;
use super::rename::TabRenamer;
use super::review::OpenReview;
use super::review_link::ReviewLink;
use super::search::Search;
use super::selection::PaneSelection;
use super::server_link::{LinkSettings, ServerLink};
use super::server_set::{LinkStatus, ServerSet};
use super::sidebar::{self, SidebarLayout, SidebarState};
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

/// The name the window's own server goes by when it links to others: `local` for the
/// embedded one, the socket's for one it attached to.
fn own_name(socket: Option<&std::path::Path>) -> String {
    match socket {
        None => "local".to_owned(),
        Some(path) => config::ServerAddress::Socket(path.to_path_buf()).name(),
    }
}

/// The window application.
pub struct App {
    start: Option<Start>,
    /// The window's links to its servers as one (`server_set.rs`): its own first (the
    /// embedded server or one through a socket, `remote.rs`), then those the config's
    /// `servers` and `berth attach --add` name.
    pub(super) servers: ServerSet,
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
    /// Search in the focused pane, through the link (`window/search.rs`).
    pub(super) search: Search,
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
    /// Key-to-frame times for the benchmarks (`BERTH_LATENCY_TRACE`; `latency.rs`).
    latency: LatencyTrace,
    /// The inbox of notifications and requests, and the toast (`inbox.rs`, `inbox_input.rs`).
    pub(super) inbox: Inbox,
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
            servers: ServerSet::default(),
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
            latency: LatencyTrace::from_env(),
            inbox: Inbox::default(),
        }
    }

    /// Stops the embedded server (saving, ending the panes' processes) and tells how the
    /// window ended.
    pub fn finish(mut self) -> Result<ExitCode> {
        self.renderer = None;
        self.window = None;
        if !self.servers.is_empty() {
            Box::new(std::mem::take(&mut self.servers)).shutdown();
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
                let remote = SocketLink::connect(
                    &socket,
                    HEADER_ROWS,
                    self.waker.clone(),
                    self.raise_requested.callback(),
                    desktop,
                )
                .map_err(|e| anyhow::anyhow!("cannot attach to {}: {e}", socket.display()))?;
                if let Some(mhz) =
                    window.current_monitor().and_then(|m| m.refresh_rate_millihertz())
                {
                    ServerLink::set_refresh(&remote, mhz);
                }
                tracing::info!(socket = %socket.display(), "attached to the server");
                self.servers.set_own(Box::new(remote), &own_name(Some(&socket)));
                self.link_other_servers();
                self.update_grid();
                self.first_start();
                window.request_redraw();
                return Ok(());
            }
        };
        self.socket = Some(server.socket_path());
        let raise = self.raise_requested.callback();
        let embedded = EmbeddedLink::start(server, HEADER_ROWS, self.waker.clone(), raise)?;
        self.servers.set_own(Box::new(embedded), &own_name(None));
        self.link_other_servers();
        self.apply_store_settings();

        self.update_grid();
        self.first_start();
        window.request_redraw();
        Ok(())
    }

    /// Links the window to the servers the config names beside its own (they connect from
    /// probe threads at the next ticks, `server_set.rs`).
    fn link_other_servers(&mut self) {
        let waker = self.waker.clone();
        let raise = self.raise_requested.clone();
        let desktop = self.config.notifications.policy() != DesktopPolicy::Off;
        self.servers.set_connector(Box::new(move |socket| {
            SocketLink::connect(socket, HEADER_ROWS, waker.clone(), raise.callback(), desktop)
                .map(|link| Box::new(link) as Box<dyn ServerLink>)
                .map_err(|e| e.to_string())
        }));
        self.add_config_servers();
    }

    /// Adds the config's servers the window does not link to yet (one taken out of the file
    /// stays until `berth attach --remove` or the next start).
    fn add_config_servers(&mut self) {
        for address in self.config.servers.clone() {
            if self
                .servers
                .members()
                .iter()
                .any(|(_, a, _)| a.as_deref() == Some(&address.to_text()))
            {
                continue;
            }
            match self.servers.add(address) {
                Ok(name) => tracing::info!(server = %name, "linking to another server"),
                Err(e) => self.banner = Some(format!("config: servers: {e}")),
            }
        }
        if self.servers.tick(Instant::now()) {
            self.redraw();
        }
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

    /// The link to the server the window shows (`server_link.rs`); `None` before the window
    /// started.
    pub(super) fn link(&self) -> Option<&dyn ServerLink> {
        (!self.servers.is_empty()).then_some(&self.servers as &dyn ServerLink)
    }

    /// The server's state as the link has it.
    pub(super) fn state_view(&self) -> StateView {
        self.link().map(|l| l.view()).unwrap_or_default()
    }

    /// A pane's restore state.
    pub(super) fn pane_state(&self, pane: &PaneId) -> Option<RestoreState> {
        self.link()?.pane_state(pane)
    }

    /// How many lines a tombstone's tail has.
    pub(super) fn pane_tail_len(&self, pane: &PaneId) -> Option<usize> {
        self.link()?.tail_len(pane)
    }

    /// A tombstone's tail as styled lines.
    pub(super) fn pane_tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        self.link()?.tail(pane)
    }

    /// A pane's frame: captured now (embedded) or as it last arrived (socket).
    pub(super) fn pane_frame(&self, pane: &PaneId) -> Option<berth_server::screen::PaneFrame> {
        self.link()?.frame(pane)
    }

    /// The terminal modes of a pane (app cursor, mouse, bracketed paste, focus reports, the
    /// keyboard protocol), from its terminal or the last frame the server sent.
    pub(super) fn pane_modes(&self, pane: &PaneId) -> Option<TermMode> {
        self.link()?.modes(pane)
    }

    /// What key encoding needs of a pane's modes, from its terminal or its last frame.
    pub(super) fn pane_key_modes(&self, pane: &PaneId) -> Option<super::keys::KeyModes> {
        self.link()?.key_modes(pane)
    }

    /// Executes a command as the socket would and hands back its error's message.
    pub(super) fn exec_result(&self, cmd: Command) -> Result<Reply, String> {
        self.link().ok_or("the window has no server")?.execute(cmd)
    }

    /// Executes a command as the socket would; failures are logged (the user sees the state).
    pub(super) fn exec(&self, cmd: Command) -> Option<Reply> {
        // Only the variant's name: the fields may hold typed text.
        let debug = format!("{cmd:?}");
        let name = debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned();
        let input = matches!(cmd, Command::PaneSend { .. } | Command::PaneInput { .. });
        let result = self.link()?.execute(cmd);
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
        TabView::active(&self.link()?.view())
    }

    /// The shown tab's focused pane, without building the whole state view where the link
    /// can answer it directly (the embedded Store does; keys ask on every press).
    pub(super) fn focused_pane(&self) -> Option<PaneId> {
        self.link()?.focused_pane()
    }

    /// How many events other than pane output the server sent so far (the inbox lists the
    /// notifications again when it changed).
    pub(super) fn server_events(&self) -> u64 {
        self.link().map_or(0, |l| l.events_seen())
    }

    /// Whether a new notification found in the list makes a toast: the embedded server's
    /// desktop shows none (no notification service answers). An attached window toasts the
    /// ones the server names it to show and its desktop cannot (`take_window_toasts`).
    pub(super) fn toasts_for_new_notifications(&self) -> bool {
        self.link().is_some_and(|l| l.toasts_for_new_notifications())
    }

    /// The notifications the server named this attached window to show that its desktop did
    /// not (no notification service here): toasts.
    pub(super) fn take_window_toasts(&self) -> Vec<berth_server::view::NotificationView> {
        self.link().map(|l| l.take_toasts()).unwrap_or_default()
    }

    /// Sends input bytes to a pane, returning its view to the live screen first (bytes as
    /// they are: legacy mouse reports past column 95 are not UTF-8).
    pub(super) fn send_bytes(&self, pane: &PaneId, bytes: Vec<u8>) {
        if let Some(link) = self.link() {
            link.send_input(pane, bytes);
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
        // Tasks live in the server; a socket link has the list its state thread read.
        let tasks = sidebar::tasks_of(&self.link().map(|l| l.tasks()).unwrap_or_default());
        let mut git = self.sidebar.git.borrow_mut();
        let rect = sidebar::rect(self.grid.cols, self.grid.rows, cols);
        let now = berth_server::persist::stamp::now_ms();
        let at = Instant::now();
        let groups: Vec<sidebar::GroupHeader> = self
            .servers
            .groups(list)
            .into_iter()
            .map(|g| sidebar::GroupHeader {
                first: g.first,
                text: format!("▣ {} · {}", g.name, g.status.describe(at)),
            })
            .collect();
        Some(sidebar::layout(
            list,
            &tasks,
            |dir| sidebar::git_of(list, &mut git, dir),
            rect,
            now,
            &groups,
        ))
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
        if self.config.servers != old.servers && !self.servers.is_empty() {
            self.add_config_servers();
        }
        self.update_grid();
    }

    /// Gives the server the settings the config file owns: scrollback, desktop
    /// notifications, and the terminals' default cursor style and theme colours (what
    /// programs asking with OSC 10/11/4 learn), which the Store gives every terminal at once
    /// and every new one, so a program never sees the old theme after a reload. A server in
    /// another process keeps its own settings; the window's config says only whether the
    /// notifications it shows for the server reach this desktop (`server_link.rs`).
    fn apply_store_settings(&self) {
        use alacritty_terminal::vte::ansi::{CursorShape as Shape, CursorStyle, Rgb};
        let Some(link) = self.link() else { return };
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
        link.apply_settings(&LinkSettings {
            scrollback: self.config.scrollback_lines,
            desktop: self.config.notifications.policy(),
            cursor,
            theme,
        });
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
        let shared = self.link().is_some_and(|l| l.shared_with_other_windows());
        let may_size = !shared || std::mem::take(&mut self.size_claim);
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
            let have = self.pane_frame(&zoom.pane);
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
        if let Some(link) = self.link() {
            link.show(view);
        }
    }

    /// The bottom row's words while the shown pane's server is not connected.
    fn link_banner(&self, view: &TabView) -> Option<String> {
        let (name, status) = self.servers.server_of(&view.active_pane)?;
        (status != LinkStatus::Connected).then(|| {
            format!(
                "{name}: {} — its panes show their last screens",
                status.describe(Instant::now())
            )
        })
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
            // A pane of a server whose link is lost shows its last screen, marked so.
            let offline = self
                .servers
                .server_of(&pane_id)
                .is_some_and(|(_, status)| status != LinkStatus::Connected);
            let header = HeaderScene {
                title: info.title.clone(),
                badge: badge_of(info.state),
                focused,
                attention: info.wants_attention(),
                lifecycle: if offline {
                    Some("offline".to_owned())
                } else {
                    chrome::lifecycle_marker(info, since)
                },
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
            // The same frame whichever way the server is reached (`server_link.rs`).
            let Some(link) = self.link() else { continue };
            let Some(frame) = link.frame(&pane_id) else {
                continue;
            };
            let mut screen =
                render::screen_of_frame(&frame, &self.palette, focused && focused_window);
            if let Some(cursor) = &mut screen.cursor {
                if cursor.blinking && self.frames.cursor_hidden() && focused {
                    cursor.visible = false;
                }
            }
            // The selection, the links and the search read the frame in both windows (the
            // search's matches on it come from the link).
            let span = selection.and_then(|s| s.visible_span(&frame));
            let search = match self.search.pane() {
                Some(searched) if *searched == pane_id => {
                    self.search.scene(&pane_id, &frame, &link.view_matches(&pane_id))
                }
                _ => None,
            };
            let link = self.links.spans(&pane_id, LinkSource::Frame(&frame));
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
            banner: self.banner.clone().or_else(|| self.link_banner(view)),
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
        if !self.servers.is_empty() {
            self.search.end_unless_focused(&view.active_pane, &self.servers);
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
        let now = Instant::now();
        self.frames.keep_clocks(blinking && self.input.window_focused, working, now);
        // A toast goes in time (the lifecycle clock ticks only every 15 s).
        self.frames.expires(self.inbox.toast_until(now));
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
        let Some(link) = self.link() else { return };
        let requests: Vec<UiRequest> = link.ui_requests();
        for request in requests {
            match request {
                UiRequest::Screenshot { tab, reply } => {
                    let result = self.screenshot(tab.as_deref());
                    let _ = reply.send(result);
                }
                UiRequest::Servers { op, reply } => {
                    let result = self.change_servers(op);
                    let _ = reply.send(result);
                }
            }
        }
    }

    /// `berth attach --add/--remove/--list`: changes the window's links to other servers and
    /// lists them after.
    fn change_servers(
        &mut self,
        op: berth_server::ui::ServersOp,
    ) -> Result<berth_server::ui::WindowServersReply, String> {
        use berth_server::ui::ServersOp;
        match op {
            ServersOp::List => {}
            ServersOp::Add(text) => {
                let address = config::ServerAddress::parse(&text)?;
                let name = self.servers.add(address)?;
                tracing::info!(server = %name, "linking to another server (berth attach --add)");
                self.servers.tick(Instant::now());
            }
            ServersOp::Remove(name) => self.servers.remove(&name)?,
        }
        self.redraw();
        let now = Instant::now();
        let servers = self
            .servers
            .members()
            .into_iter()
            .map(|(name, address, status)| berth_server::ui::WindowServerEntry {
                name,
                address,
                status: status.describe(now),
            })
            .collect();
        Ok(berth_server::ui::WindowServersReply { servers })
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

/// A click on a desktop notification asks the window to raise itself, with the notification
/// server's activation token when it sent one (the event forwarder sets it, the event loop
/// takes it).
#[derive(Clone, Default)]
struct RaiseRequest(Arc<Mutex<Option<Option<String>>>>);

impl RaiseRequest {
    fn request(&self, token: Option<String>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(token);
    }

    /// The request as a link calls it (from its event thread).
    fn callback(&self) -> super::remote::Raise {
        let raise = self.clone();
        Box::new(move |token| raise.request(token))
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
        if let Some(why) = self.link().and_then(|l| l.gone()) {
            tracing::info!("{why}");
            event_loop.exit();
            return;
        }
        let now = Instant::now();
        // Other servers: a lost link noticed, a try started or ended; a countdown shown.
        let linked = self.servers.tick(now);
        let (due, next) = self.frames.due(now, HEALTH_CHECK);
        if linked || self.servers.countdown_due(now) {
            self.redraw();
        }
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
