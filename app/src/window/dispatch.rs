//! Carries the window's input to its parts and their intents out: keys (routed by
//! `InputState::route_key` to the search, the switcher, the tab rename, a chord's action or
//! the focused pane), IME text, focus, the pointer (selection, divider drags, mouse reports,
//! links) and the wheel; chords' actions; and [`App::apply`], which executes the [`Intent`]s
//! the parts return.
//!
//! It owns no state: the parts and `InputState` do. It must not draw and must not change
//! server state except through `App::exec`.

use berth_engine::ids::PaneId;
use berth_engine::layout::SplitDir;
use berth_engine::model::RestoreState;
use berth_server::commands::Command;
use winit::dpi::PhysicalPosition;
use winit::event::{ElementState, Ime, KeyEvent, MouseButton, MouseScrollDelta};
use winit::keyboard::{Key, ModifiersState, NamedKey, PhysicalKey};
use winit::platform::modifier_supplement::KeyEventExtModifierSupplement;
use winit::window::CursorIcon;

use alacritty_terminal::term::TermMode;
use berth_engine::keys::kitty::KeyKind;

use super::actions;
use super::app::{App, Zoom};
use super::chrome::TAB_BAR_ROWS;
use super::clipboard::{paste_bytes, Selection};
use super::decisions::{self, ChordOutcome};
use super::input::{Drag, KeyRoute, KeyTakers};
use super::intent::{Intent, UiAction};
use super::keys::{self, KeyPress};
use super::links::{self, LinkSource};
use super::mouse::{self, MouseModes, MouseReport, ReportButton, ReportKind, ReportMods};
use super::selection::{PaneSelection, ScreenCell};
use super::sidebar;
use super::view::{self, Hit, TabView};
use crate::config::keymap::Action;
use crate::render::CardHit;

/// Arrow keys sent per wheel step in the alternate screen (alacritty's default multiplier).
const WHEEL_ARROWS: usize = 3;

impl App {
    /// The shown tab and its focused pane.
    fn focused(&self) -> Option<(TabView, PaneId)> {
        let view = self.view()?;
        let pane = view.active_pane.clone();
        Some((view, pane))
    }

    fn zoomed_in(&self, view: &TabView) -> Option<PaneId> {
        self.zoom.as_ref().filter(|z| z.tab == view.tab_id).map(|z| z.pane.clone())
    }

    /// A key press or release: routed to the part that takes it (`InputState::route_key`).
    pub(super) fn on_key(&mut self, event: &KeyEvent) {
        // The review view takes every key while it is open (Escape closes it).
        if self.review.is_some() {
            self.review_key(event);
            return;
        }
        let key = event.logical_key.as_ref();
        let open = KeyTakers {
            search: self.search.is_open(),
            switcher: self.switcher.is_open(),
            rename: self.renaming.editing().is_some(),
            inbox: self.inbox.is_open(),
        };
        let pressed = event.state == ElementState::Pressed;
        let text = event.text.as_deref();
        match self.input.route_key(&self.config.keymap, key.clone(), pressed, open) {
            KeyRoute::Ignored => {}
            KeyRoute::Search => {
                let mods = self.input.mods;
                if !self.servers.is_empty() {
                    self.search.key(key, text, mods, &self.servers);
                }
                self.redraw();
            }
            KeyRoute::Switcher(action) => {
                let list = self.state_view();
                let mods = self.input.mods;
                let intents =
                    self.switcher.key(&list, self.home.as_deref(), key, text, action, mods);
                self.apply(intents);
            }
            KeyRoute::Rename => {
                let intents = self.renaming.key(key, text, self.input.mods);
                self.apply(intents);
            }
            KeyRoute::Inbox(action) => self.inbox_key(key, text, action),
            // A decision chord answers the focused pane's card (one for an answer the card does
            // not offer does nothing); with no card it is the program's key like any unbound
            // chord.
            KeyRoute::Action(action) if decisions::answer_of(action).is_some() => {
                let Some(answer) = decisions::answer_of(action) else { return };
                let Some((view, pane)) = self.focused() else { return };
                match decisions::chord(view.pane(&pane), answer) {
                    ChordOutcome::Answer(command) => self.apply(vec![Intent::Store(command)]),
                    ChordOutcome::Nothing => {}
                    ChordOutcome::ToProgram => self.key_to_pane(event),
                }
            }
            KeyRoute::Action(action) => self.run_action(action),
            KeyRoute::Pane | KeyRoute::Release => self.key_to_pane(event),
        }
    }

