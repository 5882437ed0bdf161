//! One window, many servers (issue 32): a window with its embedded server links to a second
//! `berth server` on another socket (`servers = [...]` in config.toml, and `berth attach
//! --add/--remove`). Its panes are shown, typed into and answered from the window; the second
//! server is killed and started again while the window stays responsive, and its panes come
//! back.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{panes_of, poll, Killed, TestServer};
use crate::{ocr, run_tool, start_xvfb, words, Image, WaitingHook, WAIT};

/// The window's servers as `berth attach --list` prints them: name → status.
fn servers(local: &TestServer) -> Vec<(String, String)> {
    let out = local.berth(&["attach", "--list"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut cols = l.split('\t');
            Some((cols.next()?.to_owned(), cols.next()?.to_owned()))
        })
        .collect()
}

/// The status of the server named `name`, if the window has it.
fn status_of(local: &TestServer, name: &str) -> Option<String> {
    servers(local).into_iter().find(|(n, _)| n == name).map(|(_, s)| s)
}

/// The focused pane of a server's shown tab.
fn focused(server: &TestServer) -> Option<String> {
    let list = server.list();
    let ws =
        list["workspaces"].as_array()?.iter().find(|w| w["id"] == list["active_workspace_id"])?;
    let tab = ws["tabs"].as_array()?.iter().find(|t| t["id"] == ws["active_tab_id"])?;
    tab["active_pane_id"].as_str().map(str::to_owned)
}

/// The tab that holds `pane` on `server`.
fn tab_of(server: &TestServer, pane: &str) -> String {
    let list = server.list();
    for ws in list["workspaces"].as_array().into_iter().flatten() {
        for tab in ws["tabs"].as_array().into_iter().flatten() {
            if tab["panes"].as_array().into_iter().flatten().any(|p| p["id"] == pane) {
                return tab["id"].as_str().unwrap_or_default().to_owned();
            }
        }
    }
    panic!("no tab holds {pane}: {list}")
}

/// What the window shows of `tab` (a tab of any of its servers), read by OCR.
fn shown_text(local: &TestServer, tab: Option<&str>, name: &str) -> String {
    let path = local.root.path().join(format!("{name}.png"));
    let path_text = path.to_str().expect("temp paths are UTF-8");
    let mut args = vec!["screenshot", "--png", path_text];
    if let Some(tab) = tab {
        args.extend(["--tab", tab]);
    }
    let out = local.berth(&args);
    if !out.status.success() {
        return String::new();
    }
    let image = Image::read(&path);
    words(&ocr(&image, local.root.path(), name, u32::MAX, "11"))
}

/// Polls the window's screen of `tab` until OCR reads `text` there.
fn wait_shown(local: &TestServer, tab: Option<&str>, text: &str, what: &str) {
    let deadline = Instant::now() + WAIT;
    let mut seen = String::new();
    while Instant::now() < deadline {
        seen = shown_text(local, tab, "servers");
        if seen.contains(text) {
            return;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!("{what}: OCR never read {text:?}; it read {seen:?}");
}

/// Starts the window of `local` (its embedded server) on `display` and waits for its X
/// window and a live pane.
fn open_window(
    local: &TestServer,
    display: &str,
    config: &Path,
) -> Result<(Killed, String), String> {
    let log = local.root.path().join("window.log");
    let out = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = local
        .command()
        .env("DISPLAY", display)
        .env("BERTH_CONFIG", config)
        .env("BERTH_LOG", "info,berth::window=debug")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WGPU_BACKEND")
        .current_dir(&local.home)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start berth: {e}"))?;
    let mut window = Killed { name: "berth (many servers)", child };
    let pid = window.pid().to_string();
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(Some(status)) = window.child.try_wait() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!("berth exited early with {status}; its log:\n{text}"));
        }
        let found = run_tool(display, "xdotool", &["search", "--pid", &pid, "--name", "Berth"])
            .ok()
            .and_then(|out| out.lines().last().map(str::to_owned));
        let live = berth_server::client::Client::connect(&local.socket).is_ok()
            && panes_of(&local.list()).iter().any(|p| p["state"] == "LIVE");
        if let (Some(id), true) = (found, live) {
            return Ok((window, id));
        }
        if Instant::now() > deadline {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!("no window within 30 s; its log:\n{text}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The window of the local server shows, types into and answers the panes of a second server;
/// the second is killed while typing into the local pane still echoes, and comes back.
pub(crate) fn one_window_shows_and_answers_a_second_server() -> Result<(), String> {
    let local = TestServer::prepare();
    let mut second = TestServer::start();
    let (_xvfb, display) = start_xvfb(local.root.path())?;
    let config = local.root.path().join("config.toml");
    std::fs::write(&config, format!("servers = [\"{}\"]\n", second.socket.display()))
        .map_err(|e| e.to_string())?;
    let (window, window_id) = open_window(&local, &display, &config)?;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        steps(&local, &mut second, &display, &window_id)
    }));
    drop(window);
    if result.is_err() {
        let log = std::fs::read_to_string(local.root.path().join("window.log")).unwrap_or_default();
        eprintln!("e2e_window: the many-server window's log:\n{log}");
    }
    result.map_err(|_| "a step failed (see above)".to_owned())
}

