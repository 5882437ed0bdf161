//! Input that lands on the window's chrome: clicks, drags and the wheel on the tab bar (a
//! click while the inbox or the switcher is open goes to it, one on the bar's right end opens
//! the inbox), clicks on a decision card's buttons,
//! scrolling a tombstone's tail, and the one key that resumes a tombstone.
//!
//! It owns turning those into Store commands (`pane.focus`, `tab.move`, `tab.close`,
//! `pane.decide`, `pane.resume`) and window-local changes (a tail's scroll, a tombstone's
//! resume error). It must not draw: `chrome.rs` and `decisions.rs` say what the chrome shows,
//! the renderer draws it.

use std::time::{Duration, Instant};

use berth_engine::ids::PaneId;
use berth_server::commands::Command;
use berth_server::view::PaneInfo;
use winit::event::MouseButton;

use super::app::App;
use super::chrome::{self, TabBarHit, TAB_BAR_ROWS};
use super::decisions;
use super::input::Drag;
use super::intent::Intent;
use super::sidebar::{self, SidebarHit};
use super::view::{self, Hit, TabView};
use crate::render::{self, CardHit, CellRectU16};

/// Two clicks on the same tab within this long are a double click (rename).
const DOUBLE_CLICK: Duration = Duration::from_millis(400);

impl App {
    /// Enter on a focused tombstone: resume it; a failure is kept for its overlay (the Store
    /// also writes it into the pane's tail).
    pub(super) fn resume_tombstone(&mut self, id: PaneId) {
        let result = self.exec_result(Command::PaneResume { pane: id.clone() }).map(|_| ());
        if let Err(message) = &result {
            tracing::warn!(pane = %id, error = %message, "resume failed");
        }
        self.tombstones.resumed(&id, result);
        self.redraw();
    }

    /// A button press on the chrome (the switcher while open, the tab bar); whether it was.
    pub(super) fn chrome_press(&mut self, button: MouseButton) -> bool {
        let Some(((col, row), _)) = self.pointer_window_cell() else { return false };
        let (col, row) = (col.max(0) as u16, row.max(0) as u16);
        if self.inbox_press(button) {
            return true;
        }
        if self.switcher.is_open() {
            let list = self.state_view();
            let grid = (self.grid.cols, self.grid.rows);
            let intents =
                self.switcher.press(&list, self.home.as_deref(), grid, (col, row), button);
            self.apply(intents);
            return true;
        }
        if row >= TAB_BAR_ROWS {
            if self.sidebar_press(col, row, button) {
                return true;
            }
            return self.card_press(col, row, button);
        }
        let Some(view) = self.view() else { return true };
        let list = self.state_view();
        let bar = self.tab_bar(&list, &view);
        let cols = view.size.cols.max(self.grid.cols);
        // The bar lists the workspace's tabs in order, from the first.
        let tab_of = |i: usize| {
            let ws = list.workspaces.iter().find(|w| w.id == view.workspace_id)?;
            ws.tabs.get(i).cloned()
        };
        match (chrome::tab_bar_hit(&bar, col, cols), button) {
            (TabBarHit::Right, MouseButton::Left) => self.toggle_inbox(),
            (TabBarHit::Tab(i), MouseButton::Left) => {
                let now = Instant::now();
                let double = self
                    .input
                    .tab_click
                    .is_some_and(|(at, when)| at == i && now.duration_since(when) < DOUBLE_CLICK);
                self.input.tab_click = Some((i, now));
                if let Some(tab) = tab_of(i) {
                    self.exec(Command::PaneFocus { pane: tab.active_pane });
                }
                if double {
                    if let Some(tab) = tab_of(i) {
                        let list = self.state_view();
                        let intents = self.renaming.start(&list, &tab.id);
                        self.apply(intents);
                    }
                } else {
                    self.start_tab_drag(i);
                }
            }
            (TabBarHit::Close(i), MouseButton::Left)
            | (TabBarHit::Tab(i) | TabBarHit::Close(i), MouseButton::Middle) => {
                if let Some(tab) = tab_of(i) {
                    self.exec(Command::TabClose { tab: tab.id });
                }
            }
            _ => {}
        }
        self.redraw();
        true
    }

