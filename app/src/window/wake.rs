//! Wake-ups that reach the window's event loop from other threads (the server's event bus, the
//! config watcher, the server's UI requests).
//!
//! Owns [`UserEvent`] and the [`Waker`] that coalesces wake-ups until the loop has looked. It
//! must not carry data: the loop reads the Store and its queues itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use winit::event_loop::EventLoopProxy;

/// What other threads send to the event loop: only "look again"; the loop then reads the
/// Store, the screenshot queue and the server's state itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserEvent {
    /// Something changed: pane output, state, or a request for the window.
    Wake,
}

/// Wakes the event loop at most once until it has looked: many events between two frames
/// cost one wake-up and one frame.
#[derive(Clone)]
pub struct Waker {
    proxy: EventLoopProxy<UserEvent>,
    pending: Arc<AtomicBool>,
}

impl Waker {
    pub(super) fn new(proxy: EventLoopProxy<UserEvent>) -> Self {
        Self { proxy, pending: Arc::new(AtomicBool::new(false)) }
    }

    /// Asks the event loop to look again; false once the loop is gone.
    pub fn wake(&self) -> bool {
        if self.pending.swap(true, Ordering::AcqRel) {
            return true;
        }
        self.proxy.send_event(UserEvent::Wake).is_ok()
    }

    /// Called by the event loop as it looks, so the next change wakes it again.
    pub fn clear(&self) {
        self.pending.store(false, Ordering::Release);
    }
}
