//! The Store's side of decisions: a hook's permission request held as its pane's pending
//! decision, answered (`pane.decide`, a desktop action), lost (the hook timed out, or went away
//! for an agent other than claude), withdrawn (claude stopped its hook: the question was
//! settled in its own dialog) or taken back (the agent's turn moved on), and the future a
//! waiting hook's connection awaits.
//!
//! Attention follows the questions (issue 26): a pane is `needs_input` only while it holds an
//! open decision or its lifecycle is `blocked` (the agent's own prompt asks); whatever settles
//! the last question lowers it ([`Store::settle_attention`]).
//!
//! It owns these `impl Store` blocks and [`wait_for_answer`] with its drop guard; the tables and
//! the data they work on are [`super::decide`]'s. It must not spell wire names nor write to a
//! pane.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::agents::AgentKind;
use berth_engine::ids::{DecisionId, PaneId};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use serde_json::Value;

use super::decide::{
    request_of, DecisionRoute, Delivering, OpenDecision, Resolution, MAX_OPEN_PER_PANE, MAX_WAIT,
};
use super::turns::LifecycleSource;
use crate::decisions::{DecisionAnswer, DecisionOutcome, OutcomeReason, PendingDecision};
use crate::error::CommandError;
use crate::event::Event;
use crate::notifications::Incoming;
use crate::persist::stamp::now_ms;
use crate::store::{Internal, Store};

impl Store {
    /// Holds an agent's permission request as its pane's pending decision (see
    /// [`Internal::OpenDecision`]): raises the pane's attention and a notification whose
    /// actions are the options.
    pub(crate) fn open_decision(
        &mut self,
        pane: &PaneId,
        kind: AgentKind,
        payload: &Value,
        id: DecisionId,
        route: DecisionRoute,
    ) -> Result<(), CommandError> {
        let p = self.panes.get(pane).ok_or_else(|| CommandError::NoSuchPane(pane.to_string()))?;
        if p.state() != RestoreState::Live {
            return Err(CommandError::PaneNotLive(pane.to_string()));
        }
        let request = request_of(kind, payload).ok_or_else(|| {
            CommandError::BadParams(format!(
                "this {} payload is not a permission request",
                kind.as_str()
            ))
        })?;
        let session = crate::agents::hooks::map_hook(kind, payload).session_id;
        let title = format!("{} asks to run {}", agent_name(kind), request.tool);
        let source = format!("hook:{}", kind.as_str());
        self.open_request(pane, kind, session, OpenRequest { request, title, source }, id, route)?;
        // opencode's answer goes on through Berth's plugin, which confirms it by this id.
        let agent_ref = (kind == AgentKind::Opencode)
            .then(|| crate::agents::hooks::opencode_request_id(payload))
            .flatten();
        if let Some(open) = self.decisions.0.get_mut(pane).and_then(|d| d.open.back_mut()) {
            open.agent_ref = agent_ref;
        }
        Ok(())
    }

    /// Holds a request as the pane's pending decision: the hook's permission request, or an
    /// agent's act that needs a person's consent (`trust::consent`).
    pub(crate) fn open_request(
        &mut self,
        pane: &PaneId,
        kind: AgentKind,
        session: Option<String>,
        open: OpenRequest,
        id: DecisionId,
        route: DecisionRoute,
    ) -> Result<(), CommandError> {
        let OpenRequest { request, title, source } = open;
        let p = self.panes.get(pane).ok_or_else(|| CommandError::NoSuchPane(pane.to_string()))?;
        if p.state() != RestoreState::Live {
            return Err(CommandError::PaneNotLive(pane.to_string()));
        }
        let open = self.decisions.0.get(pane).map_or(0, |d| d.open.len());
        if open >= MAX_OPEN_PER_PANE {
            return Err(CommandError::Busy(format!(
                "pane {pane} already holds {open} permission requests"
            )));
        }
        if let Some(session) = session {
            self.report_session(pane, kind, session, None, None)?;
        } else if let Some(p) = self.panes.get_mut(pane) {
            p.agent.kind = kind;
        }
        let view = PendingDecision {
            id: id.clone(),
            agent: kind,
            tool: request.tool.clone(),
            prompt: request.prompt.clone(),
            detail: request.detail.clone(),
            options: request.options(),
            answerable: true,
            received_at: now_ms(),
        };
        let resume = (source == CONSENT_SOURCE).then(|| {
            let before =
                self.panes.get(pane).map_or(Lifecycle::Idle, |p| p.shared.meta().lifecycle);
            // Behind another open question: what the pane goes back to after that one.
            let behind = self.decisions.0.get(pane).and_then(|d| d.open.back()).map(|o| o.resume);
            match (before, behind) {
                (Lifecycle::Blocked, Some(resume)) => resume.unwrap_or(Lifecycle::Working),
                (Lifecycle::Blocked, None) => Lifecycle::Working,
                (before, _) => before,
            }
        });
        if let Some(p) = self.panes.get(pane) {
            p.shared.set_lifecycle(Lifecycle::Blocked, LifecycleSource::Hook);
        }
        // The whole command, or no answer from the notification (see `notification_of`).
        let (body, offered) = crate::agents::decide::notification_of(&request, &view.options);
        let mut incoming = Incoming::new(Some(pane.clone()), &title, &body, &source);
        incoming.attention = Attention::NeedsInput;
        incoming.actions =
            offered.iter().map(|o| (o.answer.as_str().to_owned(), o.label.clone())).collect();
        let notification = Some(self.add_notification(incoming));
        let decisions = self.decisions.0.entry(pane.clone()).or_default();
        decisions.lost = None;
        decisions.withdrawn = None;
        decisions.settle = None;
        decisions.open.push_back(OpenDecision {
            view,
            route,
            notification,
            agent_ref: None,
            resume,
        });
        self.publish_decision(pane);
        tracing::info!(pane = %pane, decision = %id, agent = kind.as_str(), source = %source, "decision pending");
        Ok(())
    }

