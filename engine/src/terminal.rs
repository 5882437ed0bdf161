//! One pane's terminal: PTY output in, grid state, text and events out.
//!
//! It owns the alacritty `Term` of a pane, the vte `Processor` that feeds it, the OSC scanner
//! that runs first ([`crate::osc`]), the pane's `content_seq` numbering and the text views of
//! the grid that `pane.read` serves. It must not do I/O, start threads, use tokio, or clear the
//! Term's scrollback beyond trimming it to the ring: the window will render history from
//! [`PaneTerminal::term`].
//!
//! # `content_seq`
//!
//! Every rendered line (a grid row: a long line that wrapped is several rows) has a number.
//! Numbers grow down the grid and a line keeps its number as it scrolls up into the history,
//! so a number names the same line for as long as the pane holds it:
//!
//! ```text
//! seq(line) = (lines that ever scrolled into history) - history_size + index_in(history + screen)
//! ```
//!
//! The count of scrolled lines is exact however the output is chunked and however far it
//! scrolls at once (see `terminal/seq.rs`). The history readable through [`PaneTerminal::read`]
//! is the last `scrollback` lines (the ring); the Term may briefly hold up to 512 more, which
//! the window can show. Exceptions, all documented on the methods: the alternate screen has no
//! history and its rows take the numbers the primary screen's rows would have; clearing the
//! scrollback (`CSI 3 J`) drops lines without renumbering the rest; a resize that reflows
//! wrapped lines renumbers the lines below the top of the history, and if that would move the
//! cursor's line to a lower number, all numbers move up instead, so that a poller never
//! misses output after a resize (it may see some lines twice).

mod alt;
mod answers;
mod colors;
mod listener;
#[cfg(test)]
mod packing_tests;
mod rect;
mod render;
mod search;
mod seq;
#[cfg(test)]
mod tests;
mod titles;
#[cfg(test)]
mod vendor_tests;

pub use self::listener::TermListener;
pub use self::search::{
    SearchDirection, SearchError, SearchMatch, SearchQuery, SearchScope, SeqPoint, ViewSpan,
};

use std::time::{Duration, Instant};

use alacritty_terminal::event::Event;
use alacritty_terminal::grid::{Dimensions, Scroll};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Config, Osc52, TermMode};
use alacritty_terminal::vte::ansi::{CursorStyle, Processor, Rgb};
use alacritty_terminal::Term;

use crate::osc::{Control, OscEvent, OscScanner, Query};

use self::answers::AnswerState;
use self::search::SeqGrid;
use self::seq::{history_cap, SeqHandler, SeqTracker};

/// Default number of scrollback lines per pane; also the size of the `pane.read` ring.
pub const DEFAULT_SCROLLBACK: usize = 5000;

/// The width, in columns, up to which a pane keeps its whole scrollback setting in lines: a
/// wider pane keeps `scrollback × 200 / columns` lines, so every pane's history is bounded in
/// cells (`scrollback × 200`), not in lines (a 4000-column pane would otherwise hold 50 times
/// what a 80-column one does). See [`history_lines`].
pub const SCROLLBACK_COLUMNS: usize = 200;

/// The history lines a terminal of `cols` columns keeps for a setting of `scrollback` lines:
/// all of them up to [`SCROLLBACK_COLUMNS`] columns, proportionally fewer beyond.
pub fn history_lines(scrollback: usize, cols: u16) -> usize {
    let cols = usize::from(cols).max(1);
    if cols <= SCROLLBACK_COLUMNS {
        scrollback
    } else {
        scrollback.saturating_mul(SCROLLBACK_COLUMNS) / cols
    }
}

/// The size a dormant terminal's grid is held at (see [`PaneTerminal::dormant`]).
const DORMANT_SIZE: TermSize = TermSize { cols: 2, rows: 1 };

/// The cells a terminal's grid in use is sized for, as [`PaneTerminal::grid_cells`] counts
/// them (the alternate screen's is a 2×1 placeholder while unused, `terminal/alt.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridCells {
    /// Rows of the grid: its history and its screen.
    pub rows: usize,
    /// Those rows times the grid's columns.
    pub cells: usize,
    /// Rows allocated: those and the cache of rows kept for reuse beyond them.
    pub allocated_rows: usize,
}

/// Output since the pane was last idle ([`PaneTerminal::settle`]) past which it counts as a flood:
/// lines that scroll into the history are then packed in bulk, at most once a second and when
/// the flood ends, instead of one by one (vendor/alacritty_terminal/BERTH.md).
const FLOOD_BYTES: usize = 256 << 10;

/// How often the history is packed during a flood.
const FLOOD_PACK_EVERY: Duration = Duration::from_secs(1);

/// The most history cells that all the terminals of this process keep plain during floods
/// (2 Mi cells, about 50 MB). One flood keeps its whole history plain (5000 lines of 200
/// columns are 1 Mi cells, a quarter more before the oldest go); past the budget, a flooding
/// terminal packs its backlog and packs its lines one by one as they enter the history, as
/// when it does not flood, until the floods together are under the budget again: fifty floods
/// at once no longer hold 24 MB each (issue 28; 4 Mi cells kept thirty `yes` panes at 290 MB).
pub const FLOOD_PLAIN_CELLS: usize = 2 << 20;

/// The plain history cells of flooding terminals' backlogs, summed, and their limit.
#[derive(Debug)]
pub struct FloodBudget {
    plain: std::sync::atomic::AtomicUsize,
    limit: usize,
}

impl FloodBudget {
    /// A budget of `limit` cells.
    pub const fn new(limit: usize) -> Self {
        Self { plain: std::sync::atomic::AtomicUsize::new(0), limit }
    }

