//! The VT420 editing controls vte does not parse and the OSC scanner recognises
//! ([`crate::osc::Control`]): fill, erase and copy a rectangle (DECFRA, DECERA, DECSERA,
//! DECCRA), insert and delete columns (DECIC, DECDC), back and forward index (DECBI, DECFI).
//! Applied straight to the Term's screen grid, never to its history; the cursor moves only
//! for DECBI and DECFI.
//!
//! Rectangles are 1-based and inclusive, 0 meaning the default (the screen's edge), counted
//! from the scrolling region's top in origin mode, and clipped to the screen; one that is
//! empty once clipped changes nothing. DECSERA, and the selective erases of the display and
//! the line (DECSED, DECSEL, through [`erase_cells`]), keep the characters DECSCA protects
//! (the vendored alacritty's `Flags::PROTECTED`), as xterm does; while SPA protection is in
//! use, DECSED and DECSEL keep those characters too but DECSERA erases them, as xterm. In
//! origin mode the columns count from the left margin. DECIC, DECDC, DECBI and DECFI move only
//! the cells between the left and right margins (DECSLRM). A wide character cut by an edge is
//! blanked whole, so the grid stays well formed.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::Term;

use crate::osc::Control;

use super::answers::{resolve, AnswerState, Rect};
use super::listener::TermListener;

#[cfg(test)]
mod tests;

/// Applies a rectangle or column edit; the other controls (soft reset, selective erase, saved
/// modes) the terminal applies itself.
pub(super) fn apply(term: &mut Term<TermListener>, state: &AnswerState, control: &Control) {
    // Erased cells take the current background, as alacritty's own erases do.
    let blank = Cell { bg: term.grid().cursor.template.bg, ..Cell::default() };
    match *control {
        Control::Fill { ch, rect } => {
            // Only graphic characters (GL or GR) fill; anything else is ignored.
            let Some(c) =
                char::from_u32(u32::from(ch)).filter(|c| matches!(*c as u32, 32..=126 | 160..=255))
            else {
                return;
            };
            if let Some(rect) = resolve(term, state, rect) {
                let template = &term.grid().cursor.template;
                let filled = Cell {
                    c,
                    fg: template.fg,
                    bg: template.bg,
                    flags: template.flags
                        & !(Flags::WIDE_CHAR
                            | Flags::WIDE_CHAR_SPACER
                            | Flags::LEADING_WIDE_CHAR_SPACER
                            | Flags::WRAPLINE),
                    extra: None,
                };
                fill(term, rect, &filled);
            }
        }
        Control::Erase { rect, selective: false } => {
            if let Some(rect) = resolve(term, state, rect) {
                fill(term, rect, &blank);
            }
        }
        Control::Erase { rect, selective: true } => {
            if let Some(rect) = resolve(term, state, rect) {
                // As in xterm, DECSERA keeps only DEC-protected characters (DECSCA): while ISO
                // protection (SPA) is in use it erases everything.
                for line in rect.top..=rect.bottom {
                    erase_cells(term, line, rect.left..=rect.right, !state.iso_protection);
                }
            }
        }
        Control::Copy { source, top, left } => {
            if let Some(rect) = resolve(term, state, source) {
                copy(term, state, rect, top, left);
            }
        }
        Control::InsertColumns(n) => {
            shift_columns(term, state, usize::from(n.max(1)), true, &blank)
        }
        Control::DeleteColumns(n) => {
            shift_columns(term, state, usize::from(n.max(1)), false, &blank)
        }
        Control::Index { back } => index(term, state, back, &blank),
        Control::Margins { .. }
        | Control::MarginMode
        | Control::SoftReset
        | Control::Protect(_)
        | Control::IsoProtect(_)
        | Control::SelectiveErase { .. }
        | Control::SaveModes(_)
        | Control::RestoreModes(_)
        | Control::TitleStack { .. }
        | Control::ConformanceLevel(_) => (),
    }
}

/// Sets every cell of `rect` to `cell`.
fn fill(term: &mut Term<TermListener>, rect: Rect, cell: &Cell) {
    let grid = term.grid_mut();
    for line in rect.top..=rect.bottom {
        let row = &mut grid[Line(line as i32)];
        for column in rect.left..=rect.right {
            row[Column(column)] = cell.clone();
        }
    }
    repair_wide(term, rect.top, rect.bottom);
}

/// Blanks the cells of screen row `line` in `columns` (taking the current background, as
/// alacritty's erases do), those protected (DECSCA or SPA) only unless `keep_protected`, then
/// repairs the row's wide characters.
pub(super) fn erase_cells(
    term: &mut Term<TermListener>,
    line: usize,
    columns: std::ops::RangeInclusive<usize>,
    keep_protected: bool,
) {
    let blank = Cell { bg: term.grid().cursor.template.bg, ..Cell::default() };
    let row = &mut term.grid_mut()[Line(line as i32)];
    for column in columns {
        let cell = &mut row[Column(column)];
        if !(keep_protected && cell.flags.contains(Flags::PROTECTED)) {
            *cell = blank.clone();
        }
    }
    repair_wide(term, line, line);
}

