//! Tests of the fixes made to the vendored alacritty_terminal (vendor/alacritty_terminal,
//! each listed in its BERTH.md): bytes fed to a pane's terminal, the grid and cursor checked.

use super::*;

fn fed(bytes: &[u8]) -> PaneTerminal {
    let mut term = PaneTerminal::new(TermSize { cols: 80, rows: 24 }, DEFAULT_SCROLLBACK);
    term.feed(bytes);
    term
}

/// The cursor, 1-based (row, column) as the sequences name it.
fn cursor(term: &PaneTerminal) -> (i32, usize) {
    let point = term.term().grid().cursor.point;
    (point.line.0 + 1, point.column.0 + 1)
}

#[test]
fn cuu_and_cud_stop_at_the_scrolling_margins_from_inside_them() {
    // Region rows 5..10; from row 7, CUU 10 stops at 5 and CUD 10 at 10.
    let mut term = fed(b"\x1b[5;10r\x1b[7;3H\x1b[10A");
    assert_eq!(cursor(&term), (5, 3));
    term.feed(b"\x1b[7;3H\x1b[10B");
    assert_eq!(cursor(&term), (10, 3));
    // From outside the region they go on to the screen's edge.
    term.feed(b"\x1b[3;1H\x1b[10A");
    assert_eq!(cursor(&term), (1, 1));
    term.feed(b"\x1b[12;1H\x1b[99B");
    assert_eq!(cursor(&term), (24, 1));
    // CNL and CPL too, and they return the carriage.
    term.feed(b"\x1b[7;3H\x1b[10E");
    assert_eq!(cursor(&term), (10, 1));
    term.feed(b"\x1b[7;3H\x1b[10F");
    assert_eq!(cursor(&term), (5, 1));
}

#[test]
fn cuu_in_origin_mode_moves_up_not_down() {
    // Upstream added the region's top to the absolute row in origin mode.
    let term = fed(b"\x1b[5;20r\x1b[?6h\x1b[6;1H\x1b[2A");
    assert_eq!(cursor(&term), (8, 1));
}

#[test]
fn ed_1_on_the_second_row_clears_the_first() {
    let term = fed(b"aaaa\r\nbbbb\x1b[2;2H\x1b[1J");
    assert_eq!(term.screen_lines(false)[..2], ["".to_owned(), "  bb".to_owned()]);
}

#[test]
fn decaln_fills_the_screen_resets_the_margins_and_moves_home() {
    let mut term = fed(b"\x1b[4;5r\x1b[5;5H\x1b#8");
    assert_eq!(cursor(&term), (1, 1));
    assert!(term.screen_lines(false).iter().all(|line| line == &"E".repeat(80)));
    // With no region left, CUD from row 5 goes past row 5.
    term.feed(b"\x1b[5;1H\x1b[B");
    assert_eq!(cursor(&term), (6, 1));
}

#[test]
fn lnm_makes_a_line_feed_return_the_carriage() {
    let mut term = fed(b"\x1b[20hab\ncd");
    assert_eq!(term.screen_lines(false)[..2], ["ab".to_owned(), "cd".to_owned()]);
    // Reset, a line feed only moves down.
    term.feed(b"\x1b[20l\ngh");
    assert_eq!(term.screen_lines(false)[2], "  gh");
}

#[test]
fn each_screen_keeps_its_own_saved_cursor() {
    for mode in ["47", "1047", "1049"] {
        let mut term =
            fed(format!("\x1b[3;2H\x1b7\x1b[?{mode}h\x1b[7;6H\x1b7\x1b[?{mode}l").as_bytes());
        term.feed(b"\x1b8");
        assert_eq!(cursor(&term), (3, 2), "primary after {mode}");
        term.feed(format!("\x1b[?{mode}h\x1b8").as_bytes());
        assert_eq!(cursor(&term), (7, 6), "alternate after {mode}");
    }
}

#[test]
fn entering_47_or_1047_keeps_the_primary_saved_cursor() {
    for mode in ["47", "1047"] {
        let term =
            fed(format!("\x1b[3;2H\x1b7\x1b[10;10H\x1b[?{mode}h\x1b[?{mode}l\x1b8").as_bytes());
        assert_eq!(cursor(&term), (3, 2), "after {mode}");
    }
    // 1049 saves the cursor as it enters, and puts it back as it leaves.
    let term = fed(b"\x1b[3;2H\x1b7\x1b[10;10H\x1b[?1049h\x1b[5;5H\x1b[?1049l");
    assert_eq!(cursor(&term), (10, 10));
}

