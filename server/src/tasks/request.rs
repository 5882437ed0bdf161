//! What the `task.*` methods ask: their params as wire DTOs, checked where they are decoded
//! (`protocol`) before anything runs. A leaf the protocol and the client name without reaching
//! the Store; the method names themselves are spelled only in `protocol`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::model::{
    check_contract, check_label, Contract, MAX_ARTIFACTS, MAX_COMMENT_BYTES, MAX_COMMENT_LINE,
    MAX_READY_TIMEOUT_S, MAX_SILENCE_S, MAX_SUMMARY_BYTES,
};
use crate::error::CommandError;
use crate::persist::task_record::ArtifactRecord;

/// A `task.*` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskRequest {
    /// `task.start`.
    Start(StartParams),
    /// `task.report` (from inside the worker pane).
    Report(ReportParams),
    /// `task.finish`.
    Finish(FinishParams),
    /// `task.list`.
    List(ListParams),
    /// `task.show`.
    Show(TaskRef),
    /// `task.cancel`.
    Cancel(TaskRef),
    /// `task.wait`.
    Wait(WaitParams),
    /// `task.revert_turn`: the worktree back to before a turn (what it undoes checkpointed).
    RevertTurn(RevertParams),
    /// `task.comment`: a review comment on lines of a file, kept until sent (or sent now).
    Comment(CommentParams),
    /// `task.send_comments`: every kept comment to the worker as one prompt.
    SendComments(TaskRef),
}

/// `task.revert_turn`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevertParams {
    /// The task.
    pub task_id: String,
    /// The checkpoint to undo; default: the last one.
    #[serde(default)]
    pub turn: Option<u32>,
}

/// `task.comment`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommentParams {
    /// The task.
    pub task_id: String,
    /// The file, relative to the worktree's top.
    pub path: String,
    /// The first line, from 1.
    pub start: u64,
    /// The last line (default `start`).
    #[serde(default)]
    pub end: Option<u64>,
    /// The comment.
    pub text: String,
    /// Send it, with every comment kept before it, as one prompt now.
    #[serde(default)]
    pub send: bool,
}

/// `task.start`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartParams {
    /// A directory inside the source checkout (absolute).
    pub repo: PathBuf,
    /// The agent kind (`claude`, `codex`, `opencode`, `cursor`, `generic`).
    pub agent: String,
    /// The command that runs the agent; default: the kind's own program.
    #[serde(default)]
    pub command: Vec<String>,
    /// The contract.
    pub contract: Contract,
    /// The base to cut the worktree from; default `HEAD`.
    #[serde(default)]
    pub base: Option<String>,
    /// A branch to work on instead of a new `berth/<slug>` (an existing one is kept).
    #[serde(default)]
    pub branch: Option<String>,
    /// A human label; default: the objective's first line.
    #[serde(default)]
    pub label: Option<String>,
    /// The caller's idempotency key.
    #[serde(default)]
    pub request_id: Option<String>,
    /// Seconds without output or hook before `input_required` (default 600, 0 off).
    #[serde(default)]
    pub silence_s: Option<u64>,
    /// Seconds to wait for the agent to be ready (default 30).
    #[serde(default)]
    pub ready_timeout_s: Option<u64>,
}

/// `task.report`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportParams {
    /// The task; default: the reporter's own `BERTH_TASK`.
    #[serde(default)]
    pub task_id: Option<String>,
    /// `completed`, `failed` or `rejected`.
    pub status: String,
    /// What was done.
    pub summary: String,
    /// Named paths.
    #[serde(default)]
    pub artifacts: Vec<ArtifactRecord>,
    /// Free-form evidence.
    #[serde(default)]
    pub evidence: Option<String>,
}

