//! `berth mcp` (issue 30): the Model Context Protocol spoken by the real binary against a real
//! `berth server`, real git repos and the stub agent as the tasks' worker.
//!
//! - The protocol: initialize, `tools/list` with valid schemas, every tool with good and bad
//!   arguments, a `wait_task` that sends progress and is cancelled, a Berth server that goes
//!   away in the middle of a call.
//! - Who may do what (the rules are the server's): `berth mcp` run inside an agent's pane
//!   (its program is named `claude`) starts and waits for tasks freely, but its merge opens a
//!   decision in its own pane that a person answers; neither it nor a worker can answer it
//!   through MCP; a denial leaves the task as it was; a workspace the person opted in merges
//!   without asking.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use support::git::{git, server_with_data_home as server};
use support::mcp::*;
use support::task::{python, stub_script};
use support::*;

const WAIT: Duration = Duration::from_secs(30);

/// The tools `berth mcp` offers.
const TOOLS: [&str; 10] = [
    "status",
    "read_pane",
    "search_pane",
    "start_task",
    "wait_task",
    "show_task",
    "task_diff",
    "submit",
    "finish_task",
    "notify",
];

/// A repo on `main` with one commit holding `a.txt`.
fn repo(server: &TestServer, name: &str) -> PathBuf {
    support::git::repo(server, name, &[("a.txt", b"one\ntwo\n")])
}

/// What the stub worker runs when it gets its prompt: write `file`, commit, report.
fn commit_and_report(file: &str) -> String {
    format!(
        "printf 'hello\\n' > {file} && git add {file} && git commit -qm 'task work' && \
         {} task report --status completed --summary 'wrote {file}' --evidence 'it is there'",
        berth_bin().display()
    )
}

/// `start_task`'s arguments for a stub worker on `repo`; `work` is what it runs on its prompt
/// (none: it never reports).
fn start_args(server: &TestServer, repo: &Path, label: &str, work: Option<&str>) -> Value {
    let log = server.root.path().join(format!("{label}.log"));
    let mut command = vec![
        python().to_owned(),
        stub_script().display().to_string(),
        "--berth".into(),
        berth_bin().display().to_string(),
        "--log".into(),
        log.display().to_string(),
    ];
    if let Some(work) = work {
        command.extend(["--on-submit".to_owned(), work.to_owned()]);
    }
    json!({
        "repo": repo, "agent": "claude", "objective": format!("Add {label}.txt"),
        "acceptance": [format!("{label}.txt is committed")], "label": label, "command": command,
    })
}

/// Checks one tool's input schema: a JSON object schema whose required names are properties
/// and that refuses unknown ones.
fn check_schema(tool: &Value) {
    let name = tool["name"].as_str().unwrap();
    let schema = &tool["inputSchema"];
    assert_eq!(schema["type"], "object", "{name}: {schema}");
    assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
    let props = schema["properties"].as_object().cloned().unwrap_or_default();
    for required in schema["required"].as_array().cloned().unwrap_or_default() {
        let required = required.as_str().unwrap();
        assert!(props.contains_key(required), "{name}: {required} is not a property: {schema}");
    }
    for (prop, spec) in &props {
        assert!(spec.is_object(), "{name}.{prop}: {spec}");
    }
    assert!(tool["description"].as_str().is_some_and(|d| d.len() > 10), "{name}");
}