    /// `pane.decide`: sends an answer to the pane's current decision, if its route is alive.
    pub(crate) fn decide(
        &mut self,
        pane: &PaneId,
        answer: DecisionAnswer,
        message: Option<String>,
        id: Option<&DecisionId>,
    ) -> Result<DecisionId, CommandError> {
        let live =
            self.panes.get(pane).ok_or_else(|| CommandError::NoSuchPane(pane.to_string()))?.state()
                == RestoreState::Live;
        let lost_error = |id: &DecisionId| {
            CommandError::NoDecision(format!(
                "decision {id} of pane {pane} can no longer be answered: its route to the agent \
                 is lost (the hook was stopped or timed out, the pane ended, or the server \
                 restarted); nothing was granted, answer in the agent's own prompt"
            ))
        };
        let decisions = self.decisions.0.get_mut(pane);
        let Some(front) = decisions.as_ref().and_then(|d| d.open.front()) else {
            let lost = decisions.as_ref().and_then(|d| d.lost.clone());
            let withdrawn = decisions.and_then(|d| d.withdrawn.clone());
            return Err(match (lost, withdrawn) {
                (Some(lost), _) if id.is_none_or(|id| *id == lost.id) => lost_error(&lost.id),
                (None, Some(gone)) if id.is_none_or(|id| *id == gone) => {
                    CommandError::NoDecision(format!(
                        "decision {gone} of pane {pane} was settled in the agent's own dialog \
                         (answered or escaped there): nothing was granted through Berth"
                    ))
                }
                _ => CommandError::NoDecision(match id {
                    Some(id) => format!("decision {id} is not pending in pane {pane}"),
                    None => format!("pane {pane} has no pending decision"),
                }),
            });
        };
        let current = front.view.id.clone();
        if let Some(id) = id.filter(|id| **id != current) {
            let queued = decisions.is_some_and(|d| d.open.iter().any(|o| o.view.id == *id));
            return Err(CommandError::NoDecision(if queued {
                format!("decision {id} is waiting behind {current} in pane {pane}: answer {current} first")
            } else {
                format!(
                    "decision {id} is not pending in pane {pane} (the current one is {current})"
                )
            }));
        }
        if front.view.option(answer).is_none() {
            return Err(CommandError::BadParams(format!(
                "{} cannot take `{}` for this request; answer {}",
                agent_name(front.view.agent),
                answer.as_str(),
                front
                    .view
                    .options
                    .iter()
                    .map(|o| o.answer.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )));
        }
        if !live {
            self.lose_decision(pane, &current, Loss::TimedOut);
            return Err(lost_error(&current));
        }
        if !front.route.is_alive() {
            // Its hook is going: its guard, waiting for this lock, says how (timed out or gone).
            return Err(lost_error(&current));
        }
        let Some(open) = self.decisions.0.get_mut(pane).and_then(|d| d.open.pop_front()) else {
            return Err(lost_error(&current));
        };
        if !open.route.send(Resolution::Answered { answer, message }) {
            // The hook went away between the check and the send: nothing was granted.
            // Its guard, waiting for this lock, marks it lost.
            let decisions = self.decisions.0.entry(pane.clone()).or_default();
            decisions.open.push_front(open);
            return Err(lost_error(&current));
        }
        tracing::info!(pane = %pane, decision = %current, answer = answer.as_str(), "decision answered");
        self.close_decision_notification(open.notification.as_deref());
        if open.view.agent == AgentKind::Opencode {
            // Handed to Berth's plugin, which must still give it to opencode: `pane.decide`
            // waits for its word ([`Store::take_delivery`]).
            let (done, waiter) = tokio::sync::oneshot::channel();
            self.decisions.0.entry(pane.clone()).or_default().delivering.push(Delivering {
                view: open.view.clone(),
                agent_ref: open.agent_ref.clone(),
                done: Some(done),
                waiter: Some(waiter),
            });
        }
        let more = self.decisions.0.get(pane).is_some_and(|d| !d.open.is_empty());
        if let Some(p) = self.panes.get(pane) {
            // A second request queued behind this one still blocks the agent.
            if !more {
                let after = open.resume.unwrap_or(Lifecycle::Working);
                p.shared.set_lifecycle(after, LifecycleSource::Hook);
            }
        }
        self.settle_attention(pane);
        self.publish_decision(pane);
        Ok(current)
    }

    /// The route of a decision is lost; nothing is granted. Timed out (or any agent but
    /// claude's hook gone): it stays shown, not answerable, and the agent's own prompt asks
    /// (the pane stays `blocked`, `needs_input`). Claude's hook gone: claude stops its hook
    /// exactly when the question is settled in its own dialog (yes, no) or by Escape, so the
    /// question is withdrawn: no card, the pane `working` until the agent says more (a yes
    /// runs the tool: `PostToolUse`, `Stop`) or goes quiet (no or Escape: claude sends no hook
    /// at all; [`settle_after_withdrawal`] ends the turn then).
    pub(crate) fn lose_decision(&mut self, pane: &PaneId, id: &DecisionId, loss: Loss) {
        let Some(decisions) = self.decisions.0.get_mut(pane) else { return };
        let Some(index) = decisions.open.iter().position(|o| &o.view.id == id) else { return };
        let Some(open) = decisions.open.remove(index) else { return };
        if let Some(resume) = open.resume {
            // Berth's own question: its asker gave up or timed out, so the act was refused
            // and nothing was done; there is nothing left to answer anywhere (no card kept).
            tracing::info!(pane = %pane, decision = %id, ?loss, "a consent question ended unanswered; nothing done");
            let last = decisions.open.is_empty();
            self.close_decision_notification(open.notification.as_deref());
            if last {
                if let Some(p) = self.panes.get(pane) {
                    if p.shared.meta().lifecycle == Lifecycle::Blocked {
                        p.shared.set_lifecycle(resume, LifecycleSource::Hook);
                    }
                }
            }
            self.settle_attention(pane);
            self.publish_decision(pane);
            return;
        }
        let withdrawn = loss == Loss::HookGone && open.view.agent == AgentKind::Claude;
        if withdrawn {
            decisions.withdrawn = Some(open.view.id.clone());
            tracing::info!(pane = %pane, decision = %id, "claude withdrew its permission request (settled in its own dialog); nothing granted");
        } else {
            let mut view = open.view;
            view.answerable = false;
            decisions.lost = Some(view);
            tracing::info!(pane = %pane, decision = %id, ?loss, "decision route lost; nothing granted");
        }
        let last = decisions.open.is_empty();
        self.close_decision_notification(open.notification.as_deref());
        if withdrawn && last {
            let running = self.panes.get(pane).and_then(|p| {
                let blocked = p.shared.meta().lifecycle == Lifecycle::Blocked;
                blocked
                    .then(|| p.shared.set_lifecycle(Lifecycle::Working, LifecycleSource::Hook))?;
                Some(p.shared.meta().turns.hook_events)
            });
            if let (Some(hooks), Some(d)) = (running, self.decisions.0.get_mut(pane)) {
                d.settle = Some((hooks, now_ms()));
            }
        }
        self.settle_attention(pane);
        self.publish_decision(pane);
    }

    /// The agent's turn moved on (claude answered in its own dialog, or the turn ended): every
    /// open decision of the pane is taken back and its hook ends with no decision.
    pub(crate) fn retract_decisions(&mut self, pane: &PaneId) {
        let Some(decisions) = self.decisions.0.get_mut(pane) else { return };
        let open: Vec<OpenDecision> = decisions.open.drain(..).collect();
        let had_lost = decisions.lost.take().is_some();
        if open.is_empty() && !had_lost {
            return;
        }
        for o in &open {
            o.route.send(Resolution::Retracted);
            self.close_decision_notification(o.notification.as_deref());
        }
        self.settle_attention(pane);
        self.publish_decision(pane);
    }

    /// A tool ran (codex's `PostToolUse`): the question the agent asked in its own dialog after
    /// Berth's wait ran out (the card shown not answerable) was answered there, so the card
    /// goes. Open questions Berth still holds stay (another tool's; codex awaits their hooks).
    pub(crate) fn settle_lost_decision(&mut self, pane: &PaneId) {
        let Some(decisions) = self.decisions.0.get_mut(pane) else { return };
        if !decisions.open.is_empty() || decisions.lost.take().is_none() {
            return;
        }
        self.settle_attention(pane);
        self.publish_decision(pane);
    }

    /// The waiting end of an answer `pane.decide` handed on to an agent's plugin (opencode),
    /// for the connection that waits for the plugin's word; `None` for an agent whose hook
    /// takes the answer itself (claude, codex, cursor).
    pub(crate) fn take_delivery(
        &mut self,
        pane: &PaneId,
        id: &DecisionId,
    ) -> Option<tokio::sync::oneshot::Receiver<Result<(), String>>> {
        let decisions = self.decisions.0.get_mut(pane)?;
        decisions.delivering.iter_mut().find(|d| d.view.id == *id)?.waiter.take()
    }

    /// The plugin's word on an answer it handed on: `request` is the agent's id for the
    /// request (the oldest answer when it names none); `Err` carries why the agent did not
    /// take it. Not taken, the question is still open in the agent's own dialog: the pane is
    /// `blocked`, `needs_input` (the plugin asks again, opening the question anew).
    pub(crate) fn delivery_reported(
        &mut self,
        pane: &PaneId,
        request: Option<&str>,
        result: Result<(), String>,
    ) {
        let Some(decisions) = self.decisions.0.get_mut(pane) else { return };
        let index = match request {
            Some(r) => decisions.delivering.iter().position(|d| d.agent_ref.as_deref() == Some(r)),
            None => (!decisions.delivering.is_empty()).then_some(0),
        };
        let Some(index) = index else {
            tracing::info!(pane = %pane, ?request, "a delivery report for no answer in flight");
            return;
        };
        let delivering = decisions.delivering.remove(index);
        let failed = result.is_err();
        match &result {
            Ok(()) => {
                tracing::info!(pane = %pane, decision = %delivering.view.id, "the agent took the answer")
            }
            Err(why) => {
                tracing::warn!(pane = %pane, decision = %delivering.view.id, why = %why, "the agent did not take the answer")
            }
        }
        if let Some(done) = delivering.done {
            let _ = done.send(result);
        }
        if failed {
            self.answer_undelivered(pane);
        }
    }

    /// `pane.decide` gave up waiting for the plugin's word on decision `id`: the answer counts
    /// as not delivered. Its card stays, not answerable through Berth (the plugin never said
    /// it holds the question still): the agent's own dialog asks; the pane is `blocked`,
    /// `needs_input`. Nothing when the word came meanwhile.
    pub(crate) fn delivery_timed_out(&mut self, pane: &PaneId, id: &DecisionId) {
        let Some(decisions) = self.decisions.0.get_mut(pane) else { return };
        let Some(index) = decisions.delivering.iter().position(|d| d.view.id == *id) else {
            return;
        };
        let delivering = decisions.delivering.remove(index);
        tracing::warn!(pane = %pane, decision = %id, "the agent's plugin did not confirm the answer in time");
        if decisions.open.is_empty() {
            let mut view = delivering.view;
            view.answerable = false;
            decisions.lost = Some(view);
        }
        self.answer_undelivered(pane);
        self.publish_decision(pane);
    }

    /// An answer did not reach the agent: its question is still open there.
    fn answer_undelivered(&mut self, pane: &PaneId) {
        let Some(p) = self.panes.get_mut(pane) else { return };
        if p.state() != RestoreState::Live {
            return;
        }
        p.shared.set_lifecycle(Lifecycle::Blocked, LifecycleSource::Hook);
        p.attention = Attention::NeedsInput;
        self.bus.publish(Event::PaneChanged { pane: pane.clone() });
    }

    /// Attention says what the person still has to do: a pane is `needs_input` only while it
    /// holds an open decision or is `blocked` (the agent's own prompt asks). Once neither
    /// holds (the question was answered, taken back, withdrawn, or the turn ended) it is
    /// lowered to `none`; a turn's end raises its own `unread` after.
    pub(crate) fn settle_attention(&mut self, pane: &PaneId) {
        let open = self.decisions.0.get(pane).is_some_and(|d| !d.open.is_empty());
        let Some(p) = self.panes.get_mut(pane) else { return };
        if p.attention != Attention::NeedsInput || open {
            return;
        }
        if p.tombstone.is_none() && p.shared.meta().lifecycle == Lifecycle::Blocked {
            return;
        }
        p.attention = Attention::None;
        self.bus.publish(Event::PaneChanged { pane: pane.clone() });
    }

    /// A desktop notification's action was invoked: the answer it names, for the decision
    /// it was raised for.
    pub(crate) fn notification_action(&mut self, key: &str, action: &str) {
        let Some(answer) = DecisionAnswer::parse(action) else { return };
        let found = self.decisions.0.iter().find_map(|(pane, d)| {
            d.open
                .iter()
                .find(|o| o.notification.as_deref() == Some(key))
                .map(|o| (pane.clone(), o.view.id.clone()))
        });
        let Some((pane, id)) = found else {
            tracing::info!(notification = key, "a desktop action for a decision no longer pending");
            return;
        };
        if let Err(e) = self.decide(&pane, answer, None, Some(&id)) {
            tracing::warn!(pane = %pane, decision = %id, error = %e, "desktop action not taken");
        }
    }

    /// Every pane's current decision, in the order of the panes' ids.
    pub(crate) fn pending_decisions(&self) -> Vec<(PaneId, PendingDecision)> {
        self.decisions
            .panes()
            .filter_map(|p| Some((p.clone(), self.pending_decision(p)?)))
            .collect()
    }

    /// The decision a pane shows; not answerable once the pane is no longer live.
    pub(crate) fn pending_decision(&self, pane: &PaneId) -> Option<PendingDecision> {
        let mut view = self.decisions.current(pane)?;
        let live = self.panes.get(pane).is_some_and(|p| p.state() == RestoreState::Live);
        view.answerable &= live;
        Some(view)
    }

    fn close_decision_notification(&self, id: Option<&str>) {
        if let (Some(desktop), Some(id)) = (&self.desktop, id) {
            desktop.close(id);
        }
    }

    fn publish_decision(&mut self, pane: &PaneId) {
        let decision = self.pending_decision(pane);
        let id = decision.as_ref().map(|d| d.id.to_string());
        self.bus.publish(Event::Decision { pane: pane.clone(), decision });
        self.bus.publish(Event::PaneChanged { pane: pane.clone() });
        // A task's worker waiting on a decision needs input; its answer puts it back to work.
        crate::tasks::ops::decision_changed(self, pane, id.as_deref());
    }
}

fn agent_name(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::Claude => "Claude",
        AgentKind::Codex => "Codex",
        AgentKind::Opencode => "opencode",
        AgentKind::Cursor => "Cursor agent",
        AgentKind::Generic | AgentKind::None => "The agent",
    }
}

