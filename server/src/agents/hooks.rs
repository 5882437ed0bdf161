//! Agent hook payloads: what claude, codex, opencode and cursor-agent tell Berth, mapped to a
//! session id, a lifecycle, an attention level and perhaps a notification.
//!
//! The mapping is a table per agent over the payload's JSON; it never reads screen text. It
//! owns no state: the Store applies a [`HookOutcome`].

use berth_engine::agents::{submit_profile, validate_session_id, AgentKind};
use berth_engine::model::{Attention, Lifecycle};
use serde_json::Value;

/// What one hook payload means for its pane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutcome {
    /// The agent's session id, when the payload carries a valid one.
    pub session_id: Option<String>,
    /// The new lifecycle, if the event says.
    pub lifecycle: Option<Lifecycle>,
    /// The new attention, if the event raises it.
    pub attention: Option<Attention>,
    /// A notification to raise: title and body.
    pub notification: Option<(String, String)>,
    /// The agent's turn moved on: a permission request still open in the pane was answered
    /// elsewhere (claude's own dialog) or is moot, so its card is taken back.
    pub retracts_decisions: bool,
    /// A tool ran (codex's `PostToolUse`): a question the agent asked in its own dialog once
    /// Berth's wait ran out (the card shown not answerable) was answered there, so that card
    /// goes and a `blocked` pane works again. A question Berth still holds is another tool's
    /// and stays: codex awaits its hook before it shows a dialog of its own.
    pub settles_lost_decision: bool,
    /// The event is claude's reminder of a permission dialog (`permission_prompt`): no second
    /// notification when Berth already holds the request as a decision.
    pub permission_prompt: bool,
    /// The agent's last message at a turn's end (`Stop`'s `last_assistant_message`, codex's
    /// `notify`), for `pane.wait` and the pane's last turn.
    pub last_message: Option<String>,
    /// The event acknowledges a submitted prompt: it is the adapter's `ack_event`
    /// (`UserPromptSubmit`, cursor's `beforeSubmitPrompt`…) and moves the pane to `working`.
    pub prompt_ack: bool,
    /// The prompt the agent acknowledged, as it received it (`UserPromptSubmit`'s `prompt`),
    /// when it says.
    pub acked_prompt: Option<String>,
    /// Berth's plugin says whether the agent took an answer it handed on (opencode): the
    /// agent's id for the request, and `Err` with why not.
    pub delivery: Option<(Option<String>, Result<(), String>)>,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key)?.as_str().map(str::to_owned)
}

fn session(id: Option<String>) -> Option<String> {
    id.filter(|id| validate_session_id(id).is_ok())
}

fn bounded(s: &str, max: usize) -> String {
    s.chars().filter(|c| !c.is_control() || *c == '\n').take(max).collect()
}

/// Maps an agent's hook payload. Unknown events still yield the session id they carry.
pub fn map_hook(kind: AgentKind, payload: &Value) -> HookOutcome {
    let mut out = map_event(kind, payload);
    let event = text(payload, "hook_event_name").or_else(|| text(payload, "type"));
    out.prompt_ack = out.lifecycle == Some(Lifecycle::Working)
        && event.is_some()
        && event.as_deref() == submit_profile(kind).ack_event;
    if out.prompt_ack {
        out.acked_prompt = text(payload, "prompt");
    }
    out
}

fn map_event(kind: AgentKind, payload: &Value) -> HookOutcome {
    match kind {
        AgentKind::Claude => claude(payload),
        AgentKind::Codex => codex(payload),
        AgentKind::Opencode => opencode(payload),
        AgentKind::Cursor => cursor(payload),
        AgentKind::Generic | AgentKind::None => HookOutcome {
            session_id: session(text(payload, "session_id")),
            ..HookOutcome::default()
        },
    }
}

fn claude(p: &Value) -> HookOutcome {
    let mut out =
        HookOutcome { session_id: session(text(p, "session_id")), ..HookOutcome::default() };
    let event = text(p, "hook_event_name");
    // Claude shows its own dialog beside Berth's card and fires no event when it is answered
    // there: the next event of the turn says the request is settled.
    out.retracts_decisions = matches!(
        event.as_deref(),
        Some(
            "PostToolUse"
                | "PostToolUseFailure"
                | "Stop"
                | "StopFailure"
                | "UserPromptSubmit"
                | "SessionEnd"
        )
    );
    match event.as_deref() {
        Some("SessionStart") => out.lifecycle = Some(Lifecycle::Idle),
        Some("UserPromptSubmit" | "PreToolUse" | "PostToolUse" | "PostToolUseFailure") => {
            out.lifecycle = Some(Lifecycle::Working);
        }
        Some("Notification") => claude_notification(&mut out, p),
        // `SubagentStop` ends a subagent's work, not the turn: it changes nothing.
        Some("Stop") => {
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            out.notification = Some(("Claude is done".into(), String::new()));
            out.last_message = text(p, "last_assistant_message").filter(|m| !m.is_empty());
        }
        Some("StopFailure") => turn_failed(&mut out, p, "Claude's turn failed"),
        Some("SessionEnd") => out.lifecycle = Some(Lifecycle::Idle),
        _ => {}
    }
    out
}

