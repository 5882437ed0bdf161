//! `snapshots/`: older snapshots kept for manual recovery.
//!
//! After a successful save, [`rotate`] copies `snapshot.json` to
//! `snapshots/snapshot-<UTC time>.json` when no copy lies within [`HISTORY_SPACING_MS`] of now,
//! never copies an empty snapshot, and deletes the oldest copies beyond [`HISTORY_KEEP`]. The
//! time comes from the caller, so tests inject it. This module must not decide whether a save
//! happens, and never reads the copies back (recovery is a person's job).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::durable::write_atomic;
use super::error::PersistError;
use super::fs::StateFs;
use super::snapshot::{MAX_SNAPSHOT_BYTES, SNAPSHOT_FILE};
use super::stamp::{parse_utc_stamp, utc_stamp};

/// The history directory's name in the state dir.
pub const HISTORY_DIR: &str = "snapshots";

/// How many copies are kept.
pub const HISTORY_KEEP: usize = 48;

/// The least time between two copies: 15 minutes.
pub const HISTORY_SPACING_MS: u64 = 15 * 60 * 1000;

const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".json";

/// What one rotation did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RotateOutcome {
    /// The copy made, if one was due.
    pub copied: Option<PathBuf>,
    /// The old copies deleted.
    pub removed: Vec<PathBuf>,
}

/// The time in a history file's name, if it is one.
pub fn history_stamp(name: &str) -> Option<u64> {
    parse_utc_stamp(name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?)
}

/// Copies `dir/snapshot.json` into `dir/snapshots/` if a copy is due at `now_ms`, then deletes
/// the oldest copies beyond [`HISTORY_KEEP`].
///
/// A copy is due when the snapshot holds at least one pane or workspace and no existing copy is
/// stamped within 15 minutes of `now_ms` in either direction (so a clock that jumped back still
/// gets copies, one per 15 minutes).
pub fn rotate(fs: &dyn StateFs, dir: &Path, now_ms: u64) -> Result<RotateOutcome, PersistError> {
    let mut outcome = RotateOutcome::default();
    let source = dir.join(SNAPSHOT_FILE);
    let bytes = match fs.read(&source, MAX_SNAPSHOT_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(outcome),
        Err(e) => return Err(PersistError::io("read", &source, e)),
    };
    if is_empty_snapshot(&bytes) {
        return Ok(outcome);
    }
    let history = dir.join(HISTORY_DIR);
    let mut copies = list_copies(fs, &history)?;
    if copies.iter().all(|(stamp, _)| now_ms.abs_diff(*stamp) >= HISTORY_SPACING_MS) {
        let name = format!("{PREFIX}{}{SUFFIX}", utc_stamp(now_ms));
        let path = history.join(&name);
        write_atomic(fs, &path, &bytes)?;
        copies.push((now_ms - now_ms % 1000, name));
        copies.sort();
        outcome.copied = Some(path);
    }
    let excess = copies.len().saturating_sub(HISTORY_KEEP);
    for (_, name) in copies.drain(..excess) {
        let path = history.join(name);
        fs.remove_file(&path)
            .map_err(|e| PersistError::io("remove the old history copy", &path, e))?;
        outcome.removed.push(path);
    }
    Ok(outcome)
}

/// Whether the snapshot bytes hold no pane and no workspace (or cannot be read as a snapshot).
fn is_empty_snapshot(bytes: &[u8]) -> bool {
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(bytes) else { return true };
    let count = |key: &str| root.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    count("panes") == 0 && count("workspaces") == 0
}

/// The history copies, oldest first, with their stamps.
fn list_copies(fs: &dyn StateFs, history: &Path) -> Result<Vec<(u64, String)>, PersistError> {
    let names = match fs.list_dir(history) {
        Ok(names) => names,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PersistError::io("list", history, e)),
    };
    let mut copies: Vec<(u64, String)> = names
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .filter_map(|n| history_stamp(&n).map(|stamp| (stamp, n)))
        .collect();
    copies.sort();
    Ok(copies)
}

#[cfg(test)]
mod tests {
    use super::super::encode::save;
    use super::super::fs::RealFs;
    use super::super::snapshot::Snapshot;
    use super::super::test_support::sample_snapshot;
    use super::*;

    const MIN: u64 = 60 * 1000;
    const T0: u64 = 1_795_994_100_000;

    fn copies(dir: &Path) -> Vec<String> {
        list_copies(&RealFs, &dir.join(HISTORY_DIR)).unwrap().into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn copies_at_most_one_per_15_minutes() {
        let dir = tempfile::tempdir().unwrap();
        save(&RealFs, dir.path(), &sample_snapshot()).unwrap();
        // (minutes after T0, whether a copy is made)
        let steps: &[(u64, bool)] =
            &[(0, true), (1, false), (14, false), (15, true), (29, false), (31, true), (200, true)];
        for &(minutes, copied) in steps {
            let outcome = rotate(&RealFs, dir.path(), T0 + minutes * MIN).unwrap();
            assert_eq!(outcome.copied.is_some(), copied, "at +{minutes} min");
        }
        assert_eq!(
            copies(dir.path()),
            [
                "snapshot-20261129T231500Z.json",
                "snapshot-20261129T233000Z.json",
                "snapshot-20261129T234600Z.json",
                "snapshot-20261130T023500Z.json"
            ]
        );
        let copy =
            std::fs::read(dir.path().join(HISTORY_DIR).join(&copies(dir.path())[0])).unwrap();
        assert_eq!(copy, std::fs::read(dir.path().join(SNAPSHOT_FILE)).unwrap());
    }

    #[test]
    fn keeps_the_newest_48() {
        let dir = tempfile::tempdir().unwrap();
        save(&RealFs, dir.path(), &sample_snapshot()).unwrap();
        for i in 0..60 {
            rotate(&RealFs, dir.path(), T0 + i * 16 * MIN).unwrap();
        }
        let names = copies(dir.path());
        assert_eq!(names.len(), HISTORY_KEEP);
        assert_eq!(history_stamp(&names[0]), Some(T0 + 12 * 16 * MIN), "the oldest 12 are gone");
        std::fs::write(dir.path().join(HISTORY_DIR).join("notes.txt"), "mine").unwrap();
        rotate(&RealFs, dir.path(), T0 + 60 * 16 * MIN).unwrap();
        assert!(dir.path().join(HISTORY_DIR).join("notes.txt").exists(), "foreign files stay");
    }

    #[test]
    fn never_copies_an_empty_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(rotate(&RealFs, dir.path(), T0).unwrap(), RotateOutcome::default());
        save(&RealFs, dir.path(), &Snapshot::default()).unwrap();
        assert_eq!(rotate(&RealFs, dir.path(), T0).unwrap(), RotateOutcome::default());
        assert!(!dir.path().join(HISTORY_DIR).exists());
    }

    #[test]
    fn a_clock_that_jumped_back_still_gets_copies() {
        let dir = tempfile::tempdir().unwrap();
        save(&RealFs, dir.path(), &sample_snapshot()).unwrap();
        assert!(rotate(&RealFs, dir.path(), T0).unwrap().copied.is_some());
        assert!(rotate(&RealFs, dir.path(), T0 - 10 * MIN).unwrap().copied.is_none());
        assert!(rotate(&RealFs, dir.path(), T0 - 24 * 60 * MIN).unwrap().copied.is_some());
    }
}
