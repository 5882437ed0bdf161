//! Persistence and honest restore with the real binary: SIGKILL and SIGTERM restarts, corrupt
//! and future snapshots, secrets, resume and auto-resume (RELIABILITY.md #3, #5–7, #12).

mod support;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use support::*;

const WAIT: Duration = Duration::from_secs(15);

fn find_pane(list: &Value, id: &str) -> Value {
    panes_of(list)
        .into_iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("pane {id} missing from {list}"))
}

/// A fake agent binary: prints its arguments and waits, so a test can see what was run.
fn fake_agent(dir: &Path, name: &str) {
    let path = dir.join(name);
    fs::write(&path, "#!/bin/sh\necho \"fake-agent-ran: $0 $*\"\nexec sleep 600\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn path_with(dir: &Path) -> String {
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
fn sigkill_restart_classifies_every_pane_and_reruns_nothing() {
    let mut server = TestServer::start();
    let work = server.home.join("work dir");
    fs::create_dir(&work).unwrap();
    let work_str = work.to_str().unwrap();

    let shell = server.berth_ok(&["new", "--cwd", work_str, "--", "bash", "--norc"]);
    server.berth_ok(&["send", &shell, "--enter", "echo marker-out-$((1+2))"]);
    server.wait_text(&shell, "marker-out-3", WAIT);

    let busy = server.berth_ok(&["split", &shell, "--down", "--", "bash", "--norc", "-i"]);
    server.berth_ok(&["send", &busy, "--enter", "sleep 777"]);
    poll(WAIT, "sleep 777 to run", || {
        (!server.pids_matching("sleep 777").is_empty()).then_some(())
    });

    let agent = server.berth_ok(&["split", &shell, "--right", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "report-session",
        "--agent",
        "claude",
        "--session",
        "s-abc",
        "--pane",
        &agent,
    ]);

    let saved = server.berth_ok(&["save"]);
    assert!(saved.contains("saved 3 panes"), "{saved}");
    let before = server.list();
    server.kill();
    // The PTYs' hangup ends the old children; the check below proves none starts again.
    poll(WAIT, "the old sleep to end", || {
        server.pids_matching("sleep 777").is_empty().then_some(())
    });

    server.start_again();
    let list: Value = serde_json::from_str(&server.berth_ok(&["ls", "--json"])).unwrap();
    // Structure and ids are stable.
    assert_eq!(list["workspaces"][0]["id"], before["workspaces"][0]["id"]);
    assert_eq!(
        list["workspaces"][0]["tabs"][0]["layout"],
        before["workspaces"][0]["tabs"][0]["layout"]
    );
    assert_eq!(
        list["workspaces"][0]["tabs"][0]["active_pane_id"],
        before["workspaces"][0]["tabs"][0]["active_pane_id"]
    );

    let shell_entry = find_pane(&list, &shell);
    assert_eq!(shell_entry["state"], "RESTORED", "{shell_entry}");
    assert_eq!(shell_entry["cwd"], work_str);
    let busy_entry = find_pane(&list, &busy);
    assert_eq!(busy_entry["state"], "RESTORED", "{busy_entry}");
    assert!(busy_entry["was_running"].as_str().unwrap_or("").contains("sleep 777"), "{busy_entry}");
    let agent_entry = find_pane(&list, &agent);
    assert_eq!(agent_entry["state"], "RESUMABLE", "{agent_entry}");
    assert_eq!(agent_entry["agent"]["kind"], "claude");
    assert_eq!(agent_entry["agent"]["resume_argv"], json!(["claude", "--resume", "s-abc"]));

    // The old output reads back from the tail; nothing was started again.
    assert!(server.berth_ok(&["read", &shell]).contains("marker-out-3"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(server.pids_matching("sleep 777").is_empty(), "sleep 777 was started again");
    assert_eq!(find_pane(&server.list(), &busy)["pid"], Value::Null);

    // Sending to a tombstone is refused; resuming the shell starts it in the saved cwd.
    let out = server.berth(&["send", &shell, "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.berth_ok(&["resume", &shell]), "LIVE");
    server.berth_ok(&["send", &shell, "--enter", "echo \"pwd=$(pwd)|\""]);
    server.wait_text(&shell, &format!("pwd={work_str}|"), WAIT);
    // The tail stays above the new output.
    assert!(server.screen(&shell).contains("marker-out-3"));
    assert_eq!(find_pane(&server.list(), &shell)["state"], "LIVE");
    let out = server.berth(&["resume", &shell]);
    assert_eq!(out.status.code(), Some(1), "resuming a live pane is refused");
}

#[test]
fn a_pane_created_just_before_sigterm_is_there_after_restart() {
    let mut server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.restart();
    let entry = find_pane(&server.list(), &pane);
    assert_eq!(entry["state"], "RESTORED");
}

#[test]
fn an_exited_pane_stays_exited_with_its_code() {
    let mut server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "sh", "-c", "echo last-words; exit 4"]);
    poll(WAIT, "exit", || server.pane(&pane).filter(|p| p["state"] == "EXITED"));
    server.restart();
    let entry = find_pane(&server.list(), &pane);
    assert_eq!(entry["state"], "EXITED");
    assert_eq!(entry["exit_code"], 4);
    assert!(server.screen(&pane).contains("last-words"));
}

#[test]
fn secrets_never_reach_the_state_dir_and_modes_are_private() {
    let mut server =
        TestServer::prepare().with_env("GH_TOKEN_FOR_TEST", "hunter2-do-not-save").launch();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["send", &pane, "--enter", "echo ${#GH_TOKEN_FOR_TEST}-chars"]);
    server.wait_text(&pane, "19-chars", WAIT);
    server.berth_ok(&["save"]);
    server.restart();
    server.berth_ok(&["save"]);
    let mut files = 0;
    let mut stack = vec![server.state_dir()];
    while let Some(dir) = stack.pop() {
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700, "{}", dir.display());
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            files += 1;
            assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600, "{}", path.display());
            let bytes = fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains("hunter2-do-not-save"), "secret found in {}", path.display());
        }
    }
    assert!(files >= 2, "expected a snapshot and a tail");
}

