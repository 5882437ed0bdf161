//! The window: `berth` with no subcommand. A winit event loop on the main thread draws the
//! embedded server's active tab and turns keys, mouse and IME input into Store commands.
//!
//! This module owns starting up (display check, embedding the server, the first workspace on
//! a first start), the wake-ups that reach the event loop from other threads, and shutting
//! down. The window is a client of the Store like the socket: every change is a
//! [`berth_server::commands::Command`] through `Store::execute`; it holds no state the server
//! owns, only what is local to a window (zoom, selection, font size, pointer state). It must
//! not draw by itself: `render` does that.

mod actions;
mod app;
pub mod chrome;
mod chrome_input;
pub mod clipboard;
mod decisions;
mod dispatch;
mod frames;
mod input;
mod intent;
pub mod keys;
pub mod links;
pub mod mouse;
mod rename;
mod search;
pub mod selection;
mod switcher;
mod tombstones;
pub mod view;
mod wake;

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use berth_server::{Server, ServerConfig};
use winit::event_loop::EventLoop;

use self::wake::{UserEvent, Waker};

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
