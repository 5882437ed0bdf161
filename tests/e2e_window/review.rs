//! The review view in the real window (issue 16): tasks run by the stub agent in real git
//! worktrees, the view opened with `berth review TASK`, read back with screenshots, OCR and
//! pixel colours, merged with its key, a conflict shown in place, and a 20,000-line diff.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use super::support::git::{git, repo};
use super::support::image::Image;
use super::support::task::StubTask;
use super::support::{berth_bin, poll, TestServer};
use super::{World, CELL_PX_HIGH, WAIT};

/// One cell's width in pixels at the suite's 15 px font.
const CELL_PX_WIDE: u32 = 9;

/// Starts a task on `repo` with the stub agent running `work` when it gets the prompt, then
/// reporting; waits until it is completed and returns its id.
pub(super) fn completed_task(server: &TestServer, repo: &Path, label: &str, work: &str) -> String {
    let bin = berth_bin().display().to_string();
    let work = format!(
        "{work} && git add -A && git commit -qm 'task work' && {bin} task report --status \
         completed --summary done"
    );
    let task = StubTask::labelled(server, repo, label)
        .objective("Change the files")
        .stub_args(&["--on-submit", &work])
        .start(server);
    let id = task["id"].as_str().expect("a task id").to_owned();
    crate::sidebar::wait_task_state(server, &id, "completed");
    id
}

/// The review view's rectangle in pixels: the tab's area (left of the sidebar, when shown).
pub(super) struct Area {
    right: u32,
}

impl Area {
    fn of(w: &World, image: &Image) -> Area {
        Area::on(&w.server, image)
    }

    pub(super) fn on(server: &TestServer, image: &Image) -> Area {
        // The sidebar shows with more than one workspace, 32 columns wide.
        let workspaces = server.list()["workspaces"].as_array().map_or(0, Vec::len);
        let sidebar = if workspaces > 1 { 32 * CELL_PX_WIDE } else { 0 };
        Area { right: image.width.saturating_sub(sidebar) - 1 }
    }
}

/// The text tesseract reads in the box `(left, top, right, bottom)`: ink is whatever differs
/// from the box's most common luminance by more than a little (the list's grey text on its
/// grey ground reads too), scaled up 3 times.
fn read_box(image: &Image, dir: &Path, name: &str, (l, t, r, b): (u32, u32, u32, u32)) -> String {
    let luma = |[r, g, b]: [u8; 3]| (i32::from(r) * 3 + i32::from(g) * 6 + i32::from(b)) / 10;
    let pixels: Vec<[u8; 3]> = (t..=b)
        .flat_map(|y| (l..=r).map(move |x| image.pixels[(y * image.width + x) as usize]))
        .collect();
    let mut counts = std::collections::HashMap::new();
    for p in &pixels {
        *counts.entry(luma(*p)).or_insert(0usize) += 1;
    }
    let ground = counts.into_iter().max_by_key(|(_, n)| *n).map_or(0, |(l, _)| l);
    let mapped = pixels
        .iter()
        .map(|p| if (luma(*p) - ground).abs() > 40 { [0, 0, 0] } else { [255, 255, 255] })
        .collect();
    let crop = Image { width: r - l + 1, height: b - t + 1, pixels: mapped };
    super::support::image::ocr(&crop, dir, name, u32::MAX, "7").trim().to_lowercase()
}

