//! Real turns with the real claude (issue 26): claude 2.1.197 from npm (`scripts/test-agents`)
//! in Berth panes, talking to a scripted Anthropic Messages API on loopback
//! (`tests/support/model_anthropic.py`, one for the whole binary), each case with its own Berth
//! server and private HOME, no network.
//!
//! What is checked, each from `berth events` (a watcher records every pane's lifecycle and
//! attention as the events come) and `berth ls --json`, never from sleeps:
//! - claude is ready and known as its kind; `berth submit` reaches the model with the exact
//!   text, multi-line and 32 KiB;
//! - `working` → a pending decision naming `Bash` and the exact command → `allow` runs it and
//!   the model receives its output → `wait --until idle` prints the last message;
//! - deny with and without a message: the model receives the denial and the turn ends;
//! - the question answered in claude's own dialog (Yes, No), Escape while working and while
//!   blocked, the hook's wait expiring: each ends with the right lifecycle and attention, no
//!   question left open, and a pane a later `berth submit` works in;
//! - a task with claude as its worker asks, is answered, commits, reports and is merged;
//! - a task's two claude turns leave two checkpoints, each turn's diff its own file (#31);
//! - a restart mid-conversation: the pane comes back `RESUMABLE`, `berth resume` continues the
//!   session, and the model receives the earlier turn.
//!
//! Skipped (passing, with a message) unless `BERTH_AGENTS_NPM` names the agents' npm prefix.
//! A case that fails prints the hooks claude sent (`hooks.log`), what the watcher saw and the
//! screen.

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

/// How long one step of a turn may take (claude starts a shell, runs a hook, calls the model).
const TURN: Duration = Duration::from_secs(60);
/// The API key claude is given: never checked by anything but claude's own approval list.
const KEY: &str = "sk-ant-berth-test-not-a-real-key-000000";

// ---- the scripted model ----

/// The scripted Anthropic API, started once for the whole test binary (it exits when the
/// binary does).
struct Model {
    url: String,
    log: PathBuf,
    _child: Mutex<Child>,
}

/// A `Bash` tool call, after a second of `working` (so that the watcher sees the turn work
/// before it blocks).
fn bash(command: &str) -> Value {
    json!({
        "tool": "Bash",
        "input": { "command": command, "description": "A step of the Berth test" },
        "delay": 1.0,
    })
}

fn say(text: &str) -> Value {
    json!({ "text": text })
}

/// The command the task's worker runs: commit the file and report the task done.
const TASK_COMMAND: &str = "printf 'made by claude\\n' > new.txt && git add new.txt && \
     git commit -qm 'Add new.txt' && berth task report --status completed --summary 'Added new.txt'";

/// Every case's script, by the marker its prompt holds.
fn script() -> Value {
    json!({ "cases": {
        "T-MULTI": [say("multi-line prompt received")],
        "T-BIG": [say("big prompt received")],
        "T-ALLOW": [bash("echo berth-allow-ran | tee allow.txt"), say("allow: the command ran")],
        "T-DENY-PLAIN": [bash("echo no > denied-plain.txt"), say("deny: understood")],
        "T-DENY-MSG": [bash("echo no > denied-msg.txt"), say("deny with message: understood")],
        "T-YES": [bash("echo berth-yes-ran | tee yes.txt"), say("yes: the command ran")],
        "T-NO": [bash("echo no > said-no.txt"), say("no: never asked for")],
        "T-ESC-WORK": [{ "hang": 50, "text": "Thinking it over at length" }],
        "T-ESC-BLOCK": [bash("echo no > escaped.txt"), say("escape: never asked for")],
        "T-EXPIRE": [bash("echo berth-expire-ran | tee expire.txt"), say("expire: the command ran")],
        "T-TASK": [bash(TASK_COMMAND), say("The task is done and reported.")],
        "T-TURN-1": [bash("echo one > turn1.txt"), say("turn one done")],
        "T-TURN-2": [bash("echo two > turn2.txt"), say("turn two done")],
        "T-RESUME-1": [say("Noted: the word is pelican.")],
        "T-RESUME-2": [say("The word was pelican.")],
        "T-AFTER": [say("after: the pane works")],
    }})
}

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("berth-model-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (script_path, log, port) =
            (dir.join("script.json"), dir.join("requests.jsonl"), dir.join("port"));
        fs::write(&script_path, script().to_string()).unwrap();
        let server =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/support/model_anthropic.py");
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
        Model { url: format!("http://127.0.0.1:{port}"), log, _child: Mutex::new(child) }
    })
}

