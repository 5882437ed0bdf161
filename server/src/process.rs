//! The seam between the Store and the operating system's processes (after zellij's
//! `ServerOsApi`): the Store starts a pane's program through a [`Spawner`] and talks to it
//! through [`PaneProcess`], so its command handling can be tested without real PTYs.
//!
//! The server uses [`PtySpawner`] (a real PTY, `engine::pty`); tests of the Store's commands
//! use [`FakeSpawner`](testing::FakeSpawner), which records what panes were sent.

use std::time::Duration;

use berth_engine::pty::{ExitInfo, Pty, PtyError, PtyHandler, PtyInput, SpawnSpec};

/// A pane's handler of PTY events (the server's `PaneIo`), boxed.
pub type Handler = Box<dyn PtyHandler>;

/// A running pane program, as the Store sees it.
pub trait PaneProcess: Send + std::fmt::Debug {
    /// Its process id.
    fn pid(&self) -> i32;
    /// Queues input for it.
    fn send(&self, bytes: &[u8]) -> Result<(), PtyError>;
    /// Tells it the new size.
    fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError>;
    /// Ends it (asynchronously, escalating); twice does nothing more.
    fn close(&self);
    /// True once `close` was called.
    fn is_closing(&self) -> bool;
    /// How it ended, once it has.
    fn exit_info(&self) -> Option<ExitInfo>;
    /// Waits up to `timeout` for it to end.
    fn wait_exit(&self, timeout: Duration) -> Option<ExitInfo>;
    /// The job in its terminal's foreground when that is not the program itself.
    fn foreground_job(&self) -> Option<Vec<String>>;
}

/// Starts pane programs.
pub trait Spawner: Send + Sync {
    /// Starts `spec`; `io` receives its output and, last, its exit.
    fn spawn(&self, spec: &SpawnSpec, io: Handler) -> Result<Box<dyn PaneProcess>, PtyError>;
}

/// The real one: a PTY per pane.
#[derive(Debug, Default, Clone, Copy)]
pub struct PtySpawner;

impl Spawner for PtySpawner {
    fn spawn(&self, spec: &SpawnSpec, io: Handler) -> Result<Box<dyn PaneProcess>, PtyError> {
        // Registered while it starts: its waiter thread reaps it, the orphan reaper never.
        let pty = crate::trust::reaper::spawn_waited(|| Pty::spawn(spec, Boxed(io)), Pty::pid)?;
        Ok(Box::new(pty))
    }
}

/// A boxed handler is a handler.
struct Boxed(Handler);

impl PtyHandler for Boxed {
    fn on_output(&mut self, bytes: &[u8], replies: &PtyInput) {
        self.0.on_output(bytes, replies);
    }
    fn on_exit(&mut self, exit: ExitInfo) {
        self.0.on_exit(exit);
    }
    fn on_idle(&mut self, replies: &PtyInput) {
        self.0.on_idle(replies);
    }
    fn wants_idle(&self) -> bool {
        self.0.wants_idle()
    }
}

impl PaneProcess for Pty {
    fn pid(&self) -> i32 {
        Pty::pid(self)
    }
    fn send(&self, bytes: &[u8]) -> Result<(), PtyError> {
        Pty::send(self, bytes)
    }
    fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError> {
        Pty::resize(self, cols, rows)
    }
    fn close(&self) {
        Pty::close(self);
    }
    fn is_closing(&self) -> bool {
        Pty::is_closing(self)
    }
    fn exit_info(&self) -> Option<ExitInfo> {
        Pty::exit_info(self)
    }
    fn wait_exit(&self, timeout: Duration) -> Option<ExitInfo> {
        Pty::wait_exit(self, timeout)
    }
    fn foreground_job(&self) -> Option<Vec<String>> {
        Pty::foreground_job(self)
    }
}

/// A spawner without processes, for the Store's unit tests.
#[cfg(test)]
pub mod testing {
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What the fake processes were asked to do, shared with the test.
    #[derive(Debug, Default)]
    pub struct Record {
        /// Every spawn's argv, in order.
        pub spawned: Vec<Vec<String>>,
        /// Bytes sent, per pid.
        pub sent: Vec<(i32, Vec<u8>)>,
        /// Resizes, per pid.
        pub resized: Vec<(i32, u16, u16)>,
        /// Closed pids.
        pub closed: Vec<i32>,
    }

    /// Starts [`FakeProcess`]es; `fail` makes every spawn fail.
    #[derive(Debug, Default, Clone)]
    pub struct FakeSpawner {
        /// What happened.
        pub record: Arc<Mutex<Record>>,
        /// Refuse to start anything.
        pub fail: Arc<AtomicBool>,
        next_pid: Arc<AtomicI32>,
    }

