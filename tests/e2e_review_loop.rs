//! Review that closes the loop (issue 31), against real git repos in temp dirs and the stub
//! agent (`support/stub_agent.py`, with `--on-submit` doing a turn's work in its worktree):
//! - a checkpoint per turn on `refs/berth/tasks/<task>/turn-<n>`, the index untouched and
//!   ignored files left out; `berth diff --turn N` shows one turn; `task revert-turn` puts the
//!   worktree back and keeps a checkpoint of what it undid; the refs go with the task;
//! - review comments kept, then sent to the worker as one prompt naming each file and line;
//!   a completed task works again and is watched again;
//! - two tasks editing the same lines are reported conflicting before either merges, a third
//!   editing elsewhere is not; after a merge the conflict is with the target; a squash's
//!   message is the label and the summary.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use support::git::{git, server_with_data_home as server};
use support::task::StubTask;
use support::*;

fn berth(server: &TestServer, args: &[&str]) -> Output {
    server.command().args(args).stdin(Stdio::null()).output().expect("run berth")
}

fn show(server: &TestServer, id: &str) -> Value {
    json_of(&berth(server, &["task", "show", id, "--json"]))
}

/// Polls the task until `check` holds; its JSON then.
fn wait_task(server: &TestServer, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    poll(Duration::from_secs(30), &format!("task {id}: {what}"), || {
        let task = show(server, id);
        check(&task).then_some(task)
    })
}

fn checkpoints(task: &Value) -> usize {
    task["checkpoints"].as_array().map_or(0, Vec::len)
}

fn stub_events(log: &Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == name)
        .collect()
}

/// The paths of a `berth diff --json` answer.
fn diff_paths(server: &TestServer, id: &str, turn: &str) -> Vec<String> {
    let diff = json_of(&berth(server, &["diff", id, "--turn", turn, "--json"]));
    let mut paths: Vec<String> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    paths.sort();
    paths
}

fn start(server: &TestServer, repo: &Path, label: &str, on_submit: &str) -> (String, PathBuf) {
    let task = StubTask::labelled(server, repo, label).stub_args(&["--on-submit", on_submit]);
    let started = task.start(server);
    (started["id"].as_str().unwrap().to_owned(), task.log().to_owned())
}

/// Two turns, each checkpointed apart; a turn's diff; a revert that keeps what it undid.
#[test]
fn each_turn_is_checkpointed_diffed_and_reverted() {
    let server = server();
    let repo = support::git::repo(
        &server,
        "app",
        &[("a.txt", b"one\ntwo\n"), (".gitignore", b"ignored.out\n")],
    );
    // Each turn: a counter kept outside the worktree, a new file, a line more in a.txt, and
    // an ignored file that no checkpoint may hold.
    let counter = server.root.path().join("turns");
    let work = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; \
         printf 'turn %s\\n' $n > turn$n.txt; echo \"edit $n\" >> a.txt; echo x > ignored.out",
        c = counter.display()
    );
    let (id, log) = start(&server, &repo, "two-turns", &work);
    let task = wait_task(&server, &id, "the first turn's checkpoint", |t| {
        t["state"] == "input_required" && checkpoints(t) == 1
    });
    let wt = PathBuf::from(task["worktree_path"].as_str().unwrap());
    let first = &task["checkpoints"][0];
    assert_eq!(first["turn"], 1);
    assert_eq!(first["kind"], "turn");
    let sha = first["sha"].as_str().unwrap();
    assert_eq!(git(&repo, &["rev-parse", &format!("refs/berth/tasks/{id}/turn-1")]), sha);
    let tree = git(&repo, &["ls-tree", "-r", "--name-only", sha]);
    assert!(tree.lines().any(|l| l == "turn1.txt"), "untracked files are in: {tree}");
    assert!(!tree.contains("ignored.out"), "ignored files are not: {tree}");
    // The agent's index and files are as it left them: nothing staged, nothing committed.
    let status = git(&wt, &["status", "--porcelain"]);
    assert!(status.contains("M a.txt") && status.contains("?? turn1.txt"), "{status}");
    assert_eq!(git(&wt, &["diff", "--cached", "--name-only"]), "", "the index is untouched");

    // The second turn.
    let pane = task["pane_id"].as_str().unwrap();
    server.berth_ok(&["submit", pane, "once more"]);
    wait_task(&server, &id, "the second turn's checkpoint", |t| {
        t["state"] == "input_required" && checkpoints(t) == 2
    });
    assert_eq!(stub_events(&log, "submit").len(), 2);
    assert_eq!(diff_paths(&server, &id, "1"), ["a.txt", "turn1.txt"]);
    assert_eq!(diff_paths(&server, &id, "2"), ["a.txt", "turn2.txt"], "turn 2 alone");
    let one = server.berth_ok(&["diff", &id, "--turn", "2", "a.txt"]);
    assert!(one.contains("+edit 2") && !one.contains("+edit 1"), "{one}");
    let missing = berth(&server, &["diff", &id, "--turn", "9"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("checkpoints are 1 to 2"));

    // Revert the last turn: its work is checkpointed first, then the files go back.
    let reverted = json_of(&berth(&server, &["task", "revert-turn", &id, "--json"]));
    assert_eq!(reverted["turn"], 2, "{reverted}");
    assert_eq!(reverted["saved"]["kind"], "before_revert");
    assert_eq!(reverted["now"]["kind"], "revert");
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "one\ntwo\nedit 1\n");
    assert!(wt.join("turn1.txt").exists());
    assert!(!wt.join("turn2.txt").exists(), "what turn 2 made is gone");
    assert!(wt.join("ignored.out").exists(), "ignored files are never touched");
    let saved = reverted["saved"]["sha"].as_str().unwrap();
    let kept = git(&repo, &["show", &format!("{saved}:turn2.txt")]);
    assert_eq!(kept, "turn 2", "what the revert undid is kept");
    let task = show(&server, &id);
    assert_eq!(checkpoints(&task), 4, "{task}");
    assert_eq!(git(&wt, &["diff", "--cached", "--name-only"]), "", "the index is untouched");

    // Finished: the refs go.
    server.berth_ok(&["task", "finish", &id, "--discard", "--force"]);
    assert_eq!(git(&repo, &["for-each-ref", &format!("refs/berth/tasks/{id}/")]), "");
}

