//! The kitty keyboard protocol's key encoding
//! (<https://sw.kovidgoyal.net/kitty/keyboard-protocol/>), for a program that pushed or set
//! flags (`CSI > flags u`, `CSI = flags ; mode u`).
//!
//! It owns the protocol's key numbers and the rules of each flag: 1 disambiguates (Esc, and
//! keys with Ctrl or Alt, become `CSI code ; mods u`; Enter, Tab and Backspace keep their legacy
//! bytes when unmodified), 2 reports repeats and releases (`:2`, `:3` after the modifiers), 4
//! adds the shifted and the US-layout key (`code:shifted:base`), 8 sends every key as an
//! escape code (modifier keys too), and 16 adds the text a key produces as code points (with 8).
//! A key is described by [`KeyEvent`], free of any windowing library, so that the window and
//! `berth send --keys` share the encoder. It must not look at terminal state: the caller passes
//! the flags in force, and encodes with the legacy tables when they are 0.

/// Flag 1: disambiguate escape codes.
pub const DISAMBIGUATE: u8 = 1;
/// Flag 2: report repeats and releases.
pub const REPORT_EVENT_TYPES: u8 = 2;
/// Flag 4: report the shifted and the base-layout key.
pub const REPORT_ALTERNATE_KEYS: u8 = 4;
/// Flag 8: report every key, text keys and modifiers included, as an escape code.
pub const REPORT_ALL_KEYS: u8 = 8;
/// Flag 16: report the text a key produces inside its escape code (with flag 8).
pub const REPORT_ASSOCIATED_TEXT: u8 = 16;

/// Modifier bits as the protocol numbers them (the escape code carries 1 + their sum).
pub mod mods {
    /// Shift.
    pub const SHIFT: u8 = 1;
    /// Alt (Option).
    pub const ALT: u8 = 2;
    /// Control.
    pub const CTRL: u8 = 4;
    /// Super (the Windows or Command key).
    pub const SUPER: u8 = 8;
}

/// Whether a key went down, repeats while held, or went up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeyKind {
    /// The key went down.
    #[default]
    Press,
    /// The key is held and repeats.
    Repeat,
    /// The key went up.
    Release,
}

/// A key without a character of its own: its number and the final byte of its escape code
/// (`u`, `~`, or a letter for the keys whose legacy form is `CSI 1 ; mods X`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Functional {
    number: u32,
    trailer: u8,
}

impl Functional {
    const fn new(number: u32, trailer: u8) -> Self {
        Self { number, trailer }
    }

    /// Escape.
    pub const ESCAPE: Self = Self::new(27, b'u');
    /// Enter (Return).
    pub const ENTER: Self = Self::new(13, b'u');
    /// Tab.
    pub const TAB: Self = Self::new(9, b'u');
    /// Backspace.
    pub const BACKSPACE: Self = Self::new(127, b'u');
    /// Insert.
    pub const INSERT: Self = Self::new(2, b'~');
    /// Delete.
    pub const DELETE: Self = Self::new(3, b'~');
    /// Left arrow.
    pub const LEFT: Self = Self::new(1, b'D');
    /// Right arrow.
    pub const RIGHT: Self = Self::new(1, b'C');
    /// Up arrow.
    pub const UP: Self = Self::new(1, b'A');
    /// Down arrow.
    pub const DOWN: Self = Self::new(1, b'B');
    /// Page Up.
    pub const PAGE_UP: Self = Self::new(5, b'~');
    /// Page Down.
    pub const PAGE_DOWN: Self = Self::new(6, b'~');
    /// Home.
    pub const HOME: Self = Self::new(1, b'H');
    /// End.
    pub const END: Self = Self::new(1, b'F');
    /// Caps Lock.
    pub const CAPS_LOCK: Self = Self::new(57358, b'u');
    /// Scroll Lock.
    pub const SCROLL_LOCK: Self = Self::new(57359, b'u');
    /// Num Lock.
    pub const NUM_LOCK: Self = Self::new(57360, b'u');
    /// Print Screen.
    pub const PRINT_SCREEN: Self = Self::new(57361, b'u');
    /// Pause.
    pub const PAUSE: Self = Self::new(57362, b'u');
    /// Menu.
    pub const MENU: Self = Self::new(57363, b'u');
    /// Keypad Enter.
    pub const KP_ENTER: Self = Self::new(57414, b'u');
    /// Keypad Begin (5 with Num Lock off).
    pub const KP_BEGIN: Self = Self::new(1, b'E');
    /// Left Shift; the other modifier keys follow it in the protocol's table (see
    /// [`Functional::modifier`]).
    pub const LEFT_SHIFT: Self = Self::new(57441, b'u');

