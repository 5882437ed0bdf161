//! Desktop-notification escape codes: OSC 9 (iTerm2, plus ConEmu's `9;4` progress),
//! OSC 99 (kitty's chunked protocol) and OSC 777 (`notify;title;body`).
//!
//! This module owns three things for one pane: turning an OSC payload into [`NotifyEvent`]s
//! (with kitty's chunk assembly, bounded in count, size and age), making untrusted text safe
//! to show ([`sanitize`], [`sanitize_body`]), and a per-pane [`RateLimiter`] that turns a
//! flood into a few notifications plus one coalesced count.
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

use std::time::{Duration, Instant};

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

// ---------------------------------------------------------------------------------------------
// Sanitising
// ---------------------------------------------------------------------------------------------

/// Characters that are removed from every title and body: C0 controls, DEL, C1 controls and
/// the bidirectional embeddings, overrides and isolates (which can make text read backwards).
fn is_stripped(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Characters that end a line (checked before [`is_stripped`], which would drop most of them).
fn is_line_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Makes untrusted text safe for a single-line title: line breaks and tabs collapse into one
/// space, control characters and bidi overrides are removed, the ends are trimmed, and the
/// result is cut to `max_chars` characters (the last one an ellipsis when cut).
pub fn sanitize(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars.saturating_mul(4)));
    let mut after_break = false;
    for c in text.chars() {
        if is_line_break(c) || c == '\t' {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            after_break = true;
            continue;
        }
        if is_stripped(c) || (c == ' ' && after_break) {
            continue;
        }
        after_break = false;
        out.push(c);
    }
    truncate_chars(out.trim(), max_chars)
}

/// Makes untrusted text safe for a body: like [`sanitize`], but line breaks (`\r\n`, `\r`,
/// NEL, U+2028, U+2029) become `\n` and are kept; tabs become spaces.
pub fn sanitize_body(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max_chars.saturating_mul(4)));
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_line_break(c) {
            out.push('\n');
        } else if c == '\t' {
            out.push(' ');
        } else if !is_stripped(c) {
            out.push(c);
        }
    }
    truncate_chars(out.trim(), max_chars)
}

/// Cuts `text` to at most `max_chars` characters, ending in `…` when anything was cut.
fn truncate_chars(text: &str, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    if text.char_indices().nth(max_chars).is_none() {
        return text.to_owned();
    }
    // The text has more than `max_chars` characters, so the (max_chars - 1)th exists.
    let cut = text.char_indices().nth(max_chars - 1).map_or(text.len(), |(at, _)| at);
    let mut out = text[..cut].trim_end().to_owned();
    out.push('…');
    out
}

/// Keeps the characters kitty allows in an identifier (`[A-Za-z0-9_.+-]`), at most
/// [`MAX_KITTY_ID_CHARS`] of them; `None` when nothing is left.
fn sanitize_kitty_id(raw: &[u8]) -> Option<String> {
    let id: String = raw
        .iter()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
        .take(MAX_KITTY_ID_CHARS)
        .map(|&b| char::from(b))
        .collect();
    (!id.is_empty()).then_some(id)
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
// Base64 (RFC 4648, standard alphabet), streaming so that chunks may split a quantum
// ---------------------------------------------------------------------------------------------

/// Why a base64 payload was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Base64Error {
    /// A byte outside the standard alphabet, `=` and ASCII whitespace.
    #[error("invalid base64 byte 0x{0:02x}")]
    InvalidByte(u8),
    /// `=` where padding cannot be, or data after padding inside a quantum.
    #[error("misplaced base64 padding")]
    MisplacedPadding,
    /// The input ended one character into a quantum, which cannot encode a byte.
    #[error("base64 input ends in the middle of a quantum")]
    Truncated,
}

/// Decodes standard base64. Padding is optional at the end, padded pieces may be
/// concatenated, and ASCII whitespace (line wrapping) is ignored.
pub fn decode_base64(input: &[u8]) -> Result<Vec<u8>, Base64Error> {
    let mut out = Vec::with_capacity(input.len() / 4 * 3 + 2);
    let mut decoder = Base64Decoder::default();
    decoder.feed(input, &mut out)?;
    decoder.finish(&mut out)?;
    Ok(out)
}

