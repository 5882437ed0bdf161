//! Answers on the wire: each [`Reply`] as the JSON result its method documents, and back.
//!
//! The client knows which command it sent, so an answer is decoded by the command's shape
//! (`decode_reply`); `decode_reply(cmd, encode_reply(r)) == r` for the answer `r` of `cmd`.

use std::path::PathBuf;

use berth_engine::ids::{DecisionId, PaneId, TabId, WorkspaceId};
use berth_engine::model::RestoreState;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::dto::{
    DecisionDto, NotificationDto, PaneDecisionDto, ReadDto, ServerInfoDto, WorkspaceListDto,
};
use crate::commands::{Command, Reply};
use crate::decisions::DecisionAnswer;
use crate::decisions::{DecisionOutcome, OutcomeReason};
use crate::error::CommandError;
use crate::gitctx::request::{GitReply, GitRequest};
use crate::tasks::reply::TaskReply;
use crate::tasks::request::{CommentParams, TaskRequest};

/// The answer of `events.subscribe`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SubscribeReply {
    /// Always true.
    pub subscribed: bool,
}

/// The answer of `snapshot.save`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SaveReply {
    /// Always true.
    pub saved: bool,
    /// Panes recorded.
    pub panes: usize,
    /// Tails written.
    pub tails: usize,
    /// Bytes of the snapshot.
    pub bytes: usize,
    /// Where it went.
    pub path: PathBuf,
}

/// The answer of `window.screenshot`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ScreenshotReply {
    /// The PNG's path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
}

/// The answer of `decision.request`: how the hook's wait ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DecisionOutcomeReply {
    /// The decision (`dec_…`).
    pub decision_id: String,
    /// `allow | always | deny`, or null when nobody answered.
    pub answer: Option<String>,
    /// The message given with the answer.
    pub message: Option<String>,
    /// `answered | retracted | timeout | lost`.
    pub reason: String,
}

impl From<&DecisionOutcome> for DecisionOutcomeReply {
    fn from(o: &DecisionOutcome) -> Self {
        DecisionOutcomeReply {
            decision_id: o.id.to_string(),
            answer: o.answer.map(|a| a.as_str().to_owned()),
            message: o.message.clone(),
            reason: o.reason.as_str().to_owned(),
        }
    }
}

/// The answer of `pane.submit`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SubmitReply {
    /// The pane.
    pub pane_id: String,
    /// Bytes of prompt text delivered.
    pub bytes: usize,
    /// Whether it went as a bracketed paste (the program had asked for bracketed paste).
    pub bracketed: bool,
    /// Milliseconds between the paste and Enter (the agent's settle delay).
    pub enter_delay_ms: u64,
    /// Whether Berth waited for the agent's acknowledgement (its hooks are wired).
    pub awaited_ack: bool,
    /// Whether the agent acknowledged the prompt (`UserPromptSubmit`, cursor's
    /// `beforeSubmitPrompt`…); false when not awaited.
    pub confirmed: bool,
    /// Whether Enter was pressed a second time because the first drew no acknowledgement.
    pub enter_retried: bool,
    /// The prompt the agent received when it holds this one after text already in the
    /// agent's input (see `SubmitOutcome::joined`); absent when it received exactly this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined: Option<String>,
}

impl From<&crate::agents::work::SubmitOutcome> for SubmitReply {
    fn from(o: &crate::agents::work::SubmitOutcome) -> Self {
        SubmitReply {
            pane_id: o.pane.to_string(),
            bytes: o.bytes,
            bracketed: o.bracketed,
            enter_delay_ms: o.enter_delay_ms,
            awaited_ack: o.awaited_ack,
            confirmed: o.confirmed,
            enter_retried: o.enter_retried,
            joined: o.joined.clone(),
        }
    }
}

impl DecisionOutcomeReply {
    /// The typed form.
    pub fn to_outcome(&self) -> Result<DecisionOutcome, CommandError> {
        let answer = match &self.answer {
            None => None,
            Some(a) => Some(
                DecisionAnswer::parse(a)
                    .ok_or_else(|| answer_error(format!("unknown answer {a:?}")))?,
            ),
        };
        Ok(DecisionOutcome {
            id: DecisionId::parse(&self.decision_id)?,
            answer,
            message: self.message.clone(),
            reason: OutcomeReason::parse(&self.reason)
                .ok_or_else(|| answer_error(format!("unknown reason {:?}", self.reason)))?,
        })
    }
}

/// The answer of `window.review`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReviewReply {
    /// The task whose review view opens.
    pub task_id: String,
    /// How many windows were told.
    pub windows: usize,
    /// The window told (the one used last), or `None` when every window was.
    pub window_id: Option<u64>,
}

