//! The state dir on disk: the snapshot, its history, pane tails and the lock.
//!
//! [`StateDir`] is the one door to `$XDG_STATE_HOME/berth` (or `BERTH_STATE_DIR`). It writes
//! atomically and durably ([`durable`]), keeps secrets out through the one encoder
//! ([`encode::encode`]), refuses to put a worse record over a better one ([`guard`]), moves a
//! corrupt snapshot aside and refuses a future one ([`mod@load`]), and keeps older copies
//! ([`history`]). Every file operation goes through the [`StateFs`] seam so tests can fail or
//! "crash" any step. This module must not know the Store's types: the caller converts its state
//! to and from the [`Snapshot`] DTO.
//!
//! The expected order at server start is [`StateDir::from_env`], [`StateDir::lock`],
//! [`StateDir::cleanup_temp_files`], [`StateDir::load`]; saves are refused until a load has
//! succeeded, because the guard needs to know the record on disk.
//!
//! The files under `persist/` never import this one (no import loop, `tests/import_cycles.rs`):
//! what they share, such as [`PersistError`] (`error.rs`), lives in a file of its own that this
//! one re-exports.

pub mod caps;
pub mod durable;
pub mod encode;
pub mod error;
pub mod fs;
pub mod guard;
pub mod history;
pub mod load;
pub mod migrate;
pub mod redact;
pub mod snapshot;
pub mod stamp;
pub mod tails;
pub mod task_record;

#[cfg(test)]
mod test_support;

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

pub use durable::{cleanup_temp_files, write_atomic, DIR_MODE, FILE_MODE};
pub use encode::{encode, save, SaveReport};
pub use error::PersistError;
pub use fs::{RealFs, StateFs};
pub use guard::{may_replace, RefusedReason, SaveContext, SnapshotSummary};
pub use history::{rotate, RotateOutcome};
pub use load::{load, move_aside_future, LoadError, LoadOutcome};
pub use snapshot::{
    allowlisted_env, AgentRecord, LayoutRecord, NotificationRecord, PaneRecord, SizeRecord,
    Snapshot, SplitDirRecord, SplitRecord, TabRecord, WorkspaceRecord, SNAPSHOT_VERSION,
};
pub use tails::{read_tail, remove_stale_tails, write_redacted_tail, write_tail};

/// The lock file's name in the state dir.
pub const LOCK_FILE: &str = "state.lock";

/// What the state dir knows about the record on disk, for the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    /// No load has succeeded yet; saves are refused.
    NotLoaded,
    /// The good record on disk, if any.
    Known(Option<SnapshotSummary>),
    /// A snapshot from a newer Berth is on disk; saves are refused.
    Future(u32),
}

/// The state dir and the file system it lives on.
#[derive(Debug)]
pub struct StateDir {
    dir: PathBuf,
    fs: Arc<dyn StateFs>,
    on_disk: Mutex<OnDisk>,
    /// What the caps cut in the last save, as warned; a save that cuts the same warns no more.
    last_cuts: Mutex<String>,
}

