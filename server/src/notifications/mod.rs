//! Notifications: stored, raising attention, shown on the desktop.
//!
//! Owns the path every notification takes, whatever raised it (an OSC in a pane's output, a
//! hook, `berth notify`): sanitise and bound it, store it (the last [`MAX_NOTIFICATIONS`]),
//! raise the pane's attention, publish an event, and hand it to the desktop sink. PTY reader
//! threads never take the Store's lock: they drop what they parse into the bounded
//! [`NotificationInbox`], drained by one task.
//!
//! The path, stage by stage: the engine's `osc` scanner extracts OSC 9/99/777 payloads from a
//! pane's output; on the pane's reader thread [`reader`] parses them (the engine's `notify`),
//! rate-limits them and drops them into the inbox; this module holds the types, the kept log and
//! the inbox; [`intake`] is where one enters the Store; [`desktop`] shows it through the
//! freedesktop notification service.

pub mod desktop;
pub mod intake;
pub mod reader;

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use berth_engine::ids::{NotificationId, PaneId};
use berth_engine::model::Attention;
use berth_engine::notify::ShowWhen;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::persist::stamp::now_ms;
use crate::persist::NotificationRecord;

/// How many notifications are kept (and saved).
pub const MAX_NOTIFICATIONS: usize = 200;

/// How many parsed notifications may wait for the Store. A pane flooding beyond the rate
/// limiter's burst cannot fill it; when it is full anyway, new ones are dropped and counted.
pub const INBOX_CAPACITY: usize = 256;

/// A notification on its way to the Store.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    /// The pane it concerns, if any.
    pub pane: Option<PaneId>,
    /// Its title (sanitised again on the way in).
    pub title: String,
    /// Its body.
    pub body: String,
    /// `osc9 | osc99 | osc777 | cli | hook:<agent> | system`.
    pub source: String,
    /// `info | warning | error`.
    pub severity: String,
    /// The attention it raises on its pane.
    pub attention: Attention,
    /// kitty's `i=`: a later one with the same id replaces the earlier.
    pub kitty_id: Option<String>,
    /// Whether a click must be reported back to the program (kitty `a=report`).
    pub report_activation: bool,
    /// When it goes to the desktop (kitty `o=`); by default only when the user is not looking
    /// at its pane in a focused window.
    pub show: ShowWhen,
    /// Actions (key, label) the desktop notification offers beside a click: a decision's
    /// options.
    pub actions: Vec<(String, String)>,
}

impl Incoming {
    /// A plain notification with default severity and `unread` attention.
    pub fn new(pane: Option<PaneId>, title: &str, body: &str, source: &str) -> Incoming {
        Incoming {
            pane,
            title: title.to_owned(),
            body: body.to_owned(),
            source: source.to_owned(),
            severity: "info".to_owned(),
            attention: Attention::Unread,
            kitty_id: None,
            report_activation: false,
            show: ShowWhen::Unfocused,
            actions: Vec::new(),
        }
    }
}

/// A stored notification: the record that is listed, published and saved (its fields read
/// through `Deref`), plus what does not outlive the program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredNotification {
    /// Its id, pane, text, severity, source and times; serialised as the notification itself.
    #[serde(flatten)]
    pub record: NotificationRecord,
    /// kitty's id, if any.
    #[serde(skip)]
    pub kitty_id: Option<String>,
    /// Whether a click is reported back to the program.
    #[serde(skip)]
    pub report_activation: bool,
    /// The desktop actions (key, label) it offers beside a click.
    #[serde(skip)]
    pub actions: Vec<(String, String)>,
}

impl Deref for StoredNotification {
    type Target = NotificationRecord;

    fn deref(&self) -> &NotificationRecord {
        &self.record
    }
}

impl DerefMut for StoredNotification {
    fn deref_mut(&mut self) -> &mut NotificationRecord {
        &mut self.record
    }
}

impl From<&StoredNotification> for NotificationRecord {
    fn from(n: &StoredNotification) -> Self {
        n.record.clone()
    }
}

impl From<&NotificationRecord> for StoredNotification {
    /// A saved notification; its kitty id and click report do not outlive the program.
    fn from(n: &NotificationRecord) -> Self {
        StoredNotification {
            record: n.clone(),
            kitty_id: None,
            report_activation: false,
            actions: Vec::new(),
        }
    }
}

