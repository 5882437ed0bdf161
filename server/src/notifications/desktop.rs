//! Desktop notifications: shows Berth's notifications through the freedesktop notification
//! service (`org.freedesktop.Notifications` on the session bus) and reports clicks on them back.
//!
//! It owns one session-bus connection, a bounded queue of notes waiting to be sent, and the map
//! between Berth's notification keys and the ids the notification server assigns. It must not
//! decide *whether* to notify (the Store does: focus, rate limits, OSC 99 `o=`), must not clean
//! up text beyond bounding its length and escaping markup (the caller sanitises), and must not
//! touch Store state: a click is reported through [`OnActivate`]. It never blocks its callers or
//! the server's startup; a missing bus or notification service is logged once at warn level and
//! never fatal, and is retried on the next notification after a backoff.
//!
//! # Why it speaks the protocol itself instead of using notify-rust
//!
//! The stack names notify-rust 4.19. Its source shows two problems for a long-running server:
//!
//! - `Notification::show_async` opens a new session-bus connection for every notification
//!   (`zbus::Connection::session()` in `connect_and_send_notification_at_bus`): an authentication
//!   handshake and a new bus name each time. It cannot send over a connection the caller owns
//!   (`send_notification_via_connection` is private), nor to an explicit bus address, which the
//!   tests need (they must not change the process environment).
//! - Notification servers send `ActionInvoked` and `NotificationClosed` by unicast to the
//!   connection that called `Notify` (GNOME Shell's daemon and dunst do), so a click can only be
//!   heard on that same connection. With notify-rust every outstanding notification would need
//!   its handle, and with it its own bus connection, kept alive, plus its own
//!   `wait_for_action_async` future with its own match rules: one connection and one listener per
//!   notification instead of one for all.
//!
//! So this module calls `Notify`, `CloseNotification` and `GetCapabilities` through a zbus proxy
//! on one connection and listens for both signals on that connection, with the same wire format
//! notify-rust uses (app name, replaces id, icon, summary, body, actions, an `urgency` byte hint,
//! timeout -1).
//!
//! Its bus configuration, connection and backoff are the shared ones of [`crate::dbus`].

#[cfg(any(test, feature = "testing"))]
pub mod testing;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use futures_core::Stream;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::dbus::{self, next_item, BackoffTimer, Bus, BusConfig};

/// The environment variable that turns desktop notifications off when it is `0`.
pub const ENV_SWITCH: &str = "BERTH_DESKTOP_NOTIFY";

/// The application name every notification carries.
pub const APP_NAME: &str = "Berth";

/// The key of the action a click on the notification invokes.
pub const DEFAULT_ACTION: &str = "default";

/// The label of the default action, for servers that show it as a button.
const DEFAULT_ACTION_LABEL: &str = "Show";

/// The well-known bus name of the notification service.
pub const NOTIFICATIONS_NAME: &str = "org.freedesktop.Notifications";

/// The object path of the notification service.
pub const NOTIFICATIONS_PATH: &str = "/org/freedesktop/Notifications";

/// The most notes waiting to be sent; when full, the oldest waiting note is dropped and counted.
pub const QUEUE_CAPACITY: usize = 64;

/// The most shown notifications whose server ids are remembered; the oldest is forgotten first.
pub const TRACKED_CAPACITY: usize = 256;

/// The longest title sent, in characters.
pub const TITLE_MAX_CHARS: usize = 256;

/// The longest body sent, in characters.
pub const BODY_MAX_CHARS: usize = 2048;

/// `expire_timeout` -1: the server's own default.
const EXPIRE_DEFAULT: i32 = -1;

/// The typed proxy for the freedesktop notification interface.
#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    /// Shows a notification, or replaces the one with `replaces_id`; returns its id.
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, zbus::Variant<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    /// Withdraws a notification; the server answers with `NotificationClosed`.
    fn close_notification(&self, id: u32) -> zbus::Result<()>;

    /// What the server supports, e.g. `actions`, `body`, `body-markup`.
    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    /// The user invoked an action (`default` for a click on the notification itself).
    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: String) -> zbus::Result<()>;

    /// A notification went away (1 expired, 2 dismissed, 3 closed by a call, 4 other).
    #[zbus(signal)]
    fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;

    /// The token that lets the invoked notification's program raise its window (xdg-activation
    /// on Wayland, startup notification on X11); sent just before `ActionInvoked` (spec 1.2).
    #[zbus(signal)]
    fn activation_token(&self, id: u32, activation_token: String) -> zbus::Result<()>;
}

