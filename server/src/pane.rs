//! The live side of one pane: its terminal, its PTY, and what the reader thread learns.
//!
//! Owns the glue between a PTY's reader thread and the rest of the server: feeding output into
//! the pane's terminal, writing terminal replies back, noting titles, cwd and the exit, and
//! telling the output pulse that something changed. It must not touch the Store's maps; the
//! Store reads what this module records.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use alacritty_terminal::sync::FairMutex;
use berth_engine::ids::PaneId;
use berth_engine::model::Lifecycle;
use berth_engine::pty::{ExitInfo, PtyHandler, PtyInput};
use berth_engine::terminal::{PaneTerminal, TermSize, TerminalEvent};
use tokio::sync::Notify;

use crate::agents::turns::{LifecycleSource, TurnLog};
use crate::control_gate::{ControlGate, YieldRation};
use crate::event::Event;
use crate::events::EventBus;
use crate::gitctx::cache::GitKicker;
use crate::notifications::reader::PaneNotifications;
use crate::notifications::NotificationInbox;
use crate::persist::stamp::now_ms;

/// A title a program set (OSC 0/2), made safe to show and to save: no C0 or C1 controls,
/// DEL or bidi overrides, one line, at most `MAX_TITLE_CHARS` characters (the notifications'
/// sanitising).
pub fn clean_title(title: &str) -> String {
    berth_engine::notify::sanitize(title, berth_engine::notify::MAX_TITLE_CHARS)
}

/// What the reader thread learns about a pane, read by the Store when it answers.
#[derive(Debug, Clone)]
pub struct PaneMeta {
    /// The title the program set (OSC 0/2), if any.
    pub program_title: Option<String>,
    /// The cwd the program reported (OSC 7), if any.
    pub reported_cwd: Option<String>,
    /// The exit, once the child has ended.
    pub exit: Option<ExitInfo>,
    /// The lifecycle.
    pub lifecycle: Lifecycle,
    /// When output last arrived, ms since the epoch.
    pub last_activity_ms: u64,
    /// The progress the program reports (OSC 9;4): state 1–4 and percent.
    pub progress: Option<(u8, Option<u8>)>,
    /// With shell integration (OSC 133): whether the shell is at its prompt.
    pub at_prompt: Option<bool>,
    /// The lifecycle last reported for the pane and since when (ms since the epoch): stamped
    /// where a change arrives (an agent's hook, a shell's prompt mark) and otherwise when the
    /// Store first reads a new one (a plain program's foreground job).
    pub lifecycle_since: Option<(Lifecycle, u64)>,
    /// Its turns: start and end, the agent's last message, how the lifecycle was learned.
    pub turns: TurnLog,
}

/// The parts of a pane shared between the Store and its reader thread.
pub struct PaneShared {
    /// The pane's id.
    pub id: PaneId,
    /// The terminal; locked briefly by the reader to feed it and by readers of text.
    pub term: FairMutex<PaneTerminal>,
    meta: Mutex<PaneMeta>,
    /// Bumped on every output chunk, so a save knows which tails changed.
    content_gen: AtomicU64,
    /// The pid of the pane's process (0 until it is started), for its reader's cwd checks.
    pid: AtomicI32,
    /// The terminal's size (columns << 16 | rows), kept beside it so that a listing never waits
    /// for the terminal's lock, which a flooding reader holds most of the time (issue 28).
    size: AtomicU32,
    /// Woken (every waiter) when the lifecycle or the turn log changes: `pane.wait` and
    /// `pane.submit` wait on it.
    pub changed: Notify,
}

/// A closed pane whose grid had this many cells (about 2.4 MB plain) hands freed memory back.
const TRIM_CELLS: usize = 100_000;

