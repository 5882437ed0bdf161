//! Checkpoints: a task's worktree (tracked and untracked files, never ignored ones) recorded
//! as a commit on the private ref `refs/berth/tasks/<task>/turn-<n>` at each turn's end (and
//! at the report), without touching the index or the files the agent works on: a private
//! index (`GIT_INDEX_FILE` in the worktree's git dir) is filled from HEAD, `git add --all`
//! brings the worktree in, `write-tree`, `commit-tree` and `update-ref` record it.
//!
//! A revert puts the worktree back to the checkpoint before a turn: what it undoes is
//! checkpointed first (`before_revert`), the files are rewritten by a two-tree `read-tree -m
//! -u` on the private index (so files the turn made are removed and ignored ones are never
//! touched), and the result is checkpointed too (`revert`), so the next turn's diff starts
//! there. The real index and HEAD stay as they are.
//!
//! Git runs through `git.rs` on the blocking pool, one checkpoint of a worktree at a time
//! (the worktree's lock); the Store is locked only to read the task and record the result.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use berth_engine::ids::TaskId;

use super::git::{self, git_env};
use super::ops::{apply, lock, TaskOp};
use super::reply::RevertReply;
use crate::error::CommandError;
use crate::persist::stamp::now_ms;
use crate::persist::task_record::{CheckpointRecord, TaskRecord};
use crate::store::Store;

/// The identity of the commits Berth makes for checkpoints (never the user's own).
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Berth"),
    ("GIT_AUTHOR_EMAIL", "berth@localhost"),
    ("GIT_COMMITTER_NAME", "Berth"),
    ("GIT_COMMITTER_EMAIL", "berth@localhost"),
];

/// The kind of a checkpoint taken at a turn's end or at the report.
pub const TURN: &str = "turn";
/// The kind of the checkpoint of what a revert undid.
pub const BEFORE_REVERT: &str = "before_revert";
/// The kind of the checkpoint of the worktree after a revert.
pub const REVERT: &str = "revert";

/// The ref of a task's checkpoint `turn`.
pub fn ref_name(task: &str, turn: u32) -> String {
    format!("refs/berth/tasks/{task}/turn-{turn}")
}

/// The folder of a task's checkpoint refs.
pub fn ref_prefix(task: &str) -> String {
    format!("refs/berth/tasks/{task}/")
}

/// A private index file, removed when dropped.
struct PrivateIndex(PathBuf);

impl Drop for PrivateIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl PrivateIndex {
    /// A fresh index path in the worktree's own git dir (which only git and Berth write).
    fn new(wt: &Path) -> Result<PrivateIndex, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = git::git_ok(wt, &["rev-parse", "--absolute-git-dir"])?;
        let name = format!(
            "berth-checkpoint-{}-{}.index",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = Path::new(&dir).join(name);
        let _ = std::fs::remove_file(&path);
        Ok(PrivateIndex(path))
    }

    fn run(&self, wt: &Path, args: &[&str]) -> Result<String, String> {
        let index = self.0.to_str().ok_or("the git dir's path is not UTF-8")?;
        let mut env = vec![("GIT_INDEX_FILE", index)];
        env.extend(IDENTITY);
        let out = git_env(wt, &env, args)?;
        if out.ok {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(format!("git {} failed: {}", args.join(" "), out.stderr))
        }
    }
}

/// The worktree as a tree in `index` (filled from HEAD, then every file not ignored added).
fn snapshot(wt: &Path, index: &PrivateIndex) -> Result<String, String> {
    index.run(wt, &["read-tree", "HEAD"])?;
    index.run(wt, &["add", "--all", "--", ":/"])?;
    index.run(wt, &["write-tree"])
}

