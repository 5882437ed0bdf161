//! The monitor against a fake logind on a private `dbus-daemon`; never the host's buses.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::testing::{FakeLogind, FakeLogindOptions};
use super::*;
use crate::dbus::testing::PrivateBus;
use crate::dbus::{switch_on, Backoff};

/// The longest any one condition is waited for.
const DEADLINE: Duration = Duration::from_secs(5);

/// Short waits, so that retry tests finish quickly.
const FAST: Backoff =
    Backoff { initial: Duration::from_millis(50), max: Duration::from_millis(200) };

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
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A save that counts its calls and records how many inhibitors the fake saw held during each.
#[derive(Clone, Default)]
struct RecordingSave {
    calls: Arc<AtomicUsize>,
    held_during_save: Arc<Mutex<Vec<usize>>>,
}

impl RecordingSave {
    fn callback(&self, fake: Option<Arc<FakeLogind>>) -> ShutdownSave {
        let this = self.clone();
        Arc::new(move || {
            let held = fake.as_ref().map_or(0, |fake| fake.held_inhibitors());
            this.held_during_save.lock().unwrap().push(held);
            this.calls.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// A private bus with a fake logind and a monitor watching it.
struct Harness {
    // Dropped in this order: the monitor first, the bus last.
    monitor: LogindMonitor,
    save: RecordingSave,
    fake: Arc<FakeLogind>,
    _runtime: tokio::runtime::Runtime,
    bus: PrivateBus,
}

impl Harness {
    fn start(options: FakeLogindOptions, backoff: Backoff) -> Harness {
        let bus = PrivateBus::start().expect("a private dbus-daemon");
        let fake =
            Arc::new(FakeLogind::start_with(bus.address(), options).expect("the fake logind"));
        let runtime = runtime();
        let save = RecordingSave::default();
        let config = MonitorConfig::for_address(bus.address()).with_backoff(backoff);
        let monitor = {
            let _entered = runtime.enter();
            LogindMonitor::spawn_with(config, save.callback(Some(fake.clone())))
        };
        Harness { monitor, save, fake, _runtime: runtime, bus }
    }

    fn wait_for_inhibitors(&self, held: usize) {
        wait_for(&format!("{held} held inhibitor(s)"), || {
            self.fake.held_inhibitors() == held
                && self.monitor.status().inhibitor_held == (held > 0)
        });
    }
}

#[test]
fn takes_a_delay_inhibitor_for_shutdown_on_connect() {
    let h = Harness::start(FakeLogindOptions::default(), Backoff::default());
    h.wait_for_inhibitors(1);
    let inhibitors = h.fake.inhibitors();
    assert_eq!(inhibitors.len(), 1);
    assert_eq!(
        (
            inhibitors[0].what.as_str(),
            inhibitors[0].who.as_str(),
            inhibitors[0].why.as_str(),
            inhibitors[0].mode.as_str()
        ),
        ("shutdown", "Berth", "Saving terminal sessions", "delay")
    );
    let status = h.monitor.status();
    assert!(status.enabled && status.connected, "{status:?}");
    assert_eq!(status.shutdown_saves, 0);
}

#[test]
fn prepare_for_shutdown_saves_once_then_releases_the_inhibitor() {
    let h = Harness::start(FakeLogindOptions::default(), Backoff::default());
    h.wait_for_inhibitors(1);

    h.fake.prepare_for_shutdown(true).expect("send PrepareForShutdown(true)");
    wait_for("the inhibitor's release", || h.fake.held_inhibitors() == 0);

    assert_eq!(h.save.calls(), 1, "one save per shutdown");
    assert_eq!(
        *h.save.held_during_save.lock().unwrap(),
        vec![1],
        "the inhibitor was held while saving"
    );
    let status = h.monitor.status();
    assert_eq!(status.shutdown_saves, 1);
    assert!(!status.inhibitor_held, "{status:?}");
}

#[test]
fn cancelled_shutdown_takes_a_new_inhibitor_and_a_repeated_signal_saves_once() {
    let h = Harness::start(FakeLogindOptions::default(), Backoff::default());
    h.wait_for_inhibitors(1);

    h.fake.prepare_for_shutdown(true).expect("send PrepareForShutdown(true)");
    h.fake.prepare_for_shutdown(true).expect("send PrepareForShutdown(true) again");
    h.fake.prepare_for_shutdown(false).expect("send PrepareForShutdown(false)");
    // Signals are handled in order, so once the new inhibitor is held both `true`s were seen.
    wait_for("a second inhibitor", || h.fake.inhibitors().len() == 2);
    h.wait_for_inhibitors(1);

    let inhibitors = h.fake.inhibitors();
    assert!(inhibitors[0].released && !inhibitors[1].released, "{inhibitors:?}");
    assert_eq!(h.save.calls(), 1, "the repeated PrepareForShutdown(true) saved again");

    // The next shutdown saves again.
    h.fake.prepare_for_shutdown(true).expect("send PrepareForShutdown(true)");
    wait_for("the second save", || h.monitor.status().shutdown_saves == 2);
    h.wait_for_inhibitors(0);
    assert_eq!(*h.save.held_during_save.lock().unwrap(), vec![1, 1]);
}

#[test]
fn a_shutdown_already_under_way_saves_at_once_without_an_inhibitor() {
    let options =
        FakeLogindOptions { preparing_for_shutdown: true, ..FakeLogindOptions::default() };
    let h = Harness::start(options, Backoff::default());
    wait_for("the save", || h.monitor.status().shutdown_saves == 1);
    assert_eq!(h.save.calls(), 1);
    assert_eq!(
        h.fake.inhibit_calls(),
        0,
        "logind refuses inhibitors during a shutdown; none is asked for"
    );

    h.fake.prepare_for_shutdown(false).expect("send PrepareForShutdown(false)");
    h.wait_for_inhibitors(1);
    assert_eq!(h.save.calls(), 1);
}

#[test]
fn no_bus_never_blocks_and_retries_with_backoff() {
    let runtime = runtime();
    let save = RecordingSave::default();
    let started = Instant::now();
    let monitor = {
        let _entered = runtime.enter();
        LogindMonitor::spawn_with(
            MonitorConfig::for_address("unix:path=/nonexistent/berth-test/bus"),
            save.callback(None),
        )
    };
    assert!(started.elapsed() < Duration::from_millis(100), "spawn took {:?}", started.elapsed());
    wait_for("a failed attempt", || monitor.status().last_error.is_some());

    // With the default waits (1 s, then 2 s) there are two attempts in the first 2.5 s; a spinning
    // retry would make hundreds.
    std::thread::sleep(Duration::from_millis(2500).saturating_sub(started.elapsed()));
    let status = monitor.status();
    assert!(status.enabled && !status.connected && !status.inhibitor_held, "{status:?}");
    assert!(
        (2..=3).contains(&status.connect_attempts),
        "{} attempts in 2.5 s",
        status.connect_attempts
    );
    assert_eq!(save.calls(), 0);
}

#[test]
fn refused_inhibitor_is_retried_with_backoff_and_shutdown_still_saves() {
    let options = FakeLogindOptions { refuse_inhibit: true, ..FakeLogindOptions::default() };
    let h = Harness::start(options, FAST);
    wait_for("three refused Inhibit calls", || h.fake.inhibit_calls() >= 3);
    let status = h.monitor.status();
    assert!(status.connected && !status.inhibitor_held, "{status:?}");
    assert!(status.last_error.as_deref().is_some_and(|e| e.contains("AccessDenied")), "{status:?}");

    // Waits of 50, 100, 200, 200… ms: at most 7 calls in the first second, not a spin.
    let window = Instant::now();
    let before = h.fake.inhibit_calls();
    std::thread::sleep(Duration::from_secs(1));
    let during = h.fake.inhibit_calls() - before;
    assert!((2..=7).contains(&during), "{during} Inhibit calls in {:?}", window.elapsed());

    // Decision: a monitor without an inhibitor still saves on PrepareForShutdown(true).
    h.fake.prepare_for_shutdown(true).expect("send PrepareForShutdown(true)");
    wait_for("the save", || h.save.calls() == 1);
    let calls_after_save = h.fake.inhibit_calls();

    // No retries while the shutdown runs; after a cancel it asks again, and now gets one.
    h.fake.set_refuse_inhibit(false);
    h.fake.prepare_for_shutdown(false).expect("send PrepareForShutdown(false)");
    h.wait_for_inhibitors(1);
    assert_eq!(h.fake.inhibit_calls(), calls_after_save + 1, "one Inhibit call after the cancel");
    assert_eq!(h.monitor.status().last_error, None);
}

#[test]
fn logind_that_starts_later_is_picked_up() {
    let bus = PrivateBus::start().expect("a private dbus-daemon");
    let runtime = runtime();
    let save = RecordingSave::default();
    let monitor = {
        let _entered = runtime.enter();
        LogindMonitor::spawn_with(
            MonitorConfig::for_address(bus.address()).with_backoff(FAST),
            save.callback(None),
        )
    };
    wait_for("a connection and a failed Inhibit", || {
        let status = monitor.status();
        status.connected && status.inhibit_attempts >= 2
    });

    let fake = FakeLogind::start(bus.address()).expect("the fake logind");
    wait_for("the inhibitor", || fake.held_inhibitors() == 1 && monitor.status().inhibitor_held);
    fake.prepare_for_shutdown(true).expect("send PrepareForShutdown(true)");
    wait_for("the save and the release", || save.calls() == 1 && fake.held_inhibitors() == 0);
    drop(monitor);
}

#[test]
fn bus_that_goes_away_is_noticed_and_retried() {
    let mut h = Harness::start(FakeLogindOptions::default(), FAST);
    h.wait_for_inhibitors(1);
    let attempts = h.monitor.status().connect_attempts;

    h.bus.kill();
    wait_for("the disconnect and new attempts", || {
        let status = h.monitor.status();
        !status.connected && !status.inhibitor_held && status.connect_attempts >= attempts + 2
    });
    assert_eq!(h.save.calls(), 0, "losing the bus is not a shutdown");
}

#[test]
fn disabled_monitor_does_nothing() {
    let bus = PrivateBus::start().expect("a private dbus-daemon");
    let fake = FakeLogind::start(bus.address()).expect("the fake logind");
    let runtime = runtime();
    let save = RecordingSave::default();
    let config = MonitorConfig { enabled: false, ..MonitorConfig::for_address(bus.address()) };
    let monitor = {
        let _entered = runtime.enter();
        LogindMonitor::spawn_with(config, save.callback(None))
    };
    assert!(monitor.task.is_none(), "no task is started");
    assert_eq!(monitor.status(), MonitorStatus::default());
    assert_eq!(fake.inhibit_calls(), 0);
}

#[test]
fn berth_logind_0_is_the_only_off_switch() {
    use std::ffi::OsStr;
    for (value, on) in
        [(None, true), (Some("0"), false), (Some("1"), true), (Some(""), true), (Some("no"), true)]
    {
        assert_eq!(switch_on(value.map(OsStr::new)), on, "BERTH_LOGIND={value:?}");
    }
    assert!(!MonitorConfig::disabled().enabled);
}

#[test]
fn spawn_outside_a_runtime_does_not_panic() {
    let monitor = LogindMonitor::spawn_with(
        MonitorConfig::for_address("unix:path=/nonexistent"),
        RecordingSave::default().callback(None),
    );
    let status = monitor.status();
    assert!(!status.enabled && status.last_error.is_some(), "{status:?}");
}
