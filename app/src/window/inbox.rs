//! The inbox (as Warp's notification mailbox and cmux's panel): every kept notification and
//! every open permission request, newest first, grouped by workspace, unread ones marked; and
//! the toast that shows a new notification for a few seconds when no desktop shows it.
//!
//! It owns whether the inbox is open, the keyboard's highlighted item and the scroll, the
//! notifications as the server last listed them (`notifications.list`, read again only when
//! the server's events said something changed), and the toast. It decides: keys and clicks
//! become [`Intent`]s — `pane.focus` to jump, `notifications.mark_read` (one, or all),
//! `pane.decide` for a request answered in place, through `decisions::answer`, the same path
//! as the pane's card and the sidebar's buttons —, and it lays itself out as an
//! [`InboxScene`]. It must not draw (`render/inbox.rs` does) and must not reach the server
//! (`inbox_input.rs` carries its asks out through the window's one command path).

use std::time::{Duration, Instant};

use berth_engine::ids::{NotificationId, PaneId};
use berth_server::commands::Command;
use berth_server::view::{DecisionAnswer, NotificationView, PaneInfo, StateView};
use winit::event::MouseButton;
use winit::keyboard::{Key, ModifiersState, NamedKey};

use super::decisions;
use super::intent::{Intent, UiAction};
use super::sidebar;
use crate::config::keymap::Action;
use crate::render::{
    self, ButtonTone, CellRectU16, InboxScene, Ring, SidebarButton, SidebarLine, SidebarStyle,
    ToastScene,
};

/// How long a toast stays.
pub const TOAST_FOR: Duration = Duration::from_secs(6);

/// The widest the inbox panel gets, in columns.
const MAX_COLS: u16 = 96;

/// The widest a toast gets, in columns.
const TOAST_COLS: u16 = 52;

/// The label of the title row's button that marks everything read.
const MARK_ALL: &str = " Mark all read ";

/// One thing in the inbox.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    /// A kept notification.
    Note {
        /// Its id (`notif_…`).
        id: String,
        /// The pane it concerns, if it still exists.
        pane: Option<PaneId>,
        /// Its title and body.
        title: String,
        body: String,
        /// Not read yet.
        unread: bool,
        /// When it came, ms since the epoch.
        at: u64,
    },
    /// An open permission request of a pane's agent.
    Request {
        /// The pane, with its decision.
        pane: Box<PaneInfo>,
        /// When it came, ms since the epoch.
        at: u64,
    },
}

impl Item {
    fn at(&self) -> u64 {
        match self {
            Item::Note { at, .. } | Item::Request { at, .. } => *at,
        }
    }

    fn pane(&self) -> Option<&PaneId> {
        match self {
            Item::Note { pane, .. } => pane.as_ref(),
            Item::Request { pane, .. } => Some(&pane.id),
        }
    }
}

/// The items of one workspace.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Group {
    /// Its name (or what stands for it: a closed workspace, Berth itself).
    pub(super) name: String,
    /// Its items, newest first.
    pub(super) items: Vec<Item>,
}

/// Every notification and open request, grouped by workspace: the groups in the order of
/// their newest item, newest first, and within each the items newest first.
pub(super) fn groups(list: &StateView, notes: &[NotificationView]) -> Vec<Group> {
    let panes = || list.workspaces.iter().flat_map(|w| &w.tabs).flat_map(|t| &t.panes);
    let mut keyed: Vec<(Option<String>, Item)> = Vec::new();
    for n in notes {
        let pane = n
            .pane_id
            .as_deref()
            .and_then(|p| PaneId::parse(p).ok())
            .filter(|p| panes().any(|q| q.id == *p));
        let item = Item::Note {
            id: n.id.clone(),
            pane,
            title: n.title.clone(),
            body: n.body.clone(),
            unread: n.read_at.is_none(),
            at: n.created_at,
        };
        keyed.push((n.workspace_id.clone(), item));
    }
    for ws in &list.workspaces {
        for p in ws.tabs.iter().flat_map(|t| &t.panes) {
            let Some(d) = p.pending_decision.as_ref().filter(|d| d.answerable) else { continue };
            let item = Item::Request { pane: Box::new(p.clone()), at: d.received_at };
            keyed.push((Some(ws.id.to_string()), item));
        }
    }
    let mut groups: Vec<(Option<String>, Group)> = Vec::new();
    for (key, item) in keyed {
        let at = groups.iter().position(|(k, _)| *k == key);
        match at {
            Some(i) => groups[i].1.items.push(item),
            None => {
                let name = match key.as_deref() {
                    None => "Berth".to_owned(),
                    Some(id) => list
                        .workspaces
                        .iter()
                        .find(|w| w.id.as_str() == id)
                        .map_or_else(|| "closed workspace".to_owned(), |w| w.name.clone()),
                };
                groups.push((key, Group { name, items: vec![item] }));
            }
        }
    }
    let mut groups: Vec<Group> = groups.into_iter().map(|(_, g)| g).collect();
    for g in &mut groups {
        g.items.sort_by_key(|i| std::cmp::Reverse(i.at()));
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.items.first().map_or(0, Item::at)));
    groups
}

