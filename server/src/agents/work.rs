//! What `pane.submit` and `pane.wait` ask and answer, apart from how they are served
//! (`submit.rs`, `wait.rs`), so that the wire (`protocol`) and the client can name them without
//! reaching the Store.
//!
//! Plain data and one check; it imports neither the Store nor the protocol.

use std::time::Duration;

use berth_engine::agents::submit::MAX_PROMPT_BYTES;
use berth_engine::ids::PaneId;
use berth_engine::model::Lifecycle;

use super::turns::{LifecycleSource, TurnInfo};
use crate::error::CommandError;

/// How often a wait looks at what no event reports (a plain program's foreground job).
pub const PROBE_INTERVAL: Duration = Duration::from_millis(200);

/// What a submit did (the answer of `pane.submit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitOutcome {
    /// The pane.
    pub pane: PaneId,
    /// Bytes of prompt text delivered.
    pub bytes: usize,
    /// Whether it went as a bracketed paste (the program asked for bracketed paste).
    pub bracketed: bool,
    /// Milliseconds between the paste and Enter (the agent's settle delay).
    pub enter_delay_ms: u64,
    /// Whether Berth waited for the agent's acknowledgement (its hooks are wired and it has
    /// an acknowledging event).
    pub awaited_ack: bool,
    /// Whether the acknowledgement came (always false when not awaited).
    pub confirmed: bool,
    /// Whether Enter was pressed a second time because the first drew no acknowledgement.
    pub enter_retried: bool,
    /// The agent acknowledged a prompt that holds this one after other text: what was already
    /// in its input (codex puts an interrupted prompt back there) went with it. The prompt it
    /// received, bounded; `None` when it received exactly this one or did not say.
    pub joined: Option<String>,
}

/// Checks a prompt before anything is written: not empty, at most [`MAX_PROMPT_BYTES`].
pub fn check_prompt(text: &str) -> Result<(), CommandError> {
    if text.is_empty() {
        return Err(CommandError::BadParams("the prompt is empty".into()));
    }
    if text.len() > MAX_PROMPT_BYTES {
        return Err(CommandError::BadParams(format!(
            "the prompt is {} bytes; at most {MAX_PROMPT_BYTES} bytes (32 KiB) can be submitted",
            text.len()
        )));
    }
    Ok(())
}

/// The state a wait ends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitUntil {
    /// Not in a turn: `idle` or `done` (a turn that ended, read or not).
    Idle,
    /// Waiting for a permission or an answer.
    Blocked,
    /// A turn finished (`done`; an interrupted turn ends `idle`, not `done`).
    Done,
    /// The process ended.
    Exited,
}

impl WaitUntil {
    /// Every value.
    pub const ALL: [Self; 4] = [Self::Idle, Self::Blocked, Self::Done, Self::Exited];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Blocked => "blocked",
            Self::Done => "done",
            Self::Exited => "exited",
        }
    }

    /// The value of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Whether `lifecycle` is this state.
    pub fn reached_by(self, lifecycle: Lifecycle) -> bool {
        match self {
            Self::Idle => matches!(lifecycle, Lifecycle::Idle | Lifecycle::Done),
            Self::Blocked => lifecycle == Lifecycle::Blocked,
            Self::Done => lifecycle == Lifecycle::Done,
            Self::Exited => lifecycle == Lifecycle::Exited,
        }
    }
}

/// How a wait ended (the answer of `pane.wait`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitOutcome {
    /// The pane.
    pub pane: PaneId,
    /// Whether the state was reached; false when the pane exited (or closed) first.
    pub reached: bool,
    /// The pane's lifecycle at the end.
    pub lifecycle: Lifecycle,
    /// The pane's turns then: how the lifecycle was learned, the last turn (its message and
    /// length).
    pub turn: TurnInfo,
    /// The exit code, once the pane's process has ended.
    pub exit_code: Option<i32>,
}

impl WaitOutcome {
    /// How the state was learned (the pane's last lifecycle change; `process` when nothing
    /// better told).
    pub fn learned_from(&self) -> LifecycleSource {
        self.turn.learned_from.unwrap_or(LifecycleSource::Process)
    }
}
