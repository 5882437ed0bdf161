//! The inbox in the window: keeping its list of notifications current, opening it (its key,
//! a click on the tab bar's affordance), routing keys and presses to it while it is open, a
//! click on a toast, and its scene and the toast's in the frame.
//!
//! It owns nothing: the inbox's state is `inbox.rs`'s, the server is reached only through the
//! window's one command path (`App::exec_result`, `App::apply`), and the two facts the inbox
//! needs of the server link (how many events came, whether a desktop shows notifications)
//! are `App`'s narrow accessors. It must not draw.

use std::time::Instant;

use berth_server::commands::{Command, Reply};
use berth_server::view::StateView;
use winit::event::MouseButton;
use winit::keyboard::Key;

use super::app::App;
use crate::config::keymap::Action;
use crate::render::{InboxScene, ToastScene};

/// The inbox's hint row.
const HINT: &str = "↑↓ move · Enter jump · r read · a all read · y/l/n answer · Esc close";

impl App {
    /// Lists the notifications again when the server's events say something changed since the
    /// last listing; a new one that no desktop shows becomes a toast.
    pub(super) fn refresh_inbox(&mut self) {
        let now = Instant::now();
        for note in self.take_window_toasts() {
            tracing::debug!(id = %note.id, "a toast for a notification no desktop here showed");
            self.inbox.show_toast(&note, 0, now);
        }
        let events = self.server_events();
        if !self.inbox.stale(events) {
            return;
        }
        let listed = self.exec_result(Command::NotificationsList { unread_only: false });
        match listed {
            Ok(Reply::Notifications(notes)) => {
                let toast = self.toasts_for_new_notifications();
                self.inbox.listed(events, notes, toast, now);
            }
            Ok(_) => tracing::warn!("notifications.list answered with another reply"),
            Err(e) => tracing::debug!(error = %e, "cannot list the notifications"),
        }
    }

    /// The inbox's key (or a click on the tab bar's affordance): opens or closes it.
    pub(super) fn toggle_inbox(&mut self) {
        self.refresh_inbox();
        let intents = self.inbox.toggle();
        self.apply(intents);
    }

    /// A key while the inbox is open.
    pub(super) fn inbox_key(&mut self, key: Key<&str>, text: Option<&str>, action: Option<Action>) {
        let list = self.state_view();
        let intents = self.inbox.key(&list, key, text, action, self.input.mods);
        self.apply_inbox(intents);
    }

    /// A button press while the inbox is open (it takes every press), or on a toast; whether
    /// the inbox or the toast took it.
    pub(super) fn inbox_press(&mut self, button: MouseButton) -> bool {
        let Some(((col, row), _)) = self.pointer_window_cell() else { return false };
        let (col, row) = (col.max(0) as u16, row.max(0) as u16);
        let grid = (self.grid.cols, self.grid.rows);
        if self.inbox.is_open() {
            let list = self.state_view();
            let intents = self.inbox.press(&list, grid, (col, row), button);
            self.apply_inbox(intents);
            return true;
        }
        if button != MouseButton::Left || self.toast_scene().is_none() {
            return false;
        }
        match self.inbox.toast_press(grid, (col, row), Instant::now()) {
            Some(intents) => {
                self.apply_inbox(intents);
                true
            }
            None => false,
        }
    }

    /// Carries out the inbox's intents; what it marked read is listed again.
    fn apply_inbox(&mut self, intents: Vec<super::intent::Intent>) {
        let changes = intents.iter().any(|i| matches!(i, super::intent::Intent::Store(_)));
        self.apply(intents);
        if changes {
            self.inbox.forget_listing();
        }
    }

    /// The inbox as the frame draws it, while open.
    pub(super) fn inbox_scene(&self, list: &StateView) -> Option<InboxScene> {
        self.inbox.layout(list, self.grid.cols, self.grid.rows, HINT).map(|l| l.scene)
    }

    /// The toast as the frame draws it, while one shows (not over the switcher or the review
    /// view: it waits under them, as the cards do).
    pub(super) fn toast_scene(&self) -> Option<ToastScene> {
        if self.switcher.is_open() || self.review.is_some() {
            return None;
        }
        let key = self.config.keymap.label_of(Action::Inbox);
        self.inbox.toast_scene(self.grid.cols, self.grid.rows, Instant::now(), key.as_deref())
    }

    /// The tab bar's affordance for the inbox (`2 unread`, `inbox`).
    pub(super) fn inbox_label(&self, list: &StateView) -> String {
        self.inbox.label(list)
    }
}
