//! Pane tails: `history/<pane_id>.tail`, the last stretch of a pane's styled scrollback, so a
//! restored pane reads as the user left it.
//!
//! This module stores and bounds bytes. It must not produce or interpret them (the caller
//! renders the tail: text with SGR sequences and `\r\n` line ends), and it must not let a pane
//! id name any path but its own file: every id is checked with `validate_path_safe` first
//! (RELIABILITY #13).

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

use berth_engine::ids::validate_path_safe;

use super::durable::write_atomic;
use super::error::PersistError;
use super::fs::StateFs;
use super::redact::RedactedTail;

/// The tails directory's name in the state dir.
pub const TAIL_DIR: &str = "history";

/// The largest tail written or read: 1 MiB.
pub const MAX_TAIL_BYTES: u64 = 1024 * 1024;

const TAIL_SUFFIX: &str = ".tail";

/// The tail file of `pane_id`, after checking the id is path-safe.
pub fn tail_path(dir: &Path, pane_id: &str) -> Result<PathBuf, PersistError> {
    validate_path_safe(pane_id)
        .map_err(|source| PersistError::UnsafeId { id: pane_id.to_owned(), source })?;
    Ok(dir.join(TAIL_DIR).join(format!("{pane_id}{TAIL_SUFFIX}")))
}

/// Replaces the tail of `pane_id` with `bytes` (secrets redacted, see [`super::redact`]),
/// atomically. Refuses a path-unsafe id and a tail over [`MAX_TAIL_BYTES`].
pub fn write_tail(
    fs: &dyn StateFs,
    dir: &Path,
    pane_id: &str,
    bytes: &[u8],
) -> Result<(), PersistError> {
    // Typed command lines are in the tail too: secrets go before anything is written.
    write_checked(fs, dir, pane_id, &super::redact::redact_tail(bytes))
}

/// Replaces the tail of `pane_id` with `tail`, whose lines are redacted already (a save's,
/// from its cache of redacted lines), atomically. Refuses what [`write_tail`] refuses.
pub fn write_redacted_tail(
    fs: &dyn StateFs,
    dir: &Path,
    pane_id: &str,
    tail: &RedactedTail,
) -> Result<(), PersistError> {
    write_checked(fs, dir, pane_id, tail.as_bytes())
}

fn write_checked(
    fs: &dyn StateFs,
    dir: &Path,
    pane_id: &str,
    bytes: &[u8],
) -> Result<(), PersistError> {
    let path = tail_path(dir, pane_id)?;
    if bytes.len() as u64 > MAX_TAIL_BYTES {
        return Err(PersistError::TailTooLarge {
            pane: pane_id.to_owned(),
            len: bytes.len() as u64,
            max: MAX_TAIL_BYTES,
        });
    }
    write_atomic(fs, &path, bytes)
}

/// The tail of `pane_id`, or `None` if it has none. Refuses a path-unsafe id and a file over
/// [`MAX_TAIL_BYTES`] (which Berth never writes).
pub fn read_tail(
    fs: &dyn StateFs,
    dir: &Path,
    pane_id: &str,
) -> Result<Option<Vec<u8>>, PersistError> {
    let path = tail_path(dir, pane_id)?;
    match fs.read(&path, MAX_TAIL_BYTES) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::FileTooLarge => {
            let len = fs.metadata(&path).map(|m| m.len).unwrap_or(MAX_TAIL_BYTES + 1);
            Err(PersistError::TailTooLarge { pane: pane_id.to_owned(), len, max: MAX_TAIL_BYTES })
        }
        Err(e) => Err(PersistError::io("read", &path, e)),
    }
}

