//! Input that lands on the window's chrome: clicks, drags and the wheel on the tab bar, the
//! workspace switcher's keys and clicks, the attention jump, moving tabs, scrolling a
//! tombstone's tail, and the one key that resumes a tombstone.
//!
//! It owns turning those into Store commands (`pane.focus`, `tab.move`, `tab.close`,
//! `pane.resume`) and window-local changes (the switcher, a tail's scroll). It must not draw:
//! `chrome.rs` says what the chrome shows, the renderer draws it.

use std::time::{Duration, Instant};

use berth_engine::ids::{PaneId, TabId};
use berth_server::commands::Command;
use winit::event::MouseButton;
use winit::keyboard::{Key, NamedKey};

use super::app::App;
use super::chrome::{self, Switcher, TabBarHit, TabRename, MAX_TAB_TITLE, TAB_BAR_ROWS};
use super::keymap::Action;
use super::view::{self, Hit, TabView};
use super::StoreList as _;

/// Lines a wheel step scrolls a tombstone's tail.
const TAIL_WHEEL_LINES: usize = 3;

/// Two clicks on the same tab within this long are a double click (rename).
const DOUBLE_CLICK: Duration = Duration::from_millis(400);

impl App {
    /// Opens the workspace switcher with the first other workspace highlighted (so
    /// Ctrl+Shift+Space, Enter goes back and forth between two).
    pub(super) fn open_switcher(&mut self) {
        let mut open = Switcher::default();
        let list = self.lock_store().list();
        let entries = self.switcher_entries(&list, &open);
        open.selected = entries.iter().position(|(_, e)| !e.current).unwrap_or(0);
        self.switcher = Some(open);
        self.redraw();
    }

    /// A key while the switcher is open: it filters, moves, picks or closes; nothing reaches
    /// a pane.
    pub(super) fn switcher_key(
        &mut self,
        key: Key<&str>,
        text: Option<&str>,
        action: Option<Action>,
    ) {
        let Some(mut open) = self.switcher.take() else { return };
        let count = {
            let list = self.lock_store().list();
            self.switcher_entries(&list, &open).len()
        };
        match key {
            _ if action == Some(Action::Switcher) => {}
            Key::Named(NamedKey::Escape) => {}
            Key::Named(NamedKey::Enter) => {
                self.pick_workspace(&open, open.selected);
            }
            Key::Named(NamedKey::ArrowDown) | Key::Named(NamedKey::Tab) if count > 0 => {
                open.selected = (open.selected + 1) % count;
                self.switcher = Some(open);
            }
            Key::Named(NamedKey::ArrowUp) if count > 0 => {
                open.selected = (open.selected + count - 1) % count;
                self.switcher = Some(open);
            }
            Key::Named(NamedKey::Backspace) => {
                open.query.pop();
                open.selected = 0;
                self.switcher = Some(open);
            }
            _ => {
                let typed =
                    text.filter(|_| !self.input.mods.control_key() && !self.input.mods.alt_key());
                if let Some(t) = typed.filter(|t| t.chars().all(|c| !c.is_control())) {
                    open.query.push_str(t);
                    open.selected = 0;
                }
                self.switcher = Some(open);
            }
        }
        self.redraw();
    }

    /// Shows the workspace of the switcher's entry `index` (its focused tab and pane).
    fn pick_workspace(&mut self, open: &Switcher, index: usize) {
        let list = self.lock_store().list();
        let entries = self.switcher_entries(&list, open);
        let Some((ws_id, _)) = entries.get(index) else { return };
        let Some(ws) = list.workspaces.iter().find(|w| &w.id == ws_id) else { return };
        let tab = ws
            .active_tab_id
            .as_deref()
            .and_then(|id| ws.tabs.iter().find(|t| t.id == id))
            .or_else(|| ws.tabs.first());
        if let Some(pane) = tab.and_then(|t| PaneId::parse(&t.active_pane_id).ok()) {
            self.exec(Command::PaneFocus { pane });
        }
        self.switcher = None;
    }

