//! The binary split layout of one tab and the invariants that keep it sound.
//!
//! A [`Layout`] is a tree whose leaves are panes and whose inner nodes split their area in
//! two, either side by side ([`SplitDir::Right`]) or one above the other ([`SplitDir::Down`]).
//! This module owns the tree operations (split, remove, move a divider, validate a tree sent
//! by a client) and the geometry that turns a tree and a tab size into cell rectangles,
//! dividers, focus neighbours and mouse hits.
//!
//! Invariant: every pane of the tab appears exactly once in its layout.
//! Invariant: every ratio is finite and within [`MIN_RATIO`]`..=`[`MAX_RATIO`] once a layout
//! has gone through this module's operations (a tree built by hand or sent by a client is
//! brought there by [`Layout::validate`] and [`Layout::clamp_ratios`]).
//!
//! This module must not do I/O of any kind and must not know about PTYs, the Store or the
//! wire format: it is pure data and arithmetic, so that the server, the window and the tests
//! all share it.

use std::collections::HashSet;

use crate::ids::PaneId;

/// Direction of a split: `Right` puts `second` beside `first`; `Down` puts it below.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SplitDir {
    /// `second` sits to the right of `first`, with a one-column divider between them.
    Right,
    /// `second` sits below `first`, with a one-row divider between them.
    Down,
}

/// One step of a path from the root to a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Go into the `first` child of a split.
    First,
    /// Go into the `second` child of a split.
    Second,
}

/// A direction to move focus in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FocusDir {
    /// Towards smaller column numbers.
    Left,
    /// Towards larger column numbers.
    Right,
    /// Towards smaller row numbers.
    Up,
    /// Towards larger row numbers.
    Down,
}

/// The binary split layout of one tab.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// A leaf: one pane fills the whole area.
    Pane(PaneId),
    /// An inner node: the area is cut in two along `dir`.
    Split {
        /// Whether `second` sits beside `first` or below it.
        dir: SplitDir,
        /// The share of the area (less the divider) that `first` gets, in `0.0..=1.0`.
        ratio: f64,
        /// The left or top half.
        first: Box<Layout>,
        /// The right or bottom half.
        second: Box<Layout>,
    },
}

/// Size of a tab or pane in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellSize {
    /// Width in columns.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
}

/// A pane's rectangle in cells, relative to the tab's top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellRect {
    /// The leftmost column.
    pub col: u16,
    /// The topmost row.
    pub row: u16,
    /// Width in columns.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
}

impl CellRect {
    /// Whether the cell at (`col`, `row`) lies inside this rectangle.
    fn contains_cell(&self, col: u16, row: u16) -> bool {
        let (col, row) = (u32::from(col), u32::from(row));
        col >= u32::from(self.col)
            && col < u32::from(self.col) + u32::from(self.cols)
            && row >= u32::from(self.row)
            && row < u32::from(self.row) + u32::from(self.rows)
    }
}

/// A divider between the two halves of a split, for drawing and for dragging.
#[derive(Debug, Clone, PartialEq)]
pub struct Divider {
    /// The path from the root to the split this divider belongs to (for [`Layout::set_ratio`]).
    pub path: Vec<Side>,
    /// The direction of that split: a `Right` split has a vertical divider one column wide.
    pub dir: SplitDir,
    /// The cells the divider covers.
    pub rect: CellRect,
}

/// Why a layout operation was refused; the layout is left unchanged whenever one is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LayoutError {
    /// The pane named by the operation is not a leaf of this layout.
    #[error("pane {0} is not in this layout; list the tab's panes and use one of those")]
    NoSuchPane(PaneId),
    /// The pane is already in the layout, or a layout sent by a client holds it twice.
    #[error("pane {0} is already in this layout (each pane may appear only once)")]
    DuplicatePane(PaneId),
    /// A layout sent by a client leaves out one of the tab's panes.
    #[error("pane {0} of this tab is missing from the layout; every pane must appear once")]
    MissingPane(PaneId),
    /// A layout sent by a client holds a pane that does not belong to the tab.
    #[error("pane {0} does not belong to this tab and cannot be placed in its layout")]
    UnexpectedPane(PaneId),
    /// The path of first/second steps does not lead from the root to a split.
    #[error("the path does not lead to a split of this layout; take it from the tab's dividers")]
    BadPath,
    /// A ratio was NaN or infinite.
    #[error("a split ratio must be a finite number between 0 and 1, not NaN or infinity")]
    NonFiniteRatio,
}

/// The smallest share a split may give its first half.
pub const MIN_RATIO: f64 = 0.05;
/// The largest share a split may give its first half.
pub const MAX_RATIO: f64 = 0.95;

/// The ratio a split uses for its geometry when its stored ratio is not finite.
///
/// Only a tree built by hand can hold such a ratio; geometry must still not misbehave on it.
const FALLBACK_RATIO: f64 = 0.5;

impl Layout {
    /// A layout holding one pane.
    pub fn single(pane: PaneId) -> Layout {
        Layout::Pane(pane)
    }