/// The answer of `pane.wait`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WaitReply {
    /// The pane.
    pub pane_id: String,
    /// Whether the state was reached; false when the pane exited (or closed) first.
    pub reached: bool,
    /// The pane's lifecycle at the end.
    pub lifecycle: String,
    /// How it was learned: `hook`, `osc133`, `process` or `interrupt`.
    pub learned_from: String,
    /// The last turn's last message from the agent, if any.
    pub last_message: Option<String>,
    /// The last turn's length in ms, when its start is known.
    pub turn_ms: Option<u64>,
    /// The exit code, once the pane's process has ended.
    pub exit_code: Option<i32>,
}

impl From<&crate::agents::work::WaitOutcome> for WaitReply {
    fn from(o: &crate::agents::work::WaitOutcome) -> Self {
        let last = o.turn.last.as_ref();
        WaitReply {
            pane_id: o.pane.to_string(),
            reached: o.reached,
            lifecycle: o.lifecycle.as_str().to_owned(),
            learned_from: o.learned_from().as_str().to_owned(),
            last_message: last.and_then(|t| t.last_message.clone()),
            turn_ms: last.and_then(|t| t.duration_ms()),
            exit_code: o.exit_code,
        }
    }
}

/// The JSON result of a reply.
pub fn encode_reply(reply: &Reply) -> Value {
    match reply {
        Reply::ServerInfo(info) => to_value(&ServerInfoDto::from(info)),
        Reply::State(state) => to_value(&WorkspaceListDto::from(state.as_ref())),
        Reply::Done => json!({}),
        Reply::WorkspaceCreated { workspace } => json!({ "workspace_id": workspace.as_str() }),
        Reply::TabCreated { tab, pane } => {
            json!({ "tab_id": tab.as_str(), "pane_id": pane.as_str() })
        }
        Reply::Spawned { pane, tab, workspace } => json!({
            "pane_id": pane.as_str(),
            "tab_id": tab.as_str(),
            "workspace_id": workspace.as_str(),
        }),
        Reply::TabMoved { index } => json!({ "index": index }),
        Reply::Ratio { ratio } => json!({ "ratio": ratio }),
        Reply::Pane { pane } => json!({ "pane_id": pane.as_str() }),
        Reply::Sent { bytes } => json!({ "bytes": bytes }),
        Reply::Read(read) => to_value(&ReadDto::from(read)),
        Reply::Resumed { pane, state } => {
            json!({ "pane_id": pane.as_str(), "state": state.as_str() })
        }
        Reply::AutoResume { enabled } => json!({ "auto_resume": enabled }),
        Reply::AgentDrive { enabled } => json!({ "agent_drive": enabled }),
        Reply::Notified { id } => json!({ "notification_id": id }),
        Reply::Notifications(list) => {
            json!({ "notifications": list })
        }
        Reply::Marked { count } => json!({ "marked": count }),
        Reply::Decided { pane, id } => {
            json!({ "pane_id": pane.as_str(), "decision_id": id.as_str() })
        }
        Reply::Decisions(list) => {
            let list: Vec<PaneDecisionDto> = list
                .iter()
                .map(|(pane, d)| PaneDecisionDto {
                    pane_id: pane.to_string(),
                    decision: DecisionDto::from(d),
                })
                .collect();
            json!({ "decisions": to_value(&list) })
        }
        // Internal answers never go on the wire; a plain form for logs.
        Reply::Restored { panes, resumable, auto_resume_candidates } => json!({
            "panes": panes,
            "resumable": resumable,
            "auto_resume": auto_resume_candidates.iter().map(PaneId::as_str).collect::<Vec<_>>(),
        }),
    }
}

fn to_value<T: Serialize>(value: &T) -> Value {
    // DTOs hold strings, numbers and UTF-8 paths only; they always serialise.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn field<T: DeserializeOwned>(result: &Value, name: &str) -> Result<T, CommandError> {
    let value = result.get(name).cloned().unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|e| answer_error(format!("field {name:?}: {e}")))
}

fn whole<T: DeserializeOwned>(result: Value) -> Result<T, CommandError> {
    serde_json::from_value(result).map_err(|e| answer_error(e.to_string()))
}

fn answer_error(detail: String) -> CommandError {
    CommandError::Internal(format!("the server's answer could not be read: {detail}"))
}

fn pane(result: &Value) -> Result<PaneId, CommandError> {
    Ok(PaneId::parse(&field::<String>(result, "pane_id")?)?)
}

fn tab(result: &Value) -> Result<TabId, CommandError> {
    Ok(TabId::parse(&field::<String>(result, "tab_id")?)?)
}

fn workspace(result: &Value) -> Result<WorkspaceId, CommandError> {
    Ok(WorkspaceId::parse(&field::<String>(result, "workspace_id")?)?)
}

