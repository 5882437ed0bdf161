//! A pane's screen as a frame: what a window needs to draw it and to encode input for it, in
//! plain data that crosses a socket.
//!
//! Owns [`PaneFrame`] (rows as runs of text, each run with its [`FrameStyle`]; the cursor; the
//! terminal's modes; title; `content_seq` of the top row), [`PaneFrame::capture`] from a
//! [`PaneTerminal`], and the delta between two frames ([`FrameUpdate`]: changed rows only,
//! their styles interned in a table, found by the row hashes the client says it holds).
//! The embedded window captures frames in process and an attached window receives them over
//! the socket (`screen.frames`); both turn the same frame into the same scene. Colours stay
//! unresolved (palette indices or RGB): the window's palette resolves them. It must not draw.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, CursorShape, NamedColor};
use berth_engine::terminal::PaneTerminal;
use serde::{Deserialize, Serialize};

/// A colour: a palette index (0–255 the 256 colours, 256+ alacritty's named colours:
/// foreground, background, cursor, the dim and bright variants) or, with [`RGB_BIT`] set, an
/// RGB value in the low 24 bits.
pub type FrameColor = u32;

/// The bit that marks a [`FrameColor`] as RGB.
pub const RGB_BIT: u32 = 1 << 24;

/// The default foreground's index.
pub const FG: FrameColor = NamedColor::Foreground as u32;
/// The default background's index.
pub const BG: FrameColor = NamedColor::Background as u32;

/// Style flags of a run ([`FrameStyle::flags`]).
pub mod flags {
    /// Bold.
    pub const BOLD: u16 = 1;
    /// Italic.
    pub const ITALIC: u16 = 1 << 1;
    /// Dim.
    pub const DIM: u16 = 1 << 2;
    /// Dim already applied: the foreground is a named colour's dim variant (not scaled).
    pub const DIM_NAMED: u16 = 1 << 3;
    /// Inverse (SGR 7).
    pub const INVERSE: u16 = 1 << 4;
    /// Hidden (SGR 8).
    pub const HIDDEN: u16 = 1 << 5;
    /// Strikethrough.
    pub const STRIKE: u16 = 1 << 6;
    /// A wide character (it takes this cell and the next).
    pub const WIDE: u16 = 1 << 7;
    /// The spacer after a wide character (or before one wrapped to the next line).
    pub const SPACER: u16 = 1 << 8;
    /// Underline: single.
    pub const UNDERLINE: u16 = 1 << 9;
    /// Underline: double.
    pub const DOUBLE_UNDERLINE: u16 = 1 << 10;
    /// Underline: curly.
    pub const UNDERCURL: u16 = 1 << 11;
    /// Underline: dotted.
    pub const DOTTED_UNDERLINE: u16 = 1 << 12;
    /// Underline: dashed.
    pub const DASHED_UNDERLINE: u16 = 1 << 13;
}

/// The look of a run of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FrameStyle {
    /// Foreground.
    pub fg: FrameColor,
    /// Background.
    pub bg: FrameColor,
    /// Underline colour (SGR 58), if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ul: Option<FrameColor>,
    /// [`flags`].
    #[serde(default)]
    pub flags: u16,
}

impl Default for FrameStyle {
    fn default() -> Self {
        Self { fg: FG, bg: BG, ul: None, flags: 0 }
    }
}

/// Cells of one style: one `char` per cell (a wide character's spacer is a cell of its own).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrameRun {
    /// The style.
    pub style: FrameStyle,
    /// One character per cell.
    pub text: String,
}

/// One row: its runs from column 0 (cells past the last run are blank in the default style),
/// the zero-width characters drawn on top of some of its cells, the OSC 8 hyperlinks on it,
/// and whether it wraps onto the next row.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FrameRow {
    /// The runs.
    pub runs: Vec<FrameRun>,
    /// `(column, characters)`: combining marks and variation selectors.
    pub extras: Vec<(u16, String)>,
    /// OSC 8 hyperlinks: `(first column, columns, URI)`, one entry per run of cells carrying
    /// the same hyperlink.
    pub links: Vec<(u16, u16, String)>,
    /// The row's text goes on in the next row (a long line the terminal wrapped).
    pub wraps: bool,
}

