//! Berth's server: the Store, the JSON-RPC socket, the event bus and a typed client.
//!
//! It must not draw anything. The window embeds it on a thread; `berth server` runs it alone.

pub mod agents;
pub mod client;
mod client_io;
pub mod commands;
pub mod connections;
pub mod control_gate;
pub mod dbus;
pub mod decisions;
pub mod error;
pub mod event;
pub mod events;
pub mod gitctx;
pub mod heavy;
pub mod logind;
pub mod notifications;
pub mod pane;
pub mod pane_search;
pub mod paths;
pub mod persist;
pub mod persistence;
pub mod process;
pub mod protocol;
pub mod restore;
pub mod rlimit;
pub mod screen;
pub mod screen_stream;
pub mod socket;
pub mod store;
pub mod tasks;
pub mod trust;
pub mod ui;
pub mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::ids::PaneId;
use commands::Reply;
use events::EventBus;
use pane::OutputPulse;
use persist::{LoadError, SaveContext, StateDir, StateLock};
use persistence::Persistence;
use socket::{BoundSocket, Services};
use store::{Internal, Store, StoreConfig};
use ui::UiWaker;

pub use ui::{UiBridge, UiRequest};

/// How long shutdown waits for the panes' processes to end.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The most panes auto-resume starts after a boot; the rest are named in the log.
pub const AUTO_RESUME_CAP: usize = 12;

/// The time between two automatic resumes.
pub const AUTO_RESUME_STAGGER: Duration = Duration::from_secs(2);

/// A snapshot older than this starts nothing on its own.
pub const AUTO_RESUME_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// The marker of an auto-resume in progress, in the state dir.
const RESUME_MARKER: &str = "auto-resume.attempt";

/// What a server needs to start.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The socket path.
    pub socket_path: PathBuf,
    /// Move a snapshot written by a newer Berth aside instead of refusing to start.
    pub move_aside_future: bool,
}

