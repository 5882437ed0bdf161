//! The embedded link: the server on this process's own threads, behind [`ServerLink`].
//!
//! Owns the embedded server (it ends with the window), the thread that forwards its event
//! bus to the event loop, the review requests `berth review` makes of this window, and the
//! query of the open search. Commands go to `Store::execute` under the Store's lock; frames
//! are captured from the pane's terminal under the pane's own lock (the Store's lock only to
//! find the pane); input is a `pane.input` command; a search is `pane_search.rs` run in
//! process on the pane's terminal, as the server runs it for `pane.search`. Nothing here
//! goes through JSON or a socket: the event bus carries typed events. It must not draw.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use alacritty_terminal::term::TermMode;
use berth_engine::ids::PaneId;
use berth_engine::model::RestoreState;
use berth_engine::terminal::PaneTerminal;
use berth_server::commands::{Command, ReadSpec, Reply};
use berth_server::error::CommandError;
use berth_server::event::Event;
use berth_server::pane_search::{self, SearchReply, SearchRequest, WireMatch};
use berth_server::persist::task_record::TaskRecord;
use berth_server::screen::PaneFrame;
use berth_server::store::{Internal, Store, WindowView};
use berth_server::view::StateView;
use berth_server::{EmbeddedServer, Server, UiRequest};

use super::keys::KeyModes;
use super::remote::Raise;
use super::review_link::ReviewRequest;
use super::server_link::{LinkSettings, ServerLink};
use super::wake::Waker;

/// A window's link to the server it embeds.
pub(super) struct EmbeddedLink {
    server: EmbeddedServer,
    store: Arc<Mutex<Store>>,
    /// `berth review` asked this window for a task's review (the bus forwarder sets it).
    review_requests: ReviewRequest,
    /// The query of the open search in a pane (its matches on the view are found per frame).
    searches: RefCell<HashMap<PaneId, String>>,
    /// How many events other than pane output the server published (the bus forwarder counts
    /// them).
    events_seen: Arc<AtomicU64>,
}

impl EmbeddedLink {
    /// Starts `server` on background threads, tells it the window's `header_rows`, and
    /// forwards its events to the event loop (`raise` for a clicked desktop notification).
    pub(super) fn start(
        server: Server,
        header_rows: u16,
        waker: Waker,
        raise: Raise,
    ) -> anyhow::Result<Self> {
        let server = server.spawn_background().map_err(|e| anyhow::anyhow!("{e}"))?;
        let ui_waker = waker.clone();
        server.set_ui_waker(Box::new(move || {
            ui_waker.wake();
        }));
        let review_requests = ReviewRequest::default();
        let events_seen = Arc::new(AtomicU64::new(0));
        spawn_bus_forwarder(&server, waker, raise, review_requests.clone(), events_seen.clone());
        let store = server.store.clone();
        let searches = RefCell::new(HashMap::new());
        let link = Self { server, store, review_requests, searches, events_seen };
        let _ = link.lock().execute(Internal::SetHeaderRows(header_rows));
        Ok(link)
    }

