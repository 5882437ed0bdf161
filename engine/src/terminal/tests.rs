//! Unit tests of `PaneTerminal`: events, text, `content_seq` and hostile input.

use proptest::prelude::*;

use super::*;
use crate::osc::{MAX_CAPTURE_BYTES, MAX_SHORT_OSC_BYTES};
use alacritty_terminal::vte::ansi::NamedColor;

const SIZE: TermSize = TermSize { cols: 80, rows: 24 };

fn terminal() -> PaneTerminal {
    PaneTerminal::new(SIZE, DEFAULT_SCROLLBACK)
}

fn fed(bytes: &[u8]) -> PaneTerminal {
    let mut term = terminal();
    term.feed(bytes);
    term
}

fn read(term: &PaneTerminal, since: Option<u64>, last: Option<usize>) -> ReadResult {
    term.read(&ReadRequest { since, last, ansi: false })
}

fn cursor(term: &PaneTerminal) -> (i32, usize) {
    let point = term.term().grid().cursor.point;
    (point.line.0, point.column.0)
}

/// Feeds `count` lines `line N` with a chosen chunk size.
fn feed_numbered_lines(term: &mut PaneTerminal, count: usize, chunk: usize) {
    let text: String = (0..count).map(|n| format!("line {n}\r\n")).collect();
    for piece in text.as_bytes().chunks(chunk) {
        term.feed(piece);
    }
}

#[test]
fn pane_terminal_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<PaneTerminal>();
}

#[test]
fn title_comes_from_osc_0_and_2() {
    let mut term = fed(b"\x1b]0;first\x07");
    assert_eq!(term.title(), Some("first"));
    term.feed(b"\x1b]2;second\x1b\\");
    assert_eq!(term.title(), Some("second"));
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::Title(Some("first".to_owned())),
            TerminalEvent::Title(Some("second".to_owned()))
        ]
    );
    // Push, set, pop: the popped title comes back as an event.
    term.feed(b"\x1b[22t\x1b]2;third\x07\x1b[23t");
    assert_eq!(term.title(), Some("second"));
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::Title(Some("third".to_owned())),
            TerminalEvent::Title(Some("second".to_owned()))
        ]
    );
    assert!(term.take_events().is_empty());
}

#[test]
fn cwd_comes_from_osc_7() {
    let mut term = fed(b"\x1b]7;file://box/home/u/my%20project\x07$ ");
    assert_eq!(term.cwd(), Some("/home/u/my project"));
    assert_eq!(term.take_events(), vec![TerminalEvent::Cwd("/home/u/my project".to_owned())]);
    assert_eq!(term.screen_lines(false), vec!["$"]);
}

#[test]
fn notifications_and_progress_are_reported() {
    let mut term = fed(b"\x1b]9;done\x07\x1b]9;4;1;40\x07\x1b]777;notify;T;B\x1b\\\x1b]99;;hi\x07");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::Notify { kind: 9, payload: b"done".to_vec() },
            // Progress goes to the notification parser, which makes progress of it.
            TerminalEvent::Notify { kind: 9, payload: b"4;1;40".to_vec() },
            TerminalEvent::Notify { kind: 777, payload: b"notify;T;B".to_vec() },
            TerminalEvent::Notify { kind: 99, payload: b";hi".to_vec() },
        ]
    );
}

#[test]
fn queries_produce_replies_to_write_back() {
    let cases: &[(&[u8], &[u8])] = &[
        (b"ab\x1b[6n", b"\x1b[1;3R"),
        (b"\r\n\r\nxyz\x1b[6n", b"\x1b[3;4R"),
        (b"\x1b[c", b"\x1b[?62;6;22c"),
        (b"\x1b[5n", b"\x1b[0n"),
        (b"\x1b]11;?\x07", b"\x1b]11;rgb:1c1c/1c1c/1c1c\x07"),
        (b"\x1b]10;?\x1b\\", b"\x1b]10;rgb:d8d8/d8d8/d8d8\x1b\\"),
    ];
    for (input, reply) in cases {
        let mut term = fed(input);
        assert_eq!(
            term.take_events(),
            vec![TerminalEvent::PtyWrite(reply.to_vec())],
            "reply to {input:?}"
        );
    }
}

#[test]
fn bell_is_an_event() {
    let mut term = fed(b"ding\x07");
    assert_eq!(term.take_events(), vec![TerminalEvent::Bell]);
}

#[test]
fn app_cursor_follows_decckm() {
    let mut term = terminal();
    assert!(!term.app_cursor());
    term.feed(b"\x1b[?1h");
    assert!(term.app_cursor());
    term.feed(b"\x1b[?1l");
    assert!(!term.app_cursor());
}

/// `pane.submit` brackets a prompt only for a program that asked (DECSET 2004).
#[test]
fn bracketed_paste_follows_decset_2004() {
    let mut term = terminal();
    assert!(!term.bracketed_paste());
    term.feed(b"\x1b[?2004h");
    assert!(term.bracketed_paste());
    term.feed(b"\x1b[?2004l");
    assert!(!term.bracketed_paste());
}

