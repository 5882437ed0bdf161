//! The wire protocol: JSON-RPC 2.0, one object per line, and its versioned DTOs.
//!
//! Owns decoding request lines into [`Command`]s and encoding results, errors and event
//! notifications. Wire types are their own structs so the Store's types can change without
//! breaking clients; fields may be added, never renamed.

use std::path::{Path, PathBuf};

use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellSize, FocusDir, Side};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::commands::{Command, ReadSpec, SpawnRequest, WorkspaceSelector};
use crate::error::CommandError;

mod dto;
mod event;
mod reply;

pub use dto::*;
pub use event::{decode_event, encode_event, event_value};
pub use reply::{
    decode_git_reply, decode_reply, decode_task_reply, encode_reply, DecisionOutcomeReply,
    ReviewReply, SaveReply, ScreenshotReply, SubmitReply, SubscribeReply, WaitReply,
};

/// The longest request line accepted, in bytes (newline excluded).
pub const MAX_LINE: usize = 1 << 20;

/// A decoded request: its id (echoed back) and what it asks for.
#[derive(Debug)]
pub struct Request {
    /// The JSON-RPC id; `None` for a notification (which gets no answer).
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// The params, `null` if absent.
    pub params: Value,
}

#[derive(Deserialize)]
struct RawRequest {
    jsonrpc: Option<String>,
    #[serde(default)]
    id: Option<Value>,
    method: Option<Value>,
    #[serde(default)]
    params: Value,
}

/// Decodes one request line. On failure, returns the id (if one could be read) with the error.
pub fn decode_request(line: &[u8]) -> Result<Request, (Option<Value>, CommandError)> {
    let text = std::str::from_utf8(line)
        .map_err(|e| (None, CommandError::Parse(format!("request is not UTF-8: {e}"))))?;
    let value: Value =
        serde_json::from_str(text).map_err(|e| (None, CommandError::Parse(e.to_string())))?;
    let raw: RawRequest = serde_json::from_value(value).map_err(|e| {
        (None, CommandError::InvalidRequest(format!("not a JSON-RPC request object: {e}")))
    })?;
    let id = raw.id;
    if let Some(Value::Number(n)) = &id {
        if !n.is_i64() && !n.is_u64() && n.as_f64().is_some_and(|f| f.fract() == 0.0) {
            // Beyond 64 bits it could only be echoed as a float (`1e20`), not as the client sent
            // it; refuse it rather than answer under another id.
            return Err((
                None,
                CommandError::InvalidRequest(format!(
                    "\"id\" {n} is too large: use a string or an integer of at most 64 bits"
                )),
            ));
        }
    }
    if raw.jsonrpc.as_deref() != Some("2.0") {
        return Err((id, CommandError::InvalidRequest("\"jsonrpc\" must be \"2.0\"".into())));
    }
    let method = match raw.method {
        Some(Value::String(m)) => m,
        _ => return Err((id, CommandError::InvalidRequest("\"method\" must be a string".into()))),
    };
    if !matches!(raw.params, Value::Null | Value::Object(_)) {
        return Err((id, CommandError::BadParams("params must be an object".into())));
    }
    Ok(Request { id, method, params: raw.params })
}

/// Encodes a successful answer as one line (with the newline).
pub fn encode_result(id: &Value, result: Value) -> String {
    let mut line = json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string();
    line.push('\n');
    line
}

/// Encodes a success answer whose result is JSON text already (a big frame, serialised
/// straight to text without a `Value` tree in between) as one line (with the newline).
pub fn encode_result_json(id: &Value, result: &str) -> String {
    let mut line = String::with_capacity(result.len() + 48);
    line.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    line.push_str(&id.to_string());
    line.push_str(",\"result\":");
    line.push_str(result);
    line.push_str("}\n");
    line
}

/// Encodes an error answer as one line (with the newline).
pub fn encode_error(id: Option<&Value>, err: &CommandError) -> String {
    let mut line = json!({
        "jsonrpc": "2.0",
        "id": id.cloned().unwrap_or(Value::Null),
        "error": { "code": err.rpc_code(), "message": err.to_string(), "data": { "code": err.code() } },
    })
    .to_string();
    line.push('\n');
    line
}

// ---- params ----

