//! Text selection in one pane: click-drag, double-click word, triple-click line.
//!
//! Owns the window's one selection (in one pane at a time) as an alacritty `Selection` over
//! the pane's grid, its span on screen for the renderer, and its text for the clipboard. It
//! must not change the pane's terminal: the Term is only read.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Point, Side};
use alacritty_terminal::selection::{Selection, SelectionType};
use alacritty_terminal::term::{point_to_viewport, viewport_to_point, Term};
use berth_engine::ids::PaneId;

/// A cell of a pane's visible screen and the half of it the pointer is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenCell {
    /// The column (0-based).
    pub col: u16,
    /// The row of the visible screen (0-based).
    pub row: u16,
    /// Whether the pointer is on the right half of the cell.
    pub right_half: bool,
}

/// The window's selection.
#[derive(Debug, Clone)]
pub struct PaneSelection {
    /// The pane it lies in.
    pub pane: PaneId,
    selection: Selection,
    /// False until the pointer moved or the selection is a word or line: a plain click
    /// selects nothing.
    grown: bool,
}

impl PaneSelection {
    /// A selection starting at `cell` of `pane`'s screen: 1 click is character-wise, 2 a word,
    /// 3 a line.
    pub fn start<T>(pane: PaneId, term: &Term<T>, cell: ScreenCell, clicks: u8) -> Self {
        let ty = match clicks {
            2 => SelectionType::Semantic,
            3 => SelectionType::Lines,
            _ => SelectionType::Simple,
        };
        let (point, side) = grid_point(term, cell);
        Self { pane, selection: Selection::new(ty, point, side), grown: clicks >= 2 }
    }

    /// Moves the selection's moving end to `cell`.
    pub fn extend<T>(&mut self, term: &Term<T>, cell: ScreenCell) {
        let (point, side) = grid_point(term, cell);
        self.selection.update(point, side);
        self.grown = true;
    }

    /// The first and last selected cells as (column, row) of the visible screen, clipped to
    /// it; None when nothing visible is selected.
    pub fn visible_span<T>(&self, term: &Term<T>) -> Option<((u16, u16), (u16, u16))> {
        if !self.grown {
            return None;
        }
        let range = self.selection.to_range(term)?;
        let offset = term.grid().display_offset();
        let rows = term.grid().screen_lines();
        let last_col = term.grid().columns().saturating_sub(1);
        let start = match point_to_viewport(offset, range.start) {
            Some(p) if p.line < rows => (p.column.0, p.line),
            Some(_) => return None,
            // Starts above the view: the span starts at the top-left.
            None => (0, 0),
        };
        let end = match point_to_viewport(offset, range.end) {
            Some(p) if p.line < rows => (p.column.0, p.line),
            // Ends below the view: the span ends at the bottom-right.
            Some(_) => (last_col, rows.saturating_sub(1)),
            None => return None,
        };
        let clip = |v: usize| u16::try_from(v).unwrap_or(u16::MAX);
        Some(((clip(start.0), clip(start.1)), (clip(end.0), clip(end.1))))
    }

    /// The selected text, as it will be copied.
    pub fn text<T>(&self, term: &Term<T>) -> Option<String> {
        if !self.grown {
            return None;
        }
        let range = self.selection.to_range(term)?;
        let text = term.bounds_to_string(range.start, range.end);
        (!text.is_empty()).then_some(text)
    }
}

/// The grid point under a screen cell (accounting for the scrolled view) and its side.
fn grid_point<T>(term: &Term<T>, cell: ScreenCell) -> (Point, Side) {
    let grid = term.grid();
    let row = usize::from(cell.row).min(grid.screen_lines().saturating_sub(1));
    let col = usize::from(cell.col).min(grid.columns().saturating_sub(1));
    let point = viewport_to_point(grid.display_offset(), Point::new(row, Column(col)));
    (point, if cell.right_half { Side::Right } else { Side::Left })
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::terminal::{PaneTerminal, TermSize};

    fn terminal(text: &str) -> PaneTerminal {
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 4 }, 100);
        term.feed(text.as_bytes());
        term
    }

    fn cell(col: u16, row: u16) -> ScreenCell {
        ScreenCell { col, row, right_half: false }
    }

    fn pane() -> PaneId {
        PaneId::new()
    }

    #[test]
    fn a_plain_click_selects_nothing() {
        let t = terminal("hello world");
        let sel = PaneSelection::start(pane(), t.term(), cell(2, 0), 1);
        assert_eq!(sel.text(t.term()), None);
        assert_eq!(sel.visible_span(t.term()), None);
    }

    #[test]
    fn dragging_selects_characters() {
        let t = terminal("hello world");
        let mut sel = PaneSelection::start(pane(), t.term(), cell(0, 0), 1);
        sel.extend(t.term(), ScreenCell { col: 4, row: 0, right_half: true });
        assert_eq!(sel.text(t.term()).as_deref(), Some("hello"));
        assert_eq!(sel.visible_span(t.term()), Some(((0, 0), (4, 0))));
    }

    #[test]
    fn double_click_selects_a_word_and_triple_click_a_line() {
        let t = terminal("hello big world\r\nnext");
        let word = PaneSelection::start(pane(), t.term(), cell(7, 0), 2);
        assert_eq!(word.text(t.term()).as_deref(), Some("big"));
        let line = PaneSelection::start(pane(), t.term(), cell(3, 0), 3);
        assert_eq!(line.text(t.term()).as_deref(), Some("hello big world"));
    }

    #[test]
    fn a_selection_across_lines_keeps_the_line_break() {
        let t = terminal("one\r\ntwo");
        let mut sel = PaneSelection::start(pane(), t.term(), cell(0, 0), 1);
        sel.extend(t.term(), ScreenCell { col: 2, row: 1, right_half: true });
        assert_eq!(sel.text(t.term()).as_deref(), Some("one\ntwo"));
        assert_eq!(sel.visible_span(t.term()), Some(((0, 0), (2, 1))));
    }
}
