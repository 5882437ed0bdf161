//! Fonts, cell metrics and shaped text: the bundled JetBrains Mono (or a system family the
//! config names), system fonts as fallback, the line height and ligature settings, and a
//! cache of shaped rows keyed by a hash of their content.
//!
//! It owns the cosmic-text `FontSystem` and `SwashCache` and the rule that puts every glyph on
//! its cell: a row is shaped as one line, and any glyph that does not land exactly on its
//! cells (a wide character, a glyph from a fallback font, right-to-left text) is shaped again
//! on its own and placed on its cell. A row is shaped again only when its content changes.
//! It must not touch wgpu: `render/mod.rs` hands the shaped buffers to glyphon.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;

use glyphon::cosmic_text::{FeatureTag, FontFeatures};
use glyphon::{
    fontdb, Attrs, Buffer, Color, Family, FontSystem, Metrics, Shaping, Style, SwashCache, Weight,
    Wrap,
};

use super::palette::Rgb;
use super::scene::CellView;

/// The family name of the bundled font.
pub const FONT_FAMILY: &str = "JetBrains Mono";

/// The locale the renderer's `FontSystem` is made with; it picks among cosmic-text's CJK
/// families (`render/fallback.rs` names the same fonts for `berth doctor`).
pub const RENDER_LOCALE: &str = "en-US";

/// The bundled faces: regular, bold, italic, bold italic (OFL 1.1, see assets/fonts/OFL.txt).
const BUNDLED_FONTS: [&[u8]; 4] = [
    include_bytes!("../../../assets/fonts/JetBrainsMono-Regular.ttf"),
    include_bytes!("../../../assets/fonts/JetBrainsMono-Bold.ttf"),
    include_bytes!("../../../assets/fonts/JetBrainsMono-Italic.ttf"),
    include_bytes!("../../../assets/fonts/JetBrainsMono-BoldItalic.ttf"),
];

/// The bundled font files.
pub fn bundled_fonts() -> &'static [&'static [u8]] {
    &BUNDLED_FONTS
}

/// Shaped rows kept at most; past this, rows not used in the last frame are dropped.
const MAX_CACHED_ROWS: usize = 8192;

/// Frames a shaped row stays cached without being drawn.
const ROW_TTL_FRAMES: u64 = 120;

/// How far (in pixels) a glyph may be from its cell and still count as on it.
const ALIGN_EPSILON: f32 = 0.01;

/// Sizes derived from the font, all in physical pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellMetrics {
    /// Font size.
    pub font_size: f32,
    /// Cell width: the advance of 'M', rounded to whole pixels.
    pub cell_w: f32,
    /// Cell height: ascent plus descent, rounded to whole pixels.
    pub cell_h: f32,
    /// The baseline, from the top of the cell, where glyphon puts it.
    pub baseline: f32,
    /// Extra advance per glyph (em) that makes the font's advance equal to `cell_w`.
    pub letter_spacing: f32,
    /// Top of an underline, from the top of the cell.
    pub underline_top: f32,
    /// Thickness of underlines, strikethrough and thin cursors.
    pub stroke: f32,
    /// Top of a strikethrough, from the top of the cell.
    pub strike_top: f32,
}

/// A piece of a shaped row: a buffer drawn with its left edge at cell `col` (plus `x_offset`
/// pixels, which centres a lone glyph narrower than its cells).
pub struct Segment {
    /// The cell (relative to the row's first cell) where the buffer starts.
    pub col: u16,
    /// Extra pixels to the right.
    pub x_offset: f32,
    /// The shaped text.
    pub buffer: Buffer,
}

/// A shaped row and when it was last drawn.
pub struct CachedRow {
    segments: Vec<Segment>,
    last_used: u64,
}

impl CachedRow {
    /// The row's segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }
}

/// The style a run of text is shaped with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SpanStyle {
    color: Rgb,
    bold: bool,
    italic: bool,
}

/// One drawn cell's text within a row's string.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Byte offset of the cell's text.
    start: usize,
    /// Its cell.
    col: u16,
    /// Cells it covers (1 or 2).
    width: u16,
}

/// A row's cells as one string with styled spans.
struct RowText {
    text: String,
    spans: Vec<(Range<usize>, SpanStyle)>,
    pieces: Vec<Piece>,
}

