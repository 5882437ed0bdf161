//! Test support: a fake freedesktop notification server on a private bus, for the notifier's own
//! tests and for end-to-end tests of the `berth` binary.
//!
//! It owns the fake's connection, its runtime and the record of calls. It must never connect to
//! the host's own buses: it is always given an address, normally a
//! [`PrivateBus`](crate::dbus::testing::PrivateBus)'s. Its calls are synchronous and may be made
//! from any thread, with or without a tokio runtime. Compiled only for tests and with the
//! `testing` feature.
//!
//! Like real servers (GNOME Shell's daemon, dunst), it sends `ActionInvoked` and
//! `NotificationClosed` only to the connection that called `Notify`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use zbus::message::Header;
use zbus::names::BusName;
use zbus::object_server::SignalEmitter;
use zbus::OwnedVariant;

use super::{NOTIFICATIONS_NAME, NOTIFICATIONS_PATH};
use crate::dbus::testing::{run_on, CallTimedOut, CALL_TIMEOUT};

/// The capabilities the fake reports unless told otherwise.
pub const DEFAULT_CAPABILITIES: &[&str] = &["actions", "body"];

/// `NotificationClosed` reason: dismissed by the user.
pub const CLOSED_DISMISSED: u32 = 2;
/// `NotificationClosed` reason: closed by a `CloseNotification` call.
pub const CLOSED_BY_CALL: u32 = 3;

/// One `Notify` call the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyCall {
    /// The caller's unique bus name.
    pub sender: String,
    /// The `app_name` argument.
    pub app_name: String,
    /// The `replaces_id` argument (0 for a new notification).
    pub replaces_id: u32,
    /// The `app_icon` argument.
    pub app_icon: String,
    /// The `summary` argument (the title).
    pub summary: String,
    /// The `body` argument.
    pub body: String,
    /// The `actions` argument: key, label, key, label, …
    pub actions: Vec<String>,
    /// The `urgency` hint, when it was given as a byte.
    pub urgency: Option<u8>,
    /// The `expire_timeout` argument.
    pub expire_timeout: i32,
    /// The id the fake answered with.
    pub id: u32,
}

#[derive(Debug, Default)]
struct FakeState {
    capabilities: Vec<String>,
    last_id: u32,
    calls: Vec<NotifyCall>,
    close_calls: Vec<u32>,
    /// Shown notifications and the unique name of the connection that sent each.
    open: HashMap<u32, String>,
}

type SharedState = Arc<Mutex<FakeState>>;

fn lock(state: &SharedState) -> MutexGuard<'_, FakeState> {
    // The state is plain data that a panic cannot leave half-changed.
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `org.freedesktop.Notifications` interface that [`FakeNotificationServer`] serves.
#[derive(Debug)]
pub struct FakeNotifications {
    state: SharedState,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl FakeNotifications {
    /// Records the call and answers with a new id, or with `replaces_id` when that one is shown.
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        #[zbus(header)] header: Header<'_>,
        app_name: String,
        replaces_id: u32,
        app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        hints: HashMap<String, OwnedVariant>,
        expire_timeout: i32,
    ) -> u32 {
        let sender = header.sender().map(|name| name.to_string()).unwrap_or_default();
        let urgency = hints.get("urgency").and_then(|value| u8::try_from(value).ok());
        let mut state = lock(&self.state);
        let id = if replaces_id != 0 && state.open.contains_key(&replaces_id) {
            replaces_id
        } else {
            state.last_id += 1;
            state.last_id
        };
        state.open.insert(id, sender.clone());
        state.calls.push(NotifyCall {
            sender,
            app_name,
            replaces_id,
            app_icon,
            summary,
            body,
            actions,
            urgency,
            expire_timeout,
            id,
        });
        id
    }

    /// Records the call; a shown notification goes away with `NotificationClosed(id, 3)`.
    async fn close_notification(
        &self,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        id: u32,
    ) -> zbus::fdo::Result<()> {
        let sender = {
            let mut state = lock(&self.state);
            state.close_calls.push(id);
            state.open.remove(&id)
        };
        if let Some(sender) = sender {
            let emitter = emitter.set_destination(bus_name(&sender)?);
            FakeNotifications::notification_closed(&emitter, id, CLOSED_BY_CALL).await?;
        }
        Ok(())
    }

    /// The capabilities the fake was started with.
    fn get_capabilities(&self) -> Vec<String> {
        lock(&self.state).capabilities.clone()
    }

    /// Name, vendor, version and spec version.
    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "Berth test notification server".to_owned(),
            "Berth".to_owned(),
            "0".to_owned(),
            "1.2".to_owned(),
        )
    }

    /// Sent when the user invokes an action.
    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;

    /// Sent just before `ActionInvoked`: a token to raise the invoked program's window.
    #[zbus(signal)]
    async fn activation_token(
        emitter: &SignalEmitter<'_>,
        id: u32,
        activation_token: &str,
    ) -> zbus::Result<()>;

    /// Sent when a notification goes away.
    #[zbus(signal)]
    async fn notification_closed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        reason: u32,
    ) -> zbus::Result<()>;
}

fn bus_name(unique: &str) -> zbus::fdo::Result<BusName<'static>> {
    BusName::try_from(unique.to_owned())
        .map_err(|error| zbus::fdo::Error::Failed(format!("bad sender {unique:?}: {error}")))
}

