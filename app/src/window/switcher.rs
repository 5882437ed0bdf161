//! The workspace switcher (Ctrl+Shift+Space): opening it, its keys and clicks, and what it
//! shows; and the workspace's own prompts, which it also draws: a new workspace's name, a
//! rename, and the question before closing a workspace with live panes.
//!
//! Owns whether the switcher is open and in which mode ([`Mode`]), what the user typed and
//! which entry is highlighted, and the git branches it lists beside workspaces. It decides;
//! the window carries out what it returns ([`Intent`]s: a `pane.focus` of the picked
//! workspace's focused pane, `tab.create` in a new workspace, `workspace.rename`,
//! `workspace.close`, a frame). It must not change the Store itself and must not draw:
//! `chrome.rs` lays the entries out, the renderer draws them.

use std::cell::RefCell;
use std::path::Path;

use berth_engine::ids::WorkspaceId;
use berth_engine::model::RestoreState;
use berth_server::commands::{Command, SpawnRequest, WorkspaceSelector};
use berth_server::view::{StateView, WorkspaceView};
use winit::event::MouseButton;
use winit::keyboard::{Key, ModifiersState, NamedKey};

use super::chrome::{self, GitBranches, Switcher};
use super::intent::{Intent, UiAction};
use crate::config::keymap::Action;
use crate::render::{SwitcherEntry, SwitcherScene};

/// What the open switcher does with what is typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Mode {
    /// Filters the workspaces; Enter shows the highlighted one (or makes one of the typed name
    /// when none matches).
    #[default]
    Pick,
    /// The typed text names a new workspace; Enter makes it (a tab of the user's shell in it)
    /// or, when one of that name exists, shows that one.
    New,
    /// The typed text is a workspace's new name; Enter renames it.
    Rename(WorkspaceId),
    /// Asks before closing a workspace with live panes: Enter (or `y`) closes it, Esc (or `n`)
    /// keeps it.
    Close {
        /// The workspace.
        workspace: WorkspaceId,
        /// Its name.
        name: String,
        /// How many of its panes run a live process.
        live: usize,
    },
}

/// The window's workspace switcher.
#[derive(Debug, Default)]
pub(super) struct WorkspaceSwitcher {
    /// The switcher, while it is open.
    open: Option<Switcher>,
    /// What it does with what is typed, while open.
    mode: Mode,
    /// Git branches of workspace directories; a `RefCell` because a frame reads them.
    git: RefCell<GitBranches>,
}

/// How many panes of a workspace run a live process (what closing it would end).
fn live_panes(ws: &WorkspaceView) -> usize {
    ws.tabs.iter().flat_map(|t| &t.panes).filter(|p| p.state == RestoreState::Live).count()
}

impl WorkspaceSwitcher {
    /// Whether the switcher is open.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Opens the switcher asking for a new workspace's name.
    pub(super) fn open_new(&mut self) -> Vec<Intent> {
        self.open = Some(Switcher::default());
        self.mode = Mode::New;
        vec![Intent::Ui(UiAction::Redraw)]
    }

    /// Opens the switcher editing the name of `workspace` (the shown one, from the key).
    pub(super) fn open_rename(&mut self, list: &StateView, workspace: &WorkspaceId) -> Vec<Intent> {
        let Some(ws) = list.workspaces.iter().find(|w| w.id == *workspace) else {
            return Vec::new();
        };
        self.open = Some(Switcher { query: ws.name.clone(), selected: 0 });
        self.mode = Mode::Rename(ws.id.clone());
        vec![Intent::Ui(UiAction::Redraw)]
    }

    /// Closes `workspace`: at once when none of its panes is live, else the switcher opens
    /// asking first.
    pub(super) fn close(&mut self, list: &StateView, workspace: &WorkspaceId) -> Vec<Intent> {
        let Some(ws) = list.workspaces.iter().find(|w| w.id == *workspace) else {
            return Vec::new();
        };
        let live = live_panes(ws);
        if live == 0 {
            self.open = None;
            self.mode = Mode::Pick;
            let close = Command::WorkspaceClose { workspace: ws.id.clone() };
            return vec![Intent::Store(close), Intent::Ui(UiAction::Redraw)];
        }
        self.open = Some(Switcher::default());
        self.mode = Mode::Close { workspace: ws.id.clone(), name: ws.name.clone(), live };
        vec![Intent::Ui(UiAction::Redraw)]
    }

