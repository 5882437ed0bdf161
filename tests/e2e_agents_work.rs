//! Agents at work (issue 14): `berth submit` and `berth wait --until` against a stub agent
//! (`support/stub_agent.py`) in a real Berth pane. The stub behaves like claude's TUI as
//! `../shared/AGENT-CHANNELS.md` describes it (bracketed paste, an Enter within its paste
//! window joins the paste, no hook on an interrupt) and reports through the real
//! `berth hook claude` with the documented JSON; it records what it receives in a log.

mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use support::*;

/// The prompt's most bytes (the server's `MAX_PROMPT_BYTES`).
const MAX_PROMPT: usize = 32 * 1024;

/// A stub agent running in a pane, and the log of what it received.
struct Stub {
    pane: String,
    log: PathBuf,
}

impl Stub {
    /// Starts the stub with `extra` arguments and waits until its hooks are wired.
    fn start(server: &TestServer, name: &str, extra: &[&str]) -> Stub {
        let script = support::task::stub_script();
        let log = server.root.path().join(format!("{name}.log"));
        let (script, log_arg, bin) = (
            script.display().to_string(),
            log.display().to_string(),
            berth_bin().display().to_string(),
        );
        let mut args =
            vec!["new", "--", support::task::python(), &script, "--berth", &bin, "--log", &log_arg];
        args.extend_from_slice(extra);
        let pane = server.berth_ok(&args);
        server.wait_text(&pane, "stub ready", Duration::from_secs(30));
        poll(Duration::from_secs(10), "the stub's hooks to be wired", || {
            let info = server.pane(&pane)?;
            (info["turn"]["hooks_wired"] == true && info["agent"]["kind"] == "claude").then_some(())
        });
        Stub { pane, log }
    }

    /// What the stub recorded so far.
    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// The recorded events named `name`.
    fn named(&self, name: &str) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["event"] == name).collect()
    }

    /// Waits until the stub has recorded `count` events named `name`.
    fn wait_for(&self, name: &str, count: usize) -> Vec<Value> {
        poll(Duration::from_secs(20), &format!("{count} {name:?} in the stub's log"), || {
            let found = self.named(name);
            (found.len() >= count).then_some(found)
        })
    }

    /// The pane's lifecycle.
    fn lifecycle(&self, server: &TestServer) -> String {
        server.pane(&self.pane).map(|p| p["lifecycle"].as_str().unwrap_or("").to_owned()).unwrap()
    }
}

