//! The window's keyboard and pointer state, and where a key press goes.
//!
//! Owns the modifiers held, the pointer's position, window focus, the clipboard, click
//! counting, what a held button is doing (a selection, a divider or tab drag, a report to the
//! program), IME composition and wheel remainders; and the routing of a key press
//! ([`InputState::route_key`]): to the search, the switcher, the tab rename, the inbox, a chord's action
//! of the keymap, or the focused pane. It must not act on a key: `dispatch.rs` carries out
//! what the route names.

use std::time::Instant;

use berth_engine::ids::PaneId;
use berth_engine::layout::Divider;
use winit::dpi::PhysicalPosition;
use winit::event::MouseScrollDelta;
use winit::keyboard::{Key, ModifiersState};

use super::clipboard::Clipboard;
use super::mouse::{ClickCounter, ReportButton};
use crate::config::keymap::{Action, Keymap};

/// What the held button is doing.
#[derive(Debug, Clone)]
pub(super) enum Drag {
    /// Moving a divider.
    Divider(Divider),
    /// Growing the selection in a pane.
    Select,
    /// Reporting to the program in a pane.
    Report { pane: PaneId, button: ReportButton },
    /// Moving a tab in the tab bar (its index when the drag started).
    Tab(usize),
    /// Moving the sidebar's edge.
    Sidebar,
}

/// The window's input state.
#[derive(Default)]
pub(super) struct InputState {
    /// The modifiers held.
    pub(super) mods: ModifiersState,
    /// The pointer, in physical pixels, while it is over the window.
    pub(super) pointer: Option<PhysicalPosition<f64>>,
    /// Whether the window has keyboard focus.
    pub(super) window_focused: bool,
    pub(super) clipboard: Clipboard,
    pub(super) clicks: ClickCounter,
    /// The last click on a tab (its index, when), to tell a double click.
    pub(super) tab_click: Option<(usize, Instant)>,
    pub(super) drag: Option<Drag>,
    /// An IME composition is in progress: keys belong to the input method.
    pub(super) composing: bool,
    /// The last window cell a motion was handled at, so each cell is handled once.
    pub(super) last_cell: Option<(i32, i32)>,
    /// Wheel pixels not yet worth a line.
    wheel_pixels: f64,
}

/// What is open in the window that takes keys before the panes do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct KeyTakers {
    /// The search bar.
    pub(super) search: bool,
    /// The workspace switcher.
    pub(super) switcher: bool,
    /// A tab title being edited.
    pub(super) rename: bool,
    /// The inbox.
    pub(super) inbox: bool,
}

/// Where a key press goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyRoute {
    /// Nowhere: a key of an IME composition, or the release of a chord or of a key that
    /// something other than a pane took.
    Ignored,
    /// To the open search (the window's chords are not: they run as usual).
    Search,
    /// To the open switcher, with the chord's action if the key is one.
    Switcher(Option<Action>),
    /// To the tab title being edited.
    Rename,
    /// To the open inbox, with the chord's action if the key is one.
    Inbox(Option<Action>),
    /// A chord of the keymap.
    Action(Action),
    /// To the focused pane (its program, or a tombstone's resume key).
    Pane,
    /// A key's release, to the focused pane's program if it asked for releases.
    Release,
}

impl InputState {
    /// The state of a new window (focused until told otherwise: without a window manager no
    /// focus event may ever come).
    pub(super) fn new() -> Self {
        Self { window_focused: true, ..Self::default() }
    }

    /// Where a press (`pressed`) or release of `key` goes, with the modifiers held, the
    /// keymap in use and what is open.
    pub(super) fn route_key(
        &self,
        keymap: &Keymap,
        key: Key<&str>,
        pressed: bool,
        open: KeyTakers,
    ) -> KeyRoute {
        if self.composing {
            return KeyRoute::Ignored;
        }
        let action = keymap.action_for(key, self.mods);
        if !pressed {
            // A release goes to the pane, whose program may have asked for releases (the kitty
            // keyboard protocol's flag 2), unless something else takes keys or it ends a chord.
            let taken =
                open.search || open.switcher || open.rename || open.inbox || action.is_some();
            return if taken { KeyRoute::Ignored } else { KeyRoute::Release };
        }
        // While a search is open, keys edit its query (window chords still run).
        if open.search && action.is_none() {
            return KeyRoute::Search;
        }
        if open.switcher {
            return KeyRoute::Switcher(action);
        }
        if open.rename {
            return KeyRoute::Rename;
        }
        if open.inbox {
            return KeyRoute::Inbox(action);
        }
        action.map_or(KeyRoute::Pane, KeyRoute::Action)
    }

    /// The window cell under the pointer for cells of `cell_w × cell_h` pixels (it may lie
    /// outside the window during a drag), and whether the pointer is on the right half of it.
    pub(super) fn pointer_window_cell(
        &self,
        (cell_w, cell_h): (f32, f32),
    ) -> Option<((i32, i32), bool)> {
        let position = self.pointer?;
        let x = position.x / f64::from(cell_w.max(1.0));
        let y = position.y / f64::from(cell_h.max(1.0));
        Some(((x.floor() as i32, y.floor() as i32), x.fract() >= 0.5))
    }

