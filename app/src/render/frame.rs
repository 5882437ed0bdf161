//! Lays out one frame: turns a [`Scene`] into quads (under and over the text) and placed,
//! shaped text rows.
//!
//! It owns the geometry of a pane on screen: the header line with title, attention marker and
//! badge; cell backgrounds, selection and cursor; underline and strikethrough; dividers; the
//! error banner along the bottom row, over the panes (search highlights, the search bar and
//! link underlines are `render/marks.rs`'s; the tab bar, ring, overlays and switcher are
//! `render/chrome.rs`'s, decision cards `render/card.rs`'s, the review view `render/review.rs`'s, the inbox and toasts `render/inbox.rs`'s). It must not talk to the GPU: `render/mod.rs` uploads what this
//! returns.

use super::card;
use super::chrome;
use super::marks;
use super::palette::{Palette, Rgb};
use super::place::{self, clip_of, col_x, row_y, Placement};
use super::quads::{Quad, QuadKind};
use super::scene::{
    Badge, CellRectU16, CellView, CursorShape, HeaderScene, PaneScene, Scene, UnderlineStyle,
};
use super::sidebar;
use super::text::{CellMetrics, TextSystem};

/// Everything one frame draws, in order: `quads[..under]`, then the text, then
/// `quads[under..modal]`; then the modal layer over all of it (decision cards, or the
/// workspace switcher): `quads[modal..]` and `modal_texts`.
#[derive(Debug, Default)]
pub struct Frame {
    /// All quads.
    pub quads: Vec<Quad>,
    /// How many of `quads` go under the text.
    pub under: usize,
    /// Where the modal layer's quads start.
    pub modal: usize,
    /// Text rows.
    pub texts: Vec<Placement>,
    /// Text rows of the modal layer.
    pub modal_texts: Vec<Placement>,
}

/// Builds the frame for `scene`, shaping rows that changed.
pub fn build(scene: &Scene, palette: &Palette, text: &mut TextSystem, scale: f32) -> Frame {
    let m = text.metrics();
    let mut under = Vec::new();
    let mut over = Vec::new();
    let mut texts = Vec::new();
    for divider in &scene.dividers {
        divider_quads(*divider, m, scale, scene.background, palette.divider, &mut under);
    }
    if let Some(bar) = &scene.tab_bar {
        chrome::tab_bar(bar, scene.grid_cols, palette, m, text, &mut under, &mut texts);
    }
    if let Some(bar) = &scene.sidebar {
        sidebar::sidebar(bar, palette, m, text, &mut under, &mut texts);
    }
    for pane in &scene.panes {
        if pane.rect.cols == 0 || pane.rect.rows == 0 {
            continue;
        }
        header(pane, palette, m, text, &mut under, &mut texts);
        terminal(pane, palette, m, scale, text, &mut under, &mut over, &mut texts);
        chrome::overlay(pane, palette, m, text, &mut under, &mut texts);
        chrome::ring(pane, palette, m, scale, &mut over);
    }
    let mut modal = Vec::new();
    let mut modal_texts = Vec::new();
    // Decision cards go on the modal layer, over their pane's text. The modal layer draws all
    // its quads before all its text, so while the switcher is open the cards wait (its frame
    // would otherwise have their text showing through it).
    if scene.switcher.is_none() && scene.review.is_none() && scene.inbox.is_none() {
        for pane in scene.panes.iter().filter(|p| p.rect.cols > 0 && p.rect.rows > 0) {
            if let Some(decision) = &pane.decision {
                card::card(decision, pane.rect, palette, m, text, &mut modal, &mut modal_texts);
            }
        }
    }
    if let Some(view) = &scene.review {
        super::review::review(view, palette, m, text, &mut modal, &mut modal_texts);
    }
    if let Some(toast) = &scene.toast {
        super::inbox::toast(toast, palette, m, scale, text, &mut modal, &mut modal_texts);
    }
    if let Some(inbox) = &scene.inbox {
        let (w, h) = (f32::from(scene.grid_cols) * m.cell_w, f32::from(scene.grid_rows) * m.cell_h);
        modal.push(Quad::fill_alpha(
            0.0,
            0.0,
            w + m.cell_w,
            h + m.cell_h,
            palette.switcher_backdrop,
            0.9,
        ));
        super::inbox::inbox(inbox, palette, m, scale, text, &mut modal, &mut modal_texts);
    }
    if let Some(switcher) = &scene.switcher {
        // A clean backdrop first: the whole window (sidebar, tab bar, panes) covered nearly to
        // the background, so no pieces of sidebar or pane text show around the box.
        let (w, h) = (f32::from(scene.grid_cols) * m.cell_w, f32::from(scene.grid_rows) * m.cell_h);
        modal.push(Quad::fill_alpha(
            0.0,
            0.0,
            w + m.cell_w,
            h + m.cell_h,
            palette.switcher_backdrop,
            0.9,
        ));
        chrome::switcher(switcher, palette, m, scale, text, &mut modal, &mut modal_texts);
    }
    if let Some(message) = &scene.banner {
        banner(scene, message, palette, m, text, &mut under, &mut over, &mut texts);
    }
    let count = under.len();
    under.append(&mut over);
    let modal_at = under.len();
    under.append(&mut modal);
    Frame { quads: under, under: count, modal: modal_at, texts, modal_texts }
}

