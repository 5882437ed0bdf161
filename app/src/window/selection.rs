//! Text selection in one pane: click-drag, double-click word, triple-click line, the same in
//! the embedded and the attached window.
//!
//! Owns the window's one selection (in one pane at a time), kept by `content_seq` line and
//! column over the pane's frames, so it stays on its text while the view scrolls or output
//! comes; its span on the view for the renderer; and its text for the clipboard, from the rows
//! the frame holds (`frame_text.rs`) or, for rows it does not hold, from lines the server
//! reads (`pane.read`, asked by the window). It reads frames only and must not change a pane.

use berth_engine::ids::PaneId;
use berth_server::screen::PaneFrame;

use super::frame_text::{cells, text_between, view_row, view_top, LinePoint, TextRow};

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

/// The characters that end a word for a double-click (alacritty's default).
const WORD_ENDS: &str = ",│`|:\"' ()[]{}<>\t";

/// How a selection grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// Cell by cell (a drag).
    Cell,
    /// Word by word (a double click).
    Word,
    /// Line by line (a triple click).
    Line,
}

/// The window's selection.
#[derive(Debug, Clone)]
pub struct PaneSelection {
    /// The pane it lies in.
    pub pane: PaneId,
    unit: Unit,
    /// Where it started and where its moving end is, each as the half-open range the unit
    /// gives there (a cell's left or right half, a word, a line).
    anchor: (LinePoint, LinePoint),
    head: (LinePoint, LinePoint),
    /// False until the pointer moved or the selection is a word or line: a plain click
    /// selects nothing.
    grown: bool,
}

impl PaneSelection {
    /// A selection starting at `cell` of the view `frame` shows: 1 click is cell-wise, 2 a
    /// word, 3 a line.
    pub fn start(pane: PaneId, frame: &PaneFrame, cell: ScreenCell, clicks: u8) -> Self {
        let unit = match clicks {
            2 => Unit::Word,
            3 => Unit::Line,
            _ => Unit::Cell,
        };
        let at = unit_at(frame, unit, cell);
        Self { pane, unit, anchor: at, head: at, grown: clicks >= 2 }
    }

    /// Moves the selection's moving end to `cell`.
    pub fn extend(&mut self, frame: &PaneFrame, cell: ScreenCell) {
        self.head = unit_at(frame, self.unit, cell);
        self.grown = true;
    }

    /// The selected cells, half open; `None` when nothing is selected.
    fn range(&self) -> Option<(LinePoint, LinePoint)> {
        if !self.grown {
            return None;
        }
        let (start, end) = match self.unit {
            // Cells: from the earlier pointer position to the later one.
            Unit::Cell => {
                let (a, b) = (self.anchor.0, self.head.0);
                (a.min(b), a.max(b))
            }
            Unit::Word | Unit::Line => {
                (self.anchor.0.min(self.head.0), self.anchor.1.max(self.head.1))
            }
        };
        (start < end).then_some((start, end))
    }

    /// The first and last selected cells as (column, row) of the view, clipped to it; `None`
    /// when nothing on the view is selected.
    pub fn visible_span(&self, frame: &PaneFrame) -> Option<((u16, u16), (u16, u16))> {
        let (start, end) = self.range()?;
        let rows = frame.rows.len() as u64;
        let top = view_top(frame);
        let last_col = frame.cols.saturating_sub(1);
        // The last selected cell (the end is exclusive).
        let last = if end.col == 0 {
            LinePoint { seq: end.seq.checked_sub(1)?, col: last_col }
        } else {
            LinePoint { seq: end.seq, col: (end.col - 1).min(last_col) }
        };
        if last.seq < top || start.seq >= top + rows {
            return None;
        }
        let first = if start.seq < top {
            (0, 0)
        } else {
            (start.col.min(last_col), (start.seq - top) as u16)
        };
        let last = if last.seq >= top + rows {
            (last_col, (rows - 1) as u16)
        } else {
            (last.col, (last.seq - top) as u16)
        };
        Some((first, last))
    }

    /// The selected text when the frame holds every selected row, else the lines the server
    /// must read: `Err((first, last))` line numbers.
    pub fn text(&self, frame: &PaneFrame) -> Result<Option<String>, (u64, u64)> {
        let Some((start, end)) = self.range() else { return Ok(None) };
        let top = view_top(frame);
        if start.seq < top || view_row(frame, end.seq).is_none() {
            return Err((start.seq, end.seq));
        }
        let rows: Vec<TextRow> = frame
            .rows
            .iter()
            .map(|r| TextRow { cells: cells(r, frame.cols), wraps: r.wraps })
            .collect();
        let text = text_between(&rows, top, start, end);
        Ok((!text.is_empty()).then_some(text))
    }

    /// The selected text from lines the server read (`lines[0]` is line `first`), for a
    /// selection that reaches rows the frame does not hold.
    pub fn text_of_lines(&self, lines: &[String], first: u64) -> Option<String> {
        let (start, end) = self.range()?;
        let rows: Vec<TextRow> = lines
            .iter()
            .map(|l| TextRow {
                cells: l.chars().map(|c| Some(c.to_string())).collect(),
                wraps: false,
            })
            .collect();
        if start.seq < first {
            return None;
        }
        let text = text_between(&rows, first, start, end);
        (!text.is_empty()).then_some(text)
    }
}

