//! The workspace switcher (Ctrl+Shift+Space): opening it, its keys and clicks, and what it
//! shows.
//!
//! Owns whether the switcher is open, what the user typed and which entry is highlighted, and
//! the git branches it lists beside workspaces. It decides; the window carries out what it
//! returns ([`Intent`]s: a `pane.focus` of the picked workspace's focused pane, a frame). It
//! must not change the Store itself and must not draw: `chrome.rs` lays the entries out, the
//! renderer draws them.

use std::cell::RefCell;
use std::path::Path;

use berth_engine::ids::WorkspaceId;
use berth_server::commands::{Command, SpawnRequest, WorkspaceSelector};
use berth_server::view::StateView;
use winit::event::MouseButton;
use winit::keyboard::{Key, ModifiersState, NamedKey};

use super::chrome::{self, GitBranches, Switcher};
use super::intent::{Intent, UiAction};
use crate::config::keymap::Action;
use crate::render::{SwitcherEntry, SwitcherScene};

/// The window's workspace switcher.
#[derive(Debug, Default)]
pub(super) struct WorkspaceSwitcher {
    /// The switcher, while it is open.
    open: Option<Switcher>,
    /// Git branches of workspace directories; a `RefCell` because a frame reads them.
    git: RefCell<GitBranches>,
}

impl WorkspaceSwitcher {
    /// Whether the switcher is open.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The entries for what the user typed into `open`: (workspace id, entry).
    fn entries(
        &self,
        list: &StateView,
        open: &Switcher,
        home: Option<&Path>,
    ) -> Vec<(WorkspaceId, SwitcherEntry)> {
        chrome::switcher_entries(list, &open.query, home, &mut self.git.borrow_mut())
    }

    /// Opens the switcher with the first other workspace highlighted (so Ctrl+Shift+Space,
    /// Enter goes back and forth between two).
    pub(super) fn open(&mut self, list: &StateView, home: Option<&Path>) -> Vec<Intent> {
        let mut open = Switcher::default();
        let entries = self.entries(list, &open, home);
        open.selected = entries.iter().position(|(_, e)| !e.current).unwrap_or(0);
        self.open = Some(open);
        vec![Intent::Ui(UiAction::Redraw)]
    }

    /// A key while the switcher is open (`action` is the chord's, if the key is one): it
    /// filters, moves, picks or closes; nothing reaches a pane.
    pub(super) fn key(
        &mut self,
        list: &StateView,
        home: Option<&Path>,
        key: Key<&str>,
        text: Option<&str>,
        action: Option<Action>,
        mods: ModifiersState,
    ) -> Vec<Intent> {
        let Some(mut open) = self.open.take() else { return Vec::new() };
        let count = self.entries(list, &open, home).len();
        let mut intents = Vec::new();
        match key {
            _ if action == Some(Action::Switcher) => {}
            Key::Named(NamedKey::Escape) => {}
            Key::Named(NamedKey::Enter) if count == 0 => {
                intents.extend(create_workspace(&open.query));
            }
            Key::Named(NamedKey::Enter) => {
                intents.extend(self.pick(list, home, &open, open.selected));
            }
            Key::Named(NamedKey::ArrowDown) | Key::Named(NamedKey::Tab) if count > 0 => {
                open.selected = (open.selected + 1) % count;
                self.open = Some(open);
            }
            Key::Named(NamedKey::ArrowUp) if count > 0 => {
                open.selected = (open.selected + count - 1) % count;
                self.open = Some(open);
            }
            Key::Named(NamedKey::Backspace) => {
                open.query.pop();
                open.selected = 0;
                self.open = Some(open);
            }
            _ => {
                let typed = text.filter(|_| !mods.control_key() && !mods.alt_key());
                if let Some(t) = typed.filter(|t| t.chars().all(|c| !c.is_control())) {
                    open.query.push_str(t);
                    open.selected = 0;
                }
                self.open = Some(open);
            }
        }
        intents.push(Intent::Ui(UiAction::Redraw));
        intents
    }

