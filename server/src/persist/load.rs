//! Reading `snapshot.json` back: classifying the file, moving a corrupt one aside, refusing a
//! future one, migrating an older one, and decoding entry by entry so that one bad pane never
//! hides the rest (RELIABILITY #3, #4).
//!
//! The loader hands out a [`Snapshot`] the Store can rebuild without further checks: every id
//! parses as its kind and is path-safe, every pane's tab and workspace exist, every tab has at
//! least one pane, and every tab's layout names exactly that tab's panes, once each, with finite,
//! clamped ratios (layout repair happens here, and each repair is reported); sizes are within
//! `berth_engine::limits` and titles are sanitised and capped. It writes nothing except the
//! rename that moves a corrupt file aside and, when it skipped or repaired anything, a copy of
//! the original as `snapshot.json.partial-<time>` (the next save would replace the only record
//! of what was skipped); it never touches a file from a newer Berth.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

use berth_engine::ids::{NotificationId, PaneId, TabId, TaskId, WorkspaceId};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::durable::write_atomic;
use super::error::PersistError;
use super::fs::StateFs;
use super::guard::SnapshotSummary;
use super::migrate::migrate;
use super::snapshot::{
    agent_config_env, allowlisted_env, LayoutRecord, NotificationRecord, PaneRecord, SizeRecord,
    Snapshot, SplitDirRecord, TabRecord, WorkspaceRecord, ATTENTIONS, LIFECYCLES,
    MAX_NOTIFICATIONS, MAX_SNAPSHOT_BYTES, PANE_STATES, SNAPSHOT_FILE, SNAPSHOT_VERSION,
};
use super::stamp::{now_ms, utc_stamp};
use super::task_record::{TaskRecord, TASK_STATES};

/// The most problems a load reports one by one; the rest are counted.
pub const MAX_REPORTED_PROBLEMS: usize = 100;

/// What a load found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadOutcome {
    /// The state to restore; empty when there was no usable snapshot.
    pub snapshot: Snapshot,
    /// Whether a snapshot file existed and was read.
    pub found: bool,
    /// The schema version the file was migrated from, if it was older.
    pub migrated_from: Option<u32>,
    /// Where a corrupt snapshot was moved; the server starts empty and must say so loudly.
    pub moved_aside: Option<PathBuf>,
    /// Everything skipped, repaired or moved, in words, for stderr and the log.
    pub problems: Vec<String>,
    /// What the file held before anything was skipped (its pane entries, those not `EXITED`,
    /// its workspace entries): the guard compares saves against this, not against what loaded.
    pub held: SnapshotSummary,
    /// Where the original was copied when the load skipped or repaired anything.
    pub kept_partial: Option<PathBuf>,
}

impl LoadOutcome {
    /// Whether the load needed no repair at all.
    pub fn is_clean(&self) -> bool {
        self.moved_aside.is_none() && self.problems.is_empty()
    }
}

/// Why there is no state to start from.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The snapshot was written by a newer Berth; it is left exactly as it is.
    #[error(
        "{} was written by a newer Berth (snapshot version {found}; this Berth reads versions up \
         to {supported}). Berth will not overwrite it. Run the newer Berth, or start this one with \
         --move-aside-future to rename it to {SNAPSHOT_FILE}.future-v{found}-<time> and start empty.",
        .path.display()
    )]
    FutureVersion {
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
        /// The snapshot file.
        path: PathBuf,
    },
    /// The state dir could not be read, or a corrupt snapshot could not be moved aside.
    #[error(transparent)]
    Persist(#[from] PersistError),
}

/// What the top level of a snapshot file says.
enum Classified {
    Corrupt(String),
    Future(u32),
    Usable(Map<String, Value>, u32),
}

/// What the bytes of a snapshot file decode to.
enum Parsed {
    Corrupt(String),
    Future(u32),
    Loaded { snapshot: Snapshot, migrated_from: Option<u32>, held: SnapshotSummary },
}