impl Drop for PaneShared {
    /// A closed pane's terminal (its history: megabytes after a flood) is freed first, then
    /// the freed pages go back to the system when it held a big grid, so closing panes brings
    /// the server's size down (a small one, a tombstone's, costs no trim).
    fn drop(&mut self) {
        let dormant = PaneTerminal::dormant(TermSize { cols: 2, rows: 1 }, 0);
        let term = std::mem::replace(&mut *self.term.lock(), dormant);
        let big = term.grid_cells().allocated_rows * usize::from(term.size().cols) >= TRIM_CELLS;
        drop(term);
        if big {
            crate::rlimit::return_freed_memory();
        }
    }
}

impl PaneShared {
    /// A new pane's shared state around a terminal.
    pub fn new(id: PaneId, term: PaneTerminal) -> Arc<Self> {
        let size = AtomicU32::new(pack_size(term.size()));
        Arc::new(Self {
            id,
            size,
            term: FairMutex::new(term),
            meta: Mutex::new(PaneMeta {
                program_title: None,
                reported_cwd: None,
                exit: None,
                lifecycle: Lifecycle::Starting,
                last_activity_ms: now_ms(),
                progress: None,
                at_prompt: None,
                lifecycle_since: None,
                turns: TurnLog::default(),
            }),
            content_gen: AtomicU64::new(0),
            pid: AtomicI32::new(0),
            changed: Notify::new(),
        })
    }

    /// The terminal's size, without its lock.
    pub fn size(&self) -> TermSize {
        let packed = self.size.load(Ordering::Acquire);
        TermSize { cols: (packed >> 16) as u16, rows: (packed & 0xffff) as u16 }
    }

    /// Resizes the terminal (under its lock) and notes the size it took; false when it had
    /// that size already.
    pub fn resize(&self, size: TermSize) -> bool {
        let mut term = self.term.lock();
        if term.size() == size {
            return false;
        }
        term.resize(size);
        self.size.store(pack_size(term.size()), Ordering::Release);
        true
    }

    /// Records the pid of the pane's (new) process.
    pub fn set_pid(&self, pid: i32) {
        self.pid.store(pid, Ordering::Release);
    }

    /// The cwd the pane's program is in: the one it reported (OSC 7), else its process's.
    fn current_cwd(&self) -> Option<String> {
        if let Some(cwd) = self.meta().reported_cwd.clone() {
            return Some(cwd);
        }
        let pid = self.pid.load(Ordering::Acquire);
        let cwd = (pid > 0).then(|| berth_engine::procfs::cwd(pid)).flatten()?;
        Some(cwd.display().to_string())
    }

    /// How many output chunks the terminal has taken.
    pub fn content_gen(&self) -> u64 {
        self.content_gen.load(Ordering::Acquire)
    }

    /// Sets the lifecycle as `source` learned it (Berth's interrupt; hooks go through
    /// [`PaneShared::note_hook`]), noting the turn it starts or ends.
    pub fn set_lifecycle(&self, lifecycle: Lifecycle, source: LifecycleSource) {
        {
            let mut meta = self.meta();
            Self::change_lifecycle(&mut meta, lifecycle, source, None);
        }
        self.changed.notify_waiters();
    }

    /// Records one hook event of the pane's agent: its hooks are wired; `prompt_ack` says it
    /// acknowledged a prompt; the lifecycle it reports (if any) with the agent's last message.
    pub fn note_hook(
        &self,
        lifecycle: Option<Lifecycle>,
        message: Option<String>,
        prompt_ack: bool,
    ) {
        {
            let mut meta = self.meta();
            meta.turns.hook_events += 1;
            if prompt_ack {
                meta.turns.prompt_acks += 1;
            }
            match lifecycle {
                Some(lifecycle) => {
                    Self::change_lifecycle(&mut meta, lifecycle, LifecycleSource::Hook, message)
                }
                // A message without a lifecycle still belongs to the last turn.
                None if message.is_some() => {
                    let (lifecycle, now) = (meta.lifecycle, now_ms());
                    meta.turns.note(lifecycle, LifecycleSource::Hook, now, message);
                }
                None => {}
            }
        }
        self.changed.notify_waiters();
    }