    /// A key event for the focused pane: its program's bytes, or on a tombstone the key that
    /// resumes it.
    fn key_to_pane(&mut self, event: &KeyEvent) {
        let key = event.logical_key.as_ref();
        let Some(pane) = self.focused_pane() else { return };
        let kind = match (event.state, event.repeat) {
            (ElementState::Released, _) => KeyKind::Release,
            (ElementState::Pressed, true) => KeyKind::Repeat,
            (ElementState::Pressed, false) => KeyKind::Press,
        };
        // One key resumes a tombstone: Enter on a restored or ended pane asks the Store to
        // start it (an agent's official resume command, a fresh shell in its cwd, or its
        // program again); any other key does nothing there.
        let tombstone = self.pane_state(&pane).is_some_and(|s| s != RestoreState::Live);
        if tombstone {
            if kind != KeyKind::Release
                && key == Key::Named(NamedKey::Enter)
                && !self.input.mods.control_key()
            {
                self.resume_tombstone(pane);
            }
            return;
        }
        let modes = self.pane_key_modes(&pane).unwrap_or_default();
        let unmodified = event.key_without_modifiers();
        let press = KeyPress {
            kind,
            unmodified: match &unmodified {
                Key::Character(s) => Some(s.as_str()),
                _ => None,
            },
            physical: match event.physical_key {
                PhysicalKey::Code(code) => Some(code),
                PhysicalKey::Unidentified(_) => None,
            },
            ..KeyPress::new(key, event.location, event.text.as_deref(), self.input.mods)
        };
        if let Some(bytes) = keys::encode(&press, modes) {
            if kind != KeyKind::Release {
                self.reset_blink();
                // Typing ends the selection, as in most terminals.
                if self.selection.take().is_some() {
                    self.redraw();
                }
            }
            self.send_bytes(&pane, bytes);
        }
    }

    /// IME composition and committed text.
    pub(super) fn on_ime(&mut self, ime: Ime) {
        match ime {
            Ime::Enabled | Ime::Disabled => self.input.composing = false,
            Ime::Preedit(text, _) => self.input.composing = !text.is_empty(),
            Ime::Commit(text) if self.search.is_open() => {
                self.input.composing = false;
                self.search_text(&text);
            }
            Ime::Commit(text) => {
                self.input.composing = false;
                if let Some(pane) = self.focused_pane() {
                    self.reset_blink();
                    self.send_bytes(&pane, text.into_bytes());
                }
            }
        }
    }

    /// The window gained or lost focus: redraw the cursor, tell programs that asked (1004).
    pub(super) fn on_focus(&mut self, focused: bool) {
        self.input.window_focused = focused;
        // Tell the Store at once, not with the next frame: a compositor sends a hidden
        // window no frames (Wayland), and until the Store knows, a notification for a pane on
        // screen counts as seen and stays off the desktop.
        let list = self.state_view();
        if let Some(view) = TabView::active(&list) {
            self.report_view(&view);
        }
        if let Some((_, pane)) = self.focused() {
            if self.pane_modes(&pane).is_some_and(|m| m.contains(TermMode::FOCUS_IN_OUT)) {
                self.send_bytes(
                    &pane,
                    if focused { b"\x1b[I".to_vec() } else { b"\x1b[O".to_vec() },
                );
            }
        }
        self.reset_blink();
        self.redraw();
    }

