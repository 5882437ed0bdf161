//! Conflicts seen before the merge: for the unfinished tasks of one repository, which pairs
//! would conflict with each other and which with their target branch, by `git merge-tree
//! --write-tree` in the source repository (no checkout, index or ref is touched; only objects
//! are written). A task's work is its last checkpoint (the worktree at its last turn's end),
//! else its branch. Computed after each checkpoint and each merge; each task's
//! `conflicts` in the Store is replaced by the result.
//!
//! Blocking (it runs git): called on the blocking pool, off the Store's lock.

use std::path::Path;
use std::sync::Mutex;

use super::git;
use super::ops::{apply, lock, TaskOp};
use crate::persist::task_record::{ConflictRecord, TaskRecord};
use crate::store::Store;

/// The most tasks of one repository compared (pairs grow as the square).
pub const MAX_TASKS: usize = 24;

/// The commit that stands for a task's work now.
fn tip(repo: &Path, record: &TaskRecord) -> Option<String> {
    if let Some(last) = record.checkpoints.last() {
        return Some(last.sha.clone());
    }
    git::git_ok(
        repo,
        &["rev-parse", "--verify", "--quiet", &format!("refs/heads/{}", record.branch)],
    )
    .ok()
    .filter(|s| !s.is_empty())
}

/// The files that merging `a` and `b` would leave in conflict; empty when they merge cleanly.
pub fn conflicting_files(repo: &Path, a: &str, b: &str) -> Result<Vec<String>, String> {
    let out = git::git(
        repo,
        &["merge-tree", "--write-tree", "--name-only", "--no-messages", "--end-of-options", a, b],
    )?;
    match out.ok {
        true => Ok(Vec::new()),
        // Exit 1: conflicts; the first line is the tree, then one conflicted file a line.
        false if !out.stdout.is_empty() && out.stderr.is_empty() => {
            let mut files: Vec<String> = out.stdout.lines().skip(1).map(str::to_owned).collect();
            files.retain(|f| !f.is_empty());
            files.dedup();
            Ok(files)
        }
        false => Err(format!("git merge-tree failed: {}", out.stderr)),
    }
}

/// Computes the conflicts of every unfinished task of `repo` and records them, one
/// computation of a repo at a time (so an older one never lands after a newer one).
pub fn refresh(store: &Mutex<Store>, repo: &Path) {
    git::with_repo_lock(&repo.join(".git/berth-conflicts"), || refresh_now(store, repo));
}

fn refresh_now(store: &Mutex<Store>, repo: &Path) {
    let (tasks, done): (Vec<TaskRecord>, Vec<TaskRecord>) =
        lock(store).task_records(Some(repo)).into_iter().partition(|t| {
            matches!(t.disposition.outcome.as_str(), "none" | "")
                && !matches!(t.state.as_str(), "failed" | "canceled")
        });
    // A finished task conflicts with nothing any more.
    for t in done.iter().filter(|t| !t.conflicts.is_empty()) {
        if let Ok(task) = berth_engine::ids::TaskId::parse(&t.id) {
            let _ = apply(store, TaskOp::Conflicts { task, conflicts: Vec::new() });
        }
    }
    let tasks: Vec<TaskRecord> = tasks.into_iter().take(MAX_TASKS).collect();
    let tips: Vec<Option<String>> = tasks.iter().map(|t| tip(repo, t)).collect();
    let mut found: Vec<Vec<ConflictRecord>> = vec![Vec::new(); tasks.len()];
    for i in 0..tasks.len() {
        let Some(a) = &tips[i] else { continue };
        if let Some(target) = &tasks[i].target_branch {
            let target_ref = format!("refs/heads/{target}");
            match conflicting_files(repo, &target_ref, a) {
                Ok(files) if !files.is_empty() => {
                    found[i].push(ConflictRecord { task: format!("target:{target}"), files })
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(task = %tasks[i].id, "conflicts with the target: {e}"),
            }
        }
        for j in i + 1..tasks.len() {
            let Some(b) = &tips[j] else { continue };
            match conflicting_files(repo, a, b) {
                Ok(files) if !files.is_empty() => {
                    found[i]
                        .push(ConflictRecord { task: tasks[j].id.clone(), files: files.clone() });
                    found[j].push(ConflictRecord { task: tasks[i].id.clone(), files });
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(a = %tasks[i].id, b = %tasks[j].id, "conflicts: {e}"),
            }
        }
    }
    for (t, conflicts) in tasks.iter().zip(found) {
        let Ok(task) = berth_engine::ids::TaskId::parse(&t.id) else { continue };
        let _ = apply(store, TaskOp::Conflicts { task, conflicts });
    }
}
