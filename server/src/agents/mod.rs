//! Coding agents in panes, the server's side: what their hooks mean ([`hooks`]: one table per
//! agent, and the hook config `berth hooks` prints) and how what an agent reports about itself
//! changes its pane ([`reports`]: hook outcomes and session reports), and the permission
//! requests hooks hold open until someone answers ([`decide`]).
//!
//! The adapters themselves (which program is which agent, the official resume command) are data
//! in the engine's `agents` module. Nothing here reads screen text or starts a process.

pub mod decide;
pub mod hooks;
pub mod inject;
pub mod pending;
pub mod reports;
