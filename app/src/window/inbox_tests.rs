//! Tests of the inbox (`inbox.rs`) without a window or a Store: grouping and order, the lines
//! and their hits, keys and clicks to intents, and the toast.

use std::time::{Duration, Instant};

use berth_engine::agents::AgentKind;
use berth_engine::ids::{DecisionId, PaneId};
use berth_server::commands::Command;
use berth_server::view::{
    DecisionAnswer, DecisionOption, NotificationView, PendingDecision, StateView,
};
use winit::event::MouseButton;
use winit::keyboard::{Key, ModifiersState, NamedKey};

use super::inbox::{groups, hit, layout, rect, Inbox, InboxHit, Item};
use super::intent::Intent;

/// The chrome tests' two workspaces, pane_4 (in "site") asking to run Bash.
fn list() -> StateView {
    let mut list = super::chrome::tests::list();
    let pane = &mut list.workspaces[1].tabs[0].panes[0];
    pane.pending_decision = Some(PendingDecision {
        id: DecisionId::new(),
        agent: AgentKind::Claude,
        tool: "Bash".into(),
        prompt: "Bash: cargo test".into(),
        detail: "cargo test".into(),
        options: vec![
            DecisionOption { label: "Allow once".into(), answer: DecisionAnswer::Allow },
            DecisionOption { label: "Deny".into(), answer: DecisionAnswer::Deny },
        ],
        answerable: true,
        received_at: 3_000,
    });
    list
}

fn note(id: u8, pane: &str, ws: &str, title: &str, at: u64, read: bool) -> NotificationView {
    NotificationView {
        id: format!("notif_{id:08x}-0000-4000-8000-000000000000"),
        pane_id: Some(pane.into()),
        workspace_id: Some(ws.into()),
        title: title.into(),
        body: String::new(),
        created_at: at,
        read_at: read.then_some(at),
        ..NotificationView::default()
    }
}

fn notes() -> Vec<NotificationView> {
    vec![
        note(1, "pane_2", "ws_a", "build finished", 1_000, false),
        note(2, "pane_1", "ws_a", "old news", 500, true),
        note(3, "pane_4", "ws_b", "deploy done", 2_000, false),
    ]
}

fn titles(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Item::Note { title, unread, .. } => {
                format!("{title}{}", if *unread { "*" } else { "" })
            }
            Item::Request { pane, .. } => format!("ask:{}", pane.id),
        })
        .collect()
}

/// Issue #29 item 4: every notification and open request, grouped by workspace, the groups
/// and their items newest first, unread ones marked.
#[test]
fn items_are_grouped_by_workspace_newest_first() {
    let groups = groups(&list(), &notes());
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["site", "berth"], "the group with the newest item first");
    assert_eq!(titles(&groups[0].items), ["ask:pane_4", "deploy done*"]);
    assert_eq!(titles(&groups[1].items), ["build finished*", "old news"]);
}

#[test]
fn lines_show_unread_marks_and_a_requests_buttons_and_hits_lead_to_them() {
    let list = list();
    let r = rect(100, 30);
    let laid = layout(&list, &notes(), r, 0, 4_000, "hint");
    assert_eq!(laid.scene.title, "Inbox · 2 unread · 1 asking");
    assert_eq!(laid.scene.title_buttons.len(), 1, "mark all read");
    let texts: Vec<String> =
        laid.scene.lines.iter().map(|l| l.text.trim_end().to_owned()).collect();
    assert!(texts[0].starts_with("site  (1 asking, 1 unread)"), "{texts:?}");
    assert!(texts[1].starts_with("Claude asks to run Bash: cargo test"), "{texts:?}");
    assert!(texts[3].starts_with("deploy done"), "{texts:?}");
    assert_eq!(laid.scene.lines[3].ring, Some(crate::render::Ring::Unread));
    let old = texts.iter().position(|t| t.starts_with("old news")).expect("old news");
    assert_eq!(laid.scene.lines[old].ring, None, "a read one has no mark");
    assert_eq!(laid.scene.selected, Some(1), "the newest item is highlighted");
    // Hits: the request's buttons answer it, a note's line is the note, the title's button
    // marks all read, outside is outside.
    let buttons = &laid.scene.lines[2].buttons;
    let labels: Vec<&str> = buttons.iter().map(|b| b.label.trim()).collect();
    assert_eq!(labels, ["Allow once", "Deny"]);
    let at = |line: usize| r.row + 1 + line as u16;
    let deny = r.col + 1 + buttons[1].cols.start;
    assert_eq!(hit(&laid, deny, at(2)), InboxHit::Answer(0, DecisionAnswer::Deny));
    assert_eq!(hit(&laid, r.col + 3, at(3)), InboxHit::Item(1));
    let mark = r.col + 1 + laid.scene.title_buttons[0].cols.start;
    assert_eq!(hit(&laid, mark, r.row), InboxHit::MarkAll);
    assert_eq!(hit(&laid, 0, 0), InboxHit::Outside);
}

