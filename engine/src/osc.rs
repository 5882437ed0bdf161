//! A streaming scanner that runs over PTY output before the VT parser sees it.
//!
//! It owns two jobs. First, it bounds control strings: vte keeps the bytes of an OSC string in
//! an unbounded `Vec`, so a child printing `ESC ] 0 ;` and then a gigabyte without a terminator
//! would grow the parser without limit. The scanner follows vte's state machine closely enough
//! to know when the parser is inside an OSC, DCS, SOS, PM or APC string and drops the bytes of a
//! string past [`MAX_STRING_BYTES`] (past [`MAX_SHORT_OSC_BYTES`] for titles and hyperlinks),
//! keeping the terminator so the parser leaves the string where it would have anyway. Second, it
//! extracts the OSC payloads Berth acts on but alacritty ignores: 7 (working directory), 9, 99
//! and 777 (notifications), 0 and 1 (the icon label, which alacritty does not keep), and the
//! colour OSCs 4, 5, 10-12 and 105, which Berth takes over from alacritty (vte reads only two
//! of xterm's spec forms), reported as [`OscEvent`]s. Third, it recognises the few CSI and DCS
//! queries vte does not parse (XTVERSION, DA3, XTWINOPS 15, 16, 19, 20 and 21, DECXCPR and the
//! other DEC status reports, DECRQSS, XTGETTCAP and DECRQCRA, see [`Query`]) and controls
//! (DECSTR, the VT420 rectangle and column edits, DECSLRM, DECBI and DECFI, DECSCL, the title
//! stack's XTWINOPS 22 and 23 with the `Ps` vte drops, see [`Control`]), and reports them as
//! events in their place in the stream, so the terminal answers or applies them in order with
//! alacritty's own replies.
//!
//! It must not interpret anything else (the window title, hyperlinks and colour resets stay
//! with alacritty),
//! buffer more than [`MAX_CAPTURE_BYTES`] of its own, or do any I/O.
//!
//! Matching vte 0.15 matters more than matching a standard, because the point is to predict
//! what the parser holds:
//! - 8-bit C1 introducers (0x90 DCS, 0x98 SOS, 0x9D OSC, 0x9E PM, 0x9F APC) start nothing:
//!   vte reads input as UTF-8, where those bytes are continuation bytes, and only "executes"
//!   them from the ground state. The scanner ignores them too.
//! - An OSC string ends at BEL, CAN, SUB or any ESC (vte dispatches it in all four cases).
//!   0x9C does not end an OSC string in vte (it is stored like any byte, and it is a common
//!   UTF-8 continuation byte), but it does end a DCS passthrough.
//! - SOS, PM, APC and a DCS whose header went wrong end only at CAN, SUB or ESC.
//!
//! For its own events the scanner is stricter than vte: a payload counts only when it ends
//! with BEL or with ST (`ESC \`); CAN, SUB or an ESC that starts anything else abort it.

/// The most bytes of one control string (OSC, DCS, SOS, PM or APC) passed on to the parser.
///
/// Bytes of the same string past this limit are dropped until its terminator, which is kept.
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// The most bytes passed on for an OSC 0, 1 or 2 (title) or 8 (hyperlink) string.
///
/// alacritty keeps a stack of up to 4096 titles and attaches a hyperlink to every cell it
/// covers, so a megabyte each would let a child claim gigabytes. Longer titles are cut short;
/// longer hyperlink URIs arrive cut short, which is still the child's own link.
pub const MAX_SHORT_OSC_BYTES: usize = 4096;

/// The most payload bytes captured for an OSC 7, 9, 99 or 777; longer payloads are not reported.
pub const MAX_CAPTURE_BYTES: usize = 8 * 1024;

// The capture buffer grows by doubling; a power of two keeps its capacity within the cap.
const _: () = assert!(MAX_CAPTURE_BYTES.is_power_of_two());

/// Something the scanner found in a complete OSC string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OscEvent {
    /// OSC 7: the shell's working directory, decoded from a `file://host/path` URL.
    Cwd(String),
    /// OSC 133: a shell-integration prompt mark, `A` (prompt shown), `B` (command typed), `C`
    /// (command running) or `D` (command finished).
    PromptMark(char),
    /// OSC 9, 99 or 777: a desktop notification request, not yet parsed.
    ///
    /// `kind` is the OSC number and `payload` the raw bytes after `kind;`. OSC `9;4;…`
    /// (ConEmu progress reports) is reported too: the notification parser turns it into
    /// progress, not a notification.
    Notify {
        /// The OSC number: 9, 99 or 777.
        kind: u16,
        /// The bytes after the number and its `;`, without the terminator.
        payload: Vec<u8>,
    },
    /// A query alacritty leaves unanswered, complete; the terminal answers it.
    Query(Query),
    /// A control vte does not parse, complete; the terminal applies it.
    Control(Control),
    /// OSC 0 or 1: the icon label (vte takes OSC 0 and 2 as the window title, and ignores
    /// OSC 1), decoded as vte decodes a title: the `;`-separated parts that are UTF-8, joined
    /// by `;`, trimmed.
    IconLabel(String),
    /// OSC 4, 5, 10, 11, 12 or 105: colours set, queried or reset. The terminal parses the
    /// specs itself (see `crate::xcms`), in place of vte, so that every form xterm accepts is
    /// taken and the replies keep their order.
    Color {
        /// The OSC number.
        kind: u16,
        /// The bytes after the number and its `;` (empty for a bare `OSC 105`).
        payload: Vec<u8>,
        /// Whether the string ended with BEL (the reply ends the same way), else with ST.
        bell: bool,
    },
}

