//! Draws a task's review view (`ReviewScene`) on the modal layer: its background, the title
//! row with its buttons, the header (what is reviewed; a conflict in red), the status (an
//! error in red), the file list with kind marks and
//! counts, and the diff rows with line numbers, added lines on green and removed lines on red,
//! the words that changed in a deeper shade, code in its syntax classes' colours.
//!
//! It owns the view's colours and pixels. It must not decide what the rows say or where the
//! buttons are (the window's `review.rs` does) and must not talk to the GPU.

use super::card::{draw_button, RowButton};
use super::palette::{Palette, Rgb};
use super::place::{clip_of, col_x, put_text, row_y, Placement};
use super::quads::Quad;
use super::scene::{CellRectU16, CellView, ReviewLineKind, ReviewScene, SyntaxClass};
use super::text::{CellMetrics, TextSystem};

/// Columns of each line-number gutter.
pub const NUMBER_COLS: usize = 6;

/// The colours of an added and a removed row: the theme's green and red over its background.
pub fn diff_colours(palette: &Palette) -> (Rgb, Rgb) {
    (palette.bg.mix(palette.ansi[2], 0.32), palette.bg.mix(palette.ansi[1], 0.32))
}

/// The theme's colour of a syntax class: the palette's ANSI colours, so each theme keeps its
/// own contrast.
pub fn syntax_colour(palette: &Palette, class: SyntaxClass) -> Rgb {
    match class {
        SyntaxClass::Keyword => palette.ansi[5],
        SyntaxClass::Type => palette.ansi[3],
        SyntaxClass::Function => palette.ansi[4],
        SyntaxClass::String => palette.ansi[2],
        SyntaxClass::Constant => palette.ansi[6],
        SyntaxClass::Comment => palette.switcher_dim,
    }
}