/// Initialize, the tool list, and every tool with good and bad arguments, as a person (the
/// test runs `berth mcp` itself); then a cancelled `wait_task` and a server that goes away.
#[test]
fn every_tool_answers_good_arguments_and_refuses_bad_ones() {
    let mut server = server();
    let repo = repo(&server, "app");
    let mut mcp = Mcp::spawn(&server);
    let init = mcp.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "berth", "{init}");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");

    let list = mcp.call("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().cloned().unwrap_or_default();
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    let mut want = TOOLS.to_vec();
    want.sort_unstable();
    assert_eq!(names, want, "{list}");
    tools.iter().for_each(check_schema);
    // No tool answers a decision.
    assert!(!names.iter().any(|n| n.contains("decide") || n.contains("approve")));

    // An unknown tool, unknown arguments, arguments of the wrong type.
    let unknown = mcp.tool("decide", json!({}));
    assert!(unknown.get("error").is_some(), "{unknown}");
    bad_arguments(&mcp.tool("status", json!({ "verbose": true })));
    bad_arguments(&mcp.tool("read_pane", json!({ "pane": 7 })));

    // status, read_pane, search_pane on a pane with known text.
    let pane = server.berth_ok(&["new", "--", "bash", "--norc", "--noprofile"]);
    server.berth_ok(&["send", &pane, "--enter", "echo marker-$((6*7))"]);
    server.wait_text(&pane, "marker-42", WAIT);
    let status = ok_json(&mcp.tool("status", json!({})));
    assert!(status["workspaces"].to_string().contains(&pane), "{status}");
    assert!(status["decisions"].is_array() && status["tasks"].is_array(), "{status}");
    let screen = ok_text(&mcp.tool("read_pane", json!({ "pane": pane })));
    assert!(screen.contains("marker-42"), "{screen}");
    let last = ok_text(&mcp.tool("read_pane", json!({ "pane": pane, "lines": 3 })));
    assert!(last.lines().count() <= 3 && last.contains("marker-42"), "{last:?}");
    bad_arguments(&mcp.tool("read_pane", json!({ "pane": pane, "lines": 0 })));
    bad_arguments(&mcp.tool("read_pane", json!({ "pane": "not-a-pane" })));
    bad_arguments(
        &mcp.tool("read_pane", json!({ "pane": "pane_00000000000000000000000000000000" })),
    );
    let found = ok_json(&mcp.tool("search_pane", json!({ "pane": pane, "query": "marker-4" })));
    assert!(found.to_string().contains("marker-42"), "{found}");
    bad_arguments(&mcp.tool("search_pane", json!({ "pane": pane, "query": "" })));

    // notify: from the caller's pane (none here: a person outside Berth).
    let note = ok_json(&mcp.tool("notify", json!({ "title": "from mcp", "body": "hi" })));
    assert!(note["notification"].is_string(), "{note}");
    bad_arguments(&mcp.tool("notify", json!({ "title": " " })));

    // submit into the shell's pane (a person's act: at once).
    let sent = mcp.tool("submit", json!({ "pane": pane, "prompt": "echo submitted-$((6*7))" }));
    ok_text(&sent);
    server.wait_text(&pane, "submitted-42", WAIT);
    bad_arguments(&mcp.tool("submit", json!({ "pane": pane, "prompt": "" })));

    // start_task → wait_task → show_task → task_diff → finish_task.
    let started = ok_json(&mcp.tool(
        "start_task",
        start_args(&server, &repo, "one", Some(&commit_and_report("one.txt"))),
    ));
    let id = started["id"].as_str().expect("task id").to_owned();
    bad_arguments(
        &mcp.tool("start_task", json!({ "repo": "relative", "agent": "claude", "objective": "x" })),
    );
    bad_arguments(
        &mcp.tool("start_task", json!({ "repo": repo, "agent": "nobody", "objective": "x" })),
    );
    bad_arguments(&mcp.tool("start_task", json!({ "repo": repo, "agent": "claude" })));
    let done = ok_json(&mcp.tool("wait_task", json!({ "task_id": id, "timeout_s": 60 })));
    assert_eq!(done["state"], "completed", "{done}");
    assert_eq!(done["result"]["summary"], "wrote one.txt", "{done}");
    bad_arguments(&mcp.tool("wait_task", json!({ "task_id": "task_nope" })));
    bad_arguments(&mcp.tool("wait_task", json!({ "task_id": id, "timeout_s": 0 })));
    bad_arguments(&mcp.tool("wait_task", json!({ "task_id": id, "until": "forever" })));
    let shown = ok_json(&mcp.tool("show_task", json!({ "task_id": id })));
    assert_eq!(shown["result"]["evidence"], "it is there", "{shown}");
    assert!(shown["diff_stat"].to_string().contains("one.txt"), "{shown}");
    bad_arguments(&mcp.tool("show_task", json!({})));
    let files = ok_json(&mcp.tool("task_diff", json!({ "task_id": id })));
    assert!(files["files"].to_string().contains("one.txt"), "{files}");
    let hunks =
        ok_json(&mcp.tool("task_diff", json!({ "task_id": id, "path": "one.txt", "limit": 1 })));
    assert!(hunks.to_string().contains("hello"), "{hunks}");
    bad_arguments(&mcp.tool("task_diff", json!({ "task_id": id, "offset": 2 })));
    bad_arguments(&mcp.tool("finish_task", json!({ "task_id": id, "action": "keep" })));
    bad_arguments(
        &mcp.tool("finish_task", json!({ "task_id": id, "action": "discard", "squash": true })),
    );
    let merged = ok_json(&mcp.tool("finish_task", json!({ "task_id": id, "action": "merge" })));
    assert_eq!(merged["disposition"]["outcome"], "merged", "{merged}");
    assert_eq!(std::fs::read_to_string(repo.join("one.txt")).unwrap(), "hello\n");
    let again = mcp.tool("finish_task", json!({ "task_id": id, "action": "merge" }));
    assert!(tool_error(&again).contains("CONFLICT"), "{again}");

    // A wait that sends progress and is cancelled: its connection to Berth closes.
    let pid = mcp.pid().expect("pid");
    // The runtime's own socket pair (signals) is there from the start: the baseline.
    let base = sockets_of(pid);
    let idle = ok_json(&mcp.tool("start_task", start_args(&server, &repo, "idle", None)));
    let idle_id = idle["id"].as_str().unwrap().to_owned();
    let wait = mcp.request(
        "tools/call",
        json!({ "name": "wait_task", "arguments": { "task_id": idle_id, "timeout_s": 120 },
                "_meta": { "progressToken": "wait-1" } }),
    );
    let progress = poll(WAIT, "a progress notification", || {
        let m = mcp.next_message(Duration::from_millis(200))?;
        if m["method"] == "notifications/progress" {
            return Some(m);
        }
        mcp.seen.push(m);
        None
    });
    assert_eq!(progress["params"]["progressToken"], "wait-1", "{progress}");
    assert!(
        progress["params"]["message"].as_str().is_some_and(|m| m.contains("is still")),
        "{progress}"
    );
    assert_eq!(sockets_of(pid), base + 1, "the wait holds its connection");
    mcp.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": { "requestId": wait, "reason": "the test gave up" } }));
    poll(WAIT, "the cancelled wait's connection to close", || {
        (sockets_of(pid) == base).then_some(())
    });
    ok_json(&mcp.tool("status", json!({})));
    assert!(!mcp.seen.iter().any(|m| m["id"] == wait && m["result"]["isError"] == false));

    // The Berth server goes away in the middle of a wait: an error result, and the MCP
    // session lives on.
    let wait = mcp.request(
        "tools/call",
        json!({ "name": "wait_task", "arguments": { "task_id": idle_id, "timeout_s": 120 } }),
    );
    poll(WAIT, "the wait's connection", || (sockets_of(pid) == base + 1).then_some(()));
    server.kill();
    let gone = mcp.answer(wait, WAIT);
    let why = tool_error(&gone);
    assert!(why.contains("went away") || why.contains("not reachable"), "{why}");
    let later = tool_error(&mcp.tool("status", json!({})));
    assert!(later.contains("not reachable"), "{later}");
    assert!(mcp.call("ping", json!({})).get("result").is_some());
}

