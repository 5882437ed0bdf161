//! Unit tests of the scrollback search, through `PaneTerminal`'s search methods.

use super::*;
use crate::terminal::{PaneTerminal, ReadRequest, TermSize};

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
    let lines = term.read(&ReadRequest { since: Some(m.start.seq), last: None, ansi: false });
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
    let mut updated: Vec<SearchMatch> =
        before.into_iter().filter(|m| m.start.seq >= oldest && m.end.seq < screen_top).collect();
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
