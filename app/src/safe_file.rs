//! Files Berth writes into a user's or a repository's directory (an agent's settings, a
//! backup of them, opencode's plugin), written without following a symbolic link Berth did not
//! choose to follow.
//!
//! Every write goes through a directory opened once ([`Target`]): the new content goes into a
//! temporary file that Berth creates there itself (`O_CREAT | O_EXCL | O_NOFOLLOW`, a random
//! name), takes the old file's mode and owner, is synced, and is renamed onto the name with
//! `renameat` in that same directory. A link planted where the temporary file or the backup
//! goes is never written through: the rename replaces the link itself.
//!
//! Links are decided once, when the target is opened ([`Target::in_project`],
//! [`Target::for_user`]): in a project (a repo, which
//! may carry relative links that survive `git clone`) no component under the project's own
//! directory may be a link; in the user's own settings a link at the file itself (dotfiles) is
//! resolved, a few hops at most, and the file it points to is written in place of the link, so
//! the link stays a link. It must not touch anything but the one name it was opened for and
//! the temporary names it made.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use anyhow::{bail, Context, Result};
use nix::errno::Errno;
use nix::fcntl::{openat, readlinkat, renameat, AtFlags, OFlag, AT_FDCWD};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{fchown, fsync, unlinkat, Gid, Uid, UnlinkatFlags};

/// The most links followed from a user's settings file to the file itself.
pub const MAX_HOPS: usize = 8;

/// One file to read and replace: its directory, open, and its name in it.
#[derive(Debug)]
pub struct Target {
    dir: OwnedFd,
    name: OsString,
    /// The file's path as shown to the user (after links were resolved).
    pub path: PathBuf,
    /// The path it was asked for, when that was a link (the link is left as it is).
    pub link: Option<PathBuf>,
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC
}

fn is_link(stat: &FileStat) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK
}

fn is_regular(stat: &FileStat) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG
}

/// Opens (making it where missing) the directory `name` inside `dir`, never through a link.
fn open_subdir(dir: &OwnedFd, name: &OsStr, shown: &Path) -> Result<OwnedFd> {
    let flags = dir_flags() | OFlag::O_NOFOLLOW;
    match openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::ENOENT) => {
            match mkdirat(dir, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", shown.display()))
                }
            }
            openat(dir, name, flags, Mode::empty())
                .with_context(|| format!("cannot open {}", shown.display()))
        }
        Err(Errno::ELOOP | Errno::ENOTDIR) => bail!(
            "{} is a symbolic link or not a directory; Berth writes nothing through a link in a \
             project (nothing was changed)",
            shown.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot open {}", shown.display())),
    }
}

