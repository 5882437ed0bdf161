//! Events on the wire: each [`Event`] as the JSON object `events.subscribe` documents (a
//! `type` and its fields), wrapped in a JSON-RPC notification, and back.

use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use serde_json::{json, Value};

use super::dto::{DecisionDto, NotificationDto};
use crate::error::CommandError;
use crate::event::Event;

/// The JSON object of an event (what a subscriber gets as the notification's params).
pub fn event_value(event: &Event) -> Value {
    match event {
        Event::WorkspaceCreated { workspace } => {
            json!({ "type": "workspace.created", "workspace_id": workspace.as_str() })
        }
        Event::WorkspaceChanged { workspace } => {
            json!({ "type": "workspace.changed", "workspace_id": workspace.as_str() })
        }
        Event::WorkspaceClosed { workspace } => {
            json!({ "type": "workspace.closed", "workspace_id": workspace.as_str() })
        }
        Event::TabCreated { tab, workspace } => json!({
            "type": "tab.created",
            "tab_id": tab.as_str(),
            "workspace_id": workspace.as_str(),
        }),
        Event::TabChanged { tab } => json!({ "type": "tab.changed", "tab_id": tab.as_str() }),
        Event::TabClosed { tab } => json!({ "type": "tab.closed", "tab_id": tab.as_str() }),
        Event::PaneCreated { pane, tab } => {
            json!({ "type": "pane.created", "pane_id": pane.as_str(), "tab_id": tab.as_str() })
        }
        Event::PaneChanged { pane } => json!({ "type": "pane.changed", "pane_id": pane.as_str() }),
        Event::PaneClosed { pane } => json!({ "type": "pane.closed", "pane_id": pane.as_str() }),
        Event::PaneOutput { pane } => json!({ "type": "pane.output", "pane_id": pane.as_str() }),
        Event::PaneProgress { pane, state, percent } => json!({
            "type": "pane.progress",
            "pane_id": pane.as_str(),
            "state": state,
            "percent": percent,
        }),
        Event::PaneExited { pane, exit_code, signal } => json!({
            "type": "pane.exited",
            "pane_id": pane.as_str(),
            "exit_code": exit_code,
            "signal": signal,
        }),
        Event::FocusChanged { pane, tab, workspace } => json!({
            "type": "focus.changed",
            "pane_id": pane.as_str(),
            "tab_id": tab.as_str(),
            "workspace_id": workspace.as_str(),
        }),
        Event::Notification(n) => {
            json!({ "type": "notification", "notification": n.as_ref() })
        }
        Event::NotificationDesktop { notification, window } => json!({
            "type": "notification.desktop",
            "notification": notification.as_ref(),
            "window_id": window,
        }),
        Event::NotificationActivated { id, pane, activation_token } => json!({
            "type": "notification.activated",
            "notification_id": id,
            "pane_id": pane.as_str(),
            "activation_token": activation_token,
        }),
        Event::Decision { pane, decision } => json!({
            "type": "pane.decision",
            "pane_id": pane.as_str(),
            "decision": decision.as_ref().map(DecisionDto::from),
        }),
        Event::SubscriberDropped { reason } => {
            json!({ "type": "subscriber.dropped", "reason": reason })
        }
        Event::ConnectionClosed { reason } => {
            json!({ "type": "connection.closed", "reason": reason })
        }
        Event::TaskChanged { task, state } => {
            json!({ "type": "task.changed", "task_id": task.as_str(), "state": state })
        }
        Event::GitChanged { dir, git } => json!({ "type": "git.changed", "dir": dir, "git": git }),
        Event::ReviewRequested { task, window } => {
            json!({ "type": "review.requested", "task_id": task.as_str(), "window_id": window })
        }
    }
}

/// Encodes an event as a JSON-RPC notification line (with the newline).
pub fn encode_event(event: &Event) -> String {
    let mut line =
        json!({ "jsonrpc": "2.0", "method": "event", "params": event_value(event) }).to_string();
    line.push('\n');
    line
}

