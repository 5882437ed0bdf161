//! Trust boundaries (issue 27, item 1): processes in panes cannot answer a permission request,
//! type into a pane that waits on one, or speak for another pane, whatever they do to their
//! environment, through panes they split off, or as orphans. Real panes, the real socket, the
//! real `berth` binary: the "agent" is a pane whose shell ran the real `berth hook claude`
//! (so the server knows that shell as the agent's process), and every attack is a script run
//! inside a pane. The test process itself is outside Berth: a person.
//!
//! Ends with a property test: random sequences of calls from processes inside panes (the
//! agent's own pane, panes split off by it, panes it typed into, orphans, changed
//! environments) never answer the pending decision and never type into its pane.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;

const WAIT: Duration = Duration::from_secs(20);

/// A claude permission request.
fn request() -> Value {
    json!({
        "session_id": "s-1", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": { "command": "rm -rf ~/precious" },
        "permission_suggestions": [{ "type": "addRules", "rules": [{ "toolName": "Bash" }],
            "behavior": "allow", "destination": "localSettings" }]
    })
}

/// A server, the scripts' folder, and a step counter for file names.
struct World {
    server: TestServer,
    dir: PathBuf,
    steps: std::cell::Cell<usize>,
}

/// What a script run in a pane left: its exit code and output.
#[derive(Debug)]
struct Ran {
    code: i32,
    out: String,
}

impl World {
    fn new() -> World {
        World::with(TestServer::start())
    }

    fn with(server: TestServer) -> World {
        let dir = server.root.path().join("scripts");
        std::fs::create_dir_all(&dir).unwrap();
        World { server, dir, steps: std::cell::Cell::new(0) }
    }

    fn berth(&self) -> String {
        berth_bin().display().to_string()
    }

    /// A pane a person (this test) opened, running bash.
    fn shell(&self) -> String {
        let pane = self.server.berth_ok(&["new", "--", "bash", "--norc", "--noprofile"]);
        self.settle(&pane);
        pane
    }

    /// Waits until the pane's shell reads commands.
    fn settle(&self, pane: &str) {
        let n = self.next();
        let mark = self.dir.join(format!("ready-{n}"));
        self.server.berth_ok(&["send", pane, "--enter", &format!("touch {}", mark.display())]);
        poll(WAIT, "the pane's shell", || mark.exists().then_some(()));
    }

    fn next(&self) -> usize {
        let n = self.steps.get() + 1;
        self.steps.set(n);
        n
    }

    /// Runs `script` (bash) in `pane` as typed by this test (a person), and waits for it.
    fn run_in(&self, pane: &str, script: &str) -> Ran {
        let n = self.next();
        let file = self.dir.join(format!("step-{n}.sh"));
        let out = self.dir.join(format!("step-{n}.out"));
        let rc = self.dir.join(format!("step-{n}.rc"));
        std::fs::write(&file, format!("B={}\n{script}\n", self.berth())).unwrap();
        let line = format!(
            "bash {} > {} 2>&1; echo $? > {}.tmp; mv {}.tmp {}",
            file.display(),
            out.display(),
            rc.display(),
            rc.display(),
            rc.display()
        );
        self.server.berth_ok(&["send", pane, "--enter", &line]);
        let code = poll(WAIT, "a script in a pane", || {
            std::fs::read_to_string(&rc).ok()?.trim().parse::<i32>().ok()
        });
        Ran { code, out: std::fs::read_to_string(&out).unwrap_or_default() }
    }

    /// A pane whose shell is an agent: it runs the real `berth hook claude`, which holds a
    /// permission request open. Returns the pane and the file the hook's answer goes to.
    fn agent(&self) -> (String, PathBuf) {
        let pane = self.shell();
        let n = self.next();
        let payload = self.dir.join(format!("request-{n}.json"));
        std::fs::write(&payload, request().to_string()).unwrap();
        let answer = self.dir.join(format!("hook-{n}.out"));
        let line = format!(
            "{} hook claude < {} > {} 2>&1 &",
            self.berth(),
            payload.display(),
            answer.display()
        );
        self.server.berth_ok(&["send", &pane, "--enter", &line]);
        self.pending(&pane);
        (pane, answer)
    }

    /// The pane's pending decision, once it is answerable.
    fn pending(&self, pane: &str) -> Value {
        poll(WAIT, "an answerable pending decision", || {
            let d = self.server.pane(pane)?["pending_decision"].clone();
            (d["answerable"] == true).then_some(d)
        })
    }

    /// Whether the pane still waits on the same, answerable decision.
    fn still_pending(&self, pane: &str, id: &Value) -> bool {
        let d = self.server.pane(pane).map(|p| p["pending_decision"].clone());
        d.is_some_and(|d| d["answerable"] == true && d["id"] == *id)
    }

    /// The person answers; the hook must then print exactly that answer.
    fn person_answers(&self, pane: &str, answer: &Path, verdict: &str) {
        self.server.berth_ok(&["decide", pane, verdict]);
        let out = poll(WAIT, "the hook's answer", || {
            std::fs::read_to_string(answer).ok().filter(|s| s.contains("behavior"))
        });
        assert!(out.contains(&format!("\"{verdict}\"")), "{out}");
    }

    /// Waits until text typed into `pane` after everything before it has been read by its
    /// shell: input written earlier (say, by an attack) would have run by then.
    fn flush(&self, pane: &str) {
        let n = self.next();
        let mark = self.dir.join(format!("flushed-{n}"));
        self.server.berth_ok(&["send", pane, "--enter", &format!("touch {}", mark.display())]);
        poll(WAIT, "the pane to read its input", || mark.exists().then_some(()));
    }
}

fn refused(ran: &Ran) -> bool {
    ran.code != 0 && ran.out.contains("not permitted")
}

/// Regression: `env -u BERTH_PANE berth decide V allow` run inside V was accepted (the check
/// read the peer's environment).
#[test]
fn an_agent_without_berth_pane_cannot_answer_its_own_request() {
    let w = World::new();
    let (v, answer) = w.agent();
    let id = w.pending(&v)["id"].clone();
    let ran = w.run_in(&v, &format!("env -u BERTH_PANE \"$B\" decide {v} allow"));
    assert!(refused(&ran), "{ran:?}");
    assert!(ran.out.contains("berth decide"), "the error says where to answer: {ran:?}");
    assert!(w.still_pending(&v, &id));
    w.person_answers(&v, &answer, "deny");
}

