//! The narrow seam between the persistence layer and the state dir's file system.
//!
//! [`StateFs`] holds exactly the operations the snapshot writer and loader need, so a test can
//! put `testing::FaultyFs` (tests and the `testing` feature only) in their place and fail or
//! "crash" any single step of a save (CONVENTIONS #5). [`RealFs`] is the production implementation on std and libc. This module
//! owns no policy: it must not decide what to write, where, or what a failure means.

use std::ffi::OsString;
use std::fmt;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// What kind of object a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symlink, socket, device or anything else.
    Other,
}

/// The few facts about a path that the persistence layer looks at (a symlink is followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    /// The length in bytes.
    pub len: u64,
    /// The permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// What the path names.
    pub kind: FileKind,
}

/// The operations of the state dir's file system that the writer and loader use.
///
/// Every method is one step that can fail on its own; a save is a sequence of them. Paths are
/// inside the state dir. Implementations must not retry a failed `sync_*` (a failed fsync may
/// have dropped the dirty pages, so a second, successful fsync proves nothing).
pub trait StateFs: Send + Sync + fmt::Debug {
    /// Creates `path` exclusively (failing if anything exists there) with permission `mode`,
    /// opened for writing.
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<File>;
    /// Writes all of `bytes` to `file`.
    fn write_all(&self, file: &mut File, bytes: &[u8]) -> io::Result<()>;
    /// Flushes `file`'s data and metadata to stable storage (fsync).
    fn sync_file(&self, file: &File) -> io::Result<()>;
    /// Renames `from` to `to` atomically, replacing `to` if it exists.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Flushes the directory `dir` itself (its entries) to stable storage.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Reads all of `path`, failing with [`io::ErrorKind::FileTooLarge`] if it holds more than
    /// `max_len` bytes. A final symlink is not followed.
    fn read(&self, path: &Path, max_len: u64) -> io::Result<Vec<u8>>;
    /// The names of the entries of `dir`.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>>;
    /// Creates `dir` and any missing parents with permission `mode`.
    fn create_dir_all(&self, dir: &Path, mode: u32) -> io::Result<()>;
    /// Sets the permission bits of `path` to `mode`.
    fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()>;
    /// Facts about `path`, following symlinks (a state dir that is a symlink to a directory is
    /// a directory).
    fn metadata(&self, path: &Path) -> io::Result<FileInfo>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl StateFs for RealFs {
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(path)
    }

    fn write_all(&self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
        file.write_all(bytes)
    }

    fn sync_file(&self, file: &File) -> io::Result<()> {
        file.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(dir)?;
        dir.sync_all()
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn read(&self, path: &Path, max_len: u64) -> io::Result<Vec<u8>> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(path)?;
        let len = file.metadata()?.len();
        if len > max_len {
            return Err(too_large(len, max_len));
        }
        // The file may grow between the length check and the read; `take` keeps the bound.
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.take(max_len.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max_len {
            return Err(too_large(bytes.len() as u64, max_len));
        }
        Ok(bytes)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        std::fs::read_dir(dir)?.map(|entry| entry.map(|e| e.file_name())).collect()
    }

    fn create_dir_all(&self, dir: &Path, mode: u32) -> io::Result<()> {
        DirBuilder::new().recursive(true).mode(mode).create(dir)
    }

    fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }

    fn metadata(&self, path: &Path) -> io::Result<FileInfo> {
        let meta = std::fs::metadata(path)?;
        let kind = if meta.is_file() {
            FileKind::File
        } else if meta.is_dir() {
            FileKind::Dir
        } else {
            FileKind::Other
        };
        Ok(FileInfo { len: meta.len(), mode: meta.permissions().mode() & 0o7777, kind })
    }
}

fn too_large(len: u64, max_len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("file holds {len} bytes, more than the {max_len} accepted"),
    )
}

