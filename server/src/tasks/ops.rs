//! How tasks change the Store: the Store's side of each `TaskOp` (`tasks/op.rs`), which the
//! task code (start, finish, watch) hands to `Store::execute`, and the reads of tasks. Every state change goes
//! through `Task::transition`, and every change publishes `task.changed`.
//!
//! Nothing here runs git or waits: the callers do that outside the Store's lock.

use std::path::Path;

use berth_engine::ids::{PaneId, TaskId, WorkspaceId};

use std::sync::{Mutex, MutexGuard};

use super::model::{Task, TaskState};
pub use super::op::TaskOp;
use crate::error::CommandError;
use crate::event::Event;
use crate::persist::stamp::now_ms;
use crate::persist::task_record::{TaskRecord, TaskResultRecord};
use crate::store::{Internal, Store};

impl Store {
    /// The saved form of every task, oldest first, optionally only those of one repo.
    pub fn task_records(&self, repo: Option<&Path>) -> Vec<TaskRecord> {
        let mut all: Vec<TaskRecord> = self
            .tasks
            .values()
            .filter(|t| repo.is_none_or(|r| Path::new(&t.record.source_repo) == r))
            .map(Task::to_record)
            .collect();
        all.sort_by_key(|t| (t.created_at, t.id.clone()));
        all
    }

    /// One task's saved form.
    pub fn task_record(&self, id: &TaskId) -> Result<TaskRecord, CommandError> {
        self.tasks.get(id).map(Task::to_record).ok_or_else(|| no_such_task(id))
    }

    /// The task whose `client_request_id` is `key`.
    pub fn task_by_request(&self, key: &str) -> Option<TaskId> {
        self.tasks
            .values()
            .find(|t| t.record.client_request_id.as_deref() == Some(key))
            .map(|t| t.id.clone())
    }

    /// The task whose worker runs in `pane`.
    pub fn task_of_pane(&self, pane: &PaneId) -> Option<(TaskId, TaskState)> {
        self.tasks
            .values()
            .find(|t| t.pane.as_ref() == Some(pane))
            .map(|t| (t.id.clone(), t.state()))
    }

    pub(crate) fn execute_task_op(&mut self, op: TaskOp) -> Result<(), CommandError> {
        let now = now_ms();
        let id = match op {
            TaskOp::Register(task) => {
                if let Some(key) = &task.record.client_request_id {
                    if let Some(existing) = self.task_by_request(key) {
                        return Err(CommandError::Conflict(format!(
                            "request id {key:?} belongs to task {existing}"
                        )));
                    }
                }
                let id = task.id.clone();
                self.tasks.insert(id.clone(), *task);
                id
            }
            TaskOp::OpenTab { task, spawn, repo } => {
                let label = self.task(&task)?.record.label.clone();
                let (tab, pane) = self.open_task_tab(&repo, &label, spawn)?;
                let ws = self.panes.get(&pane).map(|p| p.workspace.to_string());
                let t = self.task_mut(&task)?;
                t.pane = Some(pane);
                t.record.workspace_id = ws;
                t.record.updated_at = now;
                tracing::info!(task = %task, tab = %tab, "task's worker started");
                task
            }
            TaskOp::Transition { task, to, reason } => {
                self.task_mut(&task)?.transition(to, reason, now).map_err(bad_transition)?;
                task
            }
            TaskOp::TransitionIf { task, from, to, reason } => {
                let t = self.task_mut(&task)?;
                if t.state() != from {
                    return Ok(());
                }
                t.transition(to, reason, now).map_err(bad_transition)?;
                task
            }
            TaskOp::Report { task, result } => {
                let to = TaskState::parse(&result.status)
                    .filter(|s| {
                        matches!(s, TaskState::Completed | TaskState::Failed | TaskState::Rejected)
                    })
                    .ok_or_else(|| {
                        CommandError::BadParams(format!(
                            "unknown report status {:?} (completed, failed, rejected)",
                            result.status
                        ))
                    })?;
                let t = self.task_mut(&task)?;
                if t.record.result.is_some() || t.state().is_terminal() {
                    return Err(CommandError::Conflict(format!(
                        "task {task} is {} and has its result already; a report is taken once",
                        t.state().as_str()
                    )));
                }
                t.transition(to, None, now).map_err(bad_transition)?;
                t.record.result = Some(TaskResultRecord { reported_at: now, ..result });
                task
            }
            TaskOp::Checkpointed { task, checkpoint } => {
                let t = self.task_mut(&task)?;
                t.record.checkpoints.push(checkpoint);
                t.record.updated_at = now;
                task
            }
            TaskOp::Comment { task, comment } => {
                let t = self.task_mut(&task)?;
                if t.record.comments.len() >= super::model::MAX_COMMENTS {
                    return Err(CommandError::Conflict(format!(
                        "task {task} holds {} comments already; send them first",
                        t.record.comments.len()
                    )));
                }
                let mut kept = t.record.comments.clone();
                kept.push(comment);
                let prompt = super::model::compose_comments(&kept).len();
                if prompt > super::model::MAX_TASK_PROMPT_BYTES {
                    return Err(CommandError::Conflict(format!(
                        "task {task}'s comments would make a prompt of {prompt} bytes, more than \
                         the {} bytes one prompt to its worker takes; send them first",
                        super::model::MAX_TASK_PROMPT_BYTES
                    )));
                }
                t.record.comments = kept;
                t.record.updated_at = now;
                task
            }
            TaskOp::CommentsSent { task, sent } => {
                let t = self.task_mut(&task)?;
                let sent = sent.min(t.record.comments.len());
                t.record.comments.drain(..sent);
                t.reopen(now).map_err(bad_transition)?;
                task
            }
            TaskOp::Conflicts { task, conflicts } => {
                let t = self.task_mut(&task)?;
                if t.record.conflicts == conflicts {
                    return Ok(());
                }
                t.record.conflicts = conflicts;
                t.record.updated_at = now;
                task
            }
            TaskOp::Finished { task, disposition, finish_error } => {
                let t = self.task_mut(&task)?;
                if let Some(d) = disposition {
                    t.record.disposition = d;
                }
                t.record.finish_error = finish_error;
                t.record.updated_at = now;
                task
            }
        };
        let state = self.task(&id)?.state();
        self.publish_task(Event::TaskChanged { task: id, state: state.as_str().to_owned() });
        Ok(())
    }

