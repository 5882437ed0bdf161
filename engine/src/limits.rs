//! The bounds on a terminal's size, checked wherever a size enters (the socket, the window,
//! a snapshot) so that no request can make a pane allocate without limit.
//!
//! The limits leave room for an 8K screen (7680×4320 pixels) at a 4×8-pixel font (1920×540
//! cells) and more; a terminal's grid costs about 24 bytes a cell, so [`MAX_CELLS`] keeps one
//! screen under about 50 MB. This module only decides; it allocates nothing.

use crate::layout::CellSize;

/// The most columns a tab or pane may have.
pub const MAX_COLS: u16 = 4000;

/// The most rows a tab or pane may have.
pub const MAX_ROWS: u16 = 2000;

/// The most cells (columns × rows) a tab or pane may have.
pub const MAX_CELLS: u32 = 2_000_000;

/// Why a size was refused, in words that name the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// A zero width or height.
    #[error("cols and rows must be at least 1 (got {cols}×{rows})")]
    Zero {
        /// The columns asked for.
        cols: u32,
        /// The rows asked for.
        rows: u32,
    },
    /// Wider or taller than the limits.
    #[error(
        "size {cols}×{rows} is too large: at most {MAX_COLS} cols, {MAX_ROWS} rows and \
         {MAX_CELLS} cells (cols×rows)"
    )]
    TooLarge {
        /// The columns asked for.
        cols: u32,
        /// The rows asked for.
        rows: u32,
    },
}

/// Checks a size asked for from outside (any integer width, so that a value too big for
/// `u16` gets the same clear answer).
pub fn check_size(cols: u32, rows: u32) -> Result<CellSize, SizeError> {
    if cols == 0 || rows == 0 {
        return Err(SizeError::Zero { cols, rows });
    }
    if cols > u32::from(MAX_COLS) || rows > u32::from(MAX_ROWS) || cols * rows > MAX_CELLS {
        return Err(SizeError::TooLarge { cols, rows });
    }
    // Both fit in u16: they are at most MAX_COLS and MAX_ROWS.
    Ok(CellSize { cols: cols as u16, rows: rows as u16 })
}

/// The nearest size within the limits: at least 1×1, at most [`MAX_COLS`]×[`MAX_ROWS`], and
/// with rows cut until the cells fit in [`MAX_CELLS`]. For sizes that come from a measurement
/// (the window's pixels) rather than a request.
pub fn clamp_size(size: CellSize) -> CellSize {
    let cols = size.cols.clamp(1, MAX_COLS);
    let max_rows = (MAX_CELLS / u32::from(cols)).min(u32::from(MAX_ROWS)) as u16;
    CellSize { cols, rows: size.rows.clamp(1, max_rows) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_against_each_limit() {
        let cases: &[(u32, u32, bool)] = &[
            (1, 1, true),
            (80, 24, true),
            (1920, 540, true),
            (MAX_COLS as u32, 500, true),
            (1000, MAX_ROWS as u32, true),
            (0, 24, false),
            (80, 0, false),
            (MAX_COLS as u32 + 1, 24, false),
            (80, MAX_ROWS as u32 + 1, false),
            (MAX_COLS as u32, MAX_ROWS as u32, false),
            (65535, 65535, false),
            (u32::MAX, u32::MAX, false),
        ];
        for &(cols, rows, ok) in cases {
            assert_eq!(check_size(cols, rows).is_ok(), ok, "{cols}×{rows}");
        }
        let err = check_size(65535, 65535).unwrap_err().to_string();
        assert!(err.contains("at most 4000 cols, 2000 rows and 2000000 cells"), "{err}");
    }

    #[test]
    fn clamped_sizes_always_pass_the_check() {
        for (cols, rows) in [(0, 0), (65535, 65535), (4000, 2000), (1, 65535), (65535, 1), (80, 24)]
        {
            let s = clamp_size(CellSize { cols, rows });
            assert!(check_size(u32::from(s.cols), u32::from(s.rows)).is_ok(), "{s:?}");
        }
        assert_eq!(clamp_size(CellSize { cols: 80, rows: 24 }), CellSize { cols: 80, rows: 24 });
    }
}
