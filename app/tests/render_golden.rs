//! Golden images of the renderer: the offscreen renderer on a software adapter (Mesa lavapipe)
//! draws scenes built by feeding bytes into real terminals, and each PNG is compared with a
//! checked-in reference in `tests/golden/` within a small per-pixel tolerance.
//!
//! A failing comparison writes `<name>.actual.png` next to the reference. `BERTH_BLESS=1`
//! rewrites the references. With no GPU adapter the tests fail (CI installs lavapipe); they
//! never pass without drawing. The system's fonts are not loaded, so the images depend only on
//! the bundled font.

// The renderer lives in the `berth` binary; the test compiles the same source.
#[allow(dead_code, unused_imports)]
#[path = "../src/render/mod.rs"]
mod render;

use std::path::PathBuf;

use berth_engine::terminal::{PaneTerminal, SearchQuery, SearchScope, TermSize};
use render::{
    extract, extract_styled_lines, Badge, ButtonTone, CardButton, CellRectU16, CellSpan,
    DecisionCard, HeaderScene, Palette, PaneScene, Progress, ProgressKind, RenderConfig,
    RenderError, Renderer, ReviewButton, ReviewFileRow, ReviewLine, ReviewLineKind, ReviewScene,
    Ring, Scene, SearchScene, SelectionSpan, SidebarButton, SidebarLine, SidebarScene,
    SidebarStyle, SwitcherEntry, SwitcherScene, TabBarScene, TabLabel, TombstoneOverlay,
};

/// A channel may differ by this much and still count as equal.
const CHANNEL_TOLERANCE: u8 = 8;

/// At most this fraction of pixels may differ beyond the tolerance.
const PIXEL_TOLERANCE: f64 = 0.005;

/// Cell size of the bundled font at 15 px: 9 × 20.
const CELL: (u32, u32) = (9, 20);

/// An offscreen renderer of `cols × rows` cells with the bundled font only.
fn renderer(cols: u16, rows: u16) -> Renderer {
    let config = RenderConfig { system_fonts: false, ..RenderConfig::default() };
    let (w, h) = (u32::from(cols) * CELL.0, u32::from(rows) * CELL.1);
    match Renderer::offscreen(w, h, config) {
        Ok(renderer) => renderer,
        Err(err) => panic!(
            "the golden-image tests need a GPU adapter and found none: {err}\n\
             Install Mesa's lavapipe (Debian: libvulkan1 mesa-vulkan-drivers; scripts/test does)."
        ),
    }
}

/// A pane at `rect` whose terminal was fed `bytes`.
fn pane(bytes: &[u8], rect: CellRectU16, title: &str, badge: Badge, focused: bool) -> PaneScene {
    let mut term = PaneTerminal::new(TermSize { cols: rect.cols, rows: rect.rows - 1 }, 100);
    term.feed(bytes);
    PaneScene {
        rect,
        header: HeaderScene {
            title: title.into(),
            badge,
            focused,
            attention: false,
            lifecycle: None,
            progress: None,
        },
        screen: extract(&term, &Palette::dark(), focused),
        focused,
        selection: None,
        ..PaneScene::default()
    }
}

/// A scene of `panes` on a `cols × rows` grid.
fn scene(cols: u16, rows: u16, panes: Vec<PaneScene>, dividers: Vec<CellRectU16>) -> Scene {
    Scene {
        grid_cols: cols,
        grid_rows: rows,
        panes,
        dividers,
        background: Palette::dark().bg,
        ..Scene::default()
    }
}

/// A scene of one focused pane covering the grid.
fn single(cols: u16, rows: u16, title: &str, bytes: &[u8]) -> Scene {
    let rect = CellRectU16::new(0, 0, cols, rows);
    scene(cols, rows, vec![pane(bytes, rect, title, Badge::Live, true)], Vec::new())
}

/// Draws `scene` and compares it with `tests/golden/<name>.png`.
fn check(name: &str, scene: &Scene) {
    let mut renderer = renderer(scene.grid_cols, scene.grid_rows);
    let png = renderer
        .screenshot_png(scene)
        .unwrap_or_else(|err| panic!("{name}: rendering failed: {err}"));
    compare(name, &png);
}

/// Compares PNG bytes with the reference `name`, or writes the reference under `BERTH_BLESS=1`.
fn compare(name: &str, actual_png: &[u8]) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    compare_in(&dir, name, actual_png, PIXEL_TOLERANCE);
}

/// [`compare`] with the reference `<dir>/<name>.png`, at most the fraction `pixel_tolerance`
/// of its pixels differing.
fn compare_in(dir: &std::path::Path, name: &str, actual_png: &[u8], pixel_tolerance: f64) {
    let expected_path = dir.join(format!("{name}.png"));
    let actual_path = dir.join(format!("{name}.actual.png"));
    if std::env::var_os("BERTH_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(dir).expect("create the golden images' dir");
        std::fs::write(&expected_path, actual_png).expect("write the reference image");
        let _ = std::fs::remove_file(&actual_path);
        return;
    }
    let fail = |why: String| -> ! {
        std::fs::write(&actual_path, actual_png).expect("write the actual image");
        panic!(
            "{name}: {why}\n  expected: {}\n  actual:   {}\n  (BERTH_BLESS=1 rewrites the reference)",
            expected_path.display(),
            actual_path.display()
        );
    };
    let Ok(expected_png) = std::fs::read(&expected_path) else { fail("no reference image".into()) };
    let (ew, eh, expected) = decode(&expected_png);
    let (aw, ah, actual) = decode(actual_png);
    if (ew, eh) != (aw, ah) {
        fail(format!("size {aw}×{ah}, reference is {ew}×{eh}"));
    }
    let differing = expected
        .chunks_exact(3)
        .zip(actual.chunks_exact(3))
        .filter(|(e, a)| e.iter().zip(a.iter()).any(|(e, a)| e.abs_diff(*a) > CHANNEL_TOLERANCE))
        .count();
    let total = (ew * eh) as usize;
    if differing as f64 > total as f64 * pixel_tolerance {
        fail(format!("{differing} of {total} pixels differ by more than {CHANNEL_TOLERANCE}"));
    }
    let _ = std::fs::remove_file(&actual_path);
}

/// Decodes an 8-bit RGB or RGBA PNG into RGB pixels.
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a PNG of sane size")];
    let info = reader.next_frame(&mut buf).expect("PNG pixels");
    let pixels = &buf[..info.buffer_size()];
    let rgb = match info.color_type {
        png::ColorType::Rgb => pixels.to_vec(),
        png::ColorType::Rgba => pixels.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect(),
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (info.width, info.height, rgb)
}