impl ServerConfig {
    /// The configuration from the environment.
    pub fn from_env() -> Self {
        Self { socket_path: paths::socket_path(), move_aside_future: false }
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The socket could not be set up.
    #[error(transparent)]
    Socket(#[from] socket::SocketError),
    /// The state dir could not be used.
    #[error(transparent)]
    Persist(#[from] persist::PersistError),
    /// The snapshot was written by a newer Berth.
    #[error(
        "{0} (start with `berth server --move-aside-future` to move it aside and start empty)"
    )]
    FutureSnapshot(LoadError),
    /// The async runtime or signal handling could not start.
    #[error("cannot start the server runtime: {0}")]
    Runtime(std::io::Error),
}

/// A server whose socket is bound and whose state is restored; nothing is served yet.
pub struct Server {
    socket: BoundSocket,
    store: Arc<Mutex<Store>>,
    bus: EventBus,
    pulse: OutputPulse,
    persistence: Persistence,
    state: Arc<StateDir>,
    _state_lock: StateLock,
    /// Panes to resume on their own, most recently active first, and the snapshot's time.
    auto_resume: (Vec<PaneId>, u64),
}

impl Server {
    /// Binds the socket (refusing an unsafe dir or a second server), loads the snapshot and
    /// rebuilds the Store from it.
    pub fn bind(config: &ServerConfig) -> Result<Server, ServerError> {
        rlimit::return_big_frees();
        match rlimit::raise_open_file_limit() {
            Ok(change) if change.after != change.before => {
                tracing::info!(
                    before = change.before,
                    after = change.after,
                    hard = change.hard,
                    "raised the open-file limit"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not raise the open-file limit"),
        }
        let socket = BoundSocket::bind(&config.socket_path)?;
        // Orphans of panes' programs come to the server, not init, so they stay attributable
        // (`trust`); the server reaps them (`trust::reaper::run`).
        if let Err(e) = trust::reaper::become_subreaper() {
            tracing::warn!(error = %e, "cannot become a child subreaper; orphans of panes will \
                look like processes outside Berth");
        }
        let state = Arc::new(StateDir::from_env()?);
        let state_lock = state.lock()?;
        if let Err(e) = nix::unistd::access(state.dir(), nix::unistd::AccessFlags::W_OK) {
            // Said at start, not at the first failed save minutes later.
            let reason = std::io::Error::from(e);
            eprintln!(
                "berth: WARNING: the state dir {} is not writable ({reason}); nothing will be \
                 saved until it is (check its owner and mode, or whether its file system is \
                 mounted read-only)",
                state.dir().display()
            );
            tracing::error!(dir = %state.dir().display(), error = %reason, "state dir not writable");
        }
        let removed = state.cleanup_temp_files()?;
        if !removed.is_empty() {
            tracing::info!(count = removed.len(), "removed temp files left by a killed server");
        }
        let outcome = match state.load() {
            Ok(outcome) => outcome,
            Err(err @ LoadError::FutureVersion { .. }) if config.move_aside_future => {
                let moved = state.move_aside_future()?;
                let moved = moved.map(|p| p.display().to_string()).unwrap_or_default();
                eprintln!("berth: {err}; moved it aside to {moved}; starting empty");
                tracing::warn!(%err, moved, "future snapshot moved aside");
                state.load().map_err(ServerError::FutureSnapshot)?
            }
            Err(err @ LoadError::FutureVersion { .. }) => {
                return Err(ServerError::FutureSnapshot(err))
            }
            Err(LoadError::Persist(err)) => return Err(err.into()),
        };
        if let Some(moved) = &outcome.moved_aside {
            eprintln!(
                "berth: WARNING: the saved state was corrupt and has been moved to {}; starting empty",
                moved.display()
            );
            tracing::error!(moved = %moved.display(), "corrupt snapshot moved aside; starting empty");
        }
        for problem in &outcome.problems {
            eprintln!("berth: WARNING: {problem}");
            tracing::error!(%problem, "snapshot problem");
        }
        if let Some(version) = outcome.migrated_from {
            tracing::info!(from = version, "snapshot migrated from an older version");
        }

        let bus = EventBus::default();
        let pulse = OutputPulse::default();
        let mut store = Store::new(
            StoreConfig::from_env(config.socket_path.clone()),
            bus.clone(),
            pulse.clone(),
        );
        let mut tails = HashMap::new();
        for pane in &outcome.snapshot.panes {
            match state.read_tail(&pane.id) {
                Ok(Some(bytes)) => {
                    tails.insert(pane.id.clone(), restore::decode_tail(&bytes));
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(pane = %pane.id, error = %e, "could not read a pane's tail")
                }
            }
        }
        let saved_at = outcome.snapshot.saved_at;
        let report = match store
            .execute(Internal::Restore { snapshot: Box::new(outcome.snapshot), tails })
        {
            Ok(Reply::Restored { panes, resumable, auto_resume_candidates }) => {
                restore::RestoreReport { panes, resumable, auto_resume_candidates }
            }
            _ => restore::RestoreReport::default(),
        };
        if report.panes > 0 {
            tracing::info!(panes = report.panes, resumable = report.resumable, "state restored");
        }
        let auto_resume = plan_auto_resume(&state, report.auto_resume_candidates, saved_at);
        let store = Arc::new(Mutex::new(store));
        let persistence =
            Persistence::start(state.clone(), store.clone(), auto_resume.0.is_empty());
        let notifier = persistence.clone();
        store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .set_on_change(move || notifier.notify_change());
        Ok(Server {
            socket,
            store,
            bus,
            pulse,
            persistence,
            state,
            _state_lock: state_lock,
            auto_resume,
        })
    }

    /// The Store, for an in-process client such as the window.
    pub fn store(&self) -> Arc<Mutex<Store>> {
        self.store.clone()
    }

    /// The event bus.
    pub fn bus(&self) -> EventBus {
        self.bus.clone()
    }

    /// The socket it answers on (the window's own clients connect to it too).
    pub fn socket_path(&self) -> PathBuf {
        self.socket.path().to_path_buf()
    }

    /// Serves until SIGTERM or SIGINT, then saves, ends every pane's process and returns.
    pub fn run_until_signal(self) -> Result<(), ServerError> {
        let runtime = build_runtime()?;
        runtime.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = signal(SignalKind::terminate()).map_err(ServerError::Runtime)?;
            let mut int = signal(SignalKind::interrupt()).map_err(ServerError::Runtime)?;
            let stop = async {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: saving and shutting down"),
                    _ = int.recv() => tracing::info!("SIGINT: saving and shutting down"),
                }
            };
            self.serve_until(None, stop).await
        })?;
        self.shutdown();
        runtime.shutdown_timeout(Duration::from_secs(1));
        Ok(())
    }

