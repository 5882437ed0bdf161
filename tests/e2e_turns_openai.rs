//! Real turns with the real codex and opencode (issue 26): codex 0.171.0 and opencode 1.18.33
//! from npm (`scripts/test-agents`) in Berth panes, talking to a scripted OpenAI API on
//! loopback (`tests/support/model_openai.py`: the Responses API for codex, Chat Completions
//! for opencode; one server for the whole binary), each case with its own Berth server and
//! private HOME, no network. Asserted from `berth events` (a watcher records every pane's
//! lifecycle and attention) and `berth ls --json`, never from sleeps.
//!
//! The cases here are the ones that prove issue 26's codex and opencode defects:
//! - opencode: a pending decision shows exactly `metadata.command` (defect 4), `decide allow`
//!   reaches opencode through the plugin's SDK client and the command runs (defect 3), the
//!   turn ends `done` with its events applied in order, and the plugin forwards only the
//!   events Berth reads (defect 5);
//! - codex: a task's worker commits and reports although `bash -lc`'s profile resets PATH
//!   (defect 6);
//! - submit reaching the model exactly, and allow/deny, for both;
//! - codex (its section at the end): a 32 KiB prompt; deny with and without a message, the
//!   model getting the denial; Berth's hook wait expiring, then yes and no in codex's own
//!   dialog (codex's `PostToolUse` takes the dead card back); Escape while working and while
//!   blocked; a restart mid-conversation → `RESUMABLE` → `berth resume` → the model gets the
//!   earlier turn. Each ends with the right lifecycle and attention and a usable pane.
//!
//! - opencode (its section at the end): a 32 KiB prompt; deny with and without a message;
//!   yes and no in opencode's own dialog; Escape while working (one Escape does not interrupt
//!   opencode: Berth showed `idle` while it worked on; the interrupt's `MessageAbortedError`
//!   was shown as `error` attention) and while blocked; a restart mid-conversation →
//!   `RESUMABLE` → `berth resume` (`opencode --session`) → the model gets the earlier turn; a
//!   task with opencode as worker (its prompt was pasted before opencode's prompt box took
//!   input, and lost whole).
//!
//! Skipped (passing, with a message) unless `BERTH_AGENTS_NPM` names the agents' npm prefix.

mod support;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use support::git::{git, repo};
use support::real_agents::*;
use support::*;

/// How long one step of a turn may take.
const TURN: Duration = Duration::from_secs(90);
const KEY: &str = "sk-berth-test-not-a-key";

// ---- the scripted model ----

struct Model {
    url: String,
    log: PathBuf,
    _child: Mutex<Child>,
}

/// Codex's shell tool, asking to run outside its sandbox (so that codex asks).
fn codex_shell(command: &str) -> Value {
    json!({
        "tool": "exec_command",
        "input": {
            "cmd": command,
            "sandbox_permissions": "require_escalated",
            "justification": "A step of the Berth test",
        },
        "delay": 1.0,
    })
}

/// opencode's `bash` tool.
fn opencode_bash(command: &str) -> Value {
    json!({
        "tool": "bash",
        "input": { "command": command, "description": "A step of the Berth test" },
        "delay": 1.0,
    })
}

fn say(text: &str) -> Value {
    json!({ "text": text })
}

/// The command opencode is asked to run: a redirection and `&&`, whose `patterns` differ from
/// the command (`echo a > f`, `echo b`).
const OC_ALLOW: &str = "echo berth-oc-ran > oc.txt && echo berth-oc-second";

/// The command codex's task worker runs: commit, then report as the task's prompt says.
const TASK_COMMAND: &str = "printf 'made by codex\\n' > new.txt && git add new.txt && \
     git commit -qm 'Add new.txt' && {report} --status completed --summary 'Added new.txt'";

fn script() -> Value {
    let mut cases = json!({
        "C-MULTI": [say("multi-line prompt received")],
        "C-ALLOW": [codex_shell("echo berth-allow-ran | tee allow.txt"), say("allow: the command ran")],
        "C-DENY": [codex_shell("echo no > denied.txt"), say("deny: understood")],
        "C-TASK": [codex_shell(TASK_COMMAND), say("The task is done and reported.")],
        "O-MULTI": [say("multi-line prompt received")],
        "O-ALLOW": [opencode_bash(OC_ALLOW), say("allow: the command ran")],
        "O-DENY": [opencode_bash("echo no > denied.txt"), say("deny: understood")],
    });
    for more in [codex_cases(), opencode_cases()] {
        cases.as_object_mut().unwrap().extend(more.as_object().unwrap().clone());
    }
    json!({ "cases": cases })
}

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("berth-model-openai-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (script_path, log, port) =
            (dir.join("script.json"), dir.join("requests.jsonl"), dir.join("port"));
        fs::write(&script_path, script().to_string()).unwrap();
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/model_openai.py");
        let child = std::process::Command::new(support::task::python())
            .arg(server)
            .arg("--script")
            .arg(&script_path)
            .arg("--log")
            .arg(&log)
            .arg("--port-file")
            .arg(&port)
            .arg("--parent")
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .spawn()
            .expect("start the scripted model (python3)");
        let port = poll(Duration::from_secs(20), "the scripted model to listen", || {
            fs::read_to_string(&port).ok()?.trim().parse::<u16>().ok()
        });
        Model { url: format!("http://127.0.0.1:{port}/v1"), log, _child: Mutex::new(child) }
    })
}

impl Model {
    fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The main calls answered from `marker`'s script at `step`, in order.
    fn calls(&self, marker: &str, step: u64) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["kind"] == "main" && r["marker"] == marker && r["step"] == step)
            .map(|r| r["body"].clone())
            .collect()
    }
}

/// The user prompts of a request (Responses `input` or Chat `messages`), as text.
fn user_texts(body: &Value) -> Vec<String> {
    let text = |content: &Value| match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    };
    let items = body["messages"].as_array().or_else(|| body["input"].as_array());
    items
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| text(&m["content"]))
        .collect()
}

