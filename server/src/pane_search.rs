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

use std::cell::RefCell;
use std::time::{Duration, Instant};

use alacritty_terminal::sync::FairMutex;
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

/// A search that took this long finding its match skips the count (the count is then absent).
pub const DEADLINE: Duration = Duration::from_millis(250);

/// The count stops here (and is then absent): every step of a search is bounded.
pub const COUNT_DEADLINE: Duration = Duration::from_secs(1);

/// A jump (and an `all` listing) stops here, its answer `incomplete`: a search of 30,000 lines
/// of 4000 columns for something that is not there must not run for ever.
pub const JUMP_DEADLINE: Duration = Duration::from_secs(2);

/// How many cells one step of a search looks at under the pane's lock (then the lock is
/// released, the rows it decoded packed again): the reader and other clients wait at most one
/// step, and a search holds at most a step's decoded rows.
pub const STEP_CELLS: usize = 1 << 20;

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
    /// The search reached its deadline ([`JUMP_DEADLINE`]) before it looked at every line: no
    /// `current` then does not mean that nothing matches.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
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

/// A pane's terminal as a search takes it: one bounded step at a time, the lock released
/// between steps (the PTY reader and every other reader of the pane go on meanwhile).
pub trait TermAccess {
    /// Runs `f` with the terminal (under its lock).
    fn with<R>(&self, f: impl FnOnce(&mut PaneTerminal) -> R) -> R;
}

impl TermAccess for FairMutex<PaneTerminal> {
    fn with<R>(&self, f: impl FnOnce(&mut PaneTerminal) -> R) -> R {
        f(&mut self.lock())
    }
}

impl TermAccess for RefCell<&mut PaneTerminal> {
    fn with<R>(&self, f: impl FnOnce(&mut PaneTerminal) -> R) -> R {
        f(&mut self.borrow_mut())
    }
}

/// The search on one terminal held by the caller, its scroll put back afterwards.
pub fn search_terminal(
    term: &mut PaneTerminal,
    req: &SearchRequest,
) -> Result<SearchReply, CommandError> {
    search_pane(&RefCell::new(term), req)
}

/// The lines one step of a search looks at: about [`STEP_CELLS`] cells.
fn step_lines(cols: u16) -> u64 {
    (STEP_CELLS / usize::from(cols.max(1))).max(1) as u64
}

/// The most matches one step collects (more than a line can hold, see [`last_match_in`]).
const STEP_MATCHES: usize = 1 << 16;

/// One step: the matches starting on lines `first..=last`, the decoded rows shed after; with
/// the lines held then and the terminal's columns.
fn step(
    term: &impl TermAccess,
    query: &mut SearchQuery,
    first: u64,
    last: u64,
    max: usize,
) -> (Vec<SearchMatch>, (u64, u64)) {
    term.with(|t| {
        let found = t.search_lines(query, first, last, max);
        t.shed_decoded();
        (found, t.held_lines())
    })
}

/// The last match starting on lines `first..=last` that `keep` keeps (a step that filled up
/// is looked at again from its last match's line, so dense matches cannot hide the last one).
fn last_match_in(
    term: &impl TermAccess,
    query: &mut SearchQuery,
    (mut first, last): (u64, u64),
    keep: impl Fn(&SearchMatch) -> bool,
) -> (Option<SearchMatch>, (u64, u64)) {
    loop {
        let (found, held) = step(term, query, first, last, STEP_MATCHES);
        let full = found.len() == STEP_MATCHES;
        let best = found.iter().rev().find(|m| keep(m)).copied();
        match found.last() {
            Some(m) if full && m.start.seq > first => first = m.start.seq,
            _ => return (best, held),
        }
    }
}

