//! The screen stream: `pane.search` searches a pane's scrollback for a window that does not
//! hold it, `screen.frames` answers a window attached over the socket with, per pane
//! it shows, the rows that changed since what it holds (a full frame the first time), and
//! `window.attach` gives the Store the window's header rows, `window.view` what the window
//! shows (the last report wins; a connection that ends takes its report back).
//!
//! Flow control is by pull: a client asks again only after the previous answer arrived, so
//! at most one frame per pane and client is ever unacknowledged, and changes made meanwhile
//! are folded into the next answer (it is computed from the screen as it is then). The server
//! keeps nothing per client: the client sends the hashes of the rows it holds. Frames are
//! captured under each pane's own lock, never while holding the Store's; the PTY reader never
//! waits on a client. It must not draw.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use berth_engine::ids::PaneId;
use serde_json::Value;

use crate::error::CommandError;
use crate::pane::PaneShared;
use crate::screen::{FrameUpdate, FramesReply, PaneFrame, PaneHave, MAX_PANES_PER_REQUEST};
use crate::store::{Internal, Store};

/// Frames of at most this many cells in all are made on the runtime's worker; bigger ones go
/// to the work pool ([`crate::heavy`]), so a client asking for a 4000x500 frame delays no
/// other connection's answer.
pub const INLINE_CELLS: usize = 128 * 1024;

/// Answers `screen.frames`: now for small frames, else as work for the pool.
pub fn frames(
    store: &Arc<Mutex<Store>>,
    panes: Vec<PaneHave>,
) -> Result<crate::heavy::Outcome, CommandError> {
    if panes.len() > MAX_PANES_PER_REQUEST {
        return Err(CommandError::BadParams(format!(
            "at most {MAX_PANES_PER_REQUEST} panes per request"
        )));
    }
    let mut found = Vec::with_capacity(panes.len());
    let mut cells = 0usize;
    {
        // The Store's lock only to find the panes; each capture takes the pane's own lock.
        let store = store.lock().unwrap_or_else(|p| p.into_inner());
        for have in panes {
            let id = PaneId::parse(&have.pane_id)?;
            let shared = store.pane_shared(&id);
            if let Some(shared) = &shared {
                let size = shared.size();
                cells += usize::from(size.cols) * usize::from(size.rows);
            }
            found.push((have, shared));
        }
    }
    if cells <= INLINE_CELLS {
        return capture_frames(&found).map(crate::heavy::Outcome::Now);
    }
    let work = crate::heavy::run("big frames", move || capture_frames(&found))?;
    Ok(crate::heavy::Outcome::Work(work))
}

/// The frames' answer as JSON text (serialised straight to text: a `Value` tree of a big
/// frame costs many times its text).
fn capture_frames(panes: &[(PaneHave, Option<Arc<PaneShared>>)]) -> Result<String, CommandError> {
    let mut frames = Vec::with_capacity(panes.len());
    for (have, shared) in panes {
        let Some(shared) = shared else {
            frames.push(FrameUpdate::gone(&have.pane_id));
            continue;
        };
        // The frame, and the open search's matches on the same rows.
        let capture = |term: &berth_engine::terminal::PaneTerminal| {
            let matches =
                have.search.as_deref().and_then(|q| crate::pane_search::view_matches(term, q));
            (PaneFrame::capture(term), matches)
        };
        let (frame, matches) = {
            let mut term = shared.term.lock();
            if have.offset == 0 && term.display_offset() == 0 {
                capture(&term)
            } else {
                // This client's own scroll, under the pane's lock: shown, captured, and put
                // back before anyone else sees the terminal.
                let before = term.display_offset();
                term.scroll_to_bottom();
                term.scroll_display(i32::try_from(have.offset).unwrap_or(i32::MAX));
                let captured = capture(&term);
                term.scroll_to_bottom();
                term.scroll_display(i32::try_from(before).unwrap_or(i32::MAX));
                captured
            }
        };
        let mut update = frame.update_for(&have.pane_id, have.cols, &have.rows);
        update.matches = matches;
        frames.push(update);
    }
    serde_json::to_string(&FramesReply { frames })
        .map_err(|e| CommandError::Internal(format!("frames did not encode: {e}")))
}

