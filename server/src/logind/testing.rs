//! Test support: a fake logind, for the monitor's own tests and for end-to-end tests of the
//! `berth` binary; it runs on a [`PrivateBus`](crate::dbus::testing::PrivateBus).
//!
//! It owns the fake's connection and runtime. It must never connect to the host's own buses.
//! Its calls are synchronous and may be made from any thread, with or without a tokio runtime.
//! Compiled only for tests and with the `testing` feature.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex, MutexGuard};

use nix::poll::{PollFd, PollFlags, PollTimeout};
use zbus::object_server::SignalEmitter;

use crate::dbus::testing::{run_on, CallTimedOut, CALL_TIMEOUT};

/// logind's well-known bus name.
pub const LOGIN1_NAME: &str = "org.freedesktop.login1";
/// The path of logind's manager object.
pub const LOGIN1_PATH: &str = "/org/freedesktop/login1";

/// How a [`FakeLogind`] starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FakeLogindOptions {
    /// The `PreparingForShutdown` property at start.
    pub preparing_for_shutdown: bool,
    /// Whether `Inhibit` fails with `AccessDenied` (changeable with [`FakeLogind::set_refuse_inhibit`]).
    pub refuse_inhibit: bool,
}

/// One `Inhibit` call the fake granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InhibitorInfo {
    /// The `what` argument, e.g. `shutdown`.
    pub what: String,
    /// The `who` argument.
    pub who: String,
    /// The `why` argument.
    pub why: String,
    /// The `mode` argument, `delay` or `block`.
    pub mode: String,
    /// Whether every copy of the fd the caller got has been closed.
    pub released: bool,
}

/// A granted inhibitor: the caller got the read end of a pipe, the fake keeps the write end and
/// sees the release as POLLERR on it once every read end is closed.
#[derive(Debug)]
struct GrantedInhibitor {
    what: String,
    who: String,
    why: String,
    mode: String,
    write_end: OwnedFd,
}

impl GrantedInhibitor {
    fn released(&self) -> bool {
        let mut fds = [PollFd::new(self.write_end.as_fd(), PollFlags::empty())];
        match nix::poll::poll(&mut fds, PollTimeout::ZERO) {
            Ok(_) => fds[0]
                .revents()
                .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)),
            Err(_) => false,
        }
    }

    fn info(&self) -> InhibitorInfo {
        InhibitorInfo {
            what: self.what.clone(),
            who: self.who.clone(),
            why: self.why.clone(),
            mode: self.mode.clone(),
            released: self.released(),
        }
    }
}

#[derive(Debug, Default)]
struct FakeState {
    preparing_for_shutdown: bool,
    refuse_inhibit: bool,
    inhibit_calls: usize,
    granted: Vec<GrantedInhibitor>,
}

type SharedState = Arc<Mutex<FakeState>>;

fn lock(state: &SharedState) -> MutexGuard<'_, FakeState> {
    // The state is plain data that a panic cannot leave half-changed.
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `org.freedesktop.login1.Manager` interface that [`FakeLogind`] serves.
#[derive(Debug)]
pub struct FakeLoginManager {
    state: SharedState,
}

#[zbus::interface(name = "org.freedesktop.login1.Manager")]
impl FakeLoginManager {
    /// Grants an inhibitor (the read end of a pipe) or, when told to, refuses it.
    fn inhibit(
        &self,
        what: &str,
        who: &str,
        why: &str,
        mode: &str,
    ) -> zbus::fdo::Result<zbus::OwnedFd> {
        let mut state = lock(&self.state);
        state.inhibit_calls += 1;
        if state.refuse_inhibit {
            return Err(zbus::fdo::Error::AccessDenied(
                "the fake logind refuses inhibitors".into(),
            ));
        }
        let (read_end, write_end) =
            nix::unistd::pipe().map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?;
        state.granted.push(GrantedInhibitor {
            what: what.to_owned(),
            who: who.to_owned(),
            why: why.to_owned(),
            mode: mode.to_owned(),
            write_end,
        });
        Ok(zbus::OwnedFd::from(read_end))
    }

    /// Whether a shutdown is under way.
    #[zbus(property(emits_changed_signal = "false"))]
    fn preparing_for_shutdown(&self) -> bool {
        lock(&self.state).preparing_for_shutdown
    }

