//! Git context and review: what repo, branch and state each workspace's and pane's
//! directory is in (a cache in the Store, refreshed by `watch.rs` on cwd changes, file-system
//! events in `.git` and `workspace.refresh_git`, never by polling), the registered worktrees
//! of a repo, and diffs for review (`diff.rs`, computed on demand, never stored).
//!
//! Everything here that runs git blocks; it runs on blocking threads, off the Store's lock.

pub mod cache;
pub mod diff;
pub mod request;
pub mod serve;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::tasks::git::git;

/// The git context of a directory (`git` on a workspace or pane in `workspace.list`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GitContext {
    /// The top of its work tree.
    pub root: String,
    /// The branch checked out; `None` when HEAD is detached.
    pub branch: Option<String>,
    /// HEAD's SHA when detached.
    pub detached_sha: Option<String>,
    /// Whether the work tree has changes (staged, unstaged or untracked).
    pub dirty: bool,
    /// Commits ahead of its upstream (`None`: no upstream).
    pub ahead: Option<u64>,
    /// Commits behind its upstream (`None`: no upstream).
    pub behind: Option<u64>,
    /// Whether it is a linked worktree (`git worktree add`) rather than the main checkout.
    pub worktree: bool,
}

/// Where a checkout keeps its git data, for watching.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoDirs {
    /// The top of the work tree.
    pub root: PathBuf,
    /// Its git dir (`.git`, or `.git/worktrees/NAME` for a linked worktree).
    pub git_dir: PathBuf,
    /// The repo's common git dir (refs, packed-refs).
    pub common_dir: PathBuf,
}

static PROBES: AtomicU64 = AtomicU64::new(0);

/// How many git context probes this server ran (each one `git status` of a directory); a
/// test reads it in `server.info` to see that nothing refreshes while nothing changes.
pub fn probe_count() -> u64 {
    PROBES.load(Ordering::Relaxed)
}

pub(crate) static CHECKS: AtomicU64 = AtomicU64::new(0);

/// How many times the watcher looked at the Store's directories (each one a refresh pass:
/// the Store's lock and `git_dirs`, probing only what needs it); a test reads it in
/// `server.info` (`git_checks`) to see that a pane's output does not make the watcher look.
pub fn check_count() -> u64 {
    CHECKS.load(Ordering::Relaxed)
}

fn absolute(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    let p = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
    p.canonicalize().unwrap_or(p)
}

/// Where `dir`'s checkout keeps its git data; `None` when it is not in a work tree.
pub fn repo_dirs(dir: &Path) -> Option<RepoDirs> {
    if !dir.is_dir() {
        return None;
    }
    let out = git(dir, &["rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir"]).ok()?;
    if !out.ok {
        return None;
    }
    let mut lines = out.stdout.lines();
    let root = PathBuf::from(lines.next()?);
    let git_dir = absolute(dir, lines.next()?);
    let common_dir = absolute(dir, lines.next()?);
    Some(RepoDirs { root, git_dir, common_dir })
}

/// The git context of `dir` (two git runs); `None` when it is not in a work tree.
pub fn probe(dir: &Path) -> Option<(GitContext, RepoDirs)> {
    PROBES.fetch_add(1, Ordering::Relaxed);
    let dirs = repo_dirs(dir)?;
    // No optional locks: the probe must not write the index (that would be a `.git` event,
    // and another probe).
    let status = git(
        &dirs.root,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=normal",
        ],
    )
    .ok()
    .filter(|o| o.ok)?;
    let mut ctx = GitContext {
        root: dirs.root.display().to_string(),
        worktree: dirs.git_dir != dirs.common_dir,
        ..GitContext::default()
    };
    let mut oid = None;
    for line in status.stdout.lines() {
        if let Some(v) = line.strip_prefix("# branch.oid ") {
            oid = Some(v.to_owned()).filter(|v| v != "(initial)");
        } else if let Some(v) = line.strip_prefix("# branch.head ") {
            ctx.branch = Some(v.to_owned()).filter(|v| v != "(detached)");
        } else if let Some(v) = line.strip_prefix("# branch.ab ") {
            let mut parts = v.split(' ');
            ctx.ahead = parts.next().and_then(|a| a.trim_start_matches('+').parse().ok());
            ctx.behind = parts.next().and_then(|b| b.trim_start_matches('-').parse().ok());
        } else if !line.starts_with('#') && !line.is_empty() {
            ctx.dirty = true;
        }
    }
    if ctx.branch.is_none() {
        ctx.detached_sha = oid;
    }
    Some((ctx, dirs))
}

/// One registered worktree of a repo (`git worktree list --porcelain -z`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeEntry {
    /// Its directory.
    pub path: String,
    /// Its HEAD's SHA.
    pub head: Option<String>,
    /// Its branch (`refs/heads/` taken off), if not detached.
    pub branch: Option<String>,
    /// Whether HEAD is detached.
    pub detached: bool,
    /// Whether it is a bare repo's entry.
    pub bare: bool,
    /// Whether it is the main checkout.
    pub main: bool,
    /// Whether git has it locked.
    pub locked: bool,
    /// Whether git would prune it (its directory is gone).
    pub prunable: bool,
    /// Workspaces whose directory (or a pane's) is in it.
    #[serde(default)]
    pub workspaces: Vec<String>,
    /// Tasks whose worktree it is.
    #[serde(default)]
    pub tasks: Vec<String>,
}

/// Parses `git worktree list --porcelain -z`.
pub fn parse_worktrees(out: &[u8]) -> Vec<WorktreeEntry> {
    let mut all: Vec<WorktreeEntry> = Vec::new();
    let mut current: Option<WorktreeEntry> = None;
    for field in out.split(|b| *b == 0) {
        let field = String::from_utf8_lossy(field);
        if field.is_empty() {
            all.extend(current.take());
            continue;
        }
        let (key, value) = field.split_once(' ').unwrap_or((&field, ""));
        if key == "worktree" {
            all.extend(current.take());
            current = Some(WorktreeEntry {
                path: value.to_owned(),
                head: None,
                branch: None,
                detached: false,
                bare: false,
                main: all.is_empty(),
                locked: false,
                prunable: false,
                workspaces: Vec::new(),
                tasks: Vec::new(),
            });
            continue;
        }
        let Some(entry) = current.as_mut() else { continue };
        match key {
            "HEAD" => entry.head = Some(value.to_owned()),
            "branch" => {
                entry.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).to_owned())
            }
            "detached" => entry.detached = true,
            "bare" => entry.bare = true,
            "locked" => entry.locked = true,
            "prunable" => entry.prunable = true,
            _ => {}
        }
    }
    all.extend(current);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktree_list_porcelain_parses() {
        let out = b"worktree /r\x00HEAD abc\x00branch refs/heads/main\x00\x00worktree /r-wt\x00HEAD def\x00detached\x00locked\x00\x00";
        let all = parse_worktrees(out);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].path, "/r");
        assert_eq!(all[0].branch.as_deref(), Some("main"));
        assert!(all[0].main && !all[1].main);
        assert!(all[1].detached && all[1].locked);
        assert_eq!(all[1].head.as_deref(), Some("def"));
    }
}
