//! Git, run as a program: `git -C <dir> <args…>` without a shell, with a timeout, its output
//! captured. The only place Berth runs git (tasks, the git probe, diffs, the watcher): every
//! call goes through [`git_raw`], hardened for a repository Berth did not make.
//!
//! A repo is data, never code: a repo's own config (`.git/config`, which arrives with a
//! repository copied as a directory or unpacked from an archive) must not make Berth run a
//! program. So every git runs with `core.fsmonitor=false` and `core.hooksPath=/dev/null` (no
//! hook can be found there; the user's opt-in `berth.runHooks=true` in their global git
//! config keeps hooks), no pager, no editor, no prompt, no system config; and where its
//! command can reach them, the program-running keys that the repo's own config sets (filter
//! drivers, merge drivers, diff drivers, `core.sshCommand`, `core.askPass`, credential helpers,
//! `gpg.program`) are overridden for that call. Diffs are run with `--no-ext-diff
//! --no-textconv` by their callers, and every path goes after `--`.
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

/// The subcommands that never run a filter, driver, hook or helper, so need no look at the
/// repo's own config first (they still get the flags every call gets).
const PLAIN: &[&str] = &[
    "rev-parse",
    "ls-files",
    "check-ignore",
    "show-ref",
    "symbolic-ref",
    "check-ref-format",
    "config",
];

/// The config keys that name a program git may run, as a regex over `git config` names.
const RUNS_PROGRAMS: &str = "^(filter\\..*\\.(clean|smudge|process|required)|merge\\..*\\.driver\
     |diff\\..*\\.(command|textconv)|core\\.(sshcommand|askpass|editor|pager)\
     |credential\\.(.*\\.)?helper|gpg\\.(.*\\.)?program|berth\\.runhooks)$";

/// The `-c` overrides for the program-running keys that `dir`'s repository sets in its own
/// config (scope `local` or `worktree`), and whether the user opted in to hooks
/// (`berth.runHooks=true` in their global config; the system config is not read).
fn neutralised(dir: &Path) -> (Vec<String>, bool) {
    let pattern: String = RUNS_PROGRAMS.split_whitespace().collect();
    let Ok(out) =
        spawn_git(dir, &[], &[], &["config", "--null", "--show-scope", "--get-regexp", &pattern])
    else {
        return (Vec::new(), false);
    };
    let mut overrides = Vec::new();
    let mut hooks = false;
    // Each entry: scope NUL key LF value NUL.
    let mut fields = out.stdout.split(|b| *b == 0);
    while let (Some(scope), Some(entry)) = (fields.next(), fields.next()) {
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, ""));
        // Sections and names are case-blind, a driver's name (the subsection) is not.
        let name = key.to_owned();
        let key = key.to_ascii_lowercase();
        let scope = String::from_utf8_lossy(scope);
        let repo_own = matches!(scope.trim(), "local" | "worktree");
        if key == "berth.runhooks" {
            // The user's own setting, the last one they set; a repo's is ignored.
            if !repo_own {
                hooks = matches!(
                    value.trim().to_ascii_lowercase().as_str(),
                    "true" | "yes" | "on" | "1"
                );
            }
            continue;
        }
        if !repo_own {
            continue;
        }
        let safe = if key.starts_with("filter.") && key.ends_with(".required") {
            "false"
        } else if key.starts_with("merge.") {
            // A merge driver that always fails: the merge reports a conflict, runs nothing.
            "false"
        } else if key == "core.sshcommand" {
            "ssh"
        } else if key == "gpg.program" || key == "gpg.openpgp.program" {
            "gpg"
        } else if key == "gpg.ssh.program" {
            "ssh-keygen"
        } else if key == "gpg.x509.program" {
            "gpgsm"
        } else {
            // Filters, diff drivers, helpers, askpass: an empty value runs nothing.
            ""
        };
        overrides.push(format!("{name}={safe}"));
    }
    overrides.sort();
    overrides.dedup();
    (overrides, hooks)
}

/// Runs `git -C dir args…` like [`git`], keeping its output as bytes.
pub fn git_raw(dir: &Path, args: &[&str]) -> Result<GitRaw, String> {
    git_env(dir, &[], args)
}

