//! Replies to the queries alacritty leaves unanswered and the OSC scanner recognises
//! ([`crate::osc::Query`]): XTVERSION, DA3, the kitty keyboard flags, XTWINOPS 19, DECXCPR,
//! the printer status and DECRQSS. Pure functions of the Term's state; no I/O.

use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::vte::ansi::{Color, CursorShape, NamedColor};
use alacritty_terminal::Term;

use crate::osc::Query;

use super::listener::TermListener;

/// The bytes to write back to the PTY for `query`.
pub(super) fn answer(term: &Term<TermListener>, query: &Query) -> Vec<u8> {
    use alacritty_terminal::grid::Dimensions;
    match query {
        Query::Version => format!("\x1bP>|Berth {}\x1b\\", env!("CARGO_PKG_VERSION")).into_bytes(),
        // A unit id of zeros, as xterm sends.
        Query::TertiaryAttributes => b"\x1bP!|00000000\x1b\\".to_vec(),
        // The engine runs with the kitty keyboard protocol off: no flags are ever set.
        Query::KeyboardFlags => b"\x1b[?0u".to_vec(),
        Query::ScreenSizeChars => {
            format!("\x1b[9;{};{}t", term.screen_lines(), term.columns()).into_bytes()
        }
        Query::ExtendedCursorPosition => {
            // Absolute, like alacritty's answer to `CSI 6 n`; page 1.
            let point = term.grid().cursor.point;
            format!("\x1b[?{};{};1R", point.line.0 + 1, point.column.0 + 1).into_bytes()
        }
        // No printer.
        Query::PrinterStatus => b"\x1b[?13n".to_vec(),
        Query::Setting(request) => match setting(term, request) {
            Some(value) => format!("\x1bP1$r{value}\x1b\\").into_bytes(),
            None => b"\x1bP0$r\x1b\\".to_vec(),
        },
    }
}

/// The DECRQSS answer for `request` (the setting's final bytes), or `None` when unknown.
fn setting(term: &Term<TermListener>, request: &[u8]) -> Option<String> {
    match request {
        b"m" => Some(format!("{}m", sgr(term))),
        b" q" => {
            let style = term.cursor_style();
            let base = match style.shape {
                CursorShape::Underline => 3,
                CursorShape::Beam => 5,
                _ => 1,
            };
            Some(format!("{} q", base + u8::from(!style.blinking)))
        }
        // Berth protects no characters (DECSCA is not implemented): every one is erasable.
        b"\"q" => Some("0\"q".to_owned()),
        _ => None,
    }
}

/// The SGR parameters that reproduce the cursor's current attributes, starting with `0`.
fn sgr(term: &Term<TermListener>) -> String {
    let template = &term.grid().cursor.template;
    let mut params = vec!["0".to_owned()];
    let flags = template.flags;
    for (flag, code) in [
        (Flags::BOLD, "1"),
        (Flags::DIM, "2"),
        (Flags::ITALIC, "3"),
        (Flags::UNDERLINE, "4"),
        (Flags::INVERSE, "7"),
        (Flags::HIDDEN, "8"),
        (Flags::STRIKEOUT, "9"),
        (Flags::DOUBLE_UNDERLINE, "21"),
    ] {
        if flags.contains(flag) {
            params.push(code.to_owned());
        }
    }
    if let Some(fg) = color_param(template.fg, 30, NamedColor::Foreground) {
        params.push(fg);
    }
    if let Some(bg) = color_param(template.bg, 40, NamedColor::Background) {
        params.push(bg);
    }
    params.join(";")
}

/// The SGR parameter for a colour (`base` 30 for the foreground, 40 for the background);
/// `None` for the default.
fn color_param(color: Color, base: u16, default: NamedColor) -> Option<String> {
    match color {
        Color::Named(name) if name == default => None,
        Color::Named(name) => {
            let index = name as u16;
            match index {
                0..=7 => Some((base + index).to_string()),
                8..=15 => Some((base + 60 + index - 8).to_string()),
                _ => None,
            }
        }
        Color::Indexed(index) => Some(format!("{};5;{index}", base + 8)),
        Color::Spec(rgb) => Some(format!("{};2;{};{};{}", base + 8, rgb.r, rgb.g, rgb.b)),
    }
}