/// Loads `dir/snapshot.json`, moving a corrupt one aside under the current time.
pub fn load(fs: &dyn StateFs, dir: &Path) -> Result<LoadOutcome, LoadError> {
    load_at(fs, dir, now_ms())
}

/// [`load`] with the clock given, for the names of moved-aside files.
pub fn load_at(fs: &dyn StateFs, dir: &Path, now_ms: u64) -> Result<LoadOutcome, LoadError> {
    let path = dir.join(SNAPSHOT_FILE);
    let mut outcome = LoadOutcome::default();
    outcome.snapshot.snapshot_version = SNAPSHOT_VERSION;
    let bytes = match fs.read(&path, MAX_SNAPSHOT_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(outcome),
        Err(e) => {
            outcome.found = true;
            move_corrupt(fs, dir, now_ms, &format!("could not be read ({e})"), &mut outcome)?;
            return Ok(outcome);
        }
    };
    outcome.found = true;
    match parse(&bytes, &mut outcome.problems) {
        Parsed::Future(found) => {
            return Err(LoadError::FutureVersion { found, supported: SNAPSHOT_VERSION, path })
        }
        Parsed::Corrupt(reason) => move_corrupt(fs, dir, now_ms, &reason, &mut outcome)?,
        Parsed::Loaded { snapshot, migrated_from, held } => {
            outcome.snapshot = snapshot;
            outcome.migrated_from = migrated_from;
            outcome.held = held;
            if !outcome.problems.is_empty() {
                keep_partial(fs, dir, now_ms, &bytes, &mut outcome);
            }
        }
    }
    cap_problems(&mut outcome.problems);
    Ok(outcome)
}

/// Moves a snapshot from a newer Berth aside to `snapshot.json.future-v<N>-<time>`, for an
/// explicit `--move-aside-future`. Returns the new path, or `None` if there is no snapshot or it
/// is not from a newer Berth (then nothing is touched).
pub fn move_aside_future(
    fs: &dyn StateFs,
    dir: &Path,
    now_ms: u64,
) -> Result<Option<PathBuf>, PersistError> {
    let path = dir.join(SNAPSHOT_FILE);
    let bytes = match fs.read(&path, MAX_SNAPSHOT_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(PersistError::io("read", &path, e)),
    };
    let Classified::Future(found) = classify(&bytes) else { return Ok(None) };
    let aside = move_aside(fs, dir, &format!("future-v{found}-{}", utc_stamp(now_ms)))?;
    tracing::warn!(path = %aside.display(), "moved a snapshot from a newer Berth aside");
    Ok(Some(aside))
}

/// Copies the original bytes of a snapshot that loaded only in part to
/// `snapshot.json.partial-<time>`, which nothing rotates or removes; a failure is reported as
/// one more problem (the load itself goes on).
fn keep_partial(
    fs: &dyn StateFs,
    dir: &Path,
    now_ms: u64,
    bytes: &[u8],
    outcome: &mut LoadOutcome,
) {
    let base = format!("{SNAPSHOT_FILE}.partial-{}", utc_stamp(now_ms));
    let free = (0..1000)
        .map(|n| dir.join(if n == 0 { base.clone() } else { format!("{base}-{n}") }))
        .find(|p| matches!(fs.metadata(p), Err(e) if e.kind() == io::ErrorKind::NotFound));
    let result = match free {
        Some(path) => write_atomic(fs, &path, bytes).map(|()| path),
        None => Err(PersistError::io(
            "keep a copy of",
            &dir.join(SNAPSHOT_FILE),
            io::Error::new(io::ErrorKind::AlreadyExists, format!("1000 files named {base}* exist")),
        )),
    };
    match result {
        Ok(path) => {
            outcome.problems.push(format!(
                "the original snapshot, with everything that was skipped, is kept as {}",
                path.display()
            ));
            outcome.kept_partial = Some(path);
        }
        Err(e) => outcome.problems.push(format!(
            "could not keep a copy of the original snapshot ({e}); what was skipped will be lost \
             at the next save"
        )),
    }
}

