//! The event bus: state changes pushed to subscribers through bounded queues.
//!
//! Owns the list of subscribers. Publishing never blocks: a subscriber whose queue is full
//! (it stopped reading) is dropped, and nobody else notices. It must not hold Store state.
//!
//! A socket client's subscription may also have a [`DirectSink`]: while nothing of the
//! connection's is queued or being written, the publishing thread (a PTY reader, for output)
//! writes the event to the socket itself with one non-blocking `send`, saving the wake-up of
//! the connection's task on the keystroke echo path. Everything else goes through the queue,
//! in order.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::event::Event;

/// How many events may wait for one subscriber. When its queue is full the subscriber is
/// dropped: a client that stops reading must not make the server buffer without bound.
pub const SUBSCRIBER_QUEUE: usize = 4096;

/// One event, encoded once and shared by every subscriber.
pub type EncodedEvent = Arc<str>;

/// A subscriber: its queue, and the socket it may be written to directly.
struct Subscriber {
    tx: mpsc::Sender<EncodedEvent>,
    sink: Option<Arc<DirectSink>>,
}

/// The bus; cheap to clone, usable from any thread.
#[derive(Clone, Default)]
pub struct EventBus {
    subscribers: Arc<Mutex<Vec<Subscriber>>>,
}

/// A socket that events may be written to directly, shared by the publishers and the
/// connection's task.
///
/// Invariant: a direct write happens only under `state`'s lock, while the task is not writing
/// (`busy`) and nothing is queued (`queued`), so lines stay whole and in order. The task marks
/// itself busy around each of its writes and counts queued events down as it writes them.
pub struct DirectSink {
    state: Mutex<SinkState>,
}

struct SinkState {
    /// The duplicate of the connection's socket; closed (`None`) when the connection ends,
    /// so the client sees the end at once and no write reaches a finished connection.
    fd: Option<OwnedFd>,
    /// The connection's task is writing (an answer or a queued event).
    busy: bool,
    /// Events in the queue, not yet written by the task.
    queued: usize,
}

impl DirectSink {
    /// A sink writing to `fd` (a duplicate of the connection's socket). It starts busy: the
    /// task clears that with its next write, the answer to the subscription, so no event
    /// overtakes that answer.
    pub fn new(fd: OwnedFd) -> Arc<Self> {
        Arc::new(Self { state: Mutex::new(SinkState { fd: Some(fd), busy: true, queued: 0 }) })
    }

    /// The connection ended: closes the duplicate; events for it are queued (and dropped with
    /// the queue) from now on.
    pub fn close(&self) {
        self.state().fd = None;
    }

