//! Colours: the [`Rgb`] type of scenes and the window's [`Palette`] (terminal colours, cursor,
//! selection, dividers, headers, badges and search).
//!
//! It owns the two shipped themes (the default dark one and a light one) and the mapping of alacritty's colour indices (0–255 plus
//! foreground, background, cursor and the dim variants) to colours. It must not read a
//! terminal: overrides a program set with OSC 4/10/11 are applied in `render/extract.rs`.

/// An sRGB colour, 8 bits per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rgb {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
}

impl Rgb {
    /// A colour from its channels.
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b }
    }

    /// A colour from `0xRRGGBB`.
    pub const fn hex(rgb: u32) -> Self {
        // The casts keep one byte each, on purpose.
        Self { r: (rgb >> 16) as u8, g: (rgb >> 8) as u8, b: rgb as u8 }
    }

    /// This colour with every channel multiplied by `factor` (0–1).
    pub fn scaled(self, factor: f32) -> Self {
        // The product stays within 0–255 for factors within 0–1; `as` saturates otherwise.
        let scale = |c: u8| (f32::from(c) * factor).round() as u8;
        Self { r: scale(self.r), g: scale(self.g), b: scale(self.b) }
    }

    /// The colour `t` of the way from `self` to `other` (0 is `self`, 1 is `other`).
    pub fn mix(self, other: Self, t: f32) -> Self {
        let lerp = |a: u8, b: u8| (f32::from(a) + (f32::from(b) - f32::from(a)) * t).round() as u8;
        Self { r: lerp(self.r, other.r), g: lerp(self.g, other.g), b: lerp(self.b, other.b) }
    }
}

impl Rgb {
    /// WCAG 2's relative luminance (0 black – 1 white) of this sRGB colour.
    pub fn luminance(self) -> f64 {
        let linear = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * linear(self.r) + 0.7152 * linear(self.g) + 0.0722 * linear(self.b)
    }

    /// WCAG 2's contrast ratio of this colour and `other` (1 to 21, in either order).
    pub fn contrast(self, other: Self) -> f64 {
        let (a, b) = (self.luminance(), other.luminance());
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }
}

impl From<alacritty_terminal::vte::ansi::Rgb> for Rgb {
    fn from(c: alacritty_terminal::vte::ansi::Rgb) -> Self {
        Self { r: c.r, g: c.g, b: c.b }
    }
}

/// The contrast every ANSI colour and the foreground of a shipped theme reach against its
/// background (WCAG 2's AA level for text), but black on the dark theme and the whites on the
/// light one.
pub const MIN_CONTRAST: f64 = 4.5;

/// How much dim text (SGR 2) is darkened when the palette has no dim colour for it
/// (alacritty's factor).
pub const DIM_FACTOR: f32 = 0.66;

