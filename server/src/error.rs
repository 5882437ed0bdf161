//! The errors a command can end with, and their stable wire codes.
//!
//! Every error a client can see has a JSON-RPC number and a stable string code in
//! `error.data.code`; the strings never change once published.

use berth_engine::ids::IdError;
use berth_engine::layout::LayoutError;
use berth_engine::pty::PtyError;

/// JSON-RPC: the request line is not valid JSON (or not UTF-8).
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a request object, or the line is too long.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the server failed in a way that is not the client's fault.
pub const INTERNAL_ERROR: i64 = -32603;
/// Berth: the named object does not exist.
pub const NOT_FOUND: i64 = -32004;
/// Berth: the action is not possible in the object's current state.
pub const CONFLICT: i64 = -32009;
/// Berth: starting a process failed.
pub const SPAWN_FAILED: i64 = -32010;
/// Berth: the peer is not allowed to talk to this server.
pub const UNAUTHORIZED: i64 = -32020;
/// Berth: the server is at its limit (connections, queued input).
pub const BUSY: i64 = -32030;
/// Berth: the disk (or the user's quota) is full.
pub const DISK_FULL: i64 = -32040;
/// Berth: the file system refused access (permissions, or mounted read-only).
pub const PERMISSION_DENIED: i64 = -32041;
/// Berth: what the request waited for did not happen within its deadline.
pub const TIMED_OUT: i64 = -32050;

/// An error that ends a command, with what the client needs to act on it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// The request could not be decoded as JSON.
    #[error("parse error: {0}")]
    Parse(String),
    /// The request line was longer than the limit.
    #[error("request line longer than {0} bytes")]
    LineTooLong(usize),
    /// The JSON was not a valid JSON-RPC request.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// No such method.
    #[error("unknown method {0:?}")]
    UnknownMethod(String),
    /// The params did not fit the method.
    #[error("bad params: {0}")]
    BadParams(String),
    /// An id was malformed.
    #[error("invalid id: {0}")]
    InvalidId(#[from] IdError),
    /// No such workspace.
    #[error("no workspace {0}")]
    NoSuchWorkspace(String),
    /// No such tab.
    #[error("no tab {0}")]
    NoSuchTab(String),
    /// No such pane.
    #[error("no pane {0}")]
    NoSuchPane(String),
    /// No such task.
    #[error("no task {0} (berth task ls lists them)")]
    NoSuchTask(String),
    /// A layout or layout operation was refused.
    #[error("invalid layout: {0}")]
    InvalidLayout(String),
    /// The pane has no running process.
    #[error("pane {0} has no running process")]
    PaneNotLive(String),
    /// The action does not fit the object's current state.
    #[error("{0}")]
    Conflict(String),
    /// No decision can take this answer: none is pending, its id is another one, or its
    /// route to the agent is lost (the hook is gone, timed out, or the server restarted).
    #[error("{0}")]
    NoDecision(String),
    /// Starting the process failed.
    #[error("{0}")]
    SpawnFailed(String),
    /// The pane's input queue is full.
    #[error("{0}")]
    InputQueueFull(String),
    /// The pane's agent is in the middle of a turn (`pane.submit` without `force`).
    #[error("{0}")]
    MidTurn(String),
    /// What the request waited for did not happen in time (`pane.wait`).
    #[error("{0}")]
    Timeout(String),
    /// The peer runs as another user.
    #[error("connection refused: peer uid {peer} is not the server's uid {server}")]
    Unauthorized {
        /// The peer's uid.
        peer: u32,
        /// The server's uid.
        server: u32,
    },
    /// The caller may not do this (issue 27's trust rules: who may answer a permission request,
    /// type into a pane, speak for a pane); the message says where it may be done from.
    #[error("not permitted: {0}")]
    NotPermitted(String),
    /// The server is at a limit.
    #[error("server busy: {0}")]
    Busy(String),
    /// A write failed because the disk or quota is full.
    #[error("disk full: {0}")]
    DiskFull(String),
    /// A file could not be written for lack of permission or on a read-only file system.
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// Anything else; a bug or an OS failure.
    #[error("internal error: {0}")]
    Internal(String),
}

