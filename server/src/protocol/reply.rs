//! Answers on the wire: each [`Reply`] as the JSON result its method documents, and back.
//!
//! The client knows which command it sent, so an answer is decoded by the command's shape
//! (`decode_reply`); `decode_reply(cmd, encode_reply(r)) == r` for the answer `r` of `cmd`.

use std::path::PathBuf;

use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::model::RestoreState;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::dto::{NotificationDto, ReadDto, ServerInfoDto, WorkspaceListDto};
use crate::commands::{Command, Reply};
use crate::error::CommandError;

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
        Reply::Notified { id } => json!({ "notification_id": id }),
        Reply::Notifications(list) => {
            json!({ "notifications": list })
        }
        Reply::Marked { count } => json!({ "marked": count }),
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
        Command::Notify { .. } => Reply::Notified { id: field(r, "notification_id")? },
        Command::NotificationsList { .. } => {
            Reply::Notifications(field::<Vec<NotificationDto>>(r, "notifications")?)
        }
        Command::NotificationsMarkRead { .. } | Command::PaneClearAttention { .. } => {
            Reply::Marked { count: field(r, "marked")? }
        }
    })
}