/// Comments kept, then sent as one prompt naming each file and line; a completed task works
/// again, is watched again, and its next turn is checkpointed.
#[test]
fn comments_reach_the_worker_as_one_prompt() {
    let server = server();
    let repo = support::git::repo(&server, "app", &[("a.txt", b"one\ntwo\n")]);
    let work = format!(
        "printf 'hello\\n' > new.txt && git add new.txt && git commit -qm work && \
         {} task report --status completed --summary 'wrote new.txt'",
        berth_bin().display()
    );
    let (id, log) = start(&server, &repo, "commented", &work);
    let task = wait_task(&server, &id, "completed", |t| t["state"] == "completed");
    assert_eq!(checkpoints(&task), 1, "the report's checkpoint: {task}");

    server.berth_ok(&["task", "comment", &id, "new.txt:1", "say hello louder"]);
    server.berth_ok(&["task", "comment", &id, "a.txt:1-2", "keep these two"]);
    assert_eq!(show(&server, &id)["comments"].as_array().unwrap().len(), 2);
    for (at, text, why) in [
        ("../x.txt:1", "t", "not a path inside"),
        ("a.txt:0", "t", "line number"),
        ("a.txt:3-2", "t", "not before"),
        ("a.txt", "t", "FILE:LINE"),
        ("a.txt:1", " ", "1 to"),
    ] {
        let out = berth(&server, &["task", "comment", &id, at, text]);
        assert!(!out.status.success(), "{at} {text:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{at}: {err}");
    }

    let sent = json_of(&berth(&server, &["task", "send", &id, "--json"]));
    assert_eq!(sent["sent"], 2, "{sent}");
    assert_eq!(sent["state"], "working", "a completed task works again");
    assert!(sent["result"].is_null(), "its report is cleared: {sent}");
    assert_eq!(sent["comments"].as_array().unwrap().len(), 0);
    let submits = poll(Duration::from_secs(20), "the comments' prompt", || {
        let s = stub_events(&log, "submit");
        (s.len() >= 2).then_some(s)
    });
    assert_eq!(submits.len(), 2, "one prompt for both comments");
    let prompt = submits[1]["text"].as_str().unwrap();
    assert!(prompt.contains("new.txt:1: say hello louder"), "{prompt}");
    assert!(prompt.contains("a.txt:1-2: keep these two"), "{prompt}");
    // The stub's work finds nothing to commit now, so it ends its turn without a report:
    // the task is watched again, and the turn is checkpointed.
    let task = wait_task(&server, &id, "the comments' turn", |t| {
        t["state"] == "input_required" && checkpoints(t) == 2
    });
    assert_eq!(task["status_reason"]["reason"], "turn_ended_without_report", "{task}");
    let none = berth(&server, &["task", "send", &id]);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("no comments"));
    // --send: kept and sent at once.
    let now =
        json_of(&berth(&server, &["task", "comment", &id, "a.txt:2", "now", "--send", "--json"]));
    assert_eq!(now["sent"], 1, "{now}");
    // Kept checkpoints outlive the task.
    server.berth_ok(&["task", "finish", &id, "--discard", "--force", "--keep-checkpoints"]);
    assert!(!git(&repo, &["for-each-ref", &format!("refs/berth/tasks/{id}/")]).is_empty());
}

fn conflicts_of(server: &TestServer, repo: &Path, id: &str) -> Vec<(String, Vec<String>)> {
    let ls = json_of(&berth(server, &["task", "ls", "--json", "--repo", repo.to_str().unwrap()]));
    let task = ls["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap().clone();
    task["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let files = c["files"].as_array().unwrap();
            let files = files.iter().map(|f| f.as_str().unwrap().to_owned()).collect();
            (c["task"].as_str().unwrap().to_owned(), files)
        })
        .collect()
}