/// The controls the scanner recognises for the terminal to apply (vte does not parse them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// DECSTR, `CSI ! p`: a soft reset.
    SoftReset,
    /// DECFRA, `CSI Pch ; Pt ; Pl ; Pb ; Pr $ x`: fill a rectangle with a character.
    Fill {
        /// The character's code.
        ch: u16,
        /// Top, left, bottom and right (1-based; 0 for the default).
        rect: [u16; 4],
    },
    /// DECERA (`CSI Pt ; Pl ; Pb ; Pr $ z`) or DECSERA (`… $ {`): erase a rectangle.
    Erase {
        /// Top, left, bottom and right (1-based; 0 for the default).
        rect: [u16; 4],
        /// DECSERA: the characters DECSCA protects are kept.
        selective: bool,
    },
    /// DECSCA, `CSI Ps " q`: characters written from now on are protected (`Ps` 1) from the
    /// selective erases, or not (0, 2).
    Protect(bool),
    /// SPA (`ESC V`, true) or EPA (`ESC W`): start or end an ISO-protected area, whose
    /// characters ED, EL and ECH keep (and the selective erases, as xterm).
    IsoProtect(bool),
    /// DECCRA, `CSI Pts ; Pls ; Pbs ; Prs ; Pps ; Ptd ; Pld ; Ppd $ v`: copy a rectangle.
    Copy {
        /// The source's top, left, bottom and right (1-based; 0 for the default).
        source: [u16; 4],
        /// The destination's top row (1-based; 0 for 1).
        top: u16,
        /// The destination's left column (1-based; 0 for 1).
        left: u16,
    },
    /// DECSED (`CSI ? Ps J`, `line` false) or DECSEL (`CSI ? Ps K`, `line` true): erase
    /// the characters not protected by DECSCA in the display or the line, `Ps` as ED and EL.
    SelectiveErase {
        /// DECSEL rather than DECSED.
        line: bool,
        /// Which part: 0 from the cursor, 1 up to it, 2 all (3, for the display, the history).
        mode: u16,
    },
    /// XTSAVE, `CSI ? Pm s`: remember the state of these DEC private modes.
    SaveModes(Vec<u16>),
    /// XTRESTORE, `CSI ? Pm r`: put these DEC private modes back as XTSAVE remembered them.
    RestoreModes(Vec<u16>),
    /// DECIC, `CSI Pn ' }`: insert columns at the cursor.
    InsertColumns(u16),
    /// DECDC, `CSI Pn ' ~`: delete columns at the cursor.
    DeleteColumns(u16),
    /// `CSI Pl ; Pr s`: DECSLRM, set the left and right margins (1-based; 0 for the default),
    /// when DECLRMM (`CSI ? 69 h`) is set; else SCOSC, which vte has already applied as a
    /// cursor save.
    Margins {
        /// The left margin's column.
        left: u16,
        /// The right margin's column.
        right: u16,
    },
    /// DECBI (`ESC 6`, true) or DECFI (`ESC 9`): move the cursor one column back or forward,
    /// or at the left or right margin scroll the columns between the margins instead.
    Index {
        /// DECBI rather than DECFI.
        back: bool,
    },
    /// `CSI ? Pm h` or `CSI ? Pm l` with DECLRMM (69) among the modes: vte applies it; it is
    /// reported so that output a synchronized update holds back is applied before a DECSLRM
    /// that follows is taken.
    MarginMode,
    /// XTWINOPS 22 (`CSI 22 ; Ps t`, `push` true) or 23: push or pop the titles that `Ps`
    /// names (0 or absent both, 1 the icon label, 2 the window title). vte parses both but
    /// drops `Ps`; the terminal keeps the stack itself.
    TitleStack {
        /// Push rather than pop.
        push: bool,
        /// Which titles: 0 both, 1 the icon label, 2 the window title.
        which: u16,
    },
    /// DECSCL, `CSI Pl ; Pc " p`: set the conformance level `Pl` (61 for VT100 to 65 for
    /// VT500; `Pc`, 8-bit controls or not, is ignored: Berth sends 7-bit ones). The terminal
    /// takes levels up to 64.
    ConformanceLevel(u16),
}

/// The control a complete CSI sequence (parameters, intermediates and final byte) is, if it
/// is one the terminal applies beyond alacritty.
fn csi_control(body: &[u8]) -> Option<Control> {
    let at = |values: &[u16], i: usize| values.get(i).copied().unwrap_or(0);
    Some(match body {
        b"!p" => Control::SoftReset,
        [params @ .., b'"', b'p'] => Control::ConformanceLevel(*numbers(params)?.first()?),
        [params @ .., b't'] => match numbers(params)?.as_slice() {
            [op @ (22 | 23)] => Control::TitleStack { push: *op == 22, which: 0 },
            [op @ (22 | 23), which @ 0..=2, ..] => {
                Control::TitleStack { push: *op == 22, which: *which }
            }
            _ => return None,
        },
        [b'?', params @ .., b's'] => Control::SaveModes(numbers(params)?),
        [b'?', params @ .., b'r'] => Control::RestoreModes(numbers(params)?),
        [b'?', params @ .., b'h' | b'l'] if numbers(params)?.contains(&69) => Control::MarginMode,
        [params @ .., b's'] => {
            let v = numbers(params)?;
            Control::Margins { left: at(&v, 0), right: at(&v, 1) }
        }
        [b'?', params @ .., end @ (b'J' | b'K')] => {
            Control::SelectiveErase { line: *end == b'K', mode: at(&numbers(params)?, 0) }
        }
        [params @ .., b'$', b'x'] => {
            let v = numbers(params)?;
            Control::Fill { ch: at(&v, 0), rect: [at(&v, 1), at(&v, 2), at(&v, 3), at(&v, 4)] }
        }
        [params @ .., b'$', end @ (b'z' | b'{')] => {
            let v = numbers(params)?;
            let rect = [at(&v, 0), at(&v, 1), at(&v, 2), at(&v, 3)];
            Control::Erase { rect, selective: *end == b'{' }
        }
        [params @ .., b'"', b'q'] => Control::Protect(at(&numbers(params)?, 0) == 1),
        [params @ .., b'$', b'v'] => {
            let v = numbers(params)?;
            Control::Copy {
                source: [at(&v, 0), at(&v, 1), at(&v, 2), at(&v, 3)],
                top: at(&v, 5),
                left: at(&v, 6),
            }
        }
        [params @ .., b'\'', b'}'] => Control::InsertColumns(at(&numbers(params)?, 0)),
        [params @ .., b'\'', b'~'] => Control::DeleteColumns(at(&numbers(params)?, 0)),
        _ => return None,
    })
}