/// DECCRA: copies `source` so that its top-left corner lands at (`top`, `left`) (1-based, 0
/// for 1, relative to the origin in origin mode), clipped to the screen.
fn copy(term: &mut Term<TermListener>, state: &AnswerState, source: Rect, top: u16, left: u16) {
    let Some(dest) = resolve(term, state, [top, left, 0, 0]) else { return };
    let cells: Vec<Vec<Cell>> = (source.top..=source.bottom)
        .map(|line| {
            let row = &term.grid()[Line(line as i32)];
            (source.left..=source.right).map(|column| row[Column(column)].clone()).collect()
        })
        .collect();
    let lines = term.screen_lines();
    let columns = term.columns();
    let grid = term.grid_mut();
    for (i, cells) in cells.into_iter().enumerate() {
        let line = dest.top + i;
        if line >= lines {
            break;
        }
        let row = &mut grid[Line(line as i32)];
        for (j, cell) in cells.into_iter().enumerate() {
            if dest.left + j >= columns {
                break;
            }
            row[Column(dest.left + j)] = cell;
        }
    }
    repair_wide(term, dest.top, (dest.top + source.bottom - source.top).min(lines - 1));
}

/// DECIC (`insert`) or DECDC: `n` blank columns inserted at the cursor's column, or `n`
/// columns deleted there, on the rows of the scrolling region, up to the right margin; nothing
/// when the cursor is outside the scrolling region or the left and right margins.
fn shift_columns(
    term: &mut Term<TermListener>,
    state: &AnswerState,
    n: usize,
    insert: bool,
    blank: &Cell,
) {
    let (top, bottom) = state.region_or_screen(term.screen_lines());
    let (left, right) = term.horizontal_margins().unwrap_or((0, term.columns() - 1));
    let cursor = term.grid().cursor.point;
    let line = cursor.line.0.max(0) as usize;
    let at = cursor.column.0;
    if line + 1 < top || line + 1 > bottom || at < left || at > right {
        return;
    }
    shift_columns_at(term, state, at, n, insert, blank);
}

/// DECBI (`back`) or DECFI: the cursor moves one column back or forward, except at the left
/// (right) margin, where the columns between the margins scroll right (left) by one on the
/// rows of the scrolling region instead; at the screen's edge outside the margins nothing
/// happens, as in xterm.
fn index(term: &mut Term<TermListener>, state: &AnswerState, back: bool, blank: &Cell) {
    let last = term.columns() - 1;
    let (left, right) = term.horizontal_margins().unwrap_or((0, last));
    let column = term.grid().cursor.point.column.0;
    let cursor = &mut term.grid_mut().cursor;
    match (back, column) {
        (true, c) if c == left => shift_columns_at(term, state, left, 1, true, blank),
        (false, c) if c == right => shift_columns_at(term, state, left, 1, false, blank),
        (true, c) if c > 0 => {
            cursor.point.column = Column(c - 1);
            cursor.input_needs_wrap = false;
        }
        (false, c) if c < last => {
            cursor.point.column = Column(c + 1);
            cursor.input_needs_wrap = false;
        }
        _ => (),
    }
}

/// `n` blank columns inserted at column `at` (`insert`), or `n` columns deleted there, on the
/// rows of the scrolling region, the cells between `at` and the right margin moving.
fn shift_columns_at(
    term: &mut Term<TermListener>,
    state: &AnswerState,
    at: usize,
    n: usize,
    insert: bool,
    blank: &Cell,
) {
    let lines = term.screen_lines();
    let columns = term.columns();
    let (top, bottom) = state.region_or_screen(lines);
    let end = term.horizontal_margins().map_or(columns, |(_, right)| right + 1);
    let n = n.min(end - at);
    let grid = term.grid_mut();
    for line in top - 1..bottom {
        let row = &mut grid[Line(line as i32)];
        // The row's soft wrap ends: its last cell no longer continues on the next row.
        row[Column(columns - 1)].flags.remove(Flags::WRAPLINE);
        let cells = &mut row[Column(at)..Column(end)];
        if insert {
            cells.rotate_right(n);
            cells[..n].fill(blank.clone());
        } else {
            cells.rotate_left(n);
            let len = cells.len();
            cells[len - n..].fill(blank.clone());
        }
    }
    repair_wide(term, top - 1, bottom - 1);
}

/// Blanks the halves of wide characters an edit separated on rows `top..=bottom`: a wide
/// character must be followed by its spacer, and a spacer preceded by its character.
fn repair_wide(term: &mut Term<TermListener>, top: usize, bottom: usize) {
    let columns = term.columns();
    let grid = term.grid_mut();
    for line in top..=bottom {
        let row = &mut grid[Line(line as i32)];
        for column in 0..columns {
            let flags = row[Column(column)].flags;
            let whole = if flags.contains(Flags::WIDE_CHAR) {
                column + 1 < columns
                    && row[Column(column + 1)].flags.contains(Flags::WIDE_CHAR_SPACER)
            } else if flags.contains(Flags::WIDE_CHAR_SPACER) {
                column > 0 && row[Column(column - 1)].flags.contains(Flags::WIDE_CHAR)
            } else {
                true
            };
            if !whole {
                let cell = &mut row[Column(column)];
                cell.c = ' ';
                cell.flags.remove(Flags::WIDE_CHAR | Flags::WIDE_CHAR_SPACER);
                cell.extra = None;
            }
        }
    }
}
