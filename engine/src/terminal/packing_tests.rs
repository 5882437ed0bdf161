//! Tests of the packed history (vendor/alacritty_terminal/BERTH.md, "history rows packed"): the
//! same bytes fed to a terminal that packs its history rows and to one that keeps every row
//! plain, as upstream does, must give the same cells (characters, colours, flags, zero-width
//! characters, hyperlinks, underline colours) on every line, the same text for `pane.read`, the
//! same search matches and selections, through scrolling regions, resizes with reflow, the
//! alternate screen and a full history.

use alacritty_terminal::index::{Column, Point, Side};
use alacritty_terminal::selection::{Selection, SelectionType};

use super::*;

/// A terminal that packs its history and one that does not, both `cols` x `rows`.
fn pair(cols: u16, rows: u16, scrollback: usize) -> (PaneTerminal, PaneTerminal) {
    let size = TermSize { cols, rows };
    let packed = PaneTerminal::new(size, scrollback);
    let mut plain = PaneTerminal::new(size, scrollback);
    plain.term.grid_mut().set_history_packing(false);
    (packed, plain)
}

/// Feeds `bytes` to both terminals.
fn feed(pair: &mut (PaneTerminal, PaneTerminal), bytes: &[u8]) {
    pair.0.feed(bytes);
    pair.1.feed(bytes);
}

/// Resizes both terminals.
fn resize(pair: &mut (PaneTerminal, PaneTerminal), cols: u16, rows: u16) {
    pair.0.resize(TermSize { cols, rows });
    pair.1.resize(TermSize { cols, rows });
}

/// Asserts that both terminals hold the same cells on every line and read the same, and that
/// the packing terminal packed its history (`min_packed` rows at least) and kept no decoded
/// copies after its last feed. Returns how many history rows were packed.
fn assert_same(pair: &(PaneTerminal, PaneTerminal), min_packed: usize, context: &str) -> usize {
    let (a, b) = (pair.0.term().grid(), pair.1.term().grid());
    assert_eq!(a.history_size(), b.history_size(), "{context}: history size");
    assert_eq!(a.screen_lines(), b.screen_lines(), "{context}: screen lines");
    assert_eq!(a.columns(), b.columns(), "{context}: columns");
    assert_eq!(a.cursor, b.cursor, "{context}: cursor");
    assert_eq!(a.display_offset(), b.display_offset(), "{context}: display offset");
    let mut packed = 0;
    for line in (a.topmost_line().0..=a.bottommost_line().0).map(Line) {
        let (row_a, row_b) = (&a[line], &b[line]);
        assert!(!row_b.is_packed() || line.0 >= 0, "{context}: the plain terminal packed {line}");
        if row_a.is_packed() && line.0 < 0 {
            assert!(!row_a.is_decoded(), "{context}: {line} was left decoded");
            packed += 1;
        }
        assert_eq!(row_a.len(), row_b.len(), "{context}: length of {line}");
        // Decoded for this read only, then through `Index` (decoded and kept).
        let uncached = row_a.cells_uncached();
        if let Some(column) = (0..row_b.len()).find(|&c| uncached.get(c) != Some(&row_b[Column(c)]))
        {
            panic!(
                "{context}: cells of {line} (uncached, {} of {}) differ at {column}: {:?} against {:?}",
                uncached.len(),
                row_b.len(),
                uncached.get(column),
                row_b[Column(column)]
            );
        }
        for column in 0..row_a.len() {
            assert_eq!(row_a[Column(column)], row_b[Column(column)], "{context}: {line} {column}");
        }
        assert!(row_a == row_b, "{context}: rows at {line}");
    }
    assert!(packed >= min_packed, "{context}: only {packed} history rows packed");
    for ansi in [false, true] {
        let all = ReadRequest { since: Some(0), last: None, ansi };
        assert_eq!(pair.0.read(&all), pair.1.read(&all), "{context}: pane.read (ansi {ansi})");
    }
    packed
}