/// `task.finish`'s params: exactly one of `merge` and `discard`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishParams {
    /// The task.
    pub task_id: String,
    /// Merge the task branch into the target.
    #[serde(default)]
    pub merge: bool,
    /// Throw the work away.
    #[serde(default)]
    pub discard: bool,
    /// The branch to merge into; default: the source's branch at start.
    #[serde(default)]
    pub target: Option<String>,
    /// One squashed commit instead of a merge commit.
    #[serde(default)]
    pub squash: bool,
    /// Rebase the task's branch onto the target (in its worktree), then fast-forward.
    #[serde(default)]
    pub rebase: bool,
    /// Only a fast-forward of the target (refused when the target moved on).
    #[serde(default)]
    pub ff_only: bool,
    /// Remove a dirty or locked worktree; merge a task that is not completed.
    #[serde(default)]
    pub force: bool,
    /// Keep the task's checkpoint refs (`refs/berth/tasks/<task>/…`) after it is finished.
    #[serde(default)]
    pub keep_checkpoints: bool,
}

/// `task.list`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only the tasks of this repo (any directory inside it).
    #[serde(default)]
    pub repo: Option<PathBuf>,
}

/// One task by id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    /// The task.
    pub task_id: String,
}

/// `task.wait`'s params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    /// The task.
    pub task_id: String,
    /// `terminal` (default) or `input_required`.
    #[serde(default)]
    pub until: Option<String>,
    /// Give up (`TIMEOUT`) after this many ms.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

fn bad(message: String) -> CommandError {
    CommandError::BadParams(message)
}

fn task_id(id: &str) -> Result<(), CommandError> {
    berth_engine::ids::TaskId::parse(id)?;
    Ok(())
}

/// A file named inside a work tree (a review comment's, a diff's): relative, no `..`, no NUL
/// (git keeps none in a path; other control characters a file name may hold), at most 4 KiB.
pub fn check_worktree_path(path: &str) -> Result<(), CommandError> {
    let p = std::path::Path::new(path);
    if path.is_empty()
        || path.len() > 4096
        || p.is_absolute()
        || p.components().any(|c| matches!(c, std::path::Component::ParentDir))
        || path.contains('\0')
    {
        let shown: String = path.chars().take(200).collect();
        return Err(bad(format!(
            "{shown:?} is not a path inside the work tree (relative to its top, no .., no NUL, \
             at most 4096 bytes)"
        )));
    }
    Ok(())
}

