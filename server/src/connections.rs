//! The table of client connections: how many there are, when each last sent a request, which
//! ones are long-lived (subscribed to events, or waiting for an answer), and the closing of idle
//! ones.
//!
//! A client that connects and never sends must not hold a place for ever: a connection without
//! a subscription that sends nothing for [`idle_timeout`] is closed by its own task, and when
//! the table is full a new client takes the place of a connection that is not long-lived:
//! the oldest one that never sent a request, else the longest idle. Long-lived connections
//! (`events.subscribe`, and while a request waits: `pane.wait`, `decision.request`, …) have a
//! limit of their own, [`MAX_LONG_LIVED`], below the table's: a subscription or wait past it is
//! refused `BUSY` (the connection stays usable for short requests), so at least
//! [`SHORT_RESERVE`] places are always left for short requests and a new client always gets
//! in — `berth ls`, and `berth decide` answering the waiting decisions. This module decides;
//! the socket's tasks do the closing.

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

/// The most connections that subscribe to events or wait for an answer at once.
pub const MAX_LONG_LIVED: usize = 256;

/// The places kept for short requests beyond [`MAX_LONG_LIVED`]: the table holds
/// `MAX_LONG_LIVED + SHORT_RESERVE` connections.
pub const SHORT_RESERVE: usize = 64;

/// The most connections open at once.
pub const MAX_CONNECTIONS: usize = MAX_LONG_LIVED + SHORT_RESERVE;

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
    /// A request of this connection waits for its answer.
    waiting: bool,
    evict: Arc<Notify>,
}

impl Entry {
    /// Subscribed or waiting: never evicted, never idle, counted against [`MAX_LONG_LIVED`].
    fn long_lived(&self) -> bool {
        self.subscribed || self.waiting
    }
}

/// Why a new connection was not admitted (only when every place is long-lived, which
/// [`Connection::hold_long`]'s own limit below the table's prevents).
#[derive(Debug, PartialEq, Eq)]
pub struct Full {
    /// The limit.
    pub max: usize,
}

/// Why a connection may not subscribe or wait now: [`MAX_LONG_LIVED`] others do.
#[derive(Debug, PartialEq, Eq)]
pub struct LongLivedFull {
    /// The limit.
    pub max: usize,
}

impl Connections {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The table is plain data, consistent after every statement.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits a new connection. At `max` open connections, a connection that is not
    /// long-lived (the oldest silent one, else the longest idle) is told to close and gives up
    /// its place; with none such, the new one is refused.
    pub fn admit(self: &Arc<Self>, max: usize) -> Result<Connection, Full> {
        let mut inner = self.lock();
        if inner.open.len() >= max {
            let victim = inner
                .open
                .iter()
                .filter(|(_, e)| !e.long_lived())
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
                waiting: false,
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

    /// Takes a long-lived place for a subscription (`subscribe`, kept until the connection
    /// ends) or a waiting request (released by [`Connection::wait_ended`]); refused when
    /// `max` other connections are long-lived. A connection already long-lived always may.
    pub fn hold_long(&self, subscribe: bool, max: usize) -> Result<(), LongLivedFull> {
        let mut inner = self.table.lock();
        let held = inner.open.values().filter(|e| e.long_lived()).count();
        let Some(entry) = inner.open.get_mut(&self.id) else { return Ok(()) };
        if !entry.long_lived() && held >= max {
            return Err(LongLivedFull { max });
        }
        if subscribe {
            entry.subscribed = true;
        } else {
            entry.waiting = true;
        }
        Ok(())
    }

    /// The waiting request was answered (or dropped): the place is given back unless the
    /// connection also subscribed.
    pub fn wait_ended(&self) {
        if let Some(e) = self.table.lock().open.get_mut(&self.id) {
            e.waiting = false;
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
        a.hold_long(true, 3).unwrap();
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
        e.hold_long(true, 3).unwrap();
        d.hold_long(false, 3).unwrap();
        assert_eq!(table.admit(3).err(), Some(Full { max: 3 }), "only long-lived ones: refused");
        d.wait_ended();
        assert!(table.admit(3).is_ok(), "a wait that ended gives its place back");
    }

    /// Regression (issue 28): 256 waiting requests or subscribers made every new client
    /// `BUSY`; long-lived connections now have a limit below the table's.
    #[test]
    fn long_lived_connections_have_their_own_limit_and_short_ones_always_get_in() {
        let table = Arc::new(Connections::default());
        let (total, long) = (5, 3);
        let mut held = Vec::new();
        for i in 0..long {
            let c = table.admit(total).unwrap();
            c.hold_long(i % 2 == 0, long).unwrap();
            held.push(c);
        }
        let extra = table.admit(total).unwrap();
        assert_eq!(extra.hold_long(true, long), Err(LongLivedFull { max: long }));
        assert_eq!(extra.hold_long(false, long), Err(LongLivedFull { max: long }));
        // A long-lived connection may take a second kind of place.
        held[0].hold_long(false, long).unwrap();
        // Short clients keep coming: each gets in, evicting an earlier short one.
        let mut short = vec![extra];
        for _ in 0..20 {
            short.push(table.admit(total).expect("a short client always gets in"));
        }
        assert!(table.len() <= total);
    }

    /// Waits for a future on a one-off runtime.
    fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
    }
}