/// The error banner: the window's bottom row in the error colours, over whatever the panes
/// draw there (their text and decorations in that row are cut off).
#[allow(clippy::too_many_arguments)]
fn banner(
    scene: &Scene,
    message: &str,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    over: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let (cols, row) = (scene.grid_cols.max(1), scene.grid_rows.max(1) - 1);
    let y = row_y(m, row);
    for placement in texts.iter_mut() {
        placement.clip[3] = placement.clip[3].min(y as i32);
    }
    texts.retain(|p| p.clip[1] < p.clip[3]);
    over.retain_mut(|q| {
        q.rect[3] = q.rect[3].min(y - q.rect[1]);
        q.rect[3] > 0.0
    });
    under.push(Quad::fill(0.0, y, f32::from(cols) * m.cell_w, m.cell_h, palette.error_bg));
    let mut cells = vec![CellView::blank(palette.error_fg, palette.error_bg); usize::from(cols)];
    let width = usize::from(cols).saturating_sub(2);
    let chars: Vec<char> = message.chars().filter(|c| !c.is_control()).collect();
    for (i, c) in chars.iter().take(width).enumerate() {
        let cell = &mut cells[i + 1];
        cell.ch = if i + 1 == width && chars.len() > width { '…' } else { *c };
        cell.flags.bold = true;
    }
    let key = text.row(&cells, None);
    let clip = clip_of(m, CellRectU16::new(0, row, cols, 1));
    texts.push(Placement { key, x: 0.0, y, clip });
}

/// A divider: its cells in the scene background, a thin line along the middle.
fn divider_quads(
    rect: CellRectU16,
    m: CellMetrics,
    scale: f32,
    bg: Rgb,
    line: Rgb,
    out: &mut Vec<Quad>,
) {
    let (x, y) = (col_x(m, rect.col), row_y(m, rect.row));
    let (w, h) = (f32::from(rect.cols) * m.cell_w, f32::from(rect.rows) * m.cell_h);
    out.push(Quad::fill(x, y, w, h, bg));
    let thickness = scale.round().max(1.0);
    if rect.cols <= rect.rows {
        out.push(Quad::fill(x + ((w - thickness) / 2.0).round(), y, thickness, h, line));
    } else {
        out.push(Quad::fill(x, y + ((h - thickness) / 2.0).round(), w, thickness, line));
    }
}

/// The header line: bar, attention marker, title and badge.
fn header(
    pane: &PaneScene,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let rect = pane.rect;
    let (x, y) = (col_x(m, rect.col), row_y(m, rect.row));
    let h = &pane.header;
    let (bg, fg) = if h.focused {
        (palette.header_focused_bg, palette.header_focused_fg)
    } else {
        (palette.header_bg, palette.header_fg)
    };
    under.push(Quad::fill(x, y, f32::from(rect.cols) * m.cell_w, m.cell_h, bg));
    if h.attention {
        let w = (m.cell_w / 3.0).round().max(2.0);
        under.push(Quad::fill(x, y, w, m.cell_h, palette.attention));
    }
    let (cells, badge_cols) = header_cells(h, rect.cols, fg, bg, palette);
    if let Some(cols) = badge_cols.clone() {
        let badge_x = x + col_x(m, cols.start);
        let badge_w = f32::from(cols.end - cols.start) * m.cell_w;
        under.push(Quad::fill(badge_x, y, badge_w, m.cell_h, h.badge.colour(palette)));
    }
    let key = text.row(&cells, None);
    let clip = clip_of(m, CellRectU16::new(rect.col, rect.row, rect.cols, 1));
    texts.push(Placement { key, x, y, clip });
    if let Some(progress) = h.progress {
        chrome::progress_bar(progress, x, y, f32::from(rect.cols) * m.cell_w, palette, m, under);
    }
}

