//! `task.finish`: `--merge` (the task branch into the target branch, in the source checkout)
//! or `--discard`, then the worktree removed and the branch deleted if Berth created it.
//!
//! Every refusal comes before anything changes: a source checkout on another branch or with
//! uncommitted changes, a dirty or locked worktree (unless forced), a task not completed
//! (merge, unless forced). A merge that conflicts is aborted, leaving the source checkout as
//! it was, and answers the conflicting files; the task keeps its worktree. The disposition is
//! recorded before the cleanup; a cleanup that fails is recorded as `finish_error` and a later
//! finish retries it. Git runs on the blocking pool, never under the Store's lock.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use berth_engine::ids::{PaneId, TaskId};
use serde_json::json;

use super::git;
use super::model::TaskState;
use super::ops::{apply, lock, TaskOp};
use super::request::FinishParams;
use crate::commands::Command;
use crate::error::CommandError;
use crate::persist::stamp::now_ms;
use crate::persist::task_record::{DispositionRecord, TaskRecord};
use crate::store::Store;

/// Finishes a task; the future yields its record, or the refusal.
pub fn finish(
    store: &Arc<Mutex<Store>>,
    params: FinishParams,
) -> impl std::future::Future<Output = Result<TaskRecord, CommandError>> + Send + 'static {
    let work = tokio::spawn(run(store.clone(), params));
    async move { work.await.map_err(|e| CommandError::Internal(format!("the finish failed: {e}")))? }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CommandError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::Internal(format!("a git step failed to run: {e}")))
}

/// Why a merge did not happen.
enum MergeFailure {
    /// Refused before anything changed.
    Refused(String),
    /// Conflicts: the merge was aborted; the files.
    Conflicts(Vec<String>),
}

async fn run(store: Arc<Mutex<Store>>, p: FinishParams) -> Result<TaskRecord, CommandError> {
    let id = TaskId::parse(&p.task_id)?;
    let record = lock(&store).task_record(&id)?;
    let state = TaskState::parse(&record.state).unwrap_or(TaskState::Failed);
    let wt = PathBuf::from(&record.worktree_path);
    let repo = PathBuf::from(&record.source_repo);
    if record.disposition.outcome != "none" {
        if !wt.exists() {
            return Err(CommandError::Conflict(format!(
                "task {id} is {} already and its worktree is gone",
                record.disposition.outcome
            )));
        }
        // A finish whose cleanup failed: retry it.
        return cleanup(&store, &id, &record, p.force, p.keep_checkpoints).await;
    }
    // Checks on the worktree, for both ways.
    if wt.exists() && !p.force {
        let wt2 = wt.clone();
        let repo2 = repo.clone();
        let problem = blocking(move || worktree_problem(&repo2, &wt2)).await?;
        if let Some(problem) = problem {
            return Err(CommandError::Conflict(format!(
                "{problem}; pass --force to remove it anyway"
            )));
        }
    }
    let disposition = if p.merge {
        if state != TaskState::Completed && !p.force {
            return Err(CommandError::Conflict(format!(
                "task {id} is {}, not completed; merge it with --force, or wait for its report \
                 (berth task wait {id})",
                state.as_str()
            )));
        }
        let target =
            p.target.clone().or_else(|| record.target_branch.clone()).ok_or_else(|| {
                CommandError::BadParams(format!(
                "the source checkout {} was on a detached HEAD when the task started; name the \
                 branch to merge into with --target",
                repo.display()
            ))
            })?;
        let way = if p.squash {
            Way::Squash
        } else if p.rebase {
            Way::Rebase
        } else if p.ff_only {
            Way::FastForward
        } else {
            Way::Merge
        };
        let (repo2, branch, target2, wt2) =
            (repo.clone(), record.branch.clone(), target.clone(), wt.clone());
        let message = match (&record.result, p.squash) {
            // A squash is the task's one commit: its label, then the worker's summary.
            (Some(result), true) => format!("{}\n\n{}", record.label, result.summary.trim()),
            (None, true) => record.label.clone(),
            _ => format!("Merge task {id}: {}", record.label),
        };
        let merged = blocking(move || {
            git::with_repo_lock(&repo2, || merge(&repo2, &wt2, &branch, &target2, way, &message))
        })
        .await?;
        if merged.is_ok() && !state.is_terminal() {
            // Merged before its report (--force): the user took the work over.
            apply(
                &store,
                TaskOp::Transition {
                    task: id.clone(),
                    to: TaskState::Canceled,
                    reason: Some(json!({ "reason": "merged_before_report" })),
                },
            )?;
        }
        match merged {
            Ok(sha) => DispositionRecord {
                outcome: "merged".into(),
                target_ref: Some(target),
                merged_sha: Some(sha),
                branch_deleted: false,
                at: Some(now_ms()),
            },
            Err(MergeFailure::Refused(why)) => return Err(CommandError::Conflict(why)),
            Err(MergeFailure::Conflicts(files)) => {
                apply(
                    &store,
                    TaskOp::Finished {
                        task: id.clone(),
                        disposition: None,
                        finish_error: Some(json!({ "conflicts": files })),
                    },
                )?;
                return Err(CommandError::Conflict(format!(
                    "merging {} into {target} conflicts in: {}; the merge was aborted and {} is \
                     as it was; resolve it in the task's worktree {} (rebase on {target}), then \
                     finish again",
                    record.branch,
                    files.join(", "),
                    repo.display(),
                    wt.display()
                )));
            }
        }
    } else {
        if !state.is_terminal() {
            apply(
                &store,
                TaskOp::Transition {
                    task: id.clone(),
                    to: TaskState::Canceled,
                    reason: Some(json!({ "reason": "discarded" })),
                },
            )?;
        }
        DispositionRecord {
            outcome: "discarded".into(),
            at: Some(now_ms()),
            ..DispositionRecord::default()
        }
    };
    apply(
        &store,
        TaskOp::Finished { task: id.clone(), disposition: Some(disposition), finish_error: None },
    )?;
    let record = lock(&store).task_record(&id)?;
    let done = cleanup(&store, &id, &record, p.force, p.keep_checkpoints).await;
    // The target moved (a merge) or a task left: the others' conflicts are computed anew.
    let (store2, repo2) = (store.clone(), repo.clone());
    let _ = blocking(move || super::conflicts::refresh(&store2, &repo2)).await;
    done
}