    /// Starts editing the title of tab `tab` in the tab bar, from its current title.
    pub(super) fn start_rename(&mut self, tab: &str) {
        let list = self.lock_store().list();
        let Some(dto) = list.workspaces.iter().flat_map(|w| &w.tabs).find(|t| t.id == tab) else {
            return;
        };
        let current = if dto.title.is_empty() {
            dto.panes.iter().find(|p| p.id == dto.active_pane_id).map(|p| p.title.clone())
        } else {
            Some(dto.title.clone())
        };
        self.renaming = Some(TabRename { tab: tab.to_owned(), text: current.unwrap_or_default() });
        self.redraw();
    }

    /// A key while a tab's title is being edited: text edits it, Enter renames the tab
    /// (`tab.rename`), Esc leaves it as it was; nothing reaches a pane.
    pub(super) fn rename_key(&mut self, key: Key<&str>, text: Option<&str>) {
        let Some(mut rename) = self.renaming.take() else { return };
        match key {
            Key::Named(NamedKey::Escape) => {}
            Key::Named(NamedKey::Enter) => {
                let title = rename.text.trim().to_owned();
                if let (Ok(tab), false) = (TabId::parse(&rename.tab), title.is_empty()) {
                    if let Err(e) = self.exec_result(Command::TabRename { tab, title }) {
                        tracing::warn!(error = %e, "tab not renamed");
                    }
                }
            }
            Key::Named(NamedKey::Backspace) => {
                rename.text.pop();
                self.renaming = Some(rename);
            }
            _ if self.input.mods.control_key() && key == Key::Character("u") => {
                rename.text.clear();
                self.renaming = Some(rename);
            }
            _ => {
                let typed =
                    text.filter(|_| !self.input.mods.control_key() && !self.input.mods.alt_key());
                if let Some(t) = typed.filter(|t| t.chars().all(|c| !c.is_control())) {
                    if rename.text.chars().count() + t.chars().count() <= MAX_TAB_TITLE {
                        rename.text.push_str(t);
                    }
                }
                self.renaming = Some(rename);
            }
        }
        self.redraw();
    }

    /// Focuses the next pane that wants attention, in any tab of any workspace.
    pub(super) fn jump_to_attention(&mut self, current: &str) {
        let list = self.lock_store().list();
        let next = chrome::next_attention(&list, Some(current));
        if let Some(pane) = next.and_then(|p| PaneId::parse(&p).ok()) {
            self.exec(Command::PaneFocus { pane });
        }
    }

    /// Moves the shown tab `step` places along the tab bar.
    pub(super) fn move_tab(&mut self, view: &TabView, step: isize) {
        let Some(at) = view.workspace_tabs.iter().position(|t| *t == view.tab_id) else { return };
        let Some(to) = at.checked_add_signed(step).filter(|to| *to < view.workspace_tabs.len())
        else {
            return;
        };
        if let Ok(tab) = TabId::parse(&view.tab_id) {
            self.exec(Command::TabMove { tab, index: to });
        }
    }

    /// Enter on a focused tombstone: resume it; a failure is kept for its overlay (the Store
    /// also writes it into the pane's tail).
    pub(super) fn resume_tombstone(&mut self, id: PaneId) {
        let key = id.to_string();
        match self.exec_result(Command::PaneResume { pane: id }) {
            Ok(_) => {
                self.resume_errors.remove(&key);
                self.tomb_scroll.remove(&key);
            }
            Err(message) => {
                tracing::warn!(pane = %key, error = %message, "resume failed");
                self.resume_errors.insert(key, format!("resume failed: {message}"));
            }
        }
        self.redraw();
    }

