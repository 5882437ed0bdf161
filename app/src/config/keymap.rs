//! The window's own key chords: splitting, closing and moving between panes and tabs, zoom,
//! font size, the clipboard, search, the switcher, reloading the config, and answering and
//! finding agents' permission requests, the inbox, and making, renaming and closing
//! workspaces.
//!
//! Owns the default bindings as one table ([`DEFAULT_BINDINGS`], also what the user guide's
//! key table in `docs/src/splits-and-workspaces.md` lists), the [`Keymap`] the window matches
//! key presses against (the defaults with the config file's `[keybindings]` applied), the
//! config names of actions ([`Action::name`]) and the chord syntax (`"ctrl+shift+e"`,
//! [`Chord::parse`]). It must not act on anything: the window turns
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
    /// Rename the shown tab (an editor in the tab bar).
    RenameTab,
    /// Show or hide the sidebar of workspaces and tasks.
    ToggleSidebar,
    /// Open the review view of the focused pane's task (else the workspace's newest task).
    Review,
    /// Answer the focused pane's permission request: allow once (only while its card shows;
    /// otherwise the key goes to the program).
    DecisionAllow,
    /// Answer the focused pane's permission request: always allow, where it is offered.
    DecisionAlways,
    /// Answer the focused pane's permission request: deny.
    DecisionDeny,
    /// Focus the next pane with a pending permission request, across tabs and workspaces.
    NextDecision,
    /// Open or close the inbox: every notification and open permission request.
    Inbox,
    /// A new workspace (the switcher asks for its name).
    NewWorkspace,
    /// Rename the shown workspace (the switcher edits its name).
    RenameWorkspace,
    /// Close the shown workspace and its panes (asked first when some are live).
    CloseWorkspace,
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
    /// The chord as the user guide writes it (read by tests that check the table).
    #[cfg_attr(not(test), allow(dead_code))]
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

/// The default bindings, in the order the user guide lists them.
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
    bind(CTRL_SHIFT, Char('r'), Action::RenameTab, "Ctrl+Shift+R"),
    bind(CTRL_SHIFT, Char('b'), Action::ToggleSidebar, "Ctrl+Shift+B"),
    bind(CTRL_SHIFT, Char('g'), Action::Review, "Ctrl+Shift+G"),
    // Answers on a decision card: Y(es), (a)L(ways), N(o). Not Ctrl+Shift+U: input methods
    // (IBus) take it for typing a character by its code point.
    bind(CTRL_SHIFT, Char('y'), Action::DecisionAllow, "Ctrl+Shift+Y"),
    bind(CTRL_SHIFT, Char('l'), Action::DecisionAlways, "Ctrl+Shift+L"),
    bind(CTRL_SHIFT, Char('n'), Action::DecisionDeny, "Ctrl+Shift+N"),
    bind(CTRL_SHIFT, Char('d'), Action::NextDecision, "Ctrl+Shift+D"),
    // I(nbox); the workspace chords are the tab chords (T, R, Q) with Alt added.
    bind(CTRL_SHIFT, Char('i'), Action::Inbox, "Ctrl+Shift+I"),
    bind(CTRL_SHIFT_ALT, Char('t'), Action::NewWorkspace, "Ctrl+Shift+Alt+T"),
    bind(CTRL_SHIFT_ALT, Char('r'), Action::RenameWorkspace, "Ctrl+Shift+Alt+R"),
    bind(CTRL_SHIFT_ALT, Char('q'), Action::CloseWorkspace, "Ctrl+Shift+Alt+Q"),
];

/// The action bound to a key press by the default bindings, if any (the window uses a
/// [`Keymap`]).
#[cfg(test)]
///
/// `key` is the logical key (Shift applied, Ctrl not); characters compare in lower case so
/// Ctrl+Shift+E matches whether the layout reports `E` or `e`.
pub fn action_for(key: Key<&str>, mods: ModifiersState) -> Option<Action> {
    let chord = Chord::of_press(key, mods)?;
    DEFAULT_BINDINGS.iter().find(|b| b.mods == chord.mods && b.key == chord.key).map(|b| b.action)
}

