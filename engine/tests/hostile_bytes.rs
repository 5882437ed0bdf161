//! A bounded fuzz of the path hostile program output takes: bytes → the OSC scanner (inside
//! `PaneTerminal::feed`) → terminal events → the notification parser; and grid edits inside
//! left/right and top/bottom margins. A fixed number of cases, so it runs in seconds in the
//! test suite; a failing case found here becomes a table test.

use std::time::{Duration, Instant};

use berth_engine::notify::{NotifyEvent, NotifyParser, MAX_BODY_CHARS, MAX_TITLE_CHARS};
use berth_engine::terminal::{PaneTerminal, TermSize, TerminalEvent};
use proptest::prelude::*;

/// Pieces that move the scanner and vte between states, and the OSCs Berth acts on.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..24),
        2 => prop::sample::select(vec![
            b"\x1b]9;".to_vec(), b"\x1b]99;".to_vec(), b"\x1b]777;notify;".to_vec(),
            b"\x1b]0;".to_vec(), b"\x1b]2;".to_vec(), b"\x1b]7;file://".to_vec(),
            b"\x1b]133;A".to_vec(), b"\x1b]9;4;1;50".to_vec(), b"\x1b\\".to_vec(),
            b"\x07".to_vec(), b"\x9c".to_vec(), b"\x1bP".to_vec(), b"\x1b_".to_vec(),
            b"\x18".to_vec(), b"i=1:d=0:p=title;".to_vec(), b"\xc2\x9b".to_vec(),
            b"\x7f".to_vec(), b"\xe2\x80\xae".to_vec(), b"\x1b[?1049h".to_vec(),
            b"\x1b[8;65535;65535t".to_vec(),
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hostile_output_never_panics_and_notifications_come_out_clean(
        pieces in prop::collection::vec(piece(), 0..40),
        chunk in 1usize..64,
    ) {
        let bytes: Vec<u8> = pieces.concat();
        let mut term = PaneTerminal::new(TermSize { cols: 40, rows: 10 }, 100);
        let mut parser = NotifyParser::new();
        let t0 = Instant::now();
        for (i, part) in bytes.chunks(chunk).enumerate() {
            term.feed(part);
            for event in term.take_events() {
                if let TerminalEvent::Notify { kind, payload } = event {
                    let now = t0 + Duration::from_millis(i as u64 * 7);
                    for shown in parser.handle(kind, &payload, now) {
                        if let NotifyEvent::Show(n) = shown {
                            prop_assert!(n.title.chars().count() <= MAX_TITLE_CHARS);
                            prop_assert!(n.body.chars().count() <= MAX_BODY_CHARS);
                            prop_assert!(!n.title.chars().any(char::is_control));
                        }
                    }
                }
            }
        }
        // A program cannot grow the terminal: `CSI 8 ; rows ; cols t` is not obeyed.
        prop_assert_eq!(term.size(), TermSize { cols: 40, rows: 10 });
    }
}

/// Pieces that edit the grid inside left/right and top/bottom margins, with wide characters
/// cut by the margins' edges, origin mode and reverse wraparound.
fn margin_piece() -> impl Strategy<Value = Vec<u8>> {
    let n = || 0u16..50;
    prop_oneof![
        (n(), n()).prop_map(|(l, r)| format!("\x1b[{l};{r}s").into_bytes()),
        (n(), n()).prop_map(|(t, b)| format!("\x1b[{t};{b}r").into_bytes()),
        (n(), n()).prop_map(|(y, x)| format!("\x1b[{y};{x}H").into_bytes()),
        (n(), prop::sample::select(b"@PLMSTbCDEFGIZad".to_vec())).prop_map(|(v, f)| format!(
            "\x1b[{v}{}",
            f as char
        )
        .into_bytes()),
        (n(), prop::sample::select(vec!["'}", "'~"]))
            .prop_map(|(v, f)| format!("\x1b[{v}{f}").into_bytes()),
        prop::sample::select(vec![
            b"\x1b[?69h".to_vec(),
            b"\x1b[?69l".to_vec(),
            b"\x1b[?6h".to_vec(),
            b"\x1b[?6l".to_vec(),
            b"\x1b[?45h".to_vec(),
            b"\x1b[?7l".to_vec(),
            b"\x1b[4h".to_vec(),
            b"\x1b[4l".to_vec(),
            b"\x1b6".to_vec(),
            b"\x1b9".to_vec(),
            b"\x1bD".to_vec(),
            b"\x1bM".to_vec(),
            b"\x1bE".to_vec(),
            b"\x1b7".to_vec(),
            b"\x1b8".to_vec(),
            b"\x1b[!p".to_vec(),
            b"\x1b#8".to_vec(),
            b"\r".to_vec(),
            b"\n".to_vec(),
            b"\x08".to_vec(),
            b"\t".to_vec(),
            "漢字ab".as_bytes().to_vec(),
            b"abcdefghij".to_vec(),
            b"\x1b[?1047h".to_vec(),
            b"\x1b[?1047l".to_vec(),
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn edits_inside_left_and_right_margins_never_panic(
        pieces in prop::collection::vec(margin_piece(), 0..60),
        resize_at in 0usize..60,
    ) {
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 8 }, 50);
        for (i, piece) in pieces.iter().enumerate() {
            if i == resize_at {
                term.resize(TermSize { cols: 13, rows: 5 });
            }
            term.feed(piece);
        }
        let size = term.size();
        let cursor = term.term().grid().cursor.point;
        prop_assert!(cursor.column.0 < usize::from(size.cols));
        prop_assert!(cursor.line.0 >= 0 && cursor.line.0 < i32::from(size.rows));
        if let Some((left, right)) = term.term().horizontal_margins() {
            prop_assert!(left < right && right < usize::from(size.cols));
        }
    }
}
