//! A pane's notifications on its PTY reader thread: OSC 9, 99 and 777 payloads parsed by the
//! engine's `notify`, shows rate-limited and dropped into the [`NotificationInbox`], kitty's
//! queries answered on the PTY, and ConEmu progress handed back to the pane.
//!
//! It owns the pane's parser (kitty assemblies) and rate limiter. It must not take the Store's
//! lock or block the reader: the inbox is bounded and drops when full.

use std::time::Instant;

use berth_engine::ids::PaneId;
use berth_engine::notify::{
    Admission, NotifyEvent, NotifyParser, RateLimitConfig, RateLimiter, Urgency,
};
use berth_engine::pty::PtyInput;

use super::{InboxMessage, Incoming, NotificationInbox};

/// A ConEmu progress report (`OSC 9;4`): the state (0 removes the indicator, 1 normal, 2 error,
/// 3 indeterminate, 4 paused) and the percent when given.
pub type ProgressReport = (u8, Option<u8>);

/// One pane's notification escape codes, handled on its reader thread.
pub struct PaneNotifications {
    pane: PaneId,
    inbox: NotificationInbox,
    parser: NotifyParser,
    limiter: RateLimiter,
}

impl PaneNotifications {
    /// A pane's handler, sending what it parses to `inbox`.
    pub fn new(pane: PaneId, inbox: NotificationInbox) -> Self {
        Self {
            pane,
            inbox,
            parser: NotifyParser::new(),
            limiter: RateLimiter::new(RateLimitConfig::default()),
        }
    }

    /// Parses one OSC 9/99/777 payload: notifications go to the inbox (rate-limited), queries
    /// are answered on the PTY, and progress reports are returned, in order, for the pane to
    /// note.
    pub fn handle_osc(
        &mut self,
        kind: u16,
        payload: &[u8],
        replies: &PtyInput,
        now: Instant,
    ) -> Vec<ProgressReport> {
        let mut progress = Vec::new();
        for event in self.parser.handle(kind, payload, now) {
            match event {
                NotifyEvent::Show(note) => {
                    if self.limiter.admit(now) == Admission::Suppress {
                        continue;
                    }
                    let mut incoming = Incoming::new(
                        Some(self.pane.clone()),
                        &note.title,
                        &note.body,
                        note.source,
                    );
                    incoming.severity = match note.urgency {
                        Urgency::Critical => "error",
                        _ => "info",
                    }
                    .to_owned();
                    incoming.kitty_id = note.kitty_id;
                    incoming.report_activation = note.report_activation;
                    // Only kitty's OSC 99 can say when (`o=`, default `always` as kitty
                    // specifies); OSC 9 and 777 stay off the desktop while the pane is seen.
                    if note.source == "osc99" {
                        incoming.show = note.only_when;
                    }
                    self.inbox.send(InboxMessage::Show(incoming));
                }
                NotifyEvent::Close { kitty_id } => {
                    self.inbox.send(InboxMessage::Close { pane: self.pane.clone(), kitty_id });
                }
                NotifyEvent::Progress { state, percent } => progress.push((state, percent)),
                NotifyEvent::QueryReply(bytes) => {
                    let _ = replies.send(&bytes);
                }
            }
        }
        progress
    }

    /// Whether a summary of held-back notifications is still to come
    /// ([`PaneNotifications::flush_suppressed`] has work).
    pub fn summary_pending(&self) -> bool {
        self.limiter.suppressed() > 0
    }

    /// After a flood, one notification says how many were held back.
    pub fn flush_suppressed(&mut self, now: Instant) {
        if let Some(count) = self.limiter.take_suppressed_summary(now) {
            let title = format!("{count} more notifications");
            let incoming = Incoming::new(Some(self.pane.clone()), &title, "", "system");
            self.inbox.send(InboxMessage::Show(incoming));
        }
    }
}