/// What a line of the laid-out inbox leads to.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct LineTarget {
    /// The item (an index into the flat list, in the order shown).
    pub(super) item: Option<usize>,
    /// A request's answers, one per button of the line.
    pub(super) answers: Vec<DecisionAnswer>,
}

/// The inbox as drawn, with what each line leads to.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct InboxLayout {
    pub(super) scene: InboxScene,
    /// One per line of `scene.lines`.
    pub(super) targets: Vec<LineTarget>,
    /// Every item, in the order shown.
    pub(super) items: Vec<Item>,
}

/// Where the inbox goes in a window of `cols × rows` cells: centred, below the tab bar.
pub(super) fn rect(cols: u16, rows: u16) -> CellRectU16 {
    let width = cols.saturating_sub(4).min(MAX_COLS).max(cols.min(20));
    let height = rows.saturating_sub(3).max(rows.min(4));
    CellRectU16::new((cols - width) / 2, rows.min(2).min(rows - height), width, height)
}

/// Lays out the inbox of `list` and `notes` in `rect`, the item `selected` highlighted (and
/// kept in view) at `now_ms`.
pub(super) fn layout(
    list: &StateView,
    notes: &[NotificationView],
    rect: CellRectU16,
    selected: usize,
    now_ms: u64,
    hint: &str,
) -> InboxLayout {
    let room = usize::from(rect.cols.saturating_sub(2));
    let groups = groups(list, notes);
    let mut lines = Vec::new();
    let mut targets = Vec::new();
    let mut items = Vec::new();
    let mut selected_line = None;
    let ago = |at: u64| sidebar::elapsed(Duration::from_millis(now_ms.saturating_sub(at)));
    for g in &groups {
        if !lines.is_empty() {
            lines.push(SidebarLine { style: SidebarStyle::Blank, ..SidebarLine::default() });
            targets.push(LineTarget::default());
        }
        let unread =
            g.items.iter().filter(|i| matches!(i, Item::Note { unread: true, .. })).count();
        let asks = g.items.iter().filter(|i| matches!(i, Item::Request { .. })).count();
        let mut counts = Vec::new();
        if asks > 0 {
            counts.push(format!("{asks} asking"));
        }
        if unread > 0 {
            counts.push(format!("{unread} unread"));
        }
        let title = match counts.is_empty() {
            true => g.name.clone(),
            false => format!("{}  ({})", g.name, counts.join(", ")),
        };
        lines.push(SidebarLine {
            text: render::ellipsize(&title, room),
            style: SidebarStyle::Title,
            ..SidebarLine::default()
        });
        targets.push(LineTarget::default());
        for item in &g.items {
            let index = items.len();
            if index == selected {
                selected_line = Some(lines.len());
            }
            let text_room = room.saturating_sub(2);
            match item {
                Item::Note { title, body, unread, at, .. } => {
                    let when = ago(*at);
                    let what = match body.trim() {
                        "" => title.clone(),
                        body => format!("{title} — {}", body.lines().next().unwrap_or(body)),
                    };
                    let text_room = text_room.saturating_sub(render::str_width(&when) + 2);
                    let text = format!(
                        "{:<w$}  {when}",
                        render::ellipsize(&what, text_room),
                        w = text_room
                    );
                    lines.push(SidebarLine {
                        text,
                        style: if *unread { SidebarStyle::Summary } else { SidebarStyle::Message },
                        ring: unread.then_some(Ring::Unread),
                        ..SidebarLine::default()
                    });
                    targets.push(LineTarget { item: Some(index), answers: Vec::new() });
                }
                Item::Request { pane, at } => {
                    let Some(d) = pane.pending_decision.as_ref() else { continue };
                    let card = decisions::card_of(d, &crate::config::keymap::Keymap::default());
                    let what = d.detail.lines().next().unwrap_or(d.prompt.as_str()).trim();
                    let when = ago(*at);
                    let head = format!("{}: {what}", card.title);
                    let text_room = text_room.saturating_sub(render::str_width(&when) + 2);
                    let text = format!(
                        "{:<w$}  {when}",
                        render::ellipsize(&head, text_room),
                        w = text_room
                    );
                    lines.push(SidebarLine {
                        text,
                        style: SidebarStyle::Decision,
                        ring: Some(Ring::NeedsInput),
                        ..SidebarLine::default()
                    });
                    targets.push(LineTarget { item: Some(index), answers: Vec::new() });
                    // The answers the card offers (a request too long for a card: Deny only).
                    let offered: Vec<_> = d
                        .options
                        .iter()
                        .filter(|o| decisions::answer(pane, o.answer).is_some())
                        .cloned()
                        .collect();
                    let placed = sidebar::decision_buttons(&offered, text_room);
                    let (buttons, answers): (Vec<SidebarButton>, Vec<DecisionAnswer>) = placed
                        .into_iter()
                        .map(|(mut b, a)| {
                            b.cols = b.cols.start + 2..b.cols.end + 2;
                            (b, a)
                        })
                        .unzip();
                    lines.push(SidebarLine {
                        style: SidebarStyle::Decision,
                        buttons,
                        ..SidebarLine::default()
                    });
                    targets.push(LineTarget { item: Some(index), answers });
                }
            }
            items.push(item.clone());
        }
    }
    if items.is_empty() {
        lines.push(SidebarLine {
            text: "No notifications, no requests.".into(),
            style: SidebarStyle::Message,
            ..SidebarLine::default()
        });
        targets.push(LineTarget::default());
    }
    // Keep the highlighted item (both lines of a request) in view.
    let body = usize::from(rect.rows.saturating_sub(2)).max(1);
    let first = selected_line.map_or(0, |l| (l + 2).saturating_sub(body));
    let lines: Vec<SidebarLine> = lines.into_iter().skip(first).collect();
    let targets: Vec<LineTarget> = targets.into_iter().skip(first).collect();
    let unread = items.iter().filter(|i| matches!(i, Item::Note { unread: true, .. })).count();
    let asks = items.iter().filter(|i| matches!(i, Item::Request { .. })).count();
    let title = format!("Inbox · {unread} unread · {asks} asking");
    let title_w = render::str_width(&title);
    let mark_w = render::str_width(MARK_ALL);
    let title_buttons = if unread > 0 && title_w + 2 + mark_w <= room {
        let start = u16::try_from(room - mark_w).unwrap_or(0);
        vec![SidebarButton {
            label: MARK_ALL.to_owned(),
            cols: start..start + u16::try_from(mark_w).unwrap_or(0),
            tone: ButtonTone::Always,
        }]
    } else {
        Vec::new()
    };
    InboxLayout {
        scene: InboxScene {
            rect,
            title,
            title_buttons,
            hint: render::ellipsize(hint, room),
            lines,
            selected: selected_line.map(|l| l - first),
        },
        targets,
        items,
    }
}