/// The match nearest to `origin` in `direction` whose first cell is at `origin` or beyond,
/// wrapping around, searched a step at a time until `until`; the
/// flag says the deadline ended it before everything was looked at.
fn jump_from(
    term: &impl TermAccess,
    query: &mut SearchQuery,
    origin: SeqPoint,
    direction: SearchDirection,
    until: Instant,
    step: u64,
) -> (Option<SearchMatch>, bool) {
    let (mut oldest, mut newest) = term.with(|t| t.held_lines());
    let at = origin.seq.clamp(oldest, newest);
    let late = || Instant::now() >= until;
    match direction {
        SearchDirection::Older => {
            // From the origin up to the oldest line: the newest match at or before it.
            let mut hi = at;
            loop {
                if late() {
                    return (None, true);
                }
                let lo = hi.saturating_sub(step - 1).max(oldest);
                let (found, held) = last_match_in(term, query, (lo, hi), |m| m.start <= origin);
                if found.is_some() {
                    return (found, false);
                }
                (oldest, newest) = held;
                if lo <= oldest {
                    break;
                }
                hi = lo - 1;
            }
            // Wrapped: from the newest line down to the origin's, the newest match after it.
            let mut hi = newest;
            loop {
                if late() {
                    return (None, true);
                }
                let lo = hi.saturating_sub(step - 1).max(at);
                let (found, _) = last_match_in(term, query, (lo, hi), |m| m.start > origin);
                if found.is_some() || lo <= at {
                    return (found, false);
                }
                hi = lo - 1;
            }
        }
        SearchDirection::Newer => {
            // From the origin down to the newest line: the oldest match at or after it.
            let mut lo = at;
            loop {
                if late() {
                    return (None, true);
                }
                let hi = lo.saturating_add(step - 1).min(newest.max(lo));
                let (found, held) = step_first(term, query, (lo, hi), |m| m.start >= origin);
                if found.is_some() {
                    return (found, false);
                }
                (oldest, newest) = held;
                if hi >= newest {
                    break;
                }
                lo = hi + 1;
            }
            // Wrapped: from the oldest line down to the origin's, the oldest match before it.
            let mut lo = oldest;
            loop {
                if late() {
                    return (None, true);
                }
                let hi = lo.saturating_add(step - 1).min(at);
                let (found, _) = step_first(term, query, (lo, hi), |m| m.start < origin);
                if found.is_some() || hi >= at {
                    return (found, false);
                }
                lo = hi + 1;
            }
        }
    }
}

/// The first match starting on lines `first..=last` that `keep` keeps.
fn step_first(
    term: &impl TermAccess,
    query: &mut SearchQuery,
    (first, last): (u64, u64),
    keep: impl Fn(&SearchMatch) -> bool,
) -> (Option<SearchMatch>, (u64, u64)) {
    let (found, held) = step(term, query, first, last, STEP_MATCHES);
    (found.into_iter().find(|m| keep(m)), held)
}

/// Every match from the oldest line on, a step at a time, until `max` are found or `until`
/// passes (then the flag is set): for `all` and the count. With `current`, also how many
/// matches start before it and whether it was among them.
fn scan_all(
    term: &impl TermAccess,
    query: &mut SearchQuery,
    max: usize,
    until: Instant,
    step_len: u64,
    mut each: impl FnMut(&SearchMatch),
) -> (usize, bool) {
    let (mut lo, mut newest) = term.with(|t| t.held_lines());
    let mut seen = 0;
    while lo <= newest && seen < max {
        if Instant::now() >= until {
            return (seen, true);
        }
        let hi = lo.saturating_add(step_len - 1);
        let (found, held) = step(term, query, lo, hi, max - seen);
        for m in &found {
            each(m);
        }
        seen += found.len();
        lo = hi.saturating_add(1).max(held.0);
        newest = held.1;
    }
    (seen, false)
}

/// How long each part of a search may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The jump and an `all` listing ([`JUMP_DEADLINE`]).
    pub jump: Duration,
    /// A search whose jump took longer skips the count ([`DEADLINE`]).
    pub count_start: Duration,
    /// The count ([`COUNT_DEADLINE`]).
    pub count: Duration,
}

impl Limits {
    /// The server's limits.
    pub const DEFAULT: Limits =
        Limits { jump: JUMP_DEADLINE, count_start: DEADLINE, count: COUNT_DEADLINE };
}

/// The search on a pane's terminal, taken a bounded step at a time (see [`TermAccess`]), its
/// scroll put back afterwards and the rows it decoded packed again.
pub fn search_pane(
    term: &impl TermAccess,
    req: &SearchRequest,
) -> Result<SearchReply, CommandError> {
    search_pane_within(term, req, Limits::DEFAULT)
}