/// Test doubles for [`StateFs`], public so that the server's own tests can use them too.
/// Compiled only for tests and with the `testing` feature.
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use super::*;
    use std::sync::{Mutex, MutexGuard};

    /// One kind of [`StateFs`] operation, for choosing which step a fault hits.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum FsOp {
        /// [`StateFs::create_new`].
        CreateNew,
        /// [`StateFs::write_all`].
        Write,
        /// [`StateFs::sync_file`].
        SyncFile,
        /// [`StateFs::rename`].
        Rename,
        /// [`StateFs::sync_dir`].
        SyncDir,
        /// [`StateFs::remove_file`].
        Remove,
        /// [`StateFs::read`].
        Read,
        /// [`StateFs::list_dir`].
        ListDir,
        /// [`StateFs::create_dir_all`].
        CreateDir,
        /// [`StateFs::set_mode`].
        SetMode,
        /// [`StateFs::metadata`].
        Metadata,
    }

    /// Which operation a fault applies to.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Trigger {
        /// The n-th operation of any kind, counting from 1.
        Step(usize),
        /// The n-th operation of this kind, counting from 1.
        Nth(FsOp, usize),
        /// Every operation of this kind.
        Every(FsOp),
    }

    /// What happens at the triggering operation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Fault {
        /// The operation is not performed and fails with this errno (e.g. `libc::ENOSPC`);
        /// later operations run normally.
        Fail(i32),
        /// The operation is performed, then the process "dies": this and every later
        /// operation return an error and touch nothing.
        CrashAfter,
        /// Only for writes: the first half of the bytes is written, then the process dies.
        TornWriteThenCrash,
    }

    #[derive(Debug, Default)]
    struct FaultState {
        steps: usize,
        counts: Vec<(FsOp, usize)>,
        rules: Vec<(Trigger, Fault)>,
        crashed: bool,
        log: Vec<FsOp>,
    }

    /// What [`FaultyFs`] decided for one operation.
    enum Verdict {
        Run,
        Dead,
        Fail(i32),
        RunThenCrash,
        TearThenCrash,
    }

    /// A [`RealFs`] that can be told to fail or crash at a chosen step.
    ///
    /// After a crash no operation touches the disk again, which is what the disk sees when the
    /// process dies between two steps: a test then reopens the directory with [`RealFs`] as a
    /// restarted server would.
    #[derive(Debug, Default)]
    pub struct FaultyFs {
        inner: RealFs,
        state: Mutex<FaultState>,
    }

    /// The error every operation returns once the simulated process has died.
    pub fn crash_error() -> io::Error {
        io::Error::other("simulated crash: the process died here")
    }

    impl FaultyFs {
        /// A FaultyFs with no faults planned.
        pub fn new() -> Self {
            Self::default()
        }

        /// Plans `fault` at the operation `trigger` names.
        pub fn inject(&self, trigger: Trigger, fault: Fault) -> &Self {
            self.lock().rules.push((trigger, fault));
            self
        }

        /// Plans a failure with `errno` at the operation `trigger` names.
        pub fn fail(&self, trigger: Trigger, errno: i32) -> &Self {
            self.inject(trigger, Fault::Fail(errno))
        }

        /// Plans a crash right after the operation `trigger` names.
        pub fn crash_after(&self, trigger: Trigger) -> &Self {
            self.inject(trigger, Fault::CrashAfter)
        }

        /// Whether the simulated process has died.
        pub fn crashed(&self) -> bool {
            self.lock().crashed
        }

        /// The operations attempted so far, in order.
        pub fn ops(&self) -> Vec<FsOp> {
            self.lock().log.clone()
        }

        /// Forgets the planned faults, the counters and any crash.
        pub fn reset(&self) {
            *self.lock() = FaultState::default();
        }

        fn lock(&self) -> MutexGuard<'_, FaultState> {
            // A panicking test thread must not hide the state from the others.
            self.state.lock().unwrap_or_else(|p| p.into_inner())
        }

        fn verdict(&self, op: FsOp) -> Verdict {
            let mut state = self.lock();
            if state.crashed {
                return Verdict::Dead;
            }
            state.steps += 1;
            state.log.push(op);
            let nth = match state.counts.iter_mut().find(|(o, _)| *o == op) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    state.counts.push((op, 1));
                    1
                }
            };
            let step = state.steps;
            let hit = state.rules.iter().find(|(trigger, _)| match *trigger {
                Trigger::Step(n) => n == step,
                Trigger::Nth(o, n) => o == op && n == nth,
                Trigger::Every(o) => o == op,
            });
            match hit.map(|(_, fault)| *fault) {
                None => Verdict::Run,
                Some(Fault::Fail(errno)) => Verdict::Fail(errno),
                Some(Fault::CrashAfter) => {
                    state.crashed = true;
                    Verdict::RunThenCrash
                }
                Some(Fault::TornWriteThenCrash) => {
                    state.crashed = true;
                    if op == FsOp::Write {
                        Verdict::TearThenCrash
                    } else {
                        Verdict::RunThenCrash
                    }
                }
            }
        }

        fn run<T>(&self, op: FsOp, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
            match self.verdict(op) {
                Verdict::Run => f(),
                Verdict::Dead => Err(crash_error()),
                Verdict::Fail(errno) => Err(io::Error::from_raw_os_error(errno)),
                Verdict::RunThenCrash | Verdict::TearThenCrash => {
                    // Whether the step itself succeeded does not matter: the process is gone.
                    let _ = f();
                    Err(crash_error())
                }
            }
        }
    }

    impl StateFs for FaultyFs {
        fn create_new(&self, path: &Path, mode: u32) -> io::Result<File> {
            self.run(FsOp::CreateNew, || self.inner.create_new(path, mode))
        }

        fn write_all(&self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
            match self.verdict(FsOp::Write) {
                Verdict::Run => self.inner.write_all(file, bytes),
                Verdict::Dead => Err(crash_error()),
                Verdict::Fail(errno) => Err(io::Error::from_raw_os_error(errno)),
                Verdict::RunThenCrash => {
                    let _ = self.inner.write_all(file, bytes);
                    Err(crash_error())
                }
                Verdict::TearThenCrash => {
                    let _ = self.inner.write_all(file, &bytes[..bytes.len() / 2]);
                    Err(crash_error())
                }
            }
        }

        fn sync_file(&self, file: &File) -> io::Result<()> {
            self.run(FsOp::SyncFile, || self.inner.sync_file(file))
        }

        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            self.run(FsOp::Rename, || self.inner.rename(from, to))
        }

        fn sync_dir(&self, dir: &Path) -> io::Result<()> {
            self.run(FsOp::SyncDir, || self.inner.sync_dir(dir))
        }

        fn remove_file(&self, path: &Path) -> io::Result<()> {
            self.run(FsOp::Remove, || self.inner.remove_file(path))
        }

        fn read(&self, path: &Path, max_len: u64) -> io::Result<Vec<u8>> {
            self.run(FsOp::Read, || self.inner.read(path, max_len))
        }

        fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>> {
            self.run(FsOp::ListDir, || self.inner.list_dir(dir))
        }

        fn create_dir_all(&self, dir: &Path, mode: u32) -> io::Result<()> {
            self.run(FsOp::CreateDir, || self.inner.create_dir_all(dir, mode))
        }

        fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
            self.run(FsOp::SetMode, || self.inner.set_mode(path, mode))
        }

        fn metadata(&self, path: &Path) -> io::Result<FileInfo> {
            self.run(FsOp::Metadata, || self.inner.metadata(path))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{FaultyFs, FsOp, Trigger};
    use super::*;

    #[test]
    fn real_fs_creates_exclusively_with_the_mode_and_reads_back_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut file = RealFs.create_new(&path, 0o600).unwrap();
        RealFs.write_all(&mut file, b"hello").unwrap();
        RealFs.sync_file(&file).unwrap();
        RealFs.sync_dir(dir.path()).unwrap();
        assert!(RealFs.create_new(&path, 0o600).is_err(), "create_new must be exclusive");
        let info = RealFs.metadata(&path).unwrap();
        assert_eq!((info.len, info.mode, info.kind), (5, 0o600, FileKind::File));
        assert_eq!(RealFs.read(&path, 5).unwrap(), b"hello");
        let err = RealFs.read(&path, 4).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    }

    #[test]
    fn faulty_fs_fails_the_chosen_step_and_stops_after_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultyFs::new();
        fs.fail(Trigger::Nth(FsOp::ListDir, 1), libc::EIO);
        fs.crash_after(Trigger::Nth(FsOp::CreateDir, 2));
        let err = fs.list_dir(dir.path()).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EIO));
        assert!(fs.list_dir(dir.path()).is_ok(), "a plain failure does not stop later steps");
        fs.create_dir_all(&dir.path().join("a"), 0o700).unwrap();
        assert!(fs.create_dir_all(&dir.path().join("b"), 0o700).is_err());
        assert!(dir.path().join("b").is_dir(), "a crash *after* a step performs the step");
        assert!(fs.crashed());
        assert!(fs.create_dir_all(&dir.path().join("c"), 0o700).is_err());
        assert!(!dir.path().join("c").exists(), "nothing runs after the crash");
        assert_eq!(
            fs.ops(),
            [FsOp::ListDir, FsOp::ListDir, FsOp::CreateDir, FsOp::CreateDir],
            "operations after the crash are not even attempted"
        );
    }
}
