//! What the window shows: the active tab of the Store's state, placed on the window's cells.
//!
//! Owns the window's reading of the Store's typed view (`Store::view`: which tab is shown,
//! its layout and panes),
//! the placement of panes with their header row (and a zoomed pane filling the tab), and the
//! geometry of pointer input: which pane or divider is under a cell, where in a pane's screen
//! a cell lies, the ratio that puts a dragged divider under the pointer, and the divider a
//! resize chord moves. It must not change state: the window sends commands for that.

use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellRect, CellSize, Divider, FocusDir, Layout, Side, SplitDir};
use berth_server::view::{PaneInfo, StateView, TabInfo};

/// Rows at the top of each pane taken by its header.
pub const HEADER_ROWS: u16 = 1;

/// How far a resize chord moves a divider, as a share of its split.
pub const RESIZE_STEP: f64 = 0.05;

/// The tab the window shows, as the Store described it.
#[derive(Debug, Clone, PartialEq)]
pub struct TabView {
    /// The tab's id.
    pub tab_id: TabId,
    /// Its workspace's id.
    pub workspace_id: WorkspaceId,
    /// The workspace's tabs in order (for next/previous tab).
    pub workspace_tabs: Vec<TabId>,
    /// The workspace's name (for the window title).
    pub workspace_name: String,
    /// The tab's size in cells, as the Store has it.
    pub size: CellSize,
    /// The layout.
    pub layout: Layout,
    /// The focused pane.
    pub active_pane: PaneId,
    /// The tab's panes.
    pub panes: Vec<PaneInfo>,
}

impl TabView {
    /// The active workspace's active tab (or the first tab there is), if any.
    pub fn active(list: &StateView) -> Option<TabView> {
        let ws = list
            .active_workspace
            .as_ref()
            .and_then(|id| list.workspaces.iter().find(|w| w.id == *id))
            .or_else(|| list.workspaces.iter().find(|w| !w.tabs.is_empty()))?;
        let tab = ws
            .active_tab
            .as_ref()
            .and_then(|id| ws.tabs.iter().find(|t| t.id == *id))
            .or_else(|| ws.tabs.first())?;
        Self::from_tab(list, tab)
    }

    /// The tab with this id, if it exists.
    pub fn by_id(list: &StateView, tab_id: &TabId) -> Option<TabView> {
        let tab = list.workspaces.iter().flat_map(|w| &w.tabs).find(|t| t.id == *tab_id)?;
        Self::from_tab(list, tab)
    }

    fn from_tab(list: &StateView, tab: &TabInfo) -> Option<TabView> {
        let ws = list.workspaces.iter().find(|w| w.tabs.iter().any(|t| t.id == tab.id))?;
        Some(TabView {
            tab_id: tab.id.clone(),
            workspace_id: ws.id.clone(),
            workspace_tabs: ws.tabs.iter().map(|t| t.id.clone()).collect(),
            workspace_name: ws.name.clone(),
            size: tab.size,
            layout: tab.layout.clone(),
            active_pane: tab.active_pane.clone(),
            panes: tab.panes.clone(),
        })
    }

    /// A pane of the tab by id.
    pub fn pane(&self, id: &PaneId) -> Option<&PaneInfo> {
        self.panes.iter().find(|p| p.id == *id)
    }

    /// The tab `step` places after this one in its workspace (wrapping), if it is not this one.
    pub fn neighbour_tab(&self, step: isize) -> Option<&TabId> {
        let n = self.workspace_tabs.len();
        let at = self.workspace_tabs.iter().position(|t| *t == self.tab_id)?;
        let to = (at as isize + step).rem_euclid(n as isize) as usize;
        (to != at).then(|| &self.workspace_tabs[to])
    }

    /// The window title: the focused pane's title, the workspace, and which tab this is when
    /// there are several.
    pub fn window_title(&self) -> String {
        let mut parts = Vec::new();
        if let Some(title) = self.pane(&self.active_pane).map(|p| p.title.as_str()) {
            if !title.is_empty() {
                parts.push(title.to_owned());
            }
        }
        let n = self.workspace_tabs.len();
        match self.workspace_tabs.iter().position(|t| *t == self.tab_id) {
            Some(at) if n > 1 => parts.push(format!("{} [{}/{n}]", self.workspace_name, at + 1)),
            _ => parts.push(self.workspace_name.clone()),
        }
        parts.push("Berth".to_owned());
        parts.join(" — ")
    }

