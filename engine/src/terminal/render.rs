//! Text of one grid row, plain or with ANSI SGR styles, for `pane.read` and golden replays.
//!
//! It owns the mapping from alacritty cells to text and to SGR parameters. It must not look
//! past the row it is given or change the grid.

use std::fmt::Write as _;

use alacritty_terminal::grid::Row;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, NamedColor};

/// Cells that only hold space for a wide character (after it, or before it at a line's end).
const SPACERS: Flags = Flags::WIDE_CHAR_SPACER.union(Flags::LEADING_WIDE_CHAR_SPACER);

/// Cell flags that change how text looks and are reproduced in ANSI output.
const STYLE_FLAGS: Flags = Flags::BOLD
    .union(Flags::DIM)
    .union(Flags::ITALIC)
    .union(Flags::ALL_UNDERLINES)
    .union(Flags::INVERSE)
    .union(Flags::HIDDEN)
    .union(Flags::STRIKEOUT);

/// Flags that make even a blank cell visible (a space with an underline still shows).
const VISIBLE_ON_BLANK: Flags = Flags::INVERSE.union(Flags::ALL_UNDERLINES).union(Flags::STRIKEOUT);

/// A colour as SGR can name it; `None` where a colour is used stands for the default colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SgrColor {
    /// One of the 16 ANSI colours (0–7 normal, 8–15 bright).
    Ansi(u8),
    /// An entry of the 256-colour palette.
    Indexed(u8),
    /// A truecolor value.
    Rgb(u8, u8, u8),
}

impl SgrColor {
    /// The SGR form of a cell colour, or `None` for the terminal's default colours.
    fn of(color: Color) -> Option<Self> {
        match color {
            Color::Named(named) => {
                let index = named as usize;
                let dim_black = NamedColor::DimBlack as usize;
                if index < 16 {
                    // The cast cannot truncate: the index is below 16.
                    Some(Self::Ansi(index as u8))
                } else if (dim_black..dim_black + 8).contains(&index) {
                    // Dim variants are the normal colours drawn dimmer; the DIM flag says so.
                    Some(Self::Ansi((index - dim_black) as u8))
                } else {
                    None
                }
            }
            Color::Indexed(index) => Some(Self::Indexed(index)),
            Color::Spec(rgb) => Some(Self::Rgb(rgb.r, rgb.g, rgb.b)),
        }
    }

    /// Appends the SGR parameters for this colour in a layer: `base` is 30 (foreground),
    /// 40 (background) or 50 (underline, which has no 16-colour form of its own).
    fn write(self, out: &mut String, base: u8) {
        // Writing to a `String` cannot fail, so the results of `write!` are ignored.
        match self {
            Self::Ansi(index) if base != 50 && index < 8 => {
                let _ = write!(out, "{}", base + index);
            }
            Self::Ansi(index) if base != 50 => {
                let _ = write!(out, "{}", base + 60 + index - 8);
            }
            Self::Ansi(index) | Self::Indexed(index) => {
                let _ = write!(out, "{};5;{index}", base + 8);
            }
            Self::Rgb(r, g, b) => {
                let _ = write!(out, "{};2;{r};{g};{b}", base + 8);
            }
        }
    }
}

/// Everything about a cell's look that ANSI output reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Style {
    fg: Option<SgrColor>,
    bg: Option<SgrColor>,
    underline_color: Option<SgrColor>,
    flags: Flags,
}

impl Default for Style {
    fn default() -> Self {
        Self { fg: None, bg: None, underline_color: None, flags: Flags::empty() }
    }
}