/// The header's cells (`cols` wide) and the columns its badge takes.
fn header_cells(
    h: &HeaderScene,
    cols: u16,
    fg: Rgb,
    bg: Rgb,
    palette: &Palette,
) -> (Vec<CellView>, Option<std::ops::Range<u16>>) {
    let mut cells = vec![CellView::blank(fg, bg); usize::from(cols)];
    let label = h.badge.label();
    // The label is ASCII: its length is its width. One blank on each side.
    let badge_w = u16::try_from(label.len() + 2).unwrap_or(u16::MAX);
    let mut title_end = cols;
    let mut badge = None;
    if cols >= badge_w + 4 {
        let start = cols - badge_w;
        for (i, c) in label.chars().enumerate() {
            let cell = &mut cells[usize::from(start) + 1 + i];
            cell.ch = c;
            cell.fg = palette.badge_fg;
            cell.bg = h.badge.colour(palette);
            cell.flags.bold = true;
        }
        title_end = start.saturating_sub(1);
        badge = Some(start..cols);
    }
    // The lifecycle marker sits before the badge when the title keeps some room; in a narrow
    // pane it is shortened ("▶ working 2m", then the symbol alone) rather than dropped.
    if let Some(marker) = &h.lifecycle {
        let short = marker.replacen(" for ", " ", 1);
        let symbol: String = marker.chars().take(1).collect();
        let fits = [marker.as_str(), short.as_str(), symbol.as_str()].into_iter().find(|m| {
            let width = u16::try_from(place::str_width(m)).unwrap_or(u16::MAX);
            title_end >= width + 10
        });
        if let Some(shown) = fits {
            let width = u16::try_from(place::str_width(shown)).unwrap_or(u16::MAX);
            let start = title_end - width - 1;
            place::put_text(
                &mut cells,
                usize::from(start),
                usize::from(title_end),
                shown,
                palette.lifecycle(marker),
                false,
            );
            title_end = start.saturating_sub(1);
        }
    }
    // The title starts after one blank (where the attention marker goes).
    let end = usize::from(title_end);
    let title = place::ellipsize(&h.title, end.saturating_sub(1));
    place::put_text(&mut cells, 1, end, &title, fg, h.focused);
    (cells, badge)
}

/// A pane's terminal: backgrounds, selection, cursor, text and decorations.
#[allow(clippy::too_many_arguments)]
fn terminal(
    pane: &PaneScene,
    palette: &Palette,
    m: CellMetrics,
    scale: f32,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    over: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let rect = pane.rect;
    let screen = &pane.screen;
    let area = CellRectU16::new(rect.col, rect.row + 1, rect.cols, rect.rows - 1);
    let (x0, y0) = (col_x(m, area.col), row_y(m, area.row));
    under.push(Quad::fill(
        x0,
        y0,
        f32::from(area.cols) * m.cell_w,
        f32::from(area.rows) * m.cell_h,
        palette.bg,
    ));
    let clip = clip_of(m, area);
    let rows = screen.rows.min(area.rows);
    let cols = screen.cols.min(area.cols);
    let cursor = screen.cursor.filter(|c| c.visible && c.row < rows && c.col < cols).map(|c| {
        let wide = screen.cell(c.col, c.row).is_some_and(|cell| cell.flags.wide);
        (c, if wide { 2u16 } else { 1 })
    });

    // Search takes the pane's bottom row for its bar; its matches are highlighted.
    let search = pane.search.as_ref().filter(|_| area.rows > 0);
    let bar_row = search.map(|_| area.rows - 1);
    for row in 0..rows {
        if bar_row == Some(row) {
            continue;
        }
        let plain = &screen.row(row)[..usize::from(cols)];
        let marked = marks::highlighted_row(search, row, plain, palette);
        let cells = marked.as_deref().unwrap_or(plain);
        let y = y0 + row_y(m, row);
        backgrounds(cells, x0, y, m, palette.bg, under);
        if let Some(selected) = pane.selection.and_then(|s| s.columns_in_row(row, screen.cols)) {
            let (from, to) = (selected.start.min(cols), selected.end.min(cols));
            if from < to {
                let w = f32::from(to - from) * m.cell_w;
                under.push(Quad::fill(x0 + col_x(m, from), y, w, m.cell_h, palette.selection_bg));
            }
        }
        let mut cursor_text = None;
        if let Some((c, width)) = cursor.filter(|(c, _)| c.row == row) {
            let (x, w) = (x0 + col_x(m, c.col), f32::from(width) * m.cell_w);
            let thin = m.stroke.max((m.cell_w / 8.0).round()).max(scale.round());
            match c.shape {
                CursorShape::Block => {
                    under.push(Quad::fill(x, y, w, m.cell_h, palette.cursor));
                    cursor_text = Some((c.col, palette.cursor_text));
                }
                CursorShape::Beam => over.push(Quad::fill(x, y, thin, m.cell_h, palette.cursor)),
                CursorShape::Underline => {
                    over.push(Quad::fill(x, y + m.cell_h - thin, w, thin, palette.cursor));
                }
                CursorShape::HollowBlock => over.push(Quad::new(
                    QuadKind::Outline,
                    x,
                    y,
                    w,
                    m.cell_h,
                    palette.cursor,
                    m.stroke.max(scale.round()),
                )),
            }
        }
        if cells.iter().any(|cell| cell.ch != ' ' || cell.extra.is_some()) {
            let key = text.row(cells, cursor_text);
            texts.push(Placement { key, x: x0, y, clip });
        }
        decorations(cells, x0, y, m, over);
    }
    let row_cells = |row: u16| &screen.row(row)[..usize::from(cols)];
    marks::link_underlines(&pane.link, rows, x0, row_cells, |r| y0 + row_y(m, r), m, over);
    if let (Some(search), Some(row)) = (search, bar_row) {
        let y = y0 + row_y(m, row);
        marks::search_bar(
            search, area.cols, x0, y, clip, palette, m, scale, text, under, over, texts,
        );
    }
}