/// The environment variables a caller may set for one git run (an index of its own for a
/// checkpoint, the identity of a commit Berth makes); anything else is refused.
const CALLER_ENV: &[&str] = &[
    "GIT_INDEX_FILE",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// Runs `git -C dir args…` like [`git_raw`] with `env` set for it (only the
/// [`CALLER_ENV`] names: a private index, a commit's identity).
pub fn git_env(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Result<GitRaw, String> {
    if let Some((name, _)) = env.iter().find(|(k, _)| !CALLER_ENV.contains(k)) {
        return Err(format!("git may not be given {name} by a caller"));
    }
    let plain = args.iter().find(|a| !a.starts_with('-')).is_none_or(|sub| PLAIN.contains(sub));
    let (overrides, hooks) = if plain { (Vec::new(), false) } else { neutralised(dir) };
    let mut config = overrides;
    if !hooks {
        config.push("core.hooksPath=/dev/null".to_owned());
    }
    spawn_git(dir, &config, env, args)
}

/// Runs git with the flags and environment every call gets, and `config` as `-c` pairs.
fn spawn_git(
    dir: &Path,
    config: &[String],
    env: &[(&str, &str)],
    args: &[&str],
) -> Result<GitRaw, String> {
    let mut command = Command::new("git");
    command.arg("--no-pager").arg("-c").arg("core.fsmonitor=false");
    for pair in config {
        command.arg("-c").arg(pair);
    }
    let mut child = command
        .arg("-C")
        .arg(dir)
        .args(args)
        // The server's own environment must not point git elsewhere than `-C`.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_SSH")
        .env_remove("GIT_SSH_COMMAND")
        .env_remove("GIT_ASKPASS")
        .env_remove("SSH_ASKPASS")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("GIT_EDITOR", "true")
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("LC_ALL", "C")
        .envs(env.iter().copied())
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A repo whose own config and hooks would each touch a marker file if git ran them.
    pub(crate) fn hostile_repo(root: &Path) -> PathBuf {
        let dir = root.join("repo");
        std::fs::create_dir_all(&dir).unwrap();
        let plain = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(args)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", root)
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        plain(&["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("a.txt"), "one\n").unwrap();
        std::fs::write(dir.join(".gitattributes"), "*.txt filter=evil diff=evil merge=evil\n")
            .unwrap();
        plain(&["add", "-A"]);
        plain(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"]);
        // What a repository copied as a directory (or unpacked) can carry in its .git.
        let script = |name: &str| {
            let path = root.join(name);
            let marker = root.join(format!("{name}.ran"));
            std::fs::write(&path, format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()))
                .unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path.display().to_string()
        };
        let config = format!(
            "[core]\n\tfsmonitor = {}\n[filter \"evil\"]\n\tclean = {}\n\tsmudge = {}\n\
             [diff \"evil\"]\n\ttextconv = {}\n\tcommand = {}\n[merge \"evil\"]\n\tdriver = {}\n",
            script("fsmonitor"),
            script("clean"),
            script("smudge"),
            script("textconv"),
            script("extdiff"),
            script("mergedriver"),
        );
        let mut text = std::fs::read_to_string(dir.join(".git/config")).unwrap();
        text.push_str(&config);
        std::fs::write(dir.join(".git/config"), text).unwrap();
        let hook = dir.join(".git/hooks/post-checkout");
        std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
        std::fs::copy(script("post-checkout"), &hook).unwrap();
        dir
    }

    /// The markers of the scripts that ran.
    pub(crate) fn ran(root: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ran"))
            .collect();
        names.sort();
        names
    }

    /// A user who wants hooks says so in their own global config, which a repo cannot set.
    #[test]
    fn hooks_run_when_the_user_opted_in_globally_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = hostile_repo(&root);
        let local = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["config", "berth.runHooks", "true"])
            .status()
            .unwrap();
        assert!(local.success());
        let (overrides, hooks) = neutralised(&dir);
        assert!(!hooks, "a repo's own config cannot opt in");
        for key in ["filter.evil.clean=", "filter.evil.smudge=", "merge.evil.driver=false"] {
            assert!(overrides.iter().any(|o| o == key), "{key} in {overrides:?}");
        }
    }
}
