//! The watch on a working task's worker pane, one tokio task per task until it is terminal:
//!
//! - a turn that ends (the pane's `TurnLog`, from the agent's `Stop` hook) with no report →
//!   `input_required` with `turn_ended_without_report` and the agent's last message;
//! - no output and no hook for the task's `silence_s` (0: off) → `input_required` with
//!   `worker_silent`;
//! - a new turn while `input_required` (a follow-up `berth submit`, an answered prompt) →
//!   `working`;
//! - the pane closed or its process gone → `failed` with `worker_exited`, once;
//! - each turn's end → a checkpoint of the worktree (`checkpoint.rs`) first.
//!
//! It wakes on the pane's `changed` notify and every second; it locks the Store only to look
//! and to execute one `TaskOp`, and each change is conditional on the state it saw, so a report
//! that lands in between wins. A pending decision on the worker pane (#14) enters through
//! [`decision_changed`], which the Store calls whenever a pane's decision opens or clears.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::ids::{PaneId, TaskId};
use serde_json::json;

use super::model::TaskState;
use super::ops::{apply, lock, TaskOp};
use crate::persist::stamp::now_ms;
use crate::store::Store;

/// How often the watch looks when nothing wakes it.
const TICK: Duration = Duration::from_secs(1);

/// The tasks watched now: one watch a task (a reopened task whose watch still runs keeps it).
fn watched() -> std::sync::MutexGuard<'static, std::collections::HashSet<TaskId>> {
    static WATCHED: std::sync::OnceLock<Mutex<std::collections::HashSet<TaskId>>> =
        std::sync::OnceLock::new();
    WATCHED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the watch of `task` on `pane` unless one runs; `turn_seen` is the end of the pane's
/// last turn before the task's prompt (a turn that ended then is not the task's).
pub(crate) fn spawn(store: Arc<Mutex<Store>>, task: TaskId, pane: PaneId, turn_seen: Option<u64>) {
    if watched().insert(task.clone()) {
        tokio::spawn(watch(store, task, pane, turn_seen));
    }
}

/// Ends the watch of `task`: always when `force`, else only if the task is terminal now
/// (checked under the registry's lock, so a reopen in between keeps this watch).
fn unwatch(store: &Mutex<Store>, task: &TaskId, force: bool) -> bool {
    let mut all = watched();
    let done = force || lock(store).tasks.get(task).is_none_or(|t| t.state().is_terminal());
    if done {
        all.remove(task);
    }
    done
}

/// What one look found.
enum Seen {
    /// The task is terminal: the watch ends.
    Done,
    /// The pane is gone or its process ended.
    Exited(Option<i32>),
    /// The pane lives.
    Live {
        state: TaskState,
        silence_s: u64,
        turn_end: Option<(u64, Option<String>)>,
        turn_running_since: Option<u64>,
        activity: (u64, u64),
        /// Why it waits, when it does, and since when (its last change).
        reason: Option<String>,
        since: u64,
    },
}

fn look(store: &Store, task: &TaskId, pane: &PaneId) -> Seen {
    let Some(t) = store.tasks.get(task) else { return Seen::Done };
    if t.state().is_terminal() {
        return Seen::Done;
    }
    let Some(p) = store.panes.get(pane) else { return Seen::Exited(None) };
    if let Some(exit) = p.exit() {
        return Seen::Exited(Some(exit.code));
    }
    if p.tombstone.is_some() {
        return Seen::Exited(None);
    }
    let meta = p.shared.meta();
    Seen::Live {
        state: t.state(),
        silence_s: t.record.silence_s,
        turn_end: meta.turns.last.as_ref().map(|l| (l.ended_at, l.last_message.clone())),
        turn_running_since: meta.turns.started_at,
        activity: (meta.last_activity_ms, meta.turns.hook_events),
        reason: t
            .record
            .status_reason
            .as_ref()
            .and_then(|r| r.get("reason"))
            .and_then(|r| r.as_str())
            .map(str::to_owned),
        since: t.record.updated_at,
    }
}