/// What a press at window cell (`col`, `row`) hits in the laid-out inbox.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum InboxHit {
    /// Outside the panel.
    Outside,
    /// The title row's "Mark all read".
    MarkAll,
    /// An item's line (its index).
    Item(usize),
    /// A request's answer button.
    Answer(usize, DecisionAnswer),
    /// Inside, on nothing.
    Nothing,
}

/// The hit of window cell (`col`, `row`) in `laid`.
pub(super) fn hit(laid: &InboxLayout, col: u16, row: u16) -> InboxHit {
    let r = laid.scene.rect;
    if col < r.col || col >= r.col + r.cols || row < r.row || row >= r.row + r.rows {
        return InboxHit::Outside;
    }
    let text_col = col.saturating_sub(r.col + 1);
    if row == r.row {
        let on = laid.scene.title_buttons.iter().any(|b| b.cols.contains(&text_col));
        return if on { InboxHit::MarkAll } else { InboxHit::Nothing };
    }
    let line = usize::from(row - r.row - 1);
    if row + 1 >= r.row + r.rows {
        return InboxHit::Nothing;
    }
    let (Some(l), Some(t)) = (laid.scene.lines.get(line), laid.targets.get(line)) else {
        return InboxHit::Nothing;
    };
    if let Some((i, _)) = l.buttons.iter().enumerate().find(|(_, b)| b.cols.contains(&text_col)) {
        if let (Some(item), Some(answer)) = (t.item, t.answers.get(i)) {
            return InboxHit::Answer(item, *answer);
        }
    }
    match t.item {
        Some(item) if l.buttons.is_empty() => InboxHit::Item(item),
        _ => InboxHit::Nothing,
    }
}

