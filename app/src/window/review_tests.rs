//! The review view's state machine: files, hunks, paging, errors, with the link's answers
//! played by a table of files and hunks (the link itself runs against a real server in
//! `tests/e2e_window/review.rs`).

use berth_server::gitctx::diff::{DiffLine, LineKind};
use berth_server::persist::task_record::{
    CheckpointRecord, CommentRecord, ConflictRecord, ContractRecord, TaskResultRecord,
};

use super::*;

const RECT: CellRectU16 = CellRectU16 { col: 0, row: 1, cols: 100, rows: 30 };

fn file(path: &str, status: FileStatus, added: u64, removed: u64) -> DiffFile {
    DiffFile {
        path: path.into(),
        old_path: None,
        status,
        added,
        removed,
        binary: false,
        too_large: false,
        untracked: false,
    }
}

/// The five kinds of change the e2e test makes.
fn five() -> Vec<DiffFile> {
    vec![
        file("added.txt", FileStatus::Added, 2, 0),
        file("modified.txt", FileStatus::Modified, 1, 1),
        file("deleted.txt", FileStatus::Deleted, 0, 3),
        DiffFile { old_path: Some("old.txt".into()), ..file("new.txt", FileStatus::Renamed, 0, 0) },
        DiffFile { binary: true, ..file("image.bin", FileStatus::Added, 0, 0) },
    ]
}

/// A hunk at `start` with one removed and one added line amid three lines of context each side.
fn hunk(start: u64, changed: usize) -> DiffHunk {
    let mut lines = Vec::new();
    let line = |kind, old, new, text: String| DiffLine {
        kind,
        old_line: old,
        new_line: new,
        text,
        no_newline: false,
    };
    for i in 0..3 {
        lines.push(line(LineKind::Context, Some(start + i), Some(start + i), format!("c{i}")));
    }
    for i in 0..changed as u64 {
        lines.push(line(LineKind::Removed, Some(start + 3 + i), None, format!("old {i}")));
    }
    for i in 0..changed as u64 {
        lines.push(line(LineKind::Added, None, Some(start + 3 + i), format!("new {i}")));
    }
    DiffHunk {
        old_start: start,
        old_lines: 3 + changed as u64,
        new_start: start,
        new_lines: 3 + changed as u64,
        header: String::new(),
        lines,
    }
}

/// Answers asks as the server would, for files whose hunks `hunks_of` gives, until the view
/// asks nothing more; how many pages were fetched.
fn serve(
    view: &mut ReviewView,
    mut asks: Vec<ReviewAsk>,
    files: &[DiffFile],
    hunks_of: &dyn Fn(&str) -> Vec<DiffHunk>,
) -> usize {
    let mut fetched = 0;
    while !asks.is_empty() {
        let mut next = Vec::new();
        for ask in asks {
            let answer = match ask {
                ReviewAsk::Resolve { .. } => ReviewAnswer::Resolved(Ok("task_x".into())),
                ReviewAsk::Files { .. } => ReviewAnswer::Files(Ok(files.to_vec())),
                ReviewAsk::Task { .. } => ReviewAnswer::Task(Ok(Box::new(record()))),
                ReviewAsk::Comment { path, start, end, text, .. } => {
                    let mut r = record();
                    r.comments.push(CommentRecord { path, start, end, text });
                    ReviewAnswer::Commented(Ok(Box::new(r)))
                }
                ReviewAsk::SendComments { .. } => ReviewAnswer::Sent(Ok((1, Box::new(record())))),
                ReviewAsk::Page { path, page, generation, .. } => {
                    fetched += 1;
                    let all = hunks_of(&path);
                    let hunks = all.iter().skip(page * PAGE_HUNKS).take(PAGE_HUNKS).cloned();
                    ReviewAnswer::Page {
                        generation,
                        page,
                        result: Ok((all.len(), hunks.collect())),
                    }
                }
                ReviewAsk::Finish { .. } | ReviewAsk::Land { .. } => ReviewAnswer::Finished(Ok(())),
            };
            next.extend(view.answer(answer));
        }
        asks = next;
    }
    fetched
}