/// Draws `view` on the modal layer (`quads`, `texts`).
pub(super) fn review(
    view: &ReviewScene,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    quads: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let r = view.rect;
    if r.cols < 20 || r.rows < 4 {
        return;
    }
    let (x, width) = (col_x(m, r.col), usize::from(r.cols));
    let fill = |quads: &mut Vec<Quad>, col: u16, row: u16, cols: u16, rows: u16, colour: Rgb| {
        let (w, h) = (f32::from(cols) * m.cell_w, f32::from(rows) * m.cell_h);
        quads.push(Quad::fill(col_x(m, col), row_y(m, row), w, h, colour));
    };
    fill(quads, r.col, r.row, r.cols, r.rows, palette.bg);
    let mut put_row = |cells: Vec<CellView>, row: u16, texts: &mut Vec<Placement>| {
        let key = text.row(&cells, None);
        let clip = clip_of(m, CellRectU16::new(r.col, row, r.cols, 1));
        texts.push(Placement { key, x, y: row_y(m, row), clip });
    };
    // The title row and its buttons.
    fill(quads, r.col, r.row, r.cols, 1, palette.tab_bar_bg);
    let mut cells = vec![CellView::blank(palette.switcher_fg, palette.tab_bar_bg); width];
    // The title stops short of the first button.
    let title_end =
        view.buttons.first().map_or(width, |b| usize::from(b.cols.start).saturating_sub(1));
    let title = super::place::ellipsize(&view.title, title_end.saturating_sub(1));
    put_text(&mut cells, 1, title_end, &title, palette.switcher_fg, true);
    for b in &view.buttons {
        let cells_of = usize::from(b.cols.start)..usize::from(b.cols.end);
        let button = RowButton { label: &b.label, tone: b.tone, cells: cells_of };
        draw_button(&button, &mut cells, (r.col, r.row), palette, m, quads);
    }
    put_row(cells, r.row, texts);
    // The status: an error in red, else the keys.
    for (i, line) in view.header.iter().enumerate() {
        let row = r.row + 1 + u16::try_from(i).unwrap_or(0);
        if row >= view.body_row {
            break;
        }
        let fg = if line.starts_with('⚠') { palette.ring_error } else { palette.switcher_fg };
        let mut cells = vec![CellView::blank(fg, palette.bg); width];
        put_text(&mut cells, 1, width, line, fg, i == 0);
        put_row(cells, row, texts);
    }
    let status_fg = if view.error { palette.ring_error } else { palette.switcher_dim };
    let below = r.row + 1 + u16::try_from(view.header.len()).unwrap_or(0);
    for (i, line) in view.status.iter().enumerate() {
        let row = below + u16::try_from(i).unwrap_or(0);
        if row >= view.body_row {
            break;
        }
        let mut cells = vec![CellView::blank(status_fg, palette.bg); width];
        put_text(&mut cells, 1, width, line, status_fg, view.error);
        put_row(cells, row, texts);
    }
    let body = view.body_row.max(r.row + 1);
    let body_rows = (r.row + r.rows).saturating_sub(body);
    // The file list, and the divider at its right.
    let list = view.list_cols.min(r.cols / 2);
    fill(quads, r.col, body, list, body_rows, palette.tab_bar_bg);
    let line = m.stroke.max(1.0).round();
    quads.push(Quad::fill(
        col_x(m, r.col + list) - line,
        row_y(m, body),
        line,
        f32::from(body_rows) * m.cell_h,
        palette.divider,
    ));
    let list_w = usize::from(list.saturating_sub(1));
    let diff_col = r.col + list + 1;
    let diff_w = usize::from((r.col + r.cols).saturating_sub(diff_col));
    let (added_bg, removed_bg) = diff_colours(palette);
    for i in 0..usize::from(body_rows) {
        let row = body + u16::try_from(i).unwrap_or(0);
        let mut cells = vec![CellView::blank(palette.fg, palette.bg); width];
        if let Some(f) = view.files.get(i) {
            let bg = if f.selected { palette.tab_active_bg } else { palette.tab_bar_bg };
            let fg = if f.selected { palette.tab_active_fg } else { palette.tab_fg };
            if f.selected {
                fill(quads, r.col, row, list.saturating_sub(1), 1, bg);
            }
            for cell in &mut cells[..list_w] {
                *cell = CellView::blank(fg, bg);
            }
            let mark_fg = match f.mark {
                'A' => palette.ansi[2],
                'D' => palette.ansi[1],
                'M' => palette.ansi[3],
                _ => palette.switcher_dim,
            };
            put_text(&mut cells, 1, list_w, &f.mark.to_string(), mark_fg, true);
            let counts_w = super::place::str_width(&f.counts);
            let path_end = list_w.saturating_sub(counts_w + 1);
            let path = super::place::ellipsize(&f.path, path_end.saturating_sub(3));
            put_text(&mut cells, 3, path_end, &path, fg, f.selected);
            put_text(&mut cells, list_w.saturating_sub(counts_w), list_w, &f.counts, fg, false);
        }
        if let Some(l) = view.lines.get(i) {
            let d0 = usize::from(diff_col - r.col);
            let (bg, fg, sign) = match l.kind {
                ReviewLineKind::Added => (Some(added_bg), palette.fg, "+"),
                ReviewLineKind::Removed => (Some(removed_bg), palette.fg, "-"),
                ReviewLineKind::Hunk => (Some(palette.header_bg), palette.ansi[6], ""),
                ReviewLineKind::Context => (None, palette.fg, " "),
                ReviewLineKind::Note => (None, palette.switcher_dim, ""),
            };
            if let Some(bg) = bg {
                let cols = u16::try_from(diff_w).unwrap_or(0);
                fill(quads, diff_col, row, cols, 1, bg);
                for cell in &mut cells[d0..] {
                    *cell = CellView::blank(fg, bg);
                }
            }
            if l.selected {
                // The lines a comment is on: their number gutters lit.
                let cols = u16::try_from(2 * NUMBER_COLS).unwrap_or(0);
                fill(quads, diff_col, row, cols, 1, palette.tab_active_bg);
                for cell in &mut cells[d0..(d0 + 2 * NUMBER_COLS).min(width)] {
                    *cell = CellView::blank(palette.tab_active_fg, palette.tab_active_bg);
                }
            }
            let number = |n: Option<u64>| n.map_or(String::new(), |n| format!("{n:>5}"));
            let dim = if l.selected { palette.tab_active_fg } else { palette.switcher_dim };
            let mut col = d0;
            if matches!(l.kind, ReviewLineKind::Hunk | ReviewLineKind::Note) {
                put_text(&mut cells, col, width, &l.text, fg, l.kind == ReviewLineKind::Hunk);
            } else {
                put_text(&mut cells, col, col + NUMBER_COLS, &number(l.old), dim, false);
                col += NUMBER_COLS;
                put_text(&mut cells, col, col + NUMBER_COLS, &number(l.new), dim, false);
                col += NUMBER_COLS;
                let sign_fg = match l.kind {
                    ReviewLineKind::Added => palette.ansi[2],
                    ReviewLineKind::Removed => palette.ansi[1],
                    _ => dim,
                };
                col = put_text(&mut cells, col, width, sign, sign_fg, true);
                let text_col = col + 1;
                // The cell where char `i` of the text goes.
                let at = |i: usize| {
                    let prefix: String = l.text.chars().take(i).collect();
                    text_col + super::place::str_width(&prefix)
                };
                let part = |from: usize, len: usize| -> String {
                    l.text.chars().skip(from).take(len).collect()
                };
                // The words that changed: a deeper shade of the row's colour under them.
                if let (Some((a, b)), Some(row_bg)) = (l.changed, bg) {
                    let deeper = match l.kind {
                        ReviewLineKind::Added => palette.bg.mix(palette.ansi[2], 0.6),
                        _ => palette.bg.mix(palette.ansi[1], 0.6),
                    };
                    let (from, to) = (at(a).min(width), at(b).min(width));
                    if to > from && deeper != row_bg {
                        let c = r.col + u16::try_from(from).unwrap_or(0);
                        fill(quads, c, row, u16::try_from(to - from).unwrap_or(0), 1, deeper);
                        for cell in &mut cells[from..to] {
                            *cell = CellView::blank(fg, deeper);
                        }
                    }
                }
                put_text(&mut cells, text_col, width, &l.text, fg, false);
                for span in &l.spans {
                    let colour = syntax_colour(palette, span.class);
                    put_text(
                        &mut cells,
                        at(span.start),
                        width,
                        &part(span.start, span.len),
                        colour,
                        false,
                    );
                }
            }
        }
        put_row(cells, row, texts);
    }
}
