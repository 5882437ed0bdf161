//! A small blocking client of the socket, used by the CLI and by tests.
//!
//! Owns connecting, framing requests, matching answers by id and skipping event lines. Callers
//! hand it a [`Command`] (or a task, git or connection request) and get its typed answer;
//! `protocol` does the encoding both ways.
//! [`Client::call`] sends a raw method and params, for tests of the wire itself.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use berth_engine::ids::PaneId;

use crate::agents::work::WaitUntil;
use crate::commands::{Command, Reply};
use crate::error::CommandError;
use crate::event::Event;
use crate::gitctx::request::{
    DiffFileParams, DiffFileReply, DiffFilesParams, DiffFilesReply, GitReply, GitRequest,
    WorktreeListParams, WorktreeListReply,
};
use crate::persist::task_record::TaskRecord;
use crate::protocol::{
    self, ConnectionMethod, Decoded, SaveReply, ScreenshotReply, SubmitReply, WaitReply,
};
use crate::tasks::reply::TaskReply;
use crate::tasks::request::{ListParams, TaskRequest};

/// How long a call waits for its answer.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What went wrong with a call.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No server answers on the socket.
    // The OS error is part of each message, and deliberately not a `source`: an error chain
    // (`{:#}`) would print it a second time.
    #[error("cannot connect to the Berth server at {path}: {error} (is `berth server` or the window running?)")]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// The OS error.
        error: io::Error,
    },
    /// The connection broke.
    #[error("connection to the Berth server failed: {0}")]
    Io(io::Error),
    /// The server answered with something that is not JSON-RPC.
    #[error("the server sent an answer that could not be read: {0}")]
    Protocol(String),
    /// The request could not be made (e.g. a path that is not UTF-8).
    #[error("{0}")]
    Local(CommandError),
    /// The server answered with an error.
    #[error("{message}")]
    Rpc {
        /// The JSON-RPC number.
        code: i64,
        /// The stable string code (`NO_SUCH_PANE` …).
        data_code: String,
        /// The human message.
        message: String,
    },
}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Io(e)
    }
}

impl ClientError {
    /// The stable string code of a server error, if this is one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Rpc { data_code, .. } => Some(data_code),
            Self::Local(e) => Some(e.code()),
            _ => None,
        }
    }
}