/// A reported task with two turns and a conflict.
fn record() -> TaskRecord {
    let checkpoint = |turn: u32| CheckpointRecord {
        turn,
        sha: format!("{turn:040}"),
        kind: "turn".into(),
        at: 1,
    };
    TaskRecord {
        id: "task_x".into(),
        label: "fix the parser".into(),
        state: "completed".into(),
        base_sha: "abcdef0123456789".into(),
        branch: "berth/fix-the-parser".into(),
        contract: ContractRecord {
            objective: "Fix the parser\nand more".into(),
            ..Default::default()
        },
        result: Some(TaskResultRecord {
            status: "completed".into(),
            summary: "parser fixed".into(),
            evidence: Some("cargo test: 12 passed".into()),
            ..Default::default()
        }),
        checkpoints: vec![checkpoint(1), checkpoint(2)],
        conflicts: vec![ConflictRecord {
            task: "task_other".into(),
            files: vec!["a.rs".into(), "b.rs".into()],
        }],
        ..Default::default()
    }
}

/// The header says what is reviewed (not the raw id): label, state, base and branch, the
/// objective, the report with its evidence, the turns and the conflicts; `t` shows one turn
/// at a time, then all the work again.
#[test]
fn the_header_says_what_is_reviewed_and_t_shows_one_turn() {
    let mut view = open_five();
    let scene = view.scene(RECT);
    assert!(scene.title.starts_with("Review fix the parser · 5 files"), "{}", scene.title);
    let header = scene.header.join("\n");
    for part in [
        "fix the parser · completed · abcdef0123 → berth/fix-the-parser",
        "Objective: Fix the parser",
        "Report (completed): parser fixed · Evidence: cargo test: 12 passed",
        "Turns: [all] 1 2",
        "⚠ conflicts with task task_other in a.rs, b.rs",
    ] {
        assert!(header.contains(part), "{part:?} not in:\n{header}");
    }
    assert!(scene.body_row > RECT.row + 1 + u16::try_from(scene.header.len()).unwrap());
    for want in [Some(1), Some(2), None] {
        let asks = view.key(ReviewKey::NextTurn, 10);
        let task = "task_x".to_owned();
        assert_eq!(
            asks,
            vec![ReviewAsk::Task { task: task.clone() }, ReviewAsk::Files { task, turn: want }]
        );
        serve(&mut view, asks, &five(), &small);
        let scene = view.scene(RECT);
        match want {
            Some(t) => {
                assert!(scene.title.contains(&format!("turn {t}")), "{}", scene.title);
                assert!(scene.header.join("\n").contains(&format!("[{t}]")));
            }
            None => assert!(!scene.title.contains("turn"), "{}", scene.title),
        }
        assert!(!scene.lines.is_empty(), "the turn's hunks are fetched");
    }
    assert_eq!(
        ReviewKey::of(Key::Character("t"), ModifiersState::empty()),
        Some(ReviewKey::NextTurn)
    );
}