/// Fonts and the shaped-row cache.
pub struct TextSystem {
    fonts: FontSystem,
    swash: SwashCache,
    /// The bundled faces (regular first).
    bundled: Vec<fontdb::ID>,
    /// The faces of the family in use (regular first): the bundled ones or a system family's.
    primary: Vec<fontdb::ID>,
    /// The family in use, as the font database names it.
    family: String,
    /// Cell height as a multiple of the font's ascent plus descent.
    line_height: f32,
    /// Whether ligatures (`calt`, `liga`, `clig`) are on.
    ligatures: bool,
    features: FontFeatures,
    metrics: CellMetrics,
    rows: HashMap<u64, CachedRow>,
    frame: u64,
    shaped_this_frame: usize,
}

impl TextSystem {
    /// Loads the bundled font (and the system's fonts as fallback when `system_fonts`), and
    /// measures cells for `font_size` pixels.
    pub fn new(font_size: f32, system_fonts: bool) -> Result<Self, String> {
        let mut db = fontdb::Database::new();
        if system_fonts {
            db.load_system_fonts();
            // Another copy of the bundled family (maybe another version) must not win.
            let copies: Vec<fontdb::ID> = db
                .faces()
                .filter(|face| face.families.iter().any(|(name, _)| name == FONT_FAMILY))
                .map(|face| face.id)
                .collect();
            for id in copies {
                db.remove_face(id);
            }
        }
        let mut bundled = Vec::new();
        for bytes in BUNDLED_FONTS {
            bundled.extend(db.load_font_source(fontdb::Source::Binary(Arc::new(bytes))));
        }
        if bundled.len() != BUNDLED_FONTS.len() {
            return Err("the bundled font could not be loaded".into());
        }
        db.set_monospace_family(FONT_FAMILY);
        let mut fonts = FontSystem::new_with_locale_and_db(RENDER_LOCALE.into(), db);
        let features = font_features(false);
        let metrics = measure(&mut fonts, bundled[0], FONT_FAMILY, &features, font_size, 1.0)?;
        Ok(Self {
            fonts,
            swash: SwashCache::new(),
            primary: bundled.clone(),
            bundled,
            family: FONT_FAMILY.to_owned(),
            line_height: 1.0,
            ligatures: false,
            features,
            metrics,
            rows: HashMap::new(),
            frame: 0,
            shaped_this_frame: 0,
        })
    }

    /// The cell metrics.
    pub fn metrics(&self) -> CellMetrics {
        self.metrics
    }

    /// Changes the font size; every row is shaped again.
    pub fn set_font_size(&mut self, font_size: f32) -> Result<(), String> {
        self.remeasure(font_size, self.line_height)
    }

    /// The family in use.
    pub fn family(&self) -> &str {
        &self.family
    }

    /// Uses the font family `name` (the bundled one, or one of the system's fonts; case does
    /// not matter). A family that is not installed leaves the bundled font in use and is an
    /// error saying so; every row is shaped again either way.
    pub fn set_family(&mut self, name: &str) -> Result<(), String> {
        let wanted = name.trim();
        let bundled = (FONT_FAMILY.to_owned(), self.bundled.clone());
        let (family, faces) = if wanted.eq_ignore_ascii_case(FONT_FAMILY) {
            bundled.clone()
        } else {
            let mut faces: Vec<(fontdb::ID, String, bool)> = self
                .fonts
                .db()
                .faces()
                .filter_map(|face| {
                    let (family, _) =
                        face.families.iter().find(|(f, _)| f.eq_ignore_ascii_case(wanted))?;
                    let regular = face.weight == fontdb::Weight::NORMAL
                        && face.style == fontdb::Style::Normal;
                    Some((face.id, family.clone(), regular))
                })
                .collect();
            // The regular face first: the cell is measured on it.
            faces.sort_by_key(|(_, _, regular)| !regular);
            match faces.first() {
                Some((_, family, _)) => {
                    (family.clone(), faces.iter().map(|(id, _, _)| *id).collect())
                }
                None => bundled.clone(),
            }
        };
        let missing = family == FONT_FAMILY && !wanted.eq_ignore_ascii_case(FONT_FAMILY);
        let old = (
            std::mem::replace(&mut self.family, family),
            std::mem::replace(&mut self.primary, faces),
        );
        if let Err(e) = self.remeasure(self.metrics.font_size, self.line_height) {
            // The family cannot be measured (no 'M'): back to what was in use.
            (self.family, self.primary) = old;
            self.remeasure(self.metrics.font_size, self.line_height)?;
            return Err(format!(
                "font family \"{wanted}\" cannot be used ({e}); using {}",
                self.family
            ));
        }
        if missing {
            return Err(format!("font family \"{wanted}\" is not installed; using {FONT_FAMILY}"));
        }
        Ok(())
    }