// `Loss` (how a decision's route was lost) lives in the leaf `crate::decisions`, which the
// Store's `Internal` names without importing this file.
pub use crate::decisions::Loss;

/// How long a pane whose agent withdrew its question (claude stopped its hook) may stay silent
/// — no output, no hook — before Berth ends its turn as interrupted: claude redraws its
/// spinner many times a second while it works, and sends no hook after a "no" or Escape.
pub const WITHDRAWN_QUIET: Duration = Duration::from_secs(3);

/// How often the watch of a withdrawn question looks.
const SETTLE_TICK: Duration = Duration::from_millis(250);

/// Marks a decision's route lost when its waiting future is dropped unfinished (the client
/// went away) or ends without an answer (timeout).
struct RouteGuard {
    store: Arc<Mutex<Store>>,
    pane: PaneId,
    id: DecisionId,
    armed: bool,
    loss: Loss,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let _ = store.execute(Internal::DecisionRouteLost {
            pane: self.pane.clone(),
            id: self.id.clone(),
            loss: self.loss,
        });
        let settle = store.decisions.0.get_mut(&self.pane).and_then(|d| d.settle.take());
        drop(store);
        if let (Some((hooks, since)), Ok(runtime)) = (settle, tokio::runtime::Handle::try_current())
        {
            runtime.spawn(settle_after_withdrawal(
                self.store.clone(),
                self.pane.clone(),
                hooks,
                since,
            ));
        }
    }
}