/// Removes every `*.tail` whose pane id is not in `keep` (panes closed, or gone from the
/// snapshot). Returns the paths removed. A missing tails directory is fine.
pub fn remove_stale_tails(
    fs: &dyn StateFs,
    dir: &Path,
    keep: &HashSet<String>,
) -> Result<Vec<PathBuf>, PersistError> {
    let tails = dir.join(TAIL_DIR);
    let names = match fs.list_dir(&tails) {
        Ok(names) => names,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PersistError::io("list", &tails, e)),
    };
    let mut removed = Vec::new();
    for name in names {
        let Some(name) = name.to_str() else { continue };
        let Some(pane) = name.strip_suffix(TAIL_SUFFIX) else { continue };
        if name.starts_with('.') || keep.contains(pane) {
            continue;
        }
        let path = tails.join(name);
        fs.remove_file(&path).map_err(|e| PersistError::io("remove the stale tail", &path, e))?;
        removed.push(path);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::super::fs::testing::{FaultyFs, FsOp, Trigger};
    use super::super::fs::RealFs;
    use super::*;

    #[test]
    fn tails_round_trip_0600_in_a_0700_dir() {
        let dir = tempfile::tempdir().unwrap();
        let tail = b"\x1b[1;32mok\x1b[0m\r\nline two\r\n";
        assert_eq!(read_tail(&RealFs, dir.path(), "pane_a").unwrap(), None);
        write_tail(&RealFs, dir.path(), "pane_a", tail).unwrap();
        assert_eq!(read_tail(&RealFs, dir.path(), "pane_a").unwrap().as_deref(), Some(&tail[..]));
        let path = tail_path(dir.path(), "pane_a").unwrap();
        assert_eq!(RealFs.metadata(&path).unwrap().mode, 0o600);
        assert_eq!(RealFs.metadata(&dir.path().join(TAIL_DIR)).unwrap().mode, 0o700);
    }

    #[test]
    fn path_unsafe_pane_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["../x", "-rf", "", ".", "..", "a/b", "pane_a\0", &"p".repeat(200)] {
            let write = write_tail(&RealFs, dir.path(), id, b"x");
            assert!(matches!(write, Err(PersistError::UnsafeId { .. })), "write {id:?}");
            let read = read_tail(&RealFs, dir.path(), id);
            assert!(matches!(read, Err(PersistError::UnsafeId { .. })), "read {id:?}");
        }
        assert!(!dir.path().join(TAIL_DIR).exists(), "nothing was written");
        assert!(!dir.path().join("x").exists());
    }

    #[test]
    fn tails_over_1_mib_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![b'x'; MAX_TAIL_BYTES as usize + 1];
        let err = write_tail(&RealFs, dir.path(), "pane_a", &big).unwrap_err();
        assert!(matches!(err, PersistError::TailTooLarge { .. }), "{err}");
        std::fs::create_dir(dir.path().join(TAIL_DIR)).unwrap();
        std::fs::write(tail_path(dir.path(), "pane_a").unwrap(), &big).unwrap();
        let err = read_tail(&RealFs, dir.path(), "pane_a").unwrap_err();
        assert!(matches!(err, PersistError::TailTooLarge { .. }), "{err}");
        write_tail(&RealFs, dir.path(), "pane_a", &big[1..]).unwrap();
    }

    #[test]
    fn stale_tails_are_removed_and_kept_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        for id in ["pane_a", "pane_b", "pane_c"] {
            write_tail(&RealFs, dir.path(), id, id.as_bytes()).unwrap();
        }
        std::fs::write(dir.path().join(TAIL_DIR).join("README"), "mine").unwrap();
        let keep: HashSet<String> = ["pane_b".to_owned()].into();
        let removed = remove_stale_tails(&RealFs, dir.path(), &keep).unwrap();
        assert_eq!(removed.len(), 2);
        assert!(read_tail(&RealFs, dir.path(), "pane_b").unwrap().is_some());
        assert!(read_tail(&RealFs, dir.path(), "pane_a").unwrap().is_none());
        assert!(dir.path().join(TAIL_DIR).join("README").exists());
    }

    #[test]
    fn a_failed_tail_write_keeps_the_old_tail() {
        let dir = tempfile::tempdir().unwrap();
        write_tail(&RealFs, dir.path(), "pane_a", b"old").unwrap();
        let fs = FaultyFs::new();
        fs.fail(Trigger::Nth(FsOp::SyncFile, 1), libc::EIO);
        assert!(write_tail(&fs, dir.path(), "pane_a", b"new").is_err());
        assert_eq!(read_tail(&RealFs, dir.path(), "pane_a").unwrap().unwrap(), b"old");
    }
}