/// Activation tokens kept for notifications not invoked yet; a server sends one just before
/// the `ActionInvoked` it belongs to, so a few are plenty.
const MAX_TOKENS: usize = 16;

/// The most bytes of an activation token passed on (tokens are short; a huge one is dropped).
const MAX_TOKEN_BYTES: usize = 4096;

/// How urgent a notification is, as the freedesktop `urgency` hint says it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Urgency {
    /// Background information.
    Low,
    /// The usual.
    #[default]
    Normal,
    /// Needs attention now; servers usually keep it until dismissed.
    Critical,
}

impl Urgency {
    /// The value of the `urgency` hint (a byte: 0, 1 or 2).
    pub fn hint_value(self) -> u8 {
        match self {
            Urgency::Low => 0,
            Urgency::Normal => 1,
            Urgency::Critical => 2,
        }
    }
}

/// One notification to show on the desktop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopNote {
    /// Berth's id of the notification (`notif_…`); a click reports it back.
    pub key: String,
    /// The summary line; cut to [`TITLE_MAX_CHARS`].
    pub title: String,
    /// The body; cut to [`BODY_MAX_CHARS`].
    pub body: String,
    /// How urgent it is.
    pub urgency: Urgency,
    /// The key of an earlier notification this one updates in place (kitty's `i=`).
    pub replaces_key: Option<String>,
    /// Actions (key, label) shown beside the click (a decision's options); invoking one is
    /// reported through [`OnAction`].
    pub actions: Vec<(String, String)>,
}

/// Called with a notification's key when the user clicks it, and the activation token the
/// notification server handed over for it, if any (the window raises itself with it). It runs
/// on the notifier's task and must return quickly: send a command, don't do the work there.
pub type OnActivate = Arc<dyn Fn(String, Option<String>) + Send + Sync>;

/// Called with a notification's key and an action's key when the user invokes one of the
/// note's own [`DesktopNote::actions`]. Like [`OnActivate`], it must return quickly.
pub type OnAction = Arc<dyn Fn(String, String) + Send + Sync>;

/// Whether and where desktop notifications go: `address` `None` is the session bus, and
/// [`BusConfig::from_env`] reads [`ENV_SWITCH`].
pub type DesktopConfig = BusConfig;

/// What the notifier has done so far, for tests and status output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DesktopStatus {
    /// Whether the notifier runs at all.
    pub enabled: bool,
    /// Whether the last attempt to reach the notification service worked.
    pub service_available: bool,
    /// Notifications the service accepted.
    pub sent: u64,
    /// Notifications not shown because the bus or the service was missing or refused them.
    pub failed: u64,
    /// Notifications never sent: pushed out of the full queue, or superseded or closed while
    /// still waiting.
    pub dropped: u64,
    /// Notes and closes waiting to be sent now (at most [`QUEUE_CAPACITY`]).
    pub queued: usize,
    /// Shown notifications whose server ids are remembered (at most [`TRACKED_CAPACITY`]).
    pub tracked: usize,
    /// How many times it has tried to connect to the bus.
    pub connect_attempts: u64,
    /// The last failure, until the service works again.
    pub last_error: Option<String>,
}

/// Sends Berth's notifications to the desktop. Cheap to clone; the sender task stops when the
/// last clone is dropped.
#[derive(Clone)]
pub struct DesktopNotifier {
    shared: Arc<Shared>,
    _task: Arc<TaskGuard>,
}

impl fmt::Debug for DesktopNotifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DesktopNotifier").field("status", &self.status()).finish_non_exhaustive()
    }
}

