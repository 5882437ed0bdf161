//! The event sink alacritty's `Term` reports to: it keeps the events Berth acts on until the
//! terminal collects them. A leaf of `terminal/`: the Term's type, `Term<TermListener>`, is
//! named by every file there, so it must not import any of them.

use std::sync::{Arc, Mutex, PoisonError};

use alacritty_terminal::event::{Event, EventListener};

/// The event sink alacritty's `Term` reports to.
///
/// It keeps the events Berth acts on until [`PaneTerminal::feed`](super::PaneTerminal::feed)
/// collects them. It is shared between the `Term` and the `PaneTerminal` and is `Send + Sync`.
#[derive(Debug, Clone, Default)]
pub struct TermListener {
    queue: Arc<Mutex<Vec<Event>>>,
}

impl TermListener {
    /// Removes and returns the queued events.
    pub(super) fn drain(&self) -> Vec<Event> {
        // A panic while holding the lock cannot leave the Vec half-changed, so a poisoned
        // lock is still safe to use.
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Queues a reply to the program, in order with the Term's own replies (the handler's
    /// answers to the queries alacritty answers incompletely, `super::answers`).
    pub(super) fn reply(&self, text: String) {
        self.send_event(Event::PtyWrite(text));
    }
}

impl EventListener for TermListener {
    fn send_event(&self, event: Event) {
        // Only what `PaneTerminal::collect_events` uses is kept (colour queries never reach the
        // Term: `terminal/colors.rs` answers them from the scanner). OSC 52 clipboard requests are
        // off in the Term's config until Berth has a clipboard event, and CSI 14 t (size in
        // pixels) is left unanswered until the window knows its cell size.
        if matches!(event, Event::Title(_) | Event::ResetTitle | Event::PtyWrite(_) | Event::Bell) {
            self.queue.lock().unwrap_or_else(PoisonError::into_inner).push(event);
        }
    }
}