/// The output of the tool the last request item carries (codex `function_call_output`, opencode
/// a `tool` message).
fn tool_output(body: &Value) -> Option<String> {
    if let Some(messages) = body["messages"].as_array() {
        let last = messages.iter().rev().find(|m| m["role"] == "tool")?;
        return Some(match &last["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    let input = body["input"].as_array()?;
    let last = input.iter().rev().find(|i| i["type"] == "function_call_output")?;
    Some(match &last["output"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

// ---- a world ----

#[derive(Default)]
struct Seen {
    events: Vec<Value>,
    states: Vec<(String, String, String)>,
}

struct Watcher {
    seen: Arc<Mutex<Seen>>,
    _events: Killed,
}

impl Watcher {
    fn start(server: &TestServer) -> Watcher {
        let mut child = server
            .command()
            .arg("events")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("berth events");
        let stdout = child.stdout.take().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (record, socket) = (seen.clone(), server.socket.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(event) = serde_json::from_str::<Value>(&line) else { continue };
                let about_pane = event["type"].as_str().is_some_and(|t| t.starts_with("pane."));
                let snapshot = about_pane
                    .then(|| Client::connect(&socket).ok()?.call("workspace.list", json!({})).ok())
                    .flatten();
                let mut seen = record.lock().unwrap();
                seen.events.push(event);
                for pane in snapshot.as_ref().map(panes_of).unwrap_or_default() {
                    let state = (
                        pane["id"].as_str().unwrap_or_default().to_owned(),
                        pane["lifecycle"].as_str().unwrap_or_default().to_owned(),
                        pane["attention"].as_str().unwrap_or_default().to_owned(),
                    );
                    let last = seen.states.iter().rev().find(|s| s.0 == state.0);
                    if last != Some(&state) {
                        seen.states.push(state);
                    }
                }
            }
        });
        Watcher { seen, _events: Killed { name: "berth events", child } }
    }

    fn history(&self, pane: &str) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.states.iter().filter(|s| s.0 == pane).map(|s| format!("{}/{}", s.1, s.2)).collect()
    }

    fn decisions(&self, pane: &str) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.events
            .iter()
            .filter(|e| e["type"] == "pane.decision" && e["pane_id"] == pane)
            .cloned()
            .collect()
    }
}

/// A Berth server with the agent's home seeded (past login and trust, Berth's hooks, the
/// scripted model as its provider), a watcher on its events, and the agent's panes in it.
struct Turns {
    world: World,
    watch: Watcher,
    agent: Agent,
    case: &'static str,
    decided: Mutex<Vec<Value>>,
}

impl Turns {
    fn new(agent: Agent, case: &'static str) -> Option<Turns> {
        Turns::new_with(agent, case, &[])
    }

    /// [`Turns::new`] with more variables in the server's and its panes' environment.
    fn new_with(agent: Agent, case: &'static str, env: &[(&str, &str)]) -> Option<Turns> {
        let bin = npm_bin(case)?;
        let model = model();
        let mut all = vec![("BERTH_TEST_OPENAI_KEY", KEY)];
        all.extend_from_slice(env);
        let world = World::new_with(&bin, agent, true, &all);
        let home = &world.server.home;
        match agent {
            Agent::Codex => {
                // Top-level keys first: what `seed_home` wrote ends in tables.
                let path = home.join(".codex/config.toml");
                let rest = fs::read_to_string(&path).unwrap();
                let config = format!(
                    "model = \"scripted\"\nmodel_provider = \"berth\"\n\
                     approval_policy = \"on-request\"\n\n{rest}\n\n\
                     [model_providers.berth]\nname = \"Berth scripted model\"\n\
                     base_url = \"{}\"\nwire_api = \"responses\"\n\
                     env_key = \"BERTH_TEST_OPENAI_KEY\"\n",
                    model.url
                );
                fs::write(&path, config).unwrap();
            }
            Agent::Opencode => {
                let config = json!({
                    "$schema": "https://opencode.ai/config.json",
                    "autoupdate": false,
                    "share": "disabled",
                    "model": "berth/scripted",
                    "small_model": "berth/scripted",
                    "permission": { "bash": "ask" },
                    "provider": { "berth": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Berth scripted model",
                        "options": { "baseURL": model.url, "apiKey": KEY },
                        "models": { "scripted": { "name": "Scripted", "tool_call": true } },
                    }},
                });
                let dir = home.join(".config/opencode");
                fs::create_dir_all(&dir).unwrap();
                fs::write(dir.join("opencode.json"), config.to_string()).unwrap();
            }
            Agent::Claude => unreachable!("tests/e2e_turns_claude.rs"),
        }
        Some(Turns {
            watch: Watcher::start(&world.server),
            world,
            agent,
            case,
            decided: Mutex::new(Vec::new()),
        })
    }

    fn server(&self) -> &TestServer {
        &self.world.server
    }

    fn report(&self, pane: &str) -> String {
        format!(
            "{}: hooks sent:\n{}\nlifecycle/attention seen: {:?}\nls: {}\nscreen:\n{}",
            self.case,
            hook_log(&self.world.tools),
            self.watch.history(pane),
            self.entry(pane),
            berth_screen(self.server(), pane).join("\n")
        )
    }

    fn pane(&self) -> String {
        let pane = self.world.pane(&[self.agent.name()]);
        if self.agent == Agent::Codex {
            self.trust_hooks(&pane);
        }
        settled(self.case, self.agent.ready(), || berth_screen(self.server(), &pane));
        self.poll(&pane, "berth events to show the pane", || {
            let seen = self.watch.seen.lock().unwrap();
            seen.events.iter().any(|e| e["pane_id"] == pane.as_str()).then_some(())
        });
        self.until(&pane, "the agent known as its kind", |e| {
            e["agent"]["kind"] == self.agent.name()
        });
        pane
    }

    /// Codex asks once to trust hooks it has not seen (Berth's, in config.toml): a person
    /// trusts them once, as here ("2. Trust all and continue").
    fn trust_hooks(&self, pane: &str) {
        settled(self.case, "Hooks need review", || berth_screen(self.server(), pane));
        self.server().berth_ok(&["send", pane, "2"]);
        self.poll(pane, "the trust option selected", || {
            self.server().screen(pane).contains("› 2. Trust all and continue").then_some(())
        });
        self.server().berth_ok(&["send", pane, "--keys", "Enter"]);
    }

    fn entry(&self, pane: &str) -> Value {
        let list: Value = serde_json::from_str(&self.server().berth_ok(&["ls", "--json"])).unwrap();
        panes_of(&list).into_iter().find(|p| p["id"] == pane).unwrap_or(Value::Null)
    }

    fn poll<T>(&self, pane: &str, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
        let deadline = std::time::Instant::now() + TURN;
        loop {
            if let Some(value) = check() {
                return value;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out after {TURN:?} waiting for {what}\n{}",
                self.report(pane)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn until(&self, pane: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        self.poll(pane, what, || Some(self.entry(pane)).filter(|e| check(e)))
    }

    fn call(&self, pane: &str, marker: &str, step: u64) -> Value {
        self.poll(pane, &format!("the model to be called for {marker} step {step}"), || {
            model().calls(marker, step).into_iter().next()
        })
    }

    fn submit(&self, pane: &str, text: &str) {
        let out = self.server().berth(&["submit", pane, text]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.trim() == "confirmed",
            "berth submit: {:?} {said} {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.report(pane)
        );
    }

    fn decision(&self, pane: &str) -> Value {
        let event = self.poll(pane, "a pane.decision event with a new decision", || {
            let decided = self.decided.lock().unwrap();
            self.watch
                .decisions(pane)
                .into_iter()
                .find(|e| !e["decision"].is_null() && !decided.contains(&e["decision"]["id"]))
        });
        self.decided.lock().unwrap().push(event["decision"]["id"].clone());
        let entry = self.until(pane, "the pending decision in ls --json", |e| {
            e["pending_decision"]["id"] == event["decision"]["id"]
        });
        assert_eq!(entry["lifecycle"], "blocked", "{}", self.report(pane));
        assert_eq!(entry["attention"], "needs_input", "{}", self.report(pane));
        entry["pending_decision"].clone()
    }

    /// The card's prompt reads `TOOL: COMMAND` with exactly `command`.
    fn assert_shows(&self, pane: &str, decision: &Value, command: &str) {
        assert_eq!(decision["agent"], self.agent.name(), "{decision}");
        let prompt = decision["prompt"].as_str().unwrap_or_default();
        assert!(
            prompt.ends_with(&format!(": {command}")),
            "the card must show exactly {command:?}: {decision}\n{}",
            self.report(pane)
        );
    }

    /// `berth wait --until idle` succeeds; it prints `last` where the agent tells Berth its
    /// last message.
    fn wait_idle(&self, pane: &str, last: Option<&str>) {
        let out = self.server().berth(&["wait", pane, "--until", "idle", "--timeout", "90"]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && last.is_none_or(|l| said.trim() == l),
            "berth wait --until idle: {:?} printed {said:?} (want {last:?}) {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.report(pane)
        );
    }

    /// `berth submit --file` of `text`, which the agent must confirm.
    fn submit_file(&self, pane: &str, text: &str) {
        let file = self.world.work.join("big-prompt.txt");
        fs::write(&file, text).unwrap();
        let out = self.server().berth(&["submit", pane, "--file", file.to_str().unwrap()]);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "confirmed",
            "berth submit --file: {out:?}\n{}",
            self.report(pane)
        );
    }

    fn settled_turn(&self, pane: &str, what: &str) -> Value {
        self.until(pane, what, |e| {
            matches!(e["lifecycle"].as_str(), Some("idle" | "done"))
                && e["pending_decision"].is_null()
                && !matches!(e["attention"].as_str(), Some("needs_input" | "error"))
        })
    }

    fn assert_went(&self, pane: &str, want: &[&str]) {
        let seen = self.watch.history(pane);
        let mut at = seen.iter();
        for state in want {
            assert!(
                at.any(|s| s.split('/').next() == Some(state)),
                "lifecycle {state} not seen in order {want:?}\n{}",
                self.report(pane)
            );
        }
    }
}

const MULTI: &str =
    "first line\n  second line, indented\n\nfourth line: ünïcödé → ✓ \"quoted\" $HOME `tick`";

// ---- opencode ----

/// The card shows exactly `metadata.command` (defect 4: it read `patterns` joined with
/// spaces); `decide allow` reaches opencode (defect 3: it went to `serverUrl`, where nothing
/// listens in the TUI, and was lost) and the command runs, its output reaches the model; the
/// turn ends `done`, never left `working` by an event applied late, and the plugin sent Berth
/// only the events it reads, one at a time (defect 5: ~140 processes a session, 90 for
/// `plugin.added`). Then a denial: the model gets it, the command never runs.
#[test]
fn opencode_allow_and_deny() {
    let Some(t) = Turns::new(Agent::Opencode, "opencode_allow_and_deny") else { return };
    let pane = t.pane();
    let prompt = format!("O-MULTI {MULTI}");
    t.submit(&pane, &prompt);
    let call = t.call(&pane, "O-MULTI", 0);
    // opencode's TUI sends a pasted prompt with one space after it (a paste lands in its input
    // as a placeholder and a space): every byte Berth typed, then opencode's own space.
    assert!(
        user_texts(&call).iter().any(|u| u == &prompt || *u == format!("{prompt} ")),
        "{:?}",
        user_texts(&call)
    );
    t.wait_idle(&pane, Some("multi-line prompt received"));
    t.settled_turn(&pane, "the first turn to end");

    t.submit(&pane, "O-ALLOW run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, OC_ALLOW);
    t.server().berth_ok(&["decide", &pane, "allow"]);
    // `decide` returned once the plugin said opencode took the answer.
    let acked = hook_log(&t.world.tools);
    assert!(
        acked.contains("berth.reply_delivered"),
        "no delivery report before decide returned:\n{acked}"
    );
    let call = t.call(&pane, "O-ALLOW", 1);
    let output = tool_output(&call).expect("a tool result");
    assert!(output.contains("berth-oc-second"), "{output:?}\n{}", t.report(&pane));
    assert_eq!(fs::read_to_string(t.world.work.join("oc.txt")).unwrap(), "berth-oc-ran\n");
    t.wait_idle(&pane, Some("allow: the command ran"));
    t.settled_turn(&pane, "the allowed turn to end");
    // `session.status idle` (idle), then `session.idle` (done): applied in that order.
    t.until(&pane, "the allowed turn to be done", |e| e["lifecycle"] == "done");
    t.assert_went(&pane, &["working", "blocked", "working", "done"]);

    t.submit(&pane, "O-DENY run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo no > denied.txt");
    t.server().berth_ok(&["decide", &pane, "deny"]);
    t.settled_turn(&pane, "the denied turn to end");
    assert!(!t.world.work.join("denied.txt").exists(), "the denied command ran");

    // Only the events Berth reads reached it.
    let log = hook_log(&t.world.tools);
    let sent: Vec<&str> = log.lines().filter(|l| l.starts_with("opencode ")).collect();
    let unused: Vec<&&str> = sent
        .iter()
        .filter(|l| {
            let kind = serde_json::from_str::<Value>(&l["opencode ".len()..])
                .ok()
                .and_then(|v| v["type"].as_str().map(str::to_owned))
                .unwrap_or_default();
            !["session.", "permission.", "berth."].iter().any(|p| kind.starts_with(p))
        })
        .collect();
    assert!(unused.is_empty(), "events Berth does not read were sent: {unused:#?}");
    assert!(sent.len() < 60, "{} hook processes for three turns:\n{log}", sent.len());
}

// ---- codex ----

/// A multi-line prompt reaches the model exactly; allow runs the command and its output
/// reaches the model, `wait --until idle` prints codex's last message; deny ends the turn and
/// the command never runs.
#[test]
fn codex_allow_and_deny() {
    let Some(t) = Turns::new(Agent::Codex, "codex_allow_and_deny") else { return };
    let pane = t.pane();
    let prompt = format!("C-MULTI {MULTI}");
    // Codex sends its first hook (SessionStart) with its first prompt: until then Berth cannot
    // know its hooks are wired, and `berth submit` says `sent`, unconfirmed. The first prompt
    // is typed as a person types it; the later ones go through `berth submit`, confirmed.
    submit(t.server(), &pane, &prompt);
    let call = t.call(&pane, "C-MULTI", 0);
    assert!(user_texts(&call).iter().any(|u| u == &prompt), "{:?}", user_texts(&call));
    t.wait_idle(&pane, Some("multi-line prompt received"));

    t.submit(&pane, "C-ALLOW run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo berth-allow-ran | tee allow.txt");
    t.server().berth_ok(&["decide", &pane, "allow"]);
    let call = t.call(&pane, "C-ALLOW", 1);
    let output = tool_output(&call).expect("a tool result");
    assert!(output.contains("berth-allow-ran"), "{output:?}\n{}", t.report(&pane));
    t.wait_idle(&pane, Some("allow: the command ran"));
    t.settled_turn(&pane, "the allowed turn to end");
    t.assert_went(&pane, &["working", "blocked", "done"]);

    t.submit(&pane, "C-DENY run the command");
    t.decision(&pane);
    t.server().berth_ok(&["decide", &pane, "deny", "--message", "Not now: berth-deny-reason"]);
    t.call(&pane, "C-DENY", 1);
    t.wait_idle(&pane, Some("deny: understood"));
    t.settled_turn(&pane, "the denied turn to end");
    assert!(!t.world.work.join("denied.txt").exists(), "the denied command ran");
}

/// A task with codex as worker: codex runs its commands with `bash -lc`, and a login profile
/// resets PATH (Debian's /etc/profile does; the case's ~/.bash_profile too, to be sure), so
/// `berth` is not found there (defect 6). The worker asks, is answered, commits, reports with
/// the command the task's prompt gave, and the task is merged.
#[test]
fn codex_works_a_task() {
    let Some(t) = Turns::new(Agent::Codex, "codex_works_a_task") else { return };
    fs::write(t.server().home.join(".bash_profile"), "PATH=/usr/bin:/bin\nexport PATH\n").unwrap();
    let repo = repo(t.server(), "app", &[("README", b"app\n")]);
    // `task start` waits for codex to be ready, which it is once its hooks are trusted.
    let starting = t
        .server()
        .command()
        .args(task_start_args(&repo, "codex", "C-TASK add the file new.txt and commit it", 90))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("berth task start");
    let worker = t.poll("", "the worker's pane", || {
        let list: Value = serde_json::from_str(&t.server().berth_ok(&["ls", "--json"])).ok()?;
        panes_of(&list).into_iter().find_map(|p| p["id"].as_str().map(str::to_owned))
    });
    // A task's worktree is a new folder to codex: it asks to trust it first.
    settled(t.case, "Trust this folder?", || berth_screen(t.server(), &worker));
    t.server().berth_ok(&["send", &worker, "--keys", "Enter"]);
    t.trust_hooks(&worker);
    let out = starting.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    let task: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let id = task["id"].as_str().unwrap().to_owned();
    let pane = task["pane_id"].as_str().unwrap_or_else(|| panic!("no pane_id: {task}")).to_owned();
    let call = t.call(&pane, "C-TASK", 0);
    assert!(user_texts(&call).iter().any(|u| u.contains(&id)), "{:?}", user_texts(&call));
    let show = |id: &str| -> Value {
        serde_json::from_str(&t.server().berth_ok(&["task", "show", id, "--json"])).unwrap()
    };
    t.decision(&pane);
    t.server().berth_ok(&["decide", &pane, "allow"]);
    let ran = t.call(&pane, "C-TASK", 1);
    let done = t.poll(&pane, "the task to be completed", || {
        let task = show(&id);
        (task["state"] == "completed").then_some(task)
    });
    assert_eq!(done["result"]["summary"], "Added new.txt", "{done}\n{:?}", tool_output(&ran));
    t.wait_idle(&pane, Some("The task is done and reported."));
    let finished: Value =
        serde_json::from_str(&t.server().berth_ok(&["task", "finish", &id, "--merge", "--json"]))
            .unwrap();
    assert_eq!(finished["disposition"]["outcome"], "merged", "{finished}");
    let subjects = git(&repo, &["log", "--format=%s", "main"]);
    assert!(subjects.lines().any(|s| s == "Add new.txt"), "codex's commit is on main: {subjects}");
}

// ==== codex: the rest of the claude suite (issue 26) ====
//
// Codex awaits its `PermissionRequest` hook before it shows a dialog of its own: its own
// dialog ("Would you like to run the following command?") comes only once Berth's wait (30 s;
// 3 s in these cases) ran out with no decision. So "answered in codex's own dialog" is always
// "after the hook's wait expired".

/// The codex cases' scripts (merged into [`script`]).
fn codex_cases() -> Value {
    json!({
        "C-BIG": [say("big prompt received")],
        "C-DENY-PLAIN": [codex_shell("echo no > denied-plain.txt"), say("deny: understood")],
        "C-DENY-MSG": [codex_shell("echo no > denied-msg.txt"), say("deny with message: understood")],
        // The answer after the tool ran comes late, so that the pane is seen between the two.
        "C-EXPIRE-YES": [
            codex_shell("echo berth-expire-ran | tee expire.txt"),
            { "text": "yes: the command ran", "delay": 3.0 },
        ],
        "C-EXPIRE-NO": [codex_shell("echo no > said-no.txt"), say("no: never asked for")],
        "C-ESC-WORK": [{ "hang": 50, "text": "Thinking it over at length" }],
        "C-ESC-BLOCK": [codex_shell("echo no > escaped.txt"), say("escape: never asked for")],
        "C-RESUME-1": [say("Noted: the word is pelican.")],
        "C-RESUME-2": [say("The word was pelican.")],
        "C-AFTER": [say("after: the pane works")],
    })
}

impl Turns {
    /// Codex's first prompt, typed as a person types it (Berth learns that codex's hooks are
    /// wired only from the hook this prompt brings, so `berth submit` cannot confirm it): the
    /// text, then Enter once it shows; Enter again if codex took neither (a person presses
    /// it again). Returns once the prompt reached codex (`UserPromptSubmit`).
    fn type_first(&self, pane: &str, text: &str) {
        let acks = || hook_log(&self.world.tools).matches("\"UserPromptSubmit\"").count();
        let before = acks();
        self.server().berth_ok(&["send", pane, text]);
        let head = text.lines().next().unwrap_or_default();
        self.wait_text(pane, &head[..head.len().min(40)]);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(400));
            self.server().berth_ok(&["send", pane, "--keys", "Enter"]);
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while std::time::Instant::now() < deadline {
                if acks() > before {
                    // The recorder logs the hook before Berth applies it: the turn is Berth's
                    // once the pane left `idle` (`working`, or `done` already).
                    self.until(pane, "the typed prompt's turn", |e| e["lifecycle"] != "idle");
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("codex took no first prompt\n{}", self.report(pane));
    }

    /// Waits until `text` shows in the pane.
    fn wait_text(&self, pane: &str, text: &str) {
        self.poll(pane, &format!("{text:?} on the screen"), || {
            self.server().screen(pane).contains(text).then_some(())
        });
    }

    /// A later prompt works in the pane: confirmed, reaches the model, ends with its answer
    /// and nothing left to answer.
    fn usable(&self, pane: &str) {
        let marker = if self.agent == Agent::Opencode { "O-AFTER" } else { "C-AFTER" };
        let prompt = format!("{marker} {}", self.case);
        self.submit(pane, &prompt);
        self.poll(pane, "the later prompt at the model", || {
            model()
                .calls(marker, 0)
                .into_iter()
                .find(|c| user_texts(c).iter().any(|t| t.contains(&prompt)))
        });
        self.wait_idle(pane, Some("after: the pane works"));
        self.settled_turn(pane, "the later turn to end");
    }

    /// The pane's decision, once Berth's wait for it ran out: shown, not answerable, `decide`
    /// refused, and codex's own dialog asks (the pane still `blocked`, `needs_input`).
    fn expired(&self, pane: &str, command: &str) {
        let decision = self.decision(pane);
        self.assert_shows(pane, &decision, command);
        self.until(pane, "the decision to be unanswerable", |e| {
            e["pending_decision"]["answerable"] == false
        });
        let out = self.server().berth(&["decide", pane, "allow"]);
        assert!(!out.status.success(), "decide after the wait expired must fail: {out:?}");
        self.wait_text(pane, "Would you like to run the following command?");
        let entry = self.entry(pane);
        assert_eq!(entry["lifecycle"], "blocked", "{}", self.report(pane));
        assert_eq!(entry["attention"], "needs_input", "{}", self.report(pane));
    }
}

/// A 32 KiB prompt reaches the model exactly; a denial without a message and one with a
/// message reach the model as the tool's result, the command never runs and the turn ends.
/// A prompt submitted into an input that already holds text reaches codex joined to it:
/// `berth submit` fails saying so (it printed `confirmed`).
#[test]
fn codex_big_prompt_and_denials() {
    let Some(t) = Turns::new(Agent::Codex, "codex_big_prompt_and_denials") else { return };
    let pane = t.pane();
    // The first prompt is typed (see `codex_allow_and_deny`); the big one is `berth submit`'s.
    t.type_first(&pane, &format!("C-AFTER {}", t.case));
    t.wait_idle(&pane, Some("after: the pane works"));
    let big = long_prompt("C-BIG", 32 * 1024);
    t.submit_file(&pane, &big);
    let call = t.call(&pane, "C-BIG", 0);
    let texts = user_texts(&call);
    assert!(
        texts.contains(&big),
        "the 32 KiB prompt did not reach the model exactly: {:?} bytes\n{}",
        texts.iter().map(String::len).collect::<Vec<_>>(),
        t.report(&pane)
    );
    t.wait_idle(&pane, Some("big prompt received"));

    for (marker, file, message, last) in [
        ("C-DENY-PLAIN", "denied-plain.txt", None, "deny: understood"),
        (
            "C-DENY-MSG",
            "denied-msg.txt",
            Some("Not now: berth-msg-reason"),
            "deny with message: understood",
        ),
    ] {
        t.submit(&pane, &format!("{marker} run the command"));
        let decision = t.decision(&pane);
        t.assert_shows(&pane, &decision, &format!("echo no > {file}"));
        let mut args = vec!["decide", pane.as_str(), "deny"];
        if let Some(message) = message {
            args.extend(["--message", message]);
        }
        t.server().berth_ok(&args);
        let call = t.call(&pane, marker, 1);
        let output = tool_output(&call).expect("a tool result");
        // Codex tells the model `exec_command failed: … Rejected("MESSAGE")`, its own words
        // ("PermissionRequest hook denied approval") where Berth gave none.
        let said = message.unwrap_or("PermissionRequest hook denied approval");
        assert!(output.contains("Rejected"), "{marker}: not a denial: {output:?}");
        assert!(output.contains(said), "{marker}: {output:?}\n{}", t.report(&pane));
        t.wait_idle(&pane, Some(last));
        t.settled_turn(&pane, "the denied turn to end");
        assert!(!t.world.work.join(file).exists(), "{marker}: the denied command ran");
    }

    // Text already in codex's input (codex puts an interrupted prompt back there; here typed)
    // goes with the next prompt: `berth submit` says so and fails, never `confirmed`.
    t.server().berth_ok(&["send", &pane, "left over"]);
    t.wait_text(&pane, "left over");
    let prompt = format!("C-AFTER {} joined", t.case);
    let out = t.server().berth(&["submit", &pane, &prompt]);
    let (said, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        !out.status.success() && err.contains("joined") && err.contains("left over"),
        "berth submit into an input holding text: {:?} {said:?} {err:?}\n{}",
        out.status,
        t.report(&pane)
    );
    let call = t.poll(&pane, "the joined prompt at the model", || {
        model()
            .calls("C-AFTER", 0)
            .into_iter()
            .find(|c| user_texts(c).iter().any(|u| u.contains(&prompt) && u.contains("left over")))
    });
    assert!(!user_texts(&call).contains(&prompt), "{:?}", user_texts(&call));
    t.wait_idle(&pane, Some("after: the pane works"));
    t.settled_turn(&pane, "the joined prompt's turn to end");
}

/// Berth's wait runs out (3 s), codex asks in its own dialog: Berth's card stays, not
/// answerable, the pane `blocked`, `needs_input`. "Yes" there: the command runs, and once it
/// has (codex's `PostToolUse`) the question is gone and the pane `working`; the turn ends
/// `done` with nothing to answer (defect 2: `needs_input` stayed). "No" there: the command
/// never runs, the turn ends, nothing to answer, and the pane takes the next prompt.
#[test]
fn codex_answered_in_its_own_dialog_after_the_wait() {
    let Some(t) = Turns::new_with(
        Agent::Codex,
        "codex_answered_in_its_own_dialog_after_the_wait",
        &[("BERTH_DECISION_WAIT", "3")],
    ) else {
        return;
    };
    let pane = t.pane();
    t.type_first(&pane, "C-EXPIRE-YES run the command");
    t.expired(&pane, "echo berth-expire-ran | tee expire.txt");
    // "1. Yes, proceed" is selected: Enter, as a person at the window presses it.
    t.server().berth_ok(&["send", &pane, "--keys", "Enter"]);
    let call = t.call(&pane, "C-EXPIRE-YES", 1);
    let output = tool_output(&call).expect("a tool result");
    assert!(output.contains("berth-expire-ran"), "{output:?}\n{}", t.report(&pane));
    // Codex ran its `PostToolUse` hook (and waited for it) before it called the model again:
    // the question answered in its dialog is no longer Berth's to show.
    let entry = t.entry(&pane);
    assert!(
        entry["pending_decision"].is_null()
            && entry["lifecycle"] == "working"
            && entry["attention"] != "needs_input",
        "the question answered in codex's dialog is still shown: {entry}\n{}",
        t.report(&pane)
    );
    t.wait_idle(&pane, Some("yes: the command ran"));
    let entry = t.settled_turn(&pane, "the turn to end with no question open");
    assert_eq!(entry["lifecycle"], "done", "{}", t.report(&pane));

    t.submit(&pane, "C-EXPIRE-NO run the command");
    t.expired(&pane, "echo no > said-no.txt");
    // "3. No, and tell Codex what to do differently", as a person types it.
    t.server().berth_ok(&["send", &pane, "3"]);
    t.settled_turn(&pane, "the refused turn to end with no question open");
    assert!(!t.world.work.join("said-no.txt").exists(), "the refused command ran");
    t.usable(&pane);
}

/// Escape while the model works: the turn ends idle, nothing to answer. Escape while Berth
/// holds codex's question: the turn ends idle, the question goes with it, the command never
/// runs, and the pane takes the next prompt.
#[test]
fn codex_escape_while_working_and_while_blocked() {
    let Some(t) = Turns::new(Agent::Codex, "codex_escape_while_working_and_while_blocked") else {
        return;
    };
    let pane = t.pane();
    t.type_first(&pane, "C-ESC-WORK think for a long time");
    t.call(&pane, "C-ESC-WORK", 0);
    t.until(&pane, "the turn to be working", |e| e["lifecycle"] == "working");
    t.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    let entry = t.settled_turn(&pane, "the interrupted turn to end");
    assert_eq!(entry["lifecycle"], "idle", "{}", t.report(&pane));

    t.submit(&pane, "C-ESC-BLOCK run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo no > escaped.txt");
    t.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    let entry = t.settled_turn(&pane, "the interrupted turn to end with no question open");
    assert_eq!(entry["lifecycle"], "idle", "{}", t.report(&pane));
    // Berth ends the turn as the Escape goes out; codex ends it a moment later, and when the
    // interrupt beat the command's start it puts the interrupted prompt back in its input
    // (seen in one run in two): a person sees it there and clears it (Ctrl-U) before typing
    // anew. `berth submit` would append to it (see issue 26's report).
    t.poll(&pane, "codex to say the second turn was interrupted", || {
        (t.server().screen(&pane).matches("Conversation interrupted").count() == 2).then_some(())
    });
    t.server().berth_ok(&["send", &pane, "--keys", "C-u"]);
    assert!(!t.world.work.join("escaped.txt").exists(), "the escaped command ran");
    t.usable(&pane);
}

/// A restart mid-conversation: the pane comes back `RESUMABLE` with codex's session, `berth
/// resume` runs `codex resume`, and the next turn's request holds the first turn's prompt and
/// answer.
#[test]
fn codex_resumes_after_a_restart() {
    let Some(mut t) = Turns::new(Agent::Codex, "codex_resumes_after_a_restart") else { return };
    let pane = t.pane();
    t.type_first(&pane, "C-RESUME-1 remember the word pelican");
    t.wait_idle(&pane, Some("Noted: the word is pelican."));
    let session = t.until(&pane, "codex's session", |e| e["agent"]["session_id"].is_string())
        ["agent"]["session_id"]
        .clone();
    t.world.server.restart();
    t.watch = Watcher::start(&t.world.server);
    let entry = t.entry(&pane);
    assert_eq!(entry["state"], "RESUMABLE", "{entry}");
    assert_eq!(entry["agent"]["session_id"], session, "{entry}");
    t.server().berth_ok(&["resume", &pane]);
    settled(t.case, Agent::Codex.ready(), || berth_screen(t.server(), &pane));
    t.until(&pane, "the resumed pane live and known as codex", |e| {
        e["state"] == "LIVE" && e["agent"]["kind"] == "codex"
    });
    t.type_first(&pane, "C-RESUME-2 which word was it?");
    let call = t.call(&pane, "C-RESUME-2", 0);
    let all = call["input"].to_string();
    assert!(
        all.contains("C-RESUME-1 remember the word pelican")
            && all.contains("Noted: the word is pelican."),
        "the resumed turn lacks the first turn: {all}\n{}",
        t.report(&pane)
    );
    t.wait_idle(&pane, Some("The word was pelican."));
    t.settled_turn(&pane, "the resumed turn to end");
}

// ==== opencode: the rest of the claude suite (issue 26) ====
//
// opencode shows its own permission dialog ("Permission required": Allow once, Allow always,
// Reject; ←/→ and Enter, Escape rejects) as soon as it asks, while Berth's plugin holds the
// same question in Berth: the first answer wins, and an answer given in the dialog comes back
// to Berth as `permission.replied`. A plain rejection ends opencode's turn without calling
// the model again (the model reads it in the next turn's history); a rejection with a message
// goes to the model at once. opencode interrupts a turn on a second Escape within 5 s (the
// first one shows "esc again to interrupt").

/// The opencode cases' scripts (merged into [`script`]).
fn opencode_cases() -> Value {
    json!({
        "O-BIG": [say("big prompt received")],
        "O-DENY-PLAIN": [opencode_bash("echo no > denied-plain.txt"), say("deny: understood")],
        "O-DENY-MSG": [opencode_bash("echo no > denied-msg.txt"), say("deny with message: understood")],
        "O-YES": [opencode_bash("echo berth-yes-ran > yes.txt"), say("yes: the command ran")],
        "O-NO": [opencode_bash("echo no > said-no.txt"), say("no: never asked for")],
        "O-ESC-WORK": [{ "hang": 50, "text": "Thinking it over at length" }],
        "O-ESC-BLOCK": [opencode_bash("echo no > escaped.txt"), say("escape: never asked for")],
        "O-RESUME-1": [say("Noted: the word is pelican.")],
        "O-RESUME-2": [say("The word was pelican.")],
        "O-TASK": [opencode_bash(TASK_COMMAND), say("The task is done and reported.")],
        "O-AFTER": [say("after: the pane works")],
    })
}

impl Turns {
    /// opencode's own permission dialog is up.
    fn oc_dialog(&self, pane: &str) {
        self.wait_text(pane, "Permission required");
        self.wait_text(pane, "Allow once");
    }

    /// The decision is no longer Berth's to answer: `decide` fails, saying so.
    fn assert_not_answerable(&self, pane: &str) {
        let out = self.server().berth(&["decide", pane, "allow"]);
        assert!(
            !out.status.success(),
            "decide after the question was settled in opencode must fail: {out:?}\n{}",
            self.report(pane)
        );
    }
}

/// A 32 KiB prompt reaches the model exactly (opencode shows a paste this long as a
/// placeholder and sends all of it). A denial without a message ends the turn at once (opencode
/// does not call the model again; the next turn's request carries the rejection as the tool's
/// result); a denial with a message reaches the model as the tool's result and the model
/// answers. Neither command runs, and each turn ends with nothing left to answer.
#[test]
fn opencode_big_prompt_and_denials() {
    let Some(t) = Turns::new(Agent::Opencode, "opencode_big_prompt_and_denials") else { return };
    let pane = t.pane();
    let big = long_prompt("O-BIG", 32 * 1024);
    t.submit_file(&pane, &big);
    let call = t.call(&pane, "O-BIG", 0);
    let texts = user_texts(&call);
    // opencode adds one space after a paste (see `opencode_allow_and_deny`).
    assert!(
        texts.iter().any(|u| *u == big || *u == format!("{big} ")),
        "the 32 KiB prompt did not reach the model exactly: {:?} bytes\n{}",
        texts.iter().map(String::len).collect::<Vec<_>>(),
        t.report(&pane)
    );
    t.wait_idle(&pane, Some("big prompt received"));
    t.settled_turn(&pane, "the big prompt's turn to end");

    // Without a message: the turn ends, the model is not called again.
    t.submit(&pane, "O-DENY-PLAIN run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo no > denied-plain.txt");
    t.server().berth_ok(&["decide", &pane, "deny"]);
    t.settled_turn(&pane, "the plainly denied turn to end");
    assert!(!t.world.work.join("denied-plain.txt").exists(), "the denied command ran");

    // With a message: the model gets it as the tool's result and answers.
    t.submit(&pane, "O-DENY-MSG run the command");
    // This turn's first request holds the earlier turn, its tool call rejected.
    let first = t.call(&pane, "O-DENY-MSG", 0);
    let earlier = tool_output(&first).unwrap_or_default();
    assert!(
        earlier.contains("rejected"),
        "the plain denial is not in the next turn's history: {earlier:?}\n{}",
        t.report(&pane)
    );
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo no > denied-msg.txt");
    let message = "Not now: berth-msg-reason";
    t.server().berth_ok(&["decide", &pane, "deny", "--message", message]);
    let call = t.call(&pane, "O-DENY-MSG", 1);
    let output = tool_output(&call).expect("a tool result");
    assert!(
        output.contains("rejected") && output.contains(message),
        "the denial with its message did not reach the model: {output:?}\n{}",
        t.report(&pane)
    );
    t.wait_idle(&pane, Some("deny with message: understood"));
    t.settled_turn(&pane, "the denied turn to end");
    assert!(!t.world.work.join("denied-msg.txt").exists(), "the denied command ran");
}

/// "Allow once" in opencode's own dialog (Enter): the command runs, the model gets its output,
/// Berth's card goes (`permission.replied`) and `decide` is refused, the turn ends `done`
/// with nothing to answer. "Reject" there (→ → Enter): the command never runs, the turn ends,
/// nothing to answer, and the pane takes the next prompt.
#[test]
fn opencode_answered_in_its_own_dialog() {
    let Some(t) = Turns::new(Agent::Opencode, "opencode_answered_in_its_own_dialog") else {
        return;
    };
    let pane = t.pane();
    t.submit(&pane, "O-YES run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo berth-yes-ran > yes.txt");
    t.oc_dialog(&pane);
    // "Allow once" is selected: Enter, as a person at the window presses it.
    t.server().berth_ok(&["send", &pane, "--keys", "Enter"]);
    let call = t.call(&pane, "O-YES", 1);
    let output = tool_output(&call).expect("a tool result");
    assert!(!output.contains("rejected"), "{output:?}\n{}", t.report(&pane));
    assert_eq!(fs::read_to_string(t.world.work.join("yes.txt")).unwrap(), "berth-yes-ran\n");
    t.wait_idle(&pane, Some("yes: the command ran"));
    t.settled_turn(&pane, "the turn to end with no question open");
    // `session.status` idle, then `session.idle`: done.
    t.until(&pane, "the turn to be done", |e| e["lifecycle"] == "done");
    t.assert_went(&pane, &["working", "blocked", "working", "done"]);
    t.assert_not_answerable(&pane);

    t.submit(&pane, "O-NO run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo no > said-no.txt");
    t.oc_dialog(&pane);
    // → → selects "Reject" (shown by colour only), then Enter, as a person at the window.
    t.server().berth_ok(&["send", &pane, "--keys", "Right", "Right"]);
    t.server().berth_ok(&["send", &pane, "--keys", "Enter"]);
    t.settled_turn(&pane, "the refused turn to end with no question open");
    t.assert_not_answerable(&pane);
    assert!(!t.world.work.join("said-no.txt").exists(), "the refused command ran");
    t.usable(&pane);
}

/// Escape while the model works: opencode interrupts on the second Escape only, so after the
/// first (opencode shows "esc again to interrupt") the pane is still `working`; after the
/// second the turn ends with nothing to answer. Escape while its dialog asks: opencode rejects,
/// the question goes, the command never runs. The pane takes the next prompt.
#[test]
fn opencode_escape_while_working_and_while_blocked() {
    let Some(t) = Turns::new(Agent::Opencode, "opencode_escape_while_working_and_while_blocked")
    else {
        return;
    };
    let pane = t.pane();
    t.submit(&pane, "O-ESC-WORK think for a long time");
    t.call(&pane, "O-ESC-WORK", 0);
    let working = t.until(&pane, "the turn to be working", |e| e["lifecycle"] == "working");
    t.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    t.wait_text(&pane, "again to interrupt");
    // Still the same `working` (Berth ended the turn at the first Escape, as it does for
    // claude, and showed `idle` while opencode worked on, until its next `busy`).
    let entry = t.entry(&pane);
    assert!(
        entry["lifecycle"] == "working"
            && entry["lifecycle_since"] == working["lifecycle_since"]
            && entry["attention"] == "none",
        "one Escape does not interrupt opencode, which still works: {entry}\n{}",
        t.report(&pane)
    );
    t.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    // opencode ends the turn with `session.error` `MessageAbortedError`: not an error to show
    // (it was: `attention: error`, kept through the next turns, above their questions).
    let entry = t.settled_turn(&pane, "the interrupted turn to end");
    assert!(matches!(entry["lifecycle"].as_str(), Some("idle" | "done")), "{}", t.report(&pane));

    t.submit(&pane, "O-ESC-BLOCK run the command");
    let decision = t.decision(&pane);
    t.assert_shows(&pane, &decision, "echo no > escaped.txt");
    t.oc_dialog(&pane);
    t.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    t.settled_turn(&pane, "the escaped turn to end with no question open");
    t.assert_not_answerable(&pane);
    assert!(!t.world.work.join("escaped.txt").exists(), "the escaped command ran");
    t.usable(&pane);
}

/// A restart mid-conversation: the pane comes back `RESUMABLE` with opencode's session,
/// `berth resume` runs `opencode --session ID`, and the next turn's request holds the first
/// turn's prompt and answer.
#[test]
fn opencode_resumes_after_a_restart() {
    let Some(mut t) = Turns::new(Agent::Opencode, "opencode_resumes_after_a_restart") else {
        return;
    };
    let pane = t.pane();
    t.submit(&pane, "O-RESUME-1 remember the word pelican");
    t.wait_idle(&pane, Some("Noted: the word is pelican."));
    let session = t.until(&pane, "opencode's session", |e| e["agent"]["session_id"].is_string())
        ["agent"]["session_id"]
        .clone();
    t.world.server.restart();
    t.watch = Watcher::start(&t.world.server);
    let entry = t.entry(&pane);
    assert_eq!(entry["state"], "RESUMABLE", "{entry}");
    assert_eq!(entry["agent"]["session_id"], session, "{entry}");
    t.server().berth_ok(&["resume", &pane]);
    t.until(&pane, "the resumed pane live and known as opencode", |e| {
        e["state"] == "LIVE" && e["agent"]["kind"] == "opencode"
    });
    // The resumed opencode is up once its plugin loaded again (Berth then knows its hooks are
    // wired: `submit` is confirmed) and it drew the session with its first turn.
    t.poll(&pane, "the resumed opencode's plugin", || {
        (hook_log(&t.world.tools).matches("berth.plugin.loaded").count() == 2).then_some(())
    });
    settled(t.case, "Noted: the word is pelican.", || berth_screen(t.server(), &pane));
    t.submit(&pane, "O-RESUME-2 which word was it?");
    let call = t.call(&pane, "O-RESUME-2", 0);
    let all = call["messages"].to_string();
    assert!(
        all.contains("O-RESUME-1 remember the word pelican")
            && all.contains("Noted: the word is pelican."),
        "the resumed turn lacks the first turn: {all}\n{}",
        t.report(&pane)
    );
    t.wait_idle(&pane, Some("The word was pelican."));
    t.settled_turn(&pane, "the resumed turn to end");
    let entry = t.entry(&pane);
    assert_eq!(entry["agent"]["session_id"], session, "resumed into another session: {entry}");
}

/// A task with opencode as worker: the task's prompt reaches the model, opencode asks to run
/// the commit-and-report command, `decide allow` runs it, the task is `completed` with the
/// report, and `task finish --merge` merges the commit.
#[test]
fn opencode_works_a_task() {
    let Some(t) = Turns::new(Agent::Opencode, "opencode_works_a_task") else { return };
    let repo = repo(t.server(), "app", &[("README", b"app\n")]);
    let task =
        start_task(t.server(), &repo, "opencode", "O-TASK add the file new.txt and commit it", 90);
    eprintln!("opencode_works_a_task: task start said {task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let pane = task["pane_id"].as_str().unwrap_or_else(|| panic!("no pane_id: {task}")).to_owned();
    // `task start` returned once opencode took the prompt: it pasted it only once opencode's
    // TUI read input (it pasted it as opencode started, the prompt was lost whole and the task
    // said `working`).
    let call = t.call(&pane, "O-TASK", 0);
    assert!(user_texts(&call).iter().any(|u| u.contains(&id)), "{:?}", user_texts(&call));
    let show = |id: &str| -> Value {
        serde_json::from_str(&t.server().berth_ok(&["task", "show", id, "--json"])).unwrap()
    };
    let decision = t.decision(&pane);
    assert!(decision["prompt"].as_str().unwrap_or_default().contains("task report"), "{decision}");
    t.poll(&pane, "the task to need input", || {
        (show(&id)["state"] == "input_required").then_some(())
    });
    t.server().berth_ok(&["decide", &pane, "allow"]);
    let ran = t.call(&pane, "O-TASK", 1);
    let done = t.poll(&pane, "the task to be completed", || {
        let task = show(&id);
        (task["state"] == "completed").then_some(task)
    });
    assert_eq!(done["result"]["summary"], "Added new.txt", "{done}\n{:?}", tool_output(&ran));
    t.wait_idle(&pane, Some("The task is done and reported."));
    let finished: Value =
        serde_json::from_str(&t.server().berth_ok(&["task", "finish", &id, "--merge", "--json"]))
            .unwrap();
    assert_eq!(finished["disposition"]["outcome"], "merged", "{finished}");
    let subjects = git(&repo, &["log", "--format=%s", "main"]);
    assert!(
        subjects.lines().any(|s| s == "Add new.txt"),
        "opencode's commit is on main: {subjects}"
    );
}
