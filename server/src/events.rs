//! The event bus: state changes pushed to subscribers through bounded queues.
//!
//! Owns the list of subscribers. Publishing never blocks: a subscriber whose queue is full
//! (it stopped reading) is dropped, and nobody else notices. It must not hold Store state, and
//! it knows no wire: it carries typed events ([`Published`]); a subscriber that writes lines
//! (the socket) brings its own [`Encoder`], and an event's line is made once, by the first
//! subscriber that needs it, and shared by the rest.
//!
//! A socket client's subscription may also have a [`DirectSink`]: while nothing of the
//! connection's is queued or being written, the publishing thread (a PTY reader, for output)
//! writes the event to the socket itself with one non-blocking `send`, saving the wake-up of
//! the connection's task on the keystroke echo path. While the task is writing (an answer, say
//! the answer to the very keystroke that echoes), the event is held in the sink and the task
//! writes it before it goes idle, without being woken. Everything else goes through the queue,
//! in order.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::mpsc;

use crate::event::Event;

/// How many events may wait for one subscriber. When its queue is full the subscriber is
/// dropped: a client that stops reading must not make the server buffer without bound.
pub const SUBSCRIBER_QUEUE: usize = 4096;

/// How an event becomes one line of text (newline included): the wire's encoder, given by the
/// subscriber that writes lines. Every such subscriber of a bus gives the same one (the
/// socket's), since the line is made once and shared.
pub type Encoder = fn(&Event) -> String;

/// One published event, shared by every subscriber: the typed event, and its line, made once
/// by the first subscriber that needs it.
#[derive(Debug)]
pub struct Published {
    event: Event,
    line: OnceLock<Arc<str>>,
}

impl Published {
    /// The event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The event as a line, by `encode` (made once, the first time any subscriber asks).
    pub fn line(&self, encode: Encoder) -> Arc<str> {
        self.line.get_or_init(|| encode(&self.event).into()).clone()
    }
}

/// What a subscriber receives: an event, or the rest of an event's line of which a direct
/// write sent only the start (it must follow before anything else).
#[derive(Debug, Clone)]
pub enum Delivery {
    /// A published event.
    Event(Arc<Published>),
    /// The rest of a line.
    Rest(Arc<str>),
}

impl Delivery {
    /// The text to write, by `encode`.
    pub fn line(&self, encode: Encoder) -> Arc<str> {
        match self {
            Self::Event(published) => published.line(encode),
            Self::Rest(rest) => rest.clone(),
        }
    }

    /// The event, unless this is the rest of a line.
    pub fn event(&self) -> Option<&Event> {
        match self {
            Self::Event(published) => Some(published.event()),
            Self::Rest(_) => None,
        }
    }
}

