//! Decisions: an agent's permission request held open while a person (or a script) answers.
//!
//! `berth hook AGENT` sends a permission request (`decision.request`) and keeps its connection;
//! the Store holds the request as its pane's pending decision with a [`DecisionRoute`] back to
//! the waiting connection. `pane.decide` (the CLI, the window, a desktop action) sends the
//! answer down that route, and the hook prints it in the agent's own format
//! ([`agent_answer`]). A route that is lost (the hook is gone or timed out, the pane ended, the
//! server restarted) grants nothing: the decision becomes not answerable and the agent's own
//! prompt takes over.
//!
//! It owns the per-agent tables (which payload is a request: [`request_of`]; what the hook
//! prints: [`agent_answer`]; how long it waits: [`default_wait`]), the Store's pending
//! decisions ([`Decisions`] and the `impl Store` block) and the waiting future with its
//! drop guard ([`wait_for_answer`]). It must not spell wire names (that is `protocol`'s) nor
//! write to a pane.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::agents::AgentKind;
use berth_engine::ids::{DecisionId, PaneId};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::decisions::{DecisionAnswer, DecisionOption, PendingDecision};
use crate::error::CommandError;
use crate::event::Event;
use crate::notifications::Incoming;
use crate::persist::stamp::now_ms;
use crate::store::{Internal, Store};

/// The most decisions one pane may hold open at once; a request past it is refused (the
/// hook then gives the agent no decision, and its own prompt takes over).
pub const MAX_OPEN_PER_PANE: usize = 8;

/// The longest a hook may wait for an answer.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);

/// The longest one-line prompt, in characters.
const PROMPT_CHARS: usize = 200;

/// The most lines and characters of a decision's detail.
const DETAIL_LINES: usize = 12;
const DETAIL_CHARS: usize = 2000;

/// What a permission request asks, read from an agent's hook payload.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRequest {
    /// The tool.
    pub tool: String,
    /// One line: tool and command or file.
    pub prompt: String,
    /// A few bounded lines.
    pub detail: String,
    /// Claude's first `permission_suggestions` entry, echoed back for "always allow".
    pub suggestion: Option<Value>,
    /// Whether "always allow" can be offered.
    pub always: bool,
}

impl DecisionRequest {
    /// The options to show, in order.
    pub fn options(&self) -> Vec<DecisionOption> {
        let mut options = vec![DecisionOption {
            answer: DecisionAnswer::Allow,
            label: DecisionAnswer::Allow.label().into(),
        }];
        if self.always {
            let label = match self.suggestion.as_ref().and_then(suggestion_text) {
                Some(rule) => bounded_line(&format!("Always allow {rule}"), 80),
                None => DecisionAnswer::Always.label().into(),
            };
            options.push(DecisionOption { answer: DecisionAnswer::Always, label });
        }
        options.push(DecisionOption {
            answer: DecisionAnswer::Deny,
            label: DecisionAnswer::Deny.label().into(),
        });
        options
    }
}