/// The OCR of rows `from..to` of the view (window rows), lower case.
fn rows_text(
    w: &World,
    image: &Image,
    name: &str,
    (left, right): (u32, u32),
    from: u32,
    to: u32,
) -> String {
    (from..to)
        .map(|row| {
            let (top, bottom) = (row * CELL_PX_HIGH, row * CELL_PX_HIGH + CELL_PX_HIGH - 1);
            read_box(image, w.server.root.path(), name, (left, top, right, bottom))
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Pixels of the diff area (right of the file list, below the status) that are green and red.
pub(super) fn diff_colours(image: &Image, area: &Area) -> (usize, usize) {
    let (mut green, mut red) = (0, 0);
    let left = area.right / 2;
    for y in 3 * CELL_PX_HIGH..image.height {
        for x in left..area.right {
            let [r, g, b] = image.pixels[(y * image.width + x) as usize];
            let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
            green += usize::from(g > r + 15 && g > b + 15);
            red += usize::from(r > g + 30 && r > b + 30);
        }
    }
    (green, red)
}

/// Presses `name` in the window (focused first, as a person's keys go to it).
fn key(w: &World, name: &str) {
    w.xdotool(&["windowfocus", "--sync", &w.window_id]);
    w.xdotool(&["key", name]);
}

/// Whether the view shows: its Merge (green) and Discard (red) buttons on the title row (a
/// pane's header there has at most a green LIVE badge).
fn review_shown(w: &World, name: &str) -> bool {
    let image = w.screenshot(name);
    buttons_shown(&image, &Area::of(w, &image))
}

/// Whether `image` has the view's Merge and Discard buttons on its title row.
pub(super) fn buttons_shown(image: &Image, area: &Area) -> bool {
    let (mut green, mut red) = (0, 0);
    for y in CELL_PX_HIGH..2 * CELL_PX_HIGH {
        for x in 0..area.right {
            let [r, g, b] = image.pixels[(y * image.width + x) as usize];
            let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
            green += usize::from(g > r + 40 && g > b + 40);
            red += usize::from(r > g + 50 && r > b + 50);
        }
    }
    green > 500 && red > 500
}

/// A task with an added, a modified, a deleted, a renamed and a binary file: the view lists
/// them, the modified file's hunk has a red and a green row, `m` merges and the view closes; a
/// second task that conflicts shows the file's name in place.
pub(super) fn review_view_lists_colours_merges_and_shows_a_conflict(w: &World) {
    with_room(w, review_steps);
}

/// Runs `steps` in a window of the default size (earlier cases resize it), then puts back the
/// size and the focused pane whatever happened, so later cases find the window as it was.
fn with_room(w: &World, steps: fn(&World)) {
    let home = w.active_pane();
    let before = w.screenshot("review-before.png");
    let size = |width: u32, height: u32| {
        w.xdotool(&["windowsize", &w.window_id, &width.to_string(), &height.to_string()]);
        poll(WAIT, "the window at its size", || {
            let image = w.screenshot("review-size.png");
            (image.width == width && image.height == height).then_some(())
        });
    };
    size(1000, 640);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| steps(w)));
    size(before.width, before.height);
    w.server.berth_ok(&["focus", &home]);
    poll(WAIT, "the first pane shown again", || (w.active_pane() == home).then_some(()));
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

fn review_steps(w: &World) {
    let body = "one\ntwo\nthree\nfour\nfive\nsix\n";
    let repo = repo(
        &w.server,
        "reviewed",
        &[
            ("changed.txt", body.as_bytes()),
            ("removed.txt", b"gone\n"),
            ("old.txt", b"alpha\nbeta\ngamma\ndelta\nepsilon\n"),
            ("clash.txt", b"base\n"),
        ],
    );
    let work = "printf 'hello\\n' > added.txt && \
                printf 'one\\ntwo\\nTHREE\\nfour\\nfive\\nsix\\n' > changed.txt && \
                git rm -q removed.txt && git mv old.txt moved.txt && \
                printf '\\000\\001\\002\\003' > picture.bin";
    let id = completed_task(&w.server, &repo, "review-five", work);
    // The files in the server's order, to find the modified one's place.
    let stat: Value =
        serde_json::from_str(&w.server.berth_ok(&["diff", &id, "--stat", "--json"])).expect("JSON");
    let paths: Vec<String> = stat["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(paths.len(), 5, "{stat}");
    let modified = paths.iter().position(|p| p == "changed.txt").expect("changed.txt listed");
    let out = w.server.berth_ok(&["review", &id]);
    assert!(out.contains("opened in 1 window"), "{out}");
    let deadline = Instant::now() + WAIT;
    let list = loop {
        let image = w.screenshot("review-files.png");
        w.keep("review-files.png");
        let area = Area::of(w, &image);
        // The paths' columns of the list (after the mark, before the counts), from row 3 down.
        let list_cols = (area.right + 1) / CELL_PX_WIDE * 2 / 5;
        let paths_right = (list_cols - 8) * CELL_PX_WIDE;
        // The header (what is reviewed) comes first, so the list starts a few rows down.
        let text = rows_text(w, &image, "review-list", (3 * CELL_PX_WIDE, paths_right), 3, 18);
        let squeezed = text.replace(' ', "");
        let names = ["added", "changed", "removed", "old.txt", "moved", "picture"];
        if names.iter().all(|name| squeezed.contains(name)) {
            break text;
        }
        assert!(Instant::now() < deadline, "the review view's file list within 30 s: {text:?}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    println!("review: the file list reads {list:?}");
    let image = w.screenshot("review-counts.png");
    let area = Area::of(w, &image);
    let counts = rows_text(w, &image, "review-counts", (area.right / 4, area.right * 2 / 5), 3, 18);
    assert!(counts.contains("binary"), "the binary file is marked: {counts}");
    for _ in 0..modified {
        key(w, "Tab");
    }
    let (green, red) = poll(WAIT, "a red and a green row in changed.txt's hunk", || {
        let image = w.screenshot("review-hunk.png");
        w.keep("review-hunk.png");
        let (green, red) = diff_colours(&image, &Area::of(w, &image));
        (green > 300 && red > 300).then_some((green, red))
    });
    w.keep("review-hunk.png");
    println!("review: changed.txt's hunk has {green} green and {red} red pixels");
    key(w, "m");
    poll(WAIT, "the task merged by the view's key", || {
        let shown: Value =
            serde_json::from_str(&w.server.berth_ok(&["task", "show", &id, "--json"])).ok()?;
        (shown["disposition"]["outcome"] == "merged").then_some(())
    });
    assert!(repo.join("added.txt").exists() && repo.join("moved.txt").exists());
    poll(WAIT, "the view closed after the merge", || {
        (!review_shown(w, "review-merged.png")).then_some(())
    });
    // A task that changes clash.txt while main changes it too.
    let id = completed_task(&w.server, &repo, "review-clash", "printf 'TASK\\n' > clash.txt");
    std::fs::write(repo.join("clash.txt"), "MAIN\n").expect("write clash.txt");
    git(&repo, &["commit", "-qam", "main changes clash.txt"]);
    // This one opens with the window's key: the focused pane is the task's worker.
    let worker: Value =
        serde_json::from_str(&w.server.berth_ok(&["task", "show", &id, "--json"])).expect("JSON");
    let pane = worker["pane_id"].as_str().expect("the worker's pane").to_owned();
    w.server.berth_ok(&["focus", &pane]);
    poll(WAIT, "the worker's pane focused", || (w.active_pane() == pane).then_some(()));
    key(w, "ctrl+shift+g");
    poll(WAIT, "the second review open by its key", || {
        review_shown(w, "review-clash.png").then_some(())
    });
    // The focused pane's task: its one file is in the list.
    poll(WAIT, "the key opened the focused pane's task", || {
        let image = w.screenshot("review-clash-list.png");
        w.keep("review-clash-list.png");
        let list_cols = (Area::of(w, &image).right + 1) / CELL_PX_WIDE * 2 / 5;
        let right = list_cols * CELL_PX_WIDE;
        let text = rows_text(w, &image, "review-clash-list", (0, right), 3, 12);
        text.contains("clas").then_some(())
    });
    key(w, "m");
    let status = poll(WAIT, "the conflict shown in place", || {
        let image = w.screenshot("review-conflict.png");
        let area = Area::of(w, &image);
        // The error's rows: red text under the title, left of where the diff starts.
        let list_right = (area.right + 1) / CELL_PX_WIDE * 2 / 5 * CELL_PX_WIDE;
        let red_text = |row: u32| {
            let mut n = 0;
            for y in row * CELL_PX_HIGH..(row + 1) * CELL_PX_HIGH {
                for x in 3 * CELL_PX_WIDE..list_right {
                    let [r, g, b] = image.pixels[(y * image.width + x) as usize];
                    n += usize::from(r > g.saturating_add(60) && r > b.saturating_add(60));
                }
            }
            n
        };
        // Below the header: the first run of red rows.
        let rows: Vec<u32> = (2..14)
            .skip_while(|row| red_text(*row) <= 30)
            .take_while(|row| red_text(*row) > 30)
            .collect();
        let (first, last) = (*rows.first()?, *rows.last()?);
        let text = rows_text(w, &image, "review-status", (0, area.right), first, last + 1);
        (text.contains("clash.txt") && text.contains("conflict")).then_some(text)
    });
    w.keep("review-conflict.png");
    println!("review: the conflict reads {status:?}");
    let shown: Value =
        serde_json::from_str(&w.server.berth_ok(&["task", "show", &id, "--json"])).expect("JSON");
    assert_eq!(shown["disposition"]["outcome"], "none", "{shown}");
    key(w, "Escape");
    poll(WAIT, "Escape closes the view", || (!review_shown(w, "review-esc.png")).then_some(()));
    // A click on the task's line in the sidebar opens it too.
    let deadline = Instant::now() + WAIT;
    let top = loop {
        let image = w.screenshot("review-sidebar.png");
        w.keep("review-sidebar.png");
        // The sidebar cuts the label with an ellipsis ("review-cla…").
        let found = super::sidebar::find_sidebar_row(w, &image, "review-sidebar-row", "view-cla");
        let rows = match found {
            Ok(top) => break top,
            Err(rows) => rows,
        };
        assert!(Instant::now() < deadline, "the task's line in the sidebar: {rows:?}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    };
    crate::sidebar::click_sidebar_row(w, top);
    poll(WAIT, "the sidebar's task line opens its review", || {
        review_shown(w, "review-from-sidebar.png").then_some(())
    });
    key(w, "Escape");
    poll(WAIT, "closed again", || (!review_shown(w, "review-esc2.png")).then_some(()));
    w.xdotool(&["mousemove", "--window", &w.window_id, "300", "300"]);
    w.server.berth_ok(&["task", "finish", &id, "--discard"]);
}

/// A task whose diff is 20,000 changed lines in 2,000 hunks: the view's first frame with hunks
/// comes within the e2e bound (the figure is printed, not asserted).
pub(super) fn a_twenty_thousand_line_diff_opens_in_the_review_view(w: &World) {
    with_room(w, big_steps);
}

fn big_steps(w: &World) {
    let lines: String = (1..=40_000).map(|i| format!("line {i}\n")).collect();
    let repo = repo(&w.server, "big", &[("big.txt", lines.as_bytes())]);
    let work = "awk '{ if ((NR - 1) % 20 < 5) print \"x\" $0; else print }' big.txt > big.tmp && \
                mv big.tmp big.txt";
    let id = completed_task(&w.server, &repo, "review-big", work);
    let stat: Value =
        serde_json::from_str(&w.server.berth_ok(&["diff", &id, "--stat", "--json"])).expect("JSON");
    let file = &stat["files"][0];
    assert_eq!((file["added"].as_u64(), file["removed"].as_u64()), (Some(10_000), Some(10_000)));
    assert_eq!(file["too_large"], false, "{stat}");
    let started = Instant::now();
    w.server.berth_ok(&["review", &id]);
    poll(WAIT, "the big diff's first hunks drawn", || {
        let image = w.screenshot("review-big.png");
        let (green, red) = diff_colours(&image, &Area::of(w, &image));
        (green > 300 && red > 300).then_some(())
    });
    let first = started.elapsed();
    w.keep("review-big.png");
    println!(
        "review: a 20,000-line diff (2,000 hunks) showed its first hunks {} ms after `berth \
         review`",
        first.as_millis()
    );
    // Paging: far down and back, the window answering all the while.
    for _ in 0..40 {
        key(w, "Next");
    }
    let paged = Instant::now();
    poll(WAIT, "hunks drawn after paging down", || {
        let image = w.screenshot("review-big-paged.png");
        let (green, red) = diff_colours(&image, &Area::of(w, &image));
        (green > 300 && red > 300).then_some(())
    });
    println!("review: 40 pages down drawn within {} ms", paged.elapsed().as_millis());
    assert!(review_shown(w, "review-big-open.png"), "the view reads as open before Escape");
    key(w, "Escape");
    poll(WAIT, "the big review closed", || (!review_shown(w, "review-big-esc.png")).then_some(()));
    w.server.berth_ok(&["task", "finish", &id, "--discard"]);
}

/// The comment flow in the window (issue 31): `c` on the diff's first line, a comment typed
/// with the keyboard, Enter keeps it (listed on the task), `s` sends it: the stub worker gets
/// one prompt naming the file and line with the comment, and the task works again.
pub(super) fn review_comments_reach_the_worker(w: &World) {
    with_room(w, comment_steps);
}

fn comment_steps(w: &World) {
    let repo = repo(&w.server, "commented", &[("README", b"readme\n")]);
    let bin = berth_bin().display().to_string();
    // Its first turn commits and reports; a later one (the comments') finds nothing to commit.
    let work = format!(
        "printf 'fn main() {{}}\\n' > lib.rs && git add -A && git commit -qm work && {bin} \
         task report --status completed --summary done"
    );
    let task = StubTask::labelled(&w.server, &repo, "review-comments")
        .objective("Write lib.rs")
        .stub_args(&["--on-submit", &work]);
    let started = task.start(&w.server);
    let id = started["id"].as_str().expect("a task id").to_owned();
    crate::sidebar::wait_task_state(&w.server, &id, "completed");
    w.server.berth_ok(&["review", &id]);
    poll(WAIT, "the review view open", || review_shown(w, "comment-open.png").then_some(()));
    let show = || -> Value {
        serde_json::from_str(&w.server.berth_ok(&["task", "show", &id, "--json"])).expect("JSON")
    };
    // The hunk is there before a line of it is commented.
    poll(WAIT, "the hunk drawn", || {
        let image = w.screenshot("comment-hunk.png");
        let (green, _) = diff_colours(&image, &Area::of(w, &image));
        (green > 300).then_some(())
    });
    key(w, "c");
    w.xdotool(&["type", "--delay", "20", "make it pub"]);
    key(w, "Return");
    let kept = poll(WAIT, "the comment kept on the task", || {
        let task = show();
        (task["comments"].as_array().map_or(0, Vec::len) == 1).then_some(task)
    });
    assert_eq!(kept["comments"][0]["path"], "lib.rs", "{kept}");
    assert_eq!(kept["comments"][0]["start"], 1, "{kept}");
    assert_eq!(kept["comments"][0]["text"], "make it pub", "{kept}");
    w.keep("comment-open.png");
    key(w, "s");
    let prompt = poll(WAIT, "the comments' prompt at the worker", || {
        let log = std::fs::read_to_string(task.log()).unwrap_or_default();
        let submits: Vec<Value> = log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["event"] == "submit")
            .collect();
        (submits.len() == 2).then(|| submits[1]["text"].as_str().unwrap_or_default().to_owned())
    });
    assert!(prompt.contains("lib.rs:1: make it pub"), "{prompt}");
    // The worker logs the prompt as it arrives; the server records the comments as sent once
    // the submit has answered, a moment later.
    poll(WAIT, "the comments sent and the task working again", || {
        let after = show();
        (after["comments"].as_array().is_some_and(Vec::is_empty) && after["state"] != "completed")
            .then_some(())
    });
    key(w, "Escape");
    poll(WAIT, "closed", || (!review_shown(w, "comment-esc.png")).then_some(()));
    w.server.berth_ok(&["task", "finish", &id, "--discard", "--force"]);
}

/// Highlighted hunks in the window (issue 31): a Rust file's added hunk shows code in at least
/// three syntax colours (keywords, function names, types, strings: the theme's ANSI colours).
pub(super) fn review_highlights_a_rust_hunk(w: &World) {
    with_room(w, highlight_steps);
}

fn highlight_steps(w: &World) {
    let repo = repo(&w.server, "highlighted", &[("README", b"readme\n")]);
    let work = "printf 'pub fn greet(name: &str) -> String {\\n    // say hello\\n    let n: u32 = 42;\\n    \
                format!(\"hello {} {}\", name, n)\\n}\\n' > greet.rs";
    let id = completed_task(&w.server, &repo, "review-highlight", work);
    w.server.berth_ok(&["review", &id]);
    let hues = poll(WAIT, "three syntax colours in the Rust hunk", || {
        let image = w.screenshot("review-highlight.png");
        let area = Area::of(w, &image);
        let left = (area.right + 1) / CELL_PX_WIDE * 2 / 5 * CELL_PX_WIDE;
        // Only the added rows (their ground is green-tinted: not the @@ row, not the header),
        // their pixels by hue: magenta, blue, yellow, cyan.
        let mut counts = [0usize; 4];
        for row in 3..image.height / CELL_PX_HIGH {
            let ys = row * CELL_PX_HIGH..(row + 1) * CELL_PX_HIGH;
            let pixel = |x: u32, y: u32| {
                let [r, g, b] = image.pixels[(y * image.width + x) as usize];
                (i32::from(r), i32::from(g), i32::from(b))
            };
            let tinted = ys
                .clone()
                .flat_map(|y| (left..area.right).map(move |x| (x, y)))
                .filter(|(x, y)| {
                    let (r, g, b) = pixel(*x, *y);
                    g > r + 15 && g > b + 15
                })
                .count();
            if tinted * 2 < ys.len() * (area.right - left) as usize {
                continue;
            }
            for y in ys {
                for x in left..area.right {
                    let (r, g, b) = pixel(x, y);
                    counts[0] += usize::from(r > g + 50 && b > g + 50);
                    counts[1] += usize::from(b > r + 50 && b > g + 30);
                    counts[2] += usize::from(r > b + 60 && g > b + 60);
                    counts[3] += usize::from(g > r + 50 && b > r + 50);
                }
            }
        }
        (counts.iter().filter(|n| **n > 20).count() >= 3).then_some(counts)
    });
    w.keep("review-highlight.png");
    println!("review: the Rust hunk's added rows by hue (magenta, blue, yellow, cyan): {hues:?}");
    key(w, "Escape");
    poll(WAIT, "closed", || (!review_shown(w, "highlight-esc.png")).then_some(()));
    w.server.berth_ok(&["task", "finish", &id, "--discard", "--force"]);
}