    /// A button press on the chrome (the switcher while open, the tab bar); whether it was.
    pub(super) fn chrome_press(&mut self, button: MouseButton) -> bool {
        let Some(((col, row), _)) = self.pointer_window_cell() else { return false };
        let (col, row) = (col.max(0) as u16, row.max(0) as u16);
        if let Some(open) = self.switcher.clone() {
            let list = self.lock_store().list();
            let entries = self.switcher_entries(&list, &open);
            let grid = self.grid;
            let scene = chrome::switcher_scene(&open, &entries, grid.cols, grid.rows);
            let first = open.selected.min(entries.len().saturating_sub(1)) - scene.selected;
            match chrome::switcher_hit(&scene, col, row) {
                Some(i) if button == MouseButton::Left => self.pick_workspace(&open, first + i),
                Some(_) => {}
                None => self.switcher = None,
            }
            self.redraw();
            return true;
        }
        if row >= TAB_BAR_ROWS {
            return false;
        }
        let Some(view) = self.view() else { return true };
        let list = self.lock_store().list();
        let bar = chrome::tab_bar(&list, &view, self.grid.cols, self.renaming.as_ref());
        // The bar lists the workspace's tabs in order, from the first.
        let tab_of = |i: usize| {
            let ws = list.workspaces.iter().find(|w| w.id == view.workspace_id)?;
            ws.tabs.get(i).cloned()
        };
        match (chrome::tab_bar_hit(&bar, col), button) {
            (TabBarHit::Tab(i), MouseButton::Left) => {
                let now = Instant::now();
                let double = self
                    .last_tab_click
                    .is_some_and(|(at, when)| at == i && now.duration_since(when) < DOUBLE_CLICK);
                self.last_tab_click = Some((i, now));
                if let Some(pane) = tab_of(i).and_then(|t| PaneId::parse(&t.active_pane_id).ok()) {
                    self.exec(Command::PaneFocus { pane });
                }
                if double {
                    if let Some(tab) = tab_of(i) {
                        self.start_rename(&tab.id);
                    }
                } else {
                    self.start_tab_drag(i);
                }
            }
            (TabBarHit::Close(i), MouseButton::Left)
            | (TabBarHit::Tab(i) | TabBarHit::Close(i), MouseButton::Middle) => {
                if let Some(tab) = tab_of(i).and_then(|t| TabId::parse(&t.id).ok()) {
                    self.exec(Command::TabClose { tab });
                }
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
        let list = self.lock_store().list();
        let bar = chrome::tab_bar(&list, &view, self.grid.cols, self.renaming.as_ref());
        let Some(to) = chrome::drop_index(&bar, col.max(0) as u16) else { return };
        if to == from {
            return;
        }
        if let Some(tab) = view.workspace_tabs.get(from).and_then(|t| TabId::parse(t).ok()) {
            self.exec(Command::TabMove { tab, index: to });
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
                .and_then(|tab| TabView::by_id(&self.lock_store().list(), tab))
                .and_then(|v| PaneId::parse(&v.active_pane).ok());
            if let Some(pane) = target {
                self.exec(Command::PaneFocus { pane });
                self.redraw();
            }
            return true;
        }
        let zoomed = self.zoom.as_ref().filter(|z| z.tab == view.tab_id).map(|z| z.pane.clone());
        let tab_row = (row - i32::from(TAB_BAR_ROWS)).max(0) as u16;
        let Hit::Screen { pane, .. } =
            view::hit(&view, zoomed.as_deref(), col.max(0) as u16, tab_row)
        else {
            return false;
        };
        let Ok(id) = PaneId::parse(&pane) else { return false };
        let Some(len) = self.lock_store().pane_tail_len(&id) else { return false };
        let back = self.tomb_scroll.get(&pane).copied().unwrap_or(0);
        let lines = steps * TAIL_WHEEL_LINES;
        let back = if up { back + lines } else { back.saturating_sub(lines) };
        self.tomb_scroll.insert(pane, back.min(len.saturating_sub(1)));
        self.redraw();
        true
    }
}