impl DesktopNotifier {
    /// Starts the sender on the current tokio runtime, unless the configuration disables it.
    ///
    /// It never blocks startup and is never fatal: it connects in the background, and outside a
    /// runtime it logs a warning and returns a notifier that does nothing.
    pub fn spawn(config: DesktopConfig, on_activate: OnActivate) -> DesktopNotifier {
        Self::spawn_with_actions(config, on_activate, None)
    }

    /// [`DesktopNotifier::spawn`], and invoked actions of a note's own go to `on_action`.
    pub fn spawn_with_actions(
        config: DesktopConfig,
        on_activate: OnActivate,
        on_action: Option<OnAction>,
    ) -> DesktopNotifier {
        if !config.enabled {
            tracing::info!("{ENV_SWITCH}=0: desktop notifications are off");
            return DesktopNotifier::idle();
        }
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::warn!(%error, "desktop notifications are off: no async runtime");
                return DesktopNotifier::idle();
            }
        };
        let shared = Arc::new(Shared::new(true));
        let mut worker = Worker::new(shared.clone(), config, on_activate);
        worker.on_action = on_action;
        let task = runtime.spawn(worker.run());
        DesktopNotifier { shared, _task: Arc::new(TaskGuard(Some(task))) }
    }

    /// A notifier that drops everything without counting it.
    fn idle() -> DesktopNotifier {
        DesktopNotifier { shared: Arc::new(Shared::new(false)), _task: Arc::new(TaskGuard(None)) }
    }

    /// Queues one notification. It never blocks and may be called from any thread; when the
    /// queue is full the oldest waiting notification is dropped and counted.
    pub fn notify(&self, note: DesktopNote) {
        if self.shared.running {
            self.shared.queue().push_show(note);
            self.shared.wake.notify_one();
        }
    }

    /// Withdraws a shown notification (kitty's `p=close`, or the user read it in Berth). A note
    /// still waiting to be sent is dropped instead.
    pub fn close(&self, key: &str) {
        if self.shared.running {
            self.shared.queue().push_close(key);
            self.shared.wake.notify_one();
        }
    }

    /// Whether it shows notifications: it runs and the notification service answered its
    /// last attempt (or none has failed yet: the probe at start is still out, and counting it
    /// as shown means a notification is never shown twice, by this server and by a window).
    pub fn delivers(&self) -> bool {
        if !self.shared.running {
            return false;
        }
        let status = self.shared.status();
        status.service_available || status.last_error.is_none()
    }

    /// What it has sent, failed, dropped, and whether the service is there.
    pub fn status(&self) -> DesktopStatus {
        let mut status = self.shared.status().clone();
        let queue = self.shared.queue();
        status.enabled = self.shared.running;
        status.dropped = queue.dropped;
        status.queued = queue.commands.len();
        status
    }
}

/// Stops the sender task when the last [`DesktopNotifier`] clone goes.
struct TaskGuard(Option<JoinHandle<()>>);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// What the handles and the sender task share.
struct Shared {
    /// Whether a sender task runs; without one nothing is queued.
    running: bool,
    /// The commands waiting for the sender. Bound: [`QUEUE_CAPACITY`]; when full, the oldest
    /// waiting note is dropped (counted in `dropped`), so callers never wait.
    queue: Mutex<CommandQueue>,
    /// Wakes the sender when a command is queued.
    wake: tokio::sync::Notify,
    /// The sender's counters (all but `dropped` and `queued`, which the queue keeps).
    status: Mutex<DesktopStatus>,
}

impl Shared {
    fn new(running: bool) -> Shared {
        Shared {
            running,
            queue: Mutex::new(CommandQueue::default()),
            wake: tokio::sync::Notify::new(),
            status: Mutex::new(DesktopStatus::default()),
        }
    }

    fn queue(&self) -> MutexGuard<'_, CommandQueue> {
        // The queue is plain data that a panic cannot leave half-changed.
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn status(&self) -> MutexGuard<'_, DesktopStatus> {
        // Plain counters that a panic cannot leave inconsistent.
        self.status.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn update(&self, change: impl FnOnce(&mut DesktopStatus)) {
        change(&mut self.status());
    }
}

/// One thing for the sender to do.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Command {
    Show(DesktopNote),
    Close(String),
}

