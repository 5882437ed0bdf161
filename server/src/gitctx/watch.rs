//! The git context cache and what refreshes it: one task that waits for a reason (a
//! `workspace.refresh_git`, a file-system event in a watched repo, or any Store event — a
//! pane's cwd may have changed), waits 200 ms more to gather the rest (debounce), then runs
//! `git status` only for directories that are new or whose repo had an event, on a blocking
//! thread, and applies the results through `Store::execute` (`Internal::SetGit`), which
//! publishes `git.changed`. Nothing polls: with no events, no git runs (`git_probes` in
//! `server.info` stays flat).
//!
//! Watched per repo (inotify, through `notify`): the directories of its tracked files, each
//! alone (edits make it dirty; ignored trees like `target/` are never watched; at most
//! [`MAX_WATCHED_DIRS`]), its git dir, and the common dir with its `refs`. Inside a `.git`,
//! only `HEAD`, `index`, `packed-refs` and `refs/` count.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::{mpsc, oneshot};

use super::cache::Kick;
use super::{probe, GitContext, RepoDirs};
use crate::event::Event;
use crate::events::EventBus;
use crate::store::{Internal, Store};

/// How long the watcher gathers reasons before it refreshes.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

impl Store {
    /// Applies new contexts; publishes `git.changed` for each that changed.
    pub(crate) fn set_git(&mut self, changes: Vec<(String, Option<GitContext>)>) {
        for (dir, git) in changes {
            let old = match &git {
                Some(ctx) => self.git.by_dir.insert(dir.clone(), ctx.clone()),
                None => self.git.by_dir.remove(&dir),
            };
            if old != git {
                self.bus.publish(Event::GitChanged { dir, git });
            }
        }
    }

    /// Every directory whose git context is shown: workspaces' and panes' cwds.
    pub fn git_dirs(&self) -> BTreeSet<String> {
        let mut dirs: BTreeSet<String> =
            self.workspaces.iter().map(|w| w.cwd.display().to_string()).collect();
        dirs.extend(self.panes.values().map(|p| self.pane_cwd(p)));
        dirs
    }
}

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether a file-system event at `path` may change a git context.
fn relevant(path: &Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    let Some(git_at) = parts.iter().position(|p| *p == ".git") else {
        // The work tree (or a git dir outside it, watched on purpose).
        return true;
    };
    let inside = &parts[git_at + 1..];
    let Some(name) = inside.last().and_then(|n| n.to_str()) else {
        // `.git` itself.
        return false;
    };
    if name.ends_with(".lock") {
        return false;
    }
    matches!(name, "HEAD" | "index" | "packed-refs") || inside.iter().any(|p| *p == "refs")
}

/// At most this many work-tree directories are watched per repo (the shallowest first).
pub const MAX_WATCHED_DIRS: usize = 2_000;

/// The directories holding `root`'s tracked files (never ignored ones such as `target/`), the
/// shallowest first, at most [`MAX_WATCHED_DIRS`].
fn tracked_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(out) = crate::tasks::git::git_raw(root, &["ls-files", "-z"]) else {
        return vec![root.to_path_buf()];
    };
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    dirs.insert(root.to_path_buf());
    for file in out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let rel = Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(file));
        let mut dir = rel.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if !dirs.insert(root.join(d)) {
                break;
            }
            dir = d.parent();
        }
    }
    let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| d.components().count());
    dirs.truncate(MAX_WATCHED_DIRS);
    dirs
}

/// The watcher's state: what it knows of each directory, and what inotify watches.
struct State {
    known: HashMap<String, Option<RepoDirs>>,
    /// Per work tree's top, the paths watched for it.
    by_root: HashMap<PathBuf, Vec<PathBuf>>,
    /// Every path watched (once, however many work trees need it).
    watched: HashSet<PathBuf>,
    watcher: Option<notify::RecommendedWatcher>,
}

