//! The window's latency trace, for `scripts/bench` (`BERTH_LATENCY_TRACE=FILE`; off, and
//! free, without it): measured the same way whichever way the server is reached.
//!
//! It appends one line per event to FILE, times in microseconds of the monotonic clock
//! (`CLOCK_MONOTONIC`, the clock of Python's `time.monotonic()`):
//! - `key LATENCY_US AT_US`: from winit's key press event to the presentation of the first
//!   frame whose panes' cells differ from the frame presented before it (a key pressed while
//!   another waits for its frame counts with that one);
//! - `frame AT_US`: a presented frame whose panes' cells changed.
//!
//! It must not change what the window does: it only reads the scene after it was presented.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::time::Instant;

use crate::render::Scene;

/// The variable naming the trace file.
pub(super) const ENV: &str = "BERTH_LATENCY_TRACE";

/// The trace: where it goes, the key press waiting for its frame, the last cells presented.
#[derive(Default)]
pub(super) struct LatencyTrace {
    out: Option<std::io::LineWriter<std::fs::File>>,
    pending: Option<Instant>,
    last_cells: u64,
}

impl LatencyTrace {
    /// The trace `BERTH_LATENCY_TRACE` names (appended to), or one that does nothing.
    pub(super) fn from_env() -> LatencyTrace {
        let Some(path) = std::env::var_os(ENV).filter(|p| !p.is_empty()) else {
            return LatencyTrace::default();
        };
        match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            Ok(file) => {
                tracing::info!(path = %std::path::Path::new(&path).display(), "latency trace on");
                LatencyTrace { out: Some(std::io::LineWriter::new(file)), ..Default::default() }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot open the latency trace");
                LatencyTrace::default()
            }
        }
    }

    /// A key was pressed (winit's event, before the window handles it).
    pub(super) fn key(&mut self) {
        if self.out.is_some() && self.pending.is_none() {
            self.pending = Some(Instant::now());
        }
    }

    /// A frame of `scene` was presented at `at`.
    pub(super) fn presented(&mut self, scene: &Scene, at: Instant) {
        let Some(out) = &mut self.out else { return };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for pane in &scene.panes {
            pane.rect.hash(&mut hasher);
            pane.screen.cells.hash(&mut hasher);
        }
        let cells = hasher.finish();
        if cells == self.last_cells {
            return;
        }
        self.last_cells = cells;
        let at_us = monotonic_us(at);
        let _ = writeln!(out, "frame {at_us}");
        if let Some(pressed) = self.pending.take() {
            let latency = at.saturating_duration_since(pressed).as_micros();
            let _ = writeln!(out, "key {latency} {at_us}");
        }
    }
}

/// `at` on the monotonic clock, in microseconds (`Instant` is `CLOCK_MONOTONIC` on Linux).
fn monotonic_us(at: Instant) -> u128 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
    }
    let now_us = u128::try_from(now.tv_sec).unwrap_or(0) * 1_000_000
        + u128::try_from(now.tv_nsec).unwrap_or(0) / 1_000;
    now_us.saturating_sub(Instant::now().saturating_duration_since(at).as_micros())
}