    /// Carries out a chord's action.
    fn run_action(&mut self, action: Action) {
        let Some((view, pane)) = self.focused() else { return };
        let command = actions::store_command(action, &view, &pane, || self.state_view());
        if let Some(command) = command {
            if matches!(action, Action::SplitRight | Action::SplitDown) {
                self.zoom = None;
            }
            self.exec(command);
        }
        match action {
            Action::ToggleZoom => {
                self.zoom = match self.zoom.take() {
                    Some(_) => {
                        // Back to the layout: every pane gets its rectangle's size again.
                        let tab = view.tab_id.clone();
                        self.exec(Command::TabResize { tab, size: self.tab_grid() });
                        None
                    }
                    None if view.panes.len() > 1 => Some(Zoom { tab: view.tab_id, pane }),
                    None => None,
                };
            }
            Action::FontBigger => self.set_font_px(self.font_px + 1.0),
            Action::FontSmaller => self.set_font_px(self.font_px - 1.0),
            Action::FontReset => self.set_font_px(self.config.font_size),
            Action::Copy => {
                let text = self.selection_text();
                if let Some(text) = text {
                    self.input.clipboard.store(Selection::Clipboard, &text);
                }
            }
            Action::Paste => self.paste(&pane, Selection::Clipboard),
            Action::PastePrimary => self.paste(&pane, Selection::Primary),
            Action::Switcher => {
                let list = self.state_view();
                let intents = self.switcher.open(&list, self.home.as_deref());
                self.apply(intents);
            }
            Action::Search => self.open_search(&pane),
            Action::ReloadConfig => self.reload_config(),
            Action::ToggleSidebar => {
                self.sidebar.toggle(self.config.sidebar);
                self.redraw();
            }
            Action::Review => self.open_review_here(),
            Action::Inbox => self.toggle_inbox(),
            Action::NewWorkspace => {
                let intents = self.switcher.open_new();
                self.apply(intents);
            }
            Action::RenameWorkspace | Action::CloseWorkspace => {
                let list = self.state_view();
                let intents = match action {
                    Action::RenameWorkspace => self.switcher.open_rename(&list, &view.workspace_id),
                    _ => self.switcher.close(&list, &view.workspace_id),
                };
                self.apply(intents);
            }
            Action::RenameTab => {
                let list = self.state_view();
                let intents = self.renaming.start(&list, &view.tab_id);
                self.apply(intents);
            }
            // The Store's actions: their command ran above.
            Action::SplitRight
            | Action::SplitDown
            | Action::ClosePane
            | Action::Focus(_)
            | Action::Resize(_)
            | Action::NewTab
            | Action::NextTab
            | Action::PrevTab
            | Action::NextAttention
            | Action::NextDecision
            | Action::DecisionAllow
            | Action::DecisionAlways
            | Action::DecisionDeny
            | Action::MoveTabLeft
            | Action::MoveTabRight
            | Action::CloseTab => {}
        }
        self.redraw();
    }

    /// The selected text, if there is a selection: from the pane's frame, with the lines it
    /// does not hold (scrolled away) read from the server, in both windows.
    fn selection_text(&self) -> Option<String> {
        let selection = self.selection.as_ref()?;
        let frame = self.pane_frame(&selection.pane)?;
        match selection.text(&frame) {
            Ok(text) => text,
            Err((first, _)) => {
                let (from, lines) = self.read_lines(&selection.pane, first)?;
                selection.text_of_lines(&lines, from)
            }
        }
    }

    /// A pane's lines from line `since` on, as plain text (`pane.read`), and the first one's
    /// number.
    fn read_lines(&self, pane: &PaneId, since: u64) -> Option<(u64, Vec<String>)> {
        self.link()?.read_lines(pane, since)
    }

