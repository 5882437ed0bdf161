//! Desktop-notification escape codes: OSC 9 (iTerm2, plus ConEmu's `9;4` progress),
//! OSC 99 (kitty's chunked protocol) and OSC 777 (`notify;title;body`).
//!
//! This module owns three things for one pane, the engine's part of the notification path:
//! turning an OSC payload into [`NotifyEvent`]s (here; kitty's chunk assembly, bounded in count,
//! size and age, with its streaming base64, is in `kitty.rs`), making untrusted text safe to
//! show ([`sanitize`], [`sanitize_body`], in `sanitize.rs`), and a per-pane [`RateLimiter`]
//! (`rate_limit.rs`) that turns a flood into a few notifications plus one coalesced count.
//!
//! It must not read a clock (every time-dependent call takes `now`), do I/O, talk to D-Bus or
//! keep a notification once it is emitted: the Store owns notifications, the server's sink
//! shows them, and the OSC scanner hands this module one complete payload at a time (the
//! bytes after the OSC number and its `;`).
//!
//! Decisions a caller relies on:
//! - OSC 9 text is the notification's *title* and its body is empty, as kitty does; OSC 777
//!   and OSC 99 follow the same rule when they have no title: the body becomes the title.
//!   A notification whose title is empty after sanitising is dropped.
//! - An OSC 9 payload that starts with ASCII digits followed by `;` or by nothing is a ConEmu
//!   command (`4;st;pr` progress, `9;cwd`, `12` prompt mark, …), never a notification.
//! - Anything malformed (bad metadata, invalid base64, an assembly over its size bound) is
//!   dropped silently; invalid UTF-8 is decoded lossily. Nothing here panics on any input.

mod kitty;
mod rate_limit;
mod sanitize;

use std::time::{Duration, Instant};

pub use kitty::{decode_base64, Base64Error};
pub use rate_limit::{Admission, RateLimitConfig, RateLimiter};
pub use sanitize::{sanitize, sanitize_body};

use kitty::Assembly;
use sanitize::sanitize_kitty_id;

/// The most characters a notification title keeps after sanitising (an ellipsis included).
pub const MAX_TITLE_CHARS: usize = 256;
/// The most characters a notification body keeps after sanitising (an ellipsis included).
pub const MAX_BODY_CHARS: usize = 2048;
/// OSC payloads larger than this are dropped whole (the scanner already bounds them).
pub const MAX_PAYLOAD_BYTES: usize = 8 * 1024;
/// The most characters of a kitty notification id (`i=`) that are kept.
pub const MAX_KITTY_ID_CHARS: usize = 64;
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
fn query_reply(kitty_id: Option<&str>) -> Vec<u8> {
    let id = kitty_id.unwrap_or("0");
    format!(
        "\x1b]99;i={id}:p=?;a=focus,report:o=always,unfocused,invisible:u=0,1,2:p=title,body,?,close\x1b\\"
    )
    .into_bytes()
}

/// Builds a notification from raw title and body text: sanitises both, uses the body as the
/// title when the title is empty (kitty's rule), and gives `None` when nothing is left.
fn build_notification(source: &'static str, title: &str, body: &str) -> Option<Notification> {
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

// ---------------------------------------------------------------------------------------------
// The parser
// ---------------------------------------------------------------------------------------------

/// Per-pane notification parser: turns OSC 9, 99 and 777 payloads into events, holding
/// kitty chunk assemblies between calls (at most [`MAX_PENDING_ASSEMBLIES`], each at most
/// [`MAX_ASSEMBLY_BYTES`], dropped after [`ASSEMBLY_TIMEOUT`] without a chunk).
#[derive(Debug, Default)]
pub struct NotifyParser {
    /// Unfinished kitty notifications, least recently updated first.
    pending: Vec<Assembly>,
}

impl NotifyParser {
    /// A parser with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many kitty notifications are waiting for more chunks.
    pub fn pending_assemblies(&self) -> usize {
        self.pending.len()
    }

    /// Handles one complete OSC: `osc` is its number and `payload` the bytes after the
    /// number's `;`. Numbers other than 9, 99 and 777 give nothing.
    pub fn handle(&mut self, osc: u16, payload: &[u8], now: Instant) -> Vec<NotifyEvent> {
        self.expire(now);
        if payload.len() > MAX_PAYLOAD_BYTES {
            return Vec::new();
        }
        let event = match osc {
            9 => parse_osc9(payload),
            99 => self.handle_kitty(payload, now),
            777 => parse_osc777(payload),
            _ => None,
        };
        event.into_iter().collect()
    }
}

/// OSC 9: iTerm2's `text`, unless it is a ConEmu command (`digits;…` or digits alone).
fn parse_osc9(payload: &[u8]) -> Option<NotifyEvent> {
    let digits = payload.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && payload.get(digits).is_none_or(|&b| b == b';') {
        return parse_conemu(payload);
    }
    let text = String::from_utf8_lossy(payload);
    build_notification("osc9", &text, "").map(NotifyEvent::Show)
}

/// ConEmu's OSC 9 commands: only `4;state[;percent]` (progress) gives an event.
fn parse_conemu(payload: &[u8]) -> Option<NotifyEvent> {
    let mut fields = payload.split(|&b| b == b';');
    if fields.next()? != b"4" {
        return None;
    }
    let state = match fields.next()? {
        [digit @ b'0'..=b'4'] => digit - b'0',
        _ => return None,
    };
    let percent = fields.next().and_then(|field| {
        if field.is_empty() || !field.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let value = field
            .iter()
            .fold(0u32, |acc, &d| acc.saturating_mul(10).saturating_add(u32::from(d - b'0')));
        Some(value.min(100) as u8)
    });
    let percent = if matches!(state, 0 | 3) { None } else { percent };
    Some(NotifyEvent::Progress { state, percent })
}

/// OSC 777: `notify;title;body` (the body is everything after the third field's `;`).
fn parse_osc777(payload: &[u8]) -> Option<NotifyEvent> {
    let text = String::from_utf8_lossy(payload);
    let mut fields = text.splitn(3, ';');
    if fields.next()? != "notify" {
        return None;
    }
    let title = fields.next().unwrap_or("");
    let body = fields.next().unwrap_or("");
    build_notification("osc777", title, body).map(NotifyEvent::Show)
}