/// Lines selected (`c` on the top line, `J` stretching it), a comment typed in the status row
/// and kept with `task.comment`, listed in the header, and sent with `s` or the button.
#[test]
fn a_comment_on_selected_lines_is_kept_listed_and_sent() {
    let mut view = open_five();
    view.key(ReviewKey::SelectDown, 10);
    view.key(ReviewKey::SelectDown, 10);
    let scene = view.scene(RECT);
    let selected: Vec<Option<u64>> =
        scene.lines.iter().filter(|l| l.selected).map(|l| l.new).collect();
    assert_eq!(selected, [Some(1), Some(2), Some(3)], "three lines selected");
    view.key(ReviewKey::Comment, 10);
    assert!(view.composing());
    // While typing, keys are text: `m` does not merge.
    view.type_text("make this mine\u{7}");
    view.backspace();
    let status = view.scene(RECT).status.join(" ");
    assert!(status.contains("Comment on added.txt:1-3: make this min▏"), "{status}");
    let asks = view.keep_comment();
    assert_eq!(
        asks,
        vec![ReviewAsk::Comment {
            task: "task_x".into(),
            path: "added.txt".into(),
            start: 1,
            end: 3,
            text: "make this min".into(),
        }]
    );
    assert!(!view.composing());
    serve(&mut view, asks, &five(), &small);
    let scene = view.scene(RECT);
    let header = scene.header.join("\n");
    assert!(header.contains("Comments (1, s sends): added.txt:1-3 “make this min”"), "{header}");
    assert!(scene.lines.iter().all(|l| !l.selected), "the selection went with the comment");
    // Escape drops a comment being typed.
    view.key(ReviewKey::Comment, 10);
    view.type_text("never mind");
    view.cancel_comment();
    assert!(!view.composing());
    // `s` and the button send them all as one.
    assert_eq!(
        view.key(ReviewKey::SendComments, 10),
        vec![ReviewAsk::SendComments { task: "task_x".into() }]
    );
    let send =
        buttons(RECT.cols).into_iter().find(|(a, _)| *a == ReviewButtonAction::Send).unwrap();
    let hit = view.hit(RECT, RECT.col + send.1.cols.start, RECT.row);
    assert_eq!(hit, ReviewHit::Button(ReviewButtonAction::Send));
    let asks = view.press(hit, 10);
    assert_eq!(asks, vec![ReviewAsk::SendComments { task: "task_x".into() }]);
    serve(&mut view, asks, &five(), &small);
    assert!(
        view.scene(RECT).status.join(" ").contains("1 comment(s) sent"),
        "{:?}",
        view.scene(RECT).status
    );
    // A narrow view keeps Merge, Discard and Close; Send gives way.
    let narrow: Vec<ReviewButtonAction> = buttons(36).into_iter().map(|(a, _)| a).collect();
    assert_eq!(
        narrow,
        [ReviewButtonAction::Merge, ReviewButtonAction::Discard, ReviewButtonAction::Close]
    );
    for (key, want) in
        [("c", ReviewKey::Comment), ("s", ReviewKey::SendComments), ("J", ReviewKey::SelectDown)]
    {
        assert_eq!(ReviewKey::of(Key::Character(key), ModifiersState::empty()), Some(want));
    }
    assert_eq!(
        ReviewKey::of(Key::Named(NamedKey::ArrowDown), ModifiersState::SHIFT),
        Some(ReviewKey::SelectDown)
    );
}

fn small(path: &str) -> Vec<DiffHunk> {
    match path {
        "modified.txt" => vec![hunk(1, 1), hunk(40, 2)],
        "added.txt" => vec![hunk(1, 1)],
        _ => Vec::new(),
    }
}

fn open_five() -> ReviewView {
    let (mut view, asks) = ReviewView::open("task_x".into());
    assert_eq!(
        asks,
        vec![
            ReviewAsk::Task { task: "task_x".into() },
            ReviewAsk::Files { task: "task_x".into(), turn: None }
        ]
    );
    serve(&mut view, asks, &five(), &small);
    view
}

#[test]
fn the_file_list_shows_marks_and_counts_and_the_first_file_is_fetched() {
    let (mut view, _) = ReviewView::open("task_x".into());
    let scene = view.scene(RECT);
    assert!(scene.title.contains("loading"), "{}", scene.title);
    let asks = view.answer(ReviewAnswer::Files(Ok(five())));
    assert!(asks
        .iter()
        .any(|a| matches!(a, ReviewAsk::Page { page: 0, path, .. } if path == "added.txt")));
    drop(asks);
    let view = open_five();
    let scene = view.scene(RECT);
    assert!(scene.title.contains("5 files +3 −4"), "{}", scene.title);
    let rows: Vec<(char, &str, &str, bool)> = scene
        .files
        .iter()
        .map(|f| (f.mark, f.path.as_str(), f.counts.as_str(), f.selected))
        .collect();
    assert_eq!(
        rows,
        vec![
            ('A', "added.txt", "+2 −0", true),
            ('M', "modified.txt", "+1 −1", false),
            ('D', "deleted.txt", "+0 −3", false),
            ('R', "old.txt → new.txt", "+0 −0", false),
            ('A', "image.bin", "binary", false),
        ]
    );
    assert_eq!(scene.buttons.len(), 4);
    assert!(!scene.error);
}