/// Two tasks on the same lines conflict before either merges; a third elsewhere does not;
/// after one merges, the other conflicts with the target; a squash says what the task did.
#[test]
fn conflicting_tasks_are_seen_before_the_merge() {
    let server = server();
    let repo = support::git::repo(&server, "app", &[("a.txt", b"one\ntwo\nthree\n")]);
    let work = |file: &str, body: &str, summary: &str| {
        format!(
            "printf '{body}' > {file} && git add {file} && git commit -qm work && \
             {} task report --status completed --summary '{summary}'",
            berth_bin().display()
        )
    };
    let (a, _) = start(&server, &repo, "edit-a", &work("a.txt", "ONE\\ntwo\\nthree\\n", "a did"));
    let (b, _) = start(&server, &repo, "edit-b", &work("a.txt", "uno\\ntwo\\nthree\\n", "b did"));
    let (c, _) = start(&server, &repo, "edit-c", &work("c.txt", "see\\n", "c did"));
    for id in [&a, &b, &c] {
        wait_task(&server, id, "completed", |t| t["state"] == "completed");
    }
    let seen = poll(Duration::from_secs(20), "a and b to conflict", || {
        let seen = (conflicts_of(&server, &repo, &a), conflicts_of(&server, &repo, &b));
        (!seen.0.is_empty() && !seen.1.is_empty()).then_some(seen)
    });
    assert_eq!(seen.0, [(b.clone(), vec!["a.txt".to_owned()])]);
    assert_eq!(seen.1, [(a.clone(), vec!["a.txt".to_owned()])]);
    assert_eq!(conflicts_of(&server, &repo, &c), [], "c edits elsewhere");
    let text = server.berth_ok(&["task", "show", &a]);
    assert!(text.contains(&format!("conflicts with {b} in a.txt")), "{text}");
    // Nothing was touched to find out.
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");

    // a merges (squashed: its label and its summary); b now conflicts with main.
    let merged = json_of(&berth(&server, &["task", "finish", &a, "--merge", "--squash", "--json"]));
    assert_eq!(merged["disposition"]["outcome"], "merged", "{merged}");
    assert_eq!(git(&repo, &["log", "-1", "--format=%B"]), "edit-a\n\na did");
    assert_eq!(
        conflicts_of(&server, &repo, &b),
        [("target:main".to_owned(), vec!["a.txt".to_owned()])]
    );
    assert_eq!(conflicts_of(&server, &repo, &a), [], "a merged task conflicts with nothing");
    assert_eq!(conflicts_of(&server, &repo, &c), []);
}

/// Fast-forward and rebase: the first task fast-forwards main; the second is refused a
/// fast-forward (main moved on), then rebased onto main and fast-forwarded: history stays
/// linear, both tasks' files are on main.
#[test]
fn tasks_merge_by_fast_forward_and_by_rebase() {
    let server = server();
    let repo = support::git::repo(&server, "app", &[("a.txt", b"one\n")]);
    let work = |file: &str| {
        format!(
            "printf 'x\\n' > {file} && git add {file} && git commit -qm 'add {file}' && \
             {} task report --status completed --summary 'added {file}'",
            berth_bin().display()
        )
    };
    let (a, _) = start(&server, &repo, "ff-a", &work("a2.txt"));
    let (b, _) = start(&server, &repo, "ff-b", &work("b2.txt"));
    for id in [&a, &b] {
        wait_task(&server, id, "completed", |t| t["state"] == "completed");
    }
    let branch_a = show(&server, &a)["branch"].as_str().unwrap().to_owned();
    let tip_a = git(&repo, &["rev-parse", &branch_a]);
    let merged =
        json_of(&berth(&server, &["task", "finish", &a, "--merge", "--ff-only", "--json"]));
    assert_eq!(merged["disposition"]["merged_sha"], tip_a.as_str(), "{merged}");
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), tip_a, "main is the task's commit itself");

    let refused = berth(&server, &["task", "finish", &b, "--merge", "--ff-only"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("not a fast-forward") && err.contains("--rebase"), "{err}");
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), tip_a, "main as it was");

    let rebased =
        json_of(&berth(&server, &["task", "finish", &b, "--merge", "--rebase", "--json"]));
    assert_eq!(rebased["disposition"]["outcome"], "merged", "{rebased}");
    assert_eq!(git(&repo, &["rev-parse", "HEAD^"]), tip_a, "b's commit on top of a's");
    let merges = git(&repo, &["rev-list", "--merges", "HEAD"]);
    assert_eq!(merges, "", "no merge commits: history is linear");
    assert!(repo.join("a2.txt").exists() && repo.join("b2.txt").exists());
    let both = berth(&server, &["task", "finish", &b, "--merge", "--squash", "--rebase"]);
    assert!(!both.status.success(), "one way at a time");
}
