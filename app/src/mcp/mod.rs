//! `berth mcp`: a Model Context Protocol server over stdio (the official SDK, `rmcp`), so an
//! agent can drive Berth: read panes, start tasks in worktrees, wait for their reports, look
//! at their diffs, submit prompts, merge or discard (issue 30).
//!
//! The agent starts this process as its own child, so the Berth server knows every call it
//! relays as the agent's (by the process ancestry, `server/src/trust/`): reads and starting
//! a task are allowed, acting on another agent opens a decision for the person, and nothing
//! here can answer a decision. `tools.rs` holds the tools; `link.rs` the calls to Berth.
//! It must not judge what a caller may do: the Berth server does.

mod link;
mod tools;

/// The longest `wait_task` waits (an agent's tool timeout must allow it).
#[cfg(test)]
pub use tools::WAIT_MAX_S;

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use rmcp::ServiceExt;

/// Serves MCP on stdin/stdout until the client closes it, relaying to the Berth server at
/// `socket`.
pub fn run(socket: &Path) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    runtime.block_on(async {
        let server = tools::BerthTools::new(link::Link::new(socket.to_path_buf()));
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP client did not initialize the session")?;
        service.waiting().await.context("the MCP session failed")?;
        Ok::<_, anyhow::Error>(())
    })?;
    // Standard input may still be read by a blocking thread: do not wait for it.
    runtime.shutdown_background();
    Ok(ExitCode::SUCCESS)
}