#[test]
fn ansi_text_has_sgr_only_where_the_style_changes() {
    let cases: &[(&[u8], &str, &str)] = &[
        (b"plain", "plain", "plain"),
        (b"\x1b[31mred\x1b[0m ok", "red ok", "\x1b[31mred\x1b[0m ok"),
        (b"\x1b[1;3;4mx\x1b[22my", "xy", "\x1b[1;3;4mx\x1b[0;3;4my\x1b[0m"),
        (
            b"\x1b[38;5;208ma\x1b[48;2;1;2;3mb",
            "ab",
            "\x1b[38;5;208ma\x1b[0;38;5;208;48;2;1;2;3mb\x1b[0m",
        ),
        (b"\x1b[92;104mB\x1b[m", "B", "\x1b[92;104mB\x1b[0m"),
        (b"\x1b[2;7;8;9mz", "z", "\x1b[2;7;8;9mz\x1b[0m"),
        (b"\x1b[4:3;58;5;1mc\x1b[4:2md", "cd", "\x1b[4:3;58;5;1mc\x1b[0;4:2;58;5;1md\x1b[0m"),
        // Trailing blank cells with a background colour are kept; default ones are not.
        (b"a\x1b[41m  \x1b[0m   ", "a", "a\x1b[41m  \x1b[0m"),
    ];
    for (input, plain, ansi) in cases {
        let term = fed(input);
        assert_eq!(term.screen_lines(false), vec![plain.to_string()], "plain {input:?}");
        assert_eq!(term.screen_lines(true), vec![ansi.to_string()], "ansi {input:?}");
    }
}

#[test]
fn wide_and_combining_characters_render_once() {
    let term = fed("中文 e\u{301}!".as_bytes());
    assert_eq!(term.screen_lines(false), vec!["中文 e\u{301}!"]);
    // A wide character that does not fit in the last column wraps, leaving a spacer behind.
    let mut narrow = PaneTerminal::new(TermSize { cols: 5, rows: 3 }, 10);
    narrow.feed("abcd中".as_bytes());
    assert_eq!(narrow.screen_lines(false), vec!["abcd", "中"]);
}

#[test]
fn resize_reflows_a_wrapped_line() {
    let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 5 }, 100);
    let long: String = ('a'..='z').chain('A'..='Z').collect();
    term.feed(long.as_bytes());
    assert_eq!(term.screen_lines(false), vec![&long[..20], &long[20..40], &long[40..]]);
    term.resize(TermSize { cols: 60, rows: 5 });
    assert_eq!(term.size(), TermSize { cols: 60, rows: 5 });
    assert_eq!(term.screen_lines(false), vec![long.clone()]);
    // Narrowing wraps the line again; alacritty keeps the cursor's row and pushes the first
    // half into the history.
    term.resize(TermSize { cols: 26, rows: 5 });
    assert_eq!(read(&term, None, Some(2)).lines, vec![&long[..26], &long[26..]]);
}

#[test]
fn resize_clamps_to_two_columns() {
    let mut term = terminal();
    term.resize(TermSize { cols: 0, rows: 0 });
    assert_eq!(term.size(), TermSize { cols: 2, rows: 1 });
    term.feed("中中\u{301}x".as_bytes());
    let (line, column) = cursor(&term);
    assert_eq!(line, 0);
    assert!(column < 2);
}

#[test]
fn content_seq_is_exact_past_the_history_cap() {
    for chunk in [64 * 1024, 4096, 1000, 17] {
        let mut term = terminal();
        feed_numbered_lines(&mut term, 20_000, chunk);

        // The last line printed is `line 19999` with seq 19999; the cursor sits below it.
        let last = read(&term, None, Some(3));
        assert_eq!(last.lines, vec!["line 19997", "line 19998", "line 19999"]);
        assert_eq!(last.first_seq, 19_997);
        assert_eq!(last.next_seq, 20_000);
        assert!(last.truncated, "3 of the lines held were requested: the rest are cut");

        let since = read(&term, Some(19_990), None);
        assert_eq!(since.first_seq, 19_990);
        assert_eq!(since.lines.len(), 10);
        assert_eq!(since.lines[0], "line 19990");
        assert!(!since.truncated);

        // The ring keeps DEFAULT_SCROLLBACK lines of history above the 23 rows in use.
        let all = read(&term, Some(0), None);
        assert!(all.truncated);
        assert_eq!(all.oldest_seq, 20_000 - 23 - DEFAULT_SCROLLBACK as u64);
        assert_eq!(all.first_seq, all.oldest_seq);
        assert_eq!(all.lines.len(), DEFAULT_SCROLLBACK + 23);
        for (offset, line) in all.lines.iter().enumerate() {
            assert_eq!(line, &format!("line {}", all.first_seq + offset as u64));
        }

        // The Term holds at most the ring plus the trim slack.
        let history = term.term().grid().history_size();
        assert!((DEFAULT_SCROLLBACK..=DEFAULT_SCROLLBACK + seq::TRIM_SLACK).contains(&history));
    }
}

