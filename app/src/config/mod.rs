//! The config file: `$XDG_CONFIG_HOME/berth/config.toml` (or `BERTH_CONFIG`), parsed into a
//! [`Config`] with every value checked, and the commented default file.
//!
//! It owns the file's location, its syntax (TOML, unknown keys refused), the defaults (today's
//! behaviour: 15 px bundled JetBrains Mono, the dark theme, ligatures off, 5000 lines of
//! scrollback, a steady block cursor, desktop notifications as programs ask) and the errors,
//! each one line naming the file's line and key. It must not apply anything: the window reads
//! a [`Config`] and changes the renderer, its keymap and the Store itself. Watching the file
//! for changes lives in `config/watch.rs`.

pub mod keymap;
mod server_address;
pub mod watch;

pub use server_address::{ServerAddress, ServerList, MAX_SERVERS};

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use berth_engine::terminal::DEFAULT_SCROLLBACK;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use self::keymap::{Action, Chord, Keymap, DEFAULT_BINDINGS};
use crate::render::{Palette, Rgb, DEFAULT_FONT_SIZE};

/// The environment variable naming the config file, instead of the usual place.
pub const ENV_CONFIG: &str = "BERTH_CONFIG";

/// The family name of the bundled font, the default `font_family`.
pub const BUNDLED_FAMILY: &str = crate::render::FONT_FAMILY;

/// The font sizes allowed, in pixels (also the zoom chords' range).
pub const FONT_SIZE_RANGE: (f32, f32) = (6.0, 72.0);

/// The line heights allowed, as multiples of the font's.
pub const LINE_HEIGHT_RANGE: (f32, f32) = (0.8, 3.0);

/// The sidebar's width when the config does not set one.
pub const DEFAULT_SIDEBAR_WIDTH: u16 = 32;

/// The narrowest and widest the sidebar may be.
pub const SIDEBAR_WIDTH_RANGE: (u16, u16) = (16, 120);

/// A sidebar width, checked against [`SIDEBAR_WIDTH_RANGE`] when read.
#[derive(Debug, Clone, Copy)]
struct SidebarWidth(u16);

impl<'de> Deserialize<'de> for SidebarWidth {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        let (lo, hi) = SIDEBAR_WIDTH_RANGE;
        match u16::try_from(n) {
            Ok(w) if (lo..=hi).contains(&w) => Ok(Self(w)),
            _ => Err(serde::de::Error::custom(format!(
                "sidebar_width must be {lo} to {hi} columns, not {n}"
            ))),
        }
    }
}

/// The most scrollback lines a pane may keep.
pub const MAX_SCROLLBACK: usize = 100_000;

/// The colour theme a config starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// Light text on a dark background (the default).
    #[default]
    Dark,
    /// Dark text on a light background.
    Light,
}

impl Theme {
    /// The theme's palette.
    pub fn palette(self) -> Palette {
        match self {
            Theme::Dark => Palette::dark(),
            Theme::Light => Palette::light(),
        }
    }
}

/// Where `berth` runs the server when none answers on the socket yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerMode {
    /// Inside the window's process: closing the window ends the panes.
    #[default]
    Embedded,
    /// As a process of its own (`berth server`, through the systemd user unit when it is
    /// installed), the window attached to it: the panes outlive the window.
    Standalone,
}

/// When the sidebar of workspaces and tasks is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SidebarMode {
    /// While more than one workspace exists.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never (the toggle key still shows it).
    Off,
}

/// The cursor's shape while the program has not chosen one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CursorStyle {
    /// A filled cell.
    #[default]
    Block,
    /// A thin bar at the cell's left edge.
    Beam,
    /// A line under the cell.
    Underline,
}

/// When a notification goes to the desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NotifyWhen {
    /// As the program asked; by default only when the user is not looking at its pane.
    #[default]
    Unfocused,
    /// Every notification, even for the pane in front.
    Always,
}

/// `[notifications]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Notifications {
    /// Whether notifications are shown on the desktop at all.
    pub desktop: bool,
    /// When they are.
    pub when: NotifyWhen,
}

impl Default for Notifications {
    fn default() -> Self {
        Self { desktop: true, when: NotifyWhen::Unfocused }
    }
}

impl Notifications {
    /// The Store's policy for these settings.
    pub fn policy(self) -> berth_server::notifications::DesktopPolicy {
        use berth_server::notifications::DesktopPolicy;
        match (self.desktop, self.when) {
            (false, _) => DesktopPolicy::Off,
            (true, NotifyWhen::Unfocused) => DesktopPolicy::AsAsked,
            (true, NotifyWhen::Always) => DesktopPolicy::Always,
        }
    }
}