fn move_corrupt(
    fs: &dyn StateFs,
    dir: &Path,
    now_ms: u64,
    reason: &str,
    outcome: &mut LoadOutcome,
) -> Result<(), PersistError> {
    let aside = move_aside(fs, dir, &format!("corrupt-{}", utc_stamp(now_ms)))?;
    outcome.problems.push(format!(
        "{} {reason}; it was moved aside to {} and Berth starts with an empty state",
        dir.join(SNAPSHOT_FILE).display(),
        aside.display()
    ));
    outcome.moved_aside = Some(aside);
    Ok(())
}

/// Decodes the bytes of a snapshot file: pure, so it can be fuzzed without touching a disk.
fn parse(bytes: &[u8], problems: &mut Vec<String>) -> Parsed {
    match classify(bytes) {
        Classified::Corrupt(reason) => Parsed::Corrupt(reason),
        Classified::Future(found) => Parsed::Future(found),
        Classified::Usable(mut root, version) => {
            let mut migrated_from = None;
            if version < SNAPSHOT_VERSION {
                root = migrate(root, version, problems);
                migrated_from = Some(version);
            }
            let held = held_by(&root);
            Parsed::Loaded { snapshot: decode(&root, problems), migrated_from, held }
        }
    }
}

fn classify(bytes: &[u8]) -> Classified {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Classified::Corrupt("is empty".into());
    }
    let root = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(root)) => root,
        Ok(_) => return Classified::Corrupt("is not a JSON object".into()),
        Err(e) => return Classified::Corrupt(format!("is not valid JSON ({e})")),
    };
    match schema_version(&root) {
        Ok(v) if v > SNAPSHOT_VERSION => Classified::Future(v),
        Ok(v) => Classified::Usable(root, v),
        Err(reason) => Classified::Corrupt(reason),
    }
}

/// The schema version of a snapshot object: `snapshot_version`, or 0 for the legacy layout.
fn schema_version(root: &Map<String, Value>) -> Result<u32, String> {
    match root.get("snapshot_version") {
        // A version too large for u32 is still a version from the future.
        Some(v) => v
            .as_u64()
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
            .ok_or_else(|| format!("has a snapshot_version that is not a version number ({v})")),
        None => match root.get("version") {
            Some(v) if v.as_u64() == Some(0) => Ok(0),
            Some(v) => Err(format!("has no snapshot_version and an unknown legacy version ({v})")),
            None if root.contains_key("workspaces") => Ok(0),
            None => Err("has no snapshot_version and does not look like a Berth snapshot".into()),
        },
    }
}

/// Renames `snapshot.json` to `snapshot.json.<label>`, adding `-1`, `-2` … rather than
/// replacing an earlier file of that name.
fn move_aside(fs: &dyn StateFs, dir: &Path, label: &str) -> Result<PathBuf, PersistError> {
    const MAX_SUFFIX: usize = 1000;
    let from = dir.join(SNAPSHOT_FILE);
    let base = format!("{SNAPSHOT_FILE}.{label}");
    for n in 0..MAX_SUFFIX {
        let to = dir.join(if n == 0 { base.clone() } else { format!("{base}-{n}") });
        match fs.metadata(&to) {
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(PersistError::io("inspect", &to, e)),
        }
        // The state dir lock makes this check-then-rename race-free against other Berths.
        fs.rename(&from, &to).map_err(|e| PersistError::io("move aside", &from, e))?;
        if let Err(e) = fs.sync_dir(dir) {
            tracing::warn!(error = %e, "could not sync the state dir after moving a snapshot aside");
        }
        return Ok(to);
    }
    Err(PersistError::io(
        "move aside",
        &from,
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{MAX_SUFFIX} files named {base}* exist"),
        ),
    ))
}

fn cap_problems(problems: &mut Vec<String>) {
    if problems.len() > MAX_REPORTED_PROBLEMS {
        let more = problems.len() - MAX_REPORTED_PROBLEMS;
        problems.truncate(MAX_REPORTED_PROBLEMS);
        problems.push(format!("… and {more} more problems"));
    }
}

