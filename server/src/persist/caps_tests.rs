//! Tests of the snapshot caps: what the server writes at the limits, it reads again.

use std::path::Path;
use std::sync::Arc;

use super::super::fs::RealFs;
use super::super::guard::SaveContext;
use super::super::snapshot::{LayoutRecord, TabRecord};
use super::super::task_record::{ContractRecord, TaskRecord};
use super::super::test_support::{pane, sample_snapshot};
use super::super::StateDir;
use super::*;

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

fn loaded_dir(dir: &Path) -> StateDir {
    let state = StateDir::open(dir.to_owned(), Arc::new(RealFs)).unwrap();
    state.load().unwrap();
    state
}

/// A snapshot of `panes`, each in a tab of its own in the sample's workspace.
fn snapshot_of(panes: Vec<PaneRecord>) -> Snapshot {
    let mut snapshot = sample_snapshot();
    let ws = &mut snapshot.workspaces[0];
    ws.tabs = panes
        .iter()
        .map(|p| TabRecord {
            id: p.tab_id.clone(),
            layout: LayoutRecord::Pane(p.id.clone()),
            active_pane_id: Some(p.id.clone()),
            ..TabRecord::default()
        })
        .collect();
    ws.active_tab_id = ws.tabs.first().map(|t| t.id.clone());
    snapshot.panes = panes;
    snapshot
}

/// The `n`th pane of [`snapshot_of`], running `argv`.
fn pane_running(n: usize, argv: Vec<String>) -> PaneRecord {
    PaneRecord { argv, ..pane(&format!("pane_{n:04}"), &format!("tab_{n:04}")) }
}

fn task(n: usize, state: &str, updated_at: u64) -> TaskRecord {
    TaskRecord {
        id: format!("task_{n:04}"),
        state: state.into(),
        contract: ContractRecord { objective: "o".repeat(32 * 1024), ..ContractRecord::default() },
        updated_at,
        ..TaskRecord::default()
    }
}

/// Regression (issue 28, item 5): 100 panes with 700 KB command lines saved a 70 MB snapshot,
/// which the next start moved aside as corrupt and started empty.
#[test]
fn a_hundred_panes_with_700_kb_command_lines_load_again() {
    let root = tempfile::tempdir().unwrap();
    let mut panes: Vec<PaneRecord> = (0..100)
        .map(|n| {
            pane_running(n, vec!["/usr/bin/tool".into(), "--data".into(), "x".repeat(700_000)])
        })
        .collect();
    // One pane exactly at the cap is saved whole.
    let whole = pane_running(100, vec!["a".repeat(Caps::NORMAL.argv - 1)]);
    panes.push(whole.clone());
    let snapshot = snapshot_of(panes);

    let state = loaded_dir(root.path());
    let report = state.save(&snapshot, SaveContext::Explicit { user_closed_all: false }).unwrap();
    assert!((report.bytes as u64) < MAX_SNAPSHOT_BYTES, "{} bytes written", report.bytes);
    assert_eq!(report.cuts.iter().filter(|c| c.field == "argv").count(), 100);
    assert!(
        describe(&report.cuts).contains("pane pane_0000 argv: 700022 → 65536 bytes"),
        "{}",
        describe(&report.cuts)
    );

    let outcome = loaded_dir(root.path()).load().unwrap();
    assert!(outcome.found);
    assert_eq!(outcome.moved_aside, None, "the snapshot written was refused on load");
    assert_eq!(outcome.snapshot.panes.len(), 101);
    for p in &outcome.snapshot.panes[..100] {
        assert!(p.argv_cut, "{} not marked as cut", p.id);
        assert_eq!(p.argv[..2], ["/usr/bin/tool", "--data"]);
        assert!(argv_bytes(&p.argv) <= Caps::NORMAL.argv);
    }
    let loaded_whole = &outcome.snapshot.panes[100];
    assert_eq!(loaded_whole.argv, whole.argv);
    assert!(!loaded_whole.argv_cut);
}