/// Claude's `Notification`, by its `notification_type`: a dialog that asks (a permission, an
/// elicitation; no type from older builds) blocks the turn and needs the person; `idle_prompt`
/// (claude waits at its prompt, about a minute after a turn, also after an interrupt that sent
/// no hook) ends any turn Berth still thought running and asks nothing; an elicitation's
/// answer lets the turn go on; the rest (`auth_success`, …) only notify.
fn claude_notification(out: &mut HookOutcome, p: &Value) {
    let kind = text(p, "notification_type");
    let message = text(p, "message");
    match kind.as_deref() {
        None
        | Some(
            "permission_prompt"
            | "elicitation_dialog"
            | "elicitation_url_dialog"
            | "agent_needs_input",
        ) => {
            out.permission_prompt = kind.as_deref() == Some("permission_prompt");
            out.lifecycle = Some(Lifecycle::Blocked);
            out.attention = Some(Attention::NeedsInput);
            let body = message.unwrap_or_else(|| "Claude needs your input".into());
            out.notification = Some(("Claude needs your input".into(), bounded(&body, 2048)));
        }
        Some("idle_prompt") => {
            out.lifecycle = Some(Lifecycle::Idle);
            out.retracts_decisions = true;
        }
        Some("elicitation_complete" | "elicitation_response") => {
            out.lifecycle = Some(Lifecycle::Working);
        }
        Some(_) => {
            let body = message.unwrap_or_default();
            out.notification = Some(("Claude".into(), bounded(&body, 2048)));
        }
    }
}