impl TaskRequest {
    /// Checks what can be checked without the Store or git; a refusal creates nothing.
    pub fn check(&self) -> Result<(), CommandError> {
        match self {
            TaskRequest::Start(p) => {
                if !p.repo.is_absolute() {
                    return Err(bad(format!("repo {:?} must be an absolute path", p.repo)));
                }
                check_contract(&p.contract).map_err(bad)?;
                if let Some(label) = &p.label {
                    check_label(label).map_err(bad)?;
                }
                if berth_engine::agents::AgentKind::parse(&p.agent).is_none() {
                    return Err(bad(format!(
                        "unknown agent {:?} (claude, codex, opencode, cursor, generic)",
                        p.agent
                    )));
                }
                if p.agent == "generic" && p.command.is_empty() {
                    return Err(bad("a generic agent needs its command".into()));
                }
                if p.command.len() > 64 || p.command.iter().any(|a| a.len() > 4096) {
                    return Err(bad("the command must hold at most 64 short arguments".into()));
                }
                if let Some(key) = &p.request_id {
                    if key.is_empty() || key.len() > 128 || key.chars().any(char::is_control) {
                        return Err(bad("a request id is 1 to 128 printable characters".into()));
                    }
                }
                for (what, value, max) in [
                    ("ready_timeout_s", p.ready_timeout_s, MAX_READY_TIMEOUT_S),
                    ("silence_s", p.silence_s, MAX_SILENCE_S),
                ] {
                    if value.is_some_and(|v| v > max) {
                        return Err(bad(format!("{what} is at most {max} (seconds)")));
                    }
                }
                for (what, v) in [("base", &p.base), ("branch", &p.branch)] {
                    if let Some(v) = v {
                        if v.is_empty() || v.starts_with('-') || v.len() > 256 {
                            return Err(bad(format!("the {what} {v:?} is not a git ref")));
                        }
                    }
                }
                Ok(())
            }
            TaskRequest::Report(p) => {
                if let Some(id) = &p.task_id {
                    task_id(id)?;
                }
                if !matches!(p.status.as_str(), "completed" | "failed" | "rejected") {
                    return Err(bad(format!(
                        "unknown status {:?} (completed, failed, rejected)",
                        p.status
                    )));
                }
                if p.summary.trim().is_empty() || p.summary.len() > MAX_SUMMARY_BYTES {
                    return Err(bad(format!("the summary must be 1 to {MAX_SUMMARY_BYTES} bytes")));
                }
                if p.artifacts.len() > MAX_ARTIFACTS
                    || p.artifacts
                        .iter()
                        .any(|a| a.name.is_empty() || a.name.len() > 256 || a.path.len() > 4096)
                {
                    return Err(bad(format!(
                        "at most {MAX_ARTIFACTS} artifacts, each NAME=PATH with a name"
                    )));
                }
                if p.evidence.as_ref().is_some_and(|e| e.len() > MAX_SUMMARY_BYTES) {
                    return Err(bad(format!(
                        "the evidence is longer than {MAX_SUMMARY_BYTES} bytes"
                    )));
                }
                Ok(())
            }
            TaskRequest::Finish(p) => {
                task_id(&p.task_id)?;
                if p.merge == p.discard {
                    return Err(bad("finish a task with either --merge or --discard".into()));
                }
                if p.discard && (p.target.is_some() || p.squash || p.rebase || p.ff_only) {
                    return Err(bad(
                        "--target, --squash, --rebase and --ff-only go with --merge".into()
                    ));
                }
                if [p.squash, p.rebase, p.ff_only].iter().filter(|w| **w).count() > 1 {
                    return Err(bad("merge one way: --squash, --rebase or --ff-only".into()));
                }
                if p.target.as_ref().is_some_and(|t| t.is_empty() || t.starts_with('-')) {
                    return Err(bad("the target is not a branch name".into()));
                }
                Ok(())
            }
            TaskRequest::List(p) => match &p.repo {
                Some(r) if !r.is_absolute() => Err(bad(format!("repo {r:?} must be absolute"))),
                _ => Ok(()),
            },
            TaskRequest::Show(r) | TaskRequest::Cancel(r) | TaskRequest::SendComments(r) => {
                task_id(&r.task_id)
            }
            TaskRequest::RevertTurn(p) => {
                task_id(&p.task_id)?;
                if p.turn == Some(0) {
                    return Err(bad("checkpoints are numbered from 1".into()));
                }
                Ok(())
            }
            TaskRequest::Comment(p) => {
                task_id(&p.task_id)?;
                check_worktree_path(&p.path)?;
                if p.path.chars().any(char::is_control) {
                    // The path goes into the worker's prompt.
                    return Err(bad(format!(
                        "{:?} is not a path inside the task's worktree a comment can name (no \
                         control characters)",
                        p.path
                    )));
                }
                if p.start == 0 || p.end.is_some_and(|e| e < p.start) {
                    return Err(bad("lines are numbered from 1, and a range is START-END \
                                    with END not before START"
                        .into()));
                }
                if p.end.unwrap_or(p.start) > MAX_COMMENT_LINE {
                    return Err(bad(format!("lines are numbered 1 to {MAX_COMMENT_LINE}")));
                }
                if p.text.trim().is_empty()
                    || p.text.len() > MAX_COMMENT_BYTES
                    || p.text.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
                {
                    return Err(bad(format!(
                        "a comment is 1 to {MAX_COMMENT_BYTES} bytes of text (no control \
                         characters but newlines and tabs)"
                    )));
                }
                Ok(())
            }
            TaskRequest::Wait(p) => {
                task_id(&p.task_id)?;
                match p.until.as_deref() {
                    None | Some("terminal" | "input_required") => Ok(()),
                    Some(other) => Err(bad(format!(
                        "unknown state {other:?} to wait for (terminal, input_required)"
                    ))),
                }
            }
        }
    }
}
