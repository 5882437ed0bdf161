//! The decision tables: which payloads are permission requests, and what the hook prints for
//! every answer and fallback, per agent.

use serde_json::json;

use super::*;

fn claude_request() -> Value {
    json!({
        "session_id": "s-1",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": { "command": "cargo test --workspace", "description": "Run the tests" },
        "permission_suggestions": [
            { "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "cargo test:*" }],
              "behavior": "allow", "destination": "localSettings" }
        ]
    })
}

#[test]
fn permission_requests_are_read_per_agent() {
    let claude = request_of(AgentKind::Claude, &claude_request()).expect("a request");
    assert_eq!(claude.tool, "Bash");
    assert_eq!(claude.prompt, "Bash: cargo test --workspace");
    assert_eq!(claude.detail, "cargo test --workspace\nRun the tests");
    let answers: Vec<_> = claude.options().iter().map(|o| o.answer).collect();
    assert_eq!(answers, DecisionAnswer::ALL);
    assert_eq!(claude.options()[1].label, "Always allow Bash(cargo test:*)");

    let codex = json!({"session_id":"t","hook_event_name":"PermissionRequest","tool_name":"Bash",
        "tool_input":{"command":["rm","-rf","target"]},"permission_suggestions":[{"x":1}]});
    let codex = request_of(AgentKind::Codex, &codex).expect("a request");
    assert_eq!(codex.prompt, "Bash: rm -rf target");
    let answers: Vec<_> = codex.options().iter().map(|o| o.answer).collect();
    assert_eq!(answers, [DecisionAnswer::Allow, DecisionAnswer::Deny], "codex takes no always");

    let cursor = json!({"hook_event_name":"beforeShellExecution","command":"git push","cwd":"/x"});
    assert_eq!(request_of(AgentKind::Cursor, &cursor).unwrap().prompt, "Shell: git push");
    let mcp = json!({"hook_event_name":"beforeMCPExecution","tool_name":"fetch","tool_input":{"url":"https://x"}});
    assert_eq!(request_of(AgentKind::Cursor, &mcp).unwrap().prompt, "fetch: https://x");

    let opencode = json!({"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_1",
        "permission":"bash","patterns":["ls -la"],"metadata":{}}});
    let opencode = request_of(AgentKind::Opencode, &opencode).unwrap();
    assert_eq!(opencode.prompt, "bash: ls -la");
    assert_eq!(opencode.options().len(), 3);

    // Every other event is not a request.
    for (kind, payload) in [
        (AgentKind::Claude, json!({"hook_event_name":"Stop"})),
        (AgentKind::Codex, json!({"hook_event_name":"Stop"})),
        (AgentKind::Cursor, json!({"hook_event_name":"stop"})),
        (AgentKind::Opencode, json!({"type":"session.idle"})),
        (AgentKind::Generic, json!({"hook_event_name":"PermissionRequest"})),
        (AgentKind::Claude, json!("not an object")),
    ] {
        assert!(request_of(kind, &payload).is_none(), "{kind:?} {payload}");
    }
}

#[test]
fn long_and_hostile_requests_are_bounded() {
    let command = format!("echo \u{1b}[31m{}\n{}", "x".repeat(5000), "line\n".repeat(50));
    let payload = json!({"hook_event_name":"PermissionRequest","tool_name":"Bash",
        "tool_input":{"command": command}});
    let req = request_of(AgentKind::Claude, &payload).unwrap();
    assert!(req.prompt.chars().count() <= PROMPT_CHARS, "{}", req.prompt);
    assert!(!req.prompt.contains('\u{1b}') && !req.detail.contains('\u{1b}'));
    assert!(req.detail.lines().count() <= DETAIL_LINES + 1);
    assert!(req.detail.chars().count() <= DETAIL_CHARS + 2);
}

/// One row: agent, answer, message, the exact stdout.
#[test]
fn every_answer_prints_the_agents_own_format() {
    let claude = claude_request();
    let rows: Vec<(AgentKind, Option<DecisionAnswer>, Option<&str>, &str)> = vec![
        (
            AgentKind::Claude,
            Some(DecisionAnswer::Allow),
            None,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}"#,
        ),
        (
            AgentKind::Claude,
            Some(DecisionAnswer::Always),
            None,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedPermissions":[{"behavior":"allow","destination":"localSettings","rules":[{"ruleContent":"cargo test:*","toolName":"Bash"}],"type":"addRules"}]},"hookEventName":"PermissionRequest"}}"#,
        ),
        (
            AgentKind::Claude,
            Some(DecisionAnswer::Deny),
            Some("not now"),
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"not now"},"hookEventName":"PermissionRequest"}}"#,
        ),
        (AgentKind::Claude, None, None, ""),
        (
            AgentKind::Codex,
            Some(DecisionAnswer::Allow),
            None,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}"#,
        ),
        (
            AgentKind::Codex,
            Some(DecisionAnswer::Always),
            None,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}"#,
        ),
        (
            AgentKind::Codex,
            Some(DecisionAnswer::Deny),
            None,
            r#"{"hookSpecificOutput":{"decision":{"behavior":"deny"},"hookEventName":"PermissionRequest"}}"#,
        ),
        (AgentKind::Codex, None, None, ""),
        (AgentKind::Cursor, Some(DecisionAnswer::Allow), None, r#"{"permission":"allow"}"#),
        (
            AgentKind::Cursor,
            Some(DecisionAnswer::Deny),
            Some("no"),
            r#"{"agent_message":"no","permission":"deny","user_message":"no"}"#,
        ),
        (AgentKind::Cursor, None, None, r#"{"permission":"ask"}"#),
        (AgentKind::Opencode, Some(DecisionAnswer::Allow), None, r#"{"reply":"once"}"#),
        (AgentKind::Opencode, Some(DecisionAnswer::Always), None, r#"{"reply":"always"}"#),
        (
            AgentKind::Opencode,
            Some(DecisionAnswer::Deny),
            Some("no"),
            r#"{"message":"no","reply":"reject"}"#,
        ),
        (AgentKind::Opencode, None, None, ""),
    ];
    for (kind, answer, message, want) in rows {
        let reply = agent_answer(kind, &claude, answer, message);
        assert_eq!(reply.stdout.trim_end(), want, "{kind:?} {answer:?}");
        assert_eq!(reply.exit, 0);
        if !want.is_empty() {
            assert!(reply.stdout.ends_with('\n'));
        }
    }
    // Always without a suggestion is a plain allow, never more.
    let bare = json!({"hook_event_name":"PermissionRequest","tool_name":"Bash"});
    let reply = agent_answer(AgentKind::Claude, &bare, Some(DecisionAnswer::Always), None);
    assert!(!reply.stdout.contains("updatedPermissions"), "{}", reply.stdout);
}

#[test]
fn a_route_delivers_once_and_knows_when_its_waiter_is_gone() {
    let (route, mut rx) = DecisionRoute::new();
    assert!(route.is_alive());
    assert_eq!(route.clone(), route);
    assert!(route.send(Resolution::Retracted));
    assert_eq!(rx.try_recv().unwrap(), Resolution::Retracted);
    assert!(!route.send(Resolution::Retracted), "a route answers once");
    let (route, rx) = DecisionRoute::new();
    drop(rx);
    assert!(!route.is_alive());
    assert!(!route.send(Resolution::Answered { answer: DecisionAnswer::Allow, message: None }));
}
