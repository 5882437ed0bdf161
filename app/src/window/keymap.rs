//! The window's own key chords: splitting, closing and moving between panes and tabs, zoom,
//! font size and the clipboard.
//!
//! Owns the default bindings as one table ([`DEFAULT_BINDINGS`], also what the README lists)
//! and the matching of a key press against it. It must not act on anything: the window turns
//! an [`Action`] into a Store command or a local change. A chord that matches nothing goes to
//! the pane as input.

use berth_engine::layout::FocusDir;
use winit::keyboard::{Key, ModifiersState, NamedKey};

/// Something the window does in answer to a chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Split the focused pane; the new pane goes to the right.
    SplitRight,
    /// Split the focused pane; the new pane goes below.
    SplitDown,
    /// Close the focused pane (its process is ended).
    ClosePane,
    /// Move focus to the neighbouring pane.
    Focus(FocusDir),
    /// Move the focused pane's border in a direction.
    Resize(FocusDir),
    /// A new tab in the active workspace.
    NewTab,
    /// The next tab of the workspace (wrapping).
    NextTab,
    /// The previous tab of the workspace (wrapping).
    PrevTab,
    /// Show the focused pane alone, filling the tab, or undo that.
    ToggleZoom,
    /// A larger font.
    FontBigger,
    /// A smaller font.
    FontSmaller,
    /// The configured font size.
    FontReset,
    /// Copy the selection to the clipboard.
    Copy,
    /// Paste the clipboard into the focused pane.
    Paste,
    /// Paste the primary selection into the focused pane.
    PastePrimary,
    /// Search the focused pane's scrollback.
    Search,
    /// Open the workspace switcher.
    Switcher,
    /// Focus the next pane that wants attention, across tabs and workspaces.
    NextAttention,
    /// Move the shown tab one place to the left in the tab bar.
    MoveTabLeft,
    /// Move the shown tab one place to the right in the tab bar.
    MoveTabRight,
    /// Close the shown tab (its panes' processes are ended).
    CloseTab,
    /// Read the config file again now.
    ReloadConfig,
}

/// The key part of a chord: a character (compared case-insensitively) or a named key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChordKey {
    /// A character key, given in lower case.
    Char(char),
    /// A named key.
    Named(NamedKey),
}

/// One default binding.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// The modifiers, exactly (Super never matches).
    pub mods: ModifiersState,
    /// The key.
    pub key: ChordKey,
    /// What it does.
    pub action: Action,
    /// The chord as the README writes it.
    pub label: &'static str,
}

const CTRL: ModifiersState = ModifiersState::CONTROL;
const CTRL_SHIFT: ModifiersState = CTRL.union(ModifiersState::SHIFT);
const ALT: ModifiersState = ModifiersState::ALT;
const CTRL_SHIFT_ALT: ModifiersState = CTRL_SHIFT.union(ALT);
const SHIFT: ModifiersState = ModifiersState::SHIFT;

const fn bind(mods: ModifiersState, key: ChordKey, action: Action, label: &'static str) -> Binding {
    Binding { mods, key, action, label }
}

use ChordKey::{Char, Named};

/// The default bindings, in the order the README lists them.
pub const DEFAULT_BINDINGS: &[Binding] = &[
    bind(CTRL_SHIFT, Char('e'), Action::SplitRight, "Ctrl+Shift+E"),
    bind(CTRL_SHIFT, Char('o'), Action::SplitDown, "Ctrl+Shift+O"),
    bind(CTRL_SHIFT, Char('w'), Action::ClosePane, "Ctrl+Shift+W"),
    bind(ALT, Named(NamedKey::ArrowLeft), Action::Focus(FocusDir::Left), "Alt+Left"),
    bind(ALT, Named(NamedKey::ArrowRight), Action::Focus(FocusDir::Right), "Alt+Right"),
    bind(ALT, Named(NamedKey::ArrowUp), Action::Focus(FocusDir::Up), "Alt+Up"),
    bind(ALT, Named(NamedKey::ArrowDown), Action::Focus(FocusDir::Down), "Alt+Down"),
    bind(
        CTRL_SHIFT_ALT,
        Named(NamedKey::ArrowLeft),
        Action::Resize(FocusDir::Left),
        "Ctrl+Shift+Alt+Left",
    ),
    bind(
        CTRL_SHIFT_ALT,
        Named(NamedKey::ArrowRight),
        Action::Resize(FocusDir::Right),
        "Ctrl+Shift+Alt+Right",
    ),
    bind(
        CTRL_SHIFT_ALT,
        Named(NamedKey::ArrowUp),
        Action::Resize(FocusDir::Up),
        "Ctrl+Shift+Alt+Up",
    ),
    bind(
        CTRL_SHIFT_ALT,
        Named(NamedKey::ArrowDown),
        Action::Resize(FocusDir::Down),
        "Ctrl+Shift+Alt+Down",
    ),
    bind(CTRL_SHIFT, Char('t'), Action::NewTab, "Ctrl+Shift+T"),
    bind(CTRL, Named(NamedKey::Tab), Action::NextTab, "Ctrl+Tab"),
    bind(CTRL, Named(NamedKey::PageDown), Action::NextTab, "Ctrl+PageDown"),
    bind(CTRL_SHIFT, Named(NamedKey::Tab), Action::PrevTab, "Ctrl+Shift+Tab"),
    bind(CTRL, Named(NamedKey::PageUp), Action::PrevTab, "Ctrl+PageUp"),
    bind(CTRL_SHIFT, Char('z'), Action::ToggleZoom, "Ctrl+Shift+Z"),
    bind(CTRL, Char('='), Action::FontBigger, "Ctrl+="),
    bind(CTRL_SHIFT, Char('+'), Action::FontBigger, "Ctrl++"),
    bind(CTRL, Char('+'), Action::FontBigger, "Ctrl+(keypad +)"),
    bind(CTRL, Char('-'), Action::FontSmaller, "Ctrl+-"),
    bind(CTRL, Char('0'), Action::FontReset, "Ctrl+0"),
    bind(CTRL_SHIFT, Char('c'), Action::Copy, "Ctrl+Shift+C"),
    bind(CTRL_SHIFT, Char('v'), Action::Paste, "Ctrl+Shift+V"),
    bind(SHIFT, Named(NamedKey::Insert), Action::PastePrimary, "Shift+Insert"),
    bind(CTRL_SHIFT, Char('f'), Action::Search, "Ctrl+Shift+F"),
    bind(CTRL_SHIFT, Named(NamedKey::Space), Action::Switcher, "Ctrl+Shift+Space"),
    bind(CTRL_SHIFT, Char('a'), Action::NextAttention, "Ctrl+Shift+A"),
    bind(CTRL_SHIFT, Named(NamedKey::PageUp), Action::MoveTabLeft, "Ctrl+Shift+PageUp"),
    bind(CTRL_SHIFT, Named(NamedKey::PageDown), Action::MoveTabRight, "Ctrl+Shift+PageDown"),
    bind(CTRL_SHIFT, Char('q'), Action::CloseTab, "Ctrl+Shift+Q"),
    bind(CTRL_SHIFT, Named(NamedKey::F5), Action::ReloadConfig, "Ctrl+Shift+F5"),
];

