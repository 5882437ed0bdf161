//! When to save: the debounced, periodic, explicit and shutdown saves, on their own thread.
//!
//! Owns the persistence thread: it wakes on a change (debounced to at most one write per
//! [`DEBOUNCE`]), every [`PERIODIC`] when pane output changed, on `snapshot.save`, and at
//! shutdown. It takes the Store's lock only to copy the state into a snapshot DTO; tails are
//! rendered under each pane's own lock and every file is written with the lock released. It
//! never runs on a PTY reader's thread or on the async runtime.

use std::collections::{HashMap, HashSet};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use berth_engine::ids::PaneId;

use crate::persist::{PersistError, SaveContext, StateDir};
use crate::restore::{tail_bytes_cached, TailCache};
use crate::store::Store;

/// The quiet time after a change before it is written; also the least time between writes.
pub const DEBOUNCE: Duration = Duration::from_secs(2);

/// How often pane output alone (new tails) leads to a save.
pub const PERIODIC: Duration = Duration::from_secs(60);

/// How long an explicit save waits for the thread.
const EXPLICIT_TIMEOUT: Duration = Duration::from_secs(30);

/// What a save did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveOutcome {
    /// Panes in the snapshot.
    pub panes: usize,
    /// Tails written.
    pub tails: usize,
    /// Bytes of the snapshot file.
    pub bytes: usize,
    /// Where it was written.
    pub path: String,
}

/// Why a save failed: the message, and the OS error behind it (so the socket can answer
/// `DISK_FULL` or `PERMISSION_DENIED` rather than `INTERNAL`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SaveFailed {
    /// What went wrong, in words.
    pub message: String,
    /// The OS error number, if an OS call failed.
    pub errno: Option<i32>,
}

type Reply = mpsc::Sender<Result<SaveOutcome, SaveFailed>>;

struct Control {
    /// When the first change since the last save happened.
    dirty_since: Option<Instant>,
    last_write: Option<Instant>,
    last_periodic: Instant,
    requests: Vec<(SaveContext, Reply)>,
    /// False until the boot's restores have settled; no scheduled save happens before.
    settled: bool,
    stop: bool,
}

struct Shared {
    state: Arc<StateDir>,
    store: Arc<Mutex<Store>>,
    control: Mutex<Control>,
    wake: Condvar,
}