/// Opens a directory in the user's own tree (making it where missing when `make`), following
/// links as the user laid them out.
fn open_user_dir(dir: &Path, make: bool) -> Result<OwnedFd> {
    if make {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    openat(AT_FDCWD, dir, dir_flags(), Mode::empty())
        .with_context(|| format!("cannot open {}", dir.display()))
}

impl Target {
    /// The target for `rel` inside the project `root` (links refused under `root`).
    pub fn in_project(root: &Path, rel: &Path) -> Result<Self> {
        let mut dir = openat(AT_FDCWD, root, dir_flags(), Mode::empty())
            .with_context(|| format!("cannot open the project {}", root.display()))?;
        let parts: Vec<&OsStr> = rel
            .components()
            .map(|c| match c {
                Component::Normal(part) => Ok(part),
                other => bail!("{} is not a plain relative path ({other:?})", rel.display()),
            })
            .collect::<Result<_>>()?;
        let Some((name, dirs)) = parts.split_last() else {
            bail!("{} names no file", rel.display());
        };
        let mut shown = root.to_path_buf();
        for part in dirs {
            shown.push(part);
            dir = open_subdir(&dir, part, &shown)?;
        }
        let target = Target { dir, name: (*name).to_owned(), path: shown.join(name), link: None };
        if target.stat()?.is_some_and(|s| is_link(&s)) {
            bail!(
                "{} is a symbolic link; Berth writes nothing through a link in a project \
                 (nothing was changed)",
                target.path.display()
            );
        }
        Ok(target)
    }

    /// The target for the user's own file `path`: a link there is followed (at most
    /// [`MAX_HOPS`]) to the file it names, which is written in its place.
    pub fn for_user(path: &Path) -> Result<Self> {
        let asked = path.to_path_buf();
        let mut path = path.to_path_buf();
        for _ in 0..=MAX_HOPS {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                bail!("{} names no file", path.display());
            };
            let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            // Only the first directory is made: a link's target directory must be there already.
            let dir = open_user_dir(parent, path == asked)?;
            let target = Target {
                dir,
                name: name.to_owned(),
                path: path.clone(),
                link: (path != asked).then(|| asked.clone()),
            };
            match target.stat()? {
                Some(s) if is_link(&s) => {
                    let to = readlinkat(&target.dir, target.name.as_os_str())
                        .with_context(|| format!("cannot read the link {}", path.display()))?;
                    path = parent.join(to);
                }
                _ => return Ok(target),
            }
        }
        bail!("{} is a chain of more than {MAX_HOPS} links; left alone", asked.display())
    }

    /// The target for a file beside this one named `name + suffix` (a backup), in the same
    /// directory, never through a link.
    pub fn sibling(&self, suffix: &str) -> Result<Self> {
        let dir = self.dir.try_clone().context("cannot duplicate a directory descriptor")?;
        let mut name = self.name.clone();
        name.push(suffix);
        Ok(Target { dir, path: self.path.with_file_name(&name), name, link: None })
    }

    /// The file's status, not following a link; `None` when there is none.
    fn stat(&self) -> Result<Option<FileStat>> {
        match fstatat(&self.dir, self.name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot look at {}", self.path.display())),
        }
    }

    /// Whether the name exists (as anything, a link included).
    pub fn exists(&self) -> Result<bool> {
        Ok(self.stat()?.is_some())
    }

    /// The file's bytes (never through a link); `None` when there is no file.
    pub fn read(&self) -> Result<Option<Vec<u8>>> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let fd = match openat(&self.dir, self.name.as_os_str(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(Errno::ELOOP) => {
                bail!("{} is a symbolic link; not read through", self.path.display())
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", self.path.display()))
            }
        };
        let stat = fstat(&fd).with_context(|| format!("cannot read {}", self.path.display()))?;
        if !is_regular(&stat) {
            bail!("{} is not a regular file; left alone", self.path.display());
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(fd), &mut bytes)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(Some(bytes))
    }

    /// Replaces the file with `bytes`: a temporary file of Berth's own making in the same
    /// directory, with the old file's mode and owner (`like` names another file to take them
    /// from, e.g. a backup from the file it backs up), synced and renamed onto the name. A file
    /// the user made read-only is refused.
    pub fn write(&self, bytes: &[u8], like: Option<&Target>) -> Result<()> {
        let old = match like {
            Some(other) => other.stat()?.filter(is_regular),
            None => None,
        };
        let own = self.stat()?;
        self.check_writable()?;
        let old = old.or(own.filter(is_regular));
        let (tmp_name, fd) = self.create_temp()?;
        let done = (|| -> Result<()> {
            let mut file = std::fs::File::from(fd);
            std::io::Write::write_all(&mut file, bytes)?;
            if let Some(stat) = &old {
                fchmod(file.as_fd(), Mode::from_bits_truncate(stat.st_mode & 0o7777))?;
                let (uid, gid) = (Uid::from_raw(stat.st_uid), Gid::from_raw(stat.st_gid));
                let mine = fstat(file.as_fd())?;
                if mine.st_uid != stat.st_uid || mine.st_gid != stat.st_gid {
                    // Only root may give a file away; a user keeps their own group at least.
                    let _ = fchown(file.as_fd(), Some(uid), Some(gid))
                        .or_else(|_| fchown(file.as_fd(), None, Some(gid)));
                }
            } else {
                // A new file: readable as a file the user made would be (umask applied).
                fchmod(file.as_fd(), Mode::from_bits_truncate(0o666 & !current_umask()))?;
            }
            fsync(file.as_fd())?;
            renameat(&self.dir, tmp_name.as_os_str(), &self.dir, self.name.as_os_str())?;
            let _ = fsync(&self.dir);
            Ok(())
        })();
        if let Err(e) = done {
            let _ = unlinkat(&self.dir, tmp_name.as_os_str(), UnlinkatFlags::NoRemoveDir);
            return Err(e).with_context(|| format!("cannot write {}", self.path.display()));
        }
        Ok(())
    }

    /// Refuses a file the user made read-only (no owner write bit): Berth does not replace it.
    pub fn check_writable(&self) -> Result<()> {
        if let Some(stat) = self.stat()?.filter(is_regular) {
            if stat.st_mode & 0o200 == 0 {
                bail!(
                    "{} is read-only (mode {:o}); make it writable to let Berth change it \
                     (nothing was changed)",
                    self.path.display(),
                    stat.st_mode & 0o7777
                );
            }
        }
        Ok(())
    }

    /// Removes the name (a file; a link itself, never what it points to).
    pub fn remove(&self) -> Result<()> {
        match unlinkat(&self.dir, self.name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove {}", self.path.display())),
        }
    }

    /// A new empty file of Berth's own in the target's directory, under a random name.
    fn create_temp(&self) -> Result<(OsString, OwnedFd)> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        for _ in 0..16 {
            let mut name = OsString::from(".");
            name.push(&self.name);
            name.push(format!(".berth-{:016x}", random()));
            match openat(&self.dir, name.as_os_str(), flags, Mode::from_bits_truncate(0o600)) {
                Ok(fd) => return Ok((name, fd)),
                Err(Errno::EEXIST) => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create a file beside {}", self.path.display())
                    })
                }
            }
        }
        bail!("cannot find a free temporary name beside {}", self.path.display())
    }
}

