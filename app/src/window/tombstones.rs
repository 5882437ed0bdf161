//! What the window keeps about tombstones (panes restored or ended, shown as their saved
//! tail): the tail as cells, cached; how far each tail is scrolled back; and a failed resume's
//! message for the overlay.
//!
//! Owns that window-local state, by pane. It must not read the Store: the window hands it the
//! tail's length and, when the cache is stale, the tail itself.

use std::cell::RefCell;
use std::collections::HashMap;

use berth_engine::ids::PaneId;

use crate::render::{self, Palette, ScreenCells};

/// Lines a wheel step scrolls a tombstone's tail.
const TAIL_WHEEL_LINES: usize = 3;

/// A tail as cells and what it was made for: (tail lines, cols, rows, scrolled back, cells).
type TailCells = (usize, u16, u16, usize, ScreenCells);

/// The window's tombstones.
#[derive(Debug, Default)]
pub(super) struct Tombstones {
    /// Tails as cells, by pane. Extracting a tail parses up to 64 KiB, so it is done once per
    /// change, not once per frame; a `RefCell` because a frame fills it.
    cells: RefCell<HashMap<PaneId, TailCells>>,
    /// How many lines a tail is scrolled back, by pane.
    scroll: HashMap<PaneId, usize>,
    /// The last failed resume, by pane.
    resume_errors: HashMap<PaneId, String>,
}

impl Tombstones {
    /// The tail of `pane` as cells of `cols × rows`, scrolled back as far as the user did;
    /// `len` is the tail's length in lines (`None`: the pane has a live terminal, and `None`
    /// is returned) and `tail` reads the tail when the cached cells are stale.
    pub(super) fn cells(
        &self,
        pane: &PaneId,
        (cols, rows): (u16, u16),
        len: Option<usize>,
        tail: impl FnOnce() -> Option<Vec<String>>,
        palette: &Palette,
    ) -> Option<ScreenCells> {
        let Some(len) = len else {
            self.cells.borrow_mut().remove(pane);
            return None;
        };
        let back = self.scrolled_back(pane).min(len);
        if let Some((l, c, r, b, cells)) = self.cells.borrow().get(pane) {
            if (*l, *c, *r, *b) == (len, cols, rows, back) {
                return Some(cells.clone());
            }
        }
        let tail = tail()?;
        let shown = &tail[..tail.len().saturating_sub(back)];
        let cells = render::extract_styled_lines(shown, cols, rows, palette);
        self.cells.borrow_mut().insert(pane.clone(), (tail.len(), cols, rows, back, cells.clone()));
        Some(cells)
    }

    /// Forgets the cached cells (their colours changed).
    pub(super) fn forget_cells(&self) {
        self.cells.borrow_mut().clear();
    }

    /// How many lines the tail of `pane` is scrolled back.
    fn scrolled_back(&self, pane: &PaneId) -> usize {
        self.scroll.get(pane).copied().unwrap_or(0)
    }

    /// The wheel over the tail of `pane`, `len` lines long: `steps` steps up (back) or down;
    /// the tail's first line stays on screen.
    pub(super) fn wheel(&mut self, pane: &PaneId, up: bool, steps: usize, len: usize) {
        let back = self.scrolled_back(pane);
        let lines = steps * TAIL_WHEEL_LINES;
        let back = if up { back + lines } else { back.saturating_sub(lines) };
        self.scroll.insert(pane.clone(), back.min(len.saturating_sub(1)));
    }

    /// Why the last resume of `pane` failed, if it did.
    pub(super) fn resume_error(&self, pane: &PaneId) -> Option<&str> {
        self.resume_errors.get(pane).map(String::as_str)
    }

    /// The outcome of resuming `pane`: a resumed pane forgets its error and scroll; a failure
    /// is kept for its overlay.
    pub(super) fn resumed(&mut self, pane: &PaneId, result: Result<(), String>) {
        match result {
            Ok(()) => {
                self.resume_errors.remove(pane);
                self.scroll.remove(pane);
            }
            Err(message) => {
                self.resume_errors.insert(pane.clone(), format!("resume failed: {message}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    #[test]
    fn cells_are_cached_until_the_tail_size_or_scroll_changes() {
        let mut tombs = Tombstones::default();
        let p = PaneId::new();
        let palette = Palette::dark();
        let reads = std::cell::Cell::new(0);
        let read = |n: usize| {
            reads.set(reads.get() + 1);
            Some(tail(n))
        };
        let first = tombs.cells(&p, (20, 3), Some(10), || read(10), &palette);
        assert!(first.is_some());
        // Unchanged: from the cache.
        assert_eq!(tombs.cells(&p, (20, 3), Some(10), || read(10), &palette), first);
        assert_eq!(reads.get(), 1);
        // Scrolled back, grown or resized: read again.
        tombs.wheel(&p, true, 1, 10);
        let back = tombs.cells(&p, (20, 3), Some(10), || read(10), &palette);
        assert_ne!(back, first);
        tombs.cells(&p, (20, 3), Some(11), || read(11), &palette);
        tombs.cells(&p, (21, 3), Some(11), || read(11), &palette);
        assert_eq!(reads.get(), 4);
        // A live pane has no tail cells.
        assert_eq!(tombs.cells(&p, (20, 3), None, || read(1), &palette), None);
        assert_eq!(reads.get(), 4);
    }

    #[test]
    fn the_wheel_keeps_the_first_line_on_screen_and_a_resume_resets_it() {
        let mut tombs = Tombstones::default();
        let p = PaneId::new();
        tombs.wheel(&p, true, 2, 100);
        assert_eq!(tombs.scrolled_back(&p), 6);
        tombs.wheel(&p, false, 1, 100);
        assert_eq!(tombs.scrolled_back(&p), 3);
        tombs.wheel(&p, true, 100, 10);
        assert_eq!(tombs.scrolled_back(&p), 9);
        tombs.wheel(&p, false, 100, 10);
        assert_eq!(tombs.scrolled_back(&p), 0);
        tombs.wheel(&p, true, 1, 10);
        tombs.resumed(&p, Err("no such file: make".into()));
        assert_eq!(tombs.resume_error(&p), Some("resume failed: no such file: make"));
        assert_eq!(tombs.scrolled_back(&p), 3);
        tombs.resumed(&p, Ok(()));
        assert_eq!((tombs.resume_error(&p), tombs.scrolled_back(&p)), (None, 0));
    }
}