/// The kept notifications, oldest first.
#[derive(Debug, Default)]
pub struct NotificationLog {
    items: VecDeque<StoredNotification>,
}

impl NotificationLog {
    /// Adds one, replacing an earlier one with the same kitty id from the same pane; drops the
    /// oldest beyond [`MAX_NOTIFICATIONS`].
    pub fn push(&mut self, item: StoredNotification) {
        if let Some(kitty) = &item.kitty_id {
            self.items
                .retain(|n| !(n.kitty_id.as_ref() == Some(kitty) && n.pane_id == item.pane_id));
        }
        self.items.push_back(item);
        while self.items.len() > MAX_NOTIFICATIONS {
            self.items.pop_front();
        }
    }

    /// Every kept notification, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &StoredNotification> {
        self.items.iter()
    }

    /// Finds one by id.
    pub fn get(&self, id: &str) -> Option<&StoredNotification> {
        self.items.iter().find(|n| n.id == id)
    }

    /// Marks notifications read: those named, or all of a pane's, or (neither) all. Returns how
    /// many changed.
    pub fn mark_read(&mut self, ids: &[NotificationId], pane: Option<&PaneId>) -> usize {
        let now = now_ms();
        let mut changed = 0;
        for n in self.items.iter_mut().filter(|n| n.read_at.is_none()) {
            let hit = if !ids.is_empty() {
                ids.iter().any(|id| id.as_str() == n.id)
            } else if let Some(pane) = pane {
                n.pane_id.as_deref() == Some(pane.as_str())
            } else {
                true
            };
            if hit {
                n.read_at = Some(now);
                changed += 1;
            }
        }
        changed
    }

    /// Removes every notification of a pane whose kitty id matches (kitty `p=close`).
    pub fn remove_kitty(&mut self, pane: &PaneId, kitty_id: &str) -> Vec<String> {
        let mut removed = Vec::new();
        self.items.retain(|n| {
            let hit = n.pane_id.as_deref() == Some(pane.as_str())
                && n.kitty_id.as_deref() == Some(kitty_id);
            if hit {
                removed.push(n.id.clone());
            }
            !hit
        });
        removed
    }

    /// Restores saved notifications (oldest first).
    pub fn restore(&mut self, items: impl IntoIterator<Item = StoredNotification>) {
        for item in items {
            self.push(item);
        }
    }
}

/// What a pane's reader thread sends to the Store.
#[derive(Debug)]
pub enum InboxMessage {
    /// Store and show a notification.
    Show(Incoming),
    /// Withdraw a pane's kitty notification.
    Close {
        /// The pane.
        pane: PaneId,
        /// kitty's id.
        kitty_id: String,
    },
}

/// The sending end for reader threads; cheap to clone, never blocks.
#[derive(Clone)]
pub struct NotificationInbox {
    tx: mpsc::Sender<InboxMessage>,
    dropped: Arc<AtomicU64>,
}

impl NotificationInbox {
    /// A new inbox and its receiving end.
    pub fn new() -> (NotificationInbox, mpsc::Receiver<InboxMessage>) {
        let (tx, rx) = mpsc::channel(INBOX_CAPACITY);
        (NotificationInbox { tx, dropped: Arc::new(AtomicU64::new(0)) }, rx)
    }

