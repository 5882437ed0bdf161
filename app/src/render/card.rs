//! A decision card: a panel across the top of a pane's screen (under its header) with what the
//! pane's agent asks permission for and the answers as buttons, or a note saying where to
//! answer when Berth cannot.
//!
//! It owns the card's layout ([`card_layout`], the one place that decides where each line and
//! button goes, so the window's clicks hit what is drawn) and its drawing, on the modal layer
//! so that the pane's own text does not show through it. It must not decide what the card says
//! or what a button does: the window fills [`DecisionCard`] and answers.
//!
//! The card sits at the top, not the bottom like a tombstone's overlay, because an agent draws
//! its own permission prompt at the bottom of its screen and that prompt stays usable.

use std::ops::Range;

use super::palette::{Palette, Rgb};
use super::place::{clip_of, col_x, ellipsize, put_text, row_y, str_width, text_width, Placement};
use super::quads::Quad;
use super::scene::{ButtonTone, CellRectU16, CellView, DecisionCard};
use super::text::{CellMetrics, TextSystem};

/// The most rows the request's text takes on a card (a request of more lines offers only
/// Deny in the window: `window/decisions.rs`).
pub const MAX_DETAIL_ROWS: usize = 16;

/// Where each part of a card goes on the window's cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardLayout {
    /// The whole card (its closing rule included).
    pub rect: CellRectU16,
    /// The title's row, if there is room for it.
    pub title: Option<u16>,
    /// The request's rows with their text, wrapped and cut to fit.
    pub detail: Vec<(u16, String)>,
    /// The row of the buttons (or of the note's first row when there are none).
    pub action_row: u16,
    /// The note's rows with their text, wrapped, when there are no buttons.
    pub note: Vec<(u16, String)>,
    /// Each button's cells and its text, in the card's order.
    pub buttons: Vec<(CellRectU16, String)>,
    /// The row whose middle has the line that closes the card, if there is room.
    pub rule: Option<u16>,
}

/// What a cell of a card is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardHit {
    /// The button at this index of [`DecisionCard::buttons`].
    Button(usize),
    /// The card, not a button.
    Card,
}

/// The layout of `card` in a pane at `pane` on the window's cells (its first row is the
/// header); `None` when the pane is too small to show one.
///
/// The buttons go side by side on one row when they fit (with their chords, their chords
/// written short, or their labels alone), else one under the other when the pane has the rows,
/// else side by side cut short. With little room the buttons (or the note's first row) stay,
/// then come the title, the closing rule, the request's rows and the note's second row.
pub fn card_layout(card: &DecisionCard, pane: CellRectU16) -> Option<CardLayout> {
    let avail = usize::from(pane.rows.checked_sub(1).filter(|a| *a > 0)?);
    if pane.cols < 4 {
        return None;
    }
    let cols = usize::from(pane.cols);
    let width = cols - 2;
    let button_rows = button_texts(card, cols, avail);
    let note_lines = if card.buttons.is_empty() {
        wrap_words(card.note.as_deref().unwrap_or_default(), width)
    } else {
        Vec::new()
    };
    // Rows that must be there, then the rest in the order they are given up.
    let action_rows = button_rows.len().max(1).min(avail);
    let mut spare = avail - action_rows;
    let mut take = |want: usize| {
        let got = want.min(spare);
        spare -= got;
        got
    };
    let has_title = take(1) == 1;
    let has_rule = take(1) == 1;
    // Every row, to count what a short pane leaves out.
    let wrapped = wrap(&card.detail, width, usize::MAX - 1);
    let detail_rows = take(wrapped.len().min(MAX_DETAIL_ROWS));
    let note_rows = 1 + take(note_lines.len().saturating_sub(1));
    let top = pane.row + 1;
    let mut row = top;
    let title = has_title.then(|| {
        row += 1;
        row - 1
    });
    let mut detail = Vec::new();
    let mut lines = wrapped.into_iter();
    for i in 0..detail_rows {
        let Some(mut text) = lines.next() else { break };
        // The last row shown says when there was more, and how much.
        if i + 1 == detail_rows && lines.len() > 0 {
            let more = lines.len() + 1;
            text = ellipsize(&format!("… {more} more rows: make the pane taller"), width);
        }
        detail.push((row, text));
        row += 1;
    }
    let action_row = row;
    let mut note = Vec::new();
    for text in note_lines.into_iter().take(note_rows) {
        note.push((row, text));
        row += 1;
    }
    let mut buttons = Vec::new();
    for texts in button_rows.into_iter().take(action_rows) {
        let mut at = pane.col + 1;
        for text in texts {
            let w = u16::try_from(str_width(&text)).unwrap_or(u16::MAX);
            buttons.push((CellRectU16::new(at, row, w, 1), text));
            at = at.saturating_add(w + 1);
        }
        row += 1;
    }
    if buttons.is_empty() && note.is_empty() {
        row += 1;
    }
    let rule = has_rule.then_some(row);
    if has_rule {
        row += 1;
    }
    Some(CardLayout {
        rect: CellRectU16::new(pane.col, top, pane.cols, row - top),
        title,
        detail,
        action_row,
        note,
        buttons,
        rule,
    })
}

