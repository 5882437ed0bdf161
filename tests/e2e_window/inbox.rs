//! The inbox in a real window (issue 29, item 4): a notification raised in a pane that is not
//! shown (`printf '\e]9;build finished\a'`) shows as a toast when no desktop notification
//! service answers, and in the inbox (Ctrl+Shift+I), both read by OCR; a click on its row
//! jumps to the pane; a permission request of the stub agent (`support/stub_agent.py`, which
//! asks through the real `berth hook claude`) is answered with the inbox's Allow button and
//! the answer reaches the agent's hook. And (item 6) workspaces made, renamed and closed with
//! the window's keys, the close asked first because the workspace has a live pane.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{self, poll};
use crate::{ocr, ocr_box_by, words, Image, World, CELL_PX_HIGH, WAIT};

/// The suite's cell width in pixels (15 px font).
const CELL_PX_WIDE: u32 = 9;

/// The inbox's rectangle in window cells for a window of `cols × rows` cells, as
/// `window/inbox.rs` places it: (col, row, cols, rows).
fn inbox_rect(cols: u32, rows: u32) -> (u32, u32, u32, u32) {
    let width = cols.saturating_sub(4).min(96).max(cols.min(20));
    let height = rows.saturating_sub(3).max(rows.min(4));
    ((cols - width) / 2, rows.min(2).min(rows - height), width, height)
}

/// The inbox's rows of text (each with its top pixel row), read one by one by OCR.
fn inbox_rows(image: &Image, dir: &Path, name: &str) -> Vec<(u32, String)> {
    let (cols, rows) = (image.width / CELL_PX_WIDE, image.height / CELL_PX_HIGH);
    let (col, row, width, height) = inbox_rect(cols, rows);
    let (left, right) = (col * CELL_PX_WIDE, (col + width) * CELL_PX_WIDE - 1);
    (row..row + height.min(14))
        .map(|r| {
            let (top, bottom) = (r * CELL_PX_HIGH, r * CELL_PX_HIGH + CELL_PX_HIGH - 1);
            (top, ocr_box_by(image, dir, name, (left, top, right, bottom), true).to_lowercase())
        })
        .collect()
}

/// The focused pane of the shown tab of `server`.
fn active_of(server: &crate::support::TestServer) -> String {
    let list = server.list();
    let ws_id = list["active_workspace_id"].clone();
    let ws = list["workspaces"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["id"] == ws_id).cloned())
        .unwrap_or_else(|| list["workspaces"][0].clone());
    let tab = ws["tabs"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["id"] == ws["active_tab_id"]).cloned())
        .unwrap_or_default();
    tab["active_pane_id"].as_str().unwrap_or_default().to_owned()
}

/// The stub agent in a pane of its own workspace, its hooks wired; its pane and its log.
fn start_stub(w: &World, workspace: &str, ask: &str) -> (String, PathBuf) {
    let log = w.server.root.path().join("inbox-stub.log");
    let (script, bin) = (support::task::stub_script(), support::berth_bin());
    let (script, bin, log_arg) =
        (script.display().to_string(), bin.display().to_string(), log.display().to_string());
    let args = [
        "new",
        "--workspace",
        workspace,
        "--",
        support::task::python(),
        &script,
        "--berth",
        &bin,
        "--log",
        &log_arg,
        "--ask",
        ask,
    ];
    let pane = w.server.berth_ok(&args).trim().to_owned();
    w.server.wait_text(&pane, "stub ready", WAIT);
    poll(WAIT, "the stub's hooks to be wired", || {
        let info = w.server.pane(&pane)?;
        (info["turn"]["hooks_wired"] == true && info["agent"]["kind"] == "claude").then_some(())
    });
    (pane, log)
}

/// The stub's recorded events named `name`.
fn stub_events(log: &Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == name)
        .collect()
}