    /// Pastes a selection's text into a pane, or into the search query (its first line)
    /// while the pane's search bar is open.
    fn paste(&mut self, pane: &PaneId, which: Selection) {
        let Some(text) = self.input.clipboard.load(which) else { return };
        if text.is_empty() {
            return;
        }
        if self.search.pane() == Some(pane) {
            self.search_text(text.lines().next().unwrap_or_default());
            return;
        }
        let bracketed =
            self.pane_modes(pane).is_some_and(|m| m.contains(TermMode::BRACKETED_PASTE));
        self.send_bytes(pane, paste_bytes(&text, bracketed).into_bytes());
    }

    /// The window cell under the pointer (may lie outside the window during a drag), and
    /// whether the pointer is on the right half of it.
    pub(super) fn pointer_window_cell(&self) -> Option<((i32, i32), bool)> {
        self.input.pointer_window_cell(self.renderer.as_ref()?.cell_size())
    }

    /// The cell of the shown tab under the pointer (the window's less the tab bar; negative
    /// over the tab bar), and whether the pointer is on the right half of it.
    pub(super) fn pointer_cell(&self) -> Option<((i32, i32), bool)> {
        let ((col, row), right) = self.pointer_window_cell()?;
        Some(((col, row - i32::from(TAB_BAR_ROWS)), right))
    }

    /// The pointer's cell clamped onto the shown tab.
    fn pointer_grid_cell(&self) -> Option<(u16, u16)> {
        let ((col, row), _) = self.pointer_cell()?;
        let grid = self.tab_grid();
        let clamp = |v: i32, max: u16| v.clamp(0, i32::from(max.max(1)) - 1) as u16;
        Some((clamp(col, grid.cols), clamp(row, grid.rows)))
    }

    fn report_mods(&self) -> ReportMods {
        let m = self.input.mods;
        ReportMods { shift: m.shift_key(), alt: m.alt_key(), ctrl: m.control_key() }
    }

    fn mouse_modes(&self, pane: &PaneId) -> MouseModes {
        self.pane_modes(pane).map(MouseModes::from_term).unwrap_or_default()
    }

    /// Sends a mouse report to a pane if its modes ask for it.
    fn report(&self, pane: &PaneId, button: ReportButton, kind: ReportKind, cell: (u16, u16)) {
        let report =
            MouseReport { button, kind, col: cell.0, row: cell.1, mods: self.report_mods() };
        if let Some(bytes) = mouse::encode(&report, self.mouse_modes(pane)) {
            self.send_bytes(pane, bytes);
        }
    }