    fn change_lifecycle(
        meta: &mut PaneMeta,
        lifecycle: Lifecycle,
        source: LifecycleSource,
        message: Option<String>,
    ) {
        if meta.exit.is_some() {
            return;
        }
        let now = now_ms();
        if meta.lifecycle != lifecycle {
            meta.lifecycle_since = Some((lifecycle, now));
        }
        meta.lifecycle = lifecycle;
        meta.turns.note(lifecycle, source, now, message);
    }

    /// Since when (ms since the epoch) the pane has been in `lifecycle`, as the Store
    /// computed it now; a lifecycle not seen before starts now.
    pub fn lifecycle_since(&self, lifecycle: Lifecycle) -> u64 {
        let mut meta = self.meta();
        match meta.lifecycle_since {
            Some((seen, at)) if seen == lifecycle => at,
            _ => {
                let at = now_ms();
                meta.lifecycle_since = Some((lifecycle, at));
                at
            }
        }
    }

    /// Forgets a previous exit before the pane's program is started again.
    pub fn reset_exit(&self) {
        let mut meta = self.meta();
        meta.exit = None;
        meta.lifecycle = Lifecycle::Starting;
        meta.turns.restart();
    }

    /// The metadata, locked.
    pub fn meta(&self) -> MutexGuard<'_, PaneMeta> {
        // The metadata stays consistent field by field even if a holder panicked.
        self.meta.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn pack_size(size: TermSize) -> u32 {
    u32::from(size.cols) << 16 | u32::from(size.rows)
}

/// Coalesces `pane.output` events, so a flood of output cannot flood subscribers.
///
/// The first [`OutputPulse::BURST`] outputs of a pane in an [`OutputPulse::INTERVAL`] are
/// published at once by the pane's reader ([`OutputPulse::output`]: a keystroke's echo reaches
/// clients without waiting, even when typing fast); later output in that interval only marks
/// the pane, and the pulse task publishes one event per marked pane per interval. So a pane
/// yields at most `BURST + 1` events per interval, and the last output is always followed by
/// an event.
#[derive(Clone, Default)]
pub struct OutputPulse {
    inner: Arc<PulseInner>,
}

#[derive(Default)]
struct PulseInner {
    dirty: Mutex<HashSet<PaneId>>,
    wake: Notify,
}

impl OutputPulse {
    /// The shortest time between two output events of the same pane.
    pub const INTERVAL: Duration = Duration::from_millis(16);

    /// How many output events of one pane are published at once within an interval.
    pub const BURST: u32 = 4;

    /// Reports new output of `pane`: publishes its event now while the pane's `window` (kept
    /// by the caller) has published fewer than [`Self::BURST`] events in its interval, else
    /// marks it for the pulse task.
    pub fn output(&self, bus: &EventBus, pane: &PaneId, window: &mut BurstWindow, now: Instant) {
        match window.start {
            Some(start) if now.saturating_duration_since(start) < Self::INTERVAL => {}
            _ => *window = BurstWindow { start: Some(now), sent: 0 },
        }
        if window.sent < Self::BURST {
            window.sent += 1;
            bus.publish(output_event(pane));
        } else {
            self.mark(pane);
        }
    }

    /// Notes that a pane has new output, to be published within an interval.
    pub fn mark(&self, pane: &PaneId) {
        let mut dirty = self.inner.dirty.lock().unwrap_or_else(|p| p.into_inner());
        if !dirty.contains(pane) {
            dirty.insert(pane.clone());
        }
        drop(dirty);
        self.inner.wake.notify_one();
    }

    /// Publishes the marked panes forever; run it on the server's runtime.
    pub async fn run(self, bus: EventBus) {
        loop {
            self.inner.wake.notified().await;
            tokio::time::sleep(Self::INTERVAL).await;
            let dirty: Vec<PaneId> = {
                let mut set = self.inner.dirty.lock().unwrap_or_else(|p| p.into_inner());
                set.drain().collect()
            };
            for pane in dirty {
                bus.publish(output_event(&pane));
            }
        }
    }
}

/// The immediate `pane.output` events of one pane in the current interval (see
/// [`OutputPulse::output`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct BurstWindow {
    start: Option<Instant>,
    sent: u32,
}

