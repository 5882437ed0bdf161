//! An orchestrating codex drives Berth through `berth mcp` (issue 30): the real codex 0.171.0
//! (`scripts/test-agents`) in a Berth pane, its model the scripted OpenAI Responses API
//! (`tests/support/model_openai.py`), with its hooks and `berth mcp` registered by the real
//! `berth hook install codex` in its private HOME.
//!
//! The model has the orchestrator call `start_task` twice (two workers, real codex too, each
//! scripted to commit a file and report as its task's prompt says), then `wait_task` for each
//! (the reports come back in the tool results the model receives), then `finish_task` to merge
//! each: every merge opens a decision in the orchestrator's pane, which the test answers as a
//! person (`berth decide` outside Berth, the same `pane.decide` the window sends), and the
//! merges land on `main`. While the first merge waits on the person, the first worker is
//! prompted to merge its task itself (through its own `berth mcp`: a decision in its own pane,
//! which the person refuses) and the second to answer the orchestrator's decision by typing
//! into its pane (refused by Berth). Codex asks before every MCP call and every command run
//! outside its sandbox; those questions reach Berth through its hooks, and the test allows them
//! as a person does.
//!
//! Codex offers an MCP server's tools to the model as the functions of a Responses API
//! namespace `mcp__SERVER` (here `mcp__berth`: `start_task`, `wait_task`, …); the model's call
//! names the namespace and the function.
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

const KEY: &str = "sk-berth-test-not-a-key";
/// How long the whole orchestration may take (two codex workers start and work, on a busy
/// machine).
const ORCHESTRATION: Duration = Duration::from_secs(420);

/// A Berth tool as codex offers it to the model: a function of the namespace `mcp__berth`.
fn tool(name: &str, input: Value) -> Value {
    json!({ "namespace": "mcp__berth", "tool": name, "input": input })
}

/// Codex's shell tool, asking to run outside its sandbox (so that codex asks, and Berth shows
/// the decision).
fn shell(command: &str) -> Value {
    json!({
        "tool": "exec_command",
        "input": {
            "cmd": command,
            "sandbox_permissions": "require_escalated",
            "justification": "A step of the Berth test",
        },
    })
}

/// What worker `n` runs: commit its file, report the task done (with the command its prompt
/// gives: codex's `bash -lc` may reset PATH).
fn worker_command(n: u32) -> String {
    format!(
        "printf 'by worker {n}\\n' > w{n}.txt && git add w{n}.txt && git commit -qm 'Add w{n}.txt' \
         && {{report}} --status completed --summary 'Added w{n}.txt' --evidence 'w{n}.txt committed'"
    )
}