/// The window's colours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    /// Default text colour.
    pub fg: Rgb,
    /// Default background colour.
    pub bg: Rgb,
    /// Cursor colour.
    pub cursor: Rgb,
    /// Colour of the character under a block cursor.
    pub cursor_text: Rgb,
    /// Background of selected cells.
    pub selection_bg: Rgb,
    /// The 16 ANSI colours (0–7 normal, 8–15 bright).
    pub ansi: [Rgb; 16],
    /// Divider lines between panes.
    pub divider: Rgb,
    /// Header background of an unfocused pane.
    pub header_bg: Rgb,
    /// Header background of the focused pane.
    pub header_focused_bg: Rgb,
    /// Header title of an unfocused pane.
    pub header_fg: Rgb,
    /// Header title of the focused pane.
    pub header_focused_fg: Rgb,
    /// The attention marker at a header's left end.
    pub attention: Rgb,
    /// Text of a badge.
    pub badge_fg: Rgb,
    /// Badge background: LIVE.
    pub badge_live: Rgb,
    /// Badge background: RESTORED.
    pub badge_restored: Rgb,
    /// Badge background: RESUMABLE.
    pub badge_resumable: Rgb,
    /// Badge background: EXITED.
    pub badge_exited: Rgb,
    /// The tab bar's background.
    pub tab_bar_bg: Rgb,
    /// A tab's background.
    pub tab_bg: Rgb,
    /// The shown tab's background.
    pub tab_active_bg: Rgb,
    /// A tab's title.
    pub tab_fg: Rgb,
    /// The shown tab's title.
    pub tab_active_fg: Rgb,
    /// A tab's close button.
    pub tab_close: Rgb,
    /// The ring around a pane with an unread notification.
    pub ring_unread: Rgb,
    /// The ring around a pane whose program waits for the user.
    pub ring_needs_input: Rgb,
    /// The ring around a pane where something failed.
    pub ring_error: Rgb,
    /// A tombstone overlay's background.
    pub overlay_bg: Rgb,
    /// A tombstone overlay's top rule.
    pub overlay_rule: Rgb,
    /// A tombstone overlay's text.
    pub overlay_fg: Rgb,
    /// A failed resume in a tombstone overlay.
    pub overlay_error: Rgb,
    /// The switcher's background.
    pub switcher_bg: Rgb,
    /// The backdrop over the whole window behind the switcher (drawn at 90 % opacity).
    pub switcher_backdrop: Rgb,
    /// The switcher's frame.
    pub switcher_border: Rgb,
    /// The switcher's text.
    pub switcher_fg: Rgb,
    /// The switcher's secondary text (directories, the prompt).
    pub switcher_dim: Rgb,
    /// The highlighted switcher entry.
    pub switcher_selected_bg: Rgb,
    /// Lifecycle marker: working.
    pub lifecycle_working: Rgb,
    /// Lifecycle marker: idle.
    pub lifecycle_idle: Rgb,
    /// Lifecycle marker: blocked.
    pub lifecycle_blocked: Rgb,
    /// Lifecycle marker: done.
    pub lifecycle_done: Rgb,
    /// Background of a search match.
    pub search_match: Rgb,
    /// Background of the current search match.
    pub search_current: Rgb,
    /// Text of a search match (current or not).
    pub search_match_fg: Rgb,
    /// Background of the search bar.
    pub search_bar_bg: Rgb,
    /// Text of the search bar.
    pub search_bar_fg: Rgb,
    /// The search bar's status ("3/17", "no matches").
    pub search_status_fg: Rgb,
    /// Background of the error banner (a config file that did not load).
    pub error_bg: Rgb,
    /// Text of the error banner.
    pub error_fg: Rgb,
}

impl Default for Palette {
    fn default() -> Self {
        Self::dark()
    }
}

impl Palette {
    /// The default dark theme. Foreground, background and the ANSI colours are what the
    /// engine reports to programs that ask (OSC 10/11/4): xterm's hues, those too dark to read
    /// on the background lightened (every colour but black reaches 4.5:1, [`MIN_CONTRAST`]).
    pub fn dark() -> Self {
        let engine_fg = berth_engine::terminal::DEFAULT_FOREGROUND;
        let engine_bg = berth_engine::terminal::DEFAULT_BACKGROUND;
        Self {
            fg: engine_fg.into(),
            bg: engine_bg.into(),
            cursor: Rgb::hex(0xd8d8d8),
            cursor_text: engine_bg.into(),
            selection_bg: Rgb::hex(0x44475a),
            ansi: berth_engine::terminal::DEFAULT_ANSI.map(Rgb::from),
            divider: Rgb::hex(0x4a4a4a),
            header_bg: Rgb::hex(0x2a2a2a),
            header_focused_bg: Rgb::hex(0x3a3f4b),
            header_fg: Rgb::hex(0x9a9a9a),
            header_focused_fg: Rgb::hex(0xf0f0f0),
            attention: Rgb::hex(0xffb000),
            badge_fg: Rgb::hex(0x101010),
            badge_live: Rgb::hex(0x5fbf5f),
            badge_restored: Rgb::hex(0x8a8a8a),
            badge_resumable: Rgb::hex(0x5fafd7),
            badge_exited: Rgb::hex(0xd75f5f),
            tab_bar_bg: Rgb::hex(0x141414),
            tab_bg: Rgb::hex(0x232323),
            tab_active_bg: Rgb::hex(0x3a3f4b),
            tab_fg: Rgb::hex(0x9a9a9a),
            tab_active_fg: Rgb::hex(0xf0f0f0),
            tab_close: Rgb::hex(0x7a7a7a),
            ring_unread: Rgb::hex(0xffb000),
            ring_needs_input: Rgb::hex(0xff6ac1),
            ring_error: Rgb::hex(0xff4040),
            overlay_bg: Rgb::hex(0x1c2430),
            overlay_rule: Rgb::hex(0x5fafd7),
            overlay_fg: Rgb::hex(0xe0e6ee),
            overlay_error: Rgb::hex(0xff8080),
            switcher_bg: Rgb::hex(0x202530),
            switcher_backdrop: Rgb::hex(0x101216),
            switcher_border: Rgb::hex(0x5fafd7),
            switcher_fg: Rgb::hex(0xf0f0f0),
            switcher_dim: Rgb::hex(0x9aa4b2),
            switcher_selected_bg: Rgb::hex(0x34507a),
            lifecycle_working: Rgb::hex(0x87d7ff),
            lifecycle_idle: Rgb::hex(0x8a8a8a),
            lifecycle_blocked: Rgb::hex(0xff6ac1),
            lifecycle_done: Rgb::hex(0x87d787),
            search_match: Rgb::hex(0xc8a24a),
            search_current: Rgb::hex(0xff8c1a),
            search_match_fg: Rgb::hex(0x1a1a1a),
            search_bar_bg: Rgb::hex(0x30343c),
            search_bar_fg: Rgb::hex(0xf0f0f0),
            search_status_fg: Rgb::hex(0xa8b0bc),
            error_bg: Rgb::hex(0x9b1c1c),
            error_fg: Rgb::hex(0xffffff),
        }
    }

