//! What the git methods ask (`diff.files`, `diff.file`, `workspace.refresh_git`,
//! `worktree.list`): wire params, checked before anything runs; `serve.rs` answers them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::CommandError;

/// Hunks `diff.file` answers when no `limit` is given.
pub const DEFAULT_HUNKS: usize = 50;
/// The most hunks one `diff.file` answers.
pub const MAX_HUNKS: usize = 500;

/// What a diff is of: a task (its worktree against its base SHA) or a workspace (its
/// directory's work tree against HEAD).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffFilesParams {
    /// A task id (`task_…`) or a workspace id (`ws_…`).
    pub target: String,
    /// A task's checkpoint: what that one turn changed (its checkpoint against the one
    /// before, or the base); default: the whole worktree against the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
}

/// `diff.file`: one file's hunks, a page of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffFileParams {
    /// A task id or a workspace id.
    pub target: String,
    /// The file's path (new or old), relative to the work tree's top.
    pub path: String,
    /// The first hunk to answer.
    #[serde(default)]
    pub offset: usize,
    /// How many hunks at most (default [`DEFAULT_HUNKS`], at most [`MAX_HUNKS`]).
    #[serde(default)]
    pub limit: Option<usize>,
    /// A task's checkpoint, as in `diff.files`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
}

/// `workspace.refresh_git`: probe every directory's git context now.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefreshGitParams {}

/// `worktree.list`: a repo's registered worktrees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorktreeListParams {
    /// Any directory inside the repo (absolute).
    pub repo: PathBuf,
}

/// One git request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitRequest {
    /// `diff.files`.
    DiffFiles(DiffFilesParams),
    /// `diff.file`.
    DiffFile(DiffFileParams),
    /// `workspace.refresh_git`.
    RefreshGit(RefreshGitParams),
    /// `worktree.list`.
    WorktreeList(WorktreeListParams),
}

impl GitRequest {
    /// Refuses what is wrong before anything runs.
    pub fn check(&self) -> Result<(), CommandError> {
        match self {
            Self::WorktreeList(p) if !p.repo.is_absolute() => Err(CommandError::BadParams(
                format!("repo {} must be an absolute path", p.repo.display()),
            )),
            Self::DiffFile(p) if p.path.is_empty() => {
                Err(CommandError::BadParams("name the file to diff (path)".into()))
            }
            Self::DiffFile(p) if p.limit == Some(0) => {
                Err(CommandError::BadParams("limit must be at least 1".into()))
            }
            Self::DiffFile(p) => crate::tasks::request::check_worktree_path(&p.path),
            _ => Ok(()),
        }
    }
}

/// The answer of `diff.files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFilesReply {
    /// The target as asked.
    pub target: String,
    /// The work tree compared (its top).
    pub dir: PathBuf,
    /// What it is compared with: a task's base SHA, or `HEAD`.
    pub base: String,
    /// The changed files, tracked ones in git's order, then untracked ones.
    pub files: Vec<super::diff::DiffFile>,
}

/// The answer of `diff.file`: a page of one file's hunks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFileReply {
    /// The target as asked.
    pub target: String,
    /// The file (binary or too large: no hunks).
    pub file: super::diff::DiffFile,
    /// The first hunk's index.
    pub offset: usize,
    /// How many hunks the file has.
    pub total_hunks: usize,
    /// The hunks from `offset`, at most `limit`.
    pub hunks: Vec<super::diff::DiffHunk>,
}

/// The answer of `workspace.refresh_git`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshGitReply {
    /// How many directories were probed.
    pub probed: usize,
}

/// The answer of `worktree.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeListReply {
    /// The repo's top (of the checkout asked about).
    pub repo: PathBuf,
    /// Its worktrees, the main checkout first.
    pub worktrees: Vec<super::WorktreeEntry>,
}