#[test]
fn colours_16_256_and_truecolor() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"16 fg: ");
    for i in 0..8 {
        bytes.extend_from_slice(format!("\x1b[{}mA\x1b[{}mB", 30 + i, 90 + i).as_bytes());
    }
    bytes.extend_from_slice(b"\x1b[0m\r\n16 bg: ");
    for i in 0..8 {
        bytes.extend_from_slice(format!("\x1b[{}m \x1b[{}m \x1b[0m", 40 + i, 100 + i).as_bytes());
    }
    bytes.extend_from_slice(b"\r\n256:");
    for row in 0..4 {
        bytes.extend_from_slice(b"\r\n");
        for i in 0..64u16 {
            bytes.extend_from_slice(format!("\x1b[48;5;{}m ", row * 64 + i).as_bytes());
        }
        bytes.extend_from_slice(b"\x1b[0m");
    }
    bytes.extend_from_slice(b"\r\ntruecolor:\r\n");
    for i in 0..64u32 {
        let (r, g, b) = (i * 4, 255 - i * 4, (i * 8) % 256);
        bytes.extend_from_slice(format!("\x1b[48;2;{r};{g};{b}m ").as_bytes());
    }
    bytes.extend_from_slice(
        b"\x1b[0m\r\n\x1b[38;5;208morange 208\x1b[0m \x1b[38;2;120;200;255mtruecolor text\x1b[0m",
    );
    check("colours", &single(64, 12, "colours", &bytes));
}

#[test]
fn attributes() {
    let bytes = concat!(
        "plain \x1b[1mbold\x1b[0m \x1b[3mitalic\x1b[0m \x1b[1;3mbold italic\x1b[0m\r\n",
        "\x1b[4munderline\x1b[0m \x1b[4:2mdouble\x1b[0m \x1b[4:3mcurly\x1b[0m \x1b[4:4mdotted\x1b[0m \x1b[4:5mdashed\x1b[0m\r\n",
        "\x1b[9mstrike\x1b[0m \x1b[7minverse\x1b[0m \x1b[2mdim\x1b[0m [\x1b[8mhidden\x1b[0m] \x1b[4;58;2;255;80;80mred underline\x1b[0m\r\n",
        "\x1b[31;7mred inverse\x1b[0m \x1b[2;32mdim green\x1b[0m \x1b[1;34mbold blue\x1b[0m\r\n",
        "ligatures off: => != -> === <= >= www ::",
    );
    check("attributes", &single(48, 7, "attributes", bytes.as_bytes()));
}

#[test]
fn wide_characters_span_two_cells() {
    // No CJK font is loaded: the bundled font's missing-glyph box stands in, centred on two
    // cells; the red backgrounds show where the two-cell characters sit.
    let bytes = "a\x1b[41m界\x1b[0mb\r\n\x1b[42m中文\x1b[0m|\r\nxx\x1b[44m😀\x1b[0myy";
    check("wide", &single(16, 4, "wide", bytes.as_bytes()));
}

#[test]
fn wide_character_placement_in_pixels() {
    // "a界b" with only the wide character on a red background: in the rendered row, red
    // covers exactly cells 1 and 2 (pixels 9..27), and the 'b' is drawn in cell 3.
    let scene = single(8, 2, "", "\x1b[?25la\x1b[41m界\x1b[0mb".as_bytes());
    let mut renderer = renderer(8, 2);
    let (w, _, rgb) = decode(&renderer.screenshot_png(&scene).expect("render"));
    let y = CELL.1 + 1; // the terminal's first row, one pixel down (glyphs are inset)
    let pixel = |x: u32| {
        let i = ((y * w + x) * 3) as usize;
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    };
    let red = Palette::dark().ansi[1];
    let is_red = |x| pixel(x) == [red.r, red.g, red.b];
    let red_columns: Vec<u32> = (0..w).filter(|&x| is_red(x)).collect();
    assert_eq!(red_columns.first(), Some(&CELL.0), "red starts at cell 1");
    assert_eq!(red_columns.last(), Some(&(3 * CELL.0 - 1)), "red ends with cell 2");
    assert_eq!(red_columns.len() as u32, 2 * CELL.0, "red covers two cells");
    let bg = Palette::dark().bg;
    let ink_in = |cell: u32| {
        (CELL.1..2 * CELL.1).any(|y| {
            (cell * CELL.0..(cell + 1) * CELL.0).any(|x| {
                let i = ((y * w + x) * 3) as usize;
                rgb[i..i + 3] != [bg.r, bg.g, bg.b]
            })
        })
    };
    assert!(ink_in(3), "'b' is drawn in cell 3");
    assert!(!ink_in(4), "nothing is drawn after 'b'");
}

#[test]
fn three_pane_split_with_headers_and_dividers() {
    // A 60×16 grid: pane a on the left (29 cols), a divider column, panes b and c stacked on
    // the right with a divider row between them.
    let a = CellRectU16::new(0, 0, 29, 16);
    let b = CellRectU16::new(30, 0, 30, 8);
    let c = CellRectU16::new(30, 9, 30, 7);
    let mut left =
        pane(b"$ claude\r\n\x1b[32m> working on it\x1b[0m\r\n$ ", a, "claude", Badge::Live, true);
    left.header.attention = false;
    let mut top = pane(
        b"$ cargo test\r\ntest result: \x1b[32mok\x1b[0m",
        b,
        "cargo test",
        Badge::Restored,
        false,
    );
    top.header.attention = true;
    let lines: Vec<String> = ["$ make", "\x1b[31merror\x1b[0m: build failed", "[exit 2]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let bottom = PaneScene {
        rect: c,
        header: HeaderScene {
            title: "a very long title that does not fit".into(),
            badge: Badge::Exited,
            focused: false,
            attention: false,
            lifecycle: None,
            progress: None,
        },
        screen: extract_styled_lines(&lines, c.cols, c.rows - 1, &Palette::dark()),
        focused: false,
        selection: None,
        ..PaneScene::default()
    };
    let dividers = vec![CellRectU16::new(29, 0, 1, 16), CellRectU16::new(30, 8, 30, 1)];
    check("split3", &scene(60, 16, vec![left, top, bottom], dividers));
}

/// A tab bar of three tabs (the second shown, the third with two unread panes) above two
/// panes: the left one working, the right one with an unread notification and its ring.
#[test]
fn tab_bar_with_unread_dots_and_attention_ring() {
    let (cols, rows) = (64u16, 12u16);
    let tab = |title: &str, active: bool, attention: usize, cols: std::ops::Range<u16>| TabLabel {
        title: title.into(),
        active,
        attention,
        cols,
        editing: false,
    };
    let bar = TabBarScene {
        row: 0,
        tabs: vec![
            tab(" 1 build", false, 0, 0..11),
            tab(" 2 agents", true, 0, 12..24),
            tab(" 3 tests", false, 2, 25..39),
        ],
        right: "berth".into(),
    };
    let mut left = pane(
        b"$ cargo test\r\nrunning 12 tests\r\n",
        CellRectU16::new(0, 1, 31, 11),
        "cargo",
        Badge::Live,
        true,
    );
    left.header.lifecycle = Some("▶ working for 2m".into());
    left.header.progress = Some(Progress { kind: ProgressKind::Normal, percent: Some(60) });
    let mut right = pane(
        b"\x1b[32mdone\x1b[0m: ready for review\r\n",
        CellRectU16::new(32, 1, 32, 11),
        "claude",
        Badge::Live,
        false,
    );
    right.header.attention = true;
    right.header.lifecycle = Some("✓ done".into());
    right.ring = Some(Ring::Unread);
    right.header.progress = Some(Progress { kind: ProgressKind::Indeterminate, percent: None });
    let mut s = scene(cols, rows, vec![left, right], vec![CellRectU16::new(31, 1, 1, 11)]);
    s.tab_bar = Some(bar);
    check("tab_bar_ring", &s);
}

