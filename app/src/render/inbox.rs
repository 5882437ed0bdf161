//! Draws the inbox (`InboxScene`) and a notification's toast (`ToastScene`) on the modal
//! layer: a framed panel with its title row and buttons, one row per line (workspace titles,
//! notifications with their unread dot, permission requests and their answer buttons), the
//! keyboard's highlighted line and the hint along the bottom; the toast, a small framed box.
//!
//! It owns their colours and pixels. It must not decide what the lines say or where the
//! buttons are (the window's `inbox.rs` does) and must not talk to the GPU.

use super::card::{draw_button, RowButton};
use super::palette::Palette;
use super::place::{clip_of, col_x, put_text, row_y, Placement};
use super::quads::{Quad, QuadKind};
use super::scene::{
    CellRectU16, CellView, InboxScene, Ring, SidebarButton, SidebarStyle, ToastScene,
};
use super::text::{CellMetrics, TextSystem};

/// The frame of a panel at `r`: its background and outline.
fn frame(r: CellRectU16, palette: &Palette, m: CellMetrics, scale: f32, quads: &mut Vec<Quad>) {
    let (x, y) = (col_x(m, r.col), row_y(m, r.row));
    let (w, h) = (f32::from(r.cols) * m.cell_w, f32::from(r.rows) * m.cell_h);
    quads.push(Quad::fill(x, y, w, h, palette.switcher_bg));
    quads.push(Quad::new(
        QuadKind::Outline,
        x,
        y,
        w,
        h,
        palette.switcher_border,
        scale.round().max(1.0),
    ));
}

/// Draws the inbox onto the modal layer (`quads`, `texts`).
pub(super) fn inbox(
    s: &InboxScene,
    palette: &Palette,
    m: CellMetrics,
    scale: f32,
    text: &mut TextSystem,
    quads: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let r = s.rect;
    if r.cols < 6 || r.rows < 4 {
        return;
    }
    frame(r, palette, m, scale, quads);
    let clip = clip_of(m, r);
    let text_col = r.col + 1;
    let width = usize::from(r.cols - 2);
    let tx = col_x(m, text_col);
    let mut row_of = |cells: Vec<CellView>, row: u16, texts: &mut Vec<Placement>| {
        let key = text.row(&cells, None);
        texts.push(Placement { key, x: tx, y: row_y(m, row), clip });
    };
    let buttons = |cells: &mut [CellView], list: &[SidebarButton], row: u16, q: &mut Vec<Quad>| {
        for b in list {
            let range = usize::from(b.cols.start)..usize::from(b.cols.end);
            let button = RowButton { label: &b.label, tone: b.tone, cells: range };
            draw_button(&button, cells, (text_col, row), palette, m, q);
        }
    };
    // The title row, a rule under it.
    let mut cells = vec![CellView::blank(palette.switcher_fg, palette.switcher_bg); width];
    put_text(&mut cells, 0, width, &s.title, palette.switcher_fg, true);
    buttons(&mut cells, &s.title_buttons, r.row, quads);
    row_of(cells, r.row, texts);
    let line = m.stroke.max(1.0);
    quads.push(Quad::fill(
        col_x(m, r.col),
        row_y(m, r.row + 1) - line / 2.0,
        f32::from(r.cols) * m.cell_w,
        line,
        palette.switcher_border,
    ));
    // The lines, between the title and the hint.
    let body = r.rows.saturating_sub(2);
    for (i, l) in s.lines.iter().enumerate().take(usize::from(body)) {
        let row = r.row + 1 + u16::try_from(i).unwrap_or(u16::MAX);
        let selected = s.selected == Some(i);
        let bg = if selected { palette.switcher_selected_bg } else { palette.switcher_bg };
        if selected {
            let y = row_y(m, row);
            quads.push(Quad::fill(tx, y, width as f32 * m.cell_w, m.cell_h, bg));
        }
        let (fg, bold) = match l.style {
            SidebarStyle::Title => (palette.switcher_fg, true),
            SidebarStyle::Summary | SidebarStyle::Task => (palette.switcher_fg, false),
            SidebarStyle::Message | SidebarStyle::Blank => (palette.switcher_dim, false),
            SidebarStyle::Decision => (palette.ring_needs_input, true),
            SidebarStyle::Server => (palette.switcher_fg, true),
        };
        let mut cells = vec![CellView::blank(fg, bg); width];
        let mut from = 0;
        if let Some(ring) = l.ring {
            let colour = match ring {
                Ring::Unread => palette.ring_unread,
                Ring::NeedsInput => palette.ring_needs_input,
                Ring::Error => palette.ring_error,
            };
            from = put_text(&mut cells, 0, width, "● ", colour, true);
        } else if l.style != SidebarStyle::Title && l.style != SidebarStyle::Blank {
            from = 2;
        }
        put_text(&mut cells, from, width, &l.text, fg, bold);
        buttons(&mut cells, &l.buttons, row, quads);
        row_of(cells, row, texts);
    }
    // The hint along the bottom row.
    let mut cells = vec![CellView::blank(palette.switcher_dim, palette.switcher_bg); width];
    put_text(&mut cells, 0, width, &s.hint, palette.switcher_dim, false);
    row_of(cells, r.row + r.rows - 1, texts);
}

/// Draws a toast onto the modal layer.
pub(super) fn toast(
    s: &ToastScene,
    palette: &Palette,
    m: CellMetrics,
    scale: f32,
    text: &mut TextSystem,
    quads: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let r = s.rect;
    if r.cols < 4 || r.rows == 0 {
        return;
    }
    frame(r, palette, m, scale, quads);
    // A bar in the unread colour down its left edge.
    let bar = (2.0 * scale).round().max(2.0);
    let (x, y) = (col_x(m, r.col), row_y(m, r.row));
    quads.push(Quad::fill(x, y, bar, f32::from(r.rows) * m.cell_h, palette.ring_unread));
    let clip = clip_of(m, r);
    let width = usize::from(r.cols - 2);
    let tx = col_x(m, r.col + 1);
    for (i, line) in s.lines.iter().enumerate().take(usize::from(r.rows)) {
        let row = r.row + u16::try_from(i).unwrap_or(u16::MAX);
        let fg = if i == 0 { palette.switcher_fg } else { palette.switcher_dim };
        let mut cells = vec![CellView::blank(fg, palette.switcher_bg); width];
        put_text(&mut cells, 0, width, line, fg, i == 0);
        let key = text.row(&cells, None);
        texts.push(Placement { key, x: tx, y: row_y(m, row), clip });
    }
}