/// An agent's pane whose program (`claude`, a script) runs `berth mcp` with FIFOs for its
/// standard streams, so the test speaks MCP to a process the server knows as the agent's.
fn agent_with_mcp(server: &TestServer, name: &str) -> (String, Mcp) {
    let dir = server.root.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for fifo in ["in", "out"] {
        let path = std::ffi::CString::new(dir.join(fifo).display().to_string()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    }
    let script = dir.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\n'{}' mcp < '{d}/in' > '{d}/out' 2> '{d}/err'\nsleep 600\n",
            berth_bin().display(),
            d = dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let pane = server.berth_ok(&["new", "--", &script.display().to_string()]);
    let mut mcp = Mcp::over_fifos(&dir.join("in"), &dir.join("out"));
    mcp.initialize();
    (pane, mcp)
}

/// The pane's pending decision, once there is one.
fn pending(server: &TestServer, pane: &str) -> Value {
    poll(WAIT, "a pending decision", || {
        let d = server.pane(pane)?["pending_decision"].clone();
        (d["answerable"] == true).then_some(d)
    })
}

/// An agent starts and waits for tasks freely; its merge waits on the person's decision in
/// its own pane, which neither it nor a worker can answer through MCP; a denial changes
/// nothing; an allow merges; in a workspace the person opted in, no decision at all.
#[test]
fn an_agents_merge_waits_for_the_person_and_no_agent_can_answer() {
    let server = server();
    let repo = repo(&server, "api");
    let (orch, mut mcp) = agent_with_mcp(&server, "orchestrator");
    let (worker, mut other) = agent_with_mcp(&server, "worker");

    // Starting and waiting: allowed, no decision.
    let a = ok_json(&mcp.tool(
        "start_task",
        start_args(&server, &repo, "parse-fix", Some(&commit_and_report("parse.txt"))),
    ));
    let b = ok_json(&mcp.tool(
        "start_task",
        start_args(&server, &repo, "lint-fix", Some(&commit_and_report("lint.txt"))),
    ));
    let (a, b) = (a["id"].as_str().unwrap().to_owned(), b["id"].as_str().unwrap().to_owned());
    for id in [&a, &b] {
        let done = ok_json(&mcp.tool("wait_task", json!({ "task_id": id, "timeout_s": 60 })));
        assert_eq!(done["state"], "completed", "{done}");
    }
    assert!(server.pane(&orch).unwrap()["pending_decision"].is_null());

    // The merge asks the person, in the orchestrator's pane.
    let merge = mcp.request(
        "tools/call",
        json!({ "name": "finish_task", "arguments": { "task_id": a, "action": "merge" } }),
    );
    let decision = pending(&server, &orch);
    let prompt = decision["prompt"].as_str().unwrap();
    assert!(
        prompt.starts_with("claude in ") && prompt.ends_with("asks to merge task parse-fix"),
        "{decision}"
    );
    assert!(!repo.join("parse.txt").exists(), "nothing merged before the answer");

    // Nobody answers it through MCP: typing into the waiting pane is refused to the worker
    // and to the orchestrator itself (its own pane), and so is a merge the worker asks for
    // answered by itself (a decision in its own pane it cannot type into either).
    let typed = other.tool("submit", json!({ "pane": orch, "prompt": "1" }));
    assert!(tool_error(&typed).contains("NOT_PERMITTED"), "{typed}");
    let own = mcp.tool("submit", json!({ "pane": orch, "prompt": "allow" }));
    assert!(tool_error(&own).contains("NOT_PERMITTED"), "{own}");
    let theirs = other.request(
        "tools/call",
        json!({ "name": "finish_task", "arguments": { "task_id": b, "action": "merge" } }),
    );
    let asked = pending(&server, &worker);
    assert!(asked["prompt"].as_str().unwrap().ends_with("asks to merge task lint-fix"), "{asked}");
    let self_answer = other.tool("submit", json!({ "pane": worker, "prompt": "allow" }));
    assert!(tool_error(&self_answer).contains("NOT_PERMITTED"), "{self_answer}");
    let cross = mcp.tool("submit", json!({ "pane": worker, "prompt": "allow" }));
    assert!(tool_error(&cross).contains("NOT_PERMITTED"), "{cross}");
    // The person denies the worker's merge: nothing happens to its task.
    server.berth_ok(&["decide", &worker, "deny", "--message", "not yet"]);
    let denied = other.answer(theirs, WAIT);
    let why = tool_error(&denied);
    assert!(why.contains("declined") && why.contains("not yet"), "{why}");
    assert!(!repo.join("lint.txt").exists());
    let b_now = ok_json(&other.tool("show_task", json!({ "task_id": b })));
    assert_eq!(b_now["disposition"]["outcome"], "none", "{b_now}");
    // The person allows the orchestrator's merge (the window's path: `pane.decide`).
    assert!(server.pane(&orch).unwrap()["pending_decision"]["id"] == decision["id"]);
    server.berth_ok(&["decide", &orch, "allow"]);
    let merged = ok_json(&mcp.answer(merge, WAIT));
    assert_eq!(merged["disposition"]["outcome"], "merged", "{merged}");
    assert_eq!(std::fs::read_to_string(repo.join("parse.txt")).unwrap(), "hello\n");
    git(&repo, &["log", "--oneline", "-1"]);

    // Opted in: the workspace's agents merge without asking.
    let ws = server.list()["workspaces"][0]["name"].as_str().unwrap().to_owned();
    server.berth_ok(&["workspace", "agent-drive", &ws, "on"]);
    let merged = ok_json(&mcp.tool("finish_task", json!({ "task_id": b, "action": "merge" })));
    assert_eq!(merged["disposition"]["outcome"], "merged", "{merged}");
    assert!(repo.join("lint.txt").exists());
}

/// `berth hook install` registers `berth mcp` in each agent's own config format, keeping what
/// was there; `berth doctor` says so; `--uninstall` gives each file back exactly.
#[test]
fn hook_install_registers_berth_mcp_and_uninstall_takes_it_out_exactly() {
    let server = TestServer::prepare();
    let home = &server.home;
    let claude = home.join(".claude.json");
    let claude_before = "{\n  \"numStartups\": 4,\n  \"mcpServers\": {\n    \"docs\": { \"command\": \"docs-mcp\" }\n  }\n}\n";
    std::fs::write(&claude, claude_before).unwrap();
    let codex = home.join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    let codex_before = "model = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::write(&codex, codex_before).unwrap();
    let opencode = home.join(".config/opencode/opencode.json");
    // A PATH where the doctor finds the three agents (empty scripts: it only looks).
    let bin = server.root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for agent in ["claude", "codex", "opencode"] {
        std::fs::write(bin.join(agent), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            bin.join(agent),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    let run = |args: &[&str]| {
        let out = server
            .command()
            .args(args)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("OPENCODE_CONFIG_DIR")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mcp_lines = |text: &str| -> Vec<String> {
        text.lines().filter(|l| l.contains("berth mcp")).map(str::to_owned).collect()
    };
    let before = mcp_lines(&run(&["doctor"]));
    assert_eq!(before.len(), 3, "{before:?}");
    assert!(before.iter().all(|l| l.contains("not registered")), "{before:?}");
    for agent in ["claude", "codex", "opencode"] {
        let out = run(&["hook", "install", agent]);
        assert!(out.contains("MCP server (berth mcp) registered"), "{agent}: {out}");
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&claude).unwrap()).unwrap();
    assert_eq!(
        doc["mcpServers"]["berth"],
        json!({ "type": "stdio", "command": "berth", "args": ["mcp"] })
    );
    assert_eq!(doc["mcpServers"]["docs"]["command"], "docs-mcp");
    assert_eq!(doc["numStartups"], 4);
    let toml_text = std::fs::read_to_string(&codex).unwrap();
    assert!(toml_text.starts_with(codex_before), "{toml_text}");
    assert!(
        toml_text.contains("[mcp_servers.berth]\ncommand = \"berth\"\nargs = [\"mcp\"]"),
        "{toml_text}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&opencode).unwrap()).unwrap();
    assert_eq!(doc["mcp"]["berth"]["command"], json!(["berth", "mcp"]));
    let after = mcp_lines(&run(&["doctor"]));
    assert!(after.len() == 3 && after.iter().all(|l| l.contains("is registered")), "{after:?}");
    // A second install changes nothing.
    let once = std::fs::read(&claude).unwrap();
    assert!(run(&["hook", "install", "claude"]).contains("already in"));
    assert_eq!(std::fs::read(&claude).unwrap(), once);
    for agent in ["claude", "codex", "opencode"] {
        run(&["hook", "install", agent, "--uninstall"]);
    }
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), claude_before);
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), codex_before);
    assert!(!opencode.exists(), "a file Berth made alone goes again");
    assert!(mcp_lines(&run(&["doctor"])).iter().all(|l| l.contains("not registered")));
}

