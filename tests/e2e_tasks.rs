//! Tasks (issue 15): `berth task start | report | finish | ls | show | wait | cancel` against
//! real git repos in temp dirs and the stub agent (`support/stub_agent.py`, which reports
//! through the real `berth hook claude` and, with `--on-submit`, commits and runs the real
//! `berth task report` from inside its worker pane).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use support::git::{git, server_with_data_home as server};
use support::task::StubTask;
use support::*;

/// A repo on `main` with one commit holding `a.txt`.
fn repo(server: &TestServer, name: &str) -> PathBuf {
    support::git::repo(server, name, &[("a.txt", b"one\ntwo\n")])
}

fn berth(server: &TestServer, args: &[&str]) -> Output {
    server.command().args(args).stdin(Stdio::null()).output().expect("run berth")
}

/// Starts a task on `repo` with the stub agent; `on_submit` is what the stub runs in its
/// worktree when it gets the prompt; returns the task's JSON and the stub's log path.
fn start(
    server: &TestServer,
    repo: &Path,
    name: &str,
    extra: &[&str],
    stub_extra: &[&str],
) -> (Value, PathBuf) {
    let task = StubTask::labelled(server, repo, name)
        .accept("new.txt is committed")
        .task_args(extra)
        .stub_args(stub_extra);
    let args = task.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (json_of(&berth(server, &args)), task.log().to_owned())
}

fn show(server: &TestServer, id: &str) -> Value {
    json_of(&berth(server, &["task", "show", id, "--json"]))
}

fn wait_state(server: &TestServer, id: &str, state: &str) -> Value {
    poll(Duration::from_secs(30), &format!("task {id} to be {state}"), || {
        let task = show(server, id);
        (task["state"] == state).then_some(task)
    })
}

fn stub_events(log: &Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == name)
        .collect()
}

/// What the stub runs to do the work and report: commit `file` with `text`, then report.
fn commit_and_report(file: &str, text: &str) -> String {
    format!(
        "printf '{text}' > {file} && git add {file} && git commit -qm 'task work' && \
         {} task report --status completed --summary 'wrote {file}' --artifact file={file}",
        berth_bin().display()
    )
}

/// Start → working in its own worktree at the base SHA with the composed prompt delivered;
/// the stub commits and reports → completed; finish --merge → the file on main, worktree and
/// branch gone, disposition merged with the SHA.
#[test]
fn a_task_runs_reports_and_merges() {
    let server = server();
    let repo = repo(&server, "app");
    let base = git(&repo, &["rev-parse", "HEAD"]);
    let work = commit_and_report("new.txt", "hello\\n");
    let (task, log) = start(&server, &repo, "add-file", &[], &["--on-submit", &work]);
    let id = task["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("task_"), "{task}");
    assert!(matches!(task["state"].as_str(), Some("working" | "completed")), "{task}");
    let wt = PathBuf::from(task["worktree_path"].as_str().unwrap());
    let branch = task["branch"].as_str().unwrap().to_owned();
    assert!(branch.starts_with("berth/add-file-"), "{branch}");
    assert_eq!(task["base_sha"], base);
    assert_eq!(task["target_branch"], "main");
    assert!(wt.starts_with(server.root.path().join("data/berth/worktrees")), "{}", wt.display());
    assert!(!wt.starts_with(&repo));
    // The prompt the stub received, read back from its log.
    let submits = poll(Duration::from_secs(20), "the stub's submit", || {
        let s = stub_events(&log, "submit");
        (!s.is_empty()).then_some(s)
    });
    let prompt = submits[0]["text"].as_str().unwrap();
    for part in
        [id.as_str(), branch.as_str(), base.as_str(), "## Objective", "Add the file new.txt"]
    {
        assert!(prompt.contains(part), "{part:?} not in the prompt: {prompt}");
    }
    assert!(prompt.contains("## Acceptance Criteria\n\n- new.txt is committed"), "{prompt}");
    let done = wait_state(&server, &id, "completed");
    assert_eq!(done["result"]["summary"], "wrote new.txt", "{done}");
    assert_eq!(done["result"]["artifacts"][0]["name"], "file");
    assert_eq!(git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]), branch);
    assert_eq!(git(&wt, &["rev-parse", "HEAD~1"]), base);
    // A second report is refused: the result is set once.
    let again = berth(
        &server,
        &["task", "report", "--task", &id, "--status", "failed", "--summary", "again"],
    );
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("once"), "{again:?}");

    let finished = json_of(&berth(&server, &["task", "finish", &id, "--merge", "--json"]));
    assert_eq!(finished["disposition"]["outcome"], "merged", "{finished}");
    let sha = finished["disposition"]["merged_sha"].as_str().unwrap();
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), sha);
    assert_eq!(git(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
    assert_eq!(std::fs::read_to_string(repo.join("new.txt")).unwrap(), "hello\n");
    assert!(!wt.exists(), "the worktree is removed");
    assert_eq!(git(&repo, &["branch", "--list", &branch]), "", "the branch is deleted");
    assert_eq!(finished["disposition"]["branch_deleted"], true);
    assert!(!git(&repo, &["worktree", "list"]).contains(wt.to_str().unwrap()));
    // A squashed merge: one ordinary commit on main.
    let work = commit_and_report("b.txt", "bee\\n");
    let (task, _) = start(&server, &repo, "add-b", &[], &["--on-submit", &work]);
    let id = task["id"].as_str().unwrap().to_owned();
    wait_state(&server, &id, "completed");
    let finished =
        json_of(&berth(&server, &["task", "finish", &id, "--merge", "--squash", "--json"]));
    let sha = finished["disposition"]["merged_sha"].as_str().unwrap();
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), sha);
    assert_eq!(git(&repo, &["rev-list", "--parents", "-n1", "HEAD"]).split(' ').count(), 2);
    assert_eq!(std::fs::read_to_string(repo.join("b.txt")).unwrap(), "bee\n");
    // The listing shows both, the text form too.
    let ls = json_of(&berth(&server, &["task", "ls", "--json", "--repo", repo.to_str().unwrap()]));
    assert_eq!(ls["tasks"].as_array().unwrap().len(), 2);
    let text = server.berth_ok(&["task", "ls"]);
    assert!(text.contains(&id) && text.contains("merged"), "{text}");
}