impl Action {
    /// Every action, in the order the user guide lists them.
    pub const ALL: &'static [Action] = &[
        Action::SplitRight,
        Action::SplitDown,
        Action::ClosePane,
        Action::Focus(FocusDir::Left),
        Action::Focus(FocusDir::Right),
        Action::Focus(FocusDir::Up),
        Action::Focus(FocusDir::Down),
        Action::Resize(FocusDir::Left),
        Action::Resize(FocusDir::Right),
        Action::Resize(FocusDir::Up),
        Action::Resize(FocusDir::Down),
        Action::NewTab,
        Action::NextTab,
        Action::PrevTab,
        Action::ToggleZoom,
        Action::FontBigger,
        Action::FontSmaller,
        Action::FontReset,
        Action::Copy,
        Action::Paste,
        Action::PastePrimary,
        Action::Search,
        Action::Switcher,
        Action::NextAttention,
        Action::MoveTabLeft,
        Action::MoveTabRight,
        Action::CloseTab,
        Action::ReloadConfig,
        Action::RenameTab,
        Action::ToggleSidebar,
        Action::Review,
        Action::DecisionAllow,
        Action::DecisionAlways,
        Action::DecisionDeny,
        Action::NextDecision,
        Action::Inbox,
        Action::NewWorkspace,
        Action::RenameWorkspace,
        Action::CloseWorkspace,
    ];

    /// The action's name in the config file's `[keybindings]` table (snake case).
    pub const fn name(self) -> &'static str {
        match self {
            Action::SplitRight => "split_right",
            Action::SplitDown => "split_down",
            Action::ClosePane => "close_pane",
            Action::Focus(FocusDir::Left) => "focus_left",
            Action::Focus(FocusDir::Right) => "focus_right",
            Action::Focus(FocusDir::Up) => "focus_up",
            Action::Focus(FocusDir::Down) => "focus_down",
            Action::Resize(FocusDir::Left) => "resize_left",
            Action::Resize(FocusDir::Right) => "resize_right",
            Action::Resize(FocusDir::Up) => "resize_up",
            Action::Resize(FocusDir::Down) => "resize_down",
            Action::NewTab => "new_tab",
            Action::NextTab => "next_tab",
            Action::PrevTab => "prev_tab",
            Action::ToggleZoom => "toggle_zoom",
            Action::FontBigger => "font_bigger",
            Action::FontSmaller => "font_smaller",
            Action::FontReset => "font_reset",
            Action::Copy => "copy",
            Action::Paste => "paste",
            Action::PastePrimary => "paste_primary",
            Action::Search => "search",
            Action::Switcher => "switcher",
            Action::NextAttention => "next_attention",
            Action::MoveTabLeft => "move_tab_left",
            Action::MoveTabRight => "move_tab_right",
            Action::CloseTab => "close_tab",
            Action::ReloadConfig => "reload_config",
            Action::RenameTab => "rename_tab",
            Action::ToggleSidebar => "toggle_sidebar",
            Action::Review => "review",
            Action::DecisionAllow => "decision_allow",
            Action::DecisionAlways => "decision_always",
            Action::DecisionDeny => "decision_deny",
            Action::NextDecision => "next_decision",
            Action::Inbox => "inbox",
            Action::NewWorkspace => "new_workspace",
            Action::RenameWorkspace => "rename_workspace",
            Action::CloseWorkspace => "close_workspace",
        }
    }

    /// The action named `name` (as [`Action::name`] writes it), if there is one.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.name() == name)
    }
}

/// A key with its modifiers, as a binding matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    /// The modifiers, exactly (Super never matches).
    pub mods: ModifiersState,
    /// The key.
    pub key: ChordKey,
}

