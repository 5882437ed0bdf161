//! `TaskOp`: the changes to the Store's tasks, the `Internal` op the task code hands to
//! `Store::execute` (served in `tasks/ops.rs`). Plain data, a leaf the Store names.

use std::path::PathBuf;

use berth_engine::ids::TaskId;
use serde_json::Value;

use super::model::{Task, TaskState};
use crate::commands::SpawnRequest;
use crate::persist::task_record::{DispositionRecord, TaskResultRecord};

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
}