    /// A button press at window cell (`col`, `row`) while the switcher is open, in a window of
    /// `cols × rows` cells: a left click on an entry picks it, a click outside closes it.
    pub(super) fn press(
        &mut self,
        list: &StateView,
        home: Option<&Path>,
        (cols, rows): (u16, u16),
        (col, row): (u16, u16),
        button: MouseButton,
    ) -> Vec<Intent> {
        let Some(open) = self.open.clone() else { return Vec::new() };
        let entries = self.entries(list, &open, home);
        let scene = chrome::switcher_scene(&open, &entries, cols, rows);
        let first = open.selected.min(entries.len().saturating_sub(1)) - scene.selected;
        let mut intents = Vec::new();
        let offer = scene.rect.row + 2;
        match chrome::switcher_hit(&scene, col, row) {
            None if entries.is_empty() && row == offer && button == MouseButton::Left => {
                intents.extend(create_workspace(&open.query));
                self.open = None;
            }
            Some(i) if button == MouseButton::Left => {
                intents.extend(self.pick(list, home, &open, first + i));
            }
            Some(_) => {}
            None => self.open = None,
        }
        intents.push(Intent::Ui(UiAction::Redraw));
        intents
    }

    /// The switcher as drawn in a window of `cols × rows` cells, while it is open.
    pub(super) fn scene(
        &self,
        list: &StateView,
        home: Option<&Path>,
        cols: u16,
        rows: u16,
    ) -> Option<SwitcherScene> {
        let open = self.open.as_ref()?;
        let entries = self.entries(list, open, home);
        Some(chrome::switcher_scene(open, &entries, cols, rows))
    }

    /// Picks the entry `index`: the switcher closes and the workspace's focused tab and pane
    /// are focused (if the entry exists).
    fn pick(
        &mut self,
        list: &StateView,
        home: Option<&Path>,
        open: &Switcher,
        index: usize,
    ) -> Option<Intent> {
        let entries = self.entries(list, open, home);
        let (ws_id, _) = entries.get(index)?;
        let ws = list.workspaces.iter().find(|w| w.id == *ws_id)?;
        let tab = ws
            .active_tab
            .as_ref()
            .and_then(|id| ws.tabs.iter().find(|t| t.id == *id))
            .or_else(|| ws.tabs.first());
        let focus = tab.map(|t| Intent::Store(Command::PaneFocus { pane: t.active_pane.clone() }));
        self.open = None;
        focus
    }
}

/// What picking the "new workspace NAME" offer does (shown when the typed name matches no
/// workspace): a tab in a new workspace of that name, which the Store makes active. Nothing for
/// a blank name.
fn create_workspace(query: &str) -> Option<Intent> {
    let name = query.trim();
    (!name.is_empty()).then(|| {
        Intent::Store(Command::TabCreate {
            workspace: WorkspaceSelector::Name(name.to_owned()),
            title: None,
            spawn: SpawnRequest::default(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::WorkspaceSwitcher;

    /// Issue #29, item 6: typing a name that matches no workspace offers "new workspace
    /// NAME", and Enter makes it (a tab in a workspace of that name); before, Enter did nothing.
    #[test]
    fn the_switcher_offers_a_new_workspace_for_a_name_that_matches_none() {
        use crate::window::intent::Intent;
        use berth_server::commands::{Command, WorkspaceSelector};
        use winit::keyboard::{Key, ModifiersState, NamedKey};
        let list = super::chrome::tests::list();
        let mut switcher = WorkspaceSwitcher::default();
        switcher.open(&list, None);
        for c in ["z", "q", "x"] {
            switcher.key(&list, None, Key::Character(c), Some(c), None, ModifiersState::empty());
        }
        let scene = switcher.scene(&list, None, 100, 30).expect("open");
        assert!(scene.entries.is_empty());
        assert_eq!(scene.query, "zqx");
        let key = Key::Named(NamedKey::Enter);
        let intents = switcher.key(&list, None, key, None, None, ModifiersState::empty());
        let created = intents.iter().any(|i| {
            matches!(i, Intent::Store(Command::TabCreate {
                workspace: WorkspaceSelector::Name(name), ..
            }) if name == "zqx")
        });
        assert!(created, "{intents:?}");
        assert!(!switcher.is_open());
    }
}
