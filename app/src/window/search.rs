//! Search in the focused pane's scrollback (Ctrl+Shift+F): the query typed so far, the current
//! match, the count, and what search does with keys while it is open.
//!
//! Owns the window's one search (in one pane at a time) and its bar's text. Incremental: every
//! change of the query searches again and jumps to the nearest match above where the view's
//! bottom was when the search opened. Enter steps to the next older match, Shift+Enter to the
//! next newer one (both wrap around); Esc closes the search and leaves the view where it is,
//! on the last match shown (typing into the pane afterwards returns it to the live screen, as
//! always). The search ends when its pane stops being the focused pane of the shown tab (it
//! closed, another pane was focused, another tab shown). It must not change the terminal
//! except for the view's scroll position, and sends nothing to the pane.

use std::cell::RefCell;

use berth_engine::ids::PaneId;
use berth_engine::terminal::{
    PaneTerminal, SearchDirection, SearchError, SearchMatch, SearchQuery, SearchScope, SeqPoint,
    TermSize,
};
use winit::keyboard::{Key, ModifiersState, NamedKey};

use crate::render::{CellSpan, SearchScene};

/// Matches counted for the status at most; more shows as "N+".
const MAX_COUNTED: usize = 9999;

/// Matches highlighted on the view at most.
const MAX_SHOWN: usize = 2000;

/// Rows at the bottom of the pane the search bar covers.
const BAR_ROWS: u16 = 1;

/// What a key does to an open search: the same in the embedded window's search and the
/// attached window's (`server_search.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SearchKey {
    /// Esc: close the search, leaving the view where it is.
    Close,
    /// Enter / Shift+Enter: the next older / newer match.
    Step(SearchDirection),
    /// Backspace: the query's last character goes.
    Backspace,
    /// Ctrl+U: the query is cleared, as in a shell.
    Clear,
    /// Typed text goes on the query.
    Text(String),
    /// Nothing (another chord with Ctrl, Alt or Super).
    Nothing,
}

impl SearchKey {
    /// What `key` (with its `text` and the modifiers `mods`) does to an open search.
    pub(super) fn of(key: Key<&str>, text: Option<&str>, mods: ModifiersState) -> Self {
        match key {
            Key::Named(NamedKey::Escape) => SearchKey::Close,
            Key::Named(NamedKey::Enter) if mods.shift_key() => {
                SearchKey::Step(SearchDirection::Newer)
            }
            Key::Named(NamedKey::Enter) => SearchKey::Step(SearchDirection::Older),
            Key::Named(NamedKey::Backspace) => SearchKey::Backspace,
            Key::Character(c) if mods.control_key() && c.eq_ignore_ascii_case("u") => {
                SearchKey::Clear
            }
            _ if mods.control_key() || mods.alt_key() || mods.super_key() => SearchKey::Nothing,
            _ => SearchKey::Text(text.unwrap_or_default().to_owned()),
        }
    }
}

/// An open search.
#[derive(Debug)]
struct PaneSearch {
    /// The pane searched.
    pane: PaneId,
    /// What the user typed.
    query: String,
    /// The compiled query; `None` while the query is empty or cannot be searched. A `RefCell`
    /// because alacritty's search needs its caches mutable while a frame is built.
    compiled: RefCell<Option<SearchQuery>>,
    /// Why the query cannot be searched, if so.
    error: Option<String>,
    /// Where the search started: the last cell of the view's bottom row at Ctrl+Shift+F.
    origin: SeqPoint,
    /// The current match.
    current: Option<SearchMatch>,
    /// All matches, for the count.
    counted: RefCell<Option<Counted>>,
}

/// All matches of a query and the terminal they were found in.
#[derive(Debug)]
struct Counted {
    /// The terminal's revision, size and screen (primary or alternate).
    revision: u64,
    size: TermSize,
    alt_screen: bool,
    /// The number of the screen's top row: the lines above do not change as output comes.
    screen_top: u64,
    /// The matches, oldest first.
    matches: Vec<SearchMatch>,
}

