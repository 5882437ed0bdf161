//! Exact `content_seq` bookkeeping for one pane's terminal.
//!
//! It owns the [`SeqTracker`] (the numbering of rendered lines) and [`SeqHandler`], the vte
//! `Handler` that forwards every call to alacritty's `Term` and then updates the tracker. It
//! must not change what the terminal does beyond these: it drops the oldest history lines once
//! the history outgrows the ring; it allocates the alternate screen's grid only around its use
//! (`super::alt`); it answers itself the queries alacritty answers wrongly or not at all (DA1,
//! DECRQM of modes alacritty does not know, the kitty keyboard flags, XTWINOPS 14, CPR in
//! origin mode; the replies come from `super::answers`, and DECRQM goes unanswered below the
//! VT300 level and DECLRMM is ignored below the VT400 one, once a program sets a level with
//! DECSCL); it keeps DECPFF and DECPEX for DECRQM,
//! and leaves XTWINOPS 22 and 23 (the title stack) to the terminal, which gets their `Ps`
//! from the OSC scanner; it undoes the cursor save vte makes
//! of a `CSI Pl ; Pr s` that is DECSLRM (DECLRMM set); it takes DECNKM (`CSI ? 66 h/l`) as the keypad mode that
//! `ESC =`/`ESC >` set, and keeps DECBKM (`CSI ? 67 h/l`) for the key encoder; it implements
//! xterm's older alternate-screen modes 47 and 1047 and the cursor save of 1048, which
//! alacritty does not know (the vendored `swap_alt` leaves both screens' saved cursors alone;
//! only 1049 saves the cursor); and it ignores a kitty keyboard push past
//! [`super::answers::MAX_KEYBOARD_STACK`] (upstream alacritty panicked there). Printable ASCII
//! reaches the Term in runs (the vendored `Term::input_ascii`, see [`SeqHandler`]), written
//! before any other call.
//!
//! Why a forwarding handler: alacritty does not count lines that scroll into its history, and
//! once the history is at its cap the oldest lines silently fall out, so the history size alone
//! cannot say how many lines scrolled. Looking at it after every handler call is exact, because
//! one call adds at most one screen's worth of lines to the history (a linefeed or a wrap adds
//! one, `CSI n S` and clearing the screen add at most the screen height, a run of ASCII at most
//! half its length), and the Term's cap is
//! set higher than the ring by more than the tallest screen, so it is never reached. Checking
//! after whole chunks would not be exact: `CSI n b` (repeat) or a run of `CSI 24 S` scroll tens
//! of thousands of lines in a few bytes, and a synchronized update releases up to 2 MiB at once.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::cursor_icon::CursorIcon;
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, CursorShape, CursorStyle, Handler, Hyperlink, KeyboardModes,
    KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys, NamedPrivateMode,
    PrivateMode, Rgb, ScpCharPath, ScpUpdateMode, StandardCharset, TabulationClearMode,
};
use alacritty_terminal::Term;

use super::answers::{self, AnswerState};
use super::listener::TermListener;

/// History lines allowed past the ring before the oldest are dropped in one go.
///
/// Trimming in batches keeps the cost per scrolled line tiny; staying under alacritty's row
/// cache (1000 rows) means a trim frees nothing and the rows are reused as the history grows.
pub(super) const TRIM_SLACK: usize = 512;

/// Headroom of the Term's history cap over `ring + TRIM_SLACK`: more than one call can scroll.
const CAP_HEADROOM: usize = u16::MAX as usize + 1;

/// The history cap to configure the Term with for a ring of `ring` lines.
///
/// The cap only bounds growth; alacritty allocates history rows as lines scroll in.
pub(super) fn history_cap(ring: usize) -> usize {
    ring + TRIM_SLACK + CAP_HEADROOM
}

/// The numbering of one pane's rendered lines.
///
/// Lines are numbered from the top of the primary screen's history: the oldest line the Term
/// still holds has number `top_seq`, the next `top_seq + 1`, and so on through the screen. A
/// line keeps its number while it scrolls up into the history; `top_seq` grows only when lines
/// leave the top (trimmed to the ring, or the history is cleared). The alternate screen has no
/// history; its rows are numbered as if they were the primary screen's rows.
#[derive(Debug)]
pub(super) struct SeqTracker {
    /// History lines readable through `pane.read`.
    ring: usize,
    /// The ring given at creation.
    max_ring: usize,
    /// Number of the oldest line in the primary history.
    top_seq: u64,
    /// Primary history size at the last observation.
    history: usize,
    /// Set when the primary grid was resized while hidden behind the alternate screen: its new
    /// history size is unknown until it is active again.
    primary_stale: bool,
    /// Bumped whenever rendered history lines may have changed or gone (a resize, which may
    /// reflow; history lines removed by `CSI 3 J` or a reset), so caches of them know.
    epoch: u64,
}

