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
mod activation;
mod app;
pub mod backend;
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

use anyhow::{Context, Result};
use berth_server::{Server, ServerConfig};
use winit::event_loop::EventLoop;

use self::backend::Backend;
use self::wake::{UserEvent, Waker};

/// Opens the window on the embedded server and runs until it is closed (or the server is
/// stopped by SIGTERM/SIGINT). Errors are one line each: no display, no GPU adapter, a
/// server already running.
pub fn run(socket_path: std::path::PathBuf) -> Result<ExitCode> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let choice = backend::choose(&var).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut builder = EventLoop::<UserEvent>::with_user_event();
    match choice.backend {
        Backend::X11 => winit::platform::x11::EventLoopBuilderExtX11::with_x11(&mut builder),
        Backend::Wayland => {
            winit::platform::wayland::EventLoopBuilderExtWayland::with_wayland(&mut builder)
        }
    };
    let event_loop = builder.build().map_err(|e| {
        tracing::debug!(error = %e, "no event loop");
        match choice.backend {
            Backend::X11 => anyhow::anyhow!(
                "cannot connect to the X server at DISPLAY={}; run `berth server` for the headless server",
                choice.display
            ),
            Backend::Wayland => anyhow::anyhow!(
                "cannot connect to the Wayland compositor at WAYLAND_DISPLAY={} ({e}); set BERTH_BACKEND=x11 to use XWayland, or run `berth server` for the headless server",
                choice.display
            ),
        }
    })?;
    tracing::info!(backend = choice.backend.name(), display = %choice.display, why = choice.why, "window backend");
    let server = Server::bind(&ServerConfig { socket_path, ..ServerConfig::from_env() })
        .context("cannot start the server")?;
    let waker = Waker::new(event_loop.create_proxy());
    let mut app = app::App::new(server, waker, event_loop.owned_display_handle());
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    app.finish()
}
