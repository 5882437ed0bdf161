//! The trust rules against a Store with fake processes (their pids lie above any real
//! `pid_max`, so a peer is built as the chain of ancestors it would have): provenance recorded
//! and saved, decisions answered only for a person, input only where allowed, agents marked
//! from a hook's ancestry.

use berth_engine::ids::PaneId;

use super::peer::{Ancestor, Peer, ProcKey};
use super::{Caller, Provenance};
use crate::commands::{Command, Reply, SpawnRequest, WorkspaceSelector};
use crate::error::CommandError;
use crate::events::EventBus;
use crate::store::Store;

fn store() -> (Store, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("a temp dir");
    let store = crate::store::test_store(home.path(), EventBus::default());
    (store, home)
}

fn spawn_as(store: &mut Store, caller: &Caller, argv: &[&str]) -> PaneId {
    let spawn =
        SpawnRequest { argv: argv.iter().map(|a| (*a).to_owned()).collect(), ..Default::default() };
    match store
        .execute_as(caller, Command::PaneSpawn { workspace: WorkspaceSelector::Active, spawn })
    {
        Ok(Reply::Spawned { pane, .. }) => pane,
        other => panic!("no pane: {other:?}"),
    }
}

fn ancestor(pid: i32, comm: &str, argv: &[&str]) -> Ancestor {
    Ancestor {
        key: ProcKey { pid, start: 1 },
        session: pid,
        comm: comm.into(),
        argv: argv.iter().map(|a| (*a).to_owned()).collect(),
    }
}

/// A process in `pane` whose ancestry is `above` (the caller first) and then the pane's child.
fn inside(store: &Store, pane: &PaneId, above: &[Ancestor]) -> Peer {
    let p = &store.panes[pane];
    let child = p.pty.as_ref().unwrap().pid();
    let mut chain = above.to_vec();
    chain.push(ancestor(child, p.argv[0].rsplit('/').next().unwrap(), &["bash"]));
    Peer::Inside(chain)
}

fn decide(store: &mut Store, caller: &Caller, pane: &PaneId) -> Result<Reply, CommandError> {
    let cmd = Command::Decide {
        pane: pane.clone(),
        answer: crate::decisions::DecisionAnswer::Allow,
        message: None,
        id: None,
    };
    store.execute_as(caller, cmd)
}

fn send(store: &mut Store, caller: &Caller, pane: &PaneId) -> Result<Reply, CommandError> {
    store.execute_as(
        caller,
        Command::PaneSend { pane: pane.clone(), text: Some("x".into()), keys: vec![] },
    )
}

fn not_permitted<T: std::fmt::Debug>(result: Result<T, CommandError>) -> String {
    match result {
        Err(CommandError::NotPermitted(message)) => message,
        other => panic!("expected NOT_PERMITTED, got {other:?}"),
    }
}

#[test]
fn panes_record_who_made_them_and_the_snapshot_keeps_it() {
    let (mut store, _home) = store();
    let person = spawn_as(&mut store, &Caller::Person, &["bash"]);
    assert_eq!(store.panes[&person].trust.made_by, Provenance::Person);
    // The person's shell acts for the person: what it opens is a person's too.
    let caller = store.caller_of(&inside(&store, &person, &[ancestor(7, "berth", &["berth"])]));
    assert!(caller.acts_for_person(), "{caller:?}");
    let by_person_shell = spawn_as(&mut store, &caller, &["bash"]);
    assert_eq!(store.panes[&by_person_shell].trust.made_by, Provenance::Person);
    // An agent's pane (its program is claude) opens an agent's pane.
    let agent = spawn_as(&mut store, &Caller::Person, &["claude"]);
    let caller = store.caller_of(&inside(&store, &agent, &[ancestor(8, "berth", &["berth"])]));
    assert!(!caller.acts_for_person(), "{caller:?}");
    let by_agent = spawn_as(&mut store, &caller, &["bash"]);
    assert_eq!(store.panes[&by_agent].trust.made_by, Provenance::Agent { by: Some(agent.clone()) });
    // And what that pane's shell opens is an agent's as well.
    let caller = store.caller_of(&inside(&store, &by_agent, &[]));
    assert!(!caller.acts_for_person());
    // Orphans and unknown callers make agents' panes.
    let orphan = store.caller_of(&Peer::Inside(vec![ancestor(9, "sleep", &["sleep"])]));
    assert!(matches!(orphan, Caller::Orphan { .. }), "{orphan:?}");
    let by_orphan = spawn_as(&mut store, &orphan, &["bash"]);
    assert_eq!(store.panes[&by_orphan].trust.made_by, Provenance::Agent { by: None });
    // Saved and read back; an older snapshot without the field is an agent's (unknown).
    let (snapshot, _) = store.to_snapshot(&Default::default());
    let made: Vec<(String, String)> =
        snapshot.panes.iter().map(|p| (p.id.clone(), p.made_by.clone())).collect();
    assert!(made.contains(&(person.to_string(), "person".into())), "{made:?}");
    assert!(made.contains(&(by_agent.to_string(), format!("agent:{agent}"))), "{made:?}");
    for record in ["person", "agent", &format!("agent:{agent}"), "", "agent:../x", "junk"] {
        let back = Provenance::from_record(record);
        assert_eq!(back == Provenance::Person, record == "person", "{record}");
    }
}