    /// The cells kept plain now.
    pub fn plain_cells(&self) -> usize {
        self.plain.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn over(&self) -> bool {
        self.plain_cells() > self.limit
    }
}

/// The budget every terminal shares unless given another.
static FLOOD_BUDGET: FloodBudget = FloodBudget::new(FLOOD_PLAIN_CELLS);

/// The cells all terminals keep plain during floods now (see [`FLOOD_PLAIN_CELLS`]).
pub fn flood_plain_cells() -> usize {
    FLOOD_BUDGET.plain_cells()
}

/// Events held for [`PaneTerminal::take_events`] at most; later ones are dropped until it is
/// called (the title and working directory are still updated).
pub const MAX_PENDING_EVENTS: usize = 4096;

/// Foreground colour reported to programs that ask (OSC 10) until the window has a theme.
pub const DEFAULT_FOREGROUND: Rgb = Rgb { r: 0xd8, g: 0xd8, b: 0xd8 };

/// Background colour reported to programs that ask (OSC 11) until the window has a theme.
pub const DEFAULT_BACKGROUND: Rgb = Rgb { r: 0x1c, g: 0x1c, b: 0x1c };

/// The ANSI colours 0–15 reported to programs that ask (OSC 4) until the window has a theme:
/// the window's default dark theme, xterm's hues with red, blue, magenta, bright black, bright
/// red and bright blue lightened until each reads at 4.5:1 or more on
/// [`DEFAULT_BACKGROUND`] (WCAG AA; black excepted).
pub const DEFAULT_ANSI: [Rgb; 16] = {
    const fn hex(rgb: u32) -> Rgb {
        // The casts keep one byte each, on purpose.
        Rgb { r: (rgb >> 16) as u8, g: (rgb >> 8) as u8, b: rgb as u8 }
    }
    [
        hex(0x000000),
        hex(0xe35a5a),
        hex(0x00cd00),
        hex(0xcdcd00),
        hex(0x6b8cff),
        hex(0xe055e0),
        hex(0x00cdcd),
        hex(0xe5e5e5),
        hex(0x8a8a8a),
        hex(0xff6e6e),
        hex(0x00ff00),
        hex(0xffff00),
        hex(0x9aafff),
        hex(0xff6eff),
        hex(0x00ffff),
        hex(0xffffff),
    ]
};

/// A terminal size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl TermSize {
    /// The size the terminal really uses: at least 2 columns and 1 row.
    ///
    /// alacritty writes the spacer of a wide character one column to its right, past the
    /// edge of a one-column grid, so one column would let a child crash the engine.
    fn clamped(self) -> Self {
        Self { cols: self.cols.max(2), rows: self.rows.max(1) }
    }
}

/// [`TermSize`] as alacritty's `Dimensions`.
struct GridSize(TermSize);

impl Dimensions for GridSize {
    fn total_lines(&self) -> usize {
        self.screen_lines()
    }

    fn screen_lines(&self) -> usize {
        usize::from(self.0.rows)
    }

    fn columns(&self) -> usize {
        usize::from(self.0.cols)
    }
}

/// Something the terminal reports for the rest of Berth to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalEvent {
    /// The title changed (OSC 0/2, or popped from the title stack); `None` resets it.
    Title(Option<String>),
    /// The shell reported its working directory (OSC 7), already decoded to a path.
    Cwd(String),
    /// Bytes to write back to the PTY: replies to queries such as `ESC [ 6 n` (cursor
    /// position), `ESC [ c` (device attributes) or `ESC ] 11 ; ?` (background colour).
    /// Programs hang waiting if these are not written.
    PtyWrite(Vec<u8>),
    /// BEL outside of a control string.
    Bell,
    /// OSC 133 shell integration: `A` prompt, `B` typed, `C` running, `D` finished.
    PromptMark(char),
    /// OSC 9, 99 or 777: a notification request, raw (see [`OscEvent::Notify`]).
    Notify {
        /// The OSC number: 9, 99 or 777.
        kind: u16,
        /// The bytes after the number and its `;`.
        payload: Vec<u8>,
    },
}

/// What to read from a pane (`pane.read`).
///
/// With neither `since` nor `last`, the visible screen is read. With `since`, lines numbered
/// `since` or more; with `last`, the last `last` lines; with both, the last `last` of the
/// lines numbered `since` or more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadRequest {
    /// Read lines whose `content_seq` is at least this (a previous [`ReadResult::next_seq`]).
    pub since: Option<u64>,
    /// Read at most this many lines, the most recent ones.
    pub last: Option<usize>,
    /// Include SGR colour and attribute sequences in the text.
    pub ansi: bool,
}

/// Lines read from a pane, with the numbers a client needs to poll for more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadResult {
    /// The lines, oldest first, without line terminators.
    pub lines: Vec<String>,
    /// Number of `lines[0]`; when `lines` is empty, the number the range would have started at.
    pub first_seq: u64,
    /// Number of the cursor's line: the first line that may still change. Pass it back as
    /// [`ReadRequest::since`] to read what is new.
    pub next_seq: u64,
    /// Some of the requested lines are not in `lines`: they left the ring, are hidden behind
    /// the alternate screen, or were cut by [`ReadRequest::last`].
    pub truncated: bool,
    /// Number of the oldest line that can be read now.
    pub oldest_seq: u64,
}

