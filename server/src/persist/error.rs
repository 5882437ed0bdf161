//! The state dir's error: [`PersistError`], what went wrong on disk and what to do about it.
//!
//! A leaf of `persist/`: every file of it returns this error, so it must not import them
//! (only the guard's [`RefusedReason`], which it carries).

use std::io;
use std::path::{Path, PathBuf};

use berth_engine::ids::IdError;

use super::guard::RefusedReason;

/// Why something in the state dir could not be done.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// A file-system step failed; nothing after it was done.
    #[error("could not {action} {}: {source} ({})", .path.display(), io_hint(.source))]
    Io {
        /// What was being done, e.g. "fsync".
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file was replaced but the directory could not be synced.
    #[error(
        "wrote {} but could not sync its directory ({source}); it may not survive a power loss \
         ({})",
        .path.display(),
        io_hint(.source)
    )]
    NotDurable {
        /// The file that was written.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The snapshot could not be encoded (a bug: every field is plain data).
    #[error("could not encode the snapshot: {0}; nothing was written")]
    Encode(#[from] serde_json::Error),
    /// Even with every field cut to the tight caps the snapshot is larger than the loader
    /// reads, so it is not written (the record on disk stays).
    #[error(
        "snapshot not saved: it is {bytes} bytes even with long fields cut, more than the {max}          a start reads; close some panes (the saved state on disk is kept)"
    )]
    TooLarge {
        /// The encoded size.
        bytes: usize,
        /// The loader's limit.
        max: u64,
    },
    /// The encoder produced nothing, which is never written.
    #[error("the snapshot encoded to nothing; nothing was written")]
    EmptyEncoding,
    /// The guard kept the record on disk (RELIABILITY #5).
    #[error("snapshot not saved: {0}")]
    Refused(#[from] RefusedReason),
    /// The snapshot on disk is from a newer Berth and is never overwritten.
    #[error(
        "snapshot not saved: {} is from a newer Berth (snapshot version {found}, this Berth \
         writes {supported}) and is never overwritten; move it aside with --move-aside-future",
        .path.display()
    )]
    FutureVersionOnDisk {
        /// The version in the file.
        found: u32,
        /// The version this build writes.
        supported: u32,
        /// The snapshot file.
        path: PathBuf,
    },
    /// A save came before the snapshot was loaded, so the guard cannot know what it replaces.
    #[error(
        "snapshot not saved: the saved state has not been loaded yet (or could not be), so \
         Berth cannot tell whether the new state is better; the file is left as it is"
    )]
    NotLoaded,
    /// A pane id cannot name a file.
    #[error("pane id {id:?} cannot name a file in the state dir: {source}")]
    UnsafeId {
        /// The id.
        id: String,
        /// What is wrong with it.
        source: IdError,
    },
    /// A tail is larger than Berth keeps.
    #[error("the tail of pane {pane} is {len} bytes, more than the {max} Berth keeps")]
    TailTooLarge {
        /// The pane.
        pane: String,
        /// Its size.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// Another server holds the state dir's lock.
    #[error(
        "another Berth server{} uses the state dir {}; stop it, or give this server its own \
         state dir with BERTH_STATE_DIR",
        .holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default(),
        .dir.display()
    )]
    StateDirInUse {
        /// The state dir.
        dir: PathBuf,
        /// The pid written in the lock file, if readable.
        holder: Option<u32>,
    },
    /// No state dir could be determined from the environment.
    #[error("cannot choose a state dir: {0}; set BERTH_STATE_DIR to an absolute path")]
    NoStateDir(String),
}

impl PersistError {
    /// The OS error number behind this error, if an OS call failed.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            PersistError::Io { source, .. } | PersistError::NotDurable { source, .. } => {
                source.raw_os_error()
            }
            _ => None,
        }
    }

    /// A [`PersistError::Io`] for `action` on `path`.
    pub fn io(action: &'static str, path: &Path, source: io::Error) -> Self {
        PersistError::Io { action, path: path.to_owned(), source }
    }
}

/// What to do about an I/O error, in words.
fn io_hint(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => "the disk is full: free some space",
        Some(libc::EACCES | libc::EPERM) => "check the owner and permissions of the state dir",
        Some(libc::EROFS) => "the file system is read-only",
        Some(libc::EIO) => "the disk reported an I/O error: check it",
        _ => "check the state dir",
    }
}
