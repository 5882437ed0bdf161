//! The codec both ways: every `Command` survives `encode_method` → JSON text →
//! `decode_request` → `decode_method` (a property test), every method name has a table case,
//! and every reply and event survives its encoder and decoder.

use std::path::PathBuf;

use berth_engine::agents::AgentKind;
use berth_engine::ids::{DecisionId, NotificationId, PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellSize, FocusDir, Layout, Side, SplitDir};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::agents::turns::{LifecycleSource, TurnInfo, TurnRecord};
use crate::agents::work::WaitUntil;
use crate::commands::Reply;
use crate::event::Event;
use crate::view::{
    AgentView, DecisionAnswer, DecisionOption, NotificationView, PaneInfo, PendingDecision,
    Progress, ReadView, ResumePlan, ResumeSource, ServerInfo, StateView, TabInfo, WorkspaceView,
};

/// Through the bytes a client writes and the server reads.
fn through_the_wire(what: &Decoded) -> Decoded {
    let line = encode_request(7, what).expect("encodes");
    assert!(line.ends_with('\n') && line.matches('\n').count() == 1, "one line: {line:?}");
    let request = decode_request(line.trim_end().as_bytes()).expect("a request");
    assert_eq!(request.id, Some(json!(7)));
    decode_method(&request.method, request.params).expect("decodes")
}

fn pane() -> impl Strategy<Value = PaneId> {
    any::<u8>().prop_map(|_| PaneId::new())
}

fn tab() -> impl Strategy<Value = TabId> {
    any::<u8>().prop_map(|_| TabId::new())
}

fn workspace() -> impl Strategy<Value = WorkspaceId> {
    any::<u8>().prop_map(|_| WorkspaceId::new())
}

fn text() -> impl Strategy<Value = String> {
    // Any Unicode, control characters and quotes included.
    "\\PC{0,12}|[\"\\\\\n\t\u{7f}\u{9b}]{0,4}"
}

fn path() -> impl Strategy<Value = PathBuf> {
    "/[a-z ./]{0,16}".prop_map(PathBuf::from)
}

fn size() -> impl Strategy<Value = CellSize> {
    (1u16..=1000, 1u16..=500).prop_map(|(cols, rows)| CellSize { cols, rows })
}

/// What `tab.create` and friends carry. The wire's `env` is an object, so keys are unique and
/// come back sorted.
fn spawn(with_title: bool) -> impl Strategy<Value = SpawnRequest> {
    (
        prop::collection::vec(text(), 0..4),
        prop::option::of(path()),
        prop::collection::btree_map("[A-Z_]{1,8}", text(), 0..3),
        prop::option::of(text()),
    )
        .prop_map(move |(argv, cwd, env, title)| SpawnRequest {
            argv,
            cwd,
            env: env.into_iter().collect(),
            title: if with_title { title } else { None },
        })
}

fn selector() -> impl Strategy<Value = WorkspaceSelector> {
    prop_oneof![
        workspace().prop_map(WorkspaceSelector::Id),
        text().prop_map(WorkspaceSelector::Name),
        Just(WorkspaceSelector::Active),
    ]
}

fn layout() -> impl Strategy<Value = Layout> {
    let leaf = pane().prop_map(Layout::Pane);
    leaf.prop_recursive(4, 16, 2, |inner| {
        (any::<bool>(), 1u8..64, inner.clone(), inner).prop_map(|(right, k, first, second)| {
            Layout::Split {
                dir: if right { SplitDir::Right } else { SplitDir::Down },
                // Multiples of 1/64: exact in binary and in short decimals.
                ratio: f64::from(k) / 64.0,
                first: Box::new(first),
                second: Box::new(second),
            }
        })
    })
}

fn agent() -> impl Strategy<Value = AgentKind> {
    prop::sample::select(vec![
        AgentKind::Claude,
        AgentKind::Codex,
        AgentKind::Opencode,
        AgentKind::Cursor,
        AgentKind::Generic,
    ])
}