impl State {
    /// Watches a work tree (the directories of its tracked files, not recursively: ignored
    /// trees such as `target/` are never watched), its git dir and its common dir's `refs`.
    fn watch(&mut self, dirs: &RepoDirs) {
        if self.watcher.is_none() || self.by_root.contains_key(&dirs.root) {
            return;
        }
        let mut want: Vec<(PathBuf, RecursiveMode)> = tracked_dirs(&dirs.root)
            .into_iter()
            .map(|d| (d, RecursiveMode::NonRecursive))
            .collect();
        want.push((dirs.git_dir.clone(), RecursiveMode::NonRecursive));
        want.push((dirs.common_dir.clone(), RecursiveMode::NonRecursive));
        want.push((dirs.common_dir.join("refs"), RecursiveMode::Recursive));
        let Some(watcher) = self.watcher.as_mut() else { return };
        let mut mine = Vec::new();
        for (path, mode) in want {
            if !self.watched.contains(&path) {
                if let Err(e) = watcher.watch(&path, mode) {
                    tracing::debug!(path = %path.display(), error = %e, "cannot watch");
                    continue;
                }
                self.watched.insert(path.clone());
            }
            mine.push(path);
        }
        self.by_root.insert(dirs.root.clone(), mine);
    }

    /// Drops the watches no known repo needs any more.
    fn prune(&mut self) {
        let roots: HashSet<&Path> =
            self.known.values().flatten().map(|d| d.root.as_path()).collect();
        self.by_root.retain(|root, _| roots.contains(root.as_path()));
        let needed: HashSet<&PathBuf> = self.by_root.values().flatten().collect();
        let stale: Vec<PathBuf> =
            self.watched.iter().filter(|w| !needed.contains(w)).cloned().collect();
        for path in stale {
            if let Some(watcher) = self.watcher.as_mut() {
                let _ = watcher.unwatch(&path);
            }
            self.watched.remove(&path);
        }
    }

    fn affected(&self, dir: &str, changed: &[PathBuf]) -> bool {
        match self.known.get(dir) {
            None => true,
            Some(None) => false,
            Some(Some(d)) => changed.iter().any(|p| {
                p.starts_with(&d.root) || p.starts_with(&d.git_dir) || p.starts_with(&d.common_dir)
            }),
        }
    }
}

impl State {
    fn new() -> Self {
        State {
            known: HashMap::new(),
            by_root: HashMap::new(),
            watched: HashSet::new(),
            watcher: None,
        }
    }
}

/// The inotify watcher, sending the paths of relevant events; `None` when inotify is not
/// available (git context then follows cwd changes and `workspace.refresh_git` only).
fn watcher(fs_tx: mpsc::UnboundedSender<PathBuf>) -> Option<notify::RecommendedWatcher> {
    let made = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else { return };
        if matches!(event.kind, notify::EventKind::Access(_)) {
            return;
        }
        for path in event.paths.into_iter().filter(|p| relevant(p)) {
            let _ = fs_tx.send(path);
        }
    });
    match made {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!(error = %e, "no file-system events for git context");
            None
        }
    }
}

/// What the watcher gathered during one wait.
#[derive(Default)]
struct Reasons {
    all: Vec<oneshot::Sender<usize>>,
    changed: Vec<PathBuf>,
    check: bool,
}

