//! `task.start`: the base resolved to a SHA, a worktree on its own branch under
//! `$XDG_DATA_HOME/berth/worktrees/`, a tab in the repo's workspace running the agent with
//! `BERTH_TASK`, a wait for it to be ready (`pane.wait`'s code), the composed prompt submitted
//! through `pane.submit`'s code path, and the task `working`.
//!
//! Git runs on the blocking pool and the waits on the runtime; the Store is locked only to
//! look or to execute one `TaskOp`. A failure after the task is recorded moves it to `failed`
//! with `{stage, error}` and removes what this start made (pane, worktree, branch). The work
//! runs as a task of its own, so a client that hangs up does not leave it half done.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::ids::{PaneId, TaskId};

use super::git;
use super::model::{compose_prompt, no_disposition, slug, stage_evidence, Task, TaskState};
use super::ops::{apply, lock, TaskOp};
use super::request::StartParams;
use crate::agents::work::WaitUntil;
use crate::commands::{Command, SpawnRequest};
use crate::error::CommandError;
use crate::persist::stamp::now_ms;
use crate::persist::task_record::TaskRecord;
use crate::store::Store;

/// How long a start waits for the agent to be ready, unless told.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Seconds of worker silence before `input_required`, unless told.
pub const DEFAULT_SILENCE_S: u64 = 600;

/// Where tasks' worktrees live: `$XDG_DATA_HOME/berth/worktrees` (`~/.local/share/…`).
pub fn worktrees_root(home: &Path) -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".local/share"));
    data.join("berth/worktrees")
}

/// A stable short hash of a path (FNV-1a, 8 hex digits): repos of the same name stay apart.
fn short_hash(path: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", h as u32)
}

/// What git said about the source before anything is made.
struct Prepared {
    repo: PathBuf,
    base_ref: String,
    base_sha: String,
    target_branch: Option<String>,
    branch: String,
    preexisting: bool,
}

/// Resolves the repo, the base and the branch; an error here is the caller's input.
fn prepare(p: &StartParams, id: &TaskId, label: &str) -> Result<Prepared, CommandError> {
    let bad = CommandError::BadParams;
    let repo = git::toplevel(&p.repo).map_err(bad)?;
    let branch = match &p.branch {
        Some(b) => b.clone(),
        None => format!("berth/{}", slug(id, label)),
    };
    if branch.starts_with('-') {
        return Err(bad(format!("{branch:?} is not a valid branch name")));
    }
    git::git_ok(&repo, &["check-ref-format", "--branch", &branch])
        .map_err(|_| bad(format!("{branch:?} is not a valid branch name")))?;
    let preexisting = git::branch_exists(&repo, &branch);
    let base_ref = match (&p.base, preexisting) {
        (Some(base), _) => base.clone(),
        (None, true) => branch.clone(),
        (None, false) => "HEAD".into(),
    };
    let base_sha = git::resolve_commit(&repo, &base_ref).map_err(bad)?;
    if preexisting && p.base.is_some() {
        let tip = git::resolve_commit(&repo, &branch).map_err(bad)?;
        if tip != base_sha {
            return Err(bad(format!(
                "branch {branch} exists at {tip}, not at the base {base_ref}; leave out --base \
                 to work on it as it is"
            )));
        }
    }
    Ok(Prepared {
        target_branch: git::current_branch(&repo),
        repo,
        base_ref,
        base_sha,
        branch,
        preexisting,
    })
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CommandError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::Internal(format!("a git step failed to run: {e}")))
}

/// Starts a task; the future yields its record (`working`, or `failed` with the stage that
/// failed), or an error when the input was refused and nothing was made.
pub fn start(
    store: &Arc<Mutex<Store>>,
    params: StartParams,
    made_by: crate::trust::Provenance,
) -> impl std::future::Future<Output = Result<TaskRecord, CommandError>> + Send + 'static {
    let store = store.clone();
    let work = tokio::spawn(run(store, params, made_by));
    async move { work.await.map_err(|e| CommandError::Internal(format!("the start failed: {e}")))? }
}