impl SeqTracker {
    /// A tracker for an empty terminal with a ring of `ring` history lines.
    pub(super) fn new(ring: usize) -> Self {
        Self { ring, max_ring: ring, top_seq: 0, history: 0, primary_stale: false, epoch: 0 }
    }

    /// History lines readable through `pane.read`.
    pub(super) fn ring(&self) -> usize {
        self.ring
    }

    /// The tracker with its ring set to `ring` (see [`SeqTracker::set_ring`]).
    pub(super) fn with_ring(mut self, ring: usize) -> Self {
        self.set_ring(ring);
        self
    }

    /// Changes the ring (a resize changes what the scrollback setting allows in cells); the
    /// next trim keeps to it. The ring never exceeds the one given at creation, which the
    /// Term's history cap was set for.
    pub(super) fn set_ring(&mut self, ring: usize) {
        self.ring = ring.min(self.max_ring);
    }

    /// History lines allowed past the ring before the oldest are dropped in one go: up to
    /// [`TRIM_SLACK`], at most a quarter of the ring (at least 16), so a pane's history stays
    /// within a quarter of its bound in cells.
    fn slack(&self) -> usize {
        TRIM_SLACK.min((self.ring / 4).max(16))
    }

    /// Number of the top row of the screen (primary or alternate).
    pub(super) fn screen_base(&self) -> u64 {
        self.top_seq + self.history as u64
    }

    /// See the `epoch` field: history lines from an older epoch may differ from today's.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Moves all numbers up by `by`, so that numbers already handed out are not reused.
    pub(super) fn skip(&mut self, by: u64) {
        self.top_seq += by;
    }

    /// Updates the numbering after a handler call, and trims the history to the ring.
    #[inline]
    pub(super) fn observe(&mut self, term: &mut Term<TermListener>) {
        if term.mode().contains(TermMode::ALT_SCREEN) {
            return;
        }
        let history = term.grid().history_size();
        if history == self.history && !self.primary_stale {
            return;
        }
        if self.primary_stale {
            // The size changed while hidden; take it as it is, numbering from the same top.
            self.primary_stale = false;
        } else if history < self.history {
            // Within a handler call the history only shrinks by losing its oldest lines
            // (`CSI 3 J`, `ESC c`): the lines below keep their numbers.
            self.top_seq += (self.history - history) as u64;
            self.epoch += 1;
        }
        self.history = history;
        debug_assert!(history < history_cap(self.ring), "history reached its cap");
        self.trim(term);
    }

    /// Re-reads the history size after a resize, without counting any line as scrolled.
    ///
    /// Reflow joins or splits wrapped lines, so numbers below the top may shift; the top keeps
    /// its number.
    pub(super) fn after_resize(&mut self, term: &mut Term<TermListener>) {
        self.epoch += 1;
        if term.mode().contains(TermMode::ALT_SCREEN) {
            self.primary_stale = true;
        } else {
            self.history = term.grid().history_size();
            self.trim(term);
        }
    }

    /// Drops the oldest history lines down to the ring once the history is `slack` over.
    fn trim(&mut self, term: &mut Term<TermListener>) {
        if self.history <= self.ring + self.slack() {
            return;
        }
        // `update_history` shrinks the storage from the top (oldest lines first); the second
        // call only restores the cap so that the history can grow again.
        let grid = term.grid_mut();
        grid.update_history(self.ring);
        grid.update_history(history_cap(self.ring));
        self.top_seq += (self.history - self.ring) as u64;
        self.history = self.ring;
    }
}