#[test]
fn reverse_wraparound_backspaces_onto_the_line_above() {
    // Off by default: a backspace at column 1 stays.
    let mut term = fed(b"\x1b[3;1H\x08");
    assert_eq!(cursor(&term), (3, 1));
    // On (with DECAWM, the default): to the last column of the line above.
    term.feed(b"\x1b[?45h\x1b[3;1H\x08");
    assert_eq!(cursor(&term), (2, 80));
    // From the region's top to its bottom.
    term.feed(b"\x1b[2;5r\x1b[2;1H\x08");
    assert_eq!(cursor(&term), (5, 80));
    // In the last column with a wrap pending, it only cancels the wrap.
    term.feed(b"\x1b[r\x1b[1;79Hab\x08X");
    assert_eq!(term.screen_lines(false)[0], format!("{}aX", " ".repeat(78)));
    // DECRQM reports it; without DECAWM it does nothing; DECSTR resets it.
    term.take_events();
    term.feed(b"\x1b[?45$p\x1b[?7l\x1b[3;1H\x08");
    assert_eq!(cursor(&term), (3, 1));
    term.feed(b"\x1b[?7h\x1b[!p\x1b[3;1H\x08");
    assert_eq!(cursor(&term), (3, 1));
    let replies: Vec<_> = term
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            TerminalEvent::PtyWrite(reply) => Some(reply),
            _ => None,
        })
        .collect();
    assert_eq!(replies, [b"\x1b[?45;1$y".to_vec()]);
}

#[test]
fn kitty_keyboard_set_changes_the_stack_top_that_a_pop_returns_to() {
    // Push 1 and 3, set 5 in place of 3, push 8: popping 8 goes back to 5, not 3.
    let mut term = fed(b"\x1b[>1u\x1b[>3u\x1b[=5u\x1b[>8u");
    assert_eq!(term.keyboard_flags(), 8);
    term.feed(b"\x1b[<u");
    assert_eq!(term.keyboard_flags(), 5);
    // Union (mode 2) and difference (mode 3) change the top too.
    term.feed(b"\x1b[=2;2u\x1b[=1;3u\x1b[>16u\x1b[<u");
    assert_eq!(term.keyboard_flags(), 6);
    term.feed(b"\x1b[<u");
    assert_eq!(term.keyboard_flags(), 1);
}

#[test]
fn decsca_protects_characters_from_the_selective_erases_only() {
    // "ab" protected, "cd" not (DECSCA 2 is as 0), on rows 1 to 3.
    let rows = b"\x1b[1\"qab\x1b[2\"qcd\r\n\x1b[1\"qab\x1b[0\"qcd\r\n\x1b[1\"qab\x1b[\"qcd";
    let visible = |term: &PaneTerminal| term.screen_lines(false);
    // DECSED 2, DECSEL 2 and DECSERA keep "ab"; SGR 0 does not lift the protection.
    let mut term = fed(rows);
    term.feed(b"\x1b[?2J");
    assert_eq!(visible(&term), ["ab", "ab", "ab"]);
    let mut term = fed(rows);
    term.feed(b"\x1b[2;1H\x1b[?2K");
    assert_eq!(visible(&term), ["abcd", "ab", "abcd"]);
    let mut term = fed(b"\x1b[1\"q\x1b[0mab\x1b[0\"qcd");
    term.feed(b"\x1b[1;1;1;80${");
    assert_eq!(visible(&term), ["ab"]);
    // DECSED 0 and 1 start and end at the cursor.
    let mut term = fed(rows);
    term.feed(b"\x1b[2;4H\x1b[?0J");
    assert_eq!(visible(&term), ["abcd", "abc", "ab"]);
    let mut term = fed(rows);
    term.feed(b"\x1b[2;3H\x1b[?1J");
    assert_eq!(visible(&term), ["ab", "ab d", "abcd"]);
    // ED and DECERA erase protected characters too.
    let mut term = fed(rows);
    term.feed(b"\x1b[1;1;1;80$z");
    assert_eq!(visible(&term), ["", "abcd", "abcd"]);
    term.feed(b"\x1b[2J");
    assert!(visible(&term).is_empty());
    // DECSC keeps the protection, DECRC brings it back, DECSTR lifts it.
    let mut term = fed(b"\x1b[1\"q\x1b7\x1b[0\"q\x1b8ab\x1b[!pcd\x1b[?2J");
    assert_eq!(visible(&term), ["ab"]);
    term.feed(b"\x1b[?2J");
    assert_eq!(visible(&term), ["ab"]);
}

