//! The system fonts the window falls back to for what the bundled font lacks: CJK and colour
//! emoji. cosmic-text picks a fallback face per missing code point from the system fonts the
//! renderer loads; this module only finds out whether one exists, for `berth doctor`.

use glyphon::cosmic_text::skrifa::{self, MetadataProvider as _};
use glyphon::fontdb;

/// A kind of text the bundled font cannot draw, a character to probe it with, and the Debian
/// package that provides a font for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback {
    /// What it is for.
    pub what: &'static str,
    /// A character only a fallback font draws.
    pub probe: char,
    /// Whether the fallback must have colour glyphs.
    pub colour: bool,
    /// The Debian package to install.
    pub package: &'static str,
}

/// The fallbacks `berth doctor` checks.
pub const FALLBACKS: [Fallback; 2] = [
    Fallback { what: "CJK", probe: '漢', colour: false, package: "fonts-noto-cjk" },
    Fallback {
        what: "colour emoji", probe: '🦀', colour: true, package: "fonts-noto-color-emoji"
    },
];

/// The colour glyph tables (bitmaps, layered or SVG outlines).
const COLOUR_TABLES: [&[u8; 4]; 5] = [b"CBDT", b"COLR", b"sbix", b"SVG ", b"CPAL"];

/// The family of a font in `db` that draws `fallback.probe` (in colour when it must), if any.
pub fn font_for(db: &fontdb::Database, fallback: &Fallback) -> Option<String> {
    db.faces().find_map(|face| {
        let covers = db.with_face_data(face.id, |data, index| {
            let Ok(font) = skrifa::FontRef::from_index(data, index) else { return false };
            let mapped = font.charmap().map(fallback.probe).is_some();
            let coloured =
                || COLOUR_TABLES.iter().any(|tag| font.table_data(skrifa::Tag::new(tag)).is_some());
            mapped && (!fallback.colour || coloured())
        })?;
        covers.then(|| face.families.first().map(|(name, _)| name.clone())).flatten()
    })
}

/// The system's fonts, as the renderer loads them.
pub fn system_fonts() -> fontdb::Database {
    let mut db = fontdb::Database::new();
    db.load_system_fonts();
    db
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled font draws neither probe: they need a fallback (else the check is moot).
    #[test]
    fn the_bundled_font_needs_both_fallbacks() {
        let mut db = fontdb::Database::new();
        for bytes in super::super::text::bundled_fonts() {
            db.load_font_data(bytes.to_vec());
        }
        assert!(db.faces().count() >= 1);
        for fallback in &FALLBACKS {
            assert_eq!(font_for(&db, fallback), None, "{fallback:?}");
        }
        let plain = Fallback { what: "latin", probe: 'A', colour: false, package: "" };
        assert!(font_for(&db, &plain).is_some(), "the probe finds a glyph the font has");
        let colour = Fallback { colour: true, ..plain };
        assert_eq!(font_for(&db, &colour), None, "the bundled font has no colour glyphs");
    }
}
