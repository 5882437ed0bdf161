//! A renderer-neutral description of one frame: panes placed on the window's cell grid, each
//! with its header line and the extracted cells of its terminal.
//!
//! It owns the plain data the window fills in and the renderer draws. It must not refer to
//! wgpu, glyphon or the server: a scene can be built in a test from bytes fed to a terminal.
//! [`extract`] and [`extract_styled_lines`] (in `render/extract.rs`) turn terminals into
//! [`ScreenCells`]; the colours come from [`Palette`] (in `render/palette.rs`).

pub use super::extract::{extract, extract_styled_lines};
pub use super::palette::{Palette, Rgb};

/// A rectangle on the window's cell grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CellRectU16 {
    /// Leftmost column.
    pub col: u16,
    /// Top row.
    pub row: u16,
    /// Width in columns.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
}

impl CellRectU16 {
    /// A rectangle from its corner and size.
    pub const fn new(col: u16, row: u16, cols: u16, rows: u16) -> Self {
        Self { col, row, cols, rows }
    }
}

/// Everything drawn in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Width of the window's cell grid.
    pub grid_cols: u16,
    /// Height of the window's cell grid.
    pub grid_rows: u16,
    /// The panes of the active tab.
    pub panes: Vec<PaneScene>,
    /// Divider rectangles between panes (a line is drawn along each).
    pub dividers: Vec<CellRectU16>,
    /// Colour of everything no pane covers.
    pub background: Rgb,
}

/// One pane: a header line and, below it, its terminal.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneScene {
    /// The pane's cells on the window grid. Row `rect.row` is the header line; the terminal
    /// occupies rows `rect.row + 1 .. rect.row + rect.rows`.
    pub rect: CellRectU16,
    /// The header line.
    pub header: HeaderScene,
    /// The terminal's visible cells.
    pub screen: ScreenCells,
    /// Whether the pane has keyboard focus.
    pub focused: bool,
    /// The selection, in the screen's cell coordinates.
    pub selection: Option<SelectionSpan>,
}

/// The one-line header above a pane.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderScene {
    /// Title (OSC title or argv\[0\]).
    pub title: String,
    /// Restore-state badge drawn at the right end.
    pub badge: Badge,
    /// Whether the pane has keyboard focus (drawn brighter).
    pub focused: bool,
    /// Whether the pane wants attention (a marker at the left end).
    pub attention: bool,
}

/// The restore state shown in a pane's header (DESIGN.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Badge {
    /// The child runs and its PTY is attached.
    #[default]
    Live,
    /// Rebuilt after a restart; no process yet.
    Restored,
    /// Rebuilt, and the agent can be resumed.
    Resumable,
    /// The process ended; its output is kept.
    Exited,
}

impl Badge {
    /// The text drawn in the badge.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Live => "LIVE",
            Self::Restored => "RESTORED",
            Self::Resumable => "RESUMABLE",
            Self::Exited => "EXITED",
        }
    }
}

/// A linear (row-major) selection, both ends inclusive, in screen coordinates `(col, row)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SelectionSpan {
    /// First selected cell.
    pub start: (u16, u16),
    /// Last selected cell.
    pub end: (u16, u16),
}

impl SelectionSpan {
    /// Whether the cell at `(col, row)` is selected (the ends may be given in either order).
    pub fn contains(&self, col: u16, row: u16) -> bool {
        let key = |(c, r): (u16, u16)| (r, c);
        let (a, b) = if key(self.start) <= key(self.end) {
            (self.start, self.end)
        } else {
            (self.end, self.start)
        };
        let point = (row, col);
        key(a) <= point && point <= key(b)
    }