impl FrameRow {
    /// A stable 64-bit hash (FNV-1a) of the row, the same in every build: the client sends
    /// these to say which rows it holds.
    pub fn hash64(&self) -> u64 {
        let mut h = Fnv::new();
        for run in &self.runs {
            h.u32(run.style.fg);
            h.u32(run.style.bg);
            h.u32(run.style.ul.map_or(u32::MAX, |c| c));
            h.u32(u32::from(run.style.flags));
            h.bytes(run.text.as_bytes());
            h.u32(0xffff_fffe);
        }
        for (col, text) in &self.extras {
            h.u32(u32::from(*col));
            h.bytes(text.as_bytes());
        }
        for (col, len, uri) in &self.links {
            h.u32(0xffff_fffd);
            h.u32(u32::from(*col));
            h.u32(u32::from(*len));
            h.bytes(uri.as_bytes());
        }
        if self.wraps {
            h.u32(0xffff_fffc);
        }
        h.0
    }
}

struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
}

/// The cursor's shape as the program chose it (DECSCUSR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameCursorShape {
    /// A filled cell.
    Block,
    /// A bar.
    Beam,
    /// A line under the cell.
    Underline,
    /// An outlined cell.
    HollowBlock,
}

/// The cursor on the visible rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FrameCursor {
    /// Column.
    pub col: u16,
    /// Visible row (after the view's scroll).
    pub row: u16,
    /// Shape.
    pub shape: FrameCursorShape,
    /// Whether the program asked for a blinking cursor.
    pub blinking: bool,
}

/// Everything about a frame but its rows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct FrameMeta {
    /// The cursor, absent when hidden (DECTCEM) or scrolled out of view.
    pub cursor: Option<FrameCursor>,
    /// The terminal's modes (alacritty's `TermMode` bits: app cursor, mouse reporting and
    /// encoding, bracketed paste, alternate screen, focus reporting, the keyboard protocol's
    /// flags).
    pub modes: u32,
    /// The title the program set (OSC 0/2).
    pub title: Option<String>,
    /// The `content_seq` of the screen's top row (the live screen, not the scrolled view).
    pub content_seq: u64,
    /// How many lines the view is scrolled back.
    pub display_offset: u32,
    /// The program's colour overrides (OSC 4/10/11): `(index, 0xRRGGBB)`.
    pub colors: Vec<(u16, u32)>,
    /// The kitty keyboard protocol's flags the program set (0: legacy keys).
    #[serde(default)]
    pub keyboard_flags: u8,
    /// Whether the program set DECBKM (Backspace sends BS).
    #[serde(default)]
    pub backarrow_bs: bool,
}

/// A pane's visible screen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PaneFrame {
    /// Columns.
    pub cols: u16,
    /// Rows (`rows.len()`).
    pub rows: Vec<FrameRow>,
    /// Cursor, modes, title, `content_seq`.
    pub meta: FrameMeta,
}

