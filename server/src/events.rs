//! The event bus: state changes pushed to subscribers through bounded queues.
//!
//! Owns the list of subscribers. Publishing never blocks: a subscriber whose queue is full
//! (it stopped reading) is dropped, and nobody else notices. It must not hold Store state.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;

/// How many events may wait for one subscriber. When its queue is full the subscriber is
/// dropped: a client that stops reading must not make the server buffer without bound.
pub const SUBSCRIBER_QUEUE: usize = 4096;

/// One event, encoded once and shared by every subscriber.
pub type EncodedEvent = Arc<str>;

/// The bus; cheap to clone, usable from any thread.
#[derive(Clone, Default)]
pub struct EventBus {
    subscribers: Arc<Mutex<Vec<mpsc::Sender<EncodedEvent>>>>,
}

impl EventBus {
    /// A new subscriber's receiving end.
    pub fn subscribe(&self) -> mpsc::Receiver<EncodedEvent> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        self.lock().push(tx);
        rx
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::Sender<EncodedEvent>>> {
        // The vector stays valid even if a publisher panicked while holding the lock.
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends an event (an object with a `type` field) to every subscriber; drops the ones that
    /// are full or gone.
    pub fn publish(&self, event: Value) {
        let mut subs = self.lock();
        if subs.is_empty() {
            return;
        }
        let line: EncodedEvent = crate::protocol::encode_event(&event).into();
        subs.retain(|tx| match tx.try_send(line.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!("dropping an event subscriber that stopped reading");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
    }

    /// How many subscribers are attached.
    pub fn subscriber_count(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stuck_subscriber_is_dropped_and_others_keep_receiving() {
        let bus = EventBus::default();
        let _stuck = bus.subscribe();
        let mut live = bus.subscribe();
        for i in 0..SUBSCRIBER_QUEUE + 10 {
            bus.publish(json!({ "type": "test", "i": i }));
            // The live subscriber drains as it goes.
            assert!(live.try_recv().is_ok());
        }
        assert_eq!(bus.subscriber_count(), 1);
    }

    #[test]
    fn closed_subscribers_are_forgotten() {
        let bus = EventBus::default();
        drop(bus.subscribe());
        bus.publish(json!({ "type": "test" }));
        assert_eq!(bus.subscriber_count(), 0);
    }
}