#[test]
fn reverse_wraparound_takes_cub_across_lines() {
    // From row 5 column 5, CUB 160 on 80 columns ends on row 3 column 5.
    let mut term = fed(b"\x1b[?45h\x1b[5;5H\x1b[160D");
    assert_eq!(cursor(&term), (3, 5));
    // Off, CUB stops at column 1.
    term.feed(b"\x1b[?45l\x1b[5;5H\x1b[160D");
    assert_eq!(cursor(&term), (5, 1));
}

#[test]
fn decrc_restores_origin_mode_as_decsc_saved_it() {
    // Saved with origin mode off, restored after turning it on: CUP 1;1 is the screen's corner.
    let mut term = fed(b"\x1b7\x1b[5;10r\x1b[?6h\x1b8\x1b[1;1H");
    assert_eq!(cursor(&term), (1, 1));
    // Saved with it on, DECRC turns it back on: CUP 1;1 is the region's top.
    term.feed(b"\x1b[?6h\x1b7\x1b[?6l\x1b8\x1b[1;1H");
    assert_eq!(cursor(&term), (5, 1));
}

#[test]
fn spa_protects_characters_from_ed_el_ech_and_the_selective_erases() {
    // "c" is ISO-protected (SPA ... EPA); ED, EL and ECH keep it.
    for erase in [&b"\x1b[J"[..], b"\x1b[K", b"\x1b[4X", b"\x1b[2J", b"\x1b[2K"] {
        let mut term = fed(b"ab\x1bVc\x1bWd\x1b[1;1H");
        term.feed(erase);
        assert_eq!(term.screen_lines(false), ["  c"], "{erase:?}");
    }
    // DECSED too (as xterm, for backward compatibility: the ISO standard would have it erase
    // it), but not DECSERA (as xterm, and esctest's test_DECSERA_doesNotRespectISOProtect).
    let mut term = fed(b"a\x1bVb\x1bW\x1b[?2J");
    assert_eq!(term.screen_lines(false), [" b"]);
    term.feed(b"\x1b[1;1Hc\x1b[1;1;1;80${");
    assert!(term.screen_lines(false).is_empty());
    // DECSCA puts back DEC protection: ED erases everything again.
    term.feed(b"\x1b[1\"qab\x1b[0\"q\x1b[2J");
    assert!(term.screen_lines(false).is_empty());
}

#[test]
fn a_tab_with_a_wrap_pending_waits_unless_the_more_fix_is_on() {
    let full = "x".repeat(80);
    // Off (the default): the tab does nothing and the next character wraps.
    let term = fed(format!("{full}\t2").as_bytes());
    assert_eq!(term.screen_lines(false), [full.clone(), "2".to_owned()]);
    // On (`CSI ? 41 h`): the tab wraps and goes to the first tab stop.
    let term = fed(format!("\x1b[?41h{full}\t1").as_bytes());
    assert_eq!(term.screen_lines(false), [full.clone(), format!("{}1", " ".repeat(8))]);
}

#[test]
fn a_kitty_keyboard_push_past_alacrittys_cap_drops_the_bottom_entry() {
    use alacritty_terminal::vte::ansi::{Handler, KeyboardModes};
    // Straight to the Term (Berth's handler stops earlier): upstream removed a title-stack
    // entry here and panicked with none.
    let mut term = fed(b"");
    for _ in 0..5000 {
        Handler::push_keyboard_mode(&mut term.term, KeyboardModes::DISAMBIGUATE_ESC_CODES);
    }
    Handler::push_keyboard_mode(&mut term.term, KeyboardModes::REPORT_EVENT_TYPES);
    assert_eq!(term.keyboard_flags(), 2);
}

