//! Small text helpers for styled lines: removing escape sequences.
//!
//! Owns nothing but string functions; no terminal state.

/// Removes escape sequences (CSI such as SGR, OSC, and two-byte ESC sequences) from a line,
/// leaving its printable text.
pub fn strip_escapes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            if !c.is_control() || c == '\t' {
                out.push(c);
            }
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates up to a final byte in @..~.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_removed_and_text_kept() {
        let cases = [
            ("plain", "plain"),
            ("\x1b[31mred\x1b[0m", "red"),
            ("\x1b[38;2;1;2;3mrgb\x1b[m and \x1b[1;4mbold\x1b[0m", "rgb and bold"),
            ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
            ("\x1b]0;title\x07after", "after"),
            ("tab\there", "tab\there"),
            ("bell\x07", "bell"),
            ("wide 漢字 \x1b[7mx", "wide 漢字 x"),
            ("cut \x1b[3", "cut "),
        ];
        for (input, want) in cases {
            assert_eq!(strip_escapes(input), want, "{input:?}");
        }
    }
}