#[test]
fn content_seq_counts_big_scrolls_exactly() {
    // `CSI 24 S` scrolls a whole screen into history in five bytes: 2000 of them are 48000
    // lines in 10 KB, far past the history cap, and every one must be counted.
    let mut term = fed(b"top\r\n");
    let before = read(&term, None, Some(1));
    assert_eq!(before.next_seq, 1);
    term.feed(&b"\x1b[24S".repeat(2000));
    assert_eq!(read(&term, None, Some(1)).next_seq, 1 + 48_000);

    // Repeat (`CSI n b`) wraps many lines from a few bytes.
    let mut term = PaneTerminal::new(TermSize { cols: 10, rows: 4 }, 50);
    term.feed(b"x");
    for _ in 0..100 {
        term.feed(b"\x1b[65535b");
    }
    // 1 + 100 * 65535 characters fill rows of 10; the cursor's row is the last one.
    let characters = 1 + 100 * 65_535u64;
    let expected = (characters - 1) / 10;
    assert_eq!(read(&term, None, None).next_seq, expected);
}

#[test]
fn content_seq_is_the_same_for_every_chunking_of_sync_updates() {
    let mut input = Vec::new();
    for n in 0..3000 {
        input.extend_from_slice(format!("\x1b[?2026h{n}\r\n\x1b[?2026l").as_bytes());
    }
    let reference = fed(&input);
    for chunk in [1, 7, 4096] {
        let mut term = terminal();
        for piece in input.chunks(chunk) {
            term.feed(piece);
        }
        term.flush_sync();
        assert_eq!(read(&term, Some(0), None), read(&reference, Some(0), None));
    }
}

#[test]
fn alternate_screen_does_not_count() {
    let mut term = terminal();
    feed_numbered_lines(&mut term, 50, 4096);
    let before = read(&term, None, Some(1));
    assert_eq!(before.next_seq, 50);

    term.feed(b"\x1b[?1049h");
    assert!(term.alt_screen());
    feed_numbered_lines(&mut term, 100, 4096);
    let inside = read(&term, Some(0), None);
    assert!(inside.truncated, "the primary history is hidden");
    assert_eq!(inside.oldest_seq, 50 - 23);
    assert_eq!(inside.lines.last().map(String::as_str), Some("line 99"));

    term.feed(b"\x1b[?1049l");
    assert!(!term.alt_screen());
    let after = read(&term, None, Some(1));
    assert_eq!(after.next_seq, 50);
    assert_eq!(after.lines, vec!["line 49"]);
}

/// The alternate screen's grid exists only while it is used (it cost every pane 24 bytes a
/// cell); entering, drawing, resizing and leaving behave as before, the saved cursor included.
#[test]
fn alternate_screen_grid_is_allocated_only_while_in_use() {
    let mut term = terminal();
    let alt_cells = |t: &mut PaneTerminal| {
        t.term.swap_alt();
        let cells = t.term.grid().columns() * t.term.grid().screen_lines();
        t.term.swap_alt();
        cells
    };
    assert_eq!(alt_cells(&mut term), 2, "a new terminal holds only a placeholder");
    term.feed(b"primary[5;7H7[1;1H");
    term.feed(b"[?1049h[10;20Hfull screen app");
    assert!(term.alt_screen());
    assert_eq!(term.term().grid().screen_lines(), 24);
    assert_eq!(term.term().grid().columns(), 80);
    assert_eq!(cursor(&term), (9, 34));
    assert!(read(&term, None, None).lines[9].ends_with("full screen app"));
    term.resize(TermSize { cols: 100, rows: 30 });
    term.feed(b"[30;100Hx");
    assert_eq!(cursor(&term), (29, 99));
    term.feed(b"[?1049l");
    assert!(!term.alt_screen());
    assert_eq!(cursor(&term), (0, 0), "leaving restores the cursor saved on entry");
    assert_eq!(read(&term, None, None).lines[0], "primary");
    term.feed(b"8");
    assert_eq!(cursor(&term), (0, 0), "DECRC after leaving: as alacritty leaves it");
    term.resize(TermSize { cols: 90, rows: 20 });
    assert_eq!(alt_cells(&mut term), 2, "released after leaving and after a resize");
    term.feed(b"[?1049h");
    assert_eq!(read(&term, None, None).lines.iter().filter(|l| !l.is_empty()).count(), 0);
    term.feed(b"c");
    assert!(!term.alt_screen());
    assert_eq!(alt_cells(&mut term), 2, "released after a reset");
}

#[test]
fn clearing_scrollback_drops_lines_without_renumbering() {
    let mut term = terminal();
    feed_numbered_lines(&mut term, 100, 4096);
    term.feed(b"\x1b[3J");
    let result = read(&term, Some(0), None);
    assert!(result.truncated);
    assert_eq!(result.oldest_seq, 100 - 23);
    assert_eq!(result.first_seq, 77);
    assert_eq!(result.lines[0], "line 77");
    assert_eq!(result.next_seq, 100);

    // Clearing the screen scrolls it into history: numbers keep growing.
    term.feed(b"\x1b[H\x1b[2J");
    term.feed(b"fresh");
    let result = read(&term, None, Some(2));
    assert_eq!(result.lines, vec!["line 99", "fresh"]);
    assert_eq!(result.next_seq, 100);
}