impl Model {
    /// Every request logged so far.
    fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The turn calls answered from `marker`'s script at `step`, in order; the ones of the
    /// claude session `session` when given.
    fn calls(&self, marker: &str, step: u64, session: Option<&str>) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["kind"] == "main" && r["marker"] == marker && r["step"] == step)
            .filter(|r| session.is_none_or(|s| session_of(&r["body"]).as_deref() == Some(s)))
            .map(|r| r["body"].clone())
            .collect()
    }
}

/// The claude session a request came from (`metadata.user_id` holds it as JSON).
fn session_of(body: &Value) -> Option<String> {
    let user: Value = serde_json::from_str(body["metadata"]["user_id"].as_str()?).ok()?;
    user["session_id"].as_str().map(str::to_owned)
}

/// A message's content blocks.
fn blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(s) => vec![json!({ "type": "text", "text": s })],
        Value::Array(a) => a.clone(),
        _ => Vec::new(),
    }
}

/// The text blocks of the last user message of a request.
fn last_user_texts(body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.iter().rev().find(|m| m["role"] == "user").cloned().unwrap_or_default();
    blocks(&last).iter().filter_map(|b| b["text"].as_str().map(str::to_owned)).collect()
}

/// The tool result the last message of a request carries (its text and whether it is an
/// error).
fn tool_result(body: &Value) -> Option<(String, bool)> {
    let last = body["messages"].as_array()?.last()?.clone();
    let result = blocks(&last).into_iter().find(|b| b["type"] == "tool_result")?;
    let text = match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    };
    Some((text, result["is_error"] == true))
}

// ---- a claude world ----

/// What `berth events` showed, and each pane's lifecycle and attention as they changed (read
/// from the server at each event).
#[derive(Default)]
struct Seen {
    events: Vec<Value>,
    states: Vec<(String, String, String)>,
}

/// A `berth events` and the thread recording what it prints.
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

    /// The lifecycles `pane` went through, as `lifecycle/attention`.
    fn history(&self, pane: &str) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.states.iter().filter(|s| s.0 == pane).map(|s| format!("{}/{}", s.1, s.2)).collect()
    }

    /// The `pane.decision` events of `pane` so far.
    fn decisions(&self, pane: &str) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.events
            .iter()
            .filter(|e| e["type"] == "pane.decision" && e["pane_id"] == pane)
            .cloned()
            .collect()
    }
}

/// A Berth server with claude's home seeded (past onboarding, trust and the API key's
/// approval, Berth's hooks in its settings), the scripted model's address, a watcher on its
/// events, and claude panes in it.
struct Claude {
    world: World,
    watch: Watcher,
    case: &'static str,
    /// The decisions [`Claude::decision`] returned already.
    decided: Mutex<Vec<Value>>,
}

impl Claude {
    /// `None` (the case is skipped) without the agents.
    fn new(case: &'static str, env: &[(&str, &str)]) -> Option<Claude> {
        let bin = npm_bin(case)?;
        let model = model();
        let mut all = vec![("ANTHROPIC_BASE_URL", model.url.as_str()), ("ANTHROPIC_API_KEY", KEY)];
        all.extend_from_slice(env);
        let world = World::new_with(&bin, Agent::Claude, true, &all);
        let claude = Claude {
            watch: Watcher::start(&world.server),
            world,
            case,
            decided: Mutex::new(Vec::new()),
        };
        claude.trust(&[]);
        Some(claude)
    }

    fn server(&self) -> &TestServer {
        &self.world.server
    }

    /// Writes `~/.claude.json`: onboarding done, the work dir and `more` trusted, the API key
    /// approved (claude keeps the last 20 characters of the keys a person approved).
    fn trust(&self, more: &[&Path]) {
        let mut projects = serde_json::Map::new();
        for dir in std::iter::once(self.world.work.as_path()).chain(more.iter().copied()) {
            projects.insert(
                dir.display().to_string(),
                json!({ "hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true }),
            );
        }
        let config = json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "customApiKeyResponses": { "approved": [&KEY[KEY.len() - 20..]], "rejected": [] },
            "projects": projects,
        });
        fs::write(self.world.server.home.join(".claude.json"), config.to_string()).unwrap();
    }