/// Records the worktree `wt` as checkpoint `turn` of `task`: its commit.
pub fn take(wt: &Path, task: &str, turn: u32, kind: &str) -> Result<String, String> {
    let index = PrivateIndex::new(wt)?;
    let tree = snapshot(wt, &index)?;
    let head = git::git_ok(wt, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let message = format!("checkpoint {turn} ({kind}) of {task}, by Berth");
    let sha = index.run(wt, &["commit-tree", &tree, "-p", &head, "-m", &message])?;
    git::git_ok(wt, &["update-ref", &ref_name(task, turn), &sha])?;
    Ok(sha)
}

/// Rewrites the worktree's files to `to` (a commit or tree), from what they are now; the
/// index and HEAD stay.
fn restore(wt: &Path, to: &str) -> Result<(), String> {
    let index = PrivateIndex::new(wt)?;
    let now = snapshot(wt, &index)?;
    index.run(wt, &["read-tree", "-m", "-u", &now, to]).map(|_| ())
}

/// Deletes every checkpoint ref of `task` in `repo`; how many went.
pub fn remove_refs(repo: &Path, task: &str) -> Result<usize, String> {
    let prefix = ref_prefix(task);
    let list = git::git_ok(repo, &["for-each-ref", "--format=%(refname)", &prefix])?;
    let mut n = 0;
    for name in list.lines().filter(|l| l.starts_with(&prefix)) {
        git::git_ok(repo, &["update-ref", "-d", name])?;
        n += 1;
    }
    Ok(n)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, CommandError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::Internal(format!("a checkpoint failed to run: {e}")))?
        .map_err(CommandError::Conflict)
}

/// Takes the next checkpoint of `record`'s worktree and records it in the Store (under the
/// worktree's lock, so two are never numbered alike).
fn take_next(store: &Mutex<Store>, id: &TaskId, kind: &str) -> Result<CheckpointRecord, String> {
    let record = lock(store).task_record(id).map_err(|e| e.to_string())?;
    let wt = PathBuf::from(&record.worktree_path);
    if !wt.is_dir() {
        return Err(format!("the task's worktree {} is gone", wt.display()));
    }
    let turn = next_turn(&record);
    let sha = take(&wt, id.as_str(), turn, kind)?;
    let checkpoint = CheckpointRecord { turn, sha, kind: kind.to_owned(), at: now_ms() };
    apply(store, TaskOp::Checkpointed { task: id.clone(), checkpoint: checkpoint.clone() })
        .map_err(|e| e.to_string())?;
    Ok(checkpoint)
}

fn next_turn(record: &TaskRecord) -> u32 {
    record.checkpoints.last().map_or(1, |c| c.turn + 1)
}

/// Records a checkpoint of the task's worktree now (`kind`: [`TURN`] …); its record.
pub async fn record(
    store: Arc<Mutex<Store>>,
    id: TaskId,
    kind: &'static str,
) -> Result<CheckpointRecord, CommandError> {
    let record = lock(&store).task_record(&id)?;
    let (wt, repo) = (PathBuf::from(&record.worktree_path), PathBuf::from(&record.source_repo));
    let store2 = store.clone();
    let taken =
        blocking(move || git::with_repo_lock(&wt, || take_next(&store2, &id, kind))).await?;
    // The conflicts are computed apart: a turn's end does not wait for every pair's
    // merge-tree (each computation reads the tasks when it runs, one per repo at a time, so
    // the last one sees every checkpoint).
    tokio::task::spawn_blocking(move || super::conflicts::refresh(&store, &repo));
    Ok(taken)
}

/// The commit a turn started from: the checkpoint before it, or the task's base.
pub fn before(record: &TaskRecord, turn: u32) -> Result<String, String> {
    let at = record.checkpoints.iter().position(|c| c.turn == turn).ok_or_else(|| match record
        .checkpoints
        .last()
    {
        None => {
            format!("task {} has no checkpoints yet (one is taken at each turn's end)", record.id)
        }
        Some(last) => format!(
            "task {} has no checkpoint {turn}; its checkpoints are 1 to {}",
            record.id, last.turn
        ),
    })?;
    Ok(match at {
        0 => record.base_sha.clone(),
        i => record.checkpoints[i - 1].sha.clone(),
    })
}