    /// The Store, locked. A poisoned lock still holds consistent state (the Store's own
    /// invariant), so it is used as is.
    fn lock(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on a pane's live terminal, under the pane's own lock (the Store's only to
    /// find it).
    fn with_term<R>(&self, pane: &PaneId, f: impl FnOnce(&mut PaneTerminal) -> R) -> Option<R> {
        let shared = self.lock().pane_shared(pane)?;
        let mut term = shared.term.lock();
        Some(f(&mut term))
    }
}

impl ServerLink for EmbeddedLink {
    fn events_seen(&self) -> u64 {
        self.events_seen.load(Ordering::Acquire)
    }

    fn toasts_for_new_notifications(&self) -> bool {
        !self.lock().desktop_delivers()
    }

    fn view(&self) -> StateView {
        self.lock().view()
    }

    fn focused_pane(&self) -> Option<PaneId> {
        self.lock().focused_pane()
    }

    fn pane_state(&self, pane: &PaneId) -> Option<RestoreState> {
        self.lock().pane_state(pane)
    }

    fn tail_len(&self, pane: &PaneId) -> Option<usize> {
        self.lock().pane_tail_len(pane)
    }

    fn tail(&self, pane: &PaneId) -> Option<Vec<String>> {
        self.lock().pane_tail(pane)
    }

    fn frame(&self, pane: &PaneId) -> Option<PaneFrame> {
        self.with_term(pane, |term| PaneFrame::capture(term))
    }

    fn modes(&self, pane: &PaneId) -> Option<TermMode> {
        self.with_term(pane, |t| *t.term().mode())
    }

    fn key_modes(&self, pane: &PaneId) -> Option<KeyModes> {
        self.with_term(pane, |t| KeyModes {
            app_cursor: t.app_cursor(),
            app_keypad: t.term().mode().contains(TermMode::APP_KEYPAD),
            kitty_flags: t.keyboard_flags(),
            backarrow_bs: t.backarrow_sends_bs(),
        })
    }

    fn execute(&self, cmd: Command) -> Result<Reply, String> {
        self.lock().execute(cmd).map_err(|e| e.to_string())
    }

    fn send_input(&self, pane: &PaneId, bytes: Vec<u8>) {
        self.with_term(pane, |t| {
            if t.display_offset() > 0 {
                t.scroll_to_bottom();
            }
        });
        if let Err(e) = self.execute(Command::PaneInput { pane: pane.clone(), data: bytes }) {
            tracing::debug!(error = %e, "input not sent");
        }
    }

    fn scroll(&self, pane: &PaneId, lines: i32) {
        self.with_term(pane, |t| t.scroll_display(lines));
    }

    fn scroll_to(&self, pane: &PaneId, offset: u32) {
        self.with_term(pane, |t| {
            t.scroll_to_bottom();
            t.scroll_display(i32::try_from(offset).unwrap_or(i32::MAX));
        });
    }

    fn offset(&self, pane: &PaneId) -> u32 {
        self.with_term(pane, |t| u32::try_from(t.display_offset()).unwrap_or(u32::MAX)).unwrap_or(0)
    }

    fn set_search(&self, pane: &PaneId, query: Option<&str>) {
        let mut searches = self.searches.borrow_mut();
        match query {
            Some(q) => searches.insert(pane.clone(), q.to_owned()),
            None => searches.remove(pane),
        };
    }

    fn view_matches(&self, pane: &PaneId) -> Vec<WireMatch> {
        let searches = self.searches.borrow();
        let Some(query) = searches.get(pane) else { return Vec::new() };
        self.with_term(pane, |t| pane_search::view_matches(t, query)).flatten().unwrap_or_default()
    }

    fn search(&self, request: SearchRequest) -> Result<SearchReply, String> {
        let id = PaneId::parse(&request.pane_id).map_err(|e| e.to_string())?;
        let shared = {
            let store = self.lock();
            match store.pane_shared(&id) {
                Some(shared) => shared,
                None if store.pane_state(&id).is_some() => {
                    return Err(CommandError::PaneNotLive(id.to_string()).to_string())
                }
                None => return Err(CommandError::NoSuchPane(id.to_string()).to_string()),
            }
        };
        pane_search::search_pane(&shared.term, &request).map_err(|e| e.to_string())
    }

    fn read_lines(&self, pane: &PaneId, since: u64) -> Option<(u64, Vec<String>)> {
        let spec = ReadSpec { since: Some(since), last: None, ansi: false };
        match self.execute(Command::PaneRead { pane: pane.clone(), spec }) {
            Ok(Reply::Read(read)) => Some((read.first_seq, read.lines)),
            _ => None,
        }
    }

    fn show(&self, view: WindowView) {
        let _ = self.lock().execute(Internal::SetWindowView(view));
    }

    fn tasks(&self) -> Vec<TaskRecord> {
        self.lock().task_records(None)
    }

    fn take_review_request(&self) -> Option<String> {
        self.review_requests.take()
    }

    fn apply_settings(&self, settings: &LinkSettings) {
        let mut store = self.lock();
        for op in [
            Internal::SetScrollback(settings.scrollback),
            Internal::SetDesktopPolicy(settings.desktop),
            Internal::SetTerminalDefaults { cursor: settings.cursor, theme: settings.theme },
        ] {
            let _ = store.execute(op);
        }
    }

    fn shared_with_other_windows(&self) -> bool {
        // The embedded window keeps the tab at its own size.
        false
    }

    fn gone(&self) -> Option<&'static str> {
        (!self.server.is_running()).then_some("the server stopped: closing the window")
    }

    fn ui_requests(&self) -> Vec<UiRequest> {
        self.server.ui_requests.try_iter().collect()
    }

    fn shutdown(self: Box<Self>) {
        self.server.shutdown();
    }
}

/// Forwards the server's events to the event loop: any event means "look again".
/// A clicked desktop notification (`notification.activated`) also calls `raise`, so the
/// window comes to the front on the pane the Store focused.
fn spawn_bus_forwarder(
    embedded: &EmbeddedServer,
    waker: Waker,
    raise: Raise,
    review: ReviewRequest,
    seen: Arc<AtomicU64>,
) {
    let mut events = embedded.bus.subscribe();
    let spawned = std::thread::Builder::new().name("berth-window-events".into()).spawn(move || {
        while let Some(delivery) = events.blocking_recv() {
            // The bus carries typed events: nothing to decode.
            let event = delivery.event();
            if !matches!(event, Some(Event::PaneOutput { .. })) {
                seen.fetch_add(1, Ordering::AcqRel);
            }
            match event {
                Some(Event::NotificationActivated { activation_token, .. }) => {
                    raise(activation_token.clone());
                }
                // The view opens in the window used last only (this one is number 0).
                Some(Event::ReviewRequested { task, window })
                    if window.is_none_or(|w| w == berth_server::store::EMBEDDED_WINDOW) =>
                {
                    review.request(task.as_str().to_owned());
                }
                _ => {}
            }
            if !waker.wake() {
                break;
            }
        }
    });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the event forwarder: the window will not follow output");
    }
}
