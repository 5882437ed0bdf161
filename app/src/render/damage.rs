//! Which rows of the window grid a new scene changes against the last one drawn, so that a
//! window frame redraws only those rows (a key's echo changes one row; a software rasterizer
//! then fills a band of the window instead of all of it).
//!
//! It owns the rule "only the panes' cells changed, else everything": any change outside the
//! panes' screens (the chrome, a pane's header, selection, search, card or overlay, the layout)
//! damages the whole window. It must not talk to the GPU.

use std::ops::Range;

use super::scene::{PaneScene, Scene};

/// What a frame must redraw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// Everything.
    Full,
    /// The window grid's rows in this range (empty: nothing changed).
    Rows(Range<u16>),
}

/// The damage of drawing `next` over `prev` (`None`: nothing drawn yet, everything).
///
/// A changed row also damages the rows just above and below it, so a glyph that reaches into
/// a neighbouring row (an accent, a descender) is redrawn whole.
pub fn between(prev: Option<&Scene>, next: &Scene) -> Damage {
    let Some(prev) = prev else { return Damage::Full };
    if !same_chrome(prev, next) {
        return Damage::Full;
    }
    let mut rows: Option<Range<u16>> = None;
    for (old, new) in prev.panes.iter().zip(&next.panes) {
        if !same_except_screen(old, new) {
            return Damage::Full;
        }
        let (a, b) = (&old.screen, &new.screen);
        if (a.cols, a.rows) != (b.cols, b.rows) {
            return Damage::Full;
        }
        // The terminal starts below the pane's header row.
        let top = new.rect.row + 1;
        let mut mark = |row: u16| {
            let row = top + row;
            let band = row.saturating_sub(1)..row.saturating_add(2);
            rows = Some(match rows.take() {
                Some(r) => r.start.min(band.start)..r.end.max(band.end),
                None => band,
            });
        };
        for row in 0..b.rows {
            if a.row(row) != b.row(row) {
                mark(row);
            }
        }
        if a.cursor != b.cursor {
            for cursor in [a.cursor, b.cursor].into_iter().flatten() {
                mark(cursor.row);
            }
        }
    }
    let rows = rows.unwrap_or(0..0);
    Damage::Rows(rows.start.min(next.grid_rows)..rows.end.min(next.grid_rows))
}

/// Whether everything but the panes' screens is the same.
fn same_chrome(a: &Scene, b: &Scene) -> bool {
    a.grid_cols == b.grid_cols
        && a.grid_rows == b.grid_rows
        && a.panes.len() == b.panes.len()
        && a.dividers == b.dividers
        && a.background == b.background
        && a.tab_bar == b.tab_bar
        && a.switcher == b.switcher
        && a.banner == b.banner
        && a.sidebar == b.sidebar
        && a.review == b.review
        && a.inbox == b.inbox
        && a.toast == b.toast
}

/// Whether two panes are the same but for their screens' cells and cursor.
fn same_except_screen(a: &PaneScene, b: &PaneScene) -> bool {
    a.rect == b.rect
        && a.header == b.header
        && a.focused == b.focused
        && a.selection == b.selection
        && a.ring == b.ring
        && a.overlay == b.overlay
        && a.search == b.search
        && a.link == b.link
        && a.decision == b.decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::palette::Palette;
    use crate::render::scene::{CellRectU16, CellView, CursorShape, CursorView, ScreenCells};

    fn scene() -> Scene {
        let palette = Palette::dark();
        let pane = PaneScene {
            rect: CellRectU16::new(0, 1, 20, 11),
            screen: ScreenCells::blank(20, 10, &palette),
            ..PaneScene::default()
        };
        Scene { grid_cols: 20, grid_rows: 12, panes: vec![pane], ..Scene::default() }
    }

    fn set(scene: &mut Scene, col: u16, row: u16, c: char) {
        let screen = &mut scene.panes[0].screen;
        let i = usize::from(row) * usize::from(screen.cols) + usize::from(col);
        screen.cells[i] = CellView { ch: c, ..screen.cells[i].clone() };
    }

    fn cursor(row: u16, col: u16) -> Option<CursorView> {
        Some(CursorView { row, col, shape: CursorShape::Block, visible: true, blinking: false })
    }

    #[test]
    fn damage_table() {
        let base = scene();
        let typed = {
            let mut s = base.clone();
            set(&mut s, 3, 4, 'x');
            s
        };
        let moved = {
            let mut s = base.clone();
            s.panes[0].screen.cursor = cursor(7, 0);
            s
        };
        let first_and_last = {
            let mut s = base.clone();
            set(&mut s, 0, 0, 'a');
            set(&mut s, 0, 9, 'b');
            s
        };
        let header = {
            let mut s = typed.clone();
            s.panes[0].header.title = "vim".into();
            s
        };
        let chrome = {
            let mut s = typed.clone();
            s.banner = Some("config: bad".into());
            s
        };
        let resized = {
            let mut s = base.clone();
            s.panes[0].screen = ScreenCells::blank(20, 9, &Palette::dark());
            s
        };
        // (previous, next, damage): the terminal's row r is grid row rect.row + 1 + r = r + 2.
        let cases: Vec<(Option<&Scene>, &Scene, Damage)> = vec![
            (None, &base, Damage::Full),
            (Some(&base), &base, Damage::Rows(0..0)),
            (Some(&base), &typed, Damage::Rows(5..8)),
            (Some(&base), &moved, Damage::Rows(8..11)),
            (Some(&moved), &base, Damage::Rows(8..11)),
            (Some(&base), &first_and_last, Damage::Rows(1..12)),
            (Some(&base), &header, Damage::Full),
            (Some(&base), &chrome, Damage::Full),
            (Some(&base), &resized, Damage::Full),
        ];
        for (i, (prev, next, want)) in cases.into_iter().enumerate() {
            assert_eq!(between(prev, next), want, "case {i}");
        }
    }
}
