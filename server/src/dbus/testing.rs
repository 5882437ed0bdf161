//! Test support for every D-Bus test: a private `dbus-daemon`, and a bounded way for a fake
//! service's synchronous handle to run its bus calls on the fake's own runtime.
//!
//! It owns the daemon process and its temp dir. It must never connect to the host's own buses.
//! The fakes themselves live beside the clients they stand in for
//! (`notifications::desktop::testing`, `logind::testing`). Compiled only for tests and with the
//! `testing` feature, so none of it is in the release binary.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a fake waits for its own bus calls, and the bus for its address.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A `dbus-daemon` of its own, listening in a private temp dir; killed when dropped.
///
/// Give [`PrivateBus::address`] to the code under test as `DBUS_SYSTEM_BUS_ADDRESS` or
/// `DBUS_SESSION_BUS_ADDRESS` (in a child process's environment) or through
/// [`super::BusConfig::for_address`].
#[derive(Debug)]
pub struct PrivateBus {
    address: String,
    child: Child,
    dir: PathBuf,
}

impl PrivateBus {
    /// Starts `dbus-daemon` with a minimal configuration of its own (no system or session config
    /// is read) and waits for it to print its address.
    pub fn start() -> std::io::Result<PrivateBus> {
        let dir = private_dir()?;
        let socket = dir.join("bus");
        let config = dir.join("bus.conf");
        let log = dir.join("daemon.log");
        std::fs::write(&config, bus_config(&socket))?;
        let child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address=1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log)?)
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&dir);
                let hint = if error.kind() == std::io::ErrorKind::NotFound {
                    " (install the dbus-daemon package; scripts/test does)"
                } else {
                    ""
                };
                return Err(std::io::Error::new(
                    error.kind(),
                    format!("cannot run dbus-daemon{hint}: {error}"),
                ));
            }
        };
        // Reading the address is done on a thread so that a daemon that prints nothing cannot
        // hang the test: the wait is bounded.
        let stdout = child.stdout.take();
        let (sender, receiver) = mpsc::sync_channel(1);
        std::thread::spawn(move || {
            let mut line = String::new();
            if let Some(stdout) = stdout {
                let _ = BufReader::new(stdout).read_line(&mut line);
            }
            let _ = sender.send(line);
        });
        let address = receiver.recv_timeout(CALL_TIMEOUT).unwrap_or_default().trim().to_owned();
        let bus = PrivateBus { address, child, dir };
        if bus.address.is_empty() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(std::io::Error::other(format!(
                "dbus-daemon printed no address: {}",
                log.trim()
            )));
        }
        Ok(bus)
    }

    /// The bus's D-Bus address (`unix:path=…,guid=…`).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Kills the daemon now, as a bus that goes away would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh 0700 dir for one bus.
fn private_dir() -> std::io::Result<PathBuf> {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let name = format!(
        "berth-dbus-{}-{}-{nanos}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    let dir = std::env::temp_dir().join(name);
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// A configuration that listens on `socket` only and lets every local client own any name.
fn bus_config(socket: &Path) -> String {
    let socket = socket
        .display()
        .to_string()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#
    )
}

/// A fake's bus call took longer than [`CALL_TIMEOUT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a bus call took more than {}s", CALL_TIMEOUT.as_secs())]
pub struct CallTimedOut;

/// Runs `future` on `runtime` and waits for it, bounded; unlike `block_on` this works from any
/// thread, inside another runtime's context too.
pub fn run_on<F>(runtime: &tokio::runtime::Runtime, future: F) -> Result<F::Output, CallTimedOut>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (sender, receiver) = mpsc::sync_channel(1);
    runtime.spawn(async move {
        let _ = sender.send(future.await);
    });
    receiver.recv_timeout(CALL_TIMEOUT).map_err(|_| CallTimedOut)
}