    /// F1 to F35; `None` past them.
    pub fn function(n: u8) -> Option<Self> {
        Some(match n {
            1 => Self::new(1, b'P'),
            2 => Self::new(1, b'Q'),
            // `CSI R` would read as a cursor position report.
            3 => Self::new(13, b'~'),
            4 => Self::new(1, b'S'),
            5 => Self::new(15, b'~'),
            6..=10 => Self::new(u32::from(n) + 11, b'~'),
            11 | 12 => Self::new(u32::from(n) + 12, b'~'),
            13..=35 => Self::new(57376 + u32::from(n - 13), b'u'),
            _ => return None,
        })
    }

    /// A key of the numeric keypad by the character it is labelled with (`0`–`9`, `.`, `/`,
    /// `*`, `-`, `+`, `=`, `,`); `None` for another character.
    pub fn keypad(label: char) -> Option<Self> {
        let number = match label {
            '0'..='9' => 57399 + (label as u32 - '0' as u32),
            '.' => 57409,
            '/' => 57410,
            '*' => 57411,
            '-' => 57412,
            '+' => 57413,
            '=' => 57415,
            ',' => 57416,
            _ => return None,
        };
        Some(Self::new(number, b'u'))
    }

    /// A keypad key in its navigation role (Num Lock off): the keypad's own arrows, Page Up,
    /// Page Down, Home, End, Insert and Delete, given as the main keys they act as.
    pub fn keypad_navigation(main: Self) -> Option<Self> {
        let number = match main {
            Self::LEFT => 57417,
            Self::RIGHT => 57418,
            Self::UP => 57419,
            Self::DOWN => 57420,
            Self::PAGE_UP => 57421,
            Self::PAGE_DOWN => 57422,
            Self::HOME => 57423,
            Self::END => 57424,
            Self::INSERT => 57425,
            Self::DELETE => 57426,
            _ => return None,
        };
        Some(Self::new(number, b'u'))
    }

    /// A modifier key: `index` 0 Shift, 1 Control, 2 Alt, 3 Super, 4 Hyper, 5 Meta, on the
    /// left or the right; `None` past them.
    pub fn modifier(index: u8, right: bool) -> Option<Self> {
        (index < 6).then(|| Self::new(57441 + u32::from(index) + 6 * u32::from(right), b'u'))
    }

    /// AltGr (ISO Level 3 Shift).
    pub const ISO_LEVEL3_SHIFT: Self = Self::new(57453, b'u');

    /// Whether the key is a modifier or a lock key, reported only with flag 8.
    fn is_modifier(self) -> bool {
        matches!(self.number, 57358..=57360 | 57441..=57454)
    }
}

/// Which key an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A key that types a character: the character the layout gives it without Shift (`a`
    /// for Shift+A, `1` for `!` on a US layout).
    Char(char),
    /// A key without a character of its own.
    Functional(Functional),
}

/// One key event, as the encoder needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyEvent<'a> {
    /// The key.
    pub key: Key,
    /// The character the key types with Shift held (`A`, `!`), when Shift is held; reported
    /// with flag 4.
    pub shifted: Option<char>,
    /// The character of the same physical key on a US PC-101 layout; reported with flag 4
    /// when it differs from the key's own.
    pub base_layout: Option<char>,
    /// The modifiers held, as [`mods`] bits.
    pub mods: u8,
    /// Press, repeat or release.
    pub kind: KeyKind,
    /// The text the key produces, if any (control characters are ignored).
    pub text: Option<&'a str>,
}

impl<'a> KeyEvent<'a> {
    /// A press of `key` with `mods` and nothing else known.
    pub fn press(key: Key, mods: u8) -> Self {
        Self { key, shifted: None, base_layout: None, mods, kind: KeyKind::Press, text: None }
    }
}

/// Whether presses and repeats under `flags` are encoded as in legacy mode: without flag 1 or
/// 8 the protocol changes only what is reported besides them (releases with flag 2).
pub fn legacy_presses(flags: u8) -> bool {
    flags & (DISAMBIGUATE | REPORT_ALL_KEYS) == 0
}

