//! Diffs for review (`diff.files`, `diff.file`): git's `--numstat -z` / `--name-status -z -M`
//! lists and its unified patch text, parsed into typed files and hunks with old/new line
//! numbers. Computed on demand; one file's parsed hunks are kept a while (a few files, see
//! [`file`]) so paging through it runs git once; a file over [`MAX_LINES`] changed lines or
//! [`MAX_PATCH_BYTES`] of patch is marked too large and its hunks are never sent.
//!
//! Blocking (it runs git): callers run it on a blocking thread, off the Store's lock.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::tasks::git::git_raw;

/// A file with more changed lines than this is too large to show.
pub const MAX_LINES: u64 = 20_000;
/// A file whose patch is larger than this is too large to show.
pub const MAX_PATCH_BYTES: usize = 1 << 20;
/// Every diff runs no external diff program and no textconv filter the repo's config names.
const NO_DRIVERS: [&str; 2] = ["--no-ext-diff", "--no-textconv"];

/// At most this many untracked files are listed as added.
const MAX_UNTRACKED: usize = 2_000;

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// New.
    Added,
    /// Changed in place.
    Modified,
    /// Gone.
    Deleted,
    /// Moved (perhaps changed too).
    Renamed,
    /// Copied from another file.
    Copied,
    /// Its type changed (file, link, submodule).
    TypeChanged,
    /// In conflict.
    Unmerged,
}

impl FileStatus {
    /// From git's `--name-status` letter.
    pub fn from_letter(c: u8) -> Option<Self> {
        Some(match c {
            b'A' => Self::Added,
            b'M' => Self::Modified,
            b'D' => Self::Deleted,
            b'R' => Self::Renamed,
            b'C' => Self::Copied,
            b'T' => Self::TypeChanged,
            b'U' => Self::Unmerged,
            _ => return None,
        })
    }
}

/// One changed file of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFile {
    /// Its path now (for a deleted file, the path it had).
    pub path: String,
    /// Its path before, for a renamed or copied file.
    pub old_path: Option<String>,
    /// How it changed.
    pub status: FileStatus,
    /// Lines added (0 for a binary file).
    pub added: u64,
    /// Lines removed (0 for a binary file).
    pub removed: u64,
    /// Whether git sees it as binary (no lines, no hunks).
    pub binary: bool,
    /// Whether it is too large to show: its hunks are never sent.
    pub too_large: bool,
    /// Whether it is not tracked yet (a new file in the work tree, not added).
    pub untracked: bool,
}

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    /// In both.
    Context,
    /// New.
    Added,
    /// Gone.
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    /// What it is.
    pub kind: LineKind,
    /// Its number in the old file (context and removed lines).
    pub old_line: Option<u64>,
    /// Its number in the new file (context and added lines).
    pub new_line: Option<u64>,
    /// Its text, without the marker and the newline.
    pub text: String,
    /// Whether the file has no newline after this line.
    #[serde(default)]
    pub no_newline: bool,
}

/// One hunk: a run of changed lines with context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffHunk {
    /// First line in the old file.
    pub old_start: u64,
    /// Lines in the old file.
    pub old_lines: u64,
    /// First line in the new file.
    pub new_start: u64,
    /// Lines in the new file.
    pub new_lines: u64,
    /// The text after the second `@@` (often the enclosing function).
    pub header: String,
    /// Its lines.
    pub lines: Vec<DiffLine>,
}

/// One `--numstat` entry: `(added, removed)` (`None` for a binary file), the path, and the
/// old path of a rename.
pub type NumstatEntry = (Option<(u64, u64)>, String, Option<String>);

/// Parses `git diff --numstat -z` output.
pub fn parse_numstat_z(out: &[u8]) -> Vec<NumstatEntry> {
    let mut fields = out.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).into_owned());
    let mut all = Vec::new();
    while let Some(field) = fields.next() {
        if field.is_empty() {
            continue;
        }
        let mut parts = field.splitn(3, '\t');
        let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let counts = match (a.parse::<u64>(), r.parse::<u64>()) {
            (Ok(a), Ok(r)) => Some((a, r)),
            _ => None,
        };
        if path.is_empty() {
            // A rename: the old and new paths follow as their own fields.
            let old = fields.next().unwrap_or_default();
            let new = fields.next().unwrap_or_default();
            all.push((counts, new, Some(old)));
        } else {
            all.push((counts, path.to_owned(), None));
        }
    }
    all
}

