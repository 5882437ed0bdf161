//! Renaming a tab in the tab bar (Ctrl+Shift+R or a double click on the tab): the title being
//! edited and the keys that edit it.
//!
//! Owns the one title being edited. Text edits it, Enter asks the Store to rename the tab
//! (`tab.rename`, returned as an [`Intent`]), Esc leaves it as it was; while it is open no key
//! reaches a pane. It must not change the Store itself and must not draw: the tab bar shows
//! the text (`chrome.rs`).

use berth_engine::ids::TabId;
use berth_server::commands::Command;
use berth_server::view::StateView;
use winit::keyboard::{Key, ModifiersState, NamedKey};

use super::chrome::{TabRename, MAX_TAB_TITLE};
use super::intent::{Intent, UiAction};

/// The window's tab rename.
#[derive(Debug, Default)]
pub(super) struct TabRenamer {
    /// The tab title being edited, if any.
    editing: Option<TabRename>,
}

impl TabRenamer {
    /// The title being edited, if any.
    pub(super) fn editing(&self) -> Option<&TabRename> {
        self.editing.as_ref()
    }

    /// Starts editing the title of tab `tab`, from its current title (the focused pane's when
    /// the tab has none of its own).
    pub(super) fn start(&mut self, list: &StateView, tab: &TabId) -> Vec<Intent> {
        let Some(info) = list.workspaces.iter().flat_map(|w| &w.tabs).find(|t| t.id == *tab) else {
            return Vec::new();
        };
        let current = if info.title.is_empty() {
            info.panes.iter().find(|p| p.id == info.active_pane).map(|p| p.title.clone())
        } else {
            Some(info.title.clone())
        };
        self.editing = Some(TabRename { tab: tab.clone(), text: current.unwrap_or_default() });
        vec![Intent::Ui(UiAction::Redraw)]
    }

    /// A key while a title is being edited.
    pub(super) fn key(
        &mut self,
        key: Key<&str>,
        text: Option<&str>,
        mods: ModifiersState,
    ) -> Vec<Intent> {
        let Some(mut rename) = self.editing.take() else { return Vec::new() };
        let mut intents = Vec::new();
        match key {
            Key::Named(NamedKey::Escape) => {}
            Key::Named(NamedKey::Enter) => {
                let title = rename.text.trim().to_owned();
                if !title.is_empty() {
                    intents.push(Intent::Store(Command::TabRename { tab: rename.tab, title }));
                }
            }
            Key::Named(NamedKey::Backspace) => {
                rename.text.pop();
                self.editing = Some(rename);
            }
            _ if mods.control_key() && key == Key::Character("u") => {
                rename.text.clear();
                self.editing = Some(rename);
            }
            _ => {
                let typed = text.filter(|_| !mods.control_key() && !mods.alt_key());
                if let Some(t) = typed.filter(|t| t.chars().all(|c| !c.is_control())) {
                    if rename.text.chars().count() + t.chars().count() <= MAX_TAB_TITLE {
                        rename.text.push_str(t);
                    }
                }
                self.editing = Some(rename);
            }
        }
        intents.push(Intent::Ui(UiAction::Redraw));
        intents
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn editing(text: &str) -> TabRenamer {
        let tab = TabId::new();
        TabRenamer { editing: Some(TabRename { tab, text: text.to_owned() }) }
    }

    #[test]
    fn keys_edit_the_title_and_enter_asks_the_store_to_rename() {
        let none = ModifiersState::empty();
        let ctrl = ModifiersState::CONTROL;
        // (title before, key, text, modifiers, title after or None when closed, renames to).
        type Case = (&'static str, Key<&'static str>, Option<&'static str>, ModifiersState);
        let cases: Vec<(Case, Option<&str>, Option<&str>)> = vec![
            (("ab", Key::Character("c"), Some("c"), none), Some("abc"), None),
            (("ab", Key::Named(NamedKey::Backspace), None, none), Some("a"), None),
            (("ab", Key::Character("u"), Some("\u{15}"), ctrl), Some(""), None),
            (("ab", Key::Character("x"), Some("x"), ctrl), Some("ab"), None),
            (("ab", Key::Named(NamedKey::Escape), None, none), None, None),
            ((" new name ", Key::Named(NamedKey::Enter), None, none), None, Some("new name")),
            (("   ", Key::Named(NamedKey::Enter), None, none), None, None),
        ];
        for ((before, key, text, mods), after, renamed) in cases {
            let mut part = editing(before);
            let intents = part.key(key.clone(), text, mods);
            assert_eq!(part.editing().map(|r| r.text.as_str()), after, "{before:?} {key:?}");
            let titles: Vec<&str> = intents
                .iter()
                .filter_map(|i| match i {
                    Intent::Store(Command::TabRename { title, .. }) => Some(title.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(titles, renamed.into_iter().collect::<Vec<_>>(), "{before:?} {key:?}");
            assert_eq!(intents.last(), Some(&Intent::Ui(UiAction::Redraw)));
        }
        let mut full = editing(&"x".repeat(MAX_TAB_TITLE));
        full.key(Key::Character("y"), Some("y"), none);
        assert_eq!(full.editing().map(|r| r.text.chars().count()), Some(MAX_TAB_TITLE));
    }
}