    /// What a failing case prints: the hooks claude sent, what the watcher saw, the screen.
    fn report(&self, pane: &str) -> String {
        format!(
            "{}: hooks claude sent:\n{}\nserver log on prompts:\n{}\nlifecycle/attention seen: \
             {:?}\nls: {}\nscreen:\n{}",
            self.case,
            hook_log(&self.world.tools),
            self.server()
                .log_text()
                .lines()
                .filter(|l| ["submit", "prompt", "paste", "Enter"].iter().any(|w| l.contains(w)))
                .collect::<Vec<_>>()
                .join("\n"),
            self.watch.history(pane),
            self.entry(pane),
            berth_screen(self.server(), pane).join("\n")
        )
    }

    /// A claude pane, ready: its first screen drawn, its `SessionStart` hook in, known as
    /// claude and idle in `berth ls --json`. Returns the pane and its session id.
    fn pane(&self) -> (String, String) {
        let pane = self.world.pane(&["claude"]);
        self.ready(&pane)
    }

    fn ready(&self, pane: &str) -> (String, String) {
        settled(self.case, Agent::Claude.ready(), || berth_screen(self.server(), pane));
        // The watcher is subscribed: it has seen this pane's events (its output, at least).
        self.poll(pane, "berth events to show the pane", || {
            let seen = self.watch.seen.lock().unwrap();
            seen.events.iter().any(|e| e["pane_id"] == pane).then_some(())
        });
        let entry = self.until(pane, "claude known, idle, with its session", |e| {
            e["agent"]["kind"] == "claude"
                && e["agent"]["session_id"].is_string()
                && e["lifecycle"] == "idle"
        });
        (pane.to_owned(), entry["agent"]["session_id"].as_str().unwrap().to_owned())
    }

    /// The pane's entry in `berth ls --json`.
    fn entry(&self, pane: &str) -> Value {
        let list: Value = serde_json::from_str(&self.server().berth_ok(&["ls", "--json"])).unwrap();
        panes_of(&list).into_iter().find(|p| p["id"] == pane).unwrap_or(Value::Null)
    }

    /// Polls `check` until it gives a value; at the deadline fails with [`Claude::report`].
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

    /// Polls `berth ls --json` until the pane's entry satisfies `check`.
    fn until(&self, pane: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        self.poll(pane, what, || Some(self.entry(pane)).filter(|e| check(e)))
    }

    /// The model's first call for `marker` at `step` from the pane's claude `session`.
    fn call(&self, pane: &str, marker: &str, step: u64, session: Option<&str>) -> Value {
        self.poll(pane, &format!("the model to be called for {marker} step {step}"), || {
            model().calls(marker, step, session).into_iter().next()
        })
    }

    /// Waits until `text` shows in the pane.
    fn wait_text(&self, pane: &str, text: &str) {
        self.poll(pane, &format!("{text:?} on the screen"), || {
            self.server().screen(pane).contains(text).then_some(())
        });
    }

    /// `berth submit`, which must be confirmed by claude's `UserPromptSubmit`.
    fn submit(&self, pane: &str, args: &[&str]) {
        let mut all = vec!["submit", pane];
        all.extend_from_slice(args);
        let out = self.server().berth(&all);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.trim() == "confirmed",
            "berth submit: {:?} {said} {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.report(pane)
        );
    }

    /// The next pending decision, once `pane.decision` announced it and `ls --json` shows it.
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

    /// The decision names `Bash` and shows exactly `command`.
    fn assert_names(&self, pane: &str, decision: &Value, command: &str) {
        assert_eq!(decision["agent"], "claude", "{decision}");
        assert_eq!(decision["tool"], "Bash", "{decision}");
        let shown = format!(
            "{}\n{}",
            decision["prompt"].as_str().unwrap_or_default(),
            decision["detail"].as_str().unwrap_or_default()
        );
        assert!(
            shown.contains(command),
            "{command:?} not on the card: {decision}\n{}",
            self.report(pane)
        );
    }

    /// `berth wait --until idle`, which must print `last`.
    fn wait_idle(&self, pane: &str, last: &str) {
        let out = self.server().berth(&["wait", pane, "--until", "idle", "--timeout", "60"]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.trim() == last,
            "berth wait --until idle: {:?} printed {said:?} (want {last:?}) {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.report(pane)
        );
    }

    /// The turn is over and nothing asks for the person: idle or done, no decision, attention
    /// neither `needs_input` nor `error`.
    fn settled_turn(&self, pane: &str, what: &str) -> Value {
        self.until(pane, what, |e| {
            matches!(e["lifecycle"].as_str(), Some("idle" | "done"))
                && e["pending_decision"].is_null()
                && !matches!(e["attention"].as_str(), Some("needs_input" | "error"))
        })
    }

    /// A later prompt works in the pane: confirmed, reaches the model, ends with its answer.
    fn usable(&self, pane: &str, session: &str) {
        let prompt = format!("T-AFTER {}", self.case);
        self.submit(pane, &[&prompt]);
        let call = self.poll(pane, "the later prompt at the model", || {
            model()
                .calls("T-AFTER", 0, Some(session))
                .into_iter()
                .find(|c| last_user_texts(c).iter().any(|t| t.contains(&prompt)))
        });
        assert!(last_user_texts(&call).iter().any(|t| t.contains(&prompt)));
        self.wait_idle(pane, "after: the pane works");
        self.settled_turn(pane, "the later turn to end");
    }

    /// The lifecycles seen include `want` in this order.
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