    /// Runs the server on a thread of its own (for the window), until
    /// [`EmbeddedServer::shutdown`] or SIGTERM/SIGINT.
    pub fn spawn_background(self) -> Result<EmbeddedServer, ServerError> {
        let (ui_tx, ui_rx) = std::sync::mpsc::channel();
        let waker: UiWaker = Arc::new(Mutex::new(None));
        let bridge = UiBridge::new(ui_tx, waker.clone());
        let waker_on_exit = waker.clone();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (store, bus) = (self.store.clone(), self.bus.clone());
        let runtime = build_runtime()?;
        let thread = std::thread::Builder::new()
            .name("berth-server".into())
            .spawn(move || {
                let result = runtime.block_on(async {
                    use tokio::signal::unix::{signal, SignalKind};
                    let mut term = signal(SignalKind::terminate()).map_err(ServerError::Runtime)?;
                    let mut int = signal(SignalKind::interrupt()).map_err(ServerError::Runtime)?;
                    let stop = async {
                        tokio::select! {
                            _ = stop_rx => tracing::info!("window closed: saving and shutting down"),
                            _ = term.recv() => tracing::info!("SIGTERM: saving and shutting down"),
                            _ = int.recv() => tracing::info!("SIGINT: saving and shutting down"),
                        }
                    };
                    self.serve_until(Some(bridge), stop).await
                });
                self.shutdown();
                runtime.shutdown_timeout(Duration::from_secs(1));
                // Wake the window so it notices the server has stopped.
                if let Some(wake) = waker_on_exit.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                    wake();
                }
                if let Err(e) = &result {
                    tracing::error!(error = %e, "the embedded server stopped with an error");
                }
            })
            .map_err(ServerError::Runtime)?;
        Ok(EmbeddedServer {
            store,
            bus,
            ui_requests: ui_rx,
            waker,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Serves clients until `stop` completes.
    async fn serve_until(
        &self,
        ui: Option<UiBridge>,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<(), ServerError> {
        tokio::spawn(self.pulse.clone().run(self.bus.clone()));
        gitctx::watch::spawn(self.store.clone());
        tokio::spawn(trust::reaper::run());
        self.start_notifications();
        self.spawn_auto_resume();
        // Held until the server stops: dropping it releases the delay inhibitor.
        let persistence = self.persistence.clone();
        let _logind = logind::LogindMonitor::spawn(Arc::new(move || {
            persistence.save_now(SaveContext::Shutdown).map(|outcome| {
                tracing::info!(panes = outcome.panes, "saved for the host's shutdown");
            })
        }));
        tracing::info!(socket = %self.socket.path().display(), pid = std::process::id(), "berth server listening");
        let services = Services {
            store: self.store.clone(),
            bus: self.bus.clone(),
            persistence: Some(self.persistence.clone()),
            ui,
            windows: Default::default(),
        };
        tokio::select! {
            result = self.socket.serve(services) => result.map_err(ServerError::Runtime)?,
            () = stop => {}
        }
        Ok(())
    }

    /// Starts draining the notification inbox and the desktop sink (on the current runtime).
    fn start_notifications(&self) {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rx) = store.take_inbox_receiver() {
            tokio::spawn(notifications::intake::run_inbox(rx, self.store.clone()));
        }
        let clicked = self.store.clone();
        let acted = self.store.clone();
        let desktop = notifications::desktop::DesktopNotifier::spawn_with_actions(
            notifications::desktop::DesktopConfig::from_env(notifications::desktop::ENV_SWITCH),
            Arc::new(move |key: String, token: Option<String>| {
                let mut store = clicked.lock().unwrap_or_else(|p| p.into_inner());
                let _ = store.execute(Internal::ActivateNotification { id: key, token });
            }),
            Some(Arc::new(move |key: String, action: String| {
                let mut store = acted.lock().unwrap_or_else(|p| p.into_inner());
                let _ = store.execute(Internal::NotificationAction { id: key, action });
            })),
        );
        store.set_desktop(notifications::DesktopHandle(desktop));
    }

    /// Resumes the planned panes one by one, [`AUTO_RESUME_STAGGER`] apart, then lets saves run.
    fn spawn_auto_resume(&self) {
        let (panes, saved_at) = self.auto_resume.clone();
        if panes.is_empty() {
            return;
        }
        let (store, persistence, state) =
            (self.store.clone(), self.persistence.clone(), self.state.clone());
        tokio::spawn(async move {
            for (i, pane) in panes.iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(AUTO_RESUME_STAGGER).await;
                }
                let op = Internal::AutoResume { pane: pane.clone() };
                let result = store.lock().unwrap_or_else(|p| p.into_inner()).execute(op);
                match result {
                    Ok(_) => tracing::info!(%pane, "auto-resumed"),
                    Err(e) => tracing::warn!(%pane, error = %e, "auto-resume failed"),
                }
            }
            let _ = std::fs::remove_file(state.dir().join(RESUME_MARKER));
            tracing::info!(count = panes.len(), saved_at, "auto-resume settled");
            persistence.mark_settled();
            persistence.notify_change();
        });
    }

