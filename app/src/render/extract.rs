//! Turns a pane's terminal into [`ScreenCells`]: the visible rows at the current scroll
//! position, colours resolved, attributes mapped, the cursor placed and shaped.
//!
//! It owns the colour rules (palette, then the program's OSC 4/10/11 overrides; dim, inverse
//! and hidden as alacritty applies them; the whole screen in reverse video while the program
//! sets DECSCNM) and the cursor rules (DECTCEM, DECSCUSR, hollow when
//! unfocused, hidden while scrolled away). It must not change the terminal: it reads through
//! [`PaneTerminal::term`] only.

use alacritty_terminal::term::color::Colors;
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::Rgb as TermRgb;
use berth_engine::terminal::{PaneTerminal, TermSize};
use berth_server::screen::{self, flags, FrameColor, FrameCursorShape, FrameStyle, PaneFrame};

use super::palette::{Palette, Rgb, DIM_FACTOR};
use super::scene::{CellStyle, CellView, CursorShape, CursorView, ScreenCells, UnderlineStyle};

/// Extracts a pane's visible content from its terminal.
///
/// Colours go through the palette and the terminal's own overrides (`term.colors()`, set by
/// OSC 4/10/11); inverse swaps foreground and background, hidden draws the text in the
/// background colour, dim darkens the foreground. The cursor takes the terminal's shape
/// (DECSCUSR), is hollow when the pane is not `focused`, is absent when the program hid it
/// (DECTCEM), and scrolls with the view when the user scrolled back (it is absent when it is
/// below the visible rows).
pub fn extract(term: &PaneTerminal, palette: &Palette, focused: bool) -> ScreenCells {
    screen_of_frame(&PaneFrame::capture(term), palette, focused)
}

/// Turns a pane's frame (captured in process or received over the socket) into cells: the
/// one path from a frame to what the renderer draws, whichever way the window reads the
/// server. The rules are [`extract`]'s.
pub fn screen_of_frame(frame: &PaneFrame, palette: &Palette, focused: bool) -> ScreenCells {
    let mut colors = Colors::default();
    for &(index, rgb) in &frame.meta.colors {
        if usize::from(index) < alacritty_terminal::term::color::COUNT {
            colors[usize::from(index)] =
                Some(TermRgb { r: (rgb >> 16) as u8, g: (rgb >> 8) as u8, b: rgb as u8 });
        }
    }
    let cols = usize::from(frame.cols);
    let rows = frame.rows.len();
    // DECSCNM: the program asked for the whole screen in reverse video, every cell's inverse
    // attribute flipped (blank cells too).
    let reverse = frame.meta.modes & TermMode::REVERSE_SCREEN.bits() != 0;
    let (mut fg, mut bg) =
        (frame_color(screen::FG, &colors, palette), frame_color(screen::BG, &colors, palette));
    if reverse {
        std::mem::swap(&mut fg, &mut bg);
    }
    let default_cell = CellView::blank(fg, bg);
    let mut cells = vec![default_cell; cols * rows];
    for (r, row) in frame.rows.iter().enumerate() {
        let line = &mut cells[r * cols..(r + 1) * cols];
        let mut col = 0;
        for run in &row.runs {
            let view = style_view(&run.style, &colors, palette, reverse);
            for ch in run.text.chars() {
                let Some(cell) = line.get_mut(col) else { break };
                *cell = CellView { ch, ..view.clone() };
                col += 1;
            }
        }
        for (col, extra) in &row.extras {
            if let Some(cell) = line.get_mut(usize::from(*col)) {
                cell.extra = Some(extra.clone().into_boxed_str());
            }
        }
    }
    let cursor = frame.meta.cursor.map(|c| CursorView {
        col: c.col,
        row: c.row,
        shape: match c.shape {
            _ if !focused => CursorShape::HollowBlock,
            FrameCursorShape::Block => CursorShape::Block,
            FrameCursorShape::Beam => CursorShape::Beam,
            FrameCursorShape::Underline => CursorShape::Underline,
            FrameCursorShape::HollowBlock => CursorShape::HollowBlock,
        },
        visible: true,
        blinking: c.blinking,
    });
    ScreenCells {
        cols: frame.cols,
        rows: u16::try_from(rows).unwrap_or(u16::MAX),
        cells,
        cursor: cursor.filter(|c| usize::from(c.row) < rows && usize::from(c.col) < cols),
    }
}