/// Why the fake could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum FakeNotificationError {
    /// Its runtime could not start.
    #[error("cannot start the fake notification server's runtime: {0}")]
    Runtime(std::io::Error),
    /// A bus call failed.
    #[error("fake notification server: {0}")]
    Bus(#[from] zbus::Error),
    /// A bus call took longer than the fake waits.
    #[error("fake notification server: a bus call took more than {}s", CALL_TIMEOUT.as_secs())]
    TimedOut,
    /// No notification with that id is shown.
    #[error("fake notification server: no notification {0} is shown")]
    UnknownId(u32),
}

impl From<CallTimedOut> for FakeNotificationError {
    fn from(_: CallTimedOut) -> Self {
        FakeNotificationError::TimedOut
    }
}

/// A fake desktop notification server: it owns `org.freedesktop.Notifications` on the bus it is
/// given, serves it at `/org/freedesktop/Notifications`, records what it is asked, and clicks
/// or dismisses notifications on request. It runs on a small tokio runtime of its own, so a
/// synchronous test can drive it.
pub struct FakeNotificationServer {
    runtime: Option<tokio::runtime::Runtime>,
    connection: zbus::Connection,
    state: SharedState,
}

impl std::fmt::Debug for FakeNotificationServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeNotificationServer").field("state", &self.state).finish_non_exhaustive()
    }
}

impl FakeNotificationServer {
    /// Starts the fake on the bus at `address` with [`DEFAULT_CAPABILITIES`]; it owns the name
    /// once this returns.
    pub fn start(address: &str) -> Result<FakeNotificationServer, FakeNotificationError> {
        FakeNotificationServer::start_with_capabilities(address, DEFAULT_CAPABILITIES)
    }

    /// Starts the fake reporting `capabilities` (add `body-markup` to see bodies escaped).
    pub fn start_with_capabilities(
        address: &str,
        capabilities: &[&str],
    ) -> Result<FakeNotificationServer, FakeNotificationError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("fake-notifications")
            .enable_all()
            .build()
            .map_err(FakeNotificationError::Runtime)?;
        let state = SharedState::default();
        lock(&state).capabilities = capabilities.iter().map(|&c| c.to_owned()).collect();
        let server = FakeNotifications { state: state.clone() };
        let address = address.to_owned();
        let connection = run_on(&runtime, async move {
            zbus::connection::Builder::address(address.as_str())
                .name(NOTIFICATIONS_NAME)
                .serve_at(NOTIFICATIONS_PATH, server)
                .build()
                .await
        })??;
        Ok(FakeNotificationServer { runtime: Some(runtime), connection, state })
    }

    /// Every `Notify` call so far, oldest first.
    pub fn calls(&self) -> Vec<NotifyCall> {
        lock(&self.state).calls.clone()
    }

    /// How many `Notify` calls arrived.
    pub fn call_count(&self) -> usize {
        lock(&self.state).calls.len()
    }

    /// The ids of every `CloseNotification` call so far, oldest first.
    pub fn close_calls(&self) -> Vec<u32> {
        lock(&self.state).close_calls.clone()
    }

    /// Whether notification `id` is shown now.
    pub fn is_open(&self, id: u32) -> bool {
        lock(&self.state).open.contains_key(&id)
    }

    /// Acts like a user's click: sends `ActionInvoked(id, action_key)` and then
    /// `NotificationClosed(id, 2)` to the connection that showed it.
    pub fn invoke_action(&self, id: u32, action_key: &str) -> Result<(), FakeNotificationError> {
        self.invoke_action_with_token(id, action_key, None)
    }

    /// [`FakeNotificationServer::invoke_action`], preceded by `ActivationToken(id, token)` as a
    /// server that supports activation tokens sends it.
    pub fn invoke_action_with_token(
        &self,
        id: u32,
        action_key: &str,
        token: Option<&str>,
    ) -> Result<(), FakeNotificationError> {
        let sender =
            lock(&self.state).open.remove(&id).ok_or(FakeNotificationError::UnknownId(id))?;
        let emitter = self.emitter_to(&sender)?;
        let action_key = action_key.to_owned();
        let token = token.map(str::to_owned);
        run_on(self.runtime(), async move {
            if let Some(token) = token {
                FakeNotifications::activation_token(&emitter, id, &token).await?;
            }
            FakeNotifications::action_invoked(&emitter, id, &action_key).await?;
            FakeNotifications::notification_closed(&emitter, id, CLOSED_DISMISSED).await
        })??;
        Ok(())
    }

    /// Closes notification `id` from the server's side (expired: 1, dismissed: 2, other: 4)
    /// and sends `NotificationClosed(id, reason)` to the connection that showed it.
    pub fn close_from_server(&self, id: u32, reason: u32) -> Result<(), FakeNotificationError> {
        let sender =
            lock(&self.state).open.remove(&id).ok_or(FakeNotificationError::UnknownId(id))?;
        let emitter = self.emitter_to(&sender)?;
        run_on(self.runtime(), async move {
            FakeNotifications::notification_closed(&emitter, id, reason).await
        })??;
        Ok(())
    }

    /// The unique names of the connections that sent notifications, without repeats.
    pub fn senders(&self) -> HashSet<String> {
        lock(&self.state).calls.iter().map(|call| call.sender.clone()).collect()
    }

    fn emitter_to(&self, sender: &str) -> Result<SignalEmitter<'static>, FakeNotificationError> {
        let destination = BusName::try_from(sender.to_owned())?;
        Ok(SignalEmitter::new(&self.connection, NOTIFICATIONS_PATH)?.set_destination(destination))
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        // Only `drop` takes the runtime out.
        self.runtime.as_ref().expect("the fake's runtime lives until it is dropped")
    }
}

impl Drop for FakeNotificationServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Unlike dropping it, this is allowed inside another runtime's async context.
            runtime.shutdown_background();
        }
    }
}