/// What a current-schema snapshot object holds, counted before anything is skipped.
fn held_by(root: &Map<String, Value>) -> SnapshotSummary {
    let items = |key: &str| match root.get(key) {
        Some(Value::Array(items)) => items.as_slice(),
        _ => &[],
    };
    let panes = items("panes");
    SnapshotSummary {
        panes: panes.len(),
        live: panes
            .iter()
            .filter(|p| p.get("state").and_then(Value::as_str) != Some("EXITED"))
            .count(),
        workspaces: items("workspaces").len(),
    }
}

/// Decodes a current-schema snapshot object entry by entry, skipping and reporting what does
/// not decode, and repairing references (see the module header).
fn decode(root: &Map<String, Value>, problems: &mut Vec<String>) -> Snapshot {
    let mut snapshot = Snapshot {
        snapshot_version: SNAPSHOT_VERSION,
        server_version: root.get("server_version").and_then(Value::as_str).unwrap_or("").to_owned(),
        saved_at: root.get("saved_at").and_then(Value::as_u64).unwrap_or(0),
        ..Snapshot::default()
    };
    let mut layouts: HashMap<String, Option<LayoutRecord>> = HashMap::new();
    let mut tab_owner: HashMap<String, String> = HashMap::new();
    for (i, raw) in list(root, "workspaces", problems).iter().enumerate() {
        let label = entry_label("workspace", i, raw);
        match decode_workspace(raw, &label, &mut layouts, &mut tab_owner, problems) {
            Ok(ws) if snapshot.workspaces.iter().any(|w| w.id == ws.id) => {
                problems.push(format!("{label} skipped: the id appears twice"));
                for tab in &ws.tabs {
                    tab_owner.remove(&tab.id);
                }
            }
            Ok(ws) => snapshot.workspaces.push(ws),
            Err(e) => problems.push(format!("{label} skipped: {e}")),
        }
    }
    let mut seen_panes = HashSet::new();
    for (i, raw) in list(root, "panes", problems).iter().enumerate() {
        let label = entry_label("pane", i, raw);
        match decode_pane(raw, &tab_owner, problems, &label) {
            Ok(pane) if !seen_panes.insert(pane.id.clone()) => {
                problems.push(format!("{label} skipped: the id appears twice"));
            }
            Ok(pane) => snapshot.panes.push(pane),
            Err(e) => problems.push(format!("{label} skipped: {e}")),
        }
    }
    repair_structure(&mut snapshot, layouts, problems);
    let wanted = decode_string(root.get("active_workspace_id"));
    snapshot.active_workspace_id = pick_active(
        "the active workspace",
        wanted,
        snapshot.workspaces.iter().map(|w| w.id.as_str()),
        problems,
    );
    snapshot.notifications = decode_notifications(root, problems);
    snapshot.tasks = decode_tasks(root, problems);
    snapshot
}

/// The saved tasks; one with an unreadable id or state, or an id seen before, is skipped.
fn decode_tasks(root: &Map<String, Value>, problems: &mut Vec<String>) -> Vec<TaskRecord> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, raw) in list(root, "tasks", problems).iter().enumerate() {
        let label = entry_label("task", i, raw);
        let task: TaskRecord = match decode_entry(raw.clone()) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{label} skipped: {e}"));
                continue;
            }
        };
        if let Err(e) = TaskId::parse(&task.id) {
            problems.push(format!("{label} skipped: {e}"));
        } else if !TASK_STATES.contains(&task.state.as_str()) {
            problems.push(format!("{label} skipped: unknown state {:?}", task.state));
        } else if !seen.insert(task.id.clone()) {
            problems.push(format!("{label} skipped: the id appears twice"));
        } else {
            out.push(task);
        }
    }
    out
}