    impl FakeSpawner {
        /// What happened so far.
        pub fn record(&self) -> std::sync::MutexGuard<'_, Record> {
            self.record.lock().unwrap_or_else(|p| p.into_inner())
        }
    }

    impl Spawner for FakeSpawner {
        fn spawn(&self, spec: &SpawnSpec, io: Handler) -> Result<Box<dyn PaneProcess>, PtyError> {
            if self.fail.load(Ordering::Relaxed) {
                return Err(PtyError::Spawn {
                    program: spec.argv.first().cloned().unwrap_or_default(),
                    reason: "the fake spawner refuses".into(),
                });
            }
            // Far above any real pid_max, so /proc never answers for it.
            let pid = 2_000_000_000 + self.next_pid.fetch_add(1, Ordering::Relaxed);
            self.record().spawned.push(spec.argv.clone());
            Ok(Box::new(FakeProcess {
                pid,
                record: self.record.clone(),
                io: Mutex::new(Some(io)),
                exit: Mutex::new(None),
                closing: AtomicBool::new(false),
            }))
        }
    }

    /// A process that never runs: it records input and ends when closed.
    pub struct FakeProcess {
        pid: i32,
        record: Arc<Mutex<Record>>,
        io: Mutex<Option<Handler>>,
        exit: Mutex<Option<ExitInfo>>,
        closing: AtomicBool,
    }

    impl std::fmt::Debug for FakeProcess {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("FakeProcess").field("pid", &self.pid).finish_non_exhaustive()
        }
    }

    impl FakeProcess {
        fn record(&self) -> std::sync::MutexGuard<'_, Record> {
            self.record.lock().unwrap_or_else(|p| p.into_inner())
        }
    }

    impl PaneProcess for FakeProcess {
        fn pid(&self) -> i32 {
            self.pid
        }
        fn send(&self, bytes: &[u8]) -> Result<(), PtyError> {
            self.record().sent.push((self.pid, bytes.to_vec()));
            Ok(())
        }
        fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError> {
            self.record().resized.push((self.pid, cols, rows));
            Ok(())
        }
        fn close(&self) {
            if self.closing.swap(true, Ordering::AcqRel) {
                return;
            }
            self.record().closed.push(self.pid);
            let exit = ExitInfo { code: 0, signal: Some("SIGHUP".into()) };
            *self.exit.lock().unwrap_or_else(|p| p.into_inner()) = Some(exit.clone());
            if let Some(mut io) = self.io.lock().unwrap_or_else(|p| p.into_inner()).take() {
                io.on_exit(exit);
            }
        }
        fn is_closing(&self) -> bool {
            self.closing.load(Ordering::Acquire)
        }
        fn exit_info(&self) -> Option<ExitInfo> {
            self.exit.lock().unwrap_or_else(|p| p.into_inner()).clone()
        }
        fn wait_exit(&self, _timeout: Duration) -> Option<ExitInfo> {
            self.exit_info()
        }
        fn foreground_job(&self) -> Option<Vec<String>> {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    use berth_engine::ids::PaneId;
    use berth_engine::terminal::{PaneTerminal, TermSize};

    use super::*;
    use crate::pane::{OutputPulse, PaneIo, PaneShared};

    /// Counts a handler's idle calls, passing everything on.
    struct CountIdle<H>(H, Arc<AtomicUsize>);

    impl<H: PtyHandler> PtyHandler for CountIdle<H> {
        fn on_output(&mut self, bytes: &[u8], replies: &PtyInput) {
            self.0.on_output(bytes, replies);
        }
        fn on_exit(&mut self, exit: ExitInfo) {
            self.0.on_exit(exit);
        }
        fn on_idle(&mut self, replies: &PtyInput) {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.on_idle(replies);
        }
        fn wants_idle(&self) -> bool {
            self.0.wants_idle()
        }
    }

    /// Regression: the boxed handler did not pass `wants_idle` on, so a quiet pane's reader
    /// still woke every 100 ms. A pane whose program prints nothing is called at most about
    /// once a second once its first idle call is done.
    #[test]
    fn a_quiet_panes_reader_is_not_woken_every_100_ms() {
        let shared =
            PaneShared::new(PaneId::new(), PaneTerminal::new(TermSize { cols: 80, rows: 24 }, 100));
        let (inbox, _messages) = crate::notifications::NotificationInbox::new();
        let io =
            PaneIo::new(shared, crate::events::EventBus::default(), OutputPulse::default(), inbox);
        let calls = Arc::new(AtomicUsize::new(0));
        let spec = SpawnSpec {
            argv: vec!["sleep".into(), "30".into()],
            cwd: std::env::temp_dir(),
            env: vec![],
            cols: 80,
            rows: 24,
        };
        let pty = PtySpawner.spawn(&spec, Box::new(CountIdle(io, calls.clone()))).expect("spawn");
        // The first idle call (the terminal's settle after start) comes within a few polls.
        let deadline = Instant::now() + Duration::from_secs(10);
        while calls.load(Ordering::Relaxed) == 0 {
            assert!(Instant::now() < deadline, "no idle call at all");
            std::thread::sleep(Duration::from_millis(10));
        }
        let (before, from) = (calls.load(Ordering::Relaxed), Instant::now());
        std::thread::sleep(Duration::from_millis(1500));
        let seconds = from.elapsed().as_secs_f64();
        let since = calls.load(Ordering::Relaxed) - before;
        // Polling every 100 ms would make about 15; once a second makes 1 or 2 (a count, not a
        // clock: a slow machine only makes fewer).
        assert!(since as f64 <= seconds.ceil() + 1.0, "{since} idle calls in {seconds:.1} s");
        pty.close();
    }
}