#[test]
fn since_polling_sees_every_line_once() {
    let mut term = terminal();
    let mut seen = Vec::new();
    let mut next = 0;
    for n in 0..300 {
        term.feed(format!("out {n}\r\n").as_bytes());
        if n % 7 == 0 {
            let result = read(&term, Some(next), None);
            assert!(!result.truncated);
            assert_eq!(result.first_seq, next);
            seen.extend(result.lines);
            next = result.next_seq;
        }
    }
    let result = read(&term, Some(next), None);
    seen.extend(result.lines);
    let expected: Vec<String> = (0..300).map(|n| format!("out {n}")).collect();
    assert_eq!(seen, expected);
}

#[test]
fn resize_never_lowers_the_cursor_number() {
    let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 6 }, 100);
    for n in 0..40 {
        term.feed(format!("{n:02} {}\r\n", "w".repeat(30)).as_bytes());
    }
    let mut next = read(&term, None, None).next_seq;
    for (cols, rows) in [(40, 6), (10, 3), (80, 30), (20, 6), (7, 2)] {
        term.resize(TermSize { cols, rows });
        let now = read(&term, None, None).next_seq;
        assert!(now >= next, "{cols}x{rows}: {now} < {next}");
        next = now;
    }
}

#[test]
fn read_of_the_screen_and_of_an_empty_range() {
    let term = fed(b"one\r\ntwo\r\n");
    let screen = read(&term, None, None);
    assert_eq!(screen.lines, vec!["one", "two"]);
    assert_eq!(screen.first_seq, 0);
    assert_eq!(screen.next_seq, 2);
    assert!(!screen.truncated);

    let future = read(&term, Some(50), None);
    assert!(future.lines.is_empty());
    assert_eq!(future.first_seq, 50);
    let huge = read(&term, Some(u64::MAX), Some(usize::MAX));
    assert!(huge.lines.is_empty());
    assert_eq!(read(&term, None, Some(0)).lines, Vec::<String>::new());
    assert!(!read(&term, None, Some(10)).truncated, "nothing was ever dropped");
}

#[test]
fn unterminated_osc_of_100_mib_stays_bounded() {
    let mut term = terminal();
    term.feed(b"\x1b]0;");
    let chunk = vec![b'a'; 64 * 1024];
    for _ in 0..(100 * 1024 * 1024 / chunk.len()) {
        term.feed(&chunk);
        assert!(term.scanner.string_len() <= MAX_SHORT_OSC_BYTES);
        assert!(term.scanner.buffer_capacity() <= MAX_CAPTURE_BYTES);
        assert!(term.scratch.capacity() <= chunk.len());
    }
    term.feed(b"\x07hello");
    assert_eq!(term.screen_lines(false), vec!["hello"]);
    assert_eq!(term.title().map(str::len), Some(MAX_SHORT_OSC_BYTES - 2));
}

#[test]
fn hostile_inputs_do_not_panic() {
    let mut colons = b"\x1b[".to_vec();
    colons.extend(std::iter::repeat_n(b':', 100_000));
    colons.push(b'x');

    let mut dcs = b"\x1bP".to_vec();
    for n in 0..1000 {
        dcs.extend_from_slice(format!("{n};").as_bytes());
    }
    dcs.extend_from_slice(b"q#0;2;0;0;0~~~~\x1b\\");

    let mut params = b"\x1b[".to_vec();
    for _ in 0..10_000 {
        params.extend_from_slice(b"99999;");
    }
    params.push(b'm');

    let sync = b"\x1b[?2026h".repeat(10_000);

    for input in [&colons, &dcs, &params, &sync] {
        let mut term = terminal();
        term.feed(input);
        term.flush_sync();
        term.feed(b"\x1b[0malive");
        assert_eq!(term.screen_lines(false), vec!["alive"]);
    }

    // Without a flush, a synchronized update holds output back until its deadline.
    // The update is restarted in the same call as the text, so a slow machine cannot let its
    // deadline pass in between.
    let mut term = fed(&sync);
    term.feed(b"\x1b[?2026hheld");
    assert!(term.sync_deadline().is_some());
    assert!(term.screen_lines(false).is_empty());
    term.flush_sync();
    assert_eq!(term.screen_lines(false), vec!["held"]);
    assert!(term.sync_deadline().is_none());
}

#[test]
fn pending_events_are_bounded() {
    let mut term = fed(&b"\x07".repeat(MAX_PENDING_EVENTS + 100));
    assert_eq!(term.take_events().len(), MAX_PENDING_EVENTS);
}

/// Bytes that are likely to hit escape-sequence paths.
fn hostile_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => any::<u8>(),
        2 => prop::sample::select(b"\x1b[];:?0123456789PX^_\\\x07\x18\x1a\x9c\r\n\x08\t".to_vec()),
        1 => prop::sample::select(b"mHJKSTbLMPr@hlnc".to_vec()),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Feed(Vec<u8>),
    Resize(u16, u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => prop::collection::vec(hostile_byte(), 0..400).prop_map(Step::Feed),
        1 => (0u16..120, 0u16..50).prop_map(|(cols, rows)| Step::Resize(cols, rows)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_and_resizes_keep_the_cursor_in_the_grid(
        steps in prop::collection::vec(step(), 1..40),
        ring in 0usize..40,
    ) {
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 8 }, ring);
        let mut next = 0;
        for step in steps {
            match step {
                Step::Feed(bytes) => term.feed(&bytes),
                Step::Resize(cols, rows) => {
                    let before = read(&term, None, None).next_seq;
                    term.resize(TermSize { cols, rows });
                    prop_assert!(read(&term, None, None).next_seq >= before);
                },
            }
            let size = term.size();
            let (line, column) = cursor(&term);
            prop_assert!(line >= 0 && line < i32::from(size.rows));
            prop_assert!(column < usize::from(size.cols));
            prop_assert_eq!(term.term().grid().columns(), usize::from(size.cols));
            prop_assert_eq!(term.term().grid().screen_lines(), usize::from(size.rows));

            let all = term.read(&ReadRequest { since: Some(0), last: None, ansi: true });
            prop_assert!(all.oldest_seq <= all.next_seq);
            prop_assert!(all.lines.len() <= ring + usize::from(size.rows));
            let polled = read(&term, Some(next), Some(10));
            prop_assert!(polled.lines.len() <= 10);
            next = polled.next_seq;
            let _ = term.take_events();
        }
    }
}

