//! `berth task …`: tasks in git worktrees (start, report, finish, ls, show, wait, cancel), each
//! one `task.*` request on the socket; the server does the git work.
//!
//! Exit codes: 0 success, 1 error (a refusal, or a task that failed to start), 3 `task wait`
//! timed out.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use berth_server::client::Client;
use berth_server::error::CommandError;
use berth_server::persist::task_record::{ArtifactRecord, TaskRecord};
use berth_server::tasks::model::Contract;
use berth_server::tasks::reply::{TaskListReply, TaskReply};
use berth_server::tasks::request::{
    CommentParams, FinishParams, ListParams, ReportParams, RevertParams, StartParams, TaskRef,
    TaskRequest, WaitParams,
};
use clap::{Args, Subcommand};

/// `berth task --help`'s end.
pub const TASK_HELP: &str = "\
Exit codes:
  0  success
  1  error, or a task that failed to start (its JSON says at which stage)
  3  `task wait`: timeout

Examples:
  berth task start --repo . --agent claude --objective 'Fix the flaky parser test'
  berth task wait task_3f… && berth task show task_3f…
  berth task finish task_3f… --merge        # or --discard
  berth task report --status completed --summary 'Parser fixed; tests pass'   # in the worker";

/// The exit code of a wait that timed out.
const EXIT_TIMEOUT: u8 = 3;

/// The task verbs.
#[derive(Subcommand, Debug)]
pub enum TaskVerb {
    /// Start an agent on a contract in its own worktree and branch, in a tab of the repo's
    /// workspace; prints the task once the agent has its prompt.
    #[command(after_help = START_HELP)]
    Start(Box<StartArgs>),
    /// From inside a task's worker pane (the server knows the task by the pane): report the
    /// task's result, once.
    #[command(
        after_help = "Example:\n  berth task report --status completed --summary 'Added the parser test' --artifact test=tests/parse.rs"
    )]
    Report(ReportArgs),
    /// Merge the task's branch into the target branch, or discard it; then remove the
    /// worktree and the branch Berth created.
    #[command(
        after_help = "A merge is refused when the source checkout is on another branch or has uncommitted\nchanges, or the task's worktree is dirty or locked (--force removes it anyway); a conflict\nis aborted and the files named.\n\nExamples:\n  berth task finish task_3f… --merge --squash\n  berth task finish task_3f… --merge --rebase\n  berth task finish task_3f… --discard"
    )]
    Finish(FinishArgs),
    /// List the tasks.
    Ls {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Only the tasks of this repo.
        #[arg(long)]
        repo: Option<PathBuf>,
    },
    /// Show one task.
    Show {
        /// The task.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Wait until a task is terminal (or needs input).
    Wait {
        /// The task.
        id: String,
        /// What to wait for.
        #[arg(long, default_value = "terminal", value_parser = ["terminal", "input_required"])]
        until: String,
        /// Give up after this many seconds (exit 3); default: as long as it takes.
        #[arg(long)]
        timeout: Option<f64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a task: its worker stops; its worktree stays (finish --discard removes it).
    Cancel {
        /// The task.
        id: String,
    },
    /// Put the task's worktree back to before a turn (default: its last checkpoint); what it
    /// undoes is checkpointed first, so nothing is lost.
    #[command(
        after_help = "Each turn's end records the worktree on refs/berth/tasks/<task>/turn-<n>; `berth diff TASK --turn N`\nshows one. The revert rewrites the files only: the index and HEAD stay.\n\nExample:\n  berth task revert-turn task_3f… --turn 2"
    )]
    RevertTurn {
        /// The task.
        id: String,
        /// The checkpoint to undo.
        #[arg(long)]
        turn: Option<u32>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A review comment on lines of a file; kept until `berth task send TASK` sends every
    /// kept comment to the worker as one prompt (or --send now).
    #[command(
        after_help = "Examples:\n  berth task comment task_3f… src/parse.rs:42 'this panics on empty input'\n  berth task comment task_3f… src/parse.rs:10-14 'use the helper' --send"
    )]
    Comment {
        /// The task.
        id: String,
        /// FILE:LINE or FILE:START-END (the line numbers of the task's version of the file).
        at: String,
        /// The comment.
        text: String,
        /// Send it now, with the comments kept before it, as one prompt.
        #[arg(long)]
        send: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Send the task's kept review comments to its worker as one prompt; the task works again.
    Send {
        /// The task.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `FILE:LINE` or `FILE:START-END`.
fn file_lines(at: &str) -> Result<(String, u64, Option<u64>)> {
    let Some((path, lines)) = at.rsplit_once(':') else {
        bail!("{at:?}: give FILE:LINE or FILE:START-END");
    };
    let (start, end) = match lines.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (lines, None),
    };
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .with_context(|| format!("{at:?}: {s:?} is not a line number (from 1)"))
    };
    let start = number(start)?;
    let end = end.map(number).transpose()?;
    if path.is_empty() {
        bail!("{at:?}: the file is missing (FILE:LINE)");
    }
    Ok((path.to_owned(), start, end))
}