/// Starts the watcher for `store` (on the current runtime).
pub fn spawn(store: Arc<Mutex<Store>>, bus: EventBus) {
    let (tx, mut kicks) = mpsc::unbounded_channel::<Kick>();
    lock(&store).git.kick = Some(tx);
    let (fs_tx, mut fs) = mpsc::unbounded_channel::<PathBuf>();
    let mut state = State::new();
    state.watcher = watcher(fs_tx);
    tokio::spawn(async move {
        let mut events = bus.subscribe();
        // The first pass learns every directory there is.
        let mut reasons = Reasons { check: true, ..Reasons::default() };
        loop {
            // Wait for a reason, then gather more for DEBOUNCE from the first one.
            let mut deadline = None;
            loop {
                let has_reason =
                    reasons.check || !reasons.all.is_empty() || !reasons.changed.is_empty();
                if has_reason && deadline.is_none() {
                    deadline = Some(tokio::time::Instant::now() + DEBOUNCE);
                }
                let wake = deadline.unwrap_or_else(tokio::time::Instant::now);
                tokio::select! {
                    _ = tokio::time::sleep_until(wake), if deadline.is_some() => break,
                    kick = kicks.recv() => match kick {
                        Some(Kick::All(reply)) => reasons.all.push(reply),
                        None => return,
                    },
                    Some(path) = fs.recv() => reasons.changed.push(path),
                    event = events.recv() => match event {
                        Some(line) => {
                            if !line.contains("\"git.changed\"") {
                                reasons.check = true;
                            }
                        }
                        None => {
                            events = bus.subscribe();
                            reasons.check = true;
                        }
                    },
                }
            }
            let taken = std::mem::take(&mut reasons);
            state = refresh(&store, state, taken).await;
        }
    });
}

/// One refresh: probes what needs it and updates the watches on a blocking thread (git, and
/// a recursive inotify watch walks the tree), then applies the results under the lock.
async fn refresh(store: &Arc<Mutex<Store>>, state: State, reasons: Reasons) -> State {
    let dirs = lock(store).git_dirs();
    let all = !reasons.all.is_empty();
    let probe_dirs: Vec<String> =
        dirs.iter().filter(|d| all || state.affected(d, &reasons.changed)).cloned().collect();
    let gone: Vec<String> = state.known.keys().filter(|d| !dirs.contains(*d)).cloned().collect();
    let count = probe_dirs.len();
    let (state, changes) = if probe_dirs.is_empty() && gone.is_empty() {
        (state, Vec::new())
    } else {
        let work = tokio::task::spawn_blocking(move || {
            let mut state = state;
            let mut changes = Vec::new();
            for dir in probe_dirs {
                let got = probe(Path::new(&dir));
                if let Some((_, dirs)) = &got {
                    state.watch(dirs);
                }
                state.known.insert(dir.clone(), got.as_ref().map(|(_, d)| d.clone()));
                changes.push((dir, got.map(|(c, _)| c)));
            }
            for dir in gone {
                state.known.remove(&dir);
                changes.push((dir, None));
            }
            state.prune();
            (state, changes)
        });
        match work.await {
            Ok(done) => done,
            Err(e) => {
                // A panic on the thread: start again from nothing known (the next reason
                // probes every directory).
                tracing::warn!(error = %e, "the git context refresh failed");
                (State::new(), Vec::new())
            }
        }
    };
    if !changes.is_empty() {
        if count > 0 {
            tracing::debug!(probed = count, "git context refreshed");
        }
        let _ = lock(store).execute(Internal::SetGit(changes));
    }
    for reply in reasons.all {
        let _ = reply.send(count);
    }
    state
}

#[cfg(test)]
mod tests {
    use super::relevant;
    use std::path::Path;

    #[test]
    fn only_head_index_and_refs_count_inside_git() {
        assert!(relevant(Path::new("/r/src/main.rs")));
        assert!(relevant(Path::new("/r/.git/HEAD")));
        assert!(relevant(Path::new("/r/.git/index")));
        assert!(relevant(Path::new("/r/.git/refs/heads/main")));
        assert!(relevant(Path::new("/r/.git/worktrees/wt/HEAD")));
        assert!(!relevant(Path::new("/r/.git/index.lock")));
        assert!(!relevant(Path::new("/r/.git/objects/ab/cdef")));
        assert!(!relevant(Path::new("/r/.git/logs/HEAD.lock")));
        assert!(!relevant(Path::new("/r/.git")));
    }
}