/// A streaming base64 decoder: holds at most one incomplete quantum between calls.
#[derive(Debug, Default, Clone)]
struct Base64Decoder {
    /// The 6-bit values of the current quantum.
    quantum: [u8; 4],
    /// How many of the quantum's four places are filled (values and padding).
    filled: usize,
    /// How many of the filled places are `=`.
    padding: usize,
}

impl Base64Decoder {
    fn value(byte: u8) -> Option<u8> {
        match byte {
            b'A'..=b'Z' => Some(byte - b'A'),
            b'a'..=b'z' => Some(byte - b'a' + 26),
            b'0'..=b'9' => Some(byte - b'0' + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }

    /// Emits the bytes of the current quantum (`filled - padding` values) and resets it.
    fn emit(&mut self, out: &mut Vec<u8>) {
        let values = self.filled - self.padding;
        let [a, b, c, d] = self.quantum;
        if values >= 2 {
            out.push((a << 2) | (b >> 4));
        }
        if values >= 3 {
            out.push((b << 4) | (c >> 2));
        }
        if values >= 4 {
            out.push((c << 6) | d);
        }
        *self = Self::default();
    }

    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), Base64Error> {
        for &byte in input {
            if byte.is_ascii_whitespace() {
                continue;
            }
            if byte == b'=' {
                // Padding may only fill the third and fourth places of a quantum.
                if self.filled < 2 {
                    return Err(Base64Error::MisplacedPadding);
                }
                self.padding += 1;
            } else {
                if self.padding > 0 {
                    return Err(Base64Error::MisplacedPadding);
                }
                self.quantum[self.filled] =
                    Self::value(byte).ok_or(Base64Error::InvalidByte(byte))?;
            }
            self.filled += 1;
            if self.filled == 4 {
                self.emit(out);
            }
        }
        Ok(())
    }

    /// Ends the stream: an incomplete final quantum of two or three places is accepted
    /// (missing padding); one place alone is an error.
    fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), Base64Error> {
        match self.filled {
            0 => Ok(()),
            1 => {
                *self = Self::default();
                Err(Base64Error::Truncated)
            }
            _ => {
                self.emit(out);
                Ok(())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// kitty OSC 99 metadata and assembly
// ---------------------------------------------------------------------------------------------

/// What a kitty chunk's payload is (`p=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PayloadKind {
    Title,
    Body,
    Close,
    Query,
    /// `icon`, `alive`, `buttons` and anything newer: the chunk still counts for `d=` and
    /// its metadata, but the payload is ignored.
    Ignored,
}

/// The metadata of one OSC 99 chunk; `None` fields were not given.
#[derive(Debug, Clone)]
struct ChunkMeta {
    id: Option<String>,
    done: bool,
    kind: PayloadKind,
    base64: bool,
    urgency: Option<Urgency>,
    only_when: Option<ShowWhen>,
    focus: Option<bool>,
    report: Option<bool>,
}

impl ChunkMeta {
    /// Parses `k=v:k=v`. Unknown keys and unknown values of known keys are ignored, as the
    /// protocol requires; a non-empty part without `=` makes the whole chunk malformed.
    fn parse(raw: &[u8]) -> Option<Self> {
        let mut meta = Self {
            id: None,
            done: true,
            kind: PayloadKind::Title,
            base64: false,
            urgency: None,
            only_when: None,
            focus: None,
            report: None,
        };
        for part in raw.split(|&b| b == b':').filter(|part| !part.is_empty()) {
            let eq = part.iter().position(|&b| b == b'=')?;
            let (key, value) = (&part[..eq], &part[eq + 1..]);
            match key {
                b"i" => meta.id = sanitize_kitty_id(value),
                b"d" => meta.done = value != b"0",
                b"e" => meta.base64 = value == b"1",
                b"p" => {
                    meta.kind = match value {
                        b"title" => PayloadKind::Title,
                        b"body" => PayloadKind::Body,
                        b"close" => PayloadKind::Close,
                        b"?" => PayloadKind::Query,
                        _ => PayloadKind::Ignored,
                    }
                }
                b"u" => {
                    meta.urgency = match value {
                        b"0" => Some(Urgency::Low),
                        b"1" => Some(Urgency::Normal),
                        b"2" => Some(Urgency::Critical),
                        _ => meta.urgency,
                    }
                }
                b"o" => {
                    meta.only_when = match value {
                        b"always" => Some(ShowWhen::Always),
                        b"unfocused" => Some(ShowWhen::Unfocused),
                        b"invisible" => Some(ShowWhen::Invisible),
                        _ => meta.only_when,
                    }
                }
                b"a" => {
                    for action in value.split(|&b| b == b',') {
                        let (on, name) = match action.split_first() {
                            Some((b'-', rest)) => (false, rest),
                            Some((b'+', rest)) => (true, rest),
                            _ => (true, action),
                        };
                        match name {
                            b"focus" => meta.focus = Some(on),
                            b"report" => meta.report = Some(on),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Some(meta)
    }
}

/// Title or body bytes of an assembly, decoded as they arrive.
#[derive(Debug, Default)]
struct AssembledText {
    bytes: Vec<u8>,
    decoder: Base64Decoder,
}

impl AssembledText {
    fn push(&mut self, data: &[u8], base64: bool) -> Result<(), Base64Error> {
        if base64 {
            self.decoder.feed(data, &mut self.bytes)
        } else {
            // Plain text ends any base64 run before it.
            self.decoder.finish(&mut self.bytes)?;
            self.bytes.extend_from_slice(data);
            Ok(())
        }
    }

    fn finish(mut self) -> Result<String, Base64Error> {
        self.decoder.finish(&mut self.bytes)?;
        Ok(String::from_utf8_lossy(&self.bytes).into_owned())
    }
}

/// One kitty notification being put together from chunks that share an id.
#[derive(Debug)]
struct Assembly {
    /// The sanitised id, `None` for the anonymous slot.
    id: Option<String>,
    last_chunk_at: Instant,
    /// Payload bytes received so far, as sent (before decoding).
    received: usize,
    /// Set once the assembly broke a bound or carried invalid base64: its remaining chunks
    /// are swallowed and nothing is shown.
    poisoned: bool,
    title: AssembledText,
    body: AssembledText,
    urgency: Option<Urgency>,
    only_when: Option<ShowWhen>,
    focus: Option<bool>,
    report: Option<bool>,
}

impl Assembly {
    fn new(id: Option<String>, now: Instant) -> Self {
        Self {
            id,
            last_chunk_at: now,
            received: 0,
            poisoned: false,
            title: AssembledText::default(),
            body: AssembledText::default(),
            urgency: None,
            only_when: None,
            focus: None,
            report: None,
        }
    }

    /// Adds one chunk; a later chunk's explicit metadata wins over an earlier one's.
    fn add(&mut self, meta: &ChunkMeta, payload: &[u8], now: Instant) {
        self.last_chunk_at = now;
        self.urgency = meta.urgency.or(self.urgency);
        self.only_when = meta.only_when.or(self.only_when);
        self.focus = meta.focus.or(self.focus);
        self.report = meta.report.or(self.report);
        if self.poisoned {
            return;
        }
        self.received = self.received.saturating_add(payload.len());
        let pushed = match meta.kind {
            PayloadKind::Title => self.title.push(payload, meta.base64),
            PayloadKind::Body => self.body.push(payload, meta.base64),
            _ => Ok(()),
        };
        if pushed.is_err() || self.received > MAX_ASSEMBLY_BYTES {
            self.poison();
        }
    }

    fn poison(&mut self) {
        self.poisoned = true;
        self.title = AssembledText::default();
        self.body = AssembledText::default();
    }

    fn finish(self) -> Option<Notification> {
        if self.poisoned {
            return None;
        }
        let title = self.title.finish().ok()?;
        let body = self.body.finish().ok()?;
        let mut notification = build_notification("osc99", &title, &body)?;
        notification.kitty_id = self.id;
        notification.urgency = self.urgency.unwrap_or_default();
        notification.only_when = self.only_when.unwrap_or_default();
        notification.focus_on_activation = self.focus.unwrap_or(true);
        notification.report_activation = self.report.unwrap_or(false);
        Some(notification)
    }
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

    /// Drops assemblies that have waited too long for their next chunk.
    fn expire(&mut self, now: Instant) {
        self.pending
            .retain(|asm| now.saturating_duration_since(asm.last_chunk_at) < ASSEMBLY_TIMEOUT);
    }

    fn handle_kitty(&mut self, payload: &[u8], now: Instant) -> Option<NotifyEvent> {
        let (meta, data) = match payload.iter().position(|&b| b == b';') {
            Some(at) => (&payload[..at], &payload[at + 1..]),
            None => (payload, &payload[payload.len()..]),
        };
        let meta = ChunkMeta::parse(meta)?;
        match meta.kind {
            PayloadKind::Query => {
                return Some(NotifyEvent::QueryReply(query_reply(meta.id.as_deref())))
            }
            PayloadKind::Close => {
                let kitty_id = meta.id?;
                self.pending.retain(|asm| asm.id.as_ref() != Some(&kitty_id));
                return Some(NotifyEvent::Close { kitty_id });
            }
            _ => {}
        }
        let mut assembly = match self.pending.iter().position(|asm| asm.id == meta.id) {
            Some(at) => self.pending.remove(at),
            None => Assembly::new(meta.id.clone(), now),
        };
        assembly.add(&meta, data, now);
        if meta.done {
            return assembly.finish().map(NotifyEvent::Show);
        }
        if self.pending.len() >= MAX_PENDING_ASSEMBLIES {
            self.pending.remove(0);
        }
        self.pending.push(assembly);
        None
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

// ---------------------------------------------------------------------------------------------
// Rate limiting
// ---------------------------------------------------------------------------------------------

/// The shape of a pane's notification budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitConfig {
    /// How many notifications may pass at once after a quiet spell.
    pub burst: u32,
    /// One more notification is allowed per this much time, up to `burst`.
    pub refill_every: Duration,
    /// A summary of suppressed notifications is due once none was suppressed for this long…
    pub quiet_before_summary: Duration,
    /// …or, during a flood that does not stop, this long after the first one it counts.
    pub max_summary_delay: Duration,
}

impl Default for RateLimitConfig {
    /// Burst 5, one more every 2 s, a summary after 2 s of quiet or every 5 s of flood.
    fn default() -> Self {
        Self {
            burst: 5,
            refill_every: Duration::from_secs(2),
            quiet_before_summary: Duration::from_secs(2),
            max_summary_delay: Duration::from_secs(5),
        }
    }
}

/// Whether a notification may be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Show it.
    Allow,
    /// Do not show it; it is counted for the next summary.
    Suppress,
}

/// A per-pane token bucket for notifications. Suppressed ones are counted, and
/// [`RateLimiter::take_suppressed_summary`] hands the count out once, so the caller can show
/// one "N more notifications" instead of N.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    config: RateLimitConfig,
    tokens: u32,
    /// The time from which the next token is earned; `None` before the first admit.
    refill_from: Option<Instant>,
    suppressed: u64,
    first_suppressed_at: Option<Instant>,
    last_suppressed_at: Option<Instant>,
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self::new(RateLimitConfig::default())
    }
}

impl RateLimiter {
    /// A limiter with a full bucket.
    pub fn new(config: RateLimitConfig) -> Self {
        Self {
            config,
            tokens: config.burst,
            refill_from: None,
            suppressed: 0,
            first_suppressed_at: None,
            last_suppressed_at: None,
        }
    }

    /// Takes a token if there is one; otherwise counts the notification as suppressed.
    pub fn admit(&mut self, now: Instant) -> Admission {
        self.refill(now);
        if self.tokens > 0 {
            self.tokens -= 1;
            return Admission::Allow;
        }
        self.suppressed = self.suppressed.saturating_add(1);
        self.first_suppressed_at.get_or_insert(now);
        self.last_suppressed_at = Some(now);
        Admission::Suppress
    }

    /// How many notifications were suppressed since the last summary.
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }

    /// When [`RateLimiter::take_suppressed_summary`] will next yield, if anything is counted;
    /// the caller schedules a wake-up for it so a summary is not left behind after a flood.
    pub fn next_summary_due(&self) -> Option<Instant> {
        if self.suppressed == 0 {
            return None;
        }
        let quiet = self.last_suppressed_at?.checked_add(self.config.quiet_before_summary);
        let longest = self.first_suppressed_at?.checked_add(self.config.max_summary_delay);
        match (quiet, longest) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The number of suppressed notifications, once the flood has been quiet for
    /// `quiet_before_summary` or its first suppressed notification is `max_summary_delay`
    /// old; the count then starts again from zero.
    pub fn take_suppressed_summary(&mut self, now: Instant) -> Option<u64> {
        if now < self.next_summary_due()? {
            return None;
        }
        let count = std::mem::take(&mut self.suppressed);
        self.first_suppressed_at = None;
        self.last_suppressed_at = None;
        Some(count)
    }

    fn refill(&mut self, now: Instant) {
        let from = *self.refill_from.get_or_insert(now);
        if self.tokens >= self.config.burst {
            self.refill_from = Some(now);
            return;
        }
        let step = self.config.refill_every.as_nanos().max(1);
        let earned = now.saturating_duration_since(from).as_nanos() / step;
        if earned == 0 {
            return;
        }
        let missing = u128::from(self.config.burst - self.tokens);
        if earned >= missing {
            self.tokens = self.config.burst;
            self.refill_from = Some(now);
        } else {
            // earned < missing <= u32::MAX, so the conversion is lossless.
            let earned = earned as u32;
            self.tokens += earned;
            self.refill_from = from.checked_add(self.config.refill_every.saturating_mul(earned));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks `decode_base64` against a table of inputs and expected bytes or errors.
    fn check_base64(cases: &[(&str, Result<&[u8], Base64Error>)]) {
        for (input, expected) in cases {
            let got = decode_base64(input.as_bytes());
            assert_eq!(got.as_deref(), expected.as_deref(), "decode_base64({input:?})");
        }
    }

    #[test]
    fn base64_decodes_rfc4648_vectors_and_rejects_garbage() {
        check_base64(&[
            ("", Ok(b"")),
            ("Zg==", Ok(b"f")),
            ("Zm8=", Ok(b"fo")),
            ("Zm9v", Ok(b"foo")),
            ("Zm9vYg==", Ok(b"foob")),
            ("Zm9vYmE=", Ok(b"fooba")),
            ("Zm9vYmFy", Ok(b"foobar")),
            // Missing padding is accepted at the end.
            ("Zg", Ok(b"f")),
            ("Zm8", Ok(b"fo")),
            ("Zm8=", Ok(b"fo")),
            ("Zm8==", Err(Base64Error::MisplacedPadding)),
            // Padded pieces may be concatenated; wrapped lines are fine.
            ("Zg==Zg==", Ok(b"ff")),
            ("Zm9v\nYmFy\r\n", Ok(b"foobar")),
            ("/+/+", Ok(&[0xff, 0xef, 0xfe])),
            ("Z", Err(Base64Error::Truncated)),
            ("Zm9vY", Err(Base64Error::Truncated)),
            ("=", Err(Base64Error::MisplacedPadding)),
            ("Z===", Err(Base64Error::MisplacedPadding)),
            ("Zg=g", Err(Base64Error::MisplacedPadding)),
            ("Zm9v!", Err(Base64Error::InvalidByte(b'!'))),
            ("Zm-_", Err(Base64Error::InvalidByte(b'-'))),
            ("4pyTIMOgIGxhIG1vZGU=", Ok("✓ à la mode".as_bytes())),
        ]);
    }

    #[test]
    fn base64_stream_split_anywhere_matches_one_shot() {
        let encoded = b"SGVsbG8sIHdvcmxkISDinJMgw6A=";
        let whole = decode_base64(encoded).unwrap();
        for cut in 0..=encoded.len() {
            let mut decoder = Base64Decoder::default();
            let mut out = Vec::new();
            decoder.feed(&encoded[..cut], &mut out).unwrap();
            decoder.feed(&encoded[cut..], &mut out).unwrap();
            decoder.finish(&mut out).unwrap();
            assert_eq!(out, whole, "cut at {cut}");
        }
        assert_eq!(whole, "Hello, world! ✓ à".as_bytes());
    }

    /// Checks one sanitiser against a table of inputs, limits and expected outputs.
    fn check_sanitize(f: fn(&str, usize) -> String, cases: &[(&str, usize, &str)]) {
        for (input, max, expected) in cases {
            let got = f(input, *max);
            assert_eq!(&got, expected, "input {input:?} max {max}");
            assert!(got.chars().count() <= *max, "{got:?} is over {max} chars");
        }
    }

    #[test]
    fn sanitize_titles() {
        check_sanitize(
            sanitize,
            &[
                ("build done", 256, "build done"),
                ("  padded  ", 256, "padded"),
                ("esc\x1b[31mred\x1b[0m", 256, "esc[31mred[0m"),
                ("bell\x07 nul\0 del\x7f", 256, "bell nul del"),
                ("c1 \u{9b}31m csi \u{90}dcs \u{9d}osc", 256, "c1 31m csi dcs osc"),
                ("line one\nline two", 256, "line one line two"),
                ("crlf\r\n\r\nnext", 256, "crlf next"),
                ("tab\there", 256, "tab here"),
                ("a \n b", 256, "a b"),
                ("nel\u{85}ls\u{2028}ps\u{2029}end", 256, "nel ls ps end"),
                ("\n\n  lead and trail \n\n", 256, "lead and trail"),
                (
                    "bidi \u{202a}a\u{202b}b\u{202c}c\u{202d}d\u{202e}e \u{2066}f\u{2067}g\u{2068}h\u{2069}i",
                    256,
                    "bidi abcde fghi",
                ),
                ("evil\u{202e}txt.exe", 256, "eviltxt.exe"),
                ("keeps ünïcødé, 漢字 and emoji 🎉", 256, "keeps ünïcødé, 漢字 and emoji 🎉"),
                ("\x1b\x07\0\n\t ", 256, ""),
                ("", 256, ""),
                ("exactly10!", 10, "exactly10!"),
                ("eleven chr", 10, "eleven chr"),
                ("eleven char", 10, "eleven ch…"),
                ("word boundary here", 8, "word bo…"),
                ("word boundary here", 6, "word…"),
                ("漢字漢字漢字", 4, "漢字漢…"),
                ("🎉🎉🎉🎉🎉", 3, "🎉🎉…"),
                ("e\u{301}e\u{301}e\u{301}", 3, "e\u{301}…"),
                ("anything", 1, "…"),
                ("anything", 0, ""),
            ],
        );
    }

    #[test]
    fn sanitize_bodies_keep_lines() {
        check_sanitize(
            sanitize_body,
            &[
                ("line one\nline two", 2048, "line one\nline two"),
                ("crlf\r\nand cr\rend", 2048, "crlf\nand cr\nend"),
                ("nel\u{85}ls\u{2028}end", 2048, "nel\nls\nend"),
                ("\n\n body \n\n", 2048, "body"),
                ("tab\there \x1b[1mbold\x1b[0m\x07", 2048, "tab here [1mbold[0m"),
                ("bidi\u{202e}\u{2066}x", 2048, "bidix"),
                ("long body text", 6, "long…"),
            ],
        );
    }

    #[test]
    fn rate_limiter_refills_one_token_per_interval() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut limiter = RateLimiter::default();
        for _ in 0..5 {
            assert_eq!(limiter.admit(at(0)), Admission::Allow);
        }
        assert_eq!(limiter.admit(at(0)), Admission::Suppress);
        assert_eq!(limiter.admit(at(1999)), Admission::Suppress);
        assert_eq!(limiter.admit(at(2000)), Admission::Allow);
        assert_eq!(limiter.admit(at(2001)), Admission::Suppress);
        // Three intervals later, three tokens (not counting the partial time used above).
        let allowed = (0..10).filter(|_| limiter.admit(at(8000)) == Admission::Allow).count();
        assert_eq!(allowed, 3);
        // A long quiet spell refills only up to the burst.
        let allowed = (0..10).filter(|_| limiter.admit(at(600_000)) == Admission::Allow).count();
        assert_eq!(allowed, 5);
        // Time going backwards never panics or mints tokens.
        assert_eq!(limiter.admit(at(0)), Admission::Suppress);
    }
}