fn command() -> impl Strategy<Value = Command> {
    let some = prop_oneof![
        Just(Command::ServerInfo),
        Just(Command::WorkspaceList),
        (prop::option::of(text()), prop::option::of(path()))
            .prop_map(|(name, cwd)| Command::WorkspaceCreate { name, cwd }),
        (workspace(), text())
            .prop_map(|(workspace, name)| Command::WorkspaceRename { workspace, name }),
        workspace().prop_map(|workspace| Command::WorkspaceClose { workspace }),
        (selector(), prop::option::of(text()), spawn(false))
            .prop_map(|(workspace, title, spawn)| Command::TabCreate { workspace, title, spawn }),
        tab().prop_map(|tab| Command::TabClose { tab }),
        (tab(), text()).prop_map(|(tab, title)| Command::TabRename { tab, title }),
        (tab(), 0usize..100).prop_map(|(tab, index)| Command::TabMove { tab, index }),
        (tab(), prop::collection::vec(any::<bool>(), 0..5), -64i32..128).prop_map(
            |(tab, path, k)| Command::TabSetRatio {
                tab,
                path: path
                    .into_iter()
                    .map(|f| if f { Side::First } else { Side::Second })
                    .collect(),
                ratio: f64::from(k) / 64.0,
            }
        ),
        (tab(), layout()).prop_map(|(tab, layout)| Command::TabSetLayout { tab, layout }),
        (tab(), size()).prop_map(|(tab, size)| Command::TabResize { tab, size }),
    ];
    let more = prop_oneof![
        (selector(), spawn(true))
            .prop_map(|(workspace, spawn)| Command::PaneSpawn { workspace, spawn }),
        (pane(), any::<bool>(), spawn(true)).prop_map(|(pane, right, spawn)| Command::PaneSplit {
            pane,
            dir: if right { SplitDir::Right } else { SplitDir::Down },
            spawn,
        }),
        pane().prop_map(|pane| Command::PaneClose { pane }),
        (pane(), prop::option::of(text()), prop::collection::vec("[A-Za-z-]{1,6}", 0..3))
            .prop_filter("text or keys", |(_, text, keys)| text.is_some() || !keys.is_empty())
            .prop_map(|(pane, text, keys)| Command::PaneSend { pane, text, keys }),
        (pane(), prop::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(pane, data)| Command::PaneInput { pane, data }),
        (pane(), prop::option::of(any::<u64>()), prop::option::of(0usize..100_000), any::<bool>())
            .prop_filter("since or last", |(_, since, last, _)| since.is_none() || last.is_none())
            .prop_map(|(pane, since, last, ansi)| Command::PaneRead {
                pane,
                spec: ReadSpec { since, last, ansi },
            }),
        (pane(), size()).prop_map(|(pane, size)| Command::PaneResize { pane, size }),
        pane().prop_map(|pane| Command::PaneFocus { pane }),
        (pane(), 0u8..4).prop_map(|(pane, d)| Command::PaneFocusDirection {
            pane,
            dir: [FocusDir::Left, FocusDir::Right, FocusDir::Up, FocusDir::Down][usize::from(d)],
        }),
        pane().prop_map(|pane| Command::PaneResume { pane }),
        pane().prop_map(|pane| Command::PaneClearAttention { pane }),
    ];
    let agents = prop_oneof![
        (
            pane(),
            agent(),
            "[A-Za-z0-9][A-Za-z0-9._:-]{0,40}",
            prop::option::of(prop::collection::vec(text(), 1..4)),
            prop::option::of("[a-z0-9. -]{0,20}"),
            any::<bool>(),
        )
            .prop_map(|(pane, kind, session_id, resume_argv, model, explicit_pane)| {
                Command::SessionReport { pane, kind, session_id, resume_argv, model, explicit_pane }
            }),
        (workspace(), any::<bool>()).prop_map(|(workspace, enabled)| {
            Command::WorkspaceSetAutoResume { workspace, enabled }
        }),
        (workspace(), any::<bool>()).prop_map(|(workspace, enabled)| {
            Command::WorkspaceSetAgentDrive { workspace, enabled }
        }),
        (
            prop::option::of(pane()),
            text(),
            text(),
            prop::sample::select(vec!["cli", "system", "hook:claude", "hook:codex"]),
        )
            .prop_map(|(pane, title, body, source)| Command::Notify {
                pane,
                title,
                body,
                source: source.to_owned(),
            }),
        any::<bool>().prop_map(|unread_only| Command::NotificationsList { unread_only }),
        (prop::collection::vec(any::<u8>(), 0..3), prop::option::of(pane())).prop_map(
            |(ids, pane)| Command::NotificationsMarkRead {
                ids: ids.iter().map(|_| NotificationId::new()).collect(),
                pane,
            }
        ),
        (pane(), agent(), text(), any::<i32>()).prop_map(|(pane, kind, event, n)| {
            Command::HookEvent {
                pane,
                kind,
                payload: json!({ "hook_event_name": event, "n": n, "nested": [1, null, "x"] }),
            }
        }),
    ];
    let decisions = prop_oneof![
        (
            pane(),
            prop::sample::select(DecisionAnswer::ALL.to_vec()),
            prop::option::of(text()),
            any::<bool>()
        )
            .prop_map(|(pane, answer, message, named)| Command::Decide {
                pane,
                answer,
                message,
                id: named.then(DecisionId::new),
            }),
        Just(Command::Decisions),
    ];
    prop_oneof![some, more, agents, decisions]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_command_survives_the_wire(cmd in command()) {
        let what = Decoded::Command(cmd);
        prop_assert_eq!(through_the_wire(&what), what);
    }
}

