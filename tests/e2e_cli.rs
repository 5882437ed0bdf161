//! End to end through the CLI and the socket: real server, real bash in real PTYs.

mod support;

use std::time::Duration;

use support::*;

const WAIT: Duration = Duration::from_secs(15);

fn panes_of_first_tab(server: &TestServer) -> Vec<Value> {
    server.list()["workspaces"][0]["tabs"][0]["panes"].as_array().cloned().unwrap_or_default()
}

#[test]
fn typed_command_runs_and_its_output_reads_back() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    assert!(pane.starts_with("pane_"), "{pane:?}");
    // The shell expands the sum, so the typed command line itself cannot match.
    server.berth_ok(&["send", &pane, "--enter", "echo hi-$((40+2))"]);
    let ok = server.berth(&["wait", &pane, "--for", "hi-42", "--timeout", "10"]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(server.berth_ok(&["read", &pane]).contains("hi-42"));

    // `wait` gives up with exit 3 (timeout) on text that never comes.
    let missing = server.berth(&["wait", &pane, "--for", "never-printed", "--timeout", "0.3"]);
    assert_eq!(missing.status.code(), Some(3));
}

#[test]
fn pane_environment_names_the_server_and_pane() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        "echo \"<$TERM|$COLORTERM|$BERTH_PANE|${BERTH_SOCKET##*/}>\"",
    ]);
    server.wait_text(&pane, &format!("<xterm-256color|truecolor|{pane}|berth.sock>"), WAIT);
    let ws = server.list()["workspaces"][0]["id"].as_str().unwrap().to_owned();
    server.berth_ok(&["send", &pane, "--enter", "echo \"ws=$BERTH_WORKSPACE.\""]);
    server.wait_text(&pane, &format!("ws={ws}."), WAIT);
}

