//! Mouse reports for programs that ask for them, and click counting for selection.
//!
//! Owns the xterm mouse protocols (X10/normal `CSI M` bytes and SGR `CSI < … M/m`, DECSET
//! 1000/1002/1003/1006), the decision which events a mode reports, and the double/triple
//! click counter. It must not touch a pane or the window: it turns events into bytes and
//! counts.

use std::time::{Duration, Instant};

/// A button as the mouse protocols number it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportButton {
    /// The left button.
    Left,
    /// The middle button.
    Middle,
    /// The right button.
    Right,
    /// One step of the wheel away from the user.
    WheelUp,
    /// One step of the wheel towards the user.
    WheelDown,
    /// Motion with no button held (mode 1003 only).
    None,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// A button went down (every wheel step is a press).
    Press,
    /// A button came up.
    Release,
    /// The pointer moved to another cell.
    Motion,
}

/// Which mouse events the program asked for, from the terminal's modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MouseModes {
    /// DECSET 1000: presses and releases.
    pub click: bool,
    /// DECSET 1002: also motion while a button is held.
    pub drag: bool,
    /// DECSET 1003: also motion with no button held.
    pub motion: bool,
    /// DECSET 1006: SGR encoding.
    pub sgr: bool,
}

impl MouseModes {
    /// The modes of a terminal, from alacritty's mode flags.
    pub fn from_term(mode: alacritty_terminal::term::TermMode) -> Self {
        use alacritty_terminal::term::TermMode;
        Self {
            click: mode.contains(TermMode::MOUSE_REPORT_CLICK),
            drag: mode.contains(TermMode::MOUSE_DRAG),
            motion: mode.contains(TermMode::MOUSE_MOTION),
            sgr: mode.contains(TermMode::SGR_MOUSE),
        }
    }

    /// Whether the program wants the mouse at all (then clicks are not selections).
    pub fn any(self) -> bool {
        self.click || self.drag || self.motion
    }
}

/// The modifier bits a report carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportMods {
    /// Shift (only seen when the window does not take Shift+click for selection).
    pub shift: bool,
    /// Alt/Meta.
    pub alt: bool,
    /// Ctrl.
    pub ctrl: bool,
}

/// One event to report, at a cell of the pane (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MouseReport {
    /// Which button.
    pub button: ReportButton,
    /// Press, release or motion.
    pub kind: ReportKind,
    /// The column in the pane.
    pub col: u16,
    /// The row in the pane.
    pub row: u16,
    /// Modifiers held.
    pub mods: ReportMods,
}

/// The bytes to send for `report` under `modes`, or None when the modes do not ask for this
/// event (or the legacy encoding cannot carry its position).
pub fn encode(report: &MouseReport, modes: MouseModes) -> Option<Vec<u8>> {
    if !wanted(report, modes) {
        return None;
    }
    let mut code: u32 = match report.button {
        ReportButton::Left => 0,
        ReportButton::Middle => 1,
        ReportButton::Right => 2,
        ReportButton::None => 3,
        ReportButton::WheelUp => 64,
        ReportButton::WheelDown => 65,
    };
    if report.kind == ReportKind::Motion {
        code += 32;
    }
    code += 4 * u32::from(report.mods.shift)
        + 8 * u32::from(report.mods.alt)
        + 16 * u32::from(report.mods.ctrl);
    let (col, row) = (u32::from(report.col) + 1, u32::from(report.row) + 1);
    if modes.sgr {
        let end = if report.kind == ReportKind::Release { 'm' } else { 'M' };
        return Some(format!("\x1b[<{code};{col};{row}{end}").into_bytes());
    }
    // The legacy encoding has no release button: any release is button 3.
    if report.kind == ReportKind::Release {
        code = (code & !0b11) | 3;
    }
    // Each value travels as one byte offset by 32, so positions past 223 cannot be sent.
    let byte = |v: u32| u8::try_from(v + 32).ok();
    Some(vec![0x1b, b'[', b'M', byte(code)?, byte(col)?, byte(row)?])
}

/// Whether the modes ask for this event.
fn wanted(report: &MouseReport, modes: MouseModes) -> bool {
    match report.kind {
        ReportKind::Press => modes.any(),
        // Wheel steps have no release.
        ReportKind::Release => {
            modes.any() && !matches!(report.button, ReportButton::WheelUp | ReportButton::WheelDown)
        }
        ReportKind::Motion if report.button == ReportButton::None => modes.motion,
        ReportKind::Motion => modes.drag || modes.motion,
    }
}

