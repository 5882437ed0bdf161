//! The server as a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process that a pane's program
//! leaves behind (its parent exited: a double fork, `setsid cmd &`, a daemon) is reparented to
//! the server instead of init, so it stays a descendant of the server and can be told from a
//! process outside Berth (`peer.rs`). The server then reaps those orphans itself.
//!
//! It reaps only what nobody else waits for: never a pane's child (the PTY's waiter thread
//! waits for it; its pid is registered here, with its start time, from fork to exit) and never
//! a child the server started itself with `std::process::Command` (git and the like, which
//! stay in the server's own session and process group and are waited for by their callers).
//! An orphan is a zombie child of the server in another session or process group; each is
//! reaped by its own pid (`waitpid(pid, WNOHANG)`), never with a `wait` for any child.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use super::peer::{stat, ProcKey};

/// The pids of children that their own waiter reaps (pane children, a link opener), with
/// their start times. Held across a spawn, so a child that exits at once is known before the
/// reaper can see it.
static WAITED: Mutex<Option<HashMap<i32, u64>>> = Mutex::new(None);

fn waited() -> MutexGuard<'static, Option<HashMap<i32, u64>>> {
    WAITED.lock().unwrap_or_else(|p| p.into_inner())
}

/// How often the reaper looks without a `SIGCHLD` (a signal that coalesced, a child that
/// became a zombie while a registered spawn held the table).
const SWEEP: Duration = Duration::from_secs(5);

/// Makes this process a child subreaper. Called once by the server (headless or in the
/// window's process) before any pane starts.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether this process is a child subreaper.
pub fn is_subreaper() -> bool {
    let mut flag: libc::c_int = 0;
    // SAFETY: the kernel writes one int through the pointer, which is valid for it.
    let rc = unsafe { libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut flag as *mut libc::c_int) };
    rc == 0 && flag != 0
}

/// Starts a child that its own waiter will reap (`spawn`), registering its pid (`pid_of`) so
/// the reaper leaves it alone. The table is held across the spawn.
pub fn spawn_waited<T, E>(
    spawn: impl FnOnce() -> Result<T, E>,
    pid_of: impl Fn(&T) -> i32,
) -> Result<T, E> {
    let mut table = waited();
    let spawned = spawn()?;
    let pid = pid_of(&spawned);
    if let Some(key) = ProcKey::of(pid) {
        table.get_or_insert_with(HashMap::new).insert(key.pid, key.start);
    }
    Ok(spawned)
}

/// The direct children of this process (every thread's, since an orphan is given to one of
/// the process's threads), from `/proc/self/task/*/children`; a scan of `/proc` where the
/// kernel lacks those files.
fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    let mut have_files = false;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            have_files = true;
            found.extend(text.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    if !have_files {
        if let Ok(entries) = std::fs::read_dir("/proc") {
            found.extend(
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                    .filter(|pid| stat(*pid).is_some_and(|s| s.ppid == me)),
            );
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Reaps the orphans that are zombies now; returns how many.
pub fn reap_orphans() -> usize {
    let Some(me) = stat(std::process::id() as i32) else { return 0 };
    let mut table = waited();
    let registered = table.get_or_insert_with(HashMap::new);
    let mut reaped = 0;
    for pid in children() {
        let Some(child) = stat(pid) else {
            continue;
        };
        if registered.get(&pid) == Some(&child.start) {
            continue;
        }
        if child.state != 'Z' {
            continue;
        }
        if child.session == me.session && child.pgrp == me.pgrp {
            // The server's own `Command` child: its caller waits for it.
            continue;
        }
        let mut status = 0;
        // SAFETY: waits for this one pid only, without blocking.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc == pid {
            reaped += 1;
            tracing::debug!(pid, comm = %child.comm, "reaped an orphan left by a pane's program");
        }
    }
    // Entries whose child is gone (its waiter reaped it) or whose pid now names another
    // process are dropped.
    registered.retain(|pid, start| stat(*pid).is_some_and(|s| s.start == *start));
    reaped
}

/// Reaps orphans on every `SIGCHLD`, and every few seconds besides, until the runtime stops.
pub async fn run() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut sigchld = match signal(SignalKind::child()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "no SIGCHLD stream; orphans are reaped every few seconds");
            None
        }
    };
    loop {
        match &mut sigchld {
            Some(s) => {
                let _ = tokio::time::timeout(SWEEP, s.recv()).await;
            }
            None => tokio::time::sleep(SWEEP).await,
        }
        reap_orphans();
    }
}
