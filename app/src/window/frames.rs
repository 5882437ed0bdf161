//! When the window draws: frames asked for and by whom, the last scene drawn, the cursor's
//! blink and the lifecycle markers' clock.
//!
//! Owns the rule "draw only when something changed": a frame asked for only because the
//! server said something changed ([`FrameSchedule::wake`], the markers' clock) is skipped when
//! its scene equals the last one drawn; a frame asked for by input, a resize or the config
//! ([`FrameSchedule::ask`]) is always drawn. It must not draw or ask winit for frames itself:
//! the window does, when a method here says so.
//!
//! It also paces wake-ups: a frame asked for by the server comes at most once per refresh of
//! the display ([`FrameSchedule::pace`]), so a pane flooding the screen does not keep the
//! window drawing frames nobody sees, with the CPU they take; except just after input, when
//! the echo is drawn at once (a key's latency is what a person feels).

use std::time::{Duration, Instant};

use crate::render::Scene;

/// How long a blinking cursor stays on and off.
pub(super) const BLINK: Duration = Duration::from_millis(530);

/// How often the window redraws while a pane works, so "working 2m" stays true.
pub(super) const LIFECYCLE_TICK: Duration = Duration::from_secs(15);

/// How long after input the server's wake-ups are drawn at once, unpaced.
pub(super) const INPUT_UNPACED: Duration = Duration::from_millis(100);

/// The most a frame's cost holds back the next paced frame (a software rasterizer's slowest
/// full frames here take about 60 ms).
pub(super) const MAX_FRAME_COST: Duration = Duration::from_millis(100);

/// One refresh at 60 Hz, the pace when the display does not say its own.
const REFRESH_60HZ: Duration = Duration::from_micros(16_667);

/// The window's frame schedule.
#[derive(Debug)]
pub(super) struct FrameSchedule {
    /// Whether a frame has been asked for and not drawn yet.
    pending: bool,
    /// Whether the pending frame was asked for only because something may have changed
    /// (then an identical scene is not drawn again).
    wake_only: bool,
    /// The last scene drawn.
    last_scene: Option<Scene>,
    /// Whether the blinking cursor is in its visible phase, and when it next changes.
    blink_on: bool,
    blink_at: Option<Instant>,
    /// When to redraw for the lifecycle markers' clocks.
    tick_at: Option<Instant>,
    /// When something shown goes away by itself (a toast): a frame then.
    expires_at: Option<Instant>,
    /// When the last frame was drawn, the last input came, and a paced wake-up's frame is due.
    drawn_at: Option<Instant>,
    input_at: Option<Instant>,
    paced_at: Option<Instant>,
    /// The display's refresh interval: the shortest time between two paced frames.
    refresh: Duration,
    /// How long the last frame took to draw and present.
    cost: Duration,
}

impl Default for FrameSchedule {
    fn default() -> Self {
        Self {
            pending: false,
            wake_only: false,
            last_scene: None,
            blink_on: true,
            blink_at: None,
            tick_at: None,
            expires_at: None,
            drawn_at: None,
            input_at: None,
            paced_at: None,
            refresh: REFRESH_60HZ,
            cost: Duration::ZERO,
        }
    }
}

/// What the clocks want when the loop is about to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ClockDue {
    /// The cursor's blink changed phase: a frame that must be drawn.
    pub(super) blink: bool,
    /// The markers' clock ran out: a frame that is skipped if nothing else changed.
    pub(super) tick: bool,
    /// A paced wake-up's time came: a frame that is skipped if nothing changed.
    pub(super) paced: bool,
}

impl FrameSchedule {
    /// A frame that is drawn even if nothing seems to have changed (input, a resize, the
    /// config). The window then asks winit for a frame.
    pub(super) fn ask(&mut self) {
        self.wake_only = false;
        self.pending = true;
    }

    /// A wake-up from the server: a frame that is skipped if its scene is unchanged, unless a
    /// frame already asked for by something else is pending (that one stays a full one).
    pub(super) fn wake(&mut self) {
        if !self.pending {
            self.wake_only = true;
            self.pending = true;
        }
    }

    /// The markers' clock ran out: only the clocks changed, so an identical scene is not drawn
    /// again (unless a full frame is pending).
    fn tick(&mut self) {
        self.wake_only = !self.pending || self.wake_only;
        self.pending = true;
    }

