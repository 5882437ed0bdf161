//! The Store's side of tasks without git or processes (`FakeSpawner`): a task registered, its
//! worker's tab opened, reported once; restore failing unfinished tasks exactly once; the
//! decision hook; `task.changed` on the bus.

use std::collections::HashMap;
use std::path::Path;

use berth_engine::ids::TaskId;
use serde_json::json;

use super::model::{Task, TaskState};
use super::op::TaskOp;
use super::ops::decision_changed;
use crate::commands::SpawnRequest;
use crate::error::CommandError;
use crate::events::EventBus;
use crate::persist::task_record::{TaskRecord, TaskResultRecord};
use crate::store::{Internal, Store};

fn store(home: &Path, bus: EventBus) -> Store {
    crate::store::test_store(home, bus)
}

fn op(store: &mut Store, op: TaskOp) -> Result<(), CommandError> {
    store.execute(Internal::Task(op)).map(|_| ())
}

/// A registered task with its worker's tab open in a workspace for `repo`.
fn working_task(store: &mut Store, repo: &Path, key: Option<&str>) -> TaskId {
    let id = TaskId::new();
    let record = TaskRecord {
        label: "fix it".into(),
        source_repo: repo.display().to_string(),
        client_request_id: key.map(str::to_owned),
        ..TaskRecord::default()
    };
    op(store, TaskOp::Register(Box::new(Task::new(id.clone(), record)))).unwrap();
    let spawn = SpawnRequest {
        argv: vec!["claude".into()],
        cwd: Some(repo.to_path_buf()),
        ..SpawnRequest::default()
    };
    op(store, TaskOp::OpenTab { task: id.clone(), spawn, repo: repo.to_path_buf() }).unwrap();
    let to = TaskState::Working;
    op(store, TaskOp::Transition { task: id.clone(), to, reason: None }).unwrap();
    id
}

fn state(store: &Store, id: &TaskId) -> String {
    store.task_record(id).unwrap().state
}

#[test]
fn a_task_opens_its_tab_in_the_repo_workspace_and_is_reported_once() {
    let home = tempfile::tempdir().unwrap();
    let bus = EventBus::default();
    let mut events = bus.subscribe();
    let mut store = store(home.path(), bus);
    let a = working_task(&mut store, home.path(), Some("k1"));
    let b = working_task(&mut store, home.path(), None);
    let view = store.view();
    assert_eq!(view.workspaces.len(), 1, "one workspace for the repo");
    assert_eq!(view.workspaces[0].tabs.len(), 2);
    assert_eq!(store.task_by_request("k1"), Some(a.clone()));
    // The same request id is refused a second task.
    let again = Task::new(
        TaskId::new(),
        TaskRecord { client_request_id: Some("k1".into()), ..TaskRecord::default() },
    );
    assert!(matches!(
        op(&mut store, TaskOp::Register(Box::new(again))),
        Err(CommandError::Conflict(_))
    ));
    let report = |status: &str| TaskResultRecord {
        status: status.into(),
        summary: "done".into(),
        ..TaskResultRecord::default()
    };
    op(&mut store, TaskOp::Report { task: a.clone(), result: report("completed") }).unwrap();
    assert_eq!(state(&store, &a), "completed");
    assert!(store.task_record(&a).unwrap().result.unwrap().reported_at > 0);
    let twice = op(&mut store, TaskOp::Report { task: a.clone(), result: report("failed") });
    assert!(twice.unwrap_err().to_string().contains("once"));
    assert!(op(&mut store, TaskOp::Report { task: b.clone(), result: report("done") }).is_err());
    // A watcher's conditional change does not undo a report.
    let stale = TaskOp::TransitionIf {
        task: a.clone(),
        from: TaskState::Working,
        to: TaskState::InputRequired,
        reason: None,
    };
    op(&mut store, stale).unwrap();
    assert_eq!(state(&store, &a), "completed");
    // Every change was published as task.changed.
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        let line = event.line(crate::protocol::encode_event);
        if line.contains("task.changed") {
            seen.push(line.to_string());
        }
    }
    assert!(seen.iter().any(|l| l.contains(a.as_str()) && l.contains("\"completed\"")), "{seen:?}");
    assert_eq!(store.task_records(Some(home.path())).len(), 2);
    assert_eq!(store.task_records(Some(Path::new("/elsewhere"))).len(), 0);
}