impl Counted {
    /// All matches in `term`, updated from `previous` when only output came since: the
    /// history's matches are kept and only the lines from the old screen's top are searched
    /// again, so counting costs a screen's worth of searching per frame while output streams.
    fn new(term: &PaneTerminal, query: &mut SearchQuery, previous: Option<Counted>) -> Self {
        let (oldest, screen_top) = term.line_bounds();
        let (size, alt_screen) = (term.size(), term.alt_screen());
        let matches = match previous {
            Some(p) if p.size == size && p.alt_screen == alt_screen => {
                let mut kept: Vec<SearchMatch> = p
                    .matches
                    .into_iter()
                    .filter(|m| m.start.seq >= oldest && m.end.seq < p.screen_top)
                    .collect();
                let rest = MAX_COUNTED + 1 - kept.len().min(MAX_COUNTED + 1);
                kept.extend(term.search_matches(query, SearchScope::Since(p.screen_top), rest));
                kept
            }
            _ => term.search_matches(query, SearchScope::Everything, MAX_COUNTED + 1),
        };
        Self { revision: term.revision(), size, alt_screen, screen_top, matches }
    }
}

impl PaneSearch {
    /// The status after the query: "3/17", "no matches", or why it cannot be searched.
    fn status(&self, term: &PaneTerminal, query: &mut SearchQuery) -> String {
        let mut counted = self.counted.borrow_mut();
        if counted.as_ref().is_none_or(|c| c.revision != term.revision()) {
            *counted = Some(Counted::new(term, query, counted.take()));
        }
        let all = counted.as_ref().map(|c| c.matches.as_slice()).unwrap_or_default();
        let mut status = match self.current {
            None => "no matches".to_owned(),
            Some(current) => {
                // The current match's place among all; by position if the lists disagree
                // (overlapping matches found from different origins).
                let index = all
                    .binary_search(&current)
                    .unwrap_or_else(|at| at.saturating_sub(1).min(all.len().saturating_sub(1)));
                let total = if all.len() > MAX_COUNTED {
                    format!("{MAX_COUNTED}+")
                } else {
                    all.len().max(1).to_string()
                };
                format!("{}/{total}", (index + 1).min(all.len().max(1)))
            }
        };
        if let Some(why) = query.regex_error() {
            status.push_str(&format!("  (as text: {why})"));
        }
        status
    }
}

/// The window's search part: at most one search, in one pane. The window hands it the
/// searched pane's terminal; it reads it and moves only its view.
#[derive(Debug, Default)]
pub(super) struct Search {
    open: Option<PaneSearch>,
}

impl Search {
    /// The pane searched, while the search is open.
    pub(super) fn pane(&self) -> Option<&PaneId> {
        self.open.as_ref().map(|s| &s.pane)
    }

    /// Whether the search is open.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Ctrl+Shift+F: opens the search on `pane`, whose terminal is `term`; when it is open
    /// there already, it stays as it is.
    pub(super) fn open(&mut self, pane: &PaneId, term: &PaneTerminal) {
        if self.pane() == Some(pane) {
            return;
        }
        self.open = Some(PaneSearch {
            pane: pane.clone(),
            query: String::new(),
            compiled: RefCell::new(None),
            error: None,
            origin: term.view_bottom(),
            current: None,
            counted: RefCell::new(None),
        });
    }

    /// A key press while the search is open that is not one of the window's chords (those run
    /// as usual): every such key belongs to the search. `term` is the searched pane's
    /// terminal, `None` once it is gone.
    pub(super) fn key(
        &mut self,
        key: Key<&str>,
        text: Option<&str>,
        mods: ModifiersState,
        term: Option<&mut PaneTerminal>,
    ) {
        match SearchKey::of(key, text, mods) {
            SearchKey::Close => self.open = None,
            SearchKey::Step(dir) => self.step(dir, term),
            SearchKey::Backspace => {
                if let Some(search) = &mut self.open {
                    search.query.pop();
                }
                self.requery(term);
            }
            SearchKey::Clear => {
                if let Some(search) = &mut self.open {
                    search.query.clear();
                }
                self.requery(term);
            }
            SearchKey::Nothing => {}
            SearchKey::Text(text) => self.text(&text, term),
        }
    }