#[test]
fn moving_between_files_and_hunks() {
    let mut view = open_five();
    let rows = view.body_rows(RECT);
    let asks = view.key(ReviewKey::NextFile, rows);
    assert!(matches!(&asks[..], [ReviewAsk::Page { path, page: 0, .. }] if path == "modified.txt"));
    serve(&mut view, asks, &five(), &small);
    let kinds: Vec<ReviewLineKind> = view.scene(RECT).lines.iter().map(|l| l.kind).collect();
    use ReviewLineKind::{Added, Context, Hunk, Removed};
    let first = [Hunk, Context, Context, Context, Removed, Added];
    let second = [Hunk, Context, Context, Context, Removed, Removed, Added, Added];
    assert_eq!(kinds, [&first[..], &second[..]].concat());
    let lines = view.scene(RECT).lines;
    assert_eq!(lines[0].text, "@@ -1,4 +1,4 @@");
    assert_eq!((lines[4].old, lines[4].new), (Some(4), None), "a removed line's number");
    assert_eq!((lines[5].old, lines[5].new), (None, Some(4)), "an added line's number");
    // The next hunk's header is the top row; back again; a row down leaves the header.
    view.key(ReviewKey::NextHunk, rows);
    assert_eq!(view.scene(RECT).lines[0].text, "@@ -40,5 +40,5 @@");
    view.key(ReviewKey::NextHunk, rows);
    assert_eq!(view.scene(RECT).lines[0].text, "@@ -40,5 +40,5 @@", "the last hunk stays");
    view.key(ReviewKey::PrevHunk, rows);
    view.key(ReviewKey::Down, rows);
    assert_eq!(view.scene(RECT).lines[0].kind, Context);
    view.key(ReviewKey::PrevHunk, rows);
    assert_eq!(view.scene(RECT).lines[0].kind, Hunk);
    // Scrolling past the end stops at the last row; up again to the top.
    view.key(ReviewKey::PageDown, rows);
    assert_eq!(view.scene(RECT).lines.len(), 1, "the last row at the top");
    view.key(ReviewKey::PageUp, rows);
    assert_eq!(view.scene(RECT).lines[0].text, "@@ -1,4 +1,4 @@");
    // The binary file: no fetch, a note.
    for _ in 0..3 {
        let asks = view.key(ReviewKey::NextFile, rows);
        serve(&mut view, asks, &five(), &small);
    }
    let scene = view.scene(RECT);
    assert!(scene.files[4].selected);
    assert_eq!(scene.lines.len(), 1);
    assert!(scene.lines[0].text.contains("binary"), "{:?}", scene.lines);
    assert!(view.key(ReviewKey::NextFile, rows).is_empty(), "past the last file: nothing");
}

#[test]
fn an_answer_for_a_file_no_longer_shown_is_dropped() {
    let (mut view, _) = ReviewView::open("task_x".into());
    let asks = view.answer(ReviewAnswer::Files(Ok(five())));
    let ReviewAsk::Page { generation, .. } = asks[0].clone() else { panic!("{asks:?}") };
    let rows = view.body_rows(RECT);
    view.key(ReviewKey::NextFile, rows);
    let late = ReviewAnswer::Page { generation, page: 0, result: Ok((1, vec![hunk(1, 1)])) };
    assert!(view.answer(late).is_empty());
    assert_eq!(view.held_pages(), 0, "the first file's page was not kept");
    let lines = view.scene(RECT).lines;
    assert!(lines[0].text.contains("loading"), "{lines:?}");
}

