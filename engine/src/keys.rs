//! Named keys for `berth send --keys`: tmux-style key names turned into the bytes an xterm-like
//! terminal sends for them.
//!
//! It owns the name table and the legacy (xterm) encodings, including the modifier forms
//! (`ESC [ 1 ; 5 D` for Ctrl+Left), and hands a key to [`kitty`] when the program turned the
//! kitty keyboard protocol on. It must not write anything anywhere or look at terminal state
//! beyond what it is given (DECCKM, application cursor keys, and the kitty flags).
//!
//! Names follow tmux: `Enter`, `Tab`, `BTab`, `Escape`, `Space`, `BSpace`, `DC`, `IC`, `Home`,
//! `End`, `PPage`/`PageUp`/`PgUp`, `NPage`/`PageDown`/`PgDn`, `Up`, `Down`, `Left`, `Right`,
//! `F1`…`F12`, any single character, and the modifier prefixes `C-`, `M-` and `S-` (in any
//! order and case, e.g. `M-C-x`, `c-left`), plus `^x` for `C-x`. Key names are
//! case-insensitive; a single character is not (`M-a` and `M-A` differ), except after `C-`.

use thiserror::Error;

pub mod kitty;

/// Why a key name could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyError {
    /// The name is not a key Berth knows.
    #[error(
        "unknown key `{0}`: use a key name such as Enter, Tab, Escape, BSpace, Up, PgUp, F5, \
         C-c or M-x, or send it as text without --keys"
    )]
    Unknown(String),
    /// The key exists but has no encoding with these modifiers in a legacy terminal.
    #[error("key `{name}` cannot be sent: {reason}")]
    Unsupported {
        /// The name as given.
        name: String,
        /// What is wrong and what to send instead.
        reason: &'static str,
    },
}

/// Modifiers given as prefixes of a key name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Modifiers {
    ctrl: bool,
    meta: bool,
    shift: bool,
}

impl Modifiers {
    /// Whether any modifier is held.
    fn any(self) -> bool {
        self.ctrl || self.meta || self.shift
    }

    /// The xterm modifier parameter: 1 plus 1 for Shift, 2 for Alt/Meta and 4 for Ctrl.
    fn xterm_param(self) -> u8 {
        1 + u8::from(self.shift) + 2 * u8::from(self.meta) + 4 * u8::from(self.ctrl)
    }
}

/// A key with a name rather than a character of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NamedKey {
    Enter,
    Tab,
    BackTab,
    Escape,
    Space,
    Backspace,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
    Function(u8),
}

/// Key names, lower-case, and the key each one means.
const NAMES: &[(&str, NamedKey)] = &[
    ("enter", NamedKey::Enter),
    ("tab", NamedKey::Tab),
    ("btab", NamedKey::BackTab),
    ("escape", NamedKey::Escape),
    ("esc", NamedKey::Escape),
    ("space", NamedKey::Space),
    ("backspace", NamedKey::Backspace),
    ("bspace", NamedKey::Backspace),
    ("delete", NamedKey::Delete),
    ("dc", NamedKey::Delete),
    ("insert", NamedKey::Insert),
    ("ic", NamedKey::Insert),
    ("home", NamedKey::Home),
    ("end", NamedKey::End),
    ("pageup", NamedKey::PageUp),
    ("pgup", NamedKey::PageUp),
    ("ppage", NamedKey::PageUp),
    ("pagedown", NamedKey::PageDown),
    ("pgdn", NamedKey::PageDown),
    ("npage", NamedKey::PageDown),
    ("up", NamedKey::Up),
    ("down", NamedKey::Down),
    ("left", NamedKey::Left),
    ("right", NamedKey::Right),
];

/// What a key name names, once its modifier prefixes are removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Named(NamedKey),
    Char(char),
}