    /// Adds typed (or IME-committed, or pasted) text to the query.
    pub(super) fn text(&mut self, text: &str, term: Option<&mut PaneTerminal>) {
        let text: String = text.chars().filter(|c| !c.is_control()).collect();
        if text.is_empty() {
            return;
        }
        if let Some(search) = &mut self.open {
            search.query.push_str(&text);
        }
        self.requery(term);
    }

    /// Ends the search when its pane is no longer `active_pane`, the focused pane of the
    /// shown tab.
    pub(super) fn end_unless_focused(&mut self, active_pane: &PaneId) {
        if self.pane().is_some_and(|p| p != active_pane) {
            self.open = None;
        }
    }

    /// The search's part of `pane`'s scene: the bar and the matches on the view.
    pub(super) fn scene(&self, pane: &PaneId, term: &PaneTerminal) -> Option<SearchScene> {
        let search = self.open.as_ref().filter(|s| s.pane == *pane)?;
        let mut compiled = search.compiled.borrow_mut();
        let Some(query) = compiled.as_mut() else {
            return Some(SearchScene {
                query: search.query.clone(),
                status: search.error.clone().unwrap_or_default(),
                ..SearchScene::default()
            });
        };
        let mut matches = Vec::new();
        let mut current = 0..0;
        for m in term.search_matches(query, SearchScope::View, MAX_SHOWN) {
            let spans = term.view_spans(&m);
            // Every row of a wrapped current match gets the current colour.
            if Some(m) == search.current {
                current = matches.len()..matches.len() + spans.len();
            }
            matches.extend(spans.into_iter().map(|s| CellSpan { row: s.row, cols: s.cols }));
        }
        Some(SearchScene {
            query: search.query.clone(),
            status: search.status(term, query),
            matches,
            current,
        })
    }

    /// Compiles the query again and jumps to the match nearest above the search's origin.
    fn requery(&mut self, term: Option<&mut PaneTerminal>) {
        let Some(search) = &mut self.open else { return };
        search.counted = RefCell::new(None);
        search.current = None;
        search.error = None;
        let compiled = match SearchQuery::new(&search.query) {
            Ok(query) => Some(query),
            Err(SearchError::Empty) => None,
            Err(e) => {
                search.error = Some(e.to_string());
                None
            }
        };
        search.compiled = RefCell::new(compiled);
        let origin = search.origin;
        self.jump(term, |t, q| t.next_match(q, origin, SearchDirection::Older));
    }

    /// Enter / Shift+Enter: the next older / newer match, wrapping around.
    fn step(&mut self, dir: SearchDirection, term: Option<&mut PaneTerminal>) {
        let Some(search) = &self.open else { return };
        let (origin, current) = (search.origin, search.current);
        self.jump(term, |t, q| match current {
            Some(m) => t.next_match(q, t.step_from(&m, dir), dir),
            None => t.next_match(q, origin, dir),
        });
    }

