//! What the window's parts (search, links, the switcher, tab rename, input) ask for: a
//! command for the Store or something only the window does. The parts decide; `App` carries
//! their intents out (`window/dispatch.rs`).
//!
//! It owns only the vocabulary. It must not act: an intent is plain data, so a part's
//! decisions can be tested without a window or a Store.

use berth_server::commands::Command;
use winit::window::CursorIcon;

/// Something a part of the window asks for.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Intent {
    /// A command for the Store, executed as the socket would; a failure is logged (the user
    /// sees the state).
    Store(Command),
    /// Something the window does itself.
    Ui(UiAction),
}

/// Something only the window does.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum UiAction {
    /// Draw a frame even if nothing seems to have changed.
    Redraw,
    /// Show this pointer icon.
    PointerIcon(CursorIcon),
    /// Open a link (`xdg-open` or `$BERTH_OPENER`, allowlisted schemes only).
    OpenLink(String),
}