/// The three tombstones, each with its badge and overlay (one with a failed resume), and a
/// pane waiting for input with its ring.
#[test]
fn badges_and_tombstone_overlays() {
    let (cols, rows) = (80u16, 24u16);
    let tail: Vec<String> =
        ["$ make", "\x1b[31merror\x1b[0m: build failed", "$ ls", "Cargo.toml  src"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let tomb =
        |rect: CellRectU16, title: &str, badge: Badge, lines: &[&str], error: Option<&str>| {
            let overlay = TombstoneOverlay {
                lines: lines.iter().map(|l| l.to_string()).collect(),
                error: error.map(str::to_owned),
            };
            let tail_rows = rect.rows - 1 - render::overlay_rows(&overlay);
            PaneScene {
                rect,
                header: HeaderScene { title: title.into(), badge, ..HeaderScene::default() },
                screen: extract_styled_lines(&tail, rect.cols, tail_rows, &Palette::dark()),
                overlay: Some(overlay),
                ..PaneScene::default()
            }
        };
    let resumable = tomb(
        CellRectU16::new(0, 0, 40, 12),
        "claude",
        Badge::Resumable,
        &["Enter — resume `claude --resume 3f2a`"],
        None,
    );
    let restored = tomb(
        CellRectU16::new(41, 0, 39, 12),
        "bash",
        Badge::Restored,
        &["Enter — new shell in `~/code/berth`", "was running `cargo test`"],
        None,
    );
    let exited = tomb(
        CellRectU16::new(0, 13, 40, 11),
        "make",
        Badge::Exited,
        &["exited with code 2", "Enter — restart"],
        Some("resume failed: no such file: make"),
    );
    let mut live = pane(
        b"Allow edit to src/main.rs? [y/n] ",
        CellRectU16::new(41, 13, 39, 11),
        "codex",
        Badge::Live,
        false,
    );
    live.ring = Some(Ring::NeedsInput);
    live.header.attention = true;
    live.header.lifecycle = Some("◆ blocked".into());
    let dividers = vec![CellRectU16::new(40, 0, 1, 24), CellRectU16::new(0, 12, 80, 1)];
    check(
        "tombstone_overlays",
        &scene(cols, rows, vec![resumable, restored, exited, live], dividers),
    );
}

/// A resumable tombstone in a pane 24 columns wide: its overlay's line ends in `…` rather
/// than being cut off.
#[test]
fn tombstone_overlay_in_a_narrow_pane() {
    let overlay = TombstoneOverlay {
        lines: vec!["Enter — resume `claude --resume 3f2a9c`".into()],
        error: Some("resume failed: no such file: claude".into()),
    };
    let rect = CellRectU16::new(0, 0, 24, 8);
    let tail = vec!["$ claude".to_string()];
    let tail_rows = rect.rows - 1 - render::overlay_rows(&overlay);
    let pane = PaneScene {
        rect,
        header: HeaderScene {
            title: "claude".into(),
            badge: Badge::Resumable,
            ..HeaderScene::default()
        },
        screen: extract_styled_lines(&tail, rect.cols, tail_rows, &Palette::dark()),
        overlay: Some(overlay),
        ..PaneScene::default()
    };
    check("tombstone_overlay_narrow", &scene(24, 8, vec![pane], Vec::new()));
}

/// The workspace switcher drawn over a pane full of text: nothing of the text shows through.
/// Agents asking permission: on the left a card with the three answers and their chords over
/// the agent's text (none of which shows through it), in the middle one Berth can no longer
/// answer, with its note and no buttons, on the right the first card in a narrow pane, its
/// buttons one under the other.
#[test]
fn decision_cards() {
    let button = |label: &str, keys: &str, tone| CardButton {
        label: label.into(),
        keys: Some(keys.into()),
        tone,
    };
    let mut text = Vec::new();
    for i in 0..18 {
        text.extend_from_slice(
            format!("agent output line {i} xxxxxxxxxxxxxxxxxxxx\r\n").as_bytes(),
        );
    }
    let mut left = pane(&text, CellRectU16::new(0, 0, 59, 20), "claude", Badge::Live, true);
    left.decision = Some(DecisionCard {
        title: "Claude asks to run Bash".into(),
        detail: vec![
            "cargo test --workspace -- --include-ignored".into(),
            "Run every test, the slow ones too".into(),
        ],
        buttons: vec![
            button("Allow once", "Ctrl+Shift+Y", ButtonTone::Allow),
            button("Always allow", "Ctrl+Shift+L", ButtonTone::Always),
            button("Deny", "Ctrl+Shift+N", ButtonTone::Deny),
        ],
        note: None,
    });
    let mut right = pane(&text, CellRectU16::new(60, 0, 40, 20), "codex", Badge::Live, false);
    right.decision = Some(DecisionCard {
        title: "Codex asks to run apply_patch".into(),
        detail: vec!["Edit: src/main.rs".into()],
        buttons: Vec::new(),
        note: Some("Berth can no longer answer this request: answer in Codex's own prompt".into()),
    });
    // A narrow pane: the buttons one under the other.
    let mut narrow = pane(&text, CellRectU16::new(101, 0, 27, 20), "claude", Badge::Live, false);
    narrow.decision = left.decision.clone();
    let dividers = vec![CellRectU16::new(59, 0, 1, 20), CellRectU16::new(100, 0, 1, 20)];
    check("decision_cards", &scene(128, 20, vec![left, right, narrow], dividers));
}

#[test]
fn workspace_switcher_over_text() {
    let (cols, rows) = (60u16, 14u16);
    let text = "x".repeat(59);
    let bytes: Vec<u8> = (0..13).flat_map(|_| format!("{text}\r\n").into_bytes()).collect();
    let mut s = single(cols, rows, "bash", &bytes);
    let entry = |name: &str, detail: &str, attention: usize, current: bool| SwitcherEntry {
        name: name.into(),
        detail: detail.into(),
        attention,
        current,
    };
    s.switcher = Some(SwitcherScene {
        rect: CellRectU16::new(5, 2, 50, 6),
        query: "be".into(),
        entries: vec![
            entry("berth", "~/code/berth  [main]", 0, true),
            entry("berth-site", "~/code/site", 3, false),
            entry("bench", "/tmp/bench", 0, false),
        ],
        selected: 1,
        ..SwitcherScene::default()
    });
    check("switcher", &s);
}

#[test]
fn cursor_shapes() {
    // Four panes side by side: block, beam and underline cursors (DECSCUSR 2, 6, 4) in
    // focused panes, and the hollow cursor of an unfocused pane.
    let cases: [(&[u8], &str, bool); 4] = [
        (b"\x1b[2 qab", "block", true),
        (b"\x1b[6 qab", "beam", true),
        (b"\x1b[4 qab", "underline", true),
        (b"ab", "hollow", false),
    ];
    let mut panes = Vec::new();
    let mut dividers = Vec::new();
    for (i, (bytes, title, focused)) in cases.iter().enumerate() {
        let col = i as u16 * 12;
        panes.push(pane(bytes, CellRectU16::new(col, 0, 11, 3), title, Badge::Live, *focused));
        dividers.push(CellRectU16::new(col + 11, 0, 1, 3));
    }
    check("cursors", &scene(48, 3, panes, dividers));
}

#[test]
fn selection() {
    let mut scene =
        single(30, 5, "selection", b"first line of text\r\nsecond line\r\nthird line here");
    scene.panes[0].selection = Some(SelectionSpan { start: (6, 0), end: (4, 2) });
    check("selection", &scene);
}

#[test]
fn search_highlights() {
    // Matches of "needle" found by the engine's search, one of them wrapped across two rows,
    // the third one current; the bar takes the pane's bottom row. A link is underlined too.
    let (cols, rows) = (32u16, 9u16);
    let mut term = PaneTerminal::new(TermSize { cols, rows: rows - 1 }, 100);
    term.feed(
        concat!(
            "$ grep -n needle notes.txt\r\n",
            "3: a needle in a haystack\r\n",
            "7: \x1b[32mNeedle\x1b[0m and needle again\r\n",
            "9: this long line wraps its needle\r\n",
            "see https://example.org/x\r\n",
            "$ ",
        )
        .as_bytes(),
    );
    let mut query = SearchQuery::new("needle").expect("a valid query");
    let found = term.search_matches(&mut query, SearchScope::View, 100);
    let mut matches = Vec::new();
    let mut current = 0..0;
    for (i, m) in found.iter().enumerate() {
        let spans = term.view_spans(m);
        if i == 2 {
            current = matches.len()..matches.len() + spans.len();
        }
        matches.extend(spans.into_iter().map(|span| CellSpan { row: span.row, cols: span.cols }));
    }
    assert_eq!(found.len(), 5, "{found:?}");
    let mut scene = single(cols, rows, "search", b"");
    scene.panes[0].screen = extract(&term, &Palette::dark(), true);
    scene.panes[0].search = Some(SearchScene {
        query: "needle".into(),
        status: format!("3/{}", found.len()),
        matches,
        current,
    });
    scene.panes[0].link = vec![CellSpan { row: 5, cols: 4..25 }];
    check("search_highlights", &scene);
}

#[test]
fn unchanged_rows_are_not_shaped_again() {
    let mut renderer = renderer(40, 6);
    let scene = single(40, 6, "cache", b"one\r\ntwo\r\nthree\r\nfour");
    let first = renderer.render(&scene).expect("render");
    assert!(first.shaped_rows >= 4, "the first frame shapes every row: {first:?}");
    let again = renderer.render(&scene).expect("render");
    assert_eq!(again.shaped_rows, 0, "an unchanged frame shapes nothing");
    let changed = single(40, 6, "cache", b"one\r\ntwo!\r\nthree\r\nfour");
    let stats = renderer.render(&changed).expect("render");
    // The changed row, and the row the cursor left and entered (the cursor moved by one).
    assert!(stats.shaped_rows <= 2, "only the changed row is shaped again: {stats:?}");
}

#[test]
fn cell_size_follows_the_font_size() {
    let mut renderer = renderer(10, 2);
    assert_eq!(renderer.cell_size(), (CELL.0 as f32, CELL.1 as f32));
    renderer.set_font_size(30.0);
    assert_eq!(renderer.cell_size(), (18.0, 40.0));
    assert!(!renderer.adapter_info().is_empty());
}

/// Run by [`no_adapter_is_a_one_line_error`] in a child process whose environment offers no
/// backend.
#[test]
#[ignore = "run by no_adapter_is_a_one_line_error in a child process"]
fn no_adapter_child() {
    match Renderer::offscreen(
        10,
        10,
        RenderConfig { system_fonts: false, ..RenderConfig::default() },
    ) {
        Err(RenderError::NoAdapter(message)) => {
            assert!(!message.contains('\n'), "one line: {message}");
            println!("NO_ADAPTER: {message}");
        }
        Err(other) => panic!("expected NoAdapter, got {other}"),
        Ok(_) => panic!("expected NoAdapter, got a renderer"),
    }
}

#[test]
fn no_adapter_is_a_one_line_error() {
    // DX12 does not exist on Linux: with only it allowed, no adapter is found.
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args(["--ignored", "--exact", "no_adapter_child", "--nocapture"])
        .env("WGPU_BACKEND", "dx12")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("NO_ADAPTER: no usable GPU adapter"), "{stdout}");
}

