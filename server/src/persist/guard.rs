//! "Never a worse record over a better one" (RELIABILITY #5): the pure policy that decides
//! whether a new snapshot may replace the last good one.
//!
//! The policy compares [`SnapshotSummary`]s only. It must not do I/O; the state dir keeps the
//! summary of the record on disk and asks [`may_replace`] before every save.
//!
//! The rules:
//! - A snapshot is *empty* when it holds no pane. An empty state has two very different
//!   causes: the user closed everything, or nothing was restored yet (a failed or unfinished
//!   load, a boot still settling). Only the caller can tell them apart, so it says so with
//!   `user_closed_all`.
//! - `Normal` and `Explicit` saves may always write a non-empty snapshot. They may write an
//!   empty one only when the record on disk is empty too (or there is none), or when
//!   `user_closed_all` is true.
//! - A `Shutdown` save may not replace a record that has more panes, or more *kept* panes (live
//!   ones and tombstones that can still be started: anything but `EXITED`), than it: at
//!   shutdown the PTYs are going down, so "fewer" most likely means "lost", not "closed". A
//!   pane restored after a restart and not resumed yet is kept, not lost: counting only `LIVE`
//!   panes refused every shutdown save of a boot where not every pane was resumed (and lost
//!   the panes made since, a regression the window's e2e test found).
//!   `user_closed_all` does not override this; a pane closed in the last debounce window before a
//!   shutdown comes back as a tombstone, which errs on the side of keeping.

/// The counts the guard compares. [`SnapshotSummary::of`] takes them from a snapshot (in
/// `snapshot.rs`: the guard does not know the snapshot's types, so the state dir's error can
/// carry its refusals without an import loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnapshotSummary {
    /// How many panes it holds.
    pub panes: usize,
    /// How many of them were kept at save time: `LIVE`, or a tombstone that can be started
    /// again (`RESTORED`, `RESUMABLE`); everything but `EXITED`.
    pub live: usize,
    /// How many workspaces it holds.
    pub workspaces: usize,
}

impl SnapshotSummary {
    /// Whether it holds no pane.
    pub fn is_empty(&self) -> bool {
        self.panes == 0
    }
}

/// Why a save is being made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveContext {
    /// The debounced save after a structural change.
    Normal {
        /// The state is empty because the user's own commands closed the last pane (not
        /// because nothing was restored yet).
        user_closed_all: bool,
    },
    /// A save while the server or the host shuts down (SIGTERM, SIGINT, logind).
    Shutdown,
    /// The user asked for it (`berth save`, `snapshot.save`).
    Explicit {
        /// As for [`SaveContext::Normal`].
        user_closed_all: bool,
    },
}

impl SaveContext {
    /// A short name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SaveContext::Normal { .. } => "normal",
            SaveContext::Shutdown => "shutdown",
            SaveContext::Explicit { .. } => "explicit",
        }
    }
}

/// Why the guard kept the record on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RefusedReason {
    /// The new state is empty, the record is not, and the user did not close everything.
    #[error(
        "the current state has no panes but the saved snapshot holds {} pane(s) in {} \
         workspace(s), and they were not closed by the user; the saved snapshot is kept",
        previous.panes,
        previous.workspaces
    )]
    EmptyOverGood {
        /// The record on disk.
        previous: SnapshotSummary,
    },
    /// A shutdown-time save would record fewer panes or fewer live panes.
    #[error(
        "a shutdown-time save would record {} pane(s) ({} live or restorable) over a snapshot \
         with {} ({} live or restorable), most likely because the panes were already going down; the saved snapshot \
         is kept",
        next.panes,
        next.live,
        previous.panes,
        previous.live
    )]
    FewerAtShutdown {
        /// The record on disk.
        previous: SnapshotSummary,
        /// What the save would have written.
        next: SnapshotSummary,
    },
}