/// After claude withdrew its question: ends the turn as interrupted (`idle`, learned from
/// `interrupt`) once the pane has had neither output nor a hook event for
/// [`WITHDRAWN_QUIET`]; gives up as soon as the agent says anything (a hook event, a new
/// request), the lifecycle moves on, or the pane goes. `hooks` is the pane's hook-event count
/// and `since` the time (ms) of the withdrawal.
pub(crate) async fn settle_after_withdrawal(
    store: Arc<Mutex<Store>>,
    pane: PaneId,
    hooks: u64,
    since: u64,
) {
    let quiet = WITHDRAWN_QUIET.as_millis() as u64;
    let give_up = tokio::time::Instant::now() + MAX_WAIT;
    while tokio::time::Instant::now() < give_up {
        tokio::time::sleep(SETTLE_TICK).await;
        let mut locked = store.lock().unwrap_or_else(|p| p.into_inner());
        let Some(p) = locked.panes.get(&pane) else { return };
        if p.state() != RestoreState::Live {
            return;
        }
        let (moved_on, silent_since) = {
            let meta = p.shared.meta();
            let moved_on = meta.turns.hook_events != hooks || meta.lifecycle != Lifecycle::Working;
            (moved_on, meta.last_activity_ms.max(since))
        };
        let asks = locked.decisions.0.get(&pane).is_some_and(|d| !d.open.is_empty());
        if moved_on || asks {
            return;
        }
        if now_ms().saturating_sub(silent_since) >= quiet {
            tracing::info!(pane = %pane, "the agent went quiet after withdrawing its question: turn interrupted");
            p.shared.set_lifecycle(Lifecycle::Idle, LifecycleSource::Interrupt);
            locked.publish_pane_changed(&pane);
            locked.touch();
            return;
        }
    }
}