/// The `pane.output` event of a pane.
fn output_event(pane: &PaneId) -> Event {
    Event::PaneOutput { pane: pane.clone() }
}

/// A pane's cwd as its reader last saw it, for the git watcher: looked at (one `readlink`,
/// never the Store's lock) on output at most once per [`CwdCheck::EVERY`], and once more when
/// the output stops, so a shell's `cd` (no OSC 7) is seen by the prompt it prints after.
/// A change kicks the watcher ([`GitKicker::dirs_changed`]).
struct CwdCheck {
    kick: GitKicker,
    last: Option<String>,
    checked_at: Option<Instant>,
    /// Output came since the last look.
    pending: bool,
}

impl CwdCheck {
    /// The shortest time between two looks while a pane prints.
    const EVERY: Duration = Duration::from_millis(100);

    fn new(kick: GitKicker) -> Self {
        Self { kick, last: None, checked_at: None, pending: false }
    }

    /// Output arrived (`reported`: it set the cwd with OSC 7).
    fn on_output(&mut self, shared: &PaneShared, now: Instant, reported: bool) {
        match self.checked_at {
            Some(at) if !reported && now.saturating_duration_since(at) < Self::EVERY => {
                self.pending = true;
            }
            _ => self.look(shared, now),
        }
    }

    /// The output stopped for a while: the last look, if output came since.
    fn on_idle(&mut self, shared: &PaneShared, now: Instant) {
        if self.pending {
            self.look(shared, now);
        }
    }

    fn look(&mut self, shared: &PaneShared, now: Instant) {
        self.checked_at = Some(now);
        let Some(cwd) = shared.current_cwd() else {
            // Not started yet (no pid): look again when idle.
            self.pending = true;
            return;
        };
        self.pending = false;
        if self.last.as_deref() != Some(cwd.as_str()) {
            self.last = Some(cwd);
            self.kick.dirs_changed();
        }
    }
}

/// A terminal reply or an OSC notification string, kept in the order the output had them.
enum Ordered {
    Reply(Vec<u8>),
    Osc(u16, Vec<u8>),
}

/// The PTY handler of a pane: runs on the reader thread.
pub struct PaneIo {
    shared: Arc<PaneShared>,
    bus: EventBus,
    pulse: OutputPulse,
    /// Its notification escape codes: parsed, rate-limited, sent to the Store's inbox.
    notifications: PaneNotifications,
    /// This pane's immediate `pane.output` events in the current interval (see [`OutputPulse`]).
    output_window: BurstWindow,
    /// Its cwd, watched for the git context (none in a server without a git watcher).
    cwd: Option<CwdCheck>,
    /// `on_idle` has work: output came since it last ran, or it left some (a synchronized
    /// update's deadline, a notification summary, a cwd look) for a later pause.
    idle_due: bool,
    /// Full reads in a row, and whether this reader gave way to the rest of the server
    /// (see [`FloodPriority`]).
    flood: FloodPriority,
    /// Where a flooding reader gives way to the socket's short requests.
    gate: &'static ControlGate,
}

/// A reader that floods gives way: after [`FloodPriority::FULL_READS`] full reads in a row
/// (256 KiB of output that did not pause) its thread's nice value is raised to
/// [`FloodPriority::NICE`] for good (a thread may not lower it again without privileges), so
/// that within the server's share of the CPU the event loop (`berth ls`, `berth new`, every
/// answer) and the readers of quiet panes (a keystroke's echo) run before fifty `yes`es.
/// Throughput is unchanged on an idle machine: nice only orders threads that compete. Nice 10
/// alone still left the runtime's workers a quarter of the group's CPU beside thirty floods, so
/// a flooding reader also waits at the [`ControlGate`] while a request is being answered.
#[derive(Debug, Default)]
struct FloodPriority {
    full_reads: u32,
    lowered: bool,
    ration: YieldRation,
}

