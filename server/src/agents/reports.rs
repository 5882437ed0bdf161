//! What an agent reports about itself, applied to its pane: a session id (from a hook or
//! `session.report`, which `berth report-session` sends), and a hook's lifecycle, attention and
//! notification; and the end of a turn the user interrupted through Berth.
//!
//! It owns these `impl Store` blocks only; the meaning of a hook payload is [`super::hooks`]'s
//! and the pane's agent metadata is the Store's `AgentInfo`. It must not start or resume
//! anything: a reported resume command runs only on an explicit resume.

use berth_engine::agents::AgentKind;
use berth_engine::ids::PaneId;
use berth_engine::model::{Attention, Lifecycle, RestoreState};

use super::hooks::HookOutcome;
use super::turns::LifecycleSource;
use crate::error::CommandError;
use crate::notifications::Incoming;
use crate::store::Store;

impl Store {
    /// Records an agent's kind and session id for a pane; a new id replaces the old one (a
    /// `/clear` starts a new session). The same id in another pane is logged as a conflict.
    pub fn report_session(
        &mut self,
        id: &PaneId,
        kind: AgentKind,
        session_id: String,
        reported_resume_argv: Option<Vec<String>>,
        model: Option<String>,
    ) -> Result<(), CommandError> {
        if let Some(other) = self
            .panes
            .values()
            .find(|p| &p.id != id && p.agent.session_id.as_deref() == Some(session_id.as_str()))
        {
            tracing::warn!(pane = %id, other = %other.id, "the same agent session was reported from two panes");
        }
        let pane =
            self.panes.get_mut(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
        pane.agent.kind = kind;
        pane.agent.session_id = Some(session_id);
        if reported_resume_argv.is_some() {
            pane.agent.reported_resume_argv = reported_resume_argv;
        }
        if model.is_some() {
            pane.agent.model = model;
        }
        if let Some(tomb) = &mut pane.tombstone {
            if tomb.state == RestoreState::Restored && pane.agent.resume_argv().is_some() {
                tomb.state = RestoreState::Resumable;
            }
        }
        self.publish_pane_changed(id);
        Ok(())
    }
}

impl Store {
    /// Applies what an agent's hook said: its session id, lifecycle, attention and
    /// notification.
    pub fn apply_hook(
        &mut self,
        id: &PaneId,
        kind: AgentKind,
        outcome: HookOutcome,
    ) -> Result<(), CommandError> {
        if !self.panes.contains_key(id) {
            return Err(CommandError::NoSuchPane(id.to_string()));
        }
        if outcome.retracts_decisions {
            self.retract_decisions(id);
        }
        if outcome.settles_lost_decision {
            self.settle_lost_decision(id);
        }
        let mut outcome = outcome;
        if let Some((request, result)) = outcome.delivery.take() {
            self.delivery_reported(id, request.as_deref(), result);
        }
        if outcome.permission_prompt && self.decisions.current(id).is_some_and(|d| d.answerable) {
            // The request is already on the pane's card and the desktop: no second note.
            outcome.notification = None;
        }
        if let Some(session) = outcome.session_id {
            self.report_session(id, kind, session, None, None)?;
        } else if let Some(pane) = self.panes.get_mut(id) {
            pane.agent.kind = kind;
        }
        let settles = (outcome.retracts_decisions || outcome.settles_lost_decision)
            && outcome.lifecycle.is_none()
            && outcome.attention.is_none()
            && self.decisions.0.get(id).is_none_or(|d| d.open.is_empty());
        if let Some(pane) = self.panes.get(id) {
            if outcome.prompt_ack {
                pane.shared.meta().turns.acked_prompt = outcome.acked_prompt.clone();
            }
            pane.shared.note_hook(outcome.lifecycle, outcome.last_message, outcome.prompt_ack);
            // The question was answered in the agent's own dialog (opencode's
            // `permission.replied`, codex's `PostToolUse` after Berth's wait ran out, which
            // say nothing of the turn): it goes on. Only from
            // `blocked`, so a reply that lands after the turn's end changes nothing.
            if settles && pane.shared.meta().lifecycle == Lifecycle::Blocked {
                pane.shared.set_lifecycle(Lifecycle::Working, LifecycleSource::Hook);
            }
        }
        // No open question after this event (taken back, the turn moved on): no `needs_input`,
        // before the event raises its own attention (a turn's end: `unread`).
        self.settle_attention(id);
        if let Some((title, body)) = outcome.notification {
            let mut incoming =
                Incoming::new(Some(id.clone()), &title, &body, &format!("hook:{}", kind.as_str()));
            incoming.attention = outcome.attention.unwrap_or(Attention::Unread);
            self.add_notification(incoming);
        } else if let Some(attention) = outcome.attention {
            if let Some(pane) = self.panes.get_mut(id) {
                pane.attention = attention;
            }
        }
        self.publish_pane_changed(id);
        self.touch();
        Ok(())
    }
}

impl Store {
    /// Ends an agent's turn that the user interrupted through Berth (Escape or Ctrl-C sent while
    /// it was `working` or `blocked`): the pane is `idle` at once instead of waiting for a hook
    /// that claude never sends on an interrupt, and a question it was asking goes with the
    /// turn (taken back; its hook gets no decision), so its attention is no longer
    /// `needs_input`. Plain programs are left to their foreground job, and opencode to itself:
    /// it interrupts only on a second Escape (the first shows "esc again to interrupt"; Ctrl-C
    /// is its exit key), and its plugin reports the end of an interrupted turn
    /// (`session.status` idle) and a question rejected by Escape (`permission.replied`).
    pub(crate) fn end_interrupted_turn(&mut self, id: &PaneId) {
        let Some(pane) = self.panes.get(id) else { return };
        let lifecycle = pane.shared.meta().lifecycle;
        if pane.agent.kind == AgentKind::None
            || berth_engine::agents::reports_interrupts(pane.agent.kind)
            || !matches!(lifecycle, Lifecycle::Working | Lifecycle::Blocked)
        {
            return;
        }
        pane.shared.set_lifecycle(Lifecycle::Idle, LifecycleSource::Interrupt);
        self.retract_decisions(id);
        self.settle_attention(id);
        self.publish_pane_changed(id);
        self.touch();
    }
}