impl PaneFrame {
    /// The frame of a terminal as it is now (the visible rows at its current scroll).
    pub fn capture(pane: &PaneTerminal) -> Self {
        let term = pane.term();
        let cols = term.columns();
        let rows = term.screen_lines();
        let content = term.renderable_content();
        let offset = content.display_offset;
        let colors = content.colors;
        // Runs are built as the cells come (no per-cell buffer: this runs under the pane's
        // lock, as often as a window pulls), trailing blanks trimmed after.
        let mut rows_out = vec![FrameRow::default(); rows];
        let mut filled = vec![0usize; rows];
        for indexed in content.display_iter {
            // The display iterator yields grid lines from `-offset` to the last screen line.
            let Ok(row) = usize::try_from(indexed.point.line.0 + offset as i32) else { continue };
            if row < rows && filled[row] < cols {
                let col = filled[row];
                filled[row] += 1;
                let out = &mut rows_out[row];
                if let Some(link) = indexed.cell.hyperlink() {
                    let col = col as u16;
                    match out.links.last_mut() {
                        Some((from, len, uri)) if *from + *len == col && uri == link.uri() => {
                            *len += 1;
                        }
                        _ => out.links.push((col, 1, link.uri().to_owned())),
                    }
                }
                if indexed.cell.flags.contains(Flags::WRAPLINE) {
                    out.wraps = true;
                }
                push_cell(out, col, cell_of(indexed.cell));
            }
        }
        for row in &mut rows_out {
            trim_trailing_blanks(row);
        }
        let cursor = {
            let point = content.cursor.point;
            let row = usize::try_from(point.line.0 + offset as i32).ok().filter(|&r| r < rows);
            let shape = match content.cursor.shape {
                CursorShape::Hidden => None,
                CursorShape::Block => Some(FrameCursorShape::Block),
                CursorShape::Beam => Some(FrameCursorShape::Beam),
                CursorShape::Underline => Some(FrameCursorShape::Underline),
                CursorShape::HollowBlock => Some(FrameCursorShape::HollowBlock),
            };
            match (row, shape) {
                (Some(row), Some(shape)) if point.column.0 < cols => Some(FrameCursor {
                    col: point.column.0 as u16,
                    row: row as u16,
                    shape,
                    blinking: term.cursor_style().blinking,
                }),
                _ => None,
            }
        };
        let mut overrides = Vec::new();
        for index in 0..alacritty_terminal::term::color::COUNT {
            if let Some(rgb) = colors[index] {
                let value = (u32::from(rgb.r) << 16) | (u32::from(rgb.g) << 8) | u32::from(rgb.b);
                overrides.push((index as u16, value));
            }
        }
        Self {
            cols: u16::try_from(cols).unwrap_or(u16::MAX),
            rows: rows_out,
            meta: FrameMeta {
                cursor,
                modes: term.mode().bits(),
                title: pane.title().map(str::to_owned),
                content_seq: pane.screen_base_seq(),
                display_offset: u32::try_from(offset).unwrap_or(u32::MAX),
                colors: overrides,
                keyboard_flags: pane.keyboard_flags(),
                backarrow_bs: pane.backarrow_sends_bs(),
            },
        }
    }

    /// The update that brings a client holding rows with `have` hashes (one per row, for a
    /// frame of `have_cols` columns) to this frame: only the rows that differ, or every row
    /// when the size differs or the client holds nothing.
    pub fn update_for(&self, pane_id: &str, have_cols: u16, have: &[u64]) -> FrameUpdate {
        let full = have_cols != self.cols || have.len() != self.rows.len();
        let mut styles: Vec<FrameStyle> = Vec::new();
        let mut changed = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            if !full && have.get(i) == Some(&row.hash64()) {
                continue;
            }
            let runs = row
                .runs
                .iter()
                .map(|run| {
                    let index = match styles.iter().position(|s| *s == run.style) {
                        Some(index) => index,
                        None => {
                            styles.push(run.style);
                            styles.len() - 1
                        }
                    };
                    (index as u16, run.text.clone())
                })
                .collect();
            changed.push(WireRow {
                i: i as u16,
                runs,
                x: row.extras.clone(),
                l: row.links.clone(),
                w: row.wraps,
            });
        }
        FrameUpdate {
            pane_id: pane_id.to_owned(),
            gone: false,
            cols: self.cols,
            rows: self.rows.len() as u16,
            full,
            styles,
            changed,
            meta: Some(self.meta.clone()),
            matches: None,
        }
    }

    /// Applies an update from the server; `false` (nothing changed) when it is malformed
    /// (a style or row out of range), which the caller answers by asking for a full frame.
    pub fn apply(&mut self, update: &FrameUpdate) -> bool {
        let rows = usize::from(update.rows);
        if update.full || update.cols != self.cols || rows != self.rows.len() {
            self.cols = update.cols;
            self.rows = vec![FrameRow::default(); rows];
        }
        for row in &update.changed {
            let Some(slot) = self.rows.get_mut(usize::from(row.i)) else { return false };
            let mut runs = Vec::with_capacity(row.runs.len());
            for (style, text) in &row.runs {
                let Some(style) = update.styles.get(usize::from(*style)) else { return false };
                runs.push(FrameRun { style: *style, text: text.clone() });
            }
            *slot = FrameRow { runs, extras: row.x.clone(), links: row.l.clone(), wraps: row.w };
        }
        if let Some(meta) = &update.meta {
            self.meta = meta.clone();
        }
        true
    }

    /// The row hashes a client sends with its next request.
    pub fn hashes(&self) -> Vec<u64> {
        self.rows.iter().map(FrameRow::hash64).collect()
    }
}