/// A subscriber: its queue, and the socket it may be written to directly.
struct Subscriber {
    tx: mpsc::Sender<Delivery>,
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
/// (`busy`) and nothing is queued (`queued`) or held (`held`), so lines stay whole and in order.
/// The task marks itself busy around each of its writes and counts queued events down as it
/// writes them; events published while it is busy and nothing is queued are held, and the task
/// takes them (staying busy) when it ends its write, so `held` and `queued` are never both
/// non-empty and the order is: queue, then held, then direct.
pub struct DirectSink {
    state: Mutex<SinkState>,
    /// How this connection's events become lines.
    encode: Encoder,
}

struct SinkState {
    /// The duplicate of the connection's socket; closed (`None`) when the connection ends,
    /// so the client sees the end at once and no write reaches a finished connection.
    fd: Option<OwnedFd>,
    /// The connection's task is writing (an answer or a queued event).
    busy: bool,
    /// Events in the queue, not yet written by the task.
    queued: usize,
    /// Events published while the task was busy with nothing queued: it writes them before
    /// going idle (no wake-up). At most [`SUBSCRIBER_QUEUE`], as the queue.
    held: VecDeque<Delivery>,
}

impl DirectSink {
    /// A sink writing to `fd` (a duplicate of the connection's socket) the lines `encode`
    /// makes. It starts busy: the task clears that with its next write, the answer to the
    /// subscription, so no event overtakes that answer.
    pub fn new(fd: OwnedFd, encode: Encoder) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(SinkState {
                fd: Some(fd),
                busy: true,
                queued: 0,
                held: VecDeque::new(),
            }),
            encode,
        })
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

    /// The task finished a write; `event` says it was a queued event. Returns the events held
    /// meanwhile, which the task must write next (it stays busy); with none held, the task is
    /// idle again.
    pub fn end_write(&self, event: bool) -> VecDeque<Delivery> {
        let mut state = self.state();
        if event {
            state.queued = state.queued.saturating_sub(1);
        }
        let held = std::mem::take(&mut state.held);
        state.busy = !held.is_empty();
        held
    }

    /// Delivers `event` directly when the socket is idle and takes its line whole; holds it
    /// for the task while the task is writing and nothing is queued; else queues it on `tx`
    /// (what is left of its line, should a send take only part).
    fn deliver(
        &self,
        event: &Arc<Published>,
        tx: &mpsc::Sender<Delivery>,
    ) -> Result<(), mpsc::error::TrySendError<Delivery>> {
        let mut state = self.state();
        let whole = Delivery::Event(event.clone());
        if state.busy && state.queued == 0 && state.fd.is_some() {
            if state.held.len() >= SUBSCRIBER_QUEUE {
                return Err(mpsc::error::TrySendError::Full(whole));
            }
            state.held.push_back(whole);
            return Ok(());
        }
        let mut rest = whole;
        let idle = !state.busy && state.queued == 0;
        if let Some(fd) = state.fd.as_ref().filter(|_| idle) {
            let line = event.line(self.encode);
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
                Ok(n) if n > 0 => rest = Delivery::Rest(Arc::from(&line[n..])),
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
    pub fn subscribe(&self) -> mpsc::Receiver<Delivery> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        self.lock().push(Subscriber { tx, sink: None });
        rx
    }

    /// A new subscriber whose events may be written to `sink` directly; the queue carries
    /// the rest.
    pub fn subscribe_direct(&self, sink: Arc<DirectSink>) -> mpsc::Receiver<Delivery> {
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
        let event = Arc::new(Published { event, line: OnceLock::new() });
        subs.retain(|sub| {
            let sent = match &sub.sink {
                Some(sink) => sink.deliver(&event, &sub.tx),
                None => sub.tx.try_send(Delivery::Event(event.clone())),
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

    /// A line encoder of the tests' own (the bus knows no wire): the event's debug form.
    fn encode(event: &Event) -> String {
        format!("{event:?}\n")
    }

    #[test]
    fn an_event_is_encoded_once_for_every_subscriber_and_not_at_all_for_none() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static ENCODED: AtomicUsize = AtomicUsize::new(0);
        fn counting(event: &Event) -> String {
            ENCODED.fetch_add(1, Ordering::SeqCst);
            encode(event)
        }
        let bus = EventBus::default();
        let (mut a, mut b) = (bus.subscribe(), bus.subscribe());
        bus.publish(word("once"));
        let (a, b) = (a.try_recv().expect("a gets it"), b.try_recv().expect("b gets it"));
        assert!(matches!(a.event(), Some(Event::SubscriberDropped { reason }) if reason == "once"));
        assert_eq!(ENCODED.load(Ordering::SeqCst), 0, "typed subscribers need no line");
        assert_eq!(a.line(counting), b.line(counting));
        assert!(a.line(counting).contains("once"));
        assert_eq!(ENCODED.load(Ordering::SeqCst), 1, "one line, shared");
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
        let sink = DirectSink::new(OwnedFd::from(ours), encode);
        let mut rx = bus.subscribe_direct(sink.clone());
        // A new sink is busy until the task has answered the subscription: held for the task,
        // which takes it as it ends that write (no wake-up through the queue).
        bus.publish(word("first"));
        assert_eq!(pending(&mut client), "");
        assert!(rx.try_recv().is_err(), "held, not queued");
        let held = sink.end_write(false);
        assert_eq!(held.len(), 1);
        assert!(held[0].line(encode).contains("first"));
        assert!(sink.end_write(false).is_empty(), "idle again");
        // Idle: written directly, nothing queued.
        bus.publish(word("direct"));
        assert!(pending(&mut client).contains("\"direct\""));
        assert!(rx.try_recv().is_err());
        // The task is writing: held in order, handed over when its write ends, and held again
        // while it writes those.
        assert_eq!(sink.begin_write(), 0);
        bus.publish(word("held-1"));
        bus.publish(word("held-2"));
        assert_eq!(pending(&mut client), "", "nothing overtakes the task's write");
        let held = sink.end_write(false);
        let text = |d: &Delivery| d.line(encode).to_string();
        assert!(text(&held[0]).contains("held-1") && text(&held[1]).contains("held-2"), "{held:?}");
        bus.publish(word("held-3"));
        let held = sink.end_write(false);
        assert!(held.len() == 1 && text(&held[0]).contains("held-3"), "{held:?}");
        assert!(sink.end_write(false).is_empty());
        assert!(rx.try_recv().is_err(), "none of them went through the queue");
        bus.publish(word("idle-again"));
        assert!(pending(&mut client).contains("idle-again"));
        // After the connection ended, nothing is written to it.
        sink.close();
        bus.publish(word("after-close"));
        assert_eq!(pending(&mut client), "");
    }

    #[test]
    fn an_event_that_would_block_is_queued_and_later_ones_queue_behind_it() {
        use std::io::Write as _;
        let (ours, client) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        let mut filler = ours.try_clone().expect("a second descriptor");
        filler.set_nonblocking(true).expect("non-blocking");
        let bus = EventBus::default();
        let sink = DirectSink::new(OwnedFd::from(ours), encode);
        let mut rx = bus.subscribe_direct(sink.clone());
        assert!(sink.end_write(false).is_empty());
        // The client does not read: its socket fills up.
        let junk = [b'x'; 4096];
        while filler.write(&junk).is_ok() {}
        bus.publish(word("q1"));
        // The task writes q1; meanwhile events queue behind it (not held: q1 is queued).
        assert_eq!(sink.begin_write(), 1);
        bus.publish(word("q2"));
        assert!(sink.end_write(true).is_empty());
        bus.publish(word("q3"));
        for want in ["q1", "q2", "q3"] {
            assert!(rx.try_recv().expect("queued").line(encode).contains(want), "{want}");
        }
        drop(client.shutdown(std::net::Shutdown::Both));
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
