//! The screen stream: `screen.frames` answers a window attached over the socket with, per pane
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
use crate::screen::{FrameUpdate, FramesReply, PaneFrame, PaneHave, MAX_PANES_PER_REQUEST};
use crate::store::{Internal, Store};

/// Answers `screen.frames`.
pub fn frames(store: &Arc<Mutex<Store>>, panes: &[PaneHave]) -> Result<Value, CommandError> {
    if panes.len() > MAX_PANES_PER_REQUEST {
        return Err(CommandError::BadParams(format!(
            "at most {MAX_PANES_PER_REQUEST} panes per request"
        )));
    }
    let mut frames = Vec::with_capacity(panes.len());
    for have in panes {
        let id = PaneId::parse(&have.pane_id)?;
        // The Store's lock only to find the pane; the capture takes the pane's own lock.
        let shared = store.lock().unwrap_or_else(|p| p.into_inner()).pane_shared(&id);
        let Some(shared) = shared else {
            frames.push(FrameUpdate::gone(&have.pane_id));
            continue;
        };
        let frame = {
            let mut term = shared.term.lock();
            if have.offset == 0 && term.display_offset() == 0 {
                PaneFrame::capture(&term)
            } else {
                // This client's own scroll, under the pane's lock: shown, captured, and put
                // back before anyone else sees the terminal.
                let before = term.display_offset();
                term.scroll_to_bottom();
                term.scroll_display(i32::try_from(have.offset).unwrap_or(i32::MAX));
                let frame = PaneFrame::capture(&term);
                term.scroll_to_bottom();
                term.scroll_display(i32::try_from(before).unwrap_or(i32::MAX));
                frame
            }
        };
        frames.push(frame.update_for(&have.pane_id, have.cols, &have.rows));
    }
    serde_json::to_value(FramesReply { frames })
        .map_err(|e| CommandError::Internal(format!("frames did not encode: {e}")))
}

/// What one connection last reported with `window.view`; when the connection ends and the
/// Store still holds that report, the Store forgets it (a closed window looks at nothing).
/// Each connection has a number of its own (`window_id` in the answer): a notification this
/// server cannot show on a desktop names the window whose view it holds, and only that
/// window shows it (`notification.desktop`).
pub struct ReportedView {
    store: Arc<Mutex<Store>>,
    last: Mutex<Option<crate::store::WindowView>>,
    id: u64,
}

/// The next connection's window number (from 1).
static NEXT_WINDOW: AtomicU64 = AtomicU64::new(1);

impl ReportedView {
    /// No report yet.
    pub fn new(store: Arc<Mutex<Store>>) -> ReportedView {
        let id = NEXT_WINDOW.fetch_add(1, Ordering::Relaxed);
        ReportedView { store, last: Mutex::new(None), id }
    }

    /// Answers `window.view`: the Store takes the window's view as the embedded window's, and
    /// this connection as the window that shows what the server cannot put on a desktop.
    pub fn report(&self, view: crate::store::WindowView) -> Result<Value, CommandError> {
        if view.visible.len() > MAX_PANES_PER_REQUEST {
            return Err(CommandError::BadParams(format!(
                "at most {MAX_PANES_PER_REQUEST} visible panes"
            )));
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(view.clone());
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        store.execute(Internal::ReportWindowView { view, window: self.id })?;
        Ok(serde_json::json!({ "ok": true, "window_id": self.id }))
    }
}

impl Drop for ReportedView {
    fn drop(&mut self) {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).take();
        if last.is_none() {
            return;
        }
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        // Only while this connection's report is the one the Store holds.
        if store.window_reporter == Some(self.id) {
            let _ = store.execute(Internal::SetWindowView(crate::store::WindowView::default()));
        }
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
