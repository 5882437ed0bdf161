//! The review view in the window: opening it (a sidebar task, the `review` key, `berth review`
//! through the server's `review.requested` event), its keys, clicks and wheel, the link's
//! answers, and its scene over the shown tab's area.
//!
//! It owns no state of its own: `App` holds the view (`review.rs`), its link
//! (`review_link.rs`) and the requests the event forwarders set. It must not lock the Store:
//! everything the view needs comes over the socket, the same for an attached window.

use berth_engine::ids::{PaneId, WorkspaceId};
use winit::event::{ElementState, KeyEvent};
use winit::keyboard::{Key, NamedKey};

use super::app::App;
use super::chrome::TAB_BAR_ROWS;
use super::review::{OpenReview, ReviewAsk, ReviewHit, ReviewKey, ReviewView};
use super::review_link::ReviewLink;
use crate::render::{CellRectU16, ReviewScene};

impl App {
    /// Opens the review view of `task`.
    pub(super) fn open_review(&mut self, task: String) {
        tracing::info!(task = task.as_str(), "opening a task's review view");
        let (view, asks) = ReviewView::open(task);
        self.show_review(view, asks);
    }

    /// Opens the review view of the focused pane's task (else the shown workspace's newest).
    pub(super) fn open_review_here(&mut self) {
        let list = self.state_view();
        let workspace: Option<WorkspaceId> = list.active_workspace.clone();
        let pane: Option<PaneId> = self.view().map(|v| v.active_pane);
        let (view, asks) = ReviewView::find(pane, workspace);
        self.show_review(view, asks);
    }

    fn show_review(&mut self, view: ReviewView, asks: Vec<ReviewAsk>) {
        if self.review_link.is_none() {
            let Some(socket) = self.socket.clone() else {
                tracing::warn!("no socket: the review view cannot reach the server");
                return;
            };
            match ReviewLink::spawn(socket, self.waker.clone()) {
                Ok(link) => self.review_link = Some(link),
                Err(e) => {
                    tracing::error!(error = %e, "cannot start the review thread");
                    return;
                }
            }
        }
        self.review_serial += 1;
        let serial = self.review_serial;
        self.review = Some(OpenReview { serial, view });
        self.send_review(asks);
        self.redraw();
    }

    fn send_review(&self, asks: Vec<ReviewAsk>) {
        let (Some(link), Some(open)) = (&self.review_link, &self.review) else { return };
        if !asks.is_empty() {
            link.send(open.serial, asks);
        }
    }

    /// After a wake-up: a `berth review` request, and the link's answers.
    pub(super) fn serve_review(&mut self) {
        let requested = self.link().and_then(|l| l.take_review_request());
        if let Some(task) = requested {
            self.open_review(task);
        }
        let Some(link) = &self.review_link else { return };
        let answers = link.take();
        if answers.is_empty() {
            return;
        }
        let mut asks = Vec::new();
        if let Some(open) = &mut self.review {
            for (serial, answer) in answers {
                if serial == open.serial {
                    asks.extend(open.view.answer(answer));
                }
            }
        }
        self.send_review(asks);
        self.close_review_if_done();
        self.redraw();
    }

    fn close_review_if_done(&mut self) {
        if self.review.as_ref().is_some_and(|o| o.view.closed()) {
            self.review = None;
        }
    }

    /// Where the view is drawn: the shown tab's area (below the tab bar, left of the sidebar).
    pub(super) fn review_rect(&self) -> CellRectU16 {
        let grid = self.tab_grid();
        CellRectU16::new(0, TAB_BAR_ROWS, grid.cols, grid.rows)
    }

    /// The view's scene, while it is open.
    pub(super) fn review_scene(&self) -> Option<ReviewScene> {
        self.review.as_ref().map(|o| o.view.scene(self.review_rect()))
    }

    /// A key while the view is open: it takes every key (a press it has no use for does
    /// nothing).
    pub(super) fn review_key(&mut self, event: &KeyEvent) {
        if event.state != ElementState::Pressed {
            return;
        }
        // A comment being typed takes the keys as its text.
        if self.review.as_ref().is_some_and(|o| o.view.composing()) {
            let Some(open) = &mut self.review else { return };
            let mut asks = Vec::new();
            match event.logical_key.as_ref() {
                Key::Named(NamedKey::Escape) => open.view.cancel_comment(),
                Key::Named(NamedKey::Enter) => asks = open.view.keep_comment(),
                Key::Named(NamedKey::Backspace) => open.view.backspace(),
                _ => {
                    if let Some(text) = event.text.as_deref() {
                        open.view.type_text(text);
                    }
                }
            }
            self.send_review(asks);
            self.redraw();
            return;
        }
        let Some(key) = ReviewKey::of(event.logical_key.as_ref(), self.input.mods) else {
            return;
        };
        let rect = self.review_rect();
        let Some(open) = &mut self.review else { return };
        let rows = open.view.body_rows(rect);
        let asks = open.view.key(key, rows);
        self.send_review(asks);
        self.close_review_if_done();
        self.redraw();
    }

    /// A button press at window cell (`col`, `row`) while the view is open; whether the view
    /// took it (it takes every press on its area).
    pub(super) fn review_press(&mut self, col: u16, row: u16) -> bool {
        let rect = self.review_rect();
        let Some(open) = &mut self.review else { return false };
        let hit = open.view.hit(rect, col, row);
        if hit == ReviewHit::Outside {
            return false;
        }
        let rows = open.view.body_rows(rect);
        let asks = open.view.press(hit, rows);
        self.send_review(asks);
        self.close_review_if_done();
        self.redraw();
        true
    }

    /// The wheel while the view is open: it scrolls the diff.
    pub(super) fn review_wheel(&mut self, up: bool, steps: usize) -> bool {
        let Some(open) = &mut self.review else { return false };
        let asks = open.view.wheel(up, steps);
        self.send_review(asks);
        self.redraw();
        true
    }
}