fn decode_workspace(
    raw: &Value,
    label: &str,
    layouts: &mut HashMap<String, Option<LayoutRecord>>,
    tab_owner: &mut HashMap<String, String>,
    problems: &mut Vec<String>,
) -> Result<WorkspaceRecord, String> {
    let Value::Object(obj) = raw else { return Err("it is not an object".into()) };
    let mut obj = obj.clone();
    let raw_tabs = obj.remove("tabs");
    let mut ws: WorkspaceRecord = decode_entry(Value::Object(obj))?;
    WorkspaceId::parse(&ws.id).map_err(|e| e.to_string())?;
    let tabs = match raw_tabs {
        Some(Value::Array(tabs)) => tabs,
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            problems.push(format!("{label}: `tabs` is not a list; its tabs were skipped"));
            Vec::new()
        }
    };
    for (i, raw_tab) in tabs.iter().enumerate() {
        let tab_label = format!("{} of workspace {:?}", entry_label("tab", i, raw_tab), ws.id);
        match decode_tab(raw_tab, &tab_label, problems) {
            Ok((tab, _)) if tab_owner.contains_key(&tab.id) => {
                problems.push(format!("{tab_label} skipped: the id appears twice"));
            }
            Ok((tab, layout)) => {
                tab_owner.insert(tab.id.clone(), ws.id.clone());
                layouts.insert(tab.id.clone(), layout);
                ws.tabs.push(tab);
            }
            Err(e) => problems.push(format!("{tab_label} skipped: {e}")),
        }
    }
    Ok(ws)
}

fn decode_tab(
    raw: &Value,
    label: &str,
    problems: &mut Vec<String>,
) -> Result<(TabRecord, Option<LayoutRecord>), String> {
    let Value::Object(obj) = raw else { return Err("it is not an object".into()) };
    let mut obj = obj.clone();
    let raw_layout = obj.remove("layout");
    let mut tab: TabRecord = decode_entry(Value::Object(obj))?;
    TabId::parse(&tab.id).map_err(|e| e.to_string())?;
    repair_size(&mut tab.size, label, problems);
    if let Some(title) = &mut tab.title {
        repair_title(title, label, problems);
    }
    let layout = match raw_layout {
        None | Some(Value::Null) => {
            problems.push(format!("{label}: it has no layout; one is built from its panes"));
            None
        }
        Some(raw) => match decode_entry::<LayoutRecord>(raw) {
            Ok(layout) => Some(layout),
            Err(e) => {
                problems.push(format!("{label}: its layout does not decode ({e}); it is rebuilt"));
                None
            }
        },
    };
    Ok((tab, layout))
}

fn decode_pane(
    raw: &Value,
    tab_owner: &HashMap<String, String>,
    problems: &mut Vec<String>,
    label: &str,
) -> Result<PaneRecord, String> {
    let mut pane: PaneRecord = decode_entry(raw.clone())?;
    PaneId::parse(&pane.id).map_err(|e| e.to_string())?;
    TabId::parse(&pane.tab_id).map_err(|e| format!("its tab id: {e}"))?;
    let Some(owner) = tab_owner.get(&pane.tab_id) else {
        return Err(format!("its tab {:?} did not load", pane.tab_id));
    };
    if &pane.workspace_id != owner {
        problems.push(format!(
            "{label}: it named workspace {:?} but its tab {:?} belongs to {owner:?}; the tab wins",
            pane.workspace_id, pane.tab_id
        ));
        pane.workspace_id = owner.clone();
    }
    for (field, value, known, default) in [
        ("state", &mut pane.state, PANE_STATES, "RESTORED"),
        ("lifecycle", &mut pane.lifecycle, LIFECYCLES, "idle"),
        ("attention", &mut pane.attention, ATTENTIONS, "none"),
    ] {
        if !known.contains(&value.as_str()) {
            problems.push(format!("{label}: unknown {field} {value:?}; using {default:?}"));
            *value = default.to_owned();
        }
    }
    repair_size(&mut pane.size, label, problems);
    repair_title(&mut pane.title, label, problems);
    pane.env = allowlisted_env(std::mem::take(&mut pane.env));
    pane.agent.config_env = agent_config_env(std::mem::take(&mut pane.agent.config_env));
    Ok(pane)
}