/// A random number from the standard library's OS-seeded hasher keys (each `RandomState` is
/// new keys), for temporary names; uniqueness is `O_EXCL`'s job, this only makes names
/// unguessable.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

/// The process's umask (read by setting it and putting it back; the CLI is one thread here).
fn current_umask() -> u32 {
    let old = nix::sys::stat::umask(Mode::from_bits_truncate(0o022));
    nix::sys::stat::umask(old);
    old.bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};

    #[test]
    fn a_planted_link_at_the_temporary_or_backup_name_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = home.join("src/repo");
        std::fs::create_dir_all(repo.join(".claude")).unwrap();
        std::fs::write(home.join(".bashrc"), "# mine\n").unwrap();
        for name in ["settings.berth-tmp", "settings.json.berth-backup", ".settings.json.berth-x"] {
            symlink("../../../.bashrc", repo.join(".claude").join(name)).unwrap();
        }
        let target = Target::in_project(&repo, Path::new(".claude/settings.json")).unwrap();
        target.write(b"{}\n", None).unwrap();
        target.sibling(".berth-backup").unwrap().write(b"{\"old\":1}\n", Some(&target)).unwrap();
        assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "# mine\n");
        assert_eq!(std::fs::read(repo.join(".claude/settings.json")).unwrap(), b"{}\n");
        let backup = repo.join(".claude/settings.json.berth-backup");
        assert!(!std::fs::symlink_metadata(&backup).unwrap().file_type().is_symlink());
    }

    #[test]
    fn links_in_a_project_are_refused_and_a_users_own_link_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        symlink(&elsewhere, repo.join(".claude")).unwrap();
        let err = Target::in_project(&repo, Path::new(".claude/settings.json")).unwrap_err();
        assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        std::fs::create_dir_all(repo.join(".cursor")).unwrap();
        symlink(elsewhere.join("x.json"), repo.join(".cursor/hooks.json")).unwrap();
        let err = Target::in_project(&repo, Path::new(".cursor/hooks.json")).unwrap_err();
        assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        assert!(!elsewhere.join("settings.json").exists() && !elsewhere.join("x.json").exists());

        // Dotfiles: ~/.claude/settings.json -> ../dotfiles/claude.json, mode 0600.
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join("dotfiles")).unwrap();
        let real = home.join("dotfiles/claude.json");
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = home.join(".claude/settings.json");
        symlink("../dotfiles/claude.json", &link).unwrap();
        let target = Target::for_user(&link).unwrap();
        assert_eq!(target.link.as_deref(), Some(link.as_path()));
        target.write(b"{\"a\":1}", None).unwrap();
        target.sibling(".berth-backup").unwrap().write(b"{}", Some(&target)).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"{\"a\":1}");
        assert_eq!(std::fs::metadata(&real).unwrap().mode() & 0o777, 0o600);
        let backup = home.join("dotfiles/claude.json.berth-backup");
        assert_eq!(std::fs::metadata(&backup).unwrap().mode() & 0o777, 0o600);

        // A read-only file is refused and stays as it was.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = target.write(b"{}", None).unwrap_err();
        assert!(format!("{err:#}").contains("read-only"), "{err:#}");
        assert_eq!(std::fs::read(&real).unwrap(), b"{\"a\":1}");
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(home.join("dotfiles"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".berth-"))
            .filter(|e| !e.file_name().to_string_lossy().ends_with("berth-backup"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
