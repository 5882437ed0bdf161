//! Key presses to the bytes a terminal program expects (xterm's legacy encoding).
//!
//! Owns the mapping from winit's logical keys and modifiers to PTY input: printable text,
//! Ctrl+character control codes, Alt as an ESC prefix, the cursor and editing keys with
//! xterm's modifier forms (`CSI 1 ; 5 D` for Ctrl+Left), application cursor keys (DECCKM) and
//! the application keypad (DECKPAM). Named keys go through [`berth_engine::keys`] so that the
//! window and `berth send --keys` share one encoding table. It must not look at the keymap
//! (chords the window handles itself are taken out before this runs) or touch a pane.
//!
//! The kitty keyboard protocol is not encoded: the engine runs alacritty with it disabled, so
//! programs never see it advertised.

use berth_engine::keys::encode_key;
use winit::keyboard::{Key, KeyLocation, ModifiersState, NamedKey};

/// The terminal modes that change what a key sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyModes {
    /// DECCKM: unmodified arrows, Home and End send `ESC O x` instead of `ESC [ x`.
    pub app_cursor: bool,
    /// DECKPAM: keys of the numeric keypad send `ESC O x` codes instead of their text.
    pub app_keypad: bool,
}

/// One key press as the encoder needs it (built from a winit `KeyEvent`).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyPress<'a> {
    /// The logical key: affected by Shift and the layout, not by Ctrl.
    pub key: Key<&'a str>,
    /// Where the key sits (the numeric keypad matters).
    pub location: KeyLocation,
    /// The text the key produces without Ctrl, if any.
    pub text: Option<&'a str>,
    /// The modifiers held.
    pub mods: ModifiersState,
}

/// The bytes to write to the PTY for a key press, or None when the key sends nothing
/// (a lone modifier, a dead key, an unknown function key).
pub fn encode(press: &KeyPress<'_>, modes: KeyModes) -> Option<Vec<u8>> {
    let mods = press.mods;
    if press.location == KeyLocation::Numpad && modes.app_keypad && !has_any(mods) {
        if let Some(bytes) = keypad_application(&press.key) {
            return Some(bytes);
        }
    }
    match &press.key {
        Key::Named(named) => match tmux_name(*named) {
            Some(name) => encode_named(name, mods, modes.app_cursor),
            None => press.text.filter(|t| !t.is_empty()).map(|t| with_alt(mods, t.as_bytes())),
        },
        Key::Character(s) => encode_character(s, press.text, mods),
        Key::Unidentified(_) => {
            press.text.filter(|t| !t.is_empty()).map(|t| with_alt(mods, t.as_bytes()))
        }
        Key::Dead(_) => None,
    }
}

/// Whether Ctrl, Alt or Shift is held (Super is ignored: the desktop usually takes it).
fn has_any(mods: ModifiersState) -> bool {
    mods.control_key() || mods.alt_key() || mods.shift_key()
}

/// The tmux name of a named key the engine knows how to encode.
fn tmux_name(named: NamedKey) -> Option<&'static str> {
    Some(match named {
        NamedKey::Enter => "Enter",
        NamedKey::Tab => "Tab",
        NamedKey::Escape => "Escape",
        NamedKey::Space => "Space",
        NamedKey::Backspace => "BSpace",
        NamedKey::Delete => "DC",
        NamedKey::Insert => "IC",
        NamedKey::Home => "Home",
        NamedKey::End => "End",
        NamedKey::PageUp => "PPage",
        NamedKey::PageDown => "NPage",
        NamedKey::ArrowUp => "Up",
        NamedKey::ArrowDown => "Down",
        NamedKey::ArrowLeft => "Left",
        NamedKey::ArrowRight => "Right",
        NamedKey::F1 => "F1",
        NamedKey::F2 => "F2",
        NamedKey::F3 => "F3",
        NamedKey::F4 => "F4",
        NamedKey::F5 => "F5",
        NamedKey::F6 => "F6",
        NamedKey::F7 => "F7",
        NamedKey::F8 => "F8",
        NamedKey::F9 => "F9",
        NamedKey::F10 => "F10",
        NamedKey::F11 => "F11",
        NamedKey::F12 => "F12",
        _ => return None,
    })
}

