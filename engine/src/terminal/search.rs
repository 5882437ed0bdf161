//! Search in one pane's scrollback: a query compiled for alacritty's regex search, matches
//! named by `content_seq` line numbers, stepping between them and scrolling the view to one.
//!
//! It owns [`SearchQuery`] (a regex, or the query taken literally when it is not a valid
//! regex; smart case), [`SearchMatch`] and the search methods of [`PaneTerminal`]. It must not
//! keep any state of its own between calls (the window owns which match is current) and must
//! not change the grid: the only change it makes is the view's scroll position.
//!
//! Matches are named by line numbers (`content_seq`, see the terminal's module documentation)
//! rather than grid lines, so a match keeps its name while new output scrolls it up into the
//! history. The whole grid the Term holds is searched, history and screen; on the alternate
//! screen that is only its rows.

use std::ops::Range;

use alacritty_terminal::grid::{Dimensions, Scroll};
use alacritty_terminal::index::{Boundary, Column, Direction, Line, Point, Side};
use alacritty_terminal::term::search::{Match, RegexIter, RegexSearch};

use super::PaneTerminal;

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

impl PaneTerminal {
    /// Matches of `query` in `scope`, oldest first, at most `max` of them.
    pub fn search_matches(
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
        RegexIter::new(start, end, Direction::Right, &self.term, &mut query.regex)
            .filter(|m| match scope {
                SearchScope::Everything => true,
                SearchScope::View => m.end().line >= view_top && m.start().line <= view_bottom,
                SearchScope::Since(_) => since.is_none_or(|line| m.end().line >= line),
            })
            .take(max)
            .map(|m| self.seq_match(&m))
            .collect()
    }

