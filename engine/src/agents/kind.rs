//! The kinds of agent Berth knows, and the check every session id passes before it becomes
//! an argument.
//!
//! It must not read argv or run anything (the adapters do the former, never the latter).

/// The kinds of agent Berth knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentKind {
    /// Claude Code (`claude`).
    Claude,
    /// OpenAI Codex CLI (`codex`).
    Codex,
    /// opencode (`opencode`).
    Opencode,
    /// Cursor's agent CLI (`cursor-agent`).
    Cursor,
    /// Some other agent that reported itself without a known adapter.
    Generic,
    /// Not an agent (a shell or any other program).
    None,
}

impl AgentKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Opencode => "opencode",
            Self::Cursor => "cursor",
            Self::Generic => "generic",
            Self::None => "none",
        }
    }

    /// Parses a wire name (`cursor-agent` is accepted for `cursor`).
    pub fn parse(name: &str) -> Option<AgentKind> {
        Some(match name.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" => Self::Claude,
            "codex" => Self::Codex,
            "opencode" => Self::Opencode,
            "cursor" | "cursor-agent" => Self::Cursor,
            "generic" => Self::Generic,
            "none" => Self::None,
            _ => return None,
        })
    }
}

/// Environment variables that locate an agent's configuration; carried with a pane so a
/// resume finds the same sessions.
pub const AGENT_CONFIG_ENV: &[&str] = &["CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCODE_CONFIG_DIR"];

/// The longest session id accepted.
pub const MAX_SESSION_ID: usize = 256;

/// Why a session id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionIdError {
    /// Empty.
    #[error("the session id is empty")]
    Empty,
    /// Longer than [`MAX_SESSION_ID`].
    #[error("the session id is longer than {MAX_SESSION_ID} bytes")]
    TooLong,
    /// Would be read as a flag, or holds whitespace or control characters.
    #[error(
        "the session id {0:?} may only hold letters, digits and . _ : - (and not start with -)"
    )]
    BadChars(String),
}

/// Checks a session id before it becomes an argument of a resume command: an id starting with
/// `-` would be read as a flag, and whitespace or control characters have no business there.
pub fn validate_session_id(id: &str) -> Result<(), SessionIdError> {
    if id.is_empty() {
        return Err(SessionIdError::Empty);
    }
    if id.len() > MAX_SESSION_ID {
        return Err(SessionIdError::TooLong);
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
    if id.starts_with('-') || !id.chars().all(ok) {
        return Err(SessionIdError::BadChars(id.to_owned()));
    }
    Ok(())
}