/// Names of named keys in the chord syntax (lower case), with their winit keys.
const KEY_NAMES: &[(&str, NamedKey)] = &[
    ("left", NamedKey::ArrowLeft),
    ("right", NamedKey::ArrowRight),
    ("up", NamedKey::ArrowUp),
    ("down", NamedKey::ArrowDown),
    ("pageup", NamedKey::PageUp),
    ("pagedown", NamedKey::PageDown),
    ("home", NamedKey::Home),
    ("end", NamedKey::End),
    ("insert", NamedKey::Insert),
    ("delete", NamedKey::Delete),
    ("backspace", NamedKey::Backspace),
    ("tab", NamedKey::Tab),
    ("enter", NamedKey::Enter),
    ("escape", NamedKey::Escape),
    ("space", NamedKey::Space),
    ("f1", NamedKey::F1),
    ("f2", NamedKey::F2),
    ("f3", NamedKey::F3),
    ("f4", NamedKey::F4),
    ("f5", NamedKey::F5),
    ("f6", NamedKey::F6),
    ("f7", NamedKey::F7),
    ("f8", NamedKey::F8),
    ("f9", NamedKey::F9),
    ("f10", NamedKey::F10),
    ("f11", NamedKey::F11),
    ("f12", NamedKey::F12),
];

/// Other spellings accepted for named keys and characters.
const KEY_ALIASES: &[(&str, &str)] = &[
    ("page_up", "pageup"),
    ("page_down", "pagedown"),
    ("pgup", "pageup"),
    ("pgdn", "pagedown"),
    ("return", "enter"),
    ("esc", "escape"),
    ("del", "delete"),
    ("ins", "insert"),
    ("arrowleft", "left"),
    ("arrowright", "right"),
    ("arrowup", "up"),
    ("arrowdown", "down"),
];

impl Chord {
    /// The chord of a key press: `key` is the logical key (Shift applied, Ctrl not), a
    /// character in lower case. `None` for keys no binding can name (dead keys, text of more
    /// than one character).
    pub fn of_press(key: Key<&str>, mods: ModifiersState) -> Option<Chord> {
        let key = match key {
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
        Some(Chord { mods, key })
    }

    /// Parses a chord as the config file writes it: modifiers (`ctrl`, `shift`, `alt`) and
    /// one key joined by `+`, case-insensitive: `"ctrl+shift+e"`, `"alt+left"`,
    /// `"ctrl+shift+pageup"`, `"ctrl+shift+f5"`, `"ctrl++"` (the key is `+`).
    ///
    /// A character key is matched as the keyboard layout produces it with Shift held
    /// (`ctrl+shift+1` is written `ctrl+shift+!` on a US layout).
    pub fn parse(text: &str) -> Result<Chord, String> {
        let lower = text.trim().to_lowercase();
        let (mod_part, key_part) = if lower == "+" {
            ("", "+")
        } else if let Some(rest) = lower.strip_suffix("++") {
            (rest, "+")
        } else {
            match lower.rsplit_once('+') {
                Some((mods, key)) => (mods, key),
                None => ("", lower.as_str()),
            }
        };
        let mut mods = ModifiersState::empty();
        let names: Vec<&str> =
            if mod_part.is_empty() { Vec::new() } else { mod_part.split('+').collect() };
        for name in names {
            let bit = match name.trim() {
                "ctrl" | "control" => ModifiersState::CONTROL,
                "shift" => ModifiersState::SHIFT,
                "alt" | "meta" => ModifiersState::ALT,
                "" => return Err(format!("chord \"{text}\" has an empty part")),
                other => {
                    return Err(format!(
                        "chord \"{text}\": unknown modifier \"{other}\" (use ctrl, shift, alt)"
                    ))
                }
            };
            if mods.contains(bit) {
                return Err(format!("chord \"{text}\" names a modifier twice"));
            }
            mods |= bit;
        }
        let key_name = key_part.trim();
        let key_name =
            KEY_ALIASES.iter().find(|(a, _)| *a == key_name).map_or(key_name, |(_, k)| k);
        let key = if let Some((_, named)) = KEY_NAMES.iter().find(|(n, _)| *n == key_name) {
            Named(*named)
        } else {
            let mut chars = key_name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if !c.is_control() && !c.is_whitespace() => Char(c),
                (None, _) => return Err(format!("chord \"{text}\" has no key")),
                _ => {
                    return Err(format!(
                        "chord \"{text}\": unknown key \"{key_name}\" (a single character, \
                         f1–f12, left, right, up, down, pageup, pagedown, home, end, insert, \
                         delete, backspace, tab, enter, escape or space)"
                    ))
                }
            }
        };
        Ok(Chord { mods, key })
    }
}