/// The queries the scanner recognises for the terminal to answer (alacritty ignores them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// XTVERSION, `CSI > q` or `CSI > 0 q`.
    Version,
    /// DA3 (tertiary device attributes), `CSI = c` or `CSI = 0 c`.
    TertiaryAttributes,
    /// XTWINOPS 16, `CSI 16 t`: the size of a character cell in pixels.
    CellSizePixels,
    /// XTWINOPS 19, `CSI 19 t`: the screen size in characters.
    ScreenSizeChars,
    /// XTWINOPS 15, `CSI 15 t`: the screen size in pixels.
    ScreenSizePixels,
    /// XTWINOPS 20, `CSI 20 t`: the icon label.
    IconLabel,
    /// XTWINOPS 21, `CSI 21 t`: the window title.
    WindowTitle,
    /// DECXCPR, `CSI ? 6 n`: the cursor position with its page.
    ExtendedCursorPosition,
    /// DECDSR printer status, `CSI ? 15 n`.
    PrinterStatus,
    /// Another DEC status report, `CSI ? Ps n` or `CSI ? Ps ; Pid n` (DECCKSR): its number
    /// and the id (0 when absent).
    DecStatus {
        /// The report asked for (`Ps`).
        code: u16,
        /// The request's id, for the reports that echo one.
        id: u16,
    },
    /// DECRQSS, `DCS $ q Pt ST`, with `Pt` (cut at [`MAX_DECRQSS_BYTES`]; longer is unknown).
    Setting(Vec<u8>),
    /// XTGETTCAP, `DCS + q Pt ST`: `Pt`, capability names in hex separated by `;` (cut at
    /// [`MAX_TERMCAP_BYTES`]).
    Termcap(Vec<u8>),
    /// DECRQCRA, `CSI Pid ; Pp ; Pt ; Pl ; Pb ; Pr * y`: the checksum of a rectangle.
    RectChecksum {
        /// The request's id, echoed in the reply.
        id: u16,
        /// Top, left, bottom and right (1-based; 0 for the default). The page is ignored.
        rect: [u16; 4],
    },
}

/// The most bytes of a CSI sequence the scanner keeps to recognise a query (a DECRQCRA with
/// six five-digit parameters fits).
const MAX_CSI_BYTES: usize = 40;

/// The most bytes of a DECRQSS request kept; every setting Berth answers is shorter.
pub const MAX_DECRQSS_BYTES: usize = 8;

/// The most bytes of an XTGETTCAP request kept.
pub const MAX_TERMCAP_BYTES: usize = 256;