/// A reproducible stream of pseudo-random numbers (a 64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Output with every kind of cell: SGR colours (16, 256, truecolor), bold, inverse, underline
/// styles with colours, wide characters, combining characters, hyperlinks, tabs, erases with a
/// background colour, long lines that wrap, and plain lines.
fn mixed_output(seed: u64, lines: usize) -> Vec<u8> {
    let mut rnd = Lcg(seed);
    let words =
        ["build", "ok", "漢字", "emoji 🦀", "e\u{301}te\u{301}", "tab\there", "naïve", "ｆｕｌｌ"];
    let mut out = String::new();
    for n in 0..lines {
        match rnd.below(12) {
            0 => {
                out.push_str(&format!("\x1b[3{}m{n:6}\x1b[0m step \x1b[1;34mok\x1b[0m\r\n", n % 8))
            }
            1 => out.push_str(&format!(
                "\x1b[38;5;{}m\x1b[48;2;{};20;30mcolour\x1b[m\r\n",
                n % 256,
                n % 256
            )),
            2 => out.push_str(&format!(
                "\x1b]8;id=l{n};https://example.com/x\x1b\\link text\x1b]8;;\x1b\\ after\r\n"
            )),
            3 => out.push_str("\x1b[4:3m\x1b[58;2;255;0;0mcurly red underline\x1b[m plain\r\n"),
            4 => out.push_str("\x1b[41mred bg erase\x1b[K\x1b[m\r\n"),
            5 => {
                // A line longer than the widest screen: it wraps.
                for k in 0..(40 + rnd.below(200)) {
                    out.push(char::from(b'a' + (k % 26) as u8));
                }
                out.push_str("\r\n");
            }
            6 => out.push_str(&format!(
                "\x1b[7minverse\x1b[27m \x1b[9mstrike\x1b[m {}\r\n",
                words[n % words.len()]
            )),
            7 => {
                // Wide characters up to the edge of narrow screens.
                out.push_str(&"漢".repeat(1 + rnd.below(30)));
                out.push_str("\r\n");
            }
            8 => out.push_str("\r\n"),
            9 => out.push_str("\x1b[2mdim\x1b[22m\x1b[3mitalic\x1b[23m\x1b[8mhidden\x1b[28m\r\n"),
            10 => out.push_str("zero\u{200b}width and \u{fe0f} selectors x\u{20e3}\r\n"),
            _ => {
                for _ in 0..1 + rnd.below(6) {
                    out.push_str(words[rnd.below(words.len())]);
                    out.push(' ');
                }
                out.push_str("\r\n");
            }
        }
    }
    out.into_bytes()
}

#[test]
fn packed_history_holds_the_same_cells_as_plain_rows() {
    let mut pair = pair(80, 24, 2000);
    feed(&mut pair, &mixed_output(1, 600));
    let packed = assert_same(&pair, 500, "after 600 lines");
    assert!(packed > 500, "the history is packed: {packed}");
}

#[test]
fn packed_history_survives_resizes_that_reflow_it() {
    let mut pair = pair(80, 24, 2000);
    feed(&mut pair, &mixed_output(2, 400));
    for (cols, rows) in [(37, 24), (131, 30), (23, 10), (200, 50), (80, 24), (79, 5)] {
        resize(&mut pair, cols, rows);
        assert_same(&pair, 100, &format!("resized to {cols}x{rows}"));
        feed(&mut pair, &mixed_output(u64::from(cols), 50));
        assert_same(&pair, 100, &format!("output at {cols}x{rows}"));
    }
}

#[test]
fn packed_history_keeps_a_full_history_exact() {
    // The history is full: the oldest rows are reused for new lines.
    let mut pair = pair(60, 10, 100);
    feed(&mut pair, &mixed_output(3, 1000));
    assert_same(&pair, 90, "full history");
    // Clearing the history keeps its rows for reuse; new output must not show them.
    feed(&mut pair, b"\x1b[3J\x1b[2J\x1b[H");
    assert_same(&pair, 0, "history cleared");
    feed(&mut pair, &mixed_output(4, 30));
    assert_same(&pair, 15, "after the clear");
}

#[test]
fn packed_history_through_scrolling_regions_and_multi_line_scrolls() {
    let mut pair = pair(70, 20, 500);
    feed(&mut pair, &mixed_output(5, 30));
    // A region from the top: lines scroll into the history above fixed bottom lines.
    feed(&mut pair, b"\x1b[1;12r\x1b[12;1H");
    feed(&mut pair, &mixed_output(6, 40));
    // SU of several lines, a region not at the top (no history), reverse index.
    feed(&mut pair, b"\x1b[5S\x1b[3;9r\x1b[9;1H");
    feed(&mut pair, &mixed_output(7, 20));
    feed(&mut pair, b"\x1b[r\x1b[1;1H\x1bM\x1bM\x1b[4T");
    feed(&mut pair, &mixed_output(8, 40));
    // ED 2 with the cursor below content scrolls the screen into the history (clear_viewport).
    feed(&mut pair, b"\x1b[20;1Hbottom\x1b[2J");
    feed(&mut pair, &mixed_output(9, 10));
    assert_same(&pair, 50, "regions");
}

#[test]
fn packed_history_across_the_alternate_screen_and_a_resize_on_it() {
    let mut pair = pair(80, 24, 1000);
    feed(&mut pair, &mixed_output(10, 200));
    feed(&mut pair, b"\x1b[?1049h");
    feed(&mut pair, &mixed_output(11, 60));
    resize(&mut pair, 50, 20);
    feed(&mut pair, &mixed_output(12, 10));
    feed(&mut pair, b"\x1b[?1049l");
    feed(&mut pair, &mixed_output(13, 30));
    assert_same(&pair, 150, "after the alternate screen");
}