/// Every transcript claude wrote (`~/.claude/projects/*/*.jsonl`), each headed by its path.
fn transcripts(server: &TestServer) -> Vec<String> {
    fs::read_dir(server.home.join(".claude/projects"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| {
            let text = fs::read_to_string(f.path()).unwrap_or_default();
            format!("{}:\n{text}", f.path().display())
        })
        .collect()
}

// ---- cases ----

/// Ready and known as claude; a multi-line prompt and a 32 KiB one reach the model exactly.
#[test]
fn claude_submit_reaches_the_model_exactly() {
    let Some(c) = Claude::new("claude_submit_reaches_the_model_exactly", &[]) else { return };
    let (pane, session) = c.pane();
    let multi = "T-MULTI first line\n  second line, indented\n\nfourth line: ünïcödé → ✓ \"quoted\" $HOME `tick`";
    c.submit(&pane, &[multi]);
    let call = c.call(&pane, "T-MULTI", 0, Some(&session));
    assert!(
        last_user_texts(&call).iter().any(|t| t == multi),
        "the model got {:?}\n{}",
        last_user_texts(&call),
        c.report(&pane)
    );
    c.wait_idle(&pane, "multi-line prompt received");

    let big = long_prompt("T-BIG", 32 * 1024);
    let file = c.world.work.join("big-prompt.txt");
    fs::write(&file, &big).unwrap();
    c.submit(&pane, &["--file", file.to_str().unwrap()]);
    let call = c.call(&pane, "T-BIG", 0, Some(&session));
    let texts = last_user_texts(&call);
    assert!(
        texts.contains(&big),
        "the 32 KiB prompt did not reach the model exactly: got {} text blocks of {:?} bytes\n{}",
        texts.len(),
        texts.iter().map(String::len).collect::<Vec<_>>(),
        c.report(&pane)
    );
    c.wait_idle(&pane, "big prompt received");
}

/// working → a decision naming Bash and the exact command → allow runs it, the model gets its
/// output → `wait --until idle` prints the last message. Then deny without and with a
/// message in the same pane: the model gets the denial, the command never runs, the turn ends.
#[test]
fn claude_allow_and_deny() {
    let Some(c) = Claude::new("claude_allow_and_deny", &[]) else { return };
    let (pane, session) = c.pane();

    c.submit(&pane, &["T-ALLOW run the command"]);
    let decision = c.decision(&pane);
    c.assert_names(&pane, &decision, "echo berth-allow-ran | tee allow.txt");
    assert_eq!(decision["answerable"], true, "{decision}");
    c.server().berth_ok(&["decide", &pane, "allow"]);
    let call = c.call(&pane, "T-ALLOW", 1, Some(&session));
    let (output, error) = tool_result(&call).expect("a tool result");
    assert!(output.contains("berth-allow-ran") && !error, "{output:?}\n{}", c.report(&pane));
    c.wait_idle(&pane, "allow: the command ran");
    c.settled_turn(&pane, "the allowed turn to end");
    c.assert_went(&pane, &["working", "blocked", "done"]);

    for (marker, file, message) in [
        ("T-DENY-PLAIN", "denied-plain.txt", None),
        ("T-DENY-MSG", "denied-msg.txt", Some("Not now: berth-deny-reason")),
    ] {
        c.submit(&pane, &[&format!("{marker} run the command")]);
        let decision = c.decision(&pane);
        c.assert_names(&pane, &decision, &format!("echo no > {file}"));
        let mut args = vec!["decide", pane.as_str(), "deny"];
        if let Some(message) = message {
            args.extend(["--message", message]);
        }
        c.server().berth_ok(&args);
        let call = c.call(&pane, marker, 1, Some(&session));
        let (result, error) = tool_result(&call).expect("a tool result");
        assert!(error, "{marker}: the denial is an error result: {result:?}");
        if let Some(message) = message {
            assert!(result.contains(message), "{marker}: {result:?}\n{}", c.report(&pane));
        }
        let last =
            if message.is_some() { "deny with message: understood" } else { "deny: understood" };
        c.wait_idle(&pane, last);
        c.settled_turn(&pane, "the denied turn to end");
        assert!(!c.world.work.join(file).exists(), "{marker}: the denied command ran");
    }
}

/// "Yes" in claude's own dialog: the command runs, the model gets its output, the turn ends
/// and the question is gone with its `needs_input` (defect 2).
#[test]
fn claude_yes_in_its_own_dialog() {
    let Some(c) = Claude::new("claude_yes_in_its_own_dialog", &[]) else { return };
    let (pane, session) = c.pane();
    c.submit(&pane, &["T-YES run the command"]);
    let decision = c.decision(&pane);
    c.assert_names(&pane, &decision, "echo berth-yes-ran | tee yes.txt");
    c.wait_text(&pane, "Do you want to proceed?");
    // "1. Yes" is selected: Enter, as a person at the window presses it.
    c.server().berth_ok(&["send", &pane, "--keys", "Enter"]);
    let call = c.call(&pane, "T-YES", 1, Some(&session));
    let (output, error) = tool_result(&call).expect("a tool result");
    assert!(output.contains("berth-yes-ran") && !error, "{output:?}");
    c.wait_idle(&pane, "yes: the command ran");
    c.settled_turn(&pane, "the turn to end with no question open");
    c.usable(&pane, &session);
}

/// "No" in claude's own dialog: claude kills its hook, prints "Interrupted", sends no hook;
/// the pane must not stay blocked (defect 1) nor keep `needs_input` (defect 2).
#[test]
fn claude_no_in_its_own_dialog() {
    let Some(c) = Claude::new("claude_no_in_its_own_dialog", &[]) else { return };
    let (pane, session) = c.pane();
    c.submit(&pane, &["T-NO run the command"]);
    let decision = c.decision(&pane);
    c.assert_names(&pane, &decision, "echo no > said-no.txt");
    c.wait_text(&pane, "Do you want to proceed?");
    // "3. No", as a person types it.
    c.server().berth_ok(&["send", &pane, "3"]);
    c.wait_text(&pane, "Interrupted");
    c.settled_turn(&pane, "the refused turn to end with no question open");
    assert!(!c.world.work.join("said-no.txt").exists(), "the refused command ran");
    c.usable(&pane, &session);
}

/// Escape while the model works: the turn ends at once, idle, nothing to answer, and the
/// pane takes the next prompt.
#[test]
fn claude_escape_while_working() {
    let Some(c) = Claude::new("claude_escape_while_working", &[]) else { return };
    let (pane, session) = c.pane();
    c.submit(&pane, &["T-ESC-WORK think for a long time"]);
    c.call(&pane, "T-ESC-WORK", 0, Some(&session));
    c.until(&pane, "the turn to be working", |e| e["lifecycle"] == "working");
    c.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    c.wait_text(&pane, "Interrupted");
    let entry = c.settled_turn(&pane, "the interrupted turn to end");
    assert_eq!(entry["lifecycle"], "idle", "{}", c.report(&pane));
    c.usable(&pane, &session);
}

/// Escape while claude's permission dialog is up: claude kills its hook and sends no hook;
/// the pane must not stay blocked with a dead question (defects 1 and 2).
#[test]
fn claude_escape_while_blocked() {
    let Some(c) = Claude::new("claude_escape_while_blocked", &[]) else { return };
    let (pane, session) = c.pane();
    c.submit(&pane, &["T-ESC-BLOCK run the command"]);
    let decision = c.decision(&pane);
    c.assert_names(&pane, &decision, "echo no > escaped.txt");
    c.wait_text(&pane, "Do you want to proceed?");
    c.server().berth_ok(&["send", &pane, "--keys", "Escape"]);
    c.wait_text(&pane, "Interrupted");
    let entry = c.settled_turn(&pane, "the interrupted turn to end with no question open");
    assert_eq!(entry["lifecycle"], "idle", "{}", c.report(&pane));
    assert!(!c.world.work.join("escaped.txt").exists(), "the escaped command ran");
    c.usable(&pane, &session);
}

/// The hook's wait expires (3 s here): Berth can no longer answer and says so, the question
/// stays open in claude's dialog (blocked, `needs_input`); answered there, the command runs
/// and the turn ends with nothing left to answer.
#[test]
fn claude_hook_wait_expires() {
    let Some(c) = Claude::new("claude_hook_wait_expires", &[("BERTH_DECISION_WAIT", "3")]) else {
        return;
    };
    let (pane, session) = c.pane();
    c.submit(&pane, &["T-EXPIRE run the command"]);
    let decision = c.decision(&pane);
    c.assert_names(&pane, &decision, "echo berth-expire-ran | tee expire.txt");
    let expired = c.until(&pane, "the decision to be unanswerable", |e| {
        e["pending_decision"]["answerable"] == false || e["pending_decision"].is_null()
    });
    let out = c.server().berth(&["decide", &pane, "allow"]);
    assert!(!out.status.success(), "decide after the wait expired must fail: {out:?}");
    // Claude's own dialog still asks: the person still has to answer.
    c.wait_text(&pane, "Do you want to proceed?");
    let entry = c.entry(&pane);
    assert_eq!(entry["lifecycle"], "blocked", "{expired}\n{}", c.report(&pane));
    assert_eq!(entry["attention"], "needs_input", "{}", c.report(&pane));
    c.server().berth_ok(&["send", &pane, "--keys", "Enter"]);
    let call = c.call(&pane, "T-EXPIRE", 1, Some(&session));
    let (output, error) = tool_result(&call).expect("a tool result");
    assert!(output.contains("berth-expire-ran") && !error, "{output:?}");
    c.wait_idle(&pane, "expire: the command ran");
    c.settled_turn(&pane, "the turn to end with no question open");
}

/// A task with claude as worker: the task's prompt reaches the model, claude asks to run the
/// commit-and-report command (the task is `input_required`), `decide allow` runs it, the task
/// is `completed` with claude's report, and `task finish --merge` merges the commit.
#[test]
fn claude_works_a_task() {
    let Some(c) = Claude::new("claude_works_a_task", &[]) else { return };
    let repo = repo(c.server(), "app", &[("README", b"app\n")]);
    c.trust(&[&repo]);
    let task =
        start_task(c.server(), &repo, "claude", "T-TASK add the file new.txt and commit it", 60);
    eprintln!("claude_works_a_task: task start said {task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let pane = task["pane_id"].as_str().unwrap_or_else(|| panic!("no pane_id: {task}")).to_owned();
    let call = c.call(&pane, "T-TASK", 0, None);
    let prompt = last_user_texts(&call).join("\n");
    assert!(prompt.contains(&id) && prompt.contains("T-TASK add the file"), "{prompt}");
    let decision = c.decision(&pane);
    c.assert_names(&pane, &decision, TASK_COMMAND);
    let show = |id: &str| -> Value {
        serde_json::from_str(&c.server().berth_ok(&["task", "show", id, "--json"])).unwrap()
    };
    c.poll(&pane, "the task to need input", || {
        (show(&id)["state"] == "input_required").then_some(())
    });
    c.server().berth_ok(&["decide", &pane, "allow"]);
    let done = c.poll(&pane, "the task to be completed", || {
        let task = show(&id);
        (task["state"] == "completed").then_some(task)
    });
    assert_eq!(done["result"]["summary"], "Added new.txt", "{done}");
    c.wait_idle(&pane, "The task is done and reported.");
    let finished: Value =
        serde_json::from_str(&c.server().berth_ok(&["task", "finish", &id, "--merge", "--json"]))
            .unwrap();
    assert_eq!(finished["disposition"]["outcome"], "merged", "{finished}");
    assert_eq!(fs::read_to_string(repo.join("new.txt")).unwrap(), "made by claude\n");
    let subjects = git(&repo, &["log", "--format=%s", "main"]);
    assert!(subjects.lines().any(|s| s == "Add new.txt"), "claude's commit is on main: {subjects}");
}

/// Two turns of a claude task, each writing a file through an allowed `Bash`: each turn's end
/// is a checkpoint, and `berth diff --turn N` shows that turn's file alone (issue 31).
#[test]
fn claude_turns_are_checkpointed() {
    let Some(c) = Claude::new("claude_turns_are_checkpointed", &[]) else { return };
    let repo = repo(c.server(), "app", &[("README", b"app\n")]);
    c.trust(&[&repo]);
    let task = start_task(c.server(), &repo, "claude", "T-TURN-1 write turn1.txt", 60);
    let id = task["id"].as_str().unwrap().to_owned();
    let pane = task["pane_id"].as_str().unwrap_or_else(|| panic!("no pane_id: {task}")).to_owned();
    let show = |id: &str| -> Value {
        serde_json::from_str(&c.server().berth_ok(&["task", "show", id, "--json"])).unwrap()
    };
    let turns = |n: usize| {
        c.poll(&pane, &format!("checkpoint {n}"), || {
            let task = show(&id);
            (task["checkpoints"].as_array().map_or(0, Vec::len) == n).then_some(task)
        })
    };
    let paths = |turn: &str| -> Vec<String> {
        let diff: Value =
            serde_json::from_str(&c.server().berth_ok(&["diff", &id, "--turn", turn, "--json"]))
                .unwrap();
        diff["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_owned())
            .collect()
    };
    for (n, marker, file, last) in [
        (1, "", "turn1.txt", "turn one done"),
        (2, "T-TURN-2 write turn2.txt", "turn2.txt", "turn two done"),
    ] {
        if !marker.is_empty() {
            c.submit(&pane, &[marker]);
        }
        let decision = c.decision(&pane);
        c.assert_names(&pane, &decision, &format!("> {file}"));
        c.server().berth_ok(&["decide", &pane, "allow"]);
        c.wait_idle(&pane, last);
        let task = turns(n);
        assert_eq!(task["checkpoints"][n - 1]["kind"], "turn", "{task}");
        assert_eq!(paths(&n.to_string()), [file], "turn {n}'s diff is its own file");
    }
    c.server().berth_ok(&["task", "finish", &id, "--discard", "--force"]);
    assert_eq!(git(&repo, &["for-each-ref", &format!("refs/berth/tasks/{id}/")]), "");
}

/// A restart mid-conversation: the pane comes back `RESUMABLE`, `berth resume` runs claude's
/// resume, and the next turn's request holds the first turn's prompt and answer.
#[test]
fn claude_resumes_after_a_restart() {
    let Some(mut c) = Claude::new("claude_resumes_after_a_restart", &[]) else { return };
    let (pane, session) = c.pane();
    c.submit(&pane, &["T-RESUME-1 remember the word pelican"]);
    c.wait_idle(&pane, "Noted: the word is pelican.");
    // Claude writes its transcript on its own time: the restart comes once the turn is in it.
    c.poll(&pane, "the first turn in claude's transcript", || {
        let all = transcripts(c.server()).join("\n");
        (all.contains("T-RESUME-1 remember") && all.contains("Noted: the word is pelican."))
            .then_some(())
    });
    c.world.server.restart();
    c.watch = Watcher::start(&c.world.server);
    let entry = c.entry(&pane);
    assert_eq!(entry["state"], "RESUMABLE", "{entry}");
    assert_eq!(entry["agent"]["session_id"], session.as_str(), "{entry}");
    c.server().berth_ok(&["resume", &pane]);
    let screen = c.poll(&pane, "claude to resume", || {
        let screen = c.server().screen(&pane);
        (screen.contains("for shortcuts") || screen.contains("No conversation found"))
            .then_some(screen)
    });
    assert!(
        !screen.contains("No conversation found"),
        "claude could not resume: {screen}\ntranscripts: {:#?}",
        transcripts(c.server())
    );
    let (_, resumed) = c.ready(&pane);
    c.submit(&pane, &["T-RESUME-2 which word was it?"]);
    let call = c.call(&pane, "T-RESUME-2", 0, Some(&resumed));
    let all = call["messages"].to_string();
    let transcripts = transcripts(c.server());
    assert!(
        all.contains("T-RESUME-1 remember the word pelican")
            && all.contains("Noted: the word is pelican."),
        "the resumed turn lacks the first turn: {all}\ntranscripts: {transcripts:#?}\n{}",
        c.report(&pane)
    );
    c.wait_idle(&pane, "The word was pelican.");
}