/// A toast being shown.
#[derive(Debug, Clone, PartialEq)]
struct Toast {
    title: String,
    body: String,
    /// Its notification's id and pane (a click on the toast jumps there).
    id: String,
    pane: Option<PaneId>,
    /// How many more came with it.
    more: usize,
    until: Instant,
}

/// The window's inbox and toast.
#[derive(Debug, Default)]
pub(super) struct Inbox {
    open: bool,
    /// The highlighted item, an index into the items in the order shown.
    selected: usize,
    /// The notifications, as the server last listed them.
    notes: Vec<NotificationView>,
    /// The count of the server's events when they were listed (`None`: never).
    listed_at: Option<u64>,
    /// The newest notification's time when last listed (`None`: never listed): newer ones are
    /// new (for the toast).
    newest: Option<u64>,
    toast: Option<Toast>,
}

impl Inbox {
    /// Whether the inbox is open.
    pub(super) fn is_open(&self) -> bool {
        self.open
    }

    /// Lists the notifications again at the next chance (after the window's own change).
    pub(super) fn forget_listing(&mut self) {
        self.listed_at = None;
    }

    /// Whether the notifications must be listed again: the server's event count is `events`.
    pub(super) fn stale(&self, events: u64) -> bool {
        self.listed_at != Some(events)
    }

    /// The server listed `notes` (at event count `events`). New unread ones make a toast when
    /// `toast_new` (no desktop shows them); the first listing only sets what counts as new.
    pub(super) fn listed(
        &mut self,
        events: u64,
        notes: Vec<NotificationView>,
        toast_new: bool,
        now: Instant,
    ) {
        let newest = notes.iter().map(|n| n.created_at).max();
        if let Some(seen) = self.newest {
            let fresh: Vec<&NotificationView> =
                notes.iter().filter(|n| n.created_at > seen && n.read_at.is_none()).collect();
            if toast_new {
                if let Some(n) = fresh.iter().max_by_key(|n| n.created_at) {
                    self.show_toast(n, fresh.len() - 1, now);
                }
            }
        }
        self.newest = newest.or(self.newest).or(Some(0));
        self.notes = notes;
        self.listed_at = Some(events);
    }