/// The vte handler that feeds alacritty's `Term` and keeps [`SeqTracker`] exact.
///
/// Every method forwards to `Term`'s own implementation (or answers in its place, see the
/// module documentation) and then observes the history. All 71 methods of vte 0.15's `Handler`
/// are implemented: one left out would silently fall back to the trait's empty default.
///
/// Printable ASCII is not written a character at a time: `input` gathers a run of it (up to
/// [`ASCII_RUN`] bytes) and the run goes to the vendored `Term::input_ascii` in one call, before
/// any other call reaches the Term (each method starts with `flush`) and when the handler is
/// dropped. Observing the history once per run stays exact: a run adds at most
/// `ASCII_RUN / 2` lines (the narrowest grid has 2 columns), far under `CAP_HEADROOM`.
pub(super) struct SeqHandler<'a> {
    /// The terminal that does the work.
    term: &'a mut Term<TermListener>,
    /// The numbering to keep up to date.
    seq: &'a mut SeqTracker,
    /// Where the handler's own replies go, in order with the Term's.
    listener: &'a TermListener,
    /// What the answers mirror of the Term's private state.
    answers: &'a mut AnswerState,
    /// Printable ASCII not yet written to the Term.
    ascii: [u8; ASCII_RUN],
    /// How many bytes of `ascii` are in use.
    ascii_len: usize,
}

/// The longest run of printable ASCII gathered before it is written.
pub(super) const ASCII_RUN: usize = 1024;

impl<'a> SeqHandler<'a> {
    /// A handler feeding `term`; drop it (or let it go out of scope) to write the last run.
    pub(super) fn new(
        term: &'a mut Term<TermListener>,
        seq: &'a mut SeqTracker,
        listener: &'a TermListener,
        answers: &'a mut AnswerState,
    ) -> Self {
        Self { term, seq, listener, answers, ascii: [0; ASCII_RUN], ascii_len: 0 }
    }
}

impl Drop for SeqHandler<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl SeqHandler<'_> {
    #[inline]
    /// ED, EL and ECH while SPA protection is in use (alacritty's own erases know no
    /// protection): the screen's cells from `from` to `to` (row, column, inclusive, in reading
    /// order) are blanked, except those protected.
    fn erase_keeping_protected(&mut self, from: (usize, usize), to: (usize, usize)) {
        let last_column = self.term.columns() - 1;
        for line in from.0..=to.0 {
            let first = if line == from.0 { from.1 } else { 0 };
            let last = if line == to.0 { to.1 } else { last_column };
            super::rect::erase_cells(self.term, line, first..=last, true);
        }
    }

    fn after_call(&mut self) {
        debug_assert_eq!(self.ascii_len, 0, "a handler method did not flush the ASCII run");
        self.seq.observe(self.term);
    }

    /// `input` past the gathering: a full run is written first, and a character other than
    /// printable ASCII goes to the Term's own `input`.
    #[inline(never)]
    fn input_slow(&mut self, c: char) {
        self.flush();
        if matches!(c, ' '..='~') {
            self.ascii[0] = c as u8;
            self.ascii_len = 1;
        } else {
            Handler::input(&mut *self.term, c);
            self.after_call();
        }
    }

    /// Writes the gathered run of printable ASCII to the Term.
    #[inline]
    fn flush(&mut self) {
        if self.ascii_len > 0 {
            let len = std::mem::take(&mut self.ascii_len);
            self.term.input_ascii(&self.ascii[..len]);
            self.seq.observe(self.term);
        }
    }
}

