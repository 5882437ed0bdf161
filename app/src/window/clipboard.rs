//! The desktop clipboard and the X11 primary selection, through `arboard`.
//!
//! Owns the one `arboard::Clipboard` of the window (created lazily; a desktop without a
//! clipboard leaves copy and paste doing nothing but logging) and the paste encoding
//! (bracketed paste, line ends). It must not write to a pane: the window sends the bytes.

use arboard::{GetExtLinux, LinuxClipboardKind, SetExtLinux};

/// Which of the two X11 selections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The clipboard (Ctrl+Shift+C / Ctrl+Shift+V).
    Clipboard,
    /// The primary selection (select to copy, middle click to paste).
    Primary,
}

impl Selection {
    fn kind(self) -> LinuxClipboardKind {
        match self {
            Selection::Clipboard => LinuxClipboardKind::Clipboard,
            Selection::Primary => LinuxClipboardKind::Primary,
        }
    }
}

/// The window's clipboard.
#[derive(Default)]
pub struct Clipboard {
    inner: Option<arboard::Clipboard>,
    failed: bool,
}

impl Clipboard {
    fn get(&mut self) -> Option<&mut arboard::Clipboard> {
        if self.inner.is_none() && !self.failed {
            match arboard::Clipboard::new() {
                Ok(clipboard) => self.inner = Some(clipboard),
                Err(e) => {
                    tracing::warn!(error = %e, "no clipboard: copy and paste are off");
                    self.failed = true;
                }
            }
        }
        self.inner.as_mut()
    }

    /// Puts `text` on a selection.
    pub fn store(&mut self, which: Selection, text: &str) {
        let Some(clipboard) = self.get() else { return };
        if let Err(e) = clipboard.set().clipboard(which.kind()).text(text) {
            tracing::warn!(error = %e, ?which, "could not set the clipboard");
        }
    }

    /// The text on a selection, if any.
    pub fn load(&mut self, which: Selection) -> Option<String> {
        let clipboard = self.get()?;
        match clipboard.get().clipboard(which.kind()).text() {
            Ok(text) => Some(text),
            Err(arboard::Error::ContentNotAvailable) => None,
            Err(e) => {
                tracing::warn!(error = %e, ?which, "could not read the clipboard");
                None
            }
        }
    }
}

/// The bytes to send for pasted `text`: inside `ESC [200~ … ESC [201~` when the program asked
/// for bracketed paste (with any ESC in the text removed, so the paste cannot end the bracket
/// early), else with line ends turned into carriage returns as a typed Enter would send.
pub fn paste_bytes(text: &str, bracketed: bool) -> String {
    if bracketed {
        let clean: String = text.chars().filter(|c| *c != '\x1b').collect();
        format!("\x1b[200~{clean}\x1b[201~")
    } else {
        text.replace("\r\n", "\r").replace('\n', "\r")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paste_encoding() {
        let cases = [
            ("ls\n", false, "ls\r"),
            ("a\r\nb\nc", false, "a\rb\rc"),
            ("ls\n", true, "\x1b[200~ls\n\x1b[201~"),
            ("x\x1b[201~rm -rf\n", true, "\x1b[200~x[201~rm -rf\n\x1b[201~"),
        ];
        for (text, bracketed, expected) in cases {
            assert_eq!(paste_bytes(text, bracketed), expected, "{text:?} bracketed {bracketed}");
        }
    }
}
