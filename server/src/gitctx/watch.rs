//! The git context cache and what refreshes it: one task that waits for a reason (a
//! `workspace.refresh_git`, a file-system event in a watched repo, or a [`Kick::Dirs`] — the
//! Store made or closed a workspace or pane, a pane's reader saw its cwd change), waits 200 ms
//! more to gather the rest (debounce), then runs `git status` only for directories that are
//! new or whose repo had an event, on a blocking thread, and applies the results through
//! `Store::execute` (`Internal::SetGit`), which publishes `git.changed`. Nothing polls: with
//! no reasons, no git runs and the Store is not even looked at (`git_probes` and
//! `git_checks` in `server.info` stay flat). It does not listen to the event bus, so a
//! server without subscribers encodes no events, and a pane's output costs it nothing.
//!
//! Watched per repo (inotify, through `notify`): the directories of its tracked files, each
//! alone (edits make it dirty; ignored trees like `target/` are never watched; at most
//! [`MAX_WATCHED_DIRS`]), a new directory that git does not ignore (with the directories
//! under it that hold files git does not ignore), its git dir, and the common dir with its `refs`. Inside a `.git`,
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

/// The directories under `dir` (itself included) holding files git does not ignore, tracked
/// or not (a directory made again by a checkout has tracked ones), the shallowest first, at
/// most `max`; nothing when `dir` is ignored (`target/`).
fn unignored_dirs(root: &Path, dir: &Path, max: usize) -> Vec<PathBuf> {
    let Ok(rel) = dir.strip_prefix(root) else { return Vec::new() };
    let Some(rel_str) = rel.to_str().filter(|r| !r.is_empty()) else { return Vec::new() };
    // `check-ignore` exits 0 for an ignored path, 1 for one that is not.
    match crate::tasks::git::git_raw(root, &["check-ignore", "-q", "--", rel_str]) {
        Ok(out) if !out.ok => {}
        _ => return Vec::new(),
    }
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    dirs.insert(dir.to_path_buf());
    let listed = crate::tasks::git::git_raw(
        root,
        &["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", rel_str],
    );
    if let Ok(out) = listed {
        for file in out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
            let rel =
                Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(file));
            let mut at = rel.parent();
            while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
                let full = root.join(d);
                if !full.starts_with(dir) || !dirs.insert(full) {
                    break;
                }
                at = d.parent();
            }
        }
    }
    let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| d.components().count());
    dirs.truncate(max);
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

    /// Watches the directories among `changed` that appeared in a watched work tree since it
    /// was listed (not inside a `.git`, not ignored), with the directories under them that
    /// hold files git does not ignore, so a file made in a new directory is seen; forgets the watched ones that went away.
    fn watch_new_dirs(&mut self, changed: &[PathBuf]) {
        for path in changed {
            if self.watcher.is_none() {
                return;
            }
            if !path.is_dir() {
                // A watched directory removed: forgotten, so one made again is watched again.
                if self.watched.remove(path) {
                    if let Some(watcher) = self.watcher.as_mut() {
                        let _ = watcher.unwatch(path);
                    }
                    self.by_root.values_mut().for_each(|dirs| dirs.retain(|d| d != path));
                }
                continue;
            }
            if self.watched.contains(path) {
                continue;
            }
            if path.components().any(|c| c.as_os_str() == ".git") {
                continue;
            }
            // The deepest work tree holding it (a nested repo's own root is its own).
            let Some(root) = self
                .by_root
                .keys()
                .filter(|r| path.starts_with(r) && path != *r)
                .max_by_key(|r| r.components().count())
                .cloned()
            else {
                continue;
            };
            let have = self.by_root.get(&root).map_or(0, Vec::len);
            let room = MAX_WATCHED_DIRS.saturating_sub(have);
            for dir in unignored_dirs(&root, path, room) {
                if self.watched.contains(&dir) {
                    continue;
                }
                let Some(watcher) = self.watcher.as_mut() else { return };
                if let Err(e) = watcher.watch(&dir, RecursiveMode::NonRecursive) {
                    tracing::debug!(path = %dir.display(), error = %e, "cannot watch");
                    continue;
                }
                self.watched.insert(dir.clone());
                self.by_root.entry(root.clone()).or_default().push(dir);
            }
        }
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

/// Starts the watcher for `store` (on the current runtime); a second call does nothing.
pub fn spawn(store: Arc<Mutex<Store>>) {
    let Some(mut kicks) = lock(&store).git.kick.open() else { return };
    let (fs_tx, mut fs) = mpsc::unbounded_channel::<PathBuf>();
    let mut state = State::new();
    state.watcher = watcher(fs_tx);
    tokio::spawn(async move {
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
                        Some(Kick::Dirs) => reasons.check = true,
                        None => return,
                    },
                    Some(path) = fs.recv() => reasons.changed.push(path),
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
    super::CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dirs = lock(store).git_dirs();
    let all = !reasons.all.is_empty();
    let probe_dirs: Vec<String> =
        dirs.iter().filter(|d| all || state.affected(d, &reasons.changed)).cloned().collect();
    let gone: Vec<String> = state.known.keys().filter(|d| !dirs.contains(*d)).cloned().collect();
    let count = probe_dirs.len();
    let mut changed = reasons.changed;
    changed.sort();
    changed.dedup();
    let (state, changes) = if probe_dirs.is_empty() && gone.is_empty() && changed.is_empty() {
        (state, Vec::new())
    } else {
        let work = tokio::task::spawn_blocking(move || {
            let mut state = state;
            state.watch_new_dirs(&changed);
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
    use super::*;
    use crate::commands::Command;
    use crate::events::EventBus;

    /// Regression: the watcher subscribed to the event bus, so with no client connected every
    /// event (each pane's output included) was still encoded, and each one made the watcher
    /// lock the Store. Now it has no subscription and learns of a new workspace from the
    /// Store's kick.
    #[test]
    fn the_watcher_subscribes_to_nothing_and_follows_the_stores_kicks() {
        let home = tempfile::tempdir().expect("a temp dir");
        let repo = home.path().join("repo");
        std::fs::create_dir(&repo).expect("mkdir");
        let init = std::process::Command::new("git")
            .args(["init", "-q", "-b", "trunk"])
            .arg(&repo)
            .output()
            .expect("run git init");
        assert!(init.status.success(), "git init: {init:?}");
        let bus = EventBus::default();
        let store = Arc::new(Mutex::new(crate::store::test_store(home.path(), bus.clone())));
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async {
            spawn(store.clone());
            assert_eq!(bus.subscriber_count(), 0, "the watcher listens to no events");
            let create = Command::WorkspaceCreate { name: Some("r".into()), cwd: Some(repo) };
            lock(&store).execute(create).expect("a workspace");
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                let view = lock(&store).view();
                let git = view.workspaces.iter().find_map(|w| w.git.clone());
                if let Some(git) = git {
                    assert_eq!(git.branch.as_deref(), Some("trunk"));
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "no git context for the new workspace"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    }

    #[test]
    fn only_head_index_and_refs_count_inside_git() {
        use std::path::Path;
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