impl Handler for SeqHandler<'_> {
    fn set_title(&mut self, value: Option<String>) {
        self.flush();
        Handler::set_title(&mut *self.term, value);
        self.after_call();
    }

    fn set_cursor_style(&mut self, value: Option<CursorStyle>) {
        self.flush();
        Handler::set_cursor_style(&mut *self.term, value);
        self.after_call();
    }

    fn set_cursor_shape(&mut self, shape: CursorShape) {
        self.flush();
        Handler::set_cursor_shape(&mut *self.term, shape);
        self.after_call();
    }

    // Always inlined into vte's dispatch (the parser calls it once per character): only the
    // gathering of printable ASCII is here, the rest is out of line.
    #[inline(always)]
    fn input(&mut self, c: char) {
        if matches!(c, ' '..='~') && self.ascii_len < ASCII_RUN {
            self.ascii[self.ascii_len] = c as u8;
            self.ascii_len += 1;
        } else {
            self.input_slow(c);
        }
    }

    fn goto(&mut self, line: i32, col: usize) {
        self.flush();
        Handler::goto(&mut *self.term, line, col);
        self.after_call();
    }

    fn goto_line(&mut self, line: i32) {
        self.flush();
        Handler::goto_line(&mut *self.term, line);
        self.after_call();
    }

    fn goto_col(&mut self, col: usize) {
        self.flush();
        Handler::goto_col(&mut *self.term, col);
        self.after_call();
    }

    fn insert_blank(&mut self, value: usize) {
        self.flush();
        Handler::insert_blank(&mut *self.term, value);
        self.after_call();
    }

    fn move_up(&mut self, value: usize) {
        self.flush();
        Handler::move_up(&mut *self.term, value);
        self.after_call();
    }

    fn move_down(&mut self, value: usize) {
        self.flush();
        Handler::move_down(&mut *self.term, value);
        self.after_call();
    }

    fn identify_terminal(&mut self, intermediate: Option<char>) {
        self.flush();
        match intermediate {
            None => self.listener.reply(answers::PRIMARY_ATTRIBUTES.to_owned()),
            Some(_) => Handler::identify_terminal(&mut *self.term, intermediate),
        }
        self.after_call();
    }

    fn device_status(&mut self, value: usize) {
        self.flush();
        // CPR: in origin mode alacritty would report the absolute position.
        if value == 6 && self.term.mode().contains(TermMode::ORIGIN) {
            let (line, column) = answers::cursor_position(self.term, self.answers);
            self.listener.reply(format!("\x1b[{line};{column}R"));
        } else {
            Handler::device_status(&mut *self.term, value);
        }
        self.after_call();
    }

    fn move_forward(&mut self, col: usize) {
        self.flush();
        Handler::move_forward(&mut *self.term, col);
        self.after_call();
    }

    fn move_backward(&mut self, col: usize) {
        self.flush();
        Handler::move_backward(&mut *self.term, col);
        self.after_call();
    }

    fn move_down_and_cr(&mut self, row: usize) {
        self.flush();
        Handler::move_down_and_cr(&mut *self.term, row);
        self.after_call();
    }

    fn move_up_and_cr(&mut self, row: usize) {
        self.flush();
        Handler::move_up_and_cr(&mut *self.term, row);
        self.after_call();
    }

    fn put_tab(&mut self, count: u16) {
        self.flush();
        Handler::put_tab(&mut *self.term, count);
        self.after_call();
    }

    fn backspace(&mut self) {
        self.flush();
        Handler::backspace(&mut *self.term);
        self.after_call();
    }

    fn carriage_return(&mut self) {
        self.flush();
        Handler::carriage_return(&mut *self.term);
        self.after_call();
    }

    fn linefeed(&mut self) {
        self.flush();
        Handler::linefeed(&mut *self.term);
        self.after_call();
    }

    fn bell(&mut self) {
        self.flush();
        Handler::bell(&mut *self.term);
        self.after_call();
    }

    fn substitute(&mut self) {
        self.flush();
        Handler::substitute(&mut *self.term);
        self.after_call();
    }

    fn newline(&mut self) {
        self.flush();
        Handler::newline(&mut *self.term);
        self.after_call();
    }

    fn set_horizontal_tabstop(&mut self) {
        self.flush();
        Handler::set_horizontal_tabstop(&mut *self.term);
        self.after_call();
    }

    fn scroll_up(&mut self, value: usize) {
        self.flush();
        Handler::scroll_up(&mut *self.term, value);
        self.after_call();
    }

    fn scroll_down(&mut self, value: usize) {
        self.flush();
        Handler::scroll_down(&mut *self.term, value);
        self.after_call();
    }

    fn insert_blank_lines(&mut self, value: usize) {
        self.flush();
        Handler::insert_blank_lines(&mut *self.term, value);
        self.after_call();
    }

    fn delete_lines(&mut self, value: usize) {
        self.flush();
        Handler::delete_lines(&mut *self.term, value);
        self.after_call();
    }

    fn erase_chars(&mut self, value: usize) {
        self.flush();
        if self.answers.iso_protection {
            let point = self.term.grid().cursor.point;
            let (line, column) = (point.line.0.max(0) as usize, point.column.0);
            let last = (column + value.max(1)).min(self.term.columns()) - 1;
            self.erase_keeping_protected((line, column), (line, last));
        } else {
            Handler::erase_chars(&mut *self.term, value);
        }
        self.after_call();
    }

    fn delete_chars(&mut self, value: usize) {
        self.flush();
        Handler::delete_chars(&mut *self.term, value);
        self.after_call();
    }

    fn move_backward_tabs(&mut self, count: u16) {
        self.flush();
        Handler::move_backward_tabs(&mut *self.term, count);
        self.after_call();
    }

    fn move_forward_tabs(&mut self, count: u16) {
        self.flush();
        Handler::move_forward_tabs(&mut *self.term, count);
        self.after_call();
    }

    fn save_cursor_position(&mut self) {
        self.flush();
        // With DECLRMM set, `CSI s` is DECSLRM: the scanner's `Control::Margins` that follows
        // puts the saved cursor back (`ESC 7` is followed by none and stays a save).
        if self.term.mode().contains(TermMode::LEFT_RIGHT_MARGIN) {
            self.answers.saved_cursor_before = Some(self.term.grid().saved_cursor.clone());
        }
        Handler::save_cursor_position(&mut *self.term);
        self.after_call();
    }

    fn restore_cursor_position(&mut self) {
        self.flush();
        Handler::restore_cursor_position(&mut *self.term);
        self.after_call();
    }

    fn clear_line(&mut self, mode: LineClearMode) {
        self.flush();
        if self.answers.iso_protection {
            let point = self.term.grid().cursor.point;
            let (line, column) = (point.line.0.max(0) as usize, point.column.0);
            let last = self.term.columns() - 1;
            match mode {
                LineClearMode::Right => self.erase_keeping_protected((line, column), (line, last)),
                LineClearMode::Left => self.erase_keeping_protected((line, 0), (line, column)),
                LineClearMode::All => self.erase_keeping_protected((line, 0), (line, last)),
            }
        } else {
            Handler::clear_line(&mut *self.term, mode);
        }
        self.after_call();
    }

    fn clear_screen(&mut self, mode: ClearMode) {
        self.flush();
        if self.answers.iso_protection && !matches!(mode, ClearMode::Saved) {
            let point = self.term.grid().cursor.point;
            let (line, column) = (point.line.0.max(0) as usize, point.column.0);
            let end = (self.term.screen_lines() - 1, self.term.columns() - 1);
            match mode {
                ClearMode::Below => self.erase_keeping_protected((line, column), end),
                ClearMode::Above => self.erase_keeping_protected((0, 0), (line, column)),
                _ => self.erase_keeping_protected((0, 0), end),
            }
        } else {
            Handler::clear_screen(&mut *self.term, mode);
        }
        self.after_call();
    }

    fn clear_tabs(&mut self, mode: TabulationClearMode) {
        self.flush();
        Handler::clear_tabs(&mut *self.term, mode);
        self.after_call();
    }

    fn set_tabs(&mut self, interval: u16) {
        self.flush();
        Handler::set_tabs(&mut *self.term, interval);
        self.after_call();
    }

    fn reset_state(&mut self) {
        self.flush();
        Handler::reset_state(&mut *self.term);
        // The titles stay, as in xterm (the pane keeps showing its window title too); their
        // stack goes.
        let icon = self.answers.titles.icon.take();
        *self.answers = AnswerState::default();
        self.answers.titles.icon = icon;
        // A reset leaves the alternate screen, keeping its grid; let it go again.
        super::alt::release(self.term);
        self.after_call();
    }

    fn reverse_index(&mut self) {
        self.flush();
        Handler::reverse_index(&mut *self.term);
        self.after_call();
    }

    fn terminal_attribute(&mut self, attr: Attr) {
        self.flush();
        Handler::terminal_attribute(&mut *self.term, attr);
        self.after_call();
    }

    fn set_mode(&mut self, mode: Mode) {
        self.flush();
        Handler::set_mode(&mut *self.term, mode);
        self.after_call();
    }

    fn unset_mode(&mut self, mode: Mode) {
        self.flush();
        Handler::unset_mode(&mut *self.term, mode);
        self.after_call();
    }

    fn report_mode(&mut self, mode: Mode) {
        self.flush();
        // DECRQM is a VT300 control: below that level (DECSCL) it goes unanswered.
        if !self.answers.allows(3) {
            return self.after_call();
        }
        match answers::ansi_mode(mode.raw()) {
            Some(reply) => self.listener.reply(reply),
            None => Handler::report_mode(&mut *self.term, mode),
        }
        self.after_call();
    }

    fn set_private_mode(&mut self, mode: PrivateMode) {
        self.flush();
        // DECLRMM is a VT400 mode: below that level (DECSCL) it is ignored, as in xterm.
        if mode.raw() == DECLRMM && !self.answers.allows(4) {
            return self.after_call();
        }
        if is_alt_screen(mode) {
            super::alt::prepare(self.term);
        }
        let in_alt = self.term.mode().contains(TermMode::ALT_SCREEN);
        match mode.raw() {
            DECNKM => Handler::set_keypad_application_mode(&mut *self.term),
            DECBKM => self.answers.backarrow_sends_bs = true,
            DECPFF => self.answers.print_form_feed = true,
            DECPEX => self.answers.print_extent = true,
            SAVE_CURSOR => Handler::save_cursor_position(&mut *self.term),
            ALT_SCREEN | ALT_SCREEN_CLEARED if !in_alt => self.term.swap_alt(),
            _ => (),
        }
        Handler::set_private_mode(&mut *self.term, mode);
        self.after_call();
    }

    fn unset_private_mode(&mut self, mode: PrivateMode) {
        self.flush();
        let in_alt = self.term.mode().contains(TermMode::ALT_SCREEN);
        match mode.raw() {
            DECNKM => Handler::unset_keypad_application_mode(&mut *self.term),
            DECBKM => self.answers.backarrow_sends_bs = false,
            DECPFF => self.answers.print_form_feed = false,
            DECPEX => self.answers.print_extent = false,
            SAVE_CURSOR => Handler::restore_cursor_position(&mut *self.term),
            ALT_SCREEN | ALT_SCREEN_CLEARED if in_alt => {
                // As in xterm, the screens share the cursor: it stays where the program left
                // it on the alternate screen (only 1049 restores a saved one).
                let cursor = self.term.grid().cursor.clone();
                if mode.raw() == ALT_SCREEN_CLEARED {
                    // 1047 clears the alternate screen as it leaves it.
                    self.term.grid_mut().reset_region(..);
                }
                self.term.swap_alt();
                self.term.grid_mut().cursor = cursor;
            }
            _ => (),
        }
        Handler::unset_private_mode(&mut *self.term, mode);
        if is_alt_screen(mode) {
            super::alt::release(self.term);
        }
        self.after_call();
    }

    fn report_private_mode(&mut self, mode: PrivateMode) {
        self.flush();
        if !self.answers.allows(3) {
            return self.after_call();
        }
        match answers::private_mode(self.term, self.answers, mode.raw()) {
            Some(reply) => self.listener.reply(reply),
            None => Handler::report_private_mode(&mut *self.term, mode),
        }
        self.after_call();
    }

    fn set_scrolling_region(&mut self, top: usize, bottom: Option<usize>) {
        self.flush();
        self.answers.set_region(top, bottom, self.term.screen_lines());
        Handler::set_scrolling_region(&mut *self.term, top, bottom);
        self.after_call();
    }

    fn set_keypad_application_mode(&mut self) {
        self.flush();
        Handler::set_keypad_application_mode(&mut *self.term);
        self.after_call();
    }

    fn unset_keypad_application_mode(&mut self) {
        self.flush();
        Handler::unset_keypad_application_mode(&mut *self.term);
        self.after_call();
    }

    fn set_active_charset(&mut self, value: CharsetIndex) {
        self.flush();
        Handler::set_active_charset(&mut *self.term, value);
        self.after_call();
    }

    fn configure_charset(&mut self, index: CharsetIndex, charset: StandardCharset) {
        self.flush();
        Handler::configure_charset(&mut *self.term, index, charset);
        self.after_call();
    }

    // OSC 4 and 10-12 are set and answered from the scanner's event (`super::colors`), which
    // reads every spec form xterm does; vte's calls for the few it parses are dropped.
    fn set_color(&mut self, _index: usize, _color: Rgb) {}

    fn dynamic_color_sequence(&mut self, _prefix: String, _index: usize, _terminator: &str) {}

    fn reset_color(&mut self, value: usize) {
        self.flush();
        Handler::reset_color(&mut *self.term, value);
        self.after_call();
    }

    fn clipboard_store(&mut self, clipboard: u8, base64: &[u8]) {
        self.flush();
        Handler::clipboard_store(&mut *self.term, clipboard, base64);
        self.after_call();
    }

    fn clipboard_load(&mut self, clipboard: u8, terminator: &str) {
        self.flush();
        Handler::clipboard_load(&mut *self.term, clipboard, terminator);
        self.after_call();
    }

    fn decaln(&mut self) {
        self.flush();
        Handler::decaln(&mut *self.term);
        // alacritty (vendored) resets the scrolling region with it.
        self.answers.region = None;
        self.after_call();
    }

    // XTWINOPS 22 and 23: vte drops which titles they name, so the OSC scanner reports them
    // and the terminal keeps the stack (`super::titles`); alacritty's own stack is not used.
    fn push_title(&mut self) {}

    fn pop_title(&mut self) {}

    fn text_area_size_pixels(&mut self) {
        self.flush();
        // alacritty asks its window for the size; a pane has none, so answer from the engine.
        self.listener.reply(answers::text_area_pixels(self.term));
        self.after_call();
    }

    fn text_area_size_chars(&mut self) {
        self.flush();
        Handler::text_area_size_chars(&mut *self.term);
        self.after_call();
    }

    fn set_hyperlink(&mut self, value: Option<Hyperlink>) {
        self.flush();
        Handler::set_hyperlink(&mut *self.term, value);
        self.after_call();
    }

    fn set_mouse_cursor_icon(&mut self, value: CursorIcon) {
        self.flush();
        Handler::set_mouse_cursor_icon(&mut *self.term, value);
        self.after_call();
    }

    fn report_keyboard_mode(&mut self) {
        self.flush();
        // alacritty reports the top of the stack, which `CSI = flags ; mode u` does not change:
        // report the flags in force instead, as the protocol asks.
        self.listener.reply(format!("\x1b[?{}u", answers::keyboard_flags(self.term)));
        self.after_call();
    }

    fn push_keyboard_mode(&mut self, mode: KeyboardModes) {
        self.flush();
        let depth = self.answers.keyboard_depth(self.term);
        if *depth < answers::MAX_KEYBOARD_STACK {
            *depth += 1;
            Handler::push_keyboard_mode(&mut *self.term, mode);
        }
        self.after_call();
    }

    fn pop_keyboard_modes(&mut self, to_pop: u16) {
        self.flush();
        let depth = self.answers.keyboard_depth(self.term);
        *depth = depth.saturating_sub(usize::from(to_pop));
        Handler::pop_keyboard_modes(&mut *self.term, to_pop);
        self.after_call();
    }

    fn set_keyboard_mode(&mut self, mode: KeyboardModes, behavior: KeyboardModesApplyBehavior) {
        self.flush();
        Handler::set_keyboard_mode(&mut *self.term, mode, behavior);
        self.after_call();
    }

    fn set_modify_other_keys(&mut self, mode: ModifyOtherKeys) {
        self.flush();
        Handler::set_modify_other_keys(&mut *self.term, mode);
        self.after_call();
    }

    fn report_modify_other_keys(&mut self) {
        self.flush();
        Handler::report_modify_other_keys(&mut *self.term);
        self.after_call();
    }

    fn set_scp(&mut self, char_path: ScpCharPath, update_mode: ScpUpdateMode) {
        self.flush();
        Handler::set_scp(&mut *self.term, char_path, update_mode);
        self.after_call();
    }
}