impl FloodPriority {
    /// Full reads in a row after which the reader gives way.
    const FULL_READS: u32 = 64;
    /// The nice value a flooding reader takes.
    const NICE: i32 = 10;
    /// A read at least this long filled the line discipline (4095 bytes).
    const FULL_READ: usize = 4095;

    fn on_read(&mut self, len: usize) {
        if self.lowered {
            return;
        }
        if len < Self::FULL_READ {
            self.full_reads = 0;
            return;
        }
        self.full_reads += 1;
        if self.full_reads >= Self::FULL_READS {
            self.lowered = true;
            // SAFETY: `gettid` has no preconditions; `setpriority` on this thread's own id
            // only changes its nice value (raising it needs no privilege).
            let failed = unsafe {
                let tid = libc::gettid();
                libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, Self::NICE) != 0
            };
            if failed {
                tracing::debug!(error = %std::io::Error::last_os_error(), "could not lower a flooding reader's priority");
            }
        }
    }
}

impl PaneIo {
    /// A handler feeding `shared`'s terminal and sending its notifications to `inbox`.
    pub fn new(
        shared: Arc<PaneShared>,
        bus: EventBus,
        pulse: OutputPulse,
        inbox: NotificationInbox,
    ) -> Self {
        let notifications = PaneNotifications::new(shared.id.clone(), inbox);
        Self {
            shared,
            bus,
            pulse,
            notifications,
            output_window: BurstWindow::default(),
            cwd: None,
            idle_due: true,
            flood: FloodPriority::default(),
            gate: ControlGate::global(),
        }
    }

    /// Gives way at `gate` instead of the process's (tests).
    #[cfg(test)]
    fn with_gate(mut self, gate: &'static ControlGate) -> Self {
        self.gate = gate;
        self
    }

    /// Tells the git watcher through `kick` when the pane's cwd changes.
    pub fn with_git(mut self, kick: GitKicker) -> Self {
        self.cwd = Some(CwdCheck::new(kick));
        self
    }

    /// Parses one OSC 9/99/777 payload (see [`PaneNotifications::handle_osc`]) and notes the
    /// progress it reports.
    fn handle_osc(&mut self, kind: u16, payload: &[u8], replies: &PtyInput, now: Instant) {
        for (state, percent) in self.notifications.handle_osc(kind, payload, replies, now) {
            let progress = (state != 0).then_some((state, percent));
            {
                let mut meta = self.shared.meta();
                // A progress bar redrawn with the same value is no news.
                if meta.progress == progress {
                    continue;
                }
                meta.progress = progress;
            }
            self.bus.publish(Event::PaneProgress { pane: self.shared.id.clone(), state, percent });
        }
    }
}

