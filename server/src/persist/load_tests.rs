//! Tests of the loader: corrupt, future, partial and old snapshots (RELIABILITY #3, #4).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::super::encode::{encode, sanitized, save};
use super::super::fs::testing::{FaultyFs, FsOp, Trigger};
use super::super::fs::RealFs;
use super::super::snapshot::SizeRecord;
use super::super::test_support::{sample_snapshot, PANE_A, PANE_B, PANE_C, TAB_ONE, TAB_TWO, WS};
use super::*;

const NOW: u64 = 1_795_994_100_000;
const CORRUPT_NAME: &str = "snapshot.json.corrupt-20261129T231500Z";

fn write_snapshot(dir: &Path, bytes: &[u8]) {
    std::fs::write(dir.join(SNAPSHOT_FILE), bytes).unwrap();
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// The sample snapshot as the JSON the encoder writes.
fn sample_json() -> Value {
    serde_json::to_value(sanitized(&sample_snapshot())).unwrap()
}

/// Loads `value` written as snapshot.json; the load must succeed.
fn load_value(value: &Value) -> LoadOutcome {
    let dir = tempfile::tempdir().unwrap();
    write_snapshot(dir.path(), &serde_json::to_vec(value).unwrap());
    let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
    check_invariants(&outcome.snapshot);
    outcome
}

fn pane_ids(s: &Snapshot) -> Vec<&str> {
    s.panes.iter().map(|p| p.id.as_str()).collect()
}

fn tab<'a>(s: &'a Snapshot, id: &str) -> Option<&'a TabRecord> {
    s.workspaces.iter().flat_map(|w| &w.tabs).find(|t| t.id == id)
}

fn has_problem(outcome: &LoadOutcome, needle: &str) -> bool {
    outcome.problems.iter().any(|p| p.contains(needle))
}

/// What the loader promises the Store (see the module header).
fn check_invariants(s: &Snapshot) {
    let mut tab_ws = HashMap::new();
    for ws in &s.workspaces {
        WorkspaceId::parse(&ws.id).unwrap();
        for tab in &ws.tabs {
            TabId::parse(&tab.id).unwrap();
            assert!(tab_ws.insert(tab.id.as_str(), ws.id.as_str()).is_none(), "tab twice");
        }
        match &ws.active_tab_id {
            Some(t) => assert!(ws.tabs.iter().any(|x| &x.id == t)),
            None => assert!(ws.tabs.is_empty()),
        }
    }
    let mut by_tab: HashMap<&str, HashSet<&str>> = HashMap::new();
    for pane in &s.panes {
        PaneId::parse(&pane.id).unwrap();
        assert_eq!(tab_ws.get(pane.tab_id.as_str()), Some(&pane.workspace_id.as_str()));
        assert!(by_tab.entry(&pane.tab_id).or_default().insert(&pane.id), "pane twice");
        assert!(PANE_STATES.contains(&pane.state.as_str()));
    }
    for tab in s.workspaces.iter().flat_map(|w| &w.tabs) {
        let ids = tab.layout.pane_ids();
        let set: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(set.len(), ids.len(), "a leaf twice in {}", tab.id);
        assert_eq!(Some(&set), by_tab.get(tab.id.as_str()), "layout of {} vs its panes", tab.id);
        assert!(tab.active_pane_id.as_deref().is_some_and(|p| set.contains(p)));
    }
    if let Some(active) = &s.active_workspace_id {
        assert!(s.workspaces.iter().any(|w| &w.id == active));
    }
    for n in &s.notifications {
        NotificationId::parse(&n.id).unwrap();
    }
}

#[test]
fn a_missing_snapshot_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
    assert!(!outcome.found && outcome.is_clean());
    assert!(outcome.snapshot.panes.is_empty() && outcome.snapshot.workspaces.is_empty());
}

#[test]
fn a_saved_snapshot_loads_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    save(&RealFs, dir.path(), &sample_snapshot()).unwrap();
    let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
    assert!(outcome.found && outcome.is_clean(), "{:?}", outcome.problems);
    assert_eq!(outcome.snapshot, sanitized(&sample_snapshot()));
}

