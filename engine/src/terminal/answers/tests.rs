//! Table tests of the replies to queries: each input, fed to a fresh 80×24 terminal whole and a
//! byte at a time, and the exact bytes it answers.

use super::super::{PaneTerminal, TermSize, TerminalEvent, DEFAULT_SCROLLBACK};

fn terminal() -> PaneTerminal {
    PaneTerminal::new(TermSize { cols: 80, rows: 24 }, DEFAULT_SCROLLBACK)
}

fn fed(bytes: &[u8]) -> PaneTerminal {
    let mut term = terminal();
    term.feed(bytes);
    term
}

/// Feeds each input to a fresh terminal and checks the one reply it gets, fed whole and a byte
/// at a time.
fn assert_replies(cases: &[(&[u8], &[u8])]) {
    for (input, reply) in cases {
        let mut term = fed(input);
        assert_eq!(
            term.take_events(),
            vec![TerminalEvent::PtyWrite(reply.to_vec())],
            "reply to {:?}",
            String::from_utf8_lossy(input)
        );
        let mut term = terminal();
        let mut events = Vec::new();
        for byte in input.iter() {
            term.feed(std::slice::from_ref(byte));
            events.extend(term.take_events());
        }
        assert_eq!(events, vec![TerminalEvent::PtyWrite(reply.to_vec())], "bytewise {input:?}");
    }
}

