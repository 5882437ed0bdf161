//! The socket's way to the window: the requests only the window can answer ([`UiRequest`]) and
//! the [`UiBridge`] that queues them and wakes the window's event loop.
//!
//! A leaf: both the server (which makes the bridge) and the socket (which sends on it) import
//! it, so it must not import either.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// The longest server address `window.servers` takes.
pub const MAX_SERVER_ADDRESS: usize = 4096;

/// What `window.servers` asks of the window's links to other servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServersOp {
    /// Say which there are.
    List,
    /// Link one more: a socket path or an `ssh://` address.
    Add(String),
    /// Drop the one of this name.
    Remove(String),
}

/// The answer of `window.servers`: the window's servers after the change, its own first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WindowServersReply {
    /// Each server.
    pub servers: Vec<WindowServerEntry>,
}

/// One of the window's servers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WindowServerEntry {
    /// The name its sidebar group goes by (what `remove` takes).
    pub name: String,
    /// Its address as given (`None`: the window's own server).
    pub address: Option<String>,
    /// How its link stands: `connected`, `reconnecting in 4 s`, `unreachable: …`.
    pub status: String,
}

/// What the window must do for a client.
#[derive(Debug)]
pub enum UiRequest {
    /// Change or list the window's links to other servers; the answer is the list after.
    Servers {
        /// What to do.
        op: ServersOp,
        /// Where the answer goes.
        reply: tokio::sync::oneshot::Sender<Result<WindowServersReply, String>>,
    },
    /// Render a tab (the active one when `None`) and answer with PNG bytes.
    Screenshot {
        /// The tab to draw.
        tab: Option<String>,
        /// Where the answer goes.
        reply: tokio::sync::oneshot::Sender<Result<Vec<u8>, String>>,
    },
}

/// What wakes the window's event loop, set by the window once it runs.
pub(crate) type UiWaker = Arc<Mutex<Option<Box<dyn Fn() + Send>>>>;

/// The socket's way to reach the window: a queue and a function that wakes its event loop.
#[derive(Clone)]
pub struct UiBridge {
    tx: std::sync::mpsc::Sender<UiRequest>,
    waker: UiWaker,
}

impl UiBridge {
    /// A bridge that queues on `tx` and wakes the window with `waker`.
    pub(crate) fn new(tx: std::sync::mpsc::Sender<UiRequest>, waker: UiWaker) -> Self {
        UiBridge { tx, waker }
    }

    /// Queues a request and wakes the window.
    pub fn send(&self, request: UiRequest) -> Result<(), String> {
        self.tx.send(request).map_err(|_| "the window is gone".to_owned())?;
        if let Some(wake) = self.waker.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            wake();
        }
        Ok(())
    }
}
