//! The Store's command handling without processes: table tests of commands → the resulting
//! view, through [`FakeSpawner`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use berth_engine::ids::{PaneId, TabId};
use berth_engine::layout::{CellSize, FocusDir, Layout, SplitDir};
use berth_engine::model::RestoreState;

use crate::commands::{Command, Reply, SpawnRequest, WorkspaceSelector};
use crate::events::EventBus;
use crate::pane::OutputPulse;
use crate::process::testing::FakeSpawner;
use crate::protocol;
use crate::store::{Store, StoreConfig};
use crate::view::StateView;

struct Fixture {
    store: Store,
    spawner: FakeSpawner,
    _home: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let home = tempfile::tempdir().expect("a temp dir");
    let config = StoreConfig {
        socket_path: home.path().join("berth.sock"),
        home: home.path().to_path_buf(),
        shell: "/bin/sh".into(),
    };
    let spawner = FakeSpawner::default();
    let store = Store::with_spawner(
        config,
        EventBus::default(),
        OutputPulse::default(),
        Arc::new(spawner.clone()),
    );
    Fixture { store, spawner, _home: home }
}

fn spawn(argv: &[&str]) -> SpawnRequest {
    SpawnRequest { argv: argv.iter().map(|s| (*s).to_owned()).collect(), ..Default::default() }
}

impl Fixture {
    fn run(&mut self, cmd: Command) -> Reply {
        self.store.execute(cmd.clone()).unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
    }

    fn new_pane(&mut self, argv: &[&str]) -> (PaneId, TabId) {
        match self
            .run(Command::PaneSpawn { workspace: WorkspaceSelector::Active, spawn: spawn(argv) })
        {
            Reply::Spawned { pane, tab, .. } => (pane, tab),
            other => panic!("not a spawn answer: {other:?}"),
        }
    }

    fn view(&self) -> StateView {
        self.store.view()
    }

