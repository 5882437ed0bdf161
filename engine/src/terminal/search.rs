//! Search in one pane's scrollback: a query compiled for alacritty's regex search, matches
//! named by `content_seq` line numbers, stepping between them and scrolling the view to one.
//!
//! It owns [`SearchQuery`] (a regex, or the query taken literally when it is not a valid
//! regex; smart case), [`SearchMatch`] and `SeqGrid`, the search over a pane's Term that the
//! search methods of [`PaneTerminal`](super::PaneTerminal) call. It must not keep any state of
//! its own between calls (the window owns which match is current) and must not change the
//! grid: it only reads the Term, and tells `PaneTerminal::scroll_to_match` how far to scroll
//! the view. It names the Term's type through `terminal/listener.rs` and must not import its
//! parent (issue 12: no import loops).
//!
//! Matches are named by line numbers (`content_seq`, see the terminal's module documentation)
//! rather than grid lines, so a match keeps its name while new output scrolls it up into the
//! history. The whole grid the Term holds is searched, history and screen; on the alternate
//! screen that is only its rows.

use std::ops::Range;

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Boundary, Column, Direction, Line, Point, Side};
use alacritty_terminal::term::search::{Match, RegexIter, RegexSearch};
use alacritty_terminal::Term;

use super::listener::TermListener;

/// Why a query cannot be searched for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// There is nothing to search for.
    #[error("the search is empty")]
    Empty,
    /// Even taken literally the query does not compile (it is too long for the regex engine).
    #[error("the search is too long: {0}")]
    TooLong(String),
}

/// A compiled query.
///
/// The text is a regex (alacritty's syntax, which is the `regex` crate's). If it is not a valid
/// regex, it is searched for literally and [`SearchQuery::regex_error`] says why. Case is smart:
/// the search ignores case unless the text has an upper-case letter (as in alacritty and vim).
#[derive(Debug, Clone)]
pub struct SearchQuery {
    text: String,
    regex: RegexSearch,
    regex_error: Option<String>,
}

impl SearchQuery {
    /// Compiles `text` as a regex, or literally when it is not a valid regex.
    pub fn new(text: &str) -> Result<Self, SearchError> {
        if text.is_empty() {
            return Err(SearchError::Empty);
        }
        match RegexSearch::new(text) {
            Ok(regex) => Ok(Self { text: text.to_owned(), regex, regex_error: None }),
            Err(err) => {
                let why = short_error(&*err);
                let regex = RegexSearch::new(&escape_regex(text))
                    .map_err(|e| SearchError::TooLong(short_error(&*e)))?;
                Ok(Self { text: text.to_owned(), regex, regex_error: Some(why) })
            }
        }
    }

    /// The text as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Why the text was not a valid regex, when it is searched for literally.
    pub fn regex_error(&self) -> Option<&str> {
        self.regex_error.as_deref()
    }
}

/// A cell named by its line's `content_seq` number and its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeqPoint {
    /// The line's number (compared first).
    pub seq: u64,
    /// The column.
    pub col: u16,
}

/// One match: its first and last cells, both included. A match in a long line that wrapped
/// may span several rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SearchMatch {
    /// The first cell.
    pub start: SeqPoint,
    /// The last cell.
    pub end: SeqPoint,
}

/// Which way to step from a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchDirection {
    /// Up, towards older output.
    Older,
    /// Down, towards newer output.
    Newer,
}

/// Where to look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchScope {
    /// The history and the screen.
    Everything,
    /// The rows shown at the view's scroll position (and the parts of matches on them that
    /// start above or end below).
    View,
    /// Matches that end on the line with this number or after it (a line no longer held
    /// means the oldest line held). Together with the matches of an earlier search that end
    /// before that line, this updates a search of everything after new output, as long as the
    /// lines above did not change: history lines do not, unless the grid was resized, the
    /// screen switched, or the history cleared (which only drops lines).
    Since(u64),
}

/// The columns of one row of the view that a match covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewSpan {
    /// The row of the view (0 is its top).
    pub row: u16,
    /// The columns, half open.
    pub cols: Range<u16>,
}

/// What the search reads of one pane, borrowed for one call: its Term and the number of the
/// screen's top row. The search methods of [`PaneTerminal`](super::PaneTerminal) call these
/// over its own Term and line numbers.
#[derive(Clone, Copy)]
pub(super) struct SeqGrid<'a> {
    /// The pane's Term.
    pub(super) term: &'a Term<TermListener>,
    /// The `content_seq` number of the screen's top row.
    pub(super) screen_base: u64,
}

