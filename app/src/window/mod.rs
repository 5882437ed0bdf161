//! The window: `berth` with no subcommand. A winit event loop on the main thread draws the
//! embedded server's active tab and turns keys, mouse and IME input into Store commands.
//!
//! This module owns starting up (display check, embedding the server, the first workspace on
//! a first start), the wake-ups that reach the event loop from other threads, and shutting
//! down. The window is a client of the Store like the socket: every change is a
//! [`berth_server::commands::Command`] through `Store::execute`; it holds no state the server
//! owns, only what is local to a window (zoom, selection, font size, pointer state). It must
//! not draw by itself: `render` does that.

mod app;
pub mod chrome;
mod chrome_input;
pub mod clipboard;
mod input;
pub mod keymap;
pub mod keys;
pub mod links;
pub mod mouse;
mod search;
pub mod selection;
pub mod view;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use berth_server::{Server, ServerConfig};
use winit::event_loop::{EventLoop, EventLoopProxy};

/// The Store's state in the wire's shape, for the window code that still reads DTOs.
///
/// A bridge while the window moves to the typed [`berth_server::view::StateView`]
/// (`Store::view`), which is what the Store hands out.
pub(crate) trait StoreList {
    /// [`berth_server::store::Store::view`] as the DTO `workspace.list` answers.
    fn list(&self) -> berth_server::protocol::WorkspaceListDto;
}

impl StoreList for berth_server::store::Store {
    fn list(&self) -> berth_server::protocol::WorkspaceListDto {
        berth_server::protocol::WorkspaceListDto::from(&self.view())
    }
}

/// What other threads send to the event loop: only "look again"; the loop then reads the
/// Store, the screenshot queue and the server's state itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserEvent {
    /// Something changed: pane output, state, or a request for the window.
    Wake,
}

/// Wakes the event loop at most once until it has looked: many events between two frames
/// cost one wake-up and one frame.
#[derive(Clone)]
pub struct Waker {
    proxy: EventLoopProxy<UserEvent>,
    pending: Arc<AtomicBool>,
}

impl Waker {
    fn new(proxy: EventLoopProxy<UserEvent>) -> Self {
        Self { proxy, pending: Arc::new(AtomicBool::new(false)) }
    }

    /// Asks the event loop to look again; false once the loop is gone.
    pub fn wake(&self) -> bool {
        if self.pending.swap(true, Ordering::AcqRel) {
            return true;
        }
        self.proxy.send_event(UserEvent::Wake).is_ok()
    }

    /// Called by the event loop as it looks, so the next change wakes it again.
    pub fn clear(&self) {
        self.pending.store(false, Ordering::Release);
    }
}

/// The one line printed when there is no display to open a window on.
pub const NO_DISPLAY: &str =
    "no display (DISPLAY/WAYLAND_DISPLAY unset); run `berth server` for the headless server";

/// Opens the window on the embedded server and runs until it is closed (or the server is
/// stopped by SIGTERM/SIGINT). Errors are one line each: no display, no GPU adapter, a
/// server already running.
pub fn run(socket_path: std::path::PathBuf) -> Result<ExitCode> {
    let has = |var: &str| std::env::var_os(var).is_some_and(|v| !v.is_empty());
    if !has("DISPLAY") && !has("WAYLAND_DISPLAY") {
        bail!(NO_DISPLAY);
    }
    if !has("DISPLAY") {
        bail!("this build draws through X11 and DISPLAY is unset (Wayland needs XWayland); run `berth server` for the headless server");
    }
    let event_loop = EventLoop::<UserEvent>::with_user_event().build().map_err(|e| {
        tracing::debug!(error = %e, "no event loop");
        anyhow::anyhow!(
            "cannot connect to the X server at DISPLAY={}; run `berth server` for the headless server",
            std::env::var("DISPLAY").unwrap_or_default()
        )
    })?;
    let server = Server::bind(&ServerConfig { socket_path, ..ServerConfig::from_env() })
        .context("cannot start the server")?;
    let waker = Waker::new(event_loop.create_proxy());
    let mut app = app::App::new(server, waker, event_loop.owned_display_handle());
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    app.finish()
}