#[test]
fn the_view_scrolls_through_history_and_back() {
    let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 5 }, 100);
    for i in 0..50 {
        term.feed(format!("line {i}\r\n").as_bytes());
    }
    assert_eq!(term.display_offset(), 0);
    term.scroll_display(10);
    assert_eq!(term.display_offset(), 10);
    // New output leaves a scrolled view where it is.
    term.feed(b"more\r\n");
    assert_eq!(term.display_offset(), 11);
    term.scroll_display(-1000);
    assert_eq!(term.display_offset(), 0);
    term.scroll_display(1000);
    assert!(term.display_offset() <= 100);
    term.scroll_to_bottom();
    assert_eq!(term.display_offset(), 0);
}

#[test]
fn the_default_cursor_style_applies_until_the_program_sets_one_and_keeps_the_history() {
    use alacritty_terminal::vte::ansi::{CursorShape, CursorStyle};
    let mut term = terminal();
    feed_numbered_lines(&mut term, 200, 64);
    let history = term.term().grid().history_size();
    let beam = CursorStyle { shape: CursorShape::Beam, blinking: true };
    term.set_default_cursor_style(beam);
    assert_eq!(term.term().cursor_style(), beam);
    assert_eq!(term.term().grid().history_size(), history, "the scrollback is kept");
    // DECSCUSR 2 (steady block) wins over the default; DECSCUSR 0 returns to it.
    term.feed(b"\x1b[2 q");
    assert_eq!(term.term().cursor_style().shape, CursorShape::Block);
    term.feed(b"\x1b[0 q");
    assert_eq!(term.term().cursor_style(), beam);
}

#[test]
fn the_theme_answers_colour_queries_for_colours_the_program_did_not_set() {
    let reply = |term: &mut PaneTerminal, query: &[u8]| {
        term.feed(query);
        term.take_events()
            .into_iter()
            .find_map(|e| match e {
                TerminalEvent::PtyWrite(bytes) => {
                    Some(String::from_utf8_lossy(&bytes).into_owned())
                }
                _ => None,
            })
            .unwrap_or_default()
    };
    let mut term = terminal();
    assert!(reply(&mut term, b"\x1b]11;?\x07").contains("rgb:1c1c/1c1c/1c1c"));
    let white = Rgb { r: 0xfa, g: 0xfa, b: 0xfa };
    let dark = Rgb { r: 0x24, g: 0x29, b: 0x2e };
    term.set_theme_colors(Some(ThemeColors {
        foreground: dark,
        background: white,
        cursor: dark,
        ansi: [Rgb { r: 1, g: 2, b: 3 }; 16],
    }));
    assert!(reply(&mut term, b"\x1b]11;?\x07").contains("rgb:fafa/fafa/fafa"));
    assert!(reply(&mut term, b"\x1b]10;?\x07").contains("rgb:2424/2929/2e2e"));
    assert!(reply(&mut term, b"\x1b]4;1;?\x07").contains("rgb:0101/0202/0303"));
    // A colour the program set itself is reported as set.
    term.feed(b"\x1b]11;#102030\x07");
    assert!(reply(&mut term, b"\x1b]11;?\x07").contains("rgb:1010/2020/3030"));
}

/// Regression (issue #20, defect 5): notifications were reported before everything alacritty
/// answered in the same chunk, so a DA1 query sent before an OSC 99 query could be answered
/// after it, and vice versa once the server handled notifications last. Events now keep the
/// order of the bytes that caused them, for every chunking.
#[test]
fn events_keep_the_order_of_the_queries_in_every_chunking() {
    let input: &[u8] = b"\x1b[6n\x1b]99;i=x:p=?;\x1b\\\x1b[c\x1b]7;file:///tmp\x07ab\x1b[6n";
    let expected = vec![
        TerminalEvent::PtyWrite(b"\x1b[1;1R".to_vec()),
        TerminalEvent::Notify { kind: 99, payload: b"i=x:p=?;".to_vec() },
        TerminalEvent::PtyWrite(b"\x1b[?62;6;22c".to_vec()),
        TerminalEvent::Cwd("/tmp".to_owned()),
        TerminalEvent::PtyWrite(b"\x1b[1;3R".to_vec()),
    ];
    for chunk in 1..=input.len() {
        let mut term = terminal();
        let mut events = Vec::new();
        for piece in input.chunks(chunk) {
            term.feed(piece);
            events.extend(term.take_events());
        }
        assert_eq!(events, expected, "chunks of {chunk}");
    }
}