    /// The pointer moved.
    pub(super) fn on_cursor_moved(&mut self, position: PhysicalPosition<f64>) {
        self.input.pointer = Some(position);
        let Some(((col, row), right_half)) = self.pointer_cell() else { return };
        let moved_cell = self.input.last_cell != Some((col, row));
        self.input.last_cell = Some((col, row));
        let Some(view) = self.view() else { return };
        let zoomed = self.zoomed_in(&view);
        match self.input.drag.clone() {
            Some(Drag::Tab(_)) => {}
            Some(Drag::Sidebar) if moved_cell => {
                let cols = self.grid.cols;
                let width = sidebar::dragged_width(cols, col.clamp(0, i32::from(cols)) as u16);
                if self.sidebar.dragged != Some(width) {
                    self.sidebar.dragged = Some(width);
                    self.redraw();
                }
            }
            Some(Drag::Divider(divider)) if moved_cell => {
                let Some((c, r)) = self.pointer_grid_cell() else { return };
                if let Some(ratio) = view::drag_ratio(&view, &divider, c, r) {
                    let tab = view.tab_id.clone();
                    self.exec(Command::TabSetRatio { tab, path: divider.path, ratio });
                }
            }
            Some(Drag::Select) => {
                let Some(pane) = self.selection.as_ref().map(|s| s.pane.clone()) else {
                    return;
                };
                let Some((c, r)) = view::cell_in_pane(&view, zoomed.as_ref(), &pane, col, row)
                else {
                    return;
                };
                let cell = ScreenCell { col: c, row: r, right_half };
                let frame = self.pane_frame(&pane);
                if let (Some(selection), Some(frame)) = (&mut self.selection, frame) {
                    selection.extend(&frame, cell);
                }
                self.redraw();
            }
            Some(Drag::Report { pane, button }) if moved_cell => {
                if let Some(cell) = view::cell_in_pane(&view, zoomed.as_ref(), &pane, col, row) {
                    self.report(&pane, button, ReportKind::Motion, cell);
                }
            }
            Some(_) => {}
            None if row < 0 => self.set_pointer_icon(&Hit::Nothing),
            None if col >= i32::from(self.tab_grid().cols) => {
                let edge = col == i32::from(self.tab_grid().cols);
                let icon = if edge { CursorIcon::ColResize } else { CursorIcon::Default };
                self.apply(vec![Intent::Ui(UiAction::PointerIcon(icon))]);
            }
            None => {
                let (c, r) = (col.max(0) as u16, row.max(0) as u16);
                // Over a decision card: a hand on its buttons, and nothing for the program.
                if let Some((_, hit)) = self.card_under(&view, c, r + TAB_BAR_ROWS) {
                    let icon = match hit {
                        CardHit::Button(_) => CursorIcon::Pointer,
                        CardHit::Card => CursorIcon::Default,
                    };
                    self.apply(vec![Intent::Ui(UiAction::PointerIcon(icon))]);
                    return;
                }
                let hit = view::hit(&view, zoomed.as_ref(), c, r);
                self.set_pointer_icon(&hit);
                self.hover_link(&hit);
                if let Hit::Screen { pane, col, row } = hit {
                    if moved_cell && self.mouse_modes(&pane).motion {
                        self.report(&pane, ReportButton::None, ReportKind::Motion, (col, row));
                    }
                }
            }
        }
    }

    pub(super) fn set_pointer_icon(&self, hit: &Hit) {
        let icon = match hit {
            Hit::Divider(d) if d.dir == SplitDir::Right => CursorIcon::ColResize,
            Hit::Divider(_) => CursorIcon::RowResize,
            Hit::Screen { .. } => CursorIcon::Text,
            _ => CursorIcon::Default,
        };
        if let Some(window) = &self.window {
            window.set_cursor(icon);
        }
    }

    /// A button went down or up.
    pub(super) fn on_mouse_input(&mut self, state: ElementState, button: MouseButton) {
        let report_button = match button {
            MouseButton::Left => ReportButton::Left,
            MouseButton::Middle => ReportButton::Middle,
            MouseButton::Right => ReportButton::Right,
            _ => return,
        };
        if state == ElementState::Released {
            self.on_release(report_button);
            return;
        }
        if self.review.is_some() && button == MouseButton::Left {
            let cell = self.pointer_window_cell().map(|(c, _)| c);
            if let Some((col, row)) = cell.filter(|&(c, r)| c >= 0 && r >= 0) {
                let (col, row) = (
                    u16::try_from(col).unwrap_or(u16::MAX),
                    u16::try_from(row).unwrap_or(u16::MAX),
                );
                if self.review_press(col, row) {
                    return;
                }
            }
        }
        if self.chrome_press(button) {
            return;
        }
        let Some(view) = self.view() else { return };
        let Some(((col, row), right_half)) = self.pointer_cell() else { return };
        let zoomed = self.zoomed_in(&view);
        let hit = view::hit(&view, zoomed.as_ref(), col.max(0) as u16, row.max(0) as u16);
        let (pane, cell) = match hit {
            Hit::Divider(divider) => {
                if button == MouseButton::Left {
                    self.input.drag = Some(Drag::Divider(divider));
                }
                return;
            }
            Hit::Nothing => return,
            Hit::Header { pane } => {
                self.focus_pane(&view, &pane);
                return;
            }
            Hit::Screen { pane, col, row } => (pane, (col, row)),
        };
        // Ctrl+click on a link opens it and does nothing else (no selection, no report).
        if button == MouseButton::Left && self.input.mods.control_key() {
            let frame = self.pane_frame(&pane);
            let open = frame.and_then(|f| self.links.click(LinkSource::Frame(&f), cell));
            if let Some(intent) = open {
                self.apply(vec![intent]);
                return;
            }
        }
        self.focus_pane(&view, &pane);
        if self.mouse_modes(&pane).any() && !self.input.mods.shift_key() {
            self.report(&pane, report_button, ReportKind::Press, cell);
            self.input.drag = Some(Drag::Report { pane, button: report_button });
            return;
        }
        match button {
            MouseButton::Left => {
                let clicks = self.input.clicks.press(cell, std::time::Instant::now());
                let screen_cell = ScreenCell { col: cell.0, row: cell.1, right_half };
                self.selection = self
                    .pane_frame(&pane)
                    .map(|f| PaneSelection::start(pane.clone(), &f, screen_cell, clicks));
                self.input.drag = Some(Drag::Select);
                self.redraw();
            }
            MouseButton::Middle => self.paste(&pane, Selection::Primary),
            _ => {}
        }
    }