/// A turn that ended in an error (claude's `StopFailure`, e.g. `authentication_failed`): the
/// turn is over, the pane's attention is `error`, and the notification's body is the error as
/// the last message the user would have read.
fn turn_failed(out: &mut HookOutcome, p: &Value, title: &str) {
    out.lifecycle = Some(Lifecycle::Done);
    out.attention = Some(Attention::Error);
    let detail = |key: &str| match p.get(key)? {
        Value::String(s) => Some(s.clone()).filter(|s| !s.is_empty()),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    let error = detail("error");
    let message = detail("last_assistant_message").or_else(|| detail("error_details"));
    let body = match (error, message) {
        (Some(error), Some(message)) if !message.contains(&error) => format!("{error}: {message}"),
        (_, Some(message)) => message,
        (Some(error), None) => error,
        (None, None) => "the turn ended with an error".to_owned(),
    };
    out.notification = Some((title.to_owned(), bounded(&body, 2048)));
}

fn codex(p: &Value) -> HookOutcome {
    let id =
        text(p, "thread-id").or_else(|| text(p, "thread_id")).or_else(|| text(p, "session_id"));
    let mut out = HookOutcome { session_id: session(id), ..HookOutcome::default() };
    let event = text(p, "type").or_else(|| text(p, "hook_event_name"));
    out.retracts_decisions = matches!(
        event.as_deref(),
        Some("agent-turn-complete" | "Stop" | "UserPromptSubmit" | "Interrupt")
    );
    match event.as_deref() {
        Some("agent-turn-complete" | "Stop") => {
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            let body = text(p, "last-assistant-message")
                .or_else(|| text(p, "last_assistant_message"))
                .unwrap_or_default();
            out.notification = Some(("Codex finished a turn".into(), bounded(&body, 2048)));
            out.last_message = Some(body).filter(|m| !m.is_empty());
        }
        Some("UserPromptSubmit") => out.lifecycle = Some(Lifecycle::Working),
        // Says nothing of the lifecycle itself: another tool's question may still be open.
        Some("PostToolUse") => out.settles_lost_decision = true,
        Some("SessionStart") => out.lifecycle = Some(Lifecycle::Idle),
        // The user pressed Escape mid-turn: codex sends no `Stop` and no `notify` then.
        Some("Interrupt") => out.lifecycle = Some(Lifecycle::Idle),
        Some("PermissionRequest") => {
            out.lifecycle = Some(Lifecycle::Blocked);
            out.attention = Some(Attention::NeedsInput);
            let command = p
                .get("tool_input")
                .and_then(|i| i.get("command"))
                .and_then(Value::as_str)
                .or_else(|| p.get("tool_name").and_then(Value::as_str))
                .unwrap_or_default();
            // The command as it runs: controls and bidi overrides written out, not dropped.
            let shown = super::visible::visible(command);
            out.notification = Some(("Codex needs your permission".into(), bounded(&shown, 2048)));
        }
        _ => {}
    }
    out
}

/// opencode's id for a permission request in its event (`properties.id`; older builds
/// `requestID`, `permissionID`).
pub fn opencode_request_id(payload: &Value) -> Option<String> {
    let p = payload.get("properties").or_else(|| payload.get("data")).unwrap_or(payload);
    ["id", "requestID", "permissionID"]
        .iter()
        .find_map(|k| p.get(*k).and_then(Value::as_str))
        .map(|s| s.chars().take(256).collect())
}

fn opencode(p: &Value) -> HookOutcome {
    let props = p.get("properties").unwrap_or(&Value::Null);
    let id = text(props, "sessionID").or_else(|| text(p, "sessionID"));
    let mut out = HookOutcome { session_id: session(id), ..HookOutcome::default() };
    // `permission.replied`: answered in opencode's own dialog.
    out.retracts_decisions = matches!(
        text(p, "type").as_deref(),
        Some("session.idle" | "permission.replied" | "permission.v2.replied" | "session.error")
    );
    match text(p, "type").as_deref() {
        Some("session.idle") => {
            // Berth's plugin adds the turn's last assistant text (from `message.part.*`).
            out.last_message = text(props, "berth_last_message").map(|m| bounded(&m, 8192));
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            out.notification = Some(("opencode is done".into(), String::new()));
        }
        Some("session.status") => {
            let status = props.get("status").and_then(|s| s.get("type")).and_then(Value::as_str);
            out.lifecycle = match status {
                Some("busy" | "retry") => Some(Lifecycle::Working),
                Some("idle") => {
                    out.last_message = text(props, "berth_last_message").map(|m| bounded(&m, 8192));
                    Some(Lifecycle::Idle)
                }
                _ => None,
            };
        }
        Some("permission.asked" | "permission.updated") => {
            out.lifecycle = Some(Lifecycle::Blocked);
            out.attention = Some(Attention::NeedsInput);
            let title = text(props, "title").unwrap_or_default();
            out.notification =
                Some(("opencode needs your permission".into(), bounded(&title, 2048)));
        }
        // Berth's plugin handed opencode the answer given in Berth, and opencode took it.
        Some("berth.reply_delivered") => {
            out.delivery = Some((opencode_request_id(p), Ok(())));
        }
        // Berth's plugin could not hand opencode the answer given in Berth: the question is
        // still open in opencode's own dialog (the plugin asks Berth again).
        Some("berth.reply_failed") => {
            out.lifecycle = Some(Lifecycle::Blocked);
            out.attention = Some(Attention::NeedsInput);
            let why = text(props, "error")
                .map(|e| bounded(&e, 512))
                .unwrap_or_else(|| "opencode refused it".into());
            out.delivery = Some((opencode_request_id(p), Err(why)));
            out.notification = Some((
                "opencode did not take Berth's answer".into(),
                "answer again, in Berth or in opencode's own dialog".into(),
            ));
        }
        // An interrupted turn (two Escapes) ends with `MessageAbortedError`: the person
        // stopped it, nothing failed (`session.status` idle follows).
        Some("session.error") if opencode_aborted(props) => {}
        Some("session.error") => {
            out.attention = Some(Attention::Error);
            out.notification = Some(("opencode hit an error".into(), String::new()));
        }
        _ => {}
    }
    out
}

/// Whether opencode's `session.error` is the end of a turn the person interrupted.
fn opencode_aborted(props: &Value) -> bool {
    props.get("error").and_then(|e| e.get("name")).and_then(Value::as_str)
        == Some("MessageAbortedError")
}

fn cursor(p: &Value) -> HookOutcome {
    let mut out =
        HookOutcome { session_id: session(text(p, "conversation_id")), ..HookOutcome::default() };
    out.retracts_decisions =
        matches!(text(p, "hook_event_name").as_deref(), Some("stop" | "beforeSubmitPrompt"));
    match text(p, "hook_event_name").as_deref() {
        Some(
            "beforeSubmitPrompt" | "beforeShellExecution" | "beforeMCPExecution" | "afterFileEdit",
        ) => {
            out.lifecycle = Some(Lifecycle::Working);
        }
        Some("stop") => {
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            out.notification = Some(("Cursor agent is done".into(), String::new()));
        }
        _ => {}
    }
    out
}

/// Whether input sent to a pane interrupts an agent's turn: Escape or Ctrl-C alone (legacy
/// or kitty-keyboard encoded), or any input holding a Ctrl-C. Claude fires no hook when the
/// user interrupts a turn, and older codex builds none either, so Berth ends the turn itself.
pub fn is_interrupt(bytes: &[u8]) -> bool {
    matches!(bytes, b"\x1b" | b"\x1b[27u" | b"\x1b[99;5u") || bytes.contains(&0x03)
}

/// The settings file that makes an agent's hooks call `berth hook`: where it goes, its exact
/// content, and a note for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookConfig {
    /// Where the file lives (`~` is the user's home; the agent's own variable may move it).
    pub path: &'static str,
    /// The file's whole content: valid JSON, TOML or JavaScript, nothing else.
    pub content: &'static str,
    /// What the user must know (merging, trusting); never part of the file.
    pub note: &'static str,
}

