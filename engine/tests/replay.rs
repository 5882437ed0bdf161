//! Golden replays (CONVENTIONS #11): PTY output recorded from real programs, replayed through
//! `PaneTerminal`, compared with the grid it produced when the case was recorded.
//!
//! Each `tests/replays/NAME.bytes` is replayed at 80x24 whole, a byte at a time and in odd
//! chunk sizes; all must give the same result, which must match `NAME.expected`. Record mode,
//! `BERTH_RECORD=1 cargo test -p berth-engine --test replay`, rewrites the `.expected` files
//! from the current engine instead (review the diff before committing it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use berth_engine::terminal::{
    PaneTerminal, ReadRequest, TermSize, TerminalEvent, DEFAULT_SCROLLBACK,
};

/// The size every case was recorded at.
const SIZE: TermSize = TermSize { cols: 80, rows: 24 };

/// Chunk patterns to replay with, cycled through the input; the first is "whole".
const CHUNKINGS: &[&[usize]] = &[&[usize::MAX], &[1], &[7], &[4096], &[1, 3, 17, 512, 2]];

fn replays_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("replays")
}

/// Feeds `bytes` in chunks whose sizes cycle through `chunking`; returns the terminal and all
/// events it reported.
fn replay(
    bytes: &[u8],
    chunking: &[usize],
    scrollback: usize,
) -> (PaneTerminal, Vec<TerminalEvent>) {
    let mut term = PaneTerminal::new(SIZE, scrollback);
    let mut events = Vec::new();
    let mut rest = bytes;
    for &size in chunking.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        term.feed(piece);
        events.extend(term.take_events());
        rest = tail;
    }
    term.flush_sync();
    events.extend(term.take_events());
    (term, events)
}

/// Escapes control characters so that a snapshot is readable text: ESC is `\e`, other
/// controls are `\xNN`, a backslash is `\\`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

fn escape_bytes(bytes: &[u8]) -> String {
    escape(&String::from_utf8_lossy(bytes))
}

/// The snapshot of a replayed terminal that `.expected` files hold.
///
/// Events are grouped by kind: within one `feed`, OSC 7/9/99/777 events are reported before
/// alacritty's, so their interleaving depends on chunking but the order within a kind does not.
fn snapshot(name: &str, term: &PaneTerminal, events: &[TerminalEvent]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Golden replay of {name}.bytes at {}x{}. Regenerate with \
         BERTH_RECORD=1 cargo test -p berth-engine --test replay",
        SIZE.cols, SIZE.rows
    );
    let point = term.term().grid().cursor.point;
    let _ = writeln!(out, "cursor: line {}, column {}", point.line.0, point.column.0);
    let _ = writeln!(out, "alt_screen: {}", term.alt_screen());
    let _ = writeln!(out, "app_cursor: {}", term.app_cursor());
    let _ = writeln!(out, "title: {}", term.title().map_or("(none)".to_owned(), escape));
    let _ = writeln!(out, "cwd: {}", term.cwd().map_or("(none)".to_owned(), escape));

    let mut titles = Vec::new();
    let mut cwds = Vec::new();
    let mut notifications = Vec::new();
    let mut replies = Vec::new();
    let mut bells = 0;
    let mut marks = Vec::new();
    for event in events {
        match event {
            TerminalEvent::Title(title) => {
                titles.push(title.as_deref().map_or("(reset)".to_owned(), escape));
            }
            TerminalEvent::Cwd(path) => cwds.push(escape(path)),
            TerminalEvent::Notify { kind, payload } => {
                notifications.push(format!("{kind} {}", escape_bytes(payload)));
            }
            TerminalEvent::PtyWrite(bytes) => replies.push(escape_bytes(bytes)),
            TerminalEvent::Bell => bells += 1,
            TerminalEvent::PromptMark(mark) => marks.push(mark.to_string()),
        }
    }
    let _ = writeln!(out, "events:");
    for (kind, list) in [
        ("title", titles),
        ("cwd", cwds),
        ("notify", notifications),
        ("pty_write", replies),
        ("mark", marks),
    ] {
        for item in list {
            let _ = writeln!(out, "  {kind}: {item}");
        }
    }
    let _ = writeln!(out, "  bells: {bells}");

    let all = term.read(&ReadRequest { since: Some(0), last: None, ansi: true });
    let screen_top = all.next_seq - u64::try_from(point.line.0).unwrap_or(0);
    let _ = writeln!(out, "oldest_seq: {}", all.oldest_seq);
    let _ = writeln!(out, "next_seq: {}", all.next_seq);
    let _ = writeln!(out, "truncated: {}", all.truncated);
    let _ = writeln!(out, "lines (history, then the screen from seq {screen_top}):");
    for (offset, line) in all.lines.iter().enumerate() {
        let seq = all.first_seq + offset as u64;
        let marker = if seq >= screen_top { '|' } else { ':' };
        let _ = writeln!(out, "{seq:>5} {marker}{}", escape(line));
    }
    out
}

/// A line diff of `expected` and `actual` (longest common subsequence), changed lines only,
/// with their line numbers in the expected file.
fn diff(expected: &str, actual: &str) -> String {
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    let mut lcs = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            i += 1;
            j += 1;
        } else if j < new.len() && (i == old.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, "{:>4} + {}", i + 1, new[j]);
            j += 1;
        } else {
            let _ = writeln!(out, "{:>4} - {}", i + 1, old[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn golden_replays() {
    let record = std::env::var("BERTH_RECORD").is_ok_and(|value| value == "1");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(replays_dir())
        .expect("tests/replays is readable")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "bytes"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 4, "expected the recorded cases in {}", replays_dir().display());

    let mut failures = Vec::new();
    for path in &cases {
        let name = path.file_stem().and_then(|stem| stem.to_str()).unwrap_or("?").to_owned();
        let bytes = std::fs::read(path).expect("replay bytes are readable");

        let (term, events) = replay(&bytes, CHUNKINGS[0], DEFAULT_SCROLLBACK);
        let actual = snapshot(&name, &term, &events);
        for chunking in &CHUNKINGS[1..] {
            let (other, other_events) = replay(&bytes, chunking, DEFAULT_SCROLLBACK);
            let other = snapshot(&name, &other, &other_events);
            if other != actual {
                failures.push(format!(
                    "{name}: chunks of {chunking:?} differ from one whole feed:\n{}",
                    diff(&actual, &other)
                ));
            }
        }

        // A tiny ring shows fewer lines but must number them the same way.
        let (small, _) = replay(&bytes, &[333], 3);
        let full = term.read(&ReadRequest { since: Some(0), last: None, ansi: false });
        let part = small.read(&ReadRequest { since: Some(0), last: None, ansi: false });
        assert_eq!(part.next_seq, full.next_seq, "{name}: next_seq with a ring of 3");
        for (offset, line) in part.lines.iter().enumerate() {
            let seq = part.first_seq + offset as u64;
            let index = usize::try_from(seq - full.first_seq).expect("seq offset fits");
            assert_eq!(Some(line), full.lines.get(index), "{name}: line {seq} with a ring of 3");
        }

        let expected_path = path.with_extension("expected");
        if record {
            std::fs::write(&expected_path, &actual).expect("expected file is writable");
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => (),
            Ok(expected) => failures.push(format!(
                "{name}: the grid differs from {} (- expected, + actual; \
                 BERTH_RECORD=1 rewrites it):\n{}",
                expected_path.display(),
                diff(&expected, &actual)
            )),
            Err(error) => failures.push(format!(
                "{name}: cannot read {} ({error}); record it with BERTH_RECORD=1",
                expected_path.display()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} replay failure(s):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}