/// One cell: its style, character (control characters and spacers draw as a blank) and
/// zero-width characters.
fn cell_of(cell: &Cell) -> (FrameStyle, char, Option<String>) {
    let f = cell.flags;
    let mut flags = 0;
    let pairs = [
        (Flags::BOLD, flags::BOLD),
        (Flags::ITALIC, flags::ITALIC),
        (Flags::DIM, flags::DIM),
        (Flags::INVERSE, flags::INVERSE),
        (Flags::HIDDEN, flags::HIDDEN),
        (Flags::STRIKEOUT, flags::STRIKE),
        (Flags::WIDE_CHAR, flags::WIDE),
        (Flags::DOUBLE_UNDERLINE, flags::DOUBLE_UNDERLINE),
        (Flags::UNDERCURL, flags::UNDERCURL),
        (Flags::DOTTED_UNDERLINE, flags::DOTTED_UNDERLINE),
        (Flags::DASHED_UNDERLINE, flags::DASHED_UNDERLINE),
        (Flags::UNDERLINE, flags::UNDERLINE),
    ];
    for (flag, bit) in pairs {
        if f.contains(flag) {
            flags |= bit;
        }
    }
    let spacer = f.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER);
    if spacer {
        flags |= flags::SPACER;
    }
    let fg = match (cell.fg, f.contains(Flags::DIM)) {
        // Named colours have dim variants of their own (which a program may have set).
        (Color::Named(named), true) => {
            flags |= flags::DIM_NAMED;
            named.to_dim() as u32
        }
        (color, _) => color_of(color),
    };
    let style =
        FrameStyle { fg, bg: color_of(cell.bg), ul: cell.underline_color().map(color_of), flags };
    let ch = if spacer || cell.c.is_control() { ' ' } else { cell.c };
    let extra = cell
        .zerowidth()
        .filter(|chars| !chars.is_empty() && !spacer)
        .map(|chars| chars.iter().collect::<String>());
    (style, ch, extra)
}

fn color_of(color: Color) -> FrameColor {
    match color {
        Color::Spec(rgb) => {
            RGB_BIT | (u32::from(rgb.r) << 16) | (u32::from(rgb.g) << 8) | u32::from(rgb.b)
        }
        Color::Indexed(index) => u32::from(index),
        Color::Named(named) => named as u32,
    }
}

/// Appends the cell at `col` (the next one) to a row's runs.
fn push_cell(
    row: &mut FrameRow,
    col: usize,
    (style, ch, extra): (FrameStyle, char, Option<String>),
) {
    if let Some(extra) = extra {
        row.extras.push((col as u16, extra));
    }
    match row.runs.last_mut() {
        Some(run) if run.style == style => run.text.push(ch),
        _ => row.runs.push(FrameRun { style, text: ch.to_string() }),
    }
}