    /// Panes in order (depth-first, first before second).
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        self.for_each_pane(&mut |pane| out.push(pane.clone()));
        out
    }

    /// Whether `pane` is a leaf of this layout.
    pub fn contains(&self, pane: &PaneId) -> bool {
        match self {
            Layout::Pane(p) => p == pane,
            Layout::Split { first, second, .. } => first.contains(pane) || second.contains(pane),
        }
    }

    /// The number of leaves.
    pub fn pane_count(&self) -> usize {
        match self {
            Layout::Pane(_) => 1,
            Layout::Split { first, second, .. } => first.pane_count() + second.pane_count(),
        }
    }

    /// Replaces the leaf `target` with a split of `dir` whose first is `target` and second is
    /// `new`, then rebalances the same-direction run containing it so all its items share
    /// equally.
    ///
    /// A run is a maximal group of splits of one direction, each a direct child of another
    /// (except the top one); its items are the children of its members that are not members.
    /// Splitting a pane twice `Down` therefore gives three equal thirds, while splitting one
    /// of them `Right` starts a new run and leaves the thirds as they are.
    ///
    /// Fails with [`LayoutError::NoSuchPane`] if `target` is absent and with
    /// [`LayoutError::DuplicatePane`] if `new` is already present (or equals `target`).
    pub fn split(
        &mut self,
        target: &PaneId,
        new: PaneId,
        dir: SplitDir,
    ) -> Result<(), LayoutError> {
        let path = self.path_of(target).ok_or_else(|| LayoutError::NoSuchPane(target.clone()))?;
        if new == *target || self.contains(&new) {
            return Err(LayoutError::DuplicatePane(new));
        }
        let Some(leaf) = self.node_at_mut(&path) else {
            return Err(LayoutError::NoSuchPane(target.clone()));
        };
        *leaf = Layout::Split {
            dir,
            ratio: 0.5,
            first: Box::new(Layout::Pane(target.clone())),
            second: Box::new(Layout::Pane(new)),
        };
        self.rebalance_run_around(&path, dir);
        Ok(())
    }

    /// Removes a pane; its parent split collapses into the sibling; the run the pane belonged
    /// to is rebalanced equally (merged with the sibling's run when the sibling is a split of
    /// the same direction). Ratios of other runs are untouched.
    ///
    /// Returns `Ok(false)` if the removed pane was the last one (the caller closes the tab;
    /// the layout is then left unchanged), `Ok(true)` otherwise, and
    /// [`LayoutError::NoSuchPane`] if `pane` is absent.
    pub fn remove(&mut self, pane: &PaneId) -> Result<bool, LayoutError> {
        let path = self.path_of(pane).ok_or_else(|| LayoutError::NoSuchPane(pane.clone()))?;
        let Some((&side, parent_path)) = path.split_last() else {
            // The pane is the root, so it is the last one.
            return Ok(false);
        };
        let Some(parent) = self.node_at_mut(parent_path) else {
            return Err(LayoutError::NoSuchPane(pane.clone()));
        };
        // The placeholder is replaced below on both paths; it never escapes.
        let old = std::mem::replace(parent, Layout::Pane(pane.clone()));
        let Layout::Split { dir, first, second, .. } = old else {
            // A parent on a leaf's path is always a split; put the node back untouched.
            *parent = old;
            return Err(LayoutError::NoSuchPane(pane.clone()));
        };
        *parent = match side {
            Side::First => *second,
            Side::Second => *first,
        };
        self.rebalance_run_around(parent_path, dir);
        Ok(true)
    }

    /// Sets the ratio of the split reached by `path` from the root; finite values are clamped
    /// to `MIN_RATIO..=MAX_RATIO`; NaN or infinity gives [`LayoutError::NonFiniteRatio`].
    /// An empty path is the root split; a path that does not end on a split gives
    /// [`LayoutError::BadPath`].
    pub fn set_ratio(&mut self, path: &[Side], ratio: f64) -> Result<(), LayoutError> {
        if !ratio.is_finite() {
            return Err(LayoutError::NonFiniteRatio);
        }
        match self.node_at_mut(path) {
            Some(Layout::Split { ratio: r, .. }) => {
                *r = ratio.clamp(MIN_RATIO, MAX_RATIO);
                Ok(())
            }
            _ => Err(LayoutError::BadPath),
        }
    }

    /// The ratio at a path (None if the path does not lead to a split).
    pub fn ratio_at(&self, path: &[Side]) -> Option<f64> {
        match self.node_at(path)? {
            Layout::Split { ratio, .. } => Some(*ratio),
            Layout::Pane(_) => None,
        }
    }

    /// Checks a whole layout sent by a client: every pane of `expected` exactly once and
    /// nothing else, every ratio finite. Ratios out of range are not an error here; call
    /// [`Layout::clamp_ratios`] after a successful check.
    ///
    /// The first problem met in depth-first order is reported; missing panes are reported
    /// last, in the order of `expected`.
    pub fn validate(&self, expected: &[PaneId]) -> Result<(), LayoutError> {
        let allowed: HashSet<&PaneId> = expected.iter().collect();
        let mut seen: HashSet<PaneId> = HashSet::new();
        self.validate_node(&allowed, &mut seen)?;
        match expected.iter().find(|p| !seen.contains(*p)) {
            Some(missing) => Err(LayoutError::MissingPane(missing.clone())),
            None => Ok(()),
        }
    }

    /// Clamps every ratio into `MIN_RATIO..=MAX_RATIO`.
    ///
    /// Infinities clamp to the nearer bound; a NaN, which has no nearer bound, becomes 0.5.
    pub fn clamp_ratios(&mut self) {
        if let Layout::Split { ratio, first, second, .. } = self {
            *ratio = clamp_ratio(*ratio);
            first.clamp_ratios();
            second.clamp_ratios();
        }
    }

    /// Each pane's cell rectangle for a tab of `size`, in the order of [`Layout::panes`].
    ///
    /// A divider takes one cell between the two halves of every split (one column for
    /// `Right`, one row for `Down`), like tmux and WezTerm. For a split along an axis of
    /// length `L`, `avail = L - 1`, `first = round(avail * ratio)` and `second = avail - first`,
    /// where `first` is clamped so that each half keeps at least its minimum length: 1 for a
    /// pane, and for a nested split the cells its own panes and dividers need along that axis.
    /// When even that does not fit, `first` is clamped to `1..=avail-1` only.
    ///
    /// When the tab is smaller than the layout needs (an axis shorter than three cells under a
    /// split, or a zero size), nothing panics or underflows: every pane still gets at least
    /// 1x1, so rectangles may then overlap one another, cover no divider, or (for a zero-sized
    /// tab) lie outside the tab. A tab at least `2 * pane_count() - 1` cells along both axes
    /// is always tiled exactly by the rectangles and [`Layout::dividers`].
    pub fn rects(&self, size: CellSize) -> Vec<(PaneId, CellRect)> {
        let mut geometry = Geometry::default();
        self.place(root_rect(size), &mut Vec::new(), &mut geometry);
        geometry.panes
    }

    /// The dividers' rectangles, with the path of their split, in depth-first order; the
    /// geometry is that of [`Layout::rects`]. A split whose axis is too short to hold a
    /// divider between two panes (under three cells) has none.
    pub fn dividers(&self, size: CellSize) -> Vec<Divider> {
        let mut geometry = Geometry::default();
        self.place(root_rect(size), &mut Vec::new(), &mut geometry);
        geometry.dividers
    }

    /// The pane whose rectangle is nearest in direction `dir` from `from`'s rectangle among
    /// those lying wholly on that side of it and overlapping it on the perpendicular axis;
    /// ties are broken by the largest overlap, then by being nearest to `from`'s top edge
    /// (moving left or right) or left edge (moving up or down), then by layout order.
    ///
    /// A pane that does not overlap `from` on the perpendicular axis but meets it there end
    /// to start (the two touch only at a corner where dividers cross) also counts, with an
    /// overlap of zero: a pane one cell wide may sit right above a divider of the row below,
    /// and moving down must still reach a pane of that row rather than skip it. So in a tab
    /// large enough to be tiled the chosen pane is always adjacent, just across one divider.
    /// Returns None at the edge of the tab or if `from` is absent.
    pub fn neighbour(&self, from: &PaneId, dir: FocusDir, size: CellSize) -> Option<PaneId> {
        let rects = self.rects(size);
        let (_, origin) = rects.iter().find(|(pane, _)| pane == from)?;
        let mut best: Option<(&PaneId, NeighbourKey)> = None;
        for (pane, rect) in &rects {
            if pane == from {
                continue;
            }
            let Some(key) = neighbour_key(origin, rect, dir) else {
                continue;
            };
            if best.as_ref().is_none_or(|(_, best_key)| key < *best_key) {
                best = Some((pane, key));
            }
        }
        best.map(|(pane, _)| pane.clone())
    }

    /// The pane at a cell (for mouse clicks), None on a divider or outside the tab.
    ///
    /// Where rectangles overlap (a tab too small for its layout) the first in layout order
    /// wins.
    pub fn pane_at(&self, size: CellSize, col: u16, row: u16) -> Option<PaneId> {
        if col >= size.cols || row >= size.rows {
            return None;
        }
        self.rects(size)
            .into_iter()
            .find(|(_, rect)| rect.contains_cell(col, row))
            .map(|(pane, _)| pane)
    }

    /// Calls `f` on every pane in depth-first order, first before second.
    fn for_each_pane(&self, f: &mut impl FnMut(&PaneId)) {
        match self {
            Layout::Pane(pane) => f(pane),
            Layout::Split { first, second, .. } => {
                first.for_each_pane(f);
                second.for_each_pane(f);
            }
        }
    }

    /// The path from the root to the leaf `pane`, or None if it is absent.
    fn path_of(&self, pane: &PaneId) -> Option<Vec<Side>> {
        fn walk(node: &Layout, pane: &PaneId, path: &mut Vec<Side>) -> bool {
            match node {
                Layout::Pane(p) => p == pane,
                Layout::Split { first, second, .. } => {
                    path.push(Side::First);
                    if walk(first, pane, path) {
                        return true;
                    }
                    path.pop();
                    path.push(Side::Second);
                    if walk(second, pane, path) {
                        return true;
                    }
                    path.pop();
                    false
                }
            }
        }
        let mut path = Vec::new();
        walk(self, pane, &mut path).then_some(path)
    }

    /// The node reached by `path` from this one, or None if the path runs past a leaf.
    fn node_at(&self, path: &[Side]) -> Option<&Layout> {
        let mut node = self;
        for side in path {
            node = match node {
                Layout::Pane(_) => return None,
                Layout::Split { first, second, .. } => match side {
                    Side::First => first,
                    Side::Second => second,
                },
            };
        }
        Some(node)
    }

    /// The node reached by `path` from this one, mutably, or None if the path runs past a leaf.
    fn node_at_mut(&mut self, path: &[Side]) -> Option<&mut Layout> {
        let mut node = self;
        for side in path {
            node = match node {
                Layout::Pane(_) => return None,
                Layout::Split { first, second, .. } => match side {
                    Side::First => first,
                    Side::Second => second,
                },
            };
        }
        Some(node)
    }

    /// Rebalances the run of `dir` splits that holds the node at `path`.
    ///
    /// The top of the run is found by climbing while the parent is a split of `dir`; if the
    /// node at `path` is not itself such a split and its parent is not either, there is no run
    /// and nothing changes.
    fn rebalance_run_around(&mut self, path: &[Side], dir: SplitDir) {
        let mut top = path.len();
        while top > 0 && self.node_at(&path[..top - 1]).is_some_and(|n| n.is_split_of(dir)) {
            top -= 1;
        }
        if let Some(node) = self.node_at_mut(&path[..top]) {
            node.rebalance_run(dir);
        }
    }

    /// Gives every member of the run of `dir` splits topped by this node the ratio that makes
    /// all the run's items equal, and returns how many items the run holds under this node
    /// (1 if this node is not a member).
    fn rebalance_run(&mut self, dir: SplitDir) -> usize {
        match self {
            Layout::Split { dir: d, ratio, first, second } if *d == dir => {
                let a = first.rebalance_run(dir);
                let b = second.rebalance_run(dir);
                // A run of more than twenty items would otherwise go below MIN_RATIO.
                *ratio = clamp_ratio(a as f64 / (a + b) as f64);
                a + b
            }
            _ => 1,
        }
    }

    /// Whether this node is a split of `dir`.
    fn is_split_of(&self, dir: SplitDir) -> bool {
        matches!(self, Layout::Split { dir: d, .. } if *d == dir)
    }

    /// The recursive part of [`Layout::validate`], without the check for missing panes.
    fn validate_node(
        &self,
        allowed: &HashSet<&PaneId>,
        seen: &mut HashSet<PaneId>,
    ) -> Result<(), LayoutError> {
        match self {
            Layout::Pane(pane) => {
                if !allowed.contains(pane) {
                    return Err(LayoutError::UnexpectedPane(pane.clone()));
                }
                if !seen.insert(pane.clone()) {
                    return Err(LayoutError::DuplicatePane(pane.clone()));
                }
                Ok(())
            }
            Layout::Split { ratio, first, second, .. } => {
                if !ratio.is_finite() {
                    return Err(LayoutError::NonFiniteRatio);
                }
                first.validate_node(allowed, seen)?;
                second.validate_node(allowed, seen)
            }
        }
    }

    /// The fewest cells this node needs along the axis that `dir` splits, so that every pane
    /// gets at least one cell and every divider its own.
    fn min_len(&self, dir: SplitDir) -> u32 {
        match self {
            Layout::Pane(_) => 1,
            Layout::Split { dir: d, first, second, .. } if *d == dir => {
                first.min_len(dir) + 1 + second.min_len(dir)
            }
            Layout::Split { first, second, .. } => first.min_len(dir).max(second.min_len(dir)),
        }
    }

    /// Places this node in `area` (at least 1x1), appending pane rectangles and dividers in
    /// depth-first order; `path` is this node's path from the root and is restored on return.
    fn place(&self, area: CellRect, path: &mut Vec<Side>, out: &mut Geometry) {
        let (dir, ratio, first, second) = match self {
            Layout::Pane(pane) => {
                out.panes.push((pane.clone(), area));
                return;
            }
            Layout::Split { dir, ratio, first, second } => (*dir, *ratio, first, second),
        };
        let len = match dir {
            SplitDir::Right => area.cols,
            SplitDir::Down => area.rows,
        };
        let span = split_span(len, ratio, first.min_len(dir), second.min_len(dir));
        let first_area = area.with_span(dir, 0, span.first);
        let second_area = area.with_span(dir, span.second_at, span.second);
        if let Some(at) = span.divider_at {
            out.dividers.push(Divider {
                path: path.clone(),
                dir,
                rect: area.with_span(dir, at, 1),
            });
        }
        path.push(Side::First);
        first.place(first_area, path, out);
        path.pop();
        path.push(Side::Second);
        second.place(second_area, path, out);
        path.pop();
    }
}

