//! The one encoder of snapshots: what every save writes, made from a [`Snapshot`].
//!
//! [`encode`] is the single place that turns a [`Snapshot`] into bytes, so it is where secrets
//! are kept out (RELIABILITY #12): it re-filters every pane's env and agent config env through
//! [`allowlisted_env`] and redacts the secrets of command lines, titles, jobs and tasks
//! ([`super::redact`]), whatever the caller passed in; and where what is written is kept
//! loadable: the caps ([`super::caps`]) cut long fields and prune finished tasks, and a
//! snapshot the loader would refuse is never written. This module must not read files or know
//! about the Store.

use std::path::{Path, PathBuf};

use super::caps::{self, Caps, Cut, SAVE_BUDGET_BYTES};
use super::durable::write_atomic;
use super::error::PersistError;
use super::fs::StateFs;
use super::guard::SnapshotSummary;
use super::redact::{redact_argv, redact_text};
use super::snapshot::{
    agent_config_env, allowlisted_env, PaneRecord, Snapshot, MAX_NOTIFICATIONS, MAX_SNAPSHOT_BYTES,
    SNAPSHOT_FILE, SNAPSHOT_VERSION,
};

/// What a successful save wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveReport {
    /// The snapshot file.
    pub path: PathBuf,
    /// Its length in bytes.
    pub bytes: usize,
    /// What it holds.
    pub summary: SnapshotSummary,
    /// The copy made in `snapshots/`, if this save made one.
    pub history_copy: Option<PathBuf>,
    /// What the caps cut or left out of this save ([`super::caps`]).
    pub cuts: Vec<Cut>,
}

/// The snapshot exactly as it is written at the normal caps: version stamped, env
/// allowlisted, secrets redacted, notifications cut to the last [`MAX_NOTIFICATIONS`], ratios
/// finite and clamped, long fields cut and finished tasks pruned ([`super::caps`]).
pub fn sanitized(snapshot: &Snapshot) -> Snapshot {
    let mut clean = redacted(snapshot);
    caps::apply(&mut clean, Caps::NORMAL);
    clean
}

/// `snapshot` with its env allowlisted and its secrets redacted (before any cut, so the
/// redactor sees whole words).
fn redacted(snapshot: &Snapshot) -> Snapshot {
    let mut clean = snapshot.clone();
    clean.snapshot_version = SNAPSHOT_VERSION;
    for pane in &mut clean.panes {
        pane.env = allowlisted_env(std::mem::take(&mut pane.env));
        pane.agent.config_env = agent_config_env(std::mem::take(&mut pane.agent.config_env));
        redact_pane(pane);
    }
    for tab in clean.workspaces.iter_mut().flat_map(|w| w.tabs.iter_mut()) {
        tab.layout.normalize_ratios();
        if let Some(title) = &mut tab.title {
            *title = redact_text(title);
        }
    }
    for n in &mut clean.notifications {
        n.title = redact_text(&n.title);
        n.body = redact_text(&n.body);
    }
    for task in &mut clean.tasks {
        redact_task(task);
    }
    let excess = clean.notifications.len().saturating_sub(MAX_NOTIFICATIONS);
    clean.notifications.drain(..excess);
    clean
}

/// Redacts the secrets a task's text may hold (its contract, label and report), as titles'.
fn redact_task(task: &mut super::task_record::TaskRecord) {
    task.label = redact_text(&task.label);
    let c = &mut task.contract;
    c.objective = redact_text(&c.objective);
    for item in c.constraints.iter_mut().chain(c.acceptance.iter_mut()) {
        *item = redact_text(item);
    }
    c.output_format = c.output_format.as_deref().map(redact_text);
    if let Some(result) = &mut task.result {
        result.summary = redact_text(&result.summary);
        result.evidence = result.evidence.as_deref().map(redact_text);
    }
}

/// Redacts the secrets a pane's command lines may hold (see [`super::redact`]).
fn redact_pane(pane: &mut PaneRecord) {
    pane.argv = redact_argv(&pane.argv);
    pane.title = redact_text(&pane.title);
    pane.was_running = pane.was_running.as_deref().map(redact_text);
    pane.agent.resume_argv = pane.agent.resume_argv.as_deref().map(redact_argv);
    pane.agent.reported_resume_argv = pane.agent.reported_resume_argv.as_deref().map(redact_argv);
}

/// Encodes `snapshot` as the bytes of `snapshot.json`, through [`sanitized`]. This is the only
/// encoder of snapshots.
pub fn encode(snapshot: &Snapshot) -> Result<Vec<u8>, PersistError> {
    encode_capped(snapshot).map(|(bytes, _)| bytes)
}

/// Encodes `snapshot` as [`encode`] does and says what the caps cut: at [`Caps::NORMAL`], again
/// at [`Caps::TIGHT`] when that is over [`SAVE_BUDGET_BYTES`]; refused
/// ([`PersistError::TooLarge`]) when even that is over [`MAX_SNAPSHOT_BYTES`], which the loader
/// would not read.
pub fn encode_capped(snapshot: &Snapshot) -> Result<(Vec<u8>, Vec<Cut>), PersistError> {
    let clean = redacted(snapshot);
    let mut normal = clean.clone();
    let cuts = caps::apply(&mut normal, Caps::NORMAL);
    let bytes = to_bytes(&normal)?;
    if bytes.len() <= SAVE_BUDGET_BYTES {
        return Ok((bytes, cuts));
    }
    let mut tight = clean;
    let cuts = caps::apply(&mut tight, Caps::TIGHT);
    let bytes = to_bytes(&tight)?;
    if bytes.len() as u64 > MAX_SNAPSHOT_BYTES {
        return Err(PersistError::TooLarge { bytes: bytes.len(), max: MAX_SNAPSHOT_BYTES });
    }
    Ok((bytes, cuts))
}

fn to_bytes(snapshot: &Snapshot) -> Result<Vec<u8>, PersistError> {
    let mut bytes = serde_json::to_vec_pretty(snapshot)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Encodes `snapshot` and writes it atomically to `dir/snapshot.json`.
///
/// This applies no "better record" policy; [`super::StateDir::save`] consults the guard first.
pub fn save(fs: &dyn StateFs, dir: &Path, snapshot: &Snapshot) -> Result<SaveReport, PersistError> {
    let (bytes, cuts) = encode_capped(snapshot)?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(PersistError::EmptyEncoding);
    }
    let path = dir.join(SNAPSHOT_FILE);
    write_atomic(fs, &path, &bytes)?;
    Ok(SaveReport {
        path,
        bytes: bytes.len(),
        summary: SnapshotSummary::of(snapshot),
        history_copy: None,
        cuts,
    })
}
