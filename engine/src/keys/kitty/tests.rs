//! Table tests of the kitty keyboard encoding against the protocol's documented forms.

use super::*;

const SHIFT: u8 = mods::SHIFT;
const ALT: u8 = mods::ALT;
const CTRL: u8 = mods::CTRL;
const SUPER: u8 = mods::SUPER;

/// A press of a character key typing `text` (its own character when `None` is not asked for).
fn char_key(c: char, mods: u8) -> KeyEvent<'static> {
    KeyEvent::press(Key::Char(c), mods)
}

fn functional(key: Functional, mods: u8) -> KeyEvent<'static> {
    KeyEvent::press(Key::Functional(key), mods)
}

fn with_text(mut event: KeyEvent<'static>, text: &'static str) -> KeyEvent<'static> {
    event.text = Some(text);
    event
}

fn kind(mut event: KeyEvent<'static>, kind: KeyKind) -> KeyEvent<'static> {
    event.kind = kind;
    event
}

/// Checks a table of (event, flags, expected bytes).
fn check(cases: &[(KeyEvent<'static>, u8, Option<&[u8]>)]) {
    for (event, flags, expected) in cases {
        assert_eq!(
            encode(event, *flags).as_deref(),
            *expected,
            "{event:?} with flags {flags}: got {:?}",
            encode(event, *flags).map(|b| String::from_utf8_lossy(&b).into_owned())
        );
    }
}

#[test]
fn disambiguate_turns_esc_and_modified_keys_into_csi_u() {
    let f = DISAMBIGUATE;
    check(&[
        // Esc is no longer the start of a sequence.
        (functional(Functional::ESCAPE, 0), f, Some(b"\x1b[27u")),
        (functional(Functional::ESCAPE, SHIFT), f, Some(b"\x1b[27;2u")),
        // Text keys type their text, with Shift too.
        (with_text(char_key('a', 0), "a"), f, Some(b"a")),
        (with_text(char_key('a', SHIFT), "A"), f, Some(b"A")),
        (with_text(char_key(' ', 0), " "), f, Some(b" ")),
        // Ctrl, Alt and Super make them escape codes: 1 + the modifier bits.
        (with_text(char_key('c', CTRL), "\x03"), f, Some(b"\x1b[99;5u")),
        (with_text(char_key('a', ALT), "a"), f, Some(b"\x1b[97;3u")),
        (with_text(char_key('a', CTRL | ALT), "a"), f, Some(b"\x1b[97;7u")),
        (with_text(char_key('a', SHIFT | ALT), "A"), f, Some(b"\x1b[97;4u")),
        (with_text(char_key('a', CTRL | SHIFT), "A"), f, Some(b"\x1b[97;6u")),
        (with_text(char_key('a', SUPER), "a"), f, Some(b"\x1b[97;9u")),
        (char_key(' ', CTRL), f, Some(b"\x1b[32;5u")),
        // Enter, Tab and Backspace keep their legacy bytes unmodified...
        (functional(Functional::ENTER, 0), f, Some(b"\r")),
        (functional(Functional::TAB, 0), f, Some(b"\t")),
        (functional(Functional::BACKSPACE, 0), f, Some(b"\x7f")),
        (functional(Functional::KP_ENTER, 0), f, Some(b"\r")),
        // ... and are distinct keys with modifiers: Shift+Enter is CSI 13;2u.
        (functional(Functional::ENTER, SHIFT), f, Some(b"\x1b[13;2u")),
        (functional(Functional::ENTER, CTRL), f, Some(b"\x1b[13;5u")),
        (functional(Functional::ENTER, ALT), f, Some(b"\x1b[13;3u")),
        (functional(Functional::TAB, SHIFT), f, Some(b"\x1b[9;2u")),
        (functional(Functional::BACKSPACE, CTRL), f, Some(b"\x1b[127;5u")),
        (functional(Functional::KP_ENTER, SHIFT), f, Some(b"\x1b[57414;2u")),
        // Keys with a legacy CSI form keep it, the 1 left out when nothing follows.
        (functional(Functional::UP, 0), f, Some(b"\x1b[A")),
        (functional(Functional::LEFT, CTRL), f, Some(b"\x1b[1;5D")),
        (functional(Functional::HOME, SHIFT), f, Some(b"\x1b[1;2H")),
        (functional(Functional::END, 0), f, Some(b"\x1b[F")),
        (functional(Functional::DELETE, 0), f, Some(b"\x1b[3~")),
        (functional(Functional::PAGE_UP, ALT), f, Some(b"\x1b[5;3~")),
        (functional(Functional::function(1).unwrap(), 0), f, Some(b"\x1b[P")),
        (functional(Functional::function(1).unwrap(), SHIFT), f, Some(b"\x1b[1;2P")),
        // F3 is CSI 13 ~: CSI R is a cursor position report.
        (functional(Functional::function(3).unwrap(), 0), f, Some(b"\x1b[13~")),
        (functional(Functional::function(5).unwrap(), CTRL), f, Some(b"\x1b[15;5~")),
        (functional(Functional::function(12).unwrap(), 0), f, Some(b"\x1b[24~")),
        (functional(Functional::function(13).unwrap(), 0), f, Some(b"\x1b[57376u")),
        // Modifier keys alone and releases are not reported.
        (functional(Functional::LEFT_SHIFT, SHIFT), f, None),
        (functional(Functional::CAPS_LOCK, 0), f, None),
        (kind(with_text(char_key('a', 0), "a"), KeyKind::Release), f, None),
        // A repeat is a press.
        (kind(functional(Functional::ESCAPE, 0), KeyKind::Repeat), f, Some(b"\x1b[27u")),
    ]);
}

#[test]
fn keypad_keys_are_their_own_keys_unless_they_type() {
    let f = DISAMBIGUATE;
    let kp5 = functional(Functional::keypad('5').unwrap(), 0);
    check(&[
        (with_text(kp5, "5"), f, Some(b"5")),
        (functional(Functional::keypad('5').unwrap(), CTRL), f, Some(b"\x1b[57404;5u")),
        (with_text(functional(Functional::keypad('+').unwrap(), 0), "+"), f, Some(b"+")),
        (
            functional(Functional::keypad_navigation(Functional::UP).unwrap(), 0),
            f,
            Some(b"\x1b[57419u"),
        ),
        (functional(Functional::KP_BEGIN, 0), f, Some(b"\x1b[E")),
        (with_text(kp5, "5"), f | REPORT_ALL_KEYS, Some(b"\x1b[57404u")),
    ]);
}

#[test]
fn event_types_add_repeat_and_release() {
    let f = DISAMBIGUATE | REPORT_EVENT_TYPES;
    let a = with_text(char_key('a', 0), "a");
    check(&[
        (a, f, Some(b"a")),
        (kind(a, KeyKind::Repeat), f, Some(b"a")),
        (kind(a, KeyKind::Release), f, Some(b"\x1b[97;1:3u")),
        (kind(with_text(char_key('a', CTRL), "a"), KeyKind::Repeat), f, Some(b"\x1b[97;5:2u")),
        (kind(functional(Functional::UP, 0), KeyKind::Release), f, Some(b"\x1b[1;1:3A")),
        (kind(functional(Functional::UP, SHIFT), KeyKind::Repeat), f, Some(b"\x1b[1;2:2A")),
        (kind(functional(Functional::ESCAPE, 0), KeyKind::Release), f, Some(b"\x1b[27;1:3u")),
        (kind(functional(Functional::DELETE, 0), KeyKind::Release), f, Some(b"\x1b[3;1:3~")),
        // Enter, Tab and Backspace are not released unless every key is an escape code.
        (kind(functional(Functional::ENTER, 0), KeyKind::Release), f, None),
        (kind(functional(Functional::ENTER, 0), KeyKind::Repeat), f, Some(b"\r")),
        (
            kind(functional(Functional::ENTER, 0), KeyKind::Release),
            f | REPORT_ALL_KEYS,
            Some(b"\x1b[13;1:3u"),
        ),
        // Flag 2 without 1 or 8 reports releases; presses stay legacy (the caller's).
        (
            kind(functional(Functional::UP, 0), KeyKind::Release),
            REPORT_EVENT_TYPES,
            Some(b"\x1b[1;1:3A"),
        ),
    ]);
}

#[test]
fn alternate_keys_add_the_shifted_and_the_base_layout_key() {
    let f = DISAMBIGUATE | REPORT_ALTERNATE_KEYS;
    let mut shift_a = with_text(char_key('a', CTRL | SHIFT), "A");
    shift_a.shifted = Some('A');
    let mut cyrillic = with_text(char_key('с', CTRL), "с");
    cyrillic.base_layout = Some('c');
    let mut same_base = with_text(char_key('a', CTRL), "a");
    same_base.base_layout = Some('a');
    let mut shift_1 = with_text(char_key('1', CTRL | SHIFT), "!");
    shift_1.shifted = Some('!');
    let mut shifted_no_shift = with_text(char_key('a', CTRL), "a");
    shifted_no_shift.shifted = Some('A');
    check(&[
        (shift_a, f, Some(b"\x1b[97:65;6u")),
        (cyrillic, f, Some(b"\x1b[1089::99;5u")),
        (same_base, f, Some(b"\x1b[97;5u")),
        (shift_1, f, Some(b"\x1b[49:33;6u")),
        // The shifted key is reported only while Shift is held.
        (shifted_no_shift, f, Some(b"\x1b[97;5u")),
        // Without flag 4 neither is.
        (shift_a, DISAMBIGUATE, Some(b"\x1b[97;6u")),
    ]);
}

#[test]
fn all_keys_as_escapes_and_associated_text() {
    let f = REPORT_ALL_KEYS;
    let mut shift_a = with_text(char_key('a', SHIFT), "A");
    shift_a.shifted = Some('A');
    check(&[
        (with_text(char_key('a', 0), "a"), f, Some(b"\x1b[97u")),
        (shift_a, f, Some(b"\x1b[97;2u")),
        (functional(Functional::ENTER, 0), f, Some(b"\x1b[13u")),
        (functional(Functional::TAB, 0), f, Some(b"\x1b[9u")),
        (functional(Functional::BACKSPACE, 0), f, Some(b"\x1b[127u")),
        (functional(Functional::ESCAPE, 0), f, Some(b"\x1b[27u")),
        // Modifier keys are keys now.
        (functional(Functional::LEFT_SHIFT, SHIFT), f, Some(b"\x1b[57441;2u")),
        (functional(Functional::modifier(1, true).unwrap(), CTRL), f, Some(b"\x1b[57448;5u")),
        (functional(Functional::CAPS_LOCK, 0), f, Some(b"\x1b[57358u")),
        // With flag 16 the text rides along as code points.
        (with_text(char_key('a', 0), "a"), f | REPORT_ASSOCIATED_TEXT, Some(b"\x1b[97;;97u")),
        (shift_a, f | REPORT_ASSOCIATED_TEXT, Some(b"\x1b[97;2;65u")),
        (shift_a, f | REPORT_ASSOCIATED_TEXT | REPORT_ALTERNATE_KEYS, Some(b"\x1b[97:65;2;65u")),
        (
            with_text(char_key('e', 0), "é"),
            f | REPORT_ASSOCIATED_TEXT,
            Some("\x1b[101;;233u".as_bytes()),
        ),
        (with_text(char_key('a', 0), "ab"), f | REPORT_ASSOCIATED_TEXT, Some(b"\x1b[97;;97:98u")),
        // Control characters are not text; releases carry none.
        (with_text(char_key('a', CTRL), "\x01"), f | REPORT_ASSOCIATED_TEXT, Some(b"\x1b[97;5u")),
        (
            kind(with_text(char_key('a', 0), "a"), KeyKind::Release),
            f | REPORT_ASSOCIATED_TEXT | REPORT_EVENT_TYPES,
            Some(b"\x1b[97;1:3u"),
        ),
        // Flag 16 without flag 8 changes nothing.
        (with_text(char_key('a', 0), "a"), DISAMBIGUATE | REPORT_ASSOCIATED_TEXT, Some(b"a")),
    ]);
}

#[test]
fn presses_are_legacy_without_flag_1_or_8() {
    assert!(legacy_presses(0));
    assert!(legacy_presses(REPORT_EVENT_TYPES | REPORT_ALTERNATE_KEYS | REPORT_ASSOCIATED_TEXT));
    assert!(!legacy_presses(DISAMBIGUATE));
    assert!(!legacy_presses(REPORT_ALL_KEYS));
}

#[test]
fn every_function_key_has_a_number() {
    for n in 1..=35 {
        assert!(Functional::function(n).is_some(), "F{n}");
    }
    assert_eq!(Functional::function(0), None);
    assert_eq!(Functional::function(36), None);
    assert_eq!(Functional::modifier(6, false), None);
    assert_eq!(Functional::keypad('x'), None);
}