    fn focus_pane(&self, view: &TabView, pane: &PaneId) {
        if view.active_pane != *pane {
            self.exec(Command::PaneFocus { pane: pane.clone() });
        }
    }

    /// Starts dragging the tab at `index` of the tab bar.
    pub(super) fn start_tab_drag(&mut self, index: usize) {
        self.input.drag = Some(Drag::Tab(index));
    }

    fn on_release(&mut self, button: ReportButton) {
        match self.input.drag.take() {
            Some(Drag::Select) => {
                // X11 convention: what is selected is the primary selection.
                if let Some(text) = self.selection_text() {
                    self.input.clipboard.store(Selection::Primary, &text);
                }
            }
            Some(Drag::Report { pane, .. }) => {
                let Some(view) = self.view() else { return };
                let Some(((col, row), _)) = self.pointer_cell() else { return };
                let zoomed = self.zoomed_in(&view);
                if let Some(cell) = view::cell_in_pane(&view, zoomed.as_ref(), &pane, col, row) {
                    self.report(&pane, button, ReportKind::Release, cell);
                }
            }
            Some(Drag::Tab(from)) => self.drop_tab(from),
            Some(Drag::Sidebar) => self.sidebar.drag_ended(),
            Some(Drag::Divider(_)) | None => {}
        }
    }

    /// The wheel: reports to programs that asked, arrows in the alternate screen, otherwise
    /// scrolls the pane's view through its scrollback.
    pub(super) fn on_wheel(&mut self, delta: MouseScrollDelta) {
        let cell_h = self.renderer.as_ref().map_or(16.0, |r| f64::from(r.cell_size().1));
        let lines = self.input.wheel_lines(delta, cell_h);
        let steps = lines.abs().round() as usize;
        if steps == 0 {
            return;
        }
        let up = lines > 0.0;
        let over_review = self.pointer_window_cell().is_some_and(|((c, r), _)| {
            let rect = self.review_rect();
            c >= 0 && r >= 0 && super::review::inside(rect, c as u16, r as u16)
        });
        if over_review && self.review_wheel(up, steps) {
            return;
        }
        if self.chrome_wheel(up, steps) {
            return;
        }
        let Some(view) = self.view() else { return };
        let Some((col, row)) = self.pointer_grid_cell() else { return };
        let zoomed = self.zoomed_in(&view);
        let Hit::Screen { pane, col, row } = view::hit(&view, zoomed.as_ref(), col, row) else {
            return;
        };
        if self.mouse_modes(&pane).any() && !self.input.mods.shift_key() {
            let button = if up { ReportButton::WheelUp } else { ReportButton::WheelDown };
            for _ in 0..steps {
                self.report(&pane, button, ReportKind::Press, (col, row));
            }
            return;
        }
        let mode = self.pane_modes(&pane).unwrap_or_default();
        if mode.contains(TermMode::ALT_SCREEN) && mode.contains(TermMode::ALTERNATE_SCROLL) {
            let app_cursor = mode.contains(TermMode::APP_CURSOR);
            let arrow = match (up, app_cursor) {
                (true, false) => b"\x1b[A",
                (true, true) => b"\x1bOA",
                (false, false) => b"\x1b[B",
                (false, true) => b"\x1bOB",
            };
            self.send_bytes(&pane, arrow.repeat(steps * WHEEL_ARROWS));
            return;
        }
        // The primary screen: scroll the view through the scrollback.
        let lines = i32::try_from(steps * WHEEL_ARROWS).unwrap_or(i32::MAX);
        let lines = if up { lines } else { -lines };
        if let Some(link) = self.link() {
            link.scroll(&pane, lines);
        }
        self.redraw();
    }