impl PtyHandler for PaneIo {
    fn on_output(&mut self, bytes: &[u8], replies: &PtyInput) {
        self.idle_due = true;
        self.flood.on_read(bytes.len());
        if self.flood.lowered {
            // A flood gives way to the socket's short requests (`control_gate`).
            self.flood.ration.yield_at(self.gate, Instant::now());
        }
        // A flood's full read parses in its turn (one core stays free of floods,
        // `control_gate`); a short read (an echo, a prompt) never waits for one.
        let turn = (self.flood.lowered && bytes.len() >= FloodPriority::FULL_READ)
            .then(|| self.gate.flood_turn());
        let events = {
            let mut term = self.shared.term.lock();
            // The `pane.output` event goes out before the feed, under the terminal's lock: a
            // keystroke's echo reaches subscribers without waiting for the terminal, and
            // whoever reads the pane on that event takes the lock after the feed.
            self.pulse.output(&self.bus, &self.shared.id, &mut self.output_window, Instant::now());
            term.feed(bytes);
            (term.take_events(), term.take_packed_in_bulk())
        };
        drop(turn);
        let (events, packed_in_bulk) = events;
        if packed_in_bulk {
            // The flood's plain rows were packed and freed: their pages go back (outside the
            // terminal's lock, at most once a second in the process).
            crate::rlimit::return_freed_memory_now_and_then();
        }
        self.shared.content_gen.fetch_add(1, Ordering::AcqRel);
        let mut changed = false;
        let mut reported_cwd = false;
        // Replies and OSC 9/99/777 strings in stream order: a query's answer must follow the
        // answers to the queries before it (a program that sends OSC 99 `p=?` then DA1 takes a
        // DA1 answer that arrives first as "no OSC 99").
        let mut ordered = Vec::new();
        {
            let mut meta = self.shared.meta();
            meta.last_activity_ms = now_ms();
            if meta.lifecycle == Lifecycle::Starting {
                meta.lifecycle = Lifecycle::Idle;
                meta.turns.note(Lifecycle::Idle, LifecycleSource::Process, now_ms(), None);
                changed = true;
            }
            for event in events {
                match event {
                    TerminalEvent::PtyWrite(reply) => ordered.push(Ordered::Reply(reply)),
                    TerminalEvent::Title(title) => {
                        meta.program_title = title.as_deref().map(clean_title);
                        changed = true;
                    }
                    TerminalEvent::Cwd(cwd) => {
                        meta.reported_cwd = Some(cwd);
                        changed = true;
                        reported_cwd = true;
                    }
                    TerminalEvent::Notify { kind, payload } => {
                        ordered.push(Ordered::Osc(kind, payload));
                    }
                    TerminalEvent::PromptMark(mark) => {
                        // Shell integration makes "back at the prompt" exact.
                        let running = matches!(mark, 'C');
                        if meta.at_prompt != Some(!running) {
                            meta.at_prompt = Some(!running);
                            let lifecycle =
                                if running { Lifecycle::Working } else { Lifecycle::Idle };
                            let now = now_ms();
                            meta.lifecycle_since = Some((lifecycle, now));
                            meta.turns.note(lifecycle, LifecycleSource::Osc133, now, None);
                            changed = true;
                        }
                    }
                    TerminalEvent::Bell => {}
                }
            }
        }
        let now = Instant::now();
        for item in ordered {
            match item {
                // A full queue means the child is not reading; its query goes unanswered.
                Ordered::Reply(reply) => {
                    let _ = replies.send(&reply);
                }
                Ordered::Osc(kind, payload) => self.handle_osc(kind, &payload, replies, now),
            }
        }
        self.notifications.flush_suppressed(now);
        if changed {
            self.shared.changed.notify_waiters();
            self.bus.publish(Event::PaneChanged { pane: self.shared.id.clone() });
        }
        if let Some(cwd) = self.cwd.as_mut() {
            cwd.on_output(&self.shared, now, reported_cwd);
        }
    }

    fn on_idle(&mut self, replies: &PtyInput) {
        let now = Instant::now();
        // A synchronized update whose end never came is shown once its deadline passes.
        let (flushed, sync_waits, flood_ended) = {
            let mut term = self.shared.term.lock();
            // The output paused: a flood's history is packed (see `PaneTerminal::settle`).
            let flood_ended = term.settle();
            match term.sync_deadline() {
                Some(deadline) if deadline <= now => {
                    term.flush_sync();
                    (Some(term.take_events()), false, flood_ended)
                }
                deadline => (None, deadline.is_some(), flood_ended),
            }
        };
        if flood_ended {
            // What the flood's plain rows held goes back to the system (outside the lock).
            crate::rlimit::return_freed_memory();
        }
        if let Some(events) = flushed {
            for event in events {
                if let TerminalEvent::PtyWrite(reply) = event {
                    let _ = replies.send(&reply);
                }
            }
            self.pulse.mark(&self.shared.id);
        }
        self.notifications.flush_suppressed(now);
        if let Some(cwd) = self.cwd.as_mut() {
            cwd.on_idle(&self.shared, now);
        }
        self.idle_due = sync_waits
            || self.notifications.summary_pending()
            || self.cwd.as_ref().is_some_and(|cwd| cwd.pending);
    }

    fn wants_idle(&self) -> bool {
        self.idle_due
    }

