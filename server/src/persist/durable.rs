//! Atomic, durable replacement of one file in the state dir, and cleanup of what a killed
//! writer left behind.
//!
//! [`write_atomic`] is PostgreSQL's `durable_rename` in miniature: temp file in the same
//! directory, write, fsync, rename over the target, fsync the directory. A reader therefore
//! sees the old file or the new one, never a torn or empty one (RELIABILITY #1, #2). This
//! module knows nothing about snapshots; it must not interpret the bytes it writes.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::PersistError;
use super::fs::{FileKind, StateFs};

/// The permission bits of every file Berth writes in the state dir.
pub const FILE_MODE: u32 = 0o600;

/// The permission bits of every directory Berth creates in the state dir.
pub const DIR_MODE: u32 = 0o700;

/// The marker in a temp file's name, between the target's name and `<pid>-<counter>`.
const TEMP_MARKER: &str = ".tmp-";

/// Makes temp names unique within this process; the pid makes them unique across processes.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `name` is one of the temp files [`write_atomic`] creates
/// (`.<target>.tmp-<pid>-<counter>`).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMP_MARKER)
}

/// Creates `dir` (and missing parents) with mode 0700 if it is missing, and makes the new
/// entry durable by syncing its parent. An existing directory is left as it is.
pub fn ensure_dir(fs: &dyn StateFs, dir: &Path) -> Result<(), PersistError> {
    match fs.metadata(dir) {
        Ok(info) if info.kind == FileKind::Dir => return Ok(()),
        Ok(_) => {
            return Err(PersistError::io(
                "use as a directory",
                dir,
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "something other than a directory is there",
                ),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(PersistError::io("inspect", dir, e)),
    }
    fs.create_dir_all(dir, DIR_MODE)
        .map_err(|e| PersistError::io("create the directory", dir, e))?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs.sync_dir(parent)
            .map_err(|e| PersistError::NotDurable { path: dir.to_owned(), source: e })?;
    }
    Ok(())
}

/// Replaces `path` with `bytes` atomically and durably.
///
/// The steps are: create `.<name>.tmp-<pid>-<n>` (0600) beside `path`, write, fsync, rename over
/// `path`, fsync the directory. The directory is created (0700) if missing. If a step before the
/// rename fails, `path` is untouched, the temp file is removed (best effort) and the error is
/// returned; nothing is retried, in particular never a failed fsync. If only the final directory
/// fsync fails, `path` already holds the new bytes but they may not survive a power loss, and
/// [`PersistError::NotDurable`] says so.
pub fn write_atomic(fs: &dyn StateFs, path: &Path, bytes: &[u8]) -> Result<(), PersistError> {
    let (dir, name) = split_target(path)?;
    ensure_dir(fs, dir)?;
    let (temp, mut file) = create_temp(fs, dir, name)?;
    let written = fs
        .write_all(&mut file, bytes)
        .map_err(|e| PersistError::io("write", &temp, e))
        .and_then(|()| fs.sync_file(&file).map_err(|e| PersistError::io("fsync", &temp, e)));
    drop(file);
    if let Err(e) = written.and_then(|()| {
        fs.rename(&temp, path).map_err(|e| PersistError::io("rename the temp file over", path, e))
    }) {
        remove_best_effort(fs, &temp);
        return Err(e);
    }
    fs.sync_dir(dir).map_err(|e| PersistError::NotDurable { path: path.to_owned(), source: e })
}

/// Removes leftover temp files (`.…tmp-…`) in `dir`, which a killed writer leaves behind
/// (RELIABILITY #6). A missing `dir` is fine. Call it only while holding the state dir's lock,
/// so no live writer's temp file is taken. Returns the paths removed.
pub fn cleanup_temp_files(fs: &dyn StateFs, dir: &Path) -> Result<Vec<PathBuf>, PersistError> {
    let names = match fs.list_dir(dir) {
        Ok(names) => names,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PersistError::io("list", dir, e)),
    };
    let mut removed = Vec::new();
    for name in names {
        let Some(text) = name.to_str() else { continue };
        if !is_temp_name(text) {
            continue;
        }
        let path = dir.join(&name);
        match fs.metadata(&path) {
            Ok(info) if info.kind == FileKind::File => {}
            _ => continue,
        }
        fs.remove_file(&path)
            .map_err(|e| PersistError::io("remove the leftover temp file", &path, e))?;
        tracing::info!(path = %path.display(), "removed a temp file left by an interrupted save");
        removed.push(path);
    }
    Ok(removed)
}

fn split_target(path: &Path) -> Result<(&Path, &str), PersistError> {
    let invalid = || {
        PersistError::io(
            "write",
            path,
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the target must be a file name in a directory",
            ),
        )
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).ok_or_else(invalid)?;
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(invalid)?;
    Ok((dir, name))
}

/// Creates a fresh temp file; a name taken by a leftover of an earlier process with the same pid
/// is skipped rather than reused.
fn create_temp(
    fs: &dyn StateFs,
    dir: &Path,
    name: &str,
) -> Result<(PathBuf, std::fs::File), PersistError> {
    const ATTEMPTS: usize = 8;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}{TEMP_MARKER}{}-{n}", std::process::id()));
        match fs.create_new(&temp, FILE_MODE) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some((temp, e)),
            Err(e) => return Err(PersistError::io("create a temp file", &temp, e)),
        }
    }
    let (temp, e) = last.unwrap_or_else(|| (dir.to_owned(), io::Error::other("no attempt made")));
    Err(PersistError::io("create a temp file", &temp, e))
}