/// The query a complete CSI sequence (parameters, intermediates and final byte) asks, if it
/// is one the terminal answers beyond alacritty.
fn csi_query(body: &[u8]) -> Option<Query> {
    Some(match body {
        b">q" | b">0q" => Query::Version,
        b"=c" | b"=0c" => Query::TertiaryAttributes,
        b"16t" => Query::CellSizePixels,
        b"19t" => Query::ScreenSizeChars,
        b"15t" => Query::ScreenSizePixels,
        b"20t" => Query::IconLabel,
        b"21t" => Query::WindowTitle,
        b"?6n" => Query::ExtendedCursorPosition,
        b"?15n" => Query::PrinterStatus,
        [params @ .., b'*', b'y'] => rect_checksum(params)?,
        [b'?', params @ .., b'n'] => {
            let values = numbers(params)?;
            match values.as_slice() {
                [code] => Query::DecStatus { code: *code, id: 0 },
                [code, id] => Query::DecStatus { code: *code, id: *id },
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Parameters separated by `;` as numbers (an empty one is 0; past `u16::MAX` saturates);
/// `None` when one is not a number.
fn numbers(params: &[u8]) -> Option<Vec<u16>> {
    params
        .split(|&b| b == b';')
        .map(|param| {
            param.iter().all(u8::is_ascii_digit).then(|| {
                param.iter().fold(0u32, |n, &d| (n * 10 + u32::from(d - b'0')).min(65535)) as u16
            })
        })
        .collect()
}

/// DECRQCRA from its parameters (`Pid ; Pp ; Pt ; Pl ; Pb ; Pr`, each may be empty); `None`
/// when they are not numbers. Values past `u16::MAX` saturate.
fn rect_checksum(params: &[u8]) -> Option<Query> {
    let mut values = [0u16; 6];
    for (slot, value) in values.iter_mut().zip(numbers(params)?) {
        *slot = value;
    }
    Some(Query::RectChecksum { id: values[0], rect: [values[2], values[3], values[4], values[5]] })
}

/// The parser states of vte 0.15 that the scanner needs to tell apart.
///
/// vte's four CSI states are merged into one: they all leave on the same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    EscapeIntermediate,
    Csi,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsIgnore,
    DcsPassthrough,
    Osc,
    SosPmApc,
}

impl State {
    /// Whether vte is collecting or skipping a control string in this state.
    fn is_string(self) -> bool {
        matches!(
            self,
            State::DcsEntry
                | State::DcsParam
                | State::DcsIntermediate
                | State::DcsIgnore
                | State::DcsPassthrough
                | State::Osc
                | State::SosPmApc
        )
    }

    /// Whether `byte` takes vte out of this string state (and so must never be dropped).
    fn is_exit(self, byte: u8) -> bool {
        match byte {
            0x18 | 0x1A | 0x1B => true,
            0x07 => self == State::Osc,
            0x9C => self == State::DcsPassthrough,
            _ => false,
        }
    }

    /// The state vte is in after reading `byte` in this state.
    ///
    /// This mirrors the `advance_*` functions of vte 0.15's `Parser`; see the module header
    /// for why the 8-bit forms are absent.
    fn next(self, byte: u8) -> State {
        match self {
            State::Ground => {
                // ESC is never swallowed by vte's UTF-8 decoding, so it always leaves ground.
                if byte == 0x1B {
                    State::Escape
                } else {
                    State::Ground
                }
            }
            State::Escape => match byte {
                0x18 | 0x1A => State::Ground,
                0x20..=0x2F => State::EscapeIntermediate,
                b'P' => State::DcsEntry,
                b'X' | b'^' | b'_' => State::SosPmApc,
                b'[' => State::Csi,
                b']' => State::Osc,
                0x30..=0x7E => State::Ground,
                // Other C0 controls are executed, ESC restarts, DEL and 8-bit bytes are ignored.
                _ => State::Escape,
            },
            State::EscapeIntermediate => match byte {
                0x30..=0x7E => State::Ground,
                _ => self.anywhere(byte),
            },
            State::Csi => match byte {
                0x40..=0x7E => State::Ground,
                _ => self.anywhere(byte),
            },
            State::DcsEntry => match byte {
                0x20..=0x2F => State::DcsIntermediate,
                0x30..=0x3F => State::DcsParam,
                0x40..=0x7E => State::DcsPassthrough,
                _ => self.anywhere(byte),
            },
            State::DcsParam => match byte {
                0x20..=0x2F => State::DcsIntermediate,
                0x3C..=0x3F => State::DcsIgnore,
                0x40..=0x7E => State::DcsPassthrough,
                _ => self.anywhere(byte),
            },
            State::DcsIntermediate => match byte {
                0x30..=0x3F => State::DcsIgnore,
                0x40..=0x7E => State::DcsPassthrough,
                _ => self.anywhere(byte),
            },
            State::DcsPassthrough => match byte {
                0x9C => State::Ground,
                _ => self.anywhere(byte),
            },
            State::Osc => match byte {
                0x07 => State::Ground,
                _ => self.anywhere(byte),
            },
            State::DcsIgnore | State::SosPmApc => self.anywhere(byte),
        }
    }

    /// vte's "anywhere" transitions: CAN and SUB go to ground, ESC starts an escape.
    fn anywhere(self, byte: u8) -> State {
        match byte {
            0x18 | 0x1A => State::Ground,
            0x1B => State::Escape,
            _ => self,
        }
    }
}

/// How far the scanner got in reading the number of the current OSC string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OscNumber {
    /// Reading the digits before the first `;`; holds the value so far.
    Digits(u32),
    /// The number ended with `;` and is one whose payload is captured.
    Captured(u16),
    /// The number ended and its payload is of no interest, or it was not a number.
    Ignored,
}

/// Whether a byte is one vte silently skips inside an OSC string (it never reaches the payload).
fn skipped_in_osc(byte: u8) -> bool {
    matches!(byte, 0x00..=0x06 | 0x08..=0x17 | 0x19 | 0x1C..=0x1F)
}

/// The streaming scanner; keep one per PTY and feed it every byte in order.
#[derive(Debug)]
pub struct OscScanner {
    /// vte's state after the bytes passed on so far.
    state: State,
    /// Bytes passed on since the current control string started.
    string_len: usize,
    /// The most bytes the current control string may pass on.
    string_limit: usize,
    /// The limit for control strings other than titles and hyperlinks ([`MAX_STRING_BYTES`]
    /// except in tests, which use a small one).
    max_string: usize,
    /// Progress in reading the current OSC's number.
    number: OscNumber,
    /// Captured payload of the current OSC, at most [`MAX_CAPTURE_BYTES`].
    capture: Vec<u8>,
    /// Whether the current OSC's payload outgrew the capture buffer.
    capture_overflow: bool,
    /// Whether an OSC with a captured payload just ended with ESC, so a `\` completes its ST.
    awaiting_st: bool,
    /// Events found since the last [`OscScanner::take_events`].
    events: Vec<OscEvent>,
    /// The current CSI sequence's bytes after `ESC [` (C0 controls, which vte executes, left
    /// out), at most [`MAX_CSI_BYTES`].
    csi: Vec<u8>,
    /// Whether the current CSI sequence outgrew [`MAX_CSI_BYTES`] (it is then no query).
    csi_overflow: bool,
    /// The current DCS header (parameters and intermediates) while it is read.
    dcs_header: Vec<u8>,
    /// The request of the current DECRQSS (or XTGETTCAP) string, while its passthrough is read.
    decrqss: Option<Vec<u8>>,
    /// Whether `decrqss` holds an XTGETTCAP request rather than a DECRQSS one.
    termcap: bool,
    /// Whether a DECRQSS string just ended with ESC, so a `\` completes its ST.
    awaiting_dcs_st: bool,
}

impl Default for OscScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl OscScanner {
    /// Creates a scanner in vte's initial (ground) state.
    pub fn new() -> Self {
        Self {
            state: State::Ground,
            string_len: 0,
            string_limit: MAX_STRING_BYTES,
            max_string: MAX_STRING_BYTES,
            number: OscNumber::Ignored,
            capture: Vec::new(),
            capture_overflow: false,
            awaiting_st: false,
            events: Vec::new(),
            csi: Vec::new(),
            csi_overflow: false,
            dcs_header: Vec::new(),
            decrqss: None,
            termcap: false,
            awaiting_dcs_st: false,
        }
    }

    /// Scans `input` and returns the bytes the parser should see.
    ///
    /// When nothing had to be dropped (the common case) this is `input` itself and nothing is
    /// copied; otherwise the kept bytes are copied into `scratch` (cleared first) and a slice
    /// of it is returned. State carries over between calls, so chunk boundaries may fall
    /// anywhere, including inside an escape sequence or between ESC and `\`.
    pub fn filter<'a>(&mut self, input: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
        self.filter_until(input, scratch, false).1
    }

    /// Like [`OscScanner::filter`], but stops right after the byte that completes a string the
    /// scanner reports (an event), so the caller can parse the bytes before it and take the
    /// event in its place in the stream: replies to queries then leave in the order the queries
    /// came. Returns how many bytes of `input` were consumed and the bytes the parser should
    /// see for them.
    pub fn filter_to_event<'a>(
        &mut self,
        input: &'a [u8],
        scratch: &'a mut Vec<u8>,
    ) -> (usize, &'a [u8]) {
        self.filter_until(input, scratch, true)
    }

    fn filter_until<'a>(
        &mut self,
        input: &'a [u8],
        scratch: &'a mut Vec<u8>,
        stop_at_event: bool,
    ) -> (usize, &'a [u8]) {
        // Until the first drop nothing is copied; `copied` is how far `input` went to `scratch`.
        let mut copying = false;
        let mut copied = 0;
        let mut i = 0;

        while i < input.len() {
            match self.state {
                State::Ground => {
                    // Fast path: plain text goes through untouched up to the next ESC.
                    match memchr::memchr(0x1B, &input[i..]) {
                        Some(offset) => {
                            i += offset + 1;
                            self.state = State::Escape;
                        }
                        None => i = input.len(),
                    }
                }
                State::Csi if (0x20..=0x7E).contains(&input[i]) => {
                    // Fast path: a CSI sequence's parameters, intermediates and final byte (most
                    // escapes in output are SGR) in one go, exactly as `step` on each byte would.
                    let rest = &input[i..];
                    let mut n = 0;
                    let mut finished = false;
                    while n < rest.len() && (0x20..=0x7E).contains(&rest[n]) {
                        n += 1;
                        if rest[n - 1] >= 0x40 {
                            finished = true;
                            break;
                        }
                    }
                    let room = MAX_CSI_BYTES.saturating_sub(self.csi.len());
                    if n > room {
                        self.csi_overflow = true;
                    }
                    self.csi.extend_from_slice(&rest[..n.min(room)]);
                    i += n;
                    if finished {
                        self.state = State::Ground;
                        if !self.csi_overflow && self.csi_event() && stop_at_event {
                            break;
                        }
                    }
                }
                state
                    if state.is_string()
                        && self.string_len >= self.string_limit
                        && !state.is_exit(input[i]) =>
                {
                    // Over the limit: drop everything up to the byte that ends the string.
                    let end = input[i..]
                        .iter()
                        .position(|&b| state.is_exit(b))
                        .map_or(input.len(), |offset| i + offset);
                    if !copying {
                        scratch.clear();
                        copying = true;
                    }
                    scratch.extend_from_slice(&input[copied..i]);
                    copied = end;
                    i = end;
                }
                _ => {
                    let before = self.events.len();
                    self.step(input[i]);
                    i += 1;
                    if stop_at_event && self.events.len() > before {
                        break;
                    }
                }
            }
        }

        if copying {
            scratch.extend_from_slice(&input[copied..i]);
            (i, &scratch[..])
        } else {
            (i, &input[..i])
        }
    }

    /// The events found so far, without clearing them.
    pub fn events(&self) -> &[OscEvent] {
        &self.events
    }

    /// Returns and clears the events found so far.
    pub fn take_events(&mut self) -> Vec<OscEvent> {
        std::mem::take(&mut self.events)
    }

    /// Whether the parser is inside a control string (OSC, DCS, SOS, PM or APC) right now.
    pub fn in_string(&self) -> bool {
        self.state.is_string()
    }

    /// Bytes of the current control string passed on so far (0 outside a string).
    pub fn string_len(&self) -> usize {
        if self.in_string() {
            self.string_len
        } else {
            0
        }
    }

    /// Capacity of the scanner's own payload buffer, for memory checks; never above
    /// [`MAX_CAPTURE_BYTES`].
    pub fn buffer_capacity(&self) -> usize {
        self.capture.capacity()
    }

    /// Advances the state machine over one byte that is passed on to the parser.
    fn step(&mut self, byte: u8) {
        let before = self.state;
        let after = before.next(byte);

        if before == State::Escape && self.awaiting_st {
            // The OSC before this ESC is complete only if the ESC was the start of ST.
            self.awaiting_st = false;
            if byte == b'\\' {
                self.finish_osc(false);
            }
            self.capture.clear();
        }

        if before == State::Escape && self.awaiting_dcs_st {
            self.awaiting_dcs_st = false;
            if byte == b'\\' {
                self.finish_dcs_request();
            }
            self.decrqss = None;
        }

        self.scan_queries(before, after, byte);

        if before == State::Osc {
            match byte {
                0x07 => {
                    self.finish_osc(true);
                    self.capture.clear();
                }
                0x1B => {
                    self.awaiting_st =
                        matches!(self.number, OscNumber::Captured(_) | OscNumber::Digits(105));
                }
                0x18 | 0x1A => self.capture.clear(),
                _ if skipped_in_osc(byte) => (),
                _ => self.osc_byte(byte),
            }
        }

        if after.is_string() {
            if before.is_string() {
                self.string_len += 1;
            } else {
                self.start_string(after);
            }
        }
        self.state = after;
    }

    /// Reports the control or query that the CSI sequence just ended is, if any; whether it
    /// was one.
    fn csi_event(&mut self) -> bool {
        // SGR, most of the CSI sequences in output, is neither (no pattern below ends in `m`).
        if self.csi.last() == Some(&b'm') {
            return false;
        }
        if let Some(control) = csi_control(&self.csi) {
            self.events.push(OscEvent::Control(control));
        } else if let Some(query) = csi_query(&self.csi) {
            self.events.push(OscEvent::Query(query));
        } else {
            return false;
        }
        true
    }

    /// Follows CSI sequences and DCS strings closely enough to report the queries in them.
    fn scan_queries(&mut self, before: State, after: State, byte: u8) {
        if before == State::Csi {
            if (0x20..=0x7E).contains(&byte) {
                if self.csi.len() < MAX_CSI_BYTES {
                    self.csi.push(byte);
                } else {
                    self.csi_overflow = true;
                }
                if after == State::Ground && !self.csi_overflow {
                    self.csi_event();
                }
            }
        } else if after == State::Csi {
            self.csi.clear();
            self.csi_overflow = false;
        }

        match (before, after) {
            (State::Escape, State::Ground) if matches!(byte, b'V' | b'W') => {
                self.events.push(OscEvent::Control(Control::IsoProtect(byte == b'V')));
            }
            (State::Escape, State::Ground) if matches!(byte, b'6' | b'9') => {
                self.events.push(OscEvent::Control(Control::Index { back: byte == b'6' }));
            }
            (State::Escape, State::DcsEntry) => {
                self.dcs_header.clear();
                self.decrqss = None;
            }
            (State::DcsEntry | State::DcsParam | State::DcsIntermediate, _) => {
                if after == State::DcsPassthrough {
                    if matches!(&self.dcs_header[..], b"$" | b"+") && byte == b'q' {
                        self.decrqss = Some(Vec::new());
                        self.termcap = self.dcs_header == b"+";
                    }
                } else if (0x20..=0x3F).contains(&byte) && self.dcs_header.len() < MAX_CSI_BYTES {
                    self.dcs_header.push(byte);
                }
            }
            (State::DcsPassthrough, _) => match byte {
                0x1B => self.awaiting_dcs_st = self.decrqss.is_some(),
                0x9C => self.finish_dcs_request(),
                0x18 | 0x1A => self.decrqss = None,
                0x20..=0x7E => {
                    let limit = if self.termcap { MAX_TERMCAP_BYTES } else { MAX_DECRQSS_BYTES };
                    if let Some(request) = &mut self.decrqss {
                        if request.len() <= limit {
                            request.push(byte);
                        }
                    }
                }
                _ => (),
            },
            _ => (),
        }
    }

    /// Reports the DECRQSS or XTGETTCAP request just ended by ST.
    fn finish_dcs_request(&mut self) {
        if let Some(request) = self.decrqss.take() {
            let query =
                if self.termcap { Query::Termcap(request) } else { Query::Setting(request) };
            self.events.push(OscEvent::Query(query));
        }
    }

    /// Resets the per-string bookkeeping when a control string starts.
    fn start_string(&mut self, state: State) {
        self.string_len = 0;
        self.string_limit = self.max_string;
        if state == State::Osc {
            self.number = OscNumber::Digits(0);
            self.capture.clear();
            self.capture_overflow = false;
        }
    }

    /// Handles one byte that vte stores in the current OSC string.
    fn osc_byte(&mut self, byte: u8) {
        match self.number {
            OscNumber::Digits(value) => match byte {
                b'0'..=b'9' => {
                    // Numbers past a few digits are not ones we know; saturating keeps them so.
                    let digit = u32::from(byte - b'0');
                    self.number = OscNumber::Digits(value.saturating_mul(10).saturating_add(digit));
                }
                b';' => {
                    if matches!(value, 0 | 1 | 2 | 8) {
                        self.string_limit = MAX_SHORT_OSC_BYTES.min(self.max_string);
                    }
                    self.number = match value {
                        // The icon label (OSC 0 sets it with the window title, which vte
                        // takes; OSC 1 alone).
                        0 => OscNumber::Captured(0),
                        1 => OscNumber::Captured(1),
                        7 => OscNumber::Captured(7),
                        9 => OscNumber::Captured(9),
                        99 => OscNumber::Captured(99),
                        777 => OscNumber::Captured(777),
                        133 => OscNumber::Captured(133),
                        4 | 5 | 10 | 11 | 12 | 105 => OscNumber::Captured(value as u16),
                        _ => OscNumber::Ignored,
                    };
                }
                _ => self.number = OscNumber::Ignored,
            },
            OscNumber::Captured(_) => {
                if self.capture.len() < MAX_CAPTURE_BYTES {
                    // Grown as needed (titles are short and come often), by doubling up to
                    // MAX_CAPTURE_BYTES, a power of two, so never past it.
                    self.capture.push(byte);
                } else {
                    self.capture_overflow = true;
                }
            }
            OscNumber::Ignored => (),
        }
    }

    /// Reports the current OSC if it is one we capture and its payload fit; `bell` tells
    /// whether it ended with BEL rather than ST.
    fn finish_osc(&mut self, bell: bool) {
        let kind = match self.number {
            OscNumber::Captured(kind) => kind,
            // A bare `OSC 105` resets every special colour.
            OscNumber::Digits(105) => {
                self.number = OscNumber::Ignored;
                self.events.push(OscEvent::Color { kind: 105, payload: Vec::new(), bell });
                return;
            }
            _ => return,
        };
        self.number = OscNumber::Ignored;
        if self.capture_overflow {
            return;
        }
        let payload = &self.capture[..];
        match kind {
            7 => {
                if let Some(path) = decode_osc7(payload) {
                    self.events.push(OscEvent::Cwd(path));
                }
            }
            0 | 1 => self.events.push(OscEvent::IconLabel(title_text(payload))),
            133 => {
                // FinalTerm/OSC 133 shell integration: A prompt, B command typed, C command
                // running, D command finished (`D;exit`).
                if let Some(&mark @ (b'A' | b'B' | b'C' | b'D')) = payload.first() {
                    self.events.push(OscEvent::PromptMark(char::from(mark)));
                }
            }
            4 | 5 | 10 | 11 | 12 | 105 => {
                self.events.push(OscEvent::Color { kind, payload: payload.to_vec(), bell });
            }
            _ => self.events.push(OscEvent::Notify { kind, payload: payload.to_vec() }),
        }
    }
}

