//! Key events to the bytes a terminal program expects: xterm's legacy encoding, or the kitty
//! keyboard protocol's when the program turned it on.
//!
//! Owns the mapping from winit's logical keys and modifiers to PTY input: printable text,
//! Ctrl+character control codes, Alt as an ESC prefix, the cursor and editing keys with
//! xterm's modifier forms (`CSI 1 ; 5 D` for Ctrl+Left), application cursor keys (DECCKM) and
//! the application keypad (DECKPAM); and, with kitty keyboard flags set, winit's key, its
//! unshifted and US-layout characters, modifiers and press/repeat/release turned into the
//! engine's [`kitty::KeyEvent`] (so `Shift+Enter` reaches the program as `CSI 13 ; 2 u` with
//! flag 1). Named keys go through [`berth_engine::keys`] so that the window and
//! `berth send --keys` share one encoding table. It must not look at the keymap (chords the
//! window handles itself are taken out before this runs) or touch a pane.

use berth_engine::keys::encode_key;
use berth_engine::keys::kitty::{self, Functional, KeyKind};
use winit::keyboard::{Key, KeyCode, KeyLocation, ModifiersState, NamedKey};

/// The terminal modes that change what a key sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyModes {
    /// DECCKM: unmodified arrows, Home and End send `ESC O x` instead of `ESC [ x`.
    pub app_cursor: bool,
    /// DECKPAM: keys of the numeric keypad send `ESC O x` codes instead of their text.
    pub app_keypad: bool,
    /// The kitty keyboard protocol's flags in force (0: legacy encoding).
    pub kitty_flags: u8,
    /// DECBKM: Backspace sends BS (0x08) and Ctrl+Backspace DEL, instead of the reverse.
    pub backarrow_bs: bool,
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
    /// Press, repeat or release (only the kitty protocol's flag 2 reports the last two apart).
    pub kind: KeyKind,
    /// The key's character with no modifier applied (winit's `key_without_modifiers`), for
    /// the kitty protocol's key code.
    pub unmodified: Option<&'a str>,
    /// The physical key, for the kitty protocol's US-layout key.
    pub physical: Option<KeyCode>,
}

impl<'a> KeyPress<'a> {
    /// A press of `key` at `location` typing `text`, with nothing else known.
    pub fn new(
        key: Key<&'a str>,
        location: KeyLocation,
        text: Option<&'a str>,
        mods: ModifiersState,
    ) -> Self {
        Self { key, location, text, mods, kind: KeyKind::Press, unmodified: None, physical: None }
    }
}

/// The bytes to write to the PTY for a key event, or None when the key sends nothing
/// (a lone modifier, a dead key, an unknown function key, a release nobody asked for).
pub fn encode(press: &KeyPress<'_>, modes: KeyModes) -> Option<Vec<u8>> {
    if press.kind == KeyKind::Release || !kitty::legacy_presses(modes.kitty_flags) {
        return kitty::encode(&kitty_event(press)?, modes.kitty_flags);
    }
    let mods = press.mods;
    if modes.backarrow_bs && press.key == Key::Named(NamedKey::Backspace) {
        // DECBKM swaps what Backspace and Ctrl+Backspace send.
        let byte = if mods.control_key() { 0x7f } else { 0x08 };
        return Some(with_alt(mods, &[byte]));
    }
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

/// The key event as the kitty protocol's encoder takes it; `None` for a dead key (the input
/// method is composing) or a key with no number in the protocol.
fn kitty_event<'a>(press: &KeyPress<'a>) -> Option<kitty::KeyEvent<'a>> {
    let mut mods = 0;
    for (held, bit) in [
        (press.mods.shift_key(), kitty::mods::SHIFT),
        (press.mods.alt_key(), kitty::mods::ALT),
        (press.mods.control_key(), kitty::mods::CTRL),
        (press.mods.super_key(), kitty::mods::SUPER),
    ] {
        if held {
            mods |= bit;
        }
    }
    let single = |s: &str| {
        let mut chars = s.chars();
        chars.next().filter(|_| chars.next().is_none())
    };
    let numpad = press.location == KeyLocation::Numpad;
    let mut shifted = None;
    let key = match &press.key {
        Key::Named(NamedKey::Space) => kitty::Key::Char(' '),
        Key::Named(named) => kitty::Key::Functional(functional(*named, press.location)?),
        Key::Character(s) if numpad => {
            kitty::Key::Functional(single(s).and_then(Functional::keypad)?)
        }
        Key::Character(s) => {
            let own = single(s)?;
            // The key's code is its character without Shift: winit's unmodified key, else the
            // lower case of what it typed.
            let base = press.unmodified.and_then(single).unwrap_or_else(|| {
                let mut lower = own.to_lowercase();
                lower.next().filter(|_| lower.next().is_none()).unwrap_or(own)
            });
            if press.mods.shift_key() && own != base {
                shifted = Some(own);
            }
            kitty::Key::Char(base)
        }
        Key::Unidentified(_) | Key::Dead(_) => return None,
    };
    Some(kitty::KeyEvent {
        key,
        shifted,
        base_layout: press.physical.and_then(us_layout),
        mods,
        kind: press.kind,
        text: press.text,
    })
}