#[test]
fn a_row_with_more_styles_than_a_packed_row_holds_stays_plain_and_exact() {
    let mut pair = pair(300, 5, 100);
    let mut line = String::new();
    for n in 0..300 {
        line.push_str(&format!("\x1b[38;2;{};{};7mx", n % 256, n / 256));
    }
    feed(&mut pair, line.as_bytes());
    feed(&mut pair, b"\x1b[m\r\n");
    feed(&mut pair, &mixed_output(14, 20));
    assert_same(&pair, 10, "many styles");
    let grid = pair.0.term().grid();
    let top = grid.topmost_line();
    assert!(!grid[top].is_packed(), "300 styles cannot be packed");
}

#[test]
fn reading_packed_history_keeps_it_decoded_only_until_the_next_feed() {
    let mut pair = pair(80, 10, 500);
    feed(&mut pair, &mixed_output(15, 100));
    let line = Line(-50);
    assert!(pair.0.term().grid()[line].is_packed());
    // `Index` decodes and keeps; rendering a row as text does not keep its decoded cells.
    let _ = &pair.0.term().grid()[line][Column(3)];
    assert!(pair.0.term().grid()[line].is_decoded());
    let _ = pair.0.read(&ReadRequest { since: Some(0), last: None, ansi: true });
    assert!(!pair.0.term().grid()[Line(-40)].is_decoded(), "pane.read decoded for good");
    // A quiet PTY (the server's idle tick) sheds it too.
    pair.0.settle();
    assert!(!pair.0.term().grid()[line].is_decoded(), "settle sheds it");
    let _ = &pair.0.term().grid()[line][Column(3)];
    feed(&mut pair, b"more\r\n");
    assert!(!pair.0.term().grid()[Line(line.0 - 1)].is_decoded(), "the next feed sheds it");
    assert_same(&pair, 90, "after reads");
}

#[test]
fn search_and_selection_over_packed_history_match_plain_rows() {
    let mut pair = pair(60, 12, 1000);
    feed(&mut pair, &mixed_output(16, 300));
    for text in ["ok", "漢字", "link text", "naïve", "ｆｕｌｌ", "a.c", "red bg"] {
        let mut query_a = SearchQuery::new(text).expect("a valid query");
        let mut query_b = SearchQuery::new(text).expect("a valid query");
        let found_a = pair.0.search_matches(&mut query_a, SearchScope::Everything, 10_000);
        let found_b = pair.1.search_matches(&mut query_b, SearchScope::Everything, 10_000);
        assert!(!found_b.is_empty(), "{text} is in the output");
        assert_eq!(found_a, found_b, "matches of {text}");
    }
    for (kind, from, to) in [
        (SelectionType::Simple, Point::new(Line(-200), Column(5)), Point::new(Line(3), Column(20))),
        (
            SelectionType::Block,
            Point::new(Line(-150), Column(2)),
            Point::new(Line(-100), Column(9)),
        ),
        (
            SelectionType::Lines,
            Point::new(Line(-250), Column(0)),
            Point::new(Line(-240), Column(0)),
        ),
        (
            SelectionType::Semantic,
            Point::new(Line(-120), Column(4)),
            Point::new(Line(-110), Column(4)),
        ),
    ] {
        let mut texts = Vec::new();
        for term in [&mut pair.0, &mut pair.1] {
            let mut selection = Selection::new(kind, from, Side::Left);
            selection.update(to, Side::Right);
            term.term.selection = Some(selection);
            texts.push(term.term.selection_to_string());
        }
        assert!(texts[1].as_ref().is_some_and(|text| !text.is_empty()), "{kind:?} selects text");
        assert_eq!(texts[0], texts[1], "{kind:?} selection");
    }
}

#[test]
fn a_flood_leaves_its_lines_plain_until_the_pane_settles() {
    let mut pair = pair(100, 20, 3000);
    feed(&mut pair, &mixed_output(17, 100));
    assert_same(&pair, 80, "before the flood");
    // Past FLOOD_BYTES since the pane last settled, new history lines stay plain.
    // No bulk pack during the flood (a day between them), so that what it left is known.
    pair.0.flood_pack_every = Duration::from_secs(86_400);
    let flood = mixed_output(18, 40_000);
    assert!(flood.len() > FLOOD_BYTES, "the flood is {} bytes", flood.len());
    for chunk in flood.chunks(16 * 1024) {
        feed(&mut pair, chunk);
    }
    let grid = pair.0.term().grid();
    assert!(grid.history_packing_backlog() > 1000, "{}", grid.history_packing_backlog());
    assert!(!grid[Line(-1)].is_packed(), "the newest history line waits");
    assert_same(&pair, 0, "during the flood");
    pair.0.settle();
    pair.1.settle();
    assert_eq!(pair.0.term().grid().history_packing_backlog(), 0);
    let packed = assert_same(&pair, 2900, "after the flood");
    assert_eq!(packed, pair.0.term().grid().history_size(), "every history row is packed");
    // Output after it is packed line by line again.
    feed(&mut pair, &mixed_output(19, 50));
    assert!(pair.0.term().grid()[Line(-1)].is_packed());
    assert_same(&pair, 2900, "after more output");
}

