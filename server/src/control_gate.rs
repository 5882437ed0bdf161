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
//! never wait: only readers that flood call [`ControlGate::yield_to_control`]. This module must
//! not know the Store or the socket; it only counts and waits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The longest a flooding reader waits for the requests in flight to be answered.
pub const YIELD_MAX: Duration = Duration::from_millis(10);

/// After a wait, how long a reader parses before it waits again.
pub const YIELD_GAP: Duration = Duration::from_millis(20);

/// The count of control requests in flight and the readers waiting for it to reach zero.
#[derive(Debug, Default)]
pub struct ControlGate {
    in_flight: AtomicUsize,
    /// Readers that waited (for tests and the log: how often the gate held a flood back).
    yields: AtomicUsize,
    lock: Mutex<()>,
    idle: Condvar,
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
        }
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
