//! Lays out the window's chrome in a frame: the tab bar, the attention ring around a pane, a
//! tombstone's overlay, a header's lifecycle marker and the workspace switcher (drawn on the
//! modal layer, over the panes' text).
//!
//! It owns the geometry and colours of those pieces. It must not talk to the GPU or decide
//! what they say: the window fills the scene, `render/mod.rs` uploads what this returns.

use super::palette::{Palette, Rgb};
use super::place::{clip_of, col_x, ellipsize, put_text, row_y, str_width, Placement};
use super::quads::{Quad, QuadKind};
use super::scene::{
    CellRectU16, CellView, PaneScene, Progress, ProgressKind, Ring, SwitcherScene, TabBarScene,
    TombstoneOverlay,
};
use super::text::{CellMetrics, TextSystem};

/// The tab bar: its row, each tab (the shown one brighter), unread dots, close buttons and the
/// workspace's name at the right end.
pub(super) fn tab_bar(
    bar: &TabBarScene,
    cols: u16,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let y = row_y(m, bar.row);
    under.push(Quad::fill(0.0, y, f32::from(cols) * m.cell_w, m.cell_h, palette.tab_bar_bg));
    let mut cells = vec![CellView::blank(palette.tab_fg, palette.tab_bar_bg); usize::from(cols)];
    for tab in &bar.tabs {
        let (start, end) = (usize::from(tab.cols.start), usize::from(tab.cols.end.min(cols)));
        if start >= end {
            continue;
        }
        let (bg, fg) = if tab.editing {
            (palette.switcher_selected_bg, palette.switcher_fg)
        } else if tab.active {
            (palette.tab_active_bg, palette.tab_active_fg)
        } else {
            (palette.tab_bg, palette.tab_fg)
        };
        under.push(Quad::fill(
            col_x(m, tab.cols.start),
            y,
            (end - start) as f32 * m.cell_w,
            m.cell_h,
            bg,
        ));
        if tab.active {
            let line = m.stroke.max(2.0);
            let w = (end - start) as f32 * m.cell_w;
            under.push(Quad::fill(
                col_x(m, tab.cols.start),
                y + m.cell_h - line,
                w,
                line,
                palette.badge_live,
            ));
        }
        for cell in &mut cells[start..end] {
            cell.bg = bg;
        }
        let close_at = end.saturating_sub(2);
        let mut col = put_text(&mut cells, start, close_at, &tab.title, fg, tab.active);
        if tab.attention > 0 {
            col = put_text(&mut cells, col, close_at, " ●", palette.attention, true);
            put_text(
                &mut cells,
                col,
                close_at,
                &tab.attention.to_string(),
                palette.attention,
                true,
            );
        }
        put_text(&mut cells, close_at, end, "×", palette.tab_close, false);
    }
    let right_w = str_width(&bar.right);
    let used = bar.tabs.last().map_or(0, |t| usize::from(t.cols.end));
    let from = usize::from(cols).saturating_sub(right_w + 1).max(used + 1);
    put_text(&mut cells, from, usize::from(cols), &bar.right, palette.tab_fg, false);
    let key = text.row(&cells, None);
    let clip = clip_of(m, CellRectU16::new(0, bar.row, cols, 1));
    texts.push(Placement { key, x: 0.0, y, clip });
}

/// A program's progress along the bottom of its header (at `x`, `y`, `w` pixels wide): a
/// faint track and the part done in the kind's colour; without a percent (indeterminate) a
/// dashed line over the whole width.
pub(super) fn progress_bar(
    progress: Progress,
    x: f32,
    y: f32,
    w: f32,
    palette: &Palette,
    m: CellMetrics,
    under: &mut Vec<Quad>,
) {
    let h = m.stroke.max(2.0).min(m.cell_h / 4.0).round().max(1.0);
    let top = y + m.cell_h - h;
    let color = match progress.kind {
        ProgressKind::Normal => palette.badge_live,
        ProgressKind::Error => palette.badge_exited,
        ProgressKind::Paused => palette.attention,
        ProgressKind::Indeterminate => palette.badge_resumable,
    };
    under.push(Quad::fill(x, top, w, h, palette.divider));
    match progress.percent.filter(|_| progress.kind != ProgressKind::Indeterminate) {
        Some(percent) => {
            let done = (w * f32::from(percent.min(100)) / 100.0).round();
            if done > 0.0 {
                under.push(Quad::fill(x, top, done, h, color));
            }
        }
        None => under.push(Quad::new(QuadKind::Dashed, x, top, w, h, color, h)),
    }
}