/// Encodes one key name into the bytes to write to the PTY.
///
/// `app_cursor` is the terminal's DECCKM mode ([`crate::terminal::PaneTerminal::app_cursor`]):
/// when set, unmodified arrows, Home and End use the SS3 form (`ESC O A`) instead of CSI.
///
/// # Errors
///
/// [`KeyError::Unknown`] for a name that is not a key, [`KeyError::Unsupported`] for a key and
/// modifier pair that legacy terminals cannot express (such as `C-1` or `S-Enter`).
pub fn encode_key(name: &str, app_cursor: bool) -> Result<Vec<u8>, KeyError> {
    let (modifiers, key) = parse(name)?;
    let unsupported = |reason| KeyError::Unsupported { name: name.to_owned(), reason };
    match key {
        Key::Char(c) => encode_char(c, modifiers).map_err(unsupported),
        Key::Named(key) => encode_named(key, modifiers, app_cursor).map_err(unsupported),
    }
}

/// Encodes one key name as [`encode_key`] does, or, when the program set kitty keyboard flags
/// that change presses (`kitty_flags`, see [`PaneTerminal::keyboard_flags`]), in the kitty
/// protocol's encoding: there `S-Enter` is `CSI 13 ; 2 u` and `Escape` is `CSI 27 u`.
///
/// [`PaneTerminal::keyboard_flags`]: crate::terminal::PaneTerminal::keyboard_flags
///
/// # Errors
///
/// As [`encode_key`]; with kitty flags every key and modifier pair can be sent.
pub fn encode_key_with(name: &str, app_cursor: bool, kitty_flags: u8) -> Result<Vec<u8>, KeyError> {
    if kitty::legacy_presses(kitty_flags) {
        return encode_key(name, app_cursor);
    }
    let (modifiers, key) = parse(name)?;
    let mut mods = 0;
    for (held, bit) in [
        (modifiers.shift, kitty::mods::SHIFT),
        (modifiers.meta, kitty::mods::ALT),
        (modifiers.ctrl, kitty::mods::CTRL),
    ] {
        if held {
            mods |= bit;
        }
    }
    let mut utf8 = [0; 4];
    let (key, text) = match key {
        Key::Char(c) => {
            // An upper-case letter is Shift and the letter's key.
            if c.is_ascii_uppercase() && !modifiers.ctrl {
                mods |= kitty::mods::SHIFT;
            }
            let typed = if mods & kitty::mods::SHIFT != 0 { c.to_ascii_uppercase() } else { c };
            (kitty::Key::Char(c.to_ascii_lowercase()), Some(&*typed.encode_utf8(&mut utf8)))
        }
        Key::Named(NamedKey::Space) => (kitty::Key::Char(' '), Some(" ")),
        Key::Named(named) => {
            let functional = match named {
                NamedKey::Enter => kitty::Functional::ENTER,
                NamedKey::Tab => kitty::Functional::TAB,
                NamedKey::BackTab => {
                    mods |= kitty::mods::SHIFT;
                    kitty::Functional::TAB
                }
                NamedKey::Escape => kitty::Functional::ESCAPE,
                NamedKey::Backspace => kitty::Functional::BACKSPACE,
                NamedKey::Delete => kitty::Functional::DELETE,
                NamedKey::Insert => kitty::Functional::INSERT,
                NamedKey::Home => kitty::Functional::HOME,
                NamedKey::End => kitty::Functional::END,
                NamedKey::PageUp => kitty::Functional::PAGE_UP,
                NamedKey::PageDown => kitty::Functional::PAGE_DOWN,
                NamedKey::Up => kitty::Functional::UP,
                NamedKey::Down => kitty::Functional::DOWN,
                NamedKey::Left => kitty::Functional::LEFT,
                NamedKey::Right => kitty::Functional::RIGHT,
                // The parser accepts F1 to F12 only.
                NamedKey::Function(n) => {
                    kitty::Functional::function(n).ok_or_else(|| KeyError::Unknown(name.into()))?
                }
                NamedKey::Space => unreachable!("handled above"),
            };
            (kitty::Key::Functional(functional), None)
        }
    };
    let event = kitty::KeyEvent { text, ..kitty::KeyEvent::press(key, mods) };
    // A press is always encoded when flag 1 or 8 is set.
    Ok(kitty::encode(&event, kitty_flags).unwrap_or_default())
}