impl Shared {
    fn control(&self) -> MutexGuard<'_, Control> {
        // The control block holds plain flags; a panic elsewhere leaves it usable.
        self.control.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The persistence thread's handle; cheap to clone.
#[derive(Clone)]
pub struct Persistence {
    shared: Arc<Shared>,
    thread: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl Persistence {
    /// Starts the thread. `settled` says whether the boot's restores are done (no auto-resume
    /// pending); until [`Persistence::mark_settled`], only explicit and shutdown saves run.
    pub fn start(state: Arc<StateDir>, store: Arc<Mutex<Store>>, settled: bool) -> Persistence {
        let shared = Arc::new(Shared {
            state,
            store,
            control: Mutex::new(Control {
                dirty_since: None,
                last_write: None,
                last_periodic: Instant::now(),
                requests: Vec::new(),
                settled,
                stop: false,
            }),
            wake: Condvar::new(),
        });
        let runner = shared.clone();
        let thread = std::thread::Builder::new()
            .name("berth-persist".into())
            .spawn(move || run(&runner))
            .map_err(|e| tracing::error!(error = %e, "cannot start the persistence thread; nothing will be saved"))
            .ok();
        Persistence { shared, thread: Arc::new(Mutex::new(thread)) }
    }

    /// Notes a change; a save follows within [`DEBOUNCE`].
    pub fn notify_change(&self) {
        let mut control = self.shared.control();
        control.dirty_since.get_or_insert_with(Instant::now);
        drop(control);
        self.shared.wake.notify_one();
    }

    /// The boot's restores are done: scheduled saves may run.
    pub fn mark_settled(&self) {
        self.shared.control().settled = true;
        self.shared.wake.notify_one();
    }

    /// Saves now and waits for the result.
    pub fn save_now(&self, context: SaveContext) -> Result<SaveOutcome, String> {
        self.save_now_detailed(context).map_err(|e| e.message)
    }

    /// [`Persistence::save_now`], with the OS error of a failure.
    pub fn save_now_detailed(&self, context: SaveContext) -> Result<SaveOutcome, SaveFailed> {
        let (tx, rx) = mpsc::channel();
        self.shared.control().requests.push((context, tx));
        self.shared.wake.notify_one();
        rx.recv_timeout(EXPLICIT_TIMEOUT).map_err(|_| SaveFailed {
            message: "the save did not finish in time".to_owned(),
            errno: None,
        })?
    }

    /// Saves for a shutdown, then stops the thread.
    pub fn shutdown(&self) -> Result<SaveOutcome, String> {
        let result = self.save_now(SaveContext::Shutdown);
        self.shared.control().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = thread.join();
        }
        result
    }
}

fn run(shared: &Shared) {
    // Tails written so far: pane → content generation on disk.
    let mut written: HashMap<PaneId, u64> = HashMap::new();
    // Each pane's rendered history lines, so a save renders only what is new.
    let mut caches: HashMap<PaneId, Option<TailCache>> = HashMap::new();
    let mut control = shared.control();
    loop {
        if control.stop {
            return;
        }
        let now = Instant::now();
        if let Some((context, reply)) = control.requests.pop() {
            // The save takes the Store's state from here on: a change reported while it runs
            // marks the state dirty again and gets a save of its own.
            control.dirty_since = None;
            drop(control);
            let result = save(shared, context, &mut written, &mut caches)
                .map_err(|e| SaveFailed { message: e.to_string(), errno: e.raw_os_error() });
            let _ = reply.send(result);
            control = shared.control();
            control.last_write = Some(Instant::now());
            continue;
        }
        let due = control.settled.then_some(()).and(control.dirty_since).map(|since| {
            let after_change = since + DEBOUNCE;
            control.last_write.map_or(after_change, |w| after_change.max(w + DEBOUNCE))
        });
        let periodic_due = control.last_periodic + PERIODIC;
        if due.is_some_and(|d| d <= now) || (control.settled && periodic_due <= now) {
            let periodic = due.is_none_or(|d| d > now);
            control.last_periodic = now;
            let dirty_since = control.dirty_since.take();
            drop(control);
            if !periodic || output_changed(shared, &written) {
                let user_closed_all = lock_store(shared).user_closed_all;
                match save(
                    shared,
                    SaveContext::Normal { user_closed_all },
                    &mut written,
                    &mut caches,
                ) {
                    Ok(outcome) => {
                        tracing::debug!(panes = outcome.panes, tails = outcome.tails, "saved")
                    }
                    Err(PersistError::Refused(reason)) => tracing::info!(%reason, "save skipped"),
                    Err(e) => tracing::error!(error = %e, "saving the snapshot failed"),
                }
                control = shared.control();
                control.last_write = Some(Instant::now());
            } else {
                control = shared.control();
                // Nothing was saved: a change noted before still waits for its save.
                if let Some(since) = dirty_since {
                    control.dirty_since.get_or_insert(since);
                }
            }
            continue;
        }
        let next = [due, Some(periodic_due)].into_iter().flatten().min().unwrap_or(periodic_due);
        let wait = next.saturating_duration_since(now).max(Duration::from_millis(10));
        control = shared.wake.wait_timeout(control, wait).unwrap_or_else(|p| p.into_inner()).0;
    }
}

fn lock_store(shared: &Shared) -> MutexGuard<'_, Store> {
    shared.store.lock().unwrap_or_else(|p| p.into_inner())
}

fn output_changed(shared: &Shared, written: &HashMap<PaneId, u64>) -> bool {
    let store = lock_store(shared);
    store
        .panes
        .values()
        .any(|p| p.tombstone.is_none() && written.get(&p.id) != Some(&p.shared.content_gen()))
}