/// Thousands of panes, each at the normal caps, go past the save budget: cut again to the
/// tight caps, the snapshot still loads.
#[test]
fn panes_by_the_thousand_at_the_caps_still_load() {
    let root = tempfile::tempdir().unwrap();
    let panes = (0..600)
        .map(|n| PaneRecord {
            title: "t".repeat(Caps::NORMAL.text),
            ..pane_running(n, vec!["y".repeat(Caps::NORMAL.argv - 1)])
        })
        .collect();
    let snapshot = snapshot_of(panes);
    let state = loaded_dir(root.path());
    let report = state.save(&snapshot, SaveContext::Explicit { user_closed_all: false }).unwrap();
    assert!(report.bytes <= SAVE_BUDGET_BYTES, "{} bytes written", report.bytes);
    assert_eq!(report.cuts.iter().filter(|c| c.field == "argv").count(), 600);

    let outcome = loaded_dir(root.path()).load().unwrap();
    assert_eq!(outcome.moved_aside, None);
    assert_eq!(outcome.snapshot.panes.len(), 600);
    assert!(outcome
        .snapshot
        .panes
        .iter()
        .all(|p| p.argv_cut && argv_bytes(&p.argv) <= Caps::TIGHT.argv));
}

/// Regression (issue 28, item 5): finished tasks were never pruned.
#[test]
fn finished_tasks_are_pruned_by_age_and_count_and_running_ones_kept() {
    let mut snapshot = sample_snapshot();
    let now = snapshot.saved_at;
    // 150 finished in the last month, 20 finished long ago, 5 still working from long ago.
    for n in 0..150 {
        snapshot.tasks.push(task(n, "completed", now - (n as u64) * 60_000));
    }
    for n in 150..170 {
        snapshot.tasks.push(task(n, "failed", now - 40 * DAY_MS));
    }
    for n in 170..175 {
        snapshot.tasks.push(task(n, "working", now - 90 * DAY_MS));
    }
    let cuts = apply(&mut snapshot, Caps::NORMAL);
    let ids: Vec<&str> = snapshot.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), MAX_FINISHED_TASKS + 5);
    assert_eq!(ids[0], "task_0000", "the newest finished task is kept");
    assert_eq!(ids[MAX_FINISHED_TASKS - 1], "task_0099");
    assert!(ids[MAX_FINISHED_TASKS..].iter().all(|id| id >= &"task_0170"), "{ids:?}");
    assert_eq!(cuts.iter().filter(|c| c.field == "pruned").count(), 70);
    assert!(cuts.iter().any(|c| c.to_string() == "task task_0150 left out (finished 40 days ago)"));
}

#[test]
fn long_fields_are_cut_on_a_character_boundary_and_named() {
    let mut snapshot = sample_snapshot();
    snapshot.panes[0].title = "é".repeat(10_000);
    snapshot.panes[0].agent.reported_resume_argv = Some(vec!["z".repeat(100_000)]);
    snapshot.tasks.push(TaskRecord {
        id: "task_big".into(),
        state: "working".into(),
        status_reason: Some(serde_json::json!({ "files": vec!["a/b/c.rs"; 10_000] })),
        ..TaskRecord::default()
    });
    let cuts = apply(&mut snapshot, Caps::NORMAL);
    let title = &snapshot.panes[0].title;
    assert!(title.len() <= Caps::NORMAL.text && title.ends_with('…'));
    assert_eq!(snapshot.panes[0].agent.reported_resume_argv, None);
    let reason = snapshot.tasks[0].status_reason.as_ref().unwrap();
    assert!(reason["cut"].as_str().unwrap().len() <= Caps::NORMAL.task_report);
    let text = describe(&cuts);
    assert!(text.contains("pane pane_a title: 20000 → "), "{text}");
    assert!(text.contains("pane pane_a reported_resume_argv: 100001 → 0 bytes"), "{text}");
    assert!(text.contains("task task_big status_reason"), "{text}");
}

#[test]
fn a_snapshot_within_the_caps_is_not_touched() {
    let mut snapshot = sample_snapshot();
    let before = snapshot.clone();
    assert_eq!(apply(&mut snapshot, Caps::NORMAL), Vec::new());
    assert_eq!(snapshot, before);
}