    /// A frame starts: nothing is pending any more. Whether it may be skipped when its scene
    /// is unchanged.
    pub(super) fn begin(&mut self) -> bool {
        self.pending = false;
        self.paced_at = None;
        std::mem::take(&mut self.wake_only)
    }

    /// Whether the frame begun with `wake_only` (from [`FrameSchedule::begin`]) need not be
    /// drawn: its scene is the last one drawn.
    pub(super) fn unchanged(&self, wake_only: bool, scene: &Scene) -> bool {
        wake_only && self.last_scene.as_ref() == Some(scene)
    }

    /// The frame was drawn (`Some`) or failed (`None`: the next one is drawn whatever it
    /// shows).
    pub(super) fn drawn(&mut self, scene: Option<Scene>) {
        // The focused pane changed after input: the echo is on screen, pacing starts again.
        fn focused(s: &Scene) -> Option<&crate::render::ScreenCells> {
            s.panes.iter().find(|p| p.focused).map(|p| &p.screen)
        }
        let echoed = match (&scene, &self.last_scene) {
            (Some(new), Some(old)) => focused(new) != focused(old),
            _ => false,
        };
        if echoed {
            self.input_at = None;
        }
        self.last_scene = scene;
        self.drawn_at = Some(Instant::now());
    }

    /// The display refreshes `millihertz` times a thousand seconds (winit's monitor figure).
    pub(super) fn set_refresh(&mut self, millihertz: u32) {
        if millihertz >= 1_000 {
            self.refresh = Duration::from_micros(1_000_000_000 / u64::from(millihertz));
        }
    }

    /// The last frame took `cost` to draw and present: paced frames leave at least as long
    /// again between them, so that drawing a flood takes at most half the time (a software
    /// rasterizer's frames are slow, and the pane's reader needs the CPU too).
    ///
    /// A frame that took longer than [`MAX_FRAME_COST`] was stalled, not slow (the window was
    /// stopped or starved between its draw and its present): counted as that much, so the
    /// frames after a stall are not held back for as long as the stall lasted.
    pub(super) fn cost(&mut self, cost: Duration) {
        self.cost = cost.min(MAX_FRAME_COST);
    }

    /// Input came at `now` (a key, committed text, a click): wake-ups are unpaced until a
    /// frame shows the focused pane changed (the echo), for [`INPUT_UNPACED`] at most.
    pub(super) fn input(&mut self, now: Instant) {
        self.input_at = Some(now);
    }

    /// A wake-up at `now` (after [`FrameSchedule::wake`]): `None` if its frame is drawn now,
    /// else the time it is due, one refresh after the last frame ([`FrameSchedule::due`] says
    /// when it comes). Just after input, and when the last frame is a refresh old, it is now.
    pub(super) fn pace(&mut self, now: Instant, drawn_at: Option<Instant>) -> Option<Instant> {
        let typing =
            self.input_at.is_some_and(|at| now.saturating_duration_since(at) < INPUT_UNPACED);
        let at = drawn_at
            .or(self.drawn_at)
            .map(|d| d + self.refresh.max(self.cost))
            .filter(|at| *at > now && !typing)?;
        self.paced_at = Some(self.paced_at.map_or(at, |p| p.min(at)));
        Some(at)
    }

    /// Forgets the last scene, so the next frame is drawn (the config changed).
    pub(super) fn forget_scene(&mut self) {
        self.last_scene = None;
    }

    /// Whether the blinking cursor is in its hidden phase.
    pub(super) fn cursor_hidden(&self) -> bool {
        !self.blink_on
    }

    /// Restarts the cursor's blink in its visible phase (after input).
    pub(super) fn reset_blink(&mut self) {
        self.blink_on = true;
        self.blink_at = None;
    }

    /// After a frame's scene is known: the blink runs while the focused cursor blinks in a
    /// focused window (`blinking`), the markers' clock while a pane works (`working`); a
    /// running clock keeps its time.
    pub(super) fn keep_clocks(&mut self, blinking: bool, working: bool, now: Instant) {
        self.tick_at = working.then(|| self.tick_at.unwrap_or(now + LIFECYCLE_TICK));
        self.blink_at = blinking.then(|| self.blink_at.unwrap_or(now + BLINK));
    }

    /// After a frame's scene is known: what it shows that goes away by itself goes at
    /// `until` (a toast's end; `None`: nothing), and a frame is drawn then.
    pub(super) fn expires(&mut self, until: Option<Instant>) {
        self.expires_at = until;
    }

