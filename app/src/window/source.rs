//! Where a window's pane frames come from: one trait, two sources.
//!
//! The embedded window captures frames in process from the pane's terminal
//! ([`berth_server::screen::PaneFrame::capture`]); an attached window holds the frames the
//! server sent over the socket (`remote.rs`). Both hand the same [`PaneFrame`] to
//! `render::screen_of_frame`, so both windows build the same `PaneScene` (the golden test in
//! `render/extract.rs` feeds one recorded stream through both). It must not draw.

use std::sync::{Arc, Mutex};

use berth_engine::ids::PaneId;
use berth_server::screen::PaneFrame;
use berth_server::store::Store;

use super::remote::Remote;

/// A source of pane frames.
pub(super) trait FrameSource {
    /// The pane's screen as it is now (embedded) or as it last arrived (attached); `None`
    /// when the pane has no live terminal (or no frame arrived yet).
    fn frame(&self, pane: &PaneId) -> Option<PaneFrame>;
}

/// The embedded server: frames captured from the terminal under the pane's own lock.
impl FrameSource for Arc<Mutex<Store>> {
    fn frame(&self, pane: &PaneId) -> Option<PaneFrame> {
        let shared = self.lock().unwrap_or_else(|p| p.into_inner()).pane_shared(pane)?;
        let term = shared.term.lock();
        Some(PaneFrame::capture(&term))
    }
}

/// A server in another process: the frames its socket sent.
impl FrameSource for Remote {
    fn frame(&self, pane: &PaneId) -> Option<PaneFrame> {
        Remote::frame(self, pane)
    }
}