impl Chord {
    /// The chord as the window shows it: `Ctrl+Shift+Y`, `Alt+Left`, `Ctrl+Shift+F5`.
    pub fn label(&self) -> String {
        let mut out = String::new();
        for (bit, name) in [
            (ModifiersState::CONTROL, "Ctrl+"),
            (ModifiersState::SHIFT, "Shift+"),
            (ModifiersState::ALT, "Alt+"),
        ] {
            if self.mods.contains(bit) {
                out.push_str(name);
            }
        }
        match self.key {
            Char(c) => out.extend(c.to_uppercase()),
            Named(named) => {
                let name = KEY_NAMES.iter().find(|(_, k)| *k == named).map_or("?", |(n, _)| n);
                match name {
                    "pageup" => out.push_str("PageUp"),
                    "pagedown" => out.push_str("PageDown"),
                    _ => {
                        let mut chars = name.chars();
                        out.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                        out.push_str(chars.as_str());
                    }
                }
            }
        }
        out
    }
}

impl std::fmt::Display for Chord {
    /// The chord in the config file's syntax (`ctrl+shift+e`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (bit, name) in [
            (ModifiersState::CONTROL, "ctrl"),
            (ModifiersState::SHIFT, "shift"),
            (ModifiersState::ALT, "alt"),
        ] {
            if self.mods.contains(bit) {
                write!(f, "{name}+")?;
            }
        }
        match self.key {
            Char(c) => write!(f, "{c}"),
            Named(named) => {
                let name = KEY_NAMES.iter().find(|(_, k)| *k == named).map_or("?", |(n, _)| n);
                write!(f, "{name}")
            }
        }
    }
}

/// The bindings the window uses: [`DEFAULT_BINDINGS`] with the config file's changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<(Chord, Action)>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self {
            bindings: DEFAULT_BINDINGS
                .iter()
                .map(|b| (Chord { mods: b.mods, key: b.key }, b.action))
                .collect(),
        }
    }
}

impl Keymap {
    /// The defaults with `changes` applied in order: `(chord, Some(action))` binds the chord
    /// (replacing what it did before; the action's other chords stay), `(chord, None)`
    /// unbinds it so the key goes to the program.
    pub fn with_changes(changes: &[(Chord, Option<Action>)]) -> Keymap {
        let mut map = Keymap::default();
        for (chord, action) in changes {
            map.bindings.retain(|(c, _)| c != chord);
            if let Some(action) = action {
                map.bindings.push((*chord, *action));
            }
        }
        map
    }

    /// The action bound to a key press, if any (see [`Chord::of_press`]).
    pub fn action_for(&self, key: Key<&str>, mods: ModifiersState) -> Option<Action> {
        let chord = Chord::of_press(key, mods)?;
        self.bindings.iter().find(|(c, _)| *c == chord).map(|(_, a)| *a)
    }

    /// The first chord bound to `action` as a person reads it (`Ctrl+Shift+Y`), if any.
    pub fn label_of(&self, action: Action) -> Option<String> {
        self.bindings.iter().find(|(_, a)| *a == action).map(|(c, _)| c.label())
    }

    /// The chords bound to `action`.
    #[cfg(test)]
    pub fn chords_of(&self, action: Action) -> Vec<Chord> {
        self.bindings.iter().filter(|(_, a)| *a == action).map(|(c, _)| *c).collect()
    }

