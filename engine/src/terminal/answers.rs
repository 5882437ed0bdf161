//! Replies to the queries alacritty leaves unanswered or answers incompletely.
//!
//! Two kinds: the queries the OSC scanner recognises because vte does not parse them
//! ([`crate::osc::Query`]: XTVERSION, DA3, XTWINOPS 16 and 19, DECXCPR and the other DEC
//! status reports, DECRQSS, DECRQCRA), answered by [`answer`]; and those vte parses but
//! alacritty answers wrongly or not at all (DA1, DECRQM for the modes it does not know, the
//! kitty keyboard flags, XTWINOPS 14, CPR in origin mode), answered by the forwarding handler
//! (`super::seq::SeqHandler`) with the functions here. Pure functions of the Term's state and
//! of [`AnswerState`], which mirrors the little that alacritty keeps private (the scrolling
//! region, the depth of the kitty keyboard stacks) and keeps the modes Berth adds (DECBKM, the
//! modes XTSAVE saved); no I/O. The rectangle rules ([`resolve`]) are shared with the edits of
//! `super::rect`.
//!
//! The title reports (XTWINOPS 20 and 21) are `super::titles`'s, which keeps the icon label and
//! the title stack in [`AnswerState::titles`] and says why they are safe to answer.

use alacritty_terminal::grid::{Cursor, Dimensions};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::{
    Color, CursorShape, NamedColor, NamedPrivateMode, PrivateMode,
};
use alacritty_terminal::Term;

use crate::osc::Query;

use super::listener::TermListener;
use super::titles::Titles;

#[cfg(test)]
mod tests;

/// The cell size in pixels reported to programs that ask (XTWINOPS 14 and 16): the engine does
/// not know the window's font (a headless server has none), so it reports this fixed size, a
/// common monospace cell at 96 DPI.
pub const REPORTED_CELL_PIXELS: (u32, u32) = (10, 20);

/// The primary device attributes (DA1): a VT220-class terminal (62) with selective erase (6:
/// DECSCA, DECSED, DECSEL and DECSERA keep protected characters) and ANSI colour (22), the
/// attributes of xterm's list that Berth really implements. Not claimed: 132 columns (1),
/// printer (2), national character sets (9), the DEC technical set (15), the locator (16, 29),
/// user windows (18), horizontal scrolling (21) and rectangular editing (28, which needs
/// DECCARA and DECRARA, not implemented).
pub(super) const PRIMARY_ATTRIBUTES: &str = "\x1b[?62;6;22c";

/// The deepest the kitty keyboard stack of one screen may grow; a push past it is ignored.
///
/// alacritty's own limit (4096) is reached through a bug that removes an entry of the *title*
/// stack instead and panics when that one is empty, so the handler stops one short of it.
pub(super) const MAX_KEYBOARD_STACK: usize = 4095;

/// The reply to XTGETTCAP (`DCS + q Pt ST`): for each capability name (hex, `;` between) one
/// `DCS 1 + r name=value ST` with the value in hex, as xterm; at the first name Berth does not
/// answer, `DCS 0 + r name ST` and no more. Only the colour count is answered (`Co` and
/// `colors`: 256, which OSC 4 indexes; xterm's special colours follow them).
fn termcap(request: &[u8]) -> Vec<u8> {
    if request.len() > crate::osc::MAX_TERMCAP_BYTES {
        return Vec::new();
    }
    let mut reply = Vec::new();
    for name in request.split(|&b| b == b';') {
        let decoded = (name.len() % 2 == 0)
            .then(|| {
                name.chunks(2)
                    .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
                    .collect::<Option<Vec<u8>>>()
            })
            .flatten();
        let value = match decoded.as_deref() {
            Some(b"Co" | b"colors") => "256",
            _ => {
                reply.extend_from_slice(b"\x1bP0+r");
                reply.extend_from_slice(name);
                reply.extend_from_slice(b"\x1b\\");
                break;
            }
        };
        reply.extend_from_slice(b"\x1bP1+r");
        reply.extend_from_slice(name);
        reply.push(b'=');
        for byte in value.bytes() {
            reply.extend_from_slice(format!("{byte:02X}").as_bytes());
        }
        reply.extend_from_slice(b"\x1b\\");
    }
    reply
}

/// xterm's special colours: bold, underline, blink, reverse and italic (`super::colors`).
pub(super) const SPECIAL_COLORS: usize = 5;