/// xterm's older alternate-screen modes, which alacritty does not know: 47 and 1047 switch
/// screens (1047 clearing the alternate one as it leaves) and keep the cursor where it is, 1048
/// saves and restores the cursor.
#[test]
fn the_older_alternate_screen_modes_switch_screens_and_save_the_cursor() {
    let mut term = terminal();
    let alt_cells = |t: &mut PaneTerminal| {
        t.term.swap_alt();
        let cells = t.term.grid().columns() * t.term.grid().screen_lines();
        t.term.swap_alt();
        cells
    };
    term.feed(b"primary\x1b[?1047h\x1b[2;1Hon the alternate screen");
    assert!(term.alt_screen());
    assert_eq!(term.screen_lines(false), ["", "on the alternate screen"]);
    term.feed(b"\x1b[?1047l");
    assert!(!term.alt_screen());
    assert_eq!(term.screen_lines(false), ["primary"]);
    assert_eq!(alt_cells(&mut term), 2, "the alternate grid is released after 1047");
    term.feed(b"\x1b[?47h");
    assert!(term.alt_screen());
    assert_eq!(term.screen_lines(false), Vec::<String>::new(), "entered blank");
    term.feed(b"x\x1b[?47l");
    assert!(!term.alt_screen());
    assert_eq!(term.screen_lines(false), ["primary"]);
    // As in xterm, the screens share the cursor: leaving by 47 or 1047 does not move it.
    for mode in ["47", "1047"] {
        term.feed(format!("\x1b[1;3H\x1b[?{mode}h\x1b[5;9H\x1b[?{mode}l").as_bytes());
        assert_eq!(cursor(&term), (4, 8), "leaving {mode}");
    }
    assert_eq!(alt_cells(&mut term), 2, "the alternate grid is released after 47");
    // 1048 is DECSC/DECRC.
    term.feed(b"\x1b[3;4H\x1b[?1048h\x1b[H\x1b[?1048l");
    assert_eq!(cursor(&term), (2, 3));
    // Setting a mode already in force changes nothing.
    term.feed(b"\x1b[?1047h\x1b[?47h\x1b[?1047l\x1b[?47l");
    assert!(!term.alt_screen());
}

/// XTSAVE and XTRESTORE (`CSI ? Pm s`, `CSI ? Pm r`) put modes back as they were saved.
#[test]
fn xtsave_and_xtrestore_put_modes_back() {
    use alacritty_terminal::term::TermMode;
    let mode = |bytes: &[u8]| *fed(bytes).term().mode();
    assert!(mode(b"\x1b[?7h\x1b[?7s\x1b[?7l\x1b[?7r").contains(TermMode::LINE_WRAP));
    assert!(!mode(b"\x1b[?7l\x1b[?7s\x1b[?7h\x1b[?7r").contains(TermMode::LINE_WRAP));
    let both = mode(b"\x1b[?1;2004h\x1b[?1;2004s\x1b[?1;2004l\x1b[?1;2004r");
    assert!(both.contains(TermMode::APP_CURSOR | TermMode::BRACKETED_PASTE));
    // Only the modes asked for come back; one never saved, or unknown, stays as it is.
    let some = mode(b"\x1b[?1;2004h\x1b[?1;2004s\x1b[?1;2004l\x1b[?2004;9999r");
    assert!(some.contains(TermMode::BRACKETED_PASTE) && !some.contains(TermMode::APP_CURSOR));
    assert!(
        !mode(b"\x1b[?2004h\x1b[?2004r\x1b[?2004l\x1b[?2004r").contains(TermMode::BRACKETED_PASTE)
    );
    // DECLRMM, which the vendored alacritty adds.
    assert!(mode(b"\x1b[?69h\x1b[?69s\x1b[?69l\x1b[?69r").contains(TermMode::LEFT_RIGHT_MARGIN));
    // Berth's own DECBKM too; a reset forgets what was saved.
    assert!(fed(b"\x1b[?67h\x1b[?67s\x1b[?67l\x1b[?67r").backarrow_sends_bs());
    assert!(mode(b"\x1b[?7l\x1b[?7s\x1bc\x1b[?7h\x1b[?7r").contains(TermMode::LINE_WRAP));
}

/// The queries and controls the OSC scanner recognises act after the output before them, also
/// when a synchronized update holds that output back (the update ends first).
#[test]
fn a_control_or_query_inside_a_synchronized_update_comes_after_the_output_before_it() {
    let replies = |term: &mut PaneTerminal| -> Vec<TerminalEvent> { term.take_events() };
    // DECERA after text, both inside a synchronized update: the text is erased.
    let mut term = fed(b"\x1b[?2026habc\x1b[1;1;1;3$z\x1b[?2026l");
    term.flush_sync();
    assert!(term.screen_lines(false).is_empty());
    // DECLRMM and DECSLRM inside one: margins set, the saved cursor kept.
    let mut term = fed(b"\x1b[2;2H\x1b7\x1b[?2026h\x1b[?69h\x1b[5;10s\x1b[?2026l");
    term.flush_sync();
    assert_eq!(term.term().horizontal_margins(), Some((4, 9)));
    term.feed(b"\x1b8");
    assert_eq!(cursor(&term), (1, 1));
    // A DECRQSS answers with the region the update set before it.
    let mut term = fed(b"\x1b[?2026h\x1b[3;9r\x1bP$qr\x1b\\");
    assert_eq!(replies(&mut term), [TerminalEvent::PtyWrite(b"\x1bP1$r3;9r\x1b\\".to_vec())]);
    // A `CSI s` without DECLRMM (a cursor save) does not end the update.
    let term = fed(b"\x1b[?2026habc\x1b[s");
    assert!(term.sync_deadline().is_some());
}