/// A tool call refused: an error result saying the arguments are bad (or, for what the SDK
/// cannot even read as a call, a JSON-RPC error).
fn refused_call(answer: &Value) {
    if answer.get("error").is_some() {
        assert!(answer["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{answer}");
    } else {
        bad_arguments(answer);
    }
}

/// Hardening: every tool with hostile arguments (wrong types, missing fields, huge strings
/// and arrays, negative and huge numbers, unknown and malformed ids, paths out of the
/// worktree, NUL bytes): each is refused as bad arguments, nothing is started or changed,
/// and the MCP session and the Berth server answer on. Regressions: `start_task` passed any
/// `ready_timeout_s` on (2^64-1 made a worktree and a worker, then its answer never came);
/// `task_diff` handed any path (`../../etc/passwd`, NUL bytes) to git and answered that the
/// file "has no changes".
#[test]
fn every_tool_refuses_hostile_arguments_and_lives_on() {
    let server = server();
    let repo = repo(&server, "hostile");
    let task = support::task::StubTask::labelled(&server, &repo, "hostile").start(&server);
    let id = task["id"].as_str().unwrap().to_owned();
    let pane = server.berth_ok(&["new", "--", "sleep", "4301"]);
    let mut mcp = Mcp::spawn(&server);
    mcp.initialize();
    let huge = "x".repeat(200_000);
    let (no_task, no_pane) =
        ("task_00000000000000000000000000000000", "pane_00000000000000000000000000000000");
    let start = |extra: Value| {
        let mut args = json!({ "repo": repo, "agent": "claude", "objective": "Add x.txt" });
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    let cases: Vec<(&str, Value)> = vec![
        ("status", json!({ "all": true })),
        ("read_pane", json!({})),
        ("read_pane", json!({ "pane": pane, "lines": -1 })),
        ("read_pane", json!({ "pane": pane, "lines": 1u64 << 40 })),
        ("read_pane", json!({ "pane": pane, "lines": 5001 })),
        ("read_pane", json!({ "pane": pane, "lines": "3" })),
        ("read_pane", json!({ "pane": "../../etc/passwd" })),
        ("read_pane", json!({ "pane": "pane_\u{0}x" })),
        ("read_pane", json!({ "pane": no_pane })),
        ("read_pane", json!({ "pane": huge })),
        ("search_pane", json!({ "pane": pane })),
        ("search_pane", json!({ "pane": pane, "query": huge })),
        ("search_pane", json!({ "pane": pane, "query": 7 })),
        ("search_pane", json!({ "pane": no_pane, "query": "x" })),
        ("start_task", start(json!({ "ready_timeout_s": u64::MAX }))),
        ("start_task", start(json!({ "ready_timeout_s": 1u64 << 40 }))),
        ("start_task", start(json!({ "ready_timeout_s": -1 }))),
        ("start_task", start(json!({ "objective": huge }))),
        ("start_task", start(json!({ "objective": "" }))),
        ("start_task", start(json!({ "constraints": vec!["c"; 1000] }))),
        ("start_task", start(json!({ "acceptance": [huge] }))),
        ("start_task", start(json!({ "command": vec!["x"; 100] }))),
        ("start_task", start(json!({ "base": "--upload-pack=evil" }))),
        ("start_task", start(json!({ "label": "a\u{0}b" }))),
        ("start_task", start(json!({ "repo": "../relative" }))),
        ("start_task", start(json!({ "agent": "rm -rf" }))),
        ("wait_task", json!({ "task_id": id, "timeout_s": u64::MAX })),
        ("wait_task", json!({ "task_id": id, "timeout_s": -5 })),
        ("wait_task", json!({ "task_id": "../x" })),
        ("wait_task", json!({ "task_id": no_task, "timeout_s": 1 })),
        ("show_task", json!({ "task_id": no_task })),
        ("show_task", json!({ "task_id": huge })),
        ("show_task", json!({ "task_id": null })),
        ("task_diff", json!({ "task_id": id, "path": "../../../../etc/passwd" })),
        ("task_diff", json!({ "task_id": id, "path": "/etc/passwd" })),
        ("task_diff", json!({ "task_id": id, "path": "a.txt\u{0}" })),
        ("task_diff", json!({ "task_id": id, "path": "d/".repeat(5000) })),
        ("task_diff", json!({ "task_id": id, "path": "a.txt", "offset": -1 })),
        ("task_diff", json!({ "task_id": id, "path": "a.txt", "limit": 0 })),
        ("task_diff", json!({ "task_id": id, "path": "a.txt", "limit": 1e30 })),
        ("task_diff", json!({ "task_id": no_task })),
        ("submit", json!({ "pane": pane, "prompt": "x".repeat(40_000) })),
        ("submit", json!({ "pane": no_pane, "prompt": "hi" })),
        ("submit", json!({ "pane": pane })),
        ("finish_task", json!({ "task_id": no_task, "action": "discard" })),
        ("finish_task", json!({ "task_id": id, "action": 1 })),
        ("finish_task", json!({ "task_id": id })),
        ("notify", json!({})),
        ("notify", json!({ "title": 7 })),
        ("notify", json!({ "title": "x", "body": ["y"] })),
    ];
    let before = server.call("task.show", json!({ "task_id": id }));
    for (tool, args) in cases {
        let shown = args.to_string().chars().take(100).collect::<String>();
        let answer = mcp.tool(tool, args);
        if answer.get("error").is_none() && answer["result"]["isError"] != true {
            panic!("{tool} {shown}: accepted: {answer}");
        }
        refused_call(&answer);
    }
    let tasks = server.call("task.list", json!({}));
    assert_eq!(tasks["tasks"].as_array().map(Vec::len), Some(1), "nothing started: {tasks}");
    let after = server.call("task.show", json!({ "task_id": id }));
    assert_eq!(after["disposition"], before["disposition"]);
    assert!(mcp.call("ping", json!({})).get("result").is_some());
    ok_json(&mcp.tool("status", json!({})));
    server.call("server.info", json!({}));
}