/// A named key through the engine's table; a modifier the legacy encoding cannot express
/// (Shift+Enter, Ctrl+Tab) is dropped rather than the key.
fn encode_named(name: &str, mods: ModifiersState, app_cursor: bool) -> Option<Vec<u8>> {
    let prefix = |ctrl: bool, shift: bool| {
        let mut p = String::new();
        if ctrl {
            p.push_str("C-");
        }
        if mods.alt_key() {
            p.push_str("M-");
        }
        if shift {
            p.push_str("S-");
        }
        p
    };
    let full = format!("{}{name}", prefix(mods.control_key(), mods.shift_key()));
    encode_key(&full, app_cursor)
        .or_else(|_| encode_key(&format!("{}{name}", prefix(false, false)), app_cursor))
        .ok()
}

/// A character key: Ctrl makes a control code where one exists, Alt adds an ESC prefix.
fn encode_character(key: &str, text: Option<&str>, mods: ModifiersState) -> Option<Vec<u8>> {
    if mods.control_key() {
        let mut chars = key.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            if let Some(byte) = control_byte(c) {
                return Some(with_alt(mods, &[byte]));
            }
        }
    }
    let text = text.filter(|t| !t.is_empty()).unwrap_or(key);
    if text.is_empty() {
        return None;
    }
    Some(with_alt(mods, text.as_bytes()))
}

/// The control code that Ctrl plus `c` sends in xterm, if there is one.
///
/// Letters and `@ [ \ ] ^ _ ? Space` come from the engine's table; the digits 2–8 and `/`
/// are xterm's extras for keyboards where the punctuation needs Shift.
fn control_byte(c: char) -> Option<u8> {
    match c {
        '2' => return Some(0x00),
        '3' => return Some(0x1b),
        '4' => return Some(0x1c),
        '5' => return Some(0x1d),
        '6' => return Some(0x1e),
        '7' | '/' => return Some(0x1f),
        '8' => return Some(0x7f),
        '-' => return None,
        _ => {}
    }
    match encode_key(&format!("C-{c}"), false).ok()?.as_slice() {
        [byte] => Some(*byte),
        _ => None,
    }
}

/// `bytes`, with an ESC in front when Alt is held.
fn with_alt(mods: ModifiersState, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 1);
    if mods.alt_key() {
        out.push(0x1b);
    }
    out.extend_from_slice(bytes);
    out
}

