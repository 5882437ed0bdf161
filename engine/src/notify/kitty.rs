//! kitty's OSC 99 protocol: chunk metadata (`k=v:k=v`), a notification assembled from the
//! chunks that share its id (bounded in count, size and age), and the standard base64 its
//! chunks may carry, decoded as they stream in.
//!
//! It must not read a clock (every call takes `now`) or keep a notification once it is
//! emitted: a finished assembly becomes a [`NotifyEvent`] and is gone.

use std::time::Instant;

use super::event::{
    build_notification, query_reply, Notification, NotifyEvent, ShowWhen, Urgency,
    ASSEMBLY_TIMEOUT, MAX_ASSEMBLY_BYTES, MAX_PENDING_ASSEMBLIES,
};
use super::sanitize::sanitize_kitty_id;

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
// The parser's kitty side
// ---------------------------------------------------------------------------------------------

/// The kitty notifications of one pane still waiting for chunks, least recently updated
/// first (at most [`MAX_PENDING_ASSEMBLIES`]).
#[derive(Debug, Default)]
pub(super) struct KittyAssemblies {
    pending: Vec<Assembly>,
}

impl KittyAssemblies {
    /// How many are waiting.
    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    /// Drops assemblies that have waited too long for their next chunk.
    pub(super) fn expire(&mut self, now: Instant) {
        self.pending
            .retain(|asm| now.saturating_duration_since(asm.last_chunk_at) < ASSEMBLY_TIMEOUT);
    }

    /// One OSC 99 payload: a query's answer, a close, a finished notification, or nothing yet.
    pub(super) fn handle(&mut self, payload: &[u8], now: Instant) -> Option<NotifyEvent> {
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
}