#[test]
fn two_down_splits_give_equal_thirds() {
    let server = TestServer::start();
    let a = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let b = server.berth_ok(&["split", &a, "--down", "--", "bash", "--norc"]);
    let c = server.berth_ok(&["split", &b, "--down", "--", "bash", "--norc"]);
    let list: Value = serde_json::from_str(&server.berth_ok(&["ls", "--json"])).unwrap();
    let tab = &list["workspaces"][0]["tabs"][0];
    let layout = &tab["layout"]["split"];
    assert_eq!(layout["dir"], "down");
    assert!((layout["ratio"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9, "{layout}");
    assert_eq!(layout["first"]["pane"], a);
    let inner = &layout["second"]["split"];
    assert!((inner["ratio"].as_f64().unwrap() - 0.5).abs() < 1e-9, "{inner}");
    assert_eq!(inner["first"]["pane"], b);
    assert_eq!(inner["second"]["pane"], c);
    // 24 rows less two divider rows share out as 7/7/8 (or 8/7/7): within one row of each other.
    let rows: Vec<i64> = tab["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["size"]["rows"].as_i64().unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows.iter().sum::<i64>(), 22, "{rows:?}");
    assert!(rows.iter().max().unwrap() - rows.iter().min().unwrap() <= 1, "{rows:?}");
    // The shell in the pane sees its PTY size.
    server.berth_ok(&["send", &c, "--enter", "echo size=$(stty size)."]);
    server.wait_text(&c, &format!("size={} 80.", rows[2]), WAIT);
}

#[test]
fn ratio_layout_and_close_through_the_socket() {
    let server = TestServer::start();
    let a = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let b = server.berth_ok(&["split", &a, "--right", "--", "bash", "--norc"]);
    let tab = server.list()["workspaces"][0]["tabs"][0]["id"].as_str().unwrap().to_owned();
    server.call("tab.resize", json!({ "tab_id": tab, "cols": 101, "rows": 30 }));

    // Move the divider; out-of-range ratios are clamped.
    let r = server.call("tab.set_ratio", json!({ "tab_id": tab, "path": [], "ratio": 0.25 }));
    assert_eq!(r["ratio"], 0.25);
    let widths: Vec<i64> =
        panes_of_first_tab(&server).iter().map(|p| p["size"]["cols"].as_i64().unwrap()).collect();
    assert_eq!(widths, [25, 75]);
    let r = server.call("tab.set_ratio", json!({ "tab_id": tab, "path": [], "ratio": 7.0 }));
    assert_eq!(r["ratio"], 0.95);
    let err = server
        .client()
        .call("tab.set_ratio", json!({ "tab_id": tab, "path": ["first"], "ratio": 0.5 }))
        .unwrap_err();
    assert_eq!(err.code(), Some("INVALID_LAYOUT"));

    // A whole layout from a client: swapped panes and a down split are fine.
    let swapped = json!({ "split": { "dir": "down", "ratio": 0.5, "first": { "pane": b }, "second": { "pane": a } } });
    server.call("tab.set_layout", json!({ "tab_id": tab, "layout": swapped }));
    assert_eq!(server.list()["workspaces"][0]["tabs"][0]["layout"], swapped);
    // Missing a pane, naming a foreign one, or naming one twice is refused and changes nothing.
    for bad in [
        json!({ "pane": a }),
        json!({ "split": { "dir": "down", "ratio": 0.5, "first": { "pane": a }, "second": { "pane": a } } }),
        json!({ "split": { "dir": "down", "ratio": 0.5, "first": { "pane": a }, "second": { "pane": "pane_someoneelse" } } }),
    ] {
        let err = server
            .client()
            .call("tab.set_layout", json!({ "tab_id": tab, "layout": bad }))
            .unwrap_err();
        assert_eq!(err.code(), Some("INVALID_LAYOUT"), "{bad}");
    }
    assert_eq!(server.list()["workspaces"][0]["tabs"][0]["layout"], swapped);

    // Closing one pane collapses the split; the other takes the whole tab.
    server.berth_ok(&["close", &b]);
    let tab_now = &server.list()["workspaces"][0]["tabs"][0];
    assert_eq!(tab_now["layout"], json!({ "pane": a }));
    assert_eq!(tab_now["panes"][0]["size"], json!({ "cols": 101, "rows": 30 }));
    // Closing the last pane closes the tab, and the workspace with its last tab.
    server.berth_ok(&["close", &a]);
    assert_eq!(server.list()["workspaces"], json!([]));
}

#[test]
fn tabs_move_within_their_workspace() {
    let server = TestServer::start();
    server.berth_ok(&["new", "--", "bash", "--norc"]);
    let ws = server.list()["workspaces"][0]["id"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        server.call("tab.create", json!({ "workspace_id": ws, "argv": ["bash", "--norc"] }));
    }
    let order = || -> Vec<String> {
        server.list()["workspaces"][0]["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let before = order();
    assert_eq!(before.len(), 3);
    let r = server.call("tab.move", json!({ "tab_id": before[0], "index": 2 }));
    assert_eq!(r["index"], 2);
    assert_eq!(order(), [before[1].clone(), before[2].clone(), before[0].clone()]);
    // An index past the end means the last place.
    let r = server.call("tab.move", json!({ "tab_id": before[1], "index": 99 }));
    assert_eq!(r["index"], 2);
    assert_eq!(order(), [before[2].clone(), before[0].clone(), before[1].clone()]);
    let err = server
        .client()
        .call("tab.move", json!({ "tab_id": "tab_nothere", "index": 0 }))
        .unwrap_err();
    assert_eq!(err.code(), Some("NO_SUCH_TAB"));
    let err =
        server.client().call("tab.move", json!({ "tab_id": before[0], "index": -1 })).unwrap_err();
    assert_eq!(err.code(), Some("BAD_REQUEST"));
    assert_eq!(order(), [before[2].clone(), before[0].clone(), before[1].clone()]);
}

#[test]
fn exit_code_is_recorded_and_the_pane_is_kept() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "sh", "-c", "echo bye; exit 3"]);
    let entry =
        poll(WAIT, "the pane to exit", || server.pane(&pane).filter(|p| p["state"] == "EXITED"));
    assert_eq!(entry["exit_code"], 3);
    assert_eq!(entry["lifecycle"], "exited");
    assert!(server.screen(&pane).contains("bye"));
    let err =
        server.client().call("pane.send", json!({ "pane_id": pane, "text": "x" })).unwrap_err();
    assert_eq!(err.code(), Some("PANE_NOT_LIVE"));
    assert_eq!(entry["exit_signal"], Value::Null);
    // A program killed by a signal: the signal is named (the code alone says 1).
    let killed = server.berth_ok(&["new", "--", "sh", "-c", "echo bye; kill -TERM $$"]);
    let entry = poll(WAIT, "the killed pane's exit", || {
        server.pane(&killed).filter(|p| p["state"] == "EXITED")
    });
    assert_eq!(entry["exit_signal"], "SIGTERM", "{entry}");
}

#[test]
fn named_keys_reach_the_program() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["send", &pane, "--enter", "sleep 300; echo after-sleep"]);
    poll(WAIT, "sleep to start", || (!server.pids_matching("sleep 300").is_empty()).then_some(()));
    // C-c interrupts the sleep (and the `; echo` with it); the shell lives on.
    let lifecycle = |server: &TestServer| server.pane(&pane).unwrap()["lifecycle"].clone();
    assert_eq!(lifecycle(&server), "working", "a foreground job means working");
    // The job is named, so the window's header can say what runs.
    assert_eq!(server.pane(&pane).unwrap()["job"], "sleep 300");
    server.berth_ok(&["send", &pane, "--keys", "C-c"]);
    poll(WAIT, "back at the prompt", || (lifecycle(&server) == "idle").then_some(()));
    server.berth_ok(&["send", &pane, "--enter", "echo alive-$((6*7))"]);
    server.wait_text(&pane, "alive-42", WAIT);
    assert!(!server.screen(&pane).contains("\nafter-sleep"));
    // Up recalls the last command from bash's history.
    server.berth_ok(&["send", &pane, "--keys", "Up", "Enter"]);
    poll(WAIT, "the recalled command to run twice", || {
        (server.screen(&pane).matches("alive-42").count() >= 2).then_some(())
    });
    let err = server.berth(&["send", &pane, "--keys", "NoSuchKey"]);
    assert_eq!(err.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&err.stderr).contains("NoSuchKey"));
}

