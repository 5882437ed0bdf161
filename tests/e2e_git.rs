//! Git context and review (issue 16, server and CLI): `git` on workspaces and panes in
//! `berth ls --json`, refreshed by file-system events in the repo (no polling: the probe
//! count stays flat while nothing changes), `berth worktree ls`, and `berth diff` of a task
//! (stub agent, real worktree) and of a workspace, with a too-large file marked, never sent.

mod support;

use std::path::PathBuf;
use std::time::Duration;

use support::git::{git, repo, server_with_data_home as server};
use support::task::StubTask;
use support::*;

fn ls(server: &TestServer) -> Value {
    json_of(&server.berth(&["ls", "--json"]))
}

fn workspace(server: &TestServer, name: &str) -> Value {
    ls(server)["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no workspace {name}"))
}

/// Waits (at most 2 s) until the workspace's `git` satisfies `check`.
fn wait_git(server: &TestServer, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    poll(Duration::from_secs(2), what, || {
        let git = workspace(server, name)["git"].clone();
        check(&git).then_some(git)
    })
}

fn probes(server: &TestServer) -> u64 {
    server.call("server.info", json!({}))["git_probes"].as_u64().expect("git_probes")
}

/// The probe count does not move over 1.5 s while nothing changes.
fn assert_flat(server: &TestServer) {
    // Let the last refresh (and its debounce) finish first.
    std::thread::sleep(Duration::from_millis(500));
    let before = probes(server);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(probes(server), before, "git ran while nothing changed");
}