async fn run(
    store: Arc<Mutex<Store>>,
    p: StartParams,
    made_by: crate::trust::Provenance,
) -> Result<TaskRecord, CommandError> {
    if let Some(key) = &p.request_id {
        let found = lock(&store).task_by_request(key);
        if let Some(id) = found {
            return lock(&store).task_record(&id);
        }
    }
    let id = TaskId::new();
    let label = match &p.label {
        Some(l) if !l.trim().is_empty() => l.trim().to_owned(),
        _ => p
            .contract
            .objective
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("task")
            .trim()
            .chars()
            .filter(|c| !c.is_control())
            .take(80)
            .collect(),
    };
    // A label (and the tab's title) shows no bidirectional overrides.
    let label = crate::pane::clean_title(&label);
    let prepared = {
        let (p, id, label) = (p.clone(), id.clone(), label.clone());
        blocking(move || prepare(&p, &id, &label)).await??
    };
    let home = lock(&store).config.home.clone();
    let dir_name = format!(
        "{}-{}",
        prepared.repo.file_name().map_or("repo".into(), |n| n.to_string_lossy().into_owned()),
        short_hash(&prepared.repo)
    );
    let worktree = worktrees_root(&home).join(dir_name).join(slug(&id, &label));
    let now = now_ms();
    let record = TaskRecord {
        label: label.clone(),
        contract: p.contract.clone(),
        agent: p.agent.clone(),
        source_repo: prepared.repo.display().to_string(),
        target_branch: prepared.target_branch.clone(),
        worktree_path: worktree.display().to_string(),
        branch: prepared.branch.clone(),
        preexisting_branch: prepared.preexisting,
        base_ref: prepared.base_ref.clone(),
        base_sha: prepared.base_sha.clone(),
        disposition: no_disposition(),
        client_request_id: p.request_id.clone(),
        silence_s: p.silence_s.unwrap_or(DEFAULT_SILENCE_S),
        created_at: now,
        updated_at: now,
        ..TaskRecord::default()
    };
    match apply(&store, TaskOp::Register(Box::new(Task::new(id.clone(), record)))) {
        Ok(()) => {}
        // Another start with the same key won the race: answer with its task.
        Err(CommandError::Conflict(_)) if p.request_id.is_some() => {
            let key = p.request_id.as_deref().unwrap_or_default();
            let found = lock(&store).task_by_request(key);
            if let Some(existing) = found {
                return lock(&store).task_record(&existing);
            }
            return Err(CommandError::Internal("a task's request id vanished".into()));
        }
        Err(e) => return Err(e),
    }
    tracing::info!(task = %id, branch = %prepared.branch, "task registered");

    // The worktree.
    let made = {
        let (repo, wt, branch, sha, pre) = (
            prepared.repo.clone(),
            worktree.clone(),
            prepared.branch.clone(),
            prepared.base_sha.clone(),
            prepared.preexisting,
        );
        blocking(move || {
            git::with_repo_lock(&repo, || add_worktree(&repo, &wt, &branch, &sha, pre))
        })
        .await?
    };
    if let Err(e) = made {
        return fail(&store, &id, "worktree", e, None, &prepared, &worktree).await;
    }

    // The worker's tab.
    let program = match p.agent.as_str() {
        "cursor" => "cursor-agent".to_owned(),
        other => other.to_owned(),
    };
    let argv = if p.command.is_empty() { vec![program] } else { p.command.clone() };
    let spawn = SpawnRequest {
        argv,
        cwd: Some(worktree.clone()),
        env: vec![("BERTH_TASK".into(), id.to_string())],
        title: None,
    };
    // The worker's pane is made by whoever asked for the task (`trust`).
    let open = TaskOp::OpenTab { task: id.clone(), spawn, repo: prepared.repo.clone() };
    let opened = lock(&store)
        .acting_as(made_by, |s| s.execute(crate::store::Internal::Task(open)))
        .map(|_| ());
    if let Err(e) = opened {
        return fail(&store, &id, "spawn", e.to_string(), None, &prepared, &worktree).await;
    }
    let pane = lock(&store).task_record(&id)?.pane_id.and_then(|p| PaneId::parse(&p).ok());
    let Some(pane) = pane else {
        return fail(
            &store,
            &id,
            "spawn",
            "the worker pane is gone".into(),
            None,
            &prepared,
            &worktree,
        )
        .await;
    };

    // Ready: the agent is known as the kind asked for (its hook, or its command line) and
    // waits for input.
    let ready_timeout = p.ready_timeout_s.map_or(DEFAULT_READY_TIMEOUT, Duration::from_secs);
    let kind = berth_engine::agents::AgentKind::parse(&p.agent);
    if let Err(why) = ready(&store, &pane, kind, ready_timeout).await {
        let why = format!(
            "{why}; are the agent's hooks set up? (`berth hook install {}` wires them; \
             `berth doctor` says which agents are wired)",
            p.agent
        );
        return fail(&store, &id, "ready_timeout", why, Some(pane), &prepared, &worktree).await;
    }

    // The prompt. A turn that ended before it is not the task's.
    let turn_seen = lock(&store)
        .pane_shared(&pane)
        .and_then(|s| s.meta().turns.last.as_ref().map(|t| t.ended_at));
    let berth = crate::agents::inject::berth_binary().filter(|b| b.len() <= 512);
    let prompt =
        compose_prompt(&id, &prepared.branch, &prepared.base_sha, &p.contract, berth.as_deref());
    let submitted = match crate::agents::submit::start_limited(
        &store,
        pane.clone(),
        &prompt,
        false,
        super::model::MAX_TASK_PROMPT_BYTES,
    ) {
        Ok(submit) => submit.await,
        Err(e) => Err(e),
    };
    let outcome = match submitted {
        Ok(outcome) => outcome,
        Err(e) => {
            return fail(
                &store,
                &id,
                "submit_refused",
                e.to_string(),
                Some(pane),
                &prepared,
                &worktree,
            )
            .await;
        }
    };
    // A report may have come in already (a fast worker): then the task is not pending.
    apply(
        &store,
        TaskOp::TransitionIf {
            task: id.clone(),
            from: TaskState::Pending,
            to: TaskState::Working,
            reason: None,
        },
    )?;
    // An agent whose hooks acknowledge prompts and that acknowledged none (Enter pressed
    // twice): the prompt may sit in its input, or be lost. The task waits for a person, with
    // the screen as evidence, instead of passing for working (issue 26); a turn that starts
    // after all (the person pressed Enter) makes it `working` through the watch.
    // An acknowledgement that came just after the submit gave up started the turn: nothing
    // to ask then.
    let turn_running =
        lock(&store).pane_shared(&pane).is_some_and(|s| s.meta().turns.started_at.is_some());
    if outcome.awaited_ack && !outcome.confirmed && !turn_running {
        let screen = lock(&store).pane_shared(&pane).map(|s| s.term.lock().screen_lines(false));
        let tail: Vec<String> = screen
            .unwrap_or_default()
            .into_iter()
            .map(|l| crate::persist::redact::redact_text(l.trim_end()))
            .filter(|l| !l.is_empty())
            .rev()
            .take(UNCONFIRMED_SCREEN_LINES)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        tracing::warn!(task = %id, pane = %pane, "the worker never acknowledged its prompt");
        apply(
            &store,
            TaskOp::TransitionIf {
                task: id.clone(),
                from: TaskState::Working,
                to: TaskState::InputRequired,
                reason: Some(serde_json::json!({
                    "reason": "prompt_unconfirmed",
                    "error": "the agent never acknowledged the task's prompt (Enter was pressed \
                              twice); it may sit unsent in the agent's input: look at the pane",
                    "screen": tail,
                })),
            },
        )?;
    }
    super::watch::spawn(store.clone(), id.clone(), pane, turn_seen);
    lock(&store).task_record(&id)
}

