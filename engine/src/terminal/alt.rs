//! The alternate screen's grid, allocated only while a program uses it.
//!
//! alacritty's `Term` keeps a full-size grid for the alternate screen from the start (24 bytes
//! a cell: 240 KB at 200x50), though most panes (shells, agents that draw inline) never enter
//! it. This module swaps in a 1-row, 2-column placeholder while the primary screen is active,
//! and a full-size blank grid just before a program enters the alternate screen
//! (`CSI ? 1049 h`, or 47 and 1047, which the forwarding handler implements). It must not change
//! what the terminal shows or does: entering the alternate screen resets its grid anyway, and
//! the only other state touched, the primary screen's saved cursor, is put back.

use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::Term;

use super::listener::TermListener;

/// Replaces the inactive alternate grid, while the primary screen is active, with one of
/// `lines` x `columns`. Does nothing on the alternate screen.
fn replace_inactive(term: &mut Term<TermListener>, lines: usize, columns: usize) {
    if term.mode().contains(TermMode::ALT_SCREEN) {
        return;
    }
    // `swap_alt` into the alternate screen overwrites the primary's saved cursor; keep it.
    let saved = term.grid().saved_cursor.clone();
    term.swap_alt();
    *term.grid_mut() = Grid::new(lines, columns, 0);
    term.swap_alt();
    term.grid_mut().saved_cursor = saved;
}

/// Frees the alternate grid while the primary screen is active.
pub(super) fn release(term: &mut Term<TermListener>) {
    replace_inactive(term, 1, 2);
}

/// Gives the alternate screen a full-size grid again; call before a program enters it.
pub(super) fn prepare(term: &mut Term<TermListener>) {
    let (lines, columns) = (term.screen_lines(), term.columns());
    replace_inactive(term, lines, columns);
}
