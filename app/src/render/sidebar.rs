//! Draws the sidebar of workspaces and tasks (`SidebarScene`): its background, the edge that
//! is dragged to resize it, one row of text per line, attention marks and decision buttons.
//!
//! It owns the sidebar's colours and pixels. It must not decide what the lines say or where
//! the buttons are (the window's `sidebar.rs` does) and must not talk to the GPU.

use super::card::{draw_button, RowButton};
use super::palette::Palette;
use super::place::{clip_of, col_x, put_text, row_y, Placement};
use super::quads::Quad;
use super::scene::{CellRectU16, CellView, Ring, SidebarScene, SidebarStyle};
use super::text::{CellMetrics, TextSystem};

/// Draws `bar` (on the base layer: the panes never overlap it).
pub(super) fn sidebar(
    bar: &SidebarScene,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let r = bar.rect;
    if r.cols < 2 || r.rows == 0 {
        return;
    }
    let (x, w) = (col_x(m, r.col), f32::from(r.cols) * m.cell_w);
    under.push(Quad::fill(x, row_y(m, r.row), w, f32::from(r.rows) * m.cell_h, palette.tab_bar_bg));
    // The edge: a line down the middle of the first column.
    let line = m.stroke.max(1.0).round();
    let edge_x = x + ((m.cell_w - line) / 2.0).round();
    under.push(Quad::fill(
        edge_x,
        row_y(m, r.row),
        line,
        f32::from(r.rows) * m.cell_h,
        palette.divider,
    ));
    let text_col = r.col + 1;
    let cols = usize::from(r.cols - 1);
    let tx = col_x(m, text_col);
    for (i, l) in bar.lines.iter().enumerate().take(usize::from(r.rows)) {
        let row = r.row + u16::try_from(i).unwrap_or(u16::MAX);
        let y = row_y(m, row);
        let bg = if l.current { palette.tab_active_bg } else { palette.tab_bar_bg };
        if l.current {
            under.push(Quad::fill(tx, y, f32::from(r.cols - 1) * m.cell_w, m.cell_h, bg));
        }
        let (fg, bold) = match l.style {
            SidebarStyle::Title if l.current => (palette.tab_active_fg, true),
            SidebarStyle::Title => (palette.switcher_fg, true),
            SidebarStyle::Summary | SidebarStyle::Task => (palette.tab_fg, false),
            SidebarStyle::Message | SidebarStyle::Blank => (palette.switcher_dim, false),
            SidebarStyle::Decision => (palette.ring_needs_input, true),
            SidebarStyle::Server => (palette.tab_fg, true),
        };
        let mut cells = vec![CellView::blank(fg, bg); cols];
        let mut from = 0;
        if let Some(ring) = l.ring {
            let colour = match ring {
                Ring::Unread => palette.ring_unread,
                Ring::NeedsInput => palette.ring_needs_input,
                Ring::Error => palette.ring_error,
            };
            from = put_text(&mut cells, 0, cols, "● ", colour, true);
        }
        put_text(&mut cells, from, cols, &l.text, fg, bold);
        for b in &l.buttons {
            let cells_of = usize::from(b.cols.start)..usize::from(b.cols.end);
            let button = RowButton { label: &b.label, tone: b.tone, cells: cells_of };
            draw_button(&button, &mut cells, (text_col, row), palette, m, under);
        }
        let key = text.row(&cells, None);
        let clip = clip_of(m, CellRectU16::new(text_col, row, r.cols - 1, 1));
        texts.push(Placement { key, x: tx, y, clip });
    }
}