/// How many of the screen's last non-empty lines an unconfirmed prompt's evidence keeps.
const UNCONFIRMED_SCREEN_LINES: usize = 12;

/// Waits until the pane's agent is of `kind` (any, for `generic`) and idle, within `limit`.
async fn ready(
    store: &Arc<Mutex<Store>>,
    pane: &PaneId,
    kind: Option<berth_engine::agents::AgentKind>,
    limit: Duration,
) -> Result<(), String> {
    use berth_engine::agents::AgentKind;
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let wait = crate::agents::wait::start(store, pane.clone(), WaitUntil::Idle, Some(left))
            .map_err(|e| e.to_string())?;
        let outcome = wait.await.map_err(|e| e.to_string())?;
        if !outcome.reached {
            return Err(format!(
                "the agent exited before it was ready (exit code {:?})",
                outcome.exit_code
            ));
        }
        let (known, hooked, reading) = {
            let store = lock(store);
            let pane = store.panes.get(pane);
            (
                pane.map(|p| p.agent.kind),
                pane.is_some_and(|p| p.shared.meta().turns.hook_events > 0),
                pane.is_some_and(|p| {
                    let term = p.shared.term.lock();
                    term.alt_screen() && term.bracketed_paste() && term.cursor_visible()
                }),
            )
        };
        match (kind, known) {
            (Some(AgentKind::Generic) | None, _) => return Ok(()),
            // Claude is known from its command line at once, but reads the prompt only once
            // its TUI is up, which its SessionStart hook tells (Berth always gives it the
            // hooks): a paste before it sat in claude's input with its Enter lost (issue 26,
            // seen with the real claude on a busy machine).
            (Some(AgentKind::Claude), Some(AgentKind::Claude)) if !hooked => {}
            // opencode too is known from its command line at once, and its plugin says it
            // loaded (`berth.plugin.loaded`) seconds before its prompt box takes input: a
            // prompt pasted sooner (as its TUI set its terminal modes, or drew its first
            // frames) was lost whole, and the task went on `working` with a worker that never
            // got it (issue 26, the real opencode 1.18.33). Its TUI hides the cursor from its
            // start (alternate screen, bracketed paste) until its prompt box has the focus.
            (Some(AgentKind::Opencode), Some(AgentKind::Opencode)) if !hooked || !reading => {}
            (Some(want), Some(have)) if want == have => return Ok(()),
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "the pane's program was not known as {} within {} s",
                kind.map_or("the agent", |k| k.as_str()),
                limit.as_secs_f64()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `git worktree add`: a new branch at the base, or the existing branch as it is.
fn add_worktree(
    repo: &Path,
    wt: &Path,
    branch: &str,
    sha: &str,
    preexisting: bool,
) -> Result<(), String> {
    if let Some(parent) = wt.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    let wt_text = wt.to_str().ok_or("the worktree path is not UTF-8")?;
    if preexisting {
        git::git_ok(repo, &["worktree", "add", "--end-of-options", wt_text, branch])?;
    } else {
        git::git_ok(repo, &["worktree", "add", "-b", branch, "--end-of-options", wt_text, sha])?;
    }
    Ok(())
}

/// Removes what a failed start made: the pane, the worktree, the branch it created.
async fn fail(
    store: &Arc<Mutex<Store>>,
    id: &TaskId,
    stage: &str,
    error: String,
    pane: Option<PaneId>,
    prepared: &Prepared,
    worktree: &Path,
) -> Result<TaskRecord, CommandError> {
    tracing::warn!(task = %id, stage, error = %error, "task start failed");
    if let Some(pane) = pane {
        let _ = lock(store).execute(Command::PaneClose { pane });
    }
    let (repo, wt, branch, pre) = (
        prepared.repo.clone(),
        worktree.to_path_buf(),
        prepared.branch.clone(),
        prepared.preexisting,
    );
    let cleanup =
        blocking(move || git::with_repo_lock(&repo, || remove_made(&repo, &wt, &branch, pre)))
            .await?;
    let mut evidence = stage_evidence(stage, error);
    if let Err(e) = cleanup {
        evidence["cleanup_error"] = e.into();
    }
    apply(
        store,
        TaskOp::Transition { task: id.clone(), to: TaskState::Failed, reason: Some(evidence) },
    )?;
    lock(store).task_record(id)
}

/// Removes a worktree this start made (forced: it holds nothing of the user's yet) and the
/// branch when it made it.
fn remove_made(repo: &Path, wt: &Path, branch: &str, preexisting: bool) -> Result<(), String> {
    let mut errors = Vec::new();
    if wt.exists() {
        if let Some(wt_text) = wt.to_str() {
            if let Err(e) =
                git::git_ok(repo, &["worktree", "remove", "--force", "--end-of-options", wt_text])
            {
                errors.push(e);
            }
        }
    }
    let _ = git::git(repo, &["worktree", "prune"]);
    if !preexisting && git::branch_exists(repo, branch) {
        if let Err(e) = git::git_ok(repo, &["branch", "-D", "--end-of-options", branch]) {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