/// What the answers need that alacritty keeps private, mirrored from the handler calls that
/// change it, and the one mode Berth keeps beside the Term (DECBKM).
#[derive(Debug, Default)]
pub(super) struct AnswerState {
    /// The scrolling region DECSTBM set (1-based, inclusive), `None` for the whole screen.
    pub(super) region: Option<(usize, usize)>,
    /// Entries on the kitty keyboard stacks of the primary and the alternate screen.
    pub(super) keyboard_depth: [usize; 2],
    /// DECBKM (`CSI ? 67 h`), which alacritty does not know: Backspace sends BS, not DEL.
    pub(super) backarrow_sends_bs: bool,
    /// The DEC private modes XTSAVE remembered, and whether each was set (at most one entry
    /// per mode [`saveable_mode`] knows).
    pub(super) saved_modes: Vec<(u16, bool)>,
    /// Whether protection was last turned on by SPA (ISO, `ESC V`) rather than DECSCA: as in
    /// xterm, ISO-protected characters survive ED, EL and ECH (DEC-protected ones do not), and
    /// both survive the selective erases.
    pub(super) iso_protection: bool,
    /// The saved cursor as it was before the last `CSI s` while DECLRMM was set: vte saves
    /// the cursor for every `CSI s`, but then it is DECSLRM, which puts this back.
    pub(super) saved_cursor_before: Option<Cursor<Cell>>,
    /// The icon label and the title stack (a reset empties the stack and keeps the label).
    pub(super) titles: Titles,
    /// The printer modes DECPFF (`CSI ? 18 h`: a form feed after each print) and DECPEX (`CSI
    /// ? 19 h`: print the whole screen, not the scrolling region): kept and reported as set,
    /// though Berth has no printer to print to (DSR says so), so they change nothing else.
    pub(super) print_form_feed: bool,
    /// DECPEX, kept as DECPFF is.
    pub(super) print_extent: bool,
    /// The conformance level a program set with DECSCL (1 VT100 … 4 VT400), `None` until one
    /// does: Berth then answers as the VT220 that DA1 names but gates nothing. Below 3 DECRQM
    /// goes unanswered, below 4 DECLRMM (and so DECSLRM) is ignored, as in xterm.
    pub(super) conformance: Option<u8>,
    /// xterm's special colours (OSC 5; OSC 4 256-260) a program set, which a reset forgets.
    pub(super) special_colors: [Option<alacritty_terminal::vte::ansi::Rgb>; SPECIAL_COLORS],
}

impl AnswerState {
    /// Whether the conformance level a program set allows the features of `level` (3: VT300,
    /// 4: VT400); every feature is allowed while no program set one.
    pub(super) fn allows(&self, level: u8) -> bool {
        self.conformance.is_none_or(|set| set >= level)
    }

    /// A DECSTBM as alacritty applies it: ignored when empty, clamped to the screen.
    pub(super) fn set_region(&mut self, top: usize, bottom: Option<usize>, lines: usize) {
        let bottom = bottom.unwrap_or(lines);
        if top >= bottom {
            return;
        }
        let top = top.max(1).min(lines + 1);
        let bottom = bottom.min(lines);
        self.region = (top > 1 || bottom < lines).then_some((top, bottom));
    }

    /// The scrolling region, 1-based and inclusive, on a screen of `lines` rows.
    pub(super) fn region_or_screen(&self, lines: usize) -> (usize, usize) {
        self.region.unwrap_or((1, lines))
    }

    /// XTSAVE: remembers the state of each of `modes` that [`saveable_mode`] knows.
    pub(super) fn save_modes(&mut self, term: &Term<TermListener>, modes: &[u16]) {
        for &mode in modes {
            if let Some((_, on)) = saveable_mode(term, self, mode) {
                self.saved_modes.retain(|&(saved, _)| saved != mode);
                self.saved_modes.push((mode, on));
            }
        }
    }

    /// The kitty keyboard stack depth of the screen shown now.
    pub(super) fn keyboard_depth(&mut self, term: &Term<TermListener>) -> &mut usize {
        &mut self.keyboard_depth[usize::from(term.mode().contains(TermMode::ALT_SCREEN))]
    }
}

/// The kitty keyboard protocol flags in force (the sum of 1 disambiguate, 2 event types, 4
/// alternate keys, 8 all keys as escapes, 16 associated text).
pub fn keyboard_flags(term: &Term<TermListener>) -> u8 {
    // TermMode keeps the five flags in this order from DISAMBIGUATE_ESC_CODES up.
    let bits = term.mode().intersection(TermMode::KITTY_KEYBOARD_PROTOCOL).bits();
    (bits / TermMode::DISAMBIGUATE_ESC_CODES.bits()) as u8
}

