//! Links in a pane: OSC 8 hyperlinks and plain URLs under the pointer, underlined while Ctrl
//! is held and opened with Ctrl+click.
//!
//! Owns finding the link at a cell of a pane's frame ([`frame_link_at`]: the cell's OSC 8
//! hyperlink, else a URL over the cell's whole logical line, wrapped rows included), the
//! window's hovered link, and opening a link (`xdg-open`, or `$BERTH_OPENER`) for schemes on an
//! allowlist. It must not change the terminal and must not run anything through a shell.

use std::ops::Range;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};

use berth_engine::ids::PaneId;
use berth_server::screen::PaneFrame;
use winit::window::CursorIcon;

use super::intent::{Intent, UiAction};
use super::view::Hit;
use crate::render::CellSpan;

/// The schemes a link may have to be opened.
pub const ALLOWED_SCHEMES: &[&str] = &["http", "https", "file", "mailto", "ftp"];

/// The environment variable naming the program that opens links instead of `xdg-open`.
pub const OPENER_VAR: &str = "BERTH_OPENER";

/// A link found in a pane's view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// What it points to.
    pub url: String,
    /// The cells it covers on the view: (row, columns).
    pub spans: Vec<(u16, Range<u16>)>,
}

/// The link the pointer is over while Ctrl is held.
#[derive(Debug, Clone)]
pub(super) struct HoveredLink {
    /// The pane it is in.
    pane: PaneId,
    /// The link.
    link: Link,
    /// The pane's revision and scroll position when it was found ([`LinkSource::stamp`]):
    /// once either changes the cells may have moved, so it is not drawn any more.
    stamp: (u64, usize),
}

/// Where a pane's cells are read: its frame, as the window's link gives it (whose OSC 8
/// hyperlinks the server put in it), the same in every window.
#[derive(Clone, Copy)]
pub(super) enum LinkSource<'a> {
    /// The pane's latest frame.
    Frame(&'a PaneFrame),
}

impl LinkSource<'_> {
    /// What changes when the cells may have moved: the frame's top line and scroll (and its
    /// row hashes).
    fn stamp(&self) -> (u64, usize) {
        match self {
            LinkSource::Frame(f) => {
                let rows = f.hashes().iter().fold(f.meta.content_seq, |h, r| h.rotate_left(5) ^ r);
                (rows, f.meta.display_offset as usize)
            }
        }
    }
}

/// The window's link state: the hovered link.
#[derive(Default)]
pub(super) struct LinkState {
    hovered: Option<HoveredLink>,
}

impl LinkState {
    /// Finds the link at `(col, row)` of a pane's view.
    fn find(&self, source: LinkSource<'_>, col: u16, row: u16) -> Option<Link> {
        match source {
            LinkSource::Frame(frame) => frame_link_at(frame, col, row),
        }
    }
}

/// The schemes a plain URL may start with.
const URL_SCHEMES: &[&str] = &["https://", "http://", "file://", "ftp://", "mailto:"];

/// Whether `ch` may be part of a plain URL: no controls, spaces, quotes, angle brackets,
/// braces, carets, backticks or backslashes.
fn url_char(ch: char) -> bool {
    !(ch.is_control()
        || ('\u{7f}'..='\u{9f}').contains(&ch)
        || ch.is_whitespace()
        || "<>\"{}^`\\⟨⟩".contains(ch))
}

