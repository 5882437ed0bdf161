//! Search in an attached window (Ctrl+Shift+F): the same bar, keys and highlights as the
//! embedded window's search (`search.rs`), with the searching done by the server
//! (`pane.search`), which holds the scrollback the window does not.
//!
//! Owns the window's one server-side search: the query, the current match and the view's
//! matches by `content_seq` line, and the status. Every change of the query searches again
//! from where the view's bottom was when the search opened; Enter steps to the next older
//! match and Shift+Enter to the next newer one (wrapping); the server answers with the view's
//! scroll that shows the match (the embedded window's rule: a shown line stays, another comes
//! to the middle), which the window then asks frames for. The matches on the view come with
//! each frame (the puller sends the query with its request), so they follow scrolling and
//! output without a request of their own. It must not send anything to the pane.

use berth_engine::ids::PaneId;
use berth_engine::terminal::SearchDirection;
use berth_server::pane_search::{
    Jump, SearchReply, SearchRequest, WireDirection, WireMatch, WirePoint, MAX_COUNT,
};
use berth_server::screen::PaneFrame;
use winit::keyboard::{Key, ModifiersState};

use super::frame_text::{match_spans, view_top};
use super::remote::Remote;
use super::search::SearchKey;
use crate::render::SearchScene;

/// Rows at the bottom of the pane the search bar covers (as `search.rs`).
const BAR_ROWS: u16 = 1;

/// An open search.
#[derive(Debug)]
struct Open {
    pane: PaneId,
    query: String,
    /// The last cell of the view's bottom row when the search opened.
    origin: Option<WirePoint>,
    current: Option<WireMatch>,
    /// "3/17", "no matches", or why the query cannot be searched.
    status: String,
}

/// The attached window's search part: at most one search, in one pane.
#[derive(Debug, Default)]
pub(super) struct ServerSearch {
    open: Option<Open>,
}

impl ServerSearch {
    /// The pane searched, while the search is open.
    pub(super) fn pane(&self) -> Option<&PaneId> {
        self.open.as_ref().map(|s| &s.pane)
    }

    /// Whether the search is open.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Ctrl+Shift+F: opens the search on `pane`, whose latest frame is `frame`.
    pub(super) fn open(&mut self, pane: &PaneId, frame: Option<&PaneFrame>) {
        if self.pane() == Some(pane) {
            return;
        }
        let origin = frame.map(|f| WirePoint {
            seq: view_top(f) + f.rows.len().saturating_sub(1) as u64,
            col: f.cols.saturating_sub(1),
        });
        self.open = Some(Open {
            pane: pane.clone(),
            query: String::new(),
            origin,
            current: None,
            status: String::new(),
        });
    }

    /// Ends the search when its pane is no longer `active_pane`.
    pub(super) fn end_unless_focused(&mut self, active_pane: &PaneId, remote: &Remote) {
        if self.pane().is_some_and(|p| p != active_pane) {
            self.close(remote);
        }
    }

    /// Closes the search; the frames stop carrying its matches.
    fn close(&mut self, remote: &Remote) {
        if let Some(search) = self.open.take() {
            remote.set_search(&search.pane, None);
        }
    }

    /// A key press while the search is open: the same keys as the embedded window's search
    /// ([`SearchKey`]).
    pub(super) fn key(
        &mut self,
        key: Key<&str>,
        text: Option<&str>,
        mods: ModifiersState,
        remote: &Remote,
    ) {
        match SearchKey::of(key, text, mods) {
            SearchKey::Close => self.close(remote),
            SearchKey::Step(SearchDirection::Older) => self.step(WireDirection::Older, remote),
            SearchKey::Step(SearchDirection::Newer) => self.step(WireDirection::Newer, remote),
            SearchKey::Backspace => {
                if let Some(search) = &mut self.open {
                    search.query.pop();
                }
                self.requery(remote);
            }
            SearchKey::Clear => {
                if let Some(search) = &mut self.open {
                    search.query.clear();
                }
                self.requery(remote);
            }
            SearchKey::Nothing => {}
            SearchKey::Text(text) => self.text(&text, remote),
        }
    }

    /// Adds typed (or IME-committed, or pasted) text to the query.
    pub(super) fn text(&mut self, text: &str, remote: &Remote) {
        let text: String = text.chars().filter(|c| !c.is_control()).collect();
        if text.is_empty() {
            return;
        }
        if let Some(search) = &mut self.open {
            search.query.push_str(&text);
        }
        self.requery(remote);
    }