#[test]
fn a_corrupt_snapshot_is_moved_aside_and_the_server_starts_empty() {
    let server = TestServer::prepare();
    fs::create_dir_all(server.state_dir()).unwrap();
    fs::write(
        server.state_dir().join("snapshot.json"),
        b"{\"snapshot_version\": 1, \"workspaces\": [tru",
    )
    .unwrap();
    let server = server.launch();
    assert_eq!(server.list()["workspaces"], json!([]));
    let moved: Vec<String> = fs::read_dir(server.state_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("snapshot.json.corrupt-"))
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert!(server.log_text().contains("corrupt"), "{}", server.log_text());
}

#[test]
fn a_future_snapshot_is_refused_and_left_byte_identical() {
    let server = TestServer::prepare();
    fs::create_dir_all(server.state_dir()).unwrap();
    let path = server.state_dir().join("snapshot.json");
    let future =
        br#"{"snapshot_version": 99, "server_version": "9.9.9", "workspaces": [], "panes": []}"#;
    fs::write(&path, future).unwrap();
    let out = server.run_server_once(&[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("99") && stderr.contains('1'), "{stderr}");
    assert!(stderr.contains("--move-aside-future"), "{stderr}");
    assert_eq!(fs::read(&path).unwrap(), future);

    // Explicitly moving it aside lets the server start.
    let server = server.launch_with(&["--move-aside-future"]);
    assert_eq!(server.list()["workspaces"], json!([]));
    assert!(!path.exists() || fs::read(&path).unwrap() != future);
}

#[test]
fn resume_runs_the_agents_official_resume_command() {
    let bin = tempfile::tempdir().unwrap();
    fake_agent(bin.path(), "claude");
    let mut server = TestServer::prepare().with_env("PATH", &path_with(bin.path())).launch();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "report-session",
        "--agent",
        "claude",
        "--session",
        "sess-42",
        "--pane",
        &pane,
    ]);
    server.restart();
    assert_eq!(find_pane(&server.list(), &pane)["state"], "RESUMABLE");
    assert_eq!(server.berth_ok(&["resume", &pane]), "LIVE");
    server.wait_text(&pane, "fake-agent-ran:", WAIT);
    let text = server.screen(&pane);
    assert!(text.contains("--resume sess-42"), "{text}");
    // Regression (issue #29, item 7): a line marks where the old tail ends and the resumed
    // session starts, above the resumed program's output.
    let marker = text.find("── resumed: claude --resume sess-42 ─");
    let ran = text.find("fake-agent-ran:");
    assert!(marker.is_some() && marker < ran, "no resume marker above the new output:\n{text}");
}

