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
//! prints: [`agent_answer`]; how long it waits: [`default_wait`]), the route back to a waiting
//! hook ([`DecisionRoute`]) and the data of the Store's pending decisions ([`Decisions`]); the
//! `impl Store` block and the waiting future are [`super::pending`]'s (so the Store can hold
//! these types without an import cycle). It must not import the Store or `protocol`, nor
//! write to a pane.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::agents::AgentKind;
use berth_engine::ids::PaneId;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::decisions::{DecisionAnswer, DecisionOption, PendingDecision};

pub use super::visible::visible;

/// The most decisions one pane may hold open at once; a request past it is refused (the
/// hook then gives the agent no decision, and its own prompt takes over).
pub const MAX_OPEN_PER_PANE: usize = 8;

/// The longest a hook may wait for an answer.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);

/// The longest one-line prompt, in characters (the command's first line; the prompt says how
/// many lines follow).
const PROMPT_CHARS: usize = 200;

/// The most lines and characters of a decision's detail: the whole command in all but absurd
/// cases; past them the detail says what was left out.
const DETAIL_LINES: usize = 400;
const DETAIL_CHARS: usize = 16_000;

/// The most lines and characters a desktop notification's body shows; a longer request's
/// notification says so and offers no answer (see [`notification_of`]).
const NOTE_LINES: usize = 6;
const NOTE_CHARS: usize = 600;

/// The longest answer label a notification shows as a button.
const NOTE_LABEL_CHARS: usize = 60;

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
            // Every rule the answer grants, never cut: "always" sends the whole suggestion.
            let label = match self.suggestion.as_ref().map(suggestion_text) {
                Some(rule) => format!("Always allow {}", visible(&rule)),
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
    default_wait_table(kind).min(longest_wait(kind))
}

/// The timeout Berth's own hook settings give an agent's permission hook: what
/// [`super::hooks::hook_events`] sets for the request's event (claude 600 s, cursor 120 s),
/// else the agent's own default (codex 600 s); none for opencode's plugin, which waits as long
/// as the hook does. Past it the agent decides without Berth (cursor then allows).
pub fn hook_timeout(kind: AgentKind) -> Option<Duration> {
    let event = match kind {
        AgentKind::Claude | AgentKind::Codex => "PermissionRequest",
        AgentKind::Cursor => "beforeShellExecution",
        AgentKind::Opencode | AgentKind::Generic | AgentKind::None => return None,
    };
    let set = super::hooks::hook_events(kind).iter().find(|(e, _)| *e == event)?.1;
    Some(Duration::from_secs(u64::from(set.unwrap_or(600))))
}

/// How much of an agent's hook timeout `berth hook` leaves unused: its payload read, its
/// connect, the 10 s it gives a stalled server past the wait, and a margin.
pub const HOOK_MARGIN: Duration = Duration::from_secs(16);

/// The longest `berth hook AGENT` may wait for an answer: under the agent's hook timeout by
/// [`HOOK_MARGIN`] (cursor: 104 s), else [`MAX_WAIT`].
pub fn longest_wait(kind: AgentKind) -> Duration {
    hook_timeout(kind).map_or(MAX_WAIT, |t| t.saturating_sub(HOOK_MARGIN)).min(MAX_WAIT)
}

