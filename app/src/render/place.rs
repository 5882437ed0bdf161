//! Where things go on the window's cell grid, shared by the frame's parts (`frame.rs`,
//! `chrome.rs`, `marks.rs`): pixel positions and clip rectangles of cells, a placed text
//! row, and writing text into a row of cells (character widths, the ellipsis).
//!
//! It owns only arithmetic on cells and text; it must not shape, draw or know what a
//! pane, the tab bar or the search bar is.

use super::palette::Rgb;
use super::scene::{CellRectU16, CellView};
use super::text::CellMetrics;

/// A shaped row placed on the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Key of the row in the [`TextSystem`](super::text::TextSystem) cache.
    pub key: u64,
    /// Left edge of the row's first cell, in pixels.
    pub x: f32,
    /// Top of the row, in pixels.
    pub y: f32,
    /// Clip rectangle: left, top, right, bottom in pixels.
    pub clip: [i32; 4],
}

/// Pixel x of a window column.
pub fn col_x(m: CellMetrics, col: u16) -> f32 {
    f32::from(col) * m.cell_w
}

/// Pixel y of a window row.
pub fn row_y(m: CellMetrics, row: u16) -> f32 {
    f32::from(row) * m.cell_h
}

/// Pixel clip rectangle of a cell rectangle.
pub fn clip_of(m: CellMetrics, rect: CellRectU16) -> [i32; 4] {
    // Pixel coordinates of a u16 grid fit in i32 for any sane cell size.
    [
        col_x(m, rect.col) as i32,
        row_y(m, rect.row) as i32,
        col_x(m, rect.col.saturating_add(rect.cols)) as i32,
        row_y(m, rect.row.saturating_add(rect.rows)) as i32,
    ]
}

/// The width in cells of a character in a header: 0 for combining marks and other zero-width
/// characters, 2 for East Asian wide characters and emoji, 1 otherwise. An approximation of
/// Unicode's East Asian Width that is good enough for titles; terminal cells use the engine's
/// widths.
pub fn text_width(c: char) -> usize {
    match u32::from(c) {
        0x0300..=0x036F | 0x200B..=0x200F | 0x20D0..=0x20FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F => {
            0
        }
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

/// Writes `text` into `cells` from column `col` in `fg` (wide characters take two cells,
/// zero-width ones join the previous cell), stopping at `end`; returns the column after it.
pub fn put_text(
    cells: &mut [CellView],
    mut col: usize,
    end: usize,
    text: &str,
    fg: Rgb,
    bold: bool,
) -> usize {
    let end = end.min(cells.len());
    for c in text.chars().filter(|c| !c.is_control()) {
        let width = text_width(c);
        if width == 0 {
            if let Some(prev) = col.checked_sub(1).and_then(|p| cells.get_mut(p)) {
                let mut extra = prev.extra.take().map(String::from).unwrap_or_default();
                extra.push(c);
                prev.extra = Some(extra.into_boxed_str());
            }
            continue;
        }
        if col + width > end {
            break;
        }
        cells[col].ch = c;
        cells[col].fg = fg;
        cells[col].flags.bold = bold;
        if width == 2 {
            cells[col].flags.wide = true;
            cells[col + 1].flags.spacer = true;
        }
        col += width;
    }
    col
}

/// The width in cells of `text` (control characters take none).
pub fn str_width(text: &str) -> usize {
    text.chars().filter(|c| !c.is_control()).map(text_width).sum()
}

/// `text` (control characters dropped) as it fits in `room` cells: whole when it fits, else
/// as much as leaves one cell for a `…` after it.
pub fn ellipsize(text: &str, room: usize) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if str_width(&clean) <= room {
        return clean;
    }
    if room == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in clean.chars() {
        let width = text_width(c);
        if used + width + 1 > room {
            break;
        }
        used += width;
        out.push(c);
    }
    out.push('…');
    out
}