/// A title's text as vte 0.15 makes it of an OSC 0 or 2 payload: the `;`-separated parts that
/// are UTF-8, joined by `;`, with surrounding whitespace trimmed.
fn title_text(payload: &[u8]) -> String {
    let parts: Vec<&str> =
        payload.split(|&b| b == b';').filter_map(|part| std::str::from_utf8(part).ok()).collect();
    parts.join(";").trim().to_owned()
}

/// Decodes an OSC 7 payload, `file://host/path` with the path percent-encoded, into the path.
///
/// The host is not checked (that would need the hostname, which is I/O). A path that is not
/// absolute, not UTF-8 or contains NUL is refused. A `%` not followed by two hex digits is kept
/// as it is, since naive shell hooks print the path without encoding it.
pub fn decode_osc7(payload: &[u8]) -> Option<String> {
    let rest = payload.strip_prefix(b"file://")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let encoded = &rest[slash..];

    let mut path = Vec::with_capacity(encoded.len());
    let mut i = 0;
    while i < encoded.len() {
        let byte = encoded[i];
        if byte == b'%' && i + 2 < encoded.len() {
            if let (Some(high), Some(low)) = (hex_value(encoded[i + 1]), hex_value(encoded[i + 2]))
            {
                path.push(high << 4 | low);
                i += 3;
                continue;
            }
        }
        path.push(byte);
        i += 1;
    }

    if path.contains(&0) {
        return None;
    }
    String::from_utf8(path).ok()
}

