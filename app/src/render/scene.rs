//! A renderer-neutral description of one frame: panes placed on the window's cell grid, each
//! with its header line and the extracted cells of its terminal.
//!
//! It owns the plain data the window fills in and the renderer draws. It must not refer to
//! wgpu, glyphon or the server: a scene can be built in a test from bytes fed to a terminal.
//! [`extract`] and [`extract_styled_lines`] (in `render/extract.rs`) turn terminals into
//! [`ScreenCells`]; the colours come from [`Palette`] (in `render/palette.rs`).

use super::palette::{Palette, Rgb};

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
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// The tab bar along the window's top row, if shown (the panes start below it).
    pub tab_bar: Option<TabBarScene>,
    /// The workspace switcher, drawn over everything else while it is open.
    pub switcher: Option<SwitcherScene>,
    /// One line of error along the window's bottom row (a config file that did not load).
    pub banner: Option<String>,
    /// The sidebar of workspaces and tasks along the window's right edge, if shown (the
    /// panes are narrower by its width).
    pub sidebar: Option<SidebarScene>,
    /// A task's review view over the tab's area, on the modal layer, while it is open.
    pub review: Option<ReviewScene>,
    /// The inbox of notifications and permission requests, on the modal layer, while open.
    pub inbox: Option<InboxScene>,
    /// A new notification's toast near the window's bottom right corner, for a few seconds
    /// (when no desktop shows it).
    pub toast: Option<ToastScene>,
}

/// The inbox: a framed panel of lines (workspace titles, notifications, requests with their
/// buttons) under a title row, on the modal layer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct InboxScene {
    /// Where it is drawn on the window grid (its frame included).
    pub rect: CellRectU16,
    /// The title row's text ("Inbox · 2 unread").
    pub title: String,
    /// Buttons on the title row ("Mark all read"), at columns relative to the text start.
    pub title_buttons: Vec<SidebarButton>,
    /// The hint along the bottom row (its keys).
    pub hint: String,
    /// The lines shown, from the row under the title.
    pub lines: Vec<SidebarLine>,
    /// The highlighted line (the keyboard's), an index into `lines`.
    pub selected: Option<usize>,
}

/// A toast: a small framed box of a few lines.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ToastScene {
    /// Where it is drawn on the window grid.
    pub rect: CellRectU16,
    /// Its lines (the first bold), already cut to its width.
    pub lines: Vec<String>,
}

/// The review view of a task's diff: a title row with buttons, a status (wrapped), the file
/// list on the left and the selected file's diff rows on the right. Only the rows that show
/// are here, so building it costs as much as the screen's rows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ReviewScene {
    /// The tab's area it covers.
    pub rect: CellRectU16,
    /// The title (task, file count, totals).
    pub title: String,
    /// The buttons along the title row, at columns relative to `rect.col`.
    pub buttons: Vec<ReviewButton>,
    /// The rows that say what is reviewed (label, state, objective, report, turns,
    /// conflicts), under the title.
    pub header: Vec<String>,
    /// The status rows (an error wraps over several), and whether it is an error.
    pub status: Vec<String>,
    /// Whether `status` is an error (drawn red).
    pub error: bool,
    /// The first row of the file list and the diff (below the status).
    pub body_row: u16,
    /// How wide the file list is (its last column is the divider).
    pub list_cols: u16,
    /// The file rows shown, top to bottom.
    pub files: Vec<ReviewFileRow>,
    /// The diff rows shown, top to bottom.
    pub lines: Vec<ReviewLine>,
}

/// A button of the review view.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReviewButton {
    /// Its label (padded).
    pub label: String,
    /// Its columns, relative to the view's first column.
    pub cols: std::ops::Range<u16>,
    /// Its colour.
    pub tone: ButtonTone,
}

/// One file of the review's list.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ReviewFileRow {
    /// Its kind mark: `A`, `M`, `D`, `R`, `B` (binary), `L` (too large) ….
    pub mark: char,
    /// Its path (a rename: `old → new`).
    pub path: String,
    /// "+12 −3", or what stands for it.
    pub counts: String,
    /// Whether it is the file shown.
    pub selected: bool,
}

/// What a diff row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReviewLineKind {
    /// A hunk's `@@` header.
    Hunk,
    /// A line in both versions.
    #[default]
    Context,
    /// An added line (green).
    Added,
    /// A removed line (red).
    Removed,
    /// A note in place of lines: loading, binary, too large.
    Note,
}

