//! Decisions: a permission request an agent's hook is waiting on, in domain types.
//!
//! A [`PendingDecision`] is what the pane shows (`PaneInfo::pending_decision`), what
//! `decision.list` lists and what `pane.decision` events carry; a [`DecisionAnswer`] is what a
//! client answers with (`pane.decide`). This module holds only the shapes: where a decision
//! comes from and how its answer travels back to the agent is `agents::decide`'s business.

use berth_engine::agents::AgentKind;
use berth_engine::ids::DecisionId;

/// The answers a decision can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DecisionAnswer {
    /// Allow this one call.
    Allow,
    /// Allow it and calls like it from now on (only where the agent can take it: claude's
    /// `permission_suggestions`; opencode's `always`).
    Always,
    /// Refuse it (with an optional message for the agent).
    Deny,
}

impl DecisionAnswer {
    /// Every answer, in the order the options are shown.
    pub const ALL: [Self; 3] = [Self::Allow, Self::Always, Self::Deny];

    /// The wire name (`allow`, `always`, `deny`), also the CLI's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Always => "always",
            Self::Deny => "deny",
        }
    }

    /// The answer of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The label a button or a notification action shows for it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Allow => "Allow once",
            Self::Always => "Always allow",
            Self::Deny => "Deny",
        }
    }
}

/// One option of a decision: an answer and the label to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionOption {
    /// The answer it gives.
    pub answer: DecisionAnswer,
    /// What to show (e.g. "Always allow `cargo test:*`").
    pub label: String,
}

/// A permission request an agent is waiting on, as a pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDecision {
    /// Its id: an answer names it (or takes the current one).
    pub id: DecisionId,
    /// The agent asking.
    pub agent: AgentKind,
    /// The tool it wants to use (`Bash`, `Edit`, an MCP tool …).
    pub tool: String,
    /// One line: the tool and its command or file.
    pub prompt: String,
    /// More of the request, a few bounded lines (the whole command, the description).
    pub detail: String,
    /// What can be answered, in order.
    pub options: Vec<DecisionOption>,
    /// Whether an answer can still reach the agent. False once the route is lost (the hook
    /// went away, timed out, or the server restarted): then nothing is granted and the
    /// agent's own prompt takes over.
    pub answerable: bool,
    /// When the request came, ms since the Unix epoch.
    pub received_at: u64,
}

impl PendingDecision {
    /// The option for an answer, if this decision offers it.
    pub fn option(&self, answer: DecisionAnswer) -> Option<&DecisionOption> {
        self.options.iter().find(|o| o.answer == answer)
    }
}

/// How a hook's wait for an answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeReason {
    /// Someone answered.
    Answered,
    /// The turn moved on without an answer through Berth (claude answered in its own dialog):
    /// the card was taken back.
    Retracted,
    /// Nobody answered in time.
    Timeout,
    /// The decision went away without an answer (its pane closed, the server stopped).
    Lost,
}

impl OutcomeReason {
    /// Every reason.
    pub const ALL: [Self; 4] = [Self::Answered, Self::Retracted, Self::Timeout, Self::Lost];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::Retracted => "retracted",
            Self::Timeout => "timeout",
            Self::Lost => "lost",
        }
    }

    /// The reason of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

/// What the waiting hook gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionOutcome {
    /// The decision.
    pub id: DecisionId,
    /// The answer, when there is one.
    pub answer: Option<DecisionAnswer>,
    /// The message given with it.
    pub message: Option<String>,
    /// How the wait ended.
    pub reason: OutcomeReason,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_round_trip_their_names() {
        for answer in DecisionAnswer::ALL {
            assert_eq!(DecisionAnswer::parse(answer.as_str()), Some(answer));
            assert!(!answer.label().is_empty());
        }
        assert_eq!(DecisionAnswer::parse("yes"), None);
        assert_eq!(DecisionAnswer::parse("Allow"), None);
    }
}

/// How a decision's route was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// The hook's wait ran out: the agent's own prompt takes the question over.
    TimedOut,
    /// The hook's connection closed before an answer: the agent stopped its hook (claude does
    /// so when its own dialog is answered or escaped), or the hook was killed.
    HookGone,
}
