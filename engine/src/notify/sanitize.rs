//! Making untrusted text safe to show: a single-line title ([`sanitize`]), a body that keeps
//! its lines ([`sanitize_body`]) and a kitty identifier. Control characters and bidi overrides
//! go; lengths are bounded in characters, an ellipsis marking the cut.
//!
//! It must not decide what a notification is (the parser does); it only cleans text.

/// The most characters of a kitty notification id (`i=`) that are kept.
pub const MAX_KITTY_ID_CHARS: usize = 64;

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
pub(super) fn sanitize_kitty_id(raw: &[u8]) -> Option<String> {
    let id: String = raw
        .iter()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
        .take(MAX_KITTY_ID_CHARS)
        .map(|&b| char::from(b))
        .collect();
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
