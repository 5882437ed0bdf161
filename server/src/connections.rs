//! The table of client connections: how many there are, when each last sent a request, which
//! ones subscribed, and the closing of idle ones.
//!
//! A client that connects and never sends must not hold a place for ever: a connection without
//! a subscription that sends nothing for [`idle_timeout`] is closed by its own task, and when
//! the table is full a new client takes the place of a connection without a subscription:
//! the oldest one that never sent a request, else the longest idle; so `berth ls` always gets
//! in, and a flood of silent connections pushes out only each other. Only when every place is held by a subscriber is
//! a new client answered `BUSY`. This module decides; the socket's tasks do the closing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// How long a connection without a subscription may stay silent before it is closed.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The idle timeout: [`DEFAULT_IDLE_TIMEOUT`], or `BERTH_IDLE_TIMEOUT_MS` (for tests) when set
/// to a whole number of milliseconds of at least 1.
pub fn idle_timeout() -> Duration {
    std::env::var("BERTH_IDLE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&ms| ms >= 1)
        .map_or(DEFAULT_IDLE_TIMEOUT, Duration::from_millis)
}

/// Every open connection.
#[derive(Default)]
pub struct Connections {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    open: HashMap<u64, Entry>,
}

struct Entry {
    last_active: Instant,
    /// Whether the client ever sent a request.
    spoke: bool,
    subscribed: bool,
    evict: Arc<Notify>,
}

/// Why a new connection was not admitted.
#[derive(Debug, PartialEq, Eq)]
pub struct Full {
    /// The limit.
    pub max: usize,
}

impl Connections {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The table is plain data, consistent after every statement.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits a new connection. At `max` open connections, the longest-idle one without a
    /// subscription is told to close and gives up its place; with none such, the new one is
    /// refused.
    pub fn admit(self: &Arc<Self>, max: usize) -> Result<Connection, Full> {
        let mut inner = self.lock();
        if inner.open.len() >= max {
            let victim = inner
                .open
                .iter()
                .filter(|(_, e)| !e.subscribed)
                .min_by_key(|(_, e)| (e.spoke, e.last_active))
                .map(|(id, _)| *id);
            let Some(victim) = victim else { return Err(Full { max }) };
            if let Some(entry) = inner.open.remove(&victim) {
                // A stored permit: the task sees it at its next wait even if not waiting now.
                entry.evict.notify_one();
            }
        }
        let id = inner.next_id;
        inner.next_id += 1;
        let evict = Arc::new(Notify::new());
        inner.open.insert(
            id,
            Entry {
                last_active: Instant::now(),
                spoke: false,
                subscribed: false,
                evict: evict.clone(),
            },
        );
        Ok(Connection { table: self.clone(), id, evict })
    }

    /// How many connections hold a place.
    pub fn len(&self) -> usize {
        self.lock().open.len()
    }

    /// Whether no connection holds a place.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One admitted connection; gives its place back when dropped.
pub struct Connection {
    table: Arc<Connections>,
    id: u64,
    /// Notified when this connection must close to make room for a new client; its task
    /// watches it while idle and while writing (a client that does not read must not keep a
    /// task blocked on a write after giving up its place).
    pub evict: Arc<Notify>,
}

impl Connection {
    /// Records a request from the client (or an answer to it).
    pub fn touch(&self) {
        if let Some(e) = self.table.lock().open.get_mut(&self.id) {
            e.last_active = Instant::now();
            e.spoke = true;
        }
    }

    /// Records that the client subscribed to events: it is never closed for being idle.
    pub fn set_subscribed(&self) {
        if let Some(e) = self.table.lock().open.get_mut(&self.id) {
            e.subscribed = true;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.table.lock().open.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_evicts_the_longest_idle_unsubscribed_connection() {
        let table = Arc::new(Connections::default());
        let a = table.admit(3).unwrap();
        let b = table.admit(3).unwrap();
        let c = table.admit(3).unwrap();
        a.set_subscribed();
        b.touch();
        std::thread::sleep(Duration::from_millis(2));
        // c never sent anything: it goes before b, which spoke (even though b is idle longer).
        let d = table.admit(3).unwrap();
        assert_eq!(table.len(), 3);
        let permit = c.evict.notified();
        tokio_test_block_on(permit);
        drop(c);
        assert_eq!(table.len(), 3, "the evicted connection's place was already given away");
        // Of connections that all spoke, the longest idle goes.
        d.touch();
        let e = table.admit(3).unwrap();
        tokio_test_block_on(b.evict.notified());
        drop(b);
        e.set_subscribed();
        d.set_subscribed();
        assert_eq!(table.admit(3).err(), Some(Full { max: 3 }), "only subscribers: refused");
        drop(d);
        assert!(table.admit(3).is_ok());
    }

    /// Waits for a future on a one-off runtime.
    fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }
}