/// Regression: `BERTH_PANE=<another pane> berth decide V always` inside V was accepted (and
/// would have granted claude's suggested rules).
#[test]
fn an_agent_naming_another_pane_cannot_answer_its_own_request() {
    let w = World::new();
    let other = w.shell();
    let (v, answer) = w.agent();
    let id = w.pending(&v)["id"].clone();
    let ran = w.run_in(&v, &format!("BERTH_PANE={other} \"$B\" decide {v} always"));
    assert!(refused(&ran), "{ran:?}");
    assert!(w.still_pending(&v, &id));
    w.person_answers(&v, &answer, "deny");
}

/// Regression: `berth split $BERTH_PANE -- sh -c 'berth decide V allow'` from inside V was
/// accepted: the new pane's process was another pane's. A pane an agent opens is an agent's.
#[test]
fn a_pane_an_agent_splits_off_cannot_answer_its_request() {
    let w = World::new();
    let (v, answer) = w.agent();
    let id = w.pending(&v)["id"].clone();
    let out = w.dir.join("split.out");
    let ran = w.run_in(
        &v,
        &format!(
            "\"$B\" split \"$BERTH_PANE\" --right -- sh -c '\"{b}\" decide {v} allow > {o} 2>&1; echo rc=$? >> {o}; sleep 60'",
            b = w.berth(),
            o = out.display()
        ),
    );
    assert_eq!(ran.code, 0, "the split itself is allowed: {ran:?}");
    let said = poll(WAIT, "the split pane's attempt", || {
        std::fs::read_to_string(&out).ok().filter(|s| s.contains("rc="))
    });
    assert!(said.contains("not permitted") && !said.contains("rc=0"), "{said}");
    assert!(w.still_pending(&v, &id));
    w.person_answers(&v, &answer, "deny");
}

/// Regression: a process that connects, forks and lets the connecting parent exit before the
/// child answers was accepted (the parent's environment could no longer be read). Neither the
/// inherited connection nor a new one from the orphan (reparented to the server, its
/// subreaper) answers.
#[test]
fn a_connection_handed_to_an_orphan_cannot_answer() {
    let w = World::new();
    let (v, answer) = w.agent();
    let id = w.pending(&v)["id"].clone();
    let py = w.dir.join("fork.py");
    std::fs::write(
        &py,
        r#"import json, os, socket, sys, time
pane, out = sys.argv[1], sys.argv[2]
line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "pane.decide",
                   "params": {"pane_id": pane, "answer": "allow"}}) + "\n"
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["BERTH_SOCKET"])
if os.fork():
    os._exit(0)
time.sleep(0.5)
answers = []
s.sendall(line.encode())
answers.append(s.makefile().readline().strip())
fresh = socket.socket(socket.AF_UNIX)
fresh.connect(os.environ["BERTH_SOCKET"])
fresh.sendall(line.encode())
answers.append(fresh.makefile().readline().strip())
with open(out + ".tmp", "w") as f:
    f.write("\n".join(answers) + "\n")
os.rename(out + ".tmp", out)
"#,
    )
    .unwrap();
    let out = w.dir.join("fork.out");
    let ran = w
        .run_in(&v, &format!("{} {} {v} {}", support::task::python(), py.display(), out.display()));
    assert_eq!(ran.code, 0, "{ran:?}");
    let said = poll(WAIT, "the orphan's answers", || std::fs::read_to_string(&out).ok());
    let answers: Vec<Value> = said.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2, "{said}");
    for a in &answers {
        assert_eq!(a["error"]["data"]["code"], "NOT_PERMITTED", "{said}");
    }
    assert!(w.still_pending(&v, &id));
    w.person_answers(&v, &answer, "deny");
}

/// Regression: `berth send $BERTH_PANE` typed into the program's own pane (answering its own
/// agent's dialog), a power TIOCSTI no longer gives any program. Refused, and nothing typed.
#[test]
fn a_program_cannot_type_into_its_own_pane() {
    let w = World::new();
    let pane = w.shell();
    let ran = w.run_in(&pane, "\"$B\" send \"$BERTH_PANE\" --enter 'echo own-$((6*7))'");
    assert!(refused(&ran), "{ran:?}");
    w.flush(&pane);
    assert!(!w.server.screen(&pane).contains("own-42"), "{}", w.server.screen(&pane));
}

/// Input into a pane that waits on a decision: refused for an agent's pane even where a
/// person let agents drive the workspace; into another pane only with that opt-in, which
/// makes the pane the agent's: its shell can no longer answer (the writer's act). A person's
/// shell in a pane a person opened still answers.
#[test]
fn agents_type_only_where_allowed_and_what_they_type_is_theirs() {
    let w = World::new();
    let person = w.shell();
    let target = w.shell();
    let (v, answer) = w.agent();
    let id = w.pending(&v)["id"].clone();
    // A pane the agent split off (an agent's pane) tries to type into the waiting pane.
    let split = w.run_in(&v, "\"$B\" split \"$BERTH_PANE\" --right -- bash --norc --noprofile");
    assert_eq!(split.code, 0, "{split:?}");
    let s = split.out.trim().to_owned();
    w.settle(&s);
    let typed = w.run_in(&s, &format!("\"$B\" send {v} --enter 'echo injected-$((6*7))'"));
    assert!(refused(&typed), "{typed:?}");
    let submitted = w.run_in(&s, &format!("\"$B\" submit {v} 'echo injected-$((6*7))'"));
    assert!(refused(&submitted), "{submitted:?}");
    // Into a pane without a decision: not without the workspace's opt-in.
    let ran = w.run_in(&s, &format!("\"$B\" send {target} --enter 'echo driven-$((6*7))'"));
    assert!(refused(&ran), "{ran:?}");
    // The opt-in is a person's to give: refused from the agent's pane.
    let ws = w.server.list()["workspaces"][0]["name"].as_str().unwrap().to_owned();
    let ran = w.run_in(&s, &format!("\"$B\" workspace agent-drive '{ws}' on"));
    assert!(refused(&ran), "{ran:?}");
    w.server.berth_ok(&["workspace", "agent-drive", &ws, "on"]);
    assert_eq!(w.server.list()["workspaces"][0]["agent_drive"], true);
    let ran = w.run_in(&s, &format!("\"$B\" send {target} --enter 'echo driven-$((6*7))'"));
    assert_eq!(ran.code, 0, "driving is on: {ran:?}");
    w.server.wait_text(&target, "driven-42", WAIT);
    // Still never into the waiting pane.
    let typed = w.run_in(&s, &format!("\"$B\" send {v} --enter 'echo injected-$((6*7))'"));
    assert!(refused(&typed), "{typed:?}");
    // What the agent typed into `target` is the agent's act: that shell cannot answer.
    let ran = w.run_in(&target, &format!("\"$B\" decide {v} allow"));
    assert!(refused(&ran), "{ran:?}");
    w.flush(&v);
    assert!(!w.server.screen(&v).contains("injected-42"), "{}", w.server.screen(&v));
    assert!(w.still_pending(&v, &id));
    // A person's shell in a pane a person opened answers.
    let ran = w.run_in(&person, &format!("\"$B\" decide {v} deny"));
    assert_eq!(ran.code, 0, "{ran:?}");
    let out = poll(WAIT, "the hook's answer", || {
        std::fs::read_to_string(&answer).ok().filter(|s| s.contains("behavior"))
    });
    assert!(out.contains("\"deny\""), "{out}");
}