#[test]
fn paging_through_a_twenty_thousand_line_diff_holds_a_bounded_number_of_lines() {
    // 2,000 hunks of five removed and five added lines: 20,000 changed lines, 32,000 rows.
    let big: Vec<DiffHunk> = (0..2000).map(|i| hunk(1 + i * 20, 5)).collect();
    let files = vec![file("big.txt", FileStatus::Modified, 10_000, 10_000)];
    let hunks_of = |_: &str| big.clone();
    let (mut view, asks) = ReviewView::open("task_x".into());
    let mut fetched = serve(&mut view, asks, &files, &hunks_of);
    let rows = view.body_rows(RECT);
    let bound = HELD_PAGES * PAGE_HUNKS * 17;
    let (mut most, mut steps) = (0, 0);
    let mut last_top = String::new();
    loop {
        let asks = view.key(ReviewKey::PageDown, rows);
        fetched += serve(&mut view, asks, &files, &hunks_of);
        steps += 1;
        most = most.max(view.held_lines());
        assert!(view.held_pages() <= HELD_PAGES, "{} pages held", view.held_pages());
        assert!(view.held_lines() <= bound, "{} lines held", view.held_lines());
        let lines = view.scene(RECT).lines;
        assert!(!lines.is_empty());
        assert!(lines.iter().all(|l| l.kind != ReviewLineKind::Note), "all shown rows loaded");
        let top = format!("{:?}", lines[0]);
        if top == last_top {
            break;
        }
        last_top = top;
        assert!(steps < 10_000, "paging never ended");
    }
    assert_eq!(view.anchor.0, 1999, "the last hunk reached");
    assert!(fetched >= 40, "every page was fetched on the way ({fetched})");
    println!("paged {steps} screens, {fetched} pages fetched, at most {most} lines held");
    // And back to the top: the first page is fetched again.
    let asks = view.key(ReviewKey::Top, rows);
    assert!(matches!(&asks[..], [ReviewAsk::Page { page: 0, .. }, ..]), "{asks:?}");
    serve(&mut view, asks, &files, &hunks_of);
    assert_eq!(view.scene(RECT).lines[0].text, "@@ -1,8 +1,8 @@");
    assert!(view.held_pages() <= HELD_PAGES);
}

#[test]
fn a_failed_merge_shows_its_error_in_place_and_a_good_one_closes() {
    let mut view = open_five();
    let rows = view.body_rows(RECT);
    let asks = view.key(ReviewKey::Merge, rows);
    assert_eq!(asks, vec![ReviewAsk::Finish { task: "task_x".into(), merge: true }]);
    assert!(view.key(ReviewKey::Merge, rows).is_empty(), "one finish at a time");
    assert!(view.key(ReviewKey::Land(Landing::Rebase), rows).is_empty(), "one at a time");
    let error = "merging berth/x into main conflicts in: conflict.txt; the merge was aborted";
    view.answer(ReviewAnswer::Finished(Err(error.into())));
    assert_eq!(view.error(), Some(error));
    assert!(!view.closed());
    let scene = view.scene(RECT);
    assert!(scene.error);
    assert!(scene.status.join(" ").contains("conflict.txt"), "{:?}", scene.status);
    assert!(scene.body_row > RECT.row + 1);
    // Again, and this time it works: the view closes.
    let asks = view.key(ReviewKey::Merge, rows);
    assert_eq!(asks.len(), 1);
    view.answer(ReviewAnswer::Finished(Ok(())));
    assert!(view.closed());
}

#[test]
fn discard_asks_twice_and_any_other_key_keeps_the_work() {
    let mut view = open_five();
    let rows = view.body_rows(RECT);
    assert!(view.key(ReviewKey::Discard, rows).is_empty());
    assert!(view.scene(RECT).status[0].contains("press d again"));
    view.key(ReviewKey::Down, rows);
    assert!(view.key(ReviewKey::Discard, rows).is_empty(), "the confirmation was cancelled");
    let asks = view.key(ReviewKey::Discard, rows);
    assert_eq!(asks, vec![ReviewAsk::Finish { task: "task_x".into(), merge: false }]);
    // The discard button needs one click.
    let mut view = open_five();
    let asks = view.press(ReviewHit::Button(ReviewButtonAction::Discard), rows);
    assert_eq!(asks, vec![ReviewAsk::Finish { task: "task_x".into(), merge: false }]);
}

