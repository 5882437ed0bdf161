//! `pane.search`: search in a pane's scrollback on the server, for a window that does not hold
//! the rows (an attached window holds only the rows it shows) and for `berth search`.
//!
//! Owns the request and answer ([`SearchRequest`], [`SearchReply`]: matches named by
//! `content_seq` line and column, as the engine's search names them), their bounds (query
//! length, matches counted and listed, a deadline after which the count is skipped) and
//! [`search_terminal`], which runs the engine's search (the same `PaneTerminal` methods the
//! embedded window's search calls); `screen_stream.rs` calls it under the pane's own lock,
//! never the Store's. It must not import the Store (the protocol imports this file). A window's scroll is
//! its own: the request says where the window's view is, the search scrolls the terminal
//! there, finds, scrolls to the match as the embedded window would, reads the view and puts
//! the terminal's scroll back before anyone else sees it (as `screen.frames` does). It must
//! not change the pane otherwise and sends nothing to it.

use std::time::{Duration, Instant};

use berth_engine::terminal::{
    PaneTerminal, SearchDirection, SearchError, SearchMatch, SearchQuery, SearchScope, SeqPoint,
};
use serde::{Deserialize, Serialize};

use crate::error::CommandError;

/// The longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 1024;

/// The most matches counted; more is reported as `more`.
pub const MAX_COUNT: usize = 9999;

/// The most matches listed for the view (or for `all`).
pub const MAX_LISTED: usize = 2000;

/// The most rows a request may say are covered at the view's bottom.
const MAX_COVERED: u16 = 16;

/// After this long under the pane's lock, a search stops before counting (the count is then
/// absent): the PTY reader waits on that lock.
pub const DEADLINE: Duration = Duration::from_millis(250);

/// A cell named by its line's `content_seq` number and its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WirePoint {
    /// The line's number.
    pub seq: u64,
    /// The column.
    pub col: u16,
}

/// A match: its first and last cells, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireMatch {
    /// The first cell.
    pub start: WirePoint,
    /// The last cell.
    pub end: WirePoint,
}

/// Which way a jump goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireDirection {
    /// Towards older output (up).
    #[default]
    Older,
    /// Towards newer output (down).
    Newer,
}

/// Which match becomes current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Jump {
    /// Where to search from: the nearest match at this cell or beyond it in `direction`
    /// (wrapping around); absent: the view's bottom-right cell.
    #[serde(default)]
    pub from: Option<WirePoint>,
    /// The way to go.
    #[serde(default)]
    pub direction: WireDirection,
    /// `from` is the start of the current match: step past it (Enter / Shift+Enter).
    #[serde(default)]
    pub past: bool,
}

/// `pane.search`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// The pane.
    pub pane_id: String,
    /// A regex (alacritty's syntax), searched literally when it is not a valid one; smart
    /// case (case is ignored unless the query has an upper-case letter).
    pub query: String,
    /// Find a match to make current and scroll the view to it; absent: only list the view's
    /// matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jump: Option<Jump>,
    /// Lines the window's view is scrolled back (0: the live screen).
    #[serde(default)]
    pub offset: u32,
    /// Rows at the view's bottom that the window draws over (its search bar): a match there
    /// is scrolled into view.
    #[serde(default)]
    pub covered: u16,
    /// Count every match (up to [`MAX_COUNT`]).
    #[serde(default)]
    pub count: bool,
    /// List every match (up to [`MAX_LISTED`], oldest first) instead of the view's.
    #[serde(default)]
    pub all: bool,
}

/// `pane.search`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchReply {
    /// The match the jump found; absent without a jump or when nothing matches.
    #[serde(default)]
    pub current: Option<WireMatch>,
    /// The view's scroll that shows `current` (the request's, clamped, without one).
    pub offset: u32,
    /// The `content_seq` of the view's top row at that scroll.
    pub view_top: u64,
    /// The matches on that view (or all of them with `all`), oldest first, at most
    /// [`MAX_LISTED`].
    pub matches: Vec<WireMatch>,
    /// How many matches there are in all (at most [`MAX_COUNT`]); absent when not asked for
    /// or when the search ran past its [`DEADLINE`] before counting.
    #[serde(default)]
    pub count: Option<usize>,
    /// There are more than [`MAX_COUNT`] matches.
    #[serde(default)]
    pub more: bool,
    /// The position of `current` among all matches (1-based), when counted.
    #[serde(default)]
    pub index: Option<usize>,
    /// Why the query is not a valid regex, when it was searched for literally.
    #[serde(default)]
    pub regex_error: Option<String>,
}

