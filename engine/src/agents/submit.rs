//! The bytes of a submitted prompt (`pane.submit`): the text as one paste, and the Enter that
//! follows it as a key press in the program's keyboard mode.
//!
//! Pure functions of the text and two mode flags the caller reads from the terminal; when and
//! how often the bytes are written is the server's business, per agent
//! ([`super::SubmitProfile`]).

/// The longest prompt accepted, in bytes of UTF-8.
pub const MAX_PROMPT_BYTES: usize = 32 * 1024;

const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// The bytes that paste `text` into a program.
///
/// With `bracketed` (the program turned on DECSET 2004) the text goes between `ESC [200~` and
/// `ESC [201~` exactly as given, line ends included, less any `ESC [201~` (or `ESC [200~`)
/// inside it, so it cannot end the paste early; otherwise line ends become carriage returns,
/// as a terminal sends a paste to a program that did not ask for brackets.
pub fn paste_bytes(text: &str, bracketed: bool) -> Vec<u8> {
    if !bracketed {
        return text.replace("\r\n", "\r").replace('\n', "\r").into_bytes();
    }
    let mut clean = text.to_owned();
    // Removing one marker may join the text around it into another; repeat until none is left.
    while clean.contains(PASTE_END) || clean.contains(PASTE_START) {
        clean = clean.replace(PASTE_END, "").replace(PASTE_START, "");
    }
    let mut bytes = Vec::with_capacity(clean.len() + 12);
    bytes.extend_from_slice(PASTE_START.as_bytes());
    bytes.extend_from_slice(clean.as_bytes());
    bytes.extend_from_slice(PASTE_END.as_bytes());
    bytes
}

/// The bytes of one Enter press: `CSI 13 u` when the program asked the kitty keyboard protocol
/// to report every key as an escape code (its flag 8, which is when the protocol encodes Enter
/// at all), else a carriage return.
pub fn enter_bytes(kitty_all_keys_as_escapes: bool) -> &'static [u8] {
    if kitty_all_keys_as_escapes {
        b"\x1b[13u"
    } else {
        b"\r"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_pasted_whole_and_cannot_end_the_paste_early() {
        let cases: &[(&str, bool, &str)] = &[
            ("hello", true, "\x1b[200~hello\x1b[201~"),
            ("two\nlines\n", true, "\x1b[200~two\nlines\n\x1b[201~"),
            ("a\x1b[201~b", true, "\x1b[200~ab\x1b[201~"),
            ("a\x1b[20\x1b[201~1~b", true, "\x1b[200~ab\x1b[201~"),
            ("a\x1b[200~b", true, "\x1b[200~ab\x1b[201~"),
            ("keeps \x1b[1m other escapes", true, "\x1b[200~keeps \x1b[1m other escapes\x1b[201~"),
            ("ls\n", false, "ls\r"),
            ("a\r\nb\nc", false, "a\rb\rc"),
            ("", true, "\x1b[200~\x1b[201~"),
        ];
        for (text, bracketed, want) in cases {
            let got = paste_bytes(text, *bracketed);
            assert_eq!(String::from_utf8(got).unwrap(), *want, "{text:?} bracketed {bracketed}");
        }
    }

    #[test]
    fn enter_follows_the_keyboard_mode() {
        assert_eq!(enter_bytes(false), b"\r");
        assert_eq!(enter_bytes(true), b"\x1b[13u");
    }
}