/// Everything the config file sets, checked and with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The font family (the bundled one unless a system family is named).
    pub font_family: String,
    /// The font size in logical pixels.
    pub font_size: f32,
    /// The cell height as a multiple of the font's line height.
    pub line_height: f32,
    /// Whether ligatures are drawn.
    pub ligatures: bool,
    /// The theme the palette starts from.
    pub theme: Theme,
    /// The colours: the theme's with `[colors]` applied.
    pub palette: Palette,
    /// Readable scrollback lines of new panes.
    pub scrollback_lines: usize,
    /// The default cursor shape.
    pub cursor_style: CursorStyle,
    /// Whether the default cursor blinks.
    pub cursor_blink: bool,
    /// The key bindings: the defaults with `[keybindings]` applied.
    pub keymap: Keymap,
    /// Desktop notifications.
    pub notifications: Notifications,
    /// Where the server runs when none answers on the socket.
    pub server: ServerMode,
    /// When the sidebar is shown.
    pub sidebar: SidebarMode,
    /// The sidebar's starting width in columns (dragging its edge changes it).
    pub sidebar_width: u16,
    /// Other servers the window links to beside its own (`server_set.rs`).
    pub servers: Vec<ServerAddress>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            font_family: BUNDLED_FAMILY.to_owned(),
            font_size: DEFAULT_FONT_SIZE,
            line_height: 1.0,
            ligatures: false,
            theme: Theme::Dark,
            palette: Palette::dark(),
            scrollback_lines: DEFAULT_SCROLLBACK,
            cursor_style: CursorStyle::Block,
            cursor_blink: false,
            keymap: Keymap::default(),
            notifications: Notifications::default(),
            sidebar: SidebarMode::Auto,
            sidebar_width: DEFAULT_SIDEBAR_WIDTH,
            server: ServerMode::Embedded,
            servers: Vec::new(),
        }
    }
}

/// A config file that could not be read or parsed: one line for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file's name as shown (`config.toml`).
    pub file: String,
    /// The line the problem is on (1-based), when known.
    pub line: Option<usize>,
    /// What is wrong, naming the key.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} line {line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Where the config file is: `BERTH_CONFIG` if set, else `$XDG_CONFIG_HOME/berth/config.toml`,
/// else `~/.config/berth/config.toml`. `None` when neither that variable nor `HOME` is set.
pub fn path() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = var(ENV_CONFIG) {
        return Some(path);
    }
    let base = var("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|home| home.join(".config")))?;
    Some(base.join("berth").join("config.toml"))
}

/// Reads and parses the config file at `path`. A missing file is the defaults.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let file = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned());
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(ConfigError {
            file,
            line: None,
            message: format!("cannot read {}: {e}", path.display()),
        }),
    }
}

/// Parses a config file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|span| line_of(text, span.start));
        let message = e.message().trim().replace('\n', "; ");
        let message = match e.span().and_then(|span| key_at(text, span.start)) {
            // Serde's message names an unknown key itself; a bad value's does not.
            Some(key) if !message.contains(&format!("`{key}`")) => format!("{key}: {message}"),
            _ => message,
        };
        ConfigError { file: file.to_owned(), line, message }
    })?;
    Ok(raw.resolve())
}

/// The commented default config file (`berth config --default`): every key with its default
/// and what it does. It parses to [`Config::default`].
pub fn default_file() -> String {
    let mut text = include_str!("default.toml").to_owned();
    let width = DEFAULT_BINDINGS
        .iter()
        .map(|b| Chord { mods: b.mods, key: b.key }.to_string().len())
        .max()
        .unwrap_or(0);
    for b in DEFAULT_BINDINGS {
        let chord = Chord { mods: b.mods, key: b.key }.to_string();
        let quoted = format!("\"{chord}\"");
        text.push_str(&format!("# {quoted:<w$} = \"{}\"\n", b.action.name(), w = width + 2));
    }
    text
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The key of the `key = value` line holding byte `offset`, or the table a `[table]` line
/// names.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[start..end].trim();
    if let Some(table) = line.strip_prefix('[') {
        return Some(format!("[{}", table.split(']').next()?.trim()) + "]");
    }
    let key = line.split('=').next()?.trim();
    (!key.is_empty() && key != line).then(|| key.to_owned())
}

