//! Work too big for the runtime's two workers: a scrollback search, a big frame. It runs on
//! tokio's blocking pool, at most [`MAX_RUNNING`] at once (so what it holds — decoded rows, a
//! frame's text — is bounded by that count, not by the number of clients), with at most
//! [`MAX_QUEUED`] waiting behind them (past that a request is answered `BUSY`). A client's
//! connection awaits its work before it reads its next request, so one client has at most one
//! piece in here; the runtime's workers stay free for every other connection's answer.
//!
//! Work that started runs to its end even when its client hangs up (each piece is bounded by
//! its own deadline), and gives its place back then.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Semaphore;

use crate::error::CommandError;

/// How many pieces of work run at once.
pub const MAX_RUNNING: usize = 2;

/// How many pieces may wait for a place (besides those running) before new ones are refused.
pub const MAX_QUEUED: usize = 64;

static PLACES: Semaphore = Semaphore::const_new(MAX_RUNNING);
static ADMITTED: AtomicUsize = AtomicUsize::new(0);
static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// A piece of work's result: the answer's JSON text.
pub type Work = Pin<Box<dyn Future<Output = Result<String, CommandError>> + Send + 'static>>;

/// An answer made now (small enough for the runtime's worker) or work for the pool.
pub enum Outcome {
    /// The answer's JSON text.
    Now(String),
    /// The work that makes it.
    Work(Work),
}

/// Counts an admitted piece until it is dropped (answered, or its client gone).
struct Admitted;

impl Drop for Admitted {
    fn drop(&mut self) {
        ADMITTED.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Counts a running piece.
struct Running;

impl Running {
    fn start() -> Running {
        let now = RUNNING.fetch_add(1, Ordering::AcqRel) + 1;
        PEAK_RUNNING.fetch_max(now, Ordering::AcqRel);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Admits `work` (refused `BUSY` when [`MAX_RUNNING`] + [`MAX_QUEUED`] pieces are admitted);
/// the future waits for a place and runs it on the blocking pool.
pub fn run<F>(what: &'static str, work: F) -> Result<Work, CommandError>
where
    F: FnOnce() -> Result<String, CommandError> + Send + 'static,
{
    let limit = MAX_RUNNING + MAX_QUEUED;
    if ADMITTED.fetch_add(1, Ordering::AcqRel) >= limit {
        ADMITTED.fetch_sub(1, Ordering::AcqRel);
        return Err(CommandError::Busy(format!(
            "{limit} searches and big frames are running or waiting already; try again"
        )));
    }
    let admitted = Admitted;
    Ok(Box::pin(async move {
        let permit = PLACES
            .acquire()
            .await
            .map_err(|_| CommandError::Internal("the work pool is closed".into()))?;
        let done = tokio::task::spawn_blocking(move || {
            let _running = Running::start();
            // The place is held by the blocking thread: a client that hangs up meanwhile does
            // not free it before the work ends.
            let _permit = permit;
            let _admitted = admitted;
            work()
        });
        done.await.map_err(|e| CommandError::Internal(format!("{what} failed: {e}")))?
    }))
}

/// How many pieces run now, and the most that ever ran at once (for tests and `server.info`).
pub fn running() -> (usize, usize) {
    (RUNNING.load(Ordering::Acquire), PEAK_RUNNING.load(Ordering::Acquire))
}