    /// The loop is about to wait at `now`: the clocks that ran out (a blink changes phase and
    /// asks for a frame; the markers' clock asks for one that may be skipped), and when to
    /// wake at the latest (`check`: the loop's own health check interval).
    pub(super) fn due(&mut self, now: Instant, check: Duration) -> (ClockDue, Instant) {
        let mut due = ClockDue { blink: false, tick: false, paced: false };
        if self.paced_at.is_some_and(|at| at <= now) {
            self.paced_at = None;
            self.wake();
            due.paced = true;
        }
        if self.blink_at.is_some_and(|at| at <= now) {
            self.blink_on = !self.blink_on;
            self.blink_at = Some(now + BLINK);
            self.ask();
            due.blink = true;
        }
        if self.tick_at.is_some_and(|at| at <= now) {
            self.tick_at = None;
            self.tick();
            due.tick = true;
        }
        if self.expires_at.is_some_and(|at| at <= now) {
            // What went away changes the scene: the frame is drawn.
            self.expires_at = None;
            self.tick();
            due.tick = true;
        }
        let mut next = self.blink_at.map_or(now + check, |b| b.min(now + check));
        for at in [self.tick_at, self.paced_at, self.expires_at].into_iter().flatten() {
            next = next.min(at);
        }
        (due, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(cols: u16) -> Scene {
        Scene { grid_cols: cols, grid_rows: 10, ..Scene::default() }
    }

    #[test]
    fn an_unchanged_scene_is_skipped_only_when_nothing_but_a_wake_up_asked() {
        let mut frames = FrameSchedule::default();
        // Nothing drawn yet: a wake-up's frame is drawn.
        frames.wake();
        let wake_only = frames.begin();
        assert!(wake_only);
        assert!(!frames.unchanged(wake_only, &scene(80)));
        frames.drawn(Some(scene(80)));
        // The same scene again after a wake-up: skipped; a changed one: drawn.
        frames.wake();
        let wake_only = frames.begin();
        assert!(frames.unchanged(wake_only, &scene(80)));
        assert!(!frames.unchanged(wake_only, &scene(81)));
        // Input asked: drawn even if unchanged, and a wake-up after it does not downgrade it.
        frames.ask();
        frames.wake();
        assert!(!frames.begin());
        // A failed frame forgets the scene: the next wake-up draws.
        frames.drawn(None);
        frames.wake();
        let wake_only = frames.begin();
        assert!(!frames.unchanged(wake_only, &scene(80)));
    }

    /// A decision card is plain data in the scene: while it stays as it is, a wake-up draws
    /// nothing; when it goes (answered) or changes (not answerable any more), it is drawn.
    #[test]
    fn a_decision_card_costs_a_frame_only_when_it_changes() {
        use crate::render::{ButtonTone, CardButton, DecisionCard, PaneScene};
        let card = DecisionCard {
            title: "Claude asks to run Bash".into(),
            detail: vec!["ls".into()],
            buttons: vec![CardButton { label: "Deny".into(), keys: None, tone: ButtonTone::Deny }],
            note: None,
        };
        let with = |decision: Option<DecisionCard>| Scene {
            panes: vec![PaneScene { decision, ..PaneScene::default() }],
            ..scene(80)
        };
        let mut frames = FrameSchedule::default();
        frames.drawn(Some(with(Some(card.clone()))));
        frames.wake();
        let wake_only = frames.begin();
        assert!(frames.unchanged(wake_only, &with(Some(card.clone()))));
        assert!(!frames.unchanged(wake_only, &with(None)));
        let lost = DecisionCard { buttons: Vec::new(), note: Some("gone".into()), ..card };
        assert!(!frames.unchanged(wake_only, &with(Some(lost))));
    }

    /// A toast shows for 6 s: the window wakes when it goes, not at the next 15 s tick of
    /// the lifecycle clock (it lingered that long before).
    #[test]
    fn what_goes_away_by_itself_is_drawn_gone_in_time() {
        let check = Duration::from_secs(1);
        let t0 = Instant::now();
        let until = t0 + Duration::from_secs(6);
        let mut frames = FrameSchedule::default();
        frames.keep_clocks(false, false, t0);
        frames.expires(Some(until));
        let (due, next) = frames.due(until - check, check);
        assert_eq!((due.tick, next), (false, until));
        let (due, next) = frames.due(until, check);
        assert!(due.tick, "the frame the toast goes in");
        assert_eq!(next, until + check, "asked once");
        frames.begin();
        frames.expires(None);
        assert!(!frames.due(until + check, check).0.tick);
    }

    #[test]
    fn the_clocks_ask_for_frames_when_they_run_out() {
        let check = Duration::from_secs(1);
        let t0 = Instant::now();
        let mut frames = FrameSchedule::default();
        frames.keep_clocks(true, true, t0);
        let (due, next) = frames.due(t0, check);
        assert_eq!(due, ClockDue { blink: false, tick: false, paced: false });
        assert_eq!(next, t0 + BLINK);
        // The blink runs out: the cursor hides and a full frame is asked for.
        let (due, _) = frames.due(t0 + BLINK, check);
        assert!(due.blink && !due.tick);
        assert!(frames.cursor_hidden());
        assert!(!frames.begin());
        // The markers' clock runs out: a frame that may be skipped.
        frames.keep_clocks(false, true, t0);
        let (due, next) = frames.due(t0 + LIFECYCLE_TICK, check);
        assert!(due.tick && !due.blink);
        assert!(frames.begin());
        assert_eq!(next, t0 + LIFECYCLE_TICK + check);
        // Input shows the cursor again.
        frames.reset_blink();
        assert!(!frames.cursor_hidden());
    }

    #[test]
    fn wake_ups_are_paced_to_the_refresh_except_just_after_input() {
        let check = Duration::from_secs(1);
        let t0 = Instant::now();
        let mut frames = FrameSchedule::default();
        frames.set_refresh(50_000);
        let refresh = Duration::from_millis(20);
        // Nothing drawn yet, or the last frame a refresh old: drawn at once.
        assert_eq!(frames.pace(t0, None), None);
        assert_eq!(frames.pace(t0 + refresh, Some(t0)), None);
        // A wake-up 5 ms after a frame waits for the refresh; `due` brings it then.
        frames.wake();
        assert_eq!(frames.pace(t0 + Duration::from_millis(5), Some(t0)), Some(t0 + refresh));
        let (due, next) = frames.due(t0 + Duration::from_millis(6), check);
        assert!(!due.paced);
        assert_eq!(next, t0 + refresh);
        let (due, _) = frames.due(t0 + refresh, check);
        assert!(due.paced);
        assert!(frames.begin(), "a paced frame is skipped when nothing changed");
        // Just after a key, the echo's wake-up is drawn at once; a while later it is paced.
        frames.input(t0 + refresh);
        assert_eq!(frames.pace(t0 + refresh + Duration::from_millis(1), Some(t0 + refresh)), None);
        let later = t0 + refresh + INPUT_UNPACED;
        assert_eq!(frames.pace(later, Some(later)), Some(later + refresh));
        // A frame drawn meanwhile (input) takes the paced one with it.
        frames.begin();
        let (due, _) = frames.due(later + refresh, check);
        assert!(!due.paced);
        // Once a frame shows the focused pane's echo, wake-ups are paced again.
        let focused = |c: char| {
            let mut screen =
                crate::render::ScreenCells::blank(4, 1, &crate::render::Palette::dark());
            screen.cells[0].ch = c;
            Scene {
                panes: vec![crate::render::PaneScene {
                    focused: true,
                    screen,
                    ..Default::default()
                }],
                ..scene(80)
            }
        };
        frames.drawn(Some(focused('a')));
        frames.input(later);
        frames.drawn(Some(focused('a')));
        assert_eq!(frames.pace(later + Duration::from_millis(2), Some(later)), None, "no echo yet");
        frames.drawn(Some(focused('b')));
        assert_eq!(
            frames.pace(later + Duration::from_millis(3), Some(later)),
            Some(later + refresh)
        );
        // Frames slower than the refresh leave as long again between them.
        frames.cost(Duration::from_millis(50));
        assert_eq!(frames.pace(later, Some(later)), Some(later + Duration::from_millis(50)));
        // A frame stalled for seconds (the window stopped between draw and present) holds the
        // next one back no longer than the slowest real frame.
        frames.cost(Duration::from_secs(12));
        assert_eq!(frames.pace(later, Some(later)), Some(later + MAX_FRAME_COST));
    }
}
