//! A saved task (`Snapshot::tasks`): the record of one agent's work in its own git worktree,
//! as written to disk and, like a kept notification, carried on the wire as the answer of
//! `task.show` and `task.ls`.
//!
//! Plain serde data with every field defaulted, so a record written by an older Berth still
//! loads; what the values mean is the server's `tasks` module, which maps this to and from its
//! typed `Task`. This module must not know the Store.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The known values of [`TaskRecord::state`].
pub const TASK_STATES: &[&str] =
    &["pending", "working", "input_required", "completed", "failed", "canceled", "rejected"];

/// A saved task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskRecord {
    /// Its id (`task_…`).
    pub id: String,
    /// A human label.
    pub label: String,
    /// What the worker is asked to do.
    pub contract: ContractRecord,
    /// The agent kind asked for (`claude`, `codex` …).
    pub agent: String,
    /// The checkout the worktree was cut from; the merge target lives here.
    pub source_repo: String,
    /// The source checkout's branch at start (`None`: detached HEAD; finish then needs a
    /// target).
    pub target_branch: Option<String>,
    /// The task's own checkout.
    pub worktree_path: String,
    /// The task's branch (`berth/<slug>`).
    pub branch: String,
    /// Whether the branch existed before the task (then it is never deleted).
    pub preexisting_branch: bool,
    /// The base asked for.
    pub base_ref: String,
    /// The base resolved to a full SHA at start.
    pub base_sha: String,
    /// `pending`, `working`, `input_required`, `completed`, `failed`, `canceled`, `rejected`.
    pub state: String,
    /// The worker's report, set once.
    pub result: Option<TaskResultRecord>,
    /// What the user did with the work.
    pub disposition: DispositionRecord,
    /// Why the task is in its state (`{stage, …}`, `{reason: …}`).
    pub status_reason: Option<Value>,
    /// The last finish's failure (conflicting files, a cleanup error).
    pub finish_error: Option<Value>,
    /// The worker pane, while it has one.
    pub pane_id: Option<String>,
    /// The workspace of the worker's tab.
    pub workspace_id: Option<String>,
    /// The caller's idempotency key of `task.start`.
    pub client_request_id: Option<String>,
    /// Seconds of worker silence before `input_required` (0: off).
    pub silence_s: u64,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
    /// Last change, ms since the epoch.
    pub updated_at: u64,
    /// The worktree recorded at each turn's end (and around a revert), oldest first; each on
    /// `refs/berth/tasks/<task>/turn-<n>`.
    pub checkpoints: Vec<CheckpointRecord>,
    /// Review comments not yet sent to the worker.
    pub comments: Vec<CommentRecord>,
    /// The other tasks (and the target branch) this task's work would conflict with now.
    pub conflicts: Vec<ConflictRecord>,
}

/// One checkpoint: the worktree (tracked and untracked files, never ignored ones) as a commit.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckpointRecord {
    /// Its number, from 1; its ref is `refs/berth/tasks/<task>/turn-<n>`.
    pub turn: u32,
    /// The commit.
    pub sha: String,
    /// `turn` (a turn's end or the report), `before_revert` (what a revert undid) or
    /// `revert` (the worktree after a revert).
    pub kind: String,
    /// When, ms since the epoch.
    pub at: u64,
}

/// One review comment on lines of a file of the task's diff.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CommentRecord {
    /// The file, relative to the worktree's top.
    pub path: String,
    /// The first line (in the file as the task has it now), from 1.
    pub start: u64,
    /// The last line (`start` for one line).
    pub end: u64,
    /// What the reviewer says.
    pub text: String,
}

/// A conflict this task's work would meet: with another task, or with the target branch.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ConflictRecord {
    /// The other task's id, or `target:<branch>` for the target branch.
    pub task: String,
    /// The files both change in ways git cannot merge.
    pub files: Vec<String>,
}

/// A task's contract.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ContractRecord {
    /// The objective, 1 byte to 32 KiB.
    pub objective: String,
    /// Constraints.
    pub constraints: Vec<String>,
    /// Acceptance criteria.
    pub acceptance: Vec<String>,
    /// The expected output format.
    pub output_format: Option<String>,
}

/// A worker's report.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskResultRecord {
    /// `completed`, `failed` or `rejected`.
    pub status: String,
    /// What was done, 1 byte to 8 KiB.
    pub summary: String,
    /// Named paths the worker produced.
    pub artifacts: Vec<ArtifactRecord>,
    /// Free-form evidence.
    pub evidence: Option<String>,
    /// When it was reported, ms since the epoch.
    pub reported_at: u64,
}

/// One artifact of a report.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ArtifactRecord {
    /// Its name.
    pub name: String,
    /// Its path.
    pub path: String,
}

/// What the user did with a task's work.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DispositionRecord {
    /// `none`, `merged` or `discarded`.
    pub outcome: String,
    /// The branch merged into.
    pub target_ref: Option<String>,
    /// The merge's commit.
    pub merged_sha: Option<String>,
    /// Whether the task branch was deleted.
    pub branch_deleted: bool,
    /// When, ms since the epoch.
    pub at: Option<u64>,
}