/// Splits a key name into its modifiers and the key.
fn parse(name: &str) -> Result<(Modifiers, Key), KeyError> {
    let mut modifiers = Modifiers::default();
    let mut rest = name;
    // A prefix is one of C, M, S and a dash, and it must leave a key behind it.
    while rest.len() >= 3 && rest.as_bytes()[1] == b'-' {
        match rest.as_bytes()[0].to_ascii_uppercase() {
            b'C' => modifiers.ctrl = true,
            b'M' => modifiers.meta = true,
            b'S' => modifiers.shift = true,
            _ => break,
        }
        rest = &rest[2..];
    }

    // tmux's caret form: `^c` is `C-c`.
    if let Some(after) = rest.strip_prefix('^') {
        let mut chars = after.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            modifiers.ctrl = true;
            return Ok((modifiers, Key::Char(c)));
        }
    }

    let mut chars = rest.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok((modifiers, Key::Char(c)));
    }

    let lower = rest.to_ascii_lowercase();
    if let Some(&(_, key)) = NAMES.iter().find(|(known, _)| *known == lower) {
        return Ok((modifiers, Key::Named(key)));
    }
    if let Some(number) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
        if (1..=12).contains(&number) && !lower.starts_with("f0") {
            return Ok((modifiers, Key::Named(NamedKey::Function(number))));
        }
    }
    Err(KeyError::Unknown(name.to_owned()))
}

/// Encodes a character key: Ctrl maps to C0 controls, Meta adds an ESC prefix.
fn encode_char(c: char, modifiers: Modifiers) -> Result<Vec<u8>, &'static str> {
    let mut bytes = Vec::with_capacity(5);
    if modifiers.meta {
        bytes.push(0x1b);
    }
    if modifiers.ctrl {
        let control = match c {
            'a'..='z' | 'A'..='Z' => (c.to_ascii_lowercase() as u8) & 0x1f,
            '@' | ' ' => 0x00,
            '[' => 0x1b,
            '\\' => 0x1c,
            ']' => 0x1d,
            '^' => 0x1e,
            '_' => 0x1f,
            '?' => 0x7f,
            _ => return Err("Ctrl combines only with a letter, Space or one of @ [ \\ ] ^ _ ?"),
        };
        bytes.push(control);
        return Ok(bytes);
    }
    let c = if modifiers.shift {
        if !c.is_ascii_alphabetic() {
            return Err("Shift combines only with letters and named keys; type the shifted \
                        character itself");
        }
        c.to_ascii_uppercase()
    } else {
        c
    };
    let mut utf8 = [0; 4];
    bytes.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
    Ok(bytes)
}