impl SeqGrid<'_> {
    /// Matches of `query` in `scope`, oldest first, at most `max` of them.
    pub(super) fn search_matches(
        &self,
        query: &mut SearchQuery,
        scope: SearchScope,
        max: usize,
    ) -> Vec<SearchMatch> {
        let grid = self.term.grid();
        let last_col = grid.last_column();
        let (start, end) = match scope {
            SearchScope::Everything => (
                Point::new(grid.topmost_line(), Column(0)),
                Point::new(grid.bottommost_line(), last_col),
            ),
            SearchScope::View => {
                let top = Line(-(grid.display_offset() as i32));
                let bottom = top + (grid.screen_lines() as i32 - 1);
                // Whole logical lines, so a match that wrapped into the view is found.
                (
                    self.term.line_search_left(Point::new(top, Column(0))),
                    self.term.line_search_right(Point::new(bottom, last_col)),
                )
            }
            SearchScope::Since(seq) => {
                let from = self.grid_point(SeqPoint { seq, col: 0 });
                (
                    self.term.line_search_left(Point::new(from.line, Column(0))),
                    Point::new(grid.bottommost_line(), last_col),
                )
            }
        };
        let (view_top, view_bottom) = self.view_lines();
        let since = match scope {
            SearchScope::Since(seq) => Some(self.grid_point(SeqPoint { seq, col: 0 }).line),
            _ => None,
        };
        RegexIter::new(start, end, Direction::Right, self.term, &mut query.regex)
            .filter(|m| match scope {
                SearchScope::Everything => true,
                SearchScope::View => m.end().line >= view_top && m.start().line <= view_bottom,
                SearchScope::Since(_) => since.is_none_or(|line| m.end().line >= line),
            })
            .take(max)
            .map(|m| self.seq_match(&m))
            .collect()
    }

    /// Matches of `query` whose first cell is on the lines numbered `first..=last` (clamped to
    /// the lines held), oldest first, at most `max`: one bounded step of a search over a long
    /// history (a match that starts there is found whole, wherever it ends).
    pub(super) fn search_lines(
        &self,
        query: &mut SearchQuery,
        first: u64,
        last: u64,
        max: usize,
    ) -> Vec<SearchMatch> {
        let (oldest, _) = self.line_bounds();
        let grid = self.term.grid();
        let newest = self.line_seq(grid.bottommost_line());
        let (first, last) = (first.max(oldest), last.min(newest));
        if first > last || max == 0 {
            return Vec::new();
        }
        let top = self.grid_point(SeqPoint { seq: first, col: 0 }).line;
        let bottom = self.grid_point(SeqPoint { seq: last, col: 0 }).line;
        let start = self.term.line_search_left(Point::new(top, Column(0)));
        let end = self.term.line_search_right(Point::new(bottom, grid.last_column()));
        RegexIter::new(start, end, Direction::Right, self.term, &mut query.regex)
            .filter(|m| m.start().line >= top && m.start().line <= bottom)
            .take(max)
            .map(|m| self.seq_match(&m))
            .collect()
    }

    /// The numbers of the oldest and the newest line the Term holds.
    pub(super) fn held_lines(&self) -> (u64, u64) {
        let grid = self.term.grid();
        (self.line_seq(grid.topmost_line()), self.line_seq(grid.bottommost_line()))
    }

    /// The match nearest to `from` in `direction` whose first cell is at `from` or beyond it,
    /// wrapping around the ends of the grid; `None` when nothing matches at all.
    ///
    /// To step from a match to the next one, pass the cell after (newer) or before (older) its
    /// first cell: [`SeqGrid::step_from`] does.
    pub(super) fn next_match(
        &self,
        query: &mut SearchQuery,
        from: SeqPoint,
        direction: SearchDirection,
    ) -> Option<SearchMatch> {
        let origin = self.grid_point(from);
        let dir = match direction {
            SearchDirection::Older => Direction::Left,
            SearchDirection::Newer => Direction::Right,
        };
        let found = self.term.search_next(&mut query.regex, origin, dir, Side::Left, None)?;
        Some(self.seq_match(&found))
    }

    /// The cell to search from to step past `current` in `direction`: the cell before its
    /// first cell (older) or after it (newer), wrapping around the grid.
    pub(super) fn step_from(&self, current: &SearchMatch, direction: SearchDirection) -> SeqPoint {
        let point = self.grid_point(current.start);
        let stepped = match direction {
            SearchDirection::Older => point.sub(self.term, Boundary::None, 1),
            SearchDirection::Newer => point.add(self.term, Boundary::None, 1),
        };
        self.seq_point(stepped)
    }

    /// The numbers of the oldest line the Term holds and of the screen's top row: a search
    /// of everything can be updated from the second after output ([`SearchScope::Since`]).
    pub(super) fn line_bounds(&self) -> (u64, u64) {
        (self.line_seq(self.term.grid().topmost_line()), self.screen_base)
    }

    /// The last cell of the view's bottom row, as a search origin ("above the bottom").
    pub(super) fn view_bottom(&self) -> SeqPoint {
        let (_, bottom) = self.view_lines();
        self.seq_point(Point::new(bottom, self.term.grid().last_column()))
    }

    /// The scroll, as `Scroll::Delta` takes it, that shows the first line of `m` clear of the
    /// view's bottom `covered` rows; `None` when the line is shown already or no longer held.
    pub(super) fn scroll_for_match(&self, m: &SearchMatch, covered: u16) -> Option<i32> {
        let line = self.seq_line(m.start.seq)?;
        let grid = self.term.grid();
        let rows = grid.screen_lines() as i32;
        let offset = grid.display_offset() as i32;
        let top = -offset;
        let usable = (rows - i32::from(covered)).max(1);
        if line.0 >= top && line.0 < top + usable {
            return None;
        }
        let wanted = (usable / 2 - line.0).clamp(0, grid.history_size() as i32);
        Some(wanted - offset)
    }

    /// The parts of `m` on the view's rows.
    pub(super) fn view_spans(&self, m: &SearchMatch) -> Vec<ViewSpan> {
        let grid = self.term.grid();
        let (top, bottom) = self.view_lines();
        let cols = u16::try_from(grid.columns()).unwrap_or(u16::MAX);
        let (Some(first), Some(last)) = (self.seq_line(m.start.seq), self.seq_line(m.end.seq))
        else {
            return Vec::new();
        };
        let mut spans = Vec::new();
        for line in first.0.max(top.0)..=last.0.min(bottom.0) {
            let from = if line == first.0 { m.start.col } else { 0 };
            let to = if line == last.0 { m.end.col.saturating_add(1).min(cols) } else { cols };
            if from < to {
                // The row is within the view, whose height came from a `u16`.
                spans.push(ViewSpan { row: (line - top.0) as u16, cols: from..to });
            }
        }
        spans
    }

    /// The number of the line at grid line `line` (0 is the screen's top row).
    fn line_seq(&self, line: Line) -> u64 {
        // Lines reach at most the history's size above the screen, whose top is numbered
        // `screen_base` ≥ that size, so the sum is not negative.
        (self.screen_base as i64 + i64::from(line.0)).max(0) as u64
    }

    /// The grid line numbered `seq`, if the Term still holds it.
    fn seq_line(&self, seq: u64) -> Option<Line> {
        let grid = self.term.grid();
        let line = i64::try_from(seq).ok()? - self.screen_base as i64;
        let top = i64::from(grid.topmost_line().0);
        let bottom = i64::from(grid.bottommost_line().0);
        // Within the grid's lines, which fit in an i32.
        (top..=bottom).contains(&line).then_some(Line(line as i32))
    }

    /// A grid point as a [`SeqPoint`].
    fn seq_point(&self, point: Point) -> SeqPoint {
        let col = u16::try_from(point.column.0).unwrap_or(u16::MAX);
        SeqPoint { seq: self.line_seq(point.line), col }
    }

    /// A [`SeqPoint`] as a grid point, clamped onto the grid (a line that left the history is
    /// its top line, one not written yet its bottom line).
    fn grid_point(&self, point: SeqPoint) -> Point {
        let grid = self.term.grid();
        let line = self.seq_line(point.seq).unwrap_or_else(|| {
            if point.seq < self.line_seq(grid.topmost_line()) {
                grid.topmost_line()
            } else {
                grid.bottommost_line()
            }
        });
        let col = Column(usize::from(point.col).min(grid.last_column().0));
        Point::new(line, col)
    }

    /// An alacritty match as a [`SearchMatch`].
    fn seq_match(&self, m: &Match) -> SearchMatch {
        SearchMatch { start: self.seq_point(*m.start()), end: self.seq_point(*m.end()) }
    }

    /// The grid lines of the view's top and bottom rows.
    fn view_lines(&self) -> (Line, Line) {
        let grid = self.term.grid();
        let top = Line(-(grid.display_offset() as i32));
        (top, top + (grid.screen_lines() as i32 - 1))
    }
}

/// `text` with every regex metacharacter escaped, so it matches itself.
fn escape_regex(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '.'
                | '+'
                | '*'
                | '?'
                | '('
                | ')'
                | '|'
                | '['
                | ']'
                | '{'
                | '}'
                | '^'
                | '$'
                | '#'
                | '&'
                | '-'
                | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// What a regex error says, in one line: the innermost cause (the outer errors only say "error
/// building NFA"), its last line (the parser's message repeats the pattern and points at the
/// error with a caret on the lines before).
fn short_error(err: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = err;
    while let Some(source) = inner.source() {
        inner = source;
    }
    let message = inner.to_string();
    let line = message
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.chars().all(|c| c == '^' || c == ' '))
        .unwrap_or(&message);
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}

#[cfg(test)]
mod tests;