    /// Shows `note` as a toast (with `more` others that came with it) until [`TOAST_FOR`]
    /// after `now`.
    pub(super) fn show_toast(&mut self, note: &NotificationView, more: usize, now: Instant) {
        let pane = note.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok());
        self.toast = Some(Toast {
            title: note.title.clone(),
            body: note.body.clone(),
            id: note.id.clone(),
            pane,
            more,
            until: now + TOAST_FOR,
        });
    }

    /// When the toast that shows at `now` goes (the window draws a frame then).
    pub(super) fn toast_until(&self, now: Instant) -> Option<Instant> {
        self.toast.as_ref().map(|t| t.until).filter(|until| *until > now)
    }

    /// The toast as drawn in a window of `cols × rows` cells at `now`, if one shows (and the
    /// inbox is closed: it lists the same).
    pub(super) fn toast_scene(
        &self,
        cols: u16,
        rows: u16,
        now: Instant,
        key: Option<&str>,
    ) -> Option<ToastScene> {
        let t = self.toast.as_ref().filter(|t| t.until > now && !self.open)?;
        let width = TOAST_COLS.min(cols.saturating_sub(2));
        if width < 8 || rows < 6 {
            return None;
        }
        let room = usize::from(width - 2);
        let mut lines = vec![render::ellipsize(&t.title, room)];
        let body = t.body.lines().next().unwrap_or_default().trim();
        if !body.is_empty() {
            lines.push(render::ellipsize(body, room));
        }
        let more = match t.more {
            0 => String::new(),
            n => format!("+{n} more · "),
        };
        let open = key.map_or_else(|| "the inbox".to_owned(), |k| format!("{k}: inbox"));
        lines.push(render::ellipsize(&format!("{more}click to jump · {open}"), room));
        let height = u16::try_from(lines.len()).unwrap_or(3);
        // Above the bottom row (the banner's), at the right edge.
        let row = rows.saturating_sub(height + 2);
        Some(ToastScene { rect: CellRectU16::new(cols - width - 1, row, width, height), lines })
    }

    /// A press on the toast at window cell (`col`, `row`) of a `cols × rows` window: jumps to
    /// its pane and marks it read. `None` when the press is not on a shown toast.
    pub(super) fn toast_press(
        &mut self,
        (cols, rows): (u16, u16),
        (col, row): (u16, u16),
        now: Instant,
    ) -> Option<Vec<Intent>> {
        let r = self.toast_scene(cols, rows, now, None)?.rect;
        let inside =
            (r.col..r.col + r.cols).contains(&col) && (r.row..r.row + r.rows).contains(&row);
        if !inside {
            return None;
        }
        let toast = self.toast.take()?;
        let mut intents = Vec::new();
        if let Some(pane) = toast.pane {
            intents.push(Intent::Store(Command::PaneFocus { pane }));
        }
        intents.extend(mark_read(&toast.id));
        intents.push(Intent::Ui(UiAction::Redraw));
        Some(intents)
    }

    /// How many things want the user: unread notifications and open requests (the tab bar's
    /// affordance says so).
    pub(super) fn waiting(&self, list: &StateView) -> usize {
        let unread = self.notes.iter().filter(|n| n.read_at.is_none()).count();
        let asks = list
            .workspaces
            .iter()
            .flat_map(|w| &w.tabs)
            .flat_map(|t| &t.panes)
            .filter(|p| p.pending_decision.as_ref().is_some_and(|d| d.answerable))
            .count();
        unread + asks
    }

    /// The tab bar's affordance that opens the inbox: `N unread`, or `inbox`.
    pub(super) fn label(&self, list: &StateView) -> String {
        match self.waiting(list) {
            0 => "inbox".to_owned(),
            n => format!("{n} unread"),
        }
    }

    /// Opens the inbox with the newest item highlighted, or closes it.
    pub(super) fn toggle(&mut self) -> Vec<Intent> {
        self.open = !self.open;
        self.selected = 0;
        if self.open {
            self.toast = None;
        }
        vec![Intent::Ui(UiAction::Redraw)]
    }

    /// The inbox as drawn in a window of `cols × rows` cells, while open.
    pub(super) fn layout(
        &self,
        list: &StateView,
        cols: u16,
        rows: u16,
        hint: &str,
    ) -> Option<InboxLayout> {
        if !self.open {
            return None;
        }
        let now = berth_server::persist::stamp::now_ms();
        Some(layout(list, &self.notes, rect(cols, rows), self.selected, now, hint))
    }

    /// A key while the inbox is open (`action`: the chord's, if the key is one). Up and Down
    /// move, Enter jumps to the item's pane, `r` marks it read, `a` marks all read, `y`, `l`
    /// and `n` (or the decision chords) answer a request, Esc (or the inbox's own chord)
    /// closes. Nothing reaches a pane.
    pub(super) fn key(
        &mut self,
        list: &StateView,
        key: Key<&str>,
        text: Option<&str>,
        action: Option<Action>,
        mods: ModifiersState,
    ) -> Vec<Intent> {
        let Some(laid) = self.layout(list, 100, 40, "") else { return Vec::new() };
        let count = laid.items.len();
        let item = laid.items.get(self.selected).cloned();
        let plain = text.filter(|_| !mods.control_key() && !mods.alt_key());
        let answer = decisions::answer_of(action.unwrap_or(Action::Inbox)).or(match plain {
            Some("y") => Some(DecisionAnswer::Allow),
            Some("l") => Some(DecisionAnswer::Always),
            Some("n") => Some(DecisionAnswer::Deny),
            _ => None,
        });
        let mut intents = Vec::new();
        match key {
            _ if action == Some(Action::Inbox) => self.open = false,
            Key::Named(NamedKey::Escape) => self.open = false,
            Key::Named(NamedKey::ArrowDown) | Key::Named(NamedKey::Tab) if count > 0 => {
                self.selected = (self.selected + 1).min(count - 1);
            }
            Key::Named(NamedKey::ArrowUp) => self.selected = self.selected.saturating_sub(1),
            Key::Named(NamedKey::Home) => self.selected = 0,
            Key::Named(NamedKey::End) => self.selected = count.saturating_sub(1),
            Key::Named(NamedKey::Enter) => {
                if let Some(item) = &item {
                    intents.extend(self.jump(item));
                }
            }
            _ if plain == Some("a") => intents.extend(mark_all()),
            _ if plain == Some("r") => {
                if let Some(Item::Note { id, .. }) = &item {
                    intents.extend(mark_read(id));
                }
            }
            _ if answer.is_some() => {
                if let (Some(Item::Request { pane, .. }), Some(answer)) = (&item, answer) {
                    intents.extend(decisions::answer(pane, answer).map(Intent::Store));
                }
            }
            _ => {}
        }
        intents.push(Intent::Ui(UiAction::Redraw));
        intents
    }

    /// A button press at window cell (`col`, `row`) while the inbox is open in a window of
    /// `cols × rows` cells: an item's line jumps to its pane, a request's button answers it,
    /// "Mark all read" does, a press outside closes the inbox.
    pub(super) fn press(
        &mut self,
        list: &StateView,
        (cols, rows): (u16, u16),
        (col, row): (u16, u16),
        button: MouseButton,
    ) -> Vec<Intent> {
        let Some(laid) = self.layout(list, cols, rows, "") else { return Vec::new() };
        let mut intents = Vec::new();
        match (hit(&laid, col, row), button) {
            (InboxHit::Outside, _) => self.open = false,
            (InboxHit::MarkAll, MouseButton::Left) => intents.extend(mark_all()),
            (InboxHit::Item(i), MouseButton::Left) => {
                if let Some(item) = laid.items.get(i) {
                    self.selected = i;
                    intents.extend(self.jump(item));
                }
            }
            (InboxHit::Answer(i, answer), MouseButton::Left) => {
                self.selected = i;
                if let Some(Item::Request { pane, .. }) = laid.items.get(i) {
                    intents.extend(decisions::answer(pane, answer).map(Intent::Store));
                }
            }
            _ => {}
        }
        intents.push(Intent::Ui(UiAction::Redraw));
        intents
    }

    /// Jumps to an item's pane: the inbox closes, the pane is focused (its tab and workspace
    /// shown) and a notification is marked read.
    fn jump(&mut self, item: &Item) -> Vec<Intent> {
        let mut intents = Vec::new();
        if let Some(pane) = item.pane() {
            intents.push(Intent::Store(Command::PaneFocus { pane: pane.clone() }));
            self.open = false;
        }
        if let Item::Note { id, .. } = item {
            intents.extend(mark_read(id));
        }
        intents
    }
}

/// The command that marks one notification read.
fn mark_read(id: &str) -> Option<Intent> {
    let id = NotificationId::parse(id).ok()?;
    Some(Intent::Store(Command::NotificationsMarkRead { ids: vec![id], pane: None }))
}

/// The command that marks every notification read.
fn mark_all() -> Option<Intent> {
    Some(Intent::Store(Command::NotificationsMarkRead { ids: Vec::new(), pane: None }))
}