#[test]
fn a_missing_agent_binary_fails_visibly_and_keeps_the_tombstone() {
    let mut server = TestServer::prepare().with_env("PATH", "/usr/bin:/bin").launch();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["send", &pane, "--enter", "echo before-$((2+2))"]);
    server.wait_text(&pane, "before-4", WAIT);
    server.berth_ok(&["report-session", "--agent", "codex", "--session", "th-1", "--pane", &pane]);
    server.restart();
    let out = server.berth(&["resume", &pane]);
    assert_eq!(out.status.code(), Some(1));
    let entry = find_pane(&server.list(), &pane);
    assert_eq!(entry["state"], "RESUMABLE");
    let screen = server.screen(&pane);
    assert!(screen.contains("before-4") && screen.contains("could not resume"), "{screen}");
}

#[test]
fn auto_resume_starts_only_opted_in_workspaces() {
    let bin = tempfile::tempdir().unwrap();
    fake_agent(bin.path(), "codex");
    let mut server = TestServer::prepare().with_env("PATH", &path_with(bin.path())).launch();
    let auto = server.berth_ok(&["new", "--workspace", "auto", "--", "bash", "--norc"]);
    let manual = server.berth_ok(&["new", "--workspace", "manual", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "report-session",
        "--agent",
        "codex",
        "--session",
        "t-auto",
        "--pane",
        &auto,
    ]);
    server.berth_ok(&[
        "report-session",
        "--agent",
        "codex",
        "--session",
        "t-manual",
        "--pane",
        &manual,
    ]);
    server.berth_ok(&["workspace", "auto-resume", "auto", "on"]);
    server.restart();
    poll(WAIT, "the opted-in agent to resume", || {
        (find_pane(&server.list(), &auto)["state"] == "LIVE").then_some(())
    });
    server.wait_text(&auto, "resume t-auto", WAIT);
    assert_eq!(find_pane(&server.list(), &manual)["state"], "RESUMABLE");
}

#[test]
fn a_shutdown_save_never_replaces_a_record_with_more_panes() {
    let mut server = TestServer::start();
    let a = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let b = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["save"]);
    // Both shells end before the server is told to stop, as when the host kills processes
    // first: the shutdown save would record fewer live panes and must not replace the record.
    for pane in [&a, &b] {
        server.berth_ok(&["send", pane, "--enter", "exit"]);
    }
    poll(WAIT, "both shells to exit", || {
        let list = server.list();
        (find_pane(&list, &a)["state"] == "EXITED" && find_pane(&list, &b)["state"] == "EXITED")
            .then_some(())
    });
    // A pane's own exit schedules no save, so the record still holds two live panes when
    // SIGTERM asks for the shutdown save, which must then leave it alone.
    server.restart();
    let list = server.list();
    assert_eq!(find_pane(&list, &a)["state"], "RESTORED", "{list}");
    assert_eq!(find_pane(&list, &b)["state"], "RESTORED", "{list}");
}

#[test]
fn a_logind_shutdown_notice_saves_under_a_delay_inhibitor() {
    use berth_server::dbus::testing::PrivateBus;
    use berth_server::logind::testing::FakeLogind;
    let bus = PrivateBus::start().expect("start a private dbus-daemon");
    let logind = FakeLogind::start(bus.address()).expect("start the fake logind");
    let mut server = TestServer::prepare()
        .with_env("DBUS_SYSTEM_BUS_ADDRESS", bus.address())
        .with_env("BERTH_LOGIND", "1")
        .launch();
    poll(WAIT, "the server to hold a delay inhibitor", || {
        (logind.held_inhibitors() == 1).then_some(())
    });
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    logind.prepare_for_shutdown(true).expect("emit PrepareForShutdown");
    poll(WAIT, "the inhibitor to be released after the save", || {
        (logind.held_inhibitors() == 0).then_some(())
    });
    assert!(server.log_text().contains("saved for the host's shutdown"), "{}", server.log_text());
    let snapshot = fs::read_to_string(server.state_dir().join("snapshot.json")).unwrap();
    assert!(snapshot.contains(&pane), "{snapshot}");
    server.kill();
    server.start_again();
    assert_eq!(find_pane(&server.list(), &pane)["state"], "RESTORED");
}