/// One row of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ReviewLine {
    /// What it is.
    pub kind: ReviewLineKind,
    /// Its number in the old file.
    pub old: Option<u64>,
    /// Its number in the new file.
    pub new: Option<u64>,
    /// Its text (tabs already expanded).
    pub text: String,
    /// Whether it is among the lines selected for a comment.
    pub selected: bool,
    /// Its syntax classes, as char ranges of `text` (the renderer picks the theme's colours).
    pub spans: Vec<ReviewSpan>,
    /// The chars of `text` that changed from the line it replaced (or that replaced it).
    pub changed: Option<(usize, usize)>,
}

/// A run of one syntax class in a diff line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReviewSpan {
    /// Its first char in the line's text.
    pub start: usize,
    /// How many chars.
    pub len: usize,
    /// What it is.
    pub class: SyntaxClass,
}

/// What a piece of code is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyntaxClass {
    /// `fn`, `let`, `if`, `pub` ….
    Keyword,
    /// A type's name.
    Type,
    /// A function's or macro's name.
    Function,
    /// A string or char literal.
    String,
    /// A number, `true`, `None` ….
    Constant,
    /// A comment.
    Comment,
}

/// The sidebar: one entry per workspace, drawn as lines of text top to bottom.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SidebarScene {
    /// Where it is drawn on the window grid; its first column is the edge that is dragged.
    pub rect: CellRectU16,
    /// The lines, from the top row of `rect` (those past its bottom are not drawn).
    pub lines: Vec<SidebarLine>,
}

/// One line of the sidebar.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SidebarLine {
    /// The text (already cut to the sidebar's width).
    pub text: String,
    /// How it is drawn.
    pub style: SidebarStyle,
    /// The attention mark at its left end (a workspace's title line), if any.
    pub ring: Option<Ring>,
    /// Whether it belongs to the workspace shown now (drawn on a highlighted background).
    pub current: bool,
    /// Buttons drawn on the line (a pending decision's answers), at columns relative to the
    /// sidebar's text start.
    pub buttons: Vec<SidebarButton>,
}

/// How a sidebar line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SidebarStyle {
    /// A workspace's name, branch and dirty mark (bold).
    #[default]
    Title,
    /// The lifecycle summary of its panes.
    Summary,
    /// An agent's latest message (dimmed).
    Message,
    /// A task and its state.
    Task,
    /// A pending decision's question and its buttons.
    Decision,
    /// A blank line between entries.
    Blank,
    /// A server's name and how its link stands, heading its workspaces when the window links
    /// to several (bold).
    Server,
}

/// One answer button on a sidebar line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SidebarButton {
    /// What it says.
    pub label: String,
    /// The columns it takes, relative to the sidebar's first text column.
    pub cols: std::ops::Range<u16>,
    /// Its colour.
    pub tone: ButtonTone,
}

/// The tab bar: the active workspace's tabs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TabBarScene {
    /// The row it takes on the window grid.
    pub row: u16,
    /// The tabs, in order.
    pub tabs: Vec<TabLabel>,
    /// Text at the right end (the workspace's name and its attention count).
    pub right: String,
}

/// One tab in the tab bar.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TabLabel {
    /// The text drawn (the tab's title, shortened to fit).
    pub title: String,
    /// Whether it is the shown tab.
    pub active: bool,
    /// How many of its panes want attention (an unread dot and the count).
    pub attention: usize,
    /// The columns it takes, close button included.
    pub cols: std::ops::Range<u16>,
    /// Whether its title is being edited (the title then ends at the caret).
    pub editing: bool,
}

/// The workspace switcher: a filtered list of workspaces.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SwitcherScene {
    /// Where it is drawn on the window grid.
    pub rect: CellRectU16,
    /// What the user typed to filter.
    pub query: String,
    /// The entries shown.
    pub entries: Vec<SwitcherEntry>,
    /// The highlighted entry.
    pub selected: usize,
    /// What the filter line says before the typed text (`None`: "Workspace › ").
    pub prompt: Option<String>,
    /// The highlighted row shown instead of entries (a dim lead and the bold rest): what
    /// Enter does — a new workspace of the typed name, a rename, a close to confirm.
    pub offer: Option<(String, String)>,
}