    /// Each shown pane's rectangle (header row included) on the window's cells: every pane of
    /// the layout, or only `zoomed` filling the tab.
    pub fn placements(&self, zoomed: Option<&PaneId>) -> Vec<(PaneId, CellRect)> {
        if let Some(zoomed) = zoomed.filter(|z| self.pane(z).is_some()) {
            let whole = CellRect { col: 0, row: 0, cols: self.size.cols, rows: self.size.rows };
            return vec![(zoomed.clone(), whole)];
        }
        self.layout.rects(self.size)
    }

    /// The dividers shown (none while a pane is zoomed).
    pub fn dividers(&self, zoomed: Option<&PaneId>) -> Vec<Divider> {
        if zoomed.is_some_and(|z| self.pane(z).is_some()) {
            return Vec::new();
        }
        self.layout.dividers(self.size)
    }
}

/// What lies under a cell of the window.
#[derive(Debug, Clone, PartialEq)]
pub enum Hit {
    /// A pane's header row.
    Header {
        /// The pane.
        pane: PaneId,
    },
    /// A cell of a pane's screen.
    Screen {
        /// The pane.
        pane: PaneId,
        /// The column in the pane's screen.
        col: u16,
        /// The row in the pane's screen.
        row: u16,
    },
    /// A divider.
    Divider(Divider),
    /// Nothing (outside the tab).
    Nothing,
}

/// What is under the window cell (`col`, `row`).
pub fn hit(view: &TabView, zoomed: Option<&PaneId>, col: u16, row: u16) -> Hit {
    for (pane, rect) in view.placements(zoomed) {
        if col >= rect.col
            && col < rect.col + rect.cols
            && row >= rect.row
            && row < rect.row + rect.rows
        {
            return match (row - rect.row).checked_sub(HEADER_ROWS) {
                None => Hit::Header { pane },
                Some(screen_row) => Hit::Screen { pane, col: col - rect.col, row: screen_row },
            };
        }
    }
    for divider in view.dividers(zoomed) {
        let r = divider.rect;
        if col >= r.col && col < r.col + r.cols && row >= r.row && row < r.row + r.rows {
            return Hit::Divider(divider);
        }
    }
    Hit::Nothing
}

/// The screen cell of `pane` under window cell (`col`, `row`), clamped into the pane (for a
/// drag that leaves it).
pub fn cell_in_pane(
    view: &TabView,
    zoomed: Option<&PaneId>,
    pane: &PaneId,
    col: i32,
    row: i32,
) -> Option<(u16, u16)> {
    let (_, rect) = view.placements(zoomed).into_iter().find(|(p, _)| p == pane)?;
    let screen_rows = rect.rows.saturating_sub(HEADER_ROWS).max(1);
    let c = (col - i32::from(rect.col)).clamp(0, i32::from(rect.cols.max(1)) - 1);
    let r =
        (row - i32::from(rect.row) - i32::from(HEADER_ROWS)).clamp(0, i32::from(screen_rows) - 1);
    // Both values were clamped into u16 ranges just above.
    Some((c as u16, r as u16))
}

/// The area a split covers: its dividers and every pane below it.
fn split_area(view: &TabView, path: &[Side]) -> Option<CellRect> {
    let mut node = &view.layout;
    for side in path {
        node = match (node, side) {
            (Layout::Split { first, .. }, Side::First) => first,
            (Layout::Split { second, .. }, Side::Second) => second,
            (Layout::Pane(_), _) => return None,
        };
    }
    let panes = node.panes();
    let rects = view.layout.rects(view.size);
    let mut area: Option<(u16, u16, u16, u16)> = None;
    for (_, r) in rects.iter().filter(|(id, _)| panes.contains(id)) {
        let (c1, r1) = (r.col + r.cols, r.row + r.rows);
        area = Some(match area {
            None => (r.col, r.row, c1, r1),
            Some((a, b, c, d)) => (a.min(r.col), b.min(r.row), c.max(c1), d.max(r1)),
        });
    }
    let (c0, r0, c1, r1) = area?;
    Some(CellRect { col: c0, row: r0, cols: c1 - c0, rows: r1 - r0 })
}