/// The link at `(col, row)` of a frame's view: the cell's OSC 8 hyperlink, which the server
/// put in the frame (every cell of the view carrying it), else a plain URL covering the cell
/// in its logical line (wrapped rows joined), with trailing punctuation that is probably not
/// part of it left out ([`trim_url`]).
pub fn frame_link_at(frame: &PaneFrame, col: u16, row: u16) -> Option<Link> {
    let here = frame.rows.get(usize::from(row))?;
    if col >= frame.cols {
        return None;
    }
    if let Some((_, _, uri)) = here.links.iter().find(|(c, n, _)| (*c..c + n).contains(&col)) {
        let spans = frame
            .rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| {
                r.links.iter().filter(|l| l.2 == *uri).map(move |(c, n, _)| (i as u16, *c..c + n))
            })
            .collect();
        return Some(Link { url: uri.clone(), spans });
    }
    let row = usize::from(row);
    let mut first = row;
    while first > 0 && frame.rows[first - 1].wraps {
        first -= 1;
    }
    let mut last = row;
    while last + 1 < frame.rows.len() && frame.rows[last].wraps {
        last += 1;
    }
    // The logical line's characters with their cells.
    let mut text: Vec<(char, u16, u16)> = Vec::new();
    for (i, r) in frame.rows.iter().enumerate().take(last + 1).skip(first) {
        for (c, cell) in super::frame_text::cells(r, frame.cols).into_iter().enumerate() {
            if let Some(ch) = cell.and_then(|t| t.chars().next()) {
                text.push((ch, i as u16, c as u16));
            }
        }
    }
    let pointer = text.iter().position(|&(_, r, c)| usize::from(r) == row && c == col)?;
    let lower: Vec<char> = text.iter().map(|(ch, _, _)| ch.to_ascii_lowercase()).collect();
    let mut i = 0;
    while i < text.len() {
        let scheme = URL_SCHEMES.iter().find(|s| {
            let s: Vec<char> = s.chars().collect();
            lower.get(i..i + s.len()) == Some(&s[..])
        });
        let Some(scheme) = scheme else {
            i += 1;
            continue;
        };
        let mut end = i + scheme.len();
        while end < text.len() && url_char(text[end].0) {
            end += 1;
        }
        let found: String = text[i..end].iter().map(|(ch, _, _)| ch).collect();
        let url = trim_url(&found);
        let len = url.chars().count();
        let after_scheme = url.split_once(':').map(|(_, rest)| rest.trim_start_matches('/'));
        if after_scheme.is_some_and(|r| !r.is_empty()) && (i..i + len).contains(&pointer) {
            let mut spans: Vec<(u16, Range<u16>)> = Vec::new();
            for &(_, r, c) in &text[i..i + len] {
                match spans.last_mut() {
                    Some((sr, cols)) if *sr == r && cols.end == c => cols.end = c + 1,
                    _ => spans.push((r, c..c + 1)),
                }
            }
            return Some(Link { url: url.to_owned(), spans });
        }
        i = end.max(i + 1);
    }
    None
}

/// A URL without what probably ends the sentence around it: trailing `.,;:!?'"` and closing
/// brackets that were not opened inside the URL.
pub fn trim_url(url: &str) -> &str {
    let mut end = url.len();
    loop {
        let s = &url[..end];
        let Some(last) = s.chars().next_back() else { break };
        let unbalanced = |open: char| s.matches(open).count() < s.matches(last).count();
        let cut = match last {
            '.' | ',' | ';' | ':' | '!' | '?' | '\'' | '"' => true,
            ')' => unbalanced('('),
            ']' => unbalanced('['),
            _ => false,
        };
        if !cut {
            break;
        }
        end -= last.len_utf8();
    }
    &url[..end]
}

/// Why a link was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The scheme is not on the allowlist.
    #[error(
        "links with the scheme {0:?} are not opened (allowed: http, https, file, mailto, ftp)"
    )]
    Scheme(String),
    /// The opener could not be started.
    #[error(
        "cannot run {program} to open the link ({source}); install xdg-utils or set {OPENER_VAR}"
    )]
    Spawn {
        /// The program.
        program: String,
        /// What failed.
        source: std::io::Error,
    },
}

/// The scheme of `url` in lower case, if it has one (`https` of `https://…`).
fn scheme(url: &str) -> Option<String> {
    let (scheme, _) = url.split_once(':')?;
    let valid = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| scheme.to_ascii_lowercase())
}

/// Whether links with `url`'s scheme may be opened.
pub fn allowed(url: &str) -> bool {
    scheme(url).is_some_and(|s| ALLOWED_SCHEMES.contains(&s.as_str()))
}

/// Opens `url` with `xdg-open` (or `$BERTH_OPENER`), detached: no shell, no stdin or output,
/// its own process group, reaped by a thread so it leaves no zombie.
pub fn open(url: &str) -> Result<(), OpenError> {
    if !allowed(url) {
        return Err(OpenError::Scheme(scheme(url).unwrap_or_default()));
    }
    let program = std::env::var(OPENER_VAR)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "xdg-open".to_owned());
    // Registered with the server's orphan reaper (this process may be its subreaper): the
    // thread below waits for it, the reaper never.
    let mut child = berth_server::trust::reaper::spawn_waited(
        || {
            Command::new(&program)
                .arg(url)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
        },
        |child| child.id() as i32,
    )
    .map_err(|source| OpenError::Spawn { program: program.clone(), source })?;
    let reaper = std::thread::Builder::new().name("berth-open-link".into()).spawn(move || {
        match child.wait() {
            Ok(status) if !status.success() => {
                tracing::warn!(%program, %status, "the link opener failed");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot wait for the link opener"),
        }
    });
    if let Err(e) = reaper {
        // The child is then reaped when the window exits; nothing else to do.
        tracing::warn!(error = %e, "cannot start a thread to reap the link opener");
    }
    Ok(())
}