async fn watch(store: Arc<Mutex<Store>>, task: TaskId, pane: PaneId, mut turn_seen: Option<u64>) {
    let Some(shared) = lock(&store).pane_shared(&pane) else {
        let reason = json!({ "reason": "worker_exited", "stage": "watch", "error": "the worker pane is gone" });
        let _ = fail_live(&store, &task, reason);
        unwatch(&store, &task, true);
        return;
    };
    let mut activity = (0, 0);
    let mut active_at = now_ms();
    loop {
        let changed = shared.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let seen = {
            let mut store = lock(&store);
            // A decision that opened before the task was working (the start's last step) is
            // caught here; later ones come through `decision_changed` as they change.
            reconcile_decision(&mut store, &pane);
            look(&store, &task, &pane)
        };
        let now = now_ms();
        match seen {
            Seen::Done => {
                if unwatch(&store, &task, false) {
                    return;
                }
            }
            Seen::Exited(code) => {
                let reason = json!({
                    "reason": "worker_exited",
                    "exit_code": code,
                    "error": "the worker's pane closed or its program ended without a report",
                });
                let _ = fail_live(&store, &task, reason);
                unwatch(&store, &task, true);
                return;
            }
            Seen::Live {
                state,
                silence_s,
                turn_end,
                turn_running_since,
                activity: now_activity,
                reason,
                since,
            } => {
                if now_activity != activity {
                    activity = now_activity;
                    active_at = now;
                }
                let ended = turn_end.filter(|(at, _)| Some(*at) > turn_seen);
                if let Some((at, message)) = ended {
                    turn_seen = Some(at);
                    // The turn's checkpoint, before the task says it waits (so whoever
                    // waits for that finds it).
                    if let Err(e) = super::checkpoint::record(
                        store.clone(),
                        task.clone(),
                        super::checkpoint::TURN,
                    )
                    .await
                    {
                        tracing::warn!(task = %task, "the turn's checkpoint failed: {e}");
                    }
                    if state == TaskState::Working {
                        let reason = json!({
                            "reason": "turn_ended_without_report",
                            "last_message": message,
                        });
                        to_input_required(&store, &task, reason);
                    }
                } else if state == TaskState::InputRequired
                    // A decision's answer (or its end) resumes that one, in `decision_changed`.
                    && reason.as_deref() != Some("decision_required")
                    && turn_running_since.is_some_and(|started| started >= since)
                {
                    let _ = apply(
                        &store,
                        TaskOp::TransitionIf {
                            task: task.clone(),
                            from: TaskState::InputRequired,
                            to: TaskState::Working,
                            reason: None,
                        },
                    );
                } else if state == TaskState::Working
                    && silence_s > 0
                    && now.saturating_sub(active_at) >= silence_s.saturating_mul(1000)
                {
                    let reason = json!({ "reason": "worker_silent", "timeout_s": silence_s });
                    to_input_required(&store, &task, reason);
                    active_at = now;
                }
            }
        }
        tokio::select! {
            () = &mut changed => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

fn to_input_required(store: &Mutex<Store>, task: &TaskId, reason: serde_json::Value) {
    let _ = apply(
        store,
        TaskOp::TransitionIf {
            task: task.clone(),
            from: TaskState::Working,
            to: TaskState::InputRequired,
            reason: Some(reason),
        },
    );
}

/// Fails a task that is not terminal (pending, working or input_required), once.
fn fail_live(
    store: &Mutex<Store>,
    task: &TaskId,
    reason: serde_json::Value,
) -> Result<(), crate::error::CommandError> {
    let state = lock(store).tasks.get(task).map(super::model::Task::state);
    match state {
        Some(s) if !s.is_terminal() => apply(
            store,
            TaskOp::TransitionIf {
                task: task.clone(),
                from: s,
                to: TaskState::Failed,
                reason: Some(reason),
            },
        ),
        _ => Ok(()),
    }
}

/// Applies the pane's pending decision now (or its absence) to its task.
fn reconcile_decision(store: &mut Store, pane: &PaneId) {
    let id = store.pending_decision(pane).map(|d| d.id.to_string());
    super::ops::decision_changed(store, pane, id.as_deref());
}