#[test]
fn git_context_follows_branch_commit_edit_and_worktree_without_polling() {
    let server = server();
    let dir = repo(&server, "proj", &[("a.txt", b"one\n")]);
    let cwd = dir.display().to_string();
    server.call("workspace.create", json!({ "name": "proj", "cwd": cwd }));
    let g = wait_git(&server, "proj", "the repo's context", |g| g["branch"] == "main");
    assert_eq!(g["root"], cwd.as_str());
    assert_eq!(g["dirty"], false);
    assert_eq!(g["worktree"], false);
    assert!(g["detached_sha"].is_null() && g["ahead"].is_null(), "{g}");
    assert_flat(&server);

    // A branch switch, seen in `ls` and on the event stream.
    let mut events = server.client();
    events.subscribe().unwrap();
    git(&dir, &["checkout", "-q", "-b", "feature"]);
    git(&dir, &["branch", "-q", "--set-upstream-to", "main"]);
    wait_git(&server, "proj", "the new branch", |g| g["branch"] == "feature" && g["ahead"] == 0);
    poll(Duration::from_secs(2), "git.changed for the new branch", || {
        let event = events.next_event(Some(Duration::from_millis(200))).ok()?;
        (event["type"] == "git.changed"
            && event["dir"] == cwd.as_str()
            && event["git"]["branch"] == "feature")
            .then_some(())
    });
    drop(events);
    // An edited file (the work tree only).
    std::fs::write(dir.join("a.txt"), "one\ntwo\n").unwrap();
    wait_git(&server, "proj", "the edit to make it dirty", |g| g["dirty"] == true);
    // A new commit: clean again, one ahead of its upstream.
    git(&dir, &["commit", "-qam", "second"]);
    wait_git(&server, "proj", "the commit", |g| g["dirty"] == false && g["ahead"] == 1);
    // Detached.
    git(&dir, &["checkout", "-q", "--detach", "HEAD~1"]);
    let g = wait_git(&server, "proj", "a detached HEAD", |g| g["branch"].is_null());
    assert_eq!(g["detached_sha"].as_str().unwrap(), git(&dir, &["rev-parse", "HEAD"]));
    git(&dir, &["checkout", "-q", "feature"]);
    wait_git(&server, "proj", "back on the branch", |g| g["branch"] == "feature");
    assert_flat(&server);

    // A new worktree, and a workspace in it.
    let wt = server.root.path().join("proj-wt");
    git(&dir, &["worktree", "add", "-q", "-b", "side", &wt.display().to_string()]);
    let wt = wt.canonicalize().unwrap();
    server.call("workspace.create", json!({ "name": "side", "cwd": wt.display().to_string() }));
    let g = wait_git(&server, "side", "the worktree's context", |g| g["branch"] == "side");
    assert_eq!(g["worktree"], true);
    assert_eq!(g["root"], wt.display().to_string().as_str());
    // A commit in the linked worktree is seen through its own git dir.
    std::fs::write(wt.join("b.txt"), "b\n").unwrap();
    git(&wt, &["add", "b.txt"]);
    wait_git(&server, "side", "the staged file", |g| g["dirty"] == true);
    git(&wt, &["commit", "-qm", "side"]);
    wait_git(&server, "side", "the worktree's commit", |g| g["dirty"] == false);
    assert_flat(&server);

    // Panes carry their cwd's context too.
    let wt_arg = wt.display().to_string();
    server.berth_ok(&["new", "--workspace", "side", "--cwd", &wt_arg, "--", "sleep", "60"]);
    poll(Duration::from_secs(2), "the pane's context", || {
        let pane = workspace(&server, "side")["tabs"][0]["panes"][0].clone();
        (pane["git"]["branch"] == "side" && pane["git"]["worktree"] == true).then_some(())
    });

    // A shell that changes directory (no OSC 7: the process's cwd) takes the new context.
    let shell =
        server.berth_ok(&["new", "--workspace", "proj", "--cwd", &cwd, "--", "bash", "--norc"]);
    let pane_git = |server: &TestServer| server.pane(&shell).map(|p| p["git"].clone());
    poll(Duration::from_secs(2), "the shell's context", || {
        pane_git(&server).filter(|g| g["branch"] == "feature")
    });
    server.berth_ok(&["send", &shell, "--enter", &format!("cd {wt_arg}")]);
    poll(Duration::from_secs(2), "the context after cd", || {
        pane_git(&server).filter(|g| g["branch"] == "side" && g["worktree"] == true)
    });

    // `berth worktree ls`: both, each with the workspace using it.
    let list = json_of(&server.berth(&["worktree", "ls", "--repo", &cwd, "--json"]));
    let all = list["worktrees"].as_array().unwrap();
    assert_eq!(all.len(), 2, "{list}");
    let proj = workspace(&server, "proj")["id"].clone();
    let side = workspace(&server, "side")["id"].clone();
    assert_eq!(all[0]["path"], cwd.as_str());
    assert_eq!(all[0]["main"], true);
    assert_eq!(all[0]["workspaces"], json!([proj]));
    assert_eq!(all[1]["branch"], "side");
    // The side worktree is used by its workspace and by the proj shell that went there.
    assert_eq!(all[1]["workspaces"], json!([proj, side]));
    let text = server.berth_ok(&["worktree", "ls", "--repo", &cwd]);
    assert!(text.contains("side") && text.contains("[main]"), "{text}");

    // An explicit refresh probes every directory once.
    let refreshed = server.call("workspace.refresh_git", json!({}));
    assert!(refreshed["probed"].as_u64().unwrap() >= 2, "{refreshed}");
}

fn checks(server: &TestServer) -> u64 {
    server.call("server.info", json!({}))["git_checks"].as_u64().expect("git_checks")
}

