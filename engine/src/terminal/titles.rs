//! The icon label and the title stack, and the title reports (XTWINOPS 20 and 21).
//!
//! It owns what alacritty does not keep: the icon label (OSC 1, and OSC 0 with the window title;
//! alacritty keeps only the window title) and xterm's title stack, whose entries hold the icon
//! label, the window title or both (`CSI 22 ; Ps t` pushes, `CSI 23 ; Ps t` pops; vte drops `Ps`,
//! so the OSC scanner reports them). The window title itself stays the Term's: a pop hands it
//! back to the caller, which sets it through the Term so that its event goes out as for OSC 2.
//!
//! The reports echo program-set text back into the program's input, which is a known
//! injection route: a title holding a newline, reported to a shell, runs as a command (xterm's
//! CVE-2003-0063). Berth answers them, safely: [`report`] sends the title as the server shows
//! it, through the same sanitiser (`crate::notify::sanitize`): every C0 and C1 control and
//! DEL is dropped (line breaks become a space), and bidi overrides, so the reply holds no CR,
//! LF, ESC or ST inside the text and ends only where Berth ends it, and it holds at most
//! [`MAX_REPORTED_TITLE_CHARS`]. A program can then learn no more than what it, or another
//! program on the same PTY, put in the title, and can make the reply type nothing but
//! printable text. No I/O.

/// The most characters of a title that a report carries (a longer one is cut and ends in
/// `…`): the cap the server puts on the titles it shows and keeps.
pub const MAX_REPORTED_TITLE_CHARS: usize = crate::notify::MAX_TITLE_CHARS;

/// The most entries on the title stack, as xterm's `MAX_SAVED_TITLES`; a push onto a full stack
/// drops the oldest entry.
pub const MAX_SAVED_TITLES: usize = 10;

/// A title as the Term holds it: `None` while no program set one.
pub(super) type Title = Option<String>;

/// One entry of the title stack: what one push saved (either may be absent, for a push of the
/// other alone).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SavedTitles {
    icon: Option<Title>,
    window: Option<Title>,
}

/// The icon label and the title stack of one terminal.
#[derive(Debug, Default)]
pub(super) struct Titles {
    /// The icon label (OSC 0 or 1), `None` while no program set one.
    pub(super) icon: Title,
    /// The title stack, oldest entry first, at most [`MAX_SAVED_TITLES`].
    stack: Vec<SavedTitles>,
}

/// Whether `which` (XTWINOPS 22/23's `Ps`: 0 both, 1 icon, 2 window) names the icon label and
/// the window title.
fn names(which: u16) -> (bool, bool) {
    (which != 2, which != 1)
}

impl Titles {
    /// `CSI 22 ; which t`: saves the icon label and/or `window` (the Term's window title).
    pub(super) fn push(&mut self, which: u16, window: &Title) {
        let (icon, win) = names(which);
        if self.stack.len() >= MAX_SAVED_TITLES {
            self.stack.remove(0);
        }
        self.stack.push(SavedTitles {
            icon: icon.then(|| self.icon.clone()),
            window: win.then(|| window.clone()),
        });
    }

    /// `CSI 23 ; which t`: takes the top entry off the stack and restores the icon label from
    /// it (when `which` names it); returns the window title to restore, if `which` names it and
    /// one was saved.
    ///
    /// As in xterm, there is one stack: a pop takes the top entry whatever it holds, so pushing
    /// both and popping one leaves nothing for a later pop of the other. A title the entry does
    /// not hold comes from the nearest entry below that does, taken off that entry (so "push
    /// the icon's, push the window's, pop both" restores both); an entry left empty is dropped.
    pub(super) fn pop(&mut self, which: u16) -> Option<Title> {
        let (icon, window) = names(which);
        let mut top = self.stack.pop()?;
        if icon && top.icon.is_none() {
            top.icon = self.take_below(|entry| &mut entry.icon);
        }
        if window && top.window.is_none() {
            top.window = self.take_below(|entry| &mut entry.window);
        }
        if icon {
            if let Some(label) = top.icon {
                self.icon = label;
            }
        }
        if window {
            top.window
        } else {
            None
        }
    }

    /// Takes the field `part` of the nearest entry that holds it, dropping the entry if it is
    /// left empty.
    fn take_below(
        &mut self,
        part: impl Fn(&mut SavedTitles) -> &mut Option<Title>,
    ) -> Option<Title> {
        let index = self.stack.iter_mut().rposition(|entry| part(entry).is_some())?;
        let taken = part(&mut self.stack[index]).take();
        if self.stack[index] == SavedTitles::default() {
            self.stack.remove(index);
        }
        taken
    }
}

/// The reply to XTWINOPS 20 (`code` `L`, the icon label) or 21 (`l`, the window title), in
/// xterm's form `OSC code text ST` with xterm's 7-bit ST (`ESC \`) whatever ended the OSC that
/// set it: the text as the server shows it, without control characters or bidi overrides, at
/// most [`MAX_REPORTED_TITLE_CHARS`].
pub(super) fn report(code: char, title: Option<&str>) -> Vec<u8> {
    let text = crate::notify::sanitize(title.unwrap_or_default(), MAX_REPORTED_TITLE_CHARS);
    format!("\x1b]{code}{text}\x1b\\").into_bytes()
}