/// Regression: a process in one pane set another pane's agent and session through
/// `hook.event`, opened a decision card there, and planted a session with
/// `report-session --pane`. A pane speaks only for itself.
#[test]
fn a_pane_speaks_only_for_itself() {
    let w = World::new();
    let target = w.shell();
    let (v, answer) = w.agent();
    let payload = w.dir.join("session.json");
    std::fs::write(&payload, r#"{"hook_event_name":"SessionStart","session_id":"planted-1"}"#)
        .unwrap();
    let cross = w.dir.join("cross-request.json");
    std::fs::write(&cross, request().to_string()).unwrap();
    let ran = w.run_in(
        &v,
        &format!(
            "BERTH_PANE={target} \"$B\" hook claude < {p}\n\
             BERTH_PANE={target} \"$B\" hook claude < {r}\n\
             \"$B\" report-session --pane {target} --agent claude --session planted-2",
            p = payload.display(),
            r = cross.display()
        ),
    );
    assert!(ran.out.matches("not permitted").count() >= 3, "{ran:?}");
    let t = w.server.pane(&target).unwrap();
    assert_eq!(t["agent"]["session_id"], Value::Null, "{t}");
    assert_eq!(t["agent"]["kind"], "none", "{t}");
    assert_eq!(t["pending_decision"], Value::Null, "{t}");
    // Its own pane it may speak for.
    let own = w.run_in(&v, "\"$B\" report-session --agent claude --session own-1");
    assert_eq!(own.code, 0, "{own:?}");
    assert_eq!(w.server.pane(&v).unwrap()["agent"]["session_id"], "own-1");
    w.person_answers(&v, &answer, "deny");
}

/// Regression: any pane reported another pane's task (`task report --task`, or `BERTH_TASK`
/// with `BERTH_PANE` stripped). A task is reported from its own worker pane only.
#[test]
fn a_task_is_reported_only_from_its_worker() {
    let w = World::with(support::git::server_with_data_home());
    let repo = support::git::repo(&w.server, "app", &[("README.md", b"hello\n")]);
    let task = support::task::StubTask::labelled(&w.server, &repo, "trusted").start(&w.server);
    let id = task["id"].as_str().unwrap().to_owned();
    let (v, answer) = w.agent();
    let ran = w.run_in(
        &v,
        &format!(
            "\"$B\" task report --task {id} --status completed --summary forged-1\n\
             env -u BERTH_PANE BERTH_TASK={id} \"$B\" task report --status completed --summary forged-2"
        ),
    );
    // `--task` from another pane is not permitted; `BERTH_TASK` names nothing (the server
    // knows a worker by the pane it runs in, never by its environment).
    assert_eq!(ran.out.matches("not permitted").count(), 1, "{ran:?}");
    assert!(ran.out.contains("not in a task's worker pane"), "{ran:?}");
    let shown: Value =
        serde_json::from_str(&w.server.berth_ok(&["task", "show", "--json", &id])).unwrap();
    assert_eq!(shown["result"], Value::Null, "{shown}");
    assert_ne!(shown["state"], "completed", "{shown}");
    w.person_answers(&v, &answer, "deny");
}

/// Who made a pane outlives a restart: after the server comes back and the panes are resumed,
/// a pane an agent split off still cannot answer, and a person's pane still can.
#[test]
fn provenance_survives_a_restart() {
    let mut w = World::new();
    let person = w.shell();
    let (v, answer) = w.agent();
    let split = w.run_in(&v, "\"$B\" split \"$BERTH_PANE\" --right -- bash --norc --noprofile");
    let s = split.out.trim().to_owned();
    assert!(s.starts_with("pane_"), "{split:?}");
    w.person_answers(&v, &answer, "deny");
    w.server.restart();
    for pane in [&person, &s] {
        w.server.berth_ok(&["resume", pane]);
        w.settle(pane);
    }
    let (v2, answer) = w.agent();
    let ran = w.run_in(&s, &format!("\"$B\" decide {v2} allow"));
    assert!(refused(&ran), "{ran:?}");
    let ran = w.run_in(&person, &format!("\"$B\" decide {v2} deny"));
    assert_eq!(ran.code, 0, "{ran:?}");
    let out = poll(WAIT, "the hook's answer", || {
        std::fs::read_to_string(&answer).ok().filter(|s| s.contains("behavior"))
    });
    assert!(out.contains("\"deny\""), "{out}");
}

/// The server is a child subreaper: what a pane's program leaves behind is reparented to the
/// server (so it stays attributable) and reaped when it exits (no zombies pile up), while the
/// exit status of a pane's own child still reaches its pane.
#[test]
fn orphans_come_to_the_server_and_are_reaped() {
    let w = World::new();
    let pane = w.shell();
    let server = w.server.pid();
    let children = || -> Vec<(i32, char, String)> {
        let mut found = Vec::new();
        for task in std::fs::read_dir(format!("/proc/{server}/task")).unwrap().flatten() {
            let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in text.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    continue;
                };
                let comm = stat[stat.find('(').unwrap() + 1..stat.rfind(')').unwrap()].to_owned();
                let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
                found.push((pid, state, comm));
            }
        }
        found
    };
    // Twenty orphans: each subshell exits at once, leaving its `sleep` without a parent.
    let ran = w.run_in(&pane, "for i in $(seq 20); do ( sleep 1.5 & ); done");
    assert_eq!(ran.code, 0, "{ran:?}");
    let adopted = children().iter().filter(|(_, _, c)| c == "sleep").count();
    assert!(adopted >= 10, "the orphans were not reparented to the server: {:?}", children());
    poll(WAIT, "the orphans to exit and be reaped", || {
        let left: Vec<_> =
            children().into_iter().filter(|(_, s, c)| c == "sleep" || *s == 'Z').collect();
        left.is_empty().then_some(())
    });
    // A pane's own child is its waiter's: its exit code is not taken by the reaper.
    let exited = w.server.berth_ok(&["new", "--", "sh", "-c", "exit 7"]);
    poll(WAIT, "the pane's exit code", || {
        (w.server.pane(&exited)?["exit_code"] == 7).then_some(())
    });
}