/// `berth send --keys S-Enter` is refused for a legacy program (no encoding) and reaches a
/// program that pushed kitty keyboard flag 1 as `CSI 13 ; 2 u`.
#[test]
fn named_keys_follow_the_kitty_keyboard_flags() {
    // The reader (coreutils only): raw mode, flag 1 pushed, then the next 7 bytes in hex.
    const READER: &str = "stty raw -echo; printf '\\033[>1u'; printf 'kitty-ready\\r\\n'; \
        got=$(timeout --foreground 60 head -c 7 | od -An -tx1 | tr -d ' \\n'); printf '\\033[<u'; \
        stty sane; echo \"kitty-got $got\"; exec sleep 600";
    let server = TestServer::start();
    let legacy = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let err = server.berth(&["send", legacy.trim(), "--keys", "S-Enter"]);
    assert_eq!(err.status.code(), Some(1), "S-Enter has no legacy encoding");
    let pane = server.berth_ok(&["new", "--", "sh", "-c", READER]);
    let pane = pane.trim();
    server.wait_text(pane, "kitty-ready", WAIT);
    server.berth_ok(&["send", pane, "--keys", "S-Enter"]);
    // ESC [ 1 3 ; 2 u
    server.wait_text(pane, "kitty-got 1b5b31333b3275", WAIT);
}

