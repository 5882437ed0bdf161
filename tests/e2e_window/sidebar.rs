//! The sidebar of workspaces and tasks in a real window (issue 16): its entries read by OCR
//! row by row (the workspaces with their branches, a task's state), a notification's dot, a
//! click that jumps, a decision's button that answers, and the edge dragged to resize it, the
//! width remembered in the state dir. The helpers that start a task with the stub agent serve
//! the attached windows' case too.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::task::StubTask;
use crate::support::{self, poll, TestServer};
use crate::{ocr_box, ocr_box_by, Image, WaitingHook, World, CELL_PX_HIGH, WAIT};

/// The sidebar (shown by `auto` once there are two workspaces more): each workspace's entry
/// names its git branch (two temp repos on named branches, read by OCR), a notification in a
/// pane of another workspace marks that workspace's entry ("unread"), and a click on that
/// entry's title row (found by OCR, row by row) focuses its pane. Both workspaces' panes are
/// closed at the end, so later cases find the window as they left it.
pub(crate) fn lists_workspaces_marks_and_jumps(w: &World) {
    let home_pane = w.active_pane();
    let dir = w.server.root.path();
    let repo = |name: &str, branch: &str| {
        let path = dir.join(name);
        fs::create_dir_all(&path).expect("mkdir");
        let out = Command::new("git")
            .args(["init", "-q", "-b", branch])
            .arg(&path)
            .output()
            .expect("run git init");
        assert!(out.status.success(), "git init: {}", String::from_utf8_lossy(&out.stderr));
        path.to_str().expect("UTF-8").to_owned()
    };
    let (alpha_dir, beta_dir) = (repo("alpha", "alphabranch"), repo("beta", "betabranch"));
    let new = |ws: &str, cwd: &str| {
        let args = ["new", "--workspace", ws, "--cwd", cwd, "--", "bash", "--norc"];
        w.server.berth_ok(&args).trim().to_owned()
    };
    let alpha = new("wsalpha", &alpha_dir);
    let beta = new("wsbeta", &beta_dir);
    let result = catch_unwind(AssertUnwindSafe(|| sidebar_steps(w, &alpha, &beta)));
    for pane in [&alpha, &beta] {
        w.server.berth_ok(&["close", pane]);
    }
    w.server.berth_ok(&["focus", &home_pane]);
    poll(WAIT, "the first pane shown again", || (w.active_pane() == home_pane).then_some(()));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// The sidebar's text rows, read one by one (a row per cell height, from the tab bar down),
/// with the pixel row of each.
pub(crate) fn sidebar_rows(w: &World, image: &Image, name: &str) -> Vec<(u32, String)> {
    sidebar_rows_of(image, w.server.root.path(), name, false)
}

/// [`sidebar_rows`] of any window's image, the OCR's files in `dir` (`adaptive`: see
/// [`ocr_box_by`]).
fn sidebar_rows_of(image: &Image, dir: &Path, name: &str, adaptive: bool) -> Vec<(u32, String)> {
    // The default width: 32 columns along the right edge (9 pixels each).
    let left = image.width.saturating_sub(31 * 9);
    // The entries needed are near the top (the first workspace's, then alpha's and beta's).
    let rows = (image.height / CELL_PX_HIGH).min(18);
    (1..rows)
        .map(|row| {
            let (top, bottom) = (row * CELL_PX_HIGH, row * CELL_PX_HIGH + CELL_PX_HIGH - 1);
            let text = ocr_box_by(image, dir, name, (left, top, image.width - 1, bottom), adaptive);
            // OCR mixes cases up ("aLphabranch"): the names are compared in lower case.
            (top, text.to_lowercase())
        })
        .collect()
}

/// Starts a task on `repo` labelled `label` with the stub agent (a turn that lasts ten
/// minutes, so the task stays `working` until it is reported); returns its id and workspace.
pub(crate) fn start_stub_task(server: &TestServer, repo: &Path, label: &str) -> (String, String) {
    let task = StubTask::labelled(server, repo, label)
        .accept("new.txt is committed")
        .stub_args(&["--turn-ms", "600000"])
        .start(server);
    let id = task["id"].as_str().expect("a task id").to_owned();
    let ws = task["workspace_id"].as_str().unwrap_or_default().to_owned();
    (id, ws)
}

/// Waits until the task's state (as `berth task show` says) is `state`; returns its JSON.
pub(crate) fn wait_task_state(server: &TestServer, id: &str, state: &str) -> Value {
    poll(WAIT, &format!("task {id} {state}"), || {
        let out = server.berth_ok(&["task", "show", id, "--json"]);
        let task: Value = serde_json::from_str(&out).ok()?;
        (task["state"] == state).then_some(task)
    })
}

/// Focuses a task's worker pane, so its workspace's entry is the current one (drawn in full
/// colour, which OCR reads best).
pub(crate) fn focus_worker(server: &TestServer, task: &Value) {
    let pane = task["pane_id"].as_str().expect("the task's worker pane");
    server.berth_ok(&["focus", pane]);
}

/// Whether `text` holds `word` with at most one letter read wrong (OCR of the sidebar's small
/// type reads "working" as "workirg" now and then).
fn holds_nearly(text: &str, word: &str) -> bool {
    let (text, word): (Vec<char>, Vec<char>) = (text.chars().collect(), word.chars().collect());
    text.windows(word.len().max(1))
        .any(|w| w.iter().zip(&word).filter(|(a, b)| a != b).count() <= 1)
}

/// The top pixel row of the sidebar row of `image` that holds `word` (nearly: [`holds_nearly`]),
/// read with fixed thresholds and, where that finds none, adaptive ones (dim rows); with every
/// row's text read, for a failure's message.
pub(crate) fn find_sidebar_row(
    w: &World,
    image: &Image,
    name: &str,
    word: &str,
) -> Result<u32, Vec<String>> {
    let mut read = Vec::new();
    for adaptive in [false, true] {
        let rows = sidebar_rows_of(image, w.server.root.path(), name, adaptive);
        if let Some((top, _)) = rows.iter().find(|(_, t)| holds_nearly(t, word)) {
            return Ok(*top);
        }
        read.extend(rows.into_iter().map(|(_, t)| t));
    }
    Err(read)
}

/// Waits until one OCR'd sidebar row of `grab()`'s image holds every word of `words` (nearly:
/// [`holds_nearly`]); returns that row's text.
pub(crate) fn wait_sidebar_row(
    dir: &Path,
    name: &str,
    words: &[&str],
    mut grab: impl FnMut() -> Option<Image>,
) -> String {
    let deadline = Instant::now() + WAIT;
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Some(image) = grab() {
            let rows = sidebar_rows_of(&image, dir, name, true);
            let found = rows.iter().find(|(_, t)| words.iter().all(|w| holds_nearly(t, w)));
            if let Some((_, row)) = found {
                return row.clone();
            }
            last = rows.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" | ");
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!("no sidebar row with {words:?}; OCR read: {last:?}");
}

/// Ends a task started by [`start_stub_task`]: its work discarded (its pane closed, its
/// worktree removed) and its workspace closed, so later cases find the window as it was.
pub(crate) fn end_stub_task(server: &TestServer, id: &str, ws: &str) {
    let _ = server.berth(&["task", "finish", id, "--discard", "--force"]);
    if !ws.is_empty() {
        let _ = server.berth(&["close", ws]);
    }
}

/// A task's state change shows in the sidebar: a task started on a temp repo with the stub
/// agent is listed under its workspace as `working` (OCR of the sidebar's rows), and after
/// `berth task report --status completed` the same row reads `completed`.
pub(crate) fn shows_a_tasks_state_change(w: &World) {
    let home_pane = w.active_pane();
    let repo = support::git::repo(&w.server, "taskrepo", &[("a.txt", b"a\n")]);
    let (id, ws) = start_stub_task(&w.server, &repo, "sidetask");
    let result = catch_unwind(AssertUnwindSafe(|| {
        let task = wait_task_state(&w.server, &id, "working");
        focus_worker(&w.server, &task);
        let dir = w.server.root.path();
        let grab = || Some(w.screenshot("sidebar-task.png"));
        let row = wait_sidebar_row(dir, "sidebar-task-row", &["sidetask", "working"], grab);
        w.keep("sidebar-task.png");
        println!("sidebar: the task's row before its report: {row:?}");
        let report = ["task", "report", "--task", &id, "--status", "completed", "--summary", "ok"];
        w.server.berth_ok(&report);
        wait_task_state(&w.server, &id, "completed");
        let grab = || Some(w.screenshot("sidebar-task-done.png"));
        let row = wait_sidebar_row(dir, "sidebar-task-row", &["sidetask", "completed"], grab);
        w.keep("sidebar-task-done.png");
        println!("sidebar: the task's row after its report: {row:?}");
    }));
    end_stub_task(&w.server, &id, &ws);
    w.server.berth_ok(&["focus", &home_pane]);
    poll(WAIT, "the first pane shown again", || (w.active_pane() == home_pane).then_some(()));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

fn sidebar_steps(w: &World, alpha: &str, beta: &str) {
    w.server.berth_ok(&["focus", alpha]);
    poll(WAIT, "pane alpha shown", || (w.active_pane() == alpha).then_some(()));
    // Each entry gains a summary line (" 1 idle") when its shell's first output ends its
    // `starting`: the rows are read once both shells are idle, or a line added to alpha's
    // entry later moves beta's down. Regression: on a loaded machine bash printed its first
    // prompt after the rows were read, and the unread dot was looked for on the row above
    // beta's title, until the deadline.
    for pane in [alpha, beta] {
        poll(WAIT, &format!("pane {pane} idle"), || {
            (w.server.pane(pane)?["lifecycle"] == "idle").then_some(())
        });
    }
    let deadline = Instant::now() + WAIT;
    let rows = loop {
        let image = w.screenshot("sidebar.png");
        w.keep("sidebar.png");
        let rows = sidebar_rows(w, &image, "sidebar-row");
        let all = rows.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" | ");
        if (all.contains("alphabranch") && all.contains("betabranch")) || Instant::now() > deadline
        {
            break rows;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let all = rows.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" | ");
    assert!(all.contains("wsalpha") && all.contains("alphabranch"), "sidebar: {all:?}");
    assert!(all.contains("wsbeta") && all.contains("betabranch"), "sidebar: {all:?}");
    assert!(!all.contains("unread"), "nothing is unread yet: {all:?}");
    // A notification in the hidden workspace's pane marks its entry: the unread dot (the dark
    // theme's amber, #ffb000) at the left of beta's title row, where there was none.
    let (first_top, _) =
        rows.iter().find(|(_, t)| t.contains("betabranch")).expect("beta's row").clone();
    let before = amber_rows(&w.screenshot("sidebar-before-dot.png"));
    assert!(before.is_empty(), "an amber dot in the sidebar before any notification: {before:?}");
    w.server.berth_ok(&["send", beta, "--enter", r"printf '\e]9;sidebar ping\a'"]);
    poll(WAIT, "pane beta unread", || {
        (w.server.pane(beta)?["attention"] == "unread").then_some(())
    });
    let (top, after) = wait_dot_on(w, "betabranch", || w.server.pane(beta));
    w.keep("sidebar-unread.png");
    println!("sidebar: {after} amber pixels of the unread dot on beta's entry (0 before)");
    if top != first_top {
        println!("sidebar: beta's entry moved from pixel row {first_top} to {top}");
    }
    // A click on the entry's title focuses its pane.
    click_sidebar_row(w, top);
    poll(WAIT, "a click on beta's entry to focus its pane", || {
        (w.active_pane() == beta).then_some(())
    });
    poll(WAIT, "pane beta's attention cleared", || {
        (w.server.pane(beta)?["attention"] == "none").then_some(())
    });
    w.xdotool(&["mousemove", "--window", &w.window_id, "300", "300"]);
}

/// Clicks the text of the sidebar's row whose top pixel row is `top` (15 columns in from the
/// window's right edge).
pub(crate) fn click_sidebar_row(w: &World, top: u32) {
    let width = w.screenshot("sidebar-click.png").width;
    let (x, y) = ((width - 15 * 9).to_string(), (top + CELL_PX_HIGH / 2).to_string());
    w.xdotool(&["mousemove", "--window", &w.window_id, &x, &y, "click", "1"]);
}

/// Whether a pixel is the dark theme's unread amber (#ffb000).
fn amber([r, g, b]: [u8; 3]) -> bool {
    r > 230 && (160..200).contains(&g) && b < 40
}

/// The sidebar's rows (by their top pixel row) with an attention dot's worth of amber pixels
/// (more than 20), with their counts.
fn amber_rows(image: &Image) -> Vec<(u32, usize)> {
    let left = image.width.saturating_sub(31 * 9);
    (1..image.height / CELL_PX_HIGH)
        .map(|row| {
            let ys = row * CELL_PX_HIGH..(row + 1) * CELL_PX_HIGH;
            let n = ys
                .flat_map(|y| (left..image.width).map(move |x| (x, y)))
                .filter(|(x, y)| amber(image.pixels[(y * image.width + x) as usize]))
                .count();
            (row * CELL_PX_HIGH, n)
        })
        .filter(|(_, n)| *n > 20)
        .collect()
}

/// Waits (at most twice [`WAIT`]: a loaded machine takes seconds a screenshot) until a
/// sidebar row that OCR reads as holding `word` has the unread dot; returns its top pixel row
/// and its amber pixels. The row is read in the same screenshot as the dot, so the entries'
/// places are those of one frame, not of an earlier one. At the deadline the failure says
/// what the screenshot held: the amber rows, every row's text, and `pane()`'s entry.
fn wait_dot_on(w: &World, word: &str, pane: impl Fn() -> Option<Value>) -> (u32, usize) {
    let dir = w.server.root.path();
    let deadline = Instant::now() + 2 * WAIT;
    loop {
        let image = w.screenshot("sidebar-unread.png");
        let dots = amber_rows(&image);
        let left = image.width.saturating_sub(31 * 9);
        for &(top, n) in &dots {
            let bounds = (left, top, image.width - 1, top + CELL_PX_HIGH - 1);
            let text = ocr_box_by(&image, dir, "sidebar-dot-row", bounds, true).to_lowercase();
            if text.contains(word) {
                return (top, n);
            }
        }
        if Instant::now() > deadline {
            let rows = sidebar_rows(w, &image, "sidebar-row");
            panic!(
                "no unread dot on the row of {word:?} within {:?}: amber rows {dots:?}; \
                 OCR of the rows {rows:?}; the pane {:?}",
                2 * WAIT,
                pane()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A pending decision shows its buttons in the sidebar: a permission request of an agent in a
/// workspace that is not shown puts its question and an Allow button (the dark theme's green,
/// found inside the sidebar, its label read by OCR) on that workspace's entry; a click on it
/// answers, and the waiting `berth hook claude` prints claude's allow.
pub(crate) fn decision_buttons_answer(w: &World) {
    let home_pane = w.active_pane();
    let pane = w.server.berth_ok(&["new", "--workspace", "wsdecide", "--", "bash", "--norc"]);
    let pane = pane.trim().to_owned();
    w.server.berth_ok(&["focus", &home_pane]);
    poll(WAIT, "the first pane shown", || (w.active_pane() == home_pane).then_some(()));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let hook = WaitingHook::start(w, &pane, "echo sidebar decides");
        poll(WAIT, "the pending decision in ls --json", || {
            w.server.pane(&pane).map(|p| p["pending_decision"].clone()).filter(|d| !d.is_null())
        });
        let dir = w.server.root.path();
        let green = |p: [u8; 3]| p == [0x5f, 0xbf, 0x5f];
        let found = poll(WAIT, "the Allow button in the sidebar", || {
            let image = w.screenshot("sidebar-decision.png");
            // Inside the sidebar, past its edge (the panes' LIVE badges are left of it).
            let left = image.width.saturating_sub(30 * 9);
            let mut found: Option<(u32, u32, u32, u32)> = None;
            for y in CELL_PX_HIGH..image.height {
                for x in left..image.width {
                    if green(image.pixels[(y * image.width + x) as usize]) {
                        found = Some(match found {
                            None => (x, y, x, y),
                            Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x), b.max(y)),
                        });
                    }
                }
            }
            let found = found?;
            let label = ocr_box(&image, dir, "sidebar-allow", found);
            holds_nearly(&label, "Allow").then_some((found, label))
        });
        w.keep("sidebar-decision.png");
        let ((l, t, r, b), label) = found;
        println!("sidebar: the Allow button at {l},{t}–{r},{b} reads {label:?}");
        let (x, y) = ((l + r) / 2, (t + b) / 2);
        w.xdotool(&["mousemove", "--window", &w.window_id, &x.to_string(), &y.to_string()]);
        w.xdotool(&["click", "1"]);
        let (status, out) = hook.finish();
        assert!(status.success(), "the hook exited with {status}: {out}");
        let answer: Value =
            serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(answer["hookSpecificOutput"]["decision"]["behavior"], "allow", "{out}");
        poll(WAIT, "the decision cleared", || {
            w.server.pane(&pane).map(|p| p["pending_decision"].clone()).filter(Value::is_null)
        });
        w.xdotool(&["mousemove", "--window", &w.window_id, "300", "300"]);
    }));
    let _ = w.server.berth(&["close", &pane]);
    w.server.berth_ok(&["focus", &home_pane]);
    poll(WAIT, "the first pane shown again", || (w.active_pane() == home_pane).then_some(()));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// The sidebar's edge dragged with the mouse resizes it (the shown tab gets the columns it
/// gives up) and the width is remembered in the state dir's `window.json` for the next start;
/// dragged back at the end, so later cases find the default width.
pub(crate) fn edge_drag_resizes_and_is_remembered(w: &World) {
    let home_pane = w.active_pane();
    let other = w.server.berth_ok(&["new", "--workspace", "wsdrag", "--", "bash", "--norc"]);
    let other = other.trim().to_owned();
    w.server.berth_ok(&["focus", &home_pane]);
    poll(WAIT, "the first pane shown", || (w.active_pane() == home_pane).then_some(()));
    let result = catch_unwind(AssertUnwindSafe(|| {
        // The columns of the tab holding the home pane.
        let tab_cols = || {
            let list = w.server.list();
            let tabs = list["workspaces"]
                .as_array()?
                .iter()
                .flat_map(|ws| ws["tabs"].as_array().cloned().unwrap_or_default());
            let has_home = |t: &Value| {
                t["panes"].as_array().is_some_and(|p| p.iter().any(|p| p["id"] == home_pane))
            };
            tabs.filter(has_home).find_map(|t| t["size"]["cols"].as_u64())
        };
        let grid = u64::from(w.screenshot("drag.png").width / 9);
        poll(WAIT, "the sidebar's default 32 columns beside the tab", || {
            tab_cols().filter(|c| *c == grid - 32)
        });
        let saved = w.server.state_dir().join("window.json");
        let remembered = || {
            let text = fs::read_to_string(&saved).ok()?;
            serde_json::from_str::<Value>(&text).ok()?["sidebar_width"].as_u64()
        };
        let drag = |from_col: u64, to_col: u64| {
            let (x0, x1, y) = (from_col * 9 + 4, to_col * 9 + 4, 5 * CELL_PX_HIGH + 10);
            let id = w.window_id.as_str();
            let (x0, x1, y) = (x0.to_string(), x1.to_string(), y.to_string());
            w.xdotool(&["mousemove", "--window", id, &x0, &y, "mousedown", "1"]);
            w.xdotool(&["mousemove", "--window", id, &x1, &y]);
            w.xdotool(&["mouseup", "1"]);
        };
        drag(grid - 32, grid - 40);
        poll(WAIT, "the tab 8 columns narrower", || tab_cols().filter(|c| *c == grid - 40));
        poll(WAIT, "the width remembered in window.json", || remembered().filter(|c| *c == 40));
        println!("sidebar: dragged from 32 to 40 columns; window.json says 40");
        drag(grid - 40, grid - 32);
        poll(WAIT, "the tab as wide as before", || tab_cols().filter(|c| *c == grid - 32));
        poll(WAIT, "the default width remembered", || remembered().filter(|c| *c == 32));
        w.xdotool(&["mousemove", "--window", &w.window_id, "300", "300"]);
    }));
    let _ = w.server.berth(&["close", &other]);
    w.server.berth_ok(&["focus", &home_pane]);
    poll(WAIT, "the first pane shown again", || (w.active_pane() == home_pane).then_some(()));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