// ---- the property ----

/// Who runs a step: a process in one of the panes, in some disguise.
#[derive(Debug, Clone, Copy)]
enum Disguise {
    /// As it is.
    Plain,
    /// `BERTH_PANE` removed.
    NoPane,
    /// `BERTH_PANE` naming another pane.
    OtherPane,
    /// Left behind by a subshell that exited (an orphan of the server).
    Orphan,
    /// In a session of its own, orphaned (`setsid -f`).
    Setsid,
}

/// What a step asks.
#[derive(Debug, Clone, Copy)]
enum Act {
    Decide(&'static str),
    Send,
    Submit,
    SplitOff,
    DriveAnother,
    ReportForIt,
}

/// One step: which actor (an index into the actors so far), what, in which disguise.
#[derive(Debug, Clone, Copy)]
struct Step {
    actor: usize,
    act: Act,
    disguise: Disguise,
}

fn step_strategy() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    let act = prop_oneof![
        Just(Act::Decide("allow")),
        Just(Act::Decide("always")),
        Just(Act::Decide("deny")),
        Just(Act::Send),
        Just(Act::Submit),
        Just(Act::SplitOff),
        Just(Act::DriveAnother),
        Just(Act::ReportForIt),
    ];
    let disguise = prop_oneof![
        Just(Disguise::Plain),
        Just(Disguise::NoPane),
        Just(Disguise::OtherPane),
        Just(Disguise::Orphan),
        Just(Disguise::Setsid),
    ];
    (0usize..8, act, disguise).prop_map(|(actor, act, disguise)| Step { actor, act, disguise })
}

