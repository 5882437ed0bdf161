//! Watches systemd-logind (`org.freedesktop.login1` on the system bus) for the host shutting
//! down, and holds a delay inhibitor so that the shutdown waits for Berth's save.
//!
//! It owns the system-bus connection, the inhibitor's file descriptor and the retry loop. It must
//! not touch Store state itself: on a shutdown notice it calls the [`ShutdownSave`] it was given,
//! on a blocking thread, and only logs the result. It never blocks or delays the server's
//! startup: a missing bus, a missing logind or a refused inhibitor is retried in the background
//! with bounded exponential backoff. `BERTH_LOGIND=0` turns it off.
//!
//! The sequence, as logind documents it for delay locks: take a `delay` inhibitor for
//! `shutdown` and keep its fd open; on `PrepareForShutdown(true)` save, then close the fd so
//! logind may go on; on `PrepareForShutdown(false)` (the shutdown was cancelled) take a new one.
//! If `PreparingForShutdown` is already true when the monitor connects, logind would refuse a new
//! inhibitor, so the monitor saves at once without one.
//!
//! Its bus configuration, connection and backoff are the shared ones of [`crate::dbus`].

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::fmt;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::dbus::{self, next_item, BackoffTimer, Bus, BusConfig};

/// What the monitor calls when the host is about to shut down. It runs on a blocking thread and
/// should save state; its result is only logged.
pub type ShutdownSave = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The environment variable that turns the monitor off when it is `0`.
pub const ENV_SWITCH: &str = "BERTH_LOGIND";

/// The lock the monitor takes: `shutdown` only (not `sleep`), so suspend is never delayed.
const INHIBIT_WHAT: &str = "shutdown";
/// Who holds the lock, as `systemd-inhibit --list` shows it.
const INHIBIT_WHO: &str = "Berth";
/// Why, as `systemd-inhibit --list` shows it.
const INHIBIT_WHY: &str = "Saving terminal sessions";
/// A delay lock: logind waits for it to be released (up to its `InhibitDelayMaxSec`).
const INHIBIT_MODE: &str = "delay";

/// The typed proxy for the part of logind's manager interface the monitor uses.
#[zbus::proxy(
    interface = "org.freedesktop.login1.Manager",
    default_service = "org.freedesktop.login1",
    default_path = "/org/freedesktop/login1"
)]
trait LoginManager {
    /// Takes an inhibitor lock; it lasts until every copy of the returned fd is closed.
    fn inhibit(&self, what: &str, who: &str, why: &str, mode: &str) -> zbus::Result<zbus::OwnedFd>;

    /// Sent with `true` when a shutdown starts and with `false` when it is cancelled.
    #[zbus(signal)]
    fn prepare_for_shutdown(&self, start: bool) -> zbus::Result<()>;

    /// Whether a shutdown is under way. logind sends no change signal for it, so it is not cached.
    #[zbus(property(emits_changed_signal = "false"))]
    fn preparing_for_shutdown(&self) -> zbus::Result<bool>;
}

/// Where and whether the monitor connects: `address` `None` is the system bus, and
/// [`BusConfig::from_env`] reads [`ENV_SWITCH`].
pub type MonitorConfig = BusConfig;

/// What the monitor has done so far, for tests and for status output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MonitorStatus {
    /// Whether the monitor runs at all.
    pub enabled: bool,
    /// Whether it is connected to the bus and subscribed to logind's signal.
    pub connected: bool,
    /// Whether it holds a delay inhibitor now.
    pub inhibitor_held: bool,
    /// How many shutdown saves have run (whatever their result).
    pub shutdown_saves: u64,
    /// How many times it has tried to connect to the bus.
    pub connect_attempts: u64,
    /// How many times it has asked logind for an inhibitor.
    pub inhibit_attempts: u64,
    /// The last failure, if the last attempt of its kind failed.
    pub last_error: Option<String>,
}

/// The status, shared between the monitor's task and its handle.
#[derive(Debug, Clone, Default)]
struct StatusCell(Arc<Mutex<MonitorStatus>>);