impl LinkState {
    /// Follows the pointer over the window: with Ctrl held (`ctrl`) and the pointer over a
    /// pane's screen (`hit`, with that pane's cells in `source`), the link under it is
    /// hovered. Returns what the window does about it: a hand pointer over a link, a frame
    /// when the hovered link changed.
    pub(super) fn hover(
        &mut self,
        hit: &Hit,
        ctrl: bool,
        source: Option<LinkSource<'_>>,
    ) -> Vec<Intent> {
        let found = match (hit, source) {
            (Hit::Screen { pane, col, row }, Some(s)) if ctrl => self
                .find(s, *col, *row)
                .map(|link| HoveredLink { pane: pane.clone(), link, stamp: s.stamp() }),
            _ => None,
        };
        let was = self.hovered.as_ref().map(|h| (&h.pane, &h.link));
        let changed = was != found.as_ref().map(|h| (&h.pane, &h.link));
        let mut intents = Vec::new();
        if found.is_some() {
            intents.push(Intent::Ui(UiAction::PointerIcon(CursorIcon::Pointer)));
        }
        self.hovered = found;
        if changed {
            intents.push(Intent::Ui(UiAction::Redraw));
        }
        intents
    }

    /// Whether a change of the modifiers to `ctrl` (held or not) shows or hides a link, so the
    /// pointer's place must be looked at again.
    pub(super) fn ctrl_changes_hover(&self, ctrl: bool) -> bool {
        ctrl != self.hovered.is_some()
    }