/// The half-open range a unit gives at `cell` of the view.
fn unit_at(frame: &PaneFrame, unit: Unit, cell: ScreenCell) -> (LinePoint, LinePoint) {
    let row = usize::from(cell.row).min(frame.rows.len().saturating_sub(1));
    let col = cell.col.min(frame.cols.saturating_sub(1));
    let seq = view_top(frame) + row as u64;
    let at = |col: u16| LinePoint { seq, col };
    match unit {
        Unit::Cell => {
            let edge = at(col + u16::from(cell.right_half));
            (edge, edge)
        }
        Unit::Word => {
            let Some(r) = frame.rows.get(row) else { return (at(col), at(col + 1)) };
            let cells = cells(r, frame.cols);
            let is_word = |c: usize| match cells.get(c) {
                // The spacer after a wide character belongs to it.
                Some(None) => true,
                Some(Some(text)) => !text.chars().all(|ch| WORD_ENDS.contains(ch)),
                None => false,
            };
            let c = usize::from(col);
            if !is_word(c) {
                return (at(col), at(col + 1));
            }
            let mut from = c;
            while from > 0 && is_word(from - 1) {
                from -= 1;
            }
            let mut to = c + 1;
            while is_word(to) {
                to += 1;
            }
            (at(from as u16), at(to as u16))
        }
        Unit::Line => {
            // The whole logical line: the rows before that wrap into this one, and after.
            let mut first = row;
            while first > 0 && frame.rows[first - 1].wraps {
                first -= 1;
            }
            let mut last = row;
            while last + 1 < frame.rows.len() && frame.rows[last].wraps {
                last += 1;
            }
            let top = view_top(frame);
            (
                LinePoint { seq: top + first as u64, col: 0 },
                LinePoint { seq: top + last as u64, col: frame.cols },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::terminal::{PaneTerminal, TermSize};

    fn frame(cols: u16, rows: u16, bytes: &str) -> PaneFrame {
        let mut term = PaneTerminal::new(TermSize { cols, rows }, 100);
        term.feed(bytes.as_bytes());
        PaneFrame::capture(&term)
    }

    fn cell(col: u16, row: u16, right_half: bool) -> ScreenCell {
        ScreenCell { col, row, right_half }
    }

    fn selected(f: &PaneFrame, from: ScreenCell, to: ScreenCell, clicks: u8) -> Option<String> {
        let mut sel = PaneSelection::start(PaneId::new(), f, from, clicks);
        if clicks == 1 {
            sel.extend(f, to);
        }
        sel.text(f).expect("the frame holds the rows")
    }

    #[test]
    fn selections_copy_what_the_embedded_window_copies() {
        let f = frame(20, 4, "hello big world\r\nnext line\r\n0123456789012345678901");
        let cases: &[(ScreenCell, ScreenCell, u8, Option<&str>)] = &[
            (cell(0, 0, false), cell(4, 0, true), 1, Some("hello")),
            // Backwards from the right half of the last cell.
            (cell(4, 0, true), cell(0, 0, false), 1, Some("hello")),
            (cell(6, 0, false), cell(3, 1, true), 1, Some("big world\nnext")),
            (cell(7, 0, false), cell(7, 0, false), 2, Some("big")),
            (cell(3, 0, false), cell(3, 0, false), 3, Some("hello big world")),
            // A wrapped line is one line, without a line break.
            (cell(18, 2, false), cell(1, 3, true), 1, Some("8901")),
            (cell(2, 3, false), cell(2, 3, false), 3, Some("0123456789012345678901")),
        ];
        for (from, to, clicks, want) in cases {
            assert_eq!(selected(&f, *from, *to, *clicks).as_deref(), *want, "{from:?} {to:?}");
        }
        // A plain click selects nothing.
        let click = PaneSelection::start(PaneId::new(), &f, cell(2, 0, false), 1);
        assert_eq!(click.text(&f), Ok(None));
        assert_eq!(click.visible_span(&f), None);
    }

    #[test]
    fn a_selection_keeps_its_lines_when_the_view_scrolls() {
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 4 }, 100);
        for n in 0..20 {
            term.feed(format!("row {n}\r\n").as_bytes());
        }
        let f = PaneFrame::capture(&term);
        let mut sel = PaneSelection::start(PaneId::new(), &f, cell(0, 0, false), 1);
        sel.extend(&f, cell(5, 0, true));
        assert_eq!(sel.visible_span(&f), Some(((0, 0), (5, 0))));
        let text = sel.text(&f).unwrap();
        term.scroll_display(2);
        let scrolled = PaneFrame::capture(&term);
        assert_eq!(sel.visible_span(&scrolled), Some(((0, 2), (5, 2))));
        assert_eq!(sel.text(&scrolled).unwrap(), text);
        // Scrolled far enough, the rows are not held: the server's lines are asked for.
        term.scroll_display(10);
        let far = PaneFrame::capture(&term);
        let Err((first, last)) = sel.text(&far) else { panic!("the rows are not held") };
        assert_eq!(first, last);
        let lines = vec![text.clone().unwrap(), "after".to_owned()];
        assert_eq!(sel.text_of_lines(&lines, first), text);
    }
}