#[test]
fn read_since_returns_only_new_lines() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["send", &pane, "--enter", "for i in $(seq 1 60); do echo line-$i; done"]);
    server.wait_text(&pane, "line-60", WAIT);
    let all = server.call("pane.read", json!({ "pane_id": pane, "last": 100 }));
    let next = all["next_seq"].as_u64().unwrap();
    server.berth_ok(&["send", &pane, "--enter", "echo fresh-$((1+1))"]);
    server.wait_text(&pane, "fresh-2", WAIT);
    let out = server.berth_ok(&["read", &pane, "--since", &next.to_string()]);
    assert!(out.contains("fresh-2"), "{out}");
    assert!(!out.contains("line-59"), "{out}");
    // Lines that scrolled off the 24-row screen are still readable with --lines.
    let hist = server.berth_ok(&["read", &pane, "--lines", "80"]);
    assert!(hist.contains("line-1\n"), "{hist}");
}

#[test]
fn twenty_concurrent_clients_are_all_served() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    std::thread::scope(|scope| {
        for i in 0..20 {
            let (server, pane) = (&server, &pane);
            scope.spawn(move || {
                let mut client = server.client();
                for j in 0..10 {
                    client.call("workspace.list", json!({})).expect("list");
                    client.call("pane.read", json!({ "pane_id": pane })).expect("read");
                    client
                        .call(
                            "pane.send",
                            json!({ "pane_id": pane, "text": format!("# {i}-{j}\r") }),
                        )
                        .expect("send");
                }
                let mine =
                    client.call("pane.spawn", json!({ "argv": ["sleep", "30"] })).expect("spawn");
                client.call("pane.close", json!({ "pane_id": mine["pane_id"] })).expect("close");
            });
        }
    });
    let list = server.list();
    assert_eq!(list["workspaces"][0]["tabs"].as_array().unwrap().len(), 1, "{list}");
}

#[test]
fn events_report_changes_and_output() {
    let server = TestServer::start();
    let mut sub = server.client();
    sub.subscribe().unwrap();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["send", &pane, "--enter", "echo evt"]);
    let mut seen = Vec::new();
    poll(WAIT, "pane.created and pane.output events", || {
        let event = sub.next_event(Some(Duration::from_secs(5))).ok()?;
        seen.push(event["type"].as_str().unwrap_or("").to_owned());
        (seen.iter().any(|t| t == "pane.created") && seen.iter().any(|t| t == "pane.output"))
            .then_some(())
    });
    server.berth_ok(&["close", &pane]);
    poll(WAIT, "pane.closed", || {
        let event = sub.next_event(Some(Duration::from_secs(5))).ok()?;
        (event["type"] == "pane.closed" && event["pane_id"] == pane).then_some(())
    });
}

#[test]
fn title_and_cwd_follow_the_program() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        "printf '\\033]2;my-title\\007\\033]7;file://host/tmp/some%%20dir\\007'",
    ]);
    let entry =
        poll(WAIT, "title and cwd", || server.pane(&pane).filter(|p| p["title"] == "my-title"));
    assert_eq!(entry["cwd"], "/tmp/some dir");
}

