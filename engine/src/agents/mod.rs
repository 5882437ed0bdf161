//! Agent adapters: which coding agent a pane runs, and how to resume its session.
//!
//! Adapters are data (one row per agent in [`ADAPTERS`], in `adapters.rs`), not code paths
//! scattered around: the program names that identify an agent, the official resume command built
//! from a session id, the flags that carry a session id on a command line, and how a prompt is
//! submitted to its TUI (`submit.rs` makes the bytes). `kind.rs` holds
//! the kinds and the check every session id passes before it becomes an argument. This module
//! does no I/O and never reads screen text; what agents' hooks mean is the server's
//! (its `agents` module).

mod adapters;
mod kind;
pub mod submit;

pub use adapters::{
    detect_kind, program_index, reports_interrupts, resume_argv, session_from_argv, submit_profile,
    Adapter, SubmitProfile, ADAPTERS,
};
pub use kind::{validate_session_id, AgentKind, SessionIdError, AGENT_CONFIG_ENV, MAX_SESSION_ID};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for kind in [
            AgentKind::Claude,
            AgentKind::Codex,
            AgentKind::Opencode,
            AgentKind::Cursor,
            AgentKind::Generic,
            AgentKind::None,
        ] {
            assert_eq!(AgentKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(AgentKind::parse("cursor-agent"), Some(AgentKind::Cursor));
        assert_eq!(AgentKind::parse("vim"), None);
    }
}
