//! The MCP server's way to the Berth server: one socket connection per tool call, made with
//! the typed client, run on the blocking pool, and given up when the MCP request is
//! cancelled (its socket is shut down, so the Berth server drops what the call waited on:
//! a task wait, or a decision it holds for a person's consent).
//!
//! It decides nothing: every rule (who may start, submit, merge) is the Berth server's, which
//! knows this process by its ancestry (the agent that started it, in its pane), not by
//! anything this process says.

use std::net::Shutdown;
use std::path::PathBuf;

use berth_server::client::{Client, ClientError};
use rmcp::ErrorData;
use tokio_util::sync::CancellationToken;

/// Why a call to Berth did not answer.
#[derive(Debug)]
pub enum Failure {
    /// The MCP client cancelled the request.
    Cancelled,
    /// The Berth server refused or could not be reached; the words for the caller.
    Berth(ClientError),
    /// The call could not run here.
    Local(String),
}

impl Failure {
    /// Whether Berth refused the arguments themselves (a bad id, an unknown pane or task).
    pub fn is_bad_arguments(&self) -> bool {
        matches!(
            self,
            Failure::Berth(e) if matches!(
                e.code(),
                Some("BAD_REQUEST" | "INVALID_ID" | "NO_SUCH_PANE" | "NO_SUCH_TASK"
                    | "NO_SUCH_WORKSPACE" | "NO_SUCH_TAB")
            )
        )
    }

    /// The text an agent reads.
    pub fn message(&self) -> String {
        match self {
            Failure::Cancelled => "cancelled".into(),
            Failure::Berth(ClientError::Connect { path, error }) => format!(
                "the Berth server is not reachable at {} ({error}); is Berth running?",
                path.display()
            ),
            Failure::Berth(ClientError::Io(e)) => format!(
                "the connection to the Berth server broke ({e}): the server went away or was \
                 restarted; nothing more is known of the call"
            ),
            Failure::Berth(e @ ClientError::Rpc { data_code, .. }) => {
                format!("Berth refused ({data_code}): {e}")
            }
            Failure::Berth(e) => format!("Berth: {e}"),
            Failure::Local(why) => why.clone(),
        }
    }

    /// As the protocol's error (for bad arguments).
    pub fn into_error(self) -> ErrorData {
        ErrorData::invalid_params(self.message(), None)
    }
}

/// Where the Berth server answers.
#[derive(Debug, Clone)]
pub struct Link {
    socket: PathBuf,
}

impl Link {
    /// The server at `socket`.
    pub fn new(socket: PathBuf) -> Link {
        Link { socket }
    }

    /// Runs `f` on a new connection, on the blocking pool; cancelled with `ct`.
    pub async fn call<T: Send + 'static>(
        &self,
        ct: &CancellationToken,
        f: impl FnOnce(&mut Client) -> Result<T, ClientError> + Send + 'static,
    ) -> Result<T, Failure> {
        let socket = self.socket.clone();
        let mut client = tokio::task::spawn_blocking(move || Client::connect(&socket))
            .await
            .map_err(|e| Failure::Local(format!("the call did not run: {e}")))?
            .map_err(Failure::Berth)?;
        let stop = client
            .interrupter()
            .map_err(|e| Failure::Local(format!("cannot hold the connection: {e}")))?;
        let work = tokio::task::spawn_blocking(move || f(&mut client));
        tokio::select! {
            done = work => done
                .map_err(|e| Failure::Local(format!("the call did not run: {e}")))?
                .map_err(Failure::Berth),
            () = ct.cancelled() => {
                // The blocked read ends; the Berth server sees the connection close.
                let _ = stop.shutdown(Shutdown::Both);
                Err(Failure::Cancelled)
            }
        }
    }
}