    /// The bindings as one line for the log: `ctrl+shift+e split_right, …`.
    pub fn describe(&self) -> String {
        let items: Vec<String> =
            self.bindings.iter().map(|(c, a)| format!("{c} {}", a.name())).collect();
        items.join(", ")
    }
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
    fn every_action_has_a_name_that_reads_back_and_a_default_chord() {
        for action in Action::ALL {
            assert_eq!(Action::from_name(action.name()), Some(*action));
            assert!(
                DEFAULT_BINDINGS.iter().any(|b| b.action == *action),
                "{} has no default chord",
                action.name()
            );
        }
        assert_eq!(Action::from_name("focus_sideways"), None);
    }

    #[test]
    fn chords_parse_and_print() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("ctrl+shift+e", Ok("ctrl+shift+e")),
            ("Ctrl+Shift+E", Ok("ctrl+shift+e")),
            ("shift+ctrl+E", Ok("ctrl+shift+e")),
            ("alt+left", Ok("alt+left")),
            ("ctrl+shift+alt+ArrowDown", Ok("ctrl+shift+alt+down")),
            ("ctrl+shift+page_up", Ok("ctrl+shift+pageup")),
            ("ctrl+shift+f5", Ok("ctrl+shift+f5")),
            ("ctrl+shift+space", Ok("ctrl+shift+space")),
            ("control+tab", Ok("ctrl+tab")),
            ("ctrl++", Ok("ctrl++")),
            ("ctrl+=", Ok("ctrl+=")),
            ("f12", Ok("f12")),
            ("ctrl+hyper+e", Err("unknown modifier \"hyper\"")),
            ("ctrl+shift+", Err("has no key")),
            ("ctrl+ctrl+e", Err("names a modifier twice")),
            ("ctrl+banana", Err("unknown key \"banana\"")),
            ("ctrl++e", Err("empty part")),
        ];
        for (text, expected) in cases {
            match (Chord::parse(text), expected) {
                (Ok(chord), Ok(want)) => assert_eq!(chord.to_string(), *want, "{text}"),
                (Err(e), Err(want)) => assert!(e.contains(want), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn keymap_changes_rebind_add_and_unbind() {
        let chord = |s: &str| Chord::parse(s).unwrap();
        let map = Keymap::with_changes(&[
            (chord("ctrl+shift+e"), Some(Action::SplitDown)),
            (chord("alt+s"), Some(Action::SplitRight)),
            (chord("ctrl+shift+w"), None),
        ]);
        assert_eq!(map.action_for(Key::Character("E"), CTRL_SHIFT), Some(Action::SplitDown));
        assert_eq!(map.action_for(Key::Character("s"), ALT), Some(Action::SplitRight));
        assert_eq!(map.action_for(Key::Character("W"), CTRL_SHIFT), None);
        // Untouched defaults stay.
        assert_eq!(map.action_for(Key::Character("O"), CTRL_SHIFT), Some(Action::SplitDown));
        assert_eq!(map.chords_of(Action::SplitRight), vec![chord("alt+s")]);
        assert_eq!(Keymap::with_changes(&[]), Keymap::default());
    }

    #[test]
    fn default_labels_parse_to_their_chords() {
        for b in DEFAULT_BINDINGS {
            if b.label.contains('(') {
                continue;
            }
            let chord = Chord::parse(b.label).unwrap_or_else(|e| panic!("{}: {e}", b.label));
            let mut want = Chord { mods: b.mods, key: b.key };
            // "Ctrl++" is typed with Shift on most layouts; the label leaves Shift out.
            if b.label == "Ctrl++" {
                want.mods = CTRL;
            }
            assert_eq!(chord, want, "{}", b.label);
        }
    }

    #[test]
    fn chords_have_labels_as_the_guide_writes_them() {
        for b in DEFAULT_BINDINGS.iter().filter(|b| b.key != Char('+') && b.key != Char('=')) {
            assert_eq!(Chord { mods: b.mods, key: b.key }.label(), b.label);
        }
        let map = Keymap::default();
        assert_eq!(map.label_of(Action::DecisionAllow).as_deref(), Some("Ctrl+Shift+Y"));
        let unbound = Keymap::with_changes(&[(Chord::parse("ctrl+shift+d").unwrap(), None)]);
        assert_eq!(unbound.label_of(Action::NextDecision), None);
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