/// The texts of `card`'s buttons in a pane `cols` wide with `rows` rows to spare, by row:
/// each " label  keys ", side by side one blank apart from the second column on when they fit
/// (with the chords, the chords written short, or the labels alone), else one per row when
/// there are the rows, else side by side cut short.
fn button_texts(card: &DecisionCard, cols: usize, rows: usize) -> Vec<Vec<String>> {
    let n = card.buttons.len();
    if n == 0 {
        return Vec::new();
    }
    let room = cols.saturating_sub(1);
    let fits = |texts: &[String]| texts.iter().map(|t| str_width(t) + 1).sum::<usize>() <= room;
    let texts = |keys: fn(&str) -> String| -> Vec<String> {
        card.buttons
            .iter()
            .map(|b| match &b.keys {
                Some(k) => format!(" {}  {} ", b.label, keys(k)),
                None => format!(" {} ", b.label),
            })
            .collect()
    };
    let full = texts(str::to_owned);
    let short = texts(short_chord);
    let plain: Vec<String> = card.buttons.iter().map(|b| format!(" {} ", b.label)).collect();
    for tier in [&full, &short, &plain] {
        if fits(tier) {
            return vec![tier.clone()];
        }
    }
    if n > 1 && rows >= n {
        // One per row, all written the same way: the first way each fits in, else cut short.
        let tier = [&full, &short, &plain]
            .into_iter()
            .find(|tier| tier.iter().all(|t| str_width(t) < room))
            .cloned()
            .unwrap_or_else(|| plain.iter().map(|t| ellipsize(t, room - 1)).collect());
        return tier.into_iter().map(|text| vec![text]).collect();
    }
    let each = (room / n).saturating_sub(1).max(1);
    vec![plain.iter().map(|t| ellipsize(t, each)).collect()]
}

/// A chord as `Ctrl+Shift+Y` written short, as Emacs would: `C-S-Y` (`M-` for Alt).
fn short_chord(keys: &str) -> String {
    keys.replace("Ctrl+", "C-").replace("Shift+", "S-").replace("Alt+", "M-")
}

/// `lines` wrapped at `width` cells (by width, not at spaces: a command is not prose), at most
/// `max` rows and one more to tell that there was more.
fn wrap(lines: &[String], width: usize, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        let mut row = String::new();
        let mut used = 0;
        for c in line.chars().filter(|c| !c.is_control()) {
            let w = text_width(c);
            if used + w > width && used > 0 {
                out.push(std::mem::take(&mut row));
                used = 0;
                if out.len() > max {
                    return out;
                }
            }
            row.push(c);
            used += w;
        }
        out.push(row);
        if out.len() > max {
            return out;
        }
    }
    out
}

/// Prose (a note) in at most two rows of `width` cells, broken at a space where there is one;
/// the second row is cut short with `…` when it does not fit.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let text: String = text.chars().filter(|c| !c.is_control()).collect();
    if str_width(&text) <= width {
        return vec![text];
    }
    let mut used = 0;
    let mut cut = 0;
    let mut space = None;
    for (i, c) in text.char_indices() {
        used += text_width(c);
        if used > width {
            break;
        }
        if c == ' ' {
            space = Some(i);
        }
        cut = i + c.len_utf8();
    }
    let (first, rest) = match space {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (&text[..cut], &text[cut..]),
    };
    vec![first.to_owned(), ellipsize(rest, width)]
}