    /// The match nearest to `from` in `direction` whose first cell is at `from` or beyond it,
    /// wrapping around the ends of the grid; `None` when nothing matches at all.
    ///
    /// To step from a match to the next one, pass the cell after (newer) or before (older) its
    /// first cell: [`PaneTerminal::step_from`] does.
    pub fn next_match(
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
    pub fn step_from(&self, current: &SearchMatch, direction: SearchDirection) -> SeqPoint {
        let point = self.grid_point(current.start);
        let stepped = match direction {
            SearchDirection::Older => point.sub(&self.term, Boundary::None, 1),
            SearchDirection::Newer => point.add(&self.term, Boundary::None, 1),
        };
        self.seq_point(stepped)
    }

    /// The numbers of the oldest line the Term holds and of the screen's top row: a search
    /// of everything can be updated from the second after output ([`SearchScope::Since`]).
    pub fn line_bounds(&self) -> (u64, u64) {
        (self.line_seq(self.term.grid().topmost_line()), self.seq.screen_base())
    }

    /// The last cell of the view's bottom row, as a search origin ("above the bottom").
    pub fn view_bottom(&self) -> SeqPoint {
        let (_, bottom) = self.view_lines();
        self.seq_point(Point::new(bottom, self.term.grid().last_column()))
    }

    /// Scrolls the view so that the first line of `m` is shown and not in the view's bottom
    /// `covered` rows (something is drawn over them); a line shown already stays where it is,
    /// another is brought to the middle of the view.
    pub fn scroll_to_match(&mut self, m: &SearchMatch, covered: u16) {
        let Some(line) = self.seq_line(m.start.seq) else { return };
        let grid = self.term.grid();
        let rows = grid.screen_lines() as i32;
        let offset = grid.display_offset() as i32;
        let top = -offset;
        let usable = (rows - i32::from(covered)).max(1);
        if line.0 >= top && line.0 < top + usable {
            return;
        }
        let wanted = (usable / 2 - line.0).clamp(0, grid.history_size() as i32);
        self.term.scroll_display(Scroll::Delta(wanted - offset));
    }

    /// The parts of `m` on the view's rows.
    pub fn view_spans(&self, m: &SearchMatch) -> Vec<ViewSpan> {
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
        (self.seq.screen_base() as i64 + i64::from(line.0)).max(0) as u64
    }

    /// The grid line numbered `seq`, if the Term still holds it.
    fn seq_line(&self, seq: u64) -> Option<Line> {
        let grid = self.term.grid();
        let line = i64::try_from(seq).ok()? - self.seq.screen_base() as i64;
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
mod tests {
    use super::*;
    use crate::terminal::TermSize;

    fn terminal(cols: u16, rows: u16, text: &str) -> PaneTerminal {
        let mut term = PaneTerminal::new(TermSize { cols, rows }, 1000);
        term.feed(text.as_bytes());
        term
    }

    fn query(text: &str) -> SearchQuery {
        SearchQuery::new(text).expect("a valid query")
    }

    /// The text a match covers, read back through `pane.read`'s lines.
    fn matched_text(term: &PaneTerminal, m: &SearchMatch) -> String {
        let lines = term.read(&crate::terminal::ReadRequest {
            since: Some(m.start.seq),
            last: None,
            ansi: false,
        });
        let mut out = String::new();
        for (i, line) in lines.lines.iter().enumerate() {
            let seq = m.start.seq + i as u64;
            if seq > m.end.seq {
                break;
            }
            let chars: Vec<char> = line.chars().collect();
            let from = if seq == m.start.seq { usize::from(m.start.col) } else { 0 };
            let to = if seq == m.end.seq { usize::from(m.end.col) + 1 } else { chars.len() };
            out.extend(&chars[from.min(chars.len())..to.min(chars.len())]);
        }
        out
    }

    #[test]
    fn finds_matches_in_the_scrollback_and_on_the_screen() {
        // 30 lines on a 5-row screen: most of them are in the history.
        let text: String = (0..30).map(|n| format!("line {n} {}\r\n", n % 7)).collect();
        let term = terminal(20, 5, &text);
        let mut q = query("line 1");
        let all = term.search_matches(&mut q, SearchScope::Everything, 100);
        // line 1, line 10..19: eleven, oldest first.
        assert_eq!(all.len(), 11, "{all:?}");
        assert!(all.windows(2).all(|w| w[0] < w[1]), "oldest first: {all:?}");
        assert_eq!(matched_text(&term, &all[0]), "line 1");
        assert_eq!(term.search_matches(&mut q, SearchScope::Everything, 3).len(), 3);
        // The view is the live screen (lines 26..29 and the empty prompt line): none match.
        assert!(term.search_matches(&mut q, SearchScope::View, 100).is_empty());
    }

    #[test]
    fn smart_case() {
        let term = terminal(30, 4, "Error error ERROR\r\n");
        let count = |t: &str| term.search_matches(&mut query(t), SearchScope::Everything, 9).len();
        assert_eq!(count("error"), 3, "lower case ignores case");
        assert_eq!(count("Error"), 1, "an upper-case letter makes it exact");
    }

    #[test]
    fn a_match_across_a_wrapped_line_spans_two_rows() {
        // "needle" starts 3 columns before the edge of a 10-column screen and wraps.
        let term = terminal(10, 4, "abcdefgneedle\r\n");
        let mut q = query("needle");
        let all = term.search_matches(&mut q, SearchScope::Everything, 10);
        assert_eq!(all.len(), 1, "{all:?}");
        let m = all[0];
        assert_eq!((m.start.col, m.end.col), (7, 2));
        assert_eq!(m.end.seq, m.start.seq + 1);
        assert_eq!(
            term.view_spans(&m),
            vec![ViewSpan { row: 0, cols: 7..10 }, ViewSpan { row: 1, cols: 0..3 }]
        );
    }

    #[test]
    fn stepping_goes_both_ways_and_wraps_around() {
        let text: String = (0..12).map(|n| format!("item {n}\r\n")).collect();
        let mut term = terminal(20, 4, &text);
        let mut q = query("item");
        let all = term.search_matches(&mut q, SearchScope::Everything, 100);
        assert_eq!(all.len(), 12);
        // From the bottom, the nearest match above is the newest one.
        let mut current = term.next_match(&mut q, term.view_bottom(), SearchDirection::Older);
        assert_eq!(current, Some(all[11]));
        // Older, older … past the oldest it wraps to the newest.
        for expected in (0..11).rev().chain([11]) {
            let from = term.step_from(&current.unwrap(), SearchDirection::Older);
            current = term.next_match(&mut q, from, SearchDirection::Older);
            assert_eq!(current, Some(all[expected]), "stepping older to {expected}");
        }
        // Newer from the newest wraps to the oldest.
        let from = term.step_from(&all[11], SearchDirection::Newer);
        assert_eq!(term.next_match(&mut q, from, SearchDirection::Newer), Some(all[0]));
        let from = term.step_from(&all[3], SearchDirection::Newer);
        assert_eq!(term.next_match(&mut q, from, SearchDirection::Newer), Some(all[4]));

        // Scrolling to an old match brings it into the view, clear of one covered row.
        term.scroll_to_match(&all[2], 1);
        let spans = term.view_spans(&all[2]);
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert!(spans[0].row < 3, "{spans:?}");
        let view = term.search_matches(&mut q, SearchScope::View, 100);
        assert!(view.contains(&all[2]), "{view:?}");
        // A match already shown does not move the view.
        let offset = term.display_offset();
        term.scroll_to_match(&view[0], 1);
        assert_eq!(term.display_offset(), offset);
    }

    #[test]
    fn matches_keep_their_names_as_output_scrolls() {
        let mut term = terminal(20, 4, "find me\r\n");
        let mut q = query("find");
        let before = term.search_matches(&mut q, SearchScope::Everything, 10);
        term.feed("more\r\n".repeat(10).as_bytes());
        let after = term.search_matches(&mut q, SearchScope::Everything, 10);
        assert_eq!(before, after);
        assert_eq!(matched_text(&term, &after[0]), "find");
    }

    #[test]
    fn a_search_updated_since_the_screen_top_equals_a_full_one() {
        let mut term = terminal(12, 4, &"item a\r\nan item that wraps\r\n".repeat(5));
        let mut q = query("item");
        let before = term.search_matches(&mut q, SearchScope::Everything, 1000);
        let (_, screen_top) = term.line_bounds();
        // More output, and the screen's rows change under the old matches.
        term.feed(b"\x1b[2J\x1b[Hitem b\r\nno\r\nitem c item\r\n");
        term.feed(&b"item d\r\n".repeat(3));
        let (oldest, _) = term.line_bounds();
        let mut updated: Vec<SearchMatch> = before
            .into_iter()
            .filter(|m| m.start.seq >= oldest && m.end.seq < screen_top)
            .collect();
        updated.extend(term.search_matches(&mut q, SearchScope::Since(screen_top), 1000));
        assert_eq!(updated, term.search_matches(&mut q, SearchScope::Everything, 1000));
    }

    #[test]
    fn an_invalid_regex_is_searched_literally() {
        let term = terminal(30, 4, "call f(x) and f(y)\r\n");
        let mut q = query("f(");
        assert!(q.regex_error().is_some_and(|e| !e.is_empty() && !e.contains('\n')), "{q:?}");
        let all = term.search_matches(&mut q, SearchScope::Everything, 10);
        assert_eq!(all.len(), 2);
        assert_eq!(matched_text(&term, &all[1]), "f(");
        // A valid regex is a regex.
        let mut q = query(r"f\([xy]\)");
        assert_eq!(q.regex_error(), None);
        assert_eq!(term.search_matches(&mut q, SearchScope::Everything, 10).len(), 2);
        assert_eq!(SearchQuery::new("").unwrap_err(), SearchError::Empty);
    }

    #[test]
    fn escaping_makes_every_metacharacter_literal() {
        let text = r"a.b*c+d?e(f)g|h[i]j{k}l^m$n#o&p-q~r\s";
        let term = terminal(60, 3, &format!("{text}\r\n"));
        let mut q = SearchQuery {
            text: text.into(),
            regex: RegexSearch::new(&escape_regex(text)).expect("escaped text compiles"),
            regex_error: None,
        };
        let all = term.search_matches(&mut q, SearchScope::Everything, 10);
        assert_eq!(all.len(), 1);
        assert_eq!(matched_text(&term, &all[0]), text);
    }

    #[test]
    fn nothing_matches_nothing() {
        let term = terminal(20, 4, "hello\r\n");
        let mut q = query("absent");
        assert!(term.search_matches(&mut q, SearchScope::Everything, 10).is_empty());
        assert_eq!(term.next_match(&mut q, term.view_bottom(), SearchDirection::Older), None);
    }
}