/// What a key of the numeric keypad sends in application keypad mode (xterm's `ESC O x`).
fn keypad_application(key: &Key<&str>) -> Option<Vec<u8>> {
    let code = match key {
        Key::Named(NamedKey::Enter) => b'M',
        Key::Character(s) => match *s {
            "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" => {
                b'p' + (s.as_bytes()[0] - b'0')
            }
            "+" => b'k',
            "-" => b'm',
            "*" => b'j',
            "/" => b'o',
            "." | "," => b'n',
            "=" => b'X',
            _ => return None,
        },
        _ => return None,
    };
    Some(vec![0x1b, b'O', code])
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: ModifiersState = ModifiersState::empty();
    const SHIFT: ModifiersState = ModifiersState::SHIFT;
    const CTRL: ModifiersState = ModifiersState::CONTROL;
    const ALT: ModifiersState = ModifiersState::ALT;
    const NORMAL: KeyModes = KeyModes { app_cursor: false, app_keypad: false };
    const APP_CURSOR: KeyModes = KeyModes { app_cursor: true, app_keypad: false };
    const APP_KEYPAD: KeyModes = KeyModes { app_cursor: false, app_keypad: true };

    fn named(key: NamedKey) -> Key<&'static str> {
        Key::Named(key)
    }

    fn ch(s: &'static str) -> Key<&'static str> {
        Key::Character(s)
    }

    /// A press of `key` on the main part of the keyboard whose text is the key's own.
    fn plain(key: Key<&'static str>, mods: ModifiersState) -> KeyPress<'static> {
        let text = match key {
            Key::Character(s) => Some(s),
            _ => None,
        };
        KeyPress { key, location: KeyLocation::Standard, text, mods }
    }

    /// One row of a table: key, modifiers, modes, expected bytes.
    type Case = (Key<&'static str>, ModifiersState, KeyModes, Option<&'static [u8]>);

    /// Checks a table of (key, modifiers, modes, expected bytes) for keys on the main keyboard.
    fn check(cases: &[Case]) {
        for (key, mods, modes, expected) in cases {
            let press = plain(key.clone(), *mods);
            assert_eq!(
                encode(&press, *modes).as_deref(),
                *expected,
                "key {key:?} mods {mods:?} modes {modes:?}"
            );
        }
    }

    #[test]
    fn printable_text_and_editing_keys() {
        check(&[
            (ch("a"), NONE, NORMAL, Some(b"a")),
            (ch("A"), SHIFT, NORMAL, Some(b"A")),
            (ch("é"), NONE, NORMAL, Some("é".as_bytes())),
            (ch("日"), NONE, NORMAL, Some("日".as_bytes())),
            (named(NamedKey::Space), NONE, NORMAL, Some(b" ")),
            (named(NamedKey::Space), SHIFT, NORMAL, Some(b" ")),
            (named(NamedKey::Enter), NONE, NORMAL, Some(b"\r")),
            (named(NamedKey::Enter), SHIFT, NORMAL, Some(b"\r")),
            (named(NamedKey::Enter), CTRL, NORMAL, Some(b"\r")),
            (named(NamedKey::Tab), NONE, NORMAL, Some(b"\t")),
            (named(NamedKey::Tab), SHIFT, NORMAL, Some(b"\x1b[Z")),
            (named(NamedKey::Backspace), NONE, NORMAL, Some(b"\x7f")),
            (named(NamedKey::Backspace), CTRL, NORMAL, Some(b"\x08")),
            (named(NamedKey::Escape), NONE, NORMAL, Some(b"\x1b")),
            (named(NamedKey::Insert), NONE, NORMAL, Some(b"\x1b[2~")),
            (named(NamedKey::Delete), NONE, NORMAL, Some(b"\x1b[3~")),
            (named(NamedKey::Delete), SHIFT, NORMAL, Some(b"\x1b[3;2~")),
            (named(NamedKey::PageUp), NONE, NORMAL, Some(b"\x1b[5~")),
            (named(NamedKey::PageDown), NONE, NORMAL, Some(b"\x1b[6~")),
            (named(NamedKey::PageDown), CTRL, NORMAL, Some(b"\x1b[6;5~")),
            (named(NamedKey::Shift), SHIFT, NORMAL, None),
            (named(NamedKey::Control), CTRL, NORMAL, None),
            (Key::Dead(Some('´')), NONE, NORMAL, None),
        ]);
    }

    #[test]
    fn cursor_keys_follow_app_cursor_mode_and_modifiers() {
        check(&[
            (named(NamedKey::ArrowUp), NONE, NORMAL, Some(b"\x1b[A")),
            (named(NamedKey::ArrowDown), NONE, NORMAL, Some(b"\x1b[B")),
            (named(NamedKey::ArrowRight), NONE, NORMAL, Some(b"\x1b[C")),
            (named(NamedKey::ArrowLeft), NONE, NORMAL, Some(b"\x1b[D")),
            (named(NamedKey::Home), NONE, NORMAL, Some(b"\x1b[H")),
            (named(NamedKey::End), NONE, NORMAL, Some(b"\x1b[F")),
            (named(NamedKey::ArrowUp), NONE, APP_CURSOR, Some(b"\x1bOA")),
            (named(NamedKey::ArrowLeft), NONE, APP_CURSOR, Some(b"\x1bOD")),
            (named(NamedKey::Home), NONE, APP_CURSOR, Some(b"\x1bOH")),
            (named(NamedKey::End), NONE, APP_CURSOR, Some(b"\x1bOF")),
            (named(NamedKey::ArrowLeft), CTRL, NORMAL, Some(b"\x1b[1;5D")),
            (named(NamedKey::ArrowLeft), CTRL, APP_CURSOR, Some(b"\x1b[1;5D")),
            (named(NamedKey::ArrowUp), SHIFT, NORMAL, Some(b"\x1b[1;2A")),
            (named(NamedKey::ArrowRight), ALT, NORMAL, Some(b"\x1b[1;3C")),
            (named(NamedKey::ArrowDown), CTRL | SHIFT, NORMAL, Some(b"\x1b[1;6B")),
            (named(NamedKey::Home), CTRL | ALT | SHIFT, NORMAL, Some(b"\x1b[1;8H")),
            (named(NamedKey::End), SHIFT, APP_CURSOR, Some(b"\x1b[1;2F")),
        ]);
    }

    #[test]
    fn function_keys() {
        check(&[
            (named(NamedKey::F1), NONE, NORMAL, Some(b"\x1bOP")),
            (named(NamedKey::F2), NONE, NORMAL, Some(b"\x1bOQ")),
            (named(NamedKey::F3), NONE, NORMAL, Some(b"\x1bOR")),
            (named(NamedKey::F4), NONE, NORMAL, Some(b"\x1bOS")),
            (named(NamedKey::F5), NONE, NORMAL, Some(b"\x1b[15~")),
            (named(NamedKey::F6), NONE, NORMAL, Some(b"\x1b[17~")),
            (named(NamedKey::F7), NONE, NORMAL, Some(b"\x1b[18~")),
            (named(NamedKey::F8), NONE, NORMAL, Some(b"\x1b[19~")),
            (named(NamedKey::F9), NONE, NORMAL, Some(b"\x1b[20~")),
            (named(NamedKey::F10), NONE, NORMAL, Some(b"\x1b[21~")),
            (named(NamedKey::F11), NONE, NORMAL, Some(b"\x1b[23~")),
            (named(NamedKey::F12), NONE, NORMAL, Some(b"\x1b[24~")),
            (named(NamedKey::F1), SHIFT, NORMAL, Some(b"\x1b[1;2P")),
            (named(NamedKey::F5), CTRL, NORMAL, Some(b"\x1b[15;5~")),
            (named(NamedKey::F12), ALT, NORMAL, Some(b"\x1b[24;3~")),
            (named(NamedKey::F13), NONE, NORMAL, None),
        ]);
    }

    #[test]
    fn ctrl_makes_control_codes() {
        check(&[
            (ch("c"), CTRL, NORMAL, Some(b"\x03")),
            (ch("a"), CTRL, NORMAL, Some(b"\x01")),
            (ch("z"), CTRL, NORMAL, Some(b"\x1a")),
            (ch("D"), CTRL | SHIFT, NORMAL, Some(b"\x04")),
            (ch("@"), CTRL | SHIFT, NORMAL, Some(b"\x00")),
            (named(NamedKey::Space), CTRL, NORMAL, Some(b"\x00")),
            (ch("["), CTRL, NORMAL, Some(b"\x1b")),
            (ch("\\"), CTRL, NORMAL, Some(b"\x1c")),
            (ch("]"), CTRL, NORMAL, Some(b"\x1d")),
            (ch("^"), CTRL | SHIFT, NORMAL, Some(b"\x1e")),
            (ch("_"), CTRL | SHIFT, NORMAL, Some(b"\x1f")),
            (ch("?"), CTRL | SHIFT, NORMAL, Some(b"\x7f")),
            (ch("2"), CTRL, NORMAL, Some(b"\x00")),
            (ch("3"), CTRL, NORMAL, Some(b"\x1b")),
            (ch("6"), CTRL, NORMAL, Some(b"\x1e")),
            (ch("7"), CTRL, NORMAL, Some(b"\x1f")),
            (ch("/"), CTRL, NORMAL, Some(b"\x1f")),
            (ch("8"), CTRL, NORMAL, Some(b"\x7f")),
            // No control code: the character itself, as xterm sends it.
            (ch("1"), CTRL, NORMAL, Some(b"1")),
            (ch("é"), CTRL, NORMAL, Some("é".as_bytes())),
        ]);
    }

    #[test]
    fn alt_is_an_escape_prefix() {
        check(&[
            (ch("x"), ALT, NORMAL, Some(b"\x1bx")),
            (ch("X"), ALT | SHIFT, NORMAL, Some(b"\x1bX")),
            (ch("x"), ALT | CTRL, NORMAL, Some(b"\x1b\x18")),
            (ch("."), ALT, NORMAL, Some(b"\x1b.")),
            (named(NamedKey::Enter), ALT, NORMAL, Some(b"\x1b\r")),
            (named(NamedKey::Backspace), ALT, NORMAL, Some(b"\x1b\x7f")),
            (named(NamedKey::Escape), ALT, NORMAL, Some(b"\x1b\x1b")),
            (named(NamedKey::Tab), ALT, NORMAL, Some(b"\x1b\t")),
            (named(NamedKey::Tab), ALT | SHIFT, NORMAL, Some(b"\x1b\x1b[Z")),
            (named(NamedKey::Space), ALT, NORMAL, Some(b"\x1b ")),
        ]);
    }

    #[test]
    fn the_keypad_follows_application_keypad_mode() {
        let cases: &[(Key<&'static str>, KeyModes, &[u8])] = &[
            (ch("5"), NORMAL, b"5"),
            (ch("5"), APP_KEYPAD, b"\x1bOu"),
            (ch("0"), APP_KEYPAD, b"\x1bOp"),
            (ch("9"), APP_KEYPAD, b"\x1bOy"),
            (ch("+"), APP_KEYPAD, b"\x1bOk"),
            (ch("-"), APP_KEYPAD, b"\x1bOm"),
            (ch("*"), APP_KEYPAD, b"\x1bOj"),
            (ch("/"), APP_KEYPAD, b"\x1bOo"),
            (ch("."), APP_KEYPAD, b"\x1bOn"),
            (named(NamedKey::Enter), NORMAL, b"\r"),
            (named(NamedKey::Enter), APP_KEYPAD, b"\x1bOM"),
            // Keypad arrows (NumLock off) are cursor keys whatever the keypad mode.
            (named(NamedKey::ArrowUp), APP_KEYPAD, b"\x1b[A"),
        ];
        for (key, modes, expected) in cases {
            let press = KeyPress { location: KeyLocation::Numpad, ..plain(key.clone(), NONE) };
            assert_eq!(encode(&press, *modes).as_deref(), Some(*expected), "keypad {key:?}");
        }
    }

    #[test]
    fn text_from_the_layout_wins_over_the_key_name() {
        // A dead-key composition: the key is `e`, the text the layout produced is `ê`.
        let press = KeyPress { text: Some("ê"), ..plain(ch("e"), NONE) };
        assert_eq!(encode(&press, NORMAL).as_deref(), Some("ê".as_bytes()));
        // An unidentified key that still produces text sends it.
        let press = KeyPress {
            key: Key::Unidentified(winit::keyboard::NativeKey::Unidentified),
            text: Some("ß"),
            ..plain(ch("ß"), NONE)
        };
        assert_eq!(encode(&press, NORMAL).as_deref(), Some("ß".as_bytes()));
    }
}