#[test]
fn only_a_person_answers_and_never_from_the_asking_pane() {
    let (mut store, _home) = store();
    let person = spawn_as(&mut store, &Caller::Person, &["bash"]);
    let asking = spawn_as(&mut store, &Caller::Person, &["bash"]);
    // Inside the asking pane: refused whoever it is.
    let own = store.caller_of(&inside(&store, &asking, &[]));
    assert!(not_permitted(decide(&mut store, &own, &asking)).contains("inside pane"));
    // An orphan, an unknown process, an agent's pane: refused before anything is looked up.
    let orphan = Caller::Orphan { session_pane: Some(asking.clone()) };
    assert!(not_permitted(decide(&mut store, &orphan, &asking)).contains("berth decide"));
    not_permitted(decide(&mut store, &Caller::Unknown("gone".into()), &asking));
    let agent = spawn_as(&mut store, &Caller::Person, &["codex"]);
    let in_agent = store.caller_of(&inside(&store, &agent, &[]));
    not_permitted(decide(&mut store, &in_agent, &asking));
    // A person, the window, a person's shell: allowed (here: no decision to take it).
    let shell = store.caller_of(&inside(&store, &person, &[]));
    for caller in [Caller::Person, Caller::Window, shell] {
        assert!(matches!(decide(&mut store, &caller, &asking), Err(CommandError::NoDecision(_))));
    }
}

#[test]
fn agents_type_into_other_panes_only_where_a_person_allowed_it_and_taint_them() {
    let (mut store, _home) = store();
    let agent = spawn_as(&mut store, &Caller::Person, &["claude"]);
    let target = spawn_as(&mut store, &Caller::Person, &["bash"]);
    let caller = store.caller_of(&inside(&store, &agent, &[]));
    not_permitted(send(&mut store, &caller, &agent));
    assert!(not_permitted(send(&mut store, &caller, &target)).contains("agent-drive"));
    // The opt-in is a person's.
    let ws = store.panes[&target].workspace.clone();
    let on = Command::WorkspaceSetAgentDrive { workspace: ws.clone(), enabled: true };
    not_permitted(store.execute_as(&caller, on.clone()));
    store.execute_as(&Caller::Person, on).unwrap();
    assert!(store.view().workspaces[0].agent_drive);
    assert!(matches!(send(&mut store, &caller, &target), Ok(Reply::Sent { bytes: 1 })));
    // What it typed is its act: the target is an agent's pane now.
    assert_eq!(store.panes[&target].trust.made_by, Provenance::Agent { by: Some(agent.clone()) });
    let shell = store.caller_of(&inside(&store, &target, &[]));
    assert!(!shell.acts_for_person(), "{shell:?}");
    // A person typing keeps a person's pane a person's.
    let other = spawn_as(&mut store, &Caller::Person, &["bash"]);
    send(&mut store, &Caller::Person, &other).unwrap();
    assert_eq!(store.panes[&other].trust.made_by, Provenance::Person);
}