/// `berth submit --json` and its answer.
fn submit(server: &TestServer, pane: &str, args: &[&str]) -> Value {
    let mut all = vec!["submit", pane, "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&server.berth_ok(&all)).expect("submit --json prints JSON")
}

/// `berth wait --until … --json`: exit code and answer (if any).
fn wait_until(server: &TestServer, pane: &str, until: &str, timeout: &str) -> (i32, Value, String) {
    let out = server.berth(&["wait", pane, "--until", until, "--timeout", timeout, "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), answer, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn submit_pastes_the_exact_text_then_enter_after_the_settle_delay() {
    let server = TestServer::start();
    let stub = Stub::start(&server, "exact", &["--turn-ms", "100"]);
    let prompt = "Fix the parser.\n  - keep `tabs`\t and ünïcödé\n\nthen run the tests";
    let answer = submit(&server, &stub.pane, &[prompt]);
    assert_eq!(answer["confirmed"], true, "{answer}");
    assert_eq!(answer["enter_retried"], false, "{answer}");
    assert_eq!(answer["awaited_ack"], true, "{answer}");
    assert_eq!(answer["bracketed"], true, "{answer}");
    assert_eq!(answer["enter_delay_ms"], 200, "claude's settle delay: {answer}");
    assert_eq!(answer["bytes"], prompt.len());
    let pastes = stub.named("paste");
    assert_eq!(pastes.len(), 1, "{:?}", stub.events());
    assert_eq!(pastes[0]["text"], prompt);
    let submits = stub.named("submit");
    assert_eq!(submits.len(), 1, "{:?}", stub.events());
    assert_eq!(submits[0]["text"], prompt, "the Enter did not join the paste");
    let gap = submits[0]["gap_ms"].as_f64().expect("a gap");
    // Measured by the stub between the paste's end and Enter arriving; the server waits 200 ms,
    // and 150 ms is claude's known minimum (what arrives late of the paste may eat into it).
    assert!(gap >= 150.0, "Enter came {gap} ms after the paste");
    assert!(stub.named("joined").is_empty(), "{:?}", stub.events());

    // 32 KiB of many lines, from a file, arrive whole.
    let (code, _, stderr) = wait_until(&server, &stub.pane, "idle", "30");
    assert_eq!(code, 0, "{stderr}");
    let line = "0123456789 the quick brown fox jumps over the lazy dog ünï\n";
    let mut big = line.repeat(MAX_PROMPT / line.len() + 1);
    while big.len() > MAX_PROMPT {
        big.pop();
    }
    assert_eq!(big.len(), MAX_PROMPT);
    let file = server.root.path().join("prompt.md");
    std::fs::write(&file, &big).unwrap();
    let answer = submit(&server, &stub.pane, &["--file", file.to_str().unwrap()]);
    assert_eq!(answer["confirmed"], true, "{answer}");
    let submits = stub.wait_for("submit", 2);
    assert_eq!(submits[1]["text"].as_str().map(str::len), Some(big.len()));
    assert_eq!(submits[1]["text"], big.as_str(), "the 32 KiB prompt arrived changed");

    // One byte more is refused, naming the limit, and nothing is written.
    let (code, _, _) = wait_until(&server, &stub.pane, "idle", "30");
    assert_eq!(code, 0);
    std::fs::write(&file, format!("{big}x")).unwrap();
    let out = server.berth(&["submit", &stub.pane, "--file", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("32768 bytes"), "{out:?}");
    let refused = server
        .client()
        .call("pane.submit", json!({ "pane_id": stub.pane, "text": format!("{big}x") }))
        .expect_err("too long");
    assert_eq!(refused.code(), Some("BAD_REQUEST"), "{refused}");
    assert!(refused.to_string().contains("32 KiB"), "{refused}");
    assert_eq!(stub.named("paste").len(), 2, "nothing more was pasted");
}

#[test]
fn an_unacknowledged_enter_is_pressed_once_more() {
    let server = TestServer::start();
    // The stub never acknowledges: Enter is pressed twice, the answer says not confirmed.
    let stub = Stub::start(&server, "no-ack", &["--no-ack"]);
    let answer = submit(&server, &stub.pane, &["say hi"]);
    assert_eq!(answer["awaited_ack"], true, "{answer}");
    assert_eq!(answer["confirmed"], false, "{answer}");
    assert_eq!(answer["enter_retried"], true, "{answer}");
    let submits = stub.wait_for("submit", 1);
    assert_eq!(submits[0]["text"], "say hi");
    assert_eq!(stub.wait_for("enter", 2).len(), 2, "{:?}", stub.events());
    assert_eq!(stub.named("empty_enter").len(), 1, "{:?}", stub.events());

    // A paste window longer than the settle delay swallows the first Enter as a newline, as
    // claude does with an Enter that comes too soon: the second one submits, and the answer
    // says confirmed after a retry.
    let slow = Stub::start(&server, "slow-paste", &["--paste-window", "1500"]);
    let answer = submit(&server, &slow.pane, &["two\nlines"]);
    assert_eq!(answer["confirmed"], true, "{answer}");
    assert_eq!(answer["enter_retried"], true, "{answer}");
    assert_eq!(slow.named("joined").len(), 1, "{:?}", slow.events());
    assert_eq!(slow.wait_for("submit", 1)[0]["text"], "two\nlines\n");
}

#[test]
fn a_mid_turn_pane_refuses_a_prompt_unless_forced() {
    let server = TestServer::start();
    let stub = Stub::start(&server, "busy", &["--turn-ms", "60000"]);
    assert_eq!(submit(&server, &stub.pane, &["first"])["confirmed"], true);
    assert_eq!(stub.lifecycle(&server), "working");
    let out = server.berth(&["submit", &stub.pane, "second"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("working") && stderr.contains("--force"), "{stderr}");
    let refused = server
        .client()
        .call("pane.submit", json!({ "pane_id": stub.pane, "text": "second" }))
        .expect_err("mid-turn");
    assert_eq!(refused.code(), Some("MID_TURN"), "{refused}");
    assert_eq!(stub.named("paste").len(), 1, "nothing was pasted mid-turn");

    let answer = submit(&server, &stub.pane, &["--force", "second"]);
    assert_eq!(answer["awaited_ack"], true, "{answer}");
    let pastes = stub.wait_for("paste", 2);
    assert_eq!(pastes[1]["text"], "second");
}

#[test]
fn wait_until_idle_returns_after_the_stop_hook_with_the_last_message() {
    let server = TestServer::start();
    let message = "All 42 tests pass.\nNothing else to do.";
    let stub = Stub::start(&server, "turn", &["--turn-ms", "300", "--message", message]);
    assert_eq!(submit(&server, &stub.pane, &["run the tests"])["confirmed"], true);
    let (code, answer, stderr) = wait_until(&server, &stub.pane, "idle", "30");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(answer["reached"], true, "{answer}");
    assert_eq!(answer["lifecycle"], "done", "{answer}");
    assert_eq!(answer["learned_from"], "hook", "{answer}");
    assert_eq!(answer["last_message"], message, "{answer}");
    // The stub's turn lasts 300 ms between its UserPromptSubmit and Stop hooks.
    let turn_ms = answer["turn_ms"].as_u64().expect("a turn length");
    assert!(turn_ms >= 300, "{answer}");
    poll(Duration::from_secs(10), "the stub's record of its Stop hook", || {
        stub.named("hook").iter().any(|h| h["name"] == "Stop" && h["rc"] == 0).then_some(())
    });

    // The pane's view keeps them (`berth ls --json`).
    let ls: Value = serde_json::from_str(&server.berth_ok(&["ls", "--json"])).unwrap();
    let pane = ls["workspaces"][0]["tabs"][0]["panes"][0].clone();
    assert_eq!(pane["id"], stub.pane.as_str());
    assert_eq!(pane["turn"]["learned_from"], "hook", "{pane}");
    assert_eq!(pane["turn"]["last"]["last_message"], message, "{pane}");
    assert_eq!(pane["turn"]["last"]["duration_ms"], turn_ms, "{pane}");
    assert_eq!(pane["turn"]["last"]["ended_as"], "done", "{pane}");

    // Without --json, the last message is what it prints; `done` is reached too.
    let out = server.berth(&["wait", &stub.pane, "--until", "done", "--timeout", "5"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), message);
}

#[test]
fn an_interrupt_sent_through_berth_ends_the_turn_as_idle() {
    let server = TestServer::start();
    let stub = Stub::start(&server, "interrupt", &["--turn-ms", "60000"]);
    for (round, key) in ["C-c", "Escape"].into_iter().enumerate() {
        assert_eq!(submit(&server, &stub.pane, &["work for a long time"])["confirmed"], true);
        assert_eq!(stub.lifecycle(&server), "working");
        // A waiter that is already waiting when the interrupt comes.
        let waiter = server
            .command()
            .args(["wait", &stub.pane, "--until", "idle", "--timeout", "30", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Whether the wait reached the server before the interrupt or not, the turn ended by
        // Berth's interrupt is what it reports.
        server.berth_ok(&["send", &stub.pane, "--keys", key]);
        let out = waiter.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["lifecycle"], "idle", "{answer}");
        assert_eq!(answer["learned_from"], "interrupt", "{answer}");
        assert!(answer["turn_ms"].as_u64().is_some(), "{answer}");
        let interrupts = stub.wait_for("interrupt", round + 1);
        assert_eq!(interrupts[round]["in_turn"], true, "{interrupts:?}");
        let pane = server.pane(&stub.pane).unwrap();
        assert_eq!(pane["turn"]["last"]["ended_as"], "idle", "{pane}");
        assert_eq!(pane["turn"]["last"]["learned_from"], "interrupt", "{pane}");
    }
}

#[test]
fn wait_times_out_with_3_and_a_pane_that_exits_first_with_4() {
    let server = TestServer::start();
    let stub = Stub::start(&server, "idle", &[]);
    let (code, _, stderr) = wait_until(&server, &stub.pane, "blocked", "0.5");
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("did not become blocked") && stderr.contains("idle"), "{stderr}");

    let sleeper = server.berth_ok(&["new", "--", "sh", "-c", "sleep 0.5; exit 7"]);
    let (code, answer, stderr) = wait_until(&server, &sleeper, "done", "30");
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(answer["reached"], false, "{answer}");
    assert_eq!(answer["exit_code"], 7, "{answer}");
    assert!(stderr.contains("exited (exit code 7)"), "{stderr}");
    let (code, answer, stderr) = wait_until(&server, &sleeper, "exited", "30");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(answer["lifecycle"], "exited", "{answer}");

    // A pane closed while waited on ends the wait the same way.
    let closed = server.berth_ok(&["new", "--", "sleep", "60"]);
    let waiter = server
        .command()
        .args(["wait", &closed, "--until", "done", "--timeout", "30"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    poll(Duration::from_secs(10), "the wait to reach the server", || {
        server.log_text().contains(&format!("pane {closed} is waited on")).then_some(())
    });
    server.berth_ok(&["close", &closed]);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let gone = server.berth(&["wait", &closed, "--until", "idle"]);
    assert_eq!(gone.status.code(), Some(1));
}

#[test]
fn a_plain_shell_gets_the_text_and_enter() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc", "--noprofile"]);
    // bash's own prompt, `bash-5.2$ ` (or `#` for root).
    server.wait_text(&pane, "bash-", Duration::from_secs(10));
    let out = server.berth_ok(&["submit", &pane, "echo sub-$((6*7))"]);
    assert_eq!(out, "sent (hooks not wired: nothing confirms it)");
    server.wait_text(&pane, "sub-42", Duration::from_secs(10));
    let answer = submit(&server, &pane, &["echo json-$((6*7))"]);
    assert_eq!(answer["awaited_ack"], false, "{answer}");
    assert_eq!(answer["confirmed"], false, "{answer}");
    assert_eq!(answer["enter_delay_ms"], 0, "{answer}");
    server.wait_text(&pane, "json-42", Duration::from_secs(10));
    // From standard input.
    let mut child = server
        .command()
        .args(["submit", &pane, "-"])
        .current_dir(&server.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"echo stdin-$((6*7))").unwrap();
    assert!(child.wait().unwrap().success());
    server.wait_text(&pane, "stdin-42", Duration::from_secs(10));
}

#[test]
fn a_submit_whose_client_hangs_up_still_presses_enter() {
    let server = TestServer::start();
    // The first Enter joins the paste (the window is longer than the settle delay); the second
    // comes after the 3 s acknowledgement wait, long after the client is gone.
    let stub = Stub::start(&server, "hang-up", &["--paste-window", "1500"]);
    let mut client = server
        .command()
        .args(["submit", &stub.pane, "finish me"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    stub.wait_for("joined", 1);
    client.kill().unwrap();
    client.wait().unwrap();
    assert_eq!(stub.wait_for("submit", 1)[0]["text"], "finish me\n");
    // The pane takes the next prompt: the submit's mark was cleared when it ended.
    let (code, _, stderr) = wait_until(&server, &stub.pane, "idle", "30");
    assert_eq!(code, 0, "{stderr}");
    poll(Duration::from_secs(10), "the submit to end", || {
        let out = server.berth(&["submit", &stub.pane, "--force", "again"]);
        out.status.success().then_some(())
    });
}

/// The pane's (lifecycle, attention, pending decision) in `berth ls --json`.
fn signal(server: &TestServer, pane: &str) -> (String, String, Value) {
    let p = server.pane(pane).expect("the pane");
    let text = |k: &str| p[k].as_str().unwrap_or("").to_owned();
    (text("lifecycle"), text("attention"), p["pending_decision"].clone())
}

/// Submits a prompt to an asking stub and waits for its decision card; returns its id.
fn ask(server: &TestServer, stub: &Stub, round: usize) -> String {
    assert_eq!(submit(server, &stub.pane, &["run it"])["confirmed"], true);
    stub.wait_for("asked", round);
    let card = poll(Duration::from_secs(20), "the decision card", || {
        let (lifecycle, attention, card) = signal(server, &stub.pane);
        (lifecycle == "blocked" && attention == "needs_input" && card["answerable"] == true)
            .then_some(card)
    });
    card["id"].as_str().unwrap().to_owned()
}

/// Regression (issue 26, defects 1 and 2) against the stand-in behaving as the real claude is
/// reported to: its permission dialog shown beside Berth's card, its hook killed when the
/// dialog is answered or escaped, no hook at all after a "no" or Escape. Every flow must end
/// with the right lifecycle and attention and a pane that takes the next prompt.
#[test]
fn stub_claude_questions_settled_anywhere_leave_a_usable_pane() {
    let server = TestServer::start();
    let stub = Stub::start(&server, "ask", &["--ask", "rm -rf build", "--tool-ms", "4000"]);
    let usable = |what: &str| {
        let (code, answer, err) = wait_until(&server, &stub.pane, "idle", "20");
        assert_eq!(code, 0, "{what}: wait --until idle: {err}");
        let (lifecycle, attention, card) = signal(&server, &stub.pane);
        assert!(card.is_null(), "{what}: a card is left: {card}");
        assert_ne!(attention, "needs_input", "{what}: no question is open ({lifecycle})");
        answer
    };

    // Escape sent through Berth while the dialog is up: the turn ends at once.
    ask(&server, &stub, 1);
    server.berth_ok(&["send", &stub.pane, "--keys", "Escape"]);
    let answer = usable("escape");
    assert_eq!(answer["learned_from"], "interrupt", "{answer}");
    assert_eq!(signal(&server, &stub.pane).1, "none");

    // "No" in the agent's own dialog: it kills its hook and says nothing more.
    ask(&server, &stub, 2);
    server.berth_ok(&["send", &stub.pane, "n"]);
    stub.wait_for("settled", 2);
    let answer = usable("own dialog no");
    assert_eq!(
        (answer["lifecycle"].as_str(), answer["learned_from"].as_str()),
        (Some("idle"), Some("interrupt"))
    );
    assert_eq!(signal(&server, &stub.pane).1, "none");

    // "Yes" in its own dialog: the hook dies, the tool runs (the spinner going), the turn
    // goes on to PostToolUse and Stop; it never looks idle before its end.
    ask(&server, &stub, 3);
    server.berth_ok(&["send", &stub.pane, "y"]);
    stub.wait_for("settled", 3);
    let mut seen = Vec::new();
    let done = poll(Duration::from_secs(30), "the turn to end done", || {
        let (lifecycle, attention, card) = signal(&server, &stub.pane);
        assert!(card.is_null(), "the card is taken back at once: {card}");
        seen.push(lifecycle.clone());
        (lifecycle == "done").then_some(attention)
    });
    assert!(!seen.iter().any(|l| l == "idle" || l == "blocked"), "{seen:?}");
    assert_eq!(done, "unread", "done with needs_input was defect 2");
    assert_eq!(usable("own dialog yes")["last_message"], "stub finished");
}

/// The hook's wait runs out while the dialog is up (codex's 30 s; here 1 s): the agent's own
/// prompt still asks, so the pane stays `blocked` and `needs_input` with a card nobody can
/// answer; answered there, the turn ends `done` and `unread`, no longer `needs_input`
/// (issue 26, defect 2).
#[test]
fn stub_claude_question_answered_in_its_own_dialog_after_the_hook_wait() {
    let server = TestServer::start();
    let stub = Stub::start(&server, "expire", &["--ask", "make", "--hook-wait", "1"]);
    assert_eq!(submit(&server, &stub.pane, &["run it"])["confirmed"], true);
    stub.wait_for("hook_answer", 1);
    let (lifecycle, attention, card) = poll(Duration::from_secs(20), "the card lost", || {
        let s = signal(&server, &stub.pane);
        (s.2["answerable"] == false).then_some(s)
    });
    assert_eq!((lifecycle.as_str(), attention.as_str()), ("blocked", "needs_input"), "{card}");
    server.berth_ok(&["send", &stub.pane, "y"]);
    let (code, answer, err) = wait_until(&server, &stub.pane, "idle", "20");
    assert_eq!(code, 0, "{err}");
    assert_eq!(answer["lifecycle"], "done", "{answer}");
    let (_, attention, card) = signal(&server, &stub.pane);
    assert_eq!((attention.as_str(), card), ("unread", Value::Null));
}