/// Parses `git diff --name-status -z` output: `(status, path, old_path)`.
pub fn parse_name_status_z(out: &[u8]) -> Vec<(FileStatus, String, Option<String>)> {
    let mut fields = out.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).into_owned());
    let mut all = Vec::new();
    while let Some(code) = fields.next() {
        let Some(status) = code.bytes().next().and_then(FileStatus::from_letter) else {
            continue;
        };
        let first = fields.next().unwrap_or_default();
        if matches!(status, FileStatus::Renamed | FileStatus::Copied) {
            let new = fields.next().unwrap_or_default();
            all.push((status, new, Some(first)));
        } else {
            all.push((status, first, None));
        }
    }
    all
}

fn parse_range(s: &str) -> Option<(u64, u64)> {
    let mut parts = s.splitn(2, ',');
    let start = parts.next()?.parse().ok()?;
    let count = match parts.next() {
        Some(c) => c.parse().ok()?,
        None => 1,
    };
    Some((start, count))
}

/// Parses one `@@ -a,b +c,d @@ header` line.
fn parse_hunk_header(line: &str) -> Option<DiffHunk> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix('+')?;
    let (new, rest) = rest.split_once(" @@")?;
    let (old_start, old_lines) = parse_range(old)?;
    let (new_start, new_lines) = parse_range(new)?;
    Some(DiffHunk {
        old_start,
        old_lines,
        new_start,
        new_lines,
        header: rest.trim_start().to_owned(),
        lines: Vec::new(),
    })
}

/// Parses the unified patch of one file (`git diff -U3 -- FILE`) into hunks with old/new line
/// numbers; the file header lines (`diff --git`, `index`, `---`, `+++`) are skipped.
pub fn parse_hunks(patch: &[u8]) -> Vec<DiffHunk> {
    let text = String::from_utf8_lossy(patch);
    let mut hunks: Vec<DiffHunk> = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    for line in text.split('\n') {
        if line.starts_with("@@ ") {
            if let Some(h) = parse_hunk_header(line) {
                old = h.old_start;
                new = h.new_start;
                hunks.push(h);
            }
            continue;
        }
        let Some(hunk) = hunks.last_mut() else { continue };
        let (kind, text) = match line.as_bytes().first() {
            Some(b' ') => (LineKind::Context, &line[1..]),
            Some(b'+') => (LineKind::Added, &line[1..]),
            Some(b'-') => (LineKind::Removed, &line[1..]),
            Some(b'\\') => {
                if let Some(last) = hunk.lines.last_mut() {
                    last.no_newline = true;
                }
                continue;
            }
            // The next file's header, or the end.
            _ => continue,
        };
        let (old_line, new_line) = match kind {
            LineKind::Context => {
                old += 1;
                new += 1;
                (Some(old - 1), Some(new - 1))
            }
            LineKind::Added => {
                new += 1;
                (None, Some(new - 1))
            }
            LineKind::Removed => {
                old += 1;
                (Some(old - 1), None)
            }
        };
        hunk.lines.push(DiffLine {
            kind,
            old_line,
            new_line,
            text: text.to_owned(),
            no_newline: false,
        });
    }
    hunks
}

/// What a diff is taken against: a commit, in a work tree (its uncommitted changes and
/// untracked files included).
#[derive(Debug, Clone)]
pub struct DiffSource {
    /// The work tree.
    pub dir: std::path::PathBuf,
    /// The commit the work tree is compared with (a task's base SHA, or `HEAD`).
    pub base: String,
    /// A commit compared instead of the work tree (one turn: its checkpoint; `base` is the
    /// checkpoint before it); `None`: the work tree, untracked files included.
    pub head: Option<String>,
}

fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = git_raw(dir, args)?;
    if out.ok {
        Ok(out.stdout)
    } else {
        Err(format!("git {} failed: {}", args.join(" "), out.stderr))
    }
}

fn untracked(dir: &Path) -> Result<Vec<String>, String> {
    let out = run(dir, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .take(MAX_UNTRACKED)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect())
}

/// `git diff --no-index` of a new file (exit 1 means "differs").
fn no_index(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = git_raw(dir, args)?;
    match out.code {
        Some(0 | 1) => Ok(out.stdout),
        _ => Err(format!("git {} failed: {}", args.join(" "), out.stderr)),
    }
}

/// A name-status entry (`status`, path, old path) with its numstat counts (`None`: git gave
/// none; `Some(None)`: binary), the first numstat entry of the same path.
pub type JoinedEntry<P> = (FileStatus, P, Option<P>, Option<Option<(u64, u64)>>);

