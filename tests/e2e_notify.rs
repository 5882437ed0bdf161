//! Notifications, attention and agent hooks end to end: real shells print the OSC sequences,
//! hooks arrive through `berth hook`, desktop notifications cross a private D-Bus.

mod support;

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::*;

const WAIT: Duration = Duration::from_secs(15);

fn notifications(server: &TestServer) -> Vec<Value> {
    let out = server.berth_ok(&["notifications", "--json"]);
    let value: Value = serde_json::from_str(&out).unwrap();
    value["notifications"].as_array().cloned().unwrap_or_default()
}

fn wait_notifications(server: &TestServer, count: usize) -> Vec<Value> {
    poll(WAIT, &format!("{count} notifications"), || {
        let list = notifications(server);
        (list.len() >= count).then_some(list)
    })
}

/// Runs a command line in a fresh bash pane and returns the pane.
fn pane_running(server: &TestServer, line: &str) -> String {
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["send", &pane, "--enter", line]);
    pane
}

#[test]
fn osc9_becomes_a_stored_notification_and_raises_attention() {
    let server = TestServer::start();
    let pane = pane_running(&server, r"printf '\e]9;build done\a'");
    let list = wait_notifications(&server, 1);
    assert_eq!(list[0]["title"], "build done", "{list:?}");
    assert_eq!(list[0]["source"], "osc9");
    assert_eq!(list[0]["pane_id"], pane);
    assert!(list[0]["read_at"].is_null());
    assert_eq!(server.pane(&pane).unwrap()["attention"], "unread");

    // Looking at the pane clears it.
    server.berth_ok(&["focus", &pane]);
    assert_eq!(server.pane(&pane).unwrap()["attention"], "none");
    assert!(!notifications(&server)[0]["read_at"].is_null());
}

#[test]
fn osc777_and_chunked_osc99_give_one_notification_each_and_progress_none() {
    let server = TestServer::start();
    pane_running(&server, r"printf '\e]9;4;1;50\a\e]777;notify;Tests;all 12 passed; 0 failed\a'");
    let list = wait_notifications(&server, 1);
    assert_eq!(list[0]["title"], "Tests");
    assert_eq!(list[0]["body"], "all 12 passed; 0 failed");
    assert_eq!(list[0]["source"], "osc777");

    pane_running(&server, r"printf '\e]99;i=7:d=0;Deploy\e\\\e]99;i=7:d=1:p=body;finished OK\e\\'");
    let list = wait_notifications(&server, 2);
    assert_eq!(list[1]["title"], "Deploy", "{list:?}");
    assert_eq!(list[1]["body"], "finished OK");
    assert_eq!(list[1]["source"], "osc99");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(notifications(&server).len(), 2, "progress must not notify");
}

/// Regression: the OSC scanner dropped `9;4` before the notification parser saw it, so a
/// program's progress never reached the Store.
#[test]
fn osc9_4_progress_shows_in_the_pane_and_clears() {
    let server = TestServer::start();
    let pane = pane_running(&server, r"printf '\e]9;4;1;42\a'");
    let progress = || server.pane(&pane).map(|p| p["progress"].clone()).unwrap_or_default();
    poll(Duration::from_secs(15), "progress 42 %", || {
        (progress() == json!({ "state": "normal", "percent": 42 })).then_some(())
    });
    server.berth_ok(&["send", &pane, "--enter", r"printf '\e]9;4;2;90\a'"]);
    poll(Duration::from_secs(15), "error progress", || {
        (progress() == json!({ "state": "error", "percent": 90 })).then_some(())
    });
    server.berth_ok(&["send", &pane, "--enter", r"printf '\e]9;4;3\a'"]);
    poll(Duration::from_secs(15), "indeterminate progress", || {
        (progress() == json!({ "state": "indeterminate", "percent": null })).then_some(())
    });
    server.berth_ok(&["send", &pane, "--enter", r"printf '\e]9;4;0\a'"]);
    poll(Duration::from_secs(15), "progress cleared", || progress().is_null().then_some(()));
    assert!(notifications(&server).is_empty(), "progress is not a notification");
}