/// The script: the workers' cases, and the orchestrator's first steps (its waits and merges
/// are added once the task ids are known). With `probes` (the orchestrator's pane, the first
/// task): the workers' tries, while the orchestrator's first merge waits on the person, to
/// merge the first task themselves and to answer the orchestrator's decision.
fn script(repo: &Path, rest: &[Value], probes: Option<(&str, &str)>) -> Value {
    let start = |n: u32| {
        tool(
            "start_task",
            json!({
                "repo": repo, "agent": "codex", "label": format!("w{n}"),
                "objective": format!("T-W{n} add the file w{n}.txt and commit it"),
                "acceptance": [format!("w{n}.txt is committed")], "ready_timeout_s": 180,
            }),
        )
    };
    // A command codex asks about: the test's moment to add the steps that name the tasks.
    let sync = shell("printf started > ../orchestrator-started.txt");
    let mut orch = vec![start(1), start(2), sync];
    orch.extend_from_slice(rest);
    let mut cases = json!({
        "T-ORCH": orch,
        "T-W1": [shell(&worker_command(1)), { "text": "w1 is done and reported." }],
        "T-W2": [shell(&worker_command(2)), { "text": "w2 is done and reported." }],
    });
    if let Some((orch, task)) = probes {
        cases["T-W1X"] = json!([
            tool("finish_task", json!({ "task_id": task, "action": "merge" })),
            { "text": "I could not merge it." },
        ]);
        cases["T-W2X"] = json!([
            tool("submit", json!({ "pane": orch, "prompt": "1" })),
            { "text": "I could not answer it." },
        ]);
    }
    json!({ "cases": cases })
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
        Model { url: format!("http://127.0.0.1:{port}/v1"), log, script: script_path, child }
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

/// The output of the last tool call in a Responses request body.
fn last_tool_result(body: &Value) -> String {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let Some(last) =
        input.iter().rev().find(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
    else {
        return String::new();
    };
    match &last["output"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The function tools a request offers the model, by name (`NAMESPACE/NAME` for a
/// namespace's).
fn tool_names(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for t in body["tools"].as_array().cloned().unwrap_or_default() {
        if let Some(n) = t["name"].as_str() {
            names.push(n.to_owned());
        }
        for inner in t["tools"].as_array().cloned().unwrap_or_default() {
            if let Some(n) = inner["name"].as_str() {
                names.push(format!("{}/{n}", t["name"].as_str().unwrap_or_default()));
            }
        }
    }
    names
}

#[test]
fn codex_orchestrates_two_tasks_through_berth_mcp() {
    let case = "codex_orchestrates_two_tasks_through_berth_mcp";
    let Some(bin) = npm_bin(case) else { return };
    let dir = std::env::temp_dir().join(format!("berth-mcp-codex-model-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    // The repo's path is only known once the server's dirs are: a first script without it.
    let model = Model::start(&dir, &json!({ "cases": {} }));
    let world = World::new_with(&bin, Agent::Codex, false, &[("BERTH_TEST_OPENAI_KEY", KEY)]);
    let server = &world.server;
    let repo = repo(server, "api", &[("README", b"api\n")]);
    model.rewrite(&script(&repo, &[], None));

    // codex's config: the scripted model as its provider, the repo trusted (its tasks'
    // worktrees are checkouts of it); then the real `berth hook install codex` adds Berth's
    // hooks (hooks.json) and `berth mcp` (config.toml).
    let path = server.home.join(".codex/config.toml");
    let rest = fs::read_to_string(&path).unwrap();
    let config = format!(
        "model = \"scripted\"\nmodel_provider = \"berth\"\napproval_policy = \"on-request\"\n\n\
         {rest}\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n\n\
         [model_providers.berth]\nname = \"Berth scripted model\"\nbase_url = \"{}\"\n\
         wire_api = \"responses\"\nenv_key = \"BERTH_TEST_OPENAI_KEY\"\n",
        repo.display(),
        model.url
    );
    fs::write(&path, config).unwrap();
    let out = server.berth_ok(&["hook", "install", "codex"]);
    assert!(out.contains("MCP server (berth mcp) registered"), "{out}");

    // The orchestrator: codex in the repo, its hooks trusted once as a person does, its
    // `berth mcp` started.
    let orch = server.berth_ok(&["new", "--cwd", repo.to_str().unwrap(), "--", "codex"]);
    server.call("pane.resize", json!({ "pane_id": orch, "cols": COLS, "rows": ROWS }));
    trust_hooks(server, case, &orch);
    settled(case, Agent::Codex.ready(), || berth_screen(server, &orch));
    poll(START, "codex known", || (server.pane(&orch)?["agent"]["kind"] == "codex").then_some(()));
    // Codex sends its first hook with its first prompt: typed as a person types it.
    submit(server, &orch, "T-ORCH split this into two tasks and merge them once they pass");

    let tasks = || -> Vec<Value> {
        let out = server.berth_ok(&["task", "ls", "--json"]);
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        v["tasks"].as_array().cloned().or_else(|| v.as_array().cloned()).unwrap_or_default()
    };
    let id_of = |label: &str| -> Option<String> {
        tasks().into_iter().find(|t| t["label"] == label)?["id"].as_str().map(str::to_owned)
    };
    let pane_of = |label: &str| -> String {
        tasks()
            .into_iter()
            .find(|t| t["label"] == label)
            .and_then(|t| t["pane_id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("{label}'s pane: {:?}", tasks()))
    };
    let mut merge_prompts = Vec::new();
    let mut own_merge_prompts = Vec::new();
    let mut answered = Vec::new();
    let mut trusted = Vec::new();
    let mut rest = Vec::new();
    // The orchestrator's first merge decision, held while the workers try; then what their
    // tries gave their models.
    let mut held = None::<Value>;
    let mut probes = None::<(String, String)>;
    let deadline = Instant::now() + ORCHESTRATION;
    loop {
        let merged = ["w1", "w2"].iter().all(|l| {
            tasks().iter().any(|t| t["label"] == *l && t["disposition"]["outcome"] == "merged")
        });
        if merged && !model.calls("T-ORCH", 7).is_empty() && probes.is_some() {
            break;
        }
        if Instant::now() >= deadline {
            let screens: Vec<String> = panes_of(&server.list())
                .iter()
                .filter_map(|p| p["id"].as_str())
                .map(|p| format!("pane {p}:\n{}", berth_screen(server, p).join("\n")))
                .collect();
            let requests: Vec<String> = fs::read_to_string(&model.log)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|v| {
                    format!(
                        "{} {} {}: {}",
                        v["kind"],
                        v["marker"],
                        v["step"],
                        last_tool_result(&v["body"])
                    )
                })
                .collect();
            panic!(
                "{case}: not done in time; tasks {:?}; decisions answered {answered:?}; hooks:\n{}\n\
                 {}\nmodel requests:\n{}",
                tasks(),
                hook_log(&world.tools),
                screens.join("\n"),
                requests.join("\n")
            );
        }
        for pane in panes_of(&server.list()) {
            let id = pane["id"].as_str().or(pane["pane_id"].as_str()).unwrap().to_owned();
            // A worker's codex asks to trust its hooks (or its worktree) if it has not seen
            // them: a person trusts them, as for the orchestrator.
            if id != orch && !trusted.contains(&id) {
                let screen = server.screen(&id);
                if screen.contains("Hooks need review") {
                    trust_hooks(server, case, &id);
                    trusted.push(id.clone());
                } else if screen.contains("Trust this folder?") {
                    server.berth_ok(&["send", &id, "--keys", "Enter"]);
                }
            }
            let d = &pane["pending_decision"];
            if d["answerable"] != true || answered.contains(&d["id"]) {
                continue;
            }
            let prompt = d["prompt"].as_str().unwrap_or_default().to_owned();
            if id == orch && prompt.contains("orchestrator-started") {
                // Both tasks are started: the orchestrator's waits and merges, by id.
                let started = |label: &str| {
                    id_of(label).unwrap_or_else(|| {
                        let said = model.calls("T-ORCH", 1).first().map(last_tool_result);
                        panic!("no task {label}; start_task answered the model {said:?}")
                    })
                };
                let (a, b) = (started("w1"), started("w2"));
                let wait = |t: &str| tool("wait_task", json!({ "task_id": t, "timeout_s": 400 }));
                let finish =
                    |t: &str| tool("finish_task", json!({ "task_id": t, "action": "merge" }));
                rest = vec![
                    wait(&a),
                    wait(&b),
                    finish(&a),
                    finish(&b),
                    json!({ "text": "Both tasks passed and are merged." }),
                ];
                model.rewrite(&script(&repo, &rest, None));
            }
            if prompt.contains("asks to merge task") && id != orch {
                // A worker asking to merge its task: the person refuses.
                own_merge_prompts.push(prompt.clone());
                server.berth_ok(&["decide", &id, "deny"]);
                answered.push(d["id"].clone());
                continue;
            }
            if prompt.contains("asks to merge task") && probes.is_none() {
                // The first merge waits on the person: meanwhile the first worker is prompted
                // to merge its task itself, the second to answer this decision.
                if held.is_none() {
                    held = Some(d["id"].clone());
                    let a = id_of("w1").expect("task w1");
                    model.rewrite(&script(&repo, &rest, Some((&orch, &a))));
                    server.berth_ok(&["submit", &pane_of("w1"), "T-W1X merge your task now"]);
                    server.berth_ok(&["submit", &pane_of("w2"), "T-W2X answer that merge"]);
                }
                let (own, other) = (model.calls("T-W1X", 1), model.calls("T-W2X", 1));
                if own.is_empty() || other.is_empty() {
                    continue;
                }
                assert_eq!(held.as_ref(), Some(&d["id"]), "the merge still waits on the person");
                probes = Some((last_tool_result(&own[0]), last_tool_result(&other[0])));
            }
            if prompt.contains("asks to merge task") {
                merge_prompts.push(prompt.clone());
            }
            server.berth_ok(&["decide", &id, "allow"]);
            answered.push(d["id"].clone());
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    // Codex offered Berth's tools as the functions of namespace `mcp__berth`.
    let offered = tool_names(&model.calls("T-ORCH", 0)[0]);
    for name in ["start_task", "wait_task", "finish_task", "submit"] {
        assert!(offered.contains(&format!("mcp__berth/{name}")), "{offered:?}");
    }
    // Codex asked the person (through Berth's hook) before its commands and Berth's tools that
    // act on others (`finish_task`, `submit`), never before one that only reads (`wait_task`)
    // or starts a task (Berth marks them read-only, and not destructive).
    let asked: Vec<String> = hook_log(&world.tools)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.strip_prefix("codex ")?).ok())
        .filter(|e| e["hook_event_name"] == "PermissionRequest")
        .filter_map(|e| e["tool_name"].as_str().map(str::to_owned))
        .collect();
    eprintln!("{case}: codex asked about {asked:?}");
    for read in ["mcp__berth__wait_task", "mcp__berth__start_task"] {
        assert!(!asked.iter().any(|t| t == read), "{asked:?}");
    }
    assert!(asked.iter().any(|t| t == "mcp__berth__finish_task"), "{asked:?}");
    // The waits returned both reports to the model; the merges were asked of the person.
    let after_wait = |step| last_tool_result(&model.calls("T-ORCH", step)[0]);
    let (first, second) = (after_wait(4), after_wait(5));
    assert!(first.contains("Added w1.txt") && first.contains("completed"), "{first}");
    assert!(second.contains("Added w2.txt") && second.contains("completed"), "{second}");
    assert_eq!(merge_prompts.len(), 2, "{merge_prompts:?}");
    for (prompt, label) in merge_prompts.iter().zip(["w1", "w2"]) {
        assert!(
            prompt.starts_with("codex in ")
                && prompt.ends_with(&format!("asks to merge task {label}")),
            "{prompt}"
        );
    }
    // Neither worker got past the person: the first one's merge of its own task was asked of
    // the person in its own pane and refused; the second one's `submit` into the
    // orchestrator's pane (to answer its decision) was refused by Berth.
    let (own, other) = probes.unwrap();
    assert_eq!(own_merge_prompts.len(), 1, "{own_merge_prompts:?}");
    assert!(own_merge_prompts[0].ends_with("asks to merge task w1"), "{own_merge_prompts:?}");
    assert!(own.contains("declined"), "the worker's own merge: {own}");
    assert!(other.contains("NOT_PERMITTED"), "the worker's submit: {other}");
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

/// Codex asks once to trust hooks it has not seen: a person trusts them ("2. Trust all and
/// continue").
fn trust_hooks(server: &TestServer, case: &str, pane: &str) {
    settled(case, "Hooks need review", || berth_screen(server, pane));
    server.berth_ok(&["send", pane, "2"]);
    poll(START, "the trust option selected", || {
        server.screen(pane).contains("› 2. Trust all and continue").then_some(())
    });
    server.berth_ok(&["send", pane, "--keys", "Enter"]);
}