    /// Carries out what a part of the window asked for, in order.
    pub(super) fn apply(&mut self, intents: Vec<Intent>) {
        for intent in intents {
            match intent {
                Intent::Store(command) => {
                    self.exec(command);
                }
                Intent::Ui(UiAction::Redraw) => self.redraw(),
                Intent::Ui(UiAction::PointerIcon(icon)) => {
                    if let Some(window) = &self.window {
                        window.set_cursor(icon);
                    }
                }
                Intent::Ui(UiAction::OpenLink(url)) => links::open_logged(&url),
            }
        }
    }

    /// Adds typed, committed or pasted text to the open search's query.
    fn search_text(&mut self, text: &str) {
        if !self.servers.is_empty() {
            self.search.text(text, &self.servers);
        }
        self.redraw();
    }

    /// Ctrl+Shift+F on `pane`: opens the search there (a pane with a live terminal).
    fn open_search(&mut self, pane: &PaneId) {
        // A live pane (whose first frame may not have come through a socket yet); a
        // tombstone has no terminal to search.
        let frame = self.pane_frame(pane);
        if frame.is_none() && self.pane_state(pane) != Some(RestoreState::Live) {
            return;
        }
        self.search.open(pane, frame.as_ref());
    }

    /// Follows the pointer over a pane's screen: with Ctrl held, the link under it is
    /// underlined and the pointer is a hand. Called after the pointer icon was set for `hit`.
    pub(super) fn hover_link(&mut self, hit: &Hit) {
        let frame = match hit {
            Hit::Screen { pane, .. } => self.pane_frame(pane),
            _ => None,
        };
        let ctrl = self.input.mods.control_key();
        let intents = self.links.hover(hit, ctrl, frame.as_ref().map(LinkSource::Frame));
        self.apply(intents);
    }

    /// The modifiers changed: Ctrl pressed or released over a link shows or hides it.
    fn link_modifiers_changed(&mut self) {
        if !self.links.ctrl_changes_hover(self.input.mods.control_key()) {
            return;
        }
        if let Some(hit) = self.hit_at_pointer() {
            self.set_pointer_icon(&hit);
            self.hover_link(&hit);
        }
    }

    /// What the pointer is over now, if it is over the window.
    fn hit_at_pointer(&self) -> Option<Hit> {
        let view = self.view()?;
        let ((col, row), _) = self.pointer_cell()?;
        let zoomed = self.zoomed_in(&view);
        Some(view::hit(&view, zoomed.as_ref(), col.max(0) as u16, row.max(0) as u16))
    }

    /// The modifiers held changed.
    pub(super) fn on_modifiers(&mut self, mods: ModifiersState) {
        self.input.mods = mods;
        self.link_modifiers_changed();
    }
}