    /// Makes the match `find` returns current and scrolls the view to it.
    fn jump(
        &mut self,
        term: Option<&mut PaneTerminal>,
        find: impl FnOnce(&PaneTerminal, &mut SearchQuery) -> Option<SearchMatch>,
    ) {
        let Some(search) = &mut self.open else { return };
        let found = {
            let mut compiled = search.compiled.borrow_mut();
            let Some(query) = compiled.as_mut() else { return };
            term.as_deref().and_then(|t| find(t, query))
        };
        if let (Some(m), Some(term)) = (&found, term) {
            term.scroll_to_match(m, BAR_ROWS);
        }
        search.current = found;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terminal(text: &str) -> PaneTerminal {
        let mut term = PaneTerminal::new(TermSize { cols: 20, rows: 4 }, 100);
        term.feed(text.as_bytes());
        term
    }

    /// A search for `query` in `term` as Ctrl+Shift+F and typing would leave it.
    fn search(term: &PaneTerminal, query: &str) -> PaneSearch {
        let origin = term.view_bottom();
        let mut compiled = SearchQuery::new(query).ok();
        let current =
            compiled.as_mut().and_then(|q| term.next_match(q, origin, SearchDirection::Older));
        PaneSearch {
            pane: PaneId::parse("pane_test").expect("a pane id"),
            query: query.into(),
            compiled: RefCell::new(compiled),
            error: None,
            origin,
            current,
            counted: RefCell::new(None),
        }
    }

    fn status(term: &PaneTerminal, s: &PaneSearch) -> String {
        let mut compiled = s.compiled.borrow_mut();
        s.status(term, compiled.as_mut().expect("a compiled query"))
    }

    #[test]
    fn the_status_counts_matches_and_says_when_a_query_is_taken_literally() {
        let term = terminal("ab\r\nab\r\nab(\r\n");
        // Typing jumps to the nearest match above the bottom: the newest.
        assert_eq!(status(&term, &search(&term, "ab")), "3/3");
        assert_eq!(status(&term, &search(&term, "zz")), "no matches");
        let literal = status(&term, &search(&term, "ab("));
        assert_eq!(literal, "1/1  (as text: unclosed group)");
        // Stepping older moves the index down.
        let mut s = search(&term, "ab");
        let from = term.step_from(&s.current.unwrap(), SearchDirection::Older);
        s.current = s
            .compiled
            .borrow_mut()
            .as_mut()
            .and_then(|q| term.next_match(q, from, SearchDirection::Older));
        assert_eq!(status(&term, &s), "2/3");
    }

    #[test]
    fn keys_do_the_same_in_both_windows_searches() {
        let none = ModifiersState::empty();
        let cases: &[(Key<&str>, Option<&str>, ModifiersState, SearchKey)] = &[
            (Key::Named(NamedKey::Escape), None, none, SearchKey::Close),
            (Key::Named(NamedKey::Enter), None, none, SearchKey::Step(SearchDirection::Older)),
            (
                Key::Named(NamedKey::Enter),
                None,
                ModifiersState::SHIFT,
                SearchKey::Step(SearchDirection::Newer),
            ),
            (Key::Named(NamedKey::Backspace), None, none, SearchKey::Backspace),
            (Key::Character("U"), None, ModifiersState::CONTROL, SearchKey::Clear),
            (Key::Character("x"), Some("x"), ModifiersState::ALT, SearchKey::Nothing),
            (Key::Character("x"), Some("x"), none, SearchKey::Text("x".into())),
        ];
        for (key, text, mods, want) in cases {
            assert_eq!(SearchKey::of(key.clone(), *text, *mods), *want, "{key:?} {mods:?}");
        }
    }

    #[test]
    fn the_count_follows_streaming_output() {
        let mut term = terminal("hit\r\n");
        let s = search(&term, "hit");
        assert_eq!(status(&term, &s), "1/1");
        for n in 2..=40 {
            term.feed(format!("hit {n}\r\nmiss\r\n").as_bytes());
            // Updated from the previous count, it equals a count from scratch.
            let updated = s.counted.borrow().as_ref().map(|c| c.matches.len());
            assert_eq!(updated, Some(n - 1));
            status(&term, &s);
            let full = {
                let mut q = SearchQuery::new("hit").unwrap();
                term.search_matches(&mut q, SearchScope::Everything, 1000)
            };
            assert_eq!(s.counted.borrow().as_ref().map(|c| c.matches.clone()), Some(full));
        }
    }
}