/// A `--numstat` row: counts (`None`: binary), path, old path.
pub type NumstatRow<P> = (Option<(u64, u64)>, P, Option<P>);

/// Joins `--name-status` entries with the `--numstat` counts of the same paths through one map:
/// each entry is looked up once, so 100k changed files cost 100k lookups, not 100k² string
/// comparisons (generic over the path so a test can count them).
pub fn join_counts<P: std::hash::Hash + Eq>(
    statuses: Vec<(FileStatus, P, Option<P>)>,
    numstat: Vec<NumstatRow<P>>,
) -> Vec<JoinedEntry<P>> {
    let mut by_path = std::collections::HashMap::with_capacity(numstat.len());
    for (counts, path, _) in numstat {
        by_path.entry(path).or_insert(counts);
    }
    statuses
        .into_iter()
        .map(|(status, path, old_path)| {
            let counts = by_path.get(&path).copied();
            (status, path, old_path, counts)
        })
        .collect()
}

/// The revisions a diff of `source` names: the base (and the head commit, for a turn), each
/// checked not to look like an option.
fn revisions(source: &DiffSource) -> Result<Vec<String>, String> {
    let mut revs = vec![source.base.clone()];
    revs.extend(source.head.clone());
    for rev in &revs {
        if rev.starts_with('-') || rev.is_empty() {
            return Err(format!("the revision {rev:?} is not a revision"));
        }
    }
    Ok(revs)
}

/// Every changed file of `source`, tracked changes first (in git's order), then untracked
/// files as added.
pub fn files(source: &DiffSource) -> Result<Vec<DiffFile>, String> {
    let dir = &source.dir;
    let revs = revisions(source)?;
    let diff_of = |what: &'static str| {
        let mut args = vec!["diff", NO_DRIVERS[0], NO_DRIVERS[1], what, "-z", "-M"];
        args.extend(revs.iter().map(String::as_str));
        args.push("--");
        run(dir, &args)
    };
    let numstat = parse_numstat_z(&diff_of("--numstat")?);
    let statuses = parse_name_status_z(&diff_of("--name-status")?);
    let mut all = Vec::new();
    for (status, path, old_path, counts) in join_counts(statuses, numstat) {
        let binary = matches!(counts, Some(None));
        let (added, removed) = counts.flatten().unwrap_or((0, 0));
        all.push(DiffFile {
            too_large: added + removed > MAX_LINES,
            path,
            old_path,
            status,
            added,
            removed,
            binary,
            untracked: false,
        });
    }
    let untracked_files = if source.head.is_some() { Vec::new() } else { untracked(dir)? };
    for path in untracked_files {
        // `--` first: an untracked name may look like an option (`--output=precious.txt`).
        let out = no_index(
            dir,
            &[
                "diff",
                NO_DRIVERS[0],
                NO_DRIVERS[1],
                "--no-index",
                "--numstat",
                "-z",
                "--",
                "/dev/null",
                &path,
            ],
        )?;
        let counts = parse_numstat_z(&out).into_iter().next().and_then(|(c, _, _)| c);
        let (added, removed) = counts.unwrap_or((0, 0));
        all.push(DiffFile {
            path,
            old_path: None,
            status: FileStatus::Added,
            added,
            removed,
            binary: counts.is_none(),
            too_large: added + removed > MAX_LINES,
            untracked: true,
        });
    }
    Ok(all)
}

/// One file's hunks, `offset`/`limit` of them, with the file and the total count. A binary
/// or too-large file has none; a file whose patch turns out over [`MAX_PATCH_BYTES`] is marked
/// too large then.
pub fn file(
    source: &DiffSource,
    path: &str,
    offset: usize,
    limit: usize,
) -> Result<(DiffFile, Vec<DiffHunk>, usize), String> {
    file_paged(source, path, offset, limit).map(|(f, h, total, _)| (f, h, total))
}