/// Answers `pane.search` (`pane_search.rs`) as work for the pool: the search takes the pane's
/// own lock a bounded while at a time, never the Store's.
pub fn search(
    store: &Arc<Mutex<Store>>,
    req: crate::pane_search::SearchRequest,
) -> Result<crate::heavy::Work, CommandError> {
    req.validate()?;
    let id = PaneId::parse(&req.pane_id)?;
    let shared = {
        // The Store's lock only to find the pane; the search takes the pane's own lock.
        let store = store.lock().unwrap_or_else(|p| p.into_inner());
        match store.pane_shared(&id) {
            Some(shared) => shared,
            None if store.pane_state(&id).is_some() => {
                return Err(CommandError::PaneNotLive(id.to_string()))
            }
            None => return Err(CommandError::NoSuchPane(id.to_string())),
        }
    };
    crate::heavy::run("a search", move || {
        let reply = crate::pane_search::search_pane(&shared.term, &req)?;
        serde_json::to_string(&reply)
            .map_err(|e| CommandError::Internal(format!("the search did not encode: {e}")))
    })
}

/// What one connection last reported with `window.view`; when the connection ends and the
/// Store still holds that report, the Store forgets it (a closed window looks at nothing).
/// Each connection has a number of its own (`window_id` in the answer): a notification this
/// server cannot show on a desktop names the window whose view it holds, and only that
/// window shows it (`notification.desktop`).
pub struct ReportedView {
    store: Arc<Mutex<Store>>,
    last: Mutex<Option<crate::store::WindowView>>,
    /// The server's count of attached windows, and whether this connection is one of them.
    windows: AttachedWindows,
    attached: std::sync::atomic::AtomicBool,
    id: u64,
}

/// How many connections have attached a window (`window.attach`) and are still open: what
/// `window.review` needs to know that someone will open the view.
pub type AttachedWindows = Arc<std::sync::atomic::AtomicUsize>;

/// The next connection's window number (from 1).
static NEXT_WINDOW: AtomicU64 = AtomicU64::new(1);

impl ReportedView {
    /// No report yet.
    pub fn new(store: Arc<Mutex<Store>>, windows: AttachedWindows) -> ReportedView {
        let id = NEXT_WINDOW.fetch_add(1, Ordering::Relaxed);
        ReportedView {
            store,
            last: Mutex::new(None),
            windows,
            attached: std::sync::atomic::AtomicBool::new(false),
            id,
        }
    }

    /// Counts this connection as an attached window (once) until it ends.
    pub fn attached(&self) {
        if !self.attached.swap(true, Ordering::AcqRel) {
            self.windows.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Answers `window.view`: the Store takes the window's view as the embedded window's, and
    /// this connection as the window that shows what the server cannot put on a desktop.
    pub fn report(&self, view: crate::store::WindowView) -> Result<WindowViewReply, CommandError> {
        if view.visible.len() > MAX_PANES_PER_REQUEST {
            return Err(CommandError::BadParams(format!(
                "at most {MAX_PANES_PER_REQUEST} visible panes"
            )));
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(view.clone());
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        store.execute(Internal::ReportWindowView { view, window: self.id })?;
        Ok(WindowViewReply { ok: true, window_id: Some(self.id) })
    }
}

/// The answer of `window.view`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WindowViewReply {
    /// Always true.
    pub ok: bool,
    /// The number the server gave this connection: the `notification.desktop` events naming
    /// it are this window's to show (`None`: an older server, which sends none).
    #[serde(default)]
    pub window_id: Option<u64>,
}

impl Drop for ReportedView {
    fn drop(&mut self) {
        if self.attached.load(std::sync::atomic::Ordering::Acquire) {
            self.windows.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).take();
        if last.is_none() {
            return;
        }
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        // A closed window is used no more: the view of one still open stands in.
        let _ = store.execute(Internal::WindowGone { window: self.id });
    }
}

/// Answers `window.attach`: the Store sizes panes for a window that draws `header_rows` above
/// each one.
pub fn attach(store: &Arc<Mutex<Store>>, header_rows: u16) -> Result<Value, CommandError> {
    if header_rows > 4 {
        return Err(CommandError::BadParams("header_rows must be at most 4".into()));
    }
    let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
    store.execute(Internal::SetHeaderRows(header_rows))?;
    Ok(serde_json::json!({ "attached": true, "header_rows": header_rows }))
}