/// The bindings as one line for the log: `Ctrl+Shift+E SplitRight, …`.
pub fn describe() -> String {
    let items: Vec<String> =
        DEFAULT_BINDINGS.iter().map(|b| format!("{} {:?}", b.label, b.action)).collect();
    items.join(", ")
}

/// The action bound to a key press, if any.
///
/// `key` is the logical key (Shift applied, Ctrl not); characters compare in lower case so
/// Ctrl+Shift+E matches whether the layout reports `E` or `e`.
pub fn action_for(key: Key<&str>, mods: ModifiersState) -> Option<Action> {
    let chord = match key {
        Key::Named(named) => Named(named),
        Key::Character(s) => {
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Char(c.to_lowercase().next().unwrap_or(c)),
                _ => return None,
            }
        }
        Key::Dead(_) | Key::Unidentified(_) => return None,
    };
    DEFAULT_BINDINGS.iter().find(|b| b.mods == mods && b.key == chord).map(|b| b.action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_match_their_actions_and_nothing_else() {
        let cases: &[(Key<&str>, ModifiersState, Option<Action>)] = &[
            (Key::Character("E"), CTRL_SHIFT, Some(Action::SplitRight)),
            (Key::Character("e"), CTRL_SHIFT, Some(Action::SplitRight)),
            (Key::Character("O"), CTRL_SHIFT, Some(Action::SplitDown)),
            (Key::Character("W"), CTRL_SHIFT, Some(Action::ClosePane)),
            (Key::Named(NamedKey::ArrowLeft), ALT, Some(Action::Focus(FocusDir::Left))),
            (Key::Named(NamedKey::ArrowDown), CTRL_SHIFT_ALT, Some(Action::Resize(FocusDir::Down))),
            (Key::Character("T"), CTRL_SHIFT, Some(Action::NewTab)),
            (Key::Named(NamedKey::Tab), CTRL, Some(Action::NextTab)),
            (Key::Named(NamedKey::Tab), CTRL_SHIFT, Some(Action::PrevTab)),
            (Key::Character("Z"), CTRL_SHIFT, Some(Action::ToggleZoom)),
            (Key::Character("="), CTRL, Some(Action::FontBigger)),
            (Key::Character("+"), CTRL_SHIFT, Some(Action::FontBigger)),
            (Key::Character("-"), CTRL, Some(Action::FontSmaller)),
            (Key::Character("0"), CTRL, Some(Action::FontReset)),
            (Key::Character("C"), CTRL_SHIFT, Some(Action::Copy)),
            (Key::Character("V"), CTRL_SHIFT, Some(Action::Paste)),
            (Key::Named(NamedKey::Insert), SHIFT, Some(Action::PastePrimary)),
            // Plain Ctrl+letters, arrows and Shift+letters belong to the program.
            (Key::Character("c"), CTRL, None),
            (Key::Character("e"), CTRL, None),
            (Key::Character("E"), SHIFT, None),
            (Key::Named(NamedKey::ArrowLeft), ModifiersState::empty(), None),
            (Key::Named(NamedKey::ArrowLeft), CTRL, None),
            (Key::Named(NamedKey::Tab), ModifiersState::empty(), None),
            (Key::Character("e"), CTRL_SHIFT | ModifiersState::SUPER, None),
            (Key::Dead(None), CTRL_SHIFT, None),
        ];
        for (key, mods, expected) in cases {
            assert_eq!(action_for(key.clone(), *mods), *expected, "{key:?} with {mods:?}");
        }
    }

    #[test]
    fn no_chord_is_bound_twice() {
        for (i, a) in DEFAULT_BINDINGS.iter().enumerate() {
            for b in &DEFAULT_BINDINGS[i + 1..] {
                assert!(a.mods != b.mods || a.key != b.key, "{} is bound twice", a.label);
            }
        }
    }
}