/// What the window cell (`col`, `row`) is on a card laid out as `layout`, if it is on it.
pub fn card_hit(layout: &CardLayout, col: u16, row: u16) -> Option<CardHit> {
    let inside = |r: CellRectU16| {
        col >= r.col && col < r.col + r.cols && row >= r.row && row < r.row + r.rows
    };
    if !inside(layout.rect) {
        return None;
    }
    let button = layout.buttons.iter().position(|(r, _)| inside(*r));
    Some(button.map_or(CardHit::Card, CardHit::Button))
}

/// The ground of a button of `tone`: the restore badges' colours.
pub(super) fn button_colour(palette: &Palette, tone: ButtonTone) -> Rgb {
    match tone {
        ButtonTone::Allow => palette.badge_live,
        ButtonTone::Always => palette.badge_resumable,
        ButtonTone::Deny => palette.badge_exited,
    }
}

/// A button on a row of text: its label, its tone and the cells of the row it takes.
pub(super) struct RowButton<'a> {
    pub label: &'a str,
    pub tone: ButtonTone,
    pub cells: Range<usize>,
}

/// Draws `button` on the row of text `cells` whose first cell is the window cell
/// `(col, row)`: its ground (a quad under its cells, cut at the row's end) and its label in
/// the badges' colour. The card, the sidebar and the review view draw their buttons so.
pub(super) fn draw_button(
    button: &RowButton<'_>,
    cells: &mut [CellView],
    (col, row): (u16, u16),
    palette: &Palette,
    m: CellMetrics,
    quads: &mut Vec<Quad>,
) {
    let (start, end) = (button.cells.start, button.cells.end.min(cells.len()));
    if start >= end {
        return;
    }
    let colour = button_colour(palette, button.tone);
    let x = col_x(m, col.saturating_add(u16::try_from(start).unwrap_or(u16::MAX)));
    quads.push(Quad::fill(x, row_y(m, row), (end - start) as f32 * m.cell_w, m.cell_h, colour));
    for cell in &mut cells[start..end] {
        cell.bg = colour;
    }
    put_text(cells, start, end, button.label, palette.badge_fg, true);
}

