//! Where a notification enters the Store: stored, raising its pane's attention, published, and
//! handed to the desktop sink; and the task that drains reader threads' [`NotificationInbox`].
//!
//! It owns the Store's side of the notification path (`impl Store` blocks and the inbox task);
//! the types it works on live in the parent module. It must not parse escape codes (the engine's
//! `notify` does) or talk to D-Bus (the desktop sink does).
//!
//! [`NotificationInbox`]: super::NotificationInbox

use std::sync::{Arc, Mutex};

use berth_engine::ids::{NotificationId, PaneId, WorkspaceId};
use berth_engine::model::Attention;
use berth_engine::notify::{sanitize, sanitize_body, MAX_BODY_CHARS, MAX_TITLE_CHARS};
use tokio::sync::mpsc;

use super::{DesktopHandle, InboxMessage, Incoming, StoredNotification};
use crate::event::Event;
use crate::persist::stamp::now_ms;
use crate::persist::NotificationRecord;
use crate::store::{Internal, Store};

/// Drains the inbox into the Store until every sender is gone.
pub async fn run_inbox(mut rx: mpsc::Receiver<InboxMessage>, store: Arc<Mutex<Store>>) {
    while let Some(message) = rx.recv().await {
        let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
        match message {
            InboxMessage::Show(incoming) => {
                let _ = store.execute(Internal::AddNotification(incoming));
            }
            InboxMessage::Close { pane, kitty_id } => {
                let _ = store.execute(Internal::CloseKittyNotification { pane, kitty_id });
            }
        }
    }
}

impl Store {
    /// Stores a notification, raises its pane's attention, publishes it, and shows it on the
    /// desktop. Returns its id.
    pub(crate) fn add_notification(&mut self, incoming: Incoming) -> String {
        let title = sanitize(&incoming.title, MAX_TITLE_CHARS);
        let body = sanitize_body(&incoming.body, MAX_BODY_CHARS);
        let pane = incoming.pane.filter(|p| self.panes.contains_key(p));
        let workspace: Option<WorkspaceId> =
            pane.as_ref().and_then(|p| self.panes.get(p)).map(|p| p.workspace.clone());
        let stored = StoredNotification {
            record: NotificationRecord {
                id: NotificationId::new().to_string(),
                pane_id: pane.as_ref().map(ToString::to_string),
                workspace_id: workspace.as_ref().map(ToString::to_string),
                title: if title.is_empty() { "Berth".to_owned() } else { title },
                body,
                severity: incoming.severity,
                source: incoming.source,
                created_at: now_ms(),
                read_at: None,
            },
            kitty_id: incoming.kitty_id,
            report_activation: incoming.report_activation,
            actions: incoming.actions,
        };
        // The user is looking at this pane: nothing to draw attention to, nothing for the
        // desktop unless the program asked for it always.
        let attended = pane.as_ref().is_some_and(|p| self.window_view.attends(p));
        let to_desktop = self.desktop_policy.shows(
            incoming.show,
            pane.as_ref().is_some_and(|p| self.window_view.sees(p)),
            pane.as_ref().is_some_and(|p| self.window_view.visible.contains(p)),
        );
        let mut stored = stored;
        if attended {
            stored.read_at = Some(stored.created_at);
        } else if let Some(pane) = pane.as_ref().and_then(|p| self.panes.get_mut(p)) {
            if attention_rank(incoming.attention) > attention_rank(pane.attention) {
                pane.attention = incoming.attention;
            }
        }
        let id = stored.id.clone();
        self.bus.publish(Event::Notification(Box::new(stored.record.clone())));
        if let Some(pane) = &pane {
            self.bus.publish(Event::PaneChanged { pane: pane.clone() });
        }
        let server_shows = self.desktop.as_ref().is_some_and(DesktopHandle::delivers);
        if to_desktop && !server_shows {
            // No desktop here (off, or no notification service answers, as on a remote machine
            // reached over ssh): the attached window whose view this is shows it on its own.
            if let Some(window) = self.window_reporter() {
                self.bus.publish(Event::NotificationDesktop {
                    notification: Box::new(stored.record.clone()),
                    window,
                });
            }
        }
        if let Some(desktop) = self.desktop.as_ref().filter(|_| to_desktop && server_shows) {
            let replaces = stored.kitty_id.as_ref().and_then(|k| {
                self.notifications
                    .iter()
                    .filter(|n| n.kitty_id.as_ref() == Some(k) && n.pane_id == stored.pane_id)
                    .last()
                    .map(|n| n.id.clone())
            });
            desktop.show(&stored, replaces);
        }
        self.notifications.push(stored);
        self.touch();
        id
    }

    /// Whether this server shows notifications on a desktop itself (its desktop sink runs and
    /// the notification service answered its last attempt): the embedded window shows a toast
    /// for a new one when it does not.
    pub fn desktop_delivers(&self) -> bool {
        self.desktop.as_ref().is_some_and(DesktopHandle::delivers)
    }

    /// Withdraws a kitty notification (`p=close`).
    pub(crate) fn close_kitty_notification(&mut self, pane: &PaneId, kitty_id: &str) {
        for id in self.notifications.remove_kitty(pane, kitty_id) {
            if let Some(desktop) = &self.desktop {
                desktop.close(&id);
            }
        }
    }

    /// The user clicked a desktop notification: focus its pane, and tell the program when it
    /// asked (kitty `a=report`). The event carries the server's activation token to the window.
    pub(crate) fn activate_notification(&mut self, key: &str, token: Option<String>) {
        let Some(n) = self.notifications.get(key).cloned() else { return };
        let Some(pane) = n.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok()) else { return };
        if self.panes.contains_key(&pane) {
            let _ = self.execute(crate::commands::Command::PaneFocus { pane: pane.clone() });
            self.bus.publish(Event::NotificationActivated {
                id: key.to_owned(),
                pane: pane.clone(),
                activation_token: token,
            });
        }
        if n.report_activation {
            if let Some(pty) = self.panes.get(&pane).and_then(|p| p.pty.as_ref()) {
                let _ = pty.send(&berth_engine::notify::activation_report(n.kitty_id.as_deref()));
            }
        }
    }

    /// Clears a pane's attention and marks its notifications read (the user looked at it).
    pub fn clear_attention(&mut self, pane: &PaneId) -> usize {
        let changed = self.notifications.mark_read(&[], Some(pane));
        if let Some(p) = self.panes.get_mut(pane) {
            p.attention = Attention::None;
            p.last_seen_at = now_ms();
        }
        self.bus.publish(Event::PaneChanged { pane: pane.clone() });
        changed
    }
}

/// Orders attention levels so a notification never lowers one.
pub fn attention_rank(a: Attention) -> u8 {
    match a {
        Attention::None => 0,
        Attention::Unread => 1,
        Attention::NeedsInput => 2,
        Attention::Error => 3,
    }
}