/// The ring around a pane that wants attention: an outline of its whole rectangle.
pub(super) fn ring(
    pane: &PaneScene,
    palette: &Palette,
    m: CellMetrics,
    scale: f32,
    over: &mut Vec<Quad>,
) {
    let Some(ring) = pane.ring else { return };
    let color = match ring {
        Ring::Unread => palette.ring_unread,
        Ring::NeedsInput => palette.ring_needs_input,
        Ring::Error => palette.ring_error,
    };
    let r = pane.rect;
    let thickness = (2.0 * scale).round().max(2.0);
    over.push(Quad::new(
        QuadKind::Outline,
        col_x(m, r.col),
        row_y(m, r.row),
        f32::from(r.cols) * m.cell_w,
        f32::from(r.rows) * m.cell_h,
        color,
        thickness,
    ));
}

/// Rows a tombstone overlay takes at the bottom of its pane (a separator line included).
pub fn overlay_rows(overlay: &TombstoneOverlay) -> u16 {
    let lines = overlay.lines.len() + usize::from(overlay.error.is_some());
    u16::try_from(lines).unwrap_or(u16::MAX).saturating_add(1)
}

/// One line of a tombstone's overlay in a pane `cols` wide: a cell of margin on each side, and
/// a line too long for that ends in `…` instead of being cut off.
fn overlay_line(line: &str, cols: u16, fg: Rgb, bg: Rgb, bold: bool) -> Vec<CellView> {
    let width = usize::from(cols);
    let mut cells = vec![CellView::blank(fg, bg); width];
    let shown = ellipsize(line, width.saturating_sub(2));
    put_text(&mut cells, 1, width, &shown, fg, bold);
    cells
}

/// A tombstone's overlay: a panel along the pane's bottom rows with what Enter does.
pub(super) fn overlay(
    pane: &PaneScene,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    under: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let Some(overlay) = &pane.overlay else { return };
    let r = pane.rect;
    // The header keeps its row; the overlay takes what it needs of the rest.
    let rows = overlay_rows(overlay).min(r.rows.saturating_sub(1));
    if rows == 0 || r.cols == 0 {
        return;
    }
    let top = r.row + r.rows - rows;
    let (x, y) = (col_x(m, r.col), row_y(m, top));
    let w = f32::from(r.cols) * m.cell_w;
    under.push(Quad::fill(x, y, w, f32::from(rows) * m.cell_h, palette.overlay_bg));
    // A thin line in the badge's colour marks the panel's top edge, in the separator row.
    let line = m.stroke.max(2.0);
    under.push(Quad::fill(x, y + ((m.cell_h - line) / 2.0).round(), w, line, palette.overlay_rule));
    let clip = clip_of(m, CellRectU16::new(r.col, top, r.cols, rows));
    let mut lines: Vec<(&str, Rgb)> =
        overlay.lines.iter().map(|l| (l.as_str(), palette.overlay_fg)).collect();
    if let Some(err) = &overlay.error {
        lines.push((err.as_str(), palette.overlay_error));
    }
    for (i, (line_text, fg)) in lines.into_iter().take(usize::from(rows - 1)).enumerate() {
        let cells = overlay_line(line_text, r.cols, fg, palette.overlay_bg, i == 0);
        let key = text.row(&cells, None);
        let row = top + 1 + u16::try_from(i).unwrap_or(0);
        texts.push(Placement { key, x, y: row_y(m, row), clip });
    }
}