/// Encodes a named key with the xterm sequences for its modifiers.
fn encode_named(
    key: NamedKey,
    modifiers: Modifiers,
    app_cursor: bool,
) -> Result<Vec<u8>, &'static str> {
    match key {
        NamedKey::Up => Ok(cursor_key(b'A', modifiers, app_cursor)),
        NamedKey::Down => Ok(cursor_key(b'B', modifiers, app_cursor)),
        NamedKey::Right => Ok(cursor_key(b'C', modifiers, app_cursor)),
        NamedKey::Left => Ok(cursor_key(b'D', modifiers, app_cursor)),
        NamedKey::Home => Ok(cursor_key(b'H', modifiers, app_cursor)),
        NamedKey::End => Ok(cursor_key(b'F', modifiers, app_cursor)),
        NamedKey::Insert => Ok(tilde_key(2, modifiers)),
        NamedKey::Delete => Ok(tilde_key(3, modifiers)),
        NamedKey::PageUp => Ok(tilde_key(5, modifiers)),
        NamedKey::PageDown => Ok(tilde_key(6, modifiers)),
        NamedKey::Function(n @ 1..=4) => {
            // F1–F4 are SS3 P, Q, R, S; with modifiers xterm sends CSI 1 ; m P and so on.
            let letter = b'P' + (n - 1);
            if modifiers.any() {
                Ok(format!("\x1b[1;{}{}", modifiers.xterm_param(), letter as char).into_bytes())
            } else {
                Ok(vec![0x1b, b'O', letter])
            }
        }
        NamedKey::Function(n) => {
            let code = match n {
                5 => 15,
                6 => 17,
                7 => 18,
                8 => 19,
                9 => 20,
                10 => 21,
                11 => 23,
                _ => 24,
            };
            Ok(tilde_key(code, modifiers))
        }
        NamedKey::Enter => simple_key(b'\r', modifiers, "Enter"),
        NamedKey::Escape => simple_key(0x1b, modifiers, "Escape"),
        NamedKey::Space => {
            let shifted = Modifiers { shift: false, ..modifiers };
            encode_char(' ', shifted)
        }
        NamedKey::Backspace => {
            // Ctrl+Backspace is BS (0x08) in xterm; plain Backspace is DEL.
            let byte = if modifiers.ctrl { 0x08 } else { 0x7f };
            let ctrl_handled = Modifiers { ctrl: false, ..modifiers };
            simple_key(byte, ctrl_handled, "BSpace")
        }
        NamedKey::Tab if modifiers.shift && !modifiers.ctrl => {
            back_tab(Modifiers { shift: false, ..modifiers })
        }
        NamedKey::Tab => simple_key(b'\t', modifiers, "Tab"),
        NamedKey::BackTab => back_tab(Modifiers { shift: false, ..modifiers }),
    }
}

/// Arrows, Home and End: CSI or SS3 plus a letter, or CSI 1 ; m plus a letter with modifiers.
fn cursor_key(letter: u8, modifiers: Modifiers, app_cursor: bool) -> Vec<u8> {
    if modifiers.any() {
        format!("\x1b[1;{}{}", modifiers.xterm_param(), letter as char).into_bytes()
    } else if app_cursor {
        vec![0x1b, b'O', letter]
    } else {
        vec![0x1b, b'[', letter]
    }
}

/// Keys of the form CSI n ~ (CSI n ; m ~ with modifiers).
fn tilde_key(code: u8, modifiers: Modifiers) -> Vec<u8> {
    if modifiers.any() {
        format!("\x1b[{code};{}~", modifiers.xterm_param()).into_bytes()
    } else {
        format!("\x1b[{code}~").into_bytes()
    }
}

/// Shift+Tab, optionally with Meta (an ESC prefix).
fn back_tab(modifiers: Modifiers) -> Result<Vec<u8>, &'static str> {
    if modifiers.ctrl {
        return Err("Ctrl+Shift+Tab has no legacy encoding");
    }
    let mut bytes = if modifiers.meta { vec![0x1b] } else { Vec::new() };
    bytes.extend_from_slice(b"\x1b[Z");
    Ok(bytes)
}

