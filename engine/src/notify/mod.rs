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

mod event;
mod kitty;
mod rate_limit;
mod sanitize;

use std::time::Instant;

pub use event::{
    activation_report, Notification, NotifyEvent, ShowWhen, Urgency, ASSEMBLY_TIMEOUT,
    MAX_ASSEMBLY_BYTES, MAX_BODY_CHARS, MAX_PAYLOAD_BYTES, MAX_PENDING_ASSEMBLIES, MAX_TITLE_CHARS,
    NOTIFICATION_OSC_NUMBERS,
};
pub use kitty::{decode_base64, Base64Error};
pub use rate_limit::{Admission, RateLimitConfig, RateLimiter};
pub use sanitize::{sanitize, sanitize_body, MAX_KITTY_ID_CHARS};

use event::build_notification;
use kitty::KittyAssemblies;

// ---------------------------------------------------------------------------------------------
// The parser
// ---------------------------------------------------------------------------------------------

/// Per-pane notification parser: turns OSC 9, 99 and 777 payloads into events, holding
/// kitty chunk assemblies between calls (at most [`MAX_PENDING_ASSEMBLIES`], each at most
/// [`MAX_ASSEMBLY_BYTES`], dropped after [`ASSEMBLY_TIMEOUT`] without a chunk).
#[derive(Debug, Default)]
pub struct NotifyParser {
    /// Unfinished kitty notifications.
    kitty: KittyAssemblies,
}

impl NotifyParser {
    /// A parser with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many kitty notifications are waiting for more chunks.
    pub fn pending_assemblies(&self) -> usize {
        self.kitty.len()
    }

    /// Handles one complete OSC: `osc` is its number and `payload` the bytes after the
    /// number's `;`. Numbers other than 9, 99 and 777 give nothing.
    pub fn handle(&mut self, osc: u16, payload: &[u8], now: Instant) -> Vec<NotifyEvent> {
        self.kitty.expire(now);
        if payload.len() > MAX_PAYLOAD_BYTES {
            return Vec::new();
        }
        let event = match osc {
            9 => parse_osc9(payload),
            99 => self.kitty.handle(payload, now),
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