/// The kitty protocol's key for a named key at `location`.
fn functional(named: NamedKey, location: KeyLocation) -> Option<Functional> {
    let numpad = location == KeyLocation::Numpad;
    let right = location == KeyLocation::Right;
    let main = match named {
        NamedKey::Enter if numpad => Functional::KP_ENTER,
        NamedKey::Enter => Functional::ENTER,
        NamedKey::Tab => Functional::TAB,
        NamedKey::Escape => Functional::ESCAPE,
        NamedKey::Backspace => Functional::BACKSPACE,
        NamedKey::Insert => Functional::INSERT,
        NamedKey::Delete => Functional::DELETE,
        NamedKey::Home => Functional::HOME,
        NamedKey::End => Functional::END,
        NamedKey::PageUp => Functional::PAGE_UP,
        NamedKey::PageDown => Functional::PAGE_DOWN,
        NamedKey::ArrowUp => Functional::UP,
        NamedKey::ArrowDown => Functional::DOWN,
        NamedKey::ArrowLeft => Functional::LEFT,
        NamedKey::ArrowRight => Functional::RIGHT,
        NamedKey::Clear if numpad => return Some(Functional::KP_BEGIN),
        NamedKey::CapsLock => Functional::CAPS_LOCK,
        NamedKey::ScrollLock => Functional::SCROLL_LOCK,
        NamedKey::NumLock => Functional::NUM_LOCK,
        NamedKey::PrintScreen => Functional::PRINT_SCREEN,
        NamedKey::Pause => Functional::PAUSE,
        NamedKey::ContextMenu => Functional::MENU,
        NamedKey::Shift => return Functional::modifier(0, right),
        NamedKey::Control => return Functional::modifier(1, right),
        NamedKey::Alt => return Functional::modifier(2, right),
        NamedKey::Super => return Functional::modifier(3, right),
        NamedKey::Hyper => return Functional::modifier(4, right),
        NamedKey::Meta => return Functional::modifier(5, right),
        NamedKey::AltGraph => Functional::ISO_LEVEL3_SHIFT,
        _ => return Functional::function(function_number(named)?),
    };
    if numpad {
        return Some(Functional::keypad_navigation(main).unwrap_or(main));
    }
    Some(main)
}

/// The number of a function key F1–F35.
fn function_number(named: NamedKey) -> Option<u8> {
    use NamedKey::*;
    const KEYS: [NamedKey; 35] = [
        F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14, F15, F16, F17, F18, F19, F20,
        F21, F22, F23, F24, F25, F26, F27, F28, F29, F30, F31, F32, F33, F34, F35,
    ];
    // The position is below 35, so it fits a u8.
    KEYS.iter().position(|&k| k == named).map(|i| i as u8 + 1)
}