/// Decides whether a snapshot summarised by `next` may replace the record summarised by
/// `previous` (`None`: there is no good record on disk). See the module header for the rules.
pub fn may_replace(
    previous: Option<&SnapshotSummary>,
    next: &SnapshotSummary,
    context: SaveContext,
) -> Result<(), RefusedReason> {
    let Some(previous) = previous.copied() else { return Ok(()) };
    match context {
        SaveContext::Shutdown => {
            if previous.panes > next.panes || previous.live > next.live {
                return Err(RefusedReason::FewerAtShutdown { previous, next: *next });
            }
        }
        SaveContext::Normal { user_closed_all } | SaveContext::Explicit { user_closed_all } => {
            if next.is_empty() && !previous.is_empty() && !user_closed_all {
                return Err(RefusedReason::EmptyOverGood { previous });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(panes: usize, live: usize, workspaces: usize) -> SnapshotSummary {
        SnapshotSummary { panes, live, workspaces }
    }

    const NORMAL: SaveContext = SaveContext::Normal { user_closed_all: false };
    const NORMAL_CLOSED: SaveContext = SaveContext::Normal { user_closed_all: true };
    const EXPLICIT: SaveContext = SaveContext::Explicit { user_closed_all: false };
    const EXPLICIT_CLOSED: SaveContext = SaveContext::Explicit { user_closed_all: true };
    const SHUTDOWN: SaveContext = SaveContext::Shutdown;

    /// Checks one row: `Ok` is written as `None`, a refusal by its variant name.
    fn check(
        previous: Option<SnapshotSummary>,
        next: SnapshotSummary,
        ctx: SaveContext,
        want: Option<&str>,
    ) {
        let got = match may_replace(previous.as_ref(), &next, ctx) {
            Ok(()) => None,
            Err(RefusedReason::EmptyOverGood { .. }) => Some("EmptyOverGood"),
            Err(RefusedReason::FewerAtShutdown { .. }) => Some("FewerAtShutdown"),
        };
        assert_eq!(got, want, "previous {previous:?}, next {next:?}, {ctx:?}");
    }

    #[test]
    fn the_guard_table() {
        let rows: &[(Option<SnapshotSummary>, SnapshotSummary, SaveContext, Option<&str>)] = &[
            // Nothing on disk: anything goes.
            (None, s(0, 0, 0), NORMAL, None),
            (None, s(0, 0, 0), SHUTDOWN, None),
            (None, s(3, 3, 1), SHUTDOWN, None),
            // Non-empty saves in normal and explicit contexts always go.
            (Some(s(5, 5, 2)), s(1, 0, 1), NORMAL, None),
            (Some(s(5, 5, 2)), s(1, 0, 1), EXPLICIT, None),
            (Some(s(5, 5, 2)), s(6, 6, 2), NORMAL, None),
            // Empty over good: only when the user closed everything.
            (Some(s(5, 5, 2)), s(0, 0, 0), NORMAL, Some("EmptyOverGood")),
            (Some(s(5, 5, 2)), s(0, 0, 2), NORMAL, Some("EmptyOverGood")),
            (Some(s(5, 0, 2)), s(0, 0, 0), EXPLICIT, Some("EmptyOverGood")),
            (Some(s(5, 5, 2)), s(0, 0, 0), NORMAL_CLOSED, None),
            (Some(s(5, 5, 2)), s(0, 0, 0), EXPLICIT_CLOSED, None),
            // Empty over empty is harmless.
            (Some(s(0, 0, 0)), s(0, 0, 0), NORMAL, None),
            (Some(s(0, 0, 3)), s(0, 0, 0), NORMAL, None),
            // Shutdown: never fewer panes or fewer live panes.
            (Some(s(4, 4, 1)), s(4, 4, 1), SHUTDOWN, None),
            (Some(s(4, 2, 1)), s(5, 3, 1), SHUTDOWN, None),
            (Some(s(4, 4, 1)), s(3, 3, 1), SHUTDOWN, Some("FewerAtShutdown")),
            (Some(s(4, 4, 1)), s(4, 1, 1), SHUTDOWN, Some("FewerAtShutdown")),
            (Some(s(4, 4, 1)), s(0, 0, 0), SHUTDOWN, Some("FewerAtShutdown")),
            (Some(s(4, 0, 1)), s(4, 0, 1), SHUTDOWN, None),
        ];
        for &(previous, next, ctx, want) in rows {
            check(previous, next, ctx, want);
        }
    }

    #[test]
    fn refusals_say_what_was_kept() {
        let err = may_replace(Some(&s(5, 2, 2)), &s(0, 0, 0), NORMAL).unwrap_err();
        assert!(err.to_string().contains("5 pane(s) in 2 workspace(s)"), "{err}");
        let err = may_replace(Some(&s(5, 2, 2)), &s(5, 0, 2), SHUTDOWN).unwrap_err();
        assert!(
            err.to_string().contains("5 pane(s) (0 live or restorable)")
                && err.to_string().contains("kept")
        );
    }
}
