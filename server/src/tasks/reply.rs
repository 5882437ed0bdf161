//! What the `task.*` methods answer: wire DTOs the server encodes and the client decodes
//! through these same types (`protocol::decode_task_reply`), so the two cannot drift. A leaf,
//! like [`super::request`]: it names the records of `persist::task_record`, never the Store.

use serde::{Deserialize, Serialize};

use crate::persist::task_record::{CheckpointRecord, TaskRecord};

/// A `task.*` answer. On the wire each variant is its inner value alone (no tag): the client
/// knows which request it sent, and so which shape comes back.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TaskReply {
    /// A task's record: `task.start`, `task.report`, `task.finish`, `task.show`,
    /// `task.cancel`, `task.wait`, and `task.comment` without `send`.
    Task(Box<TaskRecord>),
    /// `task.list`: `{tasks: [...]}`.
    List(TaskListReply),
    /// `task.revert_turn`.
    Reverted(RevertReply),
    /// `task.send_comments`, and `task.comment` with `send`: the record with what was sent.
    CommentsSent(Box<CommentsSentReply>),
}

impl TaskReply {
    /// The task's record, for the answers that carry one (all but a list and a revert).
    pub fn record(&self) -> Option<&TaskRecord> {
        match self {
            Self::Task(record) => Some(record),
            Self::CommentsSent(sent) => Some(&sent.task),
            Self::List(_) | Self::Reverted(_) => None,
        }
    }

    /// The answer's wire shape in words, for an error about an unexpected one.
    pub fn shape(&self) -> &'static str {
        match self {
            Self::Task(_) => "a task",
            Self::List(_) => "a list of tasks",
            Self::Reverted(_) => "a revert",
            Self::CommentsSent(_) => "comments sent",
        }
    }
}

/// The answer of `task.list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskListReply {
    /// The tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
}

/// The answer of `task.revert_turn`: the checkpoint of what it undid and the one of the
/// worktree after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertReply {
    /// The turn undone.
    pub turn: u32,
    /// What the worktree held before (nothing is lost: `berth diff TASK --turn N` shows it).
    pub saved: CheckpointRecord,
    /// The worktree now.
    pub now: CheckpointRecord,
}

/// The answer of `task.send_comments`: the task's record, its fields at the top level, with
/// how many comments were sent and the prompt they made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommentsSentReply {
    /// The task after the send.
    #[serde(flatten)]
    pub task: TaskRecord,
    /// How many comments were sent.
    pub sent: usize,
    /// The prompt submitted to the worker.
    pub prompt: String,
}