fn remove_best_effort(fs: &dyn StateFs, temp: &Path) {
    match fs.remove_file(temp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(
            path = %temp.display(),
            error = %e,
            "could not remove the temp file of a failed save; it is removed at the next start"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fs::testing::{Fault, FaultyFs, FsOp, Trigger};
    use super::super::fs::RealFs;
    use super::*;

    const OLD: &[u8] = b"{\"old\":true}";
    const NEW: &[u8] = b"{\"new\":true,\"padding\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}";

    /// A state dir holding `snapshot.json` with [`OLD`].
    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snapshot.json");
        write_atomic(&RealFs, &path, OLD).unwrap();
        (dir, path)
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_crash_after_each_step_leaves_the_old_or_the_new_file_never_a_torn_one() {
        let cases: &[(Trigger, Fault, &[u8])] = &[
            (Trigger::Nth(FsOp::CreateNew, 1), Fault::CrashAfter, OLD),
            (Trigger::Nth(FsOp::Write, 1), Fault::TornWriteThenCrash, OLD),
            (Trigger::Nth(FsOp::Write, 1), Fault::CrashAfter, OLD),
            (Trigger::Nth(FsOp::SyncFile, 1), Fault::CrashAfter, OLD),
            (Trigger::Nth(FsOp::Rename, 1), Fault::CrashAfter, NEW),
            (Trigger::Nth(FsOp::SyncDir, 1), Fault::CrashAfter, NEW),
        ];
        for &(trigger, fault, expected) in cases {
            let (dir, path) = setup();
            let fs = FaultyFs::new();
            fs.inject(trigger, fault);
            assert!(write_atomic(&fs, &path, NEW).is_err(), "{trigger:?}");
            assert!(fs.crashed(), "{trigger:?}");
            // The restarted server sees the real disk.
            assert_eq!(std::fs::read(&path).unwrap(), expected, "{trigger:?}");
            cleanup_temp_files(&RealFs, dir.path()).unwrap();
            assert_eq!(entries(dir.path()), ["snapshot.json"], "{trigger:?}");
        }
    }

    #[test]
    fn a_crash_at_any_step_number_leaves_the_old_or_the_new_file() {
        for step in 1.. {
            let (dir, path) = setup();
            let fs = FaultyFs::new();
            fs.crash_after(Trigger::Step(step));
            let result = write_atomic(&fs, &path, NEW);
            let content = std::fs::read(&path).unwrap();
            assert!(content == OLD || content == NEW, "step {step}: torn file {content:?}");
            cleanup_temp_files(&RealFs, dir.path()).unwrap();
            assert_eq!(entries(dir.path()), ["snapshot.json"], "step {step}");
            if !fs.crashed() {
                result.unwrap();
                assert_eq!(content, NEW);
                break;
            }
        }
    }

    #[test]
    fn a_failed_write_or_fsync_keeps_the_old_file_removes_the_temp_and_the_next_save_starts_fresh()
    {
        let cases = [
            (FsOp::CreateNew, libc::ENOSPC),
            (FsOp::Write, libc::ENOSPC),
            (FsOp::Write, libc::EIO),
            (FsOp::SyncFile, libc::EIO),
            (FsOp::SyncFile, libc::ENOSPC),
            (FsOp::Rename, libc::EIO),
        ];
        for (op, errno) in cases {
            let (dir, path) = setup();
            let fs = FaultyFs::new();
            fs.fail(Trigger::Nth(op, 1), errno);
            let err = write_atomic(&fs, &path, NEW).unwrap_err();
            assert!(
                matches!(&err, PersistError::Io { source, .. } if source.raw_os_error() == Some(errno))
            );
            assert_eq!(std::fs::read(&path).unwrap(), OLD, "{op:?}");
            assert_eq!(entries(dir.path()), ["snapshot.json"], "{op:?}: the temp file is removed");
            let failed_save = fs.ops();
            assert!(
                failed_save.iter().filter(|o| **o == FsOp::SyncFile).count() <= 1,
                "{op:?}: a failed fsync is never retried"
            );
            write_atomic(&fs, &path, NEW).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), NEW, "{op:?}");
            let creates = fs.ops().iter().filter(|o| **o == FsOp::CreateNew).count();
            assert_eq!(creates, 2, "{op:?}: the next save uses a fresh temp file");
            assert_eq!(entries(dir.path()), ["snapshot.json"]);
        }
    }

    #[test]
    fn a_failed_directory_fsync_is_reported_as_not_durable() {
        let (dir, path) = setup();
        let fs = FaultyFs::new();
        fs.fail(Trigger::Nth(FsOp::SyncDir, 1), libc::EIO);
        let err = write_atomic(&fs, &path, NEW).unwrap_err();
        assert!(matches!(err, PersistError::NotDurable { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), NEW);
        assert_eq!(entries(dir.path()), ["snapshot.json"]);
    }

    #[test]
    fn files_are_0600_and_created_dirs_0700() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/file");
        write_atomic(&RealFs, &path, NEW).unwrap();
        assert_eq!(RealFs.metadata(&path).unwrap().mode, FILE_MODE);
        assert_eq!(RealFs.metadata(&dir.path().join("a")).unwrap().mode, DIR_MODE);
        assert_eq!(RealFs.metadata(&dir.path().join("a/b")).unwrap().mode, DIR_MODE);
    }

    #[test]
    fn cleanup_removes_only_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in [".snapshot.json.tmp-1-0", ".x.tail.tmp-99-3", "snapshot.json", ".hidden"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join(".dir.tmp-1-1")).unwrap();
        let removed = cleanup_temp_files(&RealFs, dir.path()).unwrap();
        assert_eq!(removed.len(), 2);
        assert_eq!(entries(dir.path()), [".dir.tmp-1-1", ".hidden", "snapshot.json"]);
        assert!(cleanup_temp_files(&RealFs, &dir.path().join("missing")).unwrap().is_empty());
    }
}