/// A frame colour through the program's overrides and the palette.
fn frame_color(color: FrameColor, colors: &Colors, palette: &Palette) -> Rgb {
    if color & screen::RGB_BIT != 0 {
        Rgb::new((color >> 16) as u8, (color >> 8) as u8, color as u8)
    } else {
        indexed(color as usize, colors, palette)
    }
}

/// A frame style as a blank cell of that look (the character is set by the caller), on a
/// screen in reverse video (DECSCNM) when `reverse`.
fn style_view(style: &FrameStyle, colors: &Colors, palette: &Palette, reverse: bool) -> CellView {
    let f = style.flags;
    let has = |bit: u16| f & bit != 0;
    let mut fg = frame_color(style.fg, colors, palette);
    if has(flags::DIM) && !has(flags::DIM_NAMED) {
        fg = fg.scaled(DIM_FACTOR);
    }
    let mut bg = frame_color(style.bg, colors, palette);
    if has(flags::INVERSE) != reverse {
        std::mem::swap(&mut fg, &mut bg);
    }
    if has(flags::HIDDEN) {
        fg = bg;
    }
    let underline = if has(flags::DOUBLE_UNDERLINE) {
        Some(UnderlineStyle::Double)
    } else if has(flags::UNDERCURL) {
        Some(UnderlineStyle::Curly)
    } else if has(flags::DOTTED_UNDERLINE) {
        Some(UnderlineStyle::Dotted)
    } else if has(flags::DASHED_UNDERLINE) {
        Some(UnderlineStyle::Dashed)
    } else if has(flags::UNDERLINE) {
        Some(UnderlineStyle::Single)
    } else {
        None
    };
    CellView {
        ch: ' ',
        extra: None,
        fg,
        bg,
        underline_color: style.ul.map(|c| frame_color(c, colors, palette)),
        flags: CellStyle {
            bold: has(flags::BOLD),
            italic: has(flags::ITALIC),
            dim: has(flags::DIM),
            underline,
            strike: has(flags::STRIKE),
            wide: has(flags::WIDE),
            spacer: has(flags::SPACER),
        },
    }
}

/// Renders styled text lines (as `pane.read --ansi` returns them: text with SGR sequences)
/// into a `cols × rows` screen, for a pane with no live terminal (a tombstone).
///
/// The last lines are shown, bottom-aligned like a terminal's output; lines longer than
/// `cols` are cut, not wrapped. There is no cursor.
pub fn extract_styled_lines(
    lines: &[String],
    cols: u16,
    rows: u16,
    palette: &Palette,
) -> ScreenCells {
    let shown = &lines[lines.len().saturating_sub(usize::from(rows.max(1)))..];
    // A line's display width is at most its length in bytes; the temporary terminal is that
    // wide (within reason) so that nothing wraps or piles up in the last column, and the
    // screen is cut to `cols` afterwards.
    let longest = shown.iter().map(String::len).max().unwrap_or(0);
    let width = u16::try_from(longest.min(MAX_TOMBSTONE_WIDTH)).unwrap_or(u16::MAX).max(cols);
    let mut term = PaneTerminal::new(TermSize { cols: width, rows }, 0);
    // Autowrap off: past the right edge, text is dropped instead of taking more rows.
    let mut bytes = b"\x1b[?7l".to_vec();
    for (i, line) in shown.iter().enumerate() {
        if i > 0 {
            bytes.extend_from_slice(b"\x1b[0m\r\n");
        }
        bytes.extend_from_slice(line.as_bytes());
    }
    bytes.extend_from_slice(b"\x1b[0m\x1b[?25l");
    term.feed(&bytes);
    let mut screen = extract(&term, palette, false);
    screen.cursor = None;
    if screen.cols != cols || screen.rows != rows {
        screen = resize_screen(&screen, cols, rows, palette);
    }
    screen
}

/// The widest temporary terminal [`extract_styled_lines`] uses.
const MAX_TOMBSTONE_WIDTH: usize = 1000;

/// Copies `screen` into a blank screen of `cols × rows`, cutting what does not fit (a wide
/// character cut in half becomes a blank).
fn resize_screen(screen: &ScreenCells, cols: u16, rows: u16, palette: &Palette) -> ScreenCells {
    let mut out = ScreenCells::blank(cols, rows, palette);
    for row in 0..rows.min(screen.rows) {
        for col in 0..cols.min(screen.cols) {
            if let Some(cell) = screen.cell(col, row) {
                let mut cell = cell.clone();
                if cell.flags.wide && col + 1 == cols {
                    cell = CellView::blank(cell.fg, cell.bg);
                }
                out.cells[usize::from(row) * usize::from(cols) + usize::from(col)] = cell;
            }
        }
    }
    out
}