    /// The view in a short text form: `workspace[tab(layout) …] …`.
    fn shape(&self) -> String {
        let view = self.view();
        let names: std::collections::HashMap<PaneId, String> = view
            .workspaces
            .iter()
            .flat_map(|w| &w.tabs)
            .flat_map(|t| &t.panes)
            .map(|p| (p.id.clone(), p.argv.join(" ")))
            .collect();
        fn layout(l: &Layout, names: &std::collections::HashMap<PaneId, String>) -> String {
            match l {
                Layout::Pane(id) => names.get(id).cloned().unwrap_or_else(|| "?".into()),
                Layout::Split { dir, ratio, first, second } => format!(
                    "{}{ratio:.2}({},{})",
                    if *dir == SplitDir::Right { "R" } else { "D" },
                    layout(first, names),
                    layout(second, names)
                ),
            }
        }
        view.workspaces
            .iter()
            .map(|w| {
                let tabs: Vec<String> = w.tabs.iter().map(|t| layout(&t.layout, &names)).collect();
                format!("{}[{}]", w.name, tabs.join(" "))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[test]
fn commands_change_the_view_as_documented() {
    let mut f = fixture();
    let (a, tab) = f.new_pane(&["a"]);
    let ws = f.view().workspaces[0].name.clone();
    assert_eq!(f.shape(), format!("{ws}[a]"));

    let b = match f.run(Command::PaneSplit {
        pane: a.clone(),
        dir: SplitDir::Right,
        spawn: spawn(&["b"]),
    }) {
        Reply::Pane { pane } => pane,
        other => panic!("{other:?}"),
    };
    assert_eq!(f.shape(), format!("{ws}[R0.50(a,b)]"));
    f.run(Command::PaneSplit { pane: b.clone(), dir: SplitDir::Down, spawn: spawn(&["c"]) });
    assert_eq!(f.shape(), format!("{ws}[R0.50(a,D0.50(b,c))]"));
    assert_eq!(
        f.run(Command::TabSetRatio { tab: tab.clone(), path: vec![], ratio: 0.99 }),
        Reply::Ratio { ratio: Some(0.95) },
        "ratios are clamped"
    );
    assert_eq!(f.shape(), format!("{ws}[R0.95(a,D0.50(b,c))]"));
    f.run(Command::PaneClose { pane: b.clone() });
    assert_eq!(f.shape(), format!("{ws}[R0.95(a,c)]"));

    // Focus by direction, then by id.
    assert_eq!(
        f.run(Command::PaneFocusDirection { pane: a.clone(), dir: FocusDir::Right }),
        Reply::Pane { pane: f.view().workspaces[0].tabs[0].panes[1].id.clone() }
    );
    f.run(Command::PaneFocus { pane: a.clone() });
    assert_eq!(f.view().workspaces[0].tabs[0].active_pane, a);

    // A second workspace by name, and its close.
    f.run(Command::PaneSpawn {
        workspace: WorkspaceSelector::Name("api".into()),
        spawn: spawn(&["d"]),
    });
    assert_eq!(f.shape(), format!("{ws}[R0.95(a,c)] api[d]"));
    let api = f.view().workspaces[1].id.clone();
    f.run(Command::WorkspaceRename { workspace: api.clone(), name: "web".into() });
    assert_eq!(f.shape(), format!("{ws}[R0.95(a,c)] web[d]"));
    f.run(Command::WorkspaceClose { workspace: api });
    assert_eq!(f.shape(), format!("{ws}[R0.95(a,c)]"));

    // Closing the last pane closes the tab and the workspace.
    f.run(Command::TabClose { tab });
    assert_eq!(f.shape(), "");
    assert_eq!(f.spawner.record().spawned.len(), 4);
    assert_eq!(f.spawner.record().closed.len(), 4, "every process was ended");
}

#[test]
fn sizes_reach_the_processes_and_the_view() {
    let mut f = fixture();
    let (a, tab) = f.new_pane(&["a"]);
    f.run(Command::TabResize { tab: tab.clone(), size: CellSize { cols: 100, rows: 30 } });
    f.run(Command::PaneSplit { pane: a.clone(), dir: SplitDir::Right, spawn: spawn(&["b"]) });
    let view = f.view();
    let tab_view = &view.workspaces[0].tabs[0];
    assert_eq!(tab_view.size, CellSize { cols: 100, rows: 30 });
    let widths: Vec<u16> = tab_view.panes.iter().map(|p| p.size.cols).collect();
    assert_eq!(widths.iter().sum::<u16>() + 1, 100, "two panes and a divider: {widths:?}");
    let record = f.spawner.record();
    assert!(record.resized.iter().any(|&(_, cols, rows)| cols == 100 && rows == 30));
}

#[test]
fn input_goes_to_the_live_process_only() {
    let mut f = fixture();
    let (a, _) = f.new_pane(&["a"]);
    assert_eq!(
        f.run(Command::PaneSend {
            pane: a.clone(),
            text: Some("hi".into()),
            keys: vec!["Enter".into()]
        }),
        Reply::Sent { bytes: 3 }
    );
    assert_eq!(f.spawner.record().sent.last().map(|(_, b)| b.clone()), Some(b"hi\r".to_vec()));
    let bad = f.store.execute(Command::PaneSend {
        pane: a.clone(),
        text: None,
        keys: vec!["Nope".into()],
    });
    assert_eq!(bad.unwrap_err().code(), "BAD_REQUEST");
    // After its process ended, a pane refuses input.
    f.run(Command::PaneClose { pane: a.clone() });
    let gone = f.store.execute(Command::PaneSend { pane: a, text: Some("x".into()), keys: vec![] });
    assert_eq!(gone.unwrap_err().code(), "NO_SUCH_PANE");
}

#[test]
fn errors_change_nothing() {
    let mut f = fixture();
    let (a, tab) = f.new_pane(&["a"]);
    let before = f.view();
    let cases: Vec<(Command, &str)> = vec![
        (Command::PaneClose { pane: PaneId::new() }, "NO_SUCH_PANE"),
        (Command::TabClose { tab: TabId::new() }, "NO_SUCH_TAB"),
        (Command::TabRename { tab: tab.clone(), title: "a\u{7}b".into() }, "BAD_REQUEST"),
        (Command::TabSetRatio { tab: tab.clone(), path: vec![], ratio: 0.3 }, "INVALID_LAYOUT"),
        (
            Command::TabSetLayout { tab: tab.clone(), layout: Layout::Pane(PaneId::new()) },
            "INVALID_LAYOUT",
        ),
        (Command::WorkspaceCreate { name: None, cwd: Some("relative/dir".into()) }, "BAD_REQUEST"),
        (Command::PaneResume { pane: a.clone() }, "CONFLICT"),
    ];
    for (cmd, code) in cases {
        let err = f.store.execute(cmd.clone()).expect_err("refused");
        assert_eq!(err.code(), code, "{cmd:?}: {err}");
        assert_eq!(f.view(), before, "{cmd:?} changed the state");
    }
    // A spawn that fails records nothing.
    f.spawner.fail.store(true, Ordering::Relaxed);
    let err = f
        .store
        .execute(Command::PaneSplit { pane: a, dir: SplitDir::Down, spawn: spawn(&["x"]) })
        .expect_err("refused");
    assert_eq!(err.code(), "SPAWN_FAILED");
    assert_eq!(f.view(), before);
}

#[test]
fn the_answer_of_workspace_list_is_the_view() {
    let mut f = fixture();
    let (a, _) = f.new_pane(&["claude"]);
    let view = f.view();
    let pane = &view.workspaces[0].tabs[0].panes[0];
    assert_eq!(pane.id, a);
    assert_eq!(pane.state, RestoreState::Live);
    assert_eq!(pane.agent.kind, berth_engine::agents::AgentKind::Claude);
    let reply = f.run(Command::WorkspaceList);
    assert_eq!(reply, Reply::State(Box::new(view.clone())));
    // …and what the wire carries decodes back to the same view.
    let wire = protocol::encode_reply(&reply);
    assert_eq!(
        protocol::decode_reply(&Command::WorkspaceList, wire).expect("decodes"),
        Reply::State(Box::new(view))
    );
}

// ---- agents at work: turns, submit, wait (issue 14) ----

fn hook(pane: &PaneId, payload: serde_json::Value) -> Command {
    Command::HookEvent {
        pane: pane.clone(),
        kind: berth_engine::agents::AgentKind::Claude,
        payload,
    }
}

fn turn_of(f: &Fixture, pane: &PaneId) -> crate::agents::turns::TurnInfo {
    let view = f.view();
    let info = view.workspaces.iter().flat_map(|w| &w.tabs).flat_map(|t| &t.panes);
    info.into_iter().find(|p| &p.id == pane).expect("the pane").turn.clone()
}

#[test]
fn turns_follow_the_agents_hooks_and_berths_interrupts() {
    use crate::agents::turns::LifecycleSource;
    use berth_engine::model::Lifecycle;
    use serde_json::json;
    let mut f = fixture();
    let (a, _) = f.new_pane(&["claude"]);
    assert!(!turn_of(&f, &a).hooks_wired, "no hook yet");
    f.run(hook(&a, json!({"hook_event_name": "SessionStart", "session_id": "s-1"})));
    let turn = turn_of(&f, &a);
    assert!(turn.hooks_wired);
    assert_eq!(
        (turn.learned_from, turn.running_since, turn.last),
        (Some(LifecycleSource::Hook), None, None)
    );
    // A prompt, a subagent finishing (not the turn), the turn's end with its message.
    f.run(hook(&a, json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi"})));
    assert!(turn_of(&f, &a).running_since.is_some());
    f.run(hook(&a, json!({"hook_event_name": "SubagentStop"})));
    assert!(turn_of(&f, &a).running_since.is_some(), "SubagentStop does not end the turn");
    f.run(hook(&a, json!({"hook_event_name": "Stop", "last_assistant_message": "done: 3 files"})));
    let turn = turn_of(&f, &a);
    let last = turn.last.expect("a finished turn");
    assert_eq!(turn.running_since, None);
    assert_eq!((last.ended_as, last.learned_from), (Lifecycle::Done, LifecycleSource::Hook));
    assert_eq!(last.last_message.as_deref(), Some("done: 3 files"));
    assert!(last.duration_ms().is_some());
    // A turn interrupted through Berth ends `idle`, learned from the interrupt.
    f.run(hook(&a, json!({"hook_event_name": "UserPromptSubmit", "prompt": "more"})));
    f.run(Command::PaneSend { pane: a.clone(), text: None, keys: vec!["C-c".into()] });
    let last = turn_of(&f, &a).last.expect("the interrupted turn");
    assert_eq!((last.ended_as, last.learned_from), (Lifecycle::Idle, LifecycleSource::Interrupt));
    assert_eq!(last.last_message, None);
    assert_eq!(f.view().workspaces[0].tabs[0].panes[0].lifecycle, Lifecycle::Idle);
}

/// Issue 26: opencode interrupts on a second Escape only, and its plugin reports the turn's
/// end: an Escape sent through Berth leaves its turn to it (Berth showed `idle` while the real
/// opencode worked on); `session.error` `MessageAbortedError` then `session.status` idle end
/// it, with no `error` attention.
#[test]
fn an_escape_leaves_opencodes_turn_to_opencode() {
    use berth_engine::agents::AgentKind;
    use berth_engine::model::{Attention, Lifecycle};
    use serde_json::json;
    let mut f = fixture();
    let (a, _) = f.new_pane(&["opencode"]);
    let oc = |payload| Command::HookEvent { pane: a.clone(), kind: AgentKind::Opencode, payload };
    let status = |kind: &str| json!({"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":kind}}});
    f.run(oc(status("busy")));
    let pane = |f: &Fixture| f.view().workspaces[0].tabs[0].panes[0].clone();
    assert_eq!(pane(&f).lifecycle, Lifecycle::Working);
    f.run(Command::PaneSend { pane: a.clone(), text: None, keys: vec!["Escape".into()] });
    assert_eq!(pane(&f).lifecycle, Lifecycle::Working, "one Escape does not interrupt opencode");
    f.run(oc(json!({"type":"session.error","properties":{"sessionID":"ses_1",
        "error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}})));
    f.run(oc(status("idle")));
    let pane = pane(&f);
    assert_eq!((pane.lifecycle, pane.attention), (Lifecycle::Idle, Attention::None));
}

/// The Store behind the socket's lock, as `pane.submit` and `pane.wait` use it.
fn shared(f: Fixture) -> (Arc<std::sync::Mutex<Store>>, FakeSpawner, tempfile::TempDir) {
    (Arc::new(std::sync::Mutex::new(f.store)), f.spawner, f._home)
}

fn exec(store: &std::sync::Mutex<Store>, cmd: Command) -> Reply {
    store.lock().unwrap().execute(cmd.clone()).unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn sent(spawner: &FakeSpawner) -> Vec<Vec<u8>> {
    spawner.record().sent.iter().map(|(_, b)| b.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submit_pastes_then_presses_enter_and_refuses_a_turn_in_progress() {
    use crate::agents::submit;
    use serde_json::json;
    let mut f = fixture();
    let (a, _) = f.new_pane(&["claude"]);
    let (store, spawner, _home) = shared(f);
    // No hooks yet: pasted (not bracketed: the program did not ask), Enter 200 ms later, no
    // acknowledgement awaited.
    let outcome = submit::start(&store, a.clone(), "one\ntwo", false).unwrap().await.unwrap();
    assert_eq!((outcome.bracketed, outcome.awaited_ack, outcome.confirmed), (false, false, false));
    assert_eq!(outcome.enter_delay_ms, 200);
    assert_eq!(sent(&spawner), [b"one\rtwo".to_vec(), b"\r".to_vec()]);

    // Hooks wired and bracketed paste on: the acknowledgement is awaited and comes.
    exec(&store, hook(&a, json!({"hook_event_name": "SessionStart"})));
    let term = store.lock().unwrap().pane_shared(&a).unwrap();
    term.term.lock().feed(b"\x1b[?2004h");
    let waiting = tokio::spawn(submit::start(&store, a.clone(), "a\x1b[201~b", false).unwrap());
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while sent(&spawner).len() < 4 {
        assert!(tokio::time::Instant::now() < deadline, "no Enter: {:?}", sent(&spawner));
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    exec(&store, hook(&a, json!({"hook_event_name": "UserPromptSubmit", "prompt": "ab"})));
    let outcome = waiting.await.unwrap().unwrap();
    assert_eq!(
        (outcome.awaited_ack, outcome.confirmed, outcome.enter_retried),
        (true, true, false)
    );
    assert_eq!(sent(&spawner)[2..], [b"\x1b[200~ab\x1b[201~".to_vec(), b"\r".to_vec()]);

    // Mid-turn (the acknowledgement made it `working`): refused without force, nothing sent.
    let refused = submit::start(&store, a.clone(), "more", false).err().expect("refused");
    assert_eq!(refused.code(), "MID_TURN");
    assert_eq!(sent(&spawner).len(), 4);
    // Too long or empty: refused before anything is written.
    let long = "x".repeat(berth_engine::agents::submit::MAX_PROMPT_BYTES + 1);
    assert_eq!(submit::start(&store, a.clone(), &long, true).err().unwrap().code(), "BAD_REQUEST");
    assert_eq!(submit::start(&store, a.clone(), "", true).err().unwrap().code(), "BAD_REQUEST");
    assert_eq!(sent(&spawner).len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_ends_on_the_state_the_pane_exiting_or_its_deadline() {
    use crate::agents::wait;
    use crate::agents::work::WaitUntil;
    use berth_engine::model::Lifecycle;
    use serde_json::json;
    use std::time::Duration;
    let mut f = fixture();
    let (a, _) = f.new_pane(&["claude"]);
    let (store, _spawner, _home) = shared(f);
    exec(&store, hook(&a, json!({"hook_event_name": "UserPromptSubmit", "prompt": "go"})));
    let waiting = tokio::spawn(wait::start(&store, a.clone(), WaitUntil::Idle, None).unwrap());
    exec(&store, hook(&a, json!({"hook_event_name": "Stop", "last_assistant_message": "ok"})));
    let outcome = waiting.await.unwrap().unwrap();
    assert!(outcome.reached);
    assert_eq!(outcome.lifecycle, Lifecycle::Done);
    assert_eq!(outcome.turn.last.and_then(|t| t.last_message).as_deref(), Some("ok"));

    let late = wait::start(&store, a.clone(), WaitUntil::Blocked, Some(Duration::from_millis(50)));
    assert_eq!(late.unwrap().await.unwrap_err().code(), "TIMEOUT");

    let waiting = tokio::spawn(wait::start(&store, a.clone(), WaitUntil::Blocked, None).unwrap());
    exec(&store, Command::PaneClose { pane: a.clone() });
    let outcome = waiting.await.unwrap().unwrap();
    assert!(!outcome.reached);
    assert_eq!(outcome.lifecycle, Lifecycle::Exited);
    let gone = wait::start(&store, a, WaitUntil::Idle, None).err().expect("no such pane");
    assert_eq!(gone.code(), "NO_SUCH_PANE");
}

/// Adds a notification titled `title` for `pane` and returns the `notification.desktop`
/// events it published (as their wire JSON).
fn desktop_events(
    f: &mut Fixture,
    events: &mut tokio::sync::mpsc::Receiver<crate::events::Delivery>,
    pane: &PaneId,
    title: &str,
) -> Vec<serde_json::Value> {
    let incoming = crate::notifications::Incoming::new(Some(pane.clone()), title, "body", "osc9");
    f.store.execute(crate::store::Internal::AddNotification(incoming)).expect("added");
    let mut desktop = Vec::new();
    while let Ok(event) = events.try_recv() {
        let line = event.line(protocol::encode_event);
        if line.contains("\"notification.desktop\"") {
            desktop.push(serde_json::from_str(&line).expect("an event line"));
        }
    }
    desktop
}

/// A notification that should reach the desktop, on a server that cannot show it (no desktop
/// sink here), goes to the attached window whose view the Store holds, once, and to no one
/// when that window shows its pane focused, or when the view is the embedded window's.
#[test]
fn a_notification_this_server_cannot_show_names_the_attached_window() {
    use crate::store::{Internal, WindowView};
    let mut f = fixture();
    let mut events = f.store.bus.subscribe();
    let (pane, _) = f.new_pane(&["sh"]);
    let mut notify = |f: &mut Fixture, title: &str| -> Vec<serde_json::Value> {
        desktop_events(f, &mut events, &pane, title)
    };
    let elsewhere = WindowView { visible: vec![], focused_pane: None, window_focused: true };
    f.store.execute(Internal::ReportWindowView { view: elsewhere.clone(), window: 5 }).unwrap();
    let sent = notify(&mut f, "away");
    assert_eq!(sent.len(), 1, "{sent:?}");
    let event = &sent[0];
    assert_eq!(event["params"]["window_id"], 5);
    assert_eq!(event["params"]["notification"]["title"], "away");
    assert_eq!(event["params"]["notification"]["pane_id"], pane.as_str());

    let watching = WindowView {
        visible: vec![pane.clone()],
        focused_pane: Some(pane.clone()),
        window_focused: true,
    };
    f.store.execute(Internal::ReportWindowView { view: watching, window: 5 }).unwrap();
    assert!(notify(&mut f, "watched").is_empty(), "a watched pane's stays off");

    // The embedded window's view: no attached window to name.
    f.store.execute(Internal::SetWindowView(elsewhere)).unwrap();
    assert!(notify(&mut f, "embedded").is_empty());
}

/// Several attached windows: the one the person used last (focused when it reported) keeps
/// the notifications this server cannot show, though a window in the background reports a
/// view after it; when it closes, one still open takes them.
#[test]
fn a_window_in_the_background_takes_no_notifications_from_the_one_used_last() {
    use crate::store::{Internal, WindowView};
    let mut f = fixture();
    let mut events = f.store.bus.subscribe();
    let (pane, _) = f.new_pane(&["sh"]);
    let mut notify = |f: &mut Fixture, title: &str| -> Vec<u64> {
        let sent = desktop_events(f, &mut events, &pane, title);
        sent.iter().map(|e| e["params"]["window_id"].as_u64().expect("a window")).collect()
    };
    let focused = WindowView { visible: vec![], focused_pane: None, window_focused: true };
    let behind = WindowView { window_focused: false, ..focused.clone() };
    f.store.execute(Internal::ReportWindowView { view: focused.clone(), window: 5 }).unwrap();
    f.store.execute(Internal::ReportWindowView { view: behind.clone(), window: 6 }).unwrap();
    assert_eq!(notify(&mut f, "first"), vec![5], "the window used last shows it");
    assert_eq!(f.store.active_window, Some(5));

    // The focused window watches the pane: nothing for any desktop, though the window behind
    // reports again after it.
    let watching = WindowView {
        visible: vec![pane.clone()],
        focused_pane: Some(pane.clone()),
        window_focused: true,
    };
    f.store.execute(Internal::ReportWindowView { view: watching, window: 5 }).unwrap();
    f.store.execute(Internal::ReportWindowView { view: behind.clone(), window: 6 }).unwrap();
    assert_eq!(notify(&mut f, "watched"), Vec::<u64>::new());

    // Window 5 closes: window 6, still open, takes them.
    f.store.execute(Internal::WindowGone { window: 5 }).unwrap();
    assert_eq!(f.store.active_window, Some(6));
    assert_eq!(notify(&mut f, "after"), vec![6]);
    // The focus moves to window 6's desktop... and it closes too: no window is named.
    f.store.execute(Internal::WindowGone { window: 6 }).unwrap();
    assert_eq!(f.store.active_window, None);
    assert_eq!(notify(&mut f, "none"), Vec::<u64>::new());
}

/// A pane whose command line was too long to save whole is restored with what fit, shown,
/// and never run from it: resume refuses (issue 28, item 5).
#[test]
fn a_restored_pane_whose_command_line_was_cut_is_not_run_again() {
    let mut fx = fixture();
    let long = "x".repeat(200_000);
    let (pane, _) = fx.new_pane(&["/usr/bin/tool", &long]);
    let (snapshot, _) = fx.store.to_snapshot(&Default::default());
    let saved = crate::persist::encode::sanitized(&snapshot);
    assert!(saved.panes[0].argv_cut);

    let mut restored = fixture();
    restored.store.restore(&saved, Default::default());
    let err = restored.store.execute(Command::PaneResume { pane: pane.clone() }).unwrap_err();
    assert!(err.to_string().contains("too long to save whole"), "{err}");
    assert!(restored.spawner.record().spawned.is_empty(), "nothing may run");
    // Saved again, it stays marked.
    let (again, _) = restored.store.to_snapshot(&Default::default());
    assert!(again.panes[0].argv_cut);
}

/// Regression (issue 28, item 6): a restored pane allocated a whole terminal grid (about
/// 85 KB each; 10,000 tombstones held about 1 GB) that it never draws.
#[test]
fn restored_panes_hold_no_terminal_grid() {
    let mut fx = fixture();
    let panes: Vec<PaneId> = (0..20).map(|_| fx.new_pane(&["/bin/true"]).0).collect();
    let (snapshot, _) = fx.store.to_snapshot(&Default::default());

    let mut restored = fixture();
    restored.store.restore(&crate::persist::encode::sanitized(&snapshot), Default::default());
    for id in &panes {
        let pane = &restored.store.panes[id];
        let term = pane.shared.term.lock();
        assert!(term.is_dormant() && term.grid_cells().cells <= 2, "{id}: {:?}", term.grid_cells());
        assert_eq!(pane.shared.size(), term.size(), "the listing's size is the saved one");
    }
}
