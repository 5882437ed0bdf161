//! `TaskOp`: the changes to the Store's tasks, the `Internal` op the task code hands to
//! `Store::execute` (served in `tasks/ops.rs`). Plain data, a leaf the Store names.

use std::path::PathBuf;

use berth_engine::ids::TaskId;
use serde_json::Value;

use super::model::{Task, TaskState};
use crate::commands::SpawnRequest;
use crate::persist::task_record::{
    CheckpointRecord, CommentRecord, ConflictRecord, DispositionRecord, TaskResultRecord,
};

/// A change to the Store's tasks (an `Internal` op).
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOp {
    /// Records a new pending task (refused when its request id is taken: the answer names
    /// the existing task then).
    Register(Box<Task>),
    /// Opens the worker's tab in the repo's workspace and starts the agent there.
    OpenTab {
        /// The task.
        task: TaskId,
        /// The agent's command, cwd (the worktree) and environment (`BERTH_TASK`).
        spawn: SpawnRequest,
        /// The source repo, whose workspace gets the tab.
        repo: PathBuf,
    },
    /// Moves a task to another state, with the reason (`None` clears it).
    Transition {
        /// The task.
        task: TaskId,
        /// The new state.
        to: TaskState,
        /// Why.
        reason: Option<Value>,
    },
    /// Moves a task to `to` only if it is in `from` now (the watcher's changes, which must
    /// not undo a report that came in between).
    TransitionIf {
        /// The task.
        task: TaskId,
        /// The state it must be in.
        from: TaskState,
        /// The new state.
        to: TaskState,
        /// Why.
        reason: Option<Value>,
    },
    /// The worker's report: sets the result once and moves to its status.
    Report {
        /// The task.
        task: TaskId,
        /// The report.
        result: TaskResultRecord,
    },
    /// A finish's outcome: the disposition (when one is reached) and the error, if any.
    Finished {
        /// The task.
        task: TaskId,
        /// The disposition now.
        disposition: Option<DispositionRecord>,
        /// What went wrong (conflicts, cleanup), or `None`.
        finish_error: Option<Value>,
    },
    /// A checkpoint of the worktree was recorded (`tasks/checkpoint.rs`).
    Checkpointed {
        /// The task.
        task: TaskId,
        /// The checkpoint.
        checkpoint: CheckpointRecord,
    },
    /// A review comment is added to the task's list, to go to its worker with the others.
    Comment {
        /// The task.
        task: TaskId,
        /// The comment.
        comment: CommentRecord,
    },
    /// The comments went to the worker: the list is emptied and the task works again (a
    /// completed or rejected task is reopened: its report is cleared, a new one is taken).
    CommentsSent {
        /// The task.
        task: TaskId,
        /// How many were sent (the first ones of the list; later ones stay).
        sent: usize,
    },
    /// The conflicts of a task's work with other tasks and its target, computed anew.
    Conflicts {
        /// The task.
        task: TaskId,
        /// Them (empty: none).
        conflicts: Vec<ConflictRecord>,
    },
}
