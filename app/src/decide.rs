//! Decisions from the command line: `berth hook AGENT` waiting on a permission request,
//! `berth decide` answering one, `berth decisions` listing them.
//!
//! It owns the printing and exit codes of these verbs; what a payload asks and what the agent
//! is told are the server's tables (`berth_server::agents::decide`). A hook never fails its
//! agent: every error ends in the agent's own "no decision" (cursor: `ask`), exit 0.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use berth_engine::agents::AgentKind;
use berth_engine::ids::{DecisionId, PaneId};
use berth_server::agents::decide::{agent_answer, default_wait};
use berth_server::client::Client;
use berth_server::commands::{Command, Reply};
use berth_server::decisions::DecisionAnswer;
use berth_server::error::CommandError;
use berth_server::protocol::{DecisionDto, PaneDecisionDto};
use serde_json::Value;

/// The environment variable that sets how long `berth hook` waits for an answer, in seconds
/// (`--wait` overrides it; the default is per agent).
pub const WAIT_ENV: &str = "BERTH_DECISION_WAIT";

/// How long the hook waits: `--wait`, else [`WAIT_ENV`], else the agent's default.
pub fn wait_for(kind: AgentKind, flag: Option<f64>) -> Duration {
    let env = std::env::var(WAIT_ENV).ok().and_then(|v| v.trim().parse::<f64>().ok());
    match flag.or(env) {
        Some(secs) if secs.is_finite() && secs >= 0.0 => Duration::from_secs_f64(secs.min(3600.0)),
        _ => default_wait(kind),
    }
}

/// Prints what the agent is told and exits as it expects.
fn reply(
    kind: AgentKind,
    payload: &Value,
    answer: Option<DecisionAnswer>,
    message: Option<&str>,
) -> ExitCode {
    let reply = agent_answer(kind, payload, answer, message);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(reply.stdout.as_bytes());
    let _ = out.flush();
    ExitCode::from(reply.exit)
}

/// The agent's fallback when Berth cannot hold the request (not in a pane, no server): no
/// decision, or `ask` for cursor.
pub fn fallback(kind: AgentKind, payload: &Value) -> ExitCode {
    reply(kind, payload, None, None)
}

/// `berth hook AGENT` for a permission request: holds it open in the pane until an answer, a
/// retraction or the wait's end, then prints the agent's answer (or its fallback).
pub fn hook_decision(
    socket: &Path,
    kind: AgentKind,
    pane: PaneId,
    payload: Value,
    wait: Duration,
) -> ExitCode {
    let outcome = Client::connect_with_timeout(socket, Duration::from_millis(800))
        .and_then(|mut c| c.request_decision(pane, kind, payload.clone(), wait));
    match outcome {
        Ok(outcome) => reply(kind, &payload, outcome.answer, outcome.message.as_deref()),
        Err(e) => {
            eprintln!("berth hook: {e}");
            fallback(kind, &payload)
        }
    }
}

/// `berth decide PANE allow|always|deny [--message M] [--id ID]`.
pub fn decide(
    socket: &Path,
    pane: &str,
    answer: &str,
    message: Option<String>,
    id: Option<&str>,
) -> Result<ExitCode> {
    let pane = PaneId::parse(pane).map_err(CommandError::from)?;
    let answer = DecisionAnswer::parse(answer)
        .with_context(|| format!("unknown answer {answer:?}: give allow, always or deny"))?;
    let id = id.map(DecisionId::parse).transpose().map_err(CommandError::from)?;
    let mut client = Client::connect(socket)?;
    match client.execute(Command::Decide { pane, answer, message, id })? {
        Reply::Decided { id, .. } => outln!("{id} {}", answer.as_str()),
        other => anyhow::bail!("the server gave an unexpected answer: {other:?}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `berth decisions [--json]`.
pub fn list(socket: &Path, as_json: bool) -> Result<ExitCode> {
    let mut client = Client::connect(socket)?;
    let list = match client.execute(Command::Decisions)? {
        Reply::Decisions(list) => list,
        other => anyhow::bail!("the server gave an unexpected answer: {other:?}"),
    };
    let dtos: Vec<PaneDecisionDto> = list
        .iter()
        .map(|(pane, d)| PaneDecisionDto {
            pane_id: pane.to_string(),
            decision: DecisionDto::from(d),
        })
        .collect();
    if as_json {
        let value = serde_json::json!({ "decisions": dtos });
        outln!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = crate::out::stdout();
    for entry in &dtos {
        let d = &entry.decision;
        let state = if d.answerable { "answerable" } else { "not answerable" };
        let options: Vec<&str> = d.options.iter().map(|o| o.id.as_str()).collect();
        writeln!(
            out,
            "{}  {}  {:<8} {:<14} [{}]  {}",
            entry.pane_id,
            d.id,
            d.agent,
            state,
            options.join("|"),
            d.prompt
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