/// The bytes written back to the PTY among `events`, in order (titles and other events left
/// out).
fn written(events: Vec<TerminalEvent>) -> Vec<u8> {
    events
        .into_iter()
        .filter_map(|e| match e {
            TerminalEvent::PtyWrite(bytes) => Some(bytes),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Feeds each input to a fresh terminal, whole and a byte at a time, and checks every byte it
/// writes back (other events, such as titles, are allowed).
fn assert_written(cases: &[(&[u8], &[u8])]) {
    for (input, reply) in cases {
        for chunk in [input.len(), 1] {
            let mut term = terminal();
            let mut events = Vec::new();
            for piece in input.chunks(chunk) {
                term.feed(piece);
                events.extend(term.take_events());
            }
            assert_eq!(
                String::from_utf8_lossy(&written(events)),
                String::from_utf8_lossy(reply),
                "{:?} in chunks of {chunk}",
                String::from_utf8_lossy(input)
            );
        }
    }
}

#[test]
fn xtversion_names_berth_and_its_version() {
    let reply = format!("\x1bP>|Berth {}\x1b\\", env!("CARGO_PKG_VERSION"));
    assert_replies(&[(b"\x1b[>q", reply.as_bytes()), (b"\x1b[>0q", reply.as_bytes())]);
}

#[test]
fn device_attributes_have_exact_replies() {
    assert_replies(&[
        // VT220 class with selective erase and ANSI colour: what of xterm's list Berth
        // implements.
        (b"\x1b[c", b"\x1b[?62;6;22c"),
        (b"\x1b[0c", b"\x1b[?62;6;22c"),
        // DA2 stays alacritty's (terminal type 0, its version, ROM 1).
        (b"\x1b[>c", b"\x1b[>0;2600;1c"),
        (b"\x1b[=c", b"\x1bP!|00000000\x1b\\"),
        (b"\x1b[=0c", b"\x1bP!|00000000\x1b\\"),
    ]);
}

#[test]
fn decrqm_reports_every_mode_berth_knows() {
    assert_replies(&[
        (b"\x1b[?1$p", b"\x1b[?1;2$y"),
        (b"\x1b[?1h\x1b[?1$p", b"\x1b[?1;1$y"),
        (b"\x1b[?6$p", b"\x1b[?6;2$y"),
        (b"\x1b[?7$p", b"\x1b[?7;1$y"),
        (b"\x1b[?12$p", b"\x1b[?12;2$y"),
        (b"\x1b[?25$p", b"\x1b[?25;1$y"),
        (b"\x1b[?1000$p", b"\x1b[?1000;2$y"),
        (b"\x1b[?1002h\x1b[?1002$p", b"\x1b[?1002;1$y"),
        (b"\x1b[?1004$p", b"\x1b[?1004;2$y"),
        (b"\x1b[?1006$p", b"\x1b[?1006;2$y"),
        (b"\x1b[?1049$p", b"\x1b[?1049;2$y"),
        (b"\x1b[?1049h\x1b[?1049$p", b"\x1b[?1049;1$y"),
        (b"\x1b[?2004$p", b"\x1b[?2004;2$y"),
        (b"\x1b[?2026$p", b"\x1b[?2026;2$y"),
        (b"\x1b[?9999$p", b"\x1b[?9999;0$y"),
        // DECNKM is the keypad mode, whichever way it was set.
        (b"\x1b[?66$p", b"\x1b[?66;2$y"),
        (b"\x1b[?66h\x1b[?66$p", b"\x1b[?66;1$y"),
        (b"\x1b=\x1b[?66$p", b"\x1b[?66;1$y"),
        (b"\x1b[?66h\x1b[?66l\x1b[?66$p", b"\x1b[?66;2$y"),
        (b"\x1b[?60$p", b"\x1b[?60;4$y"),
        // DECSCNM (reverse video, drawn by the window) and the printer modes DECPFF and
        // DECPEX (kept, though there is no printer).
        (b"\x1b[?5$p", b"\x1b[?5;2$y"),
        (b"\x1b[?5h\x1b[?5$p", b"\x1b[?5;1$y"),
        (b"\x1b[?5h\x1b[?5l\x1b[?5$p", b"\x1b[?5;2$y"),
        (b"\x1b[?5h\x1bc\x1b[?5$p", b"\x1b[?5;2$y"),
        (b"\x1b[?18$p", b"\x1b[?18;2$y"),
        (b"\x1b[?18h\x1b[?18$p", b"\x1b[?18;1$y"),
        (b"\x1b[?18h\x1b[?18l\x1b[?18$p", b"\x1b[?18;2$y"),
        (b"\x1b[?19$p", b"\x1b[?19;2$y"),
        (b"\x1b[?19h\x1b[?19$p", b"\x1b[?19;1$y"),
        (b"\x1b[?19h\x1bc\x1b[?19$p", b"\x1b[?19;2$y"),
        (b"\x1b[?47$p", b"\x1b[?47;2$y"),
        (b"\x1b[?1047h\x1b[?1047$p", b"\x1b[?1047;1$y"),
        (b"\x1b[?47h\x1b[?1049$p", b"\x1b[?1049;1$y"),
        (b"\x1b[?67$p", b"\x1b[?67;2$y"),
        (b"\x1b[?67h\x1b[?67$p", b"\x1b[?67;1$y"),
        (b"\x1b[?67h\x1b[?67l\x1b[?67$p", b"\x1b[?67;2$y"),
        (b"\x1b[?67h\x1bc\x1b[?67$p", b"\x1b[?67;2$y"),
        (b"\x1b[4$p", b"\x1b[4;2$y"),
        (b"\x1b[4h\x1b[4$p", b"\x1b[4;1$y"),
        (b"\x1b[20$p", b"\x1b[20;2$y"),
        // ECMA-48 modes Berth (like xterm) does not implement: permanently reset.
        (b"\x1b[1$p", b"\x1b[1;4$y"),
        (b"\x1b[5$p", b"\x1b[5;4$y"),
        (b"\x1b[7$p", b"\x1b[7;4$y"),
        (b"\x1b[10$p", b"\x1b[10;4$y"),
        (b"\x1b[11$p", b"\x1b[11;4$y"),
        (b"\x1b[13$p", b"\x1b[13;4$y"),
        (b"\x1b[19$p", b"\x1b[19;4$y"),
        (b"\x1b[2$p", b"\x1b[2;0$y"),
    ]);
    // DECNKM changes what the keypad sends, DECBKM what Backspace sends.
    let term = fed(b"\x1b[?66h");
    assert!(term.term().mode().contains(alacritty_terminal::term::TermMode::APP_KEYPAD));
    assert!(!term.backarrow_sends_bs());
    assert!(fed(b"\x1b[?67h").backarrow_sends_bs());
}

/// DECSCL sets a conformance level (after a soft reset): below 3 DECRQM goes unanswered, below
/// 4 DECLRMM is ignored, as in xterm; DECRQSS reports the level; a reset forgets it.
#[test]
fn decscl_levels_gate_decrqm_and_left_right_margins() {
    assert_written(&[
        (b"\x1b[62;1\"p\x1b[4$p\x1b[?1$p", b""),
        (b"\x1b[61\"p\x1b[4$p", b""),
        (b"\x1b[63;1\"p\x1b[4$p", b"\x1b[4;2$y"),
        (b"\x1b[63;1\"p\x1b[?69h\x1b[?69$p", b"\x1b[?69;2$y"),
        (b"\x1b[64;1\"p\x1b[?69h\x1b[?69$p", b"\x1b[?69;1$y"),
        // VT500 is above what Berth has: ignored, like a level xterm does not know.
        (b"\x1b[62;1\"p\x1b[65;1\"p\x1bP$q\"p\x1b\\", b"\x1bP1$r62;1\"p\x1b\\"),
        (b"\x1b[63;1\"p\x1b[65;1\"p\x1bP$q\"p\x1b\\", b"\x1bP1$r63;1\"p\x1b\\"),
        (b"\x1bP$q\"p\x1b\\", b"\x1bP1$r62;1\"p\x1b\\"),
        (b"\x1b[63;1\"p\x1bP$q\"p\x1b\\", b"\x1bP1$r63;1\"p\x1b\\"),
        // A level that is no level is ignored; a reset goes back to no level.
        (b"\x1b[70;1\"p\x1b[4$p", b"\x1b[4;2$y"),
        (b"\x1b[62\"p\x1bc\x1b[4$p", b"\x1b[4;2$y"),
        // DECSCL soft-resets: insert mode goes, the screen stays.
        (b"\x1b[4h\x1b[63\"p\x1b[4$p", b"\x1b[4;2$y"),
    ]);
    let term = fed(b"kept\x1b[62;1\"p");
    assert_eq!(term.screen_lines(false), vec!["kept".to_owned()]);
}

#[test]
fn kitty_keyboard_flags_are_pushed_popped_set_and_queried_per_screen() {
    assert_replies(&[
        (b"\x1b[?u", b"\x1b[?0u"),
        (b"\x1b[>1u\x1b[?u", b"\x1b[?1u"),
        (b"\x1b[>31u\x1b[?u", b"\x1b[?31u"),
        (b"\x1b[>1u\x1b[>12u\x1b[?u", b"\x1b[?12u"),
        (b"\x1b[>1u\x1b[>12u\x1b[<u\x1b[?u", b"\x1b[?1u"),
        (b"\x1b[>1u\x1b[>12u\x1b[<2u\x1b[?u", b"\x1b[?0u"),
        (b"\x1b[>1u\x1b[<9u\x1b[?u", b"\x1b[?0u"),
        // `CSI = flags ; mode u` replaces (1), adds (2) or removes (3) flags in force.
        (b"\x1b[=3u\x1b[?u", b"\x1b[?3u"),
        (b"\x1b[>1u\x1b[=4;2u\x1b[?u", b"\x1b[?5u"),
        (b"\x1b[>7u\x1b[=2;3u\x1b[?u", b"\x1b[?5u"),
        (b"\x1b[>7u\x1b[=8u\x1b[?u", b"\x1b[?8u"),
        // Each screen has its own stack.
        (b"\x1b[>1u\x1b[?1049h\x1b[?u", b"\x1b[?0u"),
        (b"\x1b[?1049h\x1b[>8u\x1b[?1049l\x1b[?u", b"\x1b[?0u"),
        (b"\x1b[>1u\x1b[?1049h\x1b[>8u\x1b[?1049l\x1b[?u", b"\x1b[?1u"),
        // A reset clears them.
        (b"\x1b[>1u\x1bc\x1b[?u", b"\x1b[?0u"),
    ]);
    let term = fed(b"\x1b[>5u");
    assert_eq!(term.keyboard_flags(), 5);
}

/// Regression: alacritty's push past 4096 entries removes a title-stack entry instead and
/// panicked when there was none; the handler stops short and the flags stay right.
#[test]
fn a_kitty_keyboard_push_flood_does_not_panic() {
    let mut term = terminal();
    term.feed(&b"\x1b[>1u".repeat(5000));
    term.feed(b"\x1b[>3u\x1b[?u");
    assert_eq!(term.take_events(), vec![TerminalEvent::PtyWrite(b"\x1b[?1u".to_vec())]);
    term.feed(&b"\x1b[<u".repeat(5000));
    term.feed(b"\x1b[?u");
    assert_eq!(term.take_events(), vec![TerminalEvent::PtyWrite(b"\x1b[?0u".to_vec())]);
}

#[test]
fn decrqss_reports_settings() {
    assert_replies(&[
        (b"\x1bP$qm\x1b\\", b"\x1bP1$r0m\x1b\\"),
        (b"\x1b[1;4;31;42m\x1bP$qm\x1b\\", b"\x1bP1$r0;1;4;31;42m\x1b\\"),
        (b"\x1b[3;38;5;100;48;2;1;2;3m\x1bP$qm\x1b\\", b"\x1bP1$r0;3;38;5;100;48;2;1;2;3m\x1b\\"),
        (b"\x1b[94m\x1bP$qm\x1b\\", b"\x1bP1$r0;94m\x1b\\"),
        (b"\x1bP$q q\x1b\\", b"\x1bP1$r2 q\x1b\\"),
        (b"\x1b[6 q\x1bP$q q\x1b\\", b"\x1bP1$r6 q\x1b\\"),
        (b"\x1b[3 q\x1bP$q q\x1b\\", b"\x1bP1$r3 q\x1b\\"),
        (b"\x1bP$q\"q\x1b\\", b"\x1bP1$r0\"q\x1b\\"),
        (b"\x1b[1\"q\x1bP$q\"q\x1b\\", b"\x1bP1$r1\"q\x1b\\"),
        (b"\x1b[1\"q\x1b[2\"q\x1bP$q\"q\x1b\\", b"\x1bP1$r0\"q\x1b\\"),
        // DECSTBM: the whole screen until a region is set; a reset or a bad region.
        (b"\x1bP$qr\x1b\\", b"\x1bP1$r1;24r\x1b\\"),
        (b"\x1b[5;10r\x1bP$qr\x1b\\", b"\x1bP1$r5;10r\x1b\\"),
        (b"\x1b[5r\x1bP$qr\x1b\\", b"\x1bP1$r5;24r\x1b\\"),
        (b"\x1b[5;10r\x1b[r\x1bP$qr\x1b\\", b"\x1bP1$r1;24r\x1b\\"),
        (b"\x1b[5;10r\x1b[9;3r\x1bP$qr\x1b\\", b"\x1bP1$r5;10r\x1b\\"),
        (b"\x1b[5;10r\x1bc\x1bP$qr\x1b\\", b"\x1bP1$r1;24r\x1b\\"),
        (b"\x1b[2;99r\x1bP$qr\x1b\\", b"\x1bP1$r2;24r\x1b\\"),
        (b"\x1bP$q$}\x1b\\", b"\x1bP1$r0$}\x1b\\"),
        (b"\x1bP$q\"p\x1b\\", b"\x1bP1$r62;1\"p\x1b\\"),
        (b"\x1bP$qt\x1b\\", b"\x1bP1$r24t\x1b\\"),
        (b"\x1bP$q*|\x1b\\", b"\x1bP1$r24*|\x1b\\"),
        (b"\x1bP$q$~\x1b\\", b"\x1bP1$r0$~\x1b\\"),
        (b"\x1bP$qz\x1b\\", b"\x1bP0$r\x1b\\"),
        (b"\x1bP$qmmmmmmmmmmmmm\x1b\\", b"\x1bP0$r\x1b\\"),
    ]);
    // An aborted request is not answered.
    let mut term = fed(b"\x1bP$qm\x18\x1bP$qm\x1b[");
    assert_eq!(term.take_events(), vec![]);
}

#[test]
fn a_resize_resets_the_reported_scrolling_region() {
    let mut term = fed(b"\x1b[5;10r");
    term.resize(TermSize { cols: 80, rows: 30 });
    term.feed(b"\x1bP$qr\x1b\\");
    assert_eq!(term.take_events(), vec![TerminalEvent::PtyWrite(b"\x1bP1$r1;30r\x1b\\".to_vec())]);
}

#[test]
fn decrqcra_sums_a_rectangle_as_xterm_does() {
    assert_replies(&[
        // One empty cell counts as a space: -0x20.
        (b"\x1b[1;1;1;1;1;1*y", b"\x1bP1!~FFE0\x1b\\"),
        (b"A\x1b[7;1;1;1;1;1*y", b"\x1bP7!~FFBF\x1b\\"),
        // Bold adds 0x80, underline 0x10, inverse 0x20.
        (b"\x1b[1mA\x1b[2;1;1;1;1;1*y", b"\x1bP2!~FF3F\x1b\\"),
        (b"\x1b[4;7mA\x1b[2;1;1;1;1;1*y", b"\x1bP2!~FF8F\x1b\\"),
        // Two cells: 'A' + 'B' = 0x83.
        (b"AB\x1b[3;1;1;1;1;2*y", b"\x1bP3!~FF7D\x1b\\"),
        // The whole screen by default: 1920 spaces = 0xF000.
        (b"\x1b[9;1*y", b"\x1bP9!~1000\x1b\\"),
        (b"\x1b[9*y", b"\x1bP9!~1000\x1b\\"),
        // Clipped to the screen.
        (b"\x1b[4;1;24;80;99;99*y", b"\x1bP4!~FFE0\x1b\\"),
        // Empty once clipped, or upside down: nothing summed.
        (b"\x1b[4;1;30;1;30;1*y", b"\x1bP4!~0000\x1b\\"),
        (b"\x1b[4;1;5;5;2;2*y", b"\x1bP4!~0000\x1b\\"),
        // A wide character counts once; a combining mark is added to its base.
        ("日\x1b[5;1;1;1;1;2*y".as_bytes(), b"\x1bP5!~9A1B\x1b\\"),
        ("e\u{301}\x1b[6;1;1;1;1;1*y".as_bytes(), b"\x1bP6!~FC9A\x1b\\"),
        // In origin mode rows count from the scrolling region's top.
        (b"\x1b[5;10r\x1b[?6hX\x1b[8;1;1;1;1;1*y", b"\x1bP8!~FFA8\x1b\\"),
        (b"\x1b[5;10r\x1b[?6hX\x1b[?6l\x1b[8;1;5;1;5;1*y", b"\x1bP8!~FFA8\x1b\\"),
    ]);
}

#[test]
fn xtwinops_and_dsr_report_sizes_and_status() {
    assert_replies(&[
        (b"\x1b[14t", b"\x1b[4;480;800t"),
        (b"\x1b[16t", b"\x1b[6;20;10t"),
        (b"\x1b[18t", b"\x1b[8;24;80t"),
        (b"\x1b[19t", b"\x1b[9;24;80t"),
        // The screen in pixels: a pane is its own screen, as for 19.
        (b"\x1b[15t", b"\x1b[5;480;800t"),
        (b"\x1b[14;2t", b"\x1b[4;480;800t"),
        (b"ab\r\n\x1b[?6n", b"\x1b[?2;1R"),
        (b"\x1b[?15n", b"\x1b[?13n"),
        (b"\x1b[?25n", b"\x1b[?21n"),
        (b"\x1b[?26n", b"\x1b[?27;0n"),
        (b"\x1b[?53n", b"\x1b[?50n"),
        (b"\x1b[?55n", b"\x1b[?50n"),
        (b"\x1b[?56n", b"\x1b[?57;0n"),
        (b"\x1b[?62n", b"\x1b[0*{"),
        (b"\x1b[?63;123n", b"\x1bP123!~0000\x1b\\"),
        (b"\x1b[?75n", b"\x1b[?70n"),
        (b"\x1b[?85n", b"\x1b[?83n"),
    ]);
    // An unknown status report gets no answer.
    let mut term = fed(b"\x1b[?99n\x1b[?1;2;3n");
    assert_eq!(term.take_events(), vec![]);
}

/// XTWINOPS 20 and 21 report the icon label and the window title as xterm does (`OSC L` and
/// `OSC l`, ended by `ESC \` whatever ended the OSC that set them), as the server shows them:
/// without control characters or bidi overrides, cut at 256 characters, so the reply can type
/// nothing but printable text.
#[test]
fn title_reports_carry_only_printable_text() {
    let long = format!("\x1b]2;{}\x07\x1b[21t", "x".repeat(300));
    let long_reply = format!("\x1b]l{}…\x1b\\", "x".repeat(255));
    assert_written(&[
        (b"\x1b[21t", b"\x1b]l\x1b\\"),
        (b"\x1b[20t", b"\x1b]L\x1b\\"),
        (b"\x1b]2;hello world\x07\x1b[21t", b"\x1b]lhello world\x1b\\"),
        (b"\x1b]2;hello\x1b\\\x1b[20t", b"\x1b]L\x1b\\"),
        (b"\x1b]1;icon\x07\x1b[20t", b"\x1b]Licon\x1b\\"),
        (b"\x1b]1;icon\x07\x1b[21t", b"\x1b]l\x1b\\"),
        (b"\x1b]0;both\x1b\\\x1b[20t", b"\x1b]Lboth\x1b\\"),
        (b"\x1b]0;both\x07\x1b[21t", b"\x1b]lboth\x1b\\"),
        (b"\x1b]0;a;b\x07\x1b[20t", b"\x1b]La;b\x1b\\"),
        (b"\x1b]2;caf\xc3\xa9\x07\x1b[21t", b"\x1b]lcaf\xc3\xa9\x1b\\"),
        // C1 controls (CSI, ST) and bidi overrides reach a title as UTF-8; the report drops
        // them, and a line break (NEL) becomes a space. C0 controls and DEL never reach it
        // (vte skips them inside an OSC).
        (
            b"\x1b]2;rm -rf ~\xc2\x85\xc2\x9b\xc2\x9c\x0a\x7f\xe2\x80\xae!\x07\x1b[21t",
            b"\x1b]lrm -rf ~ !\x1b\\",
        ),
        (long.as_bytes(), long_reply.as_bytes()),
    ]);
    // Every byte of a report of hostile text is printable, but for the frame's own ESC.
    let mut term = fed("\x1b]0;a\u{9b}2J\u{9c}\u{202e}b\x07\x1b[20t\x1b[21t".as_bytes());
    for event in term.take_events() {
        let TerminalEvent::PtyWrite(reply) = event else { continue };
        let text = std::str::from_utf8(&reply).expect("a report is UTF-8");
        let inner = &text[3..text.len() - 2];
        assert!(inner.chars().all(|c| !c.is_control()), "{text:?}");
        assert_eq!(inner, "a2Jb");
    }
}

/// XTWINOPS 22 and 23 push and pop the icon label, the window title or both (`Ps` 1, 2, 0) on
/// one stack, as xterm: the esctest cases.
#[test]
fn title_stack_pushes_and_pops_either_title_or_both() {
    let report = b"\x1b[20t\x1b[21t";
    let cases: &[(&[u8], &[u8])] = &[
        // Push both, change both, pop both.
        (
            b"\x1b]0;s\x07\x1b[22;0t\x1b]2;x\x07\x1b]1;x\x07\x1b[23;0t",
            b"\x1b]Ls\x1b\\\x1b]ls\x1b\\",
        ),
        (b"\x1b]0;s\x07\x1b[22t\x1b]0;x\x07\x1b[23t", b"\x1b]Ls\x1b\\\x1b]ls\x1b\\"),
        // Push both, pop the icon's: the window's stays, and a later pop of it finds nothing.
        (b"\x1b]0;s\x07\x1b[22;0t\x1b]0;x\x07\x1b[23;1t", b"\x1b]Ls\x1b\\\x1b]lx\x1b\\"),
        (b"\x1b]0;s\x07\x1b[22;0t\x1b]0;x\x07\x1b[23;1t\x1b[23;2t", b"\x1b]Ls\x1b\\\x1b]lx\x1b\\"),
        (b"\x1b]0;s\x07\x1b[22;0t\x1b]0;x\x07\x1b[23;2t\x1b[23;1t", b"\x1b]Lx\x1b\\\x1b]ls\x1b\\"),
        // Push one alone.
        (
            b"\x1b]2;x\x07\x1b]1;s\x07\x1b[22;1t\x1b]1;y\x07\x1b[23;1t",
            b"\x1b]Ls\x1b\\\x1b]lx\x1b\\",
        ),
        (
            b"\x1b]1;x\x07\x1b]2;s\x07\x1b[22;2t\x1b]2;y\x07\x1b[23;2t",
            b"\x1b]Lx\x1b\\\x1b]ls\x1b\\",
        ),
        // Push the icon's, then the window's, pop both: each comes from its own entry.
        (
            b"\x1b]2;a\x07\x1b]1;b\x07\x1b[22;1t\x1b[22;2t\x1b]2;y\x07\x1b]1;z\x07\x1b[23;0t",
            b"\x1b]Lb\x1b\\\x1b]la\x1b\\",
        ),
        // Two pushes, two pops.
        (
            b"\x1b]1;a\x07\x1b[22;1t\x1b]1;b\x07\x1b[22;1t\x1b]1;z\x07\x1b[23;1t",
            b"\x1b]Lb\x1b\\\x1b]l\x1b\\",
        ),
        (
            b"\x1b]2;a\x07\x1b[22;2t\x1b]2;b\x07\x1b[22;2t\x1b]2;z\x07\x1b[23;2t\x1b[23;2t",
            b"\x1b]L\x1b\\\x1b]la\x1b\\",
        ),
        // A pop of an empty stack, and a `Ps` xterm does not know, change nothing.
        (b"\x1b]0;s\x07\x1b[23t\x1b[22;3t\x1b]0;x\x07\x1b[23;3t", b"\x1b]Lx\x1b\\\x1b]lx\x1b\\"),
        // A reset keeps both titles (as xterm, and the pane keeps showing its title) but
        // empties the stack.
        (b"\x1b]0;s\x07\x1b[22t\x1bc\x1b]0;x\x07\x1b[23t", b"\x1b]Lx\x1b\\\x1b]lx\x1b\\"),
        (b"\x1b]0;s\x07\x1bc\x1b[22t", b"\x1b]Ls\x1b\\\x1b]ls\x1b\\"),
    ];
    let cases: Vec<(Vec<u8>, &[u8])> =
        cases.iter().map(|(input, replies)| ([*input, report].concat(), *replies)).collect();
    let cases: Vec<(&[u8], &[u8])> = cases.iter().map(|(i, r)| (i.as_slice(), *r)).collect();
    assert_written(&cases);
    // A pop that restores the window title tells the server, as OSC 2 does.
    let mut term = fed(b"\x1b]2;old\x07\x1b[22;2t\x1b]2;new\x07");
    term.take_events();
    term.feed(b"\x1b[23;2t");
    assert_eq!(term.take_events(), vec![TerminalEvent::Title(Some("old".to_owned()))]);
    assert_eq!(term.title(), Some("old"));
    // The stack keeps the last ten pushes.
    let mut input = Vec::new();
    for n in 0..12 {
        input.extend(format!("\x1b]2;t{n}\x07\x1b[22;2t").as_bytes());
    }
    input.extend(b"\x1b[23;2t".repeat(12));
    input.extend(b"\x1b[21t");
    let mut term = fed(&input);
    let last = term.take_events().pop();
    assert_eq!(last, Some(TerminalEvent::PtyWrite(b"\x1b]lt2\x1b\\".to_vec())));
}

#[test]
fn new_answers_keep_query_order() {
    let input: &[u8] = b"\x1b[6n\x1b[>q\x1b[c\x1bP$qm\x1b\\\x1b[?u\x1b[1;1*y\x1b[1$p";
    let version = format!("\x1bP>|Berth {}\x1b\\", env!("CARGO_PKG_VERSION"));
    let expected: Vec<TerminalEvent> = [
        b"\x1b[1;1R".as_slice(),
        version.as_bytes(),
        b"\x1b[?62;6;22c",
        b"\x1bP1$r0m\x1b\\",
        b"\x1b[?0u",
        b"\x1bP1!~1000\x1b\\",
        b"\x1b[1;4$y",
    ]
    .iter()
    .map(|reply| TerminalEvent::PtyWrite(reply.to_vec()))
    .collect();
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

#[test]
fn decstr_resets_modes_margins_and_the_saved_cursor_but_not_the_cursor() {
    use alacritty_terminal::term::TermMode;
    let mut term = fed(
        b"\x1b[5;6H\x1b7\x1b[3;10r\x1b[?6h\x1b[4h\x1b[?1h\x1b=\x1b[?25l\x1b[1;31m\x1b(0\x1b[7;8H",
    );
    let before = term.term().grid().cursor.point;
    term.feed(b"\x1b[!p");
    let mode = *term.term().mode();
    for gone in [TermMode::ORIGIN, TermMode::INSERT, TermMode::APP_CURSOR, TermMode::APP_KEYPAD] {
        assert!(!mode.contains(gone), "{gone:?} still set after DECSTR");
    }
    assert!(mode.contains(TermMode::SHOW_CURSOR));
    assert!(mode.contains(TermMode::LINE_WRAP), "DECSTR keeps autowrap, as xterm does");
    assert_eq!(term.term().grid().cursor.point, before, "the cursor stays put");
    term.feed(b"\x1bP$qr\x1b\\\x1bP$qm\x1b\\\x1b8\x1b[6nq");
    assert_eq!(
        term.take_events(),
        vec![
            TerminalEvent::PtyWrite(b"\x1bP1$r1;24r\x1b\\".to_vec()),
            TerminalEvent::PtyWrite(b"\x1bP1$r0m\x1b\\".to_vec()),
            // The saved cursor went home.
            TerminalEvent::PtyWrite(b"\x1b[1;1R".to_vec()),
        ]
    );
    // The line-drawing set is gone: `q` is a `q`, not a horizontal line.
    assert_eq!(term.screen_lines(false)[0], "q");
}

/// XTGETTCAP answers the colour count (esctest reads `Co` to find where xterm's special
/// colours start in OSC 4) and refuses other names, stopping at the first, as xterm.
#[test]
fn xtgettcap_reports_the_colour_count() {
    assert_replies(&[
        (b"\x1bP+q436F\x1b\\", b"\x1bP1+r436F=323536\x1b\\"),
        (b"\x1bP+q636F6C6F7273\x1b\\", b"\x1bP1+r636F6C6F7273=323536\x1b\\"),
        (b"\x1bP+q6B62\x1b\\", b"\x1bP0+r6B62\x1b\\"),
        (b"\x1bP+qzz\x1b\\", b"\x1bP0+rzz\x1b\\"),
        (b"\x1bP+q436F;6B62;436F\x1b\\", b"\x1bP1+r436F=323536\x1b\\\x1bP0+r6B62\x1b\\"),
    ]);
    // An aborted or overlong request is not answered.
    let mut long = b"\x1bP+q".to_vec();
    long.extend(std::iter::repeat_n(b'4', crate::osc::MAX_TERMCAP_BYTES + 2));
    long.extend_from_slice(b"\x1b\\\x1bP+q436F\x18");
    assert_eq!(fed(&long).take_events(), vec![]);
}