#[test]
fn presses_hit_buttons_and_files() {
    let mut view = open_five();
    let scene = view.scene(RECT);
    for (b, action) in scene.buttons.iter().zip([
        ReviewButtonAction::Merge,
        ReviewButtonAction::Discard,
        ReviewButtonAction::Send,
        ReviewButtonAction::Close,
    ]) {
        assert_eq!(view.hit(RECT, RECT.col + b.cols.start, RECT.row), ReviewHit::Button(action));
    }
    assert_eq!(view.hit(RECT, 1, RECT.row), ReviewHit::Inside, "the title");
    assert_eq!(view.hit(RECT, 1, 0), ReviewHit::Outside, "the tab bar");
    assert_eq!(view.hit(RECT, 2, scene.body_row + 2), ReviewHit::File(2));
    assert_eq!(view.hit(RECT, 2, scene.body_row + 7), ReviewHit::Inside, "below the files");
    let rows = view.body_rows(RECT);
    let asks = view.press(ReviewHit::File(1), rows);
    assert!(matches!(&asks[..], [ReviewAsk::Page { path, .. }] if path == "modified.txt"));
    view.press(ReviewHit::Button(ReviewButtonAction::Close), rows);
    assert!(view.closed());
}

#[test]
fn a_task_found_from_the_focused_pane_then_its_files() {
    let (mut view, asks) = ReviewView::find(None, None);
    assert!(matches!(asks[..], [ReviewAsk::Resolve { .. }]));
    assert!(view.scene(RECT).title.contains("finding"));
    assert_eq!(
        view.answer(ReviewAnswer::Resolved(Ok("task_y".into()))),
        vec![
            ReviewAsk::Task { task: "task_y".into() },
            ReviewAsk::Files { task: "task_y".into(), turn: None }
        ]
    );
    assert_eq!(view.task(), Some("task_y"));
    let (mut view, _) = ReviewView::find(None, None);
    view.answer(ReviewAnswer::Resolved(Err("no task to review".into())));
    assert_eq!(view.error(), Some("no task to review"));
    assert!(view.key(ReviewKey::Merge, 10).is_empty(), "no task: nothing to merge");
}

#[test]
fn keys_map_to_the_view() {
    let none = ModifiersState::empty();
    assert_eq!(ReviewKey::of(Key::Named(NamedKey::Escape), none), Some(ReviewKey::Close));
    assert_eq!(ReviewKey::of(Key::Character("m"), none), Some(ReviewKey::Merge));
    assert_eq!(
        ReviewKey::of(Key::Named(NamedKey::Tab), ModifiersState::SHIFT),
        Some(ReviewKey::PrevFile)
    );
    assert_eq!(ReviewKey::of(Key::Character("m"), ModifiersState::CONTROL), None);
    assert_eq!(ReviewKey::of(Key::Character("z"), none), None);
}

#[test]
fn a_long_error_wraps_within_its_rows() {
    let rows = wrap(&"word ".repeat(200), 30, MAX_STATUS_ROWS);
    assert_eq!(rows.len(), MAX_STATUS_ROWS);
    assert!(rows.iter().all(|r| render::str_width(r) <= 30), "{rows:?}");
    assert!(rows[3].ends_with('…'));
    assert_eq!(wrap("short", 30, 4), vec!["short"]);
}

/// Regression: a file whose diff has no hunks (a pure rename) was asked for again and again.
#[test]
fn a_file_without_hunks_is_asked_for_once() {
    let files =
        vec![DiffFile { old_path: Some("a".into()), ..file("b", FileStatus::Renamed, 0, 0) }];
    let (mut view, asks) = ReviewView::open("task_x".into());
    let fetched = serve(&mut view, asks, &files, &|_| Vec::new());
    assert_eq!(fetched, 1);
    let lines = view.scene(RECT).lines;
    assert!(lines[0].text.contains("no line changes"), "{lines:?}");
    assert!(view.key(ReviewKey::PageDown, 10).is_empty());
}

/// Besides merge: squash (S), rebase then fast-forward (r), fast-forward only (f).
#[test]
fn the_other_ways_to_merge_have_their_keys() {
    for (key, how) in [("S", Landing::Squash), ("r", Landing::Rebase), ("f", Landing::FastForward)]
    {
        let mut view = open_five();
        let k = ReviewKey::of(Key::Character(key), ModifiersState::empty()).unwrap();
        assert_eq!(k, ReviewKey::Land(how));
        let asks = view.key(k, 10);
        assert_eq!(asks, vec![ReviewAsk::Land { task: "task_x".into(), how }]);
        view.answer(ReviewAnswer::Finished(Ok(())));
        assert!(view.closed());
    }
}