/// The window's way in compiles with winit's types, and a renderer can move between threads.
#[allow(dead_code)]
fn window_api_compiles(
    event_loop: &winit::event_loop::ActiveEventLoop,
    window: std::sync::Arc<winit::window::Window>,
) -> Result<Renderer, RenderError> {
    fn is_send<T: Send>() {}
    is_send::<Renderer>();
    let instance = Renderer::instance_for(event_loop.owned_display_handle());
    let size = window.inner_size();
    Renderer::for_window(instance, window, size.width, size.height, RenderConfig::default())
}

/// The colourful screen both themes are drawn with: the 16 colours as text and background,
/// bold, underline and dim text, a selection, a block cursor, and two panes whose headers
/// show focus, attention and two badges.
fn theme_scene(palette: &Palette) -> Scene {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"$ ls --color\r\n");
    for i in 0..8 {
        bytes.extend_from_slice(format!("\x1b[{}mnormal{i}\x1b[0m ", 30 + i).as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    for i in 0..8 {
        bytes.extend_from_slice(format!("\x1b[{}mbright{i}\x1b[0m ", 90 + i).as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    for i in 0..8 {
        bytes.extend_from_slice(format!("\x1b[{}m  \x1b[{}m  \x1b[0m", 40 + i, 100 + i).as_bytes());
    }
    bytes.extend_from_slice(
        b"\r\n\x1b[1mbold\x1b[0m \x1b[4munderline\x1b[0m \x1b[2mdim\x1b[0m \x1b[7minverse\x1b[0m",
    );
    bytes.extend_from_slice(b"\r\nselected text here\r\n$ ");
    let rect = |col, cols| CellRectU16::new(col, 0, cols, 9);
    let mut term = PaneTerminal::new(TermSize { cols: 64, rows: 8 }, 100);
    term.feed(&bytes);
    let main = PaneScene {
        rect: rect(0, 64),
        header: HeaderScene { title: "theme".into(), focused: true, ..HeaderScene::default() },
        screen: extract(&term, palette, true),
        focused: true,
        selection: Some(SelectionSpan { start: (0, 5), end: (7, 5) }),
        ..PaneScene::default()
    };
    let mut side_term = PaneTerminal::new(TermSize { cols: 15, rows: 8 }, 100);
    side_term.feed(b"\x1b[31merror\x1b[0m\r\n[exit 1]");
    let side = PaneScene {
        rect: rect(65, 15),
        header: HeaderScene {
            title: "make".into(),
            badge: Badge::Exited,
            attention: true,
            ..HeaderScene::default()
        },
        screen: extract(&side_term, palette, false),
        ..PaneScene::default()
    };
    Scene {
        grid_cols: 80,
        grid_rows: 9,
        panes: vec![main, side],
        dividers: vec![CellRectU16::new(64, 0, 1, 9)],
        background: palette.bg,
        ..Scene::default()
    }
}

/// Draws `scene` with `palette` and compares it with `tests/golden/<name>.png`.
fn check_with_palette(name: &str, scene: &Scene, palette: Palette) {
    let config = RenderConfig { system_fonts: false, palette, ..RenderConfig::default() };
    let (w, h) = (u32::from(scene.grid_cols) * CELL.0, u32::from(scene.grid_rows) * CELL.1);
    let mut renderer = Renderer::offscreen(w, h, config).expect("an offscreen renderer");
    let png = renderer.screenshot_png(scene).expect("rendering");
    compare(name, &png);
}

#[test]
fn theme_dark() {
    check_with_palette("theme_dark", &theme_scene(&Palette::dark()), Palette::dark());
}

#[test]
fn theme_light() {
    check_with_palette("theme_light", &theme_scene(&Palette::light()), Palette::light());
}

/// The chrome in the light theme: the tab bar with an unread count, a RESUMABLE tombstone with
/// its overlay, a working pane with progress and a waiting pane with its ring.
#[test]
fn chrome_in_the_light_theme() {
    let palette = Palette::light();
    let label = |title: &str, active: bool, attention: usize, cols: std::ops::Range<u16>| {
        TabLabel { title: title.into(), active, attention, cols, editing: false }
    };
    let tail: Vec<String> = ["$ claude", "\x1b[32m●\x1b[0m Done: 3 files changed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let overlay = TombstoneOverlay {
        lines: vec!["Enter — resume `claude --resume 3f2a`".into()],
        error: None,
    };
    let tomb_rect = CellRectU16::new(0, 1, 40, 11);
    let tomb = PaneScene {
        rect: tomb_rect,
        header: HeaderScene {
            title: "claude".into(),
            badge: Badge::Resumable,
            ..HeaderScene::default()
        },
        screen: extract_styled_lines(&tail, 40, 10 - render::overlay_rows(&overlay), &palette),
        overlay: Some(overlay),
        ..PaneScene::default()
    };
    let live = |bytes: &[u8], rect: CellRectU16, title: &str| {
        let mut term = PaneTerminal::new(TermSize { cols: rect.cols, rows: rect.rows - 1 }, 100);
        term.feed(bytes);
        PaneScene {
            rect,
            header: HeaderScene { title: title.into(), ..HeaderScene::default() },
            screen: extract(&term, &palette, false),
            ..PaneScene::default()
        }
    };
    let mut working =
        live(b"$ cargo build\r\n   Compiling berth", CellRectU16::new(41, 1, 39, 5), "cargo");
    working.header.lifecycle = Some("▶ working for 3m".into());
    working.header.progress = Some(Progress { kind: ProgressKind::Normal, percent: Some(40) });
    let mut waiting = live(b"Run rm -rf target? [y/n] ", CellRectU16::new(41, 7, 39, 5), "codex");
    waiting.ring = Some(Ring::NeedsInput);
    waiting.header.attention = true;
    waiting.header.lifecycle = Some("◆ blocked".into());
    let scene = Scene {
        grid_cols: 80,
        grid_rows: 12,
        panes: vec![tomb, working, waiting],
        dividers: vec![CellRectU16::new(40, 1, 1, 11), CellRectU16::new(41, 6, 39, 1)],
        background: palette.bg,
        tab_bar: Some(TabBarScene {
            row: 0,
            tabs: vec![label(" 1 agents", true, 1, 0..15), label(" 2 logs", false, 0, 16..26)],
            right: "berth".into(),
        }),
        ..Scene::default()
    };
    check_with_palette("chrome_light", &scene, palette);
}

#[test]
fn config_error_banner_covers_the_bottom_row() {
    let mut scene = single(60, 5, "banner", b"line one\r\nline two\r\nline three\r\nline four");
    scene.banner = Some(
        "config.toml line 3: font_size: 200 is out of range: expected a font size in pixels \
         from 6 to 72"
            .into(),
    );
    check("config_banner", &scene);
}

#[test]
fn line_height_and_a_missing_family_change_the_cell_as_they_should() {
    let mut renderer = renderer(20, 4);
    assert_eq!(renderer.cell_size(), (CELL.0 as f32, CELL.1 as f32));
    renderer.set_line_height(1.5).expect("line height");
    assert_eq!(renderer.cell_size(), (CELL.0 as f32, (CELL.1 as f32 * 1.5).round()));
    renderer.set_line_height(1.0).expect("line height");
    // The system's fonts are not loaded here, so any other family is missing: the bundled
    // font stays, with the same cell, and the error says so.
    let err = renderer.set_font_family("No Such Family").unwrap_err();
    assert!(err.contains("\"No Such Family\" is not installed"), "{err}");
    assert_eq!(renderer.config().font_family, render::FONT_FAMILY);
    assert_eq!(renderer.cell_size(), (CELL.0 as f32, CELL.1 as f32));
    renderer.set_ligatures(true);
    let scene = single(20, 4, "ligatures", b"a => b != c");
    renderer.render(&scene).expect("a frame with ligatures on");
}

#[test]
fn ligatures_when_turned_on() {
    let scene = single(30, 3, "ligatures", b"a => b != c <= d\r\n-> === ||");
    let config = RenderConfig { system_fonts: false, ligatures: true, ..RenderConfig::default() };
    let mut renderer = Renderer::offscreen(30 * CELL.0, 3 * CELL.1, config).expect("a renderer");
    let on = renderer.screenshot_png(&scene).expect("rendering");
    compare("ligatures_on", &on);
    renderer.set_ligatures(false);
    let off = renderer.screenshot_png(&scene).expect("rendering");
    assert_ne!(on, off, "turning ligatures off changes the glyphs");
}

/// With the system's fonts loaded and the usual fallbacks installed (`scripts/test` installs
/// fonts-noto-cjk and fonts-noto-color-emoji), `漢字` draws as two different glyphs, not the
/// same missing-glyph box twice, and `🦀` in colour: more than two hues inside its cells.
#[test]
fn fallback_fonts_draw_cjk_and_colour_emoji() {
    let db = render::fallback::system_fonts();
    for fallback in &render::fallback::FALLBACKS {
        assert!(
            render::fallback::font_for(&db, fallback).is_some(),
            "no font for {} here: install {} (scripts/test does)",
            fallback.what,
            fallback.package
        );
    }
    let scene = single(10, 2, "", "\x1b[?25l漢字 🦀".as_bytes());
    let config = RenderConfig { system_fonts: true, ..RenderConfig::default() };
    let mut renderer =
        Renderer::offscreen(10 * CELL.0, 2 * CELL.1, config).expect("an offscreen renderer");
    let png = renderer.screenshot_png(&scene).expect("render");
    let (w, _, rgb) = decode(&png);
    // The terminal's first row is the second row of pixels' cells (the first is the header).
    let cells = |from: u32, to: u32| -> Vec<[u8; 3]> {
        let mut out = Vec::new();
        for y in CELL.1..2 * CELL.1 {
            for x in from * CELL.0..to * CELL.0 {
                let i = ((y * w + x) * 3) as usize;
                out.push([rgb[i], rgb[i + 1], rgb[i + 2]]);
            }
        }
        out
    };
    let bg = Palette::dark().bg;
    let ink = |px: &[[u8; 3]]| px.iter().filter(|p| **p != [bg.r, bg.g, bg.b]).count();
    let (kan, ji) = (cells(0, 2), cells(2, 4));
    assert!(ink(&kan) > 20 && ink(&ji) > 20, "both CJK characters have ink");
    assert_ne!(kan, ji, "漢 and 字 draw as different glyphs (a missing-glyph box would repeat)");
    let crab = cells(5, 7);
    // Hue in 10° buckets, of saturated pixels only (the theme's text is grey: no hue). A
    // bucket counts with at least 3 pixels, so an anti-aliased edge alone makes no hue.
    let mut buckets = [0u32; 36];
    for &[r, g, b] in &crab {
        let (max, min) = (r.max(g).max(b), r.min(g).min(b));
        if max < 60 || u16::from(max - min) * 3 < u16::from(max) {
            continue;
        }
        let (r, g, b, span) =
            (f32::from(r), f32::from(g), f32::from(b), f32::from(max) - f32::from(min));
        let hue = if max == r as u8 {
            60.0 * ((g - b) / span).rem_euclid(6.0)
        } else if max == g as u8 {
            60.0 * ((b - r) / span + 2.0)
        } else {
            60.0 * ((r - g) / span + 4.0)
        };
        buckets[((hue / 10.0) as usize).min(35)] += 1;
    }
    let hues = buckets.iter().filter(|&&n| n >= 3).count();
    assert!(hues > 2, "🦀 is drawn in colour: pixels per 10° of hue {buckets:?}");
    compare("fallback_fonts", &png);
}

/// The sidebar beside a pane, under the tab bar, in `palette`: two workspaces, the shown one
/// highlighted with a needs-input dot, a summary, a decision with its buttons and a task; the
/// other with an unread dot, a done agent's last message and a finished task.
fn sidebar_scene(palette: &Palette) -> Scene {
    let line = |text: &str, style: SidebarStyle, ring: Option<Ring>, current: bool| SidebarLine {
        text: text.into(),
        style,
        ring,
        current,
        buttons: Vec::new(),
    };
    let button = |label: &str, cols: std::ops::Range<u16>, tone: ButtonTone| SidebarButton {
        label: label.into(),
        cols,
        tone,
    };
    let mut buttons = line("", SidebarStyle::Decision, None, true);
    buttons.buttons = vec![
        button(" Allow ", 1..8, ButtonTone::Allow),
        button(" Always ", 9..17, ButtonTone::Always),
        button(" Deny ", 18..24, ButtonTone::Deny),
    ];
    let lines = vec![
        line("berth  main *", SidebarStyle::Title, Some(Ring::NeedsInput), true),
        line(" 1 needs input · 2 working", SidebarStyle::Summary, None, true),
        line(" ? asks to run Bash", SidebarStyle::Decision, None, true),
        buttons,
        line("  ▸ fix the parser working 3m", SidebarStyle::Task, None, true),
        line("", SidebarStyle::Blank, None, false),
        line("site  feature/x", SidebarStyle::Title, Some(Ring::Unread), false),
        line(" 1 unread · 1 done", SidebarStyle::Summary, None, false),
        line(" “All 12 tests pass.”", SidebarStyle::Message, None, false),
        line("  ▸ docs completed 1m", SidebarStyle::Task, None, false),
    ];
    let bytes = b"$ cargo test\r\ntest result: ok. 12 passed\r\n$ ";
    let tab = AgentsTab { pane_cols: 48, rows: 14, bytes, attention: 1, right: "berth [1/2]" };
    Scene {
        sidebar: Some(SidebarScene { rect: CellRectU16::new(48, 1, 32, 13), lines }),
        ..tab.scene(palette)
    }
}

/// The tab the sidebar and review goldens draw over: a tab bar with one tab (" 1 agents",
/// with `attention` panes wanting it, `right` at its right end) above one focused `bash` pane
/// `pane_cols` wide showing `bytes`, on a grid 80 columns by `rows`.
struct AgentsTab<'a> {
    pane_cols: u16,
    rows: u16,
    bytes: &'a [u8],
    attention: usize,
    right: &'a str,
}

impl AgentsTab<'_> {
    fn scene(&self, palette: &Palette) -> Scene {
        let mut term =
            PaneTerminal::new(TermSize { cols: self.pane_cols, rows: self.rows - 2 }, 100);
        term.feed(self.bytes);
        let pane = PaneScene {
            rect: CellRectU16::new(0, 1, self.pane_cols, self.rows - 1),
            header: HeaderScene { title: "bash".into(), focused: true, ..HeaderScene::default() },
            screen: extract(&term, palette, true),
            focused: true,
            ..PaneScene::default()
        };
        Scene {
            grid_cols: 80,
            grid_rows: self.rows,
            panes: vec![pane],
            background: palette.bg,
            tab_bar: Some(TabBarScene {
                row: 0,
                tabs: vec![TabLabel {
                    title: " 1 agents".into(),
                    active: true,
                    attention: self.attention,
                    cols: 0..15,
                    editing: false,
                }],
                right: self.right.into(),
            }),
            ..Scene::default()
        }
    }
}

#[test]
fn sidebar_dark() {
    check_with_palette("sidebar_dark", &sidebar_scene(&Palette::dark()), Palette::dark());
}

/// The switcher opened over the sidebar and a pane: regression for fragments of the sidebar's
/// and the pane's text showing around the box. Outside the box every pixel is the backdrop's
/// colour within a small margin (no text shows through).
#[test]
fn switcher_over_the_sidebar_has_a_clean_backdrop() {
    let palette = Palette::dark();
    let mut s = sidebar_scene(&palette);
    let rect = CellRectU16::new(10, 2, 60, 6);
    s.switcher = Some(SwitcherScene {
        rect,
        query: "si".into(),
        entries: vec![SwitcherEntry {
            name: "site".into(),
            detail: "~/code/site  [feature/x]".into(),
            attention: 1,
            current: false,
        }],
        selected: 0,
        ..SwitcherScene::default()
    });
    let config = RenderConfig { system_fonts: false, palette, ..RenderConfig::default() };
    let (w, h) = (u32::from(s.grid_cols) * CELL.0, u32::from(s.grid_rows) * CELL.1);
    let mut renderer = Renderer::offscreen(w, h, config).expect("an offscreen renderer");
    let png = renderer.screenshot_png(&s).expect("rendering");
    let (pw, ph, pixels) = decode(&png);
    let inside = |x: u32, y: u32| {
        let (c0, r0) = (u32::from(rect.col) * CELL.0, u32::from(rect.row) * CELL.1);
        let (c1, r1) = (c0 + u32::from(rect.cols) * CELL.0, r0 + u32::from(rect.rows) * CELL.1);
        // A pixel of margin for the frame's outline.
        x + 1 >= c0 && x <= c1 && y + 1 >= r0 && y <= r1
    };
    let mut bright = 0;
    for y in 0..ph {
        for x in 0..pw {
            if inside(x, y) {
                continue;
            }
            let i = ((y * pw + x) * 3) as usize;
            if pixels[i..i + 3].iter().any(|&c| c > 64) {
                bright += 1;
            }
        }
    }
    assert_eq!(bright, 0, "{bright} pixels of text or sidebar show around the switcher");
    compare("switcher_over_sidebar", &png);
}

#[test]
fn sidebar_light() {
    check_with_palette("sidebar_light", &sidebar_scene(&Palette::light()), Palette::light());
}

/// A task's review view over a tab: the title with its buttons, the keys, five files of each
/// kind with their counts, and a hunk of the selected file with removed and added rows.
fn review_scene(palette: &Palette) -> Scene {
    let file = |mark: char, path: &str, counts: &str, selected: bool| ReviewFileRow {
        mark,
        path: path.into(),
        counts: counts.into(),
        selected,
    };
    let row = |kind: ReviewLineKind, old: Option<u64>, new: Option<u64>, text: &str| ReviewLine {
        kind,
        old,
        new,
        text: text.into(),
        selected: false,
        spans: Vec::new(),
        changed: None,
    };
    let button = |label: &str, cols: std::ops::Range<u16>, tone: ButtonTone| ReviewButton {
        label: label.into(),
        cols,
        tone,
    };
    use ReviewLineKind::{Added, Context, Hunk, Note, Removed};
    let review = ReviewScene {
        rect: CellRectU16::new(0, 1, 80, 17),
        title: "Review task_3f2a · 5 files +14 −6".into(),
        buttons: vec![
            button(" Merge m ", 46..55, ButtonTone::Allow),
            button(" Discard d ", 56..67, ButtonTone::Deny),
            button(" Close Esc ", 68..79, ButtonTone::Always),
        ],
        header: Vec::new(),
        status: vec!["merging berth/fix into main conflicts in: src/parse.rs".into()],
        error: true,
        body_row: 3,
        list_cols: 26,
        files: vec![
            file('A', "docs/new.md", "+9 −0", false),
            file('M', "src/parse.rs", "+4 −2", true),
            file('D', "old.txt", "+0 −3", false),
            file('R', "a.rs → b.rs", "+1 −1", false),
            file('A', "logo.png", "binary", false),
        ],
        lines: vec![
            row(Hunk, None, None, "@@ -10,6 +10,8 @@ fn parse(input: &str)"),
            row(Context, Some(10), Some(10), "    let mut out = Vec::new();"),
            row(Context, Some(11), Some(11), "    for line in input.lines() {"),
            row(Removed, Some(12), None, "        out.push(line);"),
            row(Removed, Some(13), None, "    }"),
            row(Added, None, Some(12), "        out.push(line.trim());"),
            row(Added, None, Some(13), "    }"),
            row(Added, None, Some(14), "    out.dedup();"),
            row(Added, None, Some(15), "    out.sort();"),
            row(Context, Some(14), Some(16), "    out"),
            row(Note, None, None, "loading hunk 2…"),
        ],
    };
    let tab = AgentsTab {
        pane_cols: 80,
        rows: 18,
        bytes: b"$ cargo test\r\n",
        attention: 0,
        right: "berth",
    };
    Scene { review: Some(review), ..tab.scene(palette) }
}

#[test]
fn review_dark() {
    check_with_palette("review_dark", &review_scene(&Palette::dark()), Palette::dark());
}

#[test]
fn review_light() {
    check_with_palette("review_light", &review_scene(&Palette::light()), Palette::light());
}

/// Text in each ANSI colour reads on both themes' backgrounds, as drawn: a full block (█) in
/// each colour but black on the dark theme and the whites on the light one, its middle pixel
/// read back from the image at 4.5:1 or more against the background's pixel (WCAG AA). The
/// dark theme's blue was xterm's #0000ee, 1.8:1.
#[test]
fn ansi_text_reads_on_both_themes() {
    for (name, palette, except) in
        [("dark", Palette::dark(), &[0][..]), ("light", Palette::light(), &[7, 15][..])]
    {
        let mut bytes = Vec::new();
        for i in 0..16 {
            let sgr = if i < 8 { 30 + i } else { 90 + i - 8 };
            bytes.extend_from_slice(format!("\x1b[{sgr}m\u{2588}\x1b[0m ").as_bytes());
        }
        let (cols, rows) = (32u16, 3u16);
        let rect = CellRectU16::new(0, 0, cols, rows);
        let mut term = PaneTerminal::new(TermSize { cols, rows: rows - 1 }, 10);
        term.feed(&bytes);
        let pane = PaneScene {
            rect,
            header: HeaderScene { title: "ansi".into(), ..HeaderScene::default() },
            screen: extract(&term, &palette, false),
            ..PaneScene::default()
        };
        let scene = Scene {
            grid_cols: cols,
            grid_rows: rows,
            panes: vec![pane],
            background: palette.bg,
            ..Scene::default()
        };
        let config = RenderConfig {
            system_fonts: false,
            palette: palette.clone(),
            ..RenderConfig::default()
        };
        let (w, h) = (u32::from(cols) * CELL.0, u32::from(rows) * CELL.1);
        let mut renderer = Renderer::offscreen(w, h, config).expect("an offscreen renderer");
        let png = renderer.screenshot_png(&scene).expect("rendering");
        let (width, _, rgb) = decode(&png);
        let pixel = |x: u32, y: u32| {
            let at = ((y * width + x) * 3) as usize;
            render::Rgb::new(rgb[at], rgb[at + 1], rgb[at + 2])
        };
        // The first screen row is below the header row; each colour takes two cells.
        let y = CELL.1 + CELL.1 / 2;
        let bg = pixel(CELL.0 + CELL.0 / 2, y);
        assert_eq!(bg, palette.bg, "{name}: the blank cell between two blocks");
        for i in (0..16).filter(|i| !except.contains(i)) {
            let drawn = pixel(u32::try_from(i).expect("small") * 2 * CELL.0 + CELL.0 / 2, y);
            let ratio = drawn.contrast(bg);
            assert!(
                ratio >= render::MIN_CONTRAST,
                "{name} theme, ANSI colour {i}: drawn {drawn:?} on {bg:?} is {ratio:.2}:1"
            );
        }
    }
}

/// The window as the user guide and the README show it (`docs/src/images/window.png`): a tab
/// bar of two tabs, three panes in splits (claude asking to run a command, its card with the
/// three answers; `cargo test` done; a `git log`), and the sidebar with that request's buttons
/// and a second workspace's unread message. Drawn by the renderer as the window draws it, so
/// the picture changes when the look does: `BERTH_BLESS=1` rewrites it, and a person looks at
/// it before committing.
#[test]
fn guide_screenshot() {
    let palette = Palette::dark();
    let (cols, rows) = (120, 30);
    let mut claude_out = Vec::new();
    // Five rows under the card (which covers the top of the pane's screen), then claude's work
    // and its own permission prompt at the bottom, which the card leaves visible.
    claude_out.extend_from_slice(b"\r\n\r\n\r\n\r\n\r\n");
    claude_out.extend_from_slice(
        b"\x1b[1m> \x1b[0mThe parser test fails on a trailing comma. Fix it.\r\n\r\n\
          \x1b[35m\xe2\x97\x8f\x1b[0m I'll read the parser first.\r\n\r\n\
          \x1b[32m\xe2\x97\x8f\x1b[0m Read(src/parse.rs)\r\n\
          \x1b[2m  \xe2\x94\x94 Read 214 lines\x1b[0m\r\n\r\n\
          \x1b[35m\xe2\x97\x8f\x1b[0m The list rule stops at ',' before ']'.\r\n\
          \x20 Adding the case, then running the tests.\r\n\r\n\
          \x1b[32m\xe2\x97\x8f\x1b[0m Update(src/parse.rs)\r\n\
          \x1b[2m  \xe2\x94\x94 Updated with 3 additions\x1b[0m\r\n\r\n\
          \x1b[1mBash\x1b[0m(cargo test -p parser)\r\n\
          \x20 Do you want to proceed?\r\n\
          \x1b[36m > 1. Yes\x1b[0m\r\n\
          \x20  2. No, and tell Claude what to do differently\r\n",
    );
    let a = CellRectU16::new(0, 1, 55, 29);
    let mut left = PaneScene {
        rect: a,
        header: HeaderScene {
            title: "claude".into(),
            focused: true,
            lifecycle: Some("◆ blocked".into()),
            ..HeaderScene::default()
        },
        ..pane(&claude_out, a, "claude", Badge::Live, true)
    };
    let button = |label: &str, keys: &str, tone| CardButton {
        label: label.into(),
        keys: Some(keys.into()),
        tone,
    };
    left.decision = Some(DecisionCard {
        title: "Claude asks to run Bash".into(),
        detail: vec!["cargo test -p parser".into(), "Run the parser's tests".into()],
        buttons: vec![
            button("Allow once", "Ctrl+Shift+Y", ButtonTone::Allow),
            button("Always allow", "Ctrl+Shift+L", ButtonTone::Always),
            button("Deny", "Ctrl+Shift+N", ButtonTone::Deny),
        ],
        note: None,
    });
    let b = CellRectU16::new(56, 1, 32, 14);
    let mut top = pane(
        b"$ cargo test -q\r\n\r\nrunning 12 tests\r\n............\r\n\
          test result: \x1b[32mok\x1b[0m. 12 passed\r\n$ ",
        b,
        "bash",
        Badge::Live,
        false,
    );
    top.header.lifecycle = Some("✓ done".into());
    let c = CellRectU16::new(56, 16, 32, 14);
    let mut bottom = pane(
        b"$ git log --oneline -4\r\n\x1b[33m3f2a91c\x1b[0m parser: lists\r\n\
          \x1b[33m8b07d44\x1b[0m lexer: spans\r\n\x1b[33m1c9e0aa\x1b[0m cli: --json\r\n\
          \x1b[33m52d3f18\x1b[0m first commit\r\n$ ",
        c,
        "bash",
        Badge::Restored,
        false,
    );
    bottom.header.lifecycle = Some("◇ idle".into());
    let dividers = vec![CellRectU16::new(55, 1, 1, 29), CellRectU16::new(56, 15, 32, 1)];
    let line = |text: &str, style: SidebarStyle, ring: Option<Ring>, current: bool| SidebarLine {
        text: text.into(),
        style,
        ring,
        current,
        buttons: Vec::new(),
    };
    let sidebar_button = |label: &str, cols: std::ops::Range<u16>, tone: ButtonTone| {
        SidebarButton { label: label.into(), cols, tone }
    };
    let mut buttons = line("", SidebarStyle::Decision, None, true);
    buttons.buttons = vec![
        sidebar_button(" Allow ", 1..8, ButtonTone::Allow),
        sidebar_button(" Always ", 9..17, ButtonTone::Always),
        sidebar_button(" Deny ", 18..24, ButtonTone::Deny),
    ];
    let lines = vec![
        line("parser  main *", SidebarStyle::Title, Some(Ring::NeedsInput), true),
        line(" 1 needs input · 1 done", SidebarStyle::Summary, None, true),
        line(" ? asks to run Bash", SidebarStyle::Decision, None, true),
        buttons,
        line("", SidebarStyle::Blank, None, false),
        line("site  feature/docs", SidebarStyle::Title, Some(Ring::Unread), false),
        line(" 1 unread · 1 done", SidebarStyle::Summary, None, false),
        line(" “The docs build cleanly.”", SidebarStyle::Message, None, false),
    ];
    let tab = |title: &str, active: bool, attention: usize, cols: std::ops::Range<u16>| TabLabel {
        title: title.into(),
        active,
        attention,
        cols,
        editing: false,
    };
    let scene = Scene {
        tab_bar: Some(TabBarScene {
            row: 0,
            tabs: vec![tab(" 1 parser", true, 1, 0..15), tab(" 2 server", false, 0, 15..30)],
            right: "parser  ● 1 elsewhere".into(),
        }),
        sidebar: Some(SidebarScene { rect: CellRectU16::new(88, 1, 32, 29), lines }),
        ..scene(cols, rows, vec![left, top, bottom], dividers)
    };
    let config = RenderConfig { system_fonts: false, palette, ..RenderConfig::default() };
    let (w, h) = (u32::from(cols) * CELL.0, u32::from(rows) * CELL.1);
    let mut renderer = Renderer::offscreen(w, h, config).expect("an offscreen renderer");
    let png = renderer.screenshot_png(&scene).expect("rendering");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/src/images");
    // Tighter than the other goldens: a changed word on the card (a few hundred pixels of
    // 648,000) must fail, so that the picture in the README never goes stale.
    compare_in(&dir, "window", &png, 0.0001);
}