    /// The search's part of `pane`'s scene: `frame` and the matches that came with it.
    pub(super) fn scene(
        &self,
        pane: &PaneId,
        frame: &PaneFrame,
        on_view: &[WireMatch],
    ) -> Option<SearchScene> {
        let search = self.open.as_ref().filter(|s| s.pane == *pane)?;
        let mut matches = Vec::new();
        let mut current = 0..0;
        for m in on_view {
            let spans = match_spans(frame, m);
            if Some(*m) == search.current {
                current = matches.len()..matches.len() + spans.len();
            }
            matches.extend(spans);
        }
        Some(SearchScene {
            query: search.query.clone(),
            status: search.status.clone(),
            matches,
            current,
        })
    }

    /// Searches again from the origin after the query changed.
    fn requery(&mut self, remote: &Remote) {
        let Some(search) = &mut self.open else { return };
        search.current = None;
        search.status.clear();
        let query = Some(search.query.as_str()).filter(|q| !q.is_empty());
        remote.set_search(&search.pane, query);
        if search.query.is_empty() {
            return;
        }
        let jump = Jump { from: search.origin, direction: WireDirection::Older, past: false };
        self.jump(jump, remote);
    }

    /// Enter / Shift+Enter: the next older / newer match, wrapping around.
    fn step(&mut self, direction: WireDirection, remote: &Remote) {
        let Some(search) = &self.open else { return };
        if search.query.is_empty() {
            return;
        }
        let jump = match search.current {
            Some(m) => Jump { from: Some(m.start), direction, past: true },
            None => Jump { from: search.origin, direction, past: false },
        };
        self.jump(jump, remote);
    }

    /// Asks the server for the match `jump` finds, makes it current and scrolls the view
    /// there.
    fn jump(&mut self, jump: Jump, remote: &Remote) {
        let Some(search) = &mut self.open else { return };
        let request = SearchRequest {
            pane_id: search.pane.to_string(),
            query: search.query.clone(),
            jump: Some(jump),
            offset: remote.offset(&search.pane),
            covered: BAR_ROWS,
            count: true,
            all: false,
        };
        match remote.search(request) {
            Ok(reply) => {
                search.status = status_of(&reply);
                search.current = reply.current;
                if reply.current.is_some() {
                    remote.scroll_to(&search.pane, reply.offset);
                }
            }
            Err(e) => {
                search.status = e;
                search.current = None;
            }
        }
    }
}

/// The status after the query, as the embedded window words it.
fn status_of(reply: &SearchReply) -> String {
    let mut status = match (reply.current, reply.count) {
        // The server's search stopped at its deadline before it looked everywhere.
        (None, _) if reply.incomplete => "no matches nearby (search stopped)".to_owned(),
        (None, _) => "no matches".to_owned(),
        (Some(_), Some(count)) => {
            let total = if reply.more { format!("{MAX_COUNT}+") } else { count.max(1).to_string() };
            format!("{}/{total}", reply.index.unwrap_or(1))
        }
        // Counting ran past the server's deadline.
        (Some(_), None) => "?/many".to_owned(),
    };
    if let Some(why) = &reply.regex_error {
        status.push_str(&format!("  (as text: {why})"));
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(current: bool, count: Option<usize>, more: bool, why: Option<&str>) -> SearchReply {
        let at = WirePoint { seq: 7, col: 1 };
        SearchReply {
            current: current.then_some(WireMatch { start: at, end: at }),
            offset: 0,
            view_top: 0,
            matches: Vec::new(),
            count,
            more,
            index: count.map(|_| 2),
            regex_error: why.map(str::to_owned),
            incomplete: false,
        }
    }

    #[test]
    fn the_status_reads_as_the_embedded_windows() {
        let cases = [
            (reply(true, Some(17), false, None), "2/17"),
            (reply(true, Some(MAX_COUNT), true, None), "2/9999+"),
            (reply(false, Some(0), false, None), "no matches"),
            (reply(true, None, false, None), "?/many"),
            (reply(true, Some(3), false, Some("unclosed group")), "2/3  (as text: unclosed group)"),
        ];
        for (reply, want) in cases {
            assert_eq!(status_of(&reply), want);
        }
    }
}