    /// Sends without blocking; a full inbox drops the message and counts it.
    pub fn send(&self, message: InboxMessage) {
        if self.tx.try_send(message).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Messages dropped because the inbox was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(id: &str, pane: Option<&str>, kitty: Option<&str>) -> StoredNotification {
        StoredNotification {
            record: NotificationRecord {
                id: id.into(),
                pane_id: pane.map(Into::into),
                workspace_id: None,
                title: id.into(),
                body: String::new(),
                severity: "info".into(),
                source: "cli".into(),
                created_at: 0,
                read_at: None,
            },
            kitty_id: kitty.map(Into::into),
            report_activation: false,
            actions: Vec::new(),
        }
    }

    #[test]
    fn the_log_keeps_the_last_200_and_replaces_by_kitty_id() {
        let mut log = NotificationLog::default();
        for i in 0..250 {
            log.push(note(&format!("notif_{i}"), None, None));
        }
        assert_eq!(log.iter().count(), MAX_NOTIFICATIONS);
        assert_eq!(log.iter().next().unwrap().id, "notif_50");
        log.push(note("notif_a", Some("pane_1"), Some("k")));
        log.push(note("notif_b", Some("pane_2"), Some("k")));
        log.push(note("notif_c", Some("pane_1"), Some("k")));
        assert!(log.get("notif_a").is_none(), "same pane and kitty id replaces");
        assert!(log.get("notif_b").is_some(), "another pane's id is another notification");
        assert_eq!(log.remove_kitty(&PaneId::parse("pane_1").unwrap(), "k"), ["notif_c"]);
    }

    #[test]
    fn the_desktop_policy_decides_what_reaches_the_desktop() {
        use DesktopPolicy::{Always, AsAsked, Off};
        // (policy, asked, sees, visible) → shown
        let cases = [
            (AsAsked, ShowWhen::Unfocused, false, false, true),
            (AsAsked, ShowWhen::Unfocused, true, true, false),
            (AsAsked, ShowWhen::Unfocused, false, true, true),
            (AsAsked, ShowWhen::Invisible, false, true, false),
            (AsAsked, ShowWhen::Invisible, false, false, true),
            (AsAsked, ShowWhen::Always, true, true, true),
            (Always, ShowWhen::Unfocused, true, true, true),
            (Always, ShowWhen::Invisible, true, true, true),
            (Off, ShowWhen::Always, false, false, false),
            (Off, ShowWhen::Unfocused, false, false, false),
        ];
        for (policy, show, sees, visible, want) in cases {
            assert_eq!(
                policy.shows(show, sees, visible),
                want,
                "{policy:?} {show:?} {sees} {visible}"
            );
        }
    }

    #[test]
    fn mark_read_by_id_by_pane_and_all() {
        let mut log = NotificationLog::default();
        log.push(note("notif_1", Some("pane_a"), None));
        log.push(note("notif_2", Some("pane_b"), None));
        log.push(note("notif_3", None, None));
        assert_eq!(log.mark_read(&[NotificationId::parse("notif_2").unwrap()], None), 1);
        assert_eq!(log.mark_read(&[], Some(&PaneId::parse("pane_a").unwrap())), 1);
        assert_eq!(log.mark_read(&[], None), 1);
        assert_eq!(log.mark_read(&[], None), 0);
    }
}

/// Which notifications go to the desktop, as the window's config file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DesktopPolicy {
    /// As the program asked (kitty `o=`); by default only when the user is not looking at the
    /// notification's pane in a focused window.
    #[default]
    AsAsked,
    /// Every notification, even for the pane the user is looking at.
    Always,
    /// None: notifications are only stored and marked in the window.
    Off,
}

impl DesktopPolicy {
    /// Whether a notification that asked for `show` goes to the desktop, given whether the
    /// user `sees` its pane (focused, in the focused window) and whether it is `visible`.
    pub fn shows(self, show: ShowWhen, sees: bool, visible: bool) -> bool {
        match (self, show) {
            (DesktopPolicy::Off, _) => false,
            (DesktopPolicy::Always, _) | (DesktopPolicy::AsAsked, ShowWhen::Always) => true,
            (DesktopPolicy::AsAsked, ShowWhen::Unfocused) => !sees,
            (DesktopPolicy::AsAsked, ShowWhen::Invisible) => !visible,
        }
    }
}

/// The Store's handle on the desktop sink.
#[derive(Clone)]
pub struct DesktopHandle(pub desktop::DesktopNotifier);

impl DesktopHandle {
    /// Shows a stored notification, replacing the desktop one of `replaces` if given.
    pub fn show(&self, n: &StoredNotification, replaces: Option<String>) {
        let urgency = match n.severity.as_str() {
            "error" => desktop::Urgency::Critical,
            _ => desktop::Urgency::Normal,
        };
        self.0.notify(desktop::DesktopNote {
            key: n.id.clone(),
            title: n.title.clone(),
            body: n.body.clone(),
            urgency,
            replaces_key: replaces,
            actions: n.actions.clone(),
        });
    }

    /// Whether this server shows notifications on a desktop itself (see
    /// [`desktop::DesktopNotifier::delivers`]).
    pub fn delivers(&self) -> bool {
        self.0.delivers()
    }

    /// Withdraws a shown notification.
    pub fn close(&self, id: &str) {
        self.0.close(id);
    }
}