/// Reverts the task's worktree to before `turn` (default: its last checkpoint).
pub async fn revert(
    store: Arc<Mutex<Store>>,
    id: TaskId,
    turn: Option<u32>,
) -> Result<RevertReply, CommandError> {
    let record = lock(&store).task_record(&id)?;
    if record.disposition.outcome != "none" {
        return Err(CommandError::Conflict(format!(
            "task {id} is {} already; its worktree is gone",
            record.disposition.outcome
        )));
    }
    let turn = match turn.or_else(|| record.checkpoints.last().map(|c| c.turn)) {
        Some(t) => t,
        None => {
            return Err(CommandError::Conflict(format!(
                "task {id} has no checkpoints yet; there is no turn to revert"
            )))
        }
    };
    let to = before(&record, turn).map_err(CommandError::BadParams)?;
    let (wt, repo) = (PathBuf::from(&record.worktree_path), PathBuf::from(&record.source_repo));
    blocking(move || {
        let reverted = git::with_repo_lock(&wt.clone(), || {
            let saved = take_next(&store, &id, BEFORE_REVERT)?;
            restore(&wt, &to).map_err(|e| {
                format!("{e}; the worktree was saved first as checkpoint {}", saved.turn)
            })?;
            let now = take_next(&store, &id, REVERT)?;
            Ok::<RevertReply, String>(RevertReply { turn, saved, now })
        })?;
        super::conflicts::refresh(&store, &repo);
        Ok(reverted)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::git::tests::{hostile_repo, ran};

    fn run(dir: &Path, args: &[&str]) -> String {
        git::git_ok(dir, args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A checkpoint holds tracked and untracked files, leaves the index alone and runs none
    /// of the repo's filters or hooks; a restore brings the files back and removes new ones;
    /// merge-tree finds a conflict without running the repo's merge driver.
    #[test]
    fn checkpoints_restores_and_conflicts_run_nothing_of_the_repo() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = hostile_repo(&root);
        std::fs::write(dir.join("a.txt"), "changed\n").unwrap();
        std::fs::write(dir.join("b.txt"), "new\n").unwrap();
        let sha = take(&dir, "task_1", 1, TURN).unwrap();
        assert_eq!(run(&dir, &["rev-parse", &ref_name("task_1", 1)]), sha);
        assert_eq!(run(&dir, &["cat-file", "blob", &format!("{sha}:a.txt")]), "changed");
        assert_eq!(run(&dir, &["cat-file", "blob", &format!("{sha}:b.txt")]), "new");
        assert_eq!(run(&dir, &["diff", "--cached", "--name-only"]), "", "the index is as it was");
        assert_eq!(
            run(&dir, &["rev-parse", &format!("{sha}^")]),
            run(&dir, &["rev-parse", "HEAD"])
        );

        restore(&dir, "HEAD").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n");
        assert!(!dir.join("b.txt").exists());

        // Two lines of work on the same line: a conflict, found by merge-tree alone.
        std::fs::write(dir.join("a.txt"), "mine\n").unwrap();
        let mine = take(&dir, "task_1", 2, TURN).unwrap();
        restore(&dir, "HEAD").unwrap();
        std::fs::write(dir.join("a.txt"), "theirs\n").unwrap();
        let theirs = take(&dir, "task_2", 1, TURN).unwrap();
        restore(&dir, "HEAD").unwrap();
        let files = crate::tasks::conflicts::conflicting_files(&dir, &mine, &theirs).unwrap();
        assert_eq!(files, ["a.txt"]);
        std::fs::write(dir.join("c.txt"), "elsewhere\n").unwrap();
        let other = take(&dir, "task_3", 1, TURN).unwrap();
        assert!(crate::tasks::conflicts::conflicting_files(&dir, &mine, &other)
            .unwrap()
            .is_empty());
        assert_eq!(ran(&root), Vec::<String>::new(), "no filter, driver or hook of the repo ran");
        assert_eq!(remove_refs(&dir, "task_1").unwrap(), 2);
        assert_eq!(run(&dir, &["for-each-ref", &ref_prefix("task_1")]), "");
    }
}