    fn on_exit(&mut self, exit: ExitInfo) {
        // The pane's directory is its start cwd again (its process is gone).
        if let Some(cwd) = &self.cwd {
            cwd.kick.dirs_changed();
        }
        {
            let mut meta = self.shared.meta();
            meta.exit = Some(exit.clone());
            meta.lifecycle = Lifecycle::Exited;
            meta.turns.note(Lifecycle::Exited, LifecycleSource::Process, now_ms(), None);
        }
        self.shared.changed.notify_waiters();
        tracing::info!(pane = %self.shared.id, code = exit.code, signal = ?exit.signal, "pane exited");
        self.bus.publish(Event::PaneExited {
            pane: self.shared.id.clone(),
            exit_code: exit.code,
            signal: exit.signal,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: every keystroke's echo waited a whole interval for the pulse task; the first
    /// output after a quiet interval is now published at once.
    #[test]
    fn first_outputs_of_an_interval_are_published_at_once_and_floods_are_coalesced() {
        let bus = EventBus::default();
        let mut events = bus.subscribe();
        let pulse = OutputPulse::default();
        let pane = PaneId::new();
        let mut window = BurstWindow::default();
        let t0 = Instant::now();
        for i in 0..OutputPulse::BURST {
            pulse.output(&bus, &pane, &mut window, t0 + Duration::from_millis(u64::from(i)));
            assert!(events.try_recv().is_ok(), "output {i} of the interval is published at once");
        }
        assert!(pulse.inner.dirty.lock().unwrap().is_empty());
        pulse.output(&bus, &pane, &mut window, t0 + Duration::from_millis(10));
        assert!(events.try_recv().is_err(), "past the burst, output waits for the pulse");
        assert!(pulse.inner.dirty.lock().unwrap().contains(&pane), "and is marked for it");
        pulse.output(&bus, &pane, &mut window, t0 + OutputPulse::INTERVAL);
        assert!(events.try_recv().is_ok(), "a new interval publishes at once again");
    }

    /// Issue 28: thirty flooding readers took the CPU that `berth ls` needed. A reader that
    /// floods waits at the gate while a request is in flight (and goes on when it is
    /// answered); a quiet pane's reader (a keystroke's echo) never waits.
    #[test]
    fn a_flooding_reader_gives_way_to_a_request_in_flight_and_a_quiet_one_does_not() {
        let gate: &'static ControlGate = Box::leak(Box::new(ControlGate::new()));
        let pane = |gate| {
            let shared = PaneShared::new(
                PaneId::new(),
                PaneTerminal::new(TermSize { cols: 80, rows: 24 }, 100),
            );
            let (inbox, messages) = crate::notifications::NotificationInbox::new();
            let io = PaneIo::new(shared, EventBus::default(), OutputPulse::default(), inbox)
                .with_gate(gate);
            (io, messages)
        };
        let replies = PtyInput::detached();
        let request = gate.enter();
        // A quiet pane: short reads, no wait with the request in flight.
        let (mut quiet, _q) = pane(gate);
        quiet.on_output(b"typed\r\n", &replies);
        assert_eq!(gate.yields(), 0, "a quiet pane's output never waits");
        // A flood (on a thread of its own: the reader lowers its own thread's priority).
        let flood = std::thread::spawn(move || {
            let (mut io, _m) = pane(gate);
            let replies = PtyInput::detached();
            let full = b"y\n".repeat(FloodPriority::FULL_READ / 2 + 1);
            for _ in 0..=FloodPriority::FULL_READS {
                io.on_output(&full, &replies);
            }
            io.shared.content_gen()
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        while gate.yields() == 0 {
            assert!(Instant::now() < deadline, "the flooding reader never gave way");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(request);
        let fed = flood.join().expect("the flood ends");
        assert_eq!(fed, u64::from(FloodPriority::FULL_READS) + 1, "every read was fed");
        assert_eq!(gate.flooding_max(), 1, "the flood's full reads parsed in turns");
    }
}