    /// The selected columns of `row` as a half-open range, if any, for a screen `cols` wide.
    pub fn columns_in_row(&self, row: u16, cols: u16) -> Option<std::ops::Range<u16>> {
        let key = |(c, r): (u16, u16)| (r, c);
        let (a, b) = if key(self.start) <= key(self.end) {
            (self.start, self.end)
        } else {
            (self.end, self.start)
        };
        if row < a.1 || row > b.1 {
            return None;
        }
        let from = if row == a.1 { a.0 } else { 0 };
        let to = if row == b.1 { b.0.saturating_add(1) } else { cols };
        let to = to.min(cols);
        (from < to).then_some(from..to)
    }
}

/// A terminal's visible cells, with colours already resolved.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScreenCells {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// `cols × rows` cells, row-major.
    pub cells: Vec<CellView>,
    /// The cursor, if it is on the visible screen.
    pub cursor: Option<CursorView>,
}

impl ScreenCells {
    /// A screen of blank cells in the palette's default colours.
    pub fn blank(cols: u16, rows: u16, palette: &Palette) -> Self {
        let cell = CellView::blank(palette.fg, palette.bg);
        Self { cols, rows, cells: vec![cell; usize::from(cols) * usize::from(rows)], cursor: None }
    }

    /// The cells of row `row` (empty past the last row).
    pub fn row(&self, row: u16) -> &[CellView] {
        let cols = usize::from(self.cols);
        let start = usize::from(row) * cols;
        self.cells.get(start..start + cols).unwrap_or(&[])
    }

    /// The cell at `(col, row)`, if it exists.
    pub fn cell(&self, col: u16, row: u16) -> Option<&CellView> {
        self.row(row).get(usize::from(col))
    }
}

/// One cell, colours resolved (inverse, hidden and dim already applied).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CellView {
    /// The character (`' '` for an empty cell).
    pub ch: char,
    /// Zero-width characters drawn on top of `ch` (combining marks, variation selectors).
    pub extra: Option<Box<str>>,
    /// Text colour.
    pub fg: Rgb,
    /// Background colour.
    pub bg: Rgb,
    /// Underline colour (SGR 58); `None` draws the underline in `fg`.
    pub underline_color: Option<Rgb>,
    /// Attributes.
    pub flags: CellStyle,
}

impl CellView {
    /// An empty cell.
    pub fn blank(fg: Rgb, bg: Rgb) -> Self {
        Self { ch: ' ', extra: None, fg, bg, underline_color: None, flags: CellStyle::default() }
    }
}

/// Text attributes of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CellStyle {
    /// Bold face.
    pub bold: bool,
    /// Italic face.
    pub italic: bool,
    /// Dim (already applied to `fg`; kept for consumers that want to know).
    pub dim: bool,
    /// Underline, if any.
    pub underline: Option<UnderlineStyle>,
    /// Strikethrough.
    pub strike: bool,
    /// The character takes two cells; the next cell is its spacer.
    pub wide: bool,
    /// The second half of a wide character: nothing is drawn here but the background.
    pub spacer: bool,
}

/// The kinds of underline (SGR 4, 4:2 … 4:5, 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnderlineStyle {
    /// One straight line.
    Single,
    /// Two straight lines.
    Double,
    /// A wavy line.
    Curly,
    /// A dotted line.
    Dotted,
    /// A dashed line.
    Dashed,
}

/// The cursor on a screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CursorView {
    /// Column.
    pub col: u16,
    /// Row.
    pub row: u16,
    /// Shape (DECSCUSR; hollow when the pane is unfocused).
    pub shape: CursorShape,
    /// Whether it is drawn (DECTCEM; a blinking cursor's "off" phase sets this to false).
    pub visible: bool,
    /// Whether the program asked for a blinking cursor (the window toggles `visible`).
    pub blinking: bool,
}

/// Cursor shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CursorShape {
    /// A filled cell; the character under it is drawn in the background colour.
    #[default]
    Block,
    /// A thin vertical bar at the cell's left edge.
    Beam,
    /// A line at the cell's bottom.
    Underline,
    /// The outline of a cell (unfocused panes).
    HollowBlock,
}