/// The path of the state dir from the environment looked up by `var`: `BERTH_STATE_DIR`, else
/// `$XDG_STATE_HOME/berth` (if absolute), else `$HOME/.local/state/berth`.
pub fn state_dir_path(var: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, PersistError> {
    let non_empty = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("BERTH_STATE_DIR") {
        if !dir.is_absolute() {
            return Err(PersistError::NoStateDir(format!(
                "BERTH_STATE_DIR {dir:?} is not an absolute path"
            )));
        }
        return Ok(dir);
    }
    // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
    if let Some(state) = non_empty("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Ok(state.join("berth"));
    }
    match non_empty("HOME").filter(|p| p.is_absolute()) {
        Some(home) => Ok(home.join(".local/state/berth")),
        None => Err(PersistError::NoStateDir("neither XDG_STATE_HOME nor HOME is set".into())),
    }
}

impl StateDir {
    /// The state dir named by the environment (see [`state_dir_path`]) on the real file system,
    /// created 0700 if missing.
    pub fn from_env() -> Result<StateDir, PersistError> {
        let dir = state_dir_path(|name| std::env::var_os(name))?;
        StateDir::open(dir, Arc::new(RealFs))
    }

    /// The state dir `dir` on `fs`, created 0700 if missing. An existing dir readable by others
    /// is tightened to 0700 (with a warning; failing to tighten it is only a warning too).
    pub fn open(dir: PathBuf, fs: Arc<dyn StateFs>) -> Result<StateDir, PersistError> {
        durable::ensure_dir(&*fs, &dir)?;
        match fs.metadata(&dir) {
            Ok(info) if info.mode & 0o077 != 0 => {
                tracing::warn!(dir = %dir.display(), mode = format!("{:o}", info.mode), "state dir is open to other users; setting it to 0700");
                if let Err(e) = fs.set_mode(&dir, DIR_MODE) {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not set the state dir to 0700");
                }
            }
            Ok(_) => {}
            Err(e) => return Err(PersistError::io("inspect", &dir, e)),
        }
        Ok(StateDir {
            dir,
            fs,
            on_disk: Mutex::new(OnDisk::NotLoaded),
            last_cuts: Mutex::new(String::new()),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The snapshot file.
    pub fn snapshot_path(&self) -> PathBuf {
        self.dir.join(snapshot::SNAPSHOT_FILE)
    }

    /// The file system seam (for the caller's own tests).
    pub fn fs(&self) -> &dyn StateFs {
        &*self.fs
    }

    /// Takes the state dir's exclusive lock (`state.lock`, an flock held until the returned
    /// guard drops), so two servers on different sockets cannot share one state dir. The lock
    /// is taken on the real file system, not through the [`StateFs`] seam.
    pub fn lock(&self) -> Result<StateLock, PersistError> {
        let path = self.dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(FILE_MODE)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| PersistError::io("open the lock file", &path, e))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => {
                // The pid is only a hint for the "in use" message; failing to write it is harmless.
                let mut handle: &File = &lock;
                let _ = handle.set_len(0).and_then(|()| writeln!(handle, "{}", std::process::id()));
                Ok(StateLock { path, _lock: lock })
            }
            Err((mut file, Errno::EAGAIN)) => {
                let mut text = String::new();
                let holder =
                    file.read_to_string(&mut text).ok().and_then(|_| text.trim().parse().ok());
                Err(PersistError::StateDirInUse { dir: self.dir.clone(), holder })
            }
            Err((_, errno)) => Err(PersistError::io("lock", &path, errno.into())),
        }
    }

    /// Removes temp files left by a killed writer in the state dir, `history/` and
    /// `snapshots/`. Call it after [`StateDir::lock`].
    pub fn cleanup_temp_files(&self) -> Result<Vec<PathBuf>, PersistError> {
        let mut removed = Vec::new();
        for dir in
            [self.dir.clone(), self.dir.join(tails::TAIL_DIR), self.dir.join(history::HISTORY_DIR)]
        {
            removed.extend(cleanup_temp_files(&*self.fs, &dir)?);
        }
        Ok(removed)
    }

    /// Loads the snapshot (see [`load::load`]) and remembers what is on disk for the guard.
    pub fn load(&self) -> Result<LoadOutcome, LoadError> {
        let result = load::load(&*self.fs, &self.dir);
        *self.on_disk() = match &result {
            Ok(outcome) if outcome.found && outcome.moved_aside.is_none() => {
                // What the file held counts, not only what loaded: a shutdown save must not
                // put fewer panes over entries this load skipped.
                let loaded = SnapshotSummary::of(&outcome.snapshot);
                OnDisk::Known(Some(SnapshotSummary {
                    panes: loaded.panes.max(outcome.held.panes),
                    live: loaded.live.max(outcome.held.live),
                    workspaces: loaded.workspaces.max(outcome.held.workspaces),
                }))
            }
            Ok(_) => OnDisk::Known(None),
            Err(LoadError::FutureVersion { found, .. }) => OnDisk::Future(*found),
            Err(LoadError::Persist(_)) => OnDisk::NotLoaded,
        };
        result
    }

    /// Moves a snapshot from a newer Berth aside (for `--move-aside-future`); afterwards saves
    /// are allowed and start from an empty record.
    pub fn move_aside_future(&self) -> Result<Option<PathBuf>, PersistError> {
        let moved = load::move_aside_future(&*self.fs, &self.dir, stamp::now_ms())?;
        if moved.is_some() {
            *self.on_disk() = OnDisk::Known(None);
        }
        Ok(moved)
    }

    /// Saves `snapshot` if the guard allows it over the record on disk, then copies it into the
    /// history when a copy is due (using `snapshot.saved_at` as the time). A failed history copy
    /// is logged, not returned: the save itself succeeded. Saves are serialized: a second one
    /// waits until the first has finished, so their renames cannot cross. It blocks on fsync, so
    /// call it off the async runtime's worker threads.
    pub fn save(
        &self,
        snapshot: &Snapshot,
        context: SaveContext,
    ) -> Result<SaveReport, PersistError> {
        let mut on_disk = self.on_disk();
        let previous = match *on_disk {
            OnDisk::NotLoaded => return Err(PersistError::NotLoaded),
            OnDisk::Future(found) => {
                return Err(PersistError::FutureVersionOnDisk {
                    found,
                    supported: SNAPSHOT_VERSION,
                    path: self.snapshot_path(),
                })
            }
            OnDisk::Known(previous) => previous,
        };
        let next = SnapshotSummary::of(snapshot);
        may_replace(previous.as_ref(), &next, context)?;
        let mut report = match save(&*self.fs, &self.dir, snapshot) {
            Ok(report) => report,
            Err(e) => {
                if matches!(e, PersistError::NotDurable { .. }) {
                    // The rename happened: the new record is the one on disk now.
                    *on_disk = OnDisk::Known(Some(next));
                }
                return Err(e);
            }
        };
        *on_disk = OnDisk::Known(Some(next));
        drop(on_disk);
        self.warn_of_cuts(&report.cuts);
        let now = if snapshot.saved_at > 0 { snapshot.saved_at } else { stamp::now_ms() };
        match rotate(&*self.fs, &self.dir, now) {
            Ok(outcome) => report.history_copy = outcome.copied,
            Err(e) => tracing::warn!(error = %e, "could not copy the snapshot into the history"),
        }
        tracing::debug!(
            context = context.as_str(),
            bytes = report.bytes,
            panes = next.panes,
            "snapshot saved"
        );
        Ok(report)
    }

    /// Replaces the tail of `pane_id` (see [`tails::write_tail`]).
    pub fn write_tail(&self, pane_id: &str, bytes: &[u8]) -> Result<(), PersistError> {
        write_tail(&*self.fs, &self.dir, pane_id, bytes)
    }

    /// Replaces the tail of `pane_id` with lines redacted already (see
    /// [`tails::write_redacted_tail`]).
    pub fn write_redacted_tail(
        &self,
        pane_id: &str,
        tail: &redact::RedactedTail,
    ) -> Result<(), PersistError> {
        write_redacted_tail(&*self.fs, &self.dir, pane_id, tail)
    }

    /// The tail of `pane_id`, if it has one (see [`tails::read_tail`]).
    pub fn read_tail(&self, pane_id: &str) -> Result<Option<Vec<u8>>, PersistError> {
        read_tail(&*self.fs, &self.dir, pane_id)
    }

    /// Removes the tails of panes not in `keep` (see [`tails::remove_stale_tails`]).
    pub fn remove_stale_tails(&self, keep: &HashSet<String>) -> Result<Vec<PathBuf>, PersistError> {
        remove_stale_tails(&*self.fs, &self.dir, keep)
    }

    /// Warns once about what the caps cut, each time that changes.
    fn warn_of_cuts(&self, cuts: &[caps::Cut]) {
        let text = caps::describe(cuts);
        let mut last = self.last_cuts.lock().unwrap_or_else(|p| p.into_inner());
        if *last != text {
            if !cuts.is_empty() {
                tracing::warn!(cut = cuts.len(), "the snapshot was cut to stay loadable: {text}");
            }
            *last = text;
        }
    }

    fn on_disk(&self) -> MutexGuard<'_, OnDisk> {
        // The state is a plain value that is always consistent, so a panic elsewhere cannot
        // have left it half-written.
        self.on_disk.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The state dir's lock; released when dropped (or when the process dies).
pub struct StateLock {
    path: PathBuf,
    _lock: Flock<File>,
}

impl StateLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for StateLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateLock").field("path", &self.path).finish()
    }
}

#[cfg(test)]
#[path = "state_dir_tests.rs"]
mod tests;