/// Random sequences of calls from processes inside panes never answer the agent's pending
/// decision nor type into its pane. The actors: the agent's own pane, panes split off by an
/// agent, a person's pane once an agent typed into it (the workspace lets agents drive, so it
/// can); each step in a disguise (environment changed, orphaned, in its own session).
#[test]
fn no_process_in_a_pane_answers_or_types_into_a_waiting_pane() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let config =
        Config { cases: 6, max_shrink_iters: 2, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let steps = proptest::collection::vec(step_strategy(), 3..8);
    runner
        .run(&steps, |steps| {
            let w = World::new();
            let person = w.shell();
            let (v, answer) = w.agent();
            let id = w.pending(&v)["id"].clone();
            let ws = w.server.list()["workspaces"][0]["name"].as_str().unwrap().to_owned();
            // (Checked by the prelude below: the drive must succeed.)
            let _ = w.server.berth(&["workspace", "agent-drive", &ws, "on"]);
            let mut actors = vec![v.clone()];
            // Every case starts with the agent splitting a pane off and that pane typing into
            // the person's pane (allowed here), so all three kinds of actor take part.
            let prelude = [
                Step { actor: 0, act: Act::SplitOff, disguise: Disguise::Plain },
                Step { actor: 1, act: Act::DriveAnother, disguise: Disguise::Plain },
            ];
            for (i, step) in prelude.iter().chain(&steps).enumerate() {
                if i == prelude.len() && actors.len() != 3 {
                    return Err(TestCaseError::fail(format!("the prelude made {actors:?}")));
                }
                let actor = actors[step.actor % actors.len()].clone();
                let call = match step.act {
                    Act::Decide(a) => format!("decide {v} {a}"),
                    Act::Send => format!("send {v} --enter 'echo injected-$((6*7))'"),
                    Act::Submit => format!("submit {v} 'echo injected-$((6*7))'"),
                    Act::SplitOff => format!("split {v} --down -- bash --norc --noprofile"),
                    Act::DriveAnother => format!("send {person} --enter 'echo driven'"),
                    Act::ReportForIt => format!("report-session --pane {v} --agent claude --session x-1"),
                };
                let other = if actor == person { v.clone() } else { person.clone() };
                let inner = match step.disguise {
                    Disguise::Plain | Disguise::Orphan | Disguise::Setsid => format!("\"$B\" {call}"),
                    Disguise::NoPane => format!("env -u BERTH_PANE \"$B\" {call}"),
                    Disguise::OtherPane => format!("BERTH_PANE={other} \"$B\" {call}"),
                };
                let n = w.next();
                let done = w.dir.join(format!("orphan-{n}"));
                let body = format!("{inner} > {d}.out 2>&1; echo rc=$? >> {d}.out; touch {d}", d = done.display());
                let script = match step.disguise {
                    Disguise::Orphan => format!("( ( {body} ) & )"),
                    Disguise::Setsid => {
                        format!("export B; setsid -f bash -c '{}'", body.replace('\'', "'\\''"))
                    }
                    _ => body,
                };
                w.run_in(&actor, &script);
                poll(WAIT, "the step to finish", || done.exists().then_some(()));
                let out = std::fs::read_to_string(format!("{}.out", done.display())).unwrap_or_default();
                if let Act::SplitOff = step.act {
                    if let Some(pane) = out.lines().map(str::trim).find(|l| l.starts_with("pane_")) {
                        w.settle(pane);
                        actors.push(pane.to_owned());
                    }
                }
                if let Act::DriveAnother = step.act {
                    if out.contains("rc=0") && !actors.contains(&person) {
                        // The agent typed into the person's pane: it is the agent's now.
                        actors.push(person.clone());
                    }
                }
                let still = w.still_pending(&v, &id);
                let hook = std::fs::read_to_string(&answer).unwrap_or_default();
                if !still || hook.contains("behavior") {
                    return Err(TestCaseError::fail(format!(
                        "after {step:?} by {actor}: pending {still}, hook said {hook:?}, step said {out:?}"
                    )));
                }
            }
            w.flush(&v);
            let screen = w.server.screen(&v);
            if screen.contains("injected-42") {
                return Err(TestCaseError::fail(format!("input reached the waiting pane:\n{screen}")));
            }
            w.person_answers(&v, &answer, "deny");
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Issue 30: an agent closing another pane asks the person first, with a decision in its own
/// pane; a denial leaves the pane running, an allow closes it; no one in the agent's pane can
/// answer it.
#[test]
fn an_agent_closes_another_pane_only_with_the_persons_consent() {
    let w = World::new();
    let target = w.shell();
    let (v, answer) = w.agent();
    w.person_answers(&v, &answer, "allow");
    let out = w.dir.join("close.out");
    // Typed into the agent's shell, so that the close keeps its parent (the agent's shell)
    // while it waits: a script's background job would be an orphan, refused outright.
    let close = format!("{} close {target} > {} 2>&1 &", w.berth(), out.display());
    w.server.berth_ok(&["send", &v, "--enter", &close]);
    let asked = w.pending(&v);
    let prompt = asked["prompt"].as_str().unwrap();
    assert!(prompt.ends_with(&format!("asks to close pane {target}")), "{asked}");
    let ran = w.run_in(&v, &format!("\"$B\" decide {v} allow"));
    assert!(refused(&ran), "{ran:?}");
    w.server.berth_ok(&["decide", &v, "deny"]);
    let said = poll(WAIT, "the close to be refused", || {
        std::fs::read_to_string(&out).ok().filter(|s| s.contains("declined"))
    });
    assert!(said.contains("not permitted"), "{said}");
    assert!(w.server.pane(&target).is_some(), "a denial leaves the pane");
    std::fs::remove_file(&out).unwrap();
    w.server.berth_ok(&["send", &v, "--enter", &close]);
    w.pending(&v);
    w.server.berth_ok(&["decide", &v, "allow"]);
    poll(WAIT, "the pane to close", || w.server.pane(&target).is_none().then_some(()));
}

/// Review comments go to a task's worker as a prompt into its pane: sent by an agent, they
/// wait on the person's consent, and a denial sends nothing (regression: `task.send_comments`
/// reached the worker's pane from any caller, past the input rules).
#[test]
fn an_agent_sends_review_comments_only_with_the_persons_consent() {
    let w = World::with(support::git::server_with_data_home());
    let repo = support::git::repo(&w.server, "app", &[("README.md", b"hello\n")]);
    let task = support::task::StubTask::labelled(&w.server, &repo, "reviewed").start(&w.server);
    let id = task["id"].as_str().unwrap().to_owned();
    w.server.berth_ok(&["task", "comment", &id, "README.md:1", "say hello louder"]);
    let (v, answer) = w.agent();
    w.person_answers(&v, &answer, "allow");
    let out = w.dir.join("send.out");
    let send = format!("{} task send {id} > {} 2>&1 &", w.berth(), out.display());
    w.server.berth_ok(&["send", &v, "--enter", &send]);
    let asked = w.pending(&v);
    let prompt = asked["prompt"].as_str().unwrap();
    assert!(
        prompt.ends_with("asks to send review comments to the worker of task reviewed"),
        "{asked}"
    );
    w.server.berth_ok(&["decide", &v, "deny"]);
    let said = poll(WAIT, "the send to be refused", || {
        std::fs::read_to_string(&out).ok().filter(|s| s.contains("declined"))
    });
    assert!(said.contains("not permitted"), "{said}");
    let shown: Value =
        serde_json::from_str(&w.server.berth_ok(&["task", "show", "--json", &id])).unwrap();
    assert_eq!(shown["comments"].as_array().map(Vec::len), Some(1), "nothing sent: {shown}");
}

// ---- every method, called from an agent's pane against the others ----

/// A relay run by an agent's pane: every connection to `listen` is passed on to Berth's socket
/// by this process, inside the pane, so that Berth judges each one as that pane's (by its
/// ancestry), whatever the test sends through it.
const RELAY: &str = r#"
import socket, sys, threading
listen, target = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX)
server.bind(listen)
server.listen(64)
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    client, _ = server.accept()
    berth = socket.socket(socket.AF_UNIX)
    berth.connect(target)
    threading.Thread(target=pump, args=(client, berth), daemon=True).start()
    threading.Thread(target=pump, args=(berth, client), daemon=True).start()
"#;

/// What the rules must do with a method called by an agent against another pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// It writes into another pane's program, closes it, answers its question, prompts a
    /// task's worker, changes a task, widens what agents may do, or moves the person's focus
    /// or hides what needs them (focus, attention, unread marks, a window's view): refused,
    /// or asked of the person (who denies here).
    Guarded,
    /// It acts on nothing of another pane's: it may run, and must leave every pane as it was.
    Inert,
}

/// How a call from the agent's pane ended.
#[derive(Debug)]
enum Came {
    /// Its answer, at once.
    Answer(Value),
    /// A decision opened in the agent's own pane (its prompt); the person denied it, and this
    /// is the call's answer after.
    Asked(String, Value),
}

/// The panes and things the agent's calls aim at.
struct Aims {
    /// The agent's pane (its program is named `claude`): the caller.
    agent: String,
    /// A person's pane beside it, a raw `cat` logging every byte its program reads.
    typed: String,
    typed_log: PathBuf,
    typed_tab: String,
    workspace: String,
    /// A pane with a permission request open on its card (opened by the person).
    asking: String,
    asking_id: Value,
    /// A task the person started (the stub agent works it) and its worker pane.
    task: String,
    worker: String,
    worker_log: PathBuf,
    /// A notification the typed pane's program raised asking for click reports (kitty).
    note: String,
    repo: PathBuf,
}

/// Every method of the protocol with its params aimed at another pane, and its rule; in the
/// order they are called (what would end the task, were it let through, last).
fn every_method(a: &Aims, layout: &Value, shot: &Path) -> Vec<(&'static str, Value, Rule)> {
    use Rule::*;
    let (b, tab, ws, task) = (&a.typed, &a.typed_tab, &a.workspace, &a.task);
    let sleeper = json!(["sleep", "600"]);
    vec![
        ("server.info", json!({}), Inert),
        ("workspace.list", json!({}), Inert),
        ("workspace.create", json!({ "name": "agent-made" }), Inert),
        ("workspace.rename", json!({ "workspace_id": ws, "name": "renamed" }), Inert),
        ("workspace.close", json!({ "workspace_id": ws }), Guarded),
        ("workspace.set_auto_resume", json!({ "workspace_id": ws, "enabled": true }), Guarded),
        ("workspace.set_agent_drive", json!({ "workspace_id": ws, "enabled": true }), Guarded),
        ("tab.create", json!({ "argv": sleeper }), Inert),
        ("tab.close", json!({ "tab_id": tab }), Guarded),
        ("tab.rename", json!({ "tab_id": tab, "title": "renamed" }), Inert),
        ("tab.move", json!({ "tab_id": tab, "index": 0 }), Inert),
        ("tab.set_ratio", json!({ "tab_id": tab, "path": [], "ratio": 0.3 }), Inert),
        ("tab.set_layout", json!({ "tab_id": tab, "layout": layout }), Inert),
        ("tab.resize", json!({ "tab_id": tab, "cols": 100, "rows": 30 }), Inert),
        ("pane.spawn", json!({ "argv": sleeper }), Inert),
        ("pane.split", json!({ "pane_id": b, "dir": "down", "argv": sleeper }), Inert),
        ("pane.close", json!({ "pane_id": b }), Guarded),
        ("pane.send", json!({ "pane_id": b, "text": "sent", "keys": ["Enter"] }), Guarded),
        ("pane.input", json!({ "pane_id": b, "data": b"input".to_vec() }), Guarded),
        ("pane.read", json!({ "pane_id": b }), Inert),
        ("pane.resize", json!({ "pane_id": b, "cols": 90, "rows": 20 }), Inert),
        ("pane.focus", json!({ "pane_id": b }), Guarded),
        // Only a restored pane resumes; a live one is refused for anyone.
        ("pane.resume", json!({ "pane_id": b }), Inert),
        ("pane.clear_attention", json!({ "pane_id": b }), Guarded),
        ("pane.submit", json!({ "pane_id": b, "text": "submitted" }), Guarded),
        ("pane.wait", json!({ "pane_id": b, "until": "exited", "timeout_ms": 100 }), Inert),
        (
            "session.report",
            json!({ "pane_id": b, "agent": "claude", "session_id": "planted-1",
                    "resume_argv": ["sh", "-c", "echo planted"], "explicit_pane": true }),
            Guarded,
        ),
        ("notify", json!({ "pane_id": b, "title": "from the agent" }), Inert),
        ("notifications.list", json!({}), Inert),
        ("notifications.mark_read", json!({ "pane_id": b }), Guarded),
        (
            "hook.event",
            json!({ "pane_id": b, "agent": "claude",
                    "payload": { "hook_event_name": "SessionStart", "session_id": "planted-2" } }),
            Guarded,
        ),
        ("pane.decide", json!({ "pane_id": a.asking, "answer": "allow" }), Guarded),
        ("decision.list", json!({}), Inert),
        (
            "decision.request",
            json!({ "pane_id": b, "agent": "claude", "payload": request(), "wait_ms": 1000 }),
            Guarded,
        ),
        ("events.subscribe", json!({}), Inert),
        ("snapshot.save", json!({}), Inert),
        ("window.screenshot", json!({ "path": shot }), Inert),
        (
            "task.start",
            json!({ "repo": a.repo.join("no-such-dir"), "agent": "claude",
                    "contract": { "objective": "nothing" } }),
            Inert,
        ),
        (
            "task.report",
            json!({ "task_id": task, "status": "completed", "summary": "forged" }),
            Guarded,
        ),
        ("task.list", json!({}), Inert),
        ("task.show", json!({ "task_id": task }), Inert),
        ("task.wait", json!({ "task_id": task, "timeout_ms": 100 }), Inert),
        ("task.revert_turn", json!({ "task_id": task }), Guarded),
        (
            "task.comment",
            json!({ "task_id": task, "path": "a.txt", "start": 1, "text": "from the agent",
                    "send": true }),
            Guarded,
        ),
        ("task.send_comments", json!({ "task_id": task }), Guarded),
        ("diff.files", json!({ "target": task }), Inert),
        ("diff.file", json!({ "target": task, "path": "a.txt" }), Inert),
        ("workspace.refresh_git", json!({}), Inert),
        ("worktree.list", json!({ "repo": a.repo }), Inert),
        ("screen.frames", json!({ "panes": [{ "pane_id": b }] }), Inert),
        ("pane.search", json!({ "pane_id": b, "query": "x" }), Inert),
        ("window.attach", json!({ "header_rows": 0 }), Guarded),
        ("window.servers", json!({ "add": "/tmp/planted.sock" }), Guarded),
        ("window.review", json!({ "task_id": task }), Inert),
        (
            "window.view",
            json!({ "visible": [b], "focused_pane_id": b, "window_focused": false }),
            Guarded,
        ),
        ("notification.activate", json!({ "notification_id": a.note }), Guarded),
        // Last: what would end the task if it were let through.
        ("task.finish", json!({ "task_id": task, "discard": true }), Guarded),
        ("task.cancel", json!({ "task_id": task }), Guarded),
    ]
}

/// The agent's world: the test is the person; every call of the agent's goes through the
/// relay in its pane.
struct Guard {
    w: World,
    relay: PathBuf,
    aims: Aims,
    /// The person's open `decision.request` for the asking pane (its answer comes here).
    asked: std::io::BufReader<std::os::unix::net::UnixStream>,
    /// The markers the person typed into the typed pane, in order.
    typed: String,
}

impl Guard {
    fn new() -> Guard {
        use std::io::Write as _;
        let w = World::with(support::git::server_with_data_home());
        let server = &w.server;
        let repo = support::git::repo(server, "guarded", &[("a.txt", b"one\n")]);
        // A task the person started; its worker's turn ends without a report.
        let stub = support::task::StubTask::labelled(server, &repo, "guarded");
        let task = stub.start(server);
        let id = task["id"].as_str().unwrap().to_owned();
        let worker = task["pane_id"].as_str().expect("a worker pane").to_owned();
        let settled = poll(WAIT, "the worker's turn to end", || {
            let shown = w.task(&id);
            (shown["state"] == "input_required").then_some(shown)
        });
        assert!(settled["checkpoints"].as_array().is_some_and(|c| !c.is_empty()), "{settled}");
        server.call(
            "task.comment",
            json!({ "task_id": id, "path": "a.txt", "start": 1, "text": "say one louder" }),
        );
        // The agent: its pane's program is named `claude` and runs the relay.
        let relay = server.root.path().join("relay.sock");
        let script = w.dir.join("claude");
        let relay_py = w.dir.join("relay.py");
        std::fs::write(&relay_py, RELAY).unwrap();
        std::fs::write(
            &script,
            format!(
                "#!/bin/bash\n'{}' '{}' '{}' '{}'\n",
                support::task::python(),
                relay_py.display(),
                relay.display(),
                server.socket.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let agent = server.berth_ok(&["new", "--", &script.display().to_string()]);
        poll(WAIT, "the relay to listen", || relay.exists().then_some(()));
        // A person's pane in the agent's workspace: its program asks for click reports on a
        // notification, then logs every byte it reads.
        let typed_log = w.dir.join("typed.log");
        let program = format!(
            r"printf '\033]99;i=guard:a=report;click me\033\\'; stty raw -echo; exec cat > '{}'",
            typed_log.display()
        );
        let spawned = server.call("pane.spawn", json!({ "argv": ["bash", "-c", program] }));
        let typed = spawned["pane_id"].as_str().unwrap().to_owned();
        let note = poll(WAIT, "the program's notification", || {
            let list = server.call("notifications.list", json!({}));
            let notes = list["notifications"].as_array()?.clone();
            let n = notes.iter().find(|n| n["pane_id"] == typed.as_str())?;
            n["id"].as_str().map(str::to_owned)
        });
        let listed = server.list();
        let (mut typed_tab, mut workspace) = (String::new(), String::new());
        for ws in listed["workspaces"].as_array().unwrap() {
            for tab in ws["tabs"].as_array().unwrap() {
                if tab.to_string().contains(&typed) {
                    typed_tab = tab["id"].as_str().unwrap().to_owned();
                    workspace = ws["id"].as_str().unwrap().to_owned();
                }
            }
        }
        assert!(!typed_tab.is_empty(), "{listed}");
        assert!(listed.to_string().contains(&agent), "{listed}");
        // A pane with a permission request on its card, opened by the person.
        let asking = server.call("pane.spawn", json!({ "argv": ["sleep", "600"] }));
        let asking = asking["pane_id"].as_str().unwrap().to_owned();
        let mut stream = std::os::unix::net::UnixStream::connect(&server.socket).unwrap();
        let open = json!({ "jsonrpc": "2.0", "id": 1, "method": "decision.request",
            "params": { "pane_id": asking, "agent": "claude", "payload": request(),
                        "wait_ms": 300_000 } });
        stream.write_all(format!("{open}\n").as_bytes()).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let asked = std::io::BufReader::new(stream);
        let asking_id = w.pending(&asking)["id"].clone();
        let aims = Aims {
            agent,
            typed,
            typed_log,
            typed_tab,
            workspace,
            asking,
            asking_id,
            task: id,
            worker,
            worker_log: stub.log().to_owned(),
            note,
            repo,
        };
        let mut guard = Guard { w, relay, aims, asked, typed: String::new() };
        guard.flush_typed("<start>").expect("only the person typed yet");
        guard
    }

    /// Sends one request through the relay and waits for its answer; a decision opening in
    /// the agent's pane meanwhile is denied by the person.
    fn agent_call(&self, method: &str, params: &Value) -> Came {
        use std::io::{BufRead as _, Write as _};
        let mut stream = std::os::unix::net::UnixStream::connect(&self.relay).unwrap();
        let line = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        stream.write_all(format!("{line}\n").as_bytes()).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut reader = std::io::BufReader::new(stream);
        let mut answer = String::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(40);
        loop {
            match reader.read_line(&mut answer) {
                Ok(0) => panic!("{method}: the connection ended without an answer"),
                Ok(_) => return Came::Answer(serde_json::from_str(&answer).unwrap()),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("{method}: {e}"),
            }
            let pending =
                self.w.server.pane(&self.aims.agent).map(|p| p["pending_decision"].clone());
            if let Some(d) = pending.filter(|d| d["answerable"] == true) {
                let prompt = d["prompt"].as_str().unwrap_or_default().to_owned();
                self.w
                    .server
                    .call("pane.decide", json!({ "pane_id": self.aims.agent, "answer": "deny" }));
                reader.get_ref().set_read_timeout(Some(WAIT)).unwrap();
                reader.read_line(&mut answer).unwrap();
                return Came::Asked(prompt, serde_json::from_str(&answer).unwrap());
            }
            assert!(std::time::Instant::now() < deadline, "{method}: no answer and nothing asked");
        }
    }

    /// The person types `marker` into the typed pane and waits until its program read it:
    /// everything written to it before has been read by then, so its log must hold exactly
    /// the person's markers.
    fn flush_typed(&mut self, marker: &str) -> Result<(), String> {
        self.w.server.call(
            "pane.input",
            json!({ "pane_id": self.aims.typed, "data": marker.as_bytes().to_vec() }),
        );
        self.typed.push_str(marker);
        let log = poll(WAIT, "the typed pane to read the marker", || {
            let log = std::fs::read(&self.aims.typed_log).ok()?;
            log.ends_with(marker.as_bytes()).then_some(log)
        });
        let log = String::from_utf8_lossy(&log).into_owned();
        if log == self.typed {
            return Ok(());
        }
        let extra = log.get(self.typed.len() - marker.len()..).unwrap_or(&log).to_owned();
        // Checked from here on against what the pane holds now.
        self.typed = log;
        Err(format!("something else reached the typed pane: {extra:?}"))
    }

    /// What the worker's program was handed: the stub's pastes, Enters and submits.
    fn worker_input(&self) -> usize {
        let log = std::fs::read_to_string(&self.aims.worker_log).unwrap_or_default();
        log.lines()
            .filter(|l| {
                ["\"paste\"", "\"enter\"", "\"submit\"", "\"joined\""].iter().any(|e| l.contains(e))
            })
            .count()
    }

    /// What must not change: panes, the open question, the task, the workspaces' settings.
    fn state(&self) -> Value {
        let s = &self.w.server;
        let a = &self.aims;
        let pane = |id: &str| {
            s.pane(id).map(|p| {
                json!({ "state": p["state"], "exit": p["exit_code"], "session": p["agent"]["session_id"],
                        "decision": p["pending_decision"]["id"] })
            })
        };
        let task = self.w.task(&a.task);
        // The workspaces whose agents may drive, or that resume on their own (new ones the
        // agent makes are its to make).
        let drive: Vec<Value> = s.list()["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["agent_drive"] != false || w["auto_resume"] != false)
            .map(|w| w["id"].clone())
            .collect();
        json!({
            "typed": pane(&a.typed), "asking": pane(&a.asking), "worker": pane(&a.worker),
            "task": [task["state"], task["disposition"], task["result"], task["comments"]],
            "worker_input": self.worker_input(), "workspaces": drive,
        })
    }
}

/// Whether a call ended as its rule asks: a guarded one refused as the agent's, or asked of
/// the person and declined; an inert one never asks.
fn judged(rule: Rule, came: &Came, own: &str) -> Result<(), String> {
    match (rule, came) {
        (Rule::Guarded, Came::Answer(answer)) => {
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            if answer["error"]["data"]["code"] != "NOT_PERMITTED" {
                return Err(format!("let through: {answer}"));
            }
            if !message.contains(own) {
                return Err(format!("not judged as the agent's pane: {message}"));
            }
            Ok(())
        }
        (Rule::Guarded, Came::Asked(prompt, answer)) => {
            if !prompt.contains(" asks to ") {
                return Err(format!("asked oddly: {prompt}"));
            }
            if answer["error"]["data"]["code"] != "NOT_PERMITTED"
                || !answer.to_string().contains("declined")
            {
                return Err(format!("went on after the person declined: {answer}"));
            }
            Ok(())
        }
        (Rule::Inert, Came::Asked(prompt, _)) => Err(format!("an inert method asked: {prompt}")),
        (Rule::Inert, Came::Answer(_)) => Ok(()),
    }
}

impl World {
    /// A task's record (`task.show`).
    fn task(&self, id: &str) -> Value {
        self.server.call("task.show", json!({ "task_id": id }))
    }
}

/// Hardening (the last session's debt): every method of the protocol, from the method table
/// itself, called by a process in an agent's pane with its params aimed at other panes: at a
/// person's pane (typing, pasting, submitting, closing it, its tab and workspace, speaking
/// for it, activating its program's notification), at a pane whose permission request is
/// open (answering it), and at a task the person started (reporting, merging, cancelling,
/// reverting, prompting its worker with review comments). A method that does any of those is
/// refused (`NOT_PERMITTED`, naming the agent's pane) or asks the person (a decision in the
/// agent's own pane, denied here); and whatever a method is, nothing of the other panes
/// changes: no byte reaches their programs, none closes, the question stays open, the task
/// stays as it was. A method added to the table without a row here fails the test, and one
/// that writes into another pane without the check fails it whatever its row says.
/// Regressions: `task.cancel` closed the worker's pane, `task.comment` with `send` prompted
/// it, and `notification.activate` wrote a forged click report into the program's pane, all
/// for any caller.
#[test]
fn no_method_lets_an_agent_act_on_another_pane_without_the_person() {
    let mut g = Guard::new();
    let layout = g.w.server.list()["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w["tabs"].as_array().unwrap().clone())
        .find(|t| t["id"] == g.aims.typed_tab.as_str())
        .map(|t| t["layout"].clone())
        .unwrap();
    let shot = g.w.dir.join("shot.png");
    let cases = every_method(&g.aims, &layout, &shot);
    let mut named: Vec<&str> = cases.iter().map(|(m, _, _)| *m).collect();
    named.sort_unstable();
    let mut methods = berth_server::protocol::METHODS.to_vec();
    methods.sort_unstable();
    assert_eq!(named, methods, "every method of the table has exactly one row here");
    // Each row's params are what the method takes: it runs, and is judged on what it does.
    for (method, params, _) in &cases {
        if let Err(e) = berth_server::protocol::decode_method(method, params.clone()) {
            panic!("{method}: the row's params do not decode: {e}");
        }
    }
    let start = g.state();
    let own = format!("pane {}", g.aims.agent);
    let mut wrong = Vec::new();
    for (i, (method, params, rule)) in cases.iter().enumerate() {
        let before = g.state();
        let came = g.agent_call(method, params);
        if let Err(why) = judged(*rule, &came, &own) {
            wrong.push(format!("{method}: {why}"));
        }
        if let Err(why) = g.flush_typed(&format!("<{i}>")) {
            wrong.push(format!("{method} ({came:?}): {why}"));
        }
        let after = g.state();
        if after != before {
            wrong.push(format!(
                "{method} ({came:?}) changed another pane's world:\n  before {before}\n  after  {after}"
            ));
        }
        if !g.w.still_pending(&g.aims.asking, &g.aims.asking_id) {
            wrong.push(format!("{method} ({came:?}): the open question is gone"));
        }
    }
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
    assert_eq!(g.state(), start);

    // The same acts by the person: each effect looked for above is seen when it happens.
    let a = &g.aims;
    g.w.server.call("notification.activate", json!({ "notification_id": a.note }));
    poll(WAIT, "the click report in the program's input", || {
        let log = std::fs::read(&a.typed_log).ok()?;
        String::from_utf8_lossy(&log).contains("\u{1b}]99;i=guard;").then_some(())
    });
    let input = g.worker_input();
    g.w.server.call("task.send_comments", json!({ "task_id": a.task }));
    poll(WAIT, "the comments in the worker's input", || (g.worker_input() > input).then_some(()));
    g.w.server.call("pane.decide", json!({ "pane_id": a.asking, "answer": "deny" }));
    let mut answer = String::new();
    std::io::BufRead::read_line(&mut g.asked, &mut answer).unwrap();
    assert!(answer.contains("deny"), "{answer}");
    g.w.server.call("pane.close", json!({ "pane_id": a.typed }));
    poll(WAIT, "the typed pane to close", || g.w.server.pane(&a.typed).is_none().then_some(()));
}