    /// The whole lines a wheel movement is worth for cells `cell_h` pixels high (up is
    /// positive); pixel movements smaller than a line are kept for the next one.
    pub(super) fn wheel_lines(&mut self, delta: MouseScrollDelta, cell_h: f64) -> f64 {
        match delta {
            MouseScrollDelta::LineDelta(_, y) => f64::from(y),
            MouseScrollDelta::PixelDelta(p) => {
                self.wheel_pixels += p.y;
                let whole = (self.wheel_pixels / cell_h.max(1.0)).trunc();
                self.wheel_pixels -= whole * cell_h;
                whole
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keymap::Chord;
    use berth_engine::layout::FocusDir;
    use winit::keyboard::NamedKey;

    const NONE: ModifiersState = ModifiersState::empty();
    const CTRL_SHIFT: ModifiersState = ModifiersState::CONTROL.union(ModifiersState::SHIFT);

    /// The keymap → action table, through the window's routing, with no window: each row is
    /// (what is open, modifiers, key, where it goes), on the default keymap and on one changed
    /// by a config file.
    #[test]
    fn key_presses_route_to_actions_parts_and_panes() {
        let nothing = KeyTakers::default();
        let search = KeyTakers { search: true, ..KeyTakers::default() };
        let switcher = KeyTakers { switcher: true, ..KeyTakers::default() };
        let rename = KeyTakers { rename: true, ..KeyTakers::default() };
        let inbox = KeyTakers { inbox: true, ..KeyTakers::default() };
        let e = Key::Character("E");
        let cases: &[(KeyTakers, ModifiersState, Key<&str>, KeyRoute)] = &[
            (nothing, CTRL_SHIFT, e.clone(), KeyRoute::Action(Action::SplitRight)),
            (nothing, CTRL_SHIFT, Key::Character("e"), KeyRoute::Action(Action::SplitRight)),
            (
                nothing,
                ModifiersState::ALT,
                Key::Named(NamedKey::ArrowUp),
                KeyRoute::Action(Action::Focus(FocusDir::Up)),
            ),
            (nothing, CTRL_SHIFT, Key::Character("F"), KeyRoute::Action(Action::Search)),
            (nothing, CTRL_SHIFT, Key::Named(NamedKey::Space), KeyRoute::Action(Action::Switcher)),
            (nothing, CTRL_SHIFT, Key::Character("R"), KeyRoute::Action(Action::RenameTab)),
            (nothing, ModifiersState::CONTROL, Key::Character("c"), KeyRoute::Pane),
            (nothing, NONE, Key::Character("x"), KeyRoute::Pane),
            (nothing, NONE, Key::Named(NamedKey::Enter), KeyRoute::Pane),
            // The search takes every key but the window's chords.
            (search, NONE, Key::Character("x"), KeyRoute::Search),
            (search, NONE, Key::Named(NamedKey::Escape), KeyRoute::Search),
            (search, ModifiersState::CONTROL, Key::Character("u"), KeyRoute::Search),
            (search, CTRL_SHIFT, e.clone(), KeyRoute::Action(Action::SplitRight)),
            // The switcher takes every key and learns the chord's action (its own closes it).
            (switcher, NONE, Key::Character("x"), KeyRoute::Switcher(None)),
            (
                switcher,
                CTRL_SHIFT,
                Key::Named(NamedKey::Space),
                KeyRoute::Switcher(Some(Action::Switcher)),
            ),
            (switcher, CTRL_SHIFT, e.clone(), KeyRoute::Switcher(Some(Action::SplitRight))),
            // The inbox takes every key and learns the chord's action.
            (inbox, NONE, Key::Character("x"), KeyRoute::Inbox(None)),
            (inbox, CTRL_SHIFT, Key::Character("I"), KeyRoute::Inbox(Some(Action::Inbox))),
            (nothing, CTRL_SHIFT, Key::Character("i"), KeyRoute::Action(Action::Inbox)),
            // A tab rename takes every key, chords included.
            (rename, NONE, Key::Named(NamedKey::Enter), KeyRoute::Rename),
            (rename, CTRL_SHIFT, e.clone(), KeyRoute::Rename),
            // With the search and the switcher open, a plain key is the search's.
            (
                KeyTakers { search: true, switcher: true, rename: false, inbox: false },
                NONE,
                Key::Character("x"),
                KeyRoute::Search,
            ),
        ];
        let keymap = Keymap::default();
        for (open, mods, key, want) in cases {
            let input = InputState { mods: *mods, ..InputState::new() };
            let got = input.route_key(&keymap, key.clone(), true, *open);
            assert_eq!(got, *want, "{key:?} with {mods:?}, {open:?}");
        }

        // A config that rebinds and unbinds: an unbound chord goes to the pane.
        let chord = |s: &str| Chord::parse(s).expect("a chord");
        let changed = Keymap::with_changes(&[
            (chord("ctrl+shift+e"), None),
            (chord("alt+s"), Some(Action::SplitRight)),
        ]);
        let input = InputState { mods: CTRL_SHIFT, ..InputState::new() };
        assert_eq!(input.route_key(&changed, e.clone(), true, nothing), KeyRoute::Pane);
        let input = InputState { mods: ModifiersState::ALT, ..InputState::new() };
        let route = input.route_key(&changed, Key::Character("s"), true, nothing);
        assert_eq!(route, KeyRoute::Action(Action::SplitRight));

        // Releases of chords, and of keys while the search, switcher or rename has them, go
        // nowhere; other releases go to the pane; keys of an IME composition go nowhere.
        let input = InputState { mods: CTRL_SHIFT, ..InputState::new() };
        assert_eq!(input.route_key(&keymap, e.clone(), false, nothing), KeyRoute::Ignored);
        let search = KeyTakers { search: true, ..nothing };
        let plain = InputState::new();
        let x = Key::Character("x");
        assert_eq!(plain.route_key(&keymap, x.clone(), false, search), KeyRoute::Ignored);
        assert_eq!(plain.route_key(&keymap, x.clone(), false, nothing), KeyRoute::Release);
        let composing = InputState { composing: true, ..InputState::new() };
        assert_eq!(
            composing.route_key(&keymap, Key::Character("x"), true, nothing),
            KeyRoute::Ignored
        );
    }
}