/// Draws the card of a pane at `pane` onto the modal layer (`quads`, `texts`).
pub(super) fn card(
    card: &DecisionCard,
    pane: CellRectU16,
    palette: &Palette,
    m: CellMetrics,
    text: &mut TextSystem,
    quads: &mut Vec<Quad>,
    texts: &mut Vec<Placement>,
) {
    let Some(layout) = card_layout(card, pane) else { return };
    let r = layout.rect;
    let (x, w) = (col_x(m, r.col), f32::from(r.cols) * m.cell_w);
    let accent = palette.ring_needs_input;
    quads.push(Quad::fill(x, row_y(m, r.row), w, f32::from(r.rows) * m.cell_h, palette.overlay_bg));
    // A bar in the accent colour down the card's left edge, the closing line along its bottom.
    let bar = m.stroke.max(2.0).round();
    quads.push(Quad::fill(x, row_y(m, r.row), bar, f32::from(r.rows) * m.cell_h, accent));
    if let Some(rule) = layout.rule {
        let y = row_y(m, rule) + ((m.cell_h - bar) / 2.0).round();
        quads.push(Quad::fill(x, y, w, bar, accent));
    }
    let clip = clip_of(m, r);
    let cols = usize::from(r.cols);
    let mut row_of = |cells: Vec<CellView>, row: u16, texts: &mut Vec<Placement>| {
        let key = text.row(&cells, None);
        texts.push(Placement { key, x, y: row_y(m, row), clip });
    };
    let blank = |fg| vec![CellView::blank(fg, palette.overlay_bg); cols];
    if let Some(row) = layout.title {
        let mut cells = blank(accent);
        put_text(&mut cells, 1, cols - 1, &card.title, accent, true);
        row_of(cells, row, texts);
    }
    for (row, line) in &layout.detail {
        let mut cells = blank(palette.overlay_fg);
        put_text(&mut cells, 1, cols - 1, line, palette.overlay_fg, false);
        row_of(cells, *row, texts);
    }
    for (row, line) in &layout.note {
        let mut cells = blank(palette.overlay_fg);
        put_text(&mut cells, 1, cols - 1, line, palette.overlay_fg, true);
        row_of(cells, *row, texts);
    }
    let mut rows: Vec<u16> = layout.buttons.iter().map(|(r, _)| r.row).collect();
    rows.dedup();
    for row in rows {
        let mut cells = blank(palette.overlay_fg);
        let on_row = layout.buttons.iter().zip(&card.buttons).filter(|((r, _), _)| r.row == row);
        for ((rect, label), button) in on_row {
            let from = usize::from(rect.col - r.col);
            let cells_of = from..from + usize::from(rect.cols);
            let button = RowButton { label, tone: button.tone, cells: cells_of };
            draw_button(&button, &mut cells, (r.col, row), palette, m, quads);
        }
        row_of(cells, row, texts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::scene::CardButton;

    fn button(label: &str, keys: &str, tone: ButtonTone) -> CardButton {
        CardButton { label: label.into(), keys: Some(keys.into()), tone }
    }

    fn card(detail: &[&str], buttons: usize) -> DecisionCard {
        let all = [
            button("Allow", "Ctrl+Shift+Y", ButtonTone::Allow),
            button("Always allow", "Ctrl+Shift+L", ButtonTone::Always),
            button("Deny", "Ctrl+Shift+N", ButtonTone::Deny),
        ];
        DecisionCard {
            title: "Claude asks to run Bash".into(),
            detail: detail.iter().map(|s| (*s).to_owned()).collect(),
            buttons: all.into_iter().take(buttons).collect(),
            note: None,
        }
    }

    #[test]
    fn a_card_takes_title_detail_buttons_and_a_rule_under_the_header() {
        let pane = CellRectU16::new(10, 1, 80, 20);
        let layout = card_layout(&card(&["rm -rf build"], 3), pane).expect("room for a card");
        assert_eq!(layout.rect, CellRectU16::new(10, 2, 80, 4));
        assert_eq!(layout.title, Some(2));
        assert_eq!(layout.detail, [(3, "rm -rf build".to_owned())]);
        assert_eq!(layout.action_row, 4);
        assert_eq!(layout.rule, Some(5));
        let texts: Vec<&str> = layout.buttons.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            [" Allow  Ctrl+Shift+Y ", " Always allow  Ctrl+Shift+L ", " Deny  Ctrl+Shift+N "]
        );
        // Buttons start at the pane's second column, one blank apart.
        let rects: Vec<CellRectU16> = layout.buttons.iter().map(|(r, _)| *r).collect();
        assert_eq!(rects[0], CellRectU16::new(11, 4, 21, 1));
        assert_eq!(rects[1].col, 11 + 21 + 1);
        assert_eq!(rects[2].col, rects[1].col + rects[1].cols + 1);
    }

    #[test]
    fn long_requests_wrap_and_stop_at_the_most_rows() {
        let pane = CellRectU16::new(0, 0, 12, 30);
        let layout = card_layout(&card(&["abcdefghijklmnopqrstu", "second"], 1), pane).unwrap();
        let rows: Vec<&str> = layout.detail.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(rows, ["abcdefghij", "klmnopqrst", "u", "second"]);
        let many: Vec<String> = (0..9).map(|i| format!("line {i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let layout = card_layout(&card(&many, 1), pane).unwrap();
        let rows: Vec<&str> = layout.detail.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(rows.len(), 9, "{rows:?}");
        let tiny = CellRectU16::new(0, 0, 40, 7);
        let layout = card_layout(&card(&many, 1), tiny).unwrap();
        let rows: Vec<&str> = layout.detail.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(rows, ["line 0", "line 1", "… 7 more rows: make the pane taller"]);
    }

    #[test]
    fn a_short_pane_drops_detail_then_rule_then_title() {
        let c = card(&["one", "two"], 3);
        let at = |rows| card_layout(&c, CellRectU16::new(0, 0, 100, rows));
        let shape = |l: CardLayout| (l.title.is_some(), l.detail.len(), l.rule.is_some());
        assert_eq!(at(6).map(shape), Some((true, 2, true)));
        assert_eq!(at(5).map(shape), Some((true, 1, true)));
        assert_eq!(at(4).map(shape), Some((true, 0, true)));
        assert_eq!(at(3).map(shape), Some((true, 0, false)));
        assert_eq!(at(2).map(shape), Some((false, 0, false)));
        assert_eq!(at(1), None);
        assert_eq!(card_layout(&c, CellRectU16::new(0, 0, 3, 10)), None);
    }

    #[test]
    fn narrow_panes_shorten_the_keys_then_stack_the_buttons_then_cut_them() {
        let c = card(&["ls"], 3);
        let at = |cols, rows| -> Vec<(u16, String)> {
            let l = card_layout(&c, CellRectU16::new(0, 0, cols, rows)).unwrap();
            for (r, _) in &l.buttons {
                assert!(
                    r.col + r.cols <= cols && r.row < l.rect.row + l.rect.rows,
                    "{cols}x{rows}"
                );
            }
            l.buttons.into_iter().map(|(r, t)| (r.row, t)).collect()
        };
        let texts =
            |cols, rows| -> Vec<String> { at(cols, rows).into_iter().map(|(_, t)| t).collect() };
        assert_eq!(texts(60, 10), [" Allow  C-S-Y ", " Always allow  C-S-L ", " Deny  C-S-N "]);
        assert_eq!(texts(40, 10), [" Allow ", " Always allow ", " Deny "]);
        // Too narrow for one row: one per row, all written the way each fits (here: no chords).
        let stacked = at(20, 10);
        assert_eq!(
            stacked,
            [(3, " Allow ".to_owned()), (4, " Always allow ".to_owned()), (5, " Deny ".to_owned())]
        );
        // The buttons keep their rows before the request's and the rule's: with four rows under
        // the header, the title and the three buttons.
        let l = card_layout(&c, CellRectU16::new(0, 0, 20, 5)).unwrap();
        assert_eq!((l.title, l.detail.len(), l.rule, l.buttons.len()), (Some(1), 0, None, 3));
        // Not enough rows for one each: side by side, cut short.
        assert_eq!(texts(20, 3), [" All…", " Alw…", " Den…"]);
    }

    #[test]
    fn without_buttons_the_note_takes_the_action_row_and_wraps_once() {
        let mut c = card(&["ls"], 0);
        c.note = Some("answer in the agent's own prompt".into());
        let layout = card_layout(&c, CellRectU16::new(0, 0, 20, 10)).unwrap();
        assert!(layout.buttons.is_empty());
        let action = layout.action_row;
        assert_eq!(
            layout.note,
            [(action, "answer in the".to_owned()), (action + 1, "agent's own prompt".to_owned())]
        );
        assert_eq!(layout.rule, Some(action + 2));
        assert_eq!(layout.rect.rows, 5);
        // No spare row: the note's first row only.
        let layout = card_layout(&c, CellRectU16::new(0, 0, 20, 5)).unwrap();
        assert_eq!(layout.note.len(), 1);
        assert_eq!(layout.rect.rows, 4);
        assert_eq!(card_hit(&layout, 3, layout.action_row), Some(CardHit::Card));
    }

    #[test]
    fn hits_name_the_button_under_the_cell() {
        let layout = card_layout(&card(&["ls"], 3), CellRectU16::new(0, 1, 100, 20)).unwrap();
        let row = layout.action_row;
        let (first, _) = layout.buttons[0];
        let (third, _) = layout.buttons[2];
        let cases = [
            ((first.col, row), Some(CardHit::Button(0))),
            ((first.col + first.cols - 1, row), Some(CardHit::Button(0))),
            ((first.col + first.cols, row), Some(CardHit::Card)),
            ((third.col + 2, row), Some(CardHit::Button(2))),
            ((0, row), Some(CardHit::Card)),
            ((5, layout.title.unwrap()), Some(CardHit::Card)),
            ((5, 1), None),
            ((5, layout.rect.row + layout.rect.rows), None),
            ((100, row), None),
        ];
        for ((col, row), want) in cases {
            assert_eq!(card_hit(&layout, col, row), want, "cell {col},{row}");
        }
    }
}