fn params<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, CommandError> {
    let value = if value.is_null() { json!({}) } else { value };
    serde_json::from_value(value).map_err(|e| CommandError::BadParams(e.to_string()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize)]
struct WorkspaceCreateParams {
    name: Option<String>,
    cwd: Option<PathBuf>,
}

#[derive(Deserialize)]
struct WorkspaceRef {
    workspace_id: String,
}

#[derive(Deserialize)]
struct RenameWorkspaceParams {
    workspace_id: String,
    name: String,
}

#[derive(Deserialize, Default)]
struct SpawnParams {
    #[serde(default)]
    argv: Vec<String>,
    cwd: Option<PathBuf>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    title: Option<String>,
}

impl SpawnParams {
    fn into_request(self) -> SpawnRequest {
        SpawnRequest {
            argv: self.argv,
            cwd: self.cwd,
            env: self.env.into_iter().collect(),
            title: self.title,
        }
    }
}

#[derive(Deserialize)]
struct NewTabParams {
    workspace_id: Option<String>,
    workspace: Option<String>,
    title: Option<String>,
    #[serde(flatten)]
    spawn: SpawnParams,
}

#[derive(Deserialize)]
struct TabRef {
    tab_id: String,
}

#[derive(Deserialize)]
struct TabMoveParams {
    tab_id: String,
    index: usize,
}

#[derive(Deserialize)]
struct TabRenameParams {
    tab_id: String,
    title: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum SideDto {
    First,
    Second,
}

#[derive(Deserialize)]
struct SetRatioParams {
    tab_id: String,
    #[serde(default)]
    path: Vec<SideDto>,
    ratio: f64,
}

#[derive(Deserialize)]
struct SetLayoutParams {
    tab_id: String,
    layout: LayoutDto,
}

#[derive(Deserialize)]
struct TabResizeParams {
    tab_id: String,
    cols: u32,
    rows: u32,
}

#[derive(Deserialize)]
struct PaneRef {
    pane_id: String,
}

#[derive(Deserialize)]
struct SplitParams {
    pane_id: String,
    dir: SplitDirDto,
    #[serde(flatten)]
    spawn: SpawnParams,
}

#[derive(Deserialize)]
struct SendParams {
    pane_id: String,
    text: Option<String>,
    #[serde(default)]
    keys: Vec<String>,
}

#[derive(Deserialize)]
struct ReadParams {
    pane_id: String,
    since: Option<u64>,
    last: Option<usize>,
    #[serde(default)]
    ansi: bool,
}

#[derive(Deserialize)]
struct ResizeParams {
    pane_id: String,
    cols: u32,
    rows: u32,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum FocusDirDto {
    Left,
    Right,
    Up,
    Down,
}

#[derive(Deserialize)]
struct FocusParams {
    pane_id: String,
    direction: Option<FocusDirDto>,
}

/// A size from a request, within the limits of `berth_engine::limits`.
fn size(cols: u32, rows: u32) -> Result<CellSize, CommandError> {
    berth_engine::limits::check_size(cols, rows).map_err(|e| CommandError::BadParams(e.to_string()))
}

fn selector(id: Option<String>, name: Option<String>) -> Result<WorkspaceSelector, CommandError> {
    match (id, name) {
        (Some(_), Some(_)) => {
            Err(CommandError::BadParams("give workspace_id or workspace, not both".into()))
        }
        (Some(id), None) => Ok(WorkspaceSelector::Id(WorkspaceId::parse(&id)?)),
        (None, Some(name)) => Ok(WorkspaceSelector::Name(name)),
        (None, None) => Ok(WorkspaceSelector::Active),
    }
}

/// The methods that are not Store commands: they change what the connection does, or they
/// are served by another part of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionMethod {
    /// `events.subscribe`: the connection starts receiving event notifications.
    Subscribe,
    /// `snapshot.save`: write the snapshot now.
    SaveSnapshot,
    /// `window.screenshot`: the window draws a tab into a PNG file.
    Screenshot {
        /// The tab; the active one when absent.
        tab: Option<String>,
        /// An absolute path for the PNG.
        path: PathBuf,
    },
    /// `decision.request`: a hook holds an agent's permission request open until it is
    /// answered (`pane.decide`), taken back, or `wait_ms` passes; the answer waits.
    DecisionRequest {
        /// The pane the agent runs in.
        pane: PaneId,
        /// The agent.
        kind: berth_engine::agents::AgentKind,
        /// The hook's payload, as the agent sent it.
        payload: Value,
        /// How long to wait, in milliseconds.
        wait_ms: u64,
    },
    /// `pane.submit`: a prompt pasted into a pane, then Enter (answered once Enter is written
    /// and acknowledged, or not).
    Submit {
        /// The pane.
        pane: PaneId,
        /// The prompt, at most 32 KiB.
        text: String,
        /// Submit even while the pane's agent is in the middle of a turn.
        force: bool,
    },
    /// `pane.wait`: answered when the pane's lifecycle reaches a state.
    Wait {
        /// The pane.
        pane: PaneId,
        /// The state.
        until: crate::agents::work::WaitUntil,
        /// Give up (`TIMEOUT`) after this many ms; `None`: wait as long as the client does.
        timeout_ms: Option<u64>,
    },
    /// `task.*`: tasks in worktrees, served by `tasks::serve` (git and waits: answered later).
    Task(Box<crate::tasks::request::TaskRequest>),
    /// `diff.*`, `workspace.refresh_git`, `worktree.list`: git context and review, served by
    /// `gitctx::serve` (git runs off the lock: answered later).
    Git(Box<crate::gitctx::request::GitRequest>),
    /// `screen.frames`: per pane, the rows that changed since what the client holds
    /// (`screen_stream.rs`).
    ScreenFrames(Vec<crate::screen::PaneHave>),
    /// `pane.search`: matches in a pane's scrollback by `content_seq` (`pane_search.rs`).
    PaneSearch(Box<crate::pane_search::SearchRequest>),
    /// `window.attach`: a window attaches; panes are sized for its header rows.
    WindowAttach {
        /// Rows the window draws above each pane.
        header_rows: u16,
    },
    /// `window.servers`: the window's links to other servers; `add` links one more, `remove`
    /// drops one (`berth attach --add/--remove`).
    WindowServers(crate::ui::ServersOp),
    /// `window.review`: the windows open the review view of a task (`berth review TASK`).
    Review {
        /// The task.
        task: berth_engine::ids::TaskId,
    },
    /// `window.view`: an attached window says what it shows, as the embedded one tells the
    /// Store directly (notifications for a pane the user looks at stay off the desktop).
    WindowView {
        /// Panes drawn on screen.
        visible: Vec<PaneId>,
        /// The pane with the keyboard.
        focused_pane: Option<PaneId>,
        /// Whether the window has the desktop's focus.
        window_focused: bool,
    },
    /// `notification.activate`: the user clicked a notification that an attached window
    /// showed on its own desktop (`notification.desktop`); the server does what a click on
    /// one of its own does (focus the pane, kitty's report).
    NotificationActivate {
        /// The notification.
        id: berth_engine::ids::NotificationId,
        /// The window's notification server's token for raising the window, if it sent one.
        activation_token: Option<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenFramesParams {
    panes: Vec<crate::screen::PaneHave>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowAttachParams {
    header_rows: u16,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowServersParams {
    add: Option<String>,
    remove: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewParams {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowViewParams {
    visible: Vec<String>,
    focused_pane_id: Option<String>,
    window_focused: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NotificationActivateParams {
    notification_id: String,
    activation_token: Option<String>,
}

/// The longest activation token taken (tokens are short; as the desktop sink's bound).
const MAX_ACTIVATION_TOKEN: usize = 4096;

#[derive(Deserialize)]
struct InputParams {
    pane_id: String,
    data: Vec<u8>,
}

#[derive(Deserialize)]
struct DecisionRequestParams {
    pane_id: String,
    agent: String,
    payload: Value,
    wait_ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubmitParams {
    pane_id: String,
    text: String,
    #[serde(default)]
    force: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitParams {
    pane_id: String,
    until: String,
    timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
struct ScreenshotParams {
    tab_id: Option<String>,
    path: PathBuf,
}

#[derive(Deserialize)]
struct SessionReportParams {
    pane_id: String,
    agent: String,
    session_id: String,
    resume_argv: Option<Vec<String>>,
    model: Option<String>,
    #[serde(default)]
    explicit_pane: bool,
}

#[derive(Deserialize)]
struct NotifyParams {
    pane_id: Option<String>,
    title: String,
    #[serde(default)]
    body: String,
    source: Option<String>,
}

#[derive(Deserialize, Default)]
struct ListNotificationsParams {
    #[serde(default)]
    unread_only: bool,
}

#[derive(Deserialize, Default)]
struct MarkReadParams {
    #[serde(default)]
    ids: Vec<String>,
    pane_id: Option<String>,
}

#[derive(Deserialize)]
struct HookParams {
    pane_id: String,
    agent: String,
    payload: Value,
}

fn agent_kind(name: &str) -> Result<berth_engine::agents::AgentKind, CommandError> {
    berth_engine::agents::AgentKind::parse(name).ok_or_else(|| {
        CommandError::BadParams(format!(
            "unknown agent {name:?} (claude, codex, opencode, cursor, generic)"
        ))
    })
}

#[derive(Deserialize)]
struct DecideParams {
    pane_id: String,
    answer: String,
    message: Option<String>,
    decision_id: Option<String>,
}

/// The longest message a denial carries to the agent, in characters.
pub const MAX_DECISION_MESSAGE: usize = 2048;

#[derive(Deserialize)]
struct AutoResumeParams {
    workspace_id: String,
    enabled: bool,
}

/// What a method name and params ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// A Store command.
    Command(Command),
    /// A connection-level method.
    Connection(ConnectionMethod),
}

/// Turns a method and its params into what to do; unknown methods and bad params are errors.
pub fn decode_method(method: &str, p: Value) -> Result<Decoded, CommandError> {
    let cmd = match method {
        "events.subscribe" => {
            params::<Empty>(p)?;
            return Ok(Decoded::Connection(ConnectionMethod::Subscribe));
        }
        "window.screenshot" => {
            let p: ScreenshotParams = params(p)?;
            if !p.path.is_absolute() {
                return Err(CommandError::BadParams("path must be absolute".into()));
            }
            let tab = p.tab_id.map(|t| TabId::parse(&t).map(|t| t.to_string())).transpose()?;
            return Ok(Decoded::Connection(ConnectionMethod::Screenshot { tab, path: p.path }));
        }
        "snapshot.save" => {
            params::<Empty>(p)?;
            return Ok(Decoded::Connection(ConnectionMethod::SaveSnapshot));
        }
        "screen.frames" => {
            let p: ScreenFramesParams = params(p)?;
            return Ok(Decoded::Connection(ConnectionMethod::ScreenFrames(p.panes)));
        }
        "pane.search" => {
            let p: crate::pane_search::SearchRequest = params(p)?;
            PaneId::parse(&p.pane_id)?;
            return Ok(Decoded::Connection(ConnectionMethod::PaneSearch(Box::new(p))));
        }
        "window.attach" => {
            let p: WindowAttachParams = params(p)?;
            return Ok(Decoded::Connection(ConnectionMethod::WindowAttach {
                header_rows: p.header_rows,
            }));
        }
        "window.servers" => {
            let p: WindowServersParams = params(p)?;
            let bounded = |what: &str, text: String| {
                if text.is_empty() || text.len() > crate::ui::MAX_SERVER_ADDRESS {
                    return Err(CommandError::BadParams(format!(
                        "{what} must be 1 to {} bytes",
                        crate::ui::MAX_SERVER_ADDRESS
                    )));
                }
                Ok(text)
            };
            let op = match (p.add, p.remove) {
                (None, None) => crate::ui::ServersOp::List,
                (Some(add), None) => crate::ui::ServersOp::Add(bounded("add", add)?),
                (None, Some(remove)) => crate::ui::ServersOp::Remove(bounded("remove", remove)?),
                (Some(_), Some(_)) => {
                    return Err(CommandError::BadParams("give add or remove, not both".into()))
                }
            };
            return Ok(Decoded::Connection(ConnectionMethod::WindowServers(op)));
        }
        "window.review" => {
            let p: ReviewParams = params(p)?;
            let task = berth_engine::ids::TaskId::parse(&p.task_id)?;
            return Ok(Decoded::Connection(ConnectionMethod::Review { task }));
        }
        "window.view" => {
            let p: WindowViewParams = params(p)?;
            let visible = p.visible.iter().map(|id| PaneId::parse(id)).collect::<Result<_, _>>()?;
            let focused_pane = p.focused_pane_id.as_deref().map(PaneId::parse).transpose()?;
            return Ok(Decoded::Connection(ConnectionMethod::WindowView {
                visible,
                focused_pane,
                window_focused: p.window_focused,
            }));
        }
        "notification.activate" => {
            let p: NotificationActivateParams = params(p)?;
            if p.activation_token.as_ref().is_some_and(|t| t.len() > MAX_ACTIVATION_TOKEN) {
                return Err(CommandError::BadParams(format!(
                    "activation_token is longer than {MAX_ACTIVATION_TOKEN} bytes"
                )));
            }
            return Ok(Decoded::Connection(ConnectionMethod::NotificationActivate {
                id: berth_engine::ids::NotificationId::parse(&p.notification_id)?,
                activation_token: p.activation_token,
            }));
        }
        "pane.input" => {
            let p: InputParams = params(p)?;
            Command::PaneInput { pane: PaneId::parse(&p.pane_id)?, data: p.data }
        }
        "decision.request" => {
            let p: DecisionRequestParams = params(p)?;
            return Ok(Decoded::Connection(ConnectionMethod::DecisionRequest {
                pane: PaneId::parse(&p.pane_id)?,
                kind: agent_kind(&p.agent)?,
                payload: p.payload,
                wait_ms: p.wait_ms,
            }));
        }
        "pane.submit" => {
            let p: SubmitParams = params(p)?;
            crate::agents::work::check_prompt(&p.text)?;
            let pane = PaneId::parse(&p.pane_id)?;
            return Ok(Decoded::Connection(ConnectionMethod::Submit {
                pane,
                text: p.text,
                force: p.force,
            }));
        }
        "pane.wait" => {
            let p: WaitParams = params(p)?;
            let until = crate::agents::work::WaitUntil::parse(&p.until).ok_or_else(|| {
                CommandError::BadParams(format!(
                    "unknown state {:?} to wait for (idle, blocked, done, exited)",
                    p.until
                ))
            })?;
            let pane = PaneId::parse(&p.pane_id)?;
            return Ok(Decoded::Connection(ConnectionMethod::Wait {
                pane,
                until,
                timeout_ms: p.timeout_ms,
            }));
        }
        "task.start" | "task.report" | "task.finish" | "task.list" | "task.show"
        | "task.cancel" | "task.wait" | "task.revert_turn" | "task.comment"
        | "task.send_comments" => {
            use crate::tasks::request::TaskRequest as T;
            let request = match method {
                "task.start" => T::Start(params(p)?),
                "task.report" => T::Report(params(p)?),
                "task.finish" => T::Finish(params(p)?),
                "task.list" => T::List(params(p)?),
                "task.show" => T::Show(params(p)?),
                "task.cancel" => T::Cancel(params(p)?),
                "task.revert_turn" => T::RevertTurn(params(p)?),
                "task.comment" => T::Comment(params(p)?),
                "task.send_comments" => T::SendComments(params(p)?),
                _ => T::Wait(params(p)?),
            };
            request.check()?;
            return Ok(Decoded::Connection(ConnectionMethod::Task(Box::new(request))));
        }
        "diff.files" | "diff.file" | "workspace.refresh_git" | "worktree.list" => {
            use crate::gitctx::request::GitRequest as G;
            let request = match method {
                "diff.files" => G::DiffFiles(params(p)?),
                "diff.file" => G::DiffFile(params(p)?),
                "workspace.refresh_git" => G::RefreshGit(params(p)?),
                _ => G::WorktreeList(params(p)?),
            };
            request.check()?;
            return Ok(Decoded::Connection(ConnectionMethod::Git(Box::new(request))));
        }
        "pane.resume" => {
            let p: PaneRef = params(p)?;
            Command::PaneResume { pane: PaneId::parse(&p.pane_id)? }
        }
        "session.report" => {
            let p: SessionReportParams = params(p)?;
            let kind = agent_kind(&p.agent)?;
            berth_engine::agents::validate_session_id(&p.session_id)
                .map_err(|e| CommandError::BadParams(e.to_string()))?;
            if let Some(argv) = &p.resume_argv {
                if argv.is_empty() || argv.len() > 64 || argv.iter().any(|a| a.len() > 4096) {
                    return Err(CommandError::BadParams(
                        "resume_argv must hold 1 to 64 short arguments".into(),
                    ));
                }
            }
            Command::SessionReport {
                pane: PaneId::parse(&p.pane_id)?,
                kind,
                session_id: p.session_id,
                resume_argv: p.resume_argv,
                model: p.model.map(|m| m.chars().filter(|c| !c.is_control()).take(128).collect()),
                explicit_pane: p.explicit_pane,
            }
        }
        "workspace.set_auto_resume" => {
            let p: AutoResumeParams = params(p)?;
            Command::WorkspaceSetAutoResume {
                workspace: WorkspaceId::parse(&p.workspace_id)?,
                enabled: p.enabled,
            }
        }
        "workspace.set_agent_drive" => {
            let p: AutoResumeParams = params(p)?;
            Command::WorkspaceSetAgentDrive {
                workspace: WorkspaceId::parse(&p.workspace_id)?,
                enabled: p.enabled,
            }
        }
        "notify" => {
            let p: NotifyParams = params(p)?;
            let source = p.source.unwrap_or_else(|| "cli".into());
            let source_ok = matches!(source.as_str(), "cli" | "system" | "mcp")
                || source
                    .strip_prefix("hook:")
                    .is_some_and(|a| berth_engine::agents::AgentKind::parse(a).is_some());
            if !source_ok {
                return Err(CommandError::BadParams(format!("unknown source {source:?}")));
            }
            Command::Notify {
                pane: p.pane_id.as_deref().map(PaneId::parse).transpose()?,
                title: p.title,
                body: p.body,
                source,
            }
        }
        "notifications.list" => {
            let p: ListNotificationsParams = params(p)?;
            Command::NotificationsList { unread_only: p.unread_only }
        }
        "notifications.mark_read" => {
            let p: MarkReadParams = params(p)?;
            let ids = p
                .ids
                .iter()
                .map(|id| berth_engine::ids::NotificationId::parse(id))
                .collect::<Result<Vec<_>, _>>()?;
            Command::NotificationsMarkRead {
                ids,
                pane: p.pane_id.as_deref().map(PaneId::parse).transpose()?,
            }
        }
        "pane.clear_attention" => {
            let p: PaneRef = params(p)?;
            Command::PaneClearAttention { pane: PaneId::parse(&p.pane_id)? }
        }
        "hook.event" => {
            let p: HookParams = params(p)?;
            Command::HookEvent {
                pane: PaneId::parse(&p.pane_id)?,
                kind: agent_kind(&p.agent)?,
                payload: p.payload,
            }
        }
        "pane.decide" => {
            let p: DecideParams = params(p)?;
            let answer = crate::decisions::DecisionAnswer::parse(&p.answer).ok_or_else(|| {
                CommandError::BadParams(format!(
                    "unknown answer {:?} (allow, always or deny)",
                    p.answer
                ))
            })?;
            if p.message.as_ref().is_some_and(|m| m.chars().count() > MAX_DECISION_MESSAGE) {
                return Err(CommandError::BadParams(format!(
                    "message is longer than {MAX_DECISION_MESSAGE} characters"
                )));
            }
            Command::Decide {
                pane: PaneId::parse(&p.pane_id)?,
                answer,
                message: p.message,
                id: p
                    .decision_id
                    .as_deref()
                    .map(berth_engine::ids::DecisionId::parse)
                    .transpose()?,
            }
        }
        "decision.list" => {
            params::<Empty>(p)?;
            Command::Decisions
        }
        "server.info" => {
            params::<Empty>(p)?;
            Command::ServerInfo
        }
        "workspace.list" => {
            params::<Empty>(p)?;
            Command::WorkspaceList
        }
        "workspace.create" => {
            let p: WorkspaceCreateParams = params(p)?;
            Command::WorkspaceCreate { name: p.name, cwd: p.cwd }
        }
        "workspace.rename" => {
            let p: RenameWorkspaceParams = params(p)?;
            Command::WorkspaceRename {
                workspace: WorkspaceId::parse(&p.workspace_id)?,
                name: p.name,
            }
        }
        "workspace.close" => {
            let p: WorkspaceRef = params(p)?;
            Command::WorkspaceClose { workspace: WorkspaceId::parse(&p.workspace_id)? }
        }
        "tab.create" => {
            let p: NewTabParams = params(p)?;
            Command::TabCreate {
                workspace: selector(p.workspace_id, p.workspace)?,
                title: p.title,
                spawn: p.spawn.into_request(),
            }
        }
        "tab.close" => {
            let p: TabRef = params(p)?;
            Command::TabClose { tab: TabId::parse(&p.tab_id)? }
        }
        "tab.rename" => {
            let p: TabRenameParams = params(p)?;
            Command::TabRename { tab: TabId::parse(&p.tab_id)?, title: p.title }
        }
        "tab.move" => {
            let p: TabMoveParams = params(p)?;
            Command::TabMove { tab: TabId::parse(&p.tab_id)?, index: p.index }
        }
        "tab.set_ratio" => {
            let p: SetRatioParams = params(p)?;
            let path = p
                .path
                .into_iter()
                .map(|s| match s {
                    SideDto::First => Side::First,
                    SideDto::Second => Side::Second,
                })
                .collect();
            Command::TabSetRatio { tab: TabId::parse(&p.tab_id)?, path, ratio: p.ratio }
        }
        "tab.set_layout" => {
            let p: SetLayoutParams = params(p)?;
            Command::TabSetLayout { tab: TabId::parse(&p.tab_id)?, layout: p.layout.to_layout()? }
        }
        "tab.resize" => {
            let p: TabResizeParams = params(p)?;
            Command::TabResize { tab: TabId::parse(&p.tab_id)?, size: size(p.cols, p.rows)? }
        }
        "pane.spawn" => {
            // `title` is read by the outer struct, so the flattened spawn params never see it.
            let p: NewTabParams = params(p)?;
            let mut spawn = p.spawn.into_request();
            spawn.title = p.title;
            Command::PaneSpawn { workspace: selector(p.workspace_id, p.workspace)?, spawn }
        }
        "pane.split" => {
            let p: SplitParams = params(p)?;
            Command::PaneSplit {
                pane: PaneId::parse(&p.pane_id)?,
                dir: p.dir.into(),
                spawn: p.spawn.into_request(),
            }
        }
        "pane.close" => {
            let p: PaneRef = params(p)?;
            Command::PaneClose { pane: PaneId::parse(&p.pane_id)? }
        }
        "pane.send" => {
            let p: SendParams = params(p)?;
            if p.text.is_none() && p.keys.is_empty() {
                return Err(CommandError::BadParams("give text or keys".into()));
            }
            Command::PaneSend { pane: PaneId::parse(&p.pane_id)?, text: p.text, keys: p.keys }
        }
        "pane.read" => {
            let p: ReadParams = params(p)?;
            if p.since.is_some() && p.last.is_some() {
                return Err(CommandError::BadParams("give since or last, not both".into()));
            }
            Command::PaneRead {
                pane: PaneId::parse(&p.pane_id)?,
                spec: ReadSpec { since: p.since, last: p.last, ansi: p.ansi },
            }
        }
        "pane.resize" => {
            let p: ResizeParams = params(p)?;
            Command::PaneResize { pane: PaneId::parse(&p.pane_id)?, size: size(p.cols, p.rows)? }
        }
        "pane.focus" => {
            let p: FocusParams = params(p)?;
            let pane = PaneId::parse(&p.pane_id)?;
            match p.direction {
                None => Command::PaneFocus { pane },
                Some(d) => Command::PaneFocusDirection {
                    pane,
                    dir: match d {
                        FocusDirDto::Left => FocusDir::Left,
                        FocusDirDto::Right => FocusDir::Right,
                        FocusDirDto::Up => FocusDir::Up,
                        FocusDirDto::Down => FocusDir::Down,
                    },
                },
            }
        }
        other => return Err(CommandError::UnknownMethod(other.to_owned())),
    };
    Ok(Decoded::Command(cmd))
}

/// Every method name the server answers, in the order of the protocol's documentation.
pub const METHODS: &[&str] = &[
    "server.info",
    "workspace.list",
    "workspace.create",
    "workspace.rename",
    "workspace.close",
    "workspace.set_auto_resume",
    "workspace.set_agent_drive",
    "tab.create",
    "tab.close",
    "tab.rename",
    "tab.move",
    "tab.set_ratio",
    "tab.set_layout",
    "tab.resize",
    "pane.spawn",
    "pane.split",
    "pane.close",
    "pane.send",
    "pane.input",
    "pane.read",
    "pane.resize",
    "pane.focus",
    "pane.resume",
    "pane.clear_attention",
    "pane.submit",
    "pane.wait",
    "session.report",
    "notify",
    "notifications.list",
    "notifications.mark_read",
    "hook.event",
    "pane.decide",
    "decision.list",
    "decision.request",
    "events.subscribe",
    "snapshot.save",
    "window.screenshot",
    "task.start",
    "task.report",
    "task.finish",
    "task.list",
    "task.show",
    "task.cancel",
    "task.wait",
    "task.revert_turn",
    "task.comment",
    "task.send_comments",
    "diff.files",
    "diff.file",
    "workspace.refresh_git",
    "worktree.list",
    "screen.frames",
    "pane.search",
    "window.attach",
    "window.servers",
    "window.review",
    "window.view",
    "notification.activate",
];

/// A path as wire text; the wire carries UTF-8 only.
fn path_text(path: &Path) -> Result<&str, CommandError> {
    path.to_str()
        .ok_or_else(|| CommandError::BadParams(format!("path {path:?} is not valid UTF-8")))
}

fn opt_path(path: Option<&PathBuf>) -> Result<Value, CommandError> {
    Ok(match path {
        Some(p) => json!(path_text(p)?),
        None => Value::Null,
    })
}

/// The spawn fields of `tab.create`, `pane.spawn` and `pane.split` (flattened into params).
fn spawn_params(spawn: &SpawnRequest) -> Result<serde_json::Map<String, Value>, CommandError> {
    let env: serde_json::Map<String, Value> =
        spawn.env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let mut map = serde_json::Map::new();
    map.insert("argv".into(), json!(spawn.argv));
    map.insert("cwd".into(), opt_path(spawn.cwd.as_ref())?);
    map.insert("env".into(), Value::Object(env));
    Ok(map)
}

fn selector_params(map: &mut serde_json::Map<String, Value>, selector: &WorkspaceSelector) {
    match selector {
        WorkspaceSelector::Id(id) => {
            map.insert("workspace_id".into(), json!(id.as_str()));
        }
        WorkspaceSelector::Name(name) => {
            map.insert("workspace".into(), json!(name));
        }
        WorkspaceSelector::Active => {}
    }
}

/// The method name and params that ask for `what`: the inverse of [`decode_method`]
/// (`decode_method(encode_method(x)) == x` for everything a client can send).
pub fn encode_method(what: &Decoded) -> Result<(&'static str, Value), CommandError> {
    let cmd = match what {
        Decoded::Connection(ConnectionMethod::Subscribe) => {
            return Ok(("events.subscribe", json!({})))
        }
        Decoded::Connection(ConnectionMethod::SaveSnapshot) => {
            return Ok(("snapshot.save", json!({})))
        }
        Decoded::Connection(ConnectionMethod::Screenshot { tab, path }) => {
            return Ok(("window.screenshot", json!({ "tab_id": tab, "path": path_text(path)? })))
        }
        Decoded::Connection(ConnectionMethod::ScreenFrames(panes)) => {
            return Ok(("screen.frames", json!({ "panes": panes })))
        }
        Decoded::Connection(ConnectionMethod::PaneSearch(request)) => {
            let value = serde_json::to_value(request)
                .map_err(|e| CommandError::Internal(format!("pane.search did not encode: {e}")))?;
            return Ok(("pane.search", value));
        }
        Decoded::Connection(ConnectionMethod::WindowAttach { header_rows }) => {
            return Ok(("window.attach", json!({ "header_rows": header_rows })))
        }
        Decoded::Connection(ConnectionMethod::Review { task }) => {
            return Ok(("window.review", json!({ "task_id": task.as_str() })))
        }
        Decoded::Connection(ConnectionMethod::WindowServers(op)) => {
            let params = match op {
                crate::ui::ServersOp::List => json!({}),
                crate::ui::ServersOp::Add(a) => json!({ "add": a }),
                crate::ui::ServersOp::Remove(r) => json!({ "remove": r }),
            };
            return Ok(("window.servers", params));
        }
        Decoded::Connection(ConnectionMethod::WindowView {
            visible,
            focused_pane,
            window_focused,
        }) => {
            let visible: Vec<&str> = visible.iter().map(PaneId::as_str).collect();
            return Ok((
                "window.view",
                json!({
                    "visible": visible,
                    "focused_pane_id": focused_pane.as_ref().map(PaneId::as_str),
                    "window_focused": window_focused,
                }),
            ));
        }
        Decoded::Connection(ConnectionMethod::NotificationActivate { id, activation_token }) => {
            return Ok((
                "notification.activate",
                json!({ "notification_id": id.as_str(), "activation_token": activation_token }),
            ))
        }
        Decoded::Connection(ConnectionMethod::DecisionRequest { pane, kind, payload, wait_ms }) => {
            return Ok((
                "decision.request",
                json!({
                    "pane_id": pane.as_str(),
                    "agent": kind.as_str(),
                    "payload": payload,
                    "wait_ms": wait_ms,
                }),
            ))
        }
        Decoded::Connection(ConnectionMethod::Submit { pane, text, force }) => {
            return Ok((
                "pane.submit",
                json!({ "pane_id": pane.as_str(), "text": text, "force": force }),
            ))
        }
        Decoded::Connection(ConnectionMethod::Wait { pane, until, timeout_ms }) => {
            return Ok((
                "pane.wait",
                json!({
                    "pane_id": pane.as_str(),
                    "until": until.as_str(),
                    "timeout_ms": timeout_ms,
                }),
            ))
        }
        Decoded::Connection(ConnectionMethod::Task(request)) => {
            use crate::tasks::request::TaskRequest as T;
            let json = |v: Result<Value, serde_json::Error>| {
                v.map_err(|e| CommandError::BadParams(format!("task params: {e}")))
            };
            return Ok(match request.as_ref() {
                T::Start(p) => ("task.start", json(serde_json::to_value(p))?),
                T::Report(p) => ("task.report", json(serde_json::to_value(p))?),
                T::Finish(p) => ("task.finish", json(serde_json::to_value(p))?),
                T::List(p) => ("task.list", json(serde_json::to_value(p))?),
                T::Show(p) => ("task.show", json(serde_json::to_value(p))?),
                T::Cancel(p) => ("task.cancel", json(serde_json::to_value(p))?),
                T::Wait(p) => ("task.wait", json(serde_json::to_value(p))?),
                T::RevertTurn(p) => ("task.revert_turn", json(serde_json::to_value(p))?),
                T::Comment(p) => ("task.comment", json(serde_json::to_value(p))?),
                T::SendComments(p) => ("task.send_comments", json(serde_json::to_value(p))?),
            });
        }
        Decoded::Connection(ConnectionMethod::Git(request)) => {
            use crate::gitctx::request::GitRequest as G;
            let json = |v: Result<Value, serde_json::Error>| {
                v.map_err(|e| CommandError::BadParams(format!("git params: {e}")))
            };
            return Ok(match request.as_ref() {
                G::DiffFiles(p) => ("diff.files", json(serde_json::to_value(p))?),
                G::DiffFile(p) => ("diff.file", json(serde_json::to_value(p))?),
                G::RefreshGit(p) => ("workspace.refresh_git", json(serde_json::to_value(p))?),
                G::WorktreeList(p) => ("worktree.list", json(serde_json::to_value(p))?),
            });
        }
        Decoded::Command(cmd) => cmd,
    };
    Ok(match cmd {
        Command::ServerInfo => ("server.info", json!({})),
        Command::WorkspaceList => ("workspace.list", json!({})),
        Command::WorkspaceCreate { name, cwd } => {
            ("workspace.create", json!({ "name": name, "cwd": opt_path(cwd.as_ref())? }))
        }
        Command::WorkspaceRename { workspace, name } => {
            ("workspace.rename", json!({ "workspace_id": workspace.as_str(), "name": name }))
        }
        Command::WorkspaceClose { workspace } => {
            ("workspace.close", json!({ "workspace_id": workspace.as_str() }))
        }
        Command::WorkspaceSetAutoResume { workspace, enabled } => (
            "workspace.set_auto_resume",
            json!({ "workspace_id": workspace.as_str(), "enabled": enabled }),
        ),
        Command::WorkspaceSetAgentDrive { workspace, enabled } => (
            "workspace.set_agent_drive",
            json!({ "workspace_id": workspace.as_str(), "enabled": enabled }),
        ),
        Command::TabCreate { workspace, title, spawn } => {
            let mut map = spawn_params(spawn)?;
            selector_params(&mut map, workspace);
            map.insert("title".into(), json!(title));
            ("tab.create", Value::Object(map))
        }
        Command::TabClose { tab } => ("tab.close", json!({ "tab_id": tab.as_str() })),
        Command::TabRename { tab, title } => {
            ("tab.rename", json!({ "tab_id": tab.as_str(), "title": title }))
        }
        Command::TabMove { tab, index } => {
            ("tab.move", json!({ "tab_id": tab.as_str(), "index": index }))
        }
        Command::TabSetRatio { tab, path, ratio } => {
            let path: Vec<&str> = path
                .iter()
                .map(|s| match s {
                    Side::First => "first",
                    Side::Second => "second",
                })
                .collect();
            ("tab.set_ratio", json!({ "tab_id": tab.as_str(), "path": path, "ratio": ratio }))
        }
        Command::TabSetLayout { tab, layout } => (
            "tab.set_layout",
            json!({ "tab_id": tab.as_str(), "layout": LayoutDto::from_layout(layout) }),
        ),
        Command::TabResize { tab, size } => {
            ("tab.resize", json!({ "tab_id": tab.as_str(), "cols": size.cols, "rows": size.rows }))
        }
        Command::PaneSpawn { workspace, spawn } => {
            let mut map = spawn_params(spawn)?;
            selector_params(&mut map, workspace);
            map.insert("title".into(), json!(spawn.title));
            ("pane.spawn", Value::Object(map))
        }
        Command::PaneSplit { pane, dir, spawn } => {
            let mut map = spawn_params(spawn)?;
            map.insert("pane_id".into(), json!(pane.as_str()));
            map.insert("dir".into(), json!(SplitDirDto::from(*dir)));
            // `title` is a spawn field of its own for a split.
            map.insert("title".into(), json!(spawn.title));
            ("pane.split", Value::Object(map))
        }
        Command::PaneClose { pane } => ("pane.close", json!({ "pane_id": pane.as_str() })),
        Command::PaneSend { pane, text, keys } => {
            ("pane.send", json!({ "pane_id": pane.as_str(), "text": text, "keys": keys }))
        }
        Command::PaneInput { pane, data } => {
            ("pane.input", json!({ "pane_id": pane.as_str(), "data": data }))
        }
        Command::PaneRead { pane, spec } => (
            "pane.read",
            json!({
                "pane_id": pane.as_str(),
                "since": spec.since,
                "last": spec.last,
                "ansi": spec.ansi,
            }),
        ),
        Command::PaneResize { pane, size } => (
            "pane.resize",
            json!({ "pane_id": pane.as_str(), "cols": size.cols, "rows": size.rows }),
        ),
        Command::PaneFocus { pane } => ("pane.focus", json!({ "pane_id": pane.as_str() })),
        Command::PaneFocusDirection { pane, dir } => {
            let dir = match dir {
                FocusDir::Left => "left",
                FocusDir::Right => "right",
                FocusDir::Up => "up",
                FocusDir::Down => "down",
            };
            ("pane.focus", json!({ "pane_id": pane.as_str(), "direction": dir }))
        }
        Command::PaneResume { pane } => ("pane.resume", json!({ "pane_id": pane.as_str() })),
        Command::PaneClearAttention { pane } => {
            ("pane.clear_attention", json!({ "pane_id": pane.as_str() }))
        }
        Command::SessionReport { pane, kind, session_id, resume_argv, model, explicit_pane } => (
            "session.report",
            json!({
                "pane_id": pane.as_str(),
                "agent": kind.as_str(),
                "session_id": session_id,
                "resume_argv": resume_argv,
                "model": model,
                "explicit_pane": explicit_pane,
            }),
        ),
        Command::Notify { pane, title, body, source } => (
            "notify",
            json!({
                "pane_id": pane.as_ref().map(PaneId::as_str),
                "title": title,
                "body": body,
                "source": source,
            }),
        ),
        Command::NotificationsList { unread_only } => {
            ("notifications.list", json!({ "unread_only": unread_only }))
        }
        Command::NotificationsMarkRead { ids, pane } => (
            "notifications.mark_read",
            json!({
                "ids": ids.iter().map(|id| id.as_str()).collect::<Vec<_>>(),
                "pane_id": pane.as_ref().map(PaneId::as_str),
            }),
        ),
        Command::HookEvent { pane, kind, payload } => (
            "hook.event",
            json!({ "pane_id": pane.as_str(), "agent": kind.as_str(), "payload": payload }),
        ),
        Command::Decide { pane, answer, message, id } => (
            "pane.decide",
            json!({
                "pane_id": pane.as_str(),
                "answer": answer.as_str(),
                "message": message,
                "decision_id": id.as_ref().map(|id| id.as_str()),
            }),
        ),
        Command::Decisions => ("decision.list", json!({})),
    })
}

/// One request line (with the newline) asking for `what` under `id`.
pub fn encode_request(id: u64, what: &Decoded) -> Result<String, CommandError> {
    let (method, params) = encode_method(what)?;
    let mut line =
        json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
    line.push('\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a whole line and reports the error code, or "ok".
    fn check(line: &str) -> String {
        match decode_request(line.as_bytes()) {
            Err((_, e)) => e.code().to_owned(),
            Ok(req) => match decode_method(&req.method, req.params) {
                Ok(_) => "ok".into(),
                Err(e) => e.code().to_owned(),
            },
        }
    }

    #[test]
    fn requests_decode_to_the_expected_outcome() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":1,"method":"server.info"}"#, "ok"),
            (r#"{"jsonrpc":"2.0","id":1,"method":"workspace.list","params":{}}"#, "ok"),
            (r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#, "METHOD_NOT_FOUND"),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"pane.read","params":{"pane_id":5}}"#,
                "BAD_REQUEST",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"pane.read","params":{"pane_id":"../x"}}"#,
                "INVALID_ID",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"pane.read","params":{"pane_id":"tab_x"}}"#,
                "INVALID_ID",
            ),
            (r#"{"jsonrpc":"2.0","id":1,"method":"pane.read","params":[1]}"#, "BAD_REQUEST"),
            (r#"{"jsonrpc":"2.0","id":1,"method":"server.info","params":{"x":1}}"#, "BAD_REQUEST"),
            (r#"{"jsonrpc":"1.0","id":1,"method":"server.info"}"#, "INVALID_REQUEST"),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, "INVALID_REQUEST"),
            (r#"[1,2]"#, "INVALID_REQUEST"),
            (r#"{"jsonrpc":"2.0","id":1,"#, "PARSE_ERROR"),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tab.resize","params":{"tab_id":"tab_a","cols":0,"rows":3}}"#,
                "BAD_REQUEST",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tab.set_ratio","params":{"tab_id":"tab_a","path":["first"],"ratio":0.3}}"#,
                "ok",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tab.set_ratio","params":{"tab_id":"tab_a","path":["up"],"ratio":0.3}}"#,
                "BAD_REQUEST",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"pane.send","params":{"pane_id":"pane_a"}}"#,
                "BAD_REQUEST",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"pane.split","params":{"pane_id":"pane_a","dir":"down","argv":["bash"]}}"#,
                "ok",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tab.set_layout","params":{"tab_id":"tab_a","layout":{"split":{"dir":"right","ratio":0.5,"first":{"pane":"pane_a"},"second":{"pane":"pane_b"}}}}}"#,
                "ok",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tab.set_layout","params":{"tab_id":"tab_a","layout":{"pane":"../etc"}}}"#,
                "INVALID_ID",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(check(line), want, "{line}");
        }
        assert_eq!(check(&String::from_utf8_lossy(b"\xff\xfe")), "PARSE_ERROR");
        assert!(matches!(decode_request(b"\xff{}"), Err((_, CommandError::Parse(_)))));
    }

    #[test]
    fn layout_round_trips_through_the_wire_form() {
        let text = r#"{"split":{"dir":"down","ratio":0.25,"first":{"pane":"pane_a"},"second":{"pane":"pane_b"}}}"#;
        let dto: LayoutDto = serde_json::from_str(text).unwrap();
        let layout = dto.to_layout().unwrap();
        assert_eq!(LayoutDto::from_layout(&layout), dto);
        assert_eq!(serde_json::to_string(&dto).unwrap(), text);
    }

    #[test]
    fn errors_carry_the_request_id_and_a_stable_code() {
        let line = encode_error(Some(&json!(9)), &CommandError::UnknownMethod("x".into()));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], 9);
        assert_eq!(v["error"]["code"], -32601);
        assert_eq!(v["error"]["data"]["code"], "METHOD_NOT_FOUND");
    }
}

#[cfg(test)]
mod roundtrip_tests;

#[cfg(test)]
mod hardening_tests;

#[cfg(test)]
mod family_tests;
