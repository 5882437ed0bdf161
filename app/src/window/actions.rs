//! The Store commands the keymap's actions stand for: a chord's [`Action`] on the shown tab
//! becomes one [`Command`] (split, close, focus, resize, new tab, next tab, attention and
//! decision jumps, moving and closing tabs, answering the focused pane's decision).
//!
//! It owns that mapping, as a pure function of the action and what the window shows, so it is
//! tested as a table without a window or a Store. It must not act: the window executes the
//! command. The window's own actions (zoom, font size, clipboard, search, switcher, rename,
//! reloading the config) are not commands and map to nothing here.

use berth_engine::ids::PaneId;
use berth_engine::layout::SplitDir;
use berth_server::commands::{Command, SpawnRequest, WorkspaceSelector};
use berth_server::view::StateView;

use super::chrome;
use super::decisions;
use super::view::{self, TabView};
use crate::config::keymap::Action;

/// The Store command `action` stands for on the shown tab `view`, with its focused pane
/// `pane`; `None` for the window's own actions and when there is nothing to do (no other
/// tab, no pane wanting attention, a border that cannot move, no decision to answer). `list`
/// reads the Store's state, for the actions that look beyond the shown tab (it probes every
/// pane, so only they call it).
pub(super) fn store_command(
    action: Action,
    view: &TabView,
    pane: &PaneId,
    list: impl FnOnce() -> StateView,
) -> Option<Command> {
    let tab = || Some(view.tab_id.clone());
    match action {
        Action::SplitRight | Action::SplitDown => {
            let dir = if action == Action::SplitRight { SplitDir::Right } else { SplitDir::Down };
            Some(Command::PaneSplit { pane: pane.clone(), dir, spawn: SpawnRequest::default() })
        }
        Action::ClosePane => Some(Command::PaneClose { pane: pane.clone() }),
        Action::Focus(dir) => Some(Command::PaneFocusDirection { pane: pane.clone(), dir }),
        Action::Resize(dir) => {
            let (path, ratio) = view::resize_target(view, pane, dir)?;
            Some(Command::TabSetRatio { tab: tab()?, path, ratio })
        }
        Action::NewTab => {
            let workspace = WorkspaceSelector::Id(view.workspace_id.clone());
            let cwd = view.pane(pane).map(|p| p.cwd.clone().into());
            let spawn = SpawnRequest { cwd, ..SpawnRequest::default() };
            Some(Command::TabCreate { workspace, title: None, spawn })
        }
        Action::NextTab | Action::PrevTab => {
            let step = if action == Action::NextTab { 1 } else { -1 };
            let target = view.neighbour_tab(step).and_then(|tab| TabView::by_id(&list(), tab))?;
            Some(Command::PaneFocus { pane: target.active_pane })
        }
        Action::NextAttention => {
            let next = chrome::next_attention(&list(), Some(pane))?;
            Some(Command::PaneFocus { pane: next })
        }
        Action::NextDecision => {
            let next = decisions::next_decision(&list(), Some(pane))?;
            Some(Command::PaneFocus { pane: next })
        }
        Action::DecisionAllow | Action::DecisionAlways | Action::DecisionDeny => {
            decisions::answer(view.pane(pane)?, decisions::answer_of(action)?)
        }
        Action::MoveTabLeft | Action::MoveTabRight => {
            let step = if action == Action::MoveTabLeft { -1 } else { 1 };
            let at = view.workspace_tabs.iter().position(|t| *t == view.tab_id)?;
            let to = at.checked_add_signed(step).filter(|to| *to < view.workspace_tabs.len())?;
            Some(Command::TabMove { tab: tab()?, index: to })
        }
        Action::CloseTab => Some(Command::TabClose { tab: tab()? }),
        Action::ToggleZoom
        | Action::FontBigger
        | Action::FontSmaller
        | Action::FontReset
        | Action::Copy
        | Action::Paste
        | Action::PastePrimary
        | Action::Search
        | Action::Switcher
        | Action::ReloadConfig
        | Action::RenameTab
        | Action::ToggleSidebar
        | Action::Review
        | Action::Inbox
        | Action::NewWorkspace
        | Action::RenameWorkspace
        | Action::CloseWorkspace => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keymap::Keymap;
    use crate::window::fixtures;
    use berth_engine::agents::AgentKind;
    use berth_engine::ids::{TabId, WorkspaceId};
    use berth_engine::layout::{CellSize, FocusDir, Layout, Side};
    use berth_engine::model::Attention;
    use berth_server::view::{PaneInfo, TabInfo, WorkspaceView};
    use winit::keyboard::{Key, ModifiersState, NamedKey};

    fn pane_info(id: &PaneId, cwd: &str, attention: Attention) -> PaneInfo {
        PaneInfo {
            cwd: cwd.into(),
            attention,
            size: CellSize { cols: 1, rows: 1 },
            ..fixtures::pane_info(id.as_str())
        }
    }

    /// A workspace of two tabs: `tab_1` (shown) split right at 0.5, `a` (focused, in /src)
    /// left and `b` right; `tab_2` with the single pane `c`, which wants attention.
    fn state() -> (StateView, PaneId, PaneId, PaneId) {
        let (a, b, c) = (PaneId::new(), PaneId::new(), PaneId::new());
        let mut layout = Layout::single(a.clone());
        layout.split(&a, b.clone(), SplitDir::Right).expect("a is in the layout");
        let tab = |id: &str, active: &PaneId, layout: Layout, panes| TabInfo {
            id: TabId::parse(id).expect("a tab id"),
            title: String::new(),
            active_pane: active.clone(),
            layout,
            size: CellSize { cols: 40, rows: 20 },
            panes,
        };
        let ws_1 = WorkspaceId::parse("ws_1").expect("a workspace id");
        let list = StateView {
            workspaces: vec![WorkspaceView {
                id: ws_1.clone(),
                name: "proj".into(),
                cwd: "/".into(),
                git: None,
                auto_resume: false,
                agent_drive: false,
                active_tab: Some(TabId::parse("tab_1").expect("a tab id")),
                tabs: vec![
                    tab(
                        "tab_1",
                        &a,
                        layout,
                        vec![
                            pane_info(&a, "/src", Attention::None),
                            pane_info(&b, "/", Attention::None),
                        ],
                    ),
                    tab(
                        "tab_2",
                        &c,
                        Layout::single(c.clone()),
                        vec![pane_info(&c, "/", Attention::Unread)],
                    ),
                ],
            }],
            active_workspace: Some(ws_1),
        };
        (list, a, b, c)
    }

    /// Key press → keymap action → Store command, for every default chord of an action that
    /// is a command, on the state above; the window's own actions give none.
    #[test]
    fn chords_become_store_commands() {
        let (list, a, _, c) = state();
        let view = TabView::active(&list).expect("a shown tab");
        let tab = TabId::parse("tab_1").expect("a tab id");
        let ws = WorkspaceId::parse("ws_1").expect("a workspace id");
        let ctrl = ModifiersState::CONTROL;
        let ctrl_shift = ctrl | ModifiersState::SHIFT;
        let resize = ctrl_shift | ModifiersState::ALT;
        let named = Key::Named;
        let cases: Vec<(ModifiersState, Key<&str>, Option<Command>)> = vec![
            (
                ctrl_shift,
                Key::Character("E"),
                Some(Command::PaneSplit {
                    pane: a.clone(),
                    dir: SplitDir::Right,
                    spawn: SpawnRequest::default(),
                }),
            ),
            (
                ctrl_shift,
                Key::Character("O"),
                Some(Command::PaneSplit {
                    pane: a.clone(),
                    dir: SplitDir::Down,
                    spawn: SpawnRequest::default(),
                }),
            ),
            (ctrl_shift, Key::Character("W"), Some(Command::PaneClose { pane: a.clone() })),
            (
                ModifiersState::ALT,
                named(NamedKey::ArrowRight),
                Some(Command::PaneFocusDirection { pane: a.clone(), dir: FocusDir::Right }),
            ),
            (
                resize,
                named(NamedKey::ArrowRight),
                Some(Command::TabSetRatio {
                    tab: tab.clone(),
                    path: Vec::<Side>::new(),
                    ratio: 0.55,
                }),
            ),
            (
                ctrl_shift,
                Key::Character("T"),
                Some(Command::TabCreate {
                    workspace: WorkspaceSelector::Id(ws),
                    title: None,
                    spawn: SpawnRequest { cwd: Some("/src".into()), ..SpawnRequest::default() },
                }),
            ),
            (ctrl, named(NamedKey::Tab), Some(Command::PaneFocus { pane: c.clone() })),
            (ctrl, named(NamedKey::PageUp), Some(Command::PaneFocus { pane: c.clone() })),
            (ctrl_shift, Key::Character("A"), Some(Command::PaneFocus { pane: c.clone() })),
            (
                ctrl_shift,
                named(NamedKey::PageDown),
                Some(Command::TabMove { tab: tab.clone(), index: 1 }),
            ),
            // The first tab cannot move further left.
            (ctrl_shift, named(NamedKey::PageUp), None),
            (ctrl_shift, Key::Character("Q"), Some(Command::TabClose { tab: tab.clone() })),
            // The window's own actions are no commands.
            (ctrl_shift, Key::Character("Z"), None),
            (ctrl, Key::Character("="), None),
            (ctrl_shift, Key::Character("C"), None),
            (ctrl_shift, Key::Character("F"), None),
            (ctrl_shift, named(NamedKey::Space), None),
            (ctrl_shift, Key::Character("R"), None),
            (ctrl_shift, named(NamedKey::F5), None),
        ];
        let keymap = Keymap::default();
        for (mods, key, want) in cases {
            let action = keymap.action_for(key.clone(), mods).expect("a default chord");
            let got = store_command(action, &view, &a, || list.clone());
            assert_eq!(got, want, "{key:?} with {mods:?} ({})", action.name());
        }
    }

    #[test]
    fn actions_on_the_shown_tab_alone_do_not_read_the_store() {
        let (list, a, _, _) = state();
        let view = TabView::active(&list).expect("a shown tab");
        for action in [Action::SplitRight, Action::ClosePane, Action::CloseTab, Action::NewTab] {
            let got =
                store_command(action, &view, &a, || panic!("{} read the Store", action.name()));
            assert!(got.is_some(), "{}", action.name());
        }
    }

    /// The decision chords: with no decision anywhere they stand for nothing (the key goes to
    /// the program); with one on the focused pane they answer it, by its id; the jump goes to
    /// the pane with one, in another tab.
    #[test]
    fn decision_chords_answer_the_focused_pane_and_jump_to_the_next() {
        use berth_engine::ids::DecisionId;
        use berth_server::view::{DecisionAnswer, DecisionOption, PendingDecision};
        let (mut list, a, _, c) = state();
        let keymap = Keymap::default();
        let ctrl_shift = ModifiersState::CONTROL | ModifiersState::SHIFT;
        let run = |list: &StateView, key: &str| {
            let view = TabView::active(list).expect("a shown tab");
            let action = keymap.action_for(Key::Character(key), ctrl_shift).expect("a chord");
            store_command(action, &view, &a, || list.clone())
        };
        for key in ["Y", "L", "N", "D"] {
            assert_eq!(run(&list, key), None, "ctrl+shift+{key} with no decision");
        }
        let decision = |answerable| PendingDecision {
            id: DecisionId::new(),
            agent: AgentKind::Claude,
            tool: "Bash".into(),
            prompt: "Bash: ls".into(),
            detail: String::new(),
            options: [DecisionAnswer::Allow, DecisionAnswer::Deny]
                .into_iter()
                .map(|answer| DecisionOption { answer, label: answer.label().into() })
                .collect(),
            answerable,
            received_at: 0,
        };
        let d = decision(true);
        let id = d.id.clone();
        let tabs = &mut list.workspaces[0].tabs;
        tabs[0].panes[0].pending_decision = Some(d);
        tabs[1].panes[0].pending_decision = Some(decision(false));
        let decide = |answer| {
            Some(Command::Decide { pane: a.clone(), answer, message: None, id: Some(id.clone()) })
        };
        assert_eq!(run(&list, "Y"), decide(DecisionAnswer::Allow));
        assert_eq!(run(&list, "N"), decide(DecisionAnswer::Deny));
        // Not offered (codex has no "always").
        assert_eq!(run(&list, "L"), None);
        assert_eq!(run(&list, "D"), Some(Command::PaneFocus { pane: c.clone() }));
    }
}
