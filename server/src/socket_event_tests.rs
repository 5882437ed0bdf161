//! Events through real sockets and real connection tasks: the order of one subscriber's events
//! when direct writes, held events and the queue mix, and a subscriber that stops reading.

use std::io::{BufRead as _, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;

/// A served socket with an empty Store; returns its path, its bus and the serving task.
fn serve(dir: &Path) -> (PathBuf, EventBus, tokio::task::JoinHandle<io::Result<()>>) {
    let socket = BoundSocket::bind(&dir.join("run").join("berth.sock")).expect("bind");
    let bus = EventBus::default();
    let config = crate::store::StoreConfig {
        socket_path: socket.path().to_path_buf(),
        home: dir.to_path_buf(),
        shell: "/bin/sh".into(),
    };
    let store = Store::new(config, bus.clone(), crate::pane::OutputPulse::default());
    let services = Services {
        store: Arc::new(Mutex::new(store)),
        bus: bus.clone(),
        persistence: None,
        ui: None,
        windows: Default::default(),
    };
    let path = socket.path().to_path_buf();
    let server = tokio::spawn(async move { socket.serve(services).await });
    (path, bus, server)
}

/// The numbered test event (`GitChanged` carries a free string).
fn numbered(i: usize) -> Event {
    Event::GitChanged { dir: format!("seq-{i}"), git: None }
}

/// The number of a numbered event's line, if it is one.
fn number_of(line: &str) -> Option<usize> {
    let v: Value = serde_json::from_str(line).ok()?;
    v["params"]["dir"].as_str()?.strip_prefix("seq-")?.parse().ok()
}

/// A blocking client: connects, subscribes and waits for the answer.
fn subscriber(path: &Path) -> (StdUnixStream, io::Lines<io::BufReader<StdUnixStream>>) {
    let mut conn = StdUnixStream::connect(path).expect("connect");
    conn.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    let mut lines = io::BufReader::new(conn.try_clone().expect("clone")).lines();
    conn.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"events.subscribe\"}\n")
        .expect("subscribe");
    let answer = lines.next().expect("an answer").expect("read");
    assert!(answer.contains("\"subscribed\":true"), "{answer}");
    (conn, lines)
}

/// Waits (bounded) until the bus has `n` subscribers.
fn wait_for_subscribers(bus: &EventBus, n: usize) {
    let until = Instant::now() + Duration::from_secs(20);
    while bus.subscriber_count() != n {
        assert!(Instant::now() < until, "{} subscribers, not {n}", bus.subscriber_count());
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Publishes `count` numbered events from a thread of its own (as a PTY reader publishes),
/// never more than `ahead` beyond what the client has `received`; panics if the client stops
/// reading for 20 s.
fn paced_publisher(
    bus: &EventBus,
    received: &Arc<AtomicUsize>,
    count: usize,
    ahead: usize,
) -> std::thread::JoinHandle<()> {
    let (bus, received) = (bus.clone(), received.clone());
    std::thread::spawn(move || {
        for i in 0..count {
            let until = Instant::now() + Duration::from_secs(20);
            while i >= received.load(Ordering::Acquire) + ahead {
                assert!(Instant::now() < until, "the client stopped reading");
                std::thread::yield_now();
            }
            bus.publish(numbered(i));
        }
    })
}

/// Events published from a thread of their own (as a PTY reader publishes) while the client
/// sends requests (answers make the task busy: events are held) and pauses its reading (the
/// socket fills: events are queued) arrive complete and in order, with every answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_stay_in_order_when_direct_writes_held_events_and_the_queue_mix() {
    const EVENTS: usize = 12_000;
    const REQUESTS: usize = 300;
    let dir = tempfile::tempdir().expect("a temp dir");
    let (path, bus, server) = serve(dir.path());
    let client = tokio::task::spawn_blocking(move || {
        let (mut conn, mut lines) = subscriber(&path);
        let received = Arc::new(AtomicUsize::new(0));
        // At most 2,000 ahead of the client: its queue (4,096) never overflows.
        let publisher = paced_publisher(&bus, &received, EVENTS, 2_000);
        let writer = std::thread::spawn(move || {
            for id in 1..=REQUESTS {
                let request =
                    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"server.info\"}}\n");
                conn.write_all(request.as_bytes()).expect("request");
                if id % 10 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            conn
        });
        let (mut next, mut answers) = (0, 0);
        while next < EVENTS || answers < REQUESTS {
            let line = lines.next().expect("a line before the deadline").expect("read");
            if let Some(n) = number_of(&line) {
                assert_eq!(n, next, "events out of order");
                next += 1;
                received.store(next, Ordering::Release);
                // Now and then the client reads slowly, so the socket fills up.
                if next % 3_000 == 0 {
                    std::thread::sleep(Duration::from_millis(30));
                }
            } else {
                assert!(line.contains("\"result\""), "an answer: {line}");
                answers += 1;
            }
        }
        publisher.join().expect("publisher");
        drop(writer.join().expect("writer"));
        assert_eq!(bus.subscriber_count(), 1, "the subscriber was never dropped");
    });
    client.await.expect("the client's checks");
    server.abort();
}

/// A subscriber that never reads is dropped once its queue is full; the publishing thread
/// never waits for it, and another subscriber gets every event in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_stops_reading_stalls_neither_the_publisher_nor_others() {
    const EVENTS: usize = 3 * crate::events::SUBSCRIBER_QUEUE;
    let dir = tempfile::tempdir().expect("a temp dir");
    let (path, bus, server) = serve(dir.path());
    let client = tokio::task::spawn_blocking(move || {
        let (_stuck, _stuck_lines) = subscriber(&path);
        let (_live, mut lines) = subscriber(&path);
        wait_for_subscribers(&bus, 2);
        let received = Arc::new(AtomicUsize::new(0));
        // Paced by the live subscriber only (at most 1,000 ahead of it): the stuck one must
        // not slow the publisher down.
        let publisher = paced_publisher(&bus, &received, EVENTS, 1_000);
        for want in 0..EVENTS {
            let line = lines.next().expect("a line before the deadline").expect("read");
            assert_eq!(number_of(&line), Some(want), "{line}");
            received.store(want + 1, Ordering::Release);
        }
        publisher.join().expect("the publisher finished");
        wait_for_subscribers(&bus, 1);
    });
    client.await.expect("the client's checks");
    server.abort();
}