/// The bytes for `event` under the protocol's `flags`, or `None` when the key sends nothing (a
/// release without flag 2, a modifier key without flag 8). When [`legacy_presses`] holds, the
/// caller encodes presses and repeats with the legacy tables instead.
pub fn encode(event: &KeyEvent<'_>, flags: u8) -> Option<Vec<u8>> {
    let all_keys = flags & REPORT_ALL_KEYS != 0;
    let event_types = flags & REPORT_EVENT_TYPES != 0;
    let kind = match event.kind {
        KeyKind::Release if !event_types => return None,
        KeyKind::Repeat if !event_types => KeyKind::Press,
        kind => kind,
    };
    let text = event.text.filter(|t| !t.is_empty() && !t.chars().any(char::is_control));
    // Shift alone still types text: only Ctrl, Alt or Super make a text key an escape code.
    let typing = event.mods & !mods::SHIFT == 0;

    let (number, trailer) = match event.key {
        Key::Functional(key) => {
            if key.is_modifier() && !all_keys {
                return None;
            }
            if !all_keys && event.mods == 0 {
                // Enter, Tab and Backspace keep their legacy bytes so that a shell stays usable
                // after a program that set flags dies without resetting them; they are not
                // released.
                let legacy: &[u8] = match key {
                    Functional::ENTER | Functional::KP_ENTER => b"\r",
                    Functional::TAB => b"\t",
                    Functional::BACKSPACE => b"\x7f",
                    _ => b"",
                };
                if !legacy.is_empty() {
                    return (kind != KeyKind::Release).then(|| legacy.to_vec());
                }
            }
            // A keypad key that types (Num Lock on) types, like a text key.
            if !all_keys && typing && kind != KeyKind::Release {
                if let Some(text) = text {
                    return Some(text.as_bytes().to_vec());
                }
            }
            (key.number, key.trailer)
        }
        Key::Char(c) => {
            if !all_keys && typing && kind != KeyKind::Release {
                if let Some(text) = text {
                    return Some(text.as_bytes().to_vec());
                }
            }
            (c as u32, b'u')
        }
    };

    let key_char = match event.key {
        Key::Char(c) => Some(c),
        Key::Functional(_) => None,
    };
    let (shifted, base) = if flags & REPORT_ALTERNATE_KEYS != 0 {
        let shifted =
            event.shifted.filter(|s| event.mods & mods::SHIFT != 0 && Some(*s) != key_char);
        let base = event.base_layout.filter(|b| Some(*b) != key_char);
        (shifted, base)
    } else {
        (None, None)
    };
    let text = text
        .filter(|_| all_keys && flags & REPORT_ASSOCIATED_TEXT != 0 && kind != KeyKind::Release);
    Some(serialize(number, shifted, base, event.mods, event_types.then_some(kind), text, trailer))
}

/// `CSI number : shifted : base ; mods : kind ; text trailer`, leaving out what is empty as
/// the protocol allows (a number of 1 with nothing after it, a press, no modifiers).
fn serialize(
    number: u32,
    shifted: Option<char>,
    base: Option<char>,
    mods: u8,
    kind: Option<KeyKind>,
    text: Option<&str>,
    trailer: u8,
) -> Vec<u8> {
    use std::fmt::Write;

    let alternates = shifted.is_some() || base.is_some();
    let action = match kind {
        Some(KeyKind::Repeat) => Some(2),
        Some(KeyKind::Release) => Some(3),
        _ => None,
    };
    let second = mods != 0 || action.is_some();
    let mut out = String::from("\x1b[");
    // Writing to a String cannot fail.
    if number != 1 || alternates || second || text.is_some() {
        let _ = write!(out, "{number}");
    }
    if alternates {
        out.push(':');
        if let Some(shifted) = shifted {
            let _ = write!(out, "{}", shifted as u32);
        }
        if let Some(base) = base {
            let _ = write!(out, ":{}", base as u32);
        }
    }
    if second || text.is_some() {
        out.push(';');
        if second {
            let _ = write!(out, "{}", u32::from(mods) + 1);
        }
        if let Some(action) = action {
            let _ = write!(out, ":{action}");
        }
    }
    if let Some(text) = text {
        for (i, c) in text.chars().enumerate() {
            let _ = write!(out, "{}{}", if i == 0 { ';' } else { ':' }, c as u32);
        }
    }
    out.push(trailer as char);
    out.into_bytes()
}

#[cfg(test)]
mod tests;