/// The bounded queue between the handles and the sender task.
#[derive(Debug, Default)]
struct CommandQueue {
    commands: VecDeque<Command>,
    /// Notes that were never sent: pushed out, superseded or closed while waiting.
    dropped: u64,
}

impl CommandQueue {
    /// Queues a note. A waiting note that this one replaces is dropped, and this one takes over
    /// what that one was going to replace.
    fn push_show(&mut self, mut note: DesktopNote) {
        if let Some(replaced) = note.replaces_key.as_deref() {
            if let Some(superseded) = self.take_waiting_show(replaced) {
                note.replaces_key = superseded.replaces_key;
            }
        }
        self.push(Command::Show(note));
    }

    /// Queues a close. A note with that key still waiting is dropped instead (it was never
    /// shown), and what it was going to replace is closed in its place.
    fn push_close(&mut self, key: &str) {
        match self.take_waiting_show(key) {
            Some(DesktopNote { replaces_key: Some(replaced), .. }) => {
                self.push(Command::Close(replaced));
            }
            Some(_) => {}
            None => self.push(Command::Close(key.to_owned())),
        }
    }

    /// Removes the waiting note with `key`, counting it as dropped.
    fn take_waiting_show(&mut self, key: &str) -> Option<DesktopNote> {
        let index = self
            .commands
            .iter()
            .position(|command| matches!(command, Command::Show(note) if note.key == key))?;
        self.dropped += 1;
        match self.commands.remove(index) {
            Some(Command::Show(note)) => Some(note),
            _ => None,
        }
    }

    /// Appends, first making room by dropping the oldest waiting note (or, with none, the oldest
    /// close).
    fn push(&mut self, command: Command) {
        if self.commands.len() >= QUEUE_CAPACITY {
            let oldest_show =
                self.commands.iter().position(|c| matches!(c, Command::Show(_))).unwrap_or(0);
            self.commands.remove(oldest_show);
            self.dropped += 1;
        }
        self.commands.push_back(command);
    }

    fn pop(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }
}

/// The two-way map between Berth's keys and the server's ids of shown notifications, bounded
/// to [`TRACKED_CAPACITY`] (the oldest is forgotten first).
#[derive(Debug)]
struct TrackedIds {
    by_key: HashMap<String, u32>,
    by_id: HashMap<u32, String>,
    /// Ids, oldest first.
    order: VecDeque<u32>,
    capacity: usize,
}

