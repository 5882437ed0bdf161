//! The control plane's right of way over flooding terminals (issue 28).
//!
//! Owns [`ControlGate`]: a count of the socket's short requests in flight (a listing, a spawn,
//! a decision: Store commands answered at once), and the wait a flooding PTY reader makes
//! before it parses its next read while that count is not zero. Every PTY reader is a thread of
//! the server's own process, in its scheduling group: thirty readers parsing `yes` took three
//! quarters of the group's CPU from the runtime's workers, and `berth ls` waited behind them
//! (profiled: 3 ms of work, 20–60 ms waiting to run). A reader that holds back lets its
//! program's PTY fill, so the program blocks too, and the request runs on a quieter machine.
//!
//! The wait is bounded ([`YIELD_MAX`]) and rationed ([`YIELD_GAP`]): a flood keeps at least two
//! thirds of its pace even while requests arrive back to back. Quiet panes (a keystroke's echo)
//! never wait: only readers that flood call [`ControlGate::yield_to_control`].
//!
//! Flooding readers also take turns ([`ControlGate::flood_turn`]): at most one fewer than the
//! machine's cores parse a full read at once, so one core is always left to the event loop,
//! the window and quiet panes, as tmux's single thread leaves the others (thirty readers at
//! nice 10 on two cores still kept `berth ls` at 1.2× tmux's median and 3.6× its worst). The
//! turn's wait is bounded ([`FLOOD_TURN_MAX`]): a turn is a soft limit, never a deadlock. This
//! module must not know the Store or the socket; it only counts and waits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest a flooding reader waits for the requests in flight to be answered.
pub const YIELD_MAX: Duration = Duration::from_millis(10);

/// After a wait, how long a reader parses before it waits again.
pub const YIELD_GAP: Duration = Duration::from_millis(20);

/// The longest a flooding reader waits for its turn to parse (then it parses anyway).
pub const FLOOD_TURN_MAX: Duration = Duration::from_millis(50);

/// The count of control requests in flight and the readers waiting for it to reach zero; the
/// flooding readers parsing now and those waiting for their turn.
#[derive(Debug, Default)]
pub struct ControlGate {
    in_flight: AtomicUsize,
    /// Readers that waited (for tests and the log: how often the gate held a flood back).
    yields: AtomicUsize,
    lock: Mutex<()>,
    idle: Condvar,
    /// How many flooding readers parse at once (0: one fewer than the cores, at least one).
    flood_cap: AtomicUsize,
    /// Flooding readers parsing now.
    flooding: Mutex<usize>,
    flood_free: Condvar,
    /// The most that parsed at once (for tests).
    flooding_max: AtomicUsize,
}

/// A flooding reader's turn to parse; the next waiting reader goes when it is dropped.
#[must_use = "the turn is held while the guard lives"]
pub struct FloodTurn<'a> {
    gate: &'a ControlGate,
}

impl Drop for FloodTurn<'_> {
    fn drop(&mut self) {
        let mut flooding = self.gate.flooding.lock().unwrap_or_else(|p| p.into_inner());
        *flooding = flooding.saturating_sub(1);
        drop(flooding);
        self.gate.flood_free.notify_one();
    }
}

/// A control request in flight; the gate opens again when the last one is dropped.
#[must_use = "the request counts as in flight while the guard lives"]
pub struct InFlight<'a> {
    gate: &'a ControlGate,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.gate.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Taken so that a reader between its check and its wait does not miss the wake-up.
            drop(self.gate.lock.lock().unwrap_or_else(|p| p.into_inner()));
            self.gate.idle.notify_all();
        }
    }
}

static GLOBAL: ControlGate = ControlGate::new();