/// A fake codex whose resume fails as the real one does when its session is gone: it enters
/// and leaves the alternate screen, homes the cursor and erases the screen, says so and exits.
fn failing_codex(dir: &Path) {
    let path = dir.join("codex");
    fs::write(
        &path,
        "#!/bin/sh\nprintf '\\033[?1049h\\033[2J\\033[?1049l\\033[1;1H\\033[J'\n\
         echo 'Error: no rollout found for thread id th-gone'\nexit 1\n",
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Regression (issue #20, defect 3): a failed `berth resume` of a codex pane erased the
/// restored tail (codex's `ESC[1;1H ESC[J` cleared the screen it was on), keeping 4 of its 40
/// lines. The tail is now in the scrollback before the program starts.
#[test]
fn a_failed_resume_keeps_the_whole_restored_tail() {
    let bin = tempfile::tempdir().unwrap();
    failing_codex(bin.path());
    let mut server = TestServer::prepare().with_env("PATH", &path_with(bin.path())).launch();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        "for i in $(seq 1 40); do echo tail-line-$i; done",
    ]);
    server.wait_text(&pane, "tail-line-40", WAIT);
    server.berth_ok(&[
        "report-session",
        "--agent",
        "codex",
        "--session",
        "th-gone",
        "--pane",
        &pane,
    ]);
    server.restart();
    // The answer is the pane's state when `resume` answered: this codex fails at once, so it
    // may have exited by then (it was seen to, under load).
    let state = server.berth_ok(&["resume", &pane]);
    assert!(matches!(state.as_str(), "LIVE" | "EXITED"), "{state}");
    server.wait_text(&pane, "no rollout found", WAIT);
    let text = server.screen(&pane);
    for i in 1..=40 {
        assert!(text.contains(&format!("tail-line-{i}\n")), "tail-line-{i} lost:\n{text}");
    }
}

/// Regression (issue #20, defect 4): after `pane.resize` to 120×40, a restart and a resume
/// brought the pane back at the tab's 80×24 and rewrapped its 120-column tail. A pane alone in
/// its tab now resizes the tab, which is saved; a pane in a split takes the size only until
/// its tab is laid out again.
#[test]
fn pane_resize_survives_a_restart_and_a_resume() {
    let mut server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.call("pane.resize", json!({ "pane_id": pane, "cols": 120, "rows": 40 }));
    let size = |server: &TestServer| {
        let entry = find_pane(&server.list(), &pane);
        (entry["size"]["cols"].clone(), entry["size"]["rows"].clone())
    };
    assert_eq!(size(&server), (json!(120), json!(40)));
    let wide = "w".repeat(110);
    server.berth_ok(&["send", &pane, "--enter", &format!("echo {wide}")]);
    poll(WAIT, "the wide line", || {
        server.screen(&pane).contains(&format!("\n{wide}")).then_some(())
    });
    server.restart();
    assert_eq!(size(&server), (json!(120), json!(40)), "the tombstone's size");
    assert_eq!(server.berth_ok(&["resume", &pane]), "LIVE");
    assert_eq!(size(&server), (json!(120), json!(40)), "the resumed pane's size");
    assert!(server.screen(&pane).contains(&format!("\n{wide}\n")), "{}", server.screen(&pane));
    // In a split the size holds until the tab is laid out again.
    let right = server.berth_ok(&["split", &pane, "--right", "--", "bash", "--norc"]);
    server.call("pane.resize", json!({ "pane_id": right, "cols": 30, "rows": 10 }));
    let entry = find_pane(&server.list(), &right);
    assert_eq!(
        (entry["size"]["cols"].clone(), entry["size"]["rows"].clone()),
        (json!(30), json!(10))
    );
    let list = server.list();
    let tab = list["workspaces"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|w| w["tabs"].as_array().cloned().unwrap_or_default())
        .find(|t| t["panes"].as_array().is_some_and(|p| p.iter().any(|p| p["id"] == right)))
        .expect("the split's tab")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server.call("tab.resize", json!({ "tab_id": tab, "cols": 100, "rows": 30 }));
    let entry = find_pane(&server.list(), &right);
    assert_eq!(entry["size"]["rows"], 30, "{entry}");
}