fn text(v: &Value, name: &str) -> Result<String, CommandError> {
    v.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| CommandError::BadParams(format!("event without a text field {name:?}")))
}

fn pane(v: &Value) -> Result<PaneId, CommandError> {
    Ok(PaneId::parse(&text(v, "pane_id")?)?)
}

fn tab(v: &Value) -> Result<TabId, CommandError> {
    Ok(TabId::parse(&text(v, "tab_id")?)?)
}

fn workspace(v: &Value) -> Result<WorkspaceId, CommandError> {
    Ok(WorkspaceId::parse(&text(v, "workspace_id")?)?)
}

fn number<T: serde::de::DeserializeOwned>(v: &Value, name: &str) -> Result<T, CommandError> {
    serde_json::from_value(v.get(name).cloned().unwrap_or(Value::Null))
        .map_err(|e| CommandError::BadParams(format!("event field {name:?}: {e}")))
}

/// The event of a notification's params; an unknown `type` is an error (a newer server).
pub fn decode_event(v: &Value) -> Result<Event, CommandError> {
    let kind = text(v, "type")?;
    Ok(match kind.as_str() {
        "workspace.created" => Event::WorkspaceCreated { workspace: workspace(v)? },
        "workspace.changed" => Event::WorkspaceChanged { workspace: workspace(v)? },
        "workspace.closed" => Event::WorkspaceClosed { workspace: workspace(v)? },
        "tab.created" => Event::TabCreated { tab: tab(v)?, workspace: workspace(v)? },
        "tab.changed" => Event::TabChanged { tab: tab(v)? },
        "tab.closed" => Event::TabClosed { tab: tab(v)? },
        "pane.created" => Event::PaneCreated { pane: pane(v)?, tab: tab(v)? },
        "pane.changed" => Event::PaneChanged { pane: pane(v)? },
        "pane.closed" => Event::PaneClosed { pane: pane(v)? },
        "pane.output" => Event::PaneOutput { pane: pane(v)? },
        "pane.progress" => Event::PaneProgress {
            pane: pane(v)?,
            state: number(v, "state")?,
            percent: number(v, "percent")?,
        },
        "pane.exited" => Event::PaneExited {
            pane: pane(v)?,
            exit_code: number(v, "exit_code")?,
            signal: number(v, "signal")?,
        },
        "focus.changed" => {
            Event::FocusChanged { pane: pane(v)?, tab: tab(v)?, workspace: workspace(v)? }
        }
        "notification" => {
            let n: NotificationDto = number(v, "notification")?;
            Event::Notification(Box::new(n))
        }
        "notification.desktop" => {
            let n: NotificationDto = number(v, "notification")?;
            Event::NotificationDesktop {
                notification: Box::new(n),
                window: number(v, "window_id")?,
            }
        }
        "notification.activated" => Event::NotificationActivated {
            id: text(v, "notification_id")?,
            pane: pane(v)?,
            activation_token: v["activation_token"].as_str().map(str::to_owned),
        },
        "pane.decision" => Event::Decision {
            pane: pane(v)?,
            decision: number::<Option<DecisionDto>>(v, "decision")?
                .map(|d| d.to_view())
                .transpose()?,
        },
        "subscriber.dropped" => Event::SubscriberDropped { reason: text(v, "reason")? },
        "connection.closed" => Event::ConnectionClosed { reason: text(v, "reason")? },
        "task.changed" => Event::TaskChanged {
            task: berth_engine::ids::TaskId::parse(&text(v, "task_id")?)?,
            state: text(v, "state")?,
        },
        "git.changed" => Event::GitChanged { dir: text(v, "dir")?, git: number(v, "git")? },
        "review.requested" => Event::ReviewRequested {
            task: berth_engine::ids::TaskId::parse(&text(v, "task_id")?)?,
            window: v.get("window_id").and_then(Value::as_u64),
        },
        other => return Err(CommandError::BadParams(format!("unknown event type {other:?}"))),
    })
}