#[test]
fn a_long_flood_packs_its_history_in_bulk_as_it_goes() {
    let mut pair = pair(100, 20, 3000);
    // Every feed is late for the bulk pack: each one packs the backlog it left.
    pair.0.flood_pack_every = Duration::ZERO;
    for chunk in mixed_output(20, 40_000).chunks(16 * 1024) {
        feed(&mut pair, chunk);
        assert_eq!(pair.0.term().grid().history_packing_backlog(), 0);
    }
    assert!(pair.0.flood_packed_at.is_some(), "the output was a flood");
    let packed = assert_same(&pair, 2900, "a long flood");
    assert_eq!(packed, pair.0.term().grid().history_size(), "every history row is packed");
}

/// Issue 28: the pages a long flood's bulk packs freed went back to the system only when the
/// flood ended; the terminal now says when it packed in bulk, once, so its reader can hand
/// them back as the flood goes on.
#[test]
fn a_bulk_pack_is_reported_once_and_plain_output_reports_none() {
    let mut pair = pair(100, 20, 3000);
    feed(&mut pair, &mixed_output(22, 50));
    assert!(!pair.0.take_packed_in_bulk(), "output that is no flood packs line by line");
    pair.0.flood_pack_every = Duration::ZERO;
    let mut reported = 0;
    for chunk in mixed_output(23, 40_000).chunks(16 * 1024) {
        feed(&mut pair, chunk);
        reported += usize::from(pair.0.take_packed_in_bulk());
    }
    assert!(reported > 0, "a long flood packs in bulk as it goes");
    assert!(!pair.0.take_packed_in_bulk(), "each bulk pack is reported once");
    assert_same(&pair, 2900, "after the reported packs");
}

#[test]
fn a_changed_packed_history_row_is_packed_again_by_the_next_feed() {
    let mut pair = pair(80, 10, 500);
    feed(&mut pair, &mixed_output(21, 100));
    for term in [&mut pair.0, &mut pair.1] {
        term.term.grid_mut()[Line(-30)][Column(2)].c = 'Z';
    }
    assert!(!pair.0.term().grid()[Line(-30)].is_packed(), "a change makes the row plain");
    feed(&mut pair, b"x\r\n");
    let grid = pair.0.term().grid();
    assert!(grid[Line(-31)].is_packed(), "the feed packed it again");
    assert_eq!(grid[Line(-31)].cells_uncached()[2].c, 'Z');
    assert_same(&pair, 95, "after the change");
}

/// Regression (issue 28): fifty panes flooding at once kept every history row plain, 24 MB
/// each at 200 columns (1.3 GB for the server); the plain rows of all floods now share one
/// budget, past which flooding terminals pack their lines as they come.
#[test]
fn floods_share_one_budget_of_plain_history() {
    let cols = 400u16;
    let one = 5000 * usize::from(cols);
    // A budget of the test's own (other tests' floods share the process's).
    let budget: &'static FloodBudget = Box::leak(Box::new(FloodBudget::new(2 * one)));
    let mut terms: Vec<PaneTerminal> =
        (0..6).map(|_| PaneTerminal::new(TermSize { cols, rows: 10 }, 5000)).collect();
    for term in &mut terms {
        term.flood_budget = budget;
        // No bulk pack by the clock: only the budget packs.
        term.flood_pack_every = Duration::from_secs(86_400);
    }
    let chunk = "y\r\n".repeat(500);
    let mut most = 0;
    for _ in 0..(FLOOD_BYTES / chunk.len() + 20) {
        for term in &mut terms {
            term.feed(chunk.as_bytes());
            most = most.max(budget.plain_cells());
        }
    }
    // Each terminal overshoots by at most the lines of one feed before it sees the budget.
    let feed = 500 * usize::from(cols);
    assert!(most <= 2 * one + terms.len() * feed, "{most} plain cells at most");
    let texts: Vec<_> = terms.iter().map(|t| t.screen_lines(false)).collect();
    assert!(texts.iter().all(|t| t.last().is_some_and(|l| l == "y")), "{:?}", texts[0]);
    drop(terms);
    assert_eq!(budget.plain_cells(), 0, "a terminal gives its part back when it goes");
}
