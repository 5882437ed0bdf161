//! The tools `berth mcp` offers, each with its argument schema (derived from the argument
//! types, with `deny_unknown_fields`) and one call (or a loop of them) to the Berth server.
//!
//! Every refusal is a tool result marked as an error, with the words for the agent: arguments
//! the schema or Berth refuses (a bad id, an unknown task or pane) start "bad arguments:" (the
//! SDK's own "failed to deserialize parameters" for what does not fit the schema); what Berth
//! refuses to do (not permitted, the person declined, a timeout, the server gone) says why.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use berth_engine::ids::PaneId;
use berth_server::client::ClientError;
use berth_server::commands::{Command, ReadSpec, Reply};
use berth_server::protocol::encode_reply;
use berth_server::tasks::request::{FinishParams, ListParams, StartParams, TaskRef, TaskRequest};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProgressNotificationParam, RequestMetaObject,
    ServerCapabilities, ServerConfig,
};
use rmcp::{tool, tool_handler, tool_router, ErrorData, Peer, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::link::{Failure, Link};

/// How long one `task.wait` slice waits before `wait_task` reports progress.
const WAIT_SLICE: Duration = Duration::from_secs(2);

/// `wait_task`'s default and longest wait.
const WAIT_DEFAULT_S: u64 = 600;
pub const WAIT_MAX_S: u64 = 3600;

/// The most lines `read_pane` returns.
const MAX_LINES: u32 = 5000;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `read_pane`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadPaneArgs {
    /// The pane's id (`pane_…`, from `status`).
    pub pane: String,
    /// The last N lines of scrollback and screen (1 to 5000); without it, the screen.
    #[serde(default)]
    pub lines: Option<u32>,
}

/// `search_pane`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchPaneArgs {
    /// The pane's id.
    pub pane: String,
    /// A regular expression (searched literally if it is not one); case is ignored unless it
    /// has an upper-case letter.
    pub query: String,
}

/// `start_task`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartTaskArgs {
    /// An absolute directory inside the git checkout to work on (the caller's own repository).
    pub repo: PathBuf,
    /// The worker agent: claude, codex, opencode, cursor.
    pub agent: String,
    /// What the worker is to do.
    pub objective: String,
    /// What it must not do.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// How to tell it is done.
    #[serde(default)]
    pub acceptance: Vec<String>,
    /// The commit or branch to start from (default HEAD).
    #[serde(default)]
    pub base: Option<String>,
    /// A short label for the task (default: the objective's first line).
    #[serde(default)]
    pub label: Option<String>,
    /// The command that runs the worker (default: the agent's own program).
    #[serde(default)]
    pub command: Vec<String>,
    /// Seconds to wait for the worker to be ready (default 30).
    #[serde(default)]
    pub ready_timeout_s: Option<u64>,
}

/// `wait_task`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitTaskArgs {
    /// The task's id (`task_…`).
    pub task_id: String,
    /// `terminal` (default: completed, failed, rejected, canceled) or `input_required` (also
    /// stop when the worker waits on a person).
    #[serde(default)]
    pub until: Option<WaitFor>,
    /// Seconds to wait at most (default 600, at most 3600).
    #[serde(default)]
    pub timeout_s: Option<u64>,
}

/// What `wait_task` waits for.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WaitFor {
    /// A terminal state.
    Terminal,
    /// A terminal state or `input_required`.
    InputRequired,
}

/// A task by id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    /// The task's id (`task_…`).
    pub task_id: String,
}

/// `task_diff`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskDiffArgs {
    /// The task's id.
    pub task_id: String,
    /// One file (relative to the worktree's top): its hunks; without it, the changed files.
    #[serde(default)]
    pub path: Option<String>,
    /// With `path`: the first hunk to return.
    #[serde(default)]
    pub offset: Option<usize>,
    /// With `path`: how many hunks at most (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `submit`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitArgs {
    /// The pane of the agent to prompt.
    pub pane: String,
    /// The prompt.
    pub prompt: String,
}