/// Regression: every event on the bus (each `pane.output` included) made the git watcher
/// lock the Store and read every directory, every 200 ms while a pane printed. Now a pane
/// printing for 2 s makes it look at nothing (`git_checks` and `git_probes` flat), while its
/// shell's `cd` into another repo (no OSC 7) is still seen within 2 s. And a directory made
/// in a watched work tree is watched (a file made in it later makes the repo dirty), unless
/// git ignores it (`target/`: writing there runs no git).
#[test]
fn pane_output_costs_the_git_watcher_nothing_and_new_directories_are_watched() {
    let server = server();
    let dir = repo(&server, "proj", &[("a.txt", b"one\n"), (".gitignore", b"target/\n")]);
    let other = repo(&server, "other", &[("b.txt", b"b\n")]);
    git(&other, &["checkout", "-q", "-b", "elsewhere"]);
    let cwd = dir.display().to_string();
    let shell =
        server.berth_ok(&["new", "--workspace", "proj", "--cwd", &cwd, "--", "bash", "--norc"]);
    wait_git(&server, "proj", "the repo's context", |g| g["branch"] == "main");
    let pane_git = |server: &TestServer| server.pane(&shell).map(|p| p["git"].clone());
    poll(Duration::from_secs(2), "the shell's context", || {
        pane_git(&server).filter(|g| g["branch"] == "main")
    });
    assert_flat(&server);

    // Two seconds of output: the watcher neither looks nor probes.
    let (checks_before, probes_before) = (checks(&server), probes(&server));
    server.berth_ok(&["send", &shell, "--enter", "timeout 2 yes printing; echo printed-$((40+2))"]);
    server.wait_text(&shell, "printed-42", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(500));
    let (checks_after, probes_after) = (checks(&server), probes(&server));
    println!(
        "2 s of output: git_checks {checks_before} → {checks_after}, \
         git_probes {probes_before} → {probes_after}"
    );
    assert_eq!(checks_after, checks_before, "the watcher looked while the pane printed");
    assert_eq!(probes_after, probes_before, "git ran while the pane printed");

    // A cd into another repo (no OSC 7: the process's cwd) is seen.
    server.berth_ok(&["send", &shell, "--enter", &format!("cd {}", other.display())]);
    poll(Duration::from_secs(2), "the context after cd", || {
        pane_git(&server).filter(|g| g["branch"] == "elsewhere")
    });

    // A new directory is watched: a file made in it later is seen.
    std::fs::create_dir(dir.join("fresh")).unwrap();
    assert_flat(&server);
    assert_eq!(workspace(&server, "proj")["git"]["dirty"], false, "an empty dir is no change");
    std::fs::write(dir.join("fresh/new.txt"), "new\n").unwrap();
    wait_git(&server, "proj", "a file in the new directory", |g| g["dirty"] == true);
    std::fs::remove_file(dir.join("fresh/new.txt")).unwrap();
    wait_git(&server, "proj", "the file gone again", |g| g["dirty"] == false);
    // Removed and made again: watched again.
    std::fs::remove_dir(dir.join("fresh")).unwrap();
    assert_flat(&server);
    std::fs::create_dir(dir.join("fresh")).unwrap();
    assert_flat(&server);
    std::fs::write(dir.join("fresh/again.txt"), "again\n").unwrap();
    wait_git(&server, "proj", "a file in the remade directory", |g| g["dirty"] == true);
    std::fs::remove_dir_all(dir.join("fresh")).unwrap();
    wait_git(&server, "proj", "clean once more", |g| g["dirty"] == false);
    // An ignored one is not: writing there runs no git.
    std::fs::create_dir(dir.join("target")).unwrap();
    assert_flat(&server);
    let before = probes(&server);
    std::fs::write(dir.join("target/out.o"), "x").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(probes(&server), before, "a write in an ignored directory ran git");

    // A checkout that makes nested tracked directories: they are watched too.
    git(&dir, &["checkout", "-q", "-b", "deep"]);
    std::fs::create_dir_all(dir.join("sub/deep")).unwrap();
    std::fs::write(dir.join("sub/deep/x.txt"), "x\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "deep"]);
    git(&dir, &["checkout", "-q", "main"]);
    wait_git(&server, "proj", "back on main, sub/ gone", |g| g["branch"] == "main");
    git(&dir, &["checkout", "-q", "deep"]);
    wait_git(&server, "proj", "on deep", |g| g["branch"] == "deep" && g["dirty"] == false);
    assert_flat(&server);
    std::fs::write(dir.join("sub/deep/x.txt"), "changed\n").unwrap();
    wait_git(&server, "proj", "an edit two directories down", |g| g["dirty"] == true);
}

#[test]
fn a_tasks_diff_lists_added_modified_deleted_renamed_and_binary_files() {
    let server = server();
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let dir = repo(
        &server,
        "proj",
        &[
            ("mod.txt", body.as_bytes()),
            ("del.txt", b"bye\n"),
            ("old.txt", b"same text\nmore of it\nand more\n"),
            ("pic.bin", &[0, 1, 2, 3, 0, 255]),
        ],
    );
    let task = StubTask::labelled(&server, &dir, "review").objective("Change files").start(&server);
    let id = task["id"].as_str().unwrap().to_owned();
    let wt = PathBuf::from(task["worktree_path"].as_str().unwrap());
    // The agent's work: committed and not.
    std::fs::write(wt.join("mod.txt"), body.replace("line 3\n", "LINE 3\n")).unwrap();
    git(&wt, &["rm", "-q", "del.txt"]);
    git(&wt, &["mv", "old.txt", "new.txt"]);
    git(&wt, &["-c", "user.name=T", "-c", "user.email=t@t", "commit", "-qm", "agent"]);
    std::fs::write(wt.join("pic.bin"), [7u8, 0, 9, 9, 0, 1]).unwrap();
    std::fs::write(wt.join("added.txt"), "fresh\n").unwrap();

    let answer = json_of(&server.berth(&["diff", &id, "--json"]));
    let files = answer["files"].as_array().unwrap();
    let find = |p: &str| {
        files.iter().find(|f| f["path"] == p).unwrap_or_else(|| panic!("{p} in {answer}")).clone()
    };
    assert_eq!(files.len(), 5, "{answer}");
    assert_eq!(find("added.txt")["status"], "added");
    assert_eq!(find("added.txt")["added"], 1);
    assert_eq!(find("del.txt")["status"], "deleted");
    assert_eq!(find("new.txt")["status"], "renamed");
    assert_eq!(find("new.txt")["old_path"], "old.txt");
    assert_eq!(find("pic.bin")["binary"], true);
    assert!(find("pic.bin")["hunks"].is_null(), "a binary file has no hunks");
    let modified = find("mod.txt");
    assert_eq!(modified["status"], "modified");
    assert_eq!((modified["added"].clone(), modified["removed"].clone()), (json!(1), json!(1)));
    let hunk = &modified["hunks"][0];
    assert_eq!(hunk["old_start"], 1);
    let lines = hunk["lines"].as_array().unwrap();
    let removed = lines.iter().find(|l| l["kind"] == "removed").unwrap();
    let added = lines.iter().find(|l| l["kind"] == "added").unwrap();
    assert_eq!((removed["text"].clone(), removed["old_line"].clone()), (json!("line 3"), json!(3)));
    assert_eq!((added["text"].clone(), added["new_line"].clone()), (json!("LINE 3"), json!(3)));
    assert_eq!(answer["base"], task["base_sha"]);

    // The text forms.
    let stat = server.berth_ok(&["diff", &id, "--stat"]);
    assert!(stat.contains("old.txt -> new.txt") && stat.contains("binary"), "{stat}");
    assert!(!stat.contains("LINE 3"), "--stat prints no hunks: {stat}");
    let one = server.berth_ok(&["diff", &id, "mod.txt"]);
    assert!(one.contains("+LINE 3") && one.contains("-line 3"), "{one}");
    // Bad input: a clear error, and the server stays up.
    let out = server.berth(&["diff", &id, "nothing.txt"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing.txt"));
    let out = server.berth(&["diff", "task_nope"]);
    assert!(!out.status.success());
    server.call("server.info", json!({}));

    // `berth review`: a headless server has no window to open it in, and says so.
    let out = server.berth(&["review", &id]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no window is open"), "{err}");
    let out = server.berth(&["review", "nonsense"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("task id"), "{out:?}");
    // With a window attached (a connection that said `window.attach`), its event follower
    // gets `review.requested`; once that connection ends, none is counted again.
    let mut window = berth_server::client::Client::connect(&server.socket).expect("connect");
    window.attach_window(1).expect("window.attach");
    let mut events = berth_server::client::Client::connect(&server.socket).expect("connect");
    events.subscribe().expect("subscribe");
    let out = server.berth_ok(&["review", &id]);
    assert!(out.contains("opened in 1 window"), "{out}");
    let told = poll(Duration::from_secs(10), "review.requested", || {
        let event = events.next_event(Some(Duration::from_secs(5))).ok()?;
        (event["type"] == "review.requested").then_some(event)
    });
    assert_eq!(told["task_id"], json!(id), "{told}");
    drop(window);
    poll(Duration::from_secs(10), "the closed window no longer counted", || {
        let out = server.berth(&["review", &id]);
        (!out.status.success()).then_some(())
    });
    let out = server.berth(&["review", "task_0123456789abcdef0123456789abcdef"]);
    assert!(!out.status.success());
}

/// `berth review` opens the view in one window, the one used last (the last to say, in its
/// `window.view`, that it has the focus), not in every attached window. Regression: every
/// attached window opened it. Two windows here are two connections that attach and report.
#[test]
fn review_opens_in_the_window_used_last_only() {
    let server = server();
    let dir = repo(&server, "proj", &[("a.txt", b"one\n")]);
    let id = StubTask::labelled(&server, &dir, "one").start(&server)["id"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let window = |focused: bool| {
        let mut client = berth_server::client::Client::connect(&server.socket).expect("connect");
        client.attach_window(1).expect("window.attach");
        let view = berth_server::store::WindowView {
            visible: Vec::new(),
            focused_pane: None,
            window_focused: focused,
        };
        let number = client.report_view(view.clone()).expect("window.view").expect("a number");
        (client, view, number)
    };
    let mut events = server.client();
    events.subscribe().expect("subscribe");
    // The window told in each `review.requested`, and what `berth review` printed.
    let mut review = || {
        let answer = server.berth_ok(&["review", &id]);
        let told = poll(Duration::from_secs(10), "review.requested", || {
            let event = events.next_event(Some(Duration::from_secs(5))).ok()?;
            (event["type"] == "review.requested").then_some(event)
        });
        assert_eq!(told["task_id"], json!(id), "{told}");
        (told["window_id"].clone(), answer)
    };
    let (mut one, one_view, one_number) = window(false);
    // The only window that said what it shows, though without the focus.
    assert_eq!(review().0, json!(one_number));
    let (two, _, two_number) = window(true);
    assert_ne!(one_number, two_number);
    let (told, answer) = review();
    assert_eq!(told, json!(two_number), "the focused window opens it, and only it");
    assert!(answer.contains("opened in 1 window"), "{answer}");
    assert_eq!(server.call("server.info", json!({}))["active_window"], json!(two_number));
    // The first window takes the focus back: it is the one used last now.
    one.report_view(berth_server::store::WindowView { window_focused: true, ..one_view })
        .expect("window.view");
    assert_eq!(review().0, json!(one_number));
    // It closes: the window still open is the one used last now, and opens it alone.
    drop(one);
    poll(Duration::from_secs(10), "the closed window forgotten", || {
        (server.call("server.info", json!({}))["active_window"] == json!(two_number)).then_some(())
    });
    let (told, answer) = review();
    assert_eq!(told, json!(two_number));
    assert!(answer.contains("opened in 1 window"), "{answer}");
    drop(two);
    poll(Duration::from_secs(10), "no window left", || {
        server.call("server.info", json!({}))["active_window"].is_null().then_some(())
    });
}

#[test]
fn a_huge_diff_is_marked_too_large_and_hunks_page() {
    let server = server();
    let body: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let dir = repo(&server, "big", &[("paged.txt", body.as_bytes())]);
    server.call("workspace.create", json!({ "name": "big", "cwd": dir.display().to_string() }));
    let ws = workspace(&server, "big")["id"].as_str().unwrap().to_owned();
    let huge: String = (1..=20_001).map(|i| format!("row {i}\n")).collect();
    std::fs::write(dir.join("huge.txt"), &huge).unwrap();
    git(&dir, &["add", "huge.txt"]);
    // Three hunks far apart.
    let paged = body
        .replace("line 5\n", "five\n")
        .replace("line 50\n", "fifty\n")
        .replace("line 95\n", "ninety-five\n");
    std::fs::write(dir.join("paged.txt"), paged).unwrap();

    let answer = json_of(&server.berth(&["diff", "big", "--json"]));
    let huge = answer["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "huge.txt")
        .cloned()
        .unwrap();
    assert_eq!(huge["too_large"], true, "{huge}");
    assert_eq!(huge["added"], 20_001);
    assert!(huge["hunks"].is_null(), "never sent whole");
    let out = server.call("diff.file", json!({ "target": ws, "path": "huge.txt" }));
    assert_eq!(out["file"]["too_large"], true);
    assert_eq!(out["hunks"], json!([]));
    assert!(serde_json::to_string(&out).unwrap().len() < 4096, "{out}");

    let page = server
        .call("diff.file", json!({ "target": ws, "path": "paged.txt", "offset": 1, "limit": 1 }));
    assert_eq!(page["total_hunks"], 3, "{page}");
    let hunks = page["hunks"].as_array().unwrap();
    assert_eq!(hunks.len(), 1);
    let added = hunks[0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "added")
        .unwrap()
        .clone();
    assert_eq!((added["text"].clone(), added["new_line"].clone()), (json!("fifty"), json!(50)));
    let text = server.berth_ok(&["diff", "big", "--stat"]);
    assert!(text.contains("too large"), "{text}");
}
