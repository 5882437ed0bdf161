//! What search and links add to a pane's terminal: match highlights, the search bar on the
//! pane's bottom row, and the underline of the link under the pointer.
//!
//! It owns the look of these marks (which palette colours, where the bar's text and its caret
//! go). It must not lay out anything else of a pane: `render/frame.rs` calls it while drawing
//! a terminal, and it must not talk to the GPU.

use super::palette::{Palette, Rgb};
use super::place::{col_x, put_text, text_width, Placement};
use super::quads::Quad;
use super::scene::{CellSpan, CellView, SearchScene};
use super::text::{CellMetrics, TextSystem};

/// What the bar writes before the query.
const BAR_PROMPT: &str = "Find: ";

/// Row `row`'s cells with the search's matches on it highlighted (match background, dark
/// text; the current match in its own colour), or `None` when no match is on the row.
pub(super) fn highlighted_row(
    search: Option<&SearchScene>,
    row: u16,
    cells: &[CellView],
    palette: &Palette,
) -> Option<Vec<CellView>> {
    let search = search?;
    let mut out: Option<Vec<CellView>> = None;
    for (i, span) in search.matches.iter().enumerate().filter(|(_, m)| m.row == row) {
        let cells = out.get_or_insert_with(|| cells.to_vec());
        let bg =
            if search.current.contains(&i) { palette.search_current } else { palette.search_match };
        let end = usize::from(span.cols.end).min(cells.len());
        for cell in cells.iter_mut().take(end).skip(usize::from(span.cols.start)) {
            cell.bg = bg;
            cell.fg = palette.search_match_fg;
        }
    }
    out
}

/// The search bar over the terminal's row at `y` (`cols` wide, starting at `x0`):
/// `Find: <query>▏  <status>`, with a beam caret after the query.
#[allow(clippy::too_many_arguments)]
pub(super) fn search_bar(
    search: &SearchScene,
    cols: u16,
    x0: f32,
    y: f32,
    clip: [i32; 4],
    palette: &Palette,
    m: CellMetrics,
    scale: f32,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    over: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    under.push(Quad::fill(x0, y, f32::from(cols) * m.cell_w, m.cell_h, palette.search_bar_bg));
    let mut cells =
        vec![CellView::blank(palette.search_bar_fg, palette.search_bar_bg); usize::from(cols)];
    let mut col = put_text(&mut cells, 1, usize::MAX, BAR_PROMPT, palette.search_bar_fg, false);
    // Room for the query and the caret after it; a longer query shows its end.
    let room = usize::from(cols).saturating_sub(col + 1);
    let query = visible_tail(&search.query, room);
    col = put_text(&mut cells, col, usize::MAX, &query, palette.search_bar_fg, true);
    let caret = col;
    put_text(&mut cells, col + 2, usize::MAX, &search.status, palette.search_status_fg, false);
    let key = text.row(&cells, None);
    texts.push(Placement { key, x: x0, y, clip });
    if caret < usize::from(cols) {
        // The caret is drawn at the query's end, as a text field's would be.
        let thin = m.stroke.max((m.cell_w / 8.0).round()).max(scale.round());
        let x = x0 + col_x(m, u16::try_from(caret).unwrap_or(u16::MAX));
        over.push(Quad::fill(x, y + 2.0, thin, (m.cell_h - 4.0).max(1.0), palette.search_bar_fg));
    }
}

/// `s` if it fits in `room` cells, else `…` and as much of its end as fits after it.
fn visible_tail(s: &str, room: usize) -> String {
    let width: usize = s.chars().map(text_width).sum();
    if width <= room {
        return s.to_owned();
    }
    if room == 0 {
        return String::new();
    }
    let mut tail = Vec::new();
    let mut used = 1;
    for c in s.chars().rev() {
        let w = text_width(c);
        if used + w > room {
            break;
        }
        used += w;
        tail.push(c);
    }
    std::iter::once('…').chain(tail.into_iter().rev()).collect()
}

/// Underlines for the link under the pointer: one line per span, in the colour of the span's
/// first character. `row_cells(row)` gives a row's cells, `row_y(row)` its top.
pub(super) fn link_underlines<'a>(
    spans: &[CellSpan],
    rows: u16,
    x0: f32,
    row_cells: impl Fn(u16) -> &'a [CellView],
    row_y: impl Fn(u16) -> f32,
    m: CellMetrics,
    over: &mut Vec<Quad>,
) {
    for span in spans.iter().filter(|s| s.row < rows && s.cols.start < s.cols.end) {
        let cells = row_cells(span.row);
        let end = span.cols.end.min(u16::try_from(cells.len()).unwrap_or(u16::MAX));
        if span.cols.start >= end {
            continue;
        }
        let fg = cells[usize::from(span.cols.start)].fg;
        let x = x0 + col_x(m, span.cols.start);
        let w = f32::from(end - span.cols.start) * m.cell_w;
        over.push(Quad::fill(x, row_y(span.row) + m.underline_top, w, m.stroke, fg));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_query_shows_its_end() {
        let cases = [
            ("short", 10, "short"),
            ("exactly10!", 10, "exactly10!"),
            ("a much longer query", 10, "…ger query"),
            ("界界界界", 5, "…界界"),
            ("abc", 0, ""),
        ];
        for (query, room, expected) in cases {
            assert_eq!(visible_tail(query, room), expected, "{query:?} in {room}");
        }
    }
}