    /// The decision card of the shown tab `view` under window cell (`col`, `row`), if any: its
    /// pane and what on the card the cell is. The card and its layout are the ones the frame
    /// draws.
    pub(super) fn card_under(
        &self,
        view: &TabView,
        col: u16,
        row: u16,
    ) -> Option<(PaneInfo, CardHit)> {
        if self.switcher.is_open() {
            // Cards wait under the switcher (they are not drawn while it is open).
            return None;
        }
        let zoomed = self.zoom.as_ref().filter(|z| z.tab == view.tab_id).map(|z| z.pane.clone());
        view.placements(zoomed.as_ref()).into_iter().find_map(|(pane, rect)| {
            let info = view.pane(&pane)?;
            let card = decisions::card_of(info.pending_decision.as_ref()?, &self.config.keymap);
            let placed = CellRectU16::new(rect.col, rect.row + TAB_BAR_ROWS, rect.cols, rect.rows);
            let layout = render::card_layout(&card, placed)?;
            render::card_hit(&layout, col, row).map(|hit| (info.clone(), hit))
        })
    }

    /// A button press at window cell (`col`, `row`) on a pane's decision card: a left click on
    /// a button answers the decision shown; any press on the card is the card's (the program
    /// under it gets no click). Whether it was on a card.
    fn card_press(&mut self, col: u16, row: u16, button: MouseButton) -> bool {
        let Some(view) = self.view() else { return false };
        let Some((pane, hit)) = self.card_under(&view, col, row) else { return false };
        if let (CardHit::Button(index), MouseButton::Left) = (hit, button) {
            let intents = decisions::press(&pane, index);
            self.apply(intents);
            self.redraw();
        }
        true
    }

    /// A button press at window cell (`col`, `row`) on the sidebar: its edge starts a drag,
    /// an entry focuses its pane, a decision button answers. Whether it was on the sidebar.
    fn sidebar_press(&mut self, col: u16, row: u16, button: MouseButton) -> bool {
        let list = self.state_view();
        let Some(laid) = self.sidebar_layout(&list) else { return false };
        match (sidebar::hit(&laid, col, row), button) {
            (SidebarHit::Outside, _) => return false,
            (SidebarHit::Edge, MouseButton::Left) => self.input.drag = Some(Drag::Sidebar),
            (SidebarHit::Focus(pane), MouseButton::Left) => {
                self.exec(Command::PaneFocus { pane });
            }
            (SidebarHit::Review(task), MouseButton::Left) => self.open_review(task),
            (SidebarHit::Answer(pane, answer), MouseButton::Left) => {
                let info = list.workspaces.iter().flat_map(|w| &w.tabs).flat_map(|t| &t.panes);
                let command =
                    info.filter(|p| p.id == pane).find_map(|p| decisions::answer(p, answer));
                self.apply(command.map(Intent::Store).into_iter().collect());
            }
            _ => {}
        }
        self.redraw();
        true
    }

    /// The end of a tab drag that started on the tab at `from`: the tab moves to where the
    /// pointer is in the tab bar.
    pub(super) fn drop_tab(&mut self, from: usize) {
        let Some(((col, row), _)) = self.pointer_window_cell() else { return };
        if row >= i32::from(TAB_BAR_ROWS) || row < 0 {
            return;
        }
        let Some(view) = self.view() else { return };
        let list = self.state_view();
        let bar = self.tab_bar(&list, &view);
        let Some(to) = chrome::drop_index(&bar, col.max(0) as u16) else { return };
        if to == from {
            return;
        }
        if let Some(tab) = view.workspace_tabs.get(from) {
            self.exec(Command::TabMove { tab: tab.clone(), index: to });
        }
        self.redraw();
    }

    /// The wheel over the chrome or a tombstone: over the tab bar it switches tabs, over a
    /// tombstone it scrolls the saved tail. Whether it was used.
    pub(super) fn chrome_wheel(&mut self, up: bool, steps: usize) -> bool {
        let Some(((col, row), _)) = self.pointer_window_cell() else { return false };
        let Some(view) = self.view() else { return false };
        if row < i32::from(TAB_BAR_ROWS) {
            let target = view
                .neighbour_tab(if up { -1 } else { 1 })
                .and_then(|tab| TabView::by_id(&self.state_view(), tab))
                .map(|v| v.active_pane);
            if let Some(pane) = target {
                self.exec(Command::PaneFocus { pane });
                self.redraw();
            }
            return true;
        }
        let zoomed = self.zoom.as_ref().filter(|z| z.tab == view.tab_id).map(|z| z.pane.clone());
        let tab_row = (row - i32::from(TAB_BAR_ROWS)).max(0) as u16;
        let Hit::Screen { pane, .. } =
            view::hit(&view, zoomed.as_ref(), col.max(0) as u16, tab_row)
        else {
            return false;
        };
        let Some(len) = self.pane_tail_len(&pane) else { return false };
        self.tombstones.wheel(&pane, up, steps, len);
        self.redraw();
        true
    }
}