/// DECRQM for an ANSI mode alacritty does not know: the modes of ECMA-48 that xterm reports as
/// permanently reset (Berth implements none of them either); `None` leaves it to alacritty.
pub(super) fn ansi_mode(mode: u16) -> Option<String> {
    matches!(mode, 1 | 5 | 7 | 10 | 11 | 13..=19).then(|| format!("\x1b[{mode};4$y"))
}

/// DECRQM for a DEC private mode alacritty does not report: DECNKM (66, the numeric keypad
/// mode that `ESC =` and `ESC >` also set), DECBKM (67, Berth's own), the alternate screen
/// by 47 or 1047 (the handler's own), the printer modes DECPFF and DECPEX (18 and 19, kept
/// but without a printer) and DECHCCM (60, permanently reset as in xterm); `None` leaves it to
/// alacritty.
pub(super) fn private_mode(
    term: &Term<TermListener>,
    state: &AnswerState,
    mode: u16,
) -> Option<String> {
    let state = match mode {
        66 => 2 - u8::from(term.mode().contains(TermMode::APP_KEYPAD)),
        67 => 2 - u8::from(state.backarrow_sends_bs),
        47 | 1047 => 2 - u8::from(term.mode().contains(TermMode::ALT_SCREEN)),
        60 => 4,
        18 => 2 - u8::from(state.print_form_feed),
        19 => 2 - u8::from(state.print_extent),
        _ => return None,
    };
    Some(format!("\x1b[?{mode};{state}$y"))
}

/// A DEC private mode XTSAVE and XTRESTORE keep, as the handler's mode and whether it is set
/// now; `None` for another. The alternate screens are left out: restoring one would switch
/// screens under the program.
pub(super) fn saveable_mode(
    term: &Term<TermListener>,
    state: &AnswerState,
    mode: u16,
) -> Option<(PrivateMode, bool)> {
    use NamedPrivateMode as Named;
    let flag = |named: Named, flag: TermMode| Some((named.into(), term.mode().contains(flag)));
    match mode {
        1 => flag(Named::CursorKeys, TermMode::APP_CURSOR),
        6 => flag(Named::Origin, TermMode::ORIGIN),
        7 => flag(Named::LineWrap, TermMode::LINE_WRAP),
        12 => Some((Named::BlinkingCursor.into(), term.cursor_style().blinking)),
        25 => flag(Named::ShowCursor, TermMode::SHOW_CURSOR),
        66 => Some((PrivateMode::Unknown(66), term.mode().contains(TermMode::APP_KEYPAD))),
        67 => Some((PrivateMode::Unknown(67), state.backarrow_sends_bs)),
        // DECLRMM, which the vendored alacritty implements (restoring it reset removes the
        // margins).
        69 => Some((PrivateMode::Unknown(69), term.mode().contains(TermMode::LEFT_RIGHT_MARGIN))),
        1000 => flag(Named::ReportMouseClicks, TermMode::MOUSE_REPORT_CLICK),
        1002 => flag(Named::ReportCellMouseMotion, TermMode::MOUSE_DRAG),
        1003 => flag(Named::ReportAllMouseMotion, TermMode::MOUSE_MOTION),
        1004 => flag(Named::ReportFocusInOut, TermMode::FOCUS_IN_OUT),
        1005 => flag(Named::Utf8Mouse, TermMode::UTF8_MOUSE),
        1006 => flag(Named::SgrMouse, TermMode::SGR_MOUSE),
        1007 => flag(Named::AlternateScroll, TermMode::ALTERNATE_SCROLL),
        1042 => flag(Named::UrgencyHints, TermMode::URGENCY_HINTS),
        2004 => flag(Named::BracketedPaste, TermMode::BRACKETED_PASTE),
        _ => None,
    }
}

/// The cursor's row and column as CPR and DECXCPR report them (1-based): in origin mode
/// counted from the scrolling region's top and the left margin, as in xterm.
pub(super) fn cursor_position(term: &Term<TermListener>, state: &AnswerState) -> (usize, usize) {
    let point = term.grid().cursor.point;
    let (line, column) = (point.line.0.max(0) as usize + 1, point.column.0 + 1);
    if !term.mode().contains(TermMode::ORIGIN) {
        return (line, column);
    }
    let top = state.region_or_screen(term.screen_lines()).0;
    let left = term.horizontal_margins().map_or(1, |(left, _)| left + 1);
    ((line + 1).saturating_sub(top).max(1), (column + 1).saturating_sub(left).max(1))
}