    /// Sets the cell height as a multiple of the font's (ascent plus descent).
    pub fn set_line_height(&mut self, line_height: f32) -> Result<(), String> {
        if !(line_height.is_finite() && line_height > 0.0) {
            return Err(format!("line height {line_height} is not a positive number"));
        }
        self.remeasure(self.metrics.font_size, line_height)
    }

    /// Turns ligatures (`calt`, `liga`, `clig`) on or off; every row is shaped again.
    pub fn set_ligatures(&mut self, on: bool) {
        if on != self.ligatures {
            self.ligatures = on;
            self.features = font_features(on);
            self.rows.clear();
        }
    }

    /// Measures the cell again for `font_size` and `line_height`, dropping shaped rows.
    fn remeasure(&mut self, font_size: f32, line_height: f32) -> Result<(), String> {
        self.metrics = measure(
            &mut self.fonts,
            self.primary[0],
            &self.family,
            &self.features,
            font_size,
            line_height,
        )?;
        self.line_height = line_height;
        self.rows.clear();
        Ok(())
    }

    /// Starts a frame: counts shaped rows from zero.
    pub fn begin_frame(&mut self) {
        self.frame += 1;
        self.shaped_this_frame = 0;
    }

    /// Rows shaped since [`TextSystem::begin_frame`].
    pub fn shaped_this_frame(&self) -> usize {
        self.shaped_this_frame
    }

    /// Ends a frame: drops rows not drawn for a while, or not drawn this frame when the cache
    /// is full.
    pub fn end_frame(&mut self) {
        let frame = self.frame;
        self.rows.retain(|_, row| frame - row.last_used < ROW_TTL_FRAMES);
        if self.rows.len() > MAX_CACHED_ROWS {
            self.rows.retain(|_, row| row.last_used == frame);
        }
    }

    /// Makes sure the row of `cells` is shaped and returns its key for
    /// [`TextSystem::segments`]. `cursor_text` draws the character in cell `.0` in colour `.1`
    /// (under a block cursor).
    pub fn row(&mut self, cells: &[CellView], cursor_text: Option<(u16, Rgb)>) -> u64 {
        let key = row_key(cells, cursor_text, self.metrics.font_size);
        if let Some(row) = self.rows.get_mut(&key) {
            row.last_used = self.frame;
            return key;
        }
        let segments = self.shape_row(cells, cursor_text);
        self.shaped_this_frame += 1;
        self.rows.insert(key, CachedRow { segments, last_used: self.frame });
        key
    }

    /// The segments of a row returned by [`TextSystem::row`] this frame.
    pub fn segments(&self, key: u64) -> &[Segment] {
        self.rows.get(&key).map_or(&[], |row| row.segments.as_slice())
    }

    /// The parts glyphon's `prepare` needs at once.
    pub fn parts(&mut self) -> (&mut FontSystem, &mut SwashCache, &HashMap<u64, CachedRow>) {
        (&mut self.fonts, &mut self.swash, &self.rows)
    }

    /// Shapes a row, splitting off glyphs that do not sit on their cells.
    fn shape_row(&mut self, cells: &[CellView], cursor_text: Option<(u16, Rgb)>) -> Vec<Segment> {
        let row = RowText::build(cells, 0..cells.len(), cursor_text);
        let Some(first) = row.pieces.first().copied() else { return Vec::new() };
        let buffer = self.shape(&row, self.metrics.font_size);
        let lone = self.misaligned(&buffer, &row);
        if !lone.contains(&true) {
            return vec![Segment { col: first.col, x_offset: 0.0, buffer }];
        }
        let mut segments = Vec::new();
        let mut run: Option<Range<usize>> = None;
        for (i, is_lone) in lone.iter().copied().enumerate() {
            if is_lone {
                if let Some(run) = run.take() {
                    segments.push(self.shape_cells(cells, &row, run, cursor_text, false));
                }
                segments.push(self.shape_cells(cells, &row, i..i + 1, cursor_text, true));
            } else {
                let start = run.as_ref().map_or(i, |run| run.start);
                run = Some(start..i + 1);
            }
        }
        if let Some(run) = run {
            segments.push(self.shape_cells(cells, &row, run, cursor_text, false));
        }
        segments
    }