const START_HELP: &str = "\
The worktree goes under $XDG_DATA_HOME/berth/worktrees/<repo>-<hash>/<slug> on a new branch
berth/<slug> cut from --base (default HEAD). The agent gets a prompt naming the task, its
branch and base, and the contract; it reports with `berth task report`.

Examples:
  berth task start --repo . --agent claude --objective 'Fix the flaky parser test' \\
      --accept 'cargo test passes' --request-id fix-parser-1
  berth task start --repo ~/code/api --agent codex --objective-file task.md --base origin/main";

#[derive(Args, Debug)]
pub struct StartArgs {
    /// The source checkout (any directory inside it).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// The agent kind: claude, codex, opencode, cursor or generic.
    #[arg(long)]
    agent: String,
    /// What the worker should do (1 byte to 32 KiB).
    #[arg(long, required_unless_present = "objective_file")]
    objective: Option<String>,
    /// Read the objective from a file.
    #[arg(long, conflicts_with = "objective")]
    objective_file: Option<PathBuf>,
    /// A constraint (repeatable).
    #[arg(long = "constraint")]
    constraints: Vec<String>,
    /// An acceptance criterion (repeatable).
    #[arg(long = "accept")]
    acceptance: Vec<String>,
    /// The expected output format.
    #[arg(long)]
    format: Option<String>,
    /// The commit to start from (default HEAD).
    #[arg(long)]
    base: Option<String>,
    /// Work on this branch instead of a new berth/<slug> (an existing one is never deleted).
    #[arg(long)]
    branch: Option<String>,
    /// A label.
    #[arg(long)]
    label: Option<String>,
    /// An idempotency key: the same key answers the same task, also after a restart.
    #[arg(long)]
    request_id: Option<String>,
    /// Seconds without output or hook before the task needs input (default 600; 0 off).
    #[arg(long)]
    silence: Option<u64>,
    /// Seconds to wait for the agent to be ready (default 30).
    #[arg(long)]
    ready_timeout: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// The agent's command (default: the kind's own program), after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// completed, failed or rejected.
    #[arg(long, value_parser = ["completed", "failed", "rejected"])]
    status: String,
    /// What was done (1 byte to 8 KiB).
    #[arg(long)]
    summary: String,
    /// NAME=PATH (repeatable).
    #[arg(long = "artifact")]
    artifacts: Vec<String>,
    /// Evidence (test output, a link).
    #[arg(long)]
    evidence: Option<String>,
    /// The task, when not reporting from its worker pane.
    #[arg(long)]
    task: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct FinishArgs {
    /// The task.
    id: String,
    /// Merge the task branch into the target.
    #[arg(long, required_unless_present = "discard", conflicts_with = "discard")]
    merge: bool,
    /// Throw the work away.
    #[arg(long)]
    discard: bool,
    /// The branch to merge into (default: the source's branch when the task started).
    #[arg(long)]
    target: Option<String>,
    /// One squashed commit instead of a merge commit (its message: the label and the summary).
    #[arg(long, conflicts_with_all = ["rebase", "ff_only"])]
    squash: bool,
    /// Rebase the task's branch onto the target in its worktree, then fast-forward.
    #[arg(long, conflicts_with = "ff_only")]
    rebase: bool,
    /// Only fast-forward the target (refused when it moved on).
    #[arg(long)]
    ff_only: bool,
    /// Remove a dirty or locked worktree; merge a task that is not completed.
    #[arg(long)]
    force: bool,
    /// Keep the task's checkpoint refs (refs/berth/tasks/<task>/…) after it is finished.
    #[arg(long)]
    keep_checkpoints: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs a task verb against `client`.
pub fn run(client: Client, verb: TaskVerb) -> Result<ExitCode> {
    let mut client = client;
    match verb {
        TaskVerb::Start(a) => {
            let a = *a;
            let objective = match (a.objective, a.objective_file) {
                (Some(o), _) => o,
                (None, Some(f)) => std::fs::read_to_string(&f)
                    .with_context(|| format!("cannot read {}", f.display()))?,
                (None, None) => bail!("give --objective or --objective-file"),
            };
            let repo = std::path::absolute(&a.repo)
                .with_context(|| format!("--repo {}", a.repo.display()))?;
            let params = StartParams {
                repo,
                agent: a.agent,
                command: a.command,
                contract: Contract {
                    objective,
                    constraints: a.constraints,
                    acceptance: a.acceptance,
                    output_format: a.format,
                },
                base: a.base,
                branch: a.branch,
                label: a.label,
                request_id: a.request_id,
                silence_s: a.silence,
                ready_timeout_s: a.ready_timeout,
            };
            let task = client.task_record(TaskRequest::Start(params), None)?;
            show(&task, a.json)?;
            Ok(if task.state == "failed" { ExitCode::FAILURE } else { ExitCode::SUCCESS })
        }
        TaskVerb::Report(a) => {
            let artifacts = a
                .artifacts
                .iter()
                .map(|s| match s.split_once('=') {
                    Some((name, path)) if !name.is_empty() => {
                        Ok(ArtifactRecord { name: name.into(), path: path.into() })
                    }
                    _ => bail!("--artifact {s:?}: give NAME=PATH"),
                })
                .collect::<Result<Vec<_>>>()?;
            let params = ReportParams {
                task_id: a.task,
                status: a.status,
                summary: a.summary,
                artifacts,
                evidence: a.evidence,
            };
            let task =
                client.task_record(TaskRequest::Report(params), Some(Duration::from_secs(30)))?;
            show(&task, a.json)?;
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::Finish(a) => {
            let params = FinishParams {
                task_id: a.id,
                merge: a.merge,
                discard: a.discard,
                target: a.target,
                squash: a.squash,
                rebase: a.rebase,
                ff_only: a.ff_only,
                force: a.force,
                keep_checkpoints: a.keep_checkpoints,
            };
            let task = client.task_record(TaskRequest::Finish(params), None)?;
            show(&task, a.json)?;
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::Ls { json, repo } => {
            let repo = repo.map(std::path::absolute).transpose()?;
            let tasks = client.task_list(ListParams { repo }, None)?;
            if json {
                outln!("{}", pretty(&TaskListReply { tasks })?);
            } else {
                for t in &tasks {
                    outln!(
                        "{}  {:<14} {:<9} {}  {}",
                        t.id,
                        t.state,
                        t.disposition.outcome,
                        t.branch,
                        t.label
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::Show { id, json } => {
            let task = client.task_record(TaskRequest::Show(TaskRef { task_id: id }), None)?;
            show(&task, json)?;
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::Wait { id, until, timeout, json } => {
            let timeout_ms = match timeout {
                Some(t) if t.is_finite() && t >= 0.0 => Some((t.min(1e6) * 1000.0) as u64),
                Some(_) => bail!("--timeout must be a number of seconds"),
                None => None,
            };
            let params = WaitParams { task_id: id, until: Some(until), timeout_ms };
            match client.task_record(TaskRequest::Wait(params), None) {
                Ok(task) => {
                    show(&task, json)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) if e.code() == Some(CommandError::Timeout(String::new()).code()) => {
                    eprintln!("berth: {e}");
                    Ok(ExitCode::from(EXIT_TIMEOUT))
                }
                Err(e) => Err(e.into()),
            }
        }
        TaskVerb::Cancel { id } => {
            let task = client.task_record(TaskRequest::Cancel(TaskRef { task_id: id }), None)?;
            show(&task, false)?;
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::RevertTurn { id, turn, json } => {
            let params = RevertParams { task_id: id, turn };
            let answer = match client.task(TaskRequest::RevertTurn(params), None)? {
                TaskReply::Reverted(reverted) => reverted,
                other => bail!("the server answered task.revert_turn with {}", other.shape()),
            };
            if json {
                outln!("{}", pretty(&answer)?);
            } else {
                outln!(
                    "turn {} undone; what it held is checkpoint {} (berth diff --turn {}), \
                     the worktree now checkpoint {}",
                    answer.turn,
                    answer.saved.turn,
                    answer.saved.turn,
                    answer.now.turn
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::Comment { id, at, text, send, json } => {
            let (path, start, end) = file_lines(&at)?;
            let params = CommentParams { task_id: id, path, start, end, text, send };
            let answer = client.task(TaskRequest::Comment(params), None)?;
            if json {
                outln!("{}", pretty(&answer)?);
                return Ok(ExitCode::SUCCESS);
            }
            match answer {
                TaskReply::CommentsSent(sent) => {
                    outln!("{} comment(s) sent to the worker", sent.sent);
                }
                TaskReply::Task(task) => {
                    let n = task.comments.len();
                    outln!("{n} comment(s) kept; `berth task send {}` sends them", task.id);
                }
                other => bail!("the server answered task.comment with {}", other.shape()),
            }
            Ok(ExitCode::SUCCESS)
        }
        TaskVerb::Send { id, json } => {
            let sent =
                match client.task(TaskRequest::SendComments(TaskRef { task_id: id }), None)? {
                    TaskReply::CommentsSent(sent) => sent,
                    other => bail!("the server answered task.send_comments with {}", other.shape()),
                };
            if json {
                outln!("{}", pretty(&sent)?);
            } else {
                outln!("{} comment(s) sent to the worker", sent.sent);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// An answer as `--json` prints it: pretty, its keys in the order the wire's JSON has them
/// (sorted).
fn pretty<T: serde::Serialize>(answer: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(&serde_json::to_value(answer)?)?)
}

/// Prints a task: JSON, or a few lines.
fn show(task: &TaskRecord, json: bool) -> Result<()> {
    if json {
        outln!("{}", pretty(task)?);
        return Ok(());
    }
    outln!("{}  {}", task.id, task.state);
    outln!("  branch    {} (base {})", task.branch, task.base_sha);
    outln!("  worktree  {}", task.worktree_path);
    if let Some(pane) = &task.pane_id {
        outln!("  pane      {pane}");
    }
    if let Some(reason) = &task.status_reason {
        outln!("  reason    {reason}");
    }
    if let Some(result) = &task.result {
        outln!("  result    {}: {}", result.status, result.summary);
    }
    let outcome = &task.disposition.outcome;
    if outcome != "none" {
        let sha = task.disposition.merged_sha.as_deref().unwrap_or("");
        outln!("  finished  {outcome} {sha}");
    }
    if let Some(error) = &task.finish_error {
        outln!("  error     {error}");
    }
    for c in &task.checkpoints {
        outln!("  turn {} {} {}", c.turn, c.kind, c.sha);
    }
    for c in &task.conflicts {
        outln!("  conflicts with {} in {}", c.task, c.files.join(", "));
    }
    Ok(())
}
