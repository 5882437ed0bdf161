//! Coding agents in panes, the server's side: what their hooks mean ([`hooks`]: one table per
//! agent, and the hook config `berth hook --print-config` prints) and how what an agent reports
//! about itself changes its pane ([`reports`]: hook outcomes and session reports); a pane's turns
//! ([`turns`]); prompts submitted to an agent's TUI ([`submit`]) and waits for a lifecycle
//! ([`wait`]), the two requests answered later (the socket's deferred answers), and what those two
//! ask and answer ([`work`]); and the permission requests hooks hold open until someone answers
//! ([`decide`]: the tables; [`pending`]: the Store's side).
//!
//! The adapters themselves (which program is which agent, the official resume command) are data
//! in the engine's `agents` module. Nothing here reads screen text or starts a process.

pub mod decide;
pub mod hooks;
pub mod inject;
pub mod pending;
pub mod reports;
pub mod submit;
pub mod turns;
pub mod visible;
pub mod wait;
pub mod work;