    /// The colour of a header's lifecycle marker, from its symbol.
    pub fn lifecycle(&self, marker: &str) -> Rgb {
        match marker.chars().next() {
            Some('▶') => self.lifecycle_working,
            Some('◆') => self.lifecycle_blocked,
            Some('✓') => self.lifecycle_done,
            Some('✗') => self.ring_error,
            _ => self.lifecycle_idle,
        }
    }

    /// The light theme: dark text on an off-white background, ANSI colours dark enough to read
    /// on it at 4.5:1 or more ([`MIN_CONTRAST`]; yellow is amber; white and bright white, light
    /// greys, are the exceptions), each bright colour lighter than its normal one.
    pub fn light() -> Self {
        Self {
            fg: Rgb::hex(0x24292e),
            bg: Rgb::hex(0xfafafa),
            cursor: Rgb::hex(0x3b5bdb),
            cursor_text: Rgb::hex(0xfafafa),
            selection_bg: Rgb::hex(0xc9d6ee),
            ansi: [
                Rgb::hex(0x24292e),
                Rgb::hex(0xb71c1c),
                Rgb::hex(0x1e6b23),
                Rgb::hex(0x805300),
                Rgb::hex(0x1a4fa8),
                Rgb::hex(0x8e3aa8),
                Rgb::hex(0x00636d),
                Rgb::hex(0x8e959c),
                Rgb::hex(0x6a737d),
                Rgb::hex(0xd02a2a),
                Rgb::hex(0x2e7d32),
                Rgb::hex(0x976500),
                Rgb::hex(0x2a6bd0),
                Rgb::hex(0xab47bc),
                Rgb::hex(0x007a86),
                Rgb::hex(0xbfc4ca),
            ],
            divider: Rgb::hex(0xc4c8ce),
            header_bg: Rgb::hex(0xe6e8eb),
            header_focused_bg: Rgb::hex(0xd2dcee),
            header_fg: Rgb::hex(0x5f6670),
            header_focused_fg: Rgb::hex(0x1b1f24),
            attention: Rgb::hex(0xd98200),
            badge_fg: Rgb::hex(0xffffff),
            badge_live: Rgb::hex(0x2e8b3e),
            badge_restored: Rgb::hex(0x7a7f87),
            badge_resumable: Rgb::hex(0x2f7fb5),
            badge_exited: Rgb::hex(0xc0392b),
            error_bg: Rgb::hex(0xc62828),
            error_fg: Rgb::hex(0xffffff),
            tab_bar_bg: Rgb::hex(0xdde1e6),
            tab_bg: Rgb::hex(0xe9ecef),
            tab_active_bg: Rgb::hex(0xfafafa),
            tab_fg: Rgb::hex(0x5f6670),
            tab_active_fg: Rgb::hex(0x1b1f24),
            tab_close: Rgb::hex(0x8a9099),
            ring_unread: Rgb::hex(0xd98200),
            ring_needs_input: Rgb::hex(0xc2185b),
            ring_error: Rgb::hex(0xc62828),
            overlay_bg: Rgb::hex(0xe8eef7),
            overlay_rule: Rgb::hex(0x2f7fb5),
            overlay_fg: Rgb::hex(0x1b1f24),
            overlay_error: Rgb::hex(0xc62828),
            switcher_bg: Rgb::hex(0xffffff),
            switcher_backdrop: Rgb::hex(0xd8dce2),
            switcher_border: Rgb::hex(0x2f7fb5),
            switcher_fg: Rgb::hex(0x1b1f24),
            switcher_dim: Rgb::hex(0x6a737d),
            switcher_selected_bg: Rgb::hex(0xc9d6ee),
            lifecycle_working: Rgb::hex(0x1f5fbf),
            lifecycle_idle: Rgb::hex(0x7a7f87),
            lifecycle_blocked: Rgb::hex(0xc2185b),
            lifecycle_done: Rgb::hex(0x2e7d32),
            search_match: Rgb::hex(0xffe08a),
            search_current: Rgb::hex(0xff9f43),
            search_match_fg: Rgb::hex(0x1a1a1a),
            search_bar_bg: Rgb::hex(0xe6e8eb),
            search_bar_fg: Rgb::hex(0x1b1f24),
            search_status_fg: Rgb::hex(0x5f6670),
        }
    }

