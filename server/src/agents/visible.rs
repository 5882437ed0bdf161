//! Text shown to a person who decides: every character that would hide or reorder what they
//! read (controls, bidirectional overrides, zero-width and other invisible characters) written
//! out as `⟨U+202E⟩`. It owns only that mapping; where it is applied is its callers' business.

/// Whether a character would hide or reorder what a person reads: a control other than the
/// line feed, a bidirectional embedding, override, isolate or mark, a zero-width or other
/// invisible format character, a tag character.
fn is_hiding(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// The text with every hiding character (see [`is_hiding`]) written out as `⟨U+202E⟩`, so
/// that what a person reads is what runs; line feeds stay.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_hiding(c) {
            out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}