/// The file as written, before defaults are filled in.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawConfig {
    font_family: Option<String>,
    font_size: Option<Bounded<FontSizeBounds>>,
    line_height: Option<Bounded<LineHeightBounds>>,
    ligatures: Option<bool>,
    theme: Option<Theme>,
    scrollback_lines: Option<ScrollbackLines>,
    cursor_style: Option<CursorStyle>,
    cursor_blink: Option<bool>,
    colors: RawColors,
    notifications: Notifications,
    keybindings: RawBindings,
    server: Option<ServerMode>,
    sidebar: Option<SidebarMode>,
    sidebar_width: Option<SidebarWidth>,
    servers: Option<ServerList>,
}

impl RawConfig {
    /// The config these settings make, defaults filling the gaps.
    fn resolve(self) -> Config {
        let defaults = Config::default();
        let theme = self.theme.unwrap_or_default();
        let mut palette = theme.palette();
        self.colors.apply(&mut palette);
        Config {
            font_family: self
                .font_family
                .map(|f| f.trim().to_owned())
                .filter(|f| !f.is_empty())
                .unwrap_or(defaults.font_family),
            font_size: self.font_size.map_or(defaults.font_size, |b| b.value),
            line_height: self.line_height.map_or(defaults.line_height, |b| b.value),
            ligatures: self.ligatures.unwrap_or(defaults.ligatures),
            theme,
            palette,
            scrollback_lines: self.scrollback_lines.map_or(defaults.scrollback_lines, |s| s.0),
            cursor_style: self.cursor_style.unwrap_or_default(),
            cursor_blink: self.cursor_blink.unwrap_or(defaults.cursor_blink),
            keymap: Keymap::with_changes(&self.keybindings.0),
            notifications: self.notifications,
            server: self.server.unwrap_or_default(),
            sidebar: self.sidebar.unwrap_or_default(),
            sidebar_width: self.sidebar_width.map_or(defaults.sidebar_width, |w| w.0),
            servers: self.servers.map_or(defaults.servers, |s| s.0),
        }
    }
}

/// The range a [`Bounded`] number must be in, and how to describe it.
trait Bounds {
    const MIN: f32;
    const MAX: f32;
    const WHAT: &'static str;
}

#[derive(Debug)]
struct FontSizeBounds;
impl Bounds for FontSizeBounds {
    const MIN: f32 = FONT_SIZE_RANGE.0;
    const MAX: f32 = FONT_SIZE_RANGE.1;
    const WHAT: &'static str = "a font size in pixels";
}

#[derive(Debug)]
struct LineHeightBounds;
impl Bounds for LineHeightBounds {
    const MIN: f32 = LINE_HEIGHT_RANGE.0;
    const MAX: f32 = LINE_HEIGHT_RANGE.1;
    const WHAT: &'static str = "a multiple of the font's line height";
}

/// A number (integer or float in the file) within `B`'s range.
#[derive(Debug)]
struct Bounded<B> {
    value: f32,
    _bounds: std::marker::PhantomData<B>,
}

impl<'de, B: Bounds> Deserialize<'de> for Bounded<B> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NumberVisitor;
        impl Visitor<'_> for NumberVisitor {
            type Value = f64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
                // Config numbers are small; precision loss does not matter.
                Ok(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
                Ok(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
                Ok(v)
            }
        }
        let v = d.deserialize_any(NumberVisitor)?;
        if !(v.is_finite() && f64::from(B::MIN) <= v && v <= f64::from(B::MAX)) {
            return Err(de::Error::custom(format!(
                "{v} is out of range: expected {} from {} to {}",
                B::WHAT,
                B::MIN,
                B::MAX
            )));
        }
        // In range, so it fits an f32.
        Ok(Bounded { value: v as f32, _bounds: std::marker::PhantomData })
    }
}

/// `scrollback_lines`, at most [`MAX_SCROLLBACK`].
#[derive(Debug)]
struct ScrollbackLines(usize);

impl<'de> Deserialize<'de> for ScrollbackLines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        match usize::try_from(v) {
            Ok(lines) if lines <= MAX_SCROLLBACK => Ok(ScrollbackLines(lines)),
            _ => Err(de::Error::custom(format!(
                "{v} is out of range: expected a number of lines from 0 to {MAX_SCROLLBACK}"
            ))),
        }
    }
}

/// A `"#rrggbb"` colour.
#[derive(Debug, Clone, Copy)]
struct HexColor(Rgb);

impl HexColor {
    fn parse(text: &str) -> Result<Rgb, String> {
        let digits = text.strip_prefix('#').filter(|d| d.len() == 6 && d.is_ascii());
        match digits.and_then(|d| u32::from_str_radix(d, 16).ok()) {
            Some(rgb) => Ok(Rgb::hex(rgb)),
            None => Err(format!("\"{text}\" is not a colour: expected \"#rrggbb\"")),
        }
    }
}

