//! `berth diff`, `berth review` and `berth worktree ls`: review a task's or a workspace's
//! changes (printed, or in the window's review view), and list a repo's worktrees, each one
//! request on the socket (`diff.files`, `diff.file`, `window.review`, `worktree.list`); the
//! server runs git.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use berth_server::client::Client;
use berth_server::commands::{Command, Reply};
use berth_server::gitctx::diff::{DiffFile, DiffHunk, FileStatus, LineKind};
use berth_server::gitctx::request::{
    DiffFileParams, DiffFileReply, DiffFilesParams, DiffFilesReply, WorktreeListParams, MAX_HUNKS,
};
use clap::{Args, Subcommand};
use serde::Serialize;

/// How long a git answer may take.
const GIT_WAIT: Duration = Duration::from_secs(60);

/// `berth diff`'s arguments.
#[derive(Args, Debug)]
#[command(after_help = "A task's diff is its worktree (uncommitted and untracked files \
included) against its base commit; a workspace's is its directory's work tree against HEAD.\n\
Binary files and files over 20,000 changed lines or 1 MiB of patch are marked, never printed.\n\n\
Examples:\n  berth diff task_3f… --stat\n  berth diff task_3f… --turn 2\n  berth diff task_3f… src/main.rs\n  berth diff api --json")]
pub struct DiffArgs {
    /// A task id (`task_…`), or a workspace by name or id.
    pub target: String,
    /// Only this file's hunks.
    pub file: Option<String>,
    /// Only the list of files with their +/- counts.
    #[arg(long)]
    pub stat: bool,
    /// A task's checkpoint N: what that one turn changed (`berth task show` lists them).
    #[arg(long, value_name = "N")]
    pub turn: Option<u32>,
    /// Print JSON (the server's answer).
    #[arg(long)]
    pub json: bool,
}

/// `berth review`'s arguments.
#[derive(Args, Debug)]
#[command(after_help = "The window shows the task's files with +/- counts and the selected \
file's hunks; m merges, d (twice) discards, Esc closes. It opens in one window: the one used \
last (the last to have the focus). Needs a window on the server (`berth` or `berth attach`); \
without one, `berth diff TASK` prints the same.\n\n\
Example:\n  berth review task_3f…")]
pub struct ReviewArgs {
    /// A task id (`task_…`).
    pub task: String,
}

