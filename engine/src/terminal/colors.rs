//! The colour OSCs as xterm takes them: OSC 4 (palette), 5 (special colours), 10, 11 and 12
//! (foreground, background, cursor) set or query colours, OSC 105 resets special colours.
//!
//! vte parses only `rgb:` and `#` specs; Berth takes these strings from the scanner instead
//! ([`crate::osc::OscEvent::Color`]; the vte handler ignores its own calls for them) and reads
//! the specs with [`crate::xcms`], which accepts every form `XParseColor` does and yields
//! what xterm keeps of it on an 8-bit visual. Replies keep the order of the requests and end
//! as the request ended (BEL or ST). As in xterm, a pair with a bad index or a bad spec ends
//! the string's processing; OSC 4 indices 256 to 260 and OSC 5 indices 0 to 4 are xterm's
//! special colours (bold, underline, blink, reverse, italic), which Berth stores and reports
//! but does not draw; one never set reports the foreground. OSC 104 and 110-112 (resets)
//! stay with alacritty.

use alacritty_terminal::term::color::COUNT;
use alacritty_terminal::vte::ansi::{Handler, NamedColor, Rgb};

use super::answers::SPECIAL_COLORS;
use super::PaneTerminal;
use crate::xcms;

/// The palette's size in xterm's numbering; OSC 4 indices past it are special colours.
const PALETTE: usize = 256;

/// Where a colour lives.
#[derive(Clone, Copy)]
enum Slot {
    /// An index of alacritty's colour table: the palette, the foreground (256), the
    /// background (257) or the cursor (258).
    Term(usize),
    /// One of xterm's special colours.
    Special(usize),
}

impl PaneTerminal {
    /// Applies OSC `kind` (4, 5, 10, 11, 12 or 105) with the bytes after its number.
    pub(super) fn color_osc(&mut self, kind: u16, payload: &[u8], bell: bool) {
        let end = if bell { "\x07" } else { "\x1b\\" };
        let params: Vec<&[u8]> = payload.split(|&b| b == b';').collect();
        match kind {
            4 | 5 => {
                for pair in params.chunks(2) {
                    let [index, spec] = pair else { break };
                    let Some(number) = decimal(index) else { break };
                    let slot = match (kind, number) {
                        (4, n) if n < PALETTE => Slot::Term(n),
                        (4, n) if n - PALETTE < SPECIAL_COLORS => Slot::Special(n - PALETTE),
                        (5, n) if n < SPECIAL_COLORS => Slot::Special(n),
                        _ => break,
                    };
                    if !self.set_or_report(slot, spec, &format!("{kind};{number}"), end) {
                        break;
                    }
                }
            }
            10..=12 => {
                for (offset, spec) in params.iter().enumerate() {
                    let code = usize::from(kind) + offset;
                    if code > 12 {
                        break;
                    }
                    let slot = Slot::Term(NamedColor::Foreground as usize + code - 10);
                    if !self.set_or_report(slot, spec, &code.to_string(), end) {
                        break;
                    }
                }
            }
            105 if payload.is_empty() => self.answers.special_colors = [None; SPECIAL_COLORS],
            105 => {
                for index in params {
                    match decimal(index) {
                        Some(n) if n < SPECIAL_COLORS => self.answers.special_colors[n] = None,
                        _ => break,
                    }
                }
            }
            _ => (),
        }
    }

    /// Reports the colour in `slot` for the spec `?`, else sets it; false for a bad spec.
    fn set_or_report(&mut self, slot: Slot, spec: &[u8], prefix: &str, end: &str) -> bool {
        if spec == b"?" {
            let Rgb { r, g, b } = self.slot_color(slot);
            let reply =
                format!("\x1b]{prefix};rgb:{r:02x}{r:02x}/{g:02x}{g:02x}/{b:02x}{b:02x}{end}");
            self.push_event(super::TerminalEvent::PtyWrite(reply.into_bytes()));
            return true;
        }
        let Some([r, g, b]) = xcms::parse(spec) else {
            return false;
        };
        let color = Rgb { r, g, b };
        match slot {
            Slot::Term(index) => Handler::set_color(&mut self.term, index, color),
            Slot::Special(index) => self.answers.special_colors[index] = Some(color),
        }
        true
    }

    /// The colour a query of `slot` reports.
    fn slot_color(&self, slot: Slot) -> Rgb {
        match slot {
            Slot::Term(index) => self.reported_color(index),
            Slot::Special(index) => self.answers.special_colors[index]
                .unwrap_or_else(|| self.reported_color(NamedColor::Foreground as usize)),
        }
    }

    /// The colour of alacritty's table at `index` a program is told: the one it set, else
    /// the theme's, else the built-in default.
    pub(super) fn reported_color(&self, index: usize) -> Rgb {
        // A bad index must not panic the engine.
        let set = if index < COUNT { self.term.colors()[index] } else { None };
        set.unwrap_or_else(|| match &self.theme {
            Some(theme) => theme.color(index),
            None => super::default_color(index),
        })
    }
}

/// A colour number: ASCII digits only, at most 4 of them.
fn decimal(bytes: &[u8]) -> Option<usize> {
    if bytes.is_empty() || bytes.len() > 4 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}
