//! What the notification parser hands out: [`NotifyEvent`]s and [`Notification`]s, the
//! bounds every part of the path keeps, and the bytes written back to a program (kitty's query
//! answer and activation report).
//!
//! It must not parse escape codes (the parser and `kitty.rs` do) or read a clock.

use std::time::Duration;

use super::sanitize::{sanitize, sanitize_body, sanitize_kitty_id};

/// The most characters a notification title keeps after sanitising (an ellipsis included).
pub const MAX_TITLE_CHARS: usize = 256;
/// The most characters a notification body keeps after sanitising (an ellipsis included).
pub const MAX_BODY_CHARS: usize = 2048;
/// OSC payloads larger than this are dropped whole (the scanner already bounds them).
pub const MAX_PAYLOAD_BYTES: usize = 8 * 1024;
/// The most kitty notifications (distinct `i=`) assembled at once per pane; a new one evicts
/// the least recently updated.
pub const MAX_PENDING_ASSEMBLIES: usize = 16;
/// The most payload bytes (as received, before base64 decoding) one kitty notification may
/// accumulate over its chunks; past this the whole notification is dropped.
pub const MAX_ASSEMBLY_BYTES: usize = 64 * 1024;
/// A kitty assembly that receives no chunk for this long is abandoned and dropped.
pub const ASSEMBLY_TIMEOUT: Duration = Duration::from_secs(30);
/// The OSC numbers this module understands; the scanner hands over payloads for these only.
pub const NOTIFICATION_OSC_NUMBERS: [u16; 3] = [9, 99, 777];

/// How urgent a notification is (kitty's `u=0|1|2`; the others are always `Normal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Urgency {
    /// kitty `u=0`.
    Low,
    /// kitty `u=1`, and the default.
    #[default]
    Normal,
    /// kitty `u=2`.
    Critical,
}

/// When the program asked for the notification to be shown (kitty's `o=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShowWhen {
    /// Always show it (the default, and the only value OSC 9 and 777 can give).
    #[default]
    Always,
    /// Only when the pane's window does not have keyboard focus.
    Unfocused,
    /// Only when the pane is not visible to the user at all.
    Invisible,
}

/// One notification a program asked for, sanitised and bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// Single-line title, never empty, at most [`MAX_TITLE_CHARS`] characters.
    pub title: String,
    /// Body (may hold newlines), possibly empty, at most [`MAX_BODY_CHARS`] characters.
    pub body: String,
    /// How urgent it is.
    pub urgency: Urgency,
    /// Which escape code produced it: `"osc9"`, `"osc99"` or `"osc777"`.
    pub source: &'static str,
    /// kitty's `i=` (sanitised). A later notification with the same id replaces this one.
    pub kitty_id: Option<String>,
    /// When to show it on the desktop.
    pub only_when: ShowWhen,
    /// Whether activating (clicking) it must write [`activation_report`] back to the PTY.
    pub report_activation: bool,
    /// Whether activating it focuses the pane it came from (kitty's default `a=focus`).
    pub focus_on_activation: bool,
}

/// What one OSC payload asks of the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyEvent {
    /// Show (or, with a `kitty_id` already shown, replace) a notification.
    Show(Notification),
    /// Close the notification that was shown with this kitty id (`p=close`).
    Close {
        /// The sanitised kitty id.
        kitty_id: String,
    },
    /// ConEmu progress (`OSC 9 ; 4 ; state ; percent`): state 0 removes the indicator,
    /// 1 is normal, 2 error, 3 indeterminate, 4 paused/warning. `percent` (clamped to 100)
    /// is `None` when absent, not a number, or meaningless for the state (0 and 3).
    Progress {
        /// 0 to 4, as above.
        state: u8,
        /// 0 to 100 when given.
        percent: Option<u8>,
    },
    /// Bytes to write back to the pane's PTY (the answer to kitty's `p=?` query).
    QueryReply(Vec<u8>),
}

/// The bytes kitty sends to a program when the user activates a notification that asked for
/// `a=report`: `ESC ] 99 ; i=<id> ; ESC \`, with `i=0` when the notification had no id.
pub fn activation_report(kitty_id: Option<&str>) -> Vec<u8> {
    let id = kitty_id.and_then(|id| sanitize_kitty_id(id.as_bytes()));
    let id = id.as_deref().unwrap_or("0");
    format!("\x1b]99;i={id};\x1b\\").into_bytes()
}

/// The answer to kitty's capability query (`p=?`): the actions, occasions, urgencies and
/// payload types Berth implements. Close events (`c=1`) and timeouts (`w=1`) are not
/// implemented, so they are not advertised.
pub(super) fn query_reply(kitty_id: Option<&str>) -> Vec<u8> {
    let id = kitty_id.unwrap_or("0");
    format!(
        "\x1b]99;i={id}:p=?;a=focus,report:o=always,unfocused,invisible:u=0,1,2:p=title,body,?,close\x1b\\"
    )
    .into_bytes()
}

/// Builds a notification from raw title and body text: sanitises both, uses the body as the
/// title when the title is empty (kitty's rule), and gives `None` when nothing is left.
pub(super) fn build_notification(
    source: &'static str,
    title: &str,
    body: &str,
) -> Option<Notification> {
    let mut title_text = sanitize(title, MAX_TITLE_CHARS);
    let mut body_text = sanitize_body(body, MAX_BODY_CHARS);
    if title_text.is_empty() {
        title_text = sanitize(body, MAX_TITLE_CHARS);
        body_text.clear();
    }
    if title_text.is_empty() {
        return None;
    }
    Some(Notification {
        title: title_text,
        body: body_text,
        urgency: Urgency::Normal,
        source,
        kitty_id: None,
        only_when: ShowWhen::Always,
        report_activation: false,
        focus_on_activation: true,
    })
}