/// Enter, Escape, Tab and Backspace: one byte, with an ESC prefix for Meta.
fn simple_key(byte: u8, modifiers: Modifiers, name: &'static str) -> Result<Vec<u8>, &'static str> {
    if modifiers.ctrl || modifiers.shift {
        return Err(match name {
            "Enter" => {
                "Ctrl or Shift with Enter has no legacy encoding; for a newline in an agent's \
                 prompt try M-Enter"
            }
            _ => "Ctrl or Shift with this key has no legacy encoding",
        });
    }
    Ok(if modifiers.meta { vec![0x1b, byte] } else { vec![byte] })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks a table of (name, app cursor mode, expected bytes).
    fn check(cases: &[(&str, bool, &[u8])]) {
        for (name, app_cursor, expected) in cases {
            assert_eq!(
                encode_key(name, *app_cursor).as_deref(),
                Ok(*expected),
                "key {name:?} (app cursor {app_cursor})"
            );
        }
    }

    #[test]
    fn plain_named_keys() {
        check(&[
            ("Enter", false, b"\r"),
            ("enter", false, b"\r"),
            ("ENTER", false, b"\r"),
            ("Tab", false, b"\t"),
            ("BTab", false, b"\x1b[Z"),
            ("S-Tab", false, b"\x1b[Z"),
            ("Escape", false, b"\x1b"),
            ("Esc", false, b"\x1b"),
            ("Space", false, b" "),
            ("Backspace", false, b"\x7f"),
            ("BSpace", false, b"\x7f"),
            ("Delete", false, b"\x1b[3~"),
            ("DC", false, b"\x1b[3~"),
            ("Insert", false, b"\x1b[2~"),
            ("IC", false, b"\x1b[2~"),
            ("Home", false, b"\x1b[H"),
            ("End", false, b"\x1b[F"),
            ("PageUp", false, b"\x1b[5~"),
            ("PgUp", false, b"\x1b[5~"),
            ("PPage", false, b"\x1b[5~"),
            ("PageDown", false, b"\x1b[6~"),
            ("PgDn", false, b"\x1b[6~"),
            ("NPage", false, b"\x1b[6~"),
        ]);
    }

    #[test]
    fn cursor_keys_follow_decckm() {
        check(&[
            ("Up", false, b"\x1b[A"),
            ("Down", false, b"\x1b[B"),
            ("Right", false, b"\x1b[C"),
            ("Left", false, b"\x1b[D"),
            ("Up", true, b"\x1bOA"),
            ("Down", true, b"\x1bOB"),
            ("Right", true, b"\x1bOC"),
            ("Left", true, b"\x1bOD"),
            ("Home", true, b"\x1bOH"),
            ("End", true, b"\x1bOF"),
            // Modified cursor keys use the CSI form in either mode.
            ("C-Left", false, b"\x1b[1;5D"),
            ("C-Left", true, b"\x1b[1;5D"),
            ("S-Up", false, b"\x1b[1;2A"),
            ("M-Right", false, b"\x1b[1;3C"),
            ("C-S-Down", false, b"\x1b[1;6B"),
            ("M-C-S-Home", false, b"\x1b[1;8H"),
        ]);
    }

    #[test]
    fn function_keys() {
        check(&[
            ("F1", false, b"\x1bOP"),
            ("F2", false, b"\x1bOQ"),
            ("F3", false, b"\x1bOR"),
            ("f4", false, b"\x1bOS"),
            ("F5", false, b"\x1b[15~"),
            ("F6", false, b"\x1b[17~"),
            ("F7", false, b"\x1b[18~"),
            ("F8", false, b"\x1b[19~"),
            ("F9", false, b"\x1b[20~"),
            ("F10", false, b"\x1b[21~"),
            ("F11", false, b"\x1b[23~"),
            ("F12", false, b"\x1b[24~"),
            ("S-F1", false, b"\x1b[1;2P"),
            ("C-F5", false, b"\x1b[15;5~"),
            ("M-PgUp", false, b"\x1b[5;3~"),
            ("S-Delete", false, b"\x1b[3;2~"),
        ]);
    }

    #[test]
    fn ctrl_and_meta_characters() {
        check(&[
            ("C-c", false, b"\x03"),
            ("C-C", false, b"\x03"),
            ("c-a", false, b"\x01"),
            ("^d", false, b"\x04"),
            ("C-@", false, b"\x00"),
            ("C-Space", false, b"\x00"),
            ("C-[", false, b"\x1b"),
            ("C-\\", false, b"\x1c"),
            ("C-]", false, b"\x1d"),
            ("C-^", false, b"\x1e"),
            ("C-_", false, b"\x1f"),
            ("C-?", false, b"\x7f"),
            ("M-x", false, b"\x1bx"),
            ("M-X", false, b"\x1bX"),
            ("M-C-x", false, b"\x1b\x18"),
            ("C-M-x", false, b"\x1b\x18"),
            ("M-Enter", false, b"\x1b\r"),
            ("M-Escape", false, b"\x1b\x1b"),
            ("M-BSpace", false, b"\x1b\x7f"),
            ("C-BSpace", false, b"\x08"),
            ("M-Tab", false, b"\x1b\t"),
            ("M-BTab", false, b"\x1b\x1b[Z"),
            ("M-Space", false, b"\x1b "),
            ("S-a", false, b"A"),
            ("a", false, b"a"),
            ("-", false, b"-"),
            ("é", false, "é".as_bytes()),
            ("M-é", false, "\x1bé".as_bytes()),
        ]);
    }

    #[test]
    fn named_keys_follow_the_kitty_flags() {
        let cases: &[(&str, u8, &[u8])] = &[
            ("Enter", 0, b"\r"),
            ("S-Enter", 1, b"\x1b[13;2u"),
            ("C-Enter", 1, b"\x1b[13;5u"),
            ("M-Enter", 1, b"\x1b[13;3u"),
            ("Enter", 1, b"\r"),
            ("Enter", 9, b"\x1b[13u"),
            ("Escape", 1, b"\x1b[27u"),
            ("Escape", 2, b"\x1b"),
            ("Tab", 1, b"\t"),
            ("BTab", 1, b"\x1b[9;2u"),
            ("C-Tab", 1, b"\x1b[9;5u"),
            ("BSpace", 1, b"\x7f"),
            ("C-c", 1, b"\x1b[99;5u"),
            ("^c", 1, b"\x1b[99;5u"),
            ("M-x", 1, b"\x1b[120;3u"),
            ("C-1", 1, b"\x1b[49;5u"),
            ("a", 1, b"a"),
            ("A", 1, b"A"),
            ("S-a", 1, b"A"),
            ("a", 8, b"\x1b[97u"),
            ("A", 8, b"\x1b[97;2u"),
            ("Space", 1, b" "),
            ("C-Space", 1, b"\x1b[32;5u"),
            ("Up", 1, b"\x1b[A"),
            ("C-Left", 1, b"\x1b[1;5D"),
            ("F1", 1, b"\x1b[P"),
            ("F3", 1, b"\x1b[13~"),
            ("S-F5", 1, b"\x1b[15;2~"),
            ("PgUp", 1, b"\x1b[5~"),
        ];
        for (name, flags, expected) in cases {
            assert_eq!(
                encode_key_with(name, false, *flags).as_deref(),
                Ok(*expected),
                "key {name:?} flags {flags}"
            );
        }
        // Names still have to be keys.
        assert!(matches!(encode_key_with("Foo", false, 1), Err(KeyError::Unknown(_))));
    }

    #[test]
    fn bad_names_are_errors_that_name_the_key() {
        for name in ["Foo", "Enterr", "F13", "F0", "F01", "C-", "X-a", "Ctrl-c", ""] {
            match encode_key(name, false) {
                Err(KeyError::Unknown(reported)) => assert_eq!(reported, name),
                other => panic!("{name:?} gave {other:?}"),
            }
            assert!(KeyError::Unknown(name.to_owned()).to_string().contains(name));
        }
        for name in ["C-1", "C--", "S-Enter", "C-Enter", "C-Tab", "S-1", "C-S-Tab"] {
            match encode_key(name, false) {
                Err(KeyError::Unsupported { name: reported, .. }) => assert_eq!(reported, name),
                other => panic!("{name:?} gave {other:?}"),
            }
        }
    }
}