/// Palette entry `index`, or the program's override of it.
fn indexed(index: usize, colors: &Colors, palette: &Palette) -> Rgb {
    let set = if index < alacritty_terminal::term::color::COUNT { colors[index] } else { None };
    set.map_or_else(|| palette.indexed(index), Rgb::from)
}

/// The direct extraction from alacritty's grid that the frame path replaced, kept as the
/// oracle of the golden test.
#[cfg(test)]
mod tests_oracle {
    use super::*;
    use alacritty_terminal::grid::Dimensions;
    use alacritty_terminal::term::cell::{Cell, Flags};
    use alacritty_terminal::vte::ansi::{Color, CursorShape as TermCursorShape};

    /// The direct extraction from alacritty's grid that the frame path replaced: the oracle
    /// the frame path is compared with.
    pub(super) fn extract_direct(
        term: &PaneTerminal,
        palette: &Palette,
        focused: bool,
    ) -> ScreenCells {
        let term = term.term();
        let cols = term.columns();
        let rows = term.screen_lines();
        let content = term.renderable_content();
        let colors = content.colors;
        let offset = content.display_offset;

        let default_cell = CellView::blank(
            resolve(
                Color::Named(alacritty_terminal::vte::ansi::NamedColor::Foreground),
                colors,
                palette,
            ),
            resolve(
                Color::Named(alacritty_terminal::vte::ansi::NamedColor::Background),
                colors,
                palette,
            ),
        );
        let mut cells = vec![default_cell; cols * rows];
        for indexed in content.display_iter {
            // The display iterator yields grid lines from `-offset` to the last screen line, so
            // `line + offset` is the visible row.
            let Ok(row) = usize::try_from(indexed.point.line.0 + offset as i32) else { continue };
            let col = indexed.point.column.0;
            if row < rows && col < cols {
                cells[row * cols + col] = cell_view(indexed.cell, colors, palette);
            }
        }

        let cursor = {
            let point = content.cursor.point;
            let row = usize::try_from(point.line.0 + offset as i32).ok().filter(|&row| row < rows);
            let shape = match content.cursor.shape {
                TermCursorShape::Hidden => None,
                _ if !focused => Some(CursorShape::HollowBlock),
                TermCursorShape::Block => Some(CursorShape::Block),
                TermCursorShape::Beam => Some(CursorShape::Beam),
                TermCursorShape::Underline => Some(CursorShape::Underline),
                TermCursorShape::HollowBlock => Some(CursorShape::HollowBlock),
            };
            match (row, shape) {
                (Some(row), Some(shape)) if point.column.0 < cols => Some(CursorView {
                    // Both fit: `row < rows` and `col < cols`, which came from `u16` sizes.
                    col: point.column.0 as u16,
                    row: row as u16,
                    shape,
                    visible: true,
                    blinking: term.cursor_style().blinking,
                }),
                _ => None,
            }
        };

        ScreenCells {
            // The terminal's size came from a `TermSize` of `u16`s.
            cols: u16::try_from(cols).unwrap_or(u16::MAX),
            rows: u16::try_from(rows).unwrap_or(u16::MAX),
            cells,
            cursor,
        }
    }

    /// The colour of `color`: the program's override if it set one, else the palette's.
    fn resolve(color: Color, colors: &Colors, palette: &Palette) -> Rgb {
        match color {
            Color::Spec(rgb) => rgb.into(),
            Color::Indexed(index) => indexed(usize::from(index), colors, palette),
            Color::Named(named) => indexed(named as usize, colors, palette),
        }
    }