#[test]
fn connection_methods_survive_the_wire() {
    for what in [
        ConnectionMethod::Subscribe,
        ConnectionMethod::SaveSnapshot,
        ConnectionMethod::Screenshot { tab: None, path: "/tmp/x.png".into() },
        ConnectionMethod::Screenshot { tab: Some(TabId::new().to_string()), path: "/a b".into() },
        ConnectionMethod::ScreenFrames(vec![]),
        ConnectionMethod::WindowServers(crate::ui::ServersOp::List),
        ConnectionMethod::WindowServers(crate::ui::ServersOp::Add("/tmp/b.sock".into())),
        ConnectionMethod::WindowServers(crate::ui::ServersOp::Remove("devbox".into())),
        ConnectionMethod::PaneSearch(Box::new(crate::pane_search::SearchRequest {
            pane_id: PaneId::new().to_string(),
            query: "needle".into(),
            jump: None,
            offset: 0,
            covered: 0,
            count: false,
            all: true,
        })),
        ConnectionMethod::ScreenFrames(vec![
            crate::screen::PaneHave {
                pane_id: PaneId::new().to_string(),
                cols: 0,
                rows: vec![],
                offset: 0,
                search: None,
            },
            crate::screen::PaneHave {
                pane_id: PaneId::new().to_string(),
                cols: 80,
                rows: vec![0, u64::MAX, 42],
                offset: 17,
                search: Some("err(or)?".into()),
            },
        ]),
        ConnectionMethod::WindowAttach { header_rows: 1 },
        ConnectionMethod::WindowView { visible: vec![], focused_pane: None, window_focused: false },
        ConnectionMethod::WindowView {
            visible: vec![PaneId::new(), PaneId::new()],
            focused_pane: Some(PaneId::new()),
            window_focused: true,
        },
        ConnectionMethod::DecisionRequest {
            pane: PaneId::new(),
            kind: AgentKind::Cursor,
            payload: json!({ "hook_event_name": "beforeShellExecution", "command": "ls" }),
            wait_ms: 30_000,
        },
        ConnectionMethod::Wait { pane: PaneId::new(), until: WaitUntil::Exited, timeout_ms: None },
        ConnectionMethod::NotificationActivate {
            id: berth_engine::ids::NotificationId::new(),
            activation_token: None,
        },
        ConnectionMethod::NotificationActivate {
            id: berth_engine::ids::NotificationId::new(),
            activation_token: Some("x11-token".into()),
        },
    ] {
        let what = Decoded::Connection(what);
        assert_eq!(through_the_wire(&what), what);
    }
}

