//! An orchestrating claude drives Berth through `berth mcp` (issue 30): the real claude
//! 2.1.197 (`scripts/test-agents`) in a Berth pane, its model the scripted Anthropic API
//! (`tests/support/model_anthropic.py`), with `berth mcp` registered by the real
//! `berth hook install claude`.
//!
//! The model has the orchestrator call `start_task` twice (two workers, real claude too, each
//! scripted to commit a file and `berth task report`), then `wait_task` for each (the reports
//! come back in the tool results the model receives), then `finish_task` to merge each: every
//! merge opens a decision in the orchestrator's pane, which the test answers as a person
//! (`berth decide` outside Berth, the same `pane.decide` the window sends), and the merges
//! land on `main`. The workers' own permission requests (their commit) are answered the same
//! way. The codex orchestrator is left for the OpenAI scripted model (issue 21's other half).
//!
//! Skipped (passing, with a message) unless `BERTH_AGENTS_NPM` names the agents' npm prefix.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::git::{git, repo};
use support::real_agents::*;
use support::*;

/// The API key claude is given: never checked by anything but claude's own approval list.
const KEY: &str = "sk-ant-berth-test-not-a-real-key-000001";
/// How long the whole orchestration may take (two claude workers start and work, on a busy
/// machine).
const ORCHESTRATION: Duration = Duration::from_secs(480);

/// A `Bash` tool call.
fn bash(command: &str) -> Value {
    json!({ "tool": "Bash", "input": { "command": command, "description": "A step of the test" } })
}

fn tool(name: &str, input: Value) -> Value {
    json!({ "tool": format!("mcp__berth__{name}"), "input": input })
}

/// What worker `n` runs: commit its file, report the task done.
fn worker_command(n: u32) -> String {
    format!(
        "printf 'by worker {n}\\n' > w{n}.txt && git add w{n}.txt && git commit -qm 'Add w{n}.txt' \
         && berth task report --status completed --summary 'Added w{n}.txt' --evidence 'w{n}.txt committed'"
    )
}

/// The script: the workers' cases, and the orchestrator's first steps (its waits and merges
/// are added once the task ids are known).
fn script(repo: &Path, rest: &[Value]) -> Value {
    let start = |n: u32| {
        tool(
            "start_task",
            json!({
                "repo": repo, "agent": "claude", "label": format!("w{n}"),
                "objective": format!("T-W{n} add the file w{n}.txt and commit it"),
                "acceptance": [format!("w{n}.txt is committed")], "ready_timeout_s": 120,
            }),
        )
    };
    // A command claude asks about (it writes outside the repo; `echo` alone it runs without
    // asking): the test's moment to add the steps that name the tasks.
    let sync = bash("printf started > ../orchestrator-started.txt");
    let mut orch = vec![start(1), start(2), sync];
    orch.extend_from_slice(rest);
    json!({ "cases": {
        "T-ORCH": orch,
        "T-W1": [bash(&worker_command(1)), { "text": "w1 is done and reported." }],
        "T-W2": [bash(&worker_command(2)), { "text": "w2 is done and reported." }],
    }})
}

/// The scripted model of this case.
struct Model {
    url: String,
    log: PathBuf,
    script: PathBuf,
    child: Child,
}

impl Model {
    fn start(dir: &Path, script: &Value) -> Model {
        fs::create_dir_all(dir).unwrap();
        let (script_path, log, port) =
            (dir.join("script.json"), dir.join("requests.jsonl"), dir.join("port"));
        fs::write(&script_path, script.to_string()).unwrap();
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
        Model { url: format!("http://127.0.0.1:{port}"), log, script: script_path, child }
    }

    fn rewrite(&self, script: &Value) {
        let tmp = self.script.with_extension("tmp");
        fs::write(&tmp, script.to_string()).unwrap();
        fs::rename(&tmp, &self.script).unwrap();
    }

    /// The main calls answered from `marker` at `step`.
    fn calls(&self, marker: &str, step: u64) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["kind"] == "main" && r["marker"] == marker && r["step"] == step)
            .map(|r| r["body"].clone())
            .collect()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of the last tool result in a request body.