#[test]
fn a_restart_fails_unfinished_tasks_exactly_once() {
    let home = tempfile::tempdir().unwrap();
    let mut first = store(home.path(), EventBus::default());
    let working = working_task(&mut first, home.path(), None);
    let done = working_task(&mut first, home.path(), None);
    let to = TaskState::Canceled;
    op(&mut first, TaskOp::Transition { task: done.clone(), to, reason: None }).unwrap();
    let (snapshot, _) = first.to_snapshot(&HashMap::new());
    assert_eq!(snapshot.tasks.len(), 2);
    let mut second = store(home.path(), EventBus::default());
    second
        .execute(Internal::Restore { snapshot: Box::new(snapshot), tails: HashMap::new() })
        .unwrap();
    let failed = second.task_record(&working).unwrap();
    assert_eq!(failed.state, "failed");
    assert_eq!(failed.status_reason.as_ref().unwrap()["reason"], "restart");
    assert_eq!(state(&second, &done), "canceled");
    // Restored again: nothing changes (failed once).
    let (snapshot, _) = second.to_snapshot(&HashMap::new());
    let mut third = store(home.path(), EventBus::default());
    third
        .execute(Internal::Restore { snapshot: Box::new(snapshot), tails: HashMap::new() })
        .unwrap();
    assert_eq!(third.task_record(&working).unwrap(), failed);
}

#[test]
fn a_pending_decision_asks_for_input_and_its_answer_resumes_work() {
    let home = tempfile::tempdir().unwrap();
    let mut store = store(home.path(), EventBus::default());
    let id = working_task(&mut store, home.path(), None);
    let pane = store.task_record(&id).unwrap().pane_id.unwrap();
    let pane = berth_engine::ids::PaneId::parse(&pane).unwrap();
    decision_changed(&mut store, &pane, Some("dec_1"));
    let asked = store.task_record(&id).unwrap();
    assert_eq!(asked.state, "input_required");
    assert_eq!(
        asked.status_reason,
        Some(json!({ "reason": "decision_required", "decision_id": "dec_1" }))
    );
    decision_changed(&mut store, &pane, None);
    assert_eq!(state(&store, &id), "working");
    // A clear does not resume a task that waits for another reason.
    let reason = Some(json!({ "reason": "turn_ended_without_report" }));
    op(&mut store, TaskOp::Transition { task: id.clone(), to: TaskState::InputRequired, reason })
        .unwrap();
    decision_changed(&mut store, &pane, None);
    assert_eq!(state(&store, &id), "input_required");
}

/// Regression (issue 28): a running server kept every finished task (only the saved snapshot
/// was pruned), so a long-lived Store grew with each task ever run.
#[test]
fn a_running_store_forgets_finished_tasks_past_the_count_and_the_age() {
    use crate::persist::caps::{FINISHED_TASK_AGE_MS, MAX_FINISHED_TASKS};
    let home = tempfile::tempdir().unwrap();
    let mut store = store(home.path(), EventBus::default());
    let running = working_task(&mut store, home.path(), None);
    let mut finished = Vec::new();
    for n in 0..MAX_FINISHED_TASKS + 5 {
        let id = TaskId::new();
        let record = TaskRecord { label: format!("t{n}"), ..TaskRecord::default() };
        op(&mut store, TaskOp::Register(Box::new(Task::new(id.clone(), record)))).unwrap();
        let to = TaskState::Canceled;
        op(&mut store, TaskOp::Transition { task: id.clone(), to, reason: None }).unwrap();
        finished.push(id);
    }
    let records = store.task_records(None);
    assert_eq!(
        records.len(),
        MAX_FINISHED_TASKS + 1,
        "the 100 most recent finished and the running one"
    );
    assert!(store.task_record(&running).is_ok(), "a running task is never forgotten");
    assert!(
        store.task_record(finished.last().unwrap()).is_ok(),
        "the newest finished task is kept"
    );
    // Past the age, every finished task goes, the running one stays.
    let later = crate::persist::stamp::now_ms() + FINISHED_TASK_AGE_MS + 60_000;
    assert_eq!(store.prune_tasks(later), MAX_FINISHED_TASKS);
    let left: Vec<String> = store.task_records(None).into_iter().map(|t| t.id).collect();
    assert_eq!(left, vec![running.to_string()]);
}