    /// A key while the switcher asks a workspace's name (new, rename) or to confirm a close:
    /// `None` when the switcher filters (the keys are the picker's).
    fn prompt_key(
        &mut self,
        list: &StateView,
        key: &Key<&str>,
        text: Option<&str>,
        action: Option<Action>,
        mods: ModifiersState,
    ) -> Option<Vec<Intent>> {
        if self.mode == Mode::Pick {
            return None;
        }
        let mut open = self.open.take()?;
        let mut intents = Vec::new();
        let mut keep = true;
        let typed = text
            .filter(|_| !mods.control_key() && !mods.alt_key())
            .filter(|t| t.chars().all(|c| !c.is_control()));
        match (&self.mode, key) {
            (_, Key::Named(NamedKey::Escape)) => keep = false,
            (_, _) if action == Some(Action::Switcher) => keep = false,
            (Mode::Close { workspace, .. }, _)
                if matches!(key, Key::Named(NamedKey::Enter))
                    || matches!(typed, Some("y" | "Y")) =>
            {
                intents
                    .push(Intent::Store(Command::WorkspaceClose { workspace: workspace.clone() }));
                keep = false;
            }
            (Mode::Close { .. }, _) => keep = !matches!(typed, Some("n" | "N")),
            (Mode::New, Key::Named(NamedKey::Enter)) => {
                let name = open.query.trim();
                if !name.is_empty() {
                    let existing = list.workspaces.iter().find(|w| w.name == name);
                    let focus = existing.and_then(|ws| {
                        let tab = ws
                            .active_tab
                            .as_ref()
                            .and_then(|id| ws.tabs.iter().find(|t| t.id == *id))
                            .or_else(|| ws.tabs.first())?;
                        Some(Intent::Store(Command::PaneFocus { pane: tab.active_pane.clone() }))
                    });
                    intents.extend(focus.or_else(|| create_workspace(name)));
                    keep = false;
                }
            }
            (Mode::Rename(workspace), Key::Named(NamedKey::Enter)) => {
                let name = open.query.trim();
                if !name.is_empty() {
                    intents.push(Intent::Store(Command::WorkspaceRename {
                        workspace: workspace.clone(),
                        name: name.to_owned(),
                    }));
                    keep = false;
                }
            }
            (_, Key::Named(NamedKey::Backspace)) => {
                open.query.pop();
            }
            _ => {
                if let Some(t) = typed {
                    open.query.push_str(t);
                }
            }
        }
        if keep {
            self.open = Some(open);
        } else {
            self.mode = Mode::Pick;
        }
        intents.push(Intent::Ui(UiAction::Redraw));
        Some(intents)
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
        self.mode = Mode::Pick;
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
        if let Some(intents) = self.prompt_key(list, &key, text, action, mods) {
            return intents;
        }
        let Some(mut open) = self.open.take() else { return Vec::new() };
        let entries = self.entries(list, &open, home);
        let count = entries.len();
        let highlighted = entries.get(open.selected.min(count.saturating_sub(1))).map(|e| &e.0);
        let mut intents = Vec::new();
        match key {
            _ if action == Some(Action::Switcher) => {}
            // The workspace chords, F2 and Delete act on the highlighted entry.
            _ if action == Some(Action::NewWorkspace) => return self.open_new(),
            Key::Named(NamedKey::F2) if highlighted.is_some() => {
                let ws = highlighted.cloned().unwrap_or_else(WorkspaceId::new);
                return self.open_rename(list, &ws);
            }
            _ if action == Some(Action::RenameWorkspace) && highlighted.is_some() => {
                let ws = highlighted.cloned().unwrap_or_else(WorkspaceId::new);
                return self.open_rename(list, &ws);
            }
            Key::Named(NamedKey::Delete) if highlighted.is_some() => {
                let ws = highlighted.cloned().unwrap_or_else(WorkspaceId::new);
                return self.close(list, &ws);
            }
            _ if action == Some(Action::CloseWorkspace) && highlighted.is_some() => {
                let ws = highlighted.cloned().unwrap_or_else(WorkspaceId::new);
                return self.close(list, &ws);
            }
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
        if self.mode != Mode::Pick {
            // A prompt: a left click on its offer is Enter, a click outside it closes it.
            let Some(scene) = self.scene(list, home, cols, rows) else { return Vec::new() };
            let r = scene.rect;
            let on_offer = row == r.row + 2 && (r.col..r.col + r.cols).contains(&col);
            if on_offer && button == MouseButton::Left {
                let enter = Key::Named(NamedKey::Enter);
                return self.key(list, home, enter, None, None, ModifiersState::empty());
            }
            if !on_offer {
                self.open = None;
                self.mode = Mode::Pick;
            }
            return vec![Intent::Ui(UiAction::Redraw)];
        }
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
        let (prompt, offer) = match &self.mode {
            Mode::Pick => {
                let entries = self.entries(list, open, home);
                return Some(chrome::switcher_scene(open, &entries, cols, rows));
            }
            Mode::New => {
                let name = open.query.trim();
                let exists = list.workspaces.iter().any(|w| w.name == name);
                let offer = match name {
                    "" => ("type a name; Esc cancels".to_owned(), String::new()),
                    _ if exists => ("Enter shows the workspace ".to_owned(), name.to_owned()),
                    _ => ("+ new workspace ".to_owned(), name.to_owned()),
                };
                ("New workspace › ", offer)
            }
            Mode::Rename(_) => {
                let name = open.query.trim();
                let offer = match name {
                    "" => ("type a name; Esc cancels".to_owned(), String::new()),
                    _ => ("Enter renames it to ".to_owned(), name.to_owned()),
                };
                ("Rename workspace › ", offer)
            }
            Mode::Close { name, live, .. } => {
                let panes = match live {
                    1 => "its live pane".to_owned(),
                    n => format!("its {n} live panes"),
                };
                let lead = format!("Enter closes it and ends {panes}: ");
                ("Close workspace? ", (lead, format!("{name} — Esc keeps it")))
            }
        };
        let shown = if matches!(self.mode, Mode::Close { .. }) {
            String::new()
        } else {
            open.query.clone()
        };
        let mut scene =
            chrome::switcher_scene(&Switcher { query: shown, selected: 0 }, &[], cols, rows);
        scene.prompt = Some(prompt.to_owned());
        scene.offer = Some(offer);
        Some(scene)
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

    fn typed(switcher: &mut WorkspaceSwitcher, list: &StateView, text: &str) {
        use winit::keyboard::{Key, ModifiersState};
        for c in text.chars() {
            let s = c.to_string();
            switcher.key(list, None, Key::Character(&s), Some(&s), None, ModifiersState::empty());
        }
    }

    fn enter(switcher: &mut WorkspaceSwitcher, list: &StateView) -> Vec<Intent> {
        use winit::keyboard::{Key, ModifiersState, NamedKey};
        let key = Key::Named(NamedKey::Enter);
        switcher.key(list, None, key, None, None, ModifiersState::empty())
    }

    use super::{Intent, StateView};
    use berth_server::commands::{Command, WorkspaceSelector};

    /// Issue #29 item 6: the new-workspace key asks for a name and makes the workspace; a
    /// name that exists shows that one instead of making a second.
    #[test]
    fn a_new_workspace_is_named_then_made() {
        let list = super::chrome::tests::list();
        let mut switcher = WorkspaceSwitcher::default();
        switcher.open_new();
        let scene = switcher.scene(&list, None, 100, 30).expect("open");
        assert_eq!(scene.prompt.as_deref(), Some("New workspace › "));
        typed(&mut switcher, &list, "proj");
        let scene = switcher.scene(&list, None, 100, 30).expect("open");
        assert_eq!(scene.offer, Some(("+ new workspace ".into(), "proj".into())));
        let intents = enter(&mut switcher, &list);
        assert!(
            intents.iter().any(|i| matches!(i, Intent::Store(Command::TabCreate {
                workspace: WorkspaceSelector::Name(n), ..
            }) if n == "proj")),
            "{intents:?}"
        );
        assert!(!switcher.is_open());
        switcher.open_new();
        typed(&mut switcher, &list, "site");
        let intents = enter(&mut switcher, &list);
        assert!(
            intents.iter().any(|i| matches!(i, Intent::Store(Command::PaneFocus { .. }))),
            "{intents:?}"
        );
    }

    /// Renaming edits the current name; Enter sends `workspace.rename`, Esc nothing.
    #[test]
    fn a_workspace_is_renamed_in_the_switcher() {
        use winit::keyboard::{Key, ModifiersState, NamedKey};
        let list = super::chrome::tests::list();
        let ws = list.workspaces[0].id.clone();
        let mut switcher = WorkspaceSwitcher::default();
        switcher.open_rename(&list, &ws);
        assert_eq!(switcher.scene(&list, None, 100, 30).expect("open").query, "berth");
        let back = Key::Named(NamedKey::Backspace);
        for _ in 0..5 {
            switcher.key(&list, None, back.clone(), None, None, ModifiersState::empty());
        }
        typed(&mut switcher, &list, "core");
        let intents = enter(&mut switcher, &list);
        assert!(
            intents.contains(&Intent::Store(Command::WorkspaceRename {
                workspace: ws.clone(),
                name: "core".into()
            })),
            "{intents:?}"
        );
        switcher.open_rename(&list, &ws);
        let esc = Key::Named(NamedKey::Escape);
        let intents = switcher.key(&list, None, esc, None, None, ModifiersState::empty());
        assert!(!intents.iter().any(|i| matches!(i, Intent::Store(_))), "{intents:?}");
        assert!(!switcher.is_open());
    }

    /// Closing a workspace with live panes asks first (Esc keeps it, Enter closes it); one
    /// with none closes at once. From the switcher, Delete closes the highlighted entry.
    #[test]
    fn closing_a_workspace_with_live_panes_asks_first() {
        use berth_engine::model::RestoreState;
        use winit::keyboard::{Key, ModifiersState, NamedKey};
        let mut list = super::chrome::tests::list();
        let ws = list.workspaces[0].id.clone();
        let mut switcher = WorkspaceSwitcher::default();
        let intents = switcher.close(&list, &ws);
        assert!(!intents.iter().any(|i| matches!(i, Intent::Store(_))), "asked: {intents:?}");
        let offer = switcher.scene(&list, None, 100, 30).expect("asking").offer.expect("offer");
        assert!(offer.0.contains("ends its 3 live panes"), "{offer:?}");
        let esc = Key::Named(NamedKey::Escape);
        let intents = switcher.key(&list, None, esc, None, None, ModifiersState::empty());
        assert!(!intents.iter().any(|i| matches!(i, Intent::Store(_))), "{intents:?}");
        switcher.close(&list, &ws);
        let intents = enter(&mut switcher, &list);
        let close = Intent::Store(Command::WorkspaceClose { workspace: ws.clone() });
        assert!(intents.contains(&close), "{intents:?}");
        // No live pane: closed at once.
        for p in list.workspaces[1].tabs.iter_mut().flat_map(|t| t.panes.iter_mut()) {
            p.state = RestoreState::Exited;
        }
        let other = list.workspaces[1].id.clone();
        let intents = switcher.close(&list, &other);
        assert!(intents.contains(&Intent::Store(Command::WorkspaceClose { workspace: other })));
        // Delete in the switcher: the highlighted entry (the other workspace) is asked about.
        let mut list = super::chrome::tests::list();
        list.workspaces[1].tabs[0].panes[0].state = RestoreState::Live;
        switcher.open(&list, None);
        let del = Key::Named(NamedKey::Delete);
        switcher.key(&list, None, del, None, None, ModifiersState::empty());
        let offer = switcher.scene(&list, None, 100, 30).expect("asking").offer.expect("offer");
        assert!(offer.1.starts_with("site"), "{offer:?}");
    }
}