/// Background quads for runs of cells whose background is not the pane's default.
fn backgrounds(
    cells: &[CellView],
    x0: f32,
    y: f32,
    m: CellMetrics,
    default: Rgb,
    out: &mut Vec<Quad>,
) {
    let mut start = 0;
    while start < cells.len() {
        let color = cells[start].bg;
        let end = start + cells[start..].iter().take_while(|cell| cell.bg == color).count();
        if color != default {
            let w = (end - start) as f32 * m.cell_w;
            out.push(Quad::fill(x0 + start as f32 * m.cell_w, y, w, m.cell_h, color));
        }
        start = end;
    }
}

/// Underline and strikethrough quads, merged across neighbouring cells of the same style.
fn decorations(cells: &[CellView], x0: f32, y: f32, m: CellMetrics, out: &mut Vec<Quad>) {
    let first = out.len();
    for (col, cell) in cells.iter().enumerate() {
        if cell.flags.spacer {
            continue;
        }
        let x = x0 + col as f32 * m.cell_w;
        let w = if cell.flags.wide { 2.0 } else { 1.0 } * m.cell_w;
        if let Some(style) = cell.flags.underline {
            let color = cell.underline_color.unwrap_or(cell.fg);
            let t = m.stroke;
            match style {
                UnderlineStyle::Single => {
                    push_merged(out, first, Quad::fill(x, y + m.underline_top, w, t, color))
                }
                UnderlineStyle::Double => {
                    let bottom = (m.underline_top + 3.0 * t).min(m.cell_h);
                    push_merged(out, first, Quad::fill(x, y + bottom - 3.0 * t, w, t, color));
                    push_merged(out, first, Quad::fill(x, y + bottom - t, w, t, color));
                }
                UnderlineStyle::Curly => {
                    let h = (3.0 * t).max(3.0);
                    let top = (m.underline_top - t).min(m.cell_h - h).max(0.0);
                    push_merged(out, first, Quad::new(QuadKind::Wave, x, y + top, w, h, color, t));
                }
                UnderlineStyle::Dotted => {
                    let quad = Quad::new(QuadKind::Dotted, x, y + m.underline_top, w, t, color, t);
                    push_merged(out, first, quad);
                }
                UnderlineStyle::Dashed => {
                    let quad = Quad::new(QuadKind::Dashed, x, y + m.underline_top, w, t, color, t);
                    push_merged(out, first, quad);
                }
            }
        }
        if cell.flags.strike {
            push_merged(out, first, Quad::fill(x, y + m.strike_top, w, m.stroke, cell.fg));
        }
    }
}

/// Pushes `quad`, or widens a quad pushed since `first` that ends where it starts and has the
/// same look (so a pattern runs on without restarting at every cell).
fn push_merged(out: &mut Vec<Quad>, first: usize, quad: Quad) {
    let joinable = |q: &Quad| {
        q.kind == quad.kind
            && q.color == quad.color
            && q.rect[1] == quad.rect[1]
            && q.rect[3] == quad.rect[3]
            && (q.rect[0] + q.rect[2] - quad.rect[0]).abs() < 0.01
    };
    if let Some(q) = out[first..].iter_mut().rev().find(|q| joinable(q)) {
        q.rect[2] += quad.rect[2];
    } else {
        out.push(quad);
    }
}