/// XTWINOPS 14: the text area in pixels, from [`REPORTED_CELL_PIXELS`].
pub(super) fn text_area_pixels(term: &Term<TermListener>) -> String {
    let (width, height) = REPORTED_CELL_PIXELS;
    let height = term.screen_lines() as u32 * height;
    let width = term.columns() as u32 * width;
    format!("\x1b[4;{height};{width}t")
}

/// The bytes to write back to the PTY for `query`.
pub(super) fn answer(term: &Term<TermListener>, state: &AnswerState, query: &Query) -> Vec<u8> {
    match query {
        Query::Version => format!("\x1bP>|Berth {}\x1b\\", env!("CARGO_PKG_VERSION")).into_bytes(),
        // A unit id of zeros, as xterm sends.
        Query::TertiaryAttributes => b"\x1bP!|00000000\x1b\\".to_vec(),
        Query::CellSizePixels => {
            let (width, height) = REPORTED_CELL_PIXELS;
            format!("\x1b[6;{height};{width}t").into_bytes()
        }
        // The screen in pixels: a pane is its own screen (as for XTWINOPS 19), so its text area.
        Query::ScreenSizePixels => {
            let (width, height) = REPORTED_CELL_PIXELS;
            let height = term.screen_lines() as u32 * height;
            let width = term.columns() as u32 * width;
            format!("\x1b[5;{height};{width}t").into_bytes()
        }
        // Answered by the terminal, which holds the titles.
        Query::IconLabel | Query::WindowTitle => Vec::new(),
        Query::ScreenSizeChars => {
            format!("\x1b[9;{};{}t", term.screen_lines(), term.columns()).into_bytes()
        }
        Query::ExtendedCursorPosition => {
            // As CPR (`CSI 6 n`). No page: that is a VT400 field, and Berth reports itself as
            // a VT220 (DA1) and a VT100 (alacritty's DA2).
            let (line, column) = cursor_position(term, state);
            format!("\x1b[?{line};{column}R").into_bytes()
        }
        // No printer.
        Query::PrinterStatus => b"\x1b[?13n".to_vec(),
        Query::DecStatus { code, id } => dec_status(*code, *id).into_bytes(),
        Query::Setting(request) => match setting(term, state, request) {
            Some(value) => format!("\x1bP1$r{value}\x1b\\").into_bytes(),
            None => b"\x1bP0$r\x1b\\".to_vec(),
        },
        Query::Termcap(request) => termcap(request),
        Query::RectChecksum { id, rect } => {
            let sum = rect_checksum(term, state, *rect);
            format!("\x1bP{id}!~{sum:04X}\x1b\\").into_bytes()
        }
    }
}

/// A DEC status report (DECDSR `CSI ? Ps n`) about hardware Berth does not have, answered
/// with what is true of it; an unknown report gets no answer (empty).
fn dec_status(code: u16, id: u16) -> String {
    match code {
        // User-defined keys: locked (Berth has none to define).
        25 => "\x1b[?21n".to_owned(),
        // Keyboard: language unknown (the layout is the desktop's business).
        26 => "\x1b[?27;0n".to_owned(),
        // Locator (DEC and xterm): none; its type: unknown.
        53 | 55 => "\x1b[?50n".to_owned(),
        56 => "\x1b[?57;0n".to_owned(),
        // Macro space: none; the macros' checksum: of nothing.
        62 => "\x1b[0*{".to_owned(),
        63 => format!("\x1bP{id}!~0000\x1b\\"),
        // Data integrity: no errors; multiple sessions: not configured.
        75 => "\x1b[?70n".to_owned(),
        85 => "\x1b[?83n".to_owned(),
        _ => String::new(),
    }
}

/// A rectangle of the screen, 0-based and inclusive: what DECRQCRA sums and the edits of
/// `super::rect` change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rect {
    pub(super) top: usize,
    pub(super) left: usize,
    pub(super) bottom: usize,
    pub(super) right: usize,
}