/// Clamps a ratio into `MIN_RATIO..=MAX_RATIO`, turning NaN into 0.5.
fn clamp_ratio(ratio: f64) -> f64 {
    if ratio.is_nan() {
        FALLBACK_RATIO
    } else {
        ratio.clamp(MIN_RATIO, MAX_RATIO)
    }
}

/// What [`Layout::place`] collects.
#[derive(Default)]
struct Geometry {
    /// Pane rectangles in layout order.
    panes: Vec<(PaneId, CellRect)>,
    /// Dividers in depth-first order.
    dividers: Vec<Divider>,
}

/// How one split cuts an axis: offsets are relative to the start of the split's area.
struct Span {
    /// Length of the first half, which starts at offset 0.
    first: u32,
    /// Offset of the divider, if there is room for one.
    divider_at: Option<u32>,
    /// Offset of the second half.
    second_at: u32,
    /// Length of the second half.
    second: u32,
}

/// Cuts an axis of `len` cells for a split of `ratio` whose halves need at least `min_first`
/// and `min_second` cells.
///
/// Both halves are always at least one cell long and never start past the area, so callers
/// cannot underflow or leave the parent; below three cells there is no divider and the halves
/// take the first and the last cell (the same one when `len` is 1, or 0 which counts as 1).
fn split_span(len: u16, ratio: f64, min_first: u32, min_second: u32) -> Span {
    let len = u32::from(len).max(1);
    if len < 3 {
        return Span { first: 1, divider_at: None, second_at: len - 1, second: 1 };
    }
    let avail = len - 1;
    let (lo, hi) = if min_first + min_second <= avail {
        (min_first, avail - min_second)
    } else {
        (1, avail - 1)
    };
    let ratio = if ratio.is_finite() { ratio } else { FALLBACK_RATIO };
    // The clamp keeps the value within lo..=hi, both of which fit in u32, so the cast is exact.
    let first = (f64::from(avail) * ratio).round().clamp(f64::from(lo), f64::from(hi)) as u32;
    Span { first, divider_at: Some(first), second_at: first + 1, second: avail - first }
}