#[test]
fn bad_cli_use_is_a_clear_error() {
    let server = TestServer::start();
    let out = server.berth(&["read", "pane_doesnotexist"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no pane"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = server.berth(&["close", "../etc"]);
    assert_eq!(out.status.code(), Some(1));
    let out = server.berth(&["split", "pane_x"]);
    assert_eq!(out.status.code(), Some(1));
    let out = server.berth(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let out = server.berth(&["new", "--cwd", "/nonexistent/dir", "--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
    // Nothing was created by the failed calls.
    assert_eq!(server.list()["workspaces"], json!([]));
}

/// `berth ls --json` decodes the server's answer into the typed view and encodes it again:
/// what it prints must be exactly the wire's JSON for the same state.
#[test]
fn ls_json_prints_exactly_what_the_wire_carries() {
    let server = TestServer::start();
    let a = server.berth_ok(&["new", "--title", "first ✳", "--", "bash", "--norc"]);
    let b = server.berth_ok(&["split", &a, "--down", "--", "bash", "--norc"]);
    server.berth_ok(&["split", &b, "--right", "--", "cat"]);
    server.berth_ok(&["new", "--workspace", "api", "--", "sleep", "100"]);
    server.berth_ok(&["notify", "--pane", &a, "hello", "body"]);
    // Compare the whole text, once the state holds still across the reads (a shell that is
    // still starting changes its lifecycle).
    let (printed, raw) = poll(WAIT, "a still state", || {
        let before = server.call("workspace.list", json!({}));
        let printed = server.berth_ok(&["ls", "--json"]);
        let after = server.call("workspace.list", json!({}));
        (before == after).then_some((printed, after))
    });
    assert_eq!(printed, serde_json::to_string_pretty(&raw).unwrap());
    let raw = server.call("notifications.list", json!({}));
    let printed = server.berth_ok(&["notifications", "--json"]);
    assert_eq!(printed, serde_json::to_string_pretty(&raw).unwrap());
}

/// `berth search` (`pane.search`) finds a word printed far up in the scrollback by line
/// number, which `berth read --since` then prints from; bad requests get clear errors over the
/// real socket and the server stays up to answer the next one.
#[test]
fn search_finds_scrollback_lines_by_number_and_refuses_bad_requests() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        "echo far-$((6*7))-needle; seq 1 300 | sed s/^/filler-/; echo search-done",
    ]);
    server.wait_text(&pane, "search-done", WAIT);
    let found = server.berth_ok(&["search", &pane, "far-42-needle"]);
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(lines.len(), 1, "{found}");
    let (start, end) = lines[0].split_once('-').expect("FIRST-LAST");
    let (seq, col) = start.split_once(':').expect("SEQ:COL");
    assert_eq!((col, end), ("0", &*format!("{seq}:12")), "{found}");
    let from = server.berth_ok(&["read", &pane, "--since", seq]);
    assert_eq!(from.lines().next(), Some("far-42-needle"), "{from}");
    // Case is smart, and a query that is no regex is searched as text.
    let upper = server.berth(&["search", &pane, "FILLER-29[0-9]", "--json"]);
    let json: Value = serde_json::from_slice(&upper.stdout).expect("JSON");
    assert_eq!(json["count"], 0, "upper case matches case: {json}");
    let json: Value =
        serde_json::from_str(&server.berth_ok(&["search", &pane, "filler-29[0-9]", "--json"]))
            .unwrap();
    assert_eq!(json["count"], 10, "{json}");
    let missing = server.berth(&["search", &pane, "never-printed-anywhere"]);
    assert_eq!(missing.status.code(), Some(1), "nothing found exits 1");

    // (params, what the error says)
    let long = "x".repeat(2000);
    let cases = [
        (json!({ "pane_id": pane, "query": "" }), "query is empty"),
        (json!({ "pane_id": pane, "query": long }), "at most 1024"),
        (json!({ "pane_id": pane, "query": "a", "covered": 500 }), "covered must be at most"),
        (json!({ "pane_id": pane, "query": "a", "offset": -1 }), "bad params"),
        (json!({ "pane_id": pane, "query": "a", "nope": 1 }), "unknown field"),
        (json!({ "pane_id": "pane_missing", "query": "a" }), "no pane"),
        (json!({ "pane_id": "tab_x", "query": "a" }), "invalid id"),
        (json!({ "query": "a" }), "pane_id"),
    ];
    for (params, want) in cases {
        let err = server.client().call("pane.search", params.clone()).expect_err("refused");
        assert!(err.to_string().contains(want), "{params}: {err}");
    }
    // A huge offset is clamped to the history there is, and the server still answers.
    let top = server.call(
        "pane.search",
        json!({ "pane_id": pane, "query": "filler", "offset": 4_000_000_000u64 }),
    );
    assert_eq!(top["view_top"], 0, "the view at the oldest line: {top}");
    assert!(top["offset"].as_u64().unwrap() > 250, "{top}");
    assert_eq!(server.berth_ok(&["search", &pane, "far-42-needle"]), found);
}