/// `berth worktree …`.
#[derive(Subcommand, Debug)]
pub enum WorktreeVerb {
    /// Git's registered worktrees of a repo, each with the workspaces and tasks using it.
    Ls {
        /// Any directory in the repo (default: the current one).
        #[arg(long)]
        repo: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn target_of(client: &mut Client, target: &str) -> Result<String> {
    if target.starts_with("task_") {
        return Ok(target.to_owned());
    }
    // A workspace by id or name.
    let state = match client.execute(Command::WorkspaceList)? {
        Reply::State(state) => *state,
        _ => bail!("the server answered workspace.list with something else"),
    };
    let found: Vec<String> = state
        .workspaces
        .iter()
        .filter(|w| w.id.as_str() == target || w.name == target)
        .map(|w| w.id.to_string())
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("no task or workspace {target:?} (`berth ls`, `berth task ls`)"),
        _ => bail!("{target:?} names several workspaces; use the workspace's id"),
    }
}

fn mark(f: &DiffFile) -> String {
    let status = match f.status {
        FileStatus::Added => "A",
        FileStatus::Modified => "M",
        FileStatus::Deleted => "D",
        FileStatus::Renamed => "R",
        FileStatus::Copied => "C",
        FileStatus::TypeChanged => "T",
        FileStatus::Unmerged => "U",
    };
    let path = match &f.old_path {
        Some(old) => format!("{old} -> {}", f.path),
        None => f.path.clone(),
    };
    let counts =
        if f.binary { "binary".to_owned() } else { format!("+{} -{}", f.added, f.removed) };
    let large = if f.too_large { " (too large to show)" } else { "" };
    format!("{status} {counts:>12}  {path}{large}")
}

fn print_hunks(hunks: &[DiffHunk]) -> Result<()> {
    for h in hunks {
        outln!(
            "@@ -{},{} +{},{} @@ {}",
            h.old_start,
            h.old_lines,
            h.new_start,
            h.new_lines,
            h.header
        );
        for l in &h.lines {
            let (sign, old, new) = (
                match l.kind {
                    LineKind::Context => ' ',
                    LineKind::Added => '+',
                    LineKind::Removed => '-',
                },
                l.old_line.map(|n| n.to_string()).unwrap_or_default(),
                l.new_line.map(|n| n.to_string()).unwrap_or_default(),
            );
            outln!("{old:>5} {new:>5} {sign}{}", l.text);
        }
    }
    Ok(())
}

/// Every hunk of one file, page by page: one answer with them all, from offset 0.
fn whole_file(
    client: &mut Client,
    target: &str,
    path: &str,
    turn: Option<u32>,
) -> Result<DiffFileReply> {
    let mut offset = 0;
    let mut all: Vec<DiffHunk> = Vec::new();
    loop {
        let params = DiffFileParams {
            target: target.to_owned(),
            path: path.to_owned(),
            offset,
            limit: Some(MAX_HUNKS),
            turn,
        };
        let mut answer = client.diff_file(params, Some(GIT_WAIT))?;
        let total = answer.total_hunks;
        offset += answer.hunks.len();
        all.append(&mut answer.hunks);
        if page_done(offset, total, all.is_empty()) {
            return Ok(DiffFileReply { hunks: all, offset: 0, ..answer });
        }
    }
}

fn page_done(offset: usize, total: usize, empty: bool) -> bool {
    offset >= total || (empty && total == 0)
}

/// An answer as `--json` prints it: pretty, its keys in the order the wire's JSON has them
/// (sorted).
fn pretty<T: Serialize>(answer: &T) -> Result<String> {
    Ok(serde_json::to_string_pretty(&serde_json::to_value(answer)?)?)
}

/// `berth diff --json`: the file list with each file's hunks (when it has some to show).
#[derive(Serialize)]
struct DiffWithHunks {
    target: String,
    dir: PathBuf,
    base: String,
    files: Vec<FileWithHunks>,
}

/// One file of [`DiffWithHunks`].
#[derive(Serialize)]
struct FileWithHunks {
    #[serde(flatten)]
    file: DiffFile,
    #[serde(skip_serializing_if = "Option::is_none")]
    hunks: Option<Vec<DiffHunk>>,
}

/// `berth diff`.
pub fn diff(mut client: Client, args: DiffArgs) -> Result<ExitCode> {
    let target = target_of(&mut client, &args.target)?;
    if let Some(path) = &args.file {
        let reply = whole_file(&mut client, &target, path, args.turn)?;
        if args.json {
            outln!("{}", pretty(&reply)?);
            return Ok(ExitCode::SUCCESS);
        }
        outln!("{}", mark(&reply.file));
        print_hunks(&reply.hunks)?;
        return Ok(ExitCode::SUCCESS);
    }
    let answer = client
        .diff_files(DiffFilesParams { target: target.clone(), turn: args.turn }, Some(GIT_WAIT))?;
    if args.json && args.stat {
        outln!("{}", pretty(&answer)?);
        return Ok(ExitCode::SUCCESS);
    }
    let DiffFilesReply { target: asked, dir, base, files } = answer;
    if args.json {
        // The list, and the hunks of every file that has some to show.
        let mut with_hunks = Vec::new();
        for file in files {
            let hunks = if !file.binary && !file.too_large {
                Some(whole_file(&mut client, &target, &file.path, args.turn)?.hunks)
            } else {
                None
            };
            with_hunks.push(FileWithHunks { file, hunks });
        }
        outln!("{}", pretty(&DiffWithHunks { target: asked, dir, base, files: with_hunks })?);
        return Ok(ExitCode::SUCCESS);
    }
    if files.is_empty() {
        outln!("no changes");
        return Ok(ExitCode::SUCCESS);
    }
    for f in &files {
        outln!("{}", mark(f));
    }
    if !args.stat {
        for f in files.iter().filter(|f| !f.binary && !f.too_large) {
            outln!("\n--- {}", f.path);
            let file = whole_file(&mut client, &target, &f.path, args.turn)?;
            print_hunks(&file.hunks)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `berth review`: the window used last opens the task's review view.
pub fn review(mut client: Client, args: ReviewArgs) -> Result<ExitCode> {
    let task = berth_engine::ids::TaskId::parse(&args.task)
        .map_err(|e| anyhow::anyhow!("{e} (a task id looks like task_…; see `berth task ls`)"))?;
    let windows = client.review(task)?.windows;
    let noun = if windows == 1 { "window" } else { "windows" };
    outln!("review of {} opened in {windows} {noun}", args.task);
    Ok(ExitCode::SUCCESS)
}

/// `berth worktree …`.
pub fn worktree(mut client: Client, verb: WorktreeVerb) -> Result<ExitCode> {
    let WorktreeVerb::Ls { repo, json } = verb;
    let repo = match repo {
        Some(r) => r,
        None => std::env::current_dir()?,
    };
    let repo = std::path::absolute(&repo).unwrap_or(repo);
    let reply = client.worktree_list(WorktreeListParams { repo }, Some(GIT_WAIT))?;
    if json {
        outln!("{}", pretty(&reply)?);
        return Ok(ExitCode::SUCCESS);
    }
    for w in reply.worktrees {
        let what = match (&w.branch, &w.head) {
            (Some(b), _) => b.clone(),
            (None, Some(h)) => format!("(detached {})", &h[..h.len().min(12)]),
            (None, None) => "(bare)".into(),
        };
        let mut users: Vec<String> = w.workspaces.clone();
        users.extend(w.tasks.iter().cloned());
        let main = if w.main { " [main]" } else { "" };
        outln!("{}  {what}{main}  {}", w.path, users.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}