/// The ratio that puts `divider` at window cell (`col`, `row`), if the split is large enough
/// to have one.
pub fn drag_ratio(view: &TabView, divider: &Divider, col: u16, row: u16) -> Option<f64> {
    let area = split_area(view, &divider.path)?;
    let (start, len, at) = match divider.dir {
        SplitDir::Right => (area.col, area.cols, col),
        SplitDir::Down => (area.row, area.rows, row),
    };
    let avail = len.checked_sub(1).filter(|a| *a >= 2)?;
    let offset = at.saturating_sub(start).min(avail);
    Some(f64::from(offset) / f64::from(avail))
}

/// The divider a resize chord moves for the focused pane, and its new ratio: the pane's border
/// on the side of the arrow if there is one, else the opposite border, moved in the arrow's
/// direction.
pub fn resize_target(view: &TabView, pane: &PaneId, dir: FocusDir) -> Option<(Vec<Side>, f64)> {
    let (_, rect) = view.layout.rects(view.size).into_iter().find(|(p, _)| p == pane)?;
    let dividers = view.layout.dividers(view.size);
    let overlaps = |d: &Divider| match d.dir {
        SplitDir::Right => d.rect.row < rect.row + rect.rows && rect.row < d.rect.row + d.rect.rows,
        SplitDir::Down => d.rect.col < rect.col + rect.cols && rect.col < d.rect.col + d.rect.cols,
    };
    let after = |d: &Divider| match d.dir {
        SplitDir::Right => d.rect.col == rect.col + rect.cols,
        SplitDir::Down => d.rect.row == rect.row + rect.rows,
    };
    let before = |d: &Divider| match d.dir {
        SplitDir::Right => d.rect.col + 1 == rect.col,
        SplitDir::Down => d.rect.row + 1 == rect.row,
    };
    let (axis, grows) = match dir {
        FocusDir::Left => (SplitDir::Right, false),
        FocusDir::Right => (SplitDir::Right, true),
        FocusDir::Up => (SplitDir::Down, false),
        FocusDir::Down => (SplitDir::Down, true),
    };
    let candidates: Vec<&Divider> =
        dividers.iter().filter(|d| d.dir == axis && overlaps(d)).collect();
    // The border on the arrow's side first, then the opposite one.
    let divider = if grows {
        candidates.iter().find(|d| after(d)).or_else(|| candidates.iter().find(|d| before(d)))
    } else {
        candidates.iter().find(|d| before(d)).or_else(|| candidates.iter().find(|d| after(d)))
    }?;
    let ratio = view.layout.ratio_at(&divider.path)?;
    let step = if grows { RESIZE_STEP } else { -RESIZE_STEP };
    Some((divider.path.clone(), ratio + step))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::fixtures;
    use berth_server::view::WorkspaceView;

    fn pane_info(id: &PaneId, title: &str) -> PaneInfo {
        PaneInfo {
            title: title.into(),
            size: CellSize { cols: 1, rows: 1 },
            ..fixtures::pane_info(id.as_str())
        }
    }

    fn id<T: std::str::FromStr>(s: &str) -> T
    where
        T::Err: std::fmt::Debug,
    {
        s.parse().expect("a valid id")
    }

    /// A tab of 41x20 cells split right at 0.5: `a` left, `b` right.
    fn two_panes() -> (TabView, PaneId, PaneId) {
        let (a, b) = (PaneId::new(), PaneId::new());
        let mut layout = Layout::single(a.clone());
        layout.split(&a, b.clone(), SplitDir::Right).expect("a is in the layout");
        let list = StateView {
            workspaces: vec![WorkspaceView {
                id: id("ws_1"),
                name: "proj".into(),
                cwd: "/".into(),
                git: None,
                auto_resume: false,
                agent_drive: false,
                active_tab: Some(id("tab_1")),
                tabs: vec![
                    TabInfo {
                        id: id("tab_1"),
                        title: "t".into(),
                        active_pane: a.clone(),
                        layout,
                        size: CellSize { cols: 41, rows: 20 },
                        panes: vec![pane_info(&a, "vim"), pane_info(&b, "sh")],
                    },
                    TabInfo {
                        id: id("tab_2"),
                        title: "u".into(),
                        active_pane: b.clone(),
                        layout: Layout::single(b.clone()),
                        size: CellSize { cols: 41, rows: 20 },
                        panes: vec![],
                    },
                ],
            }],
            active_workspace: Some(id("ws_1")),
        };
        (TabView::active(&list).expect("there is an active tab"), a, b)
    }

    #[test]
    fn the_active_tab_and_its_title() {
        let (view, a, _) = two_panes();
        assert_eq!(view.tab_id.as_str(), "tab_1");
        assert_eq!(view.active_pane, a);
        assert_eq!(view.window_title(), "vim — proj [1/2] — Berth");
        assert_eq!(view.neighbour_tab(1).map(TabId::as_str), Some("tab_2"));
        assert_eq!(view.neighbour_tab(-1).map(TabId::as_str), Some("tab_2"));
    }

    #[test]
    fn hits_as_a_table() {
        let (view, a, b) = two_panes();
        let cases = [
            ((0, 0), Hit::Header { pane: a.clone() }),
            ((3, 1), Hit::Screen { pane: a.clone(), col: 3, row: 0 }),
            ((19, 19), Hit::Screen { pane: a.clone(), col: 19, row: 18 }),
            ((21, 0), Hit::Header { pane: b.clone() }),
            ((21, 5), Hit::Screen { pane: b.clone(), col: 0, row: 4 }),
            ((50, 5), Hit::Nothing),
        ];
        for ((col, row), expected) in cases {
            assert_eq!(hit(&view, None, col, row), expected, "cell {col},{row}");
        }
        assert!(matches!(hit(&view, None, 20, 7), Hit::Divider(_)));
        // Zoomed, the pane fills the tab and there is no divider.
        assert_eq!(hit(&view, Some(&b), 20, 7), Hit::Screen { pane: b.clone(), col: 20, row: 6 });
        assert_eq!(view.dividers(Some(&b)), Vec::new());
    }

    #[test]
    fn dragging_a_divider_puts_it_under_the_pointer() {
        let (view, _, _) = two_panes();
        let divider = view.layout.dividers(view.size).remove(0);
        assert_eq!(drag_ratio(&view, &divider, 10, 3), Some(0.25));
        assert_eq!(drag_ratio(&view, &divider, 30, 3), Some(0.75));
        assert_eq!(drag_ratio(&view, &divider, 200, 3), Some(1.0));
    }

    #[test]
    fn resize_chords_move_the_nearest_border() {
        let (view, a, b) = two_panes();
        let (path, ratio) = resize_target(&view, &a, FocusDir::Right).expect("a has a border");
        assert!(path.is_empty());
        assert!((ratio - 0.55).abs() < 1e-9);
        // The right pane has no border on its right: its left border moves right.
        let (_, ratio) = resize_target(&view, &b, FocusDir::Right).expect("b has a border");
        assert!((ratio - 0.55).abs() < 1e-9);
        let (_, ratio) = resize_target(&view, &b, FocusDir::Left).expect("b has a border");
        assert!((ratio - 0.45).abs() < 1e-9);
        // No horizontal divider in a side-by-side split.
        assert_eq!(resize_target(&view, &a, FocusDir::Down), None);
    }

    #[test]
    fn a_cell_in_a_pane_is_clamped_for_drags_that_leave_it() {
        let (view, a, _) = two_panes();
        assert_eq!(cell_in_pane(&view, None, &a, 5, 5), Some((5, 4)));
        assert_eq!(cell_in_pane(&view, None, &a, -3, 0), Some((0, 0)));
        assert_eq!(cell_in_pane(&view, None, &a, 99, 99), Some((19, 18)));
    }
}