#[test]
fn a_hooks_ancestry_marks_the_agent_and_what_runs_under_it() {
    let (mut store, _home) = store();
    // A person's shell runs claude, whose hook runs through `sh -c`.
    let pane = spawn_as(&mut store, &Caller::Person, &["bash"]);
    let claude = ancestor(100, "claude", &["node", "/opt/claude/cli.js"]);
    let hook = [
        ancestor(102, "berth", &["berth", "hook", "claude"]),
        ancestor(101, "sh", &["sh"]),
        claude.clone(),
    ];
    let caller = store.caller_of(&inside(&store, &pane, &hook));
    let event = Command::HookEvent {
        pane: pane.clone(),
        kind: berth_engine::agents::AgentKind::Claude,
        payload: serde_json::json!({"hook_event_name": "Stop"}),
    };
    store.execute_as(&caller, event).unwrap();
    let trust = &store.panes[&pane].trust;
    assert!(!trust.child_is_agent, "the person's shell is not the agent");
    assert!(trust.agents.contains(&claude.key));
    // claude's Bash tool is under claude: not a person.
    let tool = [
        ancestor(104, "berth", &["berth", "decide"]),
        ancestor(103, "bash", &["bash", "-c", "x"]),
        claude,
    ];
    let caller = store.caller_of(&inside(&store, &pane, &tool));
    assert!(!caller.acts_for_person(), "{caller:?}");
    // The person's own shell beside it (claude not above) is the person's.
    let beside = store.caller_of(&inside(&store, &pane, &[ancestor(105, "berth", &["berth"])]));
    assert!(beside.acts_for_person(), "{beside:?}");
    // A pane whose own program ran the hook (through a shell wrapper only): all of it is the
    // agent's.
    let direct = spawn_as(&mut store, &Caller::Person, &["python3", "agent.py"]);
    let hook = [ancestor(202, "berth", &["berth", "hook", "claude"]), ancestor(201, "sh", &["sh"])];
    let caller = store.caller_of(&inside(&store, &direct, &hook));
    store.authorize_decision_request(&caller, &direct).unwrap();
    assert!(store.panes[&direct].trust.child_is_agent);
    let later = store.caller_of(&inside(&store, &direct, &[ancestor(203, "berth", &["berth"])]));
    assert!(!later.acts_for_person(), "{later:?}");
    // A hook may open a decision only in its own pane.
    not_permitted(store.authorize_decision_request(&caller, &pane));
    store.authorize_decision_request(&Caller::Person, &pane).unwrap();
}

/// Issue 30: an agent's act on another agent asks the person (a decision in the agent's own
/// pane, naming the agent, the workspace and the act), unless the workspace is opted in; a
/// person never asks; a caller in no pane cannot be asked for.
#[test]
fn an_agents_act_asks_the_person_in_its_own_pane() {
    let (mut store, _home) = store();
    let agent = spawn_as(&mut store, &Caller::Person, &["claude"]);
    store.panes.get_mut(&agent).unwrap().agent.kind = berth_engine::agents::AgentKind::Claude;
    let caller =
        store.caller_of(&inside(&store, &agent, &[ancestor(9, "berth", &["berth", "mcp"])]));
    assert!(!caller.acts_for_person(), "{caller:?}");
    let ask = store.consent_for(&caller, "merge task parse-fix", "detail").unwrap().expect("asks");
    assert_eq!(ask.pane, agent);
    let ws = store.workspaces[0].name.clone();
    assert_eq!(ask.prompt, format!("claude in {ws} asks to merge task parse-fix"));
    assert!(store.consent_for(&Caller::Person, "merge task x", "").unwrap().is_none());
    assert!(store.consent_for(&Caller::Window, "merge task x", "").unwrap().is_none());
    not_permitted(store.consent_for(&Caller::Orphan { session_pane: None }, "merge task x", ""));
    let workspace = store.workspaces[0].id.clone();
    store.set_agent_drive(&workspace, true).unwrap();
    assert!(store.consent_for(&caller, "merge task parse-fix", "").unwrap().is_none());
    // A submit into the agent's own pane is refused, consent or not.
    not_permitted(store.authorize_submit(&caller, &agent, "allow", true));
}
