//! The notifier against a fake notification server on a private `dbus-daemon`; never the host's
//! buses. Every wait polls with a deadline.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::testing::{FakeNotificationServer, NotifyCall, CLOSED_DISMISSED};
use super::*;
use crate::dbus::testing::PrivateBus;
use crate::dbus::{switch_on, Backoff};

/// The longest any one condition is waited for.
const DEADLINE: Duration = Duration::from_secs(10);

/// Short waits, so that retry tests finish quickly.
const FAST: Backoff =
    Backoff { initial: Duration::from_millis(20), max: Duration::from_millis(80) };

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a test runtime")
}

/// Polls `condition` until it holds, failing the test with `what` after [`DEADLINE`].
fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn note(key: &str, title: &str, body: &str) -> DesktopNote {
    DesktopNote {
        key: key.to_owned(),
        title: title.to_owned(),
        body: body.to_owned(),
        urgency: Urgency::Normal,
        replaces_key: None,
        actions: Vec::new(),
    }
}

/// A key `on_activate` was called with, and its activation token.
type Activation = (String, Option<String>);

/// Records the keys (and activation tokens) `on_activate` is called with.
#[derive(Clone, Default)]
struct Activations(Arc<Mutex<Vec<Activation>>>);

impl Activations {
    fn callback(&self) -> OnActivate {
        let keys = self.0.clone();
        Arc::new(move |key, token| keys.lock().unwrap().push((key, token)))
    }

    fn keys(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(key, _)| key.clone()).collect()
    }

    fn tokens(&self) -> Vec<Option<String>> {
        self.0.lock().unwrap().iter().map(|(_, token)| token.clone()).collect()
    }
}

/// A private bus, a fake notification server on it and a notifier sending to it.
struct Harness {
    // Dropped in this order: the notifier first, the bus last.
    notifier: DesktopNotifier,
    activations: Activations,
    fake: FakeNotificationServer,
    _runtime: tokio::runtime::Runtime,
    _bus: PrivateBus,
}

impl Harness {
    fn start() -> Harness {
        Harness::start_with_capabilities(testing::DEFAULT_CAPABILITIES)
    }

    fn start_with_capabilities(capabilities: &[&str]) -> Harness {
        let bus = PrivateBus::start().expect("a private dbus-daemon");
        let fake = FakeNotificationServer::start_with_capabilities(bus.address(), capabilities)
            .expect("the fake notification server");
        let runtime = runtime();
        let activations = Activations::default();
        let config = DesktopConfig::for_address(bus.address()).with_backoff(FAST);
        let notifier = {
            let _entered = runtime.enter();
            DesktopNotifier::spawn(config, activations.callback())
        };
        Harness { notifier, activations, fake, _runtime: runtime, _bus: bus }
    }

    /// Waits for the `n`th `Notify` call (1-based) and returns it.
    fn nth_call(&self, n: usize) -> NotifyCall {
        wait_for(&format!("Notify call {n}"), || self.fake.call_count() >= n);
        self.fake.calls()[n - 1].clone()
    }

    /// Waits until the notifier has heard back about `sent` notifications.
    fn wait_sent(&self, sent: u64) {
        wait_for(&format!("{sent} sent"), || self.notifier.status().sent >= sent);
    }
}

#[test]
fn a_note_arrives_with_title_body_app_name_and_urgency() {
    let harness = Harness::start();
    harness.notifier.notify(DesktopNote {
        urgency: Urgency::Critical,
        ..note("notif_1", "build done", "cargo test passed")
    });
    let call = harness.nth_call(1);
    assert_eq!(call.app_name, APP_NAME);
    assert_eq!(call.summary, "build done");
    assert_eq!(call.body, "cargo test passed");
    assert_eq!(call.urgency, Some(2));
    assert_eq!(call.replaces_id, 0);
    assert_eq!(call.actions, vec!["default".to_owned(), "Show".to_owned()]);
    assert_eq!(call.expire_timeout, -1);
    harness.wait_sent(1);
    let status = harness.notifier.status();
    assert!(status.enabled && status.service_available, "{status:?}");
    assert_eq!((status.failed, status.dropped, status.tracked), (0, 0, 1), "{status:?}");
}

#[test]
fn each_urgency_is_sent_as_its_hint_byte() {
    let harness = Harness::start();
    for (n, urgency) in [Urgency::Low, Urgency::Normal, Urgency::Critical].into_iter().enumerate() {
        harness.notifier.notify(DesktopNote { urgency, ..note(&format!("notif_{n}"), "t", "b") });
        assert_eq!(harness.nth_call(n + 1).urgency, Some(urgency.hint_value()));
    }
}