fn wire_point(p: SeqPoint) -> WirePoint {
    WirePoint { seq: p.seq, col: p.col }
}

fn seq_point(p: WirePoint) -> SeqPoint {
    SeqPoint { seq: p.seq, col: p.col }
}

fn wire_match(m: &SearchMatch) -> WireMatch {
    WireMatch { start: wire_point(m.start), end: wire_point(m.end) }
}

impl SearchRequest {
    /// Checks the bounds a request must keep; the error says which.
    pub fn validate(&self) -> Result<(), CommandError> {
        if self.query.is_empty() {
            return Err(CommandError::BadParams("query is empty".into()));
        }
        if self.query.len() > MAX_QUERY_BYTES {
            return Err(CommandError::BadParams(format!(
                "query is {} bytes; at most {MAX_QUERY_BYTES}",
                self.query.len()
            )));
        }
        if self.covered > MAX_COVERED {
            return Err(CommandError::BadParams(format!("covered must be at most {MAX_COVERED}")));
        }
        Ok(())
    }
}

/// The matches of `query` on the rows `term` shows now (at most [`MAX_LISTED`]), for a frame
/// (`screen.frames` with a search); `None` for a query [`search_terminal`] would refuse.
pub fn view_matches(term: &PaneTerminal, query: &str) -> Option<Vec<WireMatch>> {
    if query.is_empty() || query.len() > MAX_QUERY_BYTES {
        return None;
    }
    let mut query = SearchQuery::new(query).ok()?;
    let found = term.search_matches(&mut query, SearchScope::View, MAX_LISTED);
    Some(found.iter().map(wire_match).collect())
}

