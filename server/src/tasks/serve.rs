//! The `task.*` requests served: each becomes a future the socket awaits as a deferred answer
//! (git and waits never hold a runtime worker or the Store's lock). Reads look at the Store
//! under its lock; changes go through `Store::execute` (`TaskOp`).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::ids::{PaneId, TaskId};
use serde_json::{json, Value};

use super::model::TaskState;
use super::ops::{apply, lock, TaskOp};
use super::request::{ReportParams, TaskRequest, WaitParams};
use crate::commands::Command;
use crate::error::CommandError;
use crate::persist::task_record::{TaskRecord, TaskResultRecord};
use crate::store::Store;

/// A `task.*` answer to come.
pub type TaskAnswer = Pin<Box<dyn Future<Output = Result<Value, CommandError>> + Send + 'static>>;

/// Who sent a request, as the socket judged it by the peer's ancestry (`trust`), never its
/// environment.
#[derive(Debug, Clone)]
pub struct Reporter {
    /// The pane the peer runs in, if it runs in one.
    pub pane: Option<PaneId>,
    /// Whether its act is a person's.
    pub person: bool,
    /// What a pane it makes (a task's worker) records.
    pub made_by: crate::trust::Provenance,
    /// The caller in words, for errors.
    pub who: String,
}

impl Reporter {
    /// The reporter a caller is.
    pub fn of(caller: &crate::trust::Caller) -> Reporter {
        Reporter {
            pane: caller.pane().cloned(),
            person: caller.acts_for_person(),
            made_by: caller.provenance(),
            who: caller.describe(),
        }
    }
}

fn record_value(record: &TaskRecord) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

/// Serves one request: refused now, or answered by the returned future.
pub fn serve(
    store: &Arc<Mutex<Store>>,
    request: TaskRequest,
    reporter: Reporter,
) -> Result<TaskAnswer, CommandError> {
    request.check()?;
    let store = store.clone();
    Ok(match request {
        TaskRequest::Start(p) => {
            let start = super::start::start(&store, p, reporter.made_by.clone());
            Box::pin(async move { start.await.map(|r| record_value(&r)) })
        }
        TaskRequest::Finish(p) => {
            let finish = super::finish::finish(&store, p);
            Box::pin(async move { finish.await.map(|r| record_value(&r)) })
        }
        TaskRequest::Report(p) => {
            let answer = report(&store, p, &reporter);
            Box::pin(async move { answer })
        }
        TaskRequest::List(p) => {
            // Any directory inside a repo names it; a path that is not one matches as given.
            let repo = p.repo.map(|dir| super::git::toplevel(&dir).unwrap_or(dir));
            let tasks = lock(&store).task_records(repo.as_deref());
            Box::pin(async move { Ok(json!({ "tasks": tasks })) })
        }
        TaskRequest::Show(r) => {
            let answer = TaskId::parse(&r.task_id)
                .map_err(CommandError::from)
                .and_then(|id| lock(&store).task_record(&id))
                .map(|r| record_value(&r));
            Box::pin(async move { answer })
        }
        TaskRequest::Cancel(r) => {
            let answer = cancel(&store, &r.task_id);
            Box::pin(async move { answer })
        }
        TaskRequest::Wait(p) => wait(store, p)?,
    })
}

/// Whether `request` from `caller` must first be agreed to by a person
/// (`trust::consent`): a merge or discard asked by a caller that does not act for a person.
/// Checked before it waits, so a bad request is refused at once.
pub fn consent(
    store: &Mutex<Store>,
    request: &TaskRequest,
    caller: &crate::trust::Caller,
) -> Result<Option<crate::trust::consent::Ask>, CommandError> {
    let TaskRequest::Finish(p) = request else { return Ok(None) };
    if caller.acts_for_person() {
        return Ok(None);
    }
    request.check()?;
    let id = TaskId::parse(&p.task_id)?;
    let store = lock(store);
    let record = store.task_record(&id)?;
    let how = if p.merge { "merge" } else { "discard" };
    let detail = format!(
        "task {id} ({}), branch {}{}",
        record.state,
        record.branch,
        if p.force { ", forced" } else { "" }
    );
    store.consent_for(caller, &format!("{how} task {}", record.label), &detail)
}

fn report(
    store: &Mutex<Store>,
    p: ReportParams,
    reporter: &Reporter,
) -> Result<Value, CommandError> {
    // The task the caller's pane works on (by its ancestry), if it is a worker.
    let own =
        reporter.pane.as_ref().and_then(|pane| lock(store).task_of_pane(pane)).map(|(id, _)| id);
    let id = match (p.task_id.as_deref(), &own) {
        (Some(id), _) => TaskId::parse(id)?,
        (None, Some(own)) => own.clone(),
        (None, None) => {
            return Err(CommandError::BadParams(
                "this process is not in a task's worker pane; name the task with --task".into(),
            ))
        }
    };
    // A worker reports for its own task only; a person for any.
    let in_own_worker = own.as_ref() == Some(&id);
    if !in_own_worker && (!reporter.person || reporter.pane.is_some() && own.is_some()) {
        return Err(CommandError::NotPermitted(format!(
            "{} cannot report task {id}: a task is reported from its own worker pane (or by a \
             person, with --task, from a terminal outside Berth)",
            reporter.who
        )));
    }
    let result = TaskResultRecord {
        status: p.status,
        summary: p.summary,
        artifacts: p.artifacts,
        evidence: p.evidence,
        reported_at: 0,
    };
    apply(store, TaskOp::Report { task: id.clone(), result })?;
    lock(store).task_record(&id).map(|r| record_value(&r))
}

fn cancel(store: &Mutex<Store>, id: &str) -> Result<Value, CommandError> {
    let id = TaskId::parse(id)?;
    apply(
        store,
        TaskOp::Transition {
            task: id.clone(),
            to: TaskState::Canceled,
            reason: Some(json!({ "reason": "canceled" })),
        },
    )?;
    // The worker stops; its worktree stays for `task finish --discard` (or a look).
    let record = lock(store).task_record(&id)?;
    if let Some(pane) = record.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok()) {
        let _ = lock(store).execute(Command::PaneClose { pane });
    }
    Ok(record_value(&record))
}

/// `task.wait`: polls the task every 200 ms until it is terminal (or `input_required`, when
/// asked), answering its record, or `TIMEOUT`.
fn wait(store: Arc<Mutex<Store>>, p: WaitParams) -> Result<TaskAnswer, CommandError> {
    let id = TaskId::parse(&p.task_id)?;
    lock(&store).task_record(&id)?;
    let for_input = p.until.as_deref() == Some("input_required");
    let deadline = p
        .timeout_ms
        .and_then(|ms| tokio::time::Instant::now().checked_add(Duration::from_millis(ms)));
    Ok(Box::pin(async move {
        loop {
            let record = lock(&store).task_record(&id)?;
            let state = TaskState::parse(&record.state).unwrap_or(TaskState::Failed);
            if state.is_terminal() || (for_input && state == TaskState::InputRequired) {
                return Ok(record_value(&record));
            }
            if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                return Err(CommandError::Timeout(format!(
                    "task {id} is still {} after {} ms",
                    state.as_str(),
                    p.timeout_ms.unwrap_or_default()
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }))
}