/// DECNKM, the numeric keypad mode: set is application keypad (as `ESC =`), reset numeric.
const DECNKM: u16 = 66;

/// DECBKM, the backarrow key mode: set, Backspace sends BS; reset (the default), DEL.
const DECBKM: u16 = 67;

/// DECLRMM, the left and right margin mode (the vendored Term implements it).
const DECLRMM: u16 = 69;

/// DECPFF, print form feed: kept for DECRQM (Berth has no printer).
const DECPFF: u16 = 18;

/// DECPEX, print extent: kept for DECRQM (Berth has no printer).
const DECPEX: u16 = 19;

/// xterm's alternate screen without saving the cursor (`?47`), which alacritty does not
/// know: the handler swaps screens itself.
const ALT_SCREEN: u16 = 47;

/// The alternate screen, cleared as it is left (`?1047`), which alacritty does not know.
const ALT_SCREEN_CLEARED: u16 = 1047;

/// Save (set) and restore (reset) the cursor as DECSC and DECRC do (`?1048`), which alacritty
/// does not know.
const SAVE_CURSOR: u16 = 1048;

/// Whether `mode` switches to the alternate screen (`?1049`, which alacritty implements, and
/// `?47` and `?1047`, which the handler does).
fn is_alt_screen(mode: PrivateMode) -> bool {
    matches!(mode, PrivateMode::Named(NamedPrivateMode::SwapScreenAndSetRestoreCursor))
        || matches!(mode.raw(), ALT_SCREEN | ALT_SCREEN_CLEARED)
}
