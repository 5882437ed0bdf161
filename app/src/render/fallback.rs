//! The system fonts the window falls back to for what the bundled font lacks: CJK and colour
//! emoji. cosmic-text picks a fallback face per missing code point from the system fonts the
//! renderer loads; this module finds out which one it picks, for `berth doctor`: the families
//! cosmic-text's own lists prefer for the script (at the renderer's locale) first, then its
//! common fallbacks, then any other face that draws the character, in the font database's
//! order — so a machine with another CJK font beside Noto is told Noto, as the window draws.

use glyphon::cosmic_text::skrifa::{self, MetadataProvider as _};
use glyphon::cosmic_text::{Fallback as _, PlatformFallback};
use glyphon::fontdb;
use unicode_script::Script;

/// The locale the renderer's `FontSystem` is made with (defined in render/text.rs, which this
/// file may import but not the other way round), which picks among cosmic-text's CJK families.
pub use super::text::RENDER_LOCALE;

/// A kind of text the bundled font cannot draw, a character to probe it with, and the Debian
/// package that provides a font for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback {
    /// What it is for.
    pub what: &'static str,
    /// A character only a fallback font draws.
    pub probe: char,
    /// Its script, for cosmic-text's per-script fallback list.
    pub script: Script,
    /// Whether the fallback must have colour glyphs.
    pub colour: bool,
    /// The Debian package to install.
    pub package: &'static str,
}

/// The fallbacks `berth doctor` checks.
pub const FALLBACKS: [Fallback; 2] = [
    Fallback {
        what: "CJK",
        probe: '漢',
        script: Script::Han,
        colour: false,
        package: "fonts-noto-cjk",
    },
    Fallback {
        what: "colour emoji",
        probe: '🦀',
        script: Script::Common,
        colour: true,
        package: "fonts-noto-color-emoji",
    },
];

/// The colour glyph tables (bitmaps, layered or SVG outlines).
const COLOUR_TABLES: [&[u8; 4]; 5] = [b"CBDT", b"COLR", b"sbix", b"SVG ", b"CPAL"];

/// The family of the font in `db` that the renderer falls back to for `fallback.probe` (in
/// colour when it must), if any (see the module header for the order).
pub fn font_for(db: &fontdb::Database, fallback: &Fallback) -> Option<String> {
    let platform = PlatformFallback;
    let preferred: Vec<&str> = platform
        .script_fallback(fallback.script, RENDER_LOCALE)
        .iter()
        .chain(platform.common_fallback())
        .copied()
        .collect();
    let rank = |face: &fontdb::FaceInfo| {
        face.families
            .iter()
            .filter_map(|(name, _)| preferred.iter().position(|p| p == name))
            .min()
            .unwrap_or(preferred.len())
    };
    db.faces()
        .filter(|face| draws(db, face, fallback))
        .enumerate()
        .min_by_key(|(order, face)| (rank(face), *order))
        .and_then(|(_, face)| face.families.first().map(|(name, _)| name.clone()))
}

/// Whether `face` draws `fallback.probe` (in colour when it must).
fn draws(db: &fontdb::Database, face: &fontdb::FaceInfo, fallback: &Fallback) -> bool {
    db.with_face_data(face.id, |data, index| {
        let Ok(font) = skrifa::FontRef::from_index(data, index) else { return false };
        let mapped = font.charmap().map(fallback.probe).is_some();
        let coloured =
            || COLOUR_TABLES.iter().any(|tag| font.table_data(skrifa::Tag::new(tag)).is_some());
        mapped && (!fallback.colour || coloured())
    })
    .unwrap_or(false)
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
        let plain = Fallback {
            what: "latin",
            probe: 'A',
            script: Script::Latin,
            colour: false,
            package: "",
        };
        assert!(font_for(&db, &plain).is_some(), "the probe finds a glyph the font has");
        let colour = Fallback { colour: true, ..plain };
        assert_eq!(font_for(&db, &colour), None, "the bundled font has no colour glyphs");
    }
}
