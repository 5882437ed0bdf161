//! A pane's text as its frame holds it, for a window without a terminal of its own (the
//! attached window): cells named by `content_seq` line and column, the selection over them,
//! a row's text and search matches placed on the view.
//!
//! Owns [`FrameSelection`] (kept in line numbers, so it stays on its text while the view
//! scrolls; its text comes from the rows the frame holds, or from lines the server reads for
//! the rest), a row's cells as text (which `links.rs` finds links in) and [`match_spans`]. It reads frames only: it must not ask the server for
//! anything (the window does, `remote.rs`) and must not draw.

use berth_engine::ids::PaneId;
use berth_server::pane_search::WireMatch;
use berth_server::screen::{flags, FrameRow, PaneFrame};

use super::selection::ScreenCell;
use crate::render::CellSpan;

/// The characters that end a word for a double-click (alacritty's default).
const WORD_ENDS: &str = ",│`|:\"' ()[]{}<>\t";

/// A cell named by its line's `content_seq` number and its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinePoint {
    /// The line's number.
    pub seq: u64,
    /// The column (may be the row's width: the end of the line).
    pub col: u16,
}

/// The `content_seq` of the view's top row.
pub fn view_top(frame: &PaneFrame) -> u64 {
    frame.meta.content_seq.saturating_sub(u64::from(frame.meta.display_offset))
}

/// The row of the view that shows line `seq`, if it is shown.
fn view_row(frame: &PaneFrame, seq: u64) -> Option<usize> {
    let row = usize::try_from(seq.checked_sub(view_top(frame))?).ok()?;
    (row < frame.rows.len()).then_some(row)
}

/// One entry per cell of a row: its text (the character and its zero-width characters), or
/// `None` for the spacer after a wide character.
pub(super) fn cells(row: &FrameRow, cols: u16) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::with_capacity(usize::from(cols));
    for run in &row.runs {
        let spacer = run.style.flags & flags::SPACER != 0;
        for ch in run.text.chars() {
            out.push((!spacer).then(|| ch.to_string()));
        }
    }
    out.resize(usize::from(cols), Some(" ".to_owned()));
    for (col, extra) in &row.extras {
        if let Some(Some(cell)) = out.get_mut(usize::from(*col)) {
            cell.push_str(extra);
        }
    }
    out
}

/// A row of the text a selection copies: its cells and whether it wraps onto the next.
struct TextRow {
    cells: Vec<Option<String>>,
    wraps: bool,
}

/// The text from `start` to `end` (half open) over `rows` (the first numbered `first`):
/// rows joined by a line break unless the row wraps, trailing blanks of each line left out.
fn text_between(rows: &[TextRow], first: u64, start: LinePoint, end: LinePoint) -> String {
    let mut text = String::new();
    for seq in start.seq..=end.seq {
        let Some(row) = usize::try_from(seq - first).ok().and_then(|i| rows.get(i)) else {
            break;
        };
        let from = if seq == start.seq { usize::from(start.col) } else { 0 };
        let to = if seq == end.seq { usize::from(end.col) } else { row.cells.len() };
        let piece: String = row
            .cells
            .get(from.min(row.cells.len())..to.min(row.cells.len()))
            .unwrap_or_default()
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        if row.wraps && seq != end.seq {
            text.push_str(&piece);
        } else {
            text.push_str(piece.trim_end());
            if seq != end.seq {
                text.push('\n');
            }
        }
    }
    text
}

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

/// The window's selection in a pane it draws from frames.
#[derive(Debug, Clone)]
pub struct FrameSelection {
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

impl FrameSelection {
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

/// The parts of `m` on the view's rows.
pub fn match_spans(frame: &PaneFrame, m: &WireMatch) -> Vec<CellSpan> {
    let top = view_top(frame);
    let bottom = top + frame.rows.len() as u64;
    let mut spans = Vec::new();
    for seq in m.start.seq.max(top)..=m.end.seq.min(bottom.saturating_sub(1)) {
        let from = if seq == m.start.seq { m.start.col } else { 0 };
        let to =
            if seq == m.end.seq { m.end.col.saturating_add(1).min(frame.cols) } else { frame.cols };
        if from < to {
            spans.push(CellSpan { row: (seq - top) as u16, cols: from..to });
        }
    }
    spans
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
        let mut sel = FrameSelection::start(PaneId::new(), f, from, clicks);
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
        let click = FrameSelection::start(PaneId::new(), &f, cell(2, 0, false), 1);
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
        let mut sel = FrameSelection::start(PaneId::new(), &f, cell(0, 0, false), 1);
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

    #[test]
    fn matches_are_placed_on_the_view_by_line_number() {
        let f = frame(10, 3, "aaa\r\nbbb\r\nccc");
        let top = view_top(&f);
        let p = |seq, col| berth_server::pane_search::WirePoint { seq, col };
        let on_view = WireMatch { start: p(top + 1, 1), end: p(top + 2, 0) };
        let spans = match_spans(&f, &on_view);
        assert_eq!(spans, vec![CellSpan { row: 1, cols: 1..10 }, CellSpan { row: 2, cols: 0..1 }]);
        let above =
            WireMatch { start: p(top.saturating_sub(5), 0), end: p(top.saturating_sub(5), 2) };
        if top >= 5 {
            assert!(match_spans(&f, &above).is_empty());
        }
    }
}
