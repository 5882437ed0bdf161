//! The window: `berth` with no subcommand. A winit event loop on the main thread draws the
//! server's active tab and turns keys, mouse and IME input into Store commands. The window
//! reaches its server through a link (`server_link.rs`): the server embedded on the
//! window's own threads (`embedded_link.rs`) or, when one already answers on the socket (or
//! the config says `server = "standalone"`), another process the window attaches to
//! (`remote.rs`): then closing or killing the window leaves it and its panes running.
//!
//! This module owns starting up (display check, embedding the server, the first workspace on
//! a first start), the wake-ups that reach the event loop from other threads, and shutting
//! down. The window is a client of the server like the socket: every change is a
//! [`berth_server::commands::Command`] through its link; it holds no Store and no state the
//! server owns, only what is local to a window (zoom, selection, font size, pointer state).
//! It must not draw by itself: `render` does that.

mod actions;
mod activation;
mod app;
pub mod backend;
pub mod chrome;
mod chrome_input;
pub mod clipboard;
mod decisions;
mod desktop;
mod dispatch;
mod embedded_link;
#[cfg(test)]
mod fixtures;
mod frame_text;
mod frames;
mod inbox;
mod inbox_input;
#[cfg(test)]
mod inbox_tests;
mod input;
mod intent;
pub mod keys;
mod latency;
pub mod links;
pub mod mouse;
mod prefs;
mod remote;
mod rename;
mod review;
mod review_input;
mod review_link;
mod search;
pub mod selection;
mod server_link;
mod server_set;
pub mod sidebar;
mod switcher;
mod tombstones;
pub mod view;
mod wake;

use std::process::ExitCode;

use crate::ssh_attach;

use anyhow::{bail, Context, Result};
use berth_server::{Server, ServerConfig};
use winit::event_loop::EventLoop;

use self::backend::Backend;
use self::wake::{UserEvent, Waker};

/// How long `berth` waits for a standalone server it started to answer.
const STANDALONE_START: std::time::Duration = std::time::Duration::from_secs(10);

/// `berth attach ssh://…` (`ssh_attach.rs`): finds the remote socket, forwards a local one to it, runs the window on it, and ends the
/// forward with the window.
pub fn attach_ssh(target: &str) -> Result<ExitCode> {
    let target = ssh_attach::Target::parse(target)?;
    let remote = ssh_attach::remote_socket(&target)?;
    let local = ssh_attach::local_socket(&target)?;
    let forward = ssh_attach::Forward::start(&target, &local, &remote)?;
    tracing::info!(
        target: "berth::window",
        "forwarding {} to {}:{} over ssh",
        local.display(),
        target.destination,
        remote
    );
    let result = open(local.clone(), true);
    drop(forward);
    result
}

/// `berth` (and `berth attach`, with `attach_only`): attaches a window to the server that
/// answers on `socket`; with none, `berth attach` fails, and `berth` embeds a server (config
/// `server = "embedded"`, the default) or starts `berth server` as a process of its own and
/// attaches to it (`server = "standalone"`).
pub fn open(socket: std::path::PathBuf, attach_only: bool) -> Result<ExitCode> {
    if answering(&socket) {
        return run(socket, true);
    }
    if attach_only {
        bail!(
            "no Berth server answers on {}: start one with `berth server` (or run `berth`)",
            socket.display()
        );
    }
    let mode = crate::config::path()
        .and_then(|path| crate::config::load(&path).ok())
        .map(|config| config.server)
        .unwrap_or_default();
    if mode == crate::config::ServerMode::Embedded {
        return run(socket, false);
    }
    start_standalone(&socket)?;
    let deadline = std::time::Instant::now() + STANDALONE_START;
    while !answering(&socket) {
        if std::time::Instant::now() > deadline {
            bail!(
                "the standalone server did not answer on {} within {} s (see `berth logs`)",
                socket.display(),
                STANDALONE_START.as_secs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    run(socket, true)
}

/// Whether a Berth server answers on `socket`.
fn answering(socket: &std::path::Path) -> bool {
    use berth_server::client::Client;
    use berth_server::commands::Command;
    let timeout = std::time::Duration::from_millis(800);
    Client::connect_with_timeout(socket, timeout)
        .and_then(|mut client| client.execute(Command::ServerInfo))
        .is_ok()
}

/// Starts `berth server` on `socket` as a process of its own: through the packaged systemd
/// user unit when it is installed and `socket` is the default one, else detached (a session
/// of its own, no terminal, output to nothing: it logs to its log file).
fn start_standalone(socket: &std::path::Path) -> Result<()> {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let unit = "berth-server.service";
    let systemd = socket == berth_server::paths::socket_path()
        && Command::new("systemctl")
            .args(["--user", "cat", unit])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if systemd {
        let started = Command::new("systemctl").args(["--user", "start", unit]).status();
        if started.is_ok_and(|s| s.success()) {
            tracing::info!("started the standalone server through {unit}");
            return Ok(());
        }
        tracing::warn!("systemctl --user start {unit} failed; starting the server directly");
    }
    let exe = std::env::current_exe().context("cannot find the berth binary")?;
    let mut command = Command::new(exe);
    command
        .arg("--socket")
        .arg(socket)
        .arg("server")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // A session of its own (so a process group too): no SIGHUP from the terminal `berth` ran
    // in, and, where the kernel groups processes by session for scheduling (autogroups), the
    // agents' output is not scheduled behind whatever shares the window's session.
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().context("cannot start `berth server`")?;
    tracing::info!(socket = %socket.display(), "started a standalone server");
    Ok(())
}

/// Opens the window on the embedded server and runs until it is closed (or the server is
/// stopped by SIGTERM/SIGINT). Errors are one line each: no display, no GPU adapter, a
/// server already running.
pub fn run(socket_path: std::path::PathBuf, attach: bool) -> Result<ExitCode> {
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
    let start = if attach {
        app::Start::Attach(socket_path)
    } else {
        let server = Server::bind(&ServerConfig { socket_path, ..ServerConfig::from_env() })
            .context("cannot start the server")?;
        app::Start::Embedded(server)
    };
    let waker = Waker::new(event_loop.create_proxy());
    let mut app = app::App::new(start, waker, event_loop.owned_display_handle());
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    app.finish()
}