/// Leaves out a row's trailing blanks in the default style (a cell with zero-width
/// characters is not blank).
fn trim_trailing_blanks(row: &mut FrameRow) {
    let default = FrameStyle::default();
    let keep = row.extras.last().map_or(0, |(col, _)| usize::from(*col) + 1);
    let mut len: usize = row.runs.iter().map(|run| run.text.chars().count()).sum();
    while len > keep {
        let Some(run) = row.runs.last_mut() else { break };
        if run.style != default || !run.text.ends_with(' ') {
            break;
        }
        run.text.pop();
        len -= 1;
        if run.text.is_empty() {
            row.runs.pop();
        }
    }
}

/// What a client holds of one pane, sent with `screen.frames`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneHave {
    /// The pane.
    pub pane_id: String,
    /// The columns of the frame it holds (0: none).
    #[serde(default)]
    pub cols: u16,
    /// The hash of each row it holds ([`FrameRow::hash64`]); empty: send everything.
    #[serde(default)]
    pub rows: Vec<u64>,
    /// Lines its view is scrolled back into the scrollback (0: the live screen); each
    /// window scrolls on its own, the pane's terminal does not move.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u32,
    /// The query of the window's open search in this pane: its matches on the frame's rows
    /// come with the frame ([`FrameUpdate::matches`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A changed row on the wire: its index, its runs as `(style index, text)`, its extras.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRow {
    /// The row's index.
    pub i: u16,
    /// `(index into the update's styles, one character per cell)`.
    pub runs: Vec<(u16, String)>,
    /// `(column, zero-width characters)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x: Vec<(u16, String)>,
    /// `(first column, columns, URI)`: OSC 8 hyperlinks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub l: Vec<(u16, u16, String)>,
    /// The row wraps onto the next one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub w: bool,
}

/// One pane's answer to `screen.frames`: the rows that changed since what the client holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameUpdate {
    /// The pane.
    pub pane_id: String,
    /// The pane has no live terminal (closed, or a tombstone).
    #[serde(default)]
    pub gone: bool,
    /// Columns of the frame.
    #[serde(default)]
    pub cols: u16,
    /// Rows of the frame.
    #[serde(default)]
    pub rows: u16,
    /// Every row is in `changed` (the client drops what it held).
    #[serde(default)]
    pub full: bool,
    /// The style table `changed` refers to.
    #[serde(default)]
    pub styles: Vec<FrameStyle>,
    /// The rows that differ from what the client holds.
    #[serde(default)]
    pub changed: Vec<WireRow>,
    /// Cursor, modes, title, `content_seq`.
    #[serde(default)]
    pub meta: Option<FrameMeta>,
    /// The matches of the request's `search` on the frame's rows (and the parts of matches
    /// that reach onto them), oldest first, by `content_seq` line; absent without a search
    /// or for a query `pane.search` would refuse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<crate::pane_search::WireMatch>>,
}

impl FrameUpdate {
    /// The answer for a pane without a live terminal.
    pub fn gone(pane_id: &str) -> Self {
        Self {
            pane_id: pane_id.to_owned(),
            gone: true,
            cols: 0,
            rows: 0,
            full: true,
            styles: Vec::new(),
            changed: Vec::new(),
            meta: None,
            matches: None,
        }
    }
}

/// The answer to `screen.frames`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FramesReply {
    /// One update per pane asked for, in the order asked.
    pub frames: Vec<FrameUpdate>,
}