    /// Shapes the cells of `pieces` of `row` as one segment; a `lone` glyph is centred on its
    /// cells.
    fn shape_cells(
        &mut self,
        cells: &[CellView],
        row: &RowText,
        pieces: Range<usize>,
        cursor_text: Option<(u16, Rgb)>,
        lone: bool,
    ) -> Segment {
        let first = row.pieces[pieces.start];
        let last = row.pieces[pieces.end - 1];
        let end = usize::from(last.col) + usize::from(last.width);
        let part = RowText::build(cells, usize::from(first.col)..end.min(cells.len()), cursor_text);
        let mut buffer = self.shape(&part, self.metrics.font_size);
        let mut x_offset = 0.0;
        if lone {
            let cells_w = f32::from(first.width) * self.metrics.cell_w;
            let mut width = line_width(&buffer);
            if width > cells_w + 0.5 {
                // A fallback glyph wider than its cells is drawn smaller, so that it does not
                // cover its neighbours.
                buffer = self.shape(&part, self.metrics.font_size * cells_w / width);
                width = line_width(&buffer);
            }
            x_offset = ((cells_w - width) / 2.0).max(0.0).round();
        }
        Segment { col: first.col, x_offset, buffer }
    }

    /// Shapes a row's text at `font_size` into a buffer one cell high.
    fn shape(&mut self, row: &RowText, font_size: f32) -> Buffer {
        let mut buffer = Buffer::new_empty(Metrics::new(font_size, self.metrics.cell_h));
        buffer.set_wrap(Wrap::None);
        let default = self.attrs(SpanStyle { color: Rgb::default(), bold: false, italic: false });
        let spans =
            row.spans.iter().map(|(range, style)| (&row.text[range.clone()], self.attrs(*style)));
        buffer.set_rich_text(spans, &default, Shaping::Advanced, None);
        buffer.shape_until_scroll(&mut self.fonts, false);
        buffer
    }

    /// For each piece of `row`, whether its glyph must be placed on its own: it is wide, comes
    /// from a fallback font, or does not sit exactly on its cells.
    fn misaligned(&self, buffer: &Buffer, row: &RowText) -> Vec<bool> {
        let cell_w = self.metrics.cell_w;
        let first_col = row.pieces.first().map_or(0, |piece| piece.col);
        let mut lone: Vec<bool> = row.pieces.iter().map(|piece| piece.width != 1).collect();
        for run in buffer.layout_runs() {
            for glyph in run.glyphs {
                if glyph.w == 0.0 {
                    // A zero-advance mark sits on its base character.
                    continue;
                }
                // Pieces are sorted by `start` and the first starts at 0.
                let index = row
                    .pieces
                    .partition_point(|piece| piece.start <= glyph.start)
                    .saturating_sub(1);
                let piece = row.pieces[index];
                let x = f32::from(piece.col - first_col) * cell_w;
                let w = f32::from(piece.width) * cell_w;
                let on_cell =
                    (glyph.x - x).abs() < ALIGN_EPSILON && (glyph.w - w).abs() < ALIGN_EPSILON;
                if !on_cell || !self.primary.contains(&glyph.font_id) {
                    lone[index] = true;
                }
            }
        }
        lone
    }

    /// The cosmic-text attributes of a span.
    fn attrs(&self, style: SpanStyle) -> Attrs<'_> {
        attrs(style, self.metrics.letter_spacing, &self.features, &self.family)
    }
}

impl RowText {
    /// The text of `cells[range]` (trailing blanks dropped), with one piece per drawn cell.
    fn build(cells: &[CellView], range: Range<usize>, cursor_text: Option<(u16, Rgb)>) -> Self {
        let mut row = Self { text: String::new(), spans: Vec::new(), pieces: Vec::new() };
        let mut end = 0;
        for (col, cell) in cells.iter().enumerate().take(range.end).skip(range.start) {
            if cell.flags.spacer {
                continue;
            }
            let start = row.text.len();
            let blank = cell.ch == ' ' && cell.extra.is_none();
            row.text.push(printable(cell.ch));
            if let Some(extra) = &cell.extra {
                row.text.extend(extra.chars().map(printable));
            }
            // Cell indices come from a `u16`-wide screen.
            let col = u16::try_from(col).unwrap_or(u16::MAX);
            row.pieces.push(Piece { start, col, width: if cell.flags.wide { 2 } else { 1 } });
            let color = match cursor_text {
                Some((cursor_col, color)) if cursor_col == col => color,
                _ => cell.fg,
            };
            let style = SpanStyle { color, bold: cell.flags.bold, italic: cell.flags.italic };
            let text_end = row.text.len();
            match row.spans.last_mut() {
                // A blank takes the style of what precedes it, so runs stay long.
                Some((range, last)) if blank || *last == style => range.end = text_end,
                _ => row.spans.push((start..text_end, style)),
            }
            if !blank {
                end = text_end;
            }
        }
        row.text.truncate(end);
        row.pieces.retain(|piece| piece.start < end);
        row.spans.retain_mut(|(range, _)| {
            range.end = range.end.min(end);
            range.start < range.end
        });
        row
    }
}