    /// One alacritty cell as a [`CellView`].
    fn cell_view(cell: &Cell, colors: &Colors, palette: &Palette) -> CellView {
        let flags = cell.flags;
        let mut fg = match (cell.fg, flags.contains(Flags::DIM)) {
            // Named colours have dim variants of their own (which a program may have set).
            (Color::Named(named), true) => indexed(named.to_dim() as usize, colors, palette),
            (color, true) => resolve(color, colors, palette).scaled(DIM_FACTOR),
            (color, false) => resolve(color, colors, palette),
        };
        let mut bg = resolve(cell.bg, colors, palette);
        if flags.contains(Flags::INVERSE) {
            std::mem::swap(&mut fg, &mut bg);
        }
        if flags.contains(Flags::HIDDEN) {
            fg = bg;
        }

        let spacer = flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER);
        let underline = if flags.contains(Flags::DOUBLE_UNDERLINE) {
            Some(UnderlineStyle::Double)
        } else if flags.contains(Flags::UNDERCURL) {
            Some(UnderlineStyle::Curly)
        } else if flags.contains(Flags::DOTTED_UNDERLINE) {
            Some(UnderlineStyle::Dotted)
        } else if flags.contains(Flags::DASHED_UNDERLINE) {
            Some(UnderlineStyle::Dashed)
        } else if flags.contains(Flags::UNDERLINE) {
            Some(UnderlineStyle::Single)
        } else {
            None
        };
        // Control characters (a tab is stored as '\t') and spacers draw nothing.
        let ch = if spacer || cell.c.is_control() { ' ' } else { cell.c };
        let extra = cell
            .zerowidth()
            .filter(|chars| !chars.is_empty() && !spacer)
            .map(|chars| chars.iter().collect::<String>().into_boxed_str());
        CellView {
            ch,
            extra,
            fg,
            bg,
            underline_color: cell.underline_color().map(|color| resolve(color, colors, palette)),
            flags: CellStyle {
                bold: flags.contains(Flags::BOLD),
                italic: flags.contains(Flags::ITALIC),
                dim: flags.contains(Flags::DIM),
                underline,
                strike: flags.contains(Flags::STRIKEOUT),
                wide: flags.contains(Flags::WIDE_CHAR),
                spacer,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn screen(bytes: &[u8], cols: u16, rows: u16) -> ScreenCells {
        let mut term = PaneTerminal::new(TermSize { cols, rows }, 100);
        term.feed(bytes);
        extract(&term, &Palette::dark(), true)
    }

    #[test]
    fn colours_and_attributes_are_resolved() {
        let palette = Palette::dark();
        let s = screen(
            b"\x1b[31mR\x1b[0m\x1b[38;5;196mI\x1b[38;2;1;2;3mT\x1b[0m\x1b[7mV\x1b[0m\x1b[8mH",
            10,
            2,
        );
        assert_eq!(s.cell(0, 0).map(|c| c.fg), Some(palette.ansi[1]));
        assert_eq!(s.cell(1, 0).map(|c| c.fg), Some(Rgb::new(255, 0, 0)));
        assert_eq!(s.cell(2, 0).map(|c| c.fg), Some(Rgb::new(1, 2, 3)));
        let inverse = s
            .cell(3, 0)
            .cloned()
            .unwrap_or_else(|| CellView::blank(Rgb::default(), Rgb::default()));
        assert_eq!((inverse.fg, inverse.bg), (palette.bg, palette.fg));
        let hidden = s
            .cell(4, 0)
            .cloned()
            .unwrap_or_else(|| CellView::blank(Rgb::default(), Rgb::default()));
        assert_eq!(hidden.fg, hidden.bg);
    }

    /// DECSCNM (`CSI ? 5 h`) draws the whole pane in reverse video: blank cells, text and
    /// inverse text all swap, and resetting it puts them back.
    #[test]
    fn reverse_screen_mode_swaps_every_cell() {
        let palette = Palette::dark();
        let colours = |s: &ScreenCells, col: u16| s.cell(col, 0).map(|c| (c.fg, c.bg));
        let normal = (palette.fg, palette.bg);
        let swapped = (palette.bg, palette.fg);
        let s = screen(b"\x1b[?5hA\x1b[7mB\x1b[0m\x1b[31mC", 10, 2);
        assert_eq!(colours(&s, 0), Some(swapped));
        assert_eq!(colours(&s, 1), Some(normal));
        assert_eq!(colours(&s, 2), Some((palette.bg, palette.ansi[1])));
        assert_eq!(colours(&s, 5), Some(swapped));
        assert_eq!(s.cell(0, 1).map(|c| (c.fg, c.bg)), Some(swapped));
        let s = screen(b"\x1b[?5hA\x1b[?5l", 10, 2);
        assert_eq!((colours(&s, 0), colours(&s, 5)), (Some(normal), Some(normal)));
    }

    #[test]
    fn dim_darkens_and_osc_overrides_apply() {
        let s =
            screen(b"\x1b[2;38;2;150;150;150mD\x1b[0m\x1b]4;1;rgb:12/34/56\x07\x1b[31mO", 10, 2);
        assert_eq!(s.cell(0, 0).map(|c| c.fg), Some(Rgb::new(99, 99, 99)));
        assert_eq!(s.cell(1, 0).map(|c| c.fg), Some(Rgb::new(0x12, 0x34, 0x56)));
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let s = screen("a界b".as_bytes(), 10, 2);
        let flags: Vec<_> =
            s.row(0)[..4].iter().map(|c| (c.ch, c.flags.wide, c.flags.spacer)).collect();
        assert_eq!(
            flags,
            [('a', false, false), ('界', true, false), (' ', false, true), ('b', false, false)]
        );
    }

    #[test]
    fn cursor_shape_follows_decscusr_and_focus() {
        let s = screen(b"ab\x1b[6 q", 10, 2);
        assert_eq!(s.cursor.map(|c| (c.col, c.row, c.shape)), Some((2, 0, CursorShape::Beam)));
        let mut term = PaneTerminal::new(TermSize { cols: 10, rows: 2 }, 100);
        term.feed(b"ab");
        let unfocused = extract(&term, &Palette::dark(), false);
        assert_eq!(unfocused.cursor.map(|c| c.shape), Some(CursorShape::HollowBlock));
        assert_eq!(screen(b"\x1b[?25l", 10, 2).cursor, None);
    }

    #[test]
    fn styled_lines_show_the_last_rows_cut_to_width() {
        let palette = Palette::dark();
        let lines: Vec<String> =
            ["one", "two", "\x1b[32mthree-is-long\x1b[0m"].iter().map(|s| s.to_string()).collect();
        let s = extract_styled_lines(&lines, 5, 2, &palette);
        let text: Vec<String> = (0..2).map(|r| s.row(r).iter().map(|c| c.ch).collect()).collect();
        assert_eq!(text, ["two  ", "three"]);
        assert_eq!(s.cell(0, 1).map(|c| c.fg), Some(palette.ansi[2]));
        assert_eq!(s.cursor, None);
    }
}

/// The golden test of the frame path: one recorded byte stream is fed to a terminal in odd
/// chunks and, after each chunk, the screen the embedded window draws (a frame captured in
/// process), the screen an attached window draws (updates of changed rows through the wire's
/// JSON onto the frame it holds) and the direct extraction from alacritty's grid must be the
/// same cells.
#[cfg(test)]
mod golden {
    use super::tests_oracle::extract_direct;
    use super::*;
    use berth_server::screen::FrameUpdate;

    fn replays() -> Vec<(String, Vec<u8>)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/replays");
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .expect("the recorded replays")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "bytes"))
            .map(|p| (p.display().to_string(), std::fs::read(&p).expect("a replay")))
            .collect();
        out.sort();
        assert!(out.len() >= 5, "the replays are missing: {out:?}");
        out
    }

    #[test]
    fn in_process_and_socket_frames_build_the_same_screen() {
        let palettes = [Palette::dark(), Palette::light()];
        for (name, bytes) in replays() {
            let mut term = PaneTerminal::new(TermSize { cols: 80, rows: 24 }, 1000);
            let mut held = PaneFrame::default();
            let mut updates = 0;
            let mut partial = 0;
            for (i, chunk) in bytes.chunks(37).enumerate() {
                term.feed(chunk);
                if i % 3 == 2 {
                    continue; // changes fold into the next update
                }
                let frame = PaneFrame::capture(&term);
                let update = frame.update_for("p", held.cols, &held.hashes());
                partial += usize::from(!update.full);
                let wire = serde_json::to_string(&update).expect("encodes");
                let update: FrameUpdate = serde_json::from_str(&wire).expect("decodes");
                assert!(held.apply(&update), "{name}: update {i} applies");
                updates += 1;
                let palette = &palettes[i % 2];
                let focused = i % 4 != 1;
                let direct = extract_direct(&term, palette, focused);
                let embedded = screen_of_frame(&frame, palette, focused);
                let attached = screen_of_frame(&held, palette, focused);
                assert_eq!(embedded, direct, "{name}: chunk {i}: the frame differs from the grid");
                assert_eq!(attached, embedded, "{name}: chunk {i}: attached differs from embedded");
            }
            assert!(updates > 2 && partial > 0, "{name}: {updates} updates, {partial} partial");
            // The view scrolled back into the history.
            term.scroll_display(7);
            let frame = PaneFrame::capture(&term);
            assert!(held.apply(&frame.update_for("p", held.cols, &held.hashes())));
            let palette = Palette::dark();
            assert_eq!(
                screen_of_frame(&held, &palette, true),
                extract_direct(&term, &palette, true)
            );
        }
    }
}