fn last_tool_result(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    for m in messages.iter().rev() {
        for block in m["content"].as_array().cloned().unwrap_or_default() {
            if block["type"] == "tool_result" {
                return match &block["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
            }
        }
    }
    String::new()
}

#[test]
fn claude_orchestrates_two_tasks_through_berth_mcp() {
    let case = "claude_orchestrates_two_tasks_through_berth_mcp";
    let Some(bin) = npm_bin(case) else { return };
    let dir = std::env::temp_dir().join(format!("berth-mcp-model-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    // The repo's path is only known once the server's dirs are: a first script without it.
    let model = Model::start(&dir, &json!({ "cases": {} }));
    let env = [
        ("ANTHROPIC_BASE_URL", model.url.as_str()),
        ("ANTHROPIC_API_KEY", KEY),
        ("ENABLE_TOOL_SEARCH", "false"),
    ];
    let world = World::new_with(&bin, Agent::Claude, true, &env);
    let server = &world.server;
    let repo = repo(server, "api", &[("README", b"api\n")]);
    model.rewrite(&script(&repo, &[]));

    // claude's own files: onboarding done, the dirs trusted, the key approved; then the real
    // `berth hook install claude` adds `berth mcp`, and the settings allow its tools.
    let mut projects = serde_json::Map::new();
    for d in [&world.work, &repo] {
        projects.insert(
            d.display().to_string(),
            json!({ "hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true }),
        );
    }
    let config = json!({
        "hasCompletedOnboarding": true, "theme": "dark",
        "customApiKeyResponses": { "approved": [&KEY[KEY.len() - 20..]], "rejected": [] },
        "projects": projects,
    });
    fs::write(server.home.join(".claude.json"), config.to_string()).unwrap();
    let out = server.berth_ok(&["hook", "install", "claude"]);
    assert!(out.contains("MCP server (berth mcp) registered"), "{out}");
    let settings_path = server.home.join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["permissions"] = json!({ "allow": ["mcp__berth"] });
    fs::write(&settings_path, settings.to_string()).unwrap();

    // The orchestrator: claude in the repo, its `berth mcp` started.
    let orch = server.berth_ok(&["new", "--cwd", repo.to_str().unwrap(), "--", "claude"]);
    server.call("pane.resize", json!({ "pane_id": orch, "cols": COLS, "rows": ROWS }));
    settled(case, Agent::Claude.ready(), || berth_screen(server, &orch));
    poll(START, "claude known and idle", || {
        let e = server.pane(&orch)?;
        (e["agent"]["kind"] == "claude" && e["lifecycle"] == "idle").then_some(())
    });
    poll(START, "claude's berth mcp to run", || {
        (!server.pids_matching("mcp").is_empty()).then_some(())
    });
    submit(server, &orch, "T-ORCH split this into two tasks and merge them once they pass");

    let tasks = || -> Vec<Value> {
        let out = server.berth_ok(&["task", "ls", "--json"]);
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        v["tasks"].as_array().cloned().or_else(|| v.as_array().cloned()).unwrap_or_default()
    };
    let id_of = |label: &str| -> Option<String> {
        tasks().into_iter().find(|t| t["label"] == label)?["id"].as_str().map(str::to_owned)
    };
    let mut merge_prompts = Vec::new();
    let mut answered = Vec::new();
    let deadline = Instant::now() + ORCHESTRATION;
    loop {
        let merged = ["w1", "w2"].iter().all(|l| {
            tasks().iter().any(|t| t["label"] == *l && t["disposition"]["outcome"] == "merged")
        });
        if merged && !model.calls("T-ORCH", 7).is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{case}: not done in time; tasks {:?}; decisions answered {answered:?}; hooks:\n{}\n\
             orchestrator screen:\n{}",
            tasks(),
            hook_log(&world.tools),
            berth_screen(server, &orch).join("\n")
        );
        let list = server.list();
        for pane in panes_of(&list) {
            let d = &pane["pending_decision"];
            if d["answerable"] != true || answered.contains(&d["id"]) {
                continue;
            }
            let id = pane["id"].as_str().or(pane["pane_id"].as_str()).unwrap().to_owned();
            let prompt = d["prompt"].as_str().unwrap_or_default().to_owned();
            if id == orch && d["tool"] == "Bash" {
                // Both tasks are started: the orchestrator's waits and merges, by id.
                let (a, b) = (id_of("w1").expect("task w1"), id_of("w2").expect("task w2"));
                let wait = |t: &str| tool("wait_task", json!({ "task_id": t, "timeout_s": 400 }));
                let finish =
                    |t: &str| tool("finish_task", json!({ "task_id": t, "action": "merge" }));
                let rest = [
                    wait(&a),
                    wait(&b),
                    finish(&a),
                    finish(&b),
                    json!({ "text": "Both tasks passed and are merged." }),
                ];
                model.rewrite(&script(&repo, &rest));
            } else if id == orch {
                merge_prompts.push(prompt.clone());
            }
            server.berth_ok(&["decide", &id, "allow"]);
            answered.push(d["id"].clone());
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    // The waits returned both reports to the model; the merges were asked of the person.
    let after_wait = |step| last_tool_result(&model.calls("T-ORCH", step)[0]);
    let (first, second) = (after_wait(4), after_wait(5));
    assert!(first.contains("Added w1.txt") && first.contains("completed"), "{first}");
    assert!(second.contains("Added w2.txt") && second.contains("completed"), "{second}");
    assert_eq!(merge_prompts.len(), 2, "{merge_prompts:?}");
    for (prompt, label) in merge_prompts.iter().zip(["w1", "w2"]) {
        assert!(
            prompt.starts_with("claude in ")
                && prompt.ends_with(&format!("asks to merge task {label}")),
            "{prompt}"
        );
    }
    let merged = last_tool_result(&model.calls("T-ORCH", 7)[0]);
    assert!(merged.contains("merged"), "{merged}");
    for n in [1, 2] {
        assert_eq!(
            fs::read_to_string(repo.join(format!("w{n}.txt"))).unwrap(),
            format!("by worker {n}\n")
        );
    }
    let subjects = git(&repo, &["log", "--format=%s", "main"]);
    assert!(subjects.contains("Add w1.txt") && subjects.contains("Add w2.txt"), "{subjects}");
}