    fn publish_task(&self, event: Event) {
        self.bus.publish(event);
    }

    fn task(&self, id: &TaskId) -> Result<&Task, CommandError> {
        self.tasks.get(id).ok_or_else(|| no_such_task(id))
    }

    fn task_mut(&mut self, id: &TaskId) -> Result<&mut Task, CommandError> {
        self.tasks.get_mut(id).ok_or_else(|| no_such_task(id))
    }

    /// Restore: tasks come back as saved; a task that was not finished cannot have its worker
    /// any more (panes come back as tombstones) and fails, with `restart` as its evidence.
    pub(crate) fn restore_tasks(&mut self, records: &[TaskRecord]) {
        let now = now_ms();
        for record in records {
            let Some(mut task) = Task::from_record(record.clone()) else {
                tracing::warn!(task = %record.id, "a saved task with an unreadable id or state was skipped");
                continue;
            };
            if !task.state().is_terminal() {
                let reason = serde_json::json!({
                    "reason": "restart",
                    "stage": "restart",
                    "was": task.state().as_str(),
                    "error": "the server restarted while the task was not finished; its worker is gone",
                });
                // Every non-terminal state may fail.
                let _ = task.transition(TaskState::Failed, Some(reason), now);
            }
            self.tasks.insert(task.id.clone(), task);
        }
    }
}

/// The workspace id a task's tab went to, for tests.
pub fn workspace_of(record: &TaskRecord) -> Option<WorkspaceId> {
    record.workspace_id.as_deref().and_then(|w| WorkspaceId::parse(w).ok())
}

fn no_such_task(id: &TaskId) -> CommandError {
    CommandError::NoSuchTask(id.to_string())
}

fn bad_transition(e: super::model::BadTransition) -> CommandError {
    CommandError::Conflict(e.to_string())
}

/// The Store, locked (a panic elsewhere does not make it unusable).
pub(crate) fn lock(store: &Mutex<Store>) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// Executes one task op under the lock.
pub(crate) fn apply(store: &Mutex<Store>, op: TaskOp) -> Result<(), CommandError> {
    lock(store).execute(Internal::Task(op)).map(|_| ())
}