/// The character a physical key types on a US PC-101 layout without Shift.
fn us_layout(code: KeyCode) -> Option<char> {
    use KeyCode::*;
    const LETTERS: [KeyCode; 26] = [
        KeyA, KeyB, KeyC, KeyD, KeyE, KeyF, KeyG, KeyH, KeyI, KeyJ, KeyK, KeyL, KeyM, KeyN, KeyO,
        KeyP, KeyQ, KeyR, KeyS, KeyT, KeyU, KeyV, KeyW, KeyX, KeyY, KeyZ,
    ];
    const DIGITS: [KeyCode; 10] =
        [Digit0, Digit1, Digit2, Digit3, Digit4, Digit5, Digit6, Digit7, Digit8, Digit9];
    if let Some(i) = LETTERS.iter().position(|&k| k == code) {
        return Some((b'a' + i as u8) as char);
    }
    if let Some(i) = DIGITS.iter().position(|&k| k == code) {
        return Some((b'0' + i as u8) as char);
    }
    Some(match code {
        Minus => '-',
        Equal => '=',
        BracketLeft => '[',
        BracketRight => ']',
        Backslash => '\\',
        Semicolon => ';',
        Quote => '\'',
        Backquote => '`',
        Comma => ',',
        Period => '.',
        Slash => '/',
        Space => ' ',
        _ => return None,
    })
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
    const NORMAL: KeyModes =
        KeyModes { app_cursor: false, app_keypad: false, kitty_flags: 0, backarrow_bs: false };
    const APP_CURSOR: KeyModes = KeyModes { app_cursor: true, ..NORMAL };
    const APP_KEYPAD: KeyModes = KeyModes { app_keypad: true, ..NORMAL };
    const BACKARROW_BS: KeyModes = KeyModes { backarrow_bs: true, ..NORMAL };

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
        KeyPress::new(key, KeyLocation::Standard, text, mods)
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
            (named(NamedKey::Backspace), NONE, BACKARROW_BS, Some(b"\x08")),
            (named(NamedKey::Backspace), CTRL, BACKARROW_BS, Some(b"\x7f")),
            (named(NamedKey::Backspace), ALT, BACKARROW_BS, Some(b"\x1b\x08")),
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

    /// A key event as winit reports it, for the kitty protocol's table.
    fn event(
        key: Key<&'static str>,
        text: Option<&'static str>,
        unmodified: Option<&'static str>,
        mods: ModifiersState,
    ) -> KeyPress<'static> {
        KeyPress { unmodified, ..KeyPress::new(key, KeyLocation::Standard, text, mods) }
    }

    fn kitty(flags: u8) -> KeyModes {
        KeyModes { kitty_flags: flags, ..NORMAL }
    }

    #[test]
    fn kitty_flags_change_the_encoding() {
        let released = |press: KeyPress<'static>| KeyPress { kind: KeyKind::Release, ..press };
        let repeated = |press: KeyPress<'static>| KeyPress { kind: KeyKind::Repeat, ..press };
        let enter = event(named(NamedKey::Enter), Some("\r"), None, NONE);
        let shift_enter = event(named(NamedKey::Enter), Some("\r"), None, SHIFT);
        let a = event(ch("a"), Some("a"), Some("a"), NONE);
        let shift_a = event(ch("A"), Some("A"), Some("a"), SHIFT);
        let ctrl_shift_a = event(ch("A"), Some("\x01"), Some("a"), CTRL | SHIFT);
        let bang = KeyPress {
            physical: Some(KeyCode::Digit1),
            ..event(ch("!"), Some("!"), Some("1"), CTRL | SHIFT)
        };
        let cyrillic = KeyPress {
            physical: Some(KeyCode::KeyC),
            ..event(ch("с"), Some("с"), Some("с"), CTRL)
        };
        let left_shift = KeyPress {
            location: KeyLocation::Left,
            ..event(named(NamedKey::Shift), None, None, SHIFT)
        };
        let right_ctrl = KeyPress {
            location: KeyLocation::Right,
            ..event(named(NamedKey::Control), None, None, CTRL)
        };
        let kp5 =
            KeyPress { location: KeyLocation::Numpad, ..event(ch("5"), Some("5"), None, NONE) };
        let kp_enter = KeyPress { location: KeyLocation::Numpad, ..shift_enter.clone() };
        let kp_up = KeyPress {
            location: KeyLocation::Numpad,
            ..event(named(NamedKey::ArrowUp), None, None, NONE)
        };
        let cases: Vec<(KeyPress<'static>, KeyModes, Option<&[u8]>)> = vec![
            // Flags 0: legacy, and no releases.
            (shift_enter.clone(), NORMAL, Some(b"\r")),
            (released(a.clone()), NORMAL, None),
            // Flag 1: Shift+Enter is a key of its own; Enter alone stays a CR.
            (shift_enter.clone(), kitty(1), Some(b"\x1b[13;2u")),
            (enter.clone(), kitty(1), Some(b"\r")),
            (event(named(NamedKey::Enter), Some("\r"), None, CTRL), kitty(1), Some(b"\x1b[13;5u")),
            (event(named(NamedKey::Escape), None, None, NONE), kitty(1), Some(b"\x1b[27u")),
            (event(named(NamedKey::Tab), None, None, SHIFT), kitty(1), Some(b"\x1b[9;2u")),
            (a.clone(), kitty(1), Some(b"a")),
            (shift_a.clone(), kitty(1), Some(b"A")),
            (event(ch("c"), Some("\x03"), Some("c"), CTRL), kitty(1), Some(b"\x1b[99;5u")),
            (ctrl_shift_a.clone(), kitty(1), Some(b"\x1b[97;6u")),
            (event(ch("x"), Some("x"), Some("x"), ALT), kitty(1), Some(b"\x1b[120;3u")),
            (event(named(NamedKey::ArrowUp), None, None, NONE), kitty(1), Some(b"\x1b[A")),
            (event(named(NamedKey::ArrowLeft), None, None, CTRL), kitty(1), Some(b"\x1b[1;5D")),
            (event(named(NamedKey::F3), None, None, NONE), kitty(1), Some(b"\x1b[13~")),
            (event(named(NamedKey::F13), None, None, NONE), kitty(1), Some(b"\x1b[57376u")),
            (kp5.clone(), kitty(1), Some(b"5")),
            (kp_enter, kitty(1), Some(b"\x1b[57414;2u")),
            (kp_up, kitty(1), Some(b"\x1b[57419u")),
            (left_shift.clone(), kitty(1), None),
            (released(a.clone()), kitty(1), None),
            // Flag 2: repeats and releases.
            (repeated(a.clone()), kitty(3), Some(b"a")),
            (released(a.clone()), kitty(3), Some(b"\x1b[97;1:3u")),
            (released(shift_enter.clone()), kitty(3), Some(b"\x1b[13;2:3u")),
            (released(enter.clone()), kitty(3), None),
            (repeated(event(ch("c"), None, Some("c"), CTRL)), kitty(3), Some(b"\x1b[99;5:2u")),
            // Flag 2 alone: presses stay legacy, releases are reported.
            (shift_enter.clone(), kitty(2), Some(b"\r")),
            (released(a.clone()), kitty(2), Some(b"\x1b[97;1:3u")),
            // Flag 4: the shifted key and the US-layout key.
            (ctrl_shift_a, kitty(5), Some(b"\x1b[97:65;6u")),
            (bang, kitty(5), Some(b"\x1b[49:33;6u")),
            (cyrillic, kitty(5), Some(b"\x1b[1089::99;5u")),
            // Flag 8: every key, modifiers too; flag 16 adds the text.
            (a.clone(), kitty(8), Some(b"\x1b[97u")),
            (enter, kitty(8), Some(b"\x1b[13u")),
            (kp5, kitty(8), Some(b"\x1b[57404u")),
            (left_shift, kitty(8), Some(b"\x1b[57441;2u")),
            (right_ctrl, kitty(8), Some(b"\x1b[57448;5u")),
            (shift_a.clone(), kitty(24), Some(b"\x1b[97;2;65u")),
            (shift_a, kitty(31), Some(b"\x1b[97:65;2;65u")),
            (event(Key::Dead(Some('´')), None, None, NONE), kitty(8), None),
        ];
        for (press, modes, expected) in cases {
            assert_eq!(
                encode(&press, modes).as_deref(),
                expected,
                "{press:?} flags {}",
                modes.kitty_flags
            );
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