impl StatusCell {
    fn update(&self, change: impl FnOnce(&mut MonitorStatus)) {
        // A panic while holding this lock cannot leave the plain counters inconsistent.
        change(&mut self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    }

    fn get(&self) -> MonitorStatus {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

/// A running (or disabled) shutdown monitor. Dropping it stops the monitor and releases any
/// inhibitor it holds.
#[derive(Debug)]
pub struct LogindMonitor {
    task: Option<JoinHandle<()>>,
    status: StatusCell,
}

impl LogindMonitor {
    /// Starts watching the system bus on the current tokio runtime, unless `BERTH_LOGIND=0`.
    ///
    /// It never blocks or delays startup: connection failures (no system bus, no logind,
    /// inhibitor denied) are retried in the background with bounded exponential backoff and
    /// logged once per kind of failure.
    pub fn spawn(save: ShutdownSave) -> LogindMonitor {
        LogindMonitor::spawn_with(MonitorConfig::from_env(ENV_SWITCH), save)
    }

    /// Starts a monitor with an explicit configuration on the current tokio runtime. Outside a
    /// runtime it logs a warning and returns a monitor that does nothing.
    pub fn spawn_with(config: MonitorConfig, save: ShutdownSave) -> LogindMonitor {
        let status = StatusCell::default();
        if !config.enabled {
            tracing::info!("{ENV_SWITCH}=0: not watching logind for host shutdown");
            return LogindMonitor { task: None, status };
        }
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::warn!(%error, "not watching logind for host shutdown: no async runtime");
                status.update(|s| s.last_error = Some(format!("no async runtime: {error}")));
                return LogindMonitor { task: None, status };
            }
        };
        status.update(|s| s.enabled = true);
        let task = runtime.spawn(watch(config, save, status.clone()));
        LogindMonitor { task: Some(task), status }
    }

    /// How many shutdown saves ran, whether an inhibitor is held now, and what failed last.
    pub fn status(&self) -> MonitorStatus {
        self.status.get()
    }
}

impl Drop for LogindMonitor {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// The kinds of failure, each logged once until it recovers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureKind {
    Connect,
    Subscribe,
    ReadState,
    Inhibit,
}

impl FailureKind {
    const ALL: usize = 4;

    fn index(self) -> usize {
        self as usize
    }
}

/// Which kinds of failure have been logged since they last worked.
#[derive(Debug, Default)]
struct FailureLog {
    logged: [bool; FailureKind::ALL],
}

impl FailureLog {
    /// Logs a failure the first time its kind fails; repeats go to the debug level.
    fn failed(&mut self, kind: FailureKind, error: &dyn fmt::Display, status: &StatusCell) {
        status.update(|s| s.last_error = Some(error.to_string()));
        let first = !std::mem::replace(&mut self.logged[kind.index()], true);
        match (kind, first) {
            (FailureKind::Connect, true) => tracing::info!(
                %error,
                "cannot reach the system bus; host-shutdown saves are off until it appears \
                 (retrying in the background; {ENV_SWITCH}=0 turns this off)"
            ),
            (FailureKind::Subscribe | FailureKind::ReadState, true) => {
                tracing::warn!(%error, "cannot watch logind for host shutdown; retrying in the background")
            }
            (FailureKind::Inhibit, true) => tracing::warn!(
                %error,
                "logind gave no shutdown inhibitor; a shutdown save may be cut short (retrying)"
            ),
            (_, false) => tracing::debug!(%error, ?kind, "logind monitor: still failing"),
        }
    }