/// `finish_task`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishTaskArgs {
    /// The task's id.
    pub task_id: String,
    /// `merge` (its branch into the branch the checkout was on) or `discard`.
    pub action: FinishAction,
    /// With merge: one squashed commit instead of a merge commit.
    #[serde(default)]
    pub squash: bool,
}

/// What to do with a finished task.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FinishAction {
    /// Merge it.
    Merge,
    /// Throw the work away.
    Discard,
}

/// `notify`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyArgs {
    /// The notification's title.
    pub title: String,
    /// Its body.
    #[serde(default)]
    pub body: Option<String>,
}

/// The tools, over one link to the Berth server.
#[derive(Clone)]
pub struct BerthTools {
    link: Link,
    tool_router: ToolRouter<Self>,
}

fn text(value: &Value) -> CallToolResult {
    let body = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    CallToolResult::success(vec![ContentBlock::text(body)])
}

/// A tool's answer: the value, or the failure (bad arguments as such).
fn answer(result: Result<Value, Failure>) -> Result<CallToolResult, ErrorData> {
    match result {
        Ok(value) => Ok(text(&value)),
        Err(f) if f.is_bad_arguments() => Err(f.into_error()),
        Err(f) => Ok(CallToolResult::error(vec![ContentBlock::text(f.message())])),
    }
}

/// What a tool answers: bad arguments too are a result marked as an error (as the SDK answers
/// arguments that do not fit the schema, and as the protocol asks, so that the model can
/// correct its call), saying so.
fn settle(result: Result<CallToolResult, ErrorData>) -> CallToolResult {
    result.unwrap_or_else(|e| {
        CallToolResult::error(vec![ContentBlock::text(format!("bad arguments: {}", e.message))])
    })
}