/// Issue 29, item 4, end to end. The window is started again with a session bus address
/// where nothing answers, so no desktop notification service shows anything.
pub(crate) fn inbox_lists_jumps_answers_and_toasts(w: &mut World) {
    let no_bus = format!("unix:path={}", w.server.root.path().join("no-bus").display());
    w.window_env = vec![("DBUS_SESSION_BUS_ADDRESS".into(), no_bus)];
    if let Some(mut window) = w.window.take() {
        window.stop(Duration::from_secs(20)).expect("the window stops");
    }
    w.launch("RESTORED").expect("the window starts without a notification service");
    let a = w.server.berth_ok(&["new", "--workspace", "inboxhome", "--", "bash", "--norc"]);
    let b = w.server.berth_ok(&["new", "--workspace", "inboxbuild", "--", "bash", "--norc"]);
    let (a, b) = (a.trim().to_owned(), b.trim().to_owned());
    w.server.berth_ok(&["focus", &a]);
    poll(WAIT, "pane a shown", || (w.active_pane() == a).then_some(()));
    w.xdotool(&["windowfocus", "--sync", &w.window_id]);
    let dir = w.server.root.path().to_path_buf();

    // The notification, in a pane of a workspace that is not shown.
    w.server.berth_ok(&["send", &b, "--enter", r"printf '\e]9;build finished\a'"]);
    poll(WAIT, "pane b unread", || (w.server.pane(&b)?["attention"] == "unread").then_some(()));
    // The toast, at the bottom right: read by OCR.
    // It shows for 6 s: bursts of frames are grabbed first and read afterwards, so an OCR
    // slower than that on a loaded machine cannot let it pass unseen.
    let toast = poll(WAIT, "the toast with the notification's words", || {
        let frames = crate::support::image::distinct_frames(
            || w.screenshot("inbox-toast.png"),
            Duration::from_secs(8),
        );
        frames.into_iter().find_map(|image| toast_reading(&image, &dir, "build finished"))
    });
    w.keep("inbox-toast.png");
    println!("inbox: the toast reads {toast:?}");

    // The inbox: opened with its key, the notification's row found by OCR, clicked.
    w.xdotool(&["key", "ctrl+shift+i"]);
    let deadline = Instant::now() + 2 * WAIT;
    let (top, rows) = loop {
        let image = w.screenshot("inbox.png");
        let rows = inbox_rows(&image, &dir, "inbox-row");
        let found = rows.iter().find(|(_, t)| t.contains("build finished")).map(|(t, _)| *t);
        let titled = rows.first().is_some_and(|(_, t)| t.contains("inbox"));
        if let (Some(top), true) = (found, titled) {
            break (top, rows);
        }
        assert!(Instant::now() < deadline, "no inbox row with the notification: {rows:?}");
        std::thread::sleep(Duration::from_millis(300));
    };
    w.keep("inbox.png");
    let all = rows.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" | ");
    println!("inbox: OCR of its rows: {all}");
    assert!(all.contains("inboxbuild"), "the notification's workspace heads its group: {all}");
    let (x, y) = (30 * CELL_PX_WIDE, top + CELL_PX_HIGH / 2);
    w.xdotool(&["mousemove", "--window", &w.window_id, &x.to_string(), &y.to_string()]);
    w.xdotool(&["click", "1"]);
    poll(WAIT, "a click on the row to show pane b", || (w.active_pane() == b).then_some(()));
    poll(WAIT, "the notification read", || {
        let out = w.server.berth_ok(&["notifications", "--json"]);
        let value: Value = serde_json::from_str(&out).ok()?;
        let note = value["notifications"]
            .as_array()?
            .iter()
            .find(|n| n["title"] == "build finished")
            .cloned()?;
        (!note["read_at"].is_null()).then_some(())
    });

    // A permission request of the stub agent, answered from the inbox.
    let (c, log) = start_stub(w, "inboxagent", "echo inbox-allowed");
    w.server.berth_ok(&["focus", &a]);
    poll(WAIT, "pane a shown again", || (w.active_pane() == a).then_some(()));
    w.server.berth_ok(&["submit", &c, "run it"]);
    poll(WAIT, "the stub's pending decision", || {
        let d = w.server.pane(&c)?["pending_decision"].clone();
        (d["answerable"] == true).then_some(d)
    });
    w.xdotool(&["windowfocus", "--sync", &w.window_id]);
    w.xdotool(&["key", "ctrl+shift+i"]);
    // The Allow button: the dark theme's green (#5fbf5f), inside the inbox, its label by OCR.
    let green = |p: [u8; 3]| p == [0x5f, 0xbf, 0x5f];
    let (found, label) = poll(WAIT, "the Allow button in the inbox", || {
        let image = w.screenshot("inbox-request.png");
        let (cols, rows) = (image.width / CELL_PX_WIDE, image.height / CELL_PX_HIGH);
        let (col, row, width, height) = inbox_rect(cols, rows);
        let mut found: Option<(u32, u32, u32, u32)> = None;
        for y in (row + 1) * CELL_PX_HIGH..(row + height) * CELL_PX_HIGH {
            for x in col * CELL_PX_WIDE..(col + width) * CELL_PX_WIDE {
                if green(image.pixels[(y * image.width + x) as usize]) {
                    found = Some(match found {
                        None => (x, y, x, y),
                        Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x), b.max(y)),
                    });
                }
            }
        }
        let found = found?;
        let label = ocr_box_by(&image, &dir, "inbox-allow", found, false);
        label.to_lowercase().contains("allow").then_some((found, label))
    });
    w.keep("inbox-request.png");
    println!("inbox: the request's Allow button at {found:?} reads {label:?}");
    let (l, t, r, bottom) = found;
    let (x, y) = ((l + r) / 2, (t + bottom) / 2);
    w.xdotool(&["mousemove", "--window", &w.window_id, &x.to_string(), &y.to_string()]);
    w.xdotool(&["click", "1"]);
    let answered = poll(WAIT, "the hook's answer to reach the stub agent", || {
        stub_events(&log, "hook_answer").into_iter().next()
    });
    let out = answered["stdout"].as_str().unwrap_or_default();
    let answer: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(answer["hookSpecificOutput"]["decision"]["behavior"], "allow", "{out}");
    let settled =
        poll(WAIT, "the stub to run the tool", || stub_events(&log, "settled").into_iter().next());
    assert_eq!(settled["how"], "allow", "{settled}");
    poll(WAIT, "the decision cleared", || {
        w.server.pane(&c).map(|p| p["pending_decision"].clone()).filter(Value::is_null)
    });
    w.xdotool(&["key", "Escape"]);
    for pane in [&c, &b, &a] {
        let _ = w.server.berth(&["close", pane]);
    }
}