/// Why a worktree may not be removed: uncommitted changes or a lock.
fn worktree_problem(repo: &Path, wt: &Path) -> Option<String> {
    match git::dirty_paths(wt) {
        Ok(paths) if !paths.is_empty() => {
            return Some(format!(
                "the task's worktree {} has uncommitted changes ({})",
                wt.display(),
                paths.join(", ")
            ))
        }
        Ok(_) => {}
        Err(e) => return Some(format!("cannot read the worktree {}: {e}", wt.display())),
    }
    if let Ok(list) = git::git_ok(repo, &["worktree", "list", "--porcelain"]) {
        let mut this = false;
        for line in list.lines() {
            if let Some(path) = line.strip_prefix("worktree ") {
                this = Path::new(path) == wt;
            } else if this && (line == "locked" || line.starts_with("locked ")) {
                return Some(format!(
                    "the task's worktree {} is locked (git worktree lock)",
                    wt.display()
                ));
            }
        }
    }
    None
}

/// How a task's branch goes into its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// A merge commit (`--no-ff`).
    Merge,
    /// One commit of all the work, with the task's label and summary.
    Squash,
    /// The branch rebased onto the target in the task's worktree, then fast-forwarded.
    Rebase,
    /// A fast-forward only.
    FastForward,
}

/// The files `dir`'s checkout has in conflict now.
fn unmerged(dir: &Path) -> Vec<String> {
    git::git_ok(dir, &["diff", "--no-ext-diff", "--no-textconv", "--name-only", "--diff-filter=U"])
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Rebases the task's branch (checked out in `wt`) onto `target`; a conflict is aborted, the
/// worktree left as it was.
fn rebase(wt: &Path, target: &str) -> Result<(), MergeFailure> {
    let onto = format!("refs/heads/{target}");
    let out =
        git::git(wt, &["rebase", "--end-of-options", &onto]).map_err(MergeFailure::Refused)?;
    if out.ok {
        return Ok(());
    }
    let files = unmerged(wt);
    let _ = git::git(wt, &["rebase", "--abort"]);
    if files.is_empty() {
        return Err(MergeFailure::Refused(format!(
            "rebasing the task's branch onto {target} failed: {} {}",
            out.stdout, out.stderr
        )));
    }
    Err(MergeFailure::Conflicts(files))
}

/// Merges `branch` into `target` in the source checkout (`way`); the target's new commit.
fn merge(
    repo: &Path,
    wt: &Path,
    branch: &str,
    target: &str,
    way: Way,
    message: &str,
) -> Result<String, MergeFailure> {
    let squash = way == Way::Squash;
    let refused = MergeFailure::Refused;
    match git::current_branch(repo) {
        Some(b) if b == target => {}
        Some(b) => {
            return Err(refused(format!(
                "the source checkout {} is on branch {b}, not {target}; check out {target} there \
                 first, or merge into {b} with --target {b}",
                repo.display()
            )))
        }
        None => {
            return Err(refused(format!(
                "the source checkout {} is on a detached HEAD, not {target}; check out {target} \
                 there first",
                repo.display()
            )))
        }
    }
    let dirty =
        git::git_ok(repo, &["status", "--porcelain", "--untracked-files=no"]).map_err(refused)?;
    if !dirty.is_empty() {
        let files: Vec<&str> = dirty.lines().map(|l| l.get(3..).unwrap_or(l)).collect();
        return Err(refused(format!(
            "the source checkout {} has uncommitted changes ({}); commit or stash them first",
            repo.display(),
            files.join(", ")
        )));
    }
    if way == Way::Rebase {
        rebase(wt, target)?;
    }
    if matches!(way, Way::Rebase | Way::FastForward) {
        let out =
            git::git(repo, &["merge", "--ff-only", "--end-of-options", branch]).map_err(refused)?;
        if !out.ok {
            return Err(refused(format!(
                "{branch} is not a fast-forward of {target} (it moved on since the task \
                 started); finish with --rebase, or a merge"
            )));
        }
        return git::git_ok(repo, &["rev-parse", "HEAD"]).map_err(refused);
    }
    let out = if squash {
        git::git(repo, &["merge", "--squash", "--end-of-options", branch]).map_err(refused)?
    } else {
        git::git(
            repo,
            &["merge", "--no-ff", "--no-edit", "-m", message, "--end-of-options", branch],
        )
        .map_err(refused)?
    };
    if !out.ok {
        let files = git::git_ok(
            repo,
            &["diff", "--no-ext-diff", "--no-textconv", "--name-only", "--diff-filter=U"],
        )
        .unwrap_or_default();
        let files: Vec<String> = files.lines().map(str::to_owned).collect();
        let abort: &[&str] = if squash { &["reset", "--merge"] } else { &["merge", "--abort"] };
        let _ = git::git(repo, abort);
        if files.is_empty() {
            return Err(refused(format!("git merge failed: {} {}", out.stdout, out.stderr)));
        }
        return Err(MergeFailure::Conflicts(files));
    }
    if squash {
        let staged =
            git::git(repo, &["diff", "--no-ext-diff", "--no-textconv", "--cached", "--quiet"])
                .map_err(refused)?;
        if !staged.ok {
            git::git_ok(repo, &["commit", "--no-verify", "-m", message]).map_err(|e| {
                let _ = git::git(repo, &["reset", "--merge"]);
                refused(e)
            })?;
        }
    }
    git::git_ok(repo, &["rev-parse", "HEAD"]).map_err(refused)
}

/// Closes the worker pane, removes the worktree and the branch Berth made; records the outcome.
async fn cleanup(
    store: &Arc<Mutex<Store>>,
    id: &TaskId,
    record: &TaskRecord,
    force: bool,
    keep_checkpoints: bool,
) -> Result<TaskRecord, CommandError> {
    if let Some(pane) = record.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok()) {
        let _ = lock(store).execute(Command::PaneClose { pane });
    }
    let (repo, wt, branch, pre) = (
        PathBuf::from(&record.source_repo),
        PathBuf::from(&record.worktree_path),
        record.branch.clone(),
        record.preexisting_branch,
    );
    let task = id.to_string();
    let removed = blocking(move || {
        git::with_repo_lock(&repo, || {
            let deleted = remove(&repo, &wt, &branch, pre, force)?;
            if !keep_checkpoints {
                super::checkpoint::remove_refs(&repo, &task)?;
            }
            Ok::<bool, String>(deleted)
        })
    })
    .await?;
    let mut disposition = record.disposition.clone();
    let finish_error = match removed {
        Ok(deleted) => {
            disposition.branch_deleted = deleted;
            None
        }
        Err(e) => Some(json!({ "cleanup_error": e })),
    };
    apply(
        store,
        TaskOp::Finished { task: id.clone(), disposition: Some(disposition), finish_error },
    )?;
    lock(store).task_record(id)
}

/// Removes the worktree (forced when asked: twice for a locked one) and the branch when Berth
/// created it; whether the branch was deleted.
fn remove(
    repo: &Path,
    wt: &Path,
    branch: &str,
    preexisting: bool,
    force: bool,
) -> Result<bool, String> {
    if wt.exists() {
        let wt_text = wt.to_str().ok_or("the worktree path is not UTF-8")?;
        let mut args = vec!["worktree", "remove"];
        if force {
            args.extend(["--force", "--force"]);
        }
        args.extend(["--end-of-options", wt_text]);
        git::git_ok(repo, &args)?;
    }
    let _ = git::git(repo, &["worktree", "prune"]);
    if preexisting || !git::branch_exists(repo, branch) {
        return Ok(false);
    }
    git::git_ok(repo, &["branch", "-D", "--end-of-options", branch])?;
    Ok(true)
}