impl CellRect {
    /// The part of this rectangle from `offset` to `offset + len` along the axis that `dir`
    /// splits, keeping the other axis whole.
    ///
    /// Callers pass spans from [`split_span`], which stay within this rectangle, so the sums
    /// cannot exceed `u16::MAX`; they saturate rather than wrap should that ever be broken.
    fn with_span(&self, dir: SplitDir, offset: u32, len: u32) -> CellRect {
        let offset = u16::try_from(offset).unwrap_or(u16::MAX);
        let len = u16::try_from(len).unwrap_or(u16::MAX);
        match dir {
            SplitDir::Right => {
                CellRect { col: self.col.saturating_add(offset), cols: len, ..*self }
            }
            SplitDir::Down => CellRect { row: self.row.saturating_add(offset), rows: len, ..*self },
        }
    }
}

/// The whole tab as one rectangle, at least 1x1 so that a pane always has a cell.
fn root_rect(size: CellSize) -> CellRect {
    CellRect { col: 0, row: 0, cols: size.cols.max(1), rows: size.rows.max(1) }
}

/// How good a candidate is as a focus neighbour; smaller is better.
///
/// The fields compare in order: the gap between the two rectangles along the direction of
/// travel, the overlap on the perpendicular axis (larger is better, hence `Reverse`), and the
/// distance between their top edges (moving left or right) or left edges (moving up or down).
type NeighbourKey = (u32, std::cmp::Reverse<u32>, u32);

