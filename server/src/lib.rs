//! Berth's server: the Store, the JSON-RPC socket, the event bus and a typed client.
//!
//! It must not draw anything. The window embeds it on a thread; `berth server` runs it alone.

pub mod client;
pub mod commands;
pub mod error;
pub mod events;
pub mod pane;
pub mod paths;
pub mod persist;
pub mod protocol;
pub mod socket;
pub mod store;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use events::EventBus;
use pane::OutputPulse;
use socket::BoundSocket;
use store::{Store, StoreConfig};

/// How long shutdown waits for the panes' processes to end.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What a server needs to start.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The socket path.
    pub socket_path: PathBuf,
}

impl ServerConfig {
    /// The configuration from the environment.
    pub fn from_env() -> Self {
        Self { socket_path: paths::socket_path() }
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The socket could not be set up.
    #[error(transparent)]
    Socket(#[from] socket::SocketError),
    /// The async runtime or signal handling could not start.
    #[error("cannot start the server runtime: {0}")]
    Runtime(std::io::Error),
}

/// A server whose socket is bound: the Store and bus exist, nothing is served yet.
pub struct Server {
    socket: BoundSocket,
    store: Arc<Mutex<Store>>,
    bus: EventBus,
    pulse: OutputPulse,
}

impl Server {
    /// Binds the socket (refusing an unsafe dir or a second server) and creates the Store.
    pub fn bind(config: &ServerConfig) -> Result<Server, ServerError> {
        let socket = BoundSocket::bind(&config.socket_path)?;
        let bus = EventBus::default();
        let pulse = OutputPulse::default();
        let store = Store::new(StoreConfig::from_env(config.socket_path.clone()), bus.clone(), pulse.clone());
        Ok(Server { socket, store: Arc::new(Mutex::new(store)), bus, pulse })
    }

    /// The Store, for an in-process client such as the window.
    pub fn store(&self) -> Arc<Mutex<Store>> {
        self.store.clone()
    }

    /// The event bus.
    pub fn bus(&self) -> EventBus {
        self.bus.clone()
    }

    /// Serves until SIGTERM or SIGINT, then ends every pane's process and returns.
    pub fn run_until_signal(self) -> Result<(), ServerError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("berth-server")
            .enable_all()
            .build()
            .map_err(ServerError::Runtime)?;
        runtime.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            let mut term = signal(SignalKind::terminate()).map_err(ServerError::Runtime)?;
            let mut int = signal(SignalKind::interrupt()).map_err(ServerError::Runtime)?;
            tokio::spawn(self.pulse.clone().run(self.bus.clone()));
            tracing::info!(socket = %self.socket.path().display(), pid = std::process::id(), "berth server listening");
            tokio::select! {
                result = self.socket.serve(self.store.clone(), self.bus.clone()) => {
                    result.map_err(ServerError::Runtime)?;
                }
                _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                _ = int.recv() => tracing::info!("SIGINT: shutting down"),
            }
            Ok::<(), ServerError>(())
        })?;
        self.shutdown();
        runtime.shutdown_timeout(Duration::from_secs(1));
        Ok(())
    }

    /// Ends every pane's process, waiting a bounded time.
    fn shutdown(&self) {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let live = store.close_all_ptys();
        if !store.wait_all_exited(SHUTDOWN_GRACE) {
            tracing::warn!("some pane processes had not exited when the server stopped");
        }
        tracing::info!(panes = live.len(), "server stopped");
    }
}
