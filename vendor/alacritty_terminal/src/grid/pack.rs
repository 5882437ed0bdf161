//! Berth: the compact form of a row of [`Cell`]s, for history rows (vendor/BERTH.md).
//!
//! A packed row holds its text as UTF-8 and its styles as a short list of prototype cells (a
//! cell with its character blanked: colours, flags and `extra`, zero-width characters and
//! hyperlinks included). The bytes are the cells in order: `STYLE, index` switches the
//! prototype the following characters take (UTF-8 never holds the byte `STYLE`), every other
//! run of bytes is characters, one cell each. The cells after the encoded ones, up to the row's
//! width, are copies of the last prototype, the row's last cell. Decoding gives back cells equal
//! to the ones packed.

use std::sync::Arc;

use crate::grid::row::PackedRow;
use crate::term::cell::Cell;
use crate::vte::ansi::Color;

/// The byte that switches the style; it never occurs in UTF-8.
const STYLE: u8 = 0xff;

/// The most prototypes a packed row can refer to (their index is one byte); a row with more
/// distinct styles stays plain.
const MAX_STYLES: usize = 255;

/// Whether two cells differ only in their character.
#[inline(always)]
fn same_style(a: &Cell, b: &Cell) -> bool {
    a.flags == b.flags
        && a.fg == b.fg
        && a.bg == b.bg
        && match (&a.extra, &b.extra) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => false,
        }
}

/// A number for a colour, different for every colour.
#[inline(always)]
fn color_key(color: Color) -> u64 {
    match color {
        Color::Named(named) => named as u64,
        Color::Indexed(index) => 0x1_0000 | u64::from(index),
        Color::Spec(rgb) => {
            0x100_0000 | u64::from(rgb.r) << 16 | u64::from(rgb.g) << 8 | u64::from(rgb.b)
        },
    }
}

/// The colours and flags of a cell as one number (`same_style` for cells without `extra`).
#[inline(always)]
fn plain_key(cell: &Cell) -> u128 {
    let colors = color_key(cell.fg) | color_key(cell.bg) << 25;
    u128::from(colors) | u128::from(cell.flags.bits()) << 64
}

/// Appends a character's UTF-8.
#[inline(always)]
fn push_char(bytes: &mut Vec<u8>, c: char) {
    if c.is_ascii() {
        bytes.push(c as u8);
    } else {
        bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// The index of the prototype with `cell`'s style, added if it is new; `None` past
/// [`MAX_STYLES`].
#[inline]
fn style_index(styles: &mut Vec<Cell>, cell: &Cell) -> Option<usize> {
    if let Some(index) = styles.iter().position(|style| same_style(style, cell)) {
        return Some(index);
    }
    if styles.len() == MAX_STYLES {
        return None;
    }
    styles.push(Cell { c: ' ', ..cell.clone() });
    Some(styles.len() - 1)
}

/// Packs `cells`, of which those from `occ` on all equal the last one (the invariant of a row's
/// `occ`); `None` when the row has too many styles to pack.
pub(crate) fn pack_cells(
    cells: &[Cell],
    occ: usize,
    scratch: &mut Vec<u8>,
) -> Option<PackedRow<Cell>> {
    let last = cells.last()?;
    debug_assert!(cells[occ.min(cells.len())..].iter().all(|cell| cell == last));

    // The cells at the end that equal the last one are left to the fill.
    let mut end = occ.min(cells.len());
    while end > 0 && cells[end - 1] == *last {
        end -= 1;
    }

    scratch.clear();
    scratch.reserve(end + 16);
    let mut styles: Vec<Cell> = Vec::new();
    let mut at = 0;
    while at < end {
        // A run of cells with the first one's style.
        let first = &cells[at];
        let index = style_index(&mut styles, first)?;
        scratch.push(STYLE);
        // The index fits a byte: there are at most MAX_STYLES prototypes.
        scratch.push(index as u8);
        push_char(scratch, first.c);
        at += 1;
        if first.extra.is_none() {
            // Most runs: the style is colours and flags alone, compared as numbers.
            let key = plain_key(first);
            while at < end && cells[at].extra.is_none() && plain_key(&cells[at]) == key {
                push_char(scratch, cells[at].c);
                at += 1;
            }
        } else {
            while at < end && same_style(first, &cells[at]) {
                push_char(scratch, cells[at].c);
                at += 1;
            }
        }
    }
    if end < cells.len() {
        styles.push(last.clone());
    }

    Some(PackedRow::new(cells.len(), scratch[..].into(), styles.into_boxed_slice(), unpack_cells))
}

/// Decodes a row packed by [`pack_cells`].
fn unpack_cells(packed: &PackedRow<Cell>) -> Vec<Cell> {
    let columns = packed.columns();
    let mut cells = Vec::with_capacity(columns);
    let bytes = &packed.bytes[..];
    let mut style = &packed.styles[0..0];
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == STYLE {
            let index = usize::from(bytes[at + 1]);
            style = &packed.styles[index..=index];
            at += 2;
            continue;
        }
        let end = bytes[at..].iter().position(|&b| b == STYLE).map_or(bytes.len(), |n| at + n);
        // The bytes between style switches are the UTF-8 of chars that `pack_cells` wrote.
        let text = std::str::from_utf8(&bytes[at..end]).expect("a packed row holds UTF-8");
        let prototype = &style[0];
        cells.extend(text.chars().map(|c| Cell { c, ..prototype.clone() }));
        at = end;
    }
    if cells.len() < columns {
        let fill = packed.styles.last().expect("a packed row with a fill keeps its fill cell");
        cells.resize(columns, fill.clone());
    }
    cells
}