fn key(inbox: &mut Inbox, list: &StateView, key: Key<&str>, text: Option<&str>) -> Vec<Intent> {
    inbox.key(list, key, text, None, ModifiersState::empty())
}

fn opened(list: &StateView) -> Inbox {
    let mut inbox = Inbox::default();
    inbox.listed(1, notes(), false, Instant::now());
    inbox.toggle();
    assert!(inbox.is_open());
    let _ = list;
    inbox
}

/// Keys: `y` answers the highlighted request (the decision shown, by its id), Down then Enter
/// jumps to a notification's pane and marks it read, closing the inbox.
#[test]
fn keys_answer_a_request_and_jump_to_a_notifications_pane() {
    let list = list();
    let mut inbox = opened(&list);
    let shown = list.workspaces[1].tabs[0].panes[0].pending_decision.clone().expect("a request");
    let intents = key(&mut inbox, &list, Key::Character("y"), Some("y"));
    let decided = intents.iter().any(|i| {
        matches!(i, Intent::Store(Command::Decide { answer: DecisionAnswer::Allow, id: Some(id), .. })
            if *id == shown.id)
    });
    assert!(decided, "{intents:?}");
    key(&mut inbox, &list, Key::Named(NamedKey::ArrowDown), None);
    let intents = key(&mut inbox, &list, Key::Named(NamedKey::Enter), None);
    let pane_4 = PaneId::parse("pane_4").expect("a pane id");
    assert!(intents.contains(&Intent::Store(Command::PaneFocus { pane: pane_4 })), "{intents:?}");
    assert!(
        intents.iter().any(|i| matches!(i,
            Intent::Store(Command::NotificationsMarkRead { ids, pane: None }) if ids.len() == 1)),
        "{intents:?}"
    );
    assert!(!inbox.is_open(), "a jump closes the inbox");
    // `a` marks all read; Esc closes.
    let mut inbox = opened(&list);
    let intents = key(&mut inbox, &list, Key::Character("a"), Some("a"));
    assert!(intents.iter().any(|i| matches!(i,
        Intent::Store(Command::NotificationsMarkRead { ids, pane: None }) if ids.is_empty())));
    key(&mut inbox, &list, Key::Named(NamedKey::Escape), None);
    assert!(!inbox.is_open());
}

/// A click on a note's line jumps to its pane; a click outside closes the inbox.
#[test]
fn clicks_jump_and_close() {
    let list = list();
    let mut inbox = opened(&list);
    let laid = inbox.layout(&list, 100, 30, "").expect("open");
    let line = laid.scene.lines.iter().position(|l| l.text.starts_with("build finished")).unwrap();
    let r = laid.scene.rect;
    let row = r.row + 1 + line as u16;
    let intents = inbox.press(&list, (100, 30), (r.col + 4, row), MouseButton::Left);
    let pane_2 = PaneId::parse("pane_2").expect("a pane id");
    assert!(intents.contains(&Intent::Store(Command::PaneFocus { pane: pane_2 })), "{intents:?}");
    let mut inbox = opened(&list);
    inbox.press(&list, (100, 30), (0, 29), MouseButton::Left);
    assert!(!inbox.is_open());
}

/// The toast: the first listing only learns what is there; a later new unread notification
/// makes one when no desktop shows it (and none when one does); it goes after its time.
#[test]
fn a_new_notification_toasts_only_when_no_desktop_shows_it() {
    let now = Instant::now();
    let mut inbox = Inbox::default();
    inbox.listed(1, notes(), true, now);
    assert!(inbox.toast_until(now).is_none(), "nothing old toasts");
    let mut more = notes();
    more.push(note(4, "pane_1", "ws_a", "tests passed", 9_000, false));
    inbox.listed(2, more.clone(), false, now);
    assert!(inbox.toast_until(now).is_none(), "a desktop showed it");
    more.push(note(5, "pane_1", "ws_a", "build finished again", 10_000, false));
    inbox.listed(3, more, true, now);
    assert!(inbox.toast_until(now).is_some());
    let toast = inbox.toast_scene(120, 40, now, Some("Ctrl+Shift+I")).expect("a toast");
    assert_eq!(toast.lines[0], "build finished again");
    assert!(toast.lines.last().unwrap().contains("Ctrl+Shift+I"), "{:?}", toast.lines);
    let later = now + super::inbox::TOAST_FOR + Duration::from_millis(1);
    assert!(
        inbox.toast_until(later).is_none() && inbox.toast_scene(120, 40, later, None).is_none()
    );
    // A click on it jumps to its pane.
    inbox.listed(4, notes(), false, now);
    inbox.show_toast(&note(6, "pane_2", "ws_a", "x", 11_000, false), 0, now);
    let r = inbox.toast_scene(120, 40, now, None).expect("a toast").rect;
    let intents = inbox.toast_press((120, 40), (r.col + 1, r.row), now).expect("on the toast");
    let pane_2 = PaneId::parse("pane_2").expect("a pane id");
    assert!(intents.contains(&Intent::Store(Command::PaneFocus { pane: pane_2 })));
}