    /// Notes that a kind works again, saying so if its failure was logged.
    fn recovered(&mut self, kind: FailureKind, status: &StatusCell) {
        if std::mem::take(&mut self.logged[kind.index()]) {
            tracing::info!(?kind, "logind monitor: works again");
            status.update(|s| s.last_error = None);
        }
    }
}

/// Why a connection to logind could not be set up.
#[derive(Debug, thiserror::Error)]
enum ConnectError {
    #[error(transparent)]
    Connect(#[from] dbus::ConnectError),
    #[error("cannot subscribe to logind's PrepareForShutdown signal: {0}")]
    Subscribe(zbus::Error),
}

impl ConnectError {
    fn kind(&self) -> FailureKind {
        match self {
            ConnectError::Connect(_) => FailureKind::Connect,
            ConnectError::Subscribe(_) => FailureKind::Subscribe,
        }
    }
}

/// The monitor's task: connect, watch until the bus goes away, wait, and again, forever.
async fn watch(config: MonitorConfig, save: ShutdownSave, status: StatusCell) {
    let mut failures = FailureLog::default();
    let mut backoff = BackoffTimer::new(config.backoff);
    loop {
        status.update(|s| s.connect_attempts += 1);
        match connect(&config).await {
            Ok((connection, proxy, signals)) => {
                failures.recovered(FailureKind::Connect, &status);
                failures.recovered(FailureKind::Subscribe, &status);
                backoff.reset();
                status.update(|s| s.connected = true);
                tracing::info!("watching logind for host shutdown");
                let mut session = Session {
                    proxy,
                    save: &save,
                    status: &status,
                    failures: &mut failures,
                    inhibitor: None,
                    inhibit_backoff: BackoffTimer::new(config.backoff),
                    next_inhibit: None,
                    in_shutdown: false,
                };
                session.run(&connection, signals).await;
                status.update(|s| {
                    s.connected = false;
                    s.inhibitor_held = false;
                });
                tracing::info!("lost the system bus connection; reconnecting");
            }
            Err(error) => failures.failed(error.kind(), &error, &status),
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// Connects to the bus and subscribes to `PrepareForShutdown`. A missing logind is not an error
/// here: the subscription follows the name, and taking the inhibitor is retried later.
async fn connect(
    config: &MonitorConfig,
) -> Result<(zbus::Connection, LoginManagerProxy<'static>, PrepareForShutdownStream), ConnectError>
{
    let connection = dbus::connect(config, Bus::System).await?;
    let proxy = LoginManagerProxy::builder(&connection)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(ConnectError::Subscribe)?;
    let signals = proxy.receive_prepare_for_shutdown().await.map_err(ConnectError::Subscribe)?;
    Ok((connection, proxy, signals))
}

/// One connection's worth of watching.
struct Session<'a> {
    proxy: LoginManagerProxy<'static>,
    save: &'a ShutdownSave,
    status: &'a StatusCell,
    failures: &'a mut FailureLog,
    /// The delay inhibitor; dropping it closes the fd and releases the lock.
    inhibitor: Option<zbus::OwnedFd>,
    inhibit_backoff: BackoffTimer,
    /// When to ask for an inhibitor next; `None` while one is held or a shutdown is under way.
    next_inhibit: Option<Instant>,
    /// Between `PrepareForShutdown(true)` and `(false)`: saved already, no inhibitor wanted.
    in_shutdown: bool,
}

impl Session<'_> {
    /// Watches until the connection closes.
    async fn run(&mut self, connection: &zbus::Connection, mut signals: PrepareForShutdownStream) {
        // The subscription exists before this read, so a shutdown that starts in between is
        // seen either here or as a signal, and `in_shutdown` keeps it to one save.
        match self.proxy.preparing_for_shutdown().await {
            Ok(true) => {
                tracing::info!("the host was already shutting down when Berth connected to logind");
                self.failures.recovered(FailureKind::ReadState, self.status);
                self.shutdown_started().await;
            }
            Ok(false) => {
                self.failures.recovered(FailureKind::ReadState, self.status);
                self.next_inhibit = Some(Instant::now());
            }
            Err(error) => {
                // Most likely logind is not running; the inhibitor retries will notice it start.
                self.failures.failed(FailureKind::ReadState, &error, self.status);
                self.next_inhibit = Some(Instant::now());
            }
        }
        loop {
            let next_inhibit = self.next_inhibit;
            tokio::select! {
                signal = next_item(&mut signals) => {
                    let Some(signal) = signal else { return };
                    match signal.args() {
                        Ok(args) if *args.start() => self.shutdown_started().await,
                        Ok(_) => self.shutdown_cancelled(),
                        Err(error) => tracing::warn!(%error, "ignoring a malformed PrepareForShutdown signal"),
                    }
                }
                () = connection.closed() => return,
                () = sleep_until(next_inhibit) => self.take_inhibitor().await,
            }
        }
    }

    /// Asks logind for the delay inhibitor; on failure, schedules the next try.
    async fn take_inhibitor(&mut self) {
        self.status.update(|s| s.inhibit_attempts += 1);
        match self.proxy.inhibit(INHIBIT_WHAT, INHIBIT_WHO, INHIBIT_WHY, INHIBIT_MODE).await {
            Ok(fd) => {
                tracing::debug!("holding a logind delay inhibitor for shutdown");
                self.inhibitor = Some(fd);
                self.next_inhibit = None;
                self.inhibit_backoff.reset();
                self.failures.recovered(FailureKind::Inhibit, self.status);
                self.status.update(|s| s.inhibitor_held = true);
            }
            Err(error) => {
                self.failures.failed(FailureKind::Inhibit, &error, self.status);
                self.next_inhibit = Some(Instant::now() + self.inhibit_backoff.next_delay());
            }
        }
    }

    /// The host is shutting down: save once, then release the inhibitor so logind may go on.
    /// Without an inhibitor (logind refused one) it still saves: the save may be cut short, but
    /// trying costs nothing.
    async fn shutdown_started(&mut self) {
        if self.in_shutdown {
            tracing::debug!("already saved for this shutdown");
            return;
        }
        self.in_shutdown = true;
        self.next_inhibit = None;
        tracing::info!(inhibitor = self.inhibitor.is_some(), "the host is shutting down: saving");
        let save = self.save.clone();
        match tokio::task::spawn_blocking(move || save()).await {
            Ok(Ok(())) => tracing::info!("saved for host shutdown"),
            Ok(Err(error)) => tracing::warn!(%error, "the save before host shutdown failed"),
            Err(error) => tracing::error!(%error, "the save before host shutdown panicked"),
        }
        self.status.update(|s| s.shutdown_saves += 1);
        // Closing the fd releases the delay lock.
        if self.inhibitor.take().is_some() {
            tracing::debug!("released the logind delay inhibitor");
        }
        self.status.update(|s| s.inhibitor_held = false);
    }

    /// The shutdown was cancelled: take a new inhibitor for the next one.
    fn shutdown_cancelled(&mut self) {
        tracing::info!("the host shutdown was cancelled");
        self.in_shutdown = false;
        if self.inhibitor.is_none() {
            self.inhibit_backoff.reset();
            self.next_inhibit = Some(Instant::now());
        }
    }
}

/// Sleeps until `deadline`, or forever when there is none.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
