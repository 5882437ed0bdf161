//! Agent hook payloads: what claude, codex, opencode and cursor-agent tell Berth, mapped to a
//! session id, a lifecycle, an attention level and perhaps a notification.
//!
//! The mapping is a table per agent over the payload's JSON; it never reads screen text. It
//! owns no state: the Store applies a [`HookOutcome`].

use berth_engine::agents::{validate_session_id, AgentKind};
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
    match text(p, "hook_event_name").as_deref() {
        Some("SessionStart") => out.lifecycle = Some(Lifecycle::Idle),
        Some("UserPromptSubmit" | "PreToolUse" | "PostToolUse") => {
            out.lifecycle = Some(Lifecycle::Working);
        }
        Some("Notification") => {
            out.lifecycle = Some(Lifecycle::Blocked);
            out.attention = Some(Attention::NeedsInput);
            let message = text(p, "message").unwrap_or_else(|| "Claude needs your input".into());
            out.notification = Some(("Claude needs your input".into(), bounded(&message, 2048)));
        }
        Some("Stop" | "SubagentStop") => {
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            out.notification = Some(("Claude is done".into(), String::new()));
        }
        Some("SessionEnd") => out.lifecycle = Some(Lifecycle::Idle),
        _ => {}
    }
    out
}

fn codex(p: &Value) -> HookOutcome {
    let id =
        text(p, "thread-id").or_else(|| text(p, "thread_id")).or_else(|| text(p, "session_id"));
    let mut out = HookOutcome { session_id: session(id), ..HookOutcome::default() };
    let event = text(p, "type").or_else(|| text(p, "hook_event_name"));
    match event.as_deref() {
        Some("agent-turn-complete" | "Stop") => {
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            let body = text(p, "last-assistant-message").unwrap_or_default();
            out.notification = Some(("Codex finished a turn".into(), bounded(&body, 2048)));
        }
        Some("UserPromptSubmit") => out.lifecycle = Some(Lifecycle::Working),
        Some("SessionStart") => out.lifecycle = Some(Lifecycle::Idle),
        _ => {}
    }
    out
}

fn opencode(p: &Value) -> HookOutcome {
    let props = p.get("properties").unwrap_or(&Value::Null);
    let id = text(props, "sessionID").or_else(|| text(p, "sessionID"));
    let mut out = HookOutcome { session_id: session(id), ..HookOutcome::default() };
    match text(p, "type").as_deref() {
        Some("session.idle") => {
            out.lifecycle = Some(Lifecycle::Done);
            out.attention = Some(Attention::Unread);
            out.notification = Some(("opencode is done".into(), String::new()));
        }
        Some("session.status") => {
            let status = props.get("status").and_then(|s| s.get("type")).and_then(Value::as_str);
            out.lifecycle = match status {
                Some("busy" | "retry") => Some(Lifecycle::Working),
                Some("idle") => Some(Lifecycle::Idle),
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
        Some("session.error") => {
            out.attention = Some(Attention::Error);
            out.notification = Some(("opencode hit an error".into(), String::new()));
        }
        _ => {}
    }
    out
}

fn cursor(p: &Value) -> HookOutcome {
    let mut out =
        HookOutcome { session_id: session(text(p, "conversation_id")), ..HookOutcome::default() };
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

/// The snippet a user adds to an agent's settings so that its hooks call `berth hook`.
pub fn print_config(kind: AgentKind) -> Option<&'static str> {
    Some(match kind {
        AgentKind::Claude => CLAUDE_CONFIG,
        AgentKind::Codex => CODEX_CONFIG,
        AgentKind::Opencode => OPENCODE_CONFIG,
        AgentKind::Cursor => CURSOR_CONFIG,
        AgentKind::Generic | AgentKind::None => return None,
    })
}

const CLAUDE_CONFIG: &str = r#"// ~/.claude/settings.json (merge into "hooks")
{
  "hooks": {
    "SessionStart":     [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "UserPromptSubmit": [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "Notification":     [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }],
    "Stop":             [{ "hooks": [{ "type": "command", "command": "berth hook claude" }] }]
  }
}"#;

const CODEX_CONFIG: &str = r#"# ~/.codex/config.toml
notify = ["berth", "hook", "codex"]"#;

const OPENCODE_CONFIG: &str = r#"// ~/.config/opencode/plugin/berth.js
export const Berth = async ({ $ }) => ({
  event: async ({ event }) => {
    if (!process.env.BERTH_PANE) return;
    await $`berth hook opencode ${JSON.stringify(event)}`.quiet().nothrow();
  },
});"#;

const CURSOR_CONFIG: &str = r#"// ~/.cursor/hooks.json
{
  "version": 1,
  "hooks": {
    "beforeSubmitPrompt": [{ "command": "berth hook cursor" }],
    "stop":               [{ "command": "berth hook cursor" }]
  }
}"#;

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

    #[test]
    fn every_agent_has_a_config_snippet() {
        for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode, AgentKind::Cursor] {
            let snippet = print_config(kind).unwrap_or_default();
            assert!(
                snippet.contains("berth hook") || snippet.contains(r#""berth", "hook""#),
                "{kind:?}"
            );
        }
        assert!(print_config(AgentKind::None).is_none());
    }
}