/// The width of a buffer's shaped text.
fn line_width(buffer: &Buffer) -> f32 {
    buffer.layout_runs().map(|run| run.line_w).sum()
}

/// `c`, or a space for characters that would break a line or draw a control picture.
fn printable(c: char) -> char {
    if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
        ' '
    } else {
        c
    }
}

/// A hash of everything that changes how a row is shaped.
fn row_key(cells: &[CellView], cursor_text: Option<(u16, Rgb)>, font_size: f32) -> u64 {
    let mut hasher = DefaultHasher::new();
    font_size.to_bits().hash(&mut hasher);
    cursor_text.hash(&mut hasher);
    for cell in cells {
        cell.ch.hash(&mut hasher);
        cell.extra.hash(&mut hasher);
        if cell.ch != ' ' || cell.extra.is_some() {
            // The colour and face of a blank do not show.
            (cell.fg, cell.flags.bold, cell.flags.italic).hash(&mut hasher);
        }
        (cell.flags.wide, cell.flags.spacer).hash(&mut hasher);
    }
    hasher.finish()
}

/// The font features: ligatures off (every character on its own cell) unless `ligatures`;
/// discretionary ligatures always off.
fn font_features(ligatures: bool) -> FontFeatures {
    let mut features = FontFeatures::new();
    if !ligatures {
        for tag in [b"calt", b"liga", b"clig"] {
            features.disable(FeatureTag::new(tag));
        }
    }
    features.disable(FeatureTag::new(b"dlig"));
    features
}

/// The cosmic-text attributes of a span.
fn attrs<'a>(
    style: SpanStyle,
    letter_spacing: f32,
    features: &FontFeatures,
    family: &'a str,
) -> Attrs<'a> {
    let Rgb { r, g, b } = style.color;
    Attrs::new()
        .family(Family::Name(family))
        .weight(if style.bold { Weight::BOLD } else { Weight::NORMAL })
        .style(if style.italic { Style::Italic } else { Style::Normal })
        .color(Color::rgb(r, g, b))
        .letter_spacing(letter_spacing)
        .font_features(features.clone())
}

/// Measures the cell of the regular face `regular` of `family` at `font_size` pixels, its
/// height `line_height` times the font's ascent plus descent.
fn measure(
    fonts: &mut FontSystem,
    regular: fontdb::ID,
    family: &str,
    features: &FontFeatures,
    font_size: f32,
    line_height: f32,
) -> Result<CellMetrics, String> {
    if !(font_size.is_finite() && font_size >= 1.0) {
        return Err(format!("font size {font_size} is not a positive number of pixels"));
    }
    let font = fonts.get_font(regular, Weight::NORMAL).ok_or("the font could not be read")?;
    let m = font.metrics();
    let scale = font_size / f32::from(m.units_per_em.max(1));
    let ascent = m.ascent * scale;
    // Font descents are negative (below the baseline).
    let descent = -m.descent * scale;

    let mut probe = Buffer::new_empty(Metrics::new(font_size, font_size * 2.0));
    probe.set_wrap(Wrap::None);
    let style = SpanStyle { color: Rgb::default(), bold: false, italic: false };
    probe.set_text("M", &attrs(style, 0.0, features, family), Shaping::Advanced, None);
    probe.shape_until_scroll(fonts, false);
    let advance = probe
        .layout_runs()
        .find_map(|run| run.glyphs.first().map(|glyph| glyph.w))
        .filter(|w| *w > 0.0)
        .ok_or("the font has no 'M'")?;

    let cell_w = advance.round().max(1.0);
    let cell_h = ((ascent + descent) * line_height).round().max(1.0);
    let baseline = ((cell_h - (ascent + descent)) / 2.0 + ascent).round();
    let stroke = m.underline.map_or(font_size / 15.0, |u| u.thickness * scale).round().max(1.0);
    // Decoration offsets are from the baseline to the top of the line, upwards.
    let underline_top =
        m.underline.map_or(baseline + stroke, |u| (baseline - u.offset * scale).round());
    let underline_top = underline_top.min(cell_h - stroke);
    let strike_top = m
        .strikeout
        .map_or(baseline - ascent / 3.0, |s| baseline - s.offset * scale)
        .round()
        .clamp(0.0, cell_h - stroke);
    Ok(CellMetrics {
        font_size,
        cell_w,
        cell_h,
        baseline,
        letter_spacing: (cell_w - advance) / font_size,
        underline_top,
        stroke,
        strike_top,
    })
}