/// A connection to a Berth server.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Client {
    /// Connects to the socket at `path`.
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        Self::connect_with_timeout(path, CALL_TIMEOUT)
    }

    /// Connects with a limit on how long each call may wait (for hooks that must be quick).
    pub fn connect_with_timeout(path: &Path, timeout: Duration) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(path)
            .map_err(|error| ClientError::Connect { path: path.to_path_buf(), error })?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let writer = stream.try_clone()?;
        Ok(Client { reader: BufReader::new(stream), writer, next_id: 1 })
    }

    /// A second handle on the connection's socket: shutting it down ends a call blocked on
    /// this client at once (`berth mcp` gives up a cancelled request so).
    pub fn interrupter(&self) -> io::Result<UnixStream> {
        self.writer.try_clone()
    }

    /// Connects to the socket named by the environment.
    pub fn connect_default() -> Result<Client, ClientError> {
        Self::connect(&crate::paths::socket_path())
    }

    /// Executes a command on the server and returns its typed answer.
    pub fn execute(&mut self, cmd: Command) -> Result<Reply, ClientError> {
        let what = Decoded::Command(cmd);
        let result = self.request(&what)?;
        let Decoded::Command(cmd) = what else { unreachable!("built as a command above") };
        protocol::decode_reply(&cmd, result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Changes or lists the window's links to other servers (`window.servers`).
    pub fn window_servers(
        &mut self,
        op: crate::ui::ServersOp,
    ) -> Result<crate::ui::WindowServersReply, ClientError> {
        let result = self.request(&Decoded::Connection(ConnectionMethod::WindowServers(op)))?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Asks the server to save its snapshot now.
    pub fn save(&mut self) -> Result<SaveReply, ClientError> {
        let result = self.request(&Decoded::Connection(ConnectionMethod::SaveSnapshot))?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Asks the window to draw a tab (the active one when `None`) into a PNG at `path`.
    pub fn screenshot(
        &mut self,
        tab: Option<String>,
        path: PathBuf,
    ) -> Result<ScreenshotReply, ClientError> {
        let what = Decoded::Connection(ConnectionMethod::Screenshot { tab, path });
        let result = self.request(&what)?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Asks for the screens of `panes` (`screen.frames`): per pane, the rows that differ
    /// from the hashes given.
    pub fn screen_frames(
        &mut self,
        panes: Vec<crate::screen::PaneHave>,
    ) -> Result<crate::screen::FramesReply, ClientError> {
        let result = self.request(&Decoded::Connection(ConnectionMethod::ScreenFrames(panes)))?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Searches a pane's scrollback on the server (`pane.search`).
    pub fn search(
        &mut self,
        request: crate::pane_search::SearchRequest,
    ) -> Result<crate::pane_search::SearchReply, ClientError> {
        let what = Decoded::Connection(ConnectionMethod::PaneSearch(Box::new(request)));
        let result = self.request(&what)?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Tells the server a window attaches that draws `header_rows` above each pane.
    pub fn attach_window(&mut self, header_rows: u16) -> Result<(), ClientError> {
        let what = Decoded::Connection(ConnectionMethod::WindowAttach { header_rows });
        self.request(&what).map(|_| ())
    }

    /// Tells the server what an attached window shows (`window.view`), as the embedded window
    /// tells its Store; the server forgets it when this connection ends. Answers the number
    /// the server gave this connection (`window_id`; `None` from an older server): the
    /// `notification.desktop` events naming it are this window's to show.
    pub fn report_view(
        &mut self,
        view: crate::store::WindowView,
    ) -> Result<Option<u64>, ClientError> {
        let crate::store::WindowView { visible, focused_pane, window_focused } = view;
        let what = Decoded::Connection(ConnectionMethod::WindowView {
            visible,
            focused_pane,
            window_focused,
        });
        let result = self.request(&what)?;
        let reply: crate::screen_stream::WindowViewReply =
            serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))?;
        Ok(reply.window_id)
    }

    /// The user clicked a notification this window showed for the server
    /// (`notification.activate`): the server focuses its pane as for a click on its own.
    pub fn activate_notification(
        &mut self,
        id: berth_engine::ids::NotificationId,
        activation_token: Option<String>,
    ) -> Result<(), ClientError> {
        let what =
            Decoded::Connection(ConnectionMethod::NotificationActivate { id, activation_token });
        self.request(&what).map(|_| ())
    }

    /// Holds an agent's permission request open in its pane until it is answered, taken
    /// back or `wait` passes (`berth hook`). The connection's read timeout is raised to cover
    /// the wait.
    pub fn request_decision(
        &mut self,
        pane: berth_engine::ids::PaneId,
        kind: berth_engine::agents::AgentKind,
        payload: Value,
        wait: Duration,
    ) -> Result<crate::decisions::DecisionOutcome, ClientError> {
        let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let what =
            Decoded::Connection(ConnectionMethod::DecisionRequest { pane, kind, payload, wait_ms });
        self.reader.get_ref().set_read_timeout(Some(wait + Duration::from_secs(10)))?;
        let result = self.request(&what)?;
        let reply: protocol::DecisionOutcomeReply =
            serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))?;
        reply.to_outcome().map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Submits a prompt to a pane (`pane.submit`): pasted, then Enter, acknowledged or not.
    pub fn submit(
        &mut self,
        pane: PaneId,
        text: String,
        force: bool,
    ) -> Result<SubmitReply, ClientError> {
        let result =
            self.request(&Decoded::Connection(ConnectionMethod::Submit { pane, text, force }))?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Waits until a pane's lifecycle reaches `until` (`pane.wait`), giving up after `timeout`
    /// (`None`: as long as it takes); a timeout is the server's `TIMEOUT` error.
    pub fn wait_until(
        &mut self,
        pane: PaneId,
        until: WaitUntil,
        timeout: Option<Duration>,
    ) -> Result<WaitReply, ClientError> {
        let timeout_ms = timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        // The answer comes when the server's deadline passes at the latest.
        let read = timeout.map(|t| t.saturating_add(CALL_TIMEOUT));
        self.reader.get_ref().set_read_timeout(read)?;
        let what = Decoded::Connection(ConnectionMethod::Wait { pane, until, timeout_ms });
        let result = self.request(&what);
        self.reader.get_ref().set_read_timeout(Some(CALL_TIMEOUT))?;
        serde_json::from_value(result?).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// A `task.*` request; its typed answer (a task's record, a list, a revert, comments
    /// sent: the request says which). Starts, finishes and waits take as long as they take:
    /// `timeout` bounds the read (`None`: none).
    pub fn task(
        &mut self,
        request: TaskRequest,
        timeout: Option<Duration>,
    ) -> Result<TaskReply, ClientError> {
        self.reader.get_ref().set_read_timeout(timeout)?;
        let what = Decoded::Connection(ConnectionMethod::Task(Box::new(request)));
        let result = self.request(&what);
        self.reader.get_ref().set_read_timeout(Some(CALL_TIMEOUT))?;
        let Decoded::Connection(ConnectionMethod::Task(request)) = what else {
            unreachable!("built as a task request above")
        };
        protocol::decode_task_reply(&request, result?)
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// A `task.*` request that answers a task's record (all but `task.list` and
    /// `task.revert_turn`; comments sent answer the record after the send).
    pub fn task_record(
        &mut self,
        request: TaskRequest,
        timeout: Option<Duration>,
    ) -> Result<TaskRecord, ClientError> {
        match self.task(request, timeout)? {
            TaskReply::Task(record) => Ok(*record),
            TaskReply::CommentsSent(sent) => Ok(sent.task),
            other => Err(unexpected_shape("a task", other.shape())),
        }
    }

    /// `task.list`: the tasks (of one repo, when `params` names one).
    pub fn task_list(
        &mut self,
        params: ListParams,
        timeout: Option<Duration>,
    ) -> Result<Vec<TaskRecord>, ClientError> {
        match self.task(TaskRequest::List(params), timeout)? {
            TaskReply::List(list) => Ok(list.tasks),
            other => Err(unexpected_shape("a list of tasks", other.shape())),
        }
    }

    /// A git request (`diff.files`, `diff.file`, `workspace.refresh_git`, `worktree.list`);
    /// its typed answer. Git may take a while: `timeout` bounds the read.
    pub fn git(
        &mut self,
        request: GitRequest,
        timeout: Option<Duration>,
    ) -> Result<GitReply, ClientError> {
        self.reader.get_ref().set_read_timeout(timeout)?;
        let what = Decoded::Connection(ConnectionMethod::Git(Box::new(request)));
        let result = self.request(&what);
        self.reader.get_ref().set_read_timeout(Some(CALL_TIMEOUT))?;
        let Decoded::Connection(ConnectionMethod::Git(request)) = what else {
            unreachable!("built as a git request above")
        };
        protocol::decode_git_reply(&request, result?)
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// `diff.files`: a task's or workspace's changed files.
    pub fn diff_files(
        &mut self,
        params: DiffFilesParams,
        timeout: Option<Duration>,
    ) -> Result<DiffFilesReply, ClientError> {
        match self.git(GitRequest::DiffFiles(params), timeout)? {
            GitReply::DiffFiles(reply) => Ok(reply),
            _ => Err(unexpected_shape("the changed files", "another git answer")),
        }
    }

    /// `diff.file`: a page of one file's hunks.
    pub fn diff_file(
        &mut self,
        params: DiffFileParams,
        timeout: Option<Duration>,
    ) -> Result<DiffFileReply, ClientError> {
        match self.git(GitRequest::DiffFile(params), timeout)? {
            GitReply::DiffFile(reply) => Ok(reply),
            _ => Err(unexpected_shape("a page of hunks", "another git answer")),
        }
    }

    /// `worktree.list`: a repo's worktrees and who uses each.
    pub fn worktree_list(
        &mut self,
        params: WorktreeListParams,
        timeout: Option<Duration>,
    ) -> Result<WorktreeListReply, ClientError> {
        match self.git(GitRequest::WorktreeList(params), timeout)? {
            GitReply::WorktreeList(reply) => Ok(reply),
            _ => Err(unexpected_shape("a repo's worktrees", "another git answer")),
        }
    }

    /// Asks the windows to open a task's review view (`window.review`); the answer says how
    /// many windows were told. `CONFLICT` when no window is open.
    pub fn review(
        &mut self,
        task: berth_engine::ids::TaskId,
    ) -> Result<protocol::ReviewReply, ClientError> {
        let result = self.request(&Decoded::Connection(ConnectionMethod::Review { task }))?;
        serde_json::from_value(result).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Sends one request and waits for its JSON result.
    fn request(&mut self, what: &Decoded) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let line = protocol::encode_request(id, what).map_err(ClientError::Local)?;
        self.exchange(id, line)
    }

    /// Calls a method by name with raw params and waits for its raw result, skipping event
    /// notifications. For tests of the wire; everything else uses [`Client::execute`].
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        line.push('\n');
        self.exchange(id, line)
    }

    fn exchange(&mut self, id: u64, line: String) -> Result<Value, ClientError> {
        if let Err(e) = self.writer.write_all(line.as_bytes()) {
            // The server may have refused the connection with an answer before closing it.
            return match self.read_message() {
                Ok(message) if message.get("error").is_some() => decode_answer(message),
                _ => Err(e.into()),
            };
        }
        loop {
            let message = self.read_message()?;
            if message.get("id") == Some(&json!(id))
                || (message.get("id") == Some(&Value::Null) && message.get("error").is_some())
            {
                return decode_answer(message);
            }
        }
    }

    /// Reads the next line from the server (an answer or an event).
    pub fn read_message(&mut self) -> Result<Value, ClientError> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        serde_json::from_str(&line).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Subscribes to events; read them with [`Client::next_event`].
    pub fn subscribe(&mut self) -> Result<(), ClientError> {
        self.request(&Decoded::Connection(ConnectionMethod::Subscribe))?;
        Ok(())
    }

    /// Waits for the next event, typed; `timeout` `None` waits forever.
    pub fn next_typed_event(&mut self, timeout: Option<Duration>) -> Result<Event, ClientError> {
        let value = self.next_event(timeout)?;
        protocol::decode_event(&value).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Waits for the next event and returns its params as JSON; `timeout` `None` waits
    /// forever.
    pub fn next_event(&mut self, timeout: Option<Duration>) -> Result<Value, ClientError> {
        self.reader.get_ref().set_read_timeout(timeout)?;
        let result = loop {
            let message = self.read_message();
            match message {
                Ok(m) if m.get("method") == Some(&json!("event")) => break Ok(m["params"].clone()),
                Ok(_) => continue,
                Err(e) => break Err(e),
            }
        };
        self.reader.get_ref().set_read_timeout(Some(CALL_TIMEOUT))?;
        result
    }
}

/// An event line as the bus or the socket carries it, decoded to its typed [`Event`]; `None`
/// for a line that is not an event this build knows (a newer server's, or not JSON).
pub fn decode_event_line(line: &str) -> Option<Event> {
    let message: Value = serde_json::from_str(line).ok()?;
    if message.get("method") != Some(&json!("event")) {
        return None;
    }
    protocol::decode_event(&message["params"]).ok()
}

/// A typed accessor got another answer than its request's (a server that answers wrongly).
fn unexpected_shape(wanted: &str, got: &str) -> ClientError {
    ClientError::Protocol(format!("expected {wanted} in the answer, got {got}"))
}

fn decode_answer(message: Value) -> Result<Value, ClientError> {
    if let Some(err) = message.get("error") {
        return Err(ClientError::Rpc {
            code: err["code"].as_i64().unwrap_or(0),
            data_code: err["data"]["code"].as_str().unwrap_or("").to_owned(),
            message: err["message"].as_str().unwrap_or("unknown error").to_owned(),
        });
    }
    message
        .get("result")
        .cloned()
        .ok_or_else(|| ClientError::Protocol("answer without result".into()))
}