    /// The task wrote one queued event while busy with something else (draining the queue
    /// before an answer).
    pub fn event_written(&self) {
        let mut state = self.state();
        state.queued = state.queued.saturating_sub(1);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task starts a write; returns how many events are queued (to be written first).
    pub fn begin_write(&self) -> usize {
        let mut state = self.state();
        state.busy = true;
        state.queued
    }

    /// The task finished a write; `event` says it was a queued event.
    pub fn end_write(&self, event: bool) {
        let mut state = self.state();
        state.busy = false;
        if event {
            state.queued = state.queued.saturating_sub(1);
        }
    }

    /// Delivers `line` directly when the socket is idle and takes it whole, else queues it
    /// on `tx` (what is left of it, should a send take only part).
    fn deliver(
        &self,
        line: &EncodedEvent,
        tx: &mpsc::Sender<EncodedEvent>,
    ) -> Result<(), mpsc::error::TrySendError<EncodedEvent>> {
        let mut state = self.state();
        let mut rest = line.clone();
        let idle = !state.busy && state.queued == 0;
        if let Some(fd) = state.fd.as_ref().filter(|_| idle) {
            let bytes = line.as_bytes();
            // SAFETY: `fd` is an open socket owned by this sink; the buffer is valid for its
            // length; MSG_DONTWAIT never blocks and MSG_NOSIGNAL turns a closed peer into EPIPE.
            let sent = unsafe {
                libc::send(
                    fd.as_raw_fd(),
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            };
            match usize::try_from(sent) {
                Ok(n) if n == bytes.len() => return Ok(()),
                // Part of a line went out: the rest must follow before anything else, and
                // does, since it is queued first and the task writes the queue before answers.
                Ok(n) if n > 0 => rest = Arc::from(&line[n..]),
                // Would block, or the peer is gone: the task finds out as it writes.
                _ => {}
            }
        }
        tx.try_send(rest)?;
        state.queued += 1;
        Ok(())
    }
}

impl EventBus {
    /// A new subscriber's receiving end.
    pub fn subscribe(&self) -> mpsc::Receiver<EncodedEvent> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        self.lock().push(Subscriber { tx, sink: None });
        rx
    }

    /// A new subscriber whose events may be written to `sink` directly; the queue carries
    /// the rest.
    pub fn subscribe_direct(&self, sink: Arc<DirectSink>) -> mpsc::Receiver<EncodedEvent> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        self.lock().push(Subscriber { tx, sink: Some(sink) });
        rx
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Subscriber>> {
        // The vector stays valid even if a publisher panicked while holding the lock.
        self.subscribers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends an event to every subscriber; drops the ones that are full or gone.
    pub fn publish(&self, event: Event) {
        let mut subs = self.lock();
        if subs.is_empty() {
            return;
        }
        let line: EncodedEvent = crate::protocol::encode_event(&event).into();
        subs.retain(|sub| {
            let sent = match &sub.sink {
                Some(sink) => sink.deliver(&line, &sub.tx),
                None => sub.tx.try_send(line.clone()),
            };
            match sent {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!("dropping an event subscriber that stopped reading");
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
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

    /// A test event that carries a word (a dropped-subscriber notice is the one with text).
    fn word(word: &str) -> Event {
        Event::SubscriberDropped { reason: word.to_owned() }
    }

    /// Whatever is waiting on `stream` (non-blocking), as text.
    fn pending(stream: &mut std::os::unix::net::UnixStream) -> String {
        use std::io::Read as _;
        stream.set_nonblocking(true).expect("non-blocking");
        let mut buf = vec![0; 1 << 16];
        match stream.read(&mut buf) {
            Ok(n) => String::from_utf8_lossy(&buf[..n]).into_owned(),
            Err(_) => String::new(),
        }
    }

    #[test]
    fn events_go_straight_to_an_idle_socket_and_queue_behind_the_task_in_order() {
        let (ours, mut client) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        let bus = EventBus::default();
        let sink = DirectSink::new(OwnedFd::from(ours));
        let mut rx = bus.subscribe_direct(sink.clone());
        // A new sink is busy until the task has answered the subscription.
        bus.publish(word("first"));
        assert_eq!(pending(&mut client), "");
        assert!(rx.try_recv().expect("queued").contains("first"));
        sink.begin_write();
        sink.end_write(true);
        // Idle: written directly, nothing queued.
        bus.publish(word("direct"));
        assert!(pending(&mut client).contains("\"direct\""));
        assert!(rx.try_recv().is_err());
        // The task is writing: queued; and while one is queued, later events queue too.
        assert_eq!(sink.begin_write(), 0);
        bus.publish(word("while-busy"));
        sink.end_write(false);
        bus.publish(word("behind"));
        assert_eq!(pending(&mut client), "", "nothing overtakes the queue");
        assert!(rx.try_recv().expect("queued").contains("while-busy"));
        assert!(rx.try_recv().expect("queued").contains("behind"));
        sink.begin_write();
        sink.end_write(true);
        sink.begin_write();
        sink.end_write(true);
        bus.publish(word("idle-again"));
        assert!(pending(&mut client).contains("idle-again"));
        // After the connection ended, nothing is written to it.
        sink.close();
        bus.publish(word("after-close"));
        assert_eq!(pending(&mut client), "");
    }

    #[test]
    fn a_stuck_subscriber_is_dropped_and_others_keep_receiving() {
        let bus = EventBus::default();
        let _stuck = bus.subscribe();
        let mut live = bus.subscribe();
        for i in 0..SUBSCRIBER_QUEUE + 10 {
            bus.publish(word(&format!("test {i}")));
            // The live subscriber drains as it goes.
            assert!(live.try_recv().is_ok());
        }
        assert_eq!(bus.subscriber_count(), 1);
    }

    #[test]
    fn closed_subscribers_are_forgotten() {
        let bus = EventBus::default();
        drop(bus.subscribe());
        bus.publish(word("test"));
        assert_eq!(bus.subscriber_count(), 0);
    }
}