/// Scores `candidate` as the neighbour of `origin` in direction `dir`, or None if it does not
/// lie wholly on that side of `origin` or neither overlaps nor touches it on the
/// perpendicular axis.
///
/// Touching means the two spans across the direction of travel meet end to start, so the
/// rectangles meet only at a corner where dividers cross; see [`Layout::neighbour`] for why
/// that counts. A pane that only touches scores an overlap of zero, so one that truly
/// overlaps at the same gap wins.
fn neighbour_key(origin: &CellRect, candidate: &CellRect, dir: FocusDir) -> Option<NeighbourKey> {
    // Each rectangle as its (start, end) along the direction of travel and across it.
    let spans = |r: &CellRect| {
        let cols = (u32::from(r.col), u32::from(r.col) + u32::from(r.cols));
        let rows = (u32::from(r.row), u32::from(r.row) + u32::from(r.rows));
        match dir {
            FocusDir::Left | FocusDir::Right => (cols, rows),
            FocusDir::Up | FocusDir::Down => (rows, cols),
        }
    };
    let ((o_start, o_end), (o_across, o_across_end)) = spans(origin);
    let ((c_start, c_end), (c_across, c_across_end)) = spans(candidate);
    let gap = match dir {
        FocusDir::Right | FocusDir::Down => c_start.checked_sub(o_end)?,
        FocusDir::Left | FocusDir::Up => o_start.checked_sub(c_end)?,
    };
    let from = o_across.max(c_across);
    let touches = o_across_end.min(c_across_end) + 1 > from;
    if !touches {
        return None;
    }
    let overlap = o_across_end.min(c_across_end).saturating_sub(from);
    Some((gap, std::cmp::Reverse(overlap), o_across.abs_diff(c_across)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pane id with a one-word readable name, e.g. `id("a")` is `pane_a`.
    fn id(name: &str) -> PaneId {
        PaneId::parse(&format!("pane_{name}")).expect("test names are path-safe")
    }

    /// The short name of a pane made by [`id`].
    fn name(pane: &PaneId) -> &str {
        pane.as_str().strip_prefix("pane_").unwrap_or(pane.as_str())
    }

    /// Renders a layout compactly, e.g. `R(0.50,a,D(0.33,b,c))`.
    fn render(layout: &Layout) -> String {
        match layout {
            Layout::Pane(pane) => name(pane).to_owned(),
            Layout::Split { dir, ratio, first, second } => {
                let d = match dir {
                    SplitDir::Right => 'R',
                    SplitDir::Down => 'D',
                };
                format!("{d}({ratio:.2},{},{})", render(first), render(second))
            }
        }
    }

    /// Parses the compact form written by [`render`] (a test builder, so it panics on typos).
    fn parse(text: &str) -> Layout {
        fn node(s: &mut &str) -> Layout {
            let (head, rest) = s.split_at(1);
            if head == "R" || head == "D" {
                let dir = if head == "R" { SplitDir::Right } else { SplitDir::Down };
                let rest = rest.strip_prefix('(').expect("a split opens with (");
                let (ratio, rest) = rest.split_once(',').expect("a ratio ends with ,");
                *s = rest;
                let first = node(s);
                *s = s.strip_prefix(',').expect("halves are separated by ,");
                let second = node(s);
                *s = s.strip_prefix(')').expect("a split closes with )");
                let ratio = ratio.parse().expect("a ratio is a number");
                Layout::Split { dir, ratio, first: Box::new(first), second: Box::new(second) }
            } else {
                let end = s.find([',', ')']).unwrap_or(s.len());
                let (pane, rest) = s.split_at(end);
                *s = rest;
                Layout::Pane(id(pane))
            }
        }
        let mut s = text;
        let layout = node(&mut s);
        assert!(s.is_empty(), "trailing text {s:?} in {text:?}");
        layout
    }

    /// Parses a path such as `FS` (first, then second) or `.` for the root.
    fn path(text: &str) -> Vec<Side> {
        text.chars()
            .filter(|c| *c != '.')
            .map(|c| match c {
                'F' => Side::First,
                'S' => Side::Second,
                other => panic!("bad path step {other:?}"),
            })
            .collect()
    }

    /// Runs a script of operations from a single pane and returns the rendered layout, or
    /// the first error as its Debug text.
    ///
    /// Script: `a; split a b right; split b c down; remove a; ratio FS 0.3`.
    fn run(script: &str) -> String {
        let mut steps = script.split(';').map(str::trim);
        let mut layout = Layout::single(id(steps.next().expect("a script starts with a pane")));
        for step in steps {
            let words: Vec<&str> = step.split_whitespace().collect();
            let result = match words.as_slice() {
                ["split", target, new, dir] => {
                    let dir = match *dir {
                        "right" => SplitDir::Right,
                        "down" => SplitDir::Down,
                        other => panic!("bad direction {other:?}"),
                    };
                    layout.split(&id(target), id(new), dir)
                }
                ["remove", pane] => layout.remove(&id(pane)).map(|more| {
                    assert!(more, "removed the last pane in {script:?}; use a separate test");
                }),
                ["ratio", at, value] => layout.set_ratio(&path(at), value.parse().expect("f64")),
                other => panic!("bad step {other:?}"),
            };
            if let Err(e) = result {
                return format!("{e:?}");
            }
        }
        render(&layout)
    }

    /// Checks a table of scripts against their expected layouts.
    fn check(cases: &[(&str, &str)]) {
        for (script, expected) in cases {
            assert_eq!(run(script), *expected, "script: {script}");
        }
    }

    /// Draws the geometry of `layout` in a tab of `cols` x `rows` as text: each cell shows its
    /// pane's name (one letter), `|` or `-` for a divider, `.` for nothing and `#` for overlap.
    fn draw(layout: &Layout, cols: u16, rows: u16) -> String {
        let size = CellSize { cols, rows };
        let mut grid = vec![vec!['.'; usize::from(cols)]; usize::from(rows)];
        let mut paint = |rect: CellRect, c: char| {
            for row in rect.row..rect.row + rect.rows {
                for col in rect.col..rect.col + rect.cols {
                    let cell = &mut grid[usize::from(row)][usize::from(col)];
                    *cell = if *cell == '.' { c } else { '#' };
                }
            }
        };
        for (pane, rect) in layout.rects(size) {
            paint(rect, name(&pane).chars().next().unwrap_or('?'));
        }
        for divider in layout.dividers(size) {
            paint(divider.rect, if divider.dir == SplitDir::Right { '|' } else { '-' });
        }
        grid.into_iter().map(|row| row.into_iter().collect::<String>() + "\n").collect()
    }

    /// Checks a table of (layout, cols, rows, expected drawing) cases.
    fn check_drawings(cases: &[(&str, u16, u16, &str)]) {
        for (layout, cols, rows, expected) in cases {
            let expected: String = expected.lines().map(|l| l.trim().to_owned() + "\n").collect();
            let got = draw(&parse(layout), *cols, *rows);
            assert_eq!(got, expected, "{layout} in {cols}x{rows}:\n{got}");
        }
    }

    #[test]
    fn splits_rebalance_their_run() {
        check(&[
            ("a", "a"),
            ("a; split a b right", "R(0.50,a,b)"),
            ("a; split a b down; split b c down", "D(0.33,a,D(0.50,b,c))"),
            ("a; split a b down; split a c down", "D(0.67,D(0.50,a,c),b)"),
            (
                "a; split a b right; split b c right; split c d right",
                "R(0.25,a,R(0.33,b,R(0.50,c,d)))",
            ),
            (
                "a; split a b right; split a c right; split b d right",
                "R(0.50,R(0.50,a,c),R(0.50,b,d))",
            ),
            // A split across the run is one item of it and leaves its ratios alone.
            (
                "a; split a b down; split b c down; split a d right",
                "D(0.33,R(0.50,a,d),D(0.50,b,c))",
            ),
            // A same-direction split below a cross split starts a new run, not the outer one.
            (
                "a; split a b down; split a c right; split c d down",
                "D(0.50,R(0.50,a,D(0.50,c,d)),b)",
            ),
            (
                "a; split a b down; split a c right; split a d right",
                "D(0.50,R(0.67,R(0.50,a,d),c),b)",
            ),
        ]);
    }

    #[test]
    fn removals_collapse_and_rebalance_their_run() {
        check(&[
            ("a; split a b right; remove a", "b"),
            ("a; split a b right; remove b", "a"),
            ("a; split a b down; split b c down; remove b", "D(0.50,a,c)"),
            ("a; split a b down; split b c down; remove a", "D(0.50,b,c)"),
            (
                "a; split a b right; split b c right; split c d right; remove a",
                "R(0.33,b,R(0.50,c,d))",
            ),
            // The sibling is a split of the same direction: the runs merge and share equally.
            (
                "a; split a b right; split a c right; split b d right; remove c",
                "R(0.33,a,R(0.50,b,d))",
            ),
            // Removing from the inner run leaves the outer run's manual ratio alone.
            (
                "a; split a b down; ratio . 0.7; split a c right; split c d right; remove d",
                "D(0.70,R(0.50,a,c),b)",
            ),
            // Removing the only cross pane lets its sibling join the outer run as one item.
            (
                "a; split a b down; split b c down; split a d right; remove d",
                "D(0.33,a,D(0.50,b,c))",
            ),
            // The collapsed Right split's sibling is a Down split that now sits directly in the
            // outer Down run; only the removed pane's own (Right) run is rebalanced, so the
            // heights on screen stay as they were.
            (
                "a; split a b down; split a c right; split c d down; remove a",
                "D(0.50,D(0.50,c,d),b)",
            ),
            ("a; remove z", "NoSuchPane(pane_z)"),
        ]);
    }

    #[test]
    fn split_errors_leave_the_layout_alone() {
        check(&[
            ("a; split z b right", "NoSuchPane(pane_z)"),
            ("a; split a a right", "DuplicatePane(pane_a)"),
            ("a; split a b right; split a b down", "DuplicatePane(pane_b)"),
        ]);
        let mut layout = parse("R(0.30,a,b)");
        assert!(layout.split(&id("a"), id("b"), SplitDir::Down).is_err());
        assert_eq!(render(&layout), "R(0.30,a,b)");
    }

    #[test]
    fn removing_the_last_pane_reports_it_and_changes_nothing() {
        let mut layout = Layout::single(id("a"));
        assert_eq!(layout.remove(&id("a")), Ok(false));
        assert_eq!(layout, Layout::Pane(id("a")));
    }

    #[test]
    fn set_ratio_clamps_and_refuses_bad_input() {
        check(&[
            ("a; split a b right; ratio . 0.3", "R(0.30,a,b)"),
            ("a; split a b right; ratio . 2.0", "R(0.95,a,b)"),
            ("a; split a b right; ratio . -1", "R(0.05,a,b)"),
            ("a; split a b right; ratio . NaN", "NonFiniteRatio"),
            ("a; split a b right; ratio . inf", "NonFiniteRatio"),
            ("a; split a b right; ratio . -inf", "NonFiniteRatio"),
            ("a; split a b right; ratio F 0.5", "BadPath"),
            ("a; ratio . 0.5", "BadPath"),
            ("a; split a b right; split b c down; ratio S 0.2", "R(0.50,a,D(0.20,b,c))"),
            ("a; split a b right; split b c down; ratio SS 0.2", "BadPath"),
            ("a; split a b right; split b c down; ratio SSF 0.2", "BadPath"),
        ]);
    }

    #[test]
    fn ratio_at_follows_paths() {
        let layout = parse("R(0.50,a,D(0.25,b,c))");
        let cases: &[(&str, Option<f64>)] =
            &[(".", Some(0.5)), ("S", Some(0.25)), ("F", None), ("SF", None), ("SFS", None)];
        for (at, expected) in cases {
            assert_eq!(layout.ratio_at(&path(at)), *expected, "path {at}");
        }
        assert_eq!(Layout::single(id("a")).ratio_at(&[]), None);
    }

    #[test]
    fn validate_catches_duplicate_missing_and_unexpected_panes() {
        let abc = [id("a"), id("b"), id("c")];
        let cases: &[(&str, Result<(), LayoutError>)] = &[
            ("R(0.50,a,D(0.50,b,c))", Ok(())),
            // Out-of-range ratios are for clamp_ratios, not an error.
            ("R(1.50,a,D(-0.20,b,c))", Ok(())),
            ("R(0.50,a,D(0.50,b,a))", Err(LayoutError::DuplicatePane(id("a")))),
            ("R(0.50,a,b)", Err(LayoutError::MissingPane(id("c")))),
            ("R(0.50,a,D(0.50,b,R(0.50,c,z)))", Err(LayoutError::UnexpectedPane(id("z")))),
            ("R(NaN,a,D(0.50,b,c))", Err(LayoutError::NonFiniteRatio)),
            ("R(0.50,a,D(inf,b,c))", Err(LayoutError::NonFiniteRatio)),
        ];
        for (layout, expected) in cases {
            assert_eq!(parse(layout).validate(&abc), *expected, "{layout}");
        }
    }

    #[test]
    fn clamp_ratios_brings_every_ratio_into_range() {
        let cases = [
            ("R(1.50,a,D(-0.20,b,c))", "R(0.95,a,D(0.05,b,c))"),
            ("R(inf,a,D(-inf,b,c))", "R(0.95,a,D(0.05,b,c))"),
            ("R(NaN,a,b)", "R(0.50,a,b)"),
            ("R(0.40,a,b)", "R(0.40,a,b)"),
        ];
        for (input, expected) in cases {
            let mut layout = parse(input);
            layout.clamp_ratios();
            assert_eq!(render(&layout), expected, "{input}");
        }
    }

    #[test]
    fn queries_list_panes_in_order() {
        let layout = parse("R(0.50,a,D(0.50,b,R(0.50,c,d)))");
        let names: Vec<String> = layout.panes().iter().map(|p| name(p).to_owned()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert_eq!(layout.pane_count(), 4);
        assert!(layout.contains(&id("c")));
        assert!(!layout.contains(&id("z")));
    }

    #[test]
    fn geometry_matches_the_drawings() {
        check_drawings(&[
            ("a", 3, 2, "aaa\naaa"),
            ("R(0.50,a,b)", 7, 2, "aaa|bbb\naaa|bbb"),
            // avail = 7, round(3.5) = 4.
            ("R(0.50,a,b)", 8, 1, "aaaa|bbb"),
            ("D(0.50,a,b)", 2, 5, "aa\naa\n--\nbb\nbb"),
            ("R(0.33,a,R(0.50,b,c))", 11, 1, "aaa|bbb|ccc"),
            (
                "R(0.50,a,D(0.50,b,c))",
                7,
                5,
                "aaa|bbb
                 aaa|bbb
                 aaa|---
                 aaa|ccc
                 aaa|ccc",
            ),
            // Ratios are clamped so that each half keeps its minimum size (here, b|c needs 3).
            ("R(0.95,a,R(0.50,b,c))", 9, 1, "aaaaa|b|c"),
            ("R(0.05,R(0.50,a,b),c)", 9, 1, "a|b|ccccc"),
            // Too small: panes overlap rather than vanish, and there is no room for dividers.
            ("R(0.50,a,b)", 2, 1, "ab"),
            ("R(0.50,a,b)", 1, 1, "#"),
            ("R(0.50,a,R(0.50,b,c))", 3, 1, "a|#"),
        ]);
    }

    #[test]
    fn rects_report_exact_cells() {
        let layout = parse("R(0.50,a,D(0.33,b,c))");
        let got: Vec<(String, CellRect)> = layout
            .rects(CellSize { cols: 80, rows: 24 })
            .into_iter()
            .map(|(pane, rect)| (name(&pane).to_owned(), rect))
            .collect();
        let rect = |col, row, cols, rows| CellRect { col, row, cols, rows };
        assert_eq!(
            got,
            [
                ("a".to_owned(), rect(0, 0, 40, 24)),
                ("b".to_owned(), rect(41, 0, 39, 8)),
                ("c".to_owned(), rect(41, 9, 39, 15)),
            ]
        );
        let dividers = layout.dividers(CellSize { cols: 80, rows: 24 });
        assert_eq!(
            dividers,
            [
                Divider { path: vec![], dir: SplitDir::Right, rect: rect(40, 0, 1, 24) },
                Divider { path: vec![Side::Second], dir: SplitDir::Down, rect: rect(41, 8, 39, 1) },
            ]
        );
    }

    #[test]
    fn degenerate_sizes_give_every_pane_a_cell() {
        let layout = parse("R(0.50,a,D(0.50,b,R(0.05,c,d)))");
        for (cols, rows) in [(0, 0), (0, 5), (5, 0), (1, 1), (2, 2), (u16::MAX, u16::MAX)] {
            let rects = layout.rects(CellSize { cols, rows });
            assert_eq!(rects.len(), 4);
            assert!(rects.iter().all(|(_, r)| r.cols >= 1 && r.rows >= 1), "{cols}x{rows}");
        }
        // A hand-built tree with a NaN ratio still lays out.
        let rects = parse("R(NaN,a,b)").rects(CellSize { cols: 11, rows: 1 });
        assert_eq!(rects[0].1.cols, 5);
    }

    #[test]
    fn neighbours_follow_the_geometry() {
        // a | b
        //   |---
        //   | c | d
        let layout = parse("R(0.50,a,D(0.50,b,R(0.50,c,d)))");
        let size = CellSize { cols: 21, rows: 11 };
        let cases: &[(&str, FocusDir, Option<&str>)] = &[
            ("a", FocusDir::Right, Some("b")),
            ("a", FocusDir::Left, None),
            ("a", FocusDir::Up, None),
            ("b", FocusDir::Left, Some("a")),
            ("b", FocusDir::Down, Some("c")),
            ("c", FocusDir::Up, Some("b")),
            ("d", FocusDir::Up, Some("b")),
            ("d", FocusDir::Left, Some("c")),
            ("c", FocusDir::Left, Some("a")),
            ("d", FocusDir::Right, None),
            ("z", FocusDir::Right, None),
        ];
        for (from, dir, expected) in cases {
            let got = layout.neighbour(&id(from), *dir, size);
            assert_eq!(got, expected.map(id), "{from} {dir:?}");
        }
    }

    #[test]
    fn neighbour_ties_go_to_the_largest_overlap_then_the_nearest_edge() {
        // b and c both touch a; in 21x10, b has rows 0..=4 and c rows 6..=9, so b overlaps more.
        let layout = parse("R(0.50,a,D(0.50,b,c))");
        let size = CellSize { cols: 21, rows: 10 };
        assert_eq!(layout.neighbour(&id("a"), FocusDir::Right, size), Some(id("b")));
        // Equal overlaps: b and c split 11 rows as 5 and 5, so the top-most wins.
        let size = CellSize { cols: 21, rows: 11 };
        assert_eq!(layout.neighbour(&id("a"), FocusDir::Right, size), Some(id("b")));
        // Equal overlaps of 6 rows: a has rows 8..21, b rows 0..14 and c rows 15..21, so c's
        // top edge is nearer to a's (7 rows against 8) even though b comes first.
        let layout = parse("R(0.50,D(0.35,x,a),D(0.70,b,c))");
        let size = CellSize { cols: 21, rows: 21 };
        assert_eq!(layout.neighbour(&id("a"), FocusDir::Right, size), Some(id("c")));
    }

    #[test]
    fn neighbour_reaches_panes_touching_across_a_divider() {
        // a|b|c
        // -----
        // dd|ee
        // b sits right above the divider between d and e, so it overlaps neither.
        let layout = parse("D(0.50,R(0.33,a,R(0.50,b,c)),R(0.50,d,e))");
        assert_eq!(draw(&layout, 5, 3), "a|b|c\n-----\ndd|ee\n");
        let size = CellSize { cols: 5, rows: 3 };
        let cases: &[(&str, FocusDir, &str)] = &[
            // Both touch b; e's left edge is nearer to b's.
            ("b", FocusDir::Down, "e"),
            ("a", FocusDir::Down, "d"),
            ("c", FocusDir::Down, "e"),
            // a overlaps d while b only touches it.
            ("d", FocusDir::Up, "a"),
            ("e", FocusDir::Up, "c"),
        ];
        for (from, dir, expected) in cases {
            assert_eq!(
                layout.neighbour(&id(from), *dir, size),
                Some(id(expected)),
                "{from} {dir:?}"
            );
        }
    }

    #[test]
    fn pane_at_finds_panes_and_skips_dividers() {
        let layout = parse("R(0.50,a,D(0.50,b,c))");
        let size = CellSize { cols: 7, rows: 5 };
        let cases: &[(u16, u16, Option<&str>)] = &[
            (0, 0, Some("a")),
            (2, 4, Some("a")),
            (3, 0, None),
            (4, 0, Some("b")),
            (6, 1, Some("b")),
            (5, 2, None),
            (4, 3, Some("c")),
            (7, 0, None),
            (0, 5, None),
        ];
        for (col, row, expected) in cases {
            assert_eq!(layout.pane_at(size, *col, *row), expected.map(id), "({col},{row})");
        }
    }

    #[test]
    fn errors_say_what_to_do() {
        let text = LayoutError::NoSuchPane(id("a")).to_string();
        assert!(text.starts_with("pane pane_a is not in this layout"), "{text}");
    }
}