/// A pane says since when it has been in its lifecycle (for "working for 2m"): the time
/// stays while the lifecycle does and moves on when it changes.
#[test]
fn lifecycle_since_follows_the_lifecycle() {
    let server = TestServer::start();
    let pane = pane_running(&server, r"printf '\e]133;C\a'");
    let state = || {
        let p = server.pane(&pane).unwrap_or_default();
        (p["lifecycle"].as_str().unwrap_or("").to_owned(), p["lifecycle_since"].as_u64())
    };
    let (_, working_since) = poll(Duration::from_secs(15), "working", || {
        let s = state();
        (s.0 == "working").then_some(s)
    });
    let working_since = working_since.expect("lifecycle_since is set");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(state(), ("working".to_owned(), Some(working_since)), "the time stays");
    server.berth_ok(&["send", &pane, "--enter", r"printf '\e]133;D;0\a'"]);
    let (_, idle_since) = poll(Duration::from_secs(15), "idle", || {
        let s = state();
        (s.0 == "idle").then_some(s)
    });
    assert!(idle_since.expect("lifecycle_since is set") >= working_since);
}

#[test]
fn a_flood_of_osc9_is_rate_limited_and_the_server_stays_responsive() {
    let server = TestServer::start();
    let pane = pane_running(
        &server,
        r"for i in $(seq 1 5000); do printf '\e]9;flood %d\a' $i; done; echo flood-$((2*3))-done",
    );
    let mut worst = Duration::ZERO;
    let deadline = Instant::now() + WAIT;
    loop {
        let start = Instant::now();
        server.call("server.info", json!({}));
        worst = worst.max(start.elapsed());
        if server.screen(&pane).contains("flood-6-done") {
            break;
        }
        assert!(Instant::now() < deadline, "the flood did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("slowest server.info during the flood: {worst:?}");
    // The summary of the suppressed ones comes once the flood has paused.
    let list = poll(WAIT, "the flood summary", || {
        let list = notifications(&server);
        list.iter()
            .any(|n| n["title"].as_str().unwrap_or("").contains("more notifications"))
            .then_some(list)
    });
    assert!(list.len() <= 12, "{} notifications stored from a flood", list.len());
}

#[test]
fn berth_notify_from_inside_a_pane_names_that_pane() {
    let server = TestServer::start();
    let pane = pane_running(
        &server,
        &format!("{} notify 'tests passed' 'all green'", berth_bin().display()),
    );
    let list = wait_notifications(&server, 1);
    assert_eq!(list[0]["title"], "tests passed");
    assert_eq!(list[0]["body"], "all green");
    assert_eq!(list[0]["source"], "cli");
    assert_eq!(list[0]["pane_id"], pane);
    // Control characters never reach the store.
    server.berth_ok(&["notify", "bad\x1b[31mtitle\x07", "x"]);
    let list = wait_notifications(&server, 2);
    assert_eq!(list[1]["title"], "bad[31mtitle");
    server.berth_ok(&["notifications", "--mark-read"]);
    assert!(notifications(&server).iter().all(|n| !n["read_at"].is_null()));
}

fn hook(server: &TestServer, pane: &str, agent: &str, payload: &str) -> std::process::Output {
    let mut child = server
        .command()
        .args(["hook", agent])
        .env("BERTH_PANE", pane)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn claude_hooks_set_session_lifecycle_and_attention() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let out =
        hook(&server, &pane, "claude", r#"{"session_id":"s-1","hook_event_name":"SessionStart"}"#);
    assert!(out.status.success());
    let entry = server.pane(&pane).unwrap();
    assert_eq!(entry["agent"]["kind"], "claude");
    assert_eq!(entry["agent"]["session_id"], "s-1");
    hook(
        &server,
        &pane,
        "claude",
        r#"{"session_id":"s-1","hook_event_name":"UserPromptSubmit","prompt":"go"}"#,
    );
    assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "working");
    hook(
        &server,
        &pane,
        "claude",
        r#"{"session_id":"s-1","hook_event_name":"Notification","message":"Allow Bash?"}"#,
    );
    let entry = server.pane(&pane).unwrap();
    assert_eq!(entry["lifecycle"], "blocked");
    assert_eq!(entry["attention"], "needs_input");
    assert_eq!(notifications(&server)[0]["source"], "hook:claude");
    // /clear starts a new session: the new id replaces the old.
    hook(
        &server,
        &pane,
        "claude",
        r#"{"session_id":"s-2","hook_event_name":"SessionStart","source":"clear"}"#,
    );
    assert_eq!(server.pane(&pane).unwrap()["agent"]["session_id"], "s-2");
    // Codex passes its JSON as an argument.
    let out = server
        .command()
        .args([
            "hook",
            "codex",
            r#"{"type":"agent-turn-complete","thread-id":"th-1","last-assistant-message":"done"}"#,
        ])
        .env("BERTH_PANE", &pane)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(server.pane(&pane).unwrap()["agent"]["session_id"], "th-1");
}

#[test]
fn berth_hook_never_fails_the_agent() {
    let server = TestServer::start();
    // Garbage, an unknown pane, no pane at all, and no server: all exit 0.
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    assert!(hook(&server, &pane, "claude", "not json").status.success());
    assert!(hook(&server, "pane_unknown", "claude", r#"{"hook_event_name":"Stop"}"#)
        .status
        .success());
    let out = server
        .command()
        .args(["hook", "claude"])
        .env_remove("BERTH_PANE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    let start = Instant::now();
    let out = server
        .command()
        .args(["hook", "claude", r#"{"hook_event_name":"Stop"}"#])
        .env("BERTH_PANE", &pane)
        .env("BERTH_SOCKET", server.root.path().join("nothing.sock"))
        .output()
        .unwrap();
    assert!(out.status.success());
    eprintln!("hook with no server returned in {:?}", start.elapsed());
    for agent in ["claude", "codex", "opencode", "cursor"] {
        let out = server.berth_ok(&["hook", agent, "--print-config"]);
        assert!(out.contains("berth hook") || out.contains(r#""berth", "hook""#), "{agent}: {out}");
    }
}

#[test]
fn unread_notifications_and_attention_survive_a_restart() {
    let mut server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["notify", "--pane", &pane, "remember me"]);
    assert_eq!(server.pane(&pane).unwrap()["attention"], "unread");
    server.restart();
    let list = notifications(&server);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["title"], "remember me");
    assert!(list[0]["read_at"].is_null());
    assert_eq!(server.pane(&pane).unwrap()["attention"], "unread");
}

#[test]
fn desktop_notifications_cross_a_private_bus_and_a_click_focuses_the_pane() {
    use berth_server::dbus::testing::PrivateBus;
    use berth_server::notifications::desktop::testing::FakeNotificationServer;
    let bus = PrivateBus::start().expect("start a private dbus-daemon");
    let fake =
        FakeNotificationServer::start(bus.address()).expect("start the fake notification server");
    let server = TestServer::prepare()
        .with_env("DBUS_SESSION_BUS_ADDRESS", bus.address())
        .with_env("BERTH_LOGIND", "0")
        .launch();
    let pane = pane_running(&server, r"printf '\e]9;build done\a'");
    let other = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let call = poll(WAIT, "a Notify call on the private bus", || {
        fake.calls().into_iter().find(|c| c.summary == "build done")
    });
    assert_eq!(call.app_name, "Berth");
    assert_eq!(server.pane(&pane).unwrap()["attention"], "unread");
    // OSC 777 and a two-chunk OSC 99 cross the bus with their titles and bodies too.
    server.berth_ok(&[
        "send",
        &other,
        "--enter",
        r"printf '\e]777;notify;Tests;12 passed\a\e]99;i=4:d=0;Deploy\e\\\e]99;i=4:p=body;went fine\e\\'",
    ]);
    for (summary, body) in [("Tests", "12 passed"), ("Deploy", "went fine")] {
        poll(WAIT, &format!("{summary:?} on the bus"), || {
            fake.calls().into_iter().find(|c| c.summary == summary && c.body == body)
        });
    }
    assert_eq!(server.list()["workspaces"][0]["tabs"].as_array().unwrap().len(), 2);
    // The newest tab (`other`) is focused; clicking the notification focuses its pane.
    assert_ne!(
        server.list()["workspaces"][0]["active_tab_id"],
        server.list()["workspaces"][0]["tabs"][0]["id"]
    );
    fake.invoke_action(call.id, "default").expect("emit ActionInvoked");
    poll(WAIT, "the click to focus the pane", || {
        let list = server.list();
        let ws = &list["workspaces"][0];
        (ws["active_tab_id"] == ws["tabs"][0]["id"] && ws["tabs"][0]["active_pane_id"] == pane)
            .then_some(())
    });
    assert_eq!(server.pane(&pane).unwrap()["attention"], "none");
}

/// Regression (issue #20, defect 1): after claude's `StopFailure` the pane stayed `working`
/// until claude's idle notification a minute later, and an interrupt sent through Berth (Esc,
/// C-c), for which claude fires no hook, left it `working` too.
#[test]
fn failed_and_interrupted_turns_end_without_waiting_for_another_hook() {
    let server = TestServer::start();
    // A stand-in for the agent that outlives C-c.
    let pane = server.berth_ok(&["new", "--", "bash", "--norc", "-c", "trap '' INT; exec cat"]);
    let prompt = r#"{"session_id":"s-1","hook_event_name":"UserPromptSubmit","prompt":"say hi"}"#;
    hook(&server, &pane, "claude", prompt);
    assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "working");
    hook(
        &server,
        &pane,
        "claude",
        r#"{"session_id":"s-1","hook_event_name":"StopFailure","error":"authentication_failed","error_details":"Invalid API key"}"#,
    );
    let entry = server.pane(&pane).unwrap();
    assert_eq!(entry["lifecycle"], "done");
    assert_eq!(entry["attention"], "error");
    let last = wait_notifications(&server, 1).pop().unwrap();
    assert_eq!(last["body"], "authentication_failed: Invalid API key");
    // Escape and C-c sent through Berth while working end the turn at once.
    for keys in [&["--keys", "Escape"][..], &["--keys", "C-c"][..]] {
        hook(&server, &pane, "claude", prompt);
        assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "working");
        let mut args = vec!["send", pane.as_str()];
        args.extend_from_slice(keys);
        server.berth_ok(&args);
        assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "idle", "after {keys:?}");
    }
    // Other input does not end a turn, and an interrupt of an idle pane changes nothing.
    hook(&server, &pane, "claude", prompt);
    server.berth_ok(&["send", &pane, "--keys", "Up"]);
    assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "working");
    // Codex's `Interrupt` hook (Escape pressed in codex itself) ends its turn too.
    hook(&server, &pane, "codex", r#"{"session_id":"th-1","hook_event_name":"UserPromptSubmit"}"#);
    assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "working");
    hook(&server, &pane, "codex", r#"{"session_id":"th-1","hook_event_name":"Interrupt"}"#);
    assert_eq!(server.pane(&pane).unwrap()["lifecycle"], "idle");
}

/// Regression (issue #20, defect 6): `--print-config claude` began with a `//` comment, so
/// saved as `settings.json` claude skipped the file. Standard output is exactly the file for
/// every agent; where it goes and what to do go to standard error.
#[test]
fn print_config_writes_exactly_the_file_on_stdout() {
    let server = TestServer::start();
    for agent in ["claude", "codex", "opencode", "cursor"] {
        let out = server.command().args(["hook", agent, "--print-config"]).output().unwrap();
        assert!(out.status.success(), "{agent}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        match agent {
            "claude" | "cursor" => {
                let value: Value = serde_json::from_str(&stdout)
                    .unwrap_or_else(|e| panic!("{agent}: not JSON ({e}):\n{stdout}"));
                assert!(value["hooks"].is_object(), "{agent}: {stdout}");
            }
            "codex" => {
                let value: toml::Table = stdout.parse().expect("codex's config.toml");
                assert!(value["hooks"]["SessionStart"].is_array(), "{stdout}");
                assert!(stderr.contains("trust"), "codex's note says to trust hooks: {stderr}");
            }
            _ => assert!(stdout.contains("\nexport const Berth = async"), "{stdout}"),
        }
        assert!(stdout.contains("berth hook"), "{agent}: {stdout}");
        assert!(stderr.starts_with("berth hook: ~/"), "{agent}: {stderr}");
        assert!(!stdout.contains("berth hook: "), "{agent}: {stdout}");
    }
}

/// Regression (issue #20, defect 5): the server wrote terminal replies first and OSC 99
/// answers after them, so a program asking OSC 99 `p=?` then DA1 (the usual feature probe)
/// read the DA1 answer first and took OSC 99 as missing. A real bash and printf probe here.
#[test]
fn replies_leave_in_the_order_of_the_queries() {
    let server = TestServer::start();
    // Raw mode so the replies are read, not echoed; `read` keeps what it got at its timeout.
    // Each reply becomes one letter: S (DSR), O (OSC 99), D (DA1), C (cursor position).
    let probe = server.home.join("probe.sh");
    std::fs::write(
        &probe,
        r#"stty raw -echo
printf '\e[5n\e]99;i=x:p=?;\e\\\e[c\e[6n'
IFS= read -r -t 1 -N 400 r
stty sane
sig=$(printf '%s' "$r" | sed -e 's/\x1b\[0n/S/' -e 's/\x1b\]99;[^\x1b]*\x1b\\/O/' \
    -e 's/\x1b\[?[0-9;]*c/D/' -e 's/\x1b\[[0-9;]*R/C/')
echo "probe:${sig}:end"
exec sleep 60
"#,
    )
    .unwrap();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc", probe.to_str().unwrap()]);
    server.wait_text(&pane, ":end", WAIT);
    let screen = server.screen(&pane);
    assert!(screen.contains("probe:SODC:end"), "replies out of order:\n{screen}");
}

/// An attached window reports what it shows (`window.view`) as the embedded one tells its
/// Store: a notification for the pane it watches is read at once; when the window's
/// connection ends, the pane is watched no more.
#[test]
fn an_attached_windows_view_keeps_a_watched_panes_notifications_read() {
    let server = TestServer::start();
    let pane = pane_running(&server, "true");
    let mut window = berth_server::client::Client::connect(&server.socket).expect("connect");
    let view = serde_json::json!({
        "visible": [pane], "focused_pane_id": pane, "window_focused": true,
    });
    window.call("window.view", view).expect("window.view");
    // A bad id is refused with a clear error; the connection and the server live on.
    let bad =
        serde_json::json!({ "visible": ["nope"], "focused_pane_id": null, "window_focused": true });
    let err = window.call("window.view", bad).expect_err("a bad pane id");
    assert!(format!("{err}").contains("nope"), "{err}");
    server.berth_ok(&["notify", "--pane", &pane, "watched"]);
    let list = wait_notifications(&server, 1);
    assert!(!list[0]["read_at"].is_null(), "a watched pane's notification is unread: {list:?}");
    assert_eq!(server.pane(&pane).unwrap()["attention"], "none");

    drop(window);
    // The server sees the connection end a moment later: notify until one stays unread.
    let mut count = 0;
    poll(WAIT, "an unread notification once the window left", || {
        count += 1;
        let title = format!("after-{count}");
        server.berth_ok(&["notify", "--pane", &pane, &title]);
        let list = notifications(&server);
        let sent = list.iter().find(|n| n["title"] == title.as_str())?;
        std::thread::sleep(Duration::from_millis(100));
        sent["read_at"].is_null().then_some(())
    });
    assert_eq!(server.pane(&pane).unwrap()["attention"], "unread");
}