fn until() -> impl Strategy<Value = WaitUntil> {
    prop::sample::select(WaitUntil::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any prompt (escapes, line ends, any scalar value) and any wait survive the wire.
    #[test]
    fn submits_and_waits_survive_the_wire(
        pane in pane(),
        text in "(?s).{1,200}",
        force in any::<bool>(),
        until in until(),
        timeout_ms in proptest::option::of(any::<u64>()),
    ) {
        let submit = Decoded::Connection(ConnectionMethod::Submit { pane: pane.clone(), text, force });
        prop_assert_eq!(through_the_wire(&submit), submit);
        let wait = Decoded::Connection(ConnectionMethod::Wait { pane, until, timeout_ms });
        prop_assert_eq!(through_the_wire(&wait), wait);
    }
}

#[test]
fn submit_and_wait_params_are_checked() {
    let p = PaneId::new();
    let long = "x".repeat(berth_engine::agents::submit::MAX_PROMPT_BYTES + 1);
    let cases = [
        ("pane.submit", json!({ "pane_id": p.as_str(), "text": "" }), "BAD_REQUEST"),
        ("pane.submit", json!({ "pane_id": p.as_str(), "text": long }), "BAD_REQUEST"),
        ("pane.submit", json!({ "pane_id": p.as_str() }), "BAD_REQUEST"),
        ("pane.submit", json!({ "pane_id": "../x", "text": "hi" }), "INVALID_ID"),
        ("pane.submit", json!({ "pane_id": p.as_str(), "text": "hi", "x": 1 }), "BAD_REQUEST"),
        ("pane.wait", json!({ "pane_id": p.as_str(), "until": "asleep" }), "BAD_REQUEST"),
        (
            "pane.wait",
            json!({ "pane_id": p.as_str(), "until": "idle", "timeout_ms": -1 }),
            "BAD_REQUEST",
        ),
        ("pane.wait", json!({ "pane_id": p.as_str() }), "BAD_REQUEST"),
    ];
    for (method, params, code) in cases {
        let err = decode_method(method, params.clone()).expect_err("refused");
        assert_eq!(err.code(), code, "{method} {params}: {err}");
    }
    let long =
        decode_method("pane.submit", json!({ "pane_id": p.as_str(), "text": "x".repeat(40_000) }));
    assert!(long.unwrap_err().to_string().contains("32 KiB"));
}

#[test]
fn submit_and_wait_answers_survive_the_wire() {
    let submit = SubmitReply {
        pane_id: PaneId::new().to_string(),
        bytes: 32768,
        bracketed: true,
        enter_delay_ms: 200,
        awaited_ack: true,
        confirmed: false,
        enter_retried: true,
        joined: Some("left over C-AFTER".into()),
    };
    let text = serde_json::to_string(&submit).unwrap();
    assert_eq!(serde_json::from_str::<SubmitReply>(&text).unwrap(), submit);
    let outcome = crate::agents::work::WaitOutcome {
        pane: PaneId::new(),
        reached: true,
        lifecycle: Lifecycle::Done,
        turn: TurnInfo {
            learned_from: Some(LifecycleSource::Hook),
            running_since: None,
            last: Some(TurnRecord {
                started_at: Some(1000),
                ended_at: 4500,
                ended_as: Lifecycle::Done,
                learned_from: LifecycleSource::Hook,
                last_message: Some("All tests pass".into()),
            }),
            hooks_wired: true,
        },
        exit_code: None,
    };
    let wait = WaitReply::from(&outcome);
    assert_eq!(wait.learned_from, "hook");
    assert_eq!(wait.turn_ms, Some(3500));
    assert_eq!(wait.last_message.as_deref(), Some("All tests pass"));
    let value = serde_json::to_value(&wait).unwrap();
    assert_eq!(
        value,
        json!({
            "pane_id": outcome.pane.as_str(), "reached": true, "lifecycle": "done",
            "learned_from": "hook", "last_message": "All tests pass", "turn_ms": 3500,
            "exit_code": null,
        })
    );
    assert_eq!(serde_json::from_value::<WaitReply>(value).unwrap(), wait);
}

/// Bad task input is refused where it is decoded, before anything is made.
#[test]
fn task_params_are_checked() {
    let start = |objective: String, agent: &str, repo: &str| json!({ "repo": repo, "agent": agent, "contract": { "objective": objective } });
    let cases = [
        ("task.start", start(String::new(), "claude", "/r"), "BAD_REQUEST"),
        ("task.start", start("x".repeat(33 * 1024), "claude", "/r"), "BAD_REQUEST"),
        ("task.start", start("x".into(), "emacs", "/r"), "BAD_REQUEST"),
        ("task.start", start("x".into(), "claude", "rel/dir"), "BAD_REQUEST"),
        ("task.start", start("x".into(), "generic", "/r"), "BAD_REQUEST"),
        ("task.report", json!({ "status": "done", "summary": "x" }), "BAD_REQUEST"),
        ("task.report", json!({ "status": "completed", "summary": "" }), "BAD_REQUEST"),
        ("task.finish", json!({ "task_id": "task_1" }), "BAD_REQUEST"),
        (
            "task.finish",
            json!({ "task_id": "task_1", "merge": true, "discard": true }),
            "BAD_REQUEST",
        ),
        ("task.finish", json!({ "task_id": "pane_1", "merge": true }), "INVALID_ID"),
        ("task.show", json!({ "task_id": "../x" }), "INVALID_ID"),
        ("task.wait", json!({ "task_id": "task_1", "until": "done" }), "BAD_REQUEST"),
        ("task.revert_turn", json!({ "task_id": "task_1", "turn": 0 }), "BAD_REQUEST"),
        (
            "task.finish",
            json!({ "task_id": "task_1", "merge": true, "squash": true, "rebase": true }),
            "BAD_REQUEST",
        ),
        (
            "task.comment",
            json!({ "task_id": "task_1", "path": "../a", "start": 1, "text": "x" }),
            "BAD_REQUEST",
        ),
        (
            "task.comment",
            json!({ "task_id": "task_1", "path": "a", "start": 1, "text": "x\u{1b}[2J" }),
            "BAD_REQUEST",
        ),
        ("task.list", json!({ "repo": "/r", "x": 1 }), "BAD_REQUEST"),
        ("diff.file", json!({ "target": "ws_1", "path": "" }), "BAD_REQUEST"),
        ("diff.file", json!({ "target": "ws_1", "path": "a", "limit": 0 }), "BAD_REQUEST"),
        ("worktree.list", json!({ "repo": "rel" }), "BAD_REQUEST"),
    ];
    for (method, params, code) in cases {
        let err = decode_method(method, params.clone()).expect_err("refused");
        assert_eq!(err.code(), code, "{method} {params}: {err}");
    }
}

#[test]
fn a_path_that_is_not_utf8_is_refused_before_sending() {
    use std::os::unix::ffi::OsStrExt;
    let cwd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
    let what = Decoded::Command(Command::WorkspaceCreate { name: None, cwd: Some(cwd) });
    assert_eq!(encode_request(1, &what).unwrap_err().code(), "BAD_REQUEST");
}

/// One case per method name: the name decodes to the variant that encodes back to it.
#[test]
fn every_method_name_has_one_variant_both_ways() {
    let task = berth_engine::ids::TaskId::new();
    let p = PaneId::new();
    let t = TabId::new();
    let w = WorkspaceId::new();
    let cases = [
        ("server.info", json!({})),
        ("workspace.list", json!({})),
        ("workspace.create", json!({ "name": "api" })),
        ("workspace.rename", json!({ "workspace_id": w.as_str(), "name": "x" })),
        ("workspace.close", json!({ "workspace_id": w.as_str() })),
        ("workspace.set_auto_resume", json!({ "workspace_id": w.as_str(), "enabled": true })),
        ("workspace.set_agent_drive", json!({ "workspace_id": w.as_str(), "enabled": true })),
        ("tab.create", json!({ "argv": ["bash"] })),
        ("tab.close", json!({ "tab_id": t.as_str() })),
        ("tab.rename", json!({ "tab_id": t.as_str(), "title": "x" })),
        ("tab.move", json!({ "tab_id": t.as_str(), "index": 2 })),
        ("tab.set_ratio", json!({ "tab_id": t.as_str(), "path": [], "ratio": 0.5 })),
        ("tab.set_layout", json!({ "tab_id": t.as_str(), "layout": { "pane": p.as_str() } })),
        ("tab.resize", json!({ "tab_id": t.as_str(), "cols": 80, "rows": 24 })),
        ("pane.spawn", json!({ "argv": ["htop"], "title": "top" })),
        ("pane.split", json!({ "pane_id": p.as_str(), "dir": "down" })),
        ("pane.close", json!({ "pane_id": p.as_str() })),
        ("pane.send", json!({ "pane_id": p.as_str(), "text": "ls" })),
        ("pane.input", json!({ "pane_id": p.as_str(), "data": [27, 91, 77, 32, 200, 33] })),
        ("pane.read", json!({ "pane_id": p.as_str(), "last": 10 })),
        ("pane.resize", json!({ "pane_id": p.as_str(), "cols": 80, "rows": 24 })),
        ("pane.focus", json!({ "pane_id": p.as_str() })),
        ("pane.resume", json!({ "pane_id": p.as_str() })),
        ("pane.clear_attention", json!({ "pane_id": p.as_str() })),
        ("pane.submit", json!({ "pane_id": p.as_str(), "text": "hi\nthere", "force": true })),
        ("pane.wait", json!({ "pane_id": p.as_str(), "until": "idle", "timeout_ms": 5000 })),
        (
            "session.report",
            json!({ "pane_id": p.as_str(), "agent": "claude", "session_id": "abc-1" }),
        ),
        ("notify", json!({ "title": "done" })),
        ("notifications.list", json!({})),
        ("notifications.mark_read", json!({})),
        ("hook.event", json!({ "pane_id": p.as_str(), "agent": "codex", "payload": {} })),
        ("pane.decide", json!({ "pane_id": p.as_str(), "answer": "deny", "message": "no" })),
        ("decision.list", json!({})),
        (
            "decision.request",
            json!({ "pane_id": p.as_str(), "agent": "claude", "payload": {}, "wait_ms": 1000 }),
        ),
        ("events.subscribe", json!({})),
        ("snapshot.save", json!({})),
        ("window.screenshot", json!({ "path": "/tmp/s.png" })),
        (
            "task.start",
            json!({
                "repo": "/tmp/r", "agent": "claude", "command": ["python3", "stub.py"],
                "contract": { "objective": "Add a file", "constraints": ["no deps"] },
                "base": "main", "label": "x", "request_id": "k1", "silence_s": 5,
            }),
        ),
        ("task.report", json!({ "status": "completed", "summary": "done" })),
        ("task.finish", json!({ "task_id": task.as_str(), "merge": true, "squash": true })),
        ("task.list", json!({ "repo": "/tmp/r" })),
        ("task.show", json!({ "task_id": task.as_str() })),
        ("task.cancel", json!({ "task_id": task.as_str() })),
        ("task.wait", json!({ "task_id": task.as_str(), "until": "input_required" })),
        ("task.revert_turn", json!({ "task_id": task.as_str(), "turn": 2 })),
        (
            "task.comment",
            json!({ "task_id": task.as_str(), "path": "a.rs", "start": 3, "end": 5, "text": "x" }),
        ),
        ("task.send_comments", json!({ "task_id": task.as_str() })),
        ("diff.files", json!({ "target": task.as_str(), "turn": 1 })),
        ("diff.file", json!({ "target": "ws_1", "path": "a.rs", "offset": 2, "limit": 10 })),
        ("workspace.refresh_git", json!({})),
        ("worktree.list", json!({ "repo": "/tmp/r" })),
        ("screen.frames", json!({ "panes": [{ "pane_id": p.as_str() }] })),
        (
            "pane.search",
            json!({
                "pane_id": p.as_str(), "query": "err(or)?", "offset": 3, "covered": 1,
                "count": true, "jump": { "from": { "seq": 9, "col": 2 }, "direction": "newer",
                "past": true },
            }),
        ),
        ("window.attach", json!({ "header_rows": 1 })),
        ("window.servers", json!({ "add": "ssh://devbox" })),
        ("window.review", json!({ "task_id": task.as_str() })),
        (
            "window.view",
            json!({ "visible": [p.as_str()], "focused_pane_id": p.as_str(), "window_focused": true }),
        ),
        ("notification.activate", json!({ "notification_id": NotificationId::new().as_str() })),
    ];
    let names: Vec<&str> = cases.iter().map(|(m, _)| *m).collect();
    assert_eq!(names, METHODS, "one case per method, in the table's order");
    for (method, params) in cases {
        let decoded = decode_method(method, params).unwrap_or_else(|e| panic!("{method}: {e}"));
        let (again, _) = encode_method(&decoded).expect("encodes");
        assert_eq!(again, method);
        assert_eq!(through_the_wire(&decoded), decoded, "{method}");
    }
    // Directions of pane.focus are the one method with two variants.
    let decoded = decode_method("pane.focus", json!({ "pane_id": p.as_str(), "direction": "up" }))
        .expect("decodes");
    assert!(matches!(decoded, Decoded::Command(Command::PaneFocusDirection { .. })));
    assert_eq!(encode_method(&decoded).expect("encodes").0, "pane.focus");
}

fn sample_state() -> StateView {
    let (a, b) = (PaneId::new(), PaneId::new());
    let layout = Layout::Split {
        dir: SplitDir::Right,
        ratio: 0.25,
        first: Box::new(Layout::Pane(a.clone())),
        second: Box::new(Layout::Pane(b.clone())),
    };
    let pane = |id: &PaneId, state, progress| PaneInfo {
        id: id.clone(),
        title: "claude ✳ work".into(),
        cwd: "/home/u/api".into(),
        argv: vec!["claude".into(), "--resume".into(), "x".into()],
        state,
        lifecycle: Lifecycle::Working,
        attention: Attention::NeedsInput,
        agent: AgentView {
            kind: AgentKind::Claude,
            session_id: Some("s-1".into()),
            resume_argv: Some(vec!["claude".into(), "--resume".into(), "s-1".into()]),
        },
        exit_code: Some(3),
        exit_signal: Some("SIGTERM".into()),
        job: Some("yes".into()),
        size: CellSize { cols: 40, rows: 20 },
        was_running: Some("cargo test".into()),
        pid: Some(42),
        created_at: 1_700_000_000_000,
        progress,
        lifecycle_since: Some(1_700_000_001_000),
        resume: (state != RestoreState::Live).then(|| ResumePlan {
            argv: vec!["/bin/sh".into(), "-c".into(), "it's".into()],
            source: ResumeSource::Reported,
        }),
        pending_decision: (state == RestoreState::Live).then(sample_decision),
        turn: TurnInfo {
            learned_from: Some(LifecycleSource::Osc133),
            running_since: Some(1_700_000_002_000),
            last: Some(TurnRecord {
                started_at: (state == RestoreState::Live).then_some(1_700_000_000_500),
                ended_at: 1_700_000_001_000,
                ended_as: Lifecycle::Done,
                learned_from: LifecycleSource::Interrupt,
                last_message: Some("line 1\nline 2 ✓".into()),
            }),
            hooks_wired: state == RestoreState::Live,
        },
        git: (state == RestoreState::Live).then(sample_git),
    };
    let tab = TabInfo {
        id: TabId::new(),
        title: "t".into(),
        active_pane: b.clone(),
        layout,
        size: CellSize { cols: 81, rows: 20 },
        panes: vec![
            pane(&a, RestoreState::Resumable, None),
            pane(&b, RestoreState::Live, Progress::from_conemu(3, None)),
        ],
    };
    let ws = WorkspaceView {
        id: WorkspaceId::new(),
        name: "api".into(),
        cwd: "/home/u/api".into(),
        auto_resume: true,
        agent_drive: true,
        active_tab: Some(tab.id.clone()),
        tabs: vec![tab],
        git: Some(crate::gitctx::GitContext { worktree: true, ..sample_git() }),
    };
    StateView { active_workspace: Some(ws.id.clone()), workspaces: vec![ws] }
}

fn sample_decision() -> PendingDecision {
    PendingDecision {
        id: DecisionId::new(),
        agent: AgentKind::Claude,
        tool: "Bash".into(),
        prompt: "Bash: cargo test ✓".into(),
        detail: "cargo test\n--workspace".into(),
        options: DecisionAnswer::ALL
            .into_iter()
            .map(|answer| DecisionOption { answer, label: answer.label().into() })
            .collect(),
        answerable: true,
        received_at: 1_700_000_002_000,
    }
}

fn sample_notification() -> NotificationView {
    NotificationView {
        id: NotificationId::new().to_string(),
        pane_id: Some(PaneId::new().to_string()),
        workspace_id: None,
        title: "Build done".into(),
        body: "two\nlines".into(),
        severity: "info".into(),
        source: "osc9".into(),
        created_at: 5,
        read_at: Some(6),
    }
}

#[test]
fn every_reply_survives_the_wire() {
    let p = PaneId::new();
    let t = TabId::new();
    let w = WorkspaceId::new();
    let cases = vec![
        (
            Command::ServerInfo,
            Reply::ServerInfo(ServerInfo {
                version: "0.1.0".into(),
                pid: 9,
                socket: "/run/b.sock".into(),
                started_at: 1,
                active_window: Some(3),
            }),
        ),
        (Command::WorkspaceList, Reply::State(Box::new(sample_state()))),
        (Command::WorkspaceList, Reply::State(Box::default())),
        (Command::PaneClose { pane: p.clone() }, Reply::Done),
        (
            Command::WorkspaceCreate { name: None, cwd: None },
            Reply::WorkspaceCreated { workspace: w.clone() },
        ),
        (
            Command::TabCreate {
                workspace: WorkspaceSelector::Active,
                title: None,
                spawn: SpawnRequest::default(),
            },
            Reply::TabCreated { tab: t.clone(), pane: p.clone() },
        ),
        (
            Command::PaneSpawn {
                workspace: WorkspaceSelector::Active,
                spawn: SpawnRequest::default(),
            },
            Reply::Spawned { pane: p.clone(), tab: t.clone(), workspace: w.clone() },
        ),
        (Command::TabMove { tab: t.clone(), index: 9 }, Reply::TabMoved { index: 2 }),
        (
            Command::TabSetRatio { tab: t.clone(), path: vec![], ratio: 0.5 },
            Reply::Ratio { ratio: Some(0.5) },
        ),
        (
            Command::TabSetRatio { tab: t.clone(), path: vec![Side::First], ratio: 0.5 },
            Reply::Ratio { ratio: None },
        ),
        (Command::PaneFocus { pane: p.clone() }, Reply::Pane { pane: p.clone() }),
        (
            Command::PaneSend { pane: p.clone(), text: Some("x".into()), keys: vec![] },
            Reply::Sent { bytes: 1 },
        ),
        (
            Command::PaneRead { pane: p.clone(), spec: ReadSpec::default() },
            Reply::Read(ReadView {
                pane: p.clone(),
                lines: vec!["a".into(), String::new(), "\u{1b}[1mb".into()],
                first_seq: 3,
                next_seq: 5,
                oldest_seq: 0,
                truncated: true,
            }),
        ),
        (
            Command::PaneResume { pane: p.clone() },
            Reply::Resumed { pane: p.clone(), state: RestoreState::Live },
        ),
        (
            Command::WorkspaceSetAutoResume { workspace: w.clone(), enabled: false },
            Reply::AutoResume { enabled: false },
        ),
        (
            Command::WorkspaceSetAgentDrive { workspace: w.clone(), enabled: true },
            Reply::AgentDrive { enabled: true },
        ),
        (
            Command::Notify {
                pane: None,
                title: "t".into(),
                body: String::new(),
                source: "cli".into(),
            },
            Reply::Notified { id: NotificationId::new().to_string() },
        ),
        (
            Command::NotificationsList { unread_only: false },
            Reply::Notifications(vec![sample_notification()]),
        ),
        (Command::PaneClearAttention { pane: p.clone() }, Reply::Marked { count: 4 }),
        (
            Command::Decide {
                pane: p.clone(),
                answer: DecisionAnswer::Always,
                message: None,
                id: None,
            },
            Reply::Decided { pane: p.clone(), id: DecisionId::new() },
        ),
        (Command::Decisions, Reply::Decisions(vec![(p.clone(), sample_decision())])),
        (Command::Decisions, Reply::Decisions(vec![])),
    ];
    for (cmd, reply) in cases {
        let value = encode_reply(&reply);
        let text = value.to_string();
        let back = decode_reply(&cmd, serde_json::from_str(&text).expect("JSON"))
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert_eq!(back, reply, "{text}");
    }
}

#[test]
fn a_reply_of_the_wrong_shape_is_an_error_not_a_guess() {
    let cmd =
        Command::PaneSpawn { workspace: WorkspaceSelector::Active, spawn: SpawnRequest::default() };
    assert!(decode_reply(&cmd, json!({ "pane_id": "pane_x" })).is_err());
    assert!(decode_reply(
        &cmd,
        json!({ "pane_id": "../etc", "tab_id": "tab_a", "workspace_id": "ws_a" })
    )
    .is_err());
    assert!(decode_reply(&Command::WorkspaceList, json!({ "workspaces": "x" })).is_err());
}

#[test]
fn every_event_survives_the_wire() {
    let (p, t, w) = (PaneId::new(), TabId::new(), WorkspaceId::new());
    let events = vec![
        Event::WorkspaceCreated { workspace: w.clone() },
        Event::WorkspaceChanged { workspace: w.clone() },
        Event::WorkspaceClosed { workspace: w.clone() },
        Event::TabCreated { tab: t.clone(), workspace: w.clone() },
        Event::TabChanged { tab: t.clone() },
        Event::TabClosed { tab: t.clone() },
        Event::PaneCreated { pane: p.clone(), tab: t.clone() },
        Event::PaneChanged { pane: p.clone() },
        Event::PaneClosed { pane: p.clone() },
        Event::PaneOutput { pane: p.clone() },
        Event::PaneProgress { pane: p.clone(), state: 1, percent: Some(40) },
        Event::PaneProgress { pane: p.clone(), state: 0, percent: None },
        Event::PaneExited { pane: p.clone(), exit_code: -1, signal: Some("SIGKILL".into()) },
        Event::FocusChanged { pane: p.clone(), tab: t.clone(), workspace: w.clone() },
        Event::Notification(Box::new(sample_notification())),
        Event::NotificationActivated {
            id: "notif_1".into(),
            pane: p.clone(),
            activation_token: None,
        },
        Event::NotificationActivated {
            id: "notif_2".into(),
            pane: p.clone(),
            activation_token: Some("sway-token-1".into()),
        },
        Event::NotificationDesktop { notification: Box::new(sample_notification()), window: 7 },
        Event::Decision { pane: p.clone(), decision: Some(sample_decision()) },
        Event::Decision { pane: p.clone(), decision: None },
        Event::SubscriberDropped { reason: "slow".into() },
        Event::ConnectionClosed { reason: "idle".into() },
        Event::TaskChanged { task: berth_engine::ids::TaskId::new(), state: "working".into() },
        Event::GitChanged { dir: "/r".into(), git: Some(sample_git()) },
        Event::GitChanged { dir: "/r".into(), git: None },
        Event::ReviewRequested { task: berth_engine::ids::TaskId::new(), window: None },
        Event::ReviewRequested { task: berth_engine::ids::TaskId::new(), window: Some(0) },
        Event::ReviewRequested { task: berth_engine::ids::TaskId::new(), window: Some(7) },
    ];
    for event in events {
        let line = encode_event(&event);
        let message: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(message["method"], "event");
        assert_eq!(decode_event(&message["params"]).expect("decodes"), event);
    }
    assert!(decode_event(&json!({ "type": "pane.teleported" })).is_err());
}

/// The JSON of `workspace.list` keeps every documented field name (fields may be added,
/// never renamed).
#[test]
fn the_state_keeps_its_documented_field_names() {
    let value = encode_reply(&Reply::State(Box::new(sample_state())));
    let ws = &value["workspaces"][0];
    for key in ["id", "name", "cwd", "auto_resume", "active_tab_id", "tabs"] {
        assert!(ws.get(key).is_some(), "workspace.{key}");
    }
    let tab = &ws["tabs"][0];
    for key in ["id", "title", "active_pane_id", "layout", "size", "panes"] {
        assert!(tab.get(key).is_some(), "tab.{key}");
    }
    let pane = &tab["panes"][1];
    for key in [
        "id",
        "title",
        "cwd",
        "argv",
        "state",
        "lifecycle",
        "attention",
        "agent",
        "exit_code",
        "size",
        "was_running",
        "pid",
        "created_at",
        "progress",
        "lifecycle_since",
        "pending_decision",
    ] {
        assert!(pane.get(key).is_some(), "pane.{key}");
    }
    assert_eq!(pane["progress"], json!({ "state": "indeterminate", "percent": null }));
    assert_eq!(pane["agent"]["kind"], "claude");
    assert_eq!(pane["state"], "LIVE");
    let decision = &pane["pending_decision"];
    for key in ["id", "agent", "tool", "prompt", "detail", "options", "answerable", "received_at"] {
        assert!(decision.get(key).is_some(), "pending_decision.{key}");
    }
    assert_eq!(decision["options"][0], json!({ "id": "allow", "label": "Allow once" }));
    assert!(value.get("active_workspace_id").is_some());
}

fn sample_git() -> crate::gitctx::GitContext {
    crate::gitctx::GitContext {
        root: "/home/u/api".into(),
        branch: Some("main".into()),
        detached_sha: None,
        dirty: true,
        ahead: Some(2),
        behind: Some(0),
        worktree: false,
    }
}

/// `window.servers` takes add or remove, not both, each 1 to 4096 bytes.
#[test]
fn window_servers_params_are_bounded() {
    use crate::protocol::decode_method;
    let long = "x".repeat(crate::ui::MAX_SERVER_ADDRESS + 1);
    for bad in [
        json!({ "add": "" }),
        json!({ "remove": "" }),
        json!({ "add": long }),
        json!({ "add": "/a.sock", "remove": "b" }),
        json!({ "add": 7 }),
        json!({ "other": "x" }),
    ] {
        let err = decode_method("window.servers", bad.clone());
        assert!(matches!(err, Err(crate::error::CommandError::BadParams(_))), "{bad}: {err:?}");
    }
    let ok = decode_method("window.servers", json!({ "add": "ssh://devbox" }));
    assert!(
        matches!(ok, Ok(Decoded::Connection(ConnectionMethod::WindowServers(
            crate::ui::ServersOp::Add(ref a)))) if a == "ssh://devbox"),
        "{ok:?}"
    );
}
