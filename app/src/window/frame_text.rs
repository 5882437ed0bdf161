//! A pane's text as its frame holds it: cells named by `content_seq` line and column, a
//! row's cells as text (which the selection copies and `links.rs` finds links in, in an
//! attached window), and search matches placed on the view.
//!
//! Owns [`LinePoint`], [`view_top`], [`cells`], the joining of rows into copied text and
//! [`match_spans`]. It reads frames only: it must not ask the server for anything (the window
//! does) and must not draw.

use berth_server::pane_search::WireMatch;
use berth_server::screen::{flags, FrameRow, PaneFrame};

use crate::render::CellSpan;

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
pub(super) fn view_row(frame: &PaneFrame, seq: u64) -> Option<usize> {
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
pub(super) struct TextRow {
    /// [`cells`] of the row.
    pub(super) cells: Vec<Option<String>>,
    /// It wraps onto the next row.
    pub(super) wraps: bool,
}

/// The text from `start` to `end` (half open) over `rows` (the first numbered `first`):
/// rows joined by a line break unless the row wraps, trailing blanks of each line left out.
pub(super) fn text_between(
    rows: &[TextRow],
    first: u64,
    start: LinePoint,
    end: LinePoint,
) -> String {
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