/// [`search_pane`] within `limits`.
pub fn search_pane_within(
    term: &impl TermAccess,
    req: &SearchRequest,
    limits: Limits,
) -> Result<SearchReply, CommandError> {
    req.validate()?;
    let started = Instant::now();
    let mut query = match SearchQuery::new(&req.query) {
        Ok(query) => query,
        Err(SearchError::Empty) => return Err(CommandError::BadParams("query is empty".into())),
        Err(e @ SearchError::TooLong(_)) => return Err(CommandError::BadParams(e.to_string())),
    };
    let offset = i32::try_from(req.offset).unwrap_or(i32::MAX);
    // Where the jump starts, at the client's own scroll (put back at once).
    let (origin, cols) = term.with(|t| {
        let origin = req.jump.map(|jump| match jump.from.map(seq_point) {
            Some(start) if jump.past => {
                let direction = direction_of(jump.direction);
                t.step_from(&SearchMatch { start, end: start }, direction)
            }
            Some(from) => from,
            None => {
                let before = t.display_offset();
                t.scroll_to_bottom();
                t.scroll_display(offset);
                let bottom = t.view_bottom();
                t.scroll_to_bottom();
                t.scroll_display(i32::try_from(before).unwrap_or(i32::MAX));
                bottom
            }
        });
        (origin, t.size().cols)
    });
    let step_len = step_lines(cols);
    let mut incomplete = false;
    let current = match (req.jump, origin) {
        (Some(jump), Some(origin)) => {
            let direction = direction_of(jump.direction);
            let (found, late) =
                jump_from(term, &mut query, origin, direction, started + limits.jump, step_len);
            incomplete |= late;
            found
        }
        _ => None,
    };
    // The view at the client's scroll, moved to show the match; its matches.
    let (offset, view_top, mut matches) = term.with(|t| {
        let before = t.display_offset();
        t.scroll_to_bottom();
        t.scroll_display(offset);
        if let Some(found) = &current {
            t.scroll_to_match(found, req.covered);
        }
        let shown = t.display_offset();
        let view_top = t.screen_base_seq().saturating_sub(shown as u64);
        let matches: Vec<WireMatch> = if req.all {
            Vec::new()
        } else {
            t.search_matches(&mut query, SearchScope::View, MAX_LISTED)
                .iter()
                .map(wire_match)
                .collect()
        };
        t.scroll_to_bottom();
        t.scroll_display(i32::try_from(before).unwrap_or(i32::MAX));
        t.shed_decoded();
        (shown, view_top, matches)
    });
    if req.all {
        let until = started + limits.jump;
        let (_, late) = scan_all(term, &mut query, MAX_LISTED, until, step_len, |m| {
            matches.push(wire_match(m));
        });
        incomplete |= late;
    }
    let (mut count, mut more, mut index) = (None, false, None);
    if req.count && started.elapsed() < limits.count_start {
        let (mut before, mut hit) = (0usize, false);
        let until = started + limits.count;
        let (seen, late) = scan_all(term, &mut query, MAX_COUNT + 1, until, step_len, |m| {
            if let Some(c) = &current {
                if m.start < c.start {
                    before += 1;
                }
                hit |= m == c;
            }
        });
        if !late {
            more = seen > MAX_COUNT;
            count = Some(seen.min(MAX_COUNT));
            index = hit.then_some(before + 1);
        }
    }
    Ok(SearchReply {
        current: current.as_ref().map(wire_match),
        offset: u32::try_from(offset).unwrap_or(u32::MAX),
        view_top,
        matches,
        count,
        more,
        index,
        regex_error: query.regex_error().map(str::to_owned),
        incomplete,
    })
}

fn direction_of(direction: WireDirection) -> SearchDirection {
    match direction {
        WireDirection::Older => SearchDirection::Older,
        WireDirection::Newer => SearchDirection::Newer,
    }
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

    const WAIT: Duration = Duration::from_secs(120);

    /// Regression (issue 28): a jump over a long history had no deadline; every step of a
    /// search is now bounded, and one that runs out of time says so.
    #[test]
    fn a_search_past_its_deadline_stops_and_says_so() {
        let mut term = PaneTerminal::new(TermSize { cols: 200, rows: 4 }, 20_000);
        let line = format!("{}\r\n", "word ".repeat(39));
        term.feed(line.repeat(12_000).as_bytes());
        let term = FairMutex::new(term);
        let mut req = request("no such text");
        req.all = true;
        let none =
            Limits { jump: Duration::ZERO, count_start: Duration::ZERO, count: Duration::ZERO };
        let reply = search_pane_within(&term, &req, none).unwrap();
        assert!(reply.incomplete, "a search out of time says it looked at part");
        assert_eq!((reply.current, reply.count), (None, None));
        // With time, everything is looked at (12,000 lines of 200 columns, several steps).
        // Deadlines a debug build on a busy machine cannot reach.
        let ample = Limits { jump: WAIT, count_start: WAIT, count: WAIT };
        let reply = search_pane_within(&term, &req, ample).unwrap();
        assert!(!reply.incomplete);
        assert_eq!((reply.current, reply.count), (None, Some(0)));
        // A match far up is found across steps, both ways, and counted.
        let mut text = String::from("needle\r\n");
        text.push_str(&line.repeat(12_000));
        let mut fresh = PaneTerminal::new(TermSize { cols: 200, rows: 4 }, 20_000);
        fresh.feed(text.as_bytes());
        let term = FairMutex::new(fresh);
        let reply = search_pane_within(&term, &request("needle"), ample).unwrap();
        let found = reply.current.expect("the needle, about 12,000 lines up");
        assert_eq!((reply.count, reply.index), (Some(1), Some(1)));
        let mut newer = request("needle");
        newer.jump =
            Some(Jump { from: Some(found.start), direction: WireDirection::Newer, past: true });
        let again = search_pane_within(&term, &newer, ample).unwrap();
        assert_eq!(again.current, Some(found), "wraps around to it");
        assert!(step_lines(200) < 12_000, "the search took several steps");
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