#[test]
fn all_notes_go_over_one_connection() {
    // Regression guard for the reason notify-rust is not used: clicks are only sent to the
    // connection that showed the notification, so every note must go over the one we listen on.
    let harness = Harness::start();
    for n in 0..5 {
        harness.notifier.notify(note(&format!("notif_{n}"), "t", "b"));
    }
    harness.nth_call(5);
    assert_eq!(harness.fake.senders().len(), 1);
}

#[test]
fn a_replacement_reuses_the_server_id() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "downloading", "10%"));
    let first = harness.nth_call(1);
    harness.wait_sent(1);
    harness.notifier.notify(DesktopNote {
        replaces_key: Some("notif_a".to_owned()),
        ..note("notif_b", "downloading", "90%")
    });
    let second = harness.nth_call(2);
    assert_eq!(second.replaces_id, first.id);
    assert_eq!(second.id, first.id);
    assert_eq!(second.body, "90%");
    harness.wait_sent(2);
    assert_eq!(harness.notifier.status().tracked, 1, "the replaced key is forgotten");
}

#[test]
fn clicking_a_notification_activates_its_key() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "one", ""));
    harness.notifier.notify(note("notif_b", "two", ""));
    let second = harness.nth_call(2);
    harness.wait_sent(2);
    harness.fake.invoke_action(second.id, DEFAULT_ACTION).expect("a click");
    wait_for("the activation", || !harness.activations.keys().is_empty());
    assert_eq!(harness.activations.keys(), vec!["notif_b".to_owned()]);
    // The click also closed it, so the notifier forgets its id.
    wait_for("the closed notification to be forgotten", || harness.notifier.status().tracked == 1);
}

/// The server's `ActivationToken` for a notification travels with its click (the window raises
/// itself with it); a token for another notification does not.
#[test]
fn a_click_carries_the_servers_activation_token() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "one", ""));
    harness.notifier.notify(note("notif_b", "two", ""));
    let (first, second) = (harness.nth_call(1), harness.nth_call(2));
    harness.wait_sent(2);
    harness
        .fake
        .invoke_action_with_token(second.id, DEFAULT_ACTION, Some("token-of-b"))
        .expect("a click with a token");
    wait_for("the activation", || !harness.activations.keys().is_empty());
    assert_eq!(harness.activations.tokens(), vec![Some("token-of-b".to_owned())]);
    harness.fake.invoke_action(first.id, DEFAULT_ACTION).expect("a click without one");
    wait_for("the second activation", || harness.activations.keys().len() == 2);
    assert_eq!(harness.activations.keys(), vec!["notif_b".to_owned(), "notif_a".to_owned()]);
    assert_eq!(harness.activations.tokens()[1], None, "b's token is not reused for a");
}

/// A token past `MAX_TOKEN_BYTES` is dropped: the click still activates, without a token.
#[test]
fn an_oversized_activation_token_is_dropped_and_the_click_still_counts() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "one", ""));
    let call = harness.nth_call(1);
    harness.wait_sent(1);
    let huge = "t".repeat(MAX_TOKEN_BYTES + 1);
    harness
        .fake
        .invoke_action_with_token(call.id, DEFAULT_ACTION, Some(&huge))
        .expect("a click with a huge token");
    wait_for("the activation", || !harness.activations.keys().is_empty());
    assert_eq!(harness.activations.keys(), vec!["notif_a".to_owned()]);
    assert_eq!(harness.activations.tokens(), vec![None]);
}

#[test]
fn clicking_a_replaced_notification_activates_the_newest_key() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "old", ""));
    harness.wait_sent(1);
    harness.notifier.notify(DesktopNote {
        replaces_key: Some("notif_a".to_owned()),
        ..note("notif_b", "new", "")
    });
    let call = harness.nth_call(2);
    harness.wait_sent(2);
    harness.fake.invoke_action(call.id, DEFAULT_ACTION).expect("a click");
    wait_for("the activation", || !harness.activations.keys().is_empty());
    assert_eq!(harness.activations.keys(), vec!["notif_b".to_owned()]);
}

#[test]
fn other_actions_do_not_activate() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "one", ""));
    let call = harness.nth_call(1);
    harness.wait_sent(1);
    harness.fake.invoke_action(call.id, "snooze").expect("an action");
    // NotificationClosed follows ActionInvoked on the same connection, so once the id is
    // forgotten the action has been handled too.
    wait_for("the notification to be forgotten", || harness.notifier.status().tracked == 0);
    assert!(harness.activations.keys().is_empty());
}