/// Resets a size beyond `berth_engine::limits` (or zero) to 80×24, with a problem.
fn repair_size(size: &mut SizeRecord, label: &str, problems: &mut Vec<String>) {
    if let Err(e) = berth_engine::limits::check_size(u32::from(size.cols), u32::from(size.rows)) {
        problems.push(format!("{label}: {e}; it was reset to 80×24"));
        *size = SizeRecord::default();
    }
}

/// Sanitises a title as live titles are (no control characters, one line, capped), with a
/// problem when that changed it.
fn repair_title(title: &mut String, label: &str, problems: &mut Vec<String>) {
    let clean = berth_engine::notify::sanitize(title, berth_engine::notify::MAX_TITLE_CHARS);
    if clean != *title {
        let chars = title.chars().count();
        problems.push(format!(
            "{label}: its title ({chars} characters) held control characters or was longer than \
             {} characters; it was cleaned",
            berth_engine::notify::MAX_TITLE_CHARS
        ));
        *title = clean;
    }
}

/// Gives every tab a layout naming exactly its loaded panes, drops tabs left without panes, and
/// fixes the active tab and pane of each workspace and tab.
fn repair_structure(
    snapshot: &mut Snapshot,
    mut layouts: HashMap<String, Option<LayoutRecord>>,
    problems: &mut Vec<String>,
) {
    let mut panes_of_tab: HashMap<&str, Vec<String>> = HashMap::new();
    for pane in &snapshot.panes {
        panes_of_tab.entry(pane.tab_id.as_str()).or_default().push(pane.id.clone());
    }
    for ws in &mut snapshot.workspaces {
        ws.tabs.retain_mut(|tab| {
            let panes = panes_of_tab.get(tab.id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            let layout = layouts.remove(&tab.id).flatten();
            match repair_layout(&tab.id, layout, panes, problems) {
                Some(layout) => {
                    tab.layout = layout;
                    let ids = tab.layout.pane_ids();
                    tab.active_pane_id = pick_active(
                        &format!("the active pane of tab {:?}", tab.id),
                        tab.active_pane_id.take(),
                        ids.into_iter(),
                        problems,
                    );
                    true
                }
                None => {
                    problems
                        .push(format!("tab {:?} has no pane that loaded; it was dropped", tab.id));
                    false
                }
            }
        });
        let wanted = ws.active_tab_id.take();
        ws.active_tab_id = pick_active(
            &format!("the active tab of workspace {:?}", ws.id),
            wanted,
            ws.tabs.iter().map(|t| t.id.as_str()),
            problems,
        );
    }
}

/// Repairs one tab's layout against the panes that loaded for it (`panes`, in file order):
/// leaves naming other panes, or a pane a second time, are removed (a split left with one child
/// collapses into it); loaded panes missing from the layout are added at its right edge; a tab
/// with no layout gets one built from its panes. Ratios become finite and clamped.
fn repair_layout(
    tab: &str,
    layout: Option<LayoutRecord>,
    panes: &[String],
    problems: &mut Vec<String>,
) -> Option<LayoutRecord> {
    let keep: HashSet<&str> = panes.iter().map(String::as_str).collect();
    let mut seen = HashSet::new();
    let had_layout = layout.is_some();
    let mut layout = layout.and_then(|l| prune(l, &keep, &mut seen, tab, problems));
    let mut added = Vec::new();
    for id in panes.iter().filter(|id| !seen.contains(id.as_str())) {
        let leaf = LayoutRecord::Pane(id.clone());
        layout = Some(match layout {
            None => leaf,
            Some(l) => LayoutRecord::split(SplitDirRecord::Right, 0.5, l, leaf),
        });
        added.push(id.as_str());
    }
    if !added.is_empty() && had_layout {
        problems.push(format!(
            "tab {tab:?}: panes {added:?} were missing from its layout and were added"
        ));
    }
    let mut layout = layout?;
    if layout.normalize_ratios() > 0 {
        problems.push(format!("tab {tab:?}: a split ratio was not a number; it was reset to 0.5"));
    }
    Some(layout)
}

fn prune(
    layout: LayoutRecord,
    keep: &HashSet<&str>,
    seen: &mut HashSet<String>,
    tab: &str,
    problems: &mut Vec<String>,
) -> Option<LayoutRecord> {
    match layout {
        LayoutRecord::Pane(id) => {
            if !keep.contains(id.as_str()) {
                problems.push(format!(
                    "tab {tab:?}: its layout named pane {id:?}, which did not load here; removed"
                ));
                None
            } else if !seen.insert(id.clone()) {
                problems.push(format!(
                    "tab {tab:?}: its layout named pane {id:?} twice; kept the first"
                ));
                None
            } else {
                Some(LayoutRecord::Pane(id))
            }
        }
        LayoutRecord::Split(split) => {
            let split = *split;
            let first = prune(split.first, keep, seen, tab, problems);
            let second = prune(split.second, keep, seen, tab, problems);
            match (first, second) {
                (Some(first), Some(second)) => {
                    Some(LayoutRecord::split(split.dir, split.ratio, first, second))
                }
                (one, None) | (None, one) => one,
            }
        }
    }
}

/// `wanted` if it is among `ids`, else the first of `ids` (reporting a wanted id that is gone).
fn pick_active<'a>(
    what: &str,
    wanted: Option<String>,
    mut ids: impl Iterator<Item = &'a str> + Clone,
    problems: &mut Vec<String>,
) -> Option<String> {
    if let Some(w) = &wanted {
        if ids.clone().any(|id| id == w) {
            return wanted;
        }
        problems.push(format!("{what} {w:?} did not load; another was chosen"));
    }
    ids.next().map(str::to_owned)
}