fn bad(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

fn pane_arg(pane: &str) -> Result<PaneId, ErrorData> {
    PaneId::parse(pane).map_err(|e| bad(format!("pane {pane:?}: {e}")))
}

fn unexpected(reply: &Reply) -> ClientError {
    ClientError::Protocol(format!("unexpected answer {reply:?}"))
}

#[tool_router]
impl BerthTools {
    /// The tools over `link`.
    pub fn new(link: Link) -> BerthTools {
        BerthTools { link, tool_router: Self::tool_router() }
    }

    #[tool(
        description = "Berth's state: workspaces, tabs and panes (with each agent's kind, \
                       lifecycle and attention), pending decisions, and tasks.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn status(
        &self,
        Parameters(_): Parameters<NoArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                answer(
                    self.link
                        .call(&ct, |c| {
                            let state = encode_reply(&c.execute(Command::WorkspaceList)?);
                            let decisions = encode_reply(&c.execute(Command::Decisions)?);
                            let tasks = c.task_list(ListParams::default(), None)?;
                            Ok(json!({
                                "workspaces": state["workspaces"],
                                "decisions": decisions["decisions"],
                                "tasks": tasks,
                            }))
                        })
                        .await,
                )
            }
            .await,
        )
    }

    #[tool(
        description = "A pane's text, plain: its screen, or the last `lines` lines.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn read_pane(
        &self,
        Parameters(args): Parameters<ReadPaneArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let pane = pane_arg(&args.pane)?;
                if let Some(n) = args.lines.filter(|n| *n == 0 || *n > MAX_LINES) {
                    return Err(bad(format!("lines must be 1 to {MAX_LINES}, not {n}")));
                }
                let spec = ReadSpec { last: args.lines.map(|n| n as usize), ..ReadSpec::default() };
                let read = self
                    .link
                    .call(&ct, move |c| match c.execute(Command::PaneRead { pane, spec })? {
                        Reply::Read(view) => Ok(view.lines.join("\n")),
                        other => Err(unexpected(&other)),
                    })
                    .await;
                match read {
                    Ok(body) => Ok(CallToolResult::success(vec![ContentBlock::text(body)])),
                    Err(f) => answer(Err(f)),
                }
            }
            .await,
        )
    }

    #[tool(
        description = "Search a pane's scrollback and screen; the matching lines.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_pane(
        &self,
        Parameters(args): Parameters<SearchPaneArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let pane = pane_arg(&args.pane)?;
                if args.query.is_empty() {
                    return Err(bad("the query is empty"));
                }
                let request: berth_server::pane_search::SearchRequest =
                    serde_json::from_value(json!({
                        "pane_id": args.pane, "query": args.query, "all": true, "count": true,
                    }))
                    .map_err(|e| bad(e.to_string()))?;
                answer(self.link.call(&ct, move |c| matching_lines(c, pane, request)).await)
            }
            .await,
        )
    }

    #[tool(
        description = "Start a task: a worker agent in its own git worktree and branch, cut \
                       from `base`, given the objective, constraints and acceptance criteria. \
                       Answers the task (its id, branch, worktree). Allowed in the caller's \
                       own repository.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn start_task(
        &self,
        Parameters(args): Parameters<StartTaskArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let mut params = StartParams {
                    repo: args.repo,
                    agent: args.agent,
                    base: args.base,
                    label: args.label,
                    command: args.command,
                    ready_timeout_s: args.ready_timeout_s,
                    ..StartParams::default()
                };
                params.contract.objective = args.objective;
                params.contract.constraints = args.constraints;
                params.contract.acceptance = args.acceptance;
                let request = TaskRequest::Start(params);
                request.check().map_err(|e| bad(e.to_string()))?;
                answer(self.link.call(&ct, move |c| wire_json(&c.task(request, None)?)).await)
            }
            .await,
        )
    }

    #[tool(
        description = "Wait until a task is terminal (or, with until=input_required, also \
                       until its worker waits on a person), at most timeout_s seconds; answers \
                       the task with its state and the worker's report. Sends progress \
                       notifications while it waits.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn wait_task(
        &self,
        Parameters(args): Parameters<WaitTaskArgs>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let id = args.task_id.clone();
                berth_engine::ids::TaskId::parse(&id)
                    .map_err(|e| bad(format!("task {id:?}: {e}")))?;
                let limit_s = args.timeout_s.unwrap_or(WAIT_DEFAULT_S);
                if limit_s == 0 || limit_s > WAIT_MAX_S {
                    return Err(bad(format!("timeout_s must be 1 to {WAIT_MAX_S}, not {limit_s}")));
                }
                let until = match args.until.unwrap_or(WaitFor::Terminal) {
                    WaitFor::Terminal => "terminal",
                    WaitFor::InputRequired => "input_required",
                };
                let token = meta.get_progress_token();
                let limit = Duration::from_secs(limit_s);
                // One connection for the whole wait, in slices; between them the blocking
                // side says how long it has waited, and this side tells the client.
                let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(4);
                let task = id.clone();
                let work = self.link.call(&ct, move |c| {
                    let started = Instant::now();
                    loop {
                        let left = limit.saturating_sub(started.elapsed());
                        let slice = left.min(WAIT_SLICE).max(Duration::from_millis(1));
                        let wait = TaskRequest::Wait(berth_server::tasks::request::WaitParams {
                            task_id: task.clone(),
                            until: Some(until.into()),
                            timeout_ms: Some(slice.as_millis() as u64),
                        });
                        match c.task(wait, Some(slice + Duration::from_secs(30))) {
                            Err(e) if e.code() == Some("TIMEOUT") => {
                                if started.elapsed() >= limit {
                                    return Ok(Err(e.to_string()));
                                }
                                let note =
                                    format!("{e} (waited {} s)", started.elapsed().as_secs());
                                // Full: the client is slow to read; this one is dropped.
                                let _ = tx.try_send(note);
                            }
                            other => return other.and_then(|r| wire_json(&r)).map(Ok),
                        }
                    }
                });
                tokio::pin!(work);
                let started = Instant::now();
                let done = loop {
                    tokio::select! {
                        done = &mut work => break done,
                        Some(note) = rx.recv() => {
                            tracing::debug!(task = %id, "still waiting");
                            if let Some(token) = &token {
                                let elapsed = started.elapsed().as_secs_f64();
                                let note = ProgressNotificationParam::new(token.clone(), elapsed)
                                    .with_total(limit.as_secs_f64())
                                    .with_message(note);
                                let _ = peer.notify_progress(note).await;
                            }
                        }
                    }
                };
                match done {
                    Ok(Ok(record)) => Ok(text(&record)),
                    Ok(Err(still)) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                        "task {id} is not done after {limit_s} s: {still}; wait again, or look \
                         with show_task"
                    ))])),
                    Err(Failure::Cancelled) => {
                        Err(ErrorData::internal_error("cancelled by the client", None))
                    }
                    Err(f) => answer(Err(f)),
                }
            }
            .await,
        )
    }

    #[tool(
        description = "A task: its state, contract, the worker's report and evidence, and its \
                       diff stat (files changed, lines added and removed).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn show_task(
        &self,
        Parameters(args): Parameters<TaskArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let request = TaskRequest::Show(TaskRef { task_id: args.task_id.clone() });
                request.check().map_err(|e| bad(e.to_string()))?;
                let target = args.task_id;
                answer(
                    self.link
                        .call(&ct, move |c| {
                            let record = c.task_record(request, None)?;
                            let diff_stat = match git_files(c, &target) {
                                Ok(files) => files,
                                Err(e) => json!({ "error": e.to_string() }),
                            };
                            wire_json(&ShownTask { record, diff_stat })
                        })
                        .await,
                )
            }
            .await,
        )
    }

    #[tool(
        description = "A task's diff against its base: without `path`, the changed files with \
                       their line counts; with `path`, that file's hunks, `limit` at a time \
                       from `offset`.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn task_diff(
        &self,
        Parameters(args): Parameters<TaskDiffArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                use berth_server::gitctx::request::{DiffFileParams, GitRequest};
                berth_engine::ids::TaskId::parse(&args.task_id)
                    .map_err(|e| bad(format!("task {:?}: {e}", args.task_id)))?;
                let Some(path) = args.path else {
                    if args.offset.is_some() || args.limit.is_some() {
                        return Err(bad("offset and limit go with path (one file's hunks)"));
                    }
                    let target = args.task_id;
                    return answer(self.link.call(&ct, move |c| git_files(c, &target)).await);
                };
                let request = GitRequest::DiffFile(DiffFileParams {
                    target: args.task_id,
                    path,
                    offset: args.offset.unwrap_or(0),
                    limit: args.limit,
                    turn: None,
                });
                request.check().map_err(|e| bad(e.to_string()))?;
                answer(
                    self.link
                        .call(&ct, move |c| {
                            wire_json(&c.git(request, Some(Duration::from_secs(60)))?)
                        })
                        .await,
                )
            }
            .await,
        )
    }

    #[tool(
        description = "Submit a prompt to another agent's pane (pasted, then Enter). Unless \
                       the person let agents drive this workspace, Berth asks the person first \
                       and this waits for the answer.",
        annotations(read_only_hint = false, destructive_hint = true, open_world_hint = false)
    )]
    async fn submit(
        &self,
        Parameters(args): Parameters<SubmitArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let pane = pane_arg(&args.pane)?;
                if args.prompt.trim().is_empty() {
                    return Err(bad("the prompt is empty"));
                }
                let prompt = args.prompt;
                answer(
                    self.link
                        .call(&ct, move |c| {
                            // The person's answer may take long: no read timeout.
                            c.interrupter()?.set_read_timeout(None)?;
                            let reply = c.submit(pane, prompt, false)?;
                            serde_json::to_value(reply)
                                .map_err(|e| ClientError::Protocol(e.to_string()))
                        })
                        .await,
                )
            }
            .await,
        )
    }

    #[tool(
        description = "Merge a task's branch into the branch its checkout was on, or discard \
                       it; the worktree is removed. Berth asks the person first (unless they \
                       let agents drive this workspace) and this waits for the answer.",
        annotations(read_only_hint = false, destructive_hint = true, open_world_hint = false)
    )]
    async fn finish_task(
        &self,
        Parameters(args): Parameters<FinishTaskArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                let merge = args.action == FinishAction::Merge;
                if args.squash && !merge {
                    return Err(bad("squash goes with action merge"));
                }
                let request = TaskRequest::Finish(FinishParams {
                    task_id: args.task_id,
                    merge,
                    discard: !merge,
                    squash: args.squash,
                    ..FinishParams::default()
                });
                request.check().map_err(|e| bad(e.to_string()))?;
                answer(self.link.call(&ct, move |c| wire_json(&c.task(request, None)?)).await)
            }
            .await,
        )
    }

    #[tool(
        description = "Raise a notification for the person, from the calling agent's pane.",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    async fn notify(
        &self,
        Parameters(args): Parameters<NotifyArgs>,
        ct: CancellationToken,
    ) -> CallToolResult {
        settle(
            async {
                if args.title.trim().is_empty() {
                    return Err(bad("the title is empty"));
                }
                // No pane named: the Berth server takes the caller's own (by its ancestry).
                let cmd = Command::Notify {
                    pane: None,
                    title: args.title,
                    body: args.body.unwrap_or_default(),
                    source: "mcp".into(),
                };
                answer(
                    self.link
                        .call(&ct, move |c| match c.execute(cmd)? {
                            Reply::Notified { id } => Ok(json!({ "notification": id })),
                            other => Err(unexpected(&other)),
                        })
                        .await,
                )
            }
            .await,
        )
    }
}