/// One workspace in the switcher.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SwitcherEntry {
    /// The workspace's name.
    pub name: String,
    /// Its directory, shortened (`~/…`), and the git branch when known.
    pub detail: String,
    /// How many of its panes want attention.
    pub attention: usize,
    /// Whether it is the workspace shown now.
    pub current: bool,
}

/// One pane: a header line and, below it, its terminal.
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// The ring drawn around a pane that wants attention.
    pub ring: Option<Ring>,
    /// A tombstone's overlay at the bottom of the pane (what Enter does, what it was).
    pub overlay: Option<TombstoneOverlay>,
    /// Search in the pane's scrollback: the query bar and the visible matches.
    pub search: Option<SearchScene>,
    /// The link under the pointer while Ctrl is held, underlined, in screen coordinates.
    pub link: Vec<CellSpan>,
    /// A permission request of the pane's agent, drawn as a card at the top of the pane.
    pub decision: Option<DecisionCard>,
}

/// A card over the top of a pane: what its agent asks permission for and the answers, as
/// buttons (`render/card.rs` lays it out).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DecisionCard {
    /// The first line: who asks for what ("Claude asks to run Bash").
    pub title: String,
    /// The request itself (a command, a file), one entry per line; long lines wrap.
    pub detail: Vec<String>,
    /// The answers, left to right; empty when the request cannot be answered here.
    pub buttons: Vec<CardButton>,
    /// A line shown in place of the buttons when there are none (why, and where to answer).
    pub note: Option<String>,
}

/// One answer on a decision card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CardButton {
    /// What it says ("Allow").
    pub label: String,
    /// The chord that answers the same, as shown after the label ("Ctrl+Shift+Y"), if bound.
    pub keys: Option<String>,
    /// Its colour.
    pub tone: ButtonTone,
}

/// The colour of a button on a decision card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ButtonTone {
    /// Allows (once).
    Allow,
    /// Allows from now on.
    Always,
    /// Denies.
    Deny,
}

/// Why a pane has a ring around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ring {
    /// A notification the user has not seen.
    Unread,
    /// The program waits for the user (an agent asking a question).
    NeedsInput,
    /// Something failed.
    Error,
}

/// The overlay at the bottom of a tombstone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TombstoneOverlay {
    /// Lines of text, top to bottom (e.g. "Enter — resume `claude --resume 42`").
    pub lines: Vec<String>,
    /// The last resume's failure, drawn in the error colour.
    pub error: Option<String>,
}

/// Search in a pane: the bar at its bottom and the matches on its visible screen.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SearchScene {
    /// What the user typed.
    pub query: String,
    /// Text after the query: "3/17", "no matches", or the regex's error.
    pub status: String,
    /// The matches on the visible screen, in screen coordinates.
    pub matches: Vec<CellSpan>,
    /// The indices in `matches` of the current match's spans (one per row it covers; empty
    /// when it is not visible).
    pub current: std::ops::Range<usize>,
}

/// Columns `cols` of one screen row.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CellSpan {
    /// The row.
    pub row: u16,
    /// The columns, half open.
    pub cols: std::ops::Range<u16>,
}

/// The one-line header above a pane.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct HeaderScene {
    /// Title (OSC title or argv\[0\]).
    pub title: String,
    /// Restore-state badge drawn at the right end.
    pub badge: Badge,
    /// Whether the pane has keyboard focus (drawn brighter).
    pub focused: bool,
    /// Whether the pane wants attention (a marker at the left end).
    pub attention: bool,
    /// The program's lifecycle as a short marker before the badge ("working 2m", "idle",
    /// "blocked", "done"), if known.
    pub lifecycle: Option<String>,
    /// The progress the program reports (OSC 9;4), drawn as a bar along the header's bottom.
    pub progress: Option<Progress>,
}

/// A program's progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Progress {
    /// What kind of progress.
    pub kind: ProgressKind,
    /// Percent done (0–100), if the kind has one.
    pub percent: Option<u8>,
}

/// The kinds of progress ConEmu's OSC 9;4 reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProgressKind {
    /// Running normally.
    Normal,
    /// Failing.
    Error,
    /// Running, with no idea how far.
    Indeterminate,
    /// Paused.
    Paused,
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
    /// The badge's background in `palette`.
    pub fn colour(self, palette: &Palette) -> Rgb {
        match self {
            Badge::Live => palette.badge_live,
            Badge::Restored => palette.badge_restored,
            Badge::Resumable => palette.badge_resumable,
            Badge::Exited => palette.badge_exited,
        }
    }

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