impl CommandError {
    /// The JSON-RPC error number.
    pub fn rpc_code(&self) -> i64 {
        match self {
            Self::Parse(_) => PARSE_ERROR,
            Self::LineTooLong(_) | Self::InvalidRequest(_) => INVALID_REQUEST,
            Self::UnknownMethod(_) => METHOD_NOT_FOUND,
            Self::BadParams(_) | Self::InvalidId(_) | Self::InvalidLayout(_) => INVALID_PARAMS,
            Self::NoSuchWorkspace(_)
            | Self::NoSuchTab(_)
            | Self::NoSuchPane(_)
            | Self::NoSuchTask(_) => NOT_FOUND,
            Self::PaneNotLive(_) | Self::Conflict(_) | Self::MidTurn(_) | Self::NoDecision(_) => {
                CONFLICT
            }
            Self::Timeout(_) => TIMED_OUT,
            Self::SpawnFailed(_) => SPAWN_FAILED,
            Self::Unauthorized { .. } | Self::NotPermitted(_) => UNAUTHORIZED,
            Self::InputQueueFull(_) | Self::Busy(_) => BUSY,
            Self::DiskFull(_) => DISK_FULL,
            Self::PermissionDenied(_) => PERMISSION_DENIED,
            Self::Internal(_) => INTERNAL_ERROR,
        }
    }

    /// The stable string code carried in `error.data.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Parse(_) => "PARSE_ERROR",
            Self::LineTooLong(_) => "LINE_TOO_LONG",
            Self::InvalidRequest(_) => "INVALID_REQUEST",
            Self::UnknownMethod(_) => "METHOD_NOT_FOUND",
            Self::BadParams(_) => "BAD_REQUEST",
            Self::InvalidId(_) => "INVALID_ID",
            Self::NoSuchWorkspace(_) => "NO_SUCH_WORKSPACE",
            Self::NoSuchTab(_) => "NO_SUCH_TAB",
            Self::NoSuchPane(_) => "NO_SUCH_PANE",
            Self::NoSuchTask(_) => "NO_SUCH_TASK",
            Self::InvalidLayout(_) => "INVALID_LAYOUT",
            Self::PaneNotLive(_) => "PANE_NOT_LIVE",
            Self::Conflict(_) => "CONFLICT",
            Self::NoDecision(_) => "NO_DECISION",
            Self::SpawnFailed(_) => "SPAWN_FAILED",
            Self::InputQueueFull(_) => "INPUT_QUEUE_FULL",
            Self::MidTurn(_) => "MID_TURN",
            Self::Timeout(_) => "TIMEOUT",
            Self::Unauthorized { .. } => "UNAUTHORIZED",
            Self::NotPermitted(_) => "NOT_PERMITTED",
            Self::Busy(_) => "BUSY",
            Self::DiskFull(_) => "DISK_FULL",
            Self::PermissionDenied(_) => "PERMISSION_DENIED",
            Self::Internal(_) => "INTERNAL",
        }
    }

    /// The error for a failed file operation: `DISK_FULL` for ENOSPC and EDQUOT,
    /// `PERMISSION_DENIED` for EACCES, EPERM and EROFS, `INTERNAL` otherwise.
    pub fn from_os_failure(errno: Option<i32>, message: String) -> Self {
        match errno {
            Some(libc::ENOSPC | libc::EDQUOT) => Self::DiskFull(message),
            Some(libc::EACCES | libc::EPERM | libc::EROFS) => Self::PermissionDenied(message),
            _ => Self::Internal(message),
        }
    }
}

impl From<LayoutError> for CommandError {
    fn from(e: LayoutError) -> Self {
        Self::InvalidLayout(e.to_string())
    }
}

impl From<PtyError> for CommandError {
    fn from(e: PtyError) -> Self {
        match e {
            PtyError::InputQueueFull { .. } => Self::InputQueueFull(e.to_string()),
            PtyError::Closed => Self::PaneNotLive(e.to_string()),
            PtyError::EmptyArgv | PtyError::BadCwd(_) => Self::BadParams(e.to_string()),
            PtyError::Spawn { .. } => Self::SpawnFailed(e.to_string()),
            PtyError::Resize(_) => Self::Internal(e.to_string()),
        }
    }
}
