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
