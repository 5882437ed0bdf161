//! The git requests served (`diff.files`, `diff.file`, `workspace.refresh_git`,
//! `worktree.list`): each becomes a future the socket awaits as a deferred answer; git runs
//! on a blocking thread, never under the Store's lock.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use super::diff::{self, DiffSource};
use super::request::{
    DiffFileReply, DiffFilesReply, GitReply, GitRequest, RefreshGitReply, WorktreeListReply,
    DEFAULT_HUNKS, MAX_HUNKS,
};
use crate::error::CommandError;
use crate::store::Store;
use berth_engine::ids::{TaskId, WorkspaceId};

/// A git answer to come.
pub type GitAnswer = Pin<Box<dyn Future<Output = Result<GitReply, CommandError>> + Send + 'static>>;

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// What `target` names, read under the lock: a directory and the commit to diff against.
fn source_of(
    store: &Mutex<Store>,
    target: &str,
    turn: Option<u32>,
) -> Result<(DiffSource, bool), CommandError> {
    if let Ok(task) = TaskId::parse(target) {
        let record = lock(store).task_record(&task)?;
        let dir = PathBuf::from(&record.worktree_path);
        let Some(turn) = turn else {
            return Ok((DiffSource { dir, base: record.base_sha, head: None }, true));
        };
        let base =
            crate::tasks::checkpoint::before(&record, turn).map_err(CommandError::BadParams)?;
        let head = record.checkpoints.iter().find(|c| c.turn == turn).map(|c| c.sha.clone());
        return Ok((DiffSource { dir, base, head }, true));
    }
    if turn.is_some() {
        return Err(CommandError::BadParams(
            "--turn names a task's checkpoint; a workspace has none".into(),
        ));
    }
    if let Ok(ws) = WorkspaceId::parse(target) {
        let store = lock(store);
        let w = store
            .workspaces
            .iter()
            .find(|w| w.id == ws)
            .ok_or_else(|| CommandError::NoSuchWorkspace(ws.to_string()))?;
        return Ok((DiffSource { dir: w.cwd.clone(), base: "HEAD".into(), head: None }, false));
    }
    Err(CommandError::BadParams(format!(
        "{target:?} is neither a task id (task_…) nor a workspace id (ws_…)"
    )))
}

/// Runs `f` on a blocking thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, CommandError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| CommandError::Internal(format!("git thread: {e}")))?
        .map_err(CommandError::Conflict)
}

/// The top of `source`'s work tree (a workspace's cwd may be below it).
fn at_top(mut source: DiffSource) -> Result<DiffSource, String> {
    if !source.dir.is_dir() {
        return Err(format!("{} is gone", source.dir.display()));
    }
    source.dir = crate::tasks::git::toplevel(&source.dir)?;
    Ok(source)
}

/// Serves one request: refused now, or answered by the returned future.
pub fn serve(store: &Arc<Mutex<Store>>, request: GitRequest) -> Result<GitAnswer, CommandError> {
    request.check()?;
    Ok(match request {
        GitRequest::DiffFiles(p) => {
            let (source, _) = source_of(store, &p.target, p.turn)?;
            Box::pin(async move {
                let (source, files) = blocking(move || {
                    let source = at_top(source)?;
                    let files = diff::files(&source)?;
                    Ok((source, files))
                })
                .await?;
                Ok(GitReply::DiffFiles(DiffFilesReply {
                    target: p.target,
                    dir: source.dir,
                    base: source.base,
                    files,
                }))
            })
        }
        GitRequest::DiffFile(p) => {
            let (source, _) = source_of(store, &p.target, p.turn)?;
            let limit = p.limit.unwrap_or(DEFAULT_HUNKS).min(MAX_HUNKS);
            Box::pin(async move {
                let path = p.path.clone();
                let offset = p.offset;
                let (file, hunks, total) = blocking(move || {
                    let source = at_top(source)?;
                    diff::file(&source, &path, offset, limit)
                })
                .await?;
                Ok(GitReply::DiffFile(DiffFileReply {
                    target: p.target,
                    file,
                    offset: p.offset,
                    total_hunks: total,
                    hunks,
                }))
            })
        }
        GitRequest::RefreshGit(_) => {
            let kick = lock(store).git.kicker().ok_or_else(|| {
                CommandError::Conflict("this server does not watch git context".into())
            })?;
            Box::pin(async move {
                let (tell, answer) = tokio::sync::oneshot::channel();
                kick.send(super::cache::Kick::All(tell))
                    .await
                    .map_err(|_| CommandError::Internal("the git watcher stopped".into()))?;
                let probed = answer
                    .await
                    .map_err(|_| CommandError::Internal("the git watcher stopped".into()))?;
                Ok(GitReply::RefreshGit(RefreshGitReply { probed }))
            })
        }
        GitRequest::WorktreeList(p) => {
            let store = store.clone();
            Box::pin(async move {
                let repo = p.repo.clone();
                let (top, mut all) = blocking(move || {
                    let top = crate::tasks::git::toplevel(&repo)?;
                    let out = crate::tasks::git::git_raw(
                        &top,
                        &["worktree", "list", "--porcelain", "-z"],
                    )?;
                    if !out.ok {
                        return Err(format!("git worktree list failed: {}", out.stderr));
                    }
                    Ok((top, super::parse_worktrees(&out.stdout)))
                })
                .await?;
                users(&store, &mut all);
                Ok(GitReply::WorktreeList(WorktreeListReply { repo: top, worktrees: all }))
            })
        }
    })
}

/// Fills in which workspaces and tasks use each worktree: a directory belongs to the
/// deepest worktree holding it.
fn users(store: &Mutex<Store>, all: &mut [super::WorktreeEntry]) {
    let roots: Vec<PathBuf> = all
        .iter()
        .map(|e| Path::new(&e.path).canonicalize().unwrap_or_else(|_| PathBuf::from(&e.path)))
        .collect();
    let owner = |dir: &Path| -> Option<usize> {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        roots
            .iter()
            .enumerate()
            .filter(|(_, r)| dir.starts_with(r))
            .max_by_key(|(_, r)| r.as_os_str().len())
            .map(|(i, _)| i)
    };
    let store = lock(store);
    for ws in &store.workspaces {
        let mut dirs = vec![ws.cwd.clone()];
        dirs.extend(
            store
                .panes
                .values()
                .filter(|p| p.workspace == ws.id)
                .map(|p| PathBuf::from(store.pane_cwd(p))),
        );
        let mut owners: Vec<usize> = dirs.iter().filter_map(|d| owner(d)).collect();
        owners.sort_unstable();
        owners.dedup();
        for i in owners {
            all[i].workspaces.push(ws.id.to_string());
        }
    }
    for t in store.task_records(None) {
        if let Some(i) = owner(Path::new(&t.worktree_path)) {
            all[i].tasks.push(t.id.clone());
        }
    }
}
