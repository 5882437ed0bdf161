//! Git, run as a program: `git -C <dir> <args…>` without a shell, with a timeout, its output
//! captured. The only place tasks start a process other than a pane's.
//!
//! Blocking: callers on the runtime run these through `spawn_blocking`, never under the
//! Store's lock.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one git command may run.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// What one git command did.
#[derive(Debug, Clone)]
pub struct GitOutput {
    /// Whether it exited 0.
    pub ok: bool,
    /// Its standard output, trimmed.
    pub stdout: String,
    /// Its standard error, trimmed.
    pub stderr: String,
}

/// Runs `git -C dir args…` with [`GIT_TIMEOUT`]; an error when it cannot start or runs too
/// long (it is killed then).
pub fn git(dir: &Path, args: &[&str]) -> Result<GitOutput, String> {
    let raw = git_raw(dir, args)?;
    Ok(GitOutput {
        ok: raw.ok,
        stdout: String::from_utf8_lossy(&raw.stdout).trim().to_owned(),
        stderr: raw.stderr,
    })
}

/// What one git command did, its standard output as bytes, untrimmed (diffs, `-z` lists).
#[derive(Debug, Clone)]
pub struct GitRaw {
    /// Whether it exited 0.
    pub ok: bool,
    /// Its exit code, if it exited.
    pub code: Option<i32>,
    /// Its standard output, as it wrote it.
    pub stdout: Vec<u8>,
    /// Its standard error, trimmed.
    pub stderr: String,
}

/// Runs `git -C dir args…` like [`git`], keeping its output as bytes.
pub fn git_raw(dir: &Path, args: &[&str]) -> Result<GitRaw, String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // The server's own environment must not point git elsewhere than `-C`.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    // Drain both pipes on threads so a chatty git cannot fill one and stall.
    let mut out = child.stdout.take().expect("stdout is piped above");
    let mut err = child.stderr.take().expect("stderr is piped above");
    let out = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + GIT_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "git {} ran longer than {} s and was stopped",
                    args.join(" "),
                    GIT_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("git {}: {e}", args.join(" "))),
        }
    };
    Ok(GitRaw {
        ok: status.success(),
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default().trim().to_owned(),
    })
}

/// One lock per repo, held across the steps that change its worktrees, branches or checkout
/// (add, remove, prune, merge): git itself does not expect two `git worktree add` at once in
/// one repo (one reads the other's half-made admin dir and fails).
pub fn repo_lock(repo: &Path) -> std::sync::Arc<std::sync::Mutex<()>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut locks = LOCKS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    locks.entry(repo.to_path_buf()).or_default().clone()
}

/// Runs `f` holding `repo`'s lock (see [`repo_lock`]); blocking, so never on a runtime worker.
pub fn with_repo_lock<T>(repo: &Path, f: impl FnOnce() -> T) -> T {
    let lock = repo_lock(repo);
    let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
    f()
}

/// Runs git and returns its output, or its error text when it failed.
pub fn git_ok(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = git(dir, args)?;
    if out.ok {
        Ok(out.stdout)
    } else {
        Err(format!("git {} failed: {}", args.join(" "), out.stderr))
    }
}

/// The top of the work tree holding `dir`, or why it is not a git checkout.
pub fn toplevel(dir: &Path) -> Result<PathBuf, String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    git_ok(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| format!("{} is not inside a git repository", dir.display()))
}

/// The full SHA of a commit-ish, or why it does not resolve.
pub fn resolve_commit(repo: &Path, rev: &str) -> Result<String, String> {
    if rev.starts_with('-') || rev.is_empty() {
        return Err(format!("the base {rev:?} is not a revision"));
    }
    git_ok(
        repo,
        &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")],
    )
    .map_err(|_| format!("the base {rev:?} does not resolve to a commit in {}", repo.display()))
}

/// The checked-out branch's short name; `None` on a detached HEAD.
pub fn current_branch(repo: &Path) -> Option<String> {
    git_ok(repo, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok().filter(|b| !b.is_empty())
}

/// Whether `branch` exists as a local branch.
pub fn branch_exists(repo: &Path, branch: &str) -> bool {
    git(repo, &["show-ref", "--verify", "--quiet", &format!("refs/heads/{branch}")])
        .is_ok_and(|o| o.ok)
}

/// The paths with changes (tracked or untracked) in a checkout; empty when clean.
pub fn dirty_paths(dir: &Path) -> Result<Vec<String>, String> {
    let out = git_ok(dir, &["status", "--porcelain", "--untracked-files=normal"])?;
    Ok(out.lines().map(|l| l.get(3..).unwrap_or(l).to_owned()).collect())
}