/// A decision's notification carries its options as actions; invoking one reports the
/// notification's key and the action, and is not a click.
#[test]
fn a_notes_own_actions_are_offered_and_reported() {
    let bus = PrivateBus::start().expect("a private dbus-daemon");
    let fake = FakeNotificationServer::start(bus.address()).expect("the fake notification server");
    let runtime = runtime();
    let activations = Activations::default();
    let acted: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let on_action: OnAction = {
        let acted = acted.clone();
        Arc::new(move |key, action| acted.lock().unwrap().push((key, action)))
    };
    let config = DesktopConfig::for_address(bus.address()).with_backoff(FAST);
    let notifier = {
        let _entered = runtime.enter();
        DesktopNotifier::spawn_with_actions(config, activations.callback(), Some(on_action))
    };
    notifier.notify(DesktopNote {
        actions: vec![("allow".into(), "Allow once".into()), ("deny".into(), "Deny".into())],
        ..note("notif_d", "Claude asks to run Bash", "Bash: ls")
    });
    wait_for("the Notify call", || fake.call_count() >= 1);
    let call = fake.calls()[0].clone();
    assert_eq!(call.actions, ["default", "Show", "allow", "Allow once", "deny", "Deny"]);
    wait_for("sent", || notifier.status().sent >= 1);
    fake.invoke_action(call.id, "deny").expect("an action");
    wait_for("the action", || !acted.lock().unwrap().is_empty());
    assert_eq!(acted.lock().unwrap().clone(), [("notif_d".to_owned(), "deny".to_owned())]);
    assert!(activations.keys().is_empty(), "an action is not a click");
    drop(notifier);
}

#[test]
fn close_withdraws_a_shown_notification() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "one", ""));
    let call = harness.nth_call(1);
    harness.wait_sent(1);
    harness.notifier.close("notif_a");
    wait_for("CloseNotification", || !harness.fake.close_calls().is_empty());
    assert_eq!(harness.fake.close_calls(), vec![call.id]);
    assert!(!harness.fake.is_open(call.id));
    assert_eq!(harness.notifier.status().tracked, 0);
}

#[test]
fn close_of_a_notification_the_server_closed_sends_nothing() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", "one", ""));
    let call = harness.nth_call(1);
    harness.wait_sent(1);
    harness.fake.close_from_server(call.id, CLOSED_DISMISSED).expect("a dismissal");
    wait_for("the id to be forgotten", || harness.notifier.status().tracked == 0);
    harness.notifier.close("notif_a");
    harness.notifier.close("notif_never_shown");
    // A later note proves the closes were handled before it.
    harness.notifier.notify(note("notif_b", "two", ""));
    harness.nth_call(2);
    assert!(harness.fake.close_calls().is_empty());
}

#[test]
fn bodies_are_escaped_only_for_servers_that_read_markup() {
    let text = "a < b && <b>c</b>";
    let plain = Harness::start();
    plain.notifier.notify(note("notif_a", "t", text));
    assert_eq!(plain.nth_call(1).body, text);

    let markup = Harness::start_with_capabilities(&["actions", "body", "body-markup"]);
    markup.notifier.notify(note("notif_a", "t <i>", text));
    let call = markup.nth_call(1);
    assert_eq!(call.body, "a &lt; b &amp;&amp; &lt;b&gt;c&lt;/b&gt;");
    assert_eq!(call.summary, "t <i>", "the summary is never markup");
}

#[test]
fn long_titles_and_bodies_are_bounded() {
    let harness = Harness::start();
    harness.notifier.notify(note("notif_a", &"t".repeat(10_000), &"é".repeat(10_000)));
    let call = harness.nth_call(1);
    assert_eq!(call.summary.chars().count(), TITLE_MAX_CHARS);
    assert_eq!(call.body.chars().count(), BODY_MAX_CHARS);
    assert!(call.body.ends_with('…'));
}

/// A tracing subscriber that counts warnings from this module, for "logged once" checks.
struct WarnCounter(Arc<AtomicUsize>);