/// The screen rectangle that `[top, left, bottom, right]` (as a control gives it) names, or
/// `None` when it is empty once clipped.
pub(super) fn resolve(
    term: &Term<TermListener>,
    state: &AnswerState,
    rect: [u16; 4],
) -> Option<Rect> {
    let lines = term.screen_lines();
    let columns = term.columns();
    let or = |value: u16, default: usize| if value == 0 { default } else { usize::from(value) };
    let (mut top, mut left) = (or(rect[0], 1), or(rect[1], 1));
    let (mut bottom, mut right) = (or(rect[2], lines), or(rect[3], columns));
    if term.mode().contains(TermMode::ORIGIN) {
        let offset = state.region_or_screen(lines).0 - 1;
        top += offset;
        bottom += offset;
        // Columns count from the left margin, as rows from the top one.
        if let Some((margin, _)) = term.horizontal_margins() {
            left += margin;
            right += margin;
        }
    }
    let (bottom, right) = (bottom.min(lines), right.min(columns));
    (top <= bottom && left <= right).then(|| Rect {
        top: top - 1,
        left: left - 1,
        bottom: bottom - 1,
        right: right - 1,
    })
}

/// DECRQCRA's checksum of the rectangle `[top, left, bottom, right]` (1-based, inclusive, 0 for
/// the default: the screen's edge), computed as xterm does by default: the sum of each cell's
/// character (an empty cell counts as a space) plus 0x10 for underline, 0x20 for inverse and
/// 0x80 for bold, and of its combining characters, negated, in 16 bits. In origin mode the rows
/// count from the scrolling region's top. A rectangle that is empty once clipped sums to 0.
fn rect_checksum(term: &Term<TermListener>, state: &AnswerState, rect: [u16; 4]) -> u16 {
    let Some(rect) = resolve(term, state, rect) else { return 0 };
    let mut sum: u32 = 0;
    for line in rect.top..=rect.bottom {
        let row = &term.grid()[Line(line as i32)];
        for column in rect.left..=rect.right {
            let cell = &row[Column(column)];
            if cell.flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER) {
                continue;
            }
            let c = if cell.c == '\0' { ' ' } else { cell.c };
            sum = sum.wrapping_add(c as u32);
            for (flag, weight) in
                [(Flags::UNDERLINE, 0x10), (Flags::INVERSE, 0x20), (Flags::BOLD, 0x80)]
            {
                if cell.flags.contains(flag) {
                    sum = sum.wrapping_add(weight);
                }
            }
            for c in cell.zerowidth().unwrap_or_default() {
                sum = sum.wrapping_add(*c as u32);
            }
        }
    }
    // Truncation to 16 bits is the checksum's definition.
    (sum as u16).wrapping_neg()
}

/// The DECRQSS answer for `request` (the setting's final bytes), or `None` when unknown.
fn setting(term: &Term<TermListener>, state: &AnswerState, request: &[u8]) -> Option<String> {
    match request {
        b"m" => Some(format!("{}m", sgr(term))),
        b"r" => {
            let (top, bottom) = state.region_or_screen(term.screen_lines());
            Some(format!("{top};{bottom}r"))
        }
        // DECSLRM: the left and right margins.
        b"s" => {
            let (left, right) = term.horizontal_margins().unwrap_or((0, term.columns() - 1));
            Some(format!("{};{}s", left + 1, right + 1))
        }
        b" q" => {
            let style = term.cursor_style();
            let base = match style.shape {
                CursorShape::Underline => 3,
                CursorShape::Beam => 5,
                _ => 1,
            };
            Some(format!("{} q", base + u8::from(!style.blinking)))
        }
        // DECSCA: whether the characters written now are protected from selective erases.
        b"\"q" => {
            let protected = term.grid().cursor.template.flags.contains(Flags::PROTECTED);
            Some(format!("{}\"q", u8::from(protected)))
        }
        // No status line: the main display is the active one (DECSASD), and the status
        // display is none (DECSSDT).
        b"$}" => Some("0$}".to_owned()),
        // The level DECSCL set, else VT220 (as DA1 says); 7-bit controls (8-bit C1 bytes are
        // UTF-8 to Berth).
        b"\"p" => Some(format!("{};1\"p", 60 + state.conformance.unwrap_or(2))),
        // Lines per page and per screen (DECSLPP, DECSNLS): the pane's rows.
        b"t" => Some(format!("{}t", term.screen_lines())),
        b"*|" => Some(format!("{}*|", term.screen_lines())),
        b"$~" => Some("0$~".to_owned()),
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