/// [`file`], and whether git ran for it (`false`: the kept hunks answered).
pub fn file_paged(
    source: &DiffSource,
    path: &str,
    offset: usize,
    limit: usize,
) -> Result<(DiffFile, Vec<DiffHunk>, usize, bool), String> {
    let key = CacheKey {
        dir: source.dir.clone(),
        base: source.base.clone(),
        head: source.head.clone(),
        path: path.to_owned(),
    };
    let stamp = stamp_of(source, path);
    // Only a diff against a fixed commit is kept (a task's base SHA, a turn's checkpoints):
    // `HEAD` moves under a workspace without its files changing.
    let fixed = source.base.len() == 40 && source.base.bytes().all(|b| b.is_ascii_hexdigit());
    let hit = if fixed { cached(&key, stamp) } else { None };
    let ran = hit.is_none();
    let (entry, hunks) = match hit {
        Some(hit) => hit,
        None => {
            let (entry, hunks) = whole_file(source, path)?;
            let hunks = std::sync::Arc::new(hunks);
            if fixed {
                remember(key, stamp, entry.clone(), hunks.clone());
            }
            (entry, hunks)
        }
    };
    let total = hunks.len();
    Ok((entry, hunks.iter().skip(offset).take(limit).cloned().collect(), total, ran))
}

/// The files whose parsed hunks are kept: a few, so paging through one file (the view asks a
/// page of 50 hunks at a time) runs its `git diff` once. Bounded: at most [`CACHED_FILES`]
/// files (each at most [`MAX_PATCH_BYTES`] of patch), the oldest dropped.
const CACHED_FILES: usize = 4;
/// A work-tree diff's entry is trusted this long (with the file's own size and mtime
/// unchanged); a turn's (two commits) is trusted until dropped.
const WORKTREE_TTL: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
struct CacheKey {
    dir: std::path::PathBuf,
    base: String,
    head: Option<String>,
    path: String,
}

/// A work-tree file's size and mtime (ns), or none for a turn's diff (immutable).
type Stamp = Option<(u64, u128)>;

struct Cached {
    key: CacheKey,
    stamp: Stamp,
    at: std::time::Instant,
    entry: DiffFile,
    hunks: std::sync::Arc<Vec<DiffHunk>>,
}

fn cache() -> std::sync::MutexGuard<'static, Vec<Cached>> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Vec<Cached>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

fn stamp_of(source: &DiffSource, path: &str) -> Stamp {
    if source.head.is_some() {
        return None;
    }
    // Not followed if it is a link (git diffs the link itself).
    let meta = std::fs::symlink_metadata(source.dir.join(path)).ok();
    Some(meta.map_or((u64::MAX, 0), |m| {
        let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        (m.len(), mtime.map_or(0, |d| d.as_nanos()))
    }))
}

fn cached(key: &CacheKey, stamp: Stamp) -> Option<(DiffFile, std::sync::Arc<Vec<DiffHunk>>)> {
    let all = cache();
    let hit = all.iter().find(|c| &c.key == key)?;
    let fresh = key.head.is_some() || (hit.stamp == stamp && hit.at.elapsed() < WORKTREE_TTL);
    fresh.then(|| (hit.entry.clone(), hit.hunks.clone()))
}

fn remember(key: CacheKey, stamp: Stamp, entry: DiffFile, hunks: std::sync::Arc<Vec<DiffHunk>>) {
    let mut all = cache();
    all.retain(|c| c.key != key);
    if all.len() >= CACHED_FILES {
        all.remove(0);
    }
    all.push(Cached { key, stamp, at: std::time::Instant::now(), entry, hunks });
}

/// One file's entry and all its hunks, from git (none for a binary or too-large file).
fn whole_file(source: &DiffSource, path: &str) -> Result<(DiffFile, Vec<DiffHunk>), String> {
    let mut entry = files(source)?
        .into_iter()
        .find(|f| f.path == path || f.old_path.as_deref() == Some(path))
        .ok_or_else(|| format!("{path} has no changes in this diff"))?;
    if entry.binary || entry.too_large {
        return Ok((entry, Vec::new()));
    }
    let dir = &source.dir;
    let patch = if entry.untracked {
        no_index(
            dir,
            &["diff", NO_DRIVERS[0], NO_DRIVERS[1], "--no-index", "-U3", "--", "/dev/null", path],
        )?
    } else {
        let revs = revisions(source)?;
        let mut args = vec!["diff", NO_DRIVERS[0], NO_DRIVERS[1], "-U3", "-M"];
        args.extend(revs.iter().map(String::as_str));
        args.push("--");
        if let Some(old) = entry.old_path.as_deref() {
            args.push(old);
        }
        args.push(entry.path.as_str());
        run(dir, &args)?
    };
    if patch.len() > MAX_PATCH_BYTES {
        entry.too_large = true;
        return Ok((entry, Vec::new()));
    }
    Ok((entry, parse_hunks(&patch)))
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