/// How long `berth hook AGENT` waits for an answer by default: under the hook timeout Berth
/// configures (claude 600 s, cursor 120 s), short for codex (it shows no prompt of its own
/// until the hook returns), long for opencode (its dialog stays live meanwhile).
pub fn default_wait(kind: AgentKind) -> Duration {
    Duration::from_secs(match kind {
        AgentKind::Claude => 570,
        AgentKind::Codex => 30,
        AgentKind::Cursor => 110,
        AgentKind::Opencode => 600,
        AgentKind::Generic | AgentKind::None => 30,
    })
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

/// Control characters out (newlines kept), at most `max` characters.
fn bounded(s: &str, max: usize) -> String {
    s.chars().filter(|c| !c.is_control() || *c == '\n').take(max).collect()
}

/// One line of at most `max` characters, an ellipsis where it was cut.
fn bounded_line(s: &str, max: usize) -> String {
    let line: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let line = line.trim();
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn bounded_detail(s: &str) -> String {
    let text = bounded(s, DETAIL_CHARS);
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.len() > DETAIL_LINES {
        lines.truncate(DETAIL_LINES);
        return format!("{}\n…", lines.join("\n"));
    }
    lines.join("\n")
}

/// The command or file a tool's input names, else its input as compact JSON.
fn subject(input: &Value) -> String {
    for key in ["command", "file_path", "path", "url", "pattern", "query"] {
        match input.get(key) {
            Some(Value::String(s)) => return s.clone(),
            Some(Value::Array(parts)) => {
                let words: Vec<String> =
                    parts.iter().map(|p| p.as_str().map_or(p.to_string(), str::to_owned)).collect();
                return words.join(" ");
            }
            _ => {}
        }
    }
    match input {
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn request(tool: &str, input: &Value, description: Option<&str>) -> DecisionRequest {
    let subject = subject(input);
    let prompt = if subject.is_empty() {
        bounded_line(tool, PROMPT_CHARS)
    } else {
        bounded_line(&format!("{tool}: {}", subject.lines().next().unwrap_or("")), PROMPT_CHARS)
    };
    let detail = match description.filter(|d| !d.is_empty()) {
        Some(d) => format!("{subject}\n{d}"),
        None => subject,
    };
    DecisionRequest {
        tool: bounded_line(tool, 64),
        prompt,
        detail: bounded_detail(&detail),
        suggestion: None,
        always: false,
    }
}

/// A short text for a claude permission suggestion (`Bash(cargo test:*)`, `acceptEdits`).
fn suggestion_text(s: &Value) -> Option<String> {
    if let Some(rules) = s.get("rules").and_then(Value::as_array) {
        let rules: Vec<String> = rules
            .iter()
            .map(|r| {
                let tool = text(r, "toolName").unwrap_or("");
                match text(r, "ruleContent") {
                    Some(content) => format!("{tool}({content})"),
                    None => tool.to_owned(),
                }
            })
            .collect();
        if !rules.is_empty() {
            return Some(rules.join(", "));
        }
    }
    text(s, "mode").map(str::to_owned)
}

/// The permission request in an agent's hook payload; `None` for every other event.
pub fn request_of(kind: AgentKind, payload: &Value) -> Option<DecisionRequest> {
    match kind {
        AgentKind::Claude | AgentKind::Codex => {
            if text(payload, "hook_event_name") != Some("PermissionRequest") {
                return None;
            }
            let tool = text(payload, "tool_name").unwrap_or("tool");
            let input = payload.get("tool_input").unwrap_or(&Value::Null);
            let description = input.get("description").and_then(Value::as_str);
            let mut req = request(tool, input, description);
            if kind == AgentKind::Claude {
                // Codex cannot take `updatedPermissions` (it fails closed): no "always" there.
                req.suggestion = payload
                    .get("permission_suggestions")
                    .and_then(Value::as_array)
                    .and_then(|s| s.first())
                    .cloned();
                req.always = req.suggestion.is_some();
            }
            Some(req)
        }
        AgentKind::Cursor => match text(payload, "hook_event_name")? {
            "beforeShellExecution" => Some(request("Shell", payload, None)),
            "beforeMCPExecution" => {
                let tool = text(payload, "tool_name").unwrap_or("MCP tool");
                let input = payload.get("tool_input").unwrap_or(&Value::Null);
                Some(request(tool, input, None))
            }
            _ => None,
        },
        AgentKind::Opencode => {
            let kind = text(payload, "type")?;
            if !matches!(kind, "permission.asked" | "permission.v2.asked" | "permission.updated") {
                return None;
            }
            let props =
                payload.get("properties").or_else(|| payload.get("data")).unwrap_or(&Value::Null);
            let tool = text(props, "permission").or_else(|| text(props, "type")).unwrap_or("tool");
            let patterns = props
                .get("patterns")
                .and_then(Value::as_array)
                .map(|p| p.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "))
                .filter(|p| !p.is_empty())
                .or_else(|| text(props, "pattern").map(str::to_owned));
            let metadata = props.get("metadata").unwrap_or(&Value::Null);
            let subject = text(props, "title")
                .map(str::to_owned)
                .or(patterns)
                .unwrap_or_else(|| subject(metadata));
            let mut req = request(tool, &json!({ "command": subject }), None);
            req.always = true;
            Some(req)
        }
        AgentKind::Generic | AgentKind::None => None,
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

/// What `berth hook` prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReply {
    /// Standard output, exactly (empty: no decision).
    pub stdout: String,
    /// The exit status.
    pub exit: u8,
}

fn line(value: Value) -> String {
    let mut text = value.to_string();
    text.push('\n');
    text
}

/// What the hook prints for `outcome` (`None`: no answer at all, e.g. the server could not be
/// reached), in the agent's own format. Every fallback grants nothing: claude and codex get no
/// decision (their own prompt takes over), cursor gets an explicit `ask` (it allows when a hook
/// prints nothing), opencode's plugin gets nothing and leaves opencode's dialog to the user.
pub fn agent_answer(
    kind: AgentKind,
    payload: &Value,
    answer: Option<DecisionAnswer>,
    message: Option<&str>,
) -> HookReply {
    let none = HookReply { stdout: String::new(), exit: 0 };
    let message = message.filter(|m| !m.is_empty());
    match kind {
        AgentKind::Claude | AgentKind::Codex => {
            let decision = match answer {
                None => return none,
                Some(DecisionAnswer::Allow) => json!({ "behavior": "allow" }),
                Some(DecisionAnswer::Always) => {
                    let suggestion = payload
                        .get("permission_suggestions")
                        .and_then(Value::as_array)
                        .and_then(|s| s.first());
                    match suggestion {
                        Some(s) if kind == AgentKind::Claude => {
                            json!({ "behavior": "allow", "updatedPermissions": [s] })
                        }
                        // Nothing to remember with: a plain allow, never more.
                        _ => json!({ "behavior": "allow" }),
                    }
                }
                Some(DecisionAnswer::Deny) => match message {
                    Some(m) => json!({ "behavior": "deny", "message": m }),
                    None => json!({ "behavior": "deny" }),
                },
            };
            HookReply {
                stdout: line(json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PermissionRequest",
                        "decision": decision,
                    }
                })),
                exit: 0,
            }
        }
        AgentKind::Cursor => {
            let value = match answer {
                None => json!({ "permission": "ask" }),
                Some(DecisionAnswer::Allow | DecisionAnswer::Always) => {
                    json!({ "permission": "allow" })
                }
                Some(DecisionAnswer::Deny) => match message {
                    Some(m) => {
                        json!({ "permission": "deny", "user_message": m, "agent_message": m })
                    }
                    None => json!({ "permission": "deny" }),
                },
            };
            HookReply { stdout: line(value), exit: 0 }
        }
        AgentKind::Opencode => {
            let reply = match answer {
                None => return none,
                Some(DecisionAnswer::Allow) => "once",
                Some(DecisionAnswer::Always) => "always",
                Some(DecisionAnswer::Deny) => "reject",
            };
            let value = match message {
                Some(m) => json!({ "reply": reply, "message": m }),
                None => json!({ "reply": reply }),
            };
            HookReply { stdout: line(value), exit: 0 }
        }
        AgentKind::Generic | AgentKind::None => none,
    }
}

/// What travels down a route: an answer, or the card taken back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Someone answered.
    Answered {
        /// The answer.
        answer: DecisionAnswer,
        /// Its message.
        message: Option<String>,
    },
    /// Retracted: the agent's turn moved on.
    Retracted,
}

/// The way back to a waiting hook: the sending half of its connection's wait. Shared so that
/// it can ride in an [`Internal`] op (clones are the same route).
#[derive(Clone, Default)]
pub struct DecisionRoute(Arc<Mutex<Option<oneshot::Sender<Resolution>>>>);

impl DecisionRoute {
    /// A route and the receiving end the waiting connection keeps.
    pub fn new() -> (DecisionRoute, oneshot::Receiver<Resolution>) {
        let (tx, rx) = oneshot::channel();
        (DecisionRoute(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Whether the waiting side is still there.
    pub fn is_alive(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|tx| !tx.is_closed())
    }

    /// Sends a resolution; false when the waiting side is gone (nothing was delivered).
    fn send(&self, resolution: Resolution) -> bool {
        let tx = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        tx.is_some_and(|tx| tx.send(resolution).is_ok())
    }
}

impl fmt::Debug for DecisionRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecisionRoute").field("alive", &self.is_alive()).finish()
    }
}

impl PartialEq for DecisionRoute {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// One open decision in the Store.
#[derive(Debug)]
struct OpenDecision {
    view: PendingDecision,
    route: DecisionRoute,
    /// The notification raised for it (closed once it is answered or gone).
    notification: Option<String>,
}

/// A pane's decisions: those waiting, oldest first, and the last one whose route was lost
/// (shown as not answerable until the pane's agent moves on).
#[derive(Debug, Default)]
struct PaneDecisions {
    open: VecDeque<OpenDecision>,
    lost: Option<PendingDecision>,
}

/// Every pane's decisions.
#[derive(Debug, Default)]
pub struct Decisions(BTreeMap<PaneId, PaneDecisions>);

impl Decisions {
    /// The decision a pane shows: its oldest open one, else the one lost last.
    pub fn current(&self, pane: &PaneId) -> Option<PendingDecision> {
        let decisions = self.0.get(pane)?;
        match decisions.open.front() {
            Some(open) => {
                let mut view = open.view.clone();
                view.answerable = open.route.is_alive();
                Some(view)
            }
            None => decisions.lost.clone(),
        }
    }

    /// Forgets a pane's decisions (it closed): their routes drop, so their hooks end with no
    /// decision.
    pub fn remove_pane(&mut self, pane: &PaneId) {
        self.0.remove(pane);
    }

    fn panes(&self) -> impl Iterator<Item = &PaneId> {
        self.0.keys()
    }
}

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
        let open = self.decisions.0.get(pane).map_or(0, |d| d.open.len());
        if open >= MAX_OPEN_PER_PANE {
            return Err(CommandError::Busy(format!(
                "pane {pane} already holds {open} permission requests"
            )));
        }
        let session = crate::agents::hooks::map_hook(kind, payload).session_id;
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
        if let Some(p) = self.panes.get(pane) {
            p.shared.set_lifecycle(Lifecycle::Blocked);
        }
        let mut incoming = Incoming::new(
            Some(pane.clone()),
            &format!("{} asks to run {}", agent_name(kind), request.tool),
            &request.prompt,
            &format!("hook:{}", kind.as_str()),
        );
        incoming.attention = Attention::NeedsInput;
        incoming.actions =
            view.options.iter().map(|o| (o.answer.as_str().to_owned(), o.label.clone())).collect();
        let notification = Some(self.add_notification(incoming));
        let decisions = self.decisions.0.entry(pane.clone()).or_default();
        decisions.lost = None;
        decisions.open.push_back(OpenDecision { view, route, notification });
        self.publish_decision(pane);
        tracing::info!(pane = %pane, decision = %id, agent = kind.as_str(), "permission request pending");
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
            let lost = decisions.and_then(|d| d.lost.clone());
            return Err(match lost {
                Some(lost) if id.is_none_or(|id| *id == lost.id) => lost_error(&lost.id),
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
        if !live || !front.route.is_alive() {
            self.lose_decision(pane, &current);
            return Err(lost_error(&current));
        }
        let Some(open) = self.decisions.0.get_mut(pane).and_then(|d| d.open.pop_front()) else {
            return Err(lost_error(&current));
        };
        if !open.route.send(Resolution::Answered { answer, message }) {
            // The hook went away between the check and the send: nothing was granted.
            let decisions = self.decisions.0.entry(pane.clone()).or_default();
            decisions.open.push_front(open);
            self.lose_decision(pane, &current);
            return Err(lost_error(&current));
        }
        tracing::info!(pane = %pane, decision = %current, answer = answer.as_str(), "decision answered");
        self.close_decision_notification(open.notification.as_deref());
        if let Some(p) = self.panes.get_mut(pane) {
            if p.attention == Attention::NeedsInput {
                p.attention = Attention::None;
            }
            p.shared.set_lifecycle(Lifecycle::Working);
        }
        self.publish_decision(pane);
        Ok(current)
    }

    /// The route of a decision is lost (its hook went away or timed out): it stays shown, not
    /// answerable, and grants nothing.
    pub(crate) fn lose_decision(&mut self, pane: &PaneId, id: &DecisionId) {
        let Some(decisions) = self.decisions.0.get_mut(pane) else { return };
        let Some(index) = decisions.open.iter().position(|o| &o.view.id == id) else { return };
        let Some(open) = decisions.open.remove(index) else { return };
        let mut view = open.view;
        view.answerable = false;
        decisions.lost = Some(view);
        tracing::info!(pane = %pane, decision = %id, "decision route lost; nothing granted");
        self.close_decision_notification(open.notification.as_deref());
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
        self.publish_decision(pane);
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

    fn publish_decision(&self, pane: &PaneId) {
        self.bus
            .publish(Event::Decision { pane: pane.clone(), decision: self.pending_decision(pane) });
        self.bus.publish(Event::PaneChanged { pane: pane.clone() });
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

/// Marks a decision's route lost when its waiting future is dropped unfinished (the client
/// went away) or ends without an answer (timeout).
struct RouteGuard {
    store: Arc<Mutex<Store>>,
    pane: PaneId,
    id: DecisionId,
    armed: bool,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let _ = store
            .execute(Internal::DecisionRouteLost { pane: self.pane.clone(), id: self.id.clone() });
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
    let mut guard = RouteGuard { store, pane, id: id.clone(), armed: true };
    let wait = wait.min(MAX_WAIT);
    Ok(async move {
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
            Err(_) => (None, None, OutcomeReason::Timeout),
        };
        drop(guard);
        DecisionOutcome { id, answer, message, reason }
    })
}

#[cfg(test)]
mod tests;