/// The longest gap between the clicks of a double or triple click.
pub const MULTI_CLICK: Duration = Duration::from_millis(400);

/// Counts clicks at the same cell: 1, 2 (word), 3 (line), then back to 1.
#[derive(Debug, Default)]
pub struct ClickCounter {
    last: Option<(Instant, (u16, u16))>,
    count: u8,
}

impl ClickCounter {
    /// Records a press at `cell` at time `now` and returns how many clicks in a row it is.
    pub fn press(&mut self, cell: (u16, u16), now: Instant) -> u8 {
        let continues = self.last.is_some_and(|(at, last_cell)| {
            last_cell == cell && now.saturating_duration_since(at) <= MULTI_CLICK
        });
        self.count = if continues && self.count < 3 { self.count + 1 } else { 1 };
        self.last = Some((now, cell));
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLICK: MouseModes = MouseModes { click: true, drag: false, motion: false, sgr: false };
    const SGR: MouseModes = MouseModes { sgr: true, ..CLICK };
    const SGR_DRAG: MouseModes = MouseModes { drag: true, ..SGR };
    const SGR_ANY: MouseModes = MouseModes { motion: true, ..SGR };
    const OFF: MouseModes = MouseModes { click: false, drag: false, motion: false, sgr: true };

    fn report(button: ReportButton, kind: ReportKind, col: u16, row: u16) -> MouseReport {
        MouseReport { button, kind, col, row, mods: ReportMods::default() }
    }

    #[test]
    fn reports_as_a_table() {
        use ReportButton::*;
        use ReportKind::*;
        let ctrl = ReportMods { ctrl: true, ..ReportMods::default() };
        let cases: &[(MouseReport, MouseModes, Option<&[u8]>)] = &[
            (report(Left, Press, 0, 0), SGR, Some(b"\x1b[<0;1;1M")),
            (report(Left, Release, 0, 0), SGR, Some(b"\x1b[<0;1;1m")),
            (report(Right, Press, 9, 4), SGR, Some(b"\x1b[<2;10;5M")),
            (report(Middle, Press, 299, 99), SGR, Some(b"\x1b[<1;300;100M")),
            (report(WheelUp, Press, 1, 1), SGR, Some(b"\x1b[<64;2;2M")),
            (report(WheelDown, Press, 1, 1), SGR, Some(b"\x1b[<65;2;2M")),
            (report(WheelDown, Release, 1, 1), SGR, Option::None),
            (MouseReport { mods: ctrl, ..report(Left, Press, 0, 0) }, SGR, Some(b"\x1b[<16;1;1M")),
            // Motion: only with 1002 while a button is held, or 1003 always.
            (report(Left, Motion, 2, 3), SGR, Option::None),
            (report(Left, Motion, 2, 3), SGR_DRAG, Some(b"\x1b[<32;3;4M")),
            (report(None, Motion, 2, 3), SGR_DRAG, Option::None),
            (report(None, Motion, 2, 3), SGR_ANY, Some(b"\x1b[<35;3;4M")),
            // Legacy encoding: values offset by 32, releases are button 3.
            (report(Left, Press, 0, 0), CLICK, Some(b"\x1b[M !!")),
            (report(Right, Release, 9, 4), CLICK, Some(b"\x1b[M#*%")),
            (report(WheelUp, Press, 0, 0), CLICK, Some(b"\x1b[M`!!")),
            (report(Left, Press, 300, 0), CLICK, Option::None),
            // No mouse mode: nothing is reported.
            (report(Left, Press, 0, 0), OFF, Option::None),
        ];
        for (r, modes, expected) in cases {
            assert_eq!(encode(r, *modes).as_deref(), *expected, "{r:?} under {modes:?}");
        }
    }

    #[test]
    fn clicks_count_up_to_three_at_one_cell_within_the_interval() {
        let mut counter = ClickCounter::default();
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        assert_eq!(counter.press((1, 1), t0), 1);
        assert_eq!(counter.press((1, 1), t0 + ms(100)), 2);
        assert_eq!(counter.press((1, 1), t0 + ms(200)), 3);
        assert_eq!(counter.press((1, 1), t0 + ms(300)), 1);
        assert_eq!(counter.press((2, 1), t0 + ms(350)), 1);
        assert_eq!(counter.press((2, 1), t0 + ms(350) + MULTI_CLICK + ms(1)), 1);
    }
}