/// The settings file for an agent's hooks (`berth hook --print-config AGENT` prints its
/// content on standard output and the rest on standard error).
pub fn hook_config(kind: AgentKind) -> Option<HookConfig> {
    Some(match kind {
        AgentKind::Claude => HookConfig {
            path: "~/.claude/settings.json",
            content: CLAUDE_CONFIG,
            note: "merge \"hooks\" into ~/.claude/settings.json ($CLAUDE_CONFIG_DIR moves it); \
                   a file with a JSON error is skipped whole by claude",
        },
        AgentKind::Codex => HookConfig {
            path: "~/.codex/config.toml",
            content: CODEX_CONFIG,
            note: "merge into ~/.codex/config.toml ($CODEX_HOME moves it); codex asks you to \
                   trust new or changed hooks at its next start (or in /hooks): until you do \
                   they do not run. SessionStart tells Berth the session id before a turn ends",
        },
        AgentKind::Opencode => HookConfig {
            path: "~/.config/opencode/plugin/berth.js",
            content: OPENCODE_CONFIG,
            note: "save as ~/.config/opencode/plugin/berth.js",
        },
        AgentKind::Cursor => HookConfig {
            path: "~/.cursor/hooks.json",
            content: CURSOR_CONFIG,
            note: "merge \"hooks\" into ~/.cursor/hooks.json",
        },
        AgentKind::Generic | AgentKind::None => return None,
    })
}

/// The hook events Berth subscribes an agent to, each with the hook timeout Berth sets (in
/// seconds; `None` keeps the agent's default). `berth hook install` merges these; the config
/// files [`hook_config`] prints hold the same events.
pub fn hook_events(kind: AgentKind) -> &'static [(&'static str, Option<u32>)] {
    match kind {
        AgentKind::Claude => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("Notification", None),
            ("Stop", None),
            ("StopFailure", None),
            ("PermissionRequest", Some(600)),
            ("PostToolUse", None),
            ("PostToolUseFailure", None),
        ],
        AgentKind::Codex => &[
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("Stop", None),
            ("PermissionRequest", None),
            ("PostToolUse", None),
            ("Interrupt", None),
        ],
        AgentKind::Cursor => &[
            ("beforeSubmitPrompt", None),
            ("stop", None),
            ("beforeShellExecution", Some(120)),
            ("beforeMCPExecution", Some(120)),
        ],
        AgentKind::Opencode | AgentKind::Generic | AgentKind::None => &[],
    }
}

/// One hook entry as claude and codex (`hooks.json`) write it: `{"hooks": [{"type":
/// "command", "command": …, "timeout"?}]}`; cursor's entries are the inner object alone.
pub fn hook_entry(kind: AgentKind, command: &str, timeout: Option<u32>) -> Value {
    let mut hook = serde_json::json!({ "command": command });
    if kind != AgentKind::Cursor {
        hook["type"] = Value::from("command");
    }
    if let Some(timeout) = timeout {
        hook["timeout"] = Value::from(timeout);
    }
    match kind {
        AgentKind::Cursor => hook,
        _ => serde_json::json!({ "hooks": [hook] }),
    }
}

/// The settings claude gets with `--settings` in a pane Berth starts: every hook of
/// [`hook_events`] calling `berth` (an absolute path to this binary) as `BERTH hook claude`.
pub fn claude_settings(berth: &str) -> String {
    let quoted = if berth.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        berth.to_owned()
    } else {
        format!("'{}'", berth.replace('\'', "'\\''"))
    };
    let command = format!("{quoted} hook claude");
    let hooks: serde_json::Map<String, Value> = hook_events(AgentKind::Claude)
        .iter()
        .map(|(event, timeout)| {
            (
                (*event).to_owned(),
                Value::Array(vec![hook_entry(AgentKind::Claude, &command, *timeout)]),
            )
        })
        .collect();
    serde_json::json!({ "hooks": hooks }).to_string()
}

/// The content of the settings file for an agent's hooks (see [`hook_config`]).
pub fn print_config(kind: AgentKind) -> Option<&'static str> {
    hook_config(kind).map(|c| c.content)
}

