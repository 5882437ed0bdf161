//! A bounded fuzz of the path hostile program output takes: bytes → the OSC scanner (inside
//! `PaneTerminal::feed`) → terminal events → the notification parser. A fixed number of cases,
//! so it runs in seconds in the test suite; a failing case found here becomes a table test.

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