/// The most matches `search_pane` answers with their lines.
const MAX_MATCHES: usize = 200;

/// A search's matches with the text of their lines: `{count, more, matches: [{line, text}]}`.
fn matching_lines(
    c: &mut berth_server::client::Client,
    pane: PaneId,
    request: berth_server::pane_search::SearchRequest,
) -> Result<Value, ClientError> {
    let reply = c.search(request)?;
    let mut seqs: Vec<u64> = reply.matches.iter().map(|m| m.start.seq).collect();
    seqs.dedup();
    let more = reply.more || seqs.len() > MAX_MATCHES;
    seqs.truncate(MAX_MATCHES);
    let lines = match seqs.first() {
        Some(&first) => {
            let spec = ReadSpec { since: Some(first), ..ReadSpec::default() };
            match c.execute(Command::PaneRead { pane, spec })? {
                Reply::Read(view) => Some(view),
                other => return Err(unexpected(&other)),
            }
        }
        None => None,
    };
    let matches: Vec<Value> = seqs
        .iter()
        .map(|seq| {
            let text = lines.as_ref().and_then(|v| {
                let at = usize::try_from(seq.checked_sub(v.first_seq)?).ok()?;
                v.lines.get(at).cloned()
            });
            json!({ "line": seq, "text": text })
        })
        .collect();
    Ok(json!({ "count": reply.count, "more": more, "matches": matches }))
}

/// A task's changed files (`diff.files`), as the tool answers them.
fn git_files(c: &mut berth_server::client::Client, target: &str) -> Result<Value, ClientError> {
    use berth_server::gitctx::request::DiffFilesParams;
    let params = DiffFilesParams { target: target.to_owned(), turn: None };
    wire_json(&c.diff_files(params, Some(Duration::from_secs(60)))?)
}

/// A typed answer as the JSON a tool answers (its keys sorted, as the wire has them).
fn wire_json<T: serde::Serialize>(answer: &T) -> Result<Value, ClientError> {
    serde_json::to_value(answer).map_err(|e| ClientError::Protocol(e.to_string()))
}

/// What `show_task` answers: the task's record, its fields at the top level, with its diff
/// stat (`diff.files`' answer, or `{error}`).
#[derive(serde::Serialize)]
struct ShownTask {
    #[serde(flatten)]
    record: berth_server::persist::task_record::TaskRecord,
    diff_stat: Value,
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BerthTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("berth", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Berth runs agents and shells in panes. start_task gives a worker agent its own \
                 git worktree; wait_task waits for its report; task_diff shows its work; \
                 finish_task merges or discards it once the person agrees.",
            )
    }
}
