//! Tests of the snapshot DTO and its one encoder (a file of its own so that the test builders
//! in `test_support.rs`, which build snapshots, do not make an import loop with `snapshot.rs`).

use crate::persist::encode::{encode, save};
use crate::persist::fs::{RealFs, StateFs};
use crate::persist::guard::{may_replace, RefusedReason, SaveContext};
use crate::persist::test_support::{sample_snapshot, PANE_A};

use super::*;

#[test]
fn allowlist_keeps_exactly_the_listed_names() {
    let cases: &[(&str, bool)] = &[
        ("TERM", true),
        ("LANG", true),
        ("LC_ALL", true),
        ("LC_CTYPE", true),
        ("BERTH_PANE", true),
        ("CLAUDE_CONFIG_DIR", true),
        ("CODEX_HOME", true),
        ("OPENCODE_CONFIG_DIR", true),
        ("LC_", false),
        ("BERTH_", false),
        ("TERMINFO", false),
        ("LANGUAGE", false),
        ("PATH", false),
        ("HOME", false),
        ("AWS_SECRET_ACCESS_KEY", false),
        ("GITHUB_TOKEN", false),
        ("ANTHROPIC_API_KEY", false),
        ("term", false),
    ];
    for &(name, kept) in cases {
        assert_eq!(is_allowlisted_env(name), kept, "{name}");
    }
}

#[test]
fn secret_env_never_reaches_the_bytes() {
    let mut snapshot = sample_snapshot();
    let pane = snapshot.panes.iter_mut().find(|p| p.id == PANE_A).unwrap();
    pane.env.insert("AWS_SECRET_ACCESS_KEY".into(), "wJalrXUtnFEMI-secret-1".into());
    pane.env.insert("GITHUB_TOKEN".into(), "ghp_secret2".into());
    pane.env.insert("TERM".into(), "xterm-256color".into());
    pane.agent.config_env.insert("ANTHROPIC_API_KEY".into(), "sk-ant-secret3".into());
    pane.agent.config_env.insert("BERTH_PANE".into(), "not-a-config-dir".into());
    pane.agent.config_env.insert("CODEX_HOME".into(), "/home/u/.codex".into());
    let dir = tempfile::tempdir().unwrap();
    let report = save(&RealFs, dir.path(), &snapshot).unwrap();
    let text = String::from_utf8(std::fs::read(&report.path).unwrap()).unwrap();
    for secret in
        ["secret1", "secret-1", "ghp_secret2", "sk-ant-secret3", "AWS_SECRET", "GITHUB_TOKEN"]
    {
        assert!(!text.contains(secret), "{secret} reached the snapshot");
    }
    assert!(text.contains("xterm-256color") && text.contains("/home/u/.codex"));
    assert!(!text.contains("not-a-config-dir"), "config_env keeps only the config dirs");
    assert_eq!(RealFs.metadata(&report.path).unwrap().mode, 0o600);
}

#[test]
fn encoding_stamps_the_version_keeps_200_notifications_and_fixes_ratios() {
    let mut snapshot = sample_snapshot();
    snapshot.snapshot_version = 0;
    snapshot.notifications = (0..250)
        .map(|i| NotificationRecord { id: format!("notif_{i}"), ..Default::default() })
        .collect();
    if let LayoutRecord::Split(split) = &mut snapshot.workspaces[0].tabs[0].layout {
        split.ratio = f64::NAN;
    }
    let clean: Snapshot = serde_json::from_slice(&encode(&snapshot).unwrap()).unwrap();
    assert_eq!(clean.snapshot_version, SNAPSHOT_VERSION);
    assert_eq!(clean.notifications.len(), MAX_NOTIFICATIONS);
    assert_eq!(clean.notifications[0].id, "notif_50", "the oldest are dropped");
    let LayoutRecord::Split(split) = &clean.workspaces[0].tabs[0].layout else { panic!() };
    assert_eq!(split.ratio, 0.5);
}

#[test]
fn layout_records_have_the_protocol_shape() {
    let layout = LayoutRecord::split(
        SplitDirRecord::Right,
        0.5,
        LayoutRecord::Pane("pane_a".into()),
        LayoutRecord::split(
            SplitDirRecord::Down,
            0.25,
            LayoutRecord::Pane("pane_b".into()),
            LayoutRecord::Pane("pane_c".into()),
        ),
    );
    let json = serde_json::to_value(&layout).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"split": {"dir": "right", "ratio": 0.5,
            "first": {"pane": "pane_a"},
            "second": {"split": {"dir": "down", "ratio": 0.25,
                "first": {"pane": "pane_b"}, "second": {"pane": "pane_c"}}}}})
    );
    assert_eq!(layout.pane_ids(), ["pane_a", "pane_b", "pane_c"]);
}

/// Regression: a boot that restored two panes as tombstones and made a new one could not
/// save at shutdown, because the tombstones did not count as kept.
#[test]
fn restored_tombstones_count_as_kept_at_shutdown() {
    let snapshot = |states: &[&str]| Snapshot {
        panes: states
            .iter()
            .map(|state| {
                let mut pane: PaneRecord =
                    serde_json::from_str("{}").expect("a pane record of defaults");
                pane.state = (*state).to_owned();
                pane
            })
            .collect(),
        ..Snapshot::default()
    };
    let previous = SnapshotSummary::of(&snapshot(&["LIVE", "LIVE"]));
    let next = SnapshotSummary::of(&snapshot(&["RESTORED", "RESUMABLE", "LIVE"]));
    assert_eq!(may_replace(Some(&previous), &next, SaveContext::Shutdown), Ok(()));
    // Panes whose processes died on the way down still refuse the save.
    let next = SnapshotSummary::of(&snapshot(&["EXITED", "LIVE"]));
    assert!(
        matches!(
            may_replace(Some(&previous), &next, SaveContext::Shutdown),
            Err(RefusedReason::FewerAtShutdown { .. })
        ),
        "{next:?}"
    );
}

/// A secret pasted into a task's contract or report is written as `REDACTED`, like a title's.
#[test]
fn secrets_in_tasks_never_reach_the_bytes() {
    use crate::persist::task_record::{ContractRecord, TaskRecord, TaskResultRecord};
    let mut snapshot = sample_snapshot();
    snapshot.tasks.push(TaskRecord {
        id: "task_1".into(),
        state: "completed".into(),
        contract: ContractRecord {
            objective: "Deploy with GITHUB_TOKEN=ghp_objective1 set".into(),
            constraints: vec!["use --password hunter2constraint".into()],
            ..ContractRecord::default()
        },
        result: Some(TaskResultRecord {
            summary: "ran curl -H 'Authorization: Bearer sk-summary123456'".into(),
            ..TaskResultRecord::default()
        }),
        // Finished just now, so the caps keep it.
        updated_at: snapshot.saved_at,
        ..TaskRecord::default()
    });
    let bytes = String::from_utf8(encode(&snapshot).unwrap()).unwrap();
    for secret in ["ghp_objective1", "hunter2constraint", "sk-summary123456"] {
        assert!(!bytes.contains(secret), "{secret} was written");
    }
    assert!(bytes.contains("Deploy with"));
}