fn default_wait_table(kind: AgentKind) -> Duration {
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

/// One line of at most `max` characters (made visible; a line feed shows as `⏎`), saying how
/// much was cut where it was.
pub(crate) fn bounded_line(s: &str, max: usize) -> String {
    let line = visible(s).trim().replace('\n', "⏎");
    let count = line.chars().count();
    if count <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The detail: every line of `s`, made visible, up to [`DETAIL_LINES`] and [`DETAIL_CHARS`];
/// past them a last line says how much was left out.
pub(crate) fn bounded_detail(s: &str) -> String {
    let text = visible(s);
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    let mut used = 0;
    for line in &lines {
        let n = line.chars().count();
        if kept.len() == DETAIL_LINES || used + n > DETAIL_CHARS {
            break;
        }
        used += n + 1;
        kept.push(*line);
    }
    let left = lines.len() - kept.len();
    if left > 0 {
        let chars: usize = lines[kept.len()..].iter().map(|l| l.chars().count() + 1).sum();
        kept.push("");
        return format!(
            "{}(cut here: {left} more lines, {chars} characters, that Berth does not show; \
             read the request in the agent's own prompt)",
            kept.join("\n")
        );
    }
    kept.join("\n")
}

/// What a desktop notification shows of a request and which answers it offers: the whole
/// command when it fits [`NOTE_LINES`] and [`NOTE_CHARS`], else its first lines and "(N more
/// lines, open Berth to see all)" with no answer at all (a person must not grant what they
/// cannot read); an "always" whose rules are too long for a button is left to the window.
pub fn notification_of(
    request: &DecisionRequest,
    options: &[DecisionOption],
) -> (String, Vec<DecisionOption>) {
    let lines: Vec<&str> = request.detail.lines().collect();
    let chars = request.detail.chars().count();
    if lines.len() <= NOTE_LINES && chars <= NOTE_CHARS {
        let offered = options
            .iter()
            .filter(|o| o.label.chars().count() <= NOTE_LABEL_CHARS)
            .cloned()
            .collect();
        let body =
            if request.detail.is_empty() { request.prompt.clone() } else { request.detail.clone() };
        return (body, offered);
    }
    let mut shown = Vec::new();
    let mut used = 0;
    for line in lines.iter().take(NOTE_LINES - 1) {
        let n = line.chars().count();
        if used + n > NOTE_CHARS {
            break;
        }
        used += n;
        shown.push(*line);
    }
    let more = lines.len() - shown.len();
    let tail = if more == 0 {
        "(the rest is too long here; open Berth to see all)".to_owned()
    } else {
        format!("({more} more lines, open Berth to see all)")
    };
    (format!("{}\n{tail}", shown.join("\n")), Vec::new())
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
    let more = subject.trim_end().lines().count().saturating_sub(1);
    let prompt = if subject.is_empty() {
        bounded_line(tool, PROMPT_CHARS)
    } else if more > 0 {
        // Never only the first line: a second one may be the part that matters.
        let first = subject.lines().next().unwrap_or("");
        let tail =
            if more == 1 { "(+1 more line)".to_owned() } else { format!("(+{more} more lines)") };
        format!("{} {tail}", bounded_line(&format!("{tool}: {first}"), PROMPT_CHARS))
    } else {
        bounded_line(&format!("{tool}: {subject}"), PROMPT_CHARS)
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

/// What a claude permission suggestion grants, whole: its rules (`Bash(cargo test:*),
/// Bash(curl:*)`), a mode (`acceptEdits`), directories, else the suggestion itself as JSON.
fn suggestion_text(s: &Value) -> String {
    if let Some(text) = suggestion_rules(s) {
        return text;
    }
    if let Some(dirs) = s.get("directories").and_then(Value::as_array) {
        let dirs: Vec<String> =
            dirs.iter().map(|d| d.as_str().map_or(d.to_string(), str::to_owned)).collect();
        return format!("access to {}", dirs.join(", "));
    }
    s.to_string()
}

/// The rules or the mode of a suggestion, when it names them.
fn suggestion_rules(s: &Value) -> Option<String> {
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
            // Exactly the command opencode will run (`metadata.command`), never a
            // reconstruction: `patterns` are globs opencode matches its rules with (for
            // `echo a > f && echo b` they read `echo a > f`, `echo b`).
            let metadata = props.get("metadata").unwrap_or(&Value::Null);
            let subject = match metadata.get("command") {
                Some(Value::String(command)) => command.clone(),
                _ => ["filepath", "filePath", "file_path", "path", "url"]
                    .iter()
                    .find_map(|k| text(metadata, k).map(str::to_owned))
                    .unwrap_or_else(|| {
                        format!("(opencode sent no command for this {tool} request)")
                    }),
            };
            let patterns = props
                .get("patterns")
                .and_then(Value::as_array)
                .map(|p| p.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
                .filter(|p| !p.is_empty())
                .or_else(|| text(props, "pattern").map(str::to_owned));
            let description = text(metadata, "description")
                .or_else(|| text(props, "title"))
                .map(str::to_owned)
                .or_else(|| patterns.map(|p| format!("patterns: {p}")));
            let mut req = request(tool, &json!({ "command": subject }), description.as_deref());
            req.always = true;
            Some(req)
        }
        AgentKind::Generic | AgentKind::None => None,
    }
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
    pub(crate) fn send(&self, resolution: Resolution) -> bool {
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
pub(crate) struct OpenDecision {
    pub(crate) view: PendingDecision,
    pub(crate) route: DecisionRoute,
    /// The notification raised for it (closed once it is answered or gone).
    pub(crate) notification: Option<String>,
    /// The agent's own id for the request, where its answer is confirmed later (opencode's
    /// permission id: its plugin reports whether opencode took the answer).
    pub(crate) agent_ref: Option<String>,
    /// What the pane goes back to once the question is settled, however it is: for a
    /// consent decision (Berth's own question about an act, `trust/consent.rs`), what the
    /// pane was doing when it asked (a shell script idle at its prompt stays idle, not
    /// `working` until a hook that never comes). `None`: an agent's permission request, after
    /// which the agent works on.
    pub(crate) resume: Option<berth_engine::model::Lifecycle>,
}

/// How long `pane.decide` waits for an agent whose answer is handed on by Berth's plugin
/// (opencode) to confirm that the agent took it; past this the answer counts as not
/// delivered.
pub const DELIVERY_WAIT: Duration = Duration::from_secs(15);

/// An answer handed to an agent's plugin (opencode), until the plugin says whether the agent
/// took it (`berth.reply_delivered` / `berth.reply_failed`).
#[derive(Debug)]
pub(crate) struct Delivering {
    /// The decision as it was shown.
    pub(crate) view: PendingDecision,
    /// The agent's id for the request (see [`OpenDecision::agent_ref`]).
    pub(crate) agent_ref: Option<String>,
    /// Tells the waiting `pane.decide` how it went: `Err` with the agent's reason.
    pub(crate) done: Option<oneshot::Sender<Result<(), String>>>,
    /// The receiving end, until `pane.decide`'s connection takes it.
    pub(crate) waiter: Option<oneshot::Receiver<Result<(), String>>>,
}

/// A pane's decisions: those waiting, oldest first, and the last one whose route was lost
/// (shown as not answerable until the pane's agent moves on).
#[derive(Debug, Default)]
pub(crate) struct PaneDecisions {
    pub(crate) open: VecDeque<OpenDecision>,
    pub(crate) lost: Option<PendingDecision>,
    /// The last decision the agent took back itself (claude stopped its hook: the question was
    /// settled in its own dialog), so `pane.decide` can say so; never shown.
    pub(crate) withdrawn: Option<berth_engine::ids::DecisionId>,
    /// Set when a withdrawal left the turn running with no word on how it goes on: the pane's
    /// hook-event count and the time then (ms), for the watch that ends the turn if the agent
    /// goes quiet (`pending::settle_after_withdrawal`).
    pub(crate) settle: Option<(u64, u64)>,
    /// Answers handed on to the agent's plugin and not yet confirmed (opencode), oldest first.
    pub(crate) delivering: Vec<Delivering>,
}

/// Every pane's decisions.
#[derive(Debug, Default)]
pub struct Decisions(pub(crate) BTreeMap<PaneId, PaneDecisions>);

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

    pub(crate) fn panes(&self) -> impl Iterator<Item = &PaneId> {
        self.0.keys()
    }
}

#[cfg(test)]
mod tests;