    /// Sent when a shutdown starts (`true`) or is cancelled (`false`).
    #[zbus(signal)]
    async fn prepare_for_shutdown(emitter: &SignalEmitter<'_>, start: bool) -> zbus::Result<()>;
}

/// Why the fake could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum FakeLogindError {
    /// Its runtime could not start.
    #[error("cannot start the fake logind's runtime: {0}")]
    Runtime(std::io::Error),
    /// A bus call failed.
    #[error("fake logind: {0}")]
    Bus(#[from] zbus::Error),
    /// A bus call took longer than the fake waits.
    #[error("fake logind: a bus call took more than {}s", CALL_TIMEOUT.as_secs())]
    TimedOut,
}

impl From<CallTimedOut> for FakeLogindError {
    fn from(_: CallTimedOut) -> Self {
        FakeLogindError::TimedOut
    }
}

/// A fake systemd-logind on a (private) bus: it owns `org.freedesktop.login1`, serves the manager
/// at `/org/freedesktop/login1`, grants or refuses inhibitors and sends `PrepareForShutdown`.
///
/// It runs on a small tokio runtime of its own, so a synchronous test can drive it.
pub struct FakeLogind {
    runtime: Option<tokio::runtime::Runtime>,
    connection: zbus::Connection,
    state: SharedState,
}

impl std::fmt::Debug for FakeLogind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLogind").field("state", &self.state).finish_non_exhaustive()
    }
}

impl FakeLogind {
    /// Starts a fake logind on the bus at `address` with default options: not shutting down,
    /// inhibitors granted.
    pub fn start(address: &str) -> Result<FakeLogind, FakeLogindError> {
        FakeLogind::start_with(address, FakeLogindOptions::default())
    }

    /// Starts a fake logind on the bus at `address`; it owns the name once this returns.
    pub fn start_with(
        address: &str,
        options: FakeLogindOptions,
    ) -> Result<FakeLogind, FakeLogindError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fake-logind")
            .enable_all()
            .build()
            .map_err(FakeLogindError::Runtime)?;
        let state = SharedState::default();
        {
            let mut s = lock(&state);
            s.preparing_for_shutdown = options.preparing_for_shutdown;
            s.refuse_inhibit = options.refuse_inhibit;
        }
        let manager = FakeLoginManager { state: state.clone() };
        let address = address.to_owned();
        let connection = run_on(&runtime, async move {
            zbus::connection::Builder::address(address.as_str())
                .name(LOGIN1_NAME)
                .serve_at(LOGIN1_PATH, manager)
                .build()
                .await
        })??;
        Ok(FakeLogind { runtime: Some(runtime), connection, state })
    }

    /// Sets `PreparingForShutdown` to `start` and sends `PrepareForShutdown(start)`, as logind
    /// does when a shutdown starts (`true`) or is cancelled (`false`).
    pub fn prepare_for_shutdown(&self, start: bool) -> Result<(), FakeLogindError> {
        self.set_preparing_for_shutdown(start);
        let connection = self.connection.clone();
        run_on(self.runtime(), async move {
            let manager =
                connection.object_server().interface::<_, FakeLoginManager>(LOGIN1_PATH).await?;
            FakeLoginManagerSignals::prepare_for_shutdown(&manager, start).await
        })??;
        Ok(())
    }

    /// Sets `PreparingForShutdown` without sending a signal.
    pub fn set_preparing_for_shutdown(&self, preparing: bool) {
        lock(&self.state).preparing_for_shutdown = preparing;
    }

    /// Makes `Inhibit` fail (`true`) or succeed (`false`) from now on.
    pub fn set_refuse_inhibit(&self, refuse: bool) {
        lock(&self.state).refuse_inhibit = refuse;
    }

    /// How many `Inhibit` calls arrived, granted or refused.
    pub fn inhibit_calls(&self) -> usize {
        lock(&self.state).inhibit_calls
    }

    /// Every inhibitor granted so far, oldest first, with whether it has been released.
    pub fn inhibitors(&self) -> Vec<InhibitorInfo> {
        lock(&self.state).granted.iter().map(GrantedInhibitor::info).collect()
    }

    /// How many granted inhibitors are still held.
    pub fn held_inhibitors(&self) -> usize {
        lock(&self.state).granted.iter().filter(|g| !g.released()).count()
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        // Only `drop` takes the runtime out.
        self.runtime.as_ref().expect("the fake logind's runtime lives until it is dropped")
    }
}

impl Drop for FakeLogind {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Unlike dropping it, this is allowed inside another runtime's async context.
            runtime.shutdown_background();
        }
    }
}