impl TrackedIds {
    fn new(capacity: usize) -> TrackedIds {
        TrackedIds {
            by_key: HashMap::new(),
            by_id: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Remembers that `key` is shown as `id`. A key that had that id before (the one a
    /// replacement replaced) is forgotten.
    fn insert(&mut self, key: String, id: u32) {
        self.forget_id(id);
        self.forget_key(&key);
        while self.order.len() >= self.capacity {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some(old_key) = self.by_id.remove(&oldest) {
                self.by_key.remove(&old_key);
            }
        }
        self.by_key.insert(key.clone(), id);
        self.by_id.insert(id, key);
        self.order.push_back(id);
    }

    fn id_of(&self, key: &str) -> Option<u32> {
        self.by_key.get(key).copied()
    }

    fn key_of(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(String::as_str)
    }

    fn forget_id(&mut self, id: u32) -> Option<String> {
        let key = self.by_id.remove(&id)?;
        self.by_key.remove(&key);
        self.order.retain(|&tracked| tracked != id);
        Some(key)
    }

    fn forget_key(&mut self, key: &str) -> Option<u32> {
        let id = self.by_key.remove(key)?;
        self.by_id.remove(&id);
        self.order.retain(|&tracked| tracked != id);
        Some(id)
    }

    fn clear(&mut self) {
        self.by_key.clear();
        self.by_id.clear();
        self.order.clear();
    }

    fn len(&self) -> usize {
        self.by_id.len()
    }
}

/// `text` cut to at most `max_chars` characters, the last of them `…` when it was cut.
fn bound(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some(_) => {
            let keep = max_chars.saturating_sub(1);
            let end = text.char_indices().nth(keep).map_or(text.len(), |(at, _)| at);
            let mut cut = text[..end].to_owned();
            if max_chars > 0 {
                cut.push('…');
            }
            cut
        }
    }
}

/// `text` with the characters that the notification body markup gives meaning escaped, so a
/// program's output can't add links, images or formatting.
fn escape_markup(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// What the notification server said it supports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Capabilities {
    /// It shows actions (a click invokes `default`).
    actions: bool,
    /// It reads the body as markup, so text must be escaped.
    body_markup: bool,
}

impl Capabilities {
    fn from_names(names: &[String]) -> Capabilities {
        Capabilities {
            actions: names.iter().any(|name| name == "actions"),
            body_markup: names.iter().any(|name| name == "body-markup"),
        }
    }
}

/// Why the bus could not be reached.
#[derive(Debug, thiserror::Error)]
enum LinkError {
    #[error(transparent)]
    Connect(#[from] dbus::ConnectError),
    #[error("cannot subscribe to the notification service's signals: {0}")]
    Subscribe(zbus::Error),
}

/// Whether a failed call means the service (or the bus) is not there, rather than that the
/// service refused this one notification.
fn means_unavailable(error: &zbus::Error) -> bool {
    use zbus::fdo::Error as Fdo;
    match error {
        zbus::Error::InputOutput(_) | zbus::Error::Handshake(_) | zbus::Error::Address(_) => true,
        zbus::Error::FDO(error) => matches!(
            **error,
            Fdo::ServiceUnknown(_)
                | Fdo::NameHasNoOwner(_)
                | Fdo::NoReply(_)
                | Fdo::Timeout(_)
                | Fdo::TimedOut(_)
                | Fdo::Disconnected(_)
                | Fdo::NoServer(_)
                | Fdo::UnknownObject(_)
                | Fdo::UnknownInterface(_)
                | Fdo::UnknownMethod(_)
                | Fdo::SpawnFailed(_)
                | Fdo::SpawnExecFailed(_)
                | Fdo::SpawnChildExited(_)
                | Fdo::SpawnServiceNotFound(_)
        ),
        _ => false,
    }
}

/// Whether a failed call means the connection itself is gone.
fn means_link_lost(error: &zbus::Error) -> bool {
    matches!(error, zbus::Error::InputOutput(_))
}

/// One connection to the bus, with the signal subscriptions on it.
struct Link {
    connection: zbus::Connection,
    proxy: NotificationsProxy<'static>,
    /// Both signals on one stream, so a click is always seen before the close that follows it.
    signals: zbus::proxy::SignalStream<'static>,
}

/// Connects to the bus and subscribes to both signals. A missing service is not an error here:
/// the subscriptions follow the name, and the first call finds out.
async fn connect(config: &DesktopConfig) -> Result<Link, LinkError> {
    let connection = dbus::connect(config, Bus::Session).await?;
    let proxy = NotificationsProxy::builder(&connection)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(LinkError::Subscribe)?;
    let signals = proxy.inner().receive_all_signals().await.map_err(LinkError::Subscribe)?;
    Ok(Link { connection, proxy, signals })
}

/// The result of a call that was in flight.
enum Outcome {
    Shown {
        key: String,
        /// Capabilities fetched for this call, when they were not known before.
        capabilities: Option<Capabilities>,
        result: zbus::Result<u32>,
    },
    Closed {
        result: zbus::Result<()>,
    },
}

/// A bus call in flight; polled together with the signal streams so that the connection's
/// queues keep draining while it waits for the reply.
type Call = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// What woke the sender.
enum Wake {
    Finished(Outcome),
    Signal(zbus::Message),
    LinkLost,
    Queued,
}

/// The sender task's state.
struct Worker {
    shared: Arc<Shared>,
    config: DesktopConfig,
    on_activate: OnActivate,
    on_action: Option<OnAction>,
    /// Activation tokens by notification id, oldest first (at most [`MAX_TOKENS`]).
    tokens: VecDeque<(u32, String)>,
    link: Option<Link>,
    /// Known after a successful `GetCapabilities` on this link.
    capabilities: Option<Capabilities>,
    /// Whether the last attempt to reach the service worked.
    available: bool,
    /// While the service is missing: no attempt before this.
    next_attempt: Option<Instant>,
    /// The doubling waits of one outage.
    retry: BackoffTimer,
    ids: TrackedIds,
    in_flight: Option<Call>,
    /// Whether the first outage was logged at warn level; later ones go to info.
    warned: bool,
    /// Whether this outage was logged.
    outage_logged: bool,
}

impl Worker {
    fn new(shared: Arc<Shared>, config: DesktopConfig, on_activate: OnActivate) -> Worker {
        let retry = BackoffTimer::new(config.backoff);
        Worker {
            shared,
            config,
            on_activate,
            on_action: None,
            tokens: VecDeque::new(),
            link: None,
            capabilities: None,
            available: false,
            next_attempt: None,
            retry,
            ids: TrackedIds::new(TRACKED_CAPACITY),
            in_flight: None,
            warned: false,
            outage_logged: false,
        }
    }

    /// Probes the service once, then sends what is queued and listens for clicks, until the
    /// task is aborted.
    async fn run(mut self) {
        self.probe().await;
        loop {
            if self.in_flight.is_none() {
                let next = self.shared.queue().pop();
                if let Some(command) = next {
                    self.start(command).await;
                    continue;
                }
            }
            let wake = {
                let idle = self.in_flight.is_none();
                let in_flight = &mut self.in_flight;
                let (signals, connection) = match &mut self.link {
                    Some(link) => (Some(&mut link.signals), Some(link.connection.clone())),
                    None => (None, None),
                };
                tokio::select! {
                    biased;
                    outcome = finish(in_flight) => Wake::Finished(outcome),
                    signal = next_signal(signals) => signal.map_or(Wake::LinkLost, Wake::Signal),
                    () = link_closed(connection) => Wake::LinkLost,
                    () = self.shared.wake.notified(), if idle => Wake::Queued,
                }
            };
            match wake {
                Wake::Finished(outcome) => {
                    self.in_flight = None;
                    self.finished(outcome);
                }
                Wake::Signal(message) => self.signal(message),
                Wake::LinkLost => self.link_lost(),
                Wake::Queued => {}
            }
        }
    }

    /// Connects and asks for the capabilities at startup, so a missing service is reported
    /// early. Nothing else is on the connection yet, so waiting inline is safe.
    async fn probe(&mut self) {
        if !self.ensure_link().await {
            return;
        }
        let Some(link) = &self.link else { return };
        match link.proxy.get_capabilities().await {
            Ok(names) => {
                let capabilities = Capabilities::from_names(&names);
                if !capabilities.actions {
                    tracing::info!(
                        "the desktop's notification service shows no actions: clicking a \
                         notification will not focus Berth"
                    );
                }
                self.capabilities = Some(capabilities);
                self.service_works();
            }
            Err(error) if means_unavailable(&error) => self.call_failed(error),
            // It answers but does not list capabilities: assume plain text and try anyway.
            Err(_) => {
                self.capabilities = Some(Capabilities::default());
                self.service_works();
            }
        }
    }

    /// Connects when there is no connection; false (and the failure noted) when that fails.
    async fn ensure_link(&mut self) -> bool {
        if self.link.is_some() {
            return true;
        }
        self.shared.update(|s| s.connect_attempts += 1);
        match connect(&self.config).await {
            Ok(link) => {
                self.link = Some(link);
                true
            }
            Err(error) => {
                self.service_missing(&error);
                false
            }
        }
    }

    /// Whether an attempt may be made now: always while the service works, else once the
    /// backoff has passed.
    fn attempt_due(&self) -> bool {
        self.available || self.next_attempt.is_none_or(|at| Instant::now() >= at)
    }

    async fn start(&mut self, command: Command) {
        match command {
            Command::Show(note) => self.start_show(note).await,
            Command::Close(key) => self.start_close(&key),
        }
    }

    async fn start_show(&mut self, note: DesktopNote) {
        if !self.attempt_due() || !self.ensure_link().await {
            self.shared.update(|s| s.failed += 1);
            return;
        }
        let Some(link) = &self.link else { return };
        let proxy = link.proxy.clone();
        let known = self.capabilities;
        let replaces_id =
            note.replaces_key.as_deref().and_then(|key| self.ids.id_of(key)).unwrap_or(0);
        let DesktopNote { key, title, body, urgency, actions, .. } = note;
        let title = bound(&title, TITLE_MAX_CHARS);
        let body = bound(&body, BODY_MAX_CHARS);
        self.in_flight = Some(Box::pin(async move {
            let (capabilities, fetched) = match known {
                Some(capabilities) => (capabilities, None),
                None => match proxy.get_capabilities().await {
                    Ok(names) => {
                        let capabilities = Capabilities::from_names(&names);
                        (capabilities, Some(capabilities))
                    }
                    Err(error) if means_unavailable(&error) => {
                        return Outcome::Shown { key, capabilities: None, result: Err(error) };
                    }
                    Err(_) => (Capabilities::default(), Some(Capabilities::default())),
                },
            };
            let body = if capabilities.body_markup { escape_markup(&body) } else { body };
            let mut hints = HashMap::new();
            hints.insert("urgency", zbus::Variant::U8(urgency.hint_value()));
            let mut action_list = vec![DEFAULT_ACTION, DEFAULT_ACTION_LABEL];
            for (action, label) in &actions {
                action_list.extend([action.as_str(), label.as_str()]);
            }
            let result = proxy
                .notify(
                    APP_NAME,
                    replaces_id,
                    "",
                    &title,
                    &body,
                    &action_list,
                    hints,
                    EXPIRE_DEFAULT,
                )
                .await;
            Outcome::Shown { key, capabilities: fetched, result }
        }));
    }

    fn start_close(&mut self, key: &str) {
        let Some(id) = self.ids.forget_key(key) else { return };
        self.note_tracked();
        if !self.available {
            return;
        }
        let Some(link) = &self.link else { return };
        let proxy = link.proxy.clone();
        self.in_flight = Some(Box::pin(async move {
            Outcome::Closed { result: proxy.close_notification(id).await }
        }));
    }

    fn finished(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Shown { key, capabilities, result } => {
                if capabilities.is_some() {
                    self.capabilities = capabilities;
                }
                match result {
                    Ok(id) => {
                        self.service_works();
                        self.ids.insert(key, id);
                        self.note_tracked();
                        self.shared.update(|s| s.sent += 1);
                    }
                    Err(error) => {
                        self.shared.update(|s| s.failed += 1);
                        self.call_failed(error);
                    }
                }
            }
            Outcome::Closed { result: Ok(()) } => {}
            Outcome::Closed { result: Err(error) } => {
                tracing::debug!(%error, "closing a desktop notification failed");
                if means_unavailable(&error) {
                    self.call_failed(error);
                }
            }
        }
    }

    fn signal(&mut self, message: zbus::Message) {
        if let Some(signal) = ActivationToken::from_message(message.clone()) {
            match signal.args() {
                Ok(args) if args.activation_token().len() <= MAX_TOKEN_BYTES => {
                    if self.tokens.len() >= MAX_TOKENS {
                        self.tokens.pop_front();
                    }
                    self.tokens.push_back((*args.id(), args.activation_token().clone()));
                }
                Ok(_) => tracing::debug!("ignoring an oversized activation token"),
                Err(error) => tracing::debug!(%error, "ignoring a malformed ActivationToken"),
            }
        } else if let Some(signal) = ActionInvoked::from_message(message.clone()) {
            self.action_invoked(&signal);
        } else if let Some(signal) = NotificationClosed::from_message(message) {
            self.notification_closed(&signal);
        }
    }

    fn action_invoked(&mut self, signal: &ActionInvoked) {
        let args = match signal.args() {
            Ok(args) => args,
            Err(error) => {
                tracing::debug!(%error, "ignoring a malformed ActionInvoked signal");
                return;
            }
        };
        let Some(key) = self.ids.key_of(*args.id()) else {
            tracing::debug!(id = args.id(), "a click on a notification Berth no longer tracks");
            return;
        };
        let key = key.to_owned();
        let token = self.take_token(*args.id());
        if args.action_key() != DEFAULT_ACTION {
            let Some(on_action) = self.on_action.clone() else { return };
            let action = args.action_key().to_owned();
            if std::panic::catch_unwind(AssertUnwindSafe(|| on_action(key, action))).is_err() {
                tracing::error!("the handler for a desktop notification's action panicked");
            }
            return;
        }
        let on_activate = self.on_activate.clone();
        if std::panic::catch_unwind(AssertUnwindSafe(|| on_activate(key, token))).is_err() {
            tracing::error!("the handler for a click on a desktop notification panicked");
        }
    }

    /// The activation token the server sent for notification `id`, if any.
    fn take_token(&mut self, id: u32) -> Option<String> {
        let at = self.tokens.iter().rposition(|(of, _)| *of == id)?;
        self.tokens.remove(at).map(|(_, token)| token)
    }

    fn notification_closed(&mut self, signal: &NotificationClosed) {
        match signal.args() {
            Ok(args) => {
                self.ids.forget_id(*args.id());
                self.note_tracked();
            }
            Err(error) => tracing::debug!(%error, "ignoring a malformed NotificationClosed signal"),
        }
    }

    /// A call failed: decide whether the service is gone, and whether the connection is.
    fn call_failed(&mut self, error: zbus::Error) {
        if means_link_lost(&error) {
            self.drop_link();
        }
        if means_unavailable(&error) {
            self.service_missing(&error);
        } else {
            tracing::debug!(%error, "the notification service refused a notification");
            self.shared.update(|s| s.last_error = Some(error.to_string()));
        }
    }

    /// The bus or the service is missing: note it, log it (at warn the first time only), and
    /// wait before the next attempt.
    fn service_missing(&mut self, error: &dyn fmt::Display) {
        self.available = false;
        self.capabilities = None;
        self.next_attempt = Some(Instant::now() + self.retry.next_delay());
        self.shared.update(|s| {
            s.service_available = false;
            s.last_error = Some(error.to_string());
        });
        if std::mem::replace(&mut self.outage_logged, true) {
            tracing::debug!(%error, "desktop notifications: still unavailable");
        } else if std::mem::replace(&mut self.warned, true) {
            tracing::info!(%error, "desktop notifications are unavailable again; retrying later");
        } else {
            tracing::warn!(
                %error,
                "desktop notifications are off until a notification service answers; Berth \
                 still keeps them (`berth notifications`) and tries again later \
                 ({ENV_SWITCH}=0 turns this off)"
            );
        }
    }

    /// The service answered.
    fn service_works(&mut self) {
        if !self.available && std::mem::take(&mut self.outage_logged) {
            tracing::info!("desktop notifications work again");
        }
        self.available = true;
        self.next_attempt = None;
        self.retry.reset();
        self.shared.update(|s| {
            s.service_available = true;
            s.last_error = None;
        });
    }

    /// The connection closed while idle: forget it and reconnect on the next notification.
    fn link_lost(&mut self) {
        if self.link.is_none() {
            return;
        }
        tracing::info!("lost the session bus connection; reconnecting on the next notification");
        self.drop_link();
        self.available = false;
        self.next_attempt = None;
        self.shared.update(|s| s.service_available = false);
    }

    /// Forgets the connection and every id shown through it.
    fn drop_link(&mut self) {
        self.link = None;
        self.capabilities = None;
        self.ids.clear();
        self.note_tracked();
    }

    fn note_tracked(&self) {
        let tracked = self.ids.len();
        self.shared.update(|s| s.tracked = tracked);
    }
}

/// Waits for the call in flight, or forever when there is none.
async fn finish(call: &mut Option<Call>) -> Outcome {
    match call {
        Some(call) => call.await,
        None => std::future::pending().await,
    }
}

/// The next signal of a stream, `None` when it ended, or never without a stream.
async fn next_signal<S: Stream + Unpin>(stream: Option<&mut S>) -> Option<S::Item> {
    match stream {
        Some(stream) => next_item(stream).await,
        None => std::future::pending().await,
    }
}

/// Resolves when the connection closes, or never without one.
async fn link_closed(connection: Option<zbus::Connection>) {
    match connection {
        Some(connection) => connection.closed().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests;