fn decode_notifications(
    root: &Map<String, Value>,
    problems: &mut Vec<String>,
) -> Vec<NotificationRecord> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, raw) in list(root, "notifications", problems).iter().enumerate() {
        let label = entry_label("notification", i, raw);
        let mut n: NotificationRecord = match decode_entry(raw.clone()) {
            Ok(n) => n,
            Err(e) => {
                problems.push(format!("{label} skipped: {e}"));
                continue;
            }
        };
        if let Err(e) = NotificationId::parse(&n.id) {
            problems.push(format!("{label} skipped: {e}"));
            continue;
        }
        if !seen.insert(n.id.clone()) {
            problems.push(format!("{label} skipped: the id appears twice"));
            continue;
        }
        if n.pane_id.as_deref().is_some_and(|p| PaneId::parse(p).is_err()) {
            problems.push(format!("{label}: its pane id is not valid; dropped the reference"));
            n.pane_id = None;
        }
        if n.workspace_id.as_deref().is_some_and(|w| WorkspaceId::parse(w).is_err()) {
            problems.push(format!("{label}: its workspace id is not valid; dropped the reference"));
            n.workspace_id = None;
        }
        out.push(n);
    }
    let excess = out.len().saturating_sub(MAX_NOTIFICATIONS);
    out.drain(..excess);
    out
}

fn decode_entry<T: DeserializeOwned>(raw: Value) -> Result<T, String> {
    serde_json::from_value(raw).map_err(|e| e.to_string())
}

fn decode_string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

/// The array at `key` of the top level (nothing, with a problem, if something else is there).
fn list<'a>(root: &'a Map<String, Value>, key: &str, problems: &mut Vec<String>) -> &'a [Value] {
    match root.get(key) {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => &[],
        Some(_) => {
            problems.push(format!("`{key}` is not a list; all of it was skipped"));
            &[]
        }
    }
}

/// `pane #3 ("pane_x")`: how problems name an entry, with its id when it has a readable one.
fn entry_label(kind: &str, index: usize, raw: &Value) -> String {
    const MAX_SHOWN: usize = 80;
    match raw.get("id").and_then(Value::as_str) {
        Some(id) => {
            let shown: String = id.chars().take(MAX_SHOWN).collect();
            format!("{kind} #{index} ({shown:?})")
        }
        None => format!("{kind} #{index}"),
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