/// The typed answer to `cmd` from its JSON result.
pub fn decode_reply(cmd: &Command, result: Value) -> Result<Reply, CommandError> {
    let r = &result;
    Ok(match cmd {
        Command::ServerInfo => Reply::ServerInfo(whole::<ServerInfoDto>(result)?.to_view()),
        Command::WorkspaceList => {
            Reply::State(Box::new(whole::<WorkspaceListDto>(result)?.to_view()?))
        }
        Command::WorkspaceRename { .. }
        | Command::WorkspaceClose { .. }
        | Command::TabClose { .. }
        | Command::TabRename { .. }
        | Command::TabSetLayout { .. }
        | Command::TabResize { .. }
        | Command::PaneClose { .. }
        | Command::PaneResize { .. } => Reply::Done,
        Command::WorkspaceCreate { .. } => Reply::WorkspaceCreated { workspace: workspace(r)? },
        Command::TabCreate { .. } => Reply::TabCreated { tab: tab(r)?, pane: pane(r)? },
        Command::PaneSpawn { .. } => {
            Reply::Spawned { pane: pane(r)?, tab: tab(r)?, workspace: workspace(r)? }
        }
        Command::TabMove { .. } => Reply::TabMoved { index: field(r, "index")? },
        Command::TabSetRatio { .. } => Reply::Ratio { ratio: field(r, "ratio")? },
        Command::PaneSplit { .. }
        | Command::PaneFocus { .. }
        | Command::PaneFocusDirection { .. }
        | Command::SessionReport { .. }
        | Command::HookEvent { .. } => Reply::Pane { pane: pane(r)? },
        Command::PaneSend { .. } | Command::PaneInput { .. } => {
            Reply::Sent { bytes: field(r, "bytes")? }
        }
        Command::PaneRead { .. } => Reply::Read(whole::<ReadDto>(result)?.to_view()?),
        Command::PaneResume { .. } => {
            let state: String = field(r, "state")?;
            Reply::Resumed {
                pane: pane(r)?,
                state: RestoreState::parse(&state)
                    .ok_or_else(|| answer_error(format!("unknown state {state:?}")))?,
            }
        }
        Command::WorkspaceSetAutoResume { .. } => {
            Reply::AutoResume { enabled: field(r, "auto_resume")? }
        }
        Command::WorkspaceSetAgentDrive { .. } => {
            Reply::AgentDrive { enabled: field(r, "agent_drive")? }
        }
        Command::Notify { .. } => Reply::Notified { id: field(r, "notification_id")? },
        Command::NotificationsList { .. } => {
            Reply::Notifications(field::<Vec<NotificationDto>>(r, "notifications")?)
        }
        Command::NotificationsMarkRead { .. } | Command::PaneClearAttention { .. } => {
            Reply::Marked { count: field(r, "marked")? }
        }
        Command::Decide { .. } => Reply::Decided {
            pane: pane(r)?,
            id: DecisionId::parse(&field::<String>(r, "decision_id")?)?,
        },
        Command::Decisions => Reply::Decisions(
            field::<Vec<PaneDecisionDto>>(r, "decisions")?
                .iter()
                .map(|e| Ok((PaneId::parse(&e.pane_id)?, e.decision.to_view()?)))
                .collect::<Result<_, CommandError>>()?,
        ),
    })
}

/// The typed answer to a `task.*` request from its JSON result: the request says which shape
/// comes back; `decode_task_reply(req, to_value(r)) == r` for the answer `r` of `req`.
pub fn decode_task_reply(request: &TaskRequest, result: Value) -> Result<TaskReply, CommandError> {
    Ok(match request {
        TaskRequest::List(_) => TaskReply::List(whole(result)?),
        TaskRequest::RevertTurn(_) => TaskReply::Reverted(whole(result)?),
        TaskRequest::SendComments(_) | TaskRequest::Comment(CommentParams { send: true, .. }) => {
            TaskReply::CommentsSent(Box::new(whole(result)?))
        }
        TaskRequest::Start(_)
        | TaskRequest::Report(_)
        | TaskRequest::Finish(_)
        | TaskRequest::Show(_)
        | TaskRequest::Cancel(_)
        | TaskRequest::Wait(_)
        | TaskRequest::Comment(_) => TaskReply::Task(Box::new(whole(result)?)),
    })
}

/// The typed answer to a git request from its JSON result, as [`decode_task_reply`].
pub fn decode_git_reply(request: &GitRequest, result: Value) -> Result<GitReply, CommandError> {
    Ok(match request {
        GitRequest::DiffFiles(_) => GitReply::DiffFiles(whole(result)?),
        GitRequest::DiffFile(_) => GitReply::DiffFile(whole(result)?),
        GitRequest::RefreshGit(_) => GitReply::RefreshGit(whole(result)?),
        GitRequest::WorktreeList(_) => GitReply::WorktreeList(whole(result)?),
    })
}