/// The replies xterm gives after a colour is set in each spec form, as esctest2 expects them
/// (tests/change_color.py, change_dynamic_color.py, change_special_color.py): OSC 4, OSC 10
/// and OSC 5 (xterm's special colours) take every form, and OSC 4 answers in order.
#[test]
fn colour_specs_are_answered_as_xterm_answers_them() {
    const CASES: &[(&str, &str)] = &[
        ("rgb:f0f0/f0f0/f0f0", "f0f0/f0f0/f0f0"),
        ("rgb:8080/8080/8080", "8080/8080/8080"),
        ("#fff", "f0f0/f0f0/f0f0"),
        ("#888", "8080/8080/8080"),
        ("#f0f0f0", "f0f0/f0f0/f0f0"),
        ("#808080", "8080/8080/8080"),
        ("#f00f00f00", "f0f0/f0f0/f0f0"),
        ("#800800800", "8080/8080/8080"),
        ("#f000f000f000", "f0f0/f0f0/f0f0"),
        ("#800080008000", "8080/8080/8080"),
        ("rgbi:1/1/1", "ffff/ffff/ffff"),
        ("rgbi:0.5/0.5/0.5", "c1c1/bbbb/bbbb"),
        ("CIEXYZ:1/1/1", "ffff/ffff/ffff"),
        ("CIEXYZ:0.5/0.5/0.5", "dddd/b5b5/a0a0"),
        ("CIEuvY:1/1/1", "ffff/ffff/ffff"),
        ("CIEuvY:0.5/0.5/0.5", "ffff/a3a3/aeae"),
        ("CIExyY:1/1/1", "ffff/ffff/ffff"),
        ("CIExyY:0.5/0.5/0.5", "f7f7/b3b3/0e0e"),
        ("CIELab:1/1/1", "6c6c/6767/6767"),
        ("CIELab:0.5/0.5/0.5", "5252/4f4f/4f4f"),
        ("CIELuv:1/1/1", "1616/1414/0e0e"),
        ("CIELuv:0.5/0.5/0.5", "0e0e/1313/0e0e"),
        ("TekHVC:1/1/1", "1a1a/1313/0f0f"),
        ("TekHVC:0.5/0.5/0.5", "1111/1313/0e0e"),
    ];
    let reply = |term: &mut PaneTerminal, input: String| -> Vec<u8> {
        term.feed(input.as_bytes());
        match term.take_events().as_slice() {
            [TerminalEvent::PtyWrite(bytes)] => bytes.clone(),
            other => panic!("one reply to {input:?}, got {other:?}"),
        }
    };
    for (spec, rgb) in CASES {
        let mut term = terminal();
        // OSC 4 (a palette entry), ST-terminated.
        term.feed(format!("\x1b]4;0;{spec}\x1b\\").as_bytes());
        assert_eq!(term.take_events(), vec![], "setting {spec}");
        let got = reply(&mut term, "\x1b]4;0;?\x1b\\".to_owned());
        assert_eq!(got, format!("\x1b]4;0;rgb:{rgb}\x1b\\").into_bytes(), "OSC 4 {spec}");
        // OSC 10 (the foreground), BEL-terminated: the reply ends with BEL too.
        term.feed(format!("\x1b]10;{spec}\x07").as_bytes());
        let got = reply(&mut term, "\x1b]10;?\x07".to_owned());
        assert_eq!(got, format!("\x1b]10;rgb:{rgb}\x07").into_bytes(), "OSC 10 {spec}");
        // OSC 5 (a special colour) and its other number, OSC 4 256 + n.
        term.feed(format!("\x1b]5;1;{spec}\x1b\\").as_bytes());
        let got = reply(&mut term, "\x1b]5;1;?\x1b\\".to_owned());
        assert_eq!(got, format!("\x1b]5;1;rgb:{rgb}\x1b\\").into_bytes(), "OSC 5 {spec}");
        let got = reply(&mut term, "\x1b]4;257;?\x1b\\".to_owned());
        assert_eq!(got, format!("\x1b]4;257;rgb:{rgb}\x1b\\").into_bytes(), "OSC 4;257 {spec}");
    }
}