/// One pane's terminal emulator. `Send + Sync`; not internally synchronised.
pub struct PaneTerminal {
    term: Term<TermListener>,
    listener: TermListener,
    processor: Processor,
    scanner: OscScanner,
    /// Reused buffer for output the scanner had to shorten.
    scratch: Vec<u8>,
    seq: SeqTracker,
    /// What the answers to queries mirror of the Term's private state.
    answers: AnswerState,
    /// The readable scrollback given at creation (the Term's history cap derives from it).
    scrollback: usize,
    /// The window's theme, reported to programs that ask (OSC 4/10/11/12) for a colour they
    /// did not set; `None` reports the built-in defaults.
    theme: Option<ThemeColors>,
    size: TermSize,
    title: Option<String>,
    cwd: Option<String>,
    events: Vec<TerminalEvent>,
    /// Counts calls that may have changed the grid's content (see [`PaneTerminal::revision`]).
    revision: u64,
    /// Bytes fed since [`PaneTerminal::settle`] (compared with [`FLOOD_BYTES`]).
    flood_bytes: usize,
    /// During a flood, when the history was last packed.
    flood_packed_at: Option<Instant>,
    /// How often the history is packed during a flood ([`FLOOD_PACK_EVERY`]; tests change it).
    flood_pack_every: Duration,
    /// The budget of plain flood cells this terminal shares, and its part of it.
    flood_budget: &'static FloodBudget,
    flood_plain: usize,
    /// The history was packed in bulk since [`PaneTerminal::take_packed_in_bulk`] last asked.
    packed_in_bulk: bool,
    /// No program has written to it yet and its grid is held at [`DORMANT_SIZE`] while `size`
    /// says the size it has (see [`PaneTerminal::dormant`]).
    dormant: bool,
}

impl Drop for PaneTerminal {
    fn drop(&mut self) {
        self.flood_budget.plain.fetch_sub(self.flood_plain, std::sync::atomic::Ordering::Relaxed);
    }
}

impl std::fmt::Debug for PaneTerminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaneTerminal")
            .field("size", &self.size)
            .field("title", &self.title)
            .field("cwd", &self.cwd)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

/// The Term's configuration for a pane that keeps `scrollback` lines readable.
fn term_config(scrollback: usize, default_cursor_style: CursorStyle) -> Config {
    Config {
        scrolling_history: history_cap(scrollback),
        default_cursor_style,
        osc52: Osc52::Disabled,
        // Programs may push, pop, set and query the kitty keyboard protocol's flags per screen;
        // the window's key encoder and `pane.send` follow them.
        kitty_keyboard: true,
        ..Config::default()
    }
}

impl PaneTerminal {
    /// Creates a blank terminal of `size` that keeps `scrollback` lines of history readable.
    ///
    /// The size is clamped to at least 2 columns and 1 row.
    pub fn new(size: TermSize, scrollback: usize) -> Self {
        let size = size.clamped();
        let listener = TermListener::default();
        let config = term_config(scrollback, CursorStyle::default());
        let mut term = Term::new(config, &GridSize(size), listener.clone());
        alt::release(&mut term);
        Self {
            term,
            listener,
            processor: Processor::new(),
            scanner: OscScanner::new(),
            scratch: Vec::new(),
            seq: SeqTracker::new(scrollback).with_ring(history_lines(scrollback, size.cols)),
            answers: AnswerState::default(),
            scrollback,
            theme: None,
            size,
            title: None,
            cwd: None,
            events: Vec::new(),
            revision: 0,
            flood_bytes: 0,
            flood_packed_at: None,
            flood_pack_every: FLOOD_PACK_EVERY,
            flood_budget: &FLOOD_BUDGET,
            flood_plain: 0,
            packed_in_bulk: false,
            dormant: false,
        }
    }

    /// A terminal of `size` that holds no grid until it is used: a restored pane's, whose text
    /// lives in its saved tail until a program runs in it. Its grid is held at 2×1 cells (a
    /// tombstone costs a few hundred bytes, not a screen's worth of cells); it reports `size`,
    /// follows resizes without reflowing anything, and reads as blank. The first output fed to
    /// it gives it a blank grid of its size.
    pub fn dormant(size: TermSize, scrollback: usize) -> Self {
        let mut term = Self::new(DORMANT_SIZE, scrollback);
        term.size = size.clamped();
        term.dormant = true;
        term
    }

    /// Whether the terminal holds no grid yet (see [`PaneTerminal::dormant`]).
    pub fn is_dormant(&self) -> bool {
        self.dormant
    }

    /// Gives a dormant terminal its grid, blank at its size.
    fn wake(&mut self) {
        if !self.dormant {
            return;
        }
        self.dormant = false;
        let size = std::mem::replace(&mut self.size, DORMANT_SIZE);
        self.resize(size);
    }

    /// The cells this terminal's grid is sized for now: what its scrollback setting bounds
    /// (history rows count at the grid's width, packed or not).
    pub fn grid_cells(&self) -> GridCells {
        let grid = self.term.grid();
        let rows = grid.history_size() + grid.screen_lines();
        GridCells { rows, cells: rows * grid.columns(), allocated_rows: grid.allocated_rows() }
    }

    /// Sets the cursor shape and blinking used while the program has not chosen one with
    /// DECSCUSR (and after it resets to the default with `CSI 0 q`). The history is kept.
    pub fn set_default_cursor_style(&mut self, style: CursorStyle) {
        self.term.set_options(term_config(self.scrollback, style));
    }

    /// Sets the colours reported to programs that ask for the default foreground, background,
    /// cursor or an ANSI colour they did not set (the window's theme); `None` reports
    /// [`DEFAULT_FOREGROUND`], [`DEFAULT_BACKGROUND`] and [`DEFAULT_ANSI`].
    pub fn set_theme_colors(&mut self, theme: Option<ThemeColors>) {
        self.theme = theme;
    }