fn steps(local: &TestServer, second: &mut TestServer, display: &str, window_id: &str) {
    let xdotool =
        |args: &[&str]| run_tool(display, "xdotool", args).unwrap_or_else(|e| panic!("{e}"));
    let home_pane = panes_of(&local.list())[0]["id"].as_str().expect("a pane").to_owned();
    // A second local pane, so that focusing the first later is a move of focus.
    local.berth_ok(&["new", "--", "bash", "--norc"]);
    // The second server's name is its socket's directory (…/berth/berth.sock → "berth").
    let name = "berth";
    poll(WAIT, "the second server linked", || {
        (status_of(local, name).as_deref() == Some("connected")).then_some(())
    });
    let listed = servers(local);
    assert_eq!(listed.first().map(|(n, _)| n.as_str()), Some("local"), "{listed:?}");
    let bravo = second.berth_ok(&["new", "--workspace", "bravo", "--", "bash", "--norc"]);
    second.berth_ok(&["send", &bravo, "--enter", "echo bravo-$((40+2))"]);
    second.wait_text(&bravo, "bravo-42", WAIT);
    let bravo_tab = tab_of(second, &bravo);

    // A question on the second server, answered from the window's keys: the jump to the
    // pending decision goes to the other server's pane, the allow chord answers there.
    let hook = WaitingHook::on(second, &bravo, "echo asked-on-the-second-server", &[]);
    poll(WAIT, "the decision pending on the second server", || {
        second.pane(&bravo).filter(|p| !p["pending_decision"].is_null())
    });
    xdotool(&["windowfocus", "--sync", window_id]);
    xdotool(&["key", "ctrl+shift+d"]);
    poll(WAIT, "the jump focusing the second server's pane", || {
        (focused(second).as_deref() == Some(bravo.as_str())).then_some(())
    });
    xdotool(&["key", "ctrl+shift+y"]);
    let (status, out) = hook.finish();
    assert!(status.success(), "the hook exited with {status}: {out}");
    let answered: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(answered["hookSpecificOutput"]["decision"]["behavior"], "allow", "{out}");
    // Keys typed now reach the second server's pane.
    xdotool(&["type", "--delay", "20", "echo typed-$((6*7))-there"]);
    xdotool(&["key", "Return"]);
    second.wait_text(&bravo, "typed-42-there", WAIT);
    // The window draws the second server's pane (its frames come only for shown panes).
    wait_shown(local, None, "typed-42-there", "the second server's pane in the window");
    // Its tail is on disk before the kill (what a restart restores is not under test here).
    second.berth_ok(&["save"]);

    // The second server goes away: its group says so, the local pane still takes keys.
    second.kill();
    poll(WAIT, "the lost link noticed", || {
        status_of(local, name).filter(|s| s != "connected" && !s.is_empty())
    });
    // `berth focus` on the local server brings the window back to it.
    local.berth_ok(&["focus", &home_pane]);
    local.berth_ok(&["send", &home_pane, "--enter", "echo marker-$((3*3))"]);
    wait_shown(local, None, "marker-9", "the window back on the local pane");
    let typed = Instant::now();
    xdotool(&["type", "--delay", "20", "echo outage-$((1+1))"]);
    xdotool(&["key", "Return"]);
    local.wait_text(&home_pane, "outage-2", WAIT);
    println!(
        "servers: typing into the local pane echoed {} ms after the keys while the second \
         server was down ({:?})",
        typed.elapsed().as_millis(),
        status_of(local, name)
    );
    // Back: it connects again with backoff, and its pane (restored) is in the window again.
    second.start_again();
    poll(Duration::from_secs(60), "the second server linked again", || {
        (status_of(local, name).as_deref() == Some("connected")).then_some(())
    });
    second.pane(&bravo).expect("the pane restored on the second server");
    // `berth focus` there brings the window to it; its restored tail is drawn.
    second.berth_ok(&["focus", &bravo]);
    wait_shown(local, Some(&bravo_tab), "typed-42-there", "the second server's pane back");

    // Removed: its workspaces leave the window; an unknown name is an error.
    let out = local.berth(&["attach", "--remove", "no-such-server"]);
    assert!(!out.status.success(), "removing an unknown server succeeded");
    local.berth_ok(&["attach", "--remove", name]);
    assert_eq!(status_of(local, name), None, "{:?}", servers(local));
    // And added again from the CLI.
    let socket = second.socket.display().to_string();
    local.berth_ok(&["attach", "--add", &socket]);
    poll(WAIT, "the second server added again", || {
        (status_of(local, name).as_deref() == Some("connected")).then_some(())
    });
    let out = local.berth(&["attach", "--add", &socket]);
    assert!(!out.status.success(), "adding the same server twice succeeded");
}