/// The most panes one `screen.frames` may ask for.
pub const MAX_PANES_PER_REQUEST: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::terminal::TermSize;

    fn term(bytes: &[u8]) -> PaneTerminal {
        let mut t = PaneTerminal::new(TermSize { cols: 20, rows: 4 }, 100);
        t.feed(bytes);
        t
    }

    #[test]
    fn runs_group_styles_and_trailing_blanks_are_left_out() {
        let f = PaneFrame::capture(&term(b"ab\x1b[31mcd\x1b[0m  \r\n\x1b[44m  \x1b[0m"));
        assert_eq!(f.rows.len(), 4);
        let texts: Vec<_> = f.rows[0].runs.iter().map(|r| (r.text.as_str(), r.style.fg)).collect();
        assert_eq!(texts, [("ab", FG), ("cd", 1)]);
        assert_eq!(f.rows[1].runs.len(), 1, "a coloured blank is kept");
        assert!(f.rows[2].runs.is_empty());
        assert_eq!(f.meta.cursor.map(|c| (c.col, c.row)), Some((2, 1)));
    }

    #[test]
    fn updates_carry_changed_rows_only_and_rebuild_the_frame() {
        let mut t = term(b"one\r\ntwo\r\nthree");
        let first = PaneFrame::capture(&t);
        let mut client = PaneFrame::default();
        let full = first.update_for("p", 0, &[]);
        assert!(full.full);
        let wire: FrameUpdate =
            serde_json::from_str(&serde_json::to_string(&full).unwrap()).unwrap();
        assert!(client.apply(&wire));
        assert_eq!(client, first);

        t.feed(b"\x1b[2;1H\x1b[1mTWO\x1b[0m");
        let second = PaneFrame::capture(&t);
        let delta = second.update_for("p", client.cols, &client.hashes());
        assert!(!delta.full);
        assert_eq!(delta.changed.iter().map(|r| r.i).collect::<Vec<_>>(), [1]);
        assert!(client.apply(&delta));
        assert_eq!(client, second);

        let none = second.update_for("p", client.cols, &client.hashes());
        assert!(none.changed.is_empty());
    }

    #[test]
    fn hyperlinks_and_wraps_travel_with_their_rows() {
        let mut t = PaneTerminal::new(TermSize { cols: 10, rows: 4 }, 100);
        t.feed(b"a \x1b]8;;https://x.org/\x1b\\link\x1b]8;;\x1b\\ b\r\n0123456789abc");
        let frame = PaneFrame::capture(&t);
        assert_eq!(frame.rows[0].links, vec![(2, 4, "https://x.org/".to_owned())]);
        assert!(!frame.rows[0].wraps);
        assert!(frame.rows[1].wraps, "a line longer than the row wraps");
        assert!(!frame.rows[2].wraps);
        let mut client = PaneFrame::default();
        let wire: FrameUpdate =
            serde_json::from_str(&serde_json::to_string(&frame.update_for("p", 0, &[])).unwrap())
                .unwrap();
        assert!(client.apply(&wire));
        assert_eq!(client, frame);
        // A link alone changes the row's hash, so a client holding the plain row gets it.
        let plain = FrameRow { links: Vec::new(), ..frame.rows[0].clone() };
        assert_ne!(plain.hash64(), frame.rows[0].hash64());
    }

    #[test]
    fn a_frame_asked_with_a_search_carries_its_matches_on_the_rows() {
        let t = term(b"one two\r\nxx two");
        let matches = crate::pane_search::view_matches(&t, "two").expect("a valid query");
        let top = t.screen_base_seq();
        let at: Vec<_> =
            matches.iter().map(|m| (m.start.seq - top, m.start.col, m.end.col)).collect();
        assert_eq!(at, [(0, 4, 6), (1, 3, 5)]);
        assert_eq!(crate::pane_search::view_matches(&t, ""), None);
        assert_eq!(crate::pane_search::view_matches(&t, &"x".repeat(5000)), None);
    }

    #[test]
    fn a_malformed_update_is_refused() {
        let mut client = PaneFrame::default();
        let bad = FrameUpdate {
            changed: vec![WireRow {
                i: 0,
                runs: vec![(3, "x".into())],
                x: Vec::new(),
                l: Vec::new(),
                w: false,
            }],
            rows: 1,
            cols: 1,
            ..FrameUpdate::gone("p")
        };
        assert!(!client.apply(&bad));
    }
}