#[test]
fn corrupt_snapshots_are_moved_aside_byte_for_byte_and_reported() {
    let valid = encode(&sample_snapshot()).unwrap();
    let cases: &[(&str, &[u8])] = &[
        ("zero-length", b""),
        ("whitespace only", b" \n\t"),
        ("truncated", &valid[..valid.len() / 2]),
        ("truncated to one byte", &valid[..1]),
        ("garbage", b"\x00\x01\x02garbage{{"),
        ("non-UTF-8", b"{\"snapshot_version\":1,\"server_version\":\"\xff\xfe\"}"),
        ("a JSON array", b"[1, 2, 3]"),
        ("null", b"null"),
        ("an empty object", b"{}"),
        ("a version that is a string", br#"{"snapshot_version":"one"}"#),
        ("a negative version", br#"{"snapshot_version":-1}"#),
        ("an unknown legacy version", br#"{"version":7,"workspaces":[]}"#),
    ];
    for &(name, bytes) in cases {
        let dir = tempfile::tempdir().unwrap();
        write_snapshot(dir.path(), bytes);
        let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
        assert_eq!(outcome.moved_aside, Some(dir.path().join(CORRUPT_NAME)), "{name}");
        assert_eq!(std::fs::read(dir.path().join(CORRUPT_NAME)).unwrap(), bytes, "{name}");
        assert_eq!(entries(dir.path()), [CORRUPT_NAME], "{name}");
        assert!(outcome.snapshot.panes.is_empty() && outcome.snapshot.workspaces.is_empty());
        assert_eq!(outcome.problems.len(), 1, "{name}");
        assert!(
            has_problem(&outcome, "moved aside") && has_problem(&outcome, "empty state"),
            "{name}"
        );
    }
}

#[test]
fn an_unreadable_snapshot_is_moved_aside() {
    // chmod 000 does not stop root, so the read fails through the seam instead.
    let dir = tempfile::tempdir().unwrap();
    let valid = encode(&sample_snapshot()).unwrap();
    write_snapshot(dir.path(), &valid);
    let fs = FaultyFs::new();
    fs.fail(Trigger::Nth(FsOp::Read, 1), libc::EACCES);
    let outcome = load_at(&fs, dir.path(), NOW).unwrap();
    assert!(outcome.moved_aside.is_some());
    assert!(has_problem(&outcome, "could not be read"), "{:?}", outcome.problems);
    assert_eq!(std::fs::read(dir.path().join(CORRUPT_NAME)).unwrap(), valid);
}

#[test]
fn an_earlier_corrupt_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    for (i, bytes) in [&b"first"[..], b"second", b"third"].iter().enumerate() {
        write_snapshot(dir.path(), bytes);
        let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
        let want = if i == 0 { CORRUPT_NAME.to_owned() } else { format!("{CORRUPT_NAME}-{i}") };
        assert_eq!(outcome.moved_aside, Some(dir.path().join(&want)));
    }
    assert_eq!(std::fs::read(dir.path().join(CORRUPT_NAME)).unwrap(), b"first");
    assert_eq!(std::fs::read(dir.path().join(format!("{CORRUPT_NAME}-1"))).unwrap(), b"second");
}

#[test]
fn a_corrupt_snapshot_that_cannot_be_moved_aside_is_an_error_and_stays() {
    let dir = tempfile::tempdir().unwrap();
    write_snapshot(dir.path(), b"garbage");
    let fs = FaultyFs::new();
    fs.fail(Trigger::Every(FsOp::Rename), libc::EROFS);
    let err = load_at(&fs, dir.path(), NOW).unwrap_err();
    assert!(matches!(err, LoadError::Persist(PersistError::Io { .. })), "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(std::fs::read(dir.path().join(SNAPSHOT_FILE)).unwrap(), b"garbage");
}

#[test]
fn a_future_snapshot_is_refused_and_left_byte_identical() {
    let cases: &[(&[u8], u32)] = &[
        (br#"{"snapshot_version": 2, "shiny_new_field": [1, 2, 3]}"#, 2),
        (br#"{"snapshot_version": 99999999999}"#, u32::MAX),
    ];
    for &(bytes, found) in cases {
        let dir = tempfile::tempdir().unwrap();
        write_snapshot(dir.path(), bytes);
        let err = load_at(&RealFs, dir.path(), NOW).unwrap_err();
        let LoadError::FutureVersion { found: f, supported, .. } = &err else { panic!("{err}") };
        assert_eq!((*f, *supported), (found, SNAPSHOT_VERSION));
        let message = err.to_string();
        for needle in
            [&format!("version {found}"), "up to 1", "will not overwrite", "--move-aside-future"]
        {
            assert!(message.contains(needle), "{needle:?} not in {message}");
        }
        assert_eq!(std::fs::read(dir.path().join(SNAPSHOT_FILE)).unwrap(), bytes);
        assert_eq!(entries(dir.path()), [SNAPSHOT_FILE]);

        let moved = move_aside_future(&RealFs, dir.path(), NOW).unwrap().unwrap();
        assert_eq!(
            moved,
            dir.path().join(format!("snapshot.json.future-v{found}-20261129T231500Z"))
        );
        assert_eq!(std::fs::read(&moved).unwrap(), bytes);
        let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
        assert!(!outcome.found && outcome.is_clean());
    }
}

#[test]
fn move_aside_future_leaves_a_current_snapshot_alone() {
    let dir = tempfile::tempdir().unwrap();
    save(&RealFs, dir.path(), &sample_snapshot()).unwrap();
    assert_eq!(move_aside_future(&RealFs, dir.path(), NOW).unwrap(), None);
    assert_eq!(move_aside_future(&RealFs, &dir.path().join("none"), NOW).unwrap(), None);
    assert_eq!(entries(dir.path()), [SNAPSHOT_FILE]);
}

#[test]
fn one_bad_pane_entry_does_not_hide_the_others() {
    let mut value = sample_json();
    value["panes"][1]["size"] = json!("huge");
    let outcome = load_value(&value);
    assert_eq!(pane_ids(&outcome.snapshot), [PANE_A, PANE_C]);
    assert!(has_problem(&outcome, r#"pane #1 ("pane_b") skipped"#), "{:?}", outcome.problems);
    let one = tab(&outcome.snapshot, TAB_ONE).unwrap();
    assert_eq!(one.layout, LayoutRecord::Pane(PANE_A.into()), "the split collapses");
    assert_eq!(one.active_pane_id.as_deref(), Some(PANE_A), "the active pane moves");
    assert_eq!(outcome.snapshot.notifications.len(), 1);
}

/// One row: a change to the sample's JSON, the panes that must load, and a problem that must be
/// reported (empty: none at all).
type Mutation = (&'static str, fn(&mut Value), &'static [&'static str], &'static str);

#[test]
fn entries_that_do_not_decode_are_skipped_and_reported() {
    let rows: &[Mutation] = &[
        (
            "pane id ../x",
            |v| v["panes"][0]["id"] = json!("../x"),
            &[PANE_B, PANE_C],
            "pane #0 (\"../x\")",
        ),
        ("pane id -rf", |v| v["panes"][0]["id"] = json!("-rf"), &[PANE_B, PANE_C], "not allowed"),
        ("empty pane id", |v| v["panes"][0]["id"] = json!(""), &[PANE_B, PANE_C], "id is empty"),
        (
            "pane id of another kind",
            |v| v["panes"][0]["id"] = json!("tab_a"),
            &[PANE_B, PANE_C],
            "not a pane id",
        ),
        ("pane not an object", |v| v["panes"][2] = json!(42), &[PANE_A, PANE_B], "pane #2 skipped"),
        (
            "pane tab id unsafe",
            |v| v["panes"][2]["tab_id"] = json!("../t"),
            &[PANE_A, PANE_B],
            "its tab id",
        ),
        (
            "pane tab missing",
            |v| v["panes"][2]["tab_id"] = json!("tab_gone"),
            &[PANE_A, PANE_B],
            "did not load",
        ),
        ("pane twice", |v| v["panes"][1]["id"] = json!(PANE_A), &[PANE_A, PANE_C], "appears twice"),
        (
            "pane with wrong types",
            |v| v["panes"][0]["argv"] = json!("claude"),
            &[PANE_B, PANE_C],
            "pane #0",
        ),
        ("panes not a list", |v| v["panes"] = json!({}), &[], "`panes` is not a list"),
        (
            "unknown field",
            |v| v["panes"][0]["from_the_future"] = json!(1),
            &[PANE_A, PANE_B, PANE_C],
            "",
        ),
        (
            "missing optional fields",
            |v| {
                let p = v["panes"][0].as_object_mut().unwrap();
                p.retain(|k, _| ["id", "tab_id", "workspace_id"].contains(&k.as_str()));
            },
            &[PANE_A, PANE_B, PANE_C],
            "",
        ),
        (
            "tab twice",
            |v| v["workspaces"][0]["tabs"][1]["id"] = json!(TAB_ONE),
            &[PANE_A, PANE_B],
            "appears twice",
        ),
        ("workspace id unsafe", |v| v["workspaces"][0]["id"] = json!("ws/.."), &[], "workspace #0"),
        (
            "tab id unsafe",
            |v| v["workspaces"][0]["tabs"][1]["id"] = json!(".."),
            &[PANE_A, PANE_B],
            "tab #1",
        ),
        ("tab not an object", |v| v["workspaces"][0]["tabs"][0] = json!([]), &[PANE_C], "tab #0"),
        ("tabs not a list", |v| v["workspaces"][0]["tabs"] = json!(1), &[], "`tabs` is not a list"),
        (
            "unknown state",
            |v| v["panes"][0]["state"] = json!("ZOMBIE"),
            &[PANE_A, PANE_B, PANE_C],
            "unknown state",
        ),
        (
            "workspace mismatch",
            |v| v["panes"][0]["workspace_id"] = json!("ws_other"),
            &[PANE_A, PANE_B, PANE_C],
            "the tab wins",
        ),
        (
            "notification id unsafe",
            |v| v["notifications"][0]["id"] = json!("../n"),
            &[PANE_A, PANE_B, PANE_C],
            "notification #0",
        ),
        (
            "notification pane unsafe",
            |v| v["notifications"][0]["pane_id"] = json!("-x"),
            &[PANE_A, PANE_B, PANE_C],
            "dropped the reference",
        ),
        (
            "active workspace gone",
            |v| v["active_workspace_id"] = json!("ws_gone"),
            &[PANE_A, PANE_B, PANE_C],
            "the active workspace",
        ),
    ];
    for &(name, mutate, panes, problem) in rows {
        let mut value = sample_json();
        mutate(&mut value);
        let outcome = load_value(&value);
        assert_eq!(pane_ids(&outcome.snapshot), panes, "{name}: {:?}", outcome.problems);
        if problem.is_empty() {
            assert!(outcome.problems.is_empty(), "{name}: {:?}", outcome.problems);
        } else {
            assert!(
                has_problem(&outcome, problem),
                "{name}: {problem:?} not in {:?}",
                outcome.problems
            );
        }
        assert!(outcome.moved_aside.is_none(), "{name}");
    }
}

#[test]
fn layouts_are_repaired_against_the_panes_that_loaded() {
    let a = || LayoutRecord::Pane(PANE_A.into());
    let b = || LayoutRecord::Pane(PANE_B.into());
    let a_beside_b = || LayoutRecord::split(SplitDirRecord::Right, 0.5, a(), b());
    let leaf = |id: &str| json!({ "pane": id });
    let split = |first: Value, second: Value| json!({ "split": { "dir": "down", "ratio": 0.3, "first": first, "second": second } });
    let rows: &[(&str, Value, LayoutRecord, &str)] = &[
        ("unknown leaf", split(leaf(PANE_A), leaf("pane_zzz")), a_beside_b(), "pane_zzz"),
        (
            "leaf of another tab",
            split(leaf(PANE_C), split(leaf(PANE_A), leaf(PANE_B))),
            LayoutRecord::split(SplitDirRecord::Down, 0.3, a(), b()),
            "pane_c",
        ),
        ("leaf twice", split(leaf(PANE_A), leaf(PANE_A)), a_beside_b(), "twice"),
        ("not a layout", json!({ "triangle": 1 }), a_beside_b(), "does not decode"),
        (
            "null ratio",
            json!({ "split": { "dir": "down", "ratio": null, "first": leaf(PANE_A), "second": leaf(PANE_B) } }),
            a_beside_b(),
            "does not decode",
        ),
        ("missing", Value::Null, a_beside_b(), "no layout"),
        (
            "ratio out of range",
            json!({ "split": { "dir": "down", "ratio": 7.0, "first": leaf(PANE_B), "second": leaf(PANE_A) } }),
            LayoutRecord::split(SplitDirRecord::Down, 0.95, b(), a()),
            "",
        ),
    ];
    for (name, layout, want, problem) in rows {
        let mut value = sample_json();
        value["workspaces"][0]["tabs"][0]["layout"] = layout.clone();
        let outcome = load_value(&value);
        assert_eq!(&tab(&outcome.snapshot, TAB_ONE).unwrap().layout, want, "{name}");
        if problem.is_empty() {
            assert!(outcome.problems.is_empty(), "{name}: {:?}", outcome.problems);
        } else {
            assert!(
                has_problem(&outcome, problem),
                "{name}: {problem:?} not in {:?}",
                outcome.problems
            );
        }
    }
}

#[test]
fn a_tab_left_without_panes_is_dropped_and_the_active_tab_moves() {
    let mut value = sample_json();
    value["workspaces"][0]["active_tab_id"] = json!(TAB_TWO);
    value["panes"][2]["size"] = json!(-1);
    let outcome = load_value(&value);
    assert!(tab(&outcome.snapshot, TAB_TWO).is_none());
    assert!(has_problem(&outcome, "tab \"tab_two\" has no pane"), "{:?}", outcome.problems);
    assert_eq!(outcome.snapshot.workspaces[0].active_tab_id.as_deref(), Some(TAB_ONE));
    assert_eq!(outcome.snapshot.workspaces[0].id, WS);
}

#[test]
fn secrets_in_an_old_file_are_dropped_on_load() {
    let mut value = sample_json();
    value["panes"][0]["env"] = json!({ "TERM": "xterm", "GITHUB_TOKEN": "ghp_x" });
    value["panes"][0]["agent"]["config_env"] =
        json!({ "CODEX_HOME": "/c", "OPENAI_API_KEY": "sk" });
    let outcome = load_value(&value);
    let pane = &outcome.snapshot.panes[0];
    assert_eq!(pane.env.keys().collect::<Vec<_>>(), ["TERM"]);
    assert_eq!(pane.agent.config_env.keys().collect::<Vec<_>>(), ["CODEX_HOME"]);
}

#[test]
fn a_flood_of_bad_entries_is_reported_in_bounded_words() {
    let mut value = sample_json();
    value["panes"] = Value::Array((0..500).map(|i| json!({ "id": format!("bad/{i}") })).collect());
    let outcome = load_value(&value);
    assert_eq!(outcome.problems.len(), MAX_REPORTED_PROBLEMS + 1);
    assert!(outcome.problems.last().unwrap().contains("more problems"));
}

#[test]
fn a_v0_snapshot_is_migrated_on_read() {
    let fixture = include_bytes!("fixtures/snapshot_v0.json");
    let dir = tempfile::tempdir().unwrap();
    write_snapshot(dir.path(), fixture);
    let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
    assert_eq!(outcome.migrated_from, Some(0));
    assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
    assert_eq!(std::fs::read(dir.path().join(SNAPSHOT_FILE)).unwrap(), fixture, "read only");
    let s = &outcome.snapshot;
    check_invariants(s);
    assert_eq!(
        (s.snapshot_version, s.server_version.as_str(), s.saved_at),
        (1, "0.0.9", 1_764_450_000_000)
    );
    assert_eq!(s.active_workspace_id.as_deref(), Some("ws_0a1b2c"));
    let ws = &s.workspaces[0];
    assert_eq!(
        (ws.name.as_str(), ws.auto_resume, ws.active_tab_id.as_deref()),
        ("berth", false, Some("tab_agents"))
    );
    let agents = &ws.tabs[0];
    assert_eq!(
        agents.size,
        SizeRecord { cols: 120, rows: 40 },
        "a tab takes its first pane's size"
    );
    assert_eq!(agents.active_pane_id.as_deref(), Some("pane_claude"));
    assert_eq!(agents.layout.pane_ids(), ["pane_claude", "pane_shell"]);
    assert_eq!(ws.tabs[1].title, None);
    assert_eq!(pane_ids(s), ["pane_claude", "pane_shell", "pane_tests"]);
    let claude = &s.panes[0];
    assert_eq!(claude.argv, ["claude", "--model", "opus 4"]);
    assert_eq!((claude.workspace_id.as_str(), claude.tab_id.as_str()), ("ws_0a1b2c", "tab_agents"));
    assert_eq!(
        (claude.state.as_str(), claude.lifecycle.as_str(), claude.attention.as_str()),
        ("LIVE", "working", "unread")
    );
    assert_eq!(
        (claude.agent.kind.as_str(), claude.agent.session_id.as_deref()),
        ("claude", Some("3f2a9c1e-session"))
    );
    assert_eq!(claude.env.keys().collect::<Vec<_>>(), ["TERM"], "the legacy leak is dropped");
    assert_eq!(claude.size, SizeRecord { cols: 120, rows: 40 });
    let shell = &s.panes[1];
    assert_eq!(
        (shell.lifecycle.as_str(), shell.attention.as_str(), shell.agent.kind.as_str()),
        ("idle", "none", "none")
    );
    let tests = &s.panes[2];
    assert_eq!((tests.state.as_str(), tests.exit_code, tests.argv.len()), ("EXITED", Some(101), 2));
    let n = &s.notifications;
    assert_eq!(
        (n[0].pane_id.as_deref(), n[0].read_at, n[1].read_at),
        (Some("pane_claude"), Some(1_764_440_000_000), None)
    );
    assert_eq!((n[1].created_at, n[1].source.as_str()), (1_764_440_001_000, "system"));
}

#[test]
fn a_damaged_v0_snapshot_keeps_what_it_can() {
    let mut v0: Value =
        serde_json::from_slice(include_bytes!("fixtures/snapshot_v0.json")).unwrap();
    v0["workspaces"][0]["tabs"][0]["panes"][1] = json!("not a pane");
    v0["workspaces"][0]["tabs"][1]["panes"] = json!(7);
    v0.as_object_mut().unwrap().remove("version");
    let outcome = load_value(&v0);
    assert_eq!(outcome.migrated_from, Some(0), "no version at all but workspaces: legacy");
    assert_eq!(pane_ids(&outcome.snapshot), ["pane_claude"]);
    assert!(
        has_problem(&outcome, "not an object") && has_problem(&outcome, "`panes` is not a list")
    );
}

/// A small deterministic generator, so the fuzz test needs no extra crate.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    /// A JSON value shaped like a snapshot, with ids and types drawn from small pools so that
    /// references collide and the repair paths run.
    fn snapshot_like(&mut self) -> Value {
        let ids = [
            json!("ws_1"),
            json!("tab_1"),
            json!("tab_2"),
            json!("pane_1"),
            json!("pane_2"),
            json!("pane_3"),
            json!("../x"),
            json!(""),
            json!(7),
            Value::Null,
        ];
        let mut root = serde_json::Map::new();
        root.insert(
            "snapshot_version".into(),
            self.pick(&[json!(0), json!(1), json!(1), json!(2), json!("1"), Value::Null]),
        );
        let workspaces = (0..self.below(3))
            .map(|_| {
                let tabs = (0..self.below(3))
                    .map(|_| json!({ "id": self.pick(&ids), "layout": self.layout(&ids, 3), "active_pane_id": self.pick(&ids) }))
                    .collect::<Vec<_>>();
                json!({ "id": self.pick(&ids), "tabs": tabs, "active_tab_id": self.pick(&ids) })
            })
            .collect::<Vec<_>>();
        root.insert("workspaces".into(), Value::Array(workspaces));
        let panes = (0..self.below(5))
            .map(|_| json!({ "id": self.pick(&ids), "tab_id": self.pick(&ids), "workspace_id": self.pick(&ids),
                             "state": self.pick(&[json!("LIVE"), json!("x"), json!(1)]) }))
            .collect::<Vec<_>>();
        root.insert("panes".into(), Value::Array(panes));
        root.insert("active_workspace_id".into(), self.pick(&ids));
        Value::Object(root)
    }

    fn layout(&mut self, ids: &[Value], depth: usize) -> Value {
        if depth == 0 || self.below(2) == 0 {
            return json!({ "pane": self.pick(ids) });
        }
        let dir = self.pick(&[json!("right"), json!("down"), json!("up")]);
        let ratio = self.pick(&[json!(0.5), json!(-3), json!(1e300), Value::Null]);
        json!({ "split": { "dir": dir, "ratio": ratio, "first": self.layout(ids, depth - 1), "second": self.layout(ids, depth - 1) } })
    }
}

/// Parses `bytes` as a snapshot file: never a panic, and a successful parse keeps the loader's
/// promises.
pub(super) fn parse_never_panics(bytes: &[u8]) {
    let mut problems = Vec::new();
    if let Parsed::Loaded { snapshot, .. } = parse(bytes, &mut problems) {
        check_invariants(&snapshot);
    }
}

#[test]
fn arbitrary_bytes_never_panic_the_loader() {
    let valid = encode(&sample_snapshot()).unwrap();
    let v0 = include_bytes!("fixtures/snapshot_v0.json");
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let bytes = match rng.below(5) {
            0 => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
            1 => {
                let mut bytes = if rng.below(2) == 0 { valid.clone() } else { v0.to_vec() };
                for _ in 0..=rng.below(4) {
                    let at = rng.below(bytes.len());
                    bytes[at] = rng.next() as u8;
                }
                bytes
            }
            2 => valid[..rng.below(valid.len())].to_vec(),
            _ => serde_json::to_vec(&rng.snapshot_like()).unwrap(),
        };
        parse_never_panics(&bytes);
    }
}

/// The partial copies in `dir`.
fn partial_copies(dir: &Path) -> Vec<String> {
    entries(dir).into_iter().filter(|n| n.starts_with("snapshot.json.partial-")).collect()
}

/// Regression: a snapshot whose load skipped entries (`"workspaces":"x"`, a pane with a bad
/// id, `"size":"big"`) was replaced by the next save, and the skipped panes existed nowhere.
/// Now the original is kept byte for byte as `snapshot.json.partial-<time>`, and the outcome
/// says what the file held.
#[test]
fn a_load_that_skips_anything_keeps_the_original_as_a_partial_copy() {
    /// What the file holds, how it is spoilt, the panes that load, the panes it held.
    type Row = (&'static str, fn(&mut Value), usize, usize);
    let rows: &[Row] = &[
        ("workspaces is not a list", |v| v["workspaces"] = json!("x"), 0, 3),
        ("a pane with a bad id", |v| v["panes"][1]["id"] = json!("../etc/passwd"), 2, 3),
        ("a pane with a size that is a word", |v| v["panes"][0]["size"] = json!("big"), 2, 3),
        (
            "a pane with a huge size",
            |v| v["panes"][0]["size"] = json!({"cols":65535,"rows":65535}),
            3,
            3,
        ),
        (
            "a tab with a huge size",
            |v| v["workspaces"][0]["tabs"][0]["size"] = json!({"cols":9000,"rows":9000}),
            3,
            3,
        ),
        ("a title with C1 controls", |v| v["panes"][0]["title"] = json!("a\u{9b}31mb\u{7f}"), 3, 3),
    ];
    for &(what, mutate, loaded, held) in rows {
        let dir = tempfile::tempdir().unwrap();
        let mut value = sample_json();
        mutate(&mut value);
        let original = serde_json::to_vec(&value).unwrap();
        write_snapshot(dir.path(), &original);
        let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
        check_invariants(&outcome.snapshot);
        assert_eq!(outcome.snapshot.panes.len(), loaded, "{what}");
        assert_eq!(outcome.held.panes, held, "{what}: the file held {held} panes");
        assert_eq!(outcome.held.live, 2, "{what}: two of them were not EXITED");
        let copies = partial_copies(dir.path());
        assert_eq!(copies, ["snapshot.json.partial-20261129T231500Z"], "{what}");
        assert_eq!(std::fs::read(dir.path().join(&copies[0])).unwrap(), original, "{what}");
        assert_eq!(outcome.kept_partial, Some(dir.path().join(&copies[0])), "{what}");
        assert!(has_problem(&outcome, "is kept as"), "{what}: {:?}", outcome.problems);
        assert_eq!(
            std::fs::read(dir.path().join(SNAPSHOT_FILE)).unwrap(),
            original,
            "{what}: snapshot.json itself is left as it is"
        );
        // A second load of the same file keeps a second copy rather than replacing the first.
        load_at(&RealFs, dir.path(), NOW).unwrap();
        assert_eq!(partial_copies(dir.path()).len(), 2, "{what}");
    }
    // A clean load keeps no copy.
    let dir = tempfile::tempdir().unwrap();
    write_snapshot(dir.path(), &serde_json::to_vec(&sample_json()).unwrap());
    let outcome = load_at(&RealFs, dir.path(), NOW).unwrap();
    assert!(outcome.is_clean() && outcome.kept_partial.is_none(), "{:?}", outcome.problems);
    assert!(partial_copies(dir.path()).is_empty());
}

/// Regression: sizes and titles in a snapshot were trusted: 65535×65535 allocated on restore,
/// and a 60 MiB title with C1 controls loaded as it was.
#[test]
fn sizes_beyond_the_limits_and_dirty_titles_are_repaired_on_load() {
    let mut value = sample_json();
    value["panes"][0]["size"] = json!({ "cols": 65535, "rows": 65535 });
    value["panes"][1]["size"] = json!({ "cols": 0, "rows": 10 });
    value["workspaces"][0]["tabs"][0]["size"] = json!({ "cols": 4000, "rows": 2000 });
    value["panes"][0]["title"] = json!(format!("evil\u{9b}2J\u{7f}{}", "x".repeat(1 << 20)));
    value["workspaces"][0]["tabs"][0]["title"] = json!("tab\u{85}\u{1b}]0;x\u{7}");
    let outcome = load_value(&value);
    let a = &outcome.snapshot.panes[0];
    assert_eq!(a.size, SizeRecord::default());
    assert_eq!(outcome.snapshot.panes[1].size, SizeRecord::default());
    assert_eq!(tab(&outcome.snapshot, TAB_ONE).unwrap().size, SizeRecord::default());
    assert!(has_problem(&outcome, "at most 4000 cols, 2000 rows and 2000000 cells"));
    assert!(a.title.starts_with("evil2J"), "{:?}", &a.title[..20]);
    assert!(a.title.chars().count() <= berth_engine::notify::MAX_TITLE_CHARS);
    assert!(!a.title.chars().any(char::is_control));
    let t = tab(&outcome.snapshot, TAB_ONE).unwrap().title.clone().unwrap();
    assert!(!t.chars().any(char::is_control), "{t:?}");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// Fields of a pane record and values of the wrong kinds, so decoding meets every shape.
    fn field_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            Just(json!("x")),
            Just(json!(-1)),
            Just(json!(65535)),
            Just(json!({ "cols": 65535, "rows": 65535 })),
            Just(json!({ "cols": 0, "rows": 0 })),
            Just(json!([])),
            Just(json!({})),
            Just(json!("a\u{9b}b\u{7f}\u{202e}c")),
            any::<i64>().prop_map(Value::from),
            ".{0,20}".prop_map(Value::from),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

        /// A valid snapshot with any field of any entry replaced by a hostile value: the
        /// loader never panics, keeps its promises, and sizes and titles come out clean.
        #[test]
        fn hostile_fields_never_panic_the_loader(
            edits in prop::collection::vec(
                (0usize..4, 0usize..3, prop::sample::select(&["id", "tab_id", "workspace_id",
                    "size", "title", "state", "argv", "agent", "layout", "tabs", "name",
                    "active_pane_id", "env", "was_running"][..]), field_value()),
                0..8),
            root_edit in prop::option::of((prop::sample::select(&["workspaces", "panes",
                "notifications", "snapshot_version", "active_workspace_id"][..]), field_value())),
        ) {
            let mut value = sample_json();
            for (kind, index, field, new) in edits {
                let target = match kind {
                    0 => value["panes"].get_mut(index),
                    1 => value["workspaces"][0]["tabs"].get_mut(index),
                    2 => value["workspaces"].get_mut(index),
                    _ => value["notifications"].get_mut(index),
                };
                if let Some(Value::Object(entry)) = target {
                    entry.insert(field.to_owned(), new);
                }
            }
            if let Some((key, new)) = root_edit {
                value[key] = new;
            }
            let bytes = serde_json::to_vec(&value).unwrap();
            parse_never_panics(&bytes);
            let mut problems = Vec::new();
            if let Parsed::Loaded { snapshot, .. } = parse(&bytes, &mut problems) {
                for pane in &snapshot.panes {
                    prop_assert!(berth_engine::limits::check_size(pane.size.cols.into(), pane.size.rows.into()).is_ok());
                    prop_assert!(!pane.title.chars().any(char::is_control));
                }
            }
        }

        /// Arbitrary bytes, and a valid file with bytes flipped.
        #[test]
        fn arbitrary_bytes_never_panic_the_loader_proptest(
            noise in prop::collection::vec(any::<u8>(), 0..200),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        ) {
            parse_never_panics(&noise);
            let mut valid = encode(&sample_snapshot()).unwrap();
            for (at, byte) in flips {
                let i = at.index(valid.len());
                valid[i] = byte;
            }
            parse_never_panics(&valid);
        }
    }
}

/// Tasks load: an old snapshot has none; a task with a bad id or an unknown state is skipped
/// (and reported), the others kept.
#[test]
fn tasks_load_and_bad_ones_are_skipped() {
    use crate::persist::task_record::TaskRecord;
    let good = TaskRecord {
        id: "task_0123abcd".into(),
        state: "working".into(),
        branch: "berth/x".into(),
        ..TaskRecord::default()
    };
    let mut value = sample_json();
    value["tasks"] = serde_json::to_value(vec![
        good.clone(),
        TaskRecord { id: "../x".into(), ..good.clone() },
        TaskRecord { id: "task_2".into(), state: "sleeping".into(), ..good.clone() },
    ])
    .unwrap();
    let loaded = load_value(&value);
    assert_eq!(loaded.snapshot.tasks, vec![good]);
    assert!(
        has_problem(&loaded, "task 1") || has_problem(&loaded, "task"),
        "{:?}",
        loaded.problems
    );
    assert!(has_problem(&loaded, "unknown state \"sleeping\""), "{:?}", loaded.problems);
    // A snapshot from before tasks.
    value.as_object_mut().unwrap().remove("tasks");
    assert!(load_value(&value).snapshot.tasks.is_empty());
}