impl ControlGate {
    /// A gate with nothing in flight.
    pub const fn new() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            yields: AtomicUsize::new(0),
            lock: Mutex::new(()),
            idle: Condvar::new(),
            flood_cap: AtomicUsize::new(0),
            flooding: Mutex::new(0),
            flood_free: Condvar::new(),
            flooding_max: AtomicUsize::new(0),
        }
    }

    /// A gate that lets `cap` flooding readers parse at once (tests).
    pub fn with_flood_cap(cap: usize) -> Self {
        let gate = Self::new();
        gate.flood_cap.store(cap.max(1), Ordering::Relaxed);
        gate
    }

    /// How many flooding readers parse at once: one fewer than the cores, at least one.
    fn flood_cap(&self) -> usize {
        match self.flood_cap.load(Ordering::Relaxed) {
            0 => {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                let cap = cores.saturating_sub(1).max(1);
                self.flood_cap.store(cap, Ordering::Relaxed);
                cap
            }
            cap => cap,
        }
    }

    /// Waits (at most [`FLOOD_TURN_MAX`]) until fewer than the cap of flooding readers parse,
    /// and counts this one among them until the turn is dropped.
    pub fn flood_turn(&self) -> FloodTurn<'_> {
        let cap = self.flood_cap();
        let deadline = Instant::now() + FLOOD_TURN_MAX;
        let mut flooding = self.flooding.lock().unwrap_or_else(|p| p.into_inner());
        while *flooding >= cap {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            flooding =
                self.flood_free.wait_timeout(flooding, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        *flooding += 1;
        self.flooding_max.fetch_max(*flooding, Ordering::Relaxed);
        FloodTurn { gate: self }
    }

    /// The most flooding readers that parsed at once so far.
    pub fn flooding_max(&self) -> usize {
        self.flooding_max.load(Ordering::Relaxed)
    }

    /// The process's gate: the socket's requests and the panes' readers of this server (one
    /// server per process).
    pub fn global() -> &'static ControlGate {
        &GLOBAL
    }

    /// Counts a control request as in flight until the guard is dropped.
    pub fn enter(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight { gate: self }
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// How many times a reader waited at the gate.
    pub fn yields(&self) -> usize {
        self.yields.load(Ordering::Relaxed)
    }

    /// A flooding reader's wait: while requests are in flight, at most `max`; returns at once
    /// (one atomic load) when none is. Returns whether it waited.
    pub fn yield_to_control(&self, max: Duration) -> bool {
        if self.in_flight() == 0 {
            return false;
        }
        self.yields.fetch_add(1, Ordering::Relaxed);
        let deadline = Instant::now() + max;
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        while self.in_flight() > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            guard = self.idle.wait_timeout(guard, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        true
    }
}

/// One reader's ration of waits ([`YIELD_GAP`] of parsing between two).
#[derive(Debug, Default)]
pub struct YieldRation {
    last: Option<Instant>,
}

impl YieldRation {
    /// Waits at `gate` (at most [`YIELD_MAX`]) unless this reader waited less than
    /// [`YIELD_GAP`] ago.
    pub fn yield_at(&mut self, gate: &ControlGate, now: Instant) {
        if self.last.is_some_and(|last| now.saturating_duration_since(last) < YIELD_GAP) {
            return;
        }
        if gate.yield_to_control(YIELD_MAX) {
            self.last = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader waits while a request is in flight and goes on as soon as it is answered;
    /// with nothing in flight it never waits.
    #[test]
    fn a_reader_waits_for_a_request_in_flight_and_goes_on_when_it_is_answered() {
        let gate: &'static ControlGate = Box::leak(Box::new(ControlGate::new()));
        assert!(!gate.yield_to_control(Duration::from_secs(60)), "nothing in flight: no wait");
        let request = gate.enter();
        let reader = std::thread::spawn(move || gate.yield_to_control(Duration::from_secs(60)));
        let deadline = Instant::now() + Duration::from_secs(60);
        while gate.yields() == 0 {
            assert!(Instant::now() < deadline, "the reader never reached the gate");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(request);
        // Answered: the reader goes on long before its 60 s bound.
        assert!(reader.join().expect("the reader ends"));
        assert_eq!(gate.in_flight(), 0);
    }

    /// Flooding readers take turns: with a cap of one, eight readers that each hold their turn
    /// a moment never parse two at once, and every one gets its turns.
    #[test]
    fn flooding_readers_take_turns_under_the_cap() {
        let gate: &'static ControlGate = Box::leak(Box::new(ControlGate::with_flood_cap(1)));
        let readers: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let _turn = gate.flood_turn();
                        std::thread::sleep(Duration::from_micros(200));
                    }
                })
            })
            .collect();
        for reader in readers {
            reader.join().expect("a reader ends");
        }
        assert_eq!(gate.flooding_max(), 1, "two readers parsed at once");
        assert_eq!(*gate.flooding.lock().unwrap(), 0, "every turn was given back");
    }

    /// A turn is a soft limit: a holder that never gives its turn back delays the next reader
    /// [`FLOOD_TURN_MAX`] at most.
    #[test]
    fn a_turn_never_given_back_delays_the_next_reader_a_bounded_time() {
        let gate = ControlGate::with_flood_cap(1);
        let _held = gate.flood_turn();
        let started = Instant::now();
        let _second = gate.flood_turn();
        assert!(started.elapsed() < Duration::from_secs(30), "the wait was not bounded");
        assert_eq!(gate.flooding_max(), 2);
    }

    /// The wait is bounded: a request that never ends holds a reader back `max` at most, and a
    /// reader that just waited parses its next reads without waiting.
    #[test]
    fn a_request_that_never_ends_holds_a_reader_back_a_bounded_time() {
        let gate = ControlGate::new();
        let _forever = gate.enter();
        assert!(gate.yield_to_control(Duration::from_millis(1)));
        let mut ration = YieldRation::default();
        let now = Instant::now();
        ration.yield_at(&gate, now);
        assert_eq!(gate.yields(), 2);
        ration.yield_at(&gate, now);
        assert_eq!(gate.yields(), 2, "within the gap: no second wait");
    }
}