#[test]
fn colour_osc_pairs_are_taken_in_order_and_stop_at_a_bad_one() {
    let mut term = terminal();
    // Query, set, query in one string: the first reply has the old colour.
    term.feed(b"\x1b]4;1;?;1;rgbi:1/0/0;1;?\x07");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::PtyWrite(b"\x1b]4;1;rgb:e3e3/5a5a/5a5a\x07".to_vec()),
            TerminalEvent::PtyWrite(b"\x1b]4;1;rgb:ffff/0000/0000\x07".to_vec()),
        ]
    );
    // A bad spec ends the string: the pair after it is not taken.
    term.feed(b"\x1b]4;2;rgbi:nan/0/0;2;?\x07\x1b]4;3;bogus;3;?\x07\x1b]4;999;?;2;?\x07");
    assert_eq!(term.take_events(), vec![]);
    // OSC 10 steps through 10, 11 and 12, no further.
    term.feed(b"\x1b]10;?;#102030;?;?\x1b\\");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::PtyWrite(b"\x1b]10;rgb:d8d8/d8d8/d8d8\x1b\\".to_vec()),
            TerminalEvent::PtyWrite(b"\x1b]12;rgb:d8d8/d8d8/d8d8\x1b\\".to_vec()),
        ]
    );
    assert_eq!(
        term.term().colors()[NamedColor::Background as usize],
        Some(Rgb { r: 0x10, g: 0x20, b: 0x30 })
    );
    // Special colours: unset ones report the foreground; OSC 105 resets one or all, RIS all.
    term.feed(b"\x1b]5;0;#aabbcc;4;#ddeeff\x07\x1b]105;0\x07\x1b]5;0;?;4;?\x07");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::PtyWrite(b"\x1b]5;0;rgb:d8d8/d8d8/d8d8\x07".to_vec()),
            TerminalEvent::PtyWrite(b"\x1b]5;4;rgb:dddd/eeee/ffff\x07".to_vec()),
        ]
    );
    term.feed(b"\x1b]105\x1b\\\x1b]5;4;?\x07\x1b]5;4;#123\x07\x1bc\x1b]5;4;?\x07");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::PtyWrite(b"\x1b]5;4;rgb:d8d8/d8d8/d8d8\x07".to_vec()),
            TerminalEvent::PtyWrite(b"\x1b]5;4;rgb:d8d8/d8d8/d8d8\x07".to_vec()),
        ]
    );
}

/// Regression (issue 28, item 6): a restored pane's terminal allocated a whole screen of cells
/// (10,000 tombstones held about 1 GB) though nothing is ever drawn in it.
#[test]
fn a_dormant_terminal_holds_no_grid_until_output_arrives() {
    let mut term = PaneTerminal::dormant(TermSize { cols: 200, rows: 50 }, DEFAULT_SCROLLBACK);
    assert!(term.is_dormant());
    assert!(term.grid_cells().cells <= 2, "{:?}", term.grid_cells());
    assert_eq!(term.size(), TermSize { cols: 200, rows: 50 });
    term.resize(TermSize { cols: 120, rows: 40 });
    assert!(term.grid_cells().cells <= 2, "a resize woke it: {:?}", term.grid_cells());
    assert_eq!(term.size(), TermSize { cols: 120, rows: 40 });

    term.feed(b"first output\r\n");
    assert!(!term.is_dormant());
    assert_eq!((term.grid_cells().rows, term.grid_cells().cells), (40, 40 * 120));
    assert_eq!(term.screen_lines(false)[0], "first output");
}

/// Regression (issue 28, item 6): the scrollback was capped in lines, so a 4000-column pane
/// held 50 times the cells of an 80-column one. Now every pane's history is bounded in cells.
#[test]
fn a_wide_panes_history_is_bounded_in_cells_not_lines() {
    let scrollback = 1000;
    let bound = scrollback * SCROLLBACK_COLUMNS;
    let mut term = PaneTerminal::new(TermSize { cols: 4000, rows: 10 }, scrollback);
    feed_numbered_lines(&mut term, 3000, 64);
    let wide = term.grid_cells();
    // The history within the bound (plus its trim slack, a quarter), the screen besides.
    assert!(wide.cells <= bound * 5 / 4 + 10 * 4000, "{wide:?} over {bound} cells");
    let readable = read(&term, Some(0), None);
    assert_eq!(readable.lines.len(), history_lines(scrollback, 4000) + 9);

    // Narrower again, it keeps its whole setting in lines.
    term.resize(TermSize { cols: 80, rows: 10 });
    feed_numbered_lines(&mut term, 3000, 64);
    assert!(term.term().grid().history_size() >= scrollback);
    assert!(term.grid_cells().cells <= (scrollback * 5 / 4 + 10) * 80);
}

/// Regression (issue 28, flood memory): after a flood the grid kept up to 1000 rows for reuse
/// beyond its history, plain (2 MB a pane at 80 columns; 50 panes after `yes`: 100 MB that
/// never went back). Once the flood settles, it keeps only the rows it holds.
#[test]
fn a_settled_flood_keeps_no_rows_beyond_its_history() {
    let mut term = PaneTerminal::new(SIZE, 1000);
    let chunk = b"y\n".repeat(8192);
    for _ in 0..40 {
        term.feed(&chunk);
    }
    let flooding = term.grid_cells();
    assert!(flooding.allocated_rows > flooding.rows, "no cache to free: {flooding:?}");
    assert!(term.settle(), "the flood did not end");
    let settled = term.grid_cells();
    assert_eq!(settled.allocated_rows, settled.rows, "{settled:?}");
    assert!(settled.rows <= 1000 + 1000 / 4 + 24);
    // Output goes on as before.
    term.feed(b"after\r\n");
    assert!(!term.settle());
}