/// Issue 29, item 6: Ctrl+Shift+Alt+T asks for a name and makes the workspace (shown, with a
/// shell); Ctrl+Shift+Alt+R renames it; Ctrl+Shift+Alt+Q asks first (it has a live pane: the
/// prompt read by OCR, the workspace still there), Enter closes it. Before, none of these
/// keys did anything in the window.
pub(crate) fn workspaces_are_made_renamed_and_closed_from_the_keys(w: &World) {
    let home = w.active_pane();
    let named = |name: &str| {
        let list = w.server.list();
        list["workspaces"].as_array()?.iter().find(|ws| ws["name"] == name).cloned()
    };
    w.xdotool(&["windowfocus", "--sync", &w.window_id]);
    w.xdotool(&["key", "ctrl+shift+alt+t"]);
    w.xdotool(&["type", "--delay", "30", "keyws"]);
    w.xdotool(&["key", "Return"]);
    let made = poll(WAIT, "the workspace keyws with a tab", || {
        named("keyws").filter(|ws| ws["tabs"].as_array().is_some_and(|t| !t.is_empty()))
    });
    let id = made["id"].as_str().expect("a workspace id").to_owned();
    poll(WAIT, "keyws shown", || {
        (w.server.list()["active_workspace_id"] == id.as_str()).then_some(())
    });
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        w.xdotool(&["key", "ctrl+shift+alt+r"]);
        for _ in 0.."keyws".len() {
            w.xdotool(&["key", "BackSpace"]);
        }
        w.xdotool(&["type", "--delay", "30", "renamedws"]);
        w.xdotool(&["key", "Return"]);
        poll(WAIT, "the workspace renamed", || named("renamedws"));
        // Its shell is live: closing asks first.
        w.xdotool(&["key", "ctrl+shift+alt+q"]);
        let dir = w.server.root.path();
        let deadline = Instant::now() + WAIT;
        let asked = loop {
            let image = w.screenshot("close-workspace.png");
            w.keep("close-workspace.png");
            // The switcher's rows, as `chrome::switcher_scene` places it: 72 columns centred,
            // from row 2; its question on the first row, what Enter does on the third.
            let cols = image.width / CELL_PX_WIDE;
            let width = cols.saturating_sub(4).min(72);
            let left = (cols - width) / 2 * CELL_PX_WIDE;
            let right = left + width * CELL_PX_WIDE - 1;
            let row = |r: u32| (left, r * CELL_PX_HIGH, right, r * CELL_PX_HIGH + CELL_PX_HIGH - 1);
            let question = ocr_box_by(&image, dir, "close-question", row(2), true);
            let offer = ocr_box_by(&image, dir, "close-offer", row(4), true);
            let text = words(&format!("{question} | {offer}"));
            let lower = text.to_lowercase();
            if lower.contains("close workspace") && lower.contains("renamedws") {
                break text;
            }
            assert!(Instant::now() < deadline, "no close question on screen; OCR read {text:?}");
            std::thread::sleep(Duration::from_millis(300));
        };
        println!("workspaces: the close question reads {asked:?}");
        assert!(named("renamedws").is_some(), "closed without asking");
        w.xdotool(&["key", "Return"]);
        poll(WAIT, "the workspace closed", || named("renamedws").is_none().then_some(()));
    }));
    if named("renamedws").or_else(|| named("keyws")).is_some() {
        let _ = w.server.berth(&["close", &id]);
    }
    w.server.berth_ok(&["focus", &home]);
    poll(WAIT, "the first pane shown again", || (w.active_pane() == home).then_some(()));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// The inbox and the toast in an attached window (`berth attach`'s path, `window/remote.rs`):