/// The search on one terminal, its scroll put back afterwards.
pub fn search_terminal(
    term: &mut PaneTerminal,
    req: &SearchRequest,
) -> Result<SearchReply, CommandError> {
    req.validate()?;
    let started = Instant::now();
    let mut query = match SearchQuery::new(&req.query) {
        Ok(query) => query,
        Err(SearchError::Empty) => return Err(CommandError::BadParams("query is empty".into())),
        Err(e @ SearchError::TooLong(_)) => return Err(CommandError::BadParams(e.to_string())),
    };
    let before = term.display_offset();
    term.scroll_to_bottom();
    term.scroll_display(i32::try_from(req.offset).unwrap_or(i32::MAX));
    let current = req.jump.and_then(|jump| {
        let direction = match jump.direction {
            WireDirection::Older => SearchDirection::Older,
            WireDirection::Newer => SearchDirection::Newer,
        };
        let from = match jump.from.map(seq_point) {
            Some(start) if jump.past => {
                term.step_from(&SearchMatch { start, end: start }, direction)
            }
            Some(from) => from,
            None => term.view_bottom(),
        };
        let found = term.next_match(&mut query, from, direction)?;
        term.scroll_to_match(&found, req.covered);
        Some(found)
    });
    let offset = term.display_offset();
    let view_top = term.screen_base_seq().saturating_sub(offset as u64);
    let scope = if req.all { SearchScope::Everything } else { SearchScope::View };
    let matches: Vec<WireMatch> =
        term.search_matches(&mut query, scope, MAX_LISTED).iter().map(wire_match).collect();
    let (mut count, mut more, mut index) = (None, false, None);
    if req.count && started.elapsed() < DEADLINE {
        let all = term.search_matches(&mut query, SearchScope::Everything, MAX_COUNT + 1);
        more = all.len() > MAX_COUNT;
        count = Some(all.len().min(MAX_COUNT));
        index = current.and_then(|c| all.binary_search(&c).ok()).map(|i| i + 1);
    }
    term.scroll_to_bottom();
    term.scroll_display(i32::try_from(before).unwrap_or(i32::MAX));
    Ok(SearchReply {
        current: current.as_ref().map(wire_match),
        offset: u32::try_from(offset).unwrap_or(u32::MAX),
        view_top,
        matches,
        count,
        more,
        index,
        regex_error: query.regex_error().map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::terminal::TermSize;

    fn terminal(text: &str) -> PaneTerminal {
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 4 }, 1000);
        term.feed(text.as_bytes());
        term
    }

    fn request(query: &str) -> SearchRequest {
        SearchRequest {
            pane_id: "pane_x".into(),
            query: query.into(),
            jump: Some(Jump { from: None, direction: WireDirection::Older, past: false }),
            offset: 0,
            covered: 1,
            count: true,
            all: false,
        }
    }

    #[test]
    fn a_match_far_up_scrolls_the_view_there_and_the_terminal_scroll_is_kept() {
        let mut text = String::from("needle here\r\n");
        for n in 0..200 {
            text.push_str(&format!("line {n}\r\n"));
        }
        let mut term = terminal(&text);
        term.scroll_display(3);
        let reply = search_terminal(&mut term, &request("needle")).unwrap();
        let current = reply.current.expect("the match");
        assert_eq!((current.start.col, current.end.col), (0, 5));
        assert!(reply.offset > 190, "scrolled to the top: {}", reply.offset);
        // The match is on the view the answer describes, and listed for it.
        assert!(current.start.seq >= reply.view_top && current.start.seq < reply.view_top + 3);
        assert_eq!(reply.matches, vec![current]);
        assert_eq!((reply.count, reply.index, reply.more), (Some(1), Some(1), false));
        assert_eq!(term.display_offset(), 3, "the pane's own scroll is put back");

        // Stepping past the only match wraps around to it again.
        let mut step = request("needle");
        step.jump =
            Some(Jump { from: Some(current.start), direction: WireDirection::Newer, past: true });
        let again = search_terminal(&mut term, &step).unwrap();
        assert_eq!(again.current, Some(current));
    }

    #[test]
    fn stepping_goes_through_matches_in_order() {
        let mut term = terminal("ab 1\r\nab 2\r\nab 3\r\n");
        let first = search_terminal(&mut term, &request("ab")).unwrap();
        assert_eq!((first.count, first.index), (Some(3), Some(3)), "the newest first");
        let mut step = request("ab");
        let from = first.current.map(|m| m.start);
        step.jump = Some(Jump { from, direction: WireDirection::Older, past: true });
        let second = search_terminal(&mut term, &step).unwrap();
        assert_eq!(second.index, Some(2));
        let all = SearchRequest { jump: None, all: true, ..request("ab") };
        let listed = search_terminal(&mut term, &all).unwrap();
        assert_eq!(listed.matches.len(), 3);
        assert_eq!(listed.current, None);
    }

    #[test]
    fn counting_is_capped() {
        let text = "x".repeat(20 * 3);
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 4 }, 1000);
        for _ in 0..200 {
            term.feed(format!("{text}\r\n").as_bytes());
        }
        let reply = search_terminal(&mut term, &request("x")).unwrap();
        assert_eq!((reply.count, reply.more), (Some(MAX_COUNT), true));
        assert!(reply.matches.len() <= MAX_LISTED);
    }

    #[test]
    fn bad_queries_get_clear_errors() {
        let mut term = terminal("hello\r\n");
        let long = "a".repeat(MAX_QUERY_BYTES + 1);
        let cases: &[(SearchRequest, &str)] = &[
            (request(""), "query is empty"),
            (request(&long), "at most 1024"),
            (SearchRequest { covered: 99, ..request("a") }, "covered must be at most"),
        ];
        for (req, want) in cases {
            let err = search_terminal(&mut term, req).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} for {:?}", &req.query[..req.query.len().min(8)]);
        }
        // Not a regex: searched literally, and the answer says why.
        let literal = search_terminal(&mut term, &request("hel(")).unwrap();
        assert_eq!(literal.current, None);
        assert!(literal.regex_error.is_some());
        let none = search_terminal(&mut term, &request("zzz")).unwrap();
        assert_eq!((none.current, none.count), (None, Some(0)));
    }
}