/// The value of one ASCII hex digit.
fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use alacritty_terminal::vte::{Params, Parser, Perform};
    use proptest::prelude::*;

    use super::*;

    /// Runs `input` through a fresh scanner in chunks of `chunk` bytes.
    fn scan(input: &[u8], chunk: usize) -> (Vec<u8>, Vec<OscEvent>, OscScanner) {
        let mut scanner = OscScanner::new();
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            out.extend_from_slice(scanner.filter(piece, &mut scratch));
        }
        let events = scanner.take_events();
        (out, events, scanner)
    }

    /// Checks that every chunking of `input` gives the same output and events.
    fn scan_all_chunkings(input: &[u8]) -> (Vec<u8>, Vec<OscEvent>) {
        let (out, events, _) = scan(input, input.len());
        for chunk in [1, 2, 3, 5, 7, 64] {
            let (other_out, other_events, _) = scan(input, chunk);
            assert_eq!(other_out, out, "output differs with chunk size {chunk}");
            assert_eq!(other_events, events, "events differ with chunk size {chunk}");
        }
        (out, events)
    }

    fn notify(kind: u16, payload: &[u8]) -> OscEvent {
        OscEvent::Notify { kind, payload: payload.to_vec() }
    }

    #[test]
    fn plain_text_is_returned_without_copying() {
        let mut scanner = OscScanner::new();
        let mut scratch = Vec::new();
        let input = b"hello \x1b[31mworld\x1b]0;title\x07";
        let out = scanner.filter(input, &mut scratch);
        assert!(std::ptr::eq(out, &input[..]));
        assert!(scratch.is_empty());
    }

    #[test]
    fn terminators_end_captured_osc_across_every_boundary() {
        // Each case: input, the events it must produce.
        let cases: &[(&[u8], Vec<OscEvent>)] = &[
            (b"\x1b]9;hello\x07after", vec![notify(9, b"hello")]),
            (b"\x1b]9;hello\x1b\\after", vec![notify(9, b"hello")]),
            (b"\x1b]99;i=1:d=0;Hi\x1b\\", vec![notify(99, b"i=1:d=0;Hi")]),
            (b"\x1b]777;notify;T;B\x07", vec![notify(777, b"notify;T;B")]),
            (b"\x1b]133;A\x07", vec![OscEvent::PromptMark('A')]),
            (b"\x1b]133;D;0\x1b\\", vec![OscEvent::PromptMark('D')]),
            (b"\x1b]133;Z\x07", vec![]),
            // CAN and SUB abort the string, and an ESC that does not start ST aborts it too.
            (b"\x1b]9;x\x18\x1b]9;y\x1a\x1b]9;z\x1b[0m", vec![]),
            // 0x9C is an ordinary byte inside an OSC (it is a UTF-8 continuation byte here).
            ("\x1b]9;\u{41c}\u{45c}\x07".as_bytes(), vec![notify(9, "\u{41c}\u{45c}".as_bytes())]),
            // vte drops C0 controls inside an OSC, so they are not part of the payload.
            (b"\x1b]9;a\nb\x07", vec![notify(9, b"ab")]),
            // Progress reports reach the notification parser (which makes progress of them);
            // a 9 with other text is a notification.
            (
                b"\x1b]9;4;1;50\x07\x1b]9;4\x07\x1b]9;40 tests\x07",
                vec![notify(9, b"4;1;50"), notify(9, b"4"), notify(9, b"40 tests")],
            ),
            // OSC 0 and 1 set the icon label (vte takes OSC 0 and 2 as the window title),
            // decoded as vte decodes titles.
            (b"\x1b]0;title\x07", vec![OscEvent::IconLabel("title".to_owned())]),
            (b"\x1b]1; a;b \x1b\\", vec![OscEvent::IconLabel("a;b".to_owned())]),
            (b"\x1b]1;a;\xff;b\x07", vec![OscEvent::IconLabel("a;b".to_owned())]),
            // Other OSC numbers are not captured.
            (b"\x1b]2;title\x07\x1b]52;c;aGk=\x07\x1b]1337;x\x07", vec![]),
        ];
        for (input, expected) in cases {
            let (out, events) = scan_all_chunkings(input);
            assert_eq!(&out, input, "nothing is dropped from {input:?}");
            assert_eq!(&events, expected, "events of {input:?}");
        }
    }

    #[test]
    fn osc_inside_other_sequences_is_not_an_osc() {
        // `]` ends a CSI, and a DCS or APC body may contain `ESC ]`-looking bytes only after
        // its own ESC ends it; 8-bit 0x9D starts nothing in UTF-8 mode.
        let cases: &[(&[u8], Vec<OscEvent>)] = &[
            (b"\x1b[]9;x\x07", vec![]),
            (b"\x9d9;x\x07", vec![]),
            (b"\x1bP1$r]9;x\x07\x1b\\", vec![]),
            (b"\x1b_]9;x\x07\x1b\\\x1b]9;y\x07", vec![notify(9, b"y")]),
            (b"\x1bP1$r\x9c\x1b]9;after\x07", vec![notify(9, b"after")]),
        ];
        for (input, expected) in cases {
            let (_, events) = scan_all_chunkings(input);
            assert_eq!(&events, expected, "events of {input:?}");
        }
    }

    #[test]
    fn osc7_decodes_file_urls() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (b"file://host/home/u/code", Some("/home/u/code")),
            (b"file:///tmp/a%20b", Some("/tmp/a b")),
            (b"file://h/%E2%9C%93/x", Some("/\u{2713}/x")),
            (b"file://h/50%off", Some("/50%off")),
            (b"file://h/a%2", Some("/a%2")),
            (b"file://h/a%00b", None),
            (b"file://h/%FF", None),
            (b"file://host", None),
            (b"/plain/path", None),
            (b"http://h/x", None),
        ];
        for (payload, expected) in cases {
            assert_eq!(decode_osc7(payload).as_deref(), *expected, "payload {payload:?}");
        }

        let (_, events) = scan_all_chunkings(b"\x1b]7;file://box/srv/my%20dir\x1b\\");
        assert_eq!(events, vec![OscEvent::Cwd("/srv/my dir".to_owned())]);
    }

    #[test]
    fn colour_oscs_are_reported_with_their_terminator() {
        let color =
            |kind, payload: &[u8], bell| OscEvent::Color { kind, payload: payload.to_vec(), bell };
        let input =
            b"\x1b]4;1;rgbi:1/0/0;1;?\x07\x1b]10;?\x1b\\\x1b]5;0;?\x07\x1b]105\x07\x1b]105;1\x1b\\\
            \x1b]11;?\x18\x1b]12;#fff\x1b]0;t\x07\x1b]104\x07\x1b]1050\x07";
        let (out, events) = scan_all_chunkings(input);
        assert_eq!(out, input);
        assert_eq!(
            events,
            vec![
                color(4, b"1;rgbi:1/0/0;1;?", true),
                color(10, b"?", false),
                color(5, b"0;?", true),
                color(105, b"", true),
                color(105, b"1", false),
                // OSC 11 and 12, cut by CAN or by an ESC that starts something else, are not
                // reported; the OSC 0 that ESC started is, as the icon label.
                OscEvent::IconLabel("t".to_owned()),
            ]
        );
    }

    #[test]
    fn payload_over_capture_cap_is_not_reported() {
        let mut input = b"\x1b]9;".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_CAPTURE_BYTES + 1));
        input.extend_from_slice(b"\x07\x1b]9;short\x07");
        let (out, events) = scan_all_chunkings(&input);
        assert_eq!(out, input);
        assert_eq!(events, vec![notify(9, b"short")]);

        let mut exact = b"\x1b]9;".to_vec();
        exact.extend(std::iter::repeat_n(b'y', MAX_CAPTURE_BYTES));
        exact.push(0x07);
        let (_, events, scanner) = scan(&exact, 1000);
        assert_eq!(events.len(), 1);
        assert!(scanner.buffer_capacity() <= MAX_CAPTURE_BYTES);
    }

    #[test]
    fn long_strings_are_cut_at_the_limit_and_keep_their_terminator() {
        for (intro, terminator) in [
            (&b"\x1b]1337;"[..], &b"\x07"[..]),
            (b"\x1b]1337;", b"\x1b\\"),
            (b"\x1bPq", b"\x1b\\"),
            (b"\x1bPq", b"\x9c"),
            (b"\x1b_G", b"\x1b\\"),
            (b"\x1b^", b"\x18"),
            (b"\x1bX", b"\x1a"),
        ] {
            let body_len = MAX_STRING_BYTES + 5000;
            let mut input = intro.to_vec();
            input.extend(std::iter::repeat_n(b'a', body_len));
            input.extend_from_slice(terminator);
            input.extend_from_slice(b"tail");
            for chunk in [input.len(), 4096, 777] {
                let (out, _, scanner) = scan(&input, chunk);
                // The introducer's final byte counts toward the string only for DCS/OSC bodies
                // that have one, so allow for it.
                let kept = out.len() - intro.len() - terminator.len() - 4;
                assert!(
                    (MAX_STRING_BYTES - intro.len()..=MAX_STRING_BYTES).contains(&kept),
                    "kept {kept} body bytes for {intro:?}"
                );
                assert!(out.ends_with(&[terminator, b"tail"].concat()));
                assert!(!scanner.in_string());
            }
        }
    }

    #[test]
    fn titles_and_hyperlinks_have_the_short_limit() {
        let mut input = b"\x1b]2;".to_vec();
        input.extend(std::iter::repeat_n(b't', 100_000));
        input.push(0x07);
        let (out, _) = scan_all_chunkings(&input);
        assert_eq!(out.len(), 2 + MAX_SHORT_OSC_BYTES + 1);
        assert_eq!(out.last(), Some(&0x07));
    }

    #[test]
    fn hundred_megabytes_of_unterminated_osc_stay_bounded() {
        let mut scanner = OscScanner::new();
        let mut scratch = Vec::new();
        let mut passed = scanner.filter(b"\x1b]0;", &mut scratch).len();
        let chunk = vec![b'a'; 64 * 1024];
        for _ in 0..(100 * 1024 * 1024 / chunk.len()) {
            passed += scanner.filter(&chunk, &mut scratch).len();
            assert!(scanner.in_string());
            assert!(scanner.string_len() <= MAX_STRING_BYTES);
            assert!(scanner.buffer_capacity() <= MAX_CAPTURE_BYTES);
        }
        assert!(passed <= 4 + MAX_SHORT_OSC_BYTES);
        assert_eq!(scanner.filter(b"\x07ok", &mut scratch), b"\x07ok");
        assert!(!scanner.in_string());
    }

    /// What vte did with a probe byte sequence, as far as the probes below tell states apart.
    #[derive(Default)]
    struct Probe {
        actions: Vec<&'static str>,
    }

    impl Perform for Probe {
        fn print(&mut self, c: char) {
            if c == 'Z' {
                self.actions.push("print");
            }
        }

        fn hook(&mut self, _: &Params, _: &[u8], _: bool, action: char) {
            if action == 'Z' {
                self.actions.push("hook");
            }
        }

        fn put(&mut self, byte: u8) {
            if byte == b'Z' {
                self.actions.push("put");
            }
        }

        fn osc_dispatch(&mut self, _: &[&[u8]], _: bool) {
            self.actions.push("osc");
        }

        fn csi_dispatch(&mut self, _: &Params, _: &[u8], _: bool, action: char) {
            if action == 'Z' {
                self.actions.push("csi");
            }
        }

        fn esc_dispatch(&mut self, _: &[u8], _: bool, byte: u8) {
            if byte == b'Z' {
                self.actions.push("esc");
            }
        }
    }

    /// What vte does with `probe` after parsing `prefix`.
    fn probe_vte(prefix: &[u8], probe: &[u8]) -> Vec<&'static str> {
        let mut parser = Parser::new();
        parser.advance(&mut Probe::default(), prefix);
        let mut recorder = Probe::default();
        parser.advance(&mut recorder, probe);
        recorder.actions
    }

    /// Bytes likely to move vte between states.
    fn escape_heavy_byte() -> impl Strategy<Value = u8> {
        prop_oneof![
            3 => any::<u8>(),
            4 => prop::sample::select(
                b"\x1b\x1b\x1b[]PX^_\\\x07\x18\x1a\x9c\x9d\x900123;:<?$ !q@AZ\x7f\xe4\xb8".to_vec()
            ),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// The scanner's state agrees with vte's after any input, also when strings are cut
        /// (a limit of 6 bytes makes that common): probing with `Z` shows which state vte is
        /// in, and a BEL shows whether it was in an OSC string.
        #[test]
        fn scanner_state_matches_vte(
            input in prop::collection::vec(escape_heavy_byte(), 0..200),
            chunk in 1usize..50,
        ) {
            let mut scanner = OscScanner { max_string: 6, ..OscScanner::new() };
            let mut forwarded = Vec::new();
            let mut scratch = Vec::new();
            for piece in input.chunks(chunk) {
                forwarded.extend_from_slice(scanner.filter(piece, &mut scratch));
            }
            let expected: &[&[&str]] = match scanner.state {
                State::Ground => &[&["print"]],
                State::Escape | State::EscapeIntermediate => &[&["esc"]],
                // vte's CsiIgnore ends at the final byte without a dispatch.
                State::Csi => &[&["csi"], &[]],
                State::DcsEntry | State::DcsParam | State::DcsIntermediate => &[&["hook"]],
                State::DcsPassthrough => &[&["put"]],
                State::DcsIgnore | State::Osc | State::SosPmApc => &[&[]],
            };
            let actions = probe_vte(&forwarded, b"Z");
            prop_assert!(expected.contains(&actions.as_slice()), "{:?}: vte did {:?}", scanner.state, actions);

            let in_osc = probe_vte(&forwarded, b"\x07") == ["osc"];
            prop_assert_eq!(in_osc, scanner.state == State::Osc);
        }
    }

    #[test]
    fn esc_between_chunks_completes_st() {
        let mut scanner = OscScanner::new();
        let mut scratch = Vec::new();
        for piece in [&b"\x1b]7;file:///a"[..], b"\x1b", b"\\"] {
            let _ = scanner.filter(piece, &mut scratch);
        }
        assert_eq!(scanner.take_events(), vec![OscEvent::Cwd("/a".to_owned())]);
    }
}