/// A source checkout on a detached HEAD at start leaves the target unset: finish needs
/// --target, and merges into it once the checkout is on that branch.
#[test]
fn a_detached_source_needs_a_target() {
    let server = server();
    let repo = repo(&server, "app");
    git(&repo, &["checkout", "-q", "--detach"]);
    let work = commit_and_report("new.txt", "x\\n");
    let (task, _) = start(&server, &repo, "detached", &[], &["--on-submit", &work]);
    let id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(task["target_branch"], Value::Null, "{task}");
    wait_state(&server, &id, "completed");
    let out = berth(&server, &["task", "finish", &id, "--merge"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--target"), "{out:?}");
    git(&repo, &["checkout", "-q", "main"]);
    let done =
        json_of(&berth(&server, &["task", "finish", &id, "--merge", "--target", "main", "--json"]));
    assert_eq!(done["disposition"]["target_ref"], "main");
    assert!(repo.join("new.txt").exists());
}

/// The source branch changed the same line: finish reports the file, the source checkout is
/// clean and unchanged, the task keeps its worktree.
#[test]
fn a_conflicting_merge_is_aborted_and_reported() {
    let server = server();
    let repo = repo(&server, "app");
    let work = commit_and_report("a.txt", "one\\nTASK\\n");
    let (task, _) = start(&server, &repo, "edit-a", &[], &["--on-submit", &work]);
    let id = task["id"].as_str().unwrap().to_owned();
    let wt = PathBuf::from(task["worktree_path"].as_str().unwrap());
    wait_state(&server, &id, "completed");
    std::fs::write(repo.join("a.txt"), "one\nMAIN\n").unwrap();
    git(&repo, &["commit", "-qam", "main changes a"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let out = berth(&server, &["task", "finish", &id, "--merge"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("conflicts in: a.txt"), "{err}");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "", "the source checkout is clean");
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head, "and unchanged");
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "one\nMAIN\n");
    assert!(wt.exists(), "the task keeps its worktree");
    let after = show(&server, &id);
    assert_eq!(after["disposition"]["outcome"], "none");
    assert_eq!(after["finish_error"]["conflicts"][0], "a.txt", "{after}");
    // A checkout on another branch or with changes is refused with the reason.
    git(&repo, &["checkout", "-qb", "other"]);
    let out = berth(&server, &["task", "finish", &id, "--merge"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is on branch other"), "{out:?}");
    git(&repo, &["checkout", "-q", "main"]);
    std::fs::write(repo.join("a.txt"), "dirty\n").unwrap();
    let out = berth(&server, &["task", "finish", &id, "--merge"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("uncommitted changes"), "{out:?}");
}

/// Discard removes worktree and branch; a pre-existing branch is kept; a dirty worktree is
/// refused without --force.
#[test]
fn discard_removes_only_what_berth_made() {
    let server = server();
    let repo = repo(&server, "app");
    let (plain, _) = start(&server, &repo, "plain", &[], &[]);
    let id = plain["id"].as_str().unwrap();
    let wt = PathBuf::from(plain["worktree_path"].as_str().unwrap());
    let branch = plain["branch"].as_str().unwrap();
    let gone = json_of(&berth(&server, &["task", "finish", id, "--discard", "--json"]));
    assert_eq!(gone["state"], "canceled", "{gone}");
    assert_eq!(gone["disposition"]["outcome"], "discarded");
    assert!(!wt.exists());
    assert_eq!(git(&repo, &["branch", "--list", branch]), "");

    git(&repo, &["branch", "feature"]);
    let dirty = format!(
        "echo scratch > dirty.txt && {} task report --status completed --summary 'left a file'",
        berth_bin().display()
    );
    let (kept, _) =
        start(&server, &repo, "kept", &["--branch", "feature"], &["--on-submit", &dirty]);
    let id = kept["id"].as_str().unwrap().to_owned();
    assert_eq!(kept["preexisting_branch"], true, "{kept}");
    assert_eq!(kept["branch"], "feature");
    let wt = PathBuf::from(kept["worktree_path"].as_str().unwrap());
    wait_state(&server, &id, "completed");
    let out = berth(&server, &["task", "finish", &id, "--discard"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("dirty.txt"), "{out:?}");
    std::fs::remove_file(wt.join("dirty.txt")).unwrap();
    git(&repo, &["worktree", "lock", wt.to_str().unwrap()]);
    let out = berth(&server, &["task", "finish", &id, "--discard"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is locked"), "{out:?}");
    std::fs::write(wt.join("dirty.txt"), "again").unwrap();
    assert!(wt.exists());
    let gone = json_of(&berth(&server, &["task", "finish", &id, "--discard", "--force", "--json"]));
    assert_eq!(gone["disposition"]["outcome"], "discarded");
    assert_eq!(gone["disposition"]["branch_deleted"], false);
    assert!(!wt.exists());
    assert_eq!(
        git(&repo, &["branch", "--list", "feature"]),
        "feature",
        "a pre-existing branch stays"
    );
}

/// Idempotent start across a restart; a working task fails once with restart evidence and
/// keeps its worktree.
#[test]
fn a_restart_fails_working_tasks_once_and_keeps_request_ids() {
    let mut server = server();
    let repo = repo(&server, "app");
    let (task, _) =
        start(&server, &repo, "long", &["--request-id", "job-1"], &["--turn-ms", "60000"]);
    let id = task["id"].as_str().unwrap().to_owned();
    let wt = PathBuf::from(task["worktree_path"].as_str().unwrap());
    assert_eq!(task["state"], "working");
    let (same, _) = start(&server, &repo, "long", &["--request-id", "job-1"], &[]);
    assert_eq!(same["id"], id.as_str(), "the same request id answers the same task");
    assert!(berth(&server, &["save"]).status.success());
    server.restart();
    let after = show(&server, &id);
    assert_eq!(after["state"], "failed", "{after}");
    assert_eq!(after["status_reason"]["reason"], "restart");
    assert_eq!(after["status_reason"]["was"], "working");
    assert!(wt.exists(), "the worktree stays");
    let again = berth(
        &server,
        &["task", "start", "--json", "--repo", repo.to_str().unwrap(), "--agent", "claude"],
    );
    assert_eq!(again.status.code(), Some(2), "the objective is required");
    let again = berth(
        &server,
        &[
            "task",
            "start",
            "--json",
            "--repo",
            repo.to_str().unwrap(),
            "--agent",
            "claude",
            "--objective",
            "x",
            "--request-id",
            "job-1",
            "--",
            "true",
        ],
    );
    // The answer is the failed task: exit 1, its JSON on stdout.
    assert_eq!(again.status.code(), Some(1));
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["id"], id.as_str(), "also after a restart");
    assert!(berth(&server, &["save"]).status.success());
    server.restart();
    let twice = show(&server, &id);
    assert_eq!(twice["updated_at"], after["updated_at"], "failed once, not again");
    let ls = json_of(&berth(&server, &["task", "ls", "--json"]));
    assert_eq!(ls["tasks"].as_array().unwrap().len(), 1);
}

/// A turn that ends without a report and a silent worker each reach input_required; a
/// follow-up submit brings the task back to working.
#[test]
fn the_watch_asks_for_input() {
    let server = server();
    let repo = repo(&server, "app");
    let (task, _) = start(&server, &repo, "talker", &["--silence", "0"], &[]);
    let id = task["id"].as_str().unwrap().to_owned();
    let asked = wait_state(&server, &id, "input_required");
    assert_eq!(asked["status_reason"]["reason"], "turn_ended_without_report", "{asked}");
    assert_eq!(asked["status_reason"]["last_message"], "stub finished");
    let waited =
        json_of(&berth(&server, &["task", "wait", &id, "--until", "input_required", "--json"]));
    assert_eq!(waited["state"], "input_required");
    let pane = asked["pane_id"].as_str().unwrap();
    let mut events = server.client();
    events.subscribe().unwrap();
    server.berth_ok(&["submit", pane, "go on"]);
    // The follow-up turn is short: its `working` is seen on the event stream.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "no task.changed to working after the follow-up");
        let Ok(event) = events.next_event(Some(Duration::from_secs(1))) else { continue };
        let e = &event;
        if e["type"] == "task.changed" && e["task_id"] == id.as_str() && e["state"] == "working" {
            break;
        }
    }

    let (quiet, _) = start(&server, &repo, "quiet", &["--silence", "1"], &["--turn-ms", "60000"]);
    let id = quiet["id"].as_str().unwrap().to_owned();
    let asked = wait_state(&server, &id, "input_required");
    assert_eq!(asked["status_reason"]["reason"], "worker_silent", "{asked}");
    assert_eq!(asked["status_reason"]["timeout_s"], 1);
    // The worker's pane closes: the task fails, once.
    server.berth_ok(&["close", asked["pane_id"].as_str().unwrap()]);
    let failed = wait_state(&server, &id, "failed");
    assert_eq!(failed["status_reason"]["reason"], "worker_exited", "{failed}");
    assert!(
        Path::new(failed["worktree_path"].as_str().unwrap()).is_dir(),
        "closing a task's pane never removes its checkout"
    );
    let out = berth(&server, &["task", "wait", &id, "--timeout", "5"]);
    assert!(out.status.success());
}

/// A worker whose hooks are wired but that never acknowledges the prompt (Enter pressed twice,
/// no `UserPromptSubmit`): the task does not pass for working; it waits for a person with the
/// reason and the screen as evidence, its pane kept (issue 26).
#[test]
fn an_unacknowledged_prompt_asks_for_a_person() {
    let server = server();
    let repo = repo(&server, "app");
    let (task, log) =
        start(&server, &repo, "deaf", &["--silence", "0"], &["--no-ack", "--turn-ms", "60000"]);
    assert_eq!(task["state"], "input_required", "{task}");
    assert_eq!(task["status_reason"]["reason"], "prompt_unconfirmed", "{task}");
    let screen = task["status_reason"]["screen"].as_array().expect("the screen's lines");
    assert!(screen.iter().any(|l| l.as_str().is_some_and(|l| l.contains("stub ready"))), "{task}");
    // The prompt went once; the second Enter found nothing typed.
    assert_eq!(stub_events(&log, "submit").len(), 1);
    assert_eq!(stub_events(&log, "empty_enter").len(), 1);
    let pane = task["pane_id"].as_str().expect("its pane is kept");
    let ls = json_of(&berth(&server, &["ls", "--json"]));
    assert!(ls.to_string().contains(pane), "{ls}");
}

/// Bad input is a clear error and creates nothing.
#[test]
fn bad_input_creates_nothing() {
    let server = server();
    let repo = repo(&server, "app");
    let not_repo = server.root.path().join("plain");
    std::fs::create_dir_all(&not_repo).unwrap();
    let big = "x".repeat(33 * 1024);
    let (r, n) = (repo.to_str().unwrap(), not_repo.to_str().unwrap());
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--repo", r, "--agent", "claude", "--objective", ""], "objective is empty"),
        (vec!["--repo", r, "--agent", "claude", "--objective", &big], "32 KiB"),
        (vec!["--repo", n, "--agent", "claude", "--objective", "x"], "not inside a git repository"),
        (
            vec!["--repo", r, "--agent", "claude", "--objective", "x", "--base", "nope"],
            "does not resolve",
        ),
        (vec!["--repo", r, "--agent", "emacs", "--objective", "x"], "unknown agent"),
    ];
    for (args, want) in cases {
        let mut all = vec!["task", "start"];
        all.extend(args.iter());
        all.extend(["--", "true"]);
        let out = berth(&server, &all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{want}: {err}");
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    let ls = json_of(&berth(&server, &["task", "ls", "--json"]));
    assert_eq!(ls["tasks"], json!([]));
    assert_eq!(server.list()["workspaces"], json!([]));
    assert!(!server.root.path().join("data/berth/worktrees").exists());
    assert_eq!(git(&repo, &["branch", "--format=%(refname:short)"]), "main");
    // An agent that exits before it is ready: the task fails at that stage and what the start
    // made (pane, worktree, branch) is gone.
    let out = berth(
        &server,
        &["task", "start", "--json", "--repo", r, "--agent", "claude", "--objective", "x"]
            .into_iter()
            .chain(["--ready-timeout", "5", "--", "sh", "-c", "exit 3"])
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(1));
    let failed: Value = serde_json::from_slice(&out.stdout).expect("the failed task");
    assert_eq!(failed["state"], "failed", "{failed}");
    assert_eq!(failed["status_reason"]["stage"], "ready_timeout", "{failed}");
    assert!(!Path::new(failed["worktree_path"].as_str().unwrap()).exists());
    assert_eq!(git(&repo, &["branch", "--format=%(refname:short)"]), "main");
    assert!(server.list()["workspaces"][0]["tabs"].as_array().is_none_or(|t| t.is_empty()));
}

/// Five tasks started at once on one repo get distinct worktrees and branches; the server
/// keeps answering meanwhile (`berth ls` times are printed, not asserted). Regression: two
/// `git worktree add` at once in one repo failed ("failed to read .git/worktrees/…/commondir");
/// worktree changes are now serialised per repo.
#[test]
fn five_tasks_at_once() {
    let server = server();
    let repo = repo(&server, "app");
    let children: Vec<_> = (0..5)
        .map(|i| {
            let task = StubTask::new(&server, &repo, &format!("stub{i}"))
                .objective(&format!("Task number {i}"))
                .stub_args(&["--turn-ms", "60000"]);
            server
                .command()
                .args(task.args())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("berth task start")
        })
        .collect();
    let mut ls_ms = Vec::new();
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(3) {
        let t = Instant::now();
        server.berth_ok(&["ls"]);
        ls_ms.push(t.elapsed().as_millis());
    }
    let tasks: Vec<Value> =
        children.into_iter().map(|c| json_of(&c.wait_with_output().unwrap())).collect();
    ls_ms.sort_unstable();
    eprintln!(
        "berth ls while five tasks started: {} calls, median {} ms, p95 {} ms, max {} ms",
        ls_ms.len(),
        ls_ms[ls_ms.len() / 2],
        ls_ms[ls_ms.len() * 95 / 100],
        ls_ms[ls_ms.len() - 1]
    );
    let mut worktrees: Vec<&str> =
        tasks.iter().map(|t| t["worktree_path"].as_str().unwrap()).collect();
    let mut branches: Vec<&str> = tasks.iter().map(|t| t["branch"].as_str().unwrap()).collect();
    worktrees.sort_unstable();
    worktrees.dedup();
    branches.sort_unstable();
    branches.dedup();
    assert_eq!((worktrees.len(), branches.len()), (5, 5));
    for t in &tasks {
        assert_eq!(t["state"], "working", "{t}");
        assert!(Path::new(t["worktree_path"].as_str().unwrap()).is_dir());
    }
    // One workspace for the repo, five tabs in it.
    let list = server.list();
    let ws = list["workspaces"].as_array().unwrap();
    assert_eq!(ws.len(), 1, "{list}");
    assert_eq!(ws[0]["tabs"].as_array().unwrap().len(), 5);
    // Cancel one: its worker stops, its worktree stays, a wait returns at once.
    let id = tasks[0]["id"].as_str().unwrap();
    server.berth_ok(&["task", "cancel", id]);
    let waited = json_of(&berth(&server, &["task", "wait", id, "--timeout", "5", "--json"]));
    assert_eq!(waited["state"], "canceled");
    assert!(Path::new(tasks[0]["worktree_path"].as_str().unwrap()).is_dir());
    poll(Duration::from_secs(10), "the canceled worker's tab to close", || {
        let tabs = server.list()["workspaces"][0]["tabs"].as_array().map_or(0, Vec::len);
        (tabs == 4).then_some(())
    });
    // A working task merges only with --force; it is canceled then (the user took it over).
    let id = tasks[2]["id"].as_str().unwrap();
    let out = berth(&server, &["task", "finish", id, "--merge"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not completed"), "{out:?}");
    let merged = json_of(&berth(&server, &["task", "finish", id, "--merge", "--force", "--json"]));
    assert_eq!(merged["state"], "canceled", "{merged}");
    assert_eq!(merged["status_reason"]["reason"], "merged_before_report");
    assert_eq!(merged["disposition"]["outcome"], "merged");
    // Another is still working: a wait with a short timeout says so (exit 3).
    let out =
        berth(&server, &["task", "wait", tasks[1]["id"].as_str().unwrap(), "--timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(3));
}

/// The largest objective (32 KiB) reaches the worker whole, with the task's preamble around it
/// (a prompt over `berth submit`'s own 32 KiB).
#[test]
fn a_32_kib_objective_reaches_the_worker() {
    let server = server();
    let repo = repo(&server, "app");
    let objective = "y".repeat(32 * 1024);
    let big =
        StubTask::new(&server, &repo, "big").objective(&objective).task_args(&["--silence", "0"]);
    let log = big.log().to_owned();
    let args = big.args();
    let out = berth(&server, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let task = json_of(&out);
    assert_eq!(task["state"], "working", "{task}");
    let submits = poll(Duration::from_secs(20), "the stub's submit", || {
        let s = stub_events(&log, "submit");
        (!s.is_empty()).then_some(s)
    });
    let text = submits[0]["text"].as_str().unwrap();
    assert!(text.len() > 32 * 1024, "{}", text.len());
    assert!(text.contains(&objective));
}

/// A permission request from the worker (the real `berth hook claude`, waiting) makes the task
/// `input_required` with the decision's id; answering it (`berth decide`) puts the task back
/// to work, and the worker goes on to report.
#[test]
fn a_pending_decision_asks_for_input_and_its_answer_resumes_work() {
    let server = server();
    let repo = repo(&server, "app");
    let request = r#"{"session_id":"s-1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"cargo test","description":"Run the tests"}}"#;
    let work = format!(
        "printf '%s' '{request}' | {} hook claude > hook.out && {}",
        berth_bin().display(),
        commit_and_report("new.txt", "ok\\\\n")
    );
    let (task, _) = start(&server, &repo, "asks", &["--silence", "0"], &["--on-submit", &work]);
    let id = task["id"].as_str().unwrap().to_owned();
    let asked = wait_state(&server, &id, "input_required");
    assert_eq!(asked["status_reason"]["reason"], "decision_required", "{asked}");
    let decision = asked["status_reason"]["decision_id"].as_str().unwrap();
    assert!(decision.starts_with("dec_"), "{decision}");
    let mut events = server.client();
    events.subscribe().unwrap();
    server.berth_ok(&["decide", asked["pane_id"].as_str().unwrap(), "allow"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "no task.changed to working after the answer");
        let Ok(e) = events.next_event(Some(Duration::from_secs(1))) else { continue };
        if e["type"] == "task.changed" && e["task_id"] == id.as_str() && e["state"] == "working" {
            break;
        }
    }
    let done = wait_state(&server, &id, "completed");
    assert_eq!(done["result"]["summary"], "wrote new.txt");
}