    /// Feeds PTY output (chunks of any size; the PTY reader hands up to 16 KiB at a time).
    ///
    /// The bytes go through the OSC scanner, then the vte `Processor`. Output inside a
    /// synchronized update (`CSI ? 2026 h`) is held back until the update ends, its 2 MiB
    /// buffer fills, or [`PaneTerminal::flush_sync`] is called; one whose deadline passed is
    /// flushed first.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.wake();
        self.revision = self.revision.wrapping_add(1);
        if self.sync_deadline().is_some_and(|deadline| deadline <= Instant::now()) {
            self.flush_sync();
        }
        // The bytes go to the parser up to each string the scanner reports, so that events (and
        // the replies they call for) keep the order of the bytes that caused them.
        let mut rest = bytes;
        while !rest.is_empty() {
            let (used, filtered) = self.scanner.filter_to_event(rest, &mut self.scratch);
            let mut handler =
                SeqHandler::new(&mut self.term, &mut self.seq, &self.listener, &mut self.answers);
            self.processor.advance(&mut handler, filtered);
            // Dropping the handler writes the run of text it gathered last.
            drop(handler);
            // A query or control the scanner found acts on the output before it: a
            // synchronized update holding that output back ends first.
            if self.sync_deadline().is_some()
                && self.scanner.events().iter().any(|event| self.needs_held_output(event))
            {
                self.flush_sync();
            }
            self.collect_events();
            rest = &rest[used..];
        }
        self.pack_history(bytes.len());
        if self.scratch.capacity() > 1 << 20 {
            self.scratch = Vec::new();
        }
    }

    /// Whether `event` must be taken after the output a synchronized update holds back: the
    /// queries and controls, except a `CSI s` that is a cursor save (DECLRMM reset; a
    /// DECLRMM set inside the update is a control that ends it first), which vte applies in
    /// its place.
    fn needs_held_output(&self, event: &OscEvent) -> bool {
        match event {
            OscEvent::Control(Control::Margins { .. }) => {
                self.term.mode().contains(TermMode::LEFT_RIGHT_MARGIN)
            }
            OscEvent::Query(_) | OscEvent::Control(_) | OscEvent::Color { .. } => true,
            _ => false,
        }
    }

    /// Keeps the history compact after `fed` bytes of output (vendor/alacritty_terminal/BERTH.md):
    /// rows that output or a reader since the last call left decoded or plain are packed
    /// again; past [`FLOOD_BYTES`] since the pane was last idle, lines that scroll into the
    /// history stay plain and are packed in bulk every [`FLOOD_PACK_EVERY`] and by
    /// [`PaneTerminal::settle`].
    fn pack_history(&mut self, fed: usize) {
        self.flood_bytes = self.flood_bytes.saturating_add(fed);
        let grid = self.term.grid_mut();
        let over = self.flood_budget.over();
        match self.flood_packed_at {
            None if self.flood_bytes > FLOOD_BYTES && !over => {
                grid.defer_history_packing(true);
                self.flood_packed_at = Some(Instant::now());
            }
            // Past the shared budget: the backlog packed, and lines packed one by one again
            // (the flood defers again once the floods are under the budget).
            Some(_) if over => {
                grid.defer_history_packing(false);
                grid.pack_history();
                self.flood_packed_at = None;
                self.packed_in_bulk = true;
            }
            Some(at) if at.elapsed() >= self.flood_pack_every => {
                grid.pack_history();
                self.flood_packed_at = Some(Instant::now());
                self.packed_in_bulk = true;
            }
            _ => grid.shed_decoded(),
        }
        self.count_flood_plain();
    }

    /// Brings this terminal's part of the plain flood backlog ([`flood_plain_cells`]) up to
    /// date.
    fn count_flood_plain(&mut self) {
        use std::sync::atomic::Ordering::Relaxed;
        let grid = self.term.grid();
        let now = grid.history_packing_backlog() * grid.columns();
        let before = std::mem::replace(&mut self.flood_plain, now);
        if now > before {
            self.flood_budget.plain.fetch_add(now - before, Relaxed);
        } else {
            self.flood_budget.plain.fetch_sub(before - now, Relaxed);
        }
    }

    /// Whether a flood's history was packed in bulk (its plain rows freed) since the last call:
    /// the server hands the freed pages back to the system then, not only when the flood ends.
    pub fn take_packed_in_bulk(&mut self) -> bool {
        std::mem::take(&mut self.packed_in_bulk)
    }

    /// How often the history is packed in bulk during a flood (every second unless changed):
    /// for benchmarks, whose timing must not depend on how fast the machine runs them
    /// (`engine/examples/feed_cpu.rs` under callgrind).
    pub fn set_flood_pack_interval(&mut self, every: Duration) {
        self.flood_pack_every = every;
    }

    /// Tells the terminal that its output paused (the server calls it when the PTY has been
    /// quiet for a while): a flood is over, and the history it left plain is packed; history
    /// rows that reads decoded since (a search, a scrolled-back view) are packed again.
    ///
    /// Returns whether a flood ended: its history packed and the rows the grid kept for reuse
    /// (up to 1000 plain rows, 2 MB at 80 columns) freed, so the caller may hand freed memory
    /// back to the system.
    pub fn settle(&mut self) -> bool {
        self.flood_bytes = 0;
        // The lines a flood left plain are in the primary screen's history: they are packed
        // once it shows again.
        let ended = !self.alt_screen() && self.flood_packed_at.take().is_some();
        if ended {
            let grid = self.term.grid_mut();
            grid.defer_history_packing(false);
            grid.pack_history();
            grid.drop_row_cache();
        } else {
            self.term.grid_mut().shed_decoded();
        }
        self.count_flood_plain();
        ended
    }

    /// When a synchronized update is holding back output, the time by which
    /// [`PaneTerminal::flush_sync`] should be called (150 ms after it began or was extended).
    pub fn sync_deadline(&self) -> Option<Instant> {
        self.processor.sync_timeout().sync_timeout()
    }

    /// Ends a synchronized update now and applies the output it held back.
    pub fn flush_sync(&mut self) {
        if self.sync_deadline().is_none() {
            return;
        }
        self.revision = self.revision.wrapping_add(1);
        let mut handler =
            SeqHandler::new(&mut self.term, &mut self.seq, &self.listener, &mut self.answers);
        self.processor.stop_sync(&mut handler);
        drop(handler);
        self.collect_events();
        self.term.grid_mut().shed_decoded();
    }

    /// Events gathered since the last call: titles, working directories, replies to write
    /// back to the PTY, bells and OSC notifications.
    ///
    /// Events come in the order of the bytes that caused them (an OSC 99 query before a DA1
    /// query is answered first), except that output held back by a synchronized update reports
    /// its events when the update ends. A query or control that the OSC scanner recognises
    /// (see [`crate::osc::Query`] and [`crate::osc::Control`]) ends a synchronized update
    /// first, so that it is answered or applied after the output before it.
    pub fn take_events(&mut self) -> Vec<TerminalEvent> {
        std::mem::take(&mut self.events)
    }

    /// Resizes the grid, reflowing wrapped lines as alacritty does.
    ///
    /// The size is clamped to at least 2 columns and 1 row. Numbers of lines below the top of
    /// the history may change (see the module documentation); the cursor's line never gets a
    /// lower number than it had.
    pub fn resize(&mut self, size: TermSize) {
        let size = size.clamped();
        if size == self.size {
            return;
        }
        if self.dormant {
            // Nothing to reflow: the grid it gets when woken has the size it has then.
            self.size = size;
            return;
        }
        let before = self.cursor_seq();
        self.revision = self.revision.wrapping_add(1);
        self.term.resize(GridSize(size));
        // alacritty resets the scrolling region on a resize.
        self.answers.region = None;
        // The resize gave the unused alternate screen a full-size grid again.
        alt::release(&mut self.term);
        self.size = size;
        self.seq.set_ring(history_lines(self.scrollback, size.cols));
        self.seq.after_resize(&mut self.term);
        // The reflow left the history plain; it is packed again here (on the alternate screen,
        // the primary's history is, after the next output once the program leaves it).
        self.term.grid_mut().shed_decoded();
        let after = self.cursor_seq();
        if after < before {
            self.seq.skip(before - after);
        }
    }

    /// A number that changes whenever the grid's content may have changed (output fed, a
    /// synchronized update flushed, a resize); scrolling the view does not change it. Lets a
    /// reader cache what it computed from the content, such as a search's matches.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The current size (after clamping).
    pub fn size(&self) -> TermSize {
        self.size
    }

    /// The title set by the program (OSC 0/2), if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The working directory the shell reported (OSC 7), if any.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// Whether the program asked for application cursor keys (DECCKM), for key encoding.
    pub fn app_cursor(&self) -> bool {
        self.term.mode().contains(TermMode::APP_CURSOR)
    }

    /// Whether the program asked for bracketed paste (DECSET 2004).
    pub fn bracketed_paste(&self) -> bool {
        self.term.mode().contains(TermMode::BRACKETED_PASTE)
    }

    /// Whether the program asked the kitty keyboard protocol to report every key, Enter
    /// included, as an escape code (flag 8); with the protocol off this is always false.
    pub fn kitty_all_keys_as_escapes(&self) -> bool {
        self.keyboard_flags() & 8 != 0
    }

    /// The kitty keyboard protocol's flags the program set (0 when it set none: legacy keys),
    /// for key encoding: 1 disambiguate, 2 report event types, 4 report alternate keys, 8
    /// report all keys as escape codes, 16 report associated text.
    pub fn keyboard_flags(&self) -> u8 {
        answers::keyboard_flags(&self.term)
    }

    /// Whether the program set DECBKM (`CSI ? 67 h`): Backspace then sends BS (0x08) and
    /// Ctrl+Backspace DEL, the other way round from the default.
    pub fn backarrow_sends_bs(&self) -> bool {
        self.answers.backarrow_sends_bs
    }

    /// Whether the program shows the cursor (DECTCEM, `CSI ? 25 h`; shown until it hides it).
    pub fn cursor_visible(&self) -> bool {
        self.term.mode().contains(TermMode::SHOW_CURSOR)
    }

    /// Whether the alternate screen is active.
    pub fn alt_screen(&self) -> bool {
        self.term.mode().contains(TermMode::ALT_SCREEN)
    }

    /// Scrolls the view into the scrollback by `lines` (positive: back into history), as the
    /// window's wheel does; new output keeps the view where it is until
    /// [`PaneTerminal::scroll_to_bottom`].
    pub fn scroll_display(&mut self, lines: i32) {
        self.term.scroll_display(alacritty_terminal::grid::Scroll::Delta(lines));
    }

    /// Returns the view to the live screen.
    pub fn scroll_to_bottom(&mut self) {
        self.term.scroll_display(alacritty_terminal::grid::Scroll::Bottom);
    }

    /// How many lines the view is scrolled back into the history (0: the live screen).
    pub fn display_offset(&self) -> usize {
        self.term.grid().display_offset()
    }

    /// The alacritty terminal, for rendering.
    pub fn term(&self) -> &Term<TermListener> {
        &self.term
    }

    /// Matches of `query` in `scope`, oldest first, at most `max` of them.
    pub fn search_matches(
        &self,
        query: &mut SearchQuery,
        scope: SearchScope,
        max: usize,
    ) -> Vec<SearchMatch> {
        self.seq_grid().search_matches(query, scope, max)
    }

    /// Matches of `query` whose first cell is on the lines numbered `first..=last` (clamped to
    /// the lines held), oldest first, at most `max`: one bounded step of a search over a long
    /// history, which the caller may take with the terminal's lock released between steps
    /// (line numbers stay valid across output; see [`PaneTerminal::history_epoch`]). Rows the
    /// step decoded stay decoded until [`PaneTerminal::shed_decoded`].
    pub fn search_lines(
        &self,
        query: &mut SearchQuery,
        first: u64,
        last: u64,
        max: usize,
    ) -> Vec<SearchMatch> {
        self.seq_grid().search_lines(query, first, last, max)
    }

    /// The numbers of the oldest and the newest line the Term holds (the newest is the
    /// screen's bottom row).
    pub fn held_lines(&self) -> (u64, u64) {
        self.seq_grid().held_lines()
    }

    /// Packs again the history rows a read (a search, a capture of a scrolled view) left
    /// decoded, so that what a search looked at does not stay in memory in full.
    pub fn shed_decoded(&mut self) {
        self.term.grid_mut().shed_decoded();
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
        self.seq_grid().next_match(query, from, direction)
    }

    /// The cell to search from to step past `current` in `direction`: the cell before its
    /// first cell (older) or after it (newer), wrapping around the grid.
    pub fn step_from(&self, current: &SearchMatch, direction: SearchDirection) -> SeqPoint {
        self.seq_grid().step_from(current, direction)
    }

    /// The numbers of the oldest line the Term holds and of the screen's top row: a search
    /// of everything can be updated from the second after output ([`SearchScope::Since`]).
    pub fn line_bounds(&self) -> (u64, u64) {
        self.seq_grid().line_bounds()
    }

    /// The last cell of the view's bottom row, as a search origin ("above the bottom").
    pub fn view_bottom(&self) -> SeqPoint {
        self.seq_grid().view_bottom()
    }

    /// Scrolls the view so that the first line of `m` is shown and not in the view's bottom
    /// `covered` rows (something is drawn over them); a line shown already stays where it is,
    /// another is brought to the middle of the view.
    pub fn scroll_to_match(&mut self, m: &SearchMatch, covered: u16) {
        if let Some(delta) = self.seq_grid().scroll_for_match(m, covered) {
            self.term.scroll_display(Scroll::Delta(delta));
        }
    }

    /// The parts of `m` on the view's rows.
    pub fn view_spans(&self, m: &SearchMatch) -> Vec<ViewSpan> {
        self.seq_grid().view_spans(m)
    }

    /// The Term and its line numbers, for the search.
    fn seq_grid(&self) -> SeqGrid<'_> {
        SeqGrid { term: &self.term, screen_base: self.seq.screen_base() }
    }

    /// The visible screen's rows as text, trailing blank rows removed.
    ///
    /// "Visible" is the live screen, whatever the window's scroll position.
    pub fn screen_lines(&self, ansi: bool) -> Vec<String> {
        let mut lines = self.render_lines(0, self.size.rows.into(), ansi);
        trim_trailing_empty(&mut lines);
        lines
    }

    /// Reads lines by `content_seq` (`pane.read`); see [`ReadRequest`] for what is read.
    ///
    /// A range ends at the last non-blank row of the screen (blank history lines are kept).
    /// On the alternate screen only its rows can be read.
    pub fn read(&self, request: &ReadRequest) -> ReadResult {
        let base = self.seq.screen_base();
        let readable_history = self.readable_history();
        let oldest_seq = base - readable_history as u64;
        let next_seq = self.cursor_seq();

        if request.since.is_none() && request.last.is_none() {
            return ReadResult {
                lines: self.screen_lines(request.ansi),
                first_seq: base,
                next_seq,
                truncated: false,
                oldest_seq,
            };
        }

        // Work in grid line indices: 0 is the screen's top row, negative lines are history.
        let mut screen = self.render_lines(0, self.size.rows.into(), request.ansi);
        trim_trailing_empty(&mut screen);
        let end = screen.len() as i64;
        let oldest = -(readable_history as i64);
        let mut start = oldest;
        let mut truncated = false;

        if let Some(since) = request.since {
            if since < oldest_seq {
                truncated = true;
            } else if since >= base {
                // Saturate instead of overflowing for absurd `since` values; past `end` the
                // range is simply empty.
                start = i64::try_from(since - base).unwrap_or(i64::MAX).min(end + 1);
            } else {
                // `since` is at least `oldest_seq`, so this is within the readable history.
                start = -((base - since) as i64);
            }
        }
        if let Some(last) = request.last {
            let available = (end - start).max(0);
            let wanted = i64::try_from(last).unwrap_or(i64::MAX);
            if wanted < available {
                start = end - wanted;
                truncated = true;
            } else if request.since.is_none() && oldest_seq > 0 && wanted > available {
                // Asked for more than is held, and older lines existed.
                truncated = true;
            }
        }

        let first_seq = match request.since {
            Some(since) if start > end => since,
            _ => (base as i64 + start) as u64,
        };
        let mut lines = Vec::new();
        if start < end {
            if start < 0 {
                lines = self.render_lines(start as i32, 0, request.ansi);
            }
            let from_screen = start.max(0) as usize;
            lines.extend(screen.into_iter().skip(from_screen));
        }
        ReadResult { lines, first_seq, next_seq, truncated, oldest_seq }
    }

    /// History lines readable now: the ring's worth on the primary screen, none on the
    /// alternate screen.
    /// The number of the screen's top row: lines numbered below it are history.
    pub fn screen_base_seq(&self) -> u64 {
        self.seq.screen_base()
    }

    /// Changes whenever already numbered history lines may render differently or be gone: a
    /// resize (which may reflow them), clearing the scrollback, a reset. Lines numbered below
    /// [`PaneTerminal::screen_base_seq`] render the same for as long as this stays the same
    /// (on the primary screen), so a reader may cache them.
    pub fn history_epoch(&self) -> u64 {
        self.seq.epoch()
    }

    fn readable_history(&self) -> usize {
        if self.alt_screen() {
            0
        } else {
            self.term.grid().history_size().min(self.seq.ring())
        }
    }

    /// Number of the cursor's line.
    fn cursor_seq(&self) -> u64 {
        // The cursor is always on the screen, so its line index is not negative.
        let row = self.term.grid().cursor.point.line.0.max(0) as u64;
        self.seq.screen_base() + row
    }

    /// Renders grid lines `from..to` (0 is the screen's top row, negative lines are history).
    fn render_lines(&self, from: i32, to: i32, ansi: bool) -> Vec<String> {
        let grid = self.term.grid();
        (from..to).map(|line| render::row_text(&grid[Line(line)], ansi)).collect()
    }

    /// Moves what the listener and then the scanner reported into the pending events: called
    /// after each piece [`PaneTerminal::feed`] parses, which ends at the scanner's event.
    fn collect_events(&mut self) {
        self.drain_listener();
        for event in self.scanner.take_events() {
            self.take_scanned(event);
        }
    }

    /// Moves what the Term reported to the listener into the pending events.
    fn drain_listener(&mut self) {
        for event in self.listener.drain() {
            match event {
                Event::Title(title) => {
                    self.title = Some(title.clone());
                    self.push_event(TerminalEvent::Title(Some(title)));
                }
                Event::ResetTitle => {
                    self.title = None;
                    self.push_event(TerminalEvent::Title(None));
                }
                Event::PtyWrite(text) => self.push_event(TerminalEvent::PtyWrite(text.into())),
                Event::Bell => self.push_event(TerminalEvent::Bell),
                _ => (),
            }
        }
    }

    /// Takes one event the OSC scanner reported: answers its query or applies its control.
    fn take_scanned(&mut self, event: OscEvent) {
        match event {
            OscEvent::Cwd(path) => {
                self.cwd = Some(path.clone());
                self.push_event(TerminalEvent::Cwd(path));
            }
            OscEvent::PromptMark(mark) => self.push_event(TerminalEvent::PromptMark(mark)),
            OscEvent::Notify { kind, payload } => {
                self.push_event(TerminalEvent::Notify { kind, payload });
            }
            OscEvent::IconLabel(label) => self.answers.titles.icon = Some(label),
            OscEvent::Query(Query::IconLabel) => {
                let reply = titles::report('L', self.answers.titles.icon.as_deref());
                self.push_event(TerminalEvent::PtyWrite(reply));
            }
            OscEvent::Query(Query::WindowTitle) => {
                let reply = titles::report('l', self.title.as_deref());
                self.push_event(TerminalEvent::PtyWrite(reply));
            }
            OscEvent::Control(Control::TitleStack { push: true, which }) => {
                self.answers.titles.push(which, &self.title);
            }
            OscEvent::Control(Control::TitleStack { push: false, which }) => {
                if let Some(title) = self.answers.titles.pop(which) {
                    // Through the Term, so that the change goes out as OSC 2's does.
                    alacritty_terminal::vte::ansi::Handler::set_title(&mut self.term, title);
                    self.drain_listener();
                }
            }
            OscEvent::Query(query) => {
                let reply = answers::answer(&self.term, &self.answers, &query);
                if !reply.is_empty() {
                    self.push_event(TerminalEvent::PtyWrite(reply));
                }
            }
            OscEvent::Control(Control::SoftReset) => self.soft_reset(),
            OscEvent::Control(Control::ConformanceLevel(level)) => self.set_conformance(level),
            OscEvent::Control(Control::SelectiveErase { line, mode }) => {
                self.selective_erase(line, mode);
            }
            OscEvent::Control(Control::Protect(on)) => {
                self.answers.iso_protection = false;
                self.term.grid_mut().cursor.template.flags.set(Flags::PROTECTED, on);
            }
            OscEvent::Control(Control::IsoProtect(on)) => {
                self.answers.iso_protection = true;
                self.term.grid_mut().cursor.template.flags.set(Flags::PROTECTED, on);
            }
            OscEvent::Control(Control::SaveModes(modes)) => {
                self.answers.save_modes(&self.term, &modes);
            }
            OscEvent::Control(Control::RestoreModes(modes)) => self.restore_modes(&modes),
            OscEvent::Control(Control::Margins { left, right }) => {
                if self.term.mode().contains(TermMode::LEFT_RIGHT_MARGIN) {
                    if let Some(saved) = self.answers.saved_cursor_before.take() {
                        self.term.grid_mut().saved_cursor = saved;
                    }
                    self.term.set_horizontal_margins(left.into(), right.into());
                }
            }
            OscEvent::Color { kind, payload, bell } => self.color_osc(kind, &payload, bell),
            OscEvent::Control(control) => {
                rect::apply(&mut self.term, &self.answers, &control);
                self.seq.observe(&mut self.term);
            }
        }
    }

    /// DECSTR, as xterm does it: the cursor shown, insert mode, origin mode, reverse
    /// wraparound, the left and right margins (DECLRMM), application cursor keys and keypad off, the scrolling region the whole
    /// screen, normal rendition and no DECSCA protection, the character sets ASCII, and the
    /// saved cursor at home; the cursor stays where it is, and the screen, autowrap and
    /// everything else are kept.
    fn soft_reset(&mut self) {
        use alacritty_terminal::vte::ansi::{
            Attr, CharsetIndex, Handler, Mode, NamedMode, NamedPrivateMode, PrivateMode,
            StandardCharset,
        };
        let point = self.term.grid().cursor.point;
        let mut handler =
            SeqHandler::new(&mut self.term, &mut self.seq, &self.listener, &mut self.answers);
        handler.set_private_mode(PrivateMode::Named(NamedPrivateMode::ShowCursor));
        handler.unset_mode(Mode::Named(NamedMode::Insert));
        handler.unset_private_mode(PrivateMode::Named(NamedPrivateMode::Origin));
        handler.unset_private_mode(PrivateMode::Named(NamedPrivateMode::CursorKeys));
        handler.unset_keypad_application_mode();
        // Reverse wraparound (45) and the left and right margins (DECLRMM, 69), which the
        // vendored alacritty implements.
        handler.unset_private_mode(PrivateMode::Unknown(45));
        handler.unset_private_mode(PrivateMode::Unknown(69));
        // DECSTBM homes the cursor: put it back.
        handler.set_scrolling_region(1, None);
        handler.goto(point.line.0, point.column.0);
        handler.terminal_attribute(Attr::Reset);
        for index in [CharsetIndex::G0, CharsetIndex::G1, CharsetIndex::G2, CharsetIndex::G3] {
            handler.configure_charset(index, StandardCharset::Ascii);
        }
        handler.set_active_charset(CharsetIndex::G0);
        drop(handler);
        self.term.grid_mut().cursor.template.flags.remove(Flags::PROTECTED);
        self.term.grid_mut().saved_cursor = Default::default();
    }

    /// DECSCL: a level from 61 (VT100) to 64 (VT400, the highest whose features Berth has)
    /// soft-resets the terminal (DECSTR, as the VT220 manual, DEC STD 070 and xterm have it)
    /// and then takes that level; another is ignored (xterm too ignores a level above its
    /// own).
    fn set_conformance(&mut self, level: u16) {
        let Some(level) = level.checked_sub(60).filter(|level| (1..=4).contains(level)) else {
            return;
        };
        self.soft_reset();
        // The cast cannot truncate: the level is 1 to 4.
        self.answers.conformance = Some(level as u8);
    }

    /// XTRESTORE: each of `modes` that XTSAVE remembered is set or reset as it was then.
    fn restore_modes(&mut self, modes: &[u16]) {
        use alacritty_terminal::vte::ansi::Handler;
        for &mode in modes {
            let Some(&(_, on)) = self.answers.saved_modes.iter().find(|(m, _)| *m == mode) else {
                continue;
            };
            let Some((private, _)) = answers::saveable_mode(&self.term, &self.answers, mode) else {
                continue;
            };
            let mut handler =
                SeqHandler::new(&mut self.term, &mut self.seq, &self.listener, &mut self.answers);
            if on {
                handler.set_private_mode(private);
            } else {
                handler.unset_private_mode(private);
            }
        }
    }

    /// DECSED and DECSEL: erase as ED and EL do, except the characters DECSCA (or SPA)
    /// protected.
    fn selective_erase(&mut self, line: bool, mode: u16) {
        use alacritty_terminal::vte::ansi::{ClearMode, Handler};
        let point = self.term.grid().cursor.point;
        let (row, column) = (point.line.0.max(0) as usize, point.column.0);
        let (last_row, last_column) = (self.term.screen_lines() - 1, self.term.columns() - 1);
        // The cells erased, in reading order: from (row, column) to (row, column) inclusive.
        let (from, to) = match (line, mode) {
            (true, 0) => ((row, column), (row, last_column)),
            (true, 1) => ((row, 0), (row, column)),
            (true, 2) => ((row, 0), (row, last_column)),
            (false, 0) => ((row, column), (last_row, last_column)),
            (false, 1) => ((0, 0), (row, column)),
            (false, 2) => ((0, 0), (last_row, last_column)),
            (false, 3) => {
                let mut handler = SeqHandler::new(
                    &mut self.term,
                    &mut self.seq,
                    &self.listener,
                    &mut self.answers,
                );
                handler.clear_screen(ClearMode::Saved);
                return;
            }
            _ => return,
        };
        for line in from.0..=to.0 {
            let first = if line == from.0 { from.1 } else { 0 };
            let last = if line == to.0 { to.1 } else { last_column };
            rect::erase_cells(&mut self.term, line, first..=last, true);
        }
    }

    fn push_event(&mut self, event: TerminalEvent) {
        if self.events.len() < MAX_PENDING_EVENTS {
            self.events.push(event);
        }
    }
}