/// the server has no notification service (the world's runtime dir holds no bus), so it hands
/// a new notification to the window, whose desktop has none either (a session bus address
/// where nothing answers): the window shows it as a toast, lists it in its inbox (OCR of the
/// window's pixels), and a click on its row shows the pane.
/// What OCR reads of a frame when it shows a toast with `words` (`None`: it does not). The
/// toast's box at the bottom right is read alone first: read whole, a window whose sidebar or
/// second pane reach that far has been seen to lose the toast's title line to the page
/// layout (`--psm 6` read the hint line under it and not the title). Then the whole frame
/// as sparse text.
pub(crate) fn toast_reading(image: &Image, dir: &Path, words_of: &str) -> Option<String> {
    let (cols, rows) = (image.width / CELL_PX_WIDE, image.height / CELL_PX_HIGH);
    let (left, top) =
        ((cols.saturating_sub(53)) * CELL_PX_WIDE, (rows.saturating_sub(5)) * CELL_PX_HIGH);
    let bounds = (left, top, image.width - 1, (rows - 1) * CELL_PX_HIGH - 1);
    let text = words(&ocr_box_by(image, dir, "toast-box", bounds, true).to_lowercase());
    if text.contains(words_of) {
        return Some(text);
    }
    let whole = words(&ocr(image, dir, "toast-all", u32::MAX, "11").to_lowercase());
    whole.contains(words_of).then_some(whole)
}

pub(crate) fn an_attached_window_has_the_inbox_and_the_toast(a: &mut crate::attach::Attached) {
    let no_bus = format!("unix:path={}", a.server.root.path().join("no-bus").display());
    let index = a.open_env(&[], &[("DBUS_SESSION_BUS_ADDRESS", std::ffi::OsStr::new(&no_bus))]);
    let shown = active_of(&a.server);
    let hidden = a.server.berth_ok(&["new", "--workspace", "attinbox", "--", "bash", "--norc"]);
    let hidden = hidden.trim().to_owned();
    a.server.berth_ok(&["focus", &shown]);
    poll(WAIT, "the first pane shown", || (active_of(&a.server) == shown).then_some(()));
    // The windows earlier cases left open follow the focus too, and report their views: the
    // one with the desktop's focus is the one used last, which shows what the server cannot.
    let id = a.window_id(index);
    a.xdotool(&["windowfocus", "--sync", &id]);
    let number = a.window_number(index);
    poll(WAIT, "the focused window to be the one used last", || {
        let info = a.server.call("server.info", serde_json::json!({}));
        (info["active_window"] == number).then_some(())
    });
    a.server.berth_ok(&["send", &hidden, "--enter", r"printf '\e]9;remote build finished\a'"]);
    poll(WAIT, "the hidden pane unread", || {
        (a.server.pane(&hidden)?["attention"] == "unread").then_some(())
    });
    // It shows for 6 s: frames are grabbed first and read afterwards.
    let dir = a.server.root.path().to_path_buf();
    let toast = poll(WAIT, "the attached window's toast with the notification's words", || {
        let frames =
            crate::support::image::distinct_frames(|| a.grab(index), Duration::from_secs(8));
        frames.into_iter().find_map(|image| toast_reading(&image, &dir, "remote build finished"))
    });
    println!("attached inbox: the toast reads {toast:?}");
    a.xdotool(&["windowfocus", "--sync", &id]);
    a.xdotool(&["key", "ctrl+shift+i"]);
    let deadline = Instant::now() + 2 * WAIT;
    let top = loop {
        let image = a.grab(index);
        let rows = inbox_rows(&image, &dir, "attached-inbox-row");
        let found = rows.iter().find(|(_, t)| t.contains("remote build finished")).map(|r| r.0);
        if let Some(top) = found.filter(|_| rows[0].1.contains("inbox")) {
            break top;
        }
        assert!(Instant::now() < deadline, "no inbox row with the notification: {rows:?}");
        std::thread::sleep(Duration::from_millis(300));
    };
    let (x, y) = (30 * CELL_PX_WIDE, top + CELL_PX_HIGH / 2);
    a.xdotool(&["mousemove", "--window", &id, &x.to_string(), &y.to_string()]);
    a.xdotool(&["click", "1"]);
    poll(WAIT, "a click on the row to show the pane", || {
        (active_of(&a.server) == hidden).then_some(())
    });
    let _ = a.server.berth(&["close", &hidden]);
    a.close(index);
}