impl Style {
    fn of(cell: &Cell) -> Self {
        let flags = cell.flags & STYLE_FLAGS;
        let underline_color = if flags.intersects(Flags::ALL_UNDERLINES) {
            cell.underline_color().and_then(SgrColor::of)
        } else {
            None
        };
        Self { fg: SgrColor::of(cell.fg), bg: SgrColor::of(cell.bg), underline_color, flags }
    }

    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Appends the SGR sequence that switches from `previous` to this style.
    ///
    /// Switching always starts from a reset, so the output never depends on what a reader
    /// assumes about attributes turning off.
    fn write_switch_from(&self, previous: &Style, out: &mut String) {
        if self.is_default() {
            out.push_str("\x1b[0m");
            return;
        }
        out.push_str("\x1b[");
        if !previous.is_default() {
            out.push_str("0;");
        }
        let mut first = true;
        for (flag, param) in [
            (Flags::BOLD, "1"),
            (Flags::DIM, "2"),
            (Flags::ITALIC, "3"),
            (Flags::UNDERLINE, "4"),
            (Flags::DOUBLE_UNDERLINE, "4:2"),
            (Flags::UNDERCURL, "4:3"),
            (Flags::DOTTED_UNDERLINE, "4:4"),
            (Flags::DASHED_UNDERLINE, "4:5"),
            (Flags::INVERSE, "7"),
            (Flags::HIDDEN, "8"),
            (Flags::STRIKEOUT, "9"),
        ] {
            if self.flags.contains(flag) {
                if !first {
                    out.push(';');
                }
                out.push_str(param);
                first = false;
            }
        }
        for (color, base) in [(self.fg, 30), (self.bg, 40), (self.underline_color, 50)] {
            if let Some(color) = color {
                if !out.ends_with('[') && !out.ends_with(';') {
                    out.push(';');
                }
                color.write(out, base);
            }
        }
        out.push('m');
    }
}

/// Whether a cell shows nothing: a space (or tab) in the default background, with no
/// attribute that draws on blank cells and no combining characters.
fn is_blank(cell: &Cell) -> bool {
    if is_plain_space(cell) {
        return true;
    }
    (cell.c == ' ' || cell.c == '\t')
        && SgrColor::of(cell.bg).is_none()
        && !cell.flags.intersects(VISIBLE_ON_BLANK)
        && cell.zerowidth().is_none_or(<[char]>::is_empty)
}

/// The cheap check for the commonest blank cell: a space as a fresh row holds it.
#[inline]
fn is_plain_space(cell: &Cell) -> bool {
    cell.c == ' '
        && cell.bg == Color::Named(NamedColor::Background)
        && cell.flags.is_empty()
        && cell.extra.is_none()
}

/// Appends a cell's character and its combining characters.
fn push_cell_text(cell: &Cell, out: &mut String) {
    // A tab leaves '\t' in its first cell and spaces after it; a space keeps the columns.
    out.push(if cell.c == '\t' { ' ' } else { cell.c });
    if let Some(zerowidth) = cell.zerowidth() {
        out.extend(zerowidth.iter());
    }
}

/// The text of one row.
///
/// Wide-character spacer cells are skipped and combining characters follow their base
/// character. Plain text drops trailing spaces. ANSI text drops trailing blank cells (see
/// [`is_blank`]), emits an SGR sequence only where the style changes, and ends with `ESC[0m`
/// when the last character is styled.
pub(super) fn row_text(row: &Row<Cell>, ansi: bool) -> String {
    // A packed history row is decoded for this call only, not kept decoded.
    let cells = row.cells_uncached();
    let mut out = String::with_capacity(cells.len());
    if !ansi {
        for cell in cells.iter().filter(|cell| !cell.flags.intersects(SPACERS)) {
            push_cell_text(cell, &mut out);
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        return out;
    }

    let end = cells
        .iter()
        .rposition(|cell| !cell.flags.intersects(SPACERS) && !is_blank(cell))
        .map_or(0, |last| last + 1);
    let mut current = Style::default();
    // The raw colours and flags `current` was made from: most cells repeat their neighbour's,
    // and comparing those is cheaper than building a `Style`.
    let mut current_raw: Option<(Color, Color, Flags)> = None;
    for cell in cells[..end].iter().filter(|cell| !cell.flags.intersects(SPACERS)) {
        let flags = cell.flags & STYLE_FLAGS;
        let raw = (cell.fg, cell.bg, flags);
        // With an underline the colour lives in the cell's extra, so compare whole styles.
        if current_raw != Some(raw) || flags.intersects(Flags::ALL_UNDERLINES) {
            let style = Style::of(cell);
            if style != current {
                style.write_switch_from(&current, &mut out);
                current = style;
            }
            current_raw = Some(raw);
        }
        push_cell_text(cell, &mut out);
    }
    if !current.is_default() {
        out.push_str("\x1b[0m");
    }
    out
}