/// The bytes that draw the 5×5 block `abcde`…`uvwxy` at the top left, then set the scrolling
/// region to rows 2–4 and, with DECLRMM, the left and right margins to columns 2–4.
const MARGINS_BLOCK: &[u8] =
    b"\x1b[1;1Habcde\x1b[2;1Hfghij\x1b[3;1Hklmno\x1b[4;1Hpqrst\x1b[5;1Huvwxy\x1b[2;4r\x1b[?69h\x1b[2;4s";

/// The first five rows of the screen.
fn block(term: &PaneTerminal) -> Vec<String> {
    term.screen_lines(false)[..5].to_vec()
}

/// The replies written back to the PTY so far.
fn replies(term: &mut PaneTerminal) -> String {
    let mut out = String::new();
    for event in term.take_events() {
        if let TerminalEvent::PtyWrite(bytes) = event {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

#[test]
fn declrmm_makes_csi_s_set_the_margins_instead_of_saving_the_cursor() {
    // Without DECLRMM, `CSI s` saves the cursor (SCOSC).
    let mut term = fed(b"\x1b[3;7H\x1b[2;5s\x1b[1;1H\x1b[u");
    assert_eq!(cursor(&term), (3, 7));
    assert_eq!(term.term().horizontal_margins(), None);
    // With it, DECSLRM sets the margins and homes the cursor; the saved cursor is kept.
    term.feed(b"\x1b[?69h\x1b[9;9H\x1b[2;5s");
    assert_eq!(term.term().horizontal_margins(), Some((1, 4)));
    assert_eq!(cursor(&term), (1, 1));
    term.feed(b"\x1b[u");
    assert_eq!(cursor(&term), (3, 7));
    // DECSC (`ESC 7`) still saves while DECLRMM is set.
    term.feed(b"\x1b[4;4H\x1b7\x1b[1;1H\x1b8");
    assert_eq!(cursor(&term), (4, 4));
    // Margins of fewer than two columns are ignored; `CSI s` alone is the whole width.
    term.feed(b"\x1b[3;3s");
    assert_eq!(term.term().horizontal_margins(), Some((1, 4)));
    term.feed(b"\x1b[s");
    assert_eq!(term.term().horizontal_margins(), None);
    // Resetting DECLRMM removes them.
    term.feed(b"\x1b[2;5s\x1b[?69l");
    assert_eq!(term.term().horizontal_margins(), None);
}

#[test]
fn text_wraps_from_the_right_margin_to_the_left_one_and_insert_mode_stops_there() {
    let term = fed(b"\x1b[?69h\x1b[5;10s\x1b[1;9Habcd");
    assert_eq!(term.screen_lines(false)[..2], ["        ab".to_owned(), "    cd".to_owned()]);
    // Without autowrap the last character written stays at the right margin.
    let term = fed(b"\x1b[?7l\x1b[?69h\x1b[5;10s\x1b[1;9Habcd");
    assert_eq!(term.screen_lines(false)[0], "        ad");
    // IRM pushes cells out at the right margin, not the screen's edge.
    let term = fed(b"\x1b[1;1Habcdefghijkl\x1b[?69h\x1b[5;10s\x1b[1;6H\x1b[4hX");
    assert_eq!(term.screen_lines(false)[0], "abcdeXfghikl");
}

#[test]
fn cursor_controls_stop_at_the_left_and_right_margins() {
    // (controls after margins 5–10 are set, the cursor's row and column after them)
    let cases: &[(&[u8], (i32, usize))] = &[
        (b"\x1b[2;8H\r", (2, 5)),              // CR from right of the left margin
        (b"\x1b[2;3H\r", (2, 1)),              // CR from left of it
        (b"\x1b[?6h\x1b[2;3H\r", (2, 5)),      // CR in origin mode (CUP puts it in the margins)
        (b"\x1b[2;5H\x08", (2, 5)),            // BS stops at the left margin
        (b"\x1b[2;3H\x08", (2, 2)),            // BS left of it moves on
        (b"\x1b[2;8H\x1b[9D", (2, 5)),         // CUB
        (b"\x1b[2;8H\x1b[9C", (2, 10)),        // CUF
        (b"\x1b[2;12H\x1b[9C", (2, 21)),       // CUF right of the right margin
        (b"\x1b[2;6H\t\t", (2, 10)),           // HT stops at the right margin
        (b"\x1b[2;8H\x1b[3I", (2, 10)),        // CHT
        (b"\x1b[2;8H\x1b[E", (3, 5)),          // CNL returns to the left margin
        (b"\x1b[?6h\x1b[2;3H", (2, 7)),        // CUP in origin mode counts from the left margin
        (b"\x1b[?6h\x1b[1;30H", (1, 10)),      // and stops at the right one
        (b"\x1b[?6h\x1b[3G", (1, 7)),          // CHA too
        (b"\x1b[?6h\x1b[3;4H\x1b[5d", (5, 8)), // VPA keeps the column
        // Reverse wraparound goes on from the right margin of the line above.
        (b"\x1b[?45h\x1b[3;5H\x08", (2, 10)),
        (b"\x1b[?45h\x1b[3;1H\x08", (2, 10)),
    ];
    for (bytes, want) in cases {
        let mut term = fed(b"\x1b[?69h\x1b[5;10s");
        term.feed(bytes);
        assert_eq!(cursor(&term), *want, "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn edits_and_scrolling_stay_between_the_left_and_right_margins() {
    let unchanged = ["abcde", "fghij", "klmno", "pqrst", "uvwxy"];
    let cases: &[(&[u8], [&str; 5])] = &[
        (b"\x1b[S", ["abcde", "flmnj", "kqrso", "p   t", "uvwxy"]), // SU
        (b"\x1b[T", ["abcde", "f   j", "kghio", "plmnt", "uvwxy"]), // SD
        (b"\x1b[4;3H\n", ["abcde", "flmnj", "kqrso", "p   t", "uvwxy"]), // LF at the bottom
        (b"\x1b[4;3H\x1bD", ["abcde", "flmnj", "kqrso", "p   t", "uvwxy"]), // IND
        (b"\x1b[4;3H\x1bE", ["abcde", "flmnj", "kqrso", "p   t", "uvwxy"]), // NEL
        (b"\x1b[2;3H\x1bM", ["abcde", "f   j", "kghio", "plmnt", "uvwxy"]), // RI at the top
        (b"\x1b[3;3H\x1b[L", ["abcde", "fghij", "k   o", "plmnt", "uvwxy"]), // IL
        (b"\x1b[2;2H\x1b[M", ["abcde", "flmnj", "kqrso", "p   t", "uvwxy"]), // DL
        (b"\x1b[2;2H\x1b[9M", ["abcde", "f   j", "k   o", "p   t", "uvwxy"]), // DL 9
        (b"\x1b[2;3H\x1b[@", ["abcde", "fg hj", "klmno", "pqrst", "uvwxy"]), // ICH
        (b"\x1b[2;2H\x1b[P", ["abcde", "fhi j", "klmno", "pqrst", "uvwxy"]), // DCH
        (b"\x1b[2;3H\x1b[9P", ["abcde", "fg  j", "klmno", "pqrst", "uvwxy"]), // DCH 9
        (b"\x1b[2;3H\x1b['}", ["abcde", "fg hj", "kl mo", "pq rt", "uvwxy"]), // DECIC
        (b"\x1b[2;3H\x1b['~", ["abcde", "fgi j", "kln o", "pqs t", "uvwxy"]), // DECDC
        (b"\x1b[2;2H\x1b6", ["abcde", "f ghj", "k lmo", "p qrt", "uvwxy"]), // DECBI at the left
        (b"\x1b[2;4H\x1b9", ["abcde", "fhi j", "kmn o", "prs t", "uvwxy"]), // DECFI at the right
        // Outside the left and right margins these change nothing.
        (b"\x1b[3;1H\x1b[M", unchanged),
        (b"\x1b[3;5H\x1b[L", unchanged),
        (b"\x1b[4;1H\n", unchanged),
        (b"\x1b[2;5H\x1bM", unchanged),
        (b"\x1b[2;5H\x1b[@", unchanged),
        (b"\x1b[2;1H\x1b[P", unchanged),
        (b"\x1b[2;5H\x1b['}", unchanged),
        (b"\x1b[3;1H\x1b6", unchanged),
    ];
    for (bytes, want) in cases {
        let mut term = fed(MARGINS_BLOCK);
        term.feed(bytes);
        assert_eq!(block(&term), *want, "{:?}", String::from_utf8_lossy(bytes));
    }
    // DECBI and DECFI elsewhere only move the cursor.
    let mut term = fed(b"\x1b[3;5H\x1b6");
    assert_eq!(cursor(&term), (3, 4));
    term.feed(b"\x1b9\x1b9");
    assert_eq!(cursor(&term), (3, 6));
}

#[test]
fn the_margins_go_with_decstr_ris_decaln_and_a_resize() {
    for reset in [&b"\x1b[!p"[..], b"\x1bc", b"\x1b#8"] {
        let mut term = fed(b"\x1b[?69h\x1b[5;10s");
        term.feed(reset);
        assert_eq!(term.term().horizontal_margins(), None, "{reset:?}");
    }
    // DECSTR also resets DECLRMM: `CSI s` saves the cursor again.
    let mut term = fed(b"\x1b[?69h\x1b[!p\x1b[2;4s");
    assert_eq!(term.term().horizontal_margins(), None);
    term.feed(b"\x1b[?69$p");
    assert_eq!(replies(&mut term), "\x1b[?69;2$y");
    let mut term = fed(b"\x1b[?69h\x1b[5;10s");
    term.resize(TermSize { cols: 60, rows: 20 });
    assert_eq!(term.term().horizontal_margins(), None);
}

#[test]
fn declrmm_decslrm_and_cpr_in_origin_mode_are_reported() {
    let mut term = fed(b"\x1b[?69$p\x1b[?69h\x1b[?69$p\x1b[5;10s\x1bP$qs\x1b\\");
    assert_eq!(replies(&mut term), "\x1b[?69;2$y\x1b[?69;1$y\x1bP1$r5;10s\x1b\\");
    // CPR and DECXCPR count from the origin in origin mode, as CUP does.
    term.feed(b"\x1b[3;8r\x1b[?6h\x1b[2;3H\x1b[6n\x1b[?6n");
    assert_eq!(replies(&mut term), "\x1b[2;3R\x1b[?2;3R");
    assert_eq!(cursor(&term), (4, 7));
}

/// Change 14 (`Term::input_ascii`): the same bytes into a pane (runs of printable ASCII written
/// a row segment at a time) and into a bare Term fed by vte (one `input` call per character)
/// must leave the same cells, history, cursor and cursor template.
mod ascii_runs {
    use alacritty_terminal::vte::ansi::Processor;
    use proptest::prelude::*;

    use super::*;

    /// A bare Term of the pane's configuration, fed one character at a time.
    fn reference(size: TermSize) -> Term<TermListener> {
        let config = term_config(DEFAULT_SCROLLBACK, CursorStyle::default());
        Term::new(config, &GridSize(size), TermListener::default())
    }

    /// Every cell of history and screen, the cursor (with its pending wrap and template) equal.
    fn assert_same(pane: &Term<TermListener>, bare: &Term<TermListener>) -> Result<(), String> {
        let (a, b) = (pane.grid(), bare.grid());
        if a.history_size() != b.history_size() {
            return Err(format!("history {} vs {}", a.history_size(), b.history_size()));
        }
        for line in a.topmost_line().0..=a.bottommost_line().0 {
            let line = Line(line);
            if a[line][..] != b[line][..] {
                return Err(format!(
                    "line {line:?} differs: {:?} vs {:?}",
                    &a[line][..],
                    &b[line][..]
                ));
            }
        }
        let (ca, cb) = (&a.cursor, &b.cursor);
        if ca.point != cb.point || ca.input_needs_wrap != cb.input_needs_wrap {
            return Err(format!(
                "cursor {:?}/{} vs {:?}/{}",
                ca.point, ca.input_needs_wrap, cb.point, cb.input_needs_wrap
            ));
        }
        if ca.template != cb.template {
            return Err("cursor template differs".into());
        }
        Ok(())
    }

    /// Feeds `bytes` both ways (the pane in `chunk`-sized pieces) and compares.
    fn both_ways(size: TermSize, bytes: &[u8], chunk: usize) -> Result<(), String> {
        let mut pane = PaneTerminal::new(size, DEFAULT_SCROLLBACK);
        for piece in bytes.chunks(chunk.max(1)) {
            pane.feed(piece);
        }
        let mut bare = reference(size);
        Processor::<alacritty_terminal::vte::ansi::StdSyncHandler>::new().advance(&mut bare, bytes);
        assert_same(pane.term(), &bare)
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => "[ -~]{0,120}",
            2 => Just("\r\n".to_owned()),
            1 => Just("\r".to_owned()),
            1 => Just("\n".to_owned()),
            1 => Just("\x08".to_owned()),
            1 => Just("\t".to_owned()),
            1 => prop::sample::select(vec!["漢", "🦀", "e\u{301}", "é", "\u{200b}"]).prop_map(str::to_owned),
            1 => prop::sample::select(vec![
                "\x1b[31m", "\x1b[0m", "\x1b[1;4;38;5;200m", "\x1b[48;2;1;2;3m", "\x1b[7m",
                "\x1b]8;id=x;http://example.com\x1b\\", "\x1b]8;;\x1b\\",
            ]).prop_map(str::to_owned),
            1 => (1u16..12, 1u16..40).prop_map(|(r, c)| format!("\x1b[{r};{c}H")),
            1 => prop::sample::select(vec!["\x1b[K", "\x1b[1K", "\x1b[2J", "\x1b[3@", "\x1b[2P", "\x1b[5b", "\x1b[2L", "\x1b[M"])
                .prop_map(str::to_owned),
            // Modes and charsets the fast path must leave to the general one.
            1 => prop::sample::select(vec![
                "\x1b[4h", "\x1b[4l", "\x1b[?7l", "\x1b[?7h", "\x1b(0", "\x1b(B", "\x1b)0", "\x0e", "\x0f",
            ]).prop_map(str::to_owned),
            1 => (1u16..6, 2u16..12).prop_map(|(t, b)| format!("\x1b[{t};{b}r")),
            1 => Just("\x1b[r".to_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn ascii_runs_write_the_same_grid_as_one_character_at_a_time(
            tokens in prop::collection::vec(token(), 0..80),
            cols in 2u16..40,
            rows in 1u16..12,
            chunk in 1usize..300,
        ) {
            let bytes = tokens.concat();
            let size = TermSize { cols, rows };
            if let Err(why) = both_ways(size, bytes.as_bytes(), chunk) {
                prop_assert!(false, "{why}: {bytes:?} at {cols}x{rows} in chunks of {chunk}");
            }
        }
    }

    #[test]
    fn a_run_over_half_a_wide_character_clears_its_other_half() {
        let size = TermSize { cols: 10, rows: 3 };
        // The run starts on the wide character's spacer, then on the character itself.
        both_ways(size, "漢字\x1b[1;2Habc".as_bytes(), 64).unwrap();
        both_ways(size, "ab漢字\x1b[1;3Hx".as_bytes(), 64).unwrap();
        let mut pane = PaneTerminal::new(size, DEFAULT_SCROLLBACK);
        pane.feed("漢字\x1b[1;2Habc".as_bytes());
        assert_eq!(pane.screen_lines(false), [" abc"]);
    }

    #[test]
    fn runs_longer_than_the_gathering_buffer_wrap_and_scroll_exactly() {
        let text: String = (0..5000).map(|i| char::from(b' ' + (i % 95) as u8)).collect();
        for cols in [2, 3, 80, 200] {
            both_ways(TermSize { cols, rows: 5 }, text.as_bytes(), 1 << 16).unwrap();
            both_ways(TermSize { cols, rows: 5 }, text.as_bytes(), 7).unwrap();
        }
    }

    #[test]
    fn insert_mode_line_drawing_and_no_autowrap_take_the_general_path() {
        let size = TermSize { cols: 8, rows: 3 };
        for prefix in ["\x1b[4habcdef\r", "\x1b(0", "\x1b)0\x0e", "\x1b[?7l"] {
            let bytes = format!("{prefix}0123456789qrstuvwxyz");
            both_ways(size, bytes.as_bytes(), 3).unwrap();
        }
        let mut pane = PaneTerminal::new(size, DEFAULT_SCROLLBACK);
        pane.feed(b"\x1b(0qqq\x1b(B\r\n\x1b[?7l0123456789");
        assert_eq!(pane.screen_lines(false), ["───", "01234569"]);
    }
}

/// Scrolling regions (change 17): the rows of a region that is not the whole screen move in
/// one piece of the ring, or row by row where the region's rows wrap around the ring's end (full
/// screen line feeds in between move the ring's start). A model of the screen, rows of text
/// shifted by hand, is compared with the terminal's after every step, on both screens.
#[test]
fn scrolling_regions_move_their_rows_and_keep_the_others() {
    const ROWS: usize = 9;
    for alt in [false, true] {
        let mut term = PaneTerminal::new(TermSize { cols: 12, rows: ROWS as u16 }, 100);
        let mut model: Vec<String> = vec![String::new(); ROWS];
        if alt {
            term.feed(b"\x1b[?1049h");
        }
        let mut seed = 0x2545_f491_u32;
        let mut next = |n: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) % n
        };
        for step in 0..400 {
            // A region, often one that leaves fixed lines above or below it (or both).
            let top = next(ROWS as u32 / 2) as usize;
            let bottom = (top + 1 + next((ROWS - top - 1) as u32) as usize).min(ROWS - 1);
            let (top, bottom) = if next(5) == 0 { (0, ROWS - 1) } else { (top, bottom) };
            let count = 1 + next(3) as usize;
            let label = format!("s{step}");
            let mut bytes =
                format!("\x1b[{};{}r\x1b[{};1H{label}", top + 1, bottom + 1, bottom + 1);
            model[bottom] = label;
            if next(2) == 0 {
                // Line feeds at the region's bottom.
                bytes.push_str(&"\n".repeat(count));
            } else {
                // SU, from anywhere in the region.
                bytes.push_str(&format!("\x1b[{count}S"));
            }
            let count = count.min(bottom - top + 1);
            model[top..=bottom].rotate_left(count);
            for row in &mut model[bottom + 1 - count..=bottom] {
                row.clear();
            }
            term.feed(bytes.as_bytes());
            let mut want = model.clone();
            while want.last().is_some_and(String::is_empty) {
                want.pop();
            }
            assert_eq!(term.screen_lines(false), want, "alt {alt}, step {step}: {bytes:?}");
        }
    }
}

/// vendor/vte/BERTH.md change 1: a character split across two reads, with the next character
/// whole in the second read, loses neither (upstream vte dropped the `e` after a split `é`).
#[test]
fn a_character_split_across_reads_loses_nothing_after_it() {
    use alacritty_terminal::vte::ansi::Processor;
    let size = TermSize { cols: 2, rows: 1 };
    for text in ["abc\u{e9}e\u{301}", "abc\u{e9}xy", "a\u{1f980}b", "a\u{6f22}\u{e9}"] {
        let bytes = text.as_bytes();
        let mut whole = Term::new(
            term_config(DEFAULT_SCROLLBACK, CursorStyle::default()),
            &GridSize(size),
            TermListener::default(),
        );
        Processor::<alacritty_terminal::vte::ansi::StdSyncHandler>::new()
            .advance(&mut whole, bytes);
        let wanted = whole.grid().history_size();
        for cut in 1..bytes.len() {
            let mut pane = PaneTerminal::new(size, DEFAULT_SCROLLBACK);
            pane.feed(&bytes[..cut]);
            pane.feed(&bytes[cut..]);
            assert_eq!(pane.term().grid().history_size(), wanted, "{text:?} cut at {cut}");
            let mut bare = Term::new(
                term_config(DEFAULT_SCROLLBACK, CursorStyle::default()),
                &GridSize(size),
                TermListener::default(),
            );
            let mut parser = Processor::<alacritty_terminal::vte::ansi::StdSyncHandler>::new();
            parser.advance(&mut bare, &bytes[..cut]);
            parser.advance(&mut bare, &bytes[cut..]);
            let cells = |t: &Term<TermListener>| {
                let g = t.grid();
                (g.topmost_line().0..=g.bottommost_line().0)
                    .flat_map(|l| g[Line(l)][..].iter().map(|c| c.c).collect::<Vec<_>>())
                    .collect::<String>()
            };
            assert_eq!(cells(&bare), cells(&whole), "{text:?} cut at {cut}");
        }
    }
}