/// Removes trailing empty strings.
fn trim_trailing_empty(lines: &mut Vec<String>) {
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
}

/// The colour reported for palette entry `index` when the program has not set it: xterm's
/// palette, Berth's default foreground and background, and dimmed variants (alacritty's
/// indices: 256 foreground, 257 background, 258 cursor, 259–266 dim colours, 267 bright
/// foreground, 268 dim foreground).
/// The colours of the window's theme that programs may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThemeColors {
    /// The default foreground (OSC 10).
    pub foreground: Rgb,
    /// The default background (OSC 11).
    pub background: Rgb,
    /// The cursor (OSC 12).
    pub cursor: Rgb,
    /// ANSI colours 0–15 (OSC 4).
    pub ansi: [Rgb; 16],
}

impl ThemeColors {
    /// The colour of alacritty's index `index` in this theme (the 256-colour cube and greys
    /// are the same in every theme).
    fn color(&self, index: usize) -> Rgb {
        let dim = |c: Rgb| Rgb { r: c.r / 3 * 2, g: c.g / 3 * 2, b: c.b / 3 * 2 };
        match index {
            0..=15 => self.ansi[index],
            256 => self.foreground,
            257 => self.background,
            258 => self.cursor,
            259..=266 => dim(self.ansi[index - 259]),
            267 => self.foreground,
            268 => dim(self.foreground),
            _ => default_color(index),
        }
    }
}

fn default_color(index: usize) -> Rgb {
    const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let dim = |c: Rgb| Rgb { r: c.r / 3 * 2, g: c.g / 3 * 2, b: c.b / 3 * 2 };
    match index {
        0..=15 => DEFAULT_ANSI[index],
        16..=231 => {
            let cube = index - 16;
            Rgb { r: CUBE[cube / 36], g: CUBE[cube / 6 % 6], b: CUBE[cube % 6] }
        }
        232..=255 => {
            // The cast cannot truncate: the largest value is 8 + 23 * 10 = 238.
            let level = (8 + (index - 232) * 10) as u8;
            Rgb { r: level, g: level, b: level }
        }
        257 => DEFAULT_BACKGROUND,
        259..=266 => dim(default_color(index - 259)),
        268 => dim(DEFAULT_FOREGROUND),
        _ => DEFAULT_FOREGROUND,
    }
}