impl tracing::Subscriber for WarnCounter {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let metadata = event.metadata();
        if *metadata.level() == tracing::Level::WARN && metadata.target().ends_with("::desktop") {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Runs `test` on a current-thread runtime with a [`WarnCounter`] installed on this thread (so
/// the notifier's task, which runs here too, is counted), and returns the count.
fn count_warnings(test: impl std::future::Future<Output = ()>) -> usize {
    let warnings = Arc::new(AtomicUsize::new(0));
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a test runtime");
    tracing::subscriber::with_default(WarnCounter(warnings.clone()), || runtime.block_on(test));
    warnings.load(Ordering::SeqCst)
}

/// Polls `condition` on the async side until it holds, failing with `what` after [`DEADLINE`].
async fn wait_for_async(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn no_bus_at_all_is_not_fatal_and_is_warned_once() {
    let warnings = count_warnings(async {
        let dir = std::env::temp_dir().join(format!("berth-no-bus-{}", std::process::id()));
        let config = DesktopConfig::for_address(format!("unix:path={}/bus", dir.display()))
            .with_backoff(FAST);
        let notifier = DesktopNotifier::spawn(config, Activations::default().callback());
        let started = Instant::now();
        for n in 0..100 {
            notifier.notify(note(&format!("notif_{n}"), "t", "b"));
        }
        assert!(started.elapsed() < Duration::from_secs(1), "notify must not wait for the bus");
        wait_for_async("the queue to drain", || {
            let status = notifier.status();
            status.failed + status.dropped == 100 && status.queued == 0
        })
        .await;
        // Later notes retry after the backoff, lazily, and fail again quietly.
        let attempts = notifier.status().connect_attempts;
        for n in 0..20 {
            tokio::time::sleep(FAST.max).await;
            notifier.notify(note(&format!("late_{n}"), "t", "b"));
        }
        wait_for_async("a retry", || notifier.status().connect_attempts > attempts).await;
        let status = notifier.status();
        assert!(status.enabled && !status.service_available, "{status:?}");
        assert_eq!(status.sent, 0);
        assert!(
            status.last_error.as_deref().is_some_and(|e| e.contains("session bus")),
            "{status:?}"
        );
    });
    assert_eq!(warnings, 1, "a missing bus is logged once at warn level");
}

#[test]
fn a_bus_without_a_notification_service_is_warned_once_and_retried_later() {
    let bus = PrivateBus::start().expect("a private dbus-daemon");
    let address = bus.address().to_owned();
    let mut fake = None;
    let warnings = count_warnings(async {
        let config = DesktopConfig::for_address(address.as_str()).with_backoff(FAST);
        let notifier = DesktopNotifier::spawn(config, Activations::default().callback());
        for n in 0..5 {
            notifier.notify(note(&format!("notif_{n}"), "t", "b"));
        }
        wait_for_async("the notes to fail", || notifier.status().failed == 5).await;
        assert!(!notifier.status().service_available);

        let server = FakeNotificationServer::start(&address).expect("the fake");
        let deadline = Instant::now() + DEADLINE;
        let mut n = 0;
        while server.call_count() == 0 {
            assert!(Instant::now() < deadline, "the notifier never found the service");
            notifier.notify(note(&format!("retry_{n}"), "t", "b"));
            n += 1;
            tokio::time::sleep(FAST.max).await;
        }
        wait_for_async("the service to count as available", || notifier.status().service_available)
            .await;
        fake = Some(server);
    });
    assert_eq!(warnings, 1, "a missing service is logged once at warn level");
    assert!(fake.is_some_and(|fake| fake.calls()[0].app_name == APP_NAME));
}

#[test]
fn a_flood_from_four_threads_returns_quickly_and_stays_bounded() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = 2_500;
    let harness = Harness::start();
    let max_queued = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let notifier = harness.notifier.clone();
            let max_queued = max_queued.clone();
            scope.spawn(move || {
                for n in 0..PER_THREAD {
                    notifier.notify(note(&format!("notif_{thread}_{n}"), "flood", "x"));
                    if n % 100 == 0 {
                        max_queued.fetch_max(notifier.status().queued, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(2), "10 000 notify calls took {elapsed:?}");
    let total = (THREADS * PER_THREAD) as u64;
    wait_for("every note to be sent or dropped", || {
        let status = harness.notifier.status();
        status.sent + status.failed + status.dropped == total && status.queued == 0
    });
    let status = harness.notifier.status();
    assert!(max_queued.load(Ordering::SeqCst) <= QUEUE_CAPACITY);
    assert!(status.dropped > 0, "{status:?}");
    assert_eq!(status.failed, 0, "{status:?}");
    assert!(status.tracked <= TRACKED_CAPACITY, "{status:?}");
    assert_eq!(harness.fake.call_count() as u64, status.sent);
}

#[test]
fn a_disabled_notifier_does_nothing() {
    let notifier =
        DesktopNotifier::spawn(DesktopConfig::disabled(), Activations::default().callback());
    notifier.notify(note("notif_a", "t", "b"));
    notifier.close("notif_a");
    assert_eq!(notifier.status(), DesktopStatus::default());
}

#[test]
fn a_notifier_outside_a_runtime_does_nothing() {
    let notifier = DesktopNotifier::spawn(
        DesktopConfig::for_address("unix:path=/nonexistent"),
        Activations::default().callback(),
    );
    notifier.notify(note("notif_a", "t", "b"));
    assert!(!notifier.status().enabled);
    assert_eq!(notifier.status().queued, 0);
}

#[test]
fn the_switch_is_off_only_for_zero() {
    use std::ffi::OsStr;
    let cases: &[(Option<&str>, bool)] =
        &[(None, true), (Some("1"), true), (Some(""), true), (Some("0"), false)];
    for &(value, on) in cases {
        assert_eq!(switch_on(value.map(OsStr::new)), on, "{ENV_SWITCH}={value:?}");
    }
}

#[test]
fn bound_cuts_at_characters_and_marks_the_cut() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 3, ""),
        ("abc", 3, "abc"),
        ("abcd", 3, "ab…"),
        ("ééééé", 4, "ééé…"),
        ("日本語テキスト", 3, "日本…"),
        ("ab", 0, ""),
    ];
    for &(text, max, expected) in cases {
        assert_eq!(bound(text, max), expected, "bound({text:?}, {max})");
    }
}

#[test]
fn escape_markup_escapes_the_three_markup_characters() {
    assert_eq!(escape_markup("a<b>&c\"'"), "a&lt;b&gt;&amp;c\"'");
}

#[test]
fn tracked_ids_stay_bounded_and_two_way() {
    let mut ids = TrackedIds::new(3);
    for n in 1..=5u32 {
        ids.insert(format!("k{n}"), n);
    }
    assert_eq!(ids.len(), 3);
    assert_eq!(ids.id_of("k1"), None, "the oldest is forgotten first");
    assert_eq!(ids.key_of(5), Some("k5"));
    // A replacement keeps the id and moves it to the new key.
    ids.insert("k6".to_owned(), 4);
    assert_eq!((ids.id_of("k4"), ids.key_of(4)), (None, Some("k6")));
    assert_eq!(ids.forget_id(4).as_deref(), Some("k6"));
    assert_eq!(ids.forget_key("k5"), Some(5));
    assert_eq!(ids.len(), 1);
    // Forgetting keeps the order honest: two more inserts fit without evicting k3.
    ids.insert("k7".to_owned(), 7);
    ids.insert("k8".to_owned(), 8);
    assert_eq!(ids.id_of("k3"), Some(3));
}

/// Runs `steps` against an empty queue and returns what is left and the dropped count.
fn queue_after(steps: &[Command]) -> (Vec<Command>, u64) {
    let mut queue = CommandQueue::default();
    for step in steps {
        match step.clone() {
            Command::Show(note) => queue.push_show(note),
            Command::Close(key) => queue.push_close(&key),
        }
    }
    (queue.commands.into_iter().collect(), queue.dropped)
}

fn show(key: &str, replaces: Option<&str>) -> Command {
    Command::Show(DesktopNote { replaces_key: replaces.map(str::to_owned), ..note(key, "t", "") })
}

fn close(key: &str) -> Command {
    Command::Close(key.to_owned())
}

#[test]
fn the_queue_coalesces_what_was_never_sent() {
    let cases: &[(&str, Vec<Command>, Vec<Command>, u64)] = &[
        (
            "plain notes queue in order",
            vec![show("a", None), show("b", None)],
            vec![show("a", None), show("b", None)],
            0,
        ),
        (
            "a waiting note is superseded by its replacement, which takes over its target",
            vec![show("b", Some("a")), show("c", Some("b"))],
            vec![show("c", Some("a"))],
            1,
        ),
        ("closing a waiting note drops it", vec![show("a", None), close("a")], vec![], 1),
        (
            "closing a waiting replacement closes what it replaced",
            vec![show("b", Some("a")), close("b")],
            vec![close("a")],
            1,
        ),
        ("closing a sent note queues a close", vec![close("a")], vec![close("a")], 0),
    ];
    for (what, steps, expected, dropped) in cases {
        assert_eq!(queue_after(steps), (expected.clone(), *dropped), "{what}");
    }
}

#[test]
fn a_full_queue_drops_the_oldest_note_before_any_close() {
    let mut steps = vec![close("x")];
    steps.extend((0..QUEUE_CAPACITY).map(|n| show(&format!("n{n}"), None)));
    let (left, dropped) = queue_after(&steps);
    assert_eq!(left.len(), QUEUE_CAPACITY);
    assert_eq!(dropped, 1);
    assert_eq!(left[0], close("x"), "the close survives");
    assert_eq!(left[1], show("n1", None), "n0, the oldest note, was dropped");
}