const CLAUDE_CONFIG: &str = r#"{
  "hooks": {
    "SessionStart":       [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "UserPromptSubmit":   [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "Notification":       [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "Stop":               [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "StopFailure":        [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "PermissionRequest":  [{ "hooks": [{ "type": "command", "command": "berth hook claude", "timeout": 600 }] }],
    "PostToolUse":        [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "PostToolUseFailure": [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }]
  }
}
"#;

/// Codex's hooks inline in `config.toml` (codex reads `[hooks]` there as it reads
/// `hooks.json`). `notify` is left out: it fires only after a successful turn, and the `Stop`
/// hook says the same with the session id.
const CODEX_CONFIG: &str = r#"[[hooks.SessionStart]]
hooks = [{ type = "command", command = "berth hook codex" }]

[[hooks.UserPromptSubmit]]
hooks = [{ type = "command", command = "berth hook codex" }]

[[hooks.Stop]]
hooks = [{ type = "command", command = "berth hook codex" }]

[[hooks.PermissionRequest]]
hooks = [{ type = "command", command = "berth hook codex" }]

[[hooks.PostToolUse]]
hooks = [{ type = "command", command = "berth hook codex" }]

[[hooks.Interrupt]]
hooks = [{ type = "command", command = "berth hook codex" }]
"#;

const OPENCODE_CONFIG: &str = r#"// Berth's opencode plugin (`berth hook install opencode` writes it): tells Berth what
// opencode does, and holds opencode's permission requests in Berth until they are answered
// there (`berth decide`, the window, a desktop action); the answer goes back through the
// plugin's own SDK client (inside the TUI nothing listens at `serverUrl`). opencode's own
// dialog stays live meanwhile: the first answer wins.
//
// Events reach Berth one at a time, in the order opencode emitted them (one `berth hook`
// process at a time, never several at once), and only those Berth reads.
import { spawn } from "node:child_process";

const berth = process.env.BERTH_BIN || "berth";
const ASKED = ["permission.asked", "permission.v2.asked", "permission.updated"];
const USED = new Set([
  ...ASKED,
  "permission.replied", "permission.v2.replied",
  "session.created", "session.status", "session.idle", "session.error",
]);

function run(args, input) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(berth, args, { stdio: ["pipe", "pipe", "ignore"] });
    } catch (_) {
      return resolve("");
    }
    child.on("error", () => resolve(""));
    child.stdout.on("data", (d) => { out += d; });
    child.on("close", () => resolve(out));
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

// Answers opencode's permission request through the plugin's SDK client: { ok: true } once
// opencode took it (a 2xx), else { ok: false, error, gone } (gone: opencode no longer holds
// the request).
async function reply(client, event, answer) {
  const p = event.properties || event.data || {};
  const id = p.id || p.requestID || p.permissionID;
  const session = p.sessionID;
  if (!id || !client) return { ok: false, error: "no request id or SDK client" };
  const why = (res, e) => {
    if (e) return { ok: false, error: String((e && e.message) || e).slice(0, 300) };
    const status = res && res.response ? res.response.status : 0;
    const detail = res && res.error ? JSON.stringify(res.error).slice(0, 300) : "";
    return { ok: false, gone: status === 404, error: `HTTP ${status} ${detail}`.trim() };
  };
  // The v2 endpoint takes a message with a rejection; reached through the client's own
  // in-process fetch where it has one.
  const raw = client._client;
  if (answer.message && raw && typeof raw.post === "function") {
    try {
      const res = await raw.post({
        url: "/permission/{requestID}/reply",
        path: { requestID: id },
        body: { reply: answer.reply, message: answer.message },
        headers: { "content-type": "application/json" },
      });
      if (res && res.response && res.response.ok) return { ok: true };
    } catch (_) {}
  }
  try {
    const res = await client.postSessionIdPermissionsPermissionId({
      path: { id: session, permissionID: id },
      body: { response: answer.reply },
    });
    return res && res.response && res.response.ok ? { ok: true } : why(res);
  } catch (e) {
    return why(null, e);
  }
}

// The text of each session's last assistant message, from the `message.*` events the plugin
// reads here (Berth is sent none of them): it goes to Berth with the turn's end.
function lastText() {
  const roles = new Map();
  const parts = new Map();
  const last = new Map();
  const bound = (map) => { if (map.size > 256) map.delete(map.keys().next().value); };
  const note = (session, message, part, text) => {
    parts.set(part, text);
    bound(parts);
    if (roles.get(message) === "assistant" && text) last.set(session, text.slice(-8192));
  };
  return {
    see(event) {
      const p = event.properties || {};
      if (event.type === "message.updated" && p.info) {
        // A new prompt (a user message seen first; opencode updates one again at the turn's
        // end): what the agent says now is this turn's.
        if (p.info.role === "user" && !roles.has(p.info.id)) last.delete(p.info.sessionID);
        roles.set(p.info.id, p.info.role);
        bound(roles);
      } else if (event.type === "message.part.updated" && p.part && p.part.type === "text") {
        const part = p.part;
        if (!part.synthetic) note(part.sessionID, part.messageID, part.id, String(part.text || ""));
      } else if (event.type === "message.part.delta" && p.field === "text" && parts.has(p.partID)) {
        note(p.sessionID, p.messageID, p.partID, parts.get(p.partID) + String(p.delta || ""));
      }
    },
    last(session, forget) {
      const text = last.get(session);
      if (forget) last.delete(session);
      return text;
    },
  };
}

export const Berth = async ({ client }) => {
  let queue = Promise.resolve();
  // In order: each event waits for the one before it to reach Berth.
  const send = (payload) => {
    const sent = queue.then(() => run(["hook", "opencode"], payload));
    queue = sent.catch(() => {});
    return sent;
  };
  const said = lastText();
  // Holds opencode's question in Berth; once Berth answers, hands the answer to opencode and
  // tells Berth whether opencode took it (`berth decide` waits for that word). Not taken,
  // the question is still open: it is asked in Berth again (unless opencode no longer holds
  // it).
  const ask = (event, tries) => {
    const payload = JSON.stringify(event);
    const p = event.properties || event.data || {};
    const ref = { sessionID: p.sessionID, id: p.id || p.requestID || p.permissionID };
    // The question opens after the events before it; its answer is waited for off the
    // queue (opencode goes on, and shows its dialog, meanwhile).
    const asked = queue.then(() => run(["hook", "opencode"], payload));
    asked.then(async (out) => {
      let answer;
      try { answer = JSON.parse(out); } catch (_) { return; }
      if (!answer || !answer.reply) return;
      const result = await reply(client, event, answer);
      if (result.ok) {
        send(JSON.stringify({ type: "berth.reply_delivered", properties: ref }));
        return;
      }
      await send(JSON.stringify({ type: "berth.reply_failed", properties: { ...ref, error: result.error } }));
      if (!result.gone && tries < 3) ask(event, tries + 1);
    });
  };
  // Berth learns here that the pane's opencode has its plugin (the events it reads come only
  // with a prompt).
  if (process.env.BERTH_PANE) send(JSON.stringify({ type: "berth.plugin.loaded" }));
  return {
    event: async ({ event }) => {
      if (!process.env.BERTH_PANE || !event) return;
      if (event.type.startsWith("message.")) {
        said.see(event);
        return;
      }
      if (!USED.has(event.type)) return;
      if (ASKED.includes(event.type)) return ask(event, 0);
      // The turn's end (`session.status` idle, then `session.idle`) carries its last text.
      const p = event.properties || {};
      const ends = event.type === "session.idle" ||
        (event.type === "session.status" && p.status && p.status.type === "idle");
      if (ends) {
        const text = said.last(p.sessionID, event.type === "session.idle");
        if (text) event = { ...event, properties: { ...p, berth_last_message: text } };
      }
      await send(JSON.stringify(event));
    },
  };
};
"#;

const CURSOR_CONFIG: &str = r#"{
  "version": 1,
  "hooks": {
    "beforeSubmitPrompt":   [{ "command": "berth hook cursor" }],
    "stop":                 [{ "command": "berth hook cursor" }],
    "beforeShellExecution": [{ "command": "berth hook cursor", "timeout": 120 }],
    "beforeMCPExecution":   [{ "command": "berth hook cursor", "timeout": 120 }]
  }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One row: agent, payload, expected (session, lifecycle, attention, notification title).
    type Row = (
        AgentKind,
        Value,
        Option<&'static str>,
        Option<Lifecycle>,
        Option<Attention>,
        Option<&'static str>,
    );

    #[test]
    fn payloads_map_to_outcomes() {
        let rows: Vec<Row> = vec![
            (
                AgentKind::Claude,
                json!({"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}),
                Some("s-1"),
                Some(Lifecycle::Idle),
                None,
                None,
            ),
            (
                AgentKind::Claude,
                json!({"session_id":"s-2","hook_event_name":"SessionStart","source":"clear"}),
                Some("s-2"),
                Some(Lifecycle::Idle),
                None,
                None,
            ),
            (
                AgentKind::Claude,
                json!({"session_id":"s-1","hook_event_name":"UserPromptSubmit","prompt":"hi"}),
                Some("s-1"),
                Some(Lifecycle::Working),
                None,
                None,
            ),
            (
                AgentKind::Claude,
                json!({"session_id":"s-1","hook_event_name":"Notification","message":"Claude needs your permission to use Bash"}),
                Some("s-1"),
                Some(Lifecycle::Blocked),
                Some(Attention::NeedsInput),
                Some("Claude needs your input"),
            ),
            (
                AgentKind::Claude,
                json!({"session_id":"s-1","hook_event_name":"Stop"}),
                Some("s-1"),
                Some(Lifecycle::Done),
                Some(Attention::Unread),
                Some("Claude is done"),
            ),
            (
                AgentKind::Claude,
                json!({"session_id":"-rf","hook_event_name":"Stop"}),
                None,
                Some(Lifecycle::Done),
                Some(Attention::Unread),
                Some("Claude is done"),
            ),
            (AgentKind::Claude, json!({"hook_event_name":"Whatever"}), None, None, None, None),
            (
                AgentKind::Codex,
                json!({"type":"agent-turn-complete","thread-id":"th-9","turn-id":"1","last-assistant-message":"All tests pass"}),
                Some("th-9"),
                Some(Lifecycle::Done),
                Some(Attention::Unread),
                Some("Codex finished a turn"),
            ),
            (
                AgentKind::Codex,
                json!({"type":"other","thread-id":"th-9"}),
                Some("th-9"),
                None,
                None,
                None,
            ),
            (
                AgentKind::Opencode,
                json!({"type":"session.idle","properties":{"sessionID":"ses_1"}}),
                Some("ses_1"),
                Some(Lifecycle::Done),
                Some(Attention::Unread),
                Some("opencode is done"),
            ),
            (
                AgentKind::Opencode,
                json!({"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}),
                Some("ses_1"),
                Some(Lifecycle::Working),
                None,
                None,
            ),
            (
                AgentKind::Opencode,
                json!({"type":"permission.asked","properties":{"sessionID":"ses_1","title":"run ls"}}),
                Some("ses_1"),
                Some(Lifecycle::Blocked),
                Some(Attention::NeedsInput),
                Some("opencode needs your permission"),
            ),
            // Issue 26: an interrupt (two Escapes) is not an error; a real one is.
            (
                AgentKind::Opencode,
                json!({"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}}),
                Some("ses_1"),
                None,
                None,
                None,
            ),
            (
                AgentKind::Opencode,
                json!({"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"boom"}}}}),
                Some("ses_1"),
                None,
                Some(Attention::Error),
                Some("opencode hit an error"),
            ),
            (
                AgentKind::Cursor,
                json!({"conversation_id":"c-1","generation_id":"g","hook_event_name":"beforeSubmitPrompt","workspace_roots":["/x"]}),
                Some("c-1"),
                Some(Lifecycle::Working),
                None,
                None,
            ),
            (
                AgentKind::Cursor,
                json!({"conversation_id":"c-1","hook_event_name":"stop"}),
                Some("c-1"),
                Some(Lifecycle::Done),
                Some(Attention::Unread),
                Some("Cursor agent is done"),
            ),
            (AgentKind::Generic, json!({"session_id":"g-1"}), Some("g-1"), None, None, None),
            (AgentKind::Claude, json!("not an object"), None, None, None, None),
        ];
        for (kind, payload, session, lifecycle, attention, title) in rows {
            let out = map_hook(kind, &payload);
            assert_eq!(out.session_id.as_deref(), session, "{kind:?} {payload}");
            assert_eq!(out.lifecycle, lifecycle, "{kind:?} {payload}");
            assert_eq!(out.attention, attention, "{kind:?} {payload}");
            assert_eq!(
                out.notification.as_ref().map(|n| n.0.as_str()),
                title,
                "{kind:?} {payload}"
            );
        }
    }

    /// Regression (issue #20, defect 1): claude's `StopFailure` left the pane `working`, and
    /// codex's `Interrupt` was ignored.
    #[test]
    fn failed_and_interrupted_turns_end_the_turn() {
        let out = map_hook(
            AgentKind::Claude,
            &json!({"session_id":"s-1","hook_event_name":"StopFailure","error":"authentication_failed","error_details":"Invalid API key · Please run /login"}),
        );
        assert_eq!(out.session_id.as_deref(), Some("s-1"));
        assert_eq!(out.lifecycle, Some(Lifecycle::Done));
        assert_eq!(out.attention, Some(Attention::Error));
        let (title, body) = out.notification.unwrap();
        assert_eq!(title, "Claude's turn failed");
        assert_eq!(body, "authentication_failed: Invalid API key · Please run /login");
        let out = map_hook(
            AgentKind::Claude,
            &json!({"hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: rate_limit exceeded"}),
        );
        assert_eq!(out.notification.unwrap().1, "API Error: rate_limit exceeded");
        let out = map_hook(AgentKind::Claude, &json!({"hook_event_name":"StopFailure"}));
        assert_eq!(out.attention, Some(Attention::Error));
        let out = map_hook(
            AgentKind::Codex,
            &json!({"session_id":"th-1","hook_event_name":"Interrupt","turn_id":"t"}),
        );
        assert_eq!(out.session_id.as_deref(), Some("th-1"));
        assert_eq!(out.lifecycle, Some(Lifecycle::Idle));
        let out = map_hook(
            AgentKind::Codex,
            &json!({"session_id":"th-1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf target"}}),
        );
        assert_eq!(out.lifecycle, Some(Lifecycle::Blocked));
        assert_eq!(out.attention, Some(Attention::NeedsInput));
        assert_eq!(out.notification.unwrap().1, "rm -rf target");
    }

    /// Codex's `Stop` hook (printed by `--print-config codex` since issue #20) names the last
    /// message in snake case, `notify` in kebab case; both make the notification's body.
    #[test]
    fn codex_stop_hook_carries_the_last_message() {
        let out = map_hook(
            AgentKind::Codex,
            &json!({"session_id":"th-1","hook_event_name":"Stop","last_assistant_message":"hi"}),
        );
        assert_eq!(out.lifecycle, Some(Lifecycle::Done));
        assert_eq!(out.notification.unwrap().1, "hi");
    }

    /// Which events acknowledge a submitted prompt (the adapter's `ack_event` moving the pane
    /// to `working`) and which carry the turn's last message.
    #[test]
    fn prompt_acknowledgements_and_last_messages() {
        let rows = [
            (
                AgentKind::Claude,
                json!({"hook_event_name":"UserPromptSubmit","prompt":"x"}),
                true,
                None,
            ),
            (AgentKind::Claude, json!({"hook_event_name":"PreToolUse"}), false, None),
            (
                AgentKind::Claude,
                json!({"hook_event_name":"Stop","last_assistant_message":"m"}),
                false,
                Some("m"),
            ),
            (
                AgentKind::Claude,
                json!({"hook_event_name":"Stop","last_assistant_message":""}),
                false,
                None,
            ),
            (AgentKind::Codex, json!({"hook_event_name":"UserPromptSubmit"}), true, None),
            (
                AgentKind::Codex,
                json!({"type":"agent-turn-complete","last-assistant-message":"n"}),
                false,
                Some("n"),
            ),
            (AgentKind::Cursor, json!({"hook_event_name":"beforeSubmitPrompt"}), true, None),
            (AgentKind::Cursor, json!({"hook_event_name":"beforeShellExecution"}), false, None),
            (
                AgentKind::Opencode,
                json!({"type":"session.status","properties":{"status":{"type":"busy"}}}),
                true,
                None,
            ),
            (
                AgentKind::Opencode,
                json!({"type":"session.status","properties":{"status":{"type":"idle"}}}),
                false,
                None,
            ),
            (AgentKind::Generic, json!({"hook_event_name":"UserPromptSubmit"}), false, None),
        ];
        for (kind, payload, ack, message) in rows {
            let out = map_hook(kind, &payload);
            assert_eq!(out.prompt_ack, ack, "{kind:?} {payload}");
            assert_eq!(out.last_message.as_deref(), message, "{kind:?} {payload}");
        }
        // A subagent's end is not the turn's (regression: it made the pane `done` mid-turn).
        let out = map_hook(AgentKind::Claude, &json!({"hook_event_name":"SubagentStop"}));
        assert_eq!((out.lifecycle, out.notification), (None, None));
    }

    /// Regression (issue #20, defect 6): claude's snippet opened with a `//` comment, so saved
    /// as `settings.json` claude skipped the whole file. Every config is the file's exact
    /// content now, subscribed to the events Berth maps.
    #[test]
    fn every_hook_config_is_exactly_a_valid_file() {
        let claude: Value = serde_json::from_str(print_config(AgentKind::Claude).unwrap())
            .expect("claude's settings.json is JSON");
        for event in [
            "SessionStart",
            "UserPromptSubmit",
            "Notification",
            "Stop",
            "StopFailure",
            "PermissionRequest",
            "PostToolUse",
            "PostToolUseFailure",
        ] {
            assert_eq!(
                claude["hooks"][event][0]["hooks"][0]["command"], "berth hook claude",
                "{event}"
            );
        }
        let codex: toml::Table = print_config(AgentKind::Codex).unwrap().parse().expect("TOML");
        for event in ["SessionStart", "UserPromptSubmit", "Stop", "PermissionRequest", "Interrupt"]
        {
            assert_eq!(
                codex["hooks"][event][0]["hooks"][0]["command"].as_str(),
                Some("berth hook codex"),
                "{event}"
            );
        }
        let cursor: Value = serde_json::from_str(print_config(AgentKind::Cursor).unwrap())
            .expect("cursor's hooks.json is JSON");
        assert_eq!(cursor["hooks"]["stop"][0]["command"], "berth hook cursor");
        let opencode = print_config(AgentKind::Opencode).unwrap();
        assert!(opencode.contains("export const Berth = async"), "{opencode}");
        assert!(opencode.contains("permission.asked"), "{opencode}");
        for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode, AgentKind::Cursor] {
            let config = hook_config(kind).unwrap();
            assert!(config.content.ends_with('\n') && !config.note.is_empty(), "{kind:?}");
        }
        assert!(print_config(AgentKind::None).is_none());
        for (event, timeout) in hook_events(AgentKind::Claude) {
            let entry = &claude["hooks"][event][0];
            assert_eq!(
                entry,
                &hook_entry(AgentKind::Claude, "berth hook claude", *timeout),
                "{event}"
            );
        }
        for (event, timeout) in hook_events(AgentKind::Cursor) {
            let entry = &cursor["hooks"][event][0];
            assert_eq!(
                entry,
                &hook_entry(AgentKind::Cursor, "berth hook cursor", *timeout),
                "{event}"
            );
        }
        let codex_events: Vec<&str> =
            codex["hooks"].as_table().unwrap().keys().map(String::as_str).collect();
        let mut table: Vec<&str> = hook_events(AgentKind::Codex).iter().map(|e| e.0).collect();
        table.sort_unstable();
        assert_eq!(codex_events, table);
    }

    #[test]
    fn claude_settings_call_this_binary_for_every_event() {
        let settings: Value =
            serde_json::from_str(&claude_settings("/opt/my berth/berth")).unwrap();
        for (event, _) in hook_events(AgentKind::Claude) {
            assert_eq!(
                settings["hooks"][event][0]["hooks"][0]["command"],
                "'/opt/my berth/berth' hook claude",
                "{event}"
            );
        }
        assert_eq!(settings["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"], 600);
    }
}
