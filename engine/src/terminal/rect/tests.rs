//! Table tests of the rectangle and column edits: a screen written, an edit applied, the
//! rows that result.

use super::super::{PaneTerminal, TermSize, TerminalEvent, DEFAULT_SCROLLBACK};

/// Eight rows of eight distinct characters, as esctest writes them.
const DATA: &[u8] =
    b"abcdefgh\r\nijklmnop\r\nqrstuvwx\r\nyz012345\r\nABCDEFGH\r\nIJKLMNOP\r\nQRSTUVWX\r\nYZ6789!@";

fn terminal() -> PaneTerminal {
    PaneTerminal::new(TermSize { cols: 80, rows: 24 }, DEFAULT_SCROLLBACK)
}

/// The screen's rows after feeding `DATA` and then `edit`.
fn after(edit: &[u8]) -> Vec<String> {
    let mut term = terminal();
    term.feed(DATA);
    term.feed(edit);
    term.screen_lines(false)
}

#[test]
fn fill_erase_and_copy_change_exactly_their_rectangle() {
    let cases: &[(&[u8], &[&str])] = &[
        // DECFRA with '!' (33).
        (
            b"\x1b[33;5;5;7;7$x",
            &["abcdefgh", "ijklmnop", "qrstuvwx", "yz012345", "ABCD!!!H", "IJKL!!!P", "QRST!!!X"],
        ),
        // An empty rectangle, a control character: nothing.
        (b"\x1b[33;5;5;4;4$x", &["abcdefgh", "ijklmnop"]),
        (b"\x1b[10;1;1;2;2$x", &["abcdefgh", "ijklmnop"]),
        // DECERA and DECSERA (no protected characters: the same).
        (b"\x1b[1;2;2;3$z", &["a  defgh", "i  lmnop", "qrstuvwx"]),
        (b"\x1b[1;2;2;3${", &["a  defgh", "i  lmnop", "qrstuvwx"]),
        // DECCRA: the 2×2 top-left corner to row 2, column 2, overlapping its source.
        (b"\x1b[1;1;2;2;1;2;2;1$v", &["abcdefgh", "iablmnop", "qijtuvwx", "yz012345"]),
        // To the screen's right edge: clipped.
        (
            b"\x1b[1;1;1;8;1;1;78;1$v",
            &["abcdefgh                                                                     abc"],
        ),
        // In origin mode rows count from the scrolling region's top.
        (b"\x1b[3;10r\x1b[?6h\x1b[33;1;1;1;1$x", &["abcdefgh", "ijklmnop", "!rstuvwx"]),
        // DECSED and DECSEL erase as ED and EL (nothing is protected).
        (b"\x1b[2;3H\x1b[?K", &["abcdefgh", "ij", "qrstuvwx"]),
        (b"\x1b[2;3H\x1b[?1K", &["abcdefgh", "   lmnop", "qrstuvwx"]),
        (b"\x1b[2;3H\x1b[?2K", &["abcdefgh", "", "qrstuvwx"]),
        (b"\x1b[2;3H\x1b[?J", &["abcdefgh", "ij"]),
        // (From the third row: alacritty's ED 1 on the second row leaves the first.)
        (b"\x1b[3;3H\x1b[?1J", &["", "", "   tuvwx", "yz012345"]),
        // DECIC and DECDC at the cursor, on the scrolling region's rows.
        (b"\x1b[1;3H\x1b[2'}", &["ab  cdefgh", "ij  klmnop", "qr  stuvwx"]),
        (b"\x1b[1;3H\x1b[2'~", &["abefgh", "ijmnop", "qruvwx"]),
        (b"\x1b[2;3r\x1b[2;3H\x1b['}", &["abcdefgh", "ij klmnop", "qr stuvwx", "yz012345"]),
        // The cursor outside the region: nothing.
        (b"\x1b[2;3r\x1b[5;3H\x1b['}", &["abcdefgh", "ijklmnop", "qrstuvwx", "yz012345"]),
    ];
    for (edit, rows) in cases {
        let screen = after(edit);
        assert_eq!(&screen[..rows.len()], *rows, "after {:?}", String::from_utf8_lossy(edit));
    }
}

#[test]
fn a_rectangle_past_the_screen_is_clipped() {
    let screen = after(b"\x1b[33;1;78;1;99$x\x1b[35;24;80;99;99$x");
    assert_eq!(screen[0], format!("abcdefgh{}!!!", " ".repeat(69)));
    assert_eq!(screen[23], format!("{}#", " ".repeat(79)));
}

#[test]
fn fill_uses_the_current_rendition_and_the_cursor_stays() {
    let mut term = terminal();
    term.feed(DATA);
    term.feed(b"\x1b[3;4H\x1b[1m\x1b[33;1;1;1;1$x\x1b[0m\x1b[6n\x1b[1;1;1;1;1;1*y");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::PtyWrite(b"\x1b[3;4R".to_vec()),
            // '!' (0x21) plus bold (0x80), negated.
            TerminalEvent::PtyWrite(b"\x1bP1!~FF5F\x1b\\".to_vec()),
        ]
    );
}

#[test]
fn a_wide_character_cut_by_an_edit_is_blanked_whole() {
    let mut term = terminal();
    term.feed("日本語".as_bytes());
    // Erase the right half of 日: its left half goes too.
    term.feed(b"\x1b[1;2;1;2$z");
    assert_eq!(term.screen_lines(false)[0], "  本語");
    // Copy the right half of 語 over 本's left half: 本 goes, and the lone half too.
    term.feed(b"\x1b[1;6;1;6;1;1;3;1$v");
    assert_eq!(term.screen_lines(false)[0], "    語");
    // Insert a column at 語's right half: it is split, so it goes.
    term.feed(b"\x1b[1;6H\x1b['}");
    assert_eq!(term.screen_lines(false), Vec::<String>::new());
}

/// Every edit with extreme parameters, on the smallest screens and with odd regions, in
/// origin mode or not: nothing panics.
#[test]
fn edits_with_extreme_parameters_do_not_panic() {
    let values = ["", "0", "1", "2", "3", "65535", "99999999"];
    let finals = ["$x", "$z", "${", "$v", "'}", "'~", "*y"];
    for (cols, rows) in [(2, 1), (3, 2), (80, 24)] {
        for setup in ["", "\x1b[2;3r", "\x1b[2;3r\x1b[?6h", "\x1b[5;99r\x1b[?6h", "日本"] {
            let mut term = PaneTerminal::new(TermSize { cols, rows }, 100);
            term.feed(setup.as_bytes());
            for a in values {
                for b in values {
                    for end in finals {
                        let params = format!("{a};{b};{a};{b};{a};{b};{a};{b}");
                        term.feed(format!("\x1b[{a}{end}\x1b[33;{params}{end}").as_bytes());
                    }
                }
            }
            term.take_events();
        }
    }
}
