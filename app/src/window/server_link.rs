//! The window's one seam to a server: [`ServerLink`], as wezterm's `Domain` is for local and
//! remote panes. The window asks a link for the state, a pane's frame and modes, sends it
//! commands and input, searches through it, reports what it shows and takes from it what
//! `berth review` asked for; it never holds a Store.
//!
//! Two links stand behind it: [`super::embedded_link::EmbeddedLink`], the server embedded in
//! this process (the Store is called directly and frames are captured from the pane's
//! terminal under its own lock: no socket, no JSON), and [`super::remote::SocketLink`], a
//! server in another process reached through its socket (a local one, or one forwarded from
//! another machine by `berth attach ssh://…`). Both hand the window the same [`PaneFrame`], so
//! both windows build the same scene (the golden test in `render/extract.rs` feeds one
//! recorded stream through both), search the same way (`pane_search.rs` runs in process for
//! the embedded link, on the server for the socket one) and select the same way. It must not
//! draw.

use berth_engine::ids::PaneId;
use berth_engine::model::RestoreState;
use berth_server::commands::{Command, Reply};
use berth_server::notifications::DesktopPolicy;
use berth_server::pane_search::{SearchReply, SearchRequest, WireMatch};
use berth_server::persist::task_record::TaskRecord;
use berth_server::screen::PaneFrame;
use berth_server::store::WindowView;
use berth_server::view::StateView;
use berth_server::UiRequest;

use super::keys::KeyModes;

/// The settings the window's config file gives its server: what the embedded server takes
/// (scrollback of new panes, desktop notifications, the terminals' default cursor and theme
/// colours) and what a server in another process leaves to itself but for whether its
/// notifications reach this desktop.
#[derive(Clone)]
pub(super) struct LinkSettings {
    pub(super) scrollback: usize,
    pub(super) desktop: DesktopPolicy,
    pub(super) cursor: alacritty_terminal::vte::ansi::CursorStyle,
    pub(super) theme: berth_engine::terminal::ThemeColors,
}

/// A window's link to one server.
pub(super) trait ServerLink {
    /// The server's state as the window draws it.
    fn view(&self) -> StateView;

    /// The shown tab's focused pane (keys ask on every press).
    fn focused_pane(&self) -> Option<PaneId>;

    /// A pane's restore state.
    fn pane_state(&self, pane: &PaneId) -> Option<RestoreState>;

    /// How many lines a tombstone's tail has (`None`: a live pane, or no such pane).
    fn tail_len(&self, pane: &PaneId) -> Option<usize>;

    /// A tombstone's tail as styled lines.
    fn tail(&self, pane: &PaneId) -> Option<Vec<String>>;

    /// The pane's screen as it is now (embedded) or as it last arrived (socket); `None` when
    /// the pane has no live terminal (or no frame arrived yet).
    fn frame(&self, pane: &PaneId) -> Option<PaneFrame>;

    /// The pane's terminal modes (app cursor, mouse, bracketed paste, focus reports), as
    /// `TermMode` bits.
    fn modes(&self, pane: &PaneId) -> Option<alacritty_terminal::term::TermMode>;

    /// What key encoding needs of the pane's modes.
    fn key_modes(&self, pane: &PaneId) -> Option<KeyModes>;

    /// Executes a command as the socket would; the error is the server's message.
    fn execute(&self, cmd: Command) -> Result<Reply, String>;

    /// Sends input bytes to a pane, returning this window's view of it to the live screen
    /// first; the window does not wait for it to be written (nor for an error: typing into a
    /// pane whose program ended fails on every key, which is not news).
    fn send_input(&self, pane: &PaneId, bytes: Vec<u8>);

    /// Scrolls this window's view of a pane by `lines` (positive: back into the scrollback).
    fn scroll(&self, pane: &PaneId, lines: i32);

    /// Scrolls this window's view of a pane to `offset` lines back (a search's match).
    fn scroll_to(&self, pane: &PaneId, offset: u32);

    /// How far this window's view of a pane is scrolled back.
    fn offset(&self, pane: &PaneId) -> u32;

    /// Sets the query of the open search in a pane (`None`: closed); [`Self::view_matches`]
    /// then gives its matches on the view.
    fn set_search(&self, pane: &PaneId, query: Option<&str>);

    /// The open search's matches on the rows of the pane's frame.
    fn view_matches(&self, pane: &PaneId) -> Vec<WireMatch>;

    /// Searches a pane's scrollback (`pane.search`'s request and answer).
    fn search(&self, request: SearchRequest) -> Result<SearchReply, String>;

    /// A pane's lines from line `since` on, as plain text (`pane.read`): the first line's
    /// number and the lines.
    fn read_lines(&self, pane: &PaneId, since: u64) -> Option<(u64, Vec<String>)>;

    /// Says which panes the window shows, which has the keyboard and whether the window is
    /// focused (notifications for a watched pane stay off the desktop).
    fn show(&self, view: WindowView);

    /// The server's tasks (the sidebar lists them), oldest first.
    fn tasks(&self) -> Vec<TaskRecord>;

    /// The task whose review view `berth review` asked this window for, once.
    fn take_review_request(&self) -> Option<String>;

    /// Gives the server the settings the window's config owns.
    fn apply_settings(&self, settings: &LinkSettings);

    /// Whether other windows share this server's tabs, so that only the window used last
    /// gives the shown tab its size (tmux's `window-size latest`).
    fn shared_with_other_windows(&self) -> bool;

    /// The window's monitor refreshes at `millihertz` (frames come at most that often).
    fn set_refresh(&self, _millihertz: u32) {}

    /// How many events other than pane output the server sent so far: the inbox lists the
    /// notifications again when it changed.
    fn events_seen(&self) -> u64;

    /// Whether a notification new in the list is shown as a toast by the window (the
    /// embedded server's desktop shows none); a socket link names its toasts instead
    /// ([`ServerLink::take_toasts`]).
    fn toasts_for_new_notifications(&self) -> bool {
        false
    }

    /// The notifications the server named this window to show that its desktop could not,
    /// since the last call: toasts.
    fn take_toasts(&self) -> Vec<berth_server::view::NotificationView> {
        Vec::new()
    }

    /// Why the window should close, once the server is gone.
    fn gone(&self) -> Option<&'static str>;

    /// What only the window can answer (screenshots), asked since the last call.
    fn ui_requests(&self) -> Vec<UiRequest> {
        Vec::new()
    }

    /// Ends the link as the window closes (the embedded server saves and ends its panes; a
    /// server in another process goes on).
    fn shutdown(self: Box<Self>) {}
}