/// The workspace switcher, on the modal layer: a framed list with the filter on top.
pub(super) fn switcher(
    s: &SwitcherScene,
    palette: &Palette,
    m: CellMetrics,
    scale: f32,
    text: &mut TextSystem,
    quads: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let r = s.rect;
    if r.cols < 4 || r.rows < 3 {
        return;
    }
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
    let clip = clip_of(m, r);
    let width = usize::from(r.cols);
    let mut row_cells = |cells: Vec<CellView>, row: u16, texts: &mut Vec<Placement>| {
        let key = text.row(&cells, None);
        texts.push(Placement { key, x, y: row_y(m, row), clip });
    };
    // The filter line.
    let mut cells = vec![CellView::blank(palette.switcher_fg, palette.switcher_bg); width];
    let prompt = s.prompt.as_deref().unwrap_or("Workspace › ");
    let col = put_text(&mut cells, 1, width - 1, prompt, palette.switcher_dim, true);
    let col = put_text(&mut cells, col, width - 1, &s.query, palette.switcher_fg, false);
    if col < width - 1 {
        cells[col].ch = '▏';
        cells[col].fg = palette.cursor;
    }
    row_cells(cells, r.row, texts);
    // A rule under it.
    let line = m.stroke.max(1.0);
    quads.push(Quad::fill(
        x,
        row_y(m, r.row + 1) + (m.cell_h - line) / 2.0,
        w,
        line,
        palette.switcher_border,
    ));
    if s.entries.is_empty() {
        let mut cells = vec![CellView::blank(palette.switcher_dim, palette.switcher_bg); width];
        if let Some((lead, rest)) = &s.offer {
            // A mode's own offer (a rename, a close to confirm): what Enter does.
            quads.push(Quad::fill(
                x,
                row_y(m, r.row + 2),
                w,
                m.cell_h,
                palette.switcher_selected_bg,
            ));
            cells.iter_mut().for_each(|c| c.bg = palette.switcher_selected_bg);
            let col = put_text(&mut cells, 2, width - 1, lead, palette.switcher_dim, false);
            put_text(&mut cells, col, width - 1, rest, palette.switcher_fg, true);
        } else if s.query.trim().is_empty() {
            put_text(&mut cells, 2, width - 1, "no workspace matches", palette.switcher_dim, false);
        } else {
            // The offer Enter (or a click) takes: a new workspace of the typed name.
            quads.push(Quad::fill(
                x,
                row_y(m, r.row + 2),
                w,
                m.cell_h,
                palette.switcher_selected_bg,
            ));
            cells.iter_mut().for_each(|c| c.bg = palette.switcher_selected_bg);
            let col =
                put_text(&mut cells, 2, width - 1, "+ new workspace ", palette.switcher_dim, false);
            put_text(&mut cells, col, width - 1, s.query.trim(), palette.switcher_fg, true);
        }
        row_cells(cells, r.row + 2, texts);
        return;
    }
    for (i, entry) in s.entries.iter().enumerate() {
        let row = r.row + 2 + u16::try_from(i).unwrap_or(0);
        if row >= r.row + r.rows {
            break;
        }
        let selected = i == s.selected;
        let bg = if selected { palette.switcher_selected_bg } else { palette.switcher_bg };
        if selected {
            quads.push(Quad::fill(x, row_y(m, row), w, m.cell_h, bg));
        }
        let mut cells = vec![CellView::blank(palette.switcher_fg, bg); width];
        let marker = if entry.current { "● " } else { "  " };
        let col = put_text(&mut cells, 1, width - 1, marker, palette.badge_live, false);
        let col = put_text(&mut cells, col, width - 1, &entry.name, palette.switcher_fg, true);
        let badge = (entry.attention > 0).then(|| format!("● {}", entry.attention));
        let badge_w = badge.as_deref().map_or(0, str_width);
        let detail_end = (width - 1).saturating_sub(badge_w + 1);
        put_text(&mut cells, col + 2, detail_end, &entry.detail, palette.switcher_dim, false);
        if let Some(badge) = badge {
            put_text(&mut cells, width - 1 - badge_w, width - 1, &badge, palette.attention, true);
        }
        row_cells(cells, row, texts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(cells: &[CellView]) -> String {
        cells.iter().filter(|c| !c.flags.spacer).map(|c| c.ch).collect::<String>()
    }

    /// Regression: in a narrow pane the restore overlay's line was cut off with no sign that
    /// more followed.
    #[test]
    fn a_long_overlay_line_ends_in_an_ellipsis() {
        let (fg, bg) = (Rgb::hex(0xffffff), Rgb::hex(0));
        let line = "Enter — resume `claude --resume 3f2a9c`";
        let narrow = text_of(&overlay_line(line, 24, fg, bg, true));
        assert_eq!(narrow, " Enter — resume `claud… ");
        let wide = text_of(&overlay_line(line, 60, fg, bg, true));
        assert_eq!(wide.trim_end(), format!(" {line}"));
    }
}