/// Opens a decision for a waiting hook and returns the future that yields its outcome: the
/// answer, a retraction, or — after `wait` — a timeout. Dropping the future (the hook's
/// connection closed) marks the decision not answerable; so does the timeout.
pub fn wait_for_answer(
    store: Arc<Mutex<Store>>,
    pane: PaneId,
    kind: AgentKind,
    payload: Value,
    wait: Duration,
) -> Result<impl Future<Output = DecisionOutcome> + Send + 'static, CommandError> {
    let id = DecisionId::new();
    let (route, rx) = DecisionRoute::new();
    {
        let mut locked = store.lock().unwrap_or_else(|p| p.into_inner());
        locked.execute(Internal::OpenDecision {
            pane: pane.clone(),
            kind,
            payload,
            id: id.clone(),
            route,
        })?;
    }
    Ok(outcome_of(RouteGuard { store, pane, id, armed: true, loss: Loss::HookGone }, rx, wait))
}

/// The source of Berth's own questions about an agent's act (`trust/consent.rs`).
pub(crate) const CONSENT_SOURCE: &str = "consent";

/// What [`Store::open_request`] shows for a request: the request, the notification's title and
/// its source.
#[derive(Debug, Clone)]
pub(crate) struct OpenRequest {
    /// The request (its prompt, detail and options).
    pub(crate) request: super::decide::DecisionRequest,
    /// The notification's title.
    pub(crate) title: String,
    /// The notification's source (`hook:claude`, `consent`).
    pub(crate) source: String,
}

/// Opens a decision that is not a hook's (an agent's act held for a person's consent,
/// `trust::consent`) in `pane` and returns the future of its outcome, as [`wait_for_answer`].
pub(crate) fn wait_for_consent(
    store: Arc<Mutex<Store>>,
    pane: PaneId,
    kind: AgentKind,
    open: OpenRequest,
    wait: Duration,
) -> Result<impl Future<Output = DecisionOutcome> + Send + 'static, CommandError> {
    let id = DecisionId::new();
    let (route, rx) = DecisionRoute::new();
    store.lock().unwrap_or_else(|p| p.into_inner()).open_request(
        &pane,
        kind,
        None,
        open,
        id.clone(),
        route,
    )?;
    Ok(outcome_of(RouteGuard { store, pane, id, armed: true, loss: Loss::HookGone }, rx, wait))
}