impl<'de> Deserialize<'de> for HexColor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        HexColor::parse(&text).map(HexColor).map_err(de::Error::custom)
    }
}

/// The 16 ANSI colours at once.
#[derive(Debug)]
struct AnsiColors([Rgb; 16]);

impl<'de> Deserialize<'de> for AnsiColors {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Vec::<HexColor>::deserialize(d)?;
        let colors: Vec<Rgb> = list.into_iter().map(|c| c.0).collect();
        let n = colors.len();
        colors
            .try_into()
            .map(AnsiColors)
            .map_err(|_| de::Error::custom(format!("expected 16 colours, found {n}")))
    }
}

/// `[colors]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RawColors {
    foreground: Option<HexColor>,
    background: Option<HexColor>,
    cursor: Option<HexColor>,
    cursor_text: Option<HexColor>,
    selection: Option<HexColor>,
    ansi: Option<AnsiColors>,
    black: Option<HexColor>,
    red: Option<HexColor>,
    green: Option<HexColor>,
    yellow: Option<HexColor>,
    blue: Option<HexColor>,
    magenta: Option<HexColor>,
    cyan: Option<HexColor>,
    white: Option<HexColor>,
    bright_black: Option<HexColor>,
    bright_red: Option<HexColor>,
    bright_green: Option<HexColor>,
    bright_yellow: Option<HexColor>,
    bright_blue: Option<HexColor>,
    bright_magenta: Option<HexColor>,
    bright_cyan: Option<HexColor>,
    bright_white: Option<HexColor>,
}

impl RawColors {
    /// Replaces the palette's colours with the ones given: the `ansi` list first, then the
    /// named ones.
    fn apply(&self, palette: &mut Palette) {
        if let Some(ansi) = &self.ansi {
            palette.ansi = ansi.0;
        }
        let named = [
            &self.black,
            &self.red,
            &self.green,
            &self.yellow,
            &self.blue,
            &self.magenta,
            &self.cyan,
            &self.white,
            &self.bright_black,
            &self.bright_red,
            &self.bright_green,
            &self.bright_yellow,
            &self.bright_blue,
            &self.bright_magenta,
            &self.bright_cyan,
            &self.bright_white,
        ];
        for (slot, color) in palette.ansi.iter_mut().zip(named) {
            if let Some(color) = color {
                *slot = color.0;
            }
        }
        let pairs = [
            (&mut palette.fg, &self.foreground),
            (&mut palette.bg, &self.background),
            (&mut palette.cursor, &self.cursor),
            (&mut palette.cursor_text, &self.cursor_text),
            (&mut palette.selection_bg, &self.selection),
        ];
        for (slot, color) in pairs {
            if let Some(color) = color {
                *slot = color.0;
            }
        }
    }
}

/// `[keybindings]`, in file order: a chord and its action, `None` to unbind.
#[derive(Debug, Default)]
struct RawBindings(Vec<(Chord, Option<Action>)>);

/// A chord as a table key.
struct ChordKey(Chord);

impl<'de> Deserialize<'de> for ChordKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Chord::parse(&text).map(ChordKey).map_err(de::Error::custom)
    }
}

/// An action name, or `none` / `unbind`.
struct ActionName(Option<Action>);

impl<'de> Deserialize<'de> for ActionName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "none" | "unbind" => Ok(ActionName(None)),
            name => Action::from_name(name).map(|a| ActionName(Some(a))).ok_or_else(|| {
                let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
                de::Error::custom(format!(
                    "unknown action \"{name}\": expected \"none\" or one of {}",
                    names.join(", ")
                ))
            }),
        }
    }
}

impl<'de> Deserialize<'de> for RawBindings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BindingsVisitor;
        impl<'de> Visitor<'de> for BindingsVisitor {
            type Value = RawBindings;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of \"chord\" = \"action\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawBindings, A::Error> {
                let mut seen: BTreeMap<String, ()> = BTreeMap::new();
                let mut out = Vec::new();
                while let Some(ChordKey(chord)) = map.next_key()? {
                    let ActionName(action) = map.next_value()?;
                    if seen.insert(chord.to_string(), ()).is_some() {
                        return Err(de::Error::custom(format!(
                            "the chord {chord} is bound twice (spelled two ways)"
                        )));
                    }
                    out.push((chord, action));
                }
                Ok(RawBindings(out))
            }
        }
        d.deserialize_map(BindingsVisitor)
    }
}

#[cfg(test)]
mod tests;
