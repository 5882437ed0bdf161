//! What the server's two D-Bus clients share: the desktop notifier
//! (`notifications::desktop`, session bus) and the logind shutdown monitor (`logind`, system
//! bus).
//!
//! It owns their configuration ([`BusConfig`]: on or off, which bus, how long to wait between
//! attempts), the off switch read from the environment ([`switch_on`]), the bounded connection
//! ([`connect`]) and the doubling waits of one outage ([`BackoffTimer`]). It must not know either
//! client's interfaces, and never reads the host's buses on its own: a client asks it to
//! connect. Its `testing` module (tests and the `testing` feature only) holds the private
//! `dbus-daemon` that every D-Bus test runs on.

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::fmt;
use std::future::poll_fn;
use std::pin::Pin;
use std::time::Duration;

use futures_core::Stream;

/// The longest a connection attempt (socket and authentication) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest one method call on a connection may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The bus a service lives on, used when no address is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bus {
    /// The user's session bus (`DBUS_SESSION_BUS_ADDRESS`): the notification service.
    Session,
    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket): logind.
    System,
}

impl fmt::Display for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bus::Session => "session",
            Bus::System => "system",
        })
    }
}

/// How long a client waits between attempts: `initial`, doubling up to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the first failure.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for Backoff {
    /// One second, doubling to a minute.
    fn default() -> Self {
        Backoff { initial: Duration::from_secs(1), max: Duration::from_secs(60) }
    }
}

/// The waits of one retry sequence of a [`Backoff`].
#[derive(Debug)]
pub struct BackoffTimer {
    policy: Backoff,
    next: Duration,
}

impl BackoffTimer {
    /// A sequence that starts at the policy's initial wait.
    pub fn new(policy: Backoff) -> Self {
        BackoffTimer { policy, next: policy.initial }
    }

    /// The wait before the next attempt; each call doubles the one after, up to the maximum.
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next.min(self.policy.max);
        self.next = delay.saturating_mul(2).min(self.policy.max);
        delay
    }

    /// Starts over at the initial wait, after a success.
    pub fn reset(&mut self) {
        self.next = self.policy.initial;
    }
}

/// Whether and where a D-Bus client connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusConfig {
    /// False turns the client into a no-op (its environment switch is `0`).
    pub enabled: bool,
    /// The bus address; `None` is the bus the service lives on ([`Bus`]), as zbus finds it.
    pub address: Option<String>,
    /// The waits before trying again after the bus or the service was missing.
    pub backoff: Backoff,
}

impl BusConfig {
    /// The configuration from the environment: off when the variable `switch` is `0`, else
    /// the service's own bus.
    pub fn from_env(switch: &str) -> Self {
        BusConfig {
            enabled: switch_on(std::env::var_os(switch).as_deref()),
            address: None,
            backoff: Backoff::default(),
        }
    }

    /// Enabled, on the bus at `address` (a D-Bus address such as
    /// `unix:path=/run/dbus/system_bus_socket`); tests point it at a private bus.
    pub fn for_address(address: impl Into<String>) -> Self {
        BusConfig { enabled: true, address: Some(address.into()), backoff: Backoff::default() }
    }

    /// A client that does nothing.
    pub fn disabled() -> Self {
        BusConfig { enabled: false, address: None, backoff: Backoff::default() }
    }

    /// The same configuration with other waits between attempts.
    #[must_use]
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }
}

/// Whether the value of a client's environment switch leaves it on: anything but `0` does.
pub fn switch_on(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_none_or(|value| value != "0")
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The bus refused the connection or is not there.
    #[error("cannot connect to the {bus} bus: {error}")]
    Connect {
        /// The bus the client wanted.
        bus: Bus,
        /// What zbus said.
        error: zbus::Error,
    },
    /// The socket or the authentication took longer than [`CONNECT_TIMEOUT`].
    #[error("connecting to the {bus} bus took more than {}s", CONNECT_TIMEOUT.as_secs())]
    TimedOut {
        /// The bus the client wanted.
        bus: Bus,
    },
}

/// Connects to the bus `config` names (else to `bus`), within [`CONNECT_TIMEOUT`], with
/// [`CALL_TIMEOUT`] on every method call made over the connection.
pub async fn connect(config: &BusConfig, bus: Bus) -> Result<zbus::Connection, ConnectError> {
    let builder = match (&config.address, bus) {
        (Some(address), _) => zbus::connection::Builder::address(address.as_str()),
        (None, Bus::Session) => zbus::connection::Builder::session(),
        (None, Bus::System) => zbus::connection::Builder::system(),
    };
    tokio::time::timeout(CONNECT_TIMEOUT, builder.method_timeout(CALL_TIMEOUT).build())
        .await
        .map_err(|_| ConnectError::TimedOut { bus })?
        .map_err(|error| ConnectError::Connect { bus, error })
}

/// The next item of a stream (a signal subscription), `None` when it ended.
pub async fn next_item<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_bound_and_resets() {
        let mut timer = BackoffTimer::new(Backoff::default());
        let waits: Vec<u64> = (0..9).map(|_| timer.next_delay().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        timer.reset();
        assert_eq!(timer.next_delay(), Duration::from_secs(1));
    }

    #[test]
    fn a_missing_bus_is_named_in_the_error() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let config = BusConfig::for_address("unix:path=/nonexistent/berth-test/bus");
        let error = runtime.block_on(connect(&config, Bus::System)).unwrap_err();
        assert!(error.to_string().starts_with("cannot connect to the system bus: "), "{error}");
    }
}