    /// The link to underline in `pane`, if the pointer is over one there and the pane's cells
    /// have not moved since it was found.
    pub(super) fn spans(&self, pane: &PaneId, source: LinkSource<'_>) -> Vec<CellSpan> {
        match &self.hovered {
            Some(h) if h.pane == *pane && h.stamp == source.stamp() => h
                .link
                .spans
                .iter()
                .map(|(row, cols)| CellSpan { row: *row, cols: cols.clone() })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Ctrl+click at `cell` of a pane's view (`source`): opening the link there, if there
    /// is one. The window then does nothing else with the click (no selection, no mouse
    /// report), whether the link is opened or refused.
    pub(super) fn click(&self, source: LinkSource<'_>, cell: (u16, u16)) -> Option<Intent> {
        let link = self.find(source, cell.0, cell.1)?;
        Some(Intent::Ui(UiAction::OpenLink(link.url)))
    }
}

/// Opens a link as the window does on Ctrl+click, logging the outcome.
pub(super) fn open_logged(url: &str) {
    match open(url) {
        Ok(()) => tracing::info!(%url, "opening a link"),
        Err(e) => tracing::warn!(%url, error = %e, "link not opened"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::terminal::{PaneTerminal, TermSize};

    fn terminal(cols: u16, rows: u16, bytes: &str) -> PaneTerminal {
        let mut term = PaneTerminal::new(TermSize { cols, rows }, 100);
        term.feed(bytes.as_bytes());
        term
    }

    /// The link at a cell as the window finds it: in the pane's frame.
    fn find(term: &PaneTerminal, col: u16, row: u16) -> Option<Link> {
        frame_link_at(&PaneFrame::capture(term), col, row)
    }

    #[test]
    fn links_are_found_under_the_pointer() {
        // (screen text, pointer (col, row), expected URL and spans).
        type Case = (&'static str, (u16, u16), Option<(&'static str, Vec<(u16, Range<u16>)>)>);
        let cases: Vec<Case> = vec![
            (
                "see https://example.org/a",
                (10, 0),
                Some(("https://example.org/a", vec![(0, 4..25)])),
            ),
            (
                "see https://example.org/a",
                (4, 0),
                Some(("https://example.org/a", vec![(0, 4..25)])),
            ),
            ("see https://example.org/a", (2, 0), None),
            ("(http://x.io/p)", (5, 0), Some(("http://x.io/p", vec![(0, 1..14)]))),
            ("go to http://x.io.", (8, 0), Some(("http://x.io", vec![(0, 6..17)]))),
            ("go to http://x.io.", (17, 0), None),
            ("wiki http://w.org/A_(b)", (8, 0), Some(("http://w.org/A_(b)", vec![(0, 5..23)]))),
            ("mail mailto:a@b.c now", (6, 0), Some(("mailto:a@b.c", vec![(0, 5..17)]))),
            ("HTTPS://UP.ORG", (3, 0), Some(("HTTPS://UP.ORG", vec![(0, 0..14)]))),
            ("file:///tmp/x y", (3, 0), Some(("file:///tmp/x", vec![(0, 0..13)]))),
            ("ftp://f.org", (0, 0), Some(("ftp://f.org", vec![(0, 0..11)]))),
            ("javascript:alert(1)", (3, 0), None),
            ("no link here", (3, 0), None),
            ("see mailto:. or http://.", (6, 0), None),
            ("see mailto:. or http://.", (18, 0), None),
            // A URL that wraps onto the next row is one link.
            (
                "x https://example.org/long/path/more",
                (2, 1),
                Some(("https://example.org/long/path/more", vec![(0, 2..30), (1, 0..6)])),
            ),
            // The pointer past the screen finds nothing.
            ("https://a.b", (30, 5), None),
        ];
        for (text, (col, row), expected) in cases {
            let term = terminal(30, 4, text);
            let found = find(&term, col, row);
            let expected = expected.map(|(url, spans)| Link { url: url.to_owned(), spans });
            assert_eq!(found, expected, "{text:?} at ({col}, {row})");
        }
    }

    #[test]
    fn osc8_hyperlinks_cover_all_their_cells() {
        let term = terminal(
            30,
            3,
            "a \x1b]8;id=1;https://osc8.example/\x1b\\linked text\x1b]8;;\x1b\\ b https://plain.org",
        );
        let link = find(&term, 5, 0).expect("the OSC 8 link");
        assert_eq!(link.url, "https://osc8.example/");
        assert_eq!(link.spans, vec![(0, 2..13)]);
        // A plain URL on the same row is its own link.
        assert_eq!(find(&term, 20, 0).map(|l| l.url).as_deref(), Some("https://plain.org"));
        assert_eq!(find(&term, 0, 0), None);
    }

    fn frame_of(cols: u16, rows: u16, bytes: &str) -> PaneFrame {
        PaneFrame::capture(&terminal(cols, rows, bytes))
    }

    #[test]
    fn links_in_a_frame_come_from_osc8_ranges_and_plain_urls() {
        let f = frame_of(
            30,
            4,
            "a \x1b]8;;https://osc8.example/\x1b\\linked\x1b]8;;\x1b\\ b http://x.io/p.",
        );
        let osc8 = frame_link_at(&f, 4, 0).expect("the OSC 8 link");
        assert_eq!(
            (osc8.url.as_str(), osc8.spans.clone()),
            ("https://osc8.example/", vec![(0, 2..8)])
        );
        let plain = frame_link_at(&f, 15, 0).expect("the plain URL");
        assert_eq!((plain.url.as_str(), plain.spans), ("http://x.io/p", vec![(0, 11..24)]));
        assert_eq!(frame_link_at(&f, 24, 0), None, "the full stop is not part of it");
        assert_eq!(frame_link_at(&f, 0, 0), None);
        // A URL that wraps is one link across its rows.
        let wrapped = frame_of(20, 4, "x https://example.org/long/path");
        let link = frame_link_at(&wrapped, 3, 1).expect("the wrapped URL");
        assert_eq!(link.url, "https://example.org/long/path");
        assert_eq!(link.spans, vec![(0, 2..20), (1, 0..11)]);
    }

    #[test]
    fn trailing_punctuation_is_not_part_of_a_url() {
        let cases = [
            ("http://a.b/c.", "http://a.b/c"),
            ("http://a.b/c).", "http://a.b/c"),
            ("http://a.b/(c)", "http://a.b/(c)"),
            ("http://a.b/c?!", "http://a.b/c"),
            ("http://a.b/x]", "http://a.b/x"),
            ("http://a.b/[x]", "http://a.b/[x]"),
            ("http://a.b/'", "http://a.b/"),
        ];
        for (input, expected) in cases {
            assert_eq!(trim_url(input), expected, "{input:?}");
        }
    }

    #[test]
    fn only_allowed_schemes_are_opened() {
        let cases = [
            ("https://example.org", true),
            ("HTTP://example.org", true),
            ("file:///etc/hosts", true),
            ("mailto:a@b.c", true),
            ("ftp://f.org", true),
            ("javascript:alert(1)", false),
            ("ssh://host", false),
            ("no scheme", false),
            ("://nothing", false),
        ];
        for (url, ok) in cases {
            assert_eq!(allowed(url), ok, "{url:?}");
        }
        assert!(
            matches!(open("javascript:alert(1)"), Err(OpenError::Scheme(s)) if s == "javascript")
        );
    }
}