/// Takes a snapshot and writes it with the tails that changed.
fn save(
    shared: &Shared,
    context: SaveContext,
    written: &mut HashMap<PaneId, u64>,
    caches: &mut HashMap<PaneId, Option<TailCache>>,
) -> Result<SaveOutcome, PersistError> {
    let context = match context {
        SaveContext::Explicit { .. } => {
            SaveContext::Explicit { user_closed_all: lock_store(shared).user_closed_all }
        }
        other => other,
    };
    let (snapshot, jobs) = {
        let mut store = lock_store(shared);
        // Finished tasks past their age go from the Store as from the file.
        store.prune_tasks(crate::persist::stamp::now_ms());
        store.to_snapshot(written)
    };
    let mut tails = 0;
    for job in jobs {
        let tail = {
            let term = job.shared.term.lock();
            tail_bytes_cached(&term, caches.entry(job.pane.clone()).or_default())
        };
        match shared.state.write_redacted_tail(job.pane.as_str(), &tail) {
            Ok(()) => {
                written.insert(job.pane, job.content_gen);
                tails += 1;
            }
            Err(e) => tracing::warn!(pane = %job.pane, error = %e, "could not write a pane's tail"),
        }
    }
    let report = shared.state.save(&snapshot, context)?;
    let settled = shared.control().settled;
    if settled {
        let keep: HashSet<String> = snapshot.panes.iter().map(|p| p.id.clone()).collect();
        written.retain(|id, _| keep.contains(id.as_str()));
        caches.retain(|id, _| keep.contains(id.as_str()));
        if let Err(e) = shared.state.remove_stale_tails(&keep) {
            tracing::warn!(error = %e, "could not remove old tails");
        }
    }
    Ok(SaveOutcome {
        panes: snapshot.panes.len(),
        tails,
        bytes: report.bytes,
        path: report.path.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::fs::File;
    use std::io;
    use std::path::Path;
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::{Duration, Instant};

    use super::Persistence;
    use crate::events::EventBus;

    use crate::persist::fs::{FileInfo, RealFs, StateFs};
    use crate::persist::StateDir;

    /// The real file system, except that the first snapshot rename waits until the test
    /// opens the gate: a save that is still running.
    #[derive(Debug, Default)]
    struct GatedFs {
        /// (snapshot renames so far, gate open)
        state: Mutex<(usize, bool)>,
        changed: Condvar,
    }

    impl GatedFs {
        fn renames(&self) -> usize {
            self.state.lock().unwrap().0
        }

        fn wait_for(&self, what: &str, check: impl Fn(&(usize, bool)) -> bool) {
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut state = self.state.lock().unwrap();
            while !check(&state) {
                let left = deadline.saturating_duration_since(Instant::now());
                assert!(!left.is_zero(), "timed out waiting for {what}");
                state = self.changed.wait_timeout(state, left).unwrap().0;
            }
        }

        fn open(&self) {
            self.state.lock().unwrap().1 = true;
            self.changed.notify_all();
        }
    }

    impl StateFs for GatedFs {
        fn create_new(&self, path: &Path, mode: u32) -> io::Result<File> {
            RealFs.create_new(path, mode)
        }
        fn write_all(&self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
            RealFs.write_all(file, bytes)
        }
        fn sync_file(&self, file: &File) -> io::Result<()> {
            RealFs.sync_file(file)
        }
        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            if to.file_name().is_some_and(|n| n == "snapshot.json") {
                let mut state = self.state.lock().unwrap();
                state.0 += 1;
                self.changed.notify_all();
                while state.0 == 1 && !state.1 {
                    state = self.changed.wait(state).unwrap();
                }
            }
            RealFs.rename(from, to)
        }
        fn sync_dir(&self, dir: &Path) -> io::Result<()> {
            RealFs.sync_dir(dir)
        }
        fn remove_file(&self, path: &Path) -> io::Result<()> {
            RealFs.remove_file(path)
        }
        fn read(&self, path: &Path, max_len: u64) -> io::Result<Vec<u8>> {
            RealFs.read(path, max_len)
        }
        fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>> {
            RealFs.list_dir(dir)
        }
        fn create_dir_all(&self, dir: &Path, mode: u32) -> io::Result<()> {
            RealFs.create_dir_all(dir, mode)
        }
        fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
            RealFs.set_mode(path, mode)
        }
        fn metadata(&self, path: &Path) -> io::Result<FileInfo> {
            RealFs.metadata(path)
        }
    }

    /// Regression: a change reported while a save was running was forgotten when that save
    /// ended (its "dirty" mark was cleared after the write), so it waited for some later
    /// change, or for ever.
    #[test]
    fn a_change_during_a_save_gets_a_save_of_its_own() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let fs = Arc::new(GatedFs::default());
        let state = Arc::new(StateDir::open(dir.path().join("state"), fs.clone()).expect("open"));
        state.load().expect("an empty state loads");
        let store = crate::store::test_store(dir.path(), EventBus::default());
        let persistence = Persistence::start(state, Arc::new(Mutex::new(store)), true);
        persistence.notify_change();
        fs.wait_for("the first save to reach its rename", |s| s.0 == 1);
        // The first save is under way; a change now must not be lost when it ends.
        persistence.notify_change();
        fs.open();
        fs.wait_for("a second save", |s| s.0 >= 2);
        assert!(fs.renames() >= 2);
    }
}