/// The outcome of an open decision: its answer, a retraction, or a timeout after `wait`.
fn outcome_of(
    mut guard: RouteGuard,
    rx: tokio::sync::oneshot::Receiver<Resolution>,
    wait: Duration,
) -> impl Future<Output = DecisionOutcome> + Send + 'static {
    let id = guard.id.clone();
    let wait = wait.min(MAX_WAIT);
    async move {
        let (answer, message, reason) = match tokio::time::timeout(wait, rx).await {
            Ok(Ok(Resolution::Answered { answer, message })) => {
                guard.armed = false;
                (Some(answer), message, OutcomeReason::Answered)
            }
            Ok(Ok(Resolution::Retracted)) => {
                guard.armed = false;
                (None, None, OutcomeReason::Retracted)
            }
            // The route was dropped by the Store (the pane closed): nothing to mark.
            Ok(Err(_)) => (None, None, OutcomeReason::Lost),
            Err(_) => {
                guard.loss = Loss::TimedOut;
                (None, None, OutcomeReason::Timeout)
            }
        };
        drop(guard);
        DecisionOutcome { id, answer, message, reason }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use berth_engine::agents::AgentKind;
    use berth_engine::ids::PaneId;
    use berth_engine::model::{Attention, Lifecycle};
    use serde_json::json;

    use super::{wait_for_answer, WITHDRAWN_QUIET};
    use crate::agents::turns::LifecycleSource;
    use crate::commands::{Command, Reply, SpawnRequest, WorkspaceSelector};
    use crate::decisions::{DecisionAnswer, OutcomeReason};
    use crate::error::CommandError;
    use crate::events::EventBus;

    use crate::store::Store;

    pub(crate) fn store_with_pane() -> (Arc<Mutex<Store>>, PaneId, tempfile::TempDir) {
        let home = tempfile::tempdir().expect("a temp dir");
        let mut store = crate::store::test_store(home.path(), EventBus::default());
        let spawn = SpawnRequest { argv: vec!["sleep".into()], ..Default::default() };
        let Ok(Reply::Spawned { pane, .. }) =
            store.execute(Command::PaneSpawn { workspace: WorkspaceSelector::Active, spawn })
        else {
            panic!("no pane")
        };
        (Arc::new(Mutex::new(store)), pane, home)
    }

    /// A hook of `kind` asking `request()` in `pane`, waiting at most `wait`: its future.
    fn asking(
        store: &Arc<Mutex<Store>>,
        pane: &PaneId,
        kind: AgentKind,
        wait: Duration,
    ) -> impl std::future::Future<Output = crate::decisions::DecisionOutcome> + Send + 'static {
        wait_for_answer(store.clone(), pane.clone(), kind, request(), wait).expect("opens")
    }

    fn request() -> serde_json::Value {
        json!({"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}})
    }

    pub(crate) fn decide(store: &Arc<Mutex<Store>>, pane: &PaneId) -> Result<Reply, CommandError> {
        store.lock().unwrap().execute(Command::Decide {
            pane: pane.clone(),
            answer: DecisionAnswer::Allow,
            message: None,
            id: None,
        })
    }

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_future_once() {
        let (store, pane, _home) = store_with_pane();
        let wait = asking(&store, &pane, AgentKind::Claude, Duration::from_secs(30));
        let shown = store.lock().unwrap().pending_decision(&pane).expect("pending");
        assert!(shown.answerable);
        assert!(matches!(decide(&store, &pane), Ok(Reply::Decided { id, .. }) if id == shown.id));
        let outcome = wait.await;
        assert_eq!(
            (outcome.answer, outcome.reason),
            (Some(DecisionAnswer::Allow), OutcomeReason::Answered)
        );
        assert!(store.lock().unwrap().pending_decision(&pane).is_none());
        assert!(matches!(decide(&store, &pane), Err(CommandError::NoDecision(_))));
    }

    #[tokio::test]
    async fn a_dropped_or_timed_out_wait_grants_nothing() {
        let (store, pane, _home) = store_with_pane();
        let wait = asking(&store, &pane, AgentKind::Codex, Duration::from_secs(30));
        drop(wait);
        let shown = store.lock().unwrap().pending_decision(&pane).expect("kept as history");
        assert!(!shown.answerable);
        let Err(CommandError::NoDecision(message)) = decide(&store, &pane) else {
            panic!("answered")
        };
        assert!(message.contains("can no longer be answered"), "{message}");

        let wait = asking(&store, &pane, AgentKind::Codex, Duration::from_millis(10));
        let outcome = wait.await;
        assert_eq!((outcome.answer, outcome.reason), (None, OutcomeReason::Timeout));
        assert!(!store.lock().unwrap().pending_decision(&pane).unwrap().answerable);
    }

    #[tokio::test]
    async fn the_turns_next_event_takes_the_card_back() {
        let (store, pane, _home) = store_with_pane();
        let wait = asking(&store, &pane, AgentKind::Claude, Duration::from_secs(30));
        store
            .lock()
            .unwrap()
            .execute(Command::HookEvent {
                pane: pane.clone(),
                kind: AgentKind::Claude,
                payload: json!({"hook_event_name":"PostToolUse","tool_name":"Bash"}),
            })
            .unwrap();
        assert_eq!(wait.await.reason, OutcomeReason::Retracted);
        assert!(store.lock().unwrap().pending_decision(&pane).is_none());
        // A payload that is not a request, or a pane that is not there, opens nothing.
        let stop = json!({"hook_event_name":"Stop"});
        assert!(wait_for_answer(
            store.clone(),
            pane.clone(),
            AgentKind::Claude,
            stop,
            Duration::from_secs(1)
        )
        .is_err());
        assert!(matches!(
            wait_for_answer(
                store.clone(),
                PaneId::new(),
                AgentKind::Claude,
                request(),
                Duration::from_secs(1)
            ),
            Err(CommandError::NoSuchPane(_))
        ));
    }

    pub(crate) fn look(store: &Arc<Mutex<Store>>, pane: &PaneId) -> (Lifecycle, Attention, bool) {
        let locked = store.lock().unwrap();
        let p = locked.panes.get(pane).unwrap();
        let lifecycle = p.shared.meta().lifecycle;
        (lifecycle, p.attention, locked.pending_decision(pane).is_some())
    }

    fn hook(store: &Arc<Mutex<Store>>, pane: &PaneId, kind: AgentKind, payload: serde_json::Value) {
        store
            .lock()
            .unwrap()
            .execute(Command::HookEvent { pane: pane.clone(), kind, payload })
            .unwrap();
    }

    /// Regression (issue 26, defect 1): claude stops its hook when its own dialog is answered
    /// "no" or escaped, and sends nothing more; the pane stayed `blocked`, `needs_input`, with
    /// a card nobody could answer. Now the question is withdrawn at once and the turn ends
    /// (`idle`, learned from `interrupt`) once the pane stays quiet.
    #[tokio::test]
    async fn claudes_hook_gone_withdraws_the_question_and_a_quiet_pane_ends_the_turn() {
        let (store, pane, _home) = store_with_pane();
        hook(&store, &pane, AgentKind::Claude, json!({"hook_event_name":"UserPromptSubmit"}));
        let wait = asking(&store, &pane, AgentKind::Claude, Duration::from_secs(30));
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
        drop(wait);
        assert_eq!(look(&store, &pane), (Lifecycle::Working, Attention::None, false));
        let Err(CommandError::NoDecision(message)) = decide(&store, &pane) else {
            panic!("answered")
        };
        assert!(message.contains("settled in the agent's own dialog"), "{message}");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while look(&store, &pane).0 != Lifecycle::Idle {
            assert!(std::time::Instant::now() < deadline, "the turn never ended");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let locked = store.lock().unwrap();
        let turns = locked.panes.get(&pane).unwrap().shared.meta().turns.clone();
        assert_eq!(turns.source, Some(LifecycleSource::Interrupt));
        assert!(turns.started_at.is_none());
    }

    /// A "yes" in claude's own dialog: the hook goes, the tool runs, `PostToolUse` and `Stop`
    /// follow; the watch leaves the turn alone and the end is `done`, `unread` (it was `done`
    /// with `needs_input`: defect 2).
    #[tokio::test]
    async fn claudes_hook_gone_then_the_turn_goes_on_ends_done_and_unread() {
        let (store, pane, _home) = store_with_pane();
        hook(&store, &pane, AgentKind::Claude, json!({"hook_event_name":"UserPromptSubmit"}));
        let wait = asking(&store, &pane, AgentKind::Claude, Duration::from_secs(30));
        drop(wait);
        hook(&store, &pane, AgentKind::Claude, json!({"hook_event_name":"PostToolUse"}));
        assert_eq!(look(&store, &pane), (Lifecycle::Working, Attention::None, false));
        tokio::time::sleep(WITHDRAWN_QUIET + Duration::from_secs(1)).await;
        assert_eq!(look(&store, &pane).0, Lifecycle::Working, "the watch gave up on a hook");
        hook(&store, &pane, AgentKind::Claude, json!({"hook_event_name":"Stop"}));
        assert_eq!(look(&store, &pane), (Lifecycle::Done, Attention::Unread, false));
    }

    /// The hook's wait ran out (codex's 30 s): the agent's own prompt asks, so the pane stays
    /// `blocked`, `needs_input`, the card shown not answerable; answered there, the turn's end
    /// lowers it (defect 2: `needs_input` outlived the question). Codex's hook gone is no
    /// withdrawal: codex then asks in its own prompt.
    #[tokio::test]
    async fn a_timed_out_question_needs_input_until_the_turn_moves_on() {
        let (store, pane, _home) = store_with_pane();
        for (kind, stop) in [
            (AgentKind::Codex, json!({"hook_event_name":"Stop","last_assistant_message":"ok"})),
            (AgentKind::Claude, json!({"hook_event_name":"Stop"})),
            (AgentKind::Codex, json!({"hook_event_name":"Interrupt"})),
        ] {
            hook(&store, &pane, kind, json!({"hook_event_name":"UserPromptSubmit"}));
            let wait = wait_for_answer(
                store.clone(),
                pane.clone(),
                kind,
                request(),
                Duration::from_millis(10),
            )
            .expect("opens");
            assert_eq!(wait.await.reason, OutcomeReason::Timeout);
            assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
            let attention = if stop["hook_event_name"] == "Interrupt" {
                Attention::None
            } else {
                Attention::Unread
            };
            hook(&store, &pane, kind, stop);
            let (_, got, card) = look(&store, &pane);
            assert_eq!((got, card), (attention, false), "{kind:?}");
        }
        hook(&store, &pane, AgentKind::Codex, json!({"hook_event_name":"UserPromptSubmit"}));
        let wait = asking(&store, &pane, AgentKind::Codex, Duration::from_secs(30));
        drop(wait);
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
    }

    /// Codex's `PostToolUse` (issue 26): after Berth's wait ran out codex asked in its own
    /// dialog; answered "yes" there, the tool runs and its `PostToolUse` takes the dead card
    /// back, the pane `working`, no `needs_input` (they stayed until the turn's end). A
    /// `PostToolUse` while Berth still holds a question (another tool's: codex awaits that
    /// hook) leaves it open and answerable.
    #[tokio::test]
    async fn codexs_post_tool_use_settles_the_question_its_own_dialog_asked() {
        let (store, pane, _home) = store_with_pane();
        let ran = json!({"hook_event_name":"PostToolUse",
            "tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"ok"});
        hook(&store, &pane, AgentKind::Codex, json!({"hook_event_name":"UserPromptSubmit"}));
        let wait = asking(&store, &pane, AgentKind::Codex, Duration::from_millis(10));
        assert_eq!(wait.await.reason, OutcomeReason::Timeout);
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
        hook(&store, &pane, AgentKind::Codex, ran.clone());
        assert_eq!(look(&store, &pane), (Lifecycle::Working, Attention::None, false));

        let wait = asking(&store, &pane, AgentKind::Codex, Duration::from_secs(30));
        hook(&store, &pane, AgentKind::Codex, ran);
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
        decide(&store, &pane).expect("still answerable");
        assert_eq!(wait.await.reason, OutcomeReason::Answered);
    }

    /// Escape (or Ctrl-C) sent through Berth while the agent asks: the turn ends at once, the
    /// question goes with it and its hook gets no decision (defect 1: only a `working` turn
    /// was ended). Claude's `idle_prompt` also ends a turn and asks nothing.
    #[tokio::test]
    async fn escape_while_blocked_ends_the_turn_and_takes_the_question_back() {
        let (store, pane, _home) = store_with_pane();
        hook(&store, &pane, AgentKind::Claude, json!({"hook_event_name":"UserPromptSubmit"}));
        let wait = asking(&store, &pane, AgentKind::Claude, Duration::from_secs(30));
        store.lock().unwrap().end_interrupted_turn(&pane);
        assert_eq!(look(&store, &pane), (Lifecycle::Idle, Attention::None, false));
        let outcome = wait.await;
        assert_eq!((outcome.answer, outcome.reason), (None, OutcomeReason::Retracted));
        hook(&store, &pane, AgentKind::Claude, json!({"hook_event_name":"UserPromptSubmit"}));
        hook(
            &store,
            &pane,
            AgentKind::Claude,
            json!({"hook_event_name":"Notification","notification_type":"permission_prompt"}),
        );
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, false));
        hook(
            &store,
            &pane,
            AgentKind::Claude,
            json!({"hook_event_name":"Notification","notification_type":"idle_prompt"}),
        );
        assert_eq!(look(&store, &pane), (Lifecycle::Idle, Attention::None, false));
    }

    /// opencode answered in its own dialog (`permission.replied`, also what Escape there
    /// sends): the card is taken back, the pane goes on `working`, and it is no longer
    /// `needs_input` (defect 2).
    #[tokio::test]
    async fn opencodes_own_reply_takes_the_question_back_and_lowers_the_attention() {
        let (store, pane, _home) = store_with_pane();
        let asked = json!({"type":"permission.asked","properties":{"sessionID":"ses_1",
            "id":"per_1","permission":"bash","patterns":["ls"],"title":"ls"}});
        let wait = wait_for_answer(
            store.clone(),
            pane.clone(),
            AgentKind::Opencode,
            asked,
            Duration::from_secs(30),
        )
        .expect("opens");
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
        let replied = json!({"type":"permission.replied","properties":{"sessionID":"ses_1",
            "requestID":"per_1","reply":"reject"}});
        hook(&store, &pane, AgentKind::Opencode, replied.clone());
        assert_eq!(wait.await.reason, OutcomeReason::Retracted);
        assert_eq!(look(&store, &pane), (Lifecycle::Working, Attention::None, false));
        let idle = json!({"type":"session.idle","properties":{"sessionID":"ses_1"}});
        hook(&store, &pane, AgentKind::Opencode, idle);
        assert_eq!(look(&store, &pane), (Lifecycle::Done, Attention::Unread, false));
        // A reply landing after the turn's end changes nothing.
        hook(&store, &pane, AgentKind::Opencode, replied);
        assert_eq!(look(&store, &pane).0, Lifecycle::Done);
    }

    fn opencode_asks(
        store: &Arc<Mutex<Store>>,
        pane: &PaneId,
        id: &str,
    ) -> impl std::future::Future<Output = crate::decisions::DecisionOutcome> {
        let asked = json!({"type":"permission.asked","properties":{"sessionID":"ses_1",
            "id":id,"permission":"bash","patterns":["ls"],"metadata":{"command":"ls"}}});
        wait_for_answer(
            store.clone(),
            pane.clone(),
            AgentKind::Opencode,
            asked,
            Duration::from_secs(30),
        )
        .expect("opens")
    }

    /// Issue 26, defect 3: an answer handed to opencode's plugin is done only once the
    /// plugin says opencode took it (`berth.reply_delivered`); a hook that takes the answer
    /// itself (claude) has nothing to wait for.
    #[tokio::test]
    async fn an_opencode_answer_waits_for_the_plugins_word() {
        let (store, pane, _home) = store_with_pane();
        let wait = asking(&store, &pane, AgentKind::Claude, Duration::from_secs(30));
        let Ok(Reply::Decided { id, .. }) = decide(&store, &pane) else { panic!("not decided") };
        assert!(store.lock().unwrap().take_delivery(&pane, &id).is_none());
        wait.await;

        let wait = opencode_asks(&store, &pane, "per_1");
        let Ok(Reply::Decided { id, .. }) = decide(&store, &pane) else { panic!("not decided") };
        assert_eq!(wait.await.reason, OutcomeReason::Answered);
        let mut word = store.lock().unwrap().take_delivery(&pane, &id).expect("a delivery");
        assert!(word.try_recv().is_err(), "no word yet");
        // A word about another request is not this one's.
        let other =
            json!({"type":"berth.reply_delivered","properties":{"sessionID":"ses_1","id":"per_9"}});
        hook(&store, &pane, AgentKind::Opencode, other);
        assert!(word.try_recv().is_err());
        let took =
            json!({"type":"berth.reply_delivered","properties":{"sessionID":"ses_1","id":"per_1"}});
        hook(&store, &pane, AgentKind::Opencode, took);
        assert_eq!(word.await.unwrap(), Ok(()));
        assert_eq!(look(&store, &pane), (Lifecycle::Working, Attention::None, false));
    }

    /// Not taken (`berth.reply_failed`): `pane.decide` hears why, the pane is `blocked`,
    /// `needs_input`, and the plugin's new ask is answerable. No word in time: the card stays,
    /// not answerable, the pane `blocked`, `needs_input`.
    #[tokio::test]
    async fn an_opencode_answer_not_taken_leaves_the_question_open() {
        let (store, pane, _home) = store_with_pane();
        let wait = opencode_asks(&store, &pane, "per_1");
        let Ok(Reply::Decided { id, .. }) = decide(&store, &pane) else { panic!("not decided") };
        wait.await;
        let word = store.lock().unwrap().take_delivery(&pane, &id).expect("a delivery");
        let failed = json!({"type":"berth.reply_failed","properties":{"sessionID":"ses_1",
            "id":"per_1","error":"HTTP 404 not found"}});
        hook(&store, &pane, AgentKind::Opencode, failed);
        assert_eq!(word.await.unwrap(), Err("HTTP 404 not found".to_owned()));
        assert_eq!(look(&store, &pane).0, Lifecycle::Blocked);
        assert_eq!(look(&store, &pane).1, Attention::NeedsInput);
        let again = opencode_asks(&store, &pane, "per_1");
        assert!(store.lock().unwrap().pending_decision(&pane).unwrap().answerable);
        let Ok(Reply::Decided { id, .. }) = decide(&store, &pane) else { panic!("not decided") };
        again.await;

        // The plugin never says: the answer counts as not delivered.
        store.lock().unwrap().delivery_timed_out(&pane, &id);
        let shown = store.lock().unwrap().pending_decision(&pane).expect("the card stays");
        assert!(!shown.answerable);
        assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
    }
}
