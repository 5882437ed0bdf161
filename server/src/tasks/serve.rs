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
use super::request::{CommentParams, ReportParams, TaskRequest, WaitParams};
use crate::commands::Command;
use crate::error::CommandError;
use crate::persist::task_record::{CommentRecord, TaskRecord, TaskResultRecord};
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
        TaskRequest::Report(p) => Box::pin(report(store, p, reporter)),
        TaskRequest::RevertTurn(p) => Box::pin(async move {
            let id = TaskId::parse(&p.task_id)?;
            let reverted = super::checkpoint::revert(store, id, p.turn).await?;
            Ok(serde_json::to_value(reverted).unwrap_or(Value::Null))
        }),
        TaskRequest::Comment(p) => Box::pin(comment(store, p)),
        TaskRequest::SendComments(r) => Box::pin(async move {
            let id = TaskId::parse(&r.task_id)?;
            send_comments(store, id).await
        }),
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
/// (`trust::consent`): a merge or discard, a cancel (it closes the worker's pane), a turn's
/// revert, or review comments sent to the worker (`task.send_comments`, or `task.comment`
/// with `send`: a prompt into another agent's pane), asked by a caller that does not act for
/// a person. Checked before it waits, so a bad request is refused at once.
pub fn consent(
    store: &Mutex<Store>,
    request: &TaskRequest,
    caller: &crate::trust::Caller,
) -> Result<Option<crate::trust::consent::Ask>, CommandError> {
    let task_id = match request {
        TaskRequest::Finish(p) => &p.task_id,
        TaskRequest::RevertTurn(p) => &p.task_id,
        TaskRequest::SendComments(r) | TaskRequest::Cancel(r) => &r.task_id,
        TaskRequest::Comment(p) if p.send => &p.task_id,
        _ => return Ok(None),
    };
    if caller.acts_for_person() {
        return Ok(None);
    }
    request.check()?;
    let id = TaskId::parse(task_id)?;
    let store = lock(store);
    let record = store.task_record(&id)?;
    let (how, extra) = match request {
        TaskRequest::Finish(p) => {
            (if p.merge { "merge" } else { "discard" }, if p.force { ", forced" } else { "" })
        }
        TaskRequest::RevertTurn(_) => ("revert a turn of", ""),
        TaskRequest::Cancel(_) => ("cancel (closing its worker's pane)", ""),
        _ => ("send review comments to the worker of", ""),
    };
    let detail = format!("task {id} ({}), branch {}{extra}", record.state, record.branch);
    store.consent_for(caller, &format!("{how} task {}", record.label), &detail)
}

async fn report(
    store: Arc<Mutex<Store>>,
    p: ReportParams,
    reporter: Reporter,
) -> Result<Value, CommandError> {
    let store = &store;
    let reporter = &reporter;
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
    // The work as reported is checkpointed first (the watch ends with the report, so the
    // turn's own end is not seen).
    let open = lock(store).task_record(&id).is_ok_and(|r| {
        r.result.is_none() && TaskState::parse(&r.state).is_some_and(|s| !s.is_terminal())
    });
    if open {
        if let Err(e) =
            super::checkpoint::record(store.clone(), id.clone(), super::checkpoint::TURN).await
        {
            tracing::warn!(task = %id, "the report's checkpoint failed: {e}");
        }
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

/// `task.comment`: keeps the comment; with `send`, sends every kept one.
async fn comment(store: Arc<Mutex<Store>>, p: CommentParams) -> Result<Value, CommandError> {
    let id = TaskId::parse(&p.task_id)?;
    let record = lock(&store).task_record(&id)?;
    if record.disposition.outcome != "none" {
        return Err(CommandError::Conflict(format!(
            "task {id} is {} already; its worker cannot take comments",
            record.disposition.outcome
        )));
    }
    let comment = CommentRecord {
        path: p.path,
        start: p.start,
        end: p.end.unwrap_or(p.start),
        text: p.text.trim().to_owned(),
    };
    apply(&store, TaskOp::Comment { task: id.clone(), comment })?;
    if p.send {
        return send_comments(store, id).await;
    }
    lock(&store).task_record(&id).map(|r| record_value(&r))
}

/// How long sending comments waits for the worker's turn to end.
const COMMENTS_IDLE_WAIT: Duration = Duration::from_secs(30);

/// `task.send_comments`: every kept comment to the worker as one prompt (`pane.submit`'s
/// path), the list emptied and the task `working` again (reopened if it had reported).
async fn send_comments(store: Arc<Mutex<Store>>, id: TaskId) -> Result<Value, CommandError> {
    let record = lock(&store).task_record(&id)?;
    if record.comments.is_empty() {
        return Err(CommandError::BadParams(format!(
            "task {id} has no comments to send (berth task comment {id} FILE:LINE TEXT)"
        )));
    }
    let state = TaskState::parse(&record.state).unwrap_or(TaskState::Failed);
    let reopenable = matches!(state, TaskState::Completed | TaskState::Rejected)
        && record.disposition.outcome == "none";
    if !matches!(state, TaskState::Working | TaskState::InputRequired) && !reopenable {
        return Err(CommandError::Conflict(format!(
            "task {id} is {}; its worker is gone, so comments cannot reach it",
            state.as_str()
        )));
    }
    let pane = record.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok()).ok_or_else(|| {
        CommandError::Conflict(format!("task {id} has no worker pane to send comments to"))
    })?;
    // A worker that reported mid-turn ends that turn first: the comments wait for it.
    let idle = crate::agents::wait::start(
        &store,
        pane.clone(),
        crate::agents::work::WaitUntil::Idle,
        Some(COMMENTS_IDLE_WAIT),
    )?;
    let _ = idle.await;
    let turn_seen = lock(&store)
        .pane_shared(&pane)
        .and_then(|s| s.meta().turns.last.as_ref().map(|t| t.ended_at));
    let prompt = super::model::compose_comments(&record.comments);
    let submit = crate::agents::submit::start_limited(
        &store,
        pane.clone(),
        &prompt,
        false,
        super::model::MAX_TASK_PROMPT_BYTES,
    )?;
    submit.await?;
    let sent = record.comments.len();
    apply(&store, TaskOp::CommentsSent { task: id.clone(), sent })?;
    // A task that had reported has no watch any more: it gets one again.
    super::watch::spawn(store.clone(), id.clone(), pane, turn_seen);
    let mut answer = lock(&store).task_record(&id).map(|r| record_value(&r))?;
    answer["sent"] = json!(sent);
    answer["prompt"] = json!(prompt);
    Ok(answer)
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