    /// Saves (as a shutdown save), then ends every pane's process, waiting a bounded time.
    fn shutdown(&self) {
        match self.persistence.shutdown() {
            Ok(outcome) => tracing::info!(panes = outcome.panes, "saved at shutdown"),
            Err(e) => tracing::warn!(error = %e, "no save at shutdown"),
        }
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let live = store.close_all_ptys();
        if !store.wait_all_exited(SHUTDOWN_GRACE) {
            tracing::warn!("some pane processes had not exited when the server stopped");
        }
        tracing::info!(panes = live.len(), "server stopped");
    }

    /// Saves now, as `berth save` would.
    pub fn save_now(&self) -> Result<persistence::SaveOutcome, String> {
        self.persistence.save_now(SaveContext::Explicit { user_closed_all: false })
    }
}

fn build_runtime() -> Result<tokio::runtime::Runtime, ServerError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("berth-server")
        .enable_all()
        .build()
        .map_err(ServerError::Runtime)
}

/// A server running on its own thread inside the window's process.
pub struct EmbeddedServer {
    /// The Store; the window's commands go through `Store::execute` like the socket's.
    pub store: Arc<Mutex<Store>>,
    /// The event bus.
    pub bus: EventBus,
    /// Requests from clients that only the window can answer.
    pub ui_requests: std::sync::mpsc::Receiver<UiRequest>,
    waker: UiWaker,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Sets what wakes the window's event loop when a [`UiRequest`] arrives.
    pub fn set_ui_waker(&self, waker: Box<dyn Fn() + Send>) {
        *self.waker.lock().unwrap_or_else(|p| p.into_inner()) = Some(waker);
    }

    /// Whether the server thread is still running (it ends on SIGTERM or SIGINT too).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Saves, ends every pane's process and waits for the server thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// Which restored panes resume on their own: none from a snapshot older than
/// [`AUTO_RESUME_MAX_AGE`], none if the last boot died while resuming this same snapshot (the
/// marker says so), and at most [`AUTO_RESUME_CAP`], most recently active first.
fn plan_auto_resume(
    state: &StateDir,
    candidates: Vec<PaneId>,
    saved_at: u64,
) -> (Vec<PaneId>, u64) {
    if candidates.is_empty() {
        return (Vec::new(), saved_at);
    }
    let marker = state.dir().join(RESUME_MARKER);
    let age = Duration::from_millis(persist::stamp::now_ms().saturating_sub(saved_at));
    if age > AUTO_RESUME_MAX_AGE {
        tracing::warn!(
            days = age.as_secs() / 86_400,
            "snapshot too old: nothing resumes on its own"
        );
        return (Vec::new(), saved_at);
    }
    if std::fs::read_to_string(&marker).ok().and_then(|s| s.trim().parse::<u64>().ok())
        == Some(saved_at)
    {
        tracing::warn!("the last boot stopped while resuming these panes; not resuming them again");
        let _ = std::fs::remove_file(&marker);
        return (Vec::new(), saved_at);
    }
    let mut panes = candidates;
    if panes.len() > AUTO_RESUME_CAP {
        let rest: Vec<String> = panes[AUTO_RESUME_CAP..].iter().map(ToString::to_string).collect();
        tracing::warn!(cap = AUTO_RESUME_CAP, not_resumed = ?rest, "auto-resume capped");
        panes.truncate(AUTO_RESUME_CAP);
    }
    if let Err(e) = persist::write_atomic(state.fs(), &marker, saved_at.to_string().as_bytes()) {
        tracing::warn!(error = %e, "could not write the auto-resume marker");
    }
    (panes, saved_at)
}