    /// The colour of alacritty's colour index `index`: 0–15 ANSI, 16–231 the 6×6×6 cube,
    /// 232–255 the grey ramp, 256 foreground, 257 background, 258 cursor, 259–266 dim ANSI
    /// 0–7, 267 bright foreground, 268 dim foreground.
    pub fn indexed(&self, index: usize) -> Rgb {
        const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];
        match index {
            0..=15 => self.ansi[index],
            16..=231 => {
                let cube = index - 16;
                Rgb::new(CUBE[cube / 36], CUBE[cube / 6 % 6], CUBE[cube % 6])
            }
            232..=255 => {
                // The cast cannot truncate: the largest value is 8 + 23 * 10 = 238.
                let level = (8 + (index - 232) * 10) as u8;
                Rgb::new(level, level, level)
            }
            257 => self.bg,
            258 => self.cursor,
            259..=266 => self.ansi[index - 259].scaled(DIM_FACTOR),
            268 => self.fg.scaled(DIM_FACTOR),
            _ => self.fg,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ANSI colours (by index) and the foreground of `palette` that read below
    /// [`MIN_CONTRAST`] on its background, with their contrast; `except` lists the indices
    /// exempt.
    fn unreadable(palette: &Palette, except: &[usize]) -> Vec<(String, Rgb, f64)> {
        let named = palette.ansi.iter().enumerate().filter(|(i, _)| !except.contains(i));
        let named = named.map(|(i, c)| (format!("ansi {i}"), *c));
        std::iter::once(("foreground".to_owned(), palette.fg))
            .chain(named)
            .map(|(name, c)| (name, c, c.contrast(palette.bg)))
            .filter(|(_, _, ratio)| *ratio < MIN_CONTRAST)
            .collect()
    }

    #[test]
    fn contrast_is_wcag_s() {
        let (black, white) = (Rgb::hex(0x000000), Rgb::hex(0xffffff));
        assert!((black.contrast(white) - 21.0).abs() < 1e-9);
        assert!((white.contrast(white) - 1.0).abs() < 1e-9);
        // The figure: xterm's blue on the dark background.
        let ratio = Rgb::hex(0x0000ee).contrast(Rgb::hex(0x1c1c1c));
        assert!((ratio - 1.81).abs() < 0.01, "{ratio}");
        assert_eq!(Rgb::hex(0x777777).contrast(white), white.contrast(Rgb::hex(0x777777)));
    }

    #[test]
    fn every_colour_of_both_themes_reads_on_its_background() {
        // Black on the dark theme and the two whites on the light one are the exceptions.
        assert_eq!(unreadable(&Palette::dark(), &[0]), []);
        assert_eq!(unreadable(&Palette::light(), &[7, 15]), []);
    }

    #[test]
    fn bright_colours_stay_apart_from_normal_ones() {
        for palette in [Palette::dark(), Palette::light()] {
            for i in 1..7 {
                let (normal, bright) = (palette.ansi[i], palette.ansi[i + 8]);
                assert_ne!(normal, bright, "ansi {i} and {}", i + 8);
                // A bright colour is the lighter of the two in both themes.
                assert!(bright.luminance() > normal.luminance(), "ansi {} ≤ {i}", i + 8);
            }
        }
    }

    #[test]
    fn the_dark_theme_is_what_the_engine_reports() {
        let dark = Palette::dark();
        assert_eq!(dark.ansi, berth_engine::terminal::DEFAULT_ANSI.map(Rgb::from));
        assert_eq!(dark.fg, berth_engine::terminal::DEFAULT_FOREGROUND.into());
        assert_eq!(dark.bg, berth_engine::terminal::DEFAULT_BACKGROUND.into());
    }
}
