//! Tests of [`StateDir`]: env resolution, the lock, the guard at the door, and what ends up on
//! disk (RELIABILITY #5, #6, #12).

use std::os::unix::fs::PermissionsExt;

use super::fs::testing::{FaultyFs, FsOp, Trigger};
use super::test_support::{sample_snapshot, PANE_A};
use super::*;

fn open(dir: &Path) -> StateDir {
    StateDir::open(dir.to_owned(), Arc::new(RealFs)).unwrap()
}

fn empty_snapshot() -> Snapshot {
    Snapshot { saved_at: 1_795_994_100_000, ..Snapshot::default() }
}

const NORMAL: SaveContext = SaveContext::Normal { user_closed_all: false };

#[test]
fn the_state_dir_comes_from_the_environment() {
    type Row = (&'static [(&'static str, &'static str)], Result<&'static str, &'static str>);
    let rows: &[Row] = &[
        (&[("BERTH_STATE_DIR", "/s"), ("XDG_STATE_HOME", "/x"), ("HOME", "/h")], Ok("/s")),
        (&[("BERTH_STATE_DIR", ""), ("XDG_STATE_HOME", "/x"), ("HOME", "/h")], Ok("/x/berth")),
        (&[("XDG_STATE_HOME", "relative"), ("HOME", "/h")], Ok("/h/.local/state/berth")),
        (&[("HOME", "/h")], Ok("/h/.local/state/berth")),
        (&[("BERTH_STATE_DIR", "rel/dir")], Err("not an absolute path")),
        (&[], Err("neither XDG_STATE_HOME nor HOME")),
    ];
    for (vars, want) in rows {
        let lookup =
            |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v));
        match (state_dir_path(lookup), want) {
            (Ok(path), Ok(want)) => assert_eq!(path, Path::new(want), "{vars:?}"),
            (Err(e), Err(want)) => assert!(e.to_string().contains(want), "{vars:?}: {e}"),
            (got, _) => panic!("{vars:?}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn opening_creates_the_dir_0700_and_tightens_a_loose_one() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("state/berth");
    open(&dir);
    assert_eq!(RealFs.metadata(&dir).unwrap().mode, 0o700);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    open(&dir);
    assert_eq!(RealFs.metadata(&dir).unwrap().mode, 0o700);
}

#[test]
fn a_second_server_on_the_same_state_dir_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let state = open(root.path());
    let lock = state.lock().unwrap();
    let err = open(root.path()).lock().unwrap_err();
    assert!(
        matches!(err, PersistError::StateDirInUse { holder: Some(pid), .. } if pid == std::process::id())
    );
    let message = err.to_string();
    assert!(
        message.contains("another Berth server (pid") && message.contains("BERTH_STATE_DIR"),
        "{message}"
    );
    assert_eq!(RealFs.metadata(lock.path()).unwrap().mode, 0o600);
    drop(lock);
    state.lock().unwrap();
}

#[test]
fn saving_before_loading_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let err = open(root.path()).save(&sample_snapshot(), NORMAL).unwrap_err();
    assert!(matches!(err, PersistError::NotLoaded), "{err}");
    assert!(!root.path().join("snapshot.json").exists());
}

#[test]
fn a_future_snapshot_blocks_every_save_until_moved_aside() {
    let root = tempfile::tempdir().unwrap();
    let future = br#"{"snapshot_version": 9}"#;
    std::fs::write(root.path().join("snapshot.json"), future).unwrap();
    let state = open(root.path());
    assert!(matches!(state.load(), Err(LoadError::FutureVersion { found: 9, .. })));
    for ctx in [NORMAL, SaveContext::Shutdown, SaveContext::Explicit { user_closed_all: true }] {
        let err = state.save(&sample_snapshot(), ctx).unwrap_err();
        assert!(matches!(err, PersistError::FutureVersionOnDisk { found: 9, .. }), "{err}");
    }
    assert_eq!(std::fs::read(root.path().join("snapshot.json")).unwrap(), future);
    assert!(state.move_aside_future().unwrap().is_some());
    state.save(&sample_snapshot(), NORMAL).unwrap();
}

#[test]
fn an_empty_state_never_replaces_a_good_record_unless_the_user_closed_everything() {
    let root = tempfile::tempdir().unwrap();
    let state = open(root.path());
    state.load().unwrap();
    state.save(&sample_snapshot(), NORMAL).unwrap();
    let good = std::fs::read(state.snapshot_path()).unwrap();

    // A restarted server that has not restored anything yet.
    let state = open(root.path());
    let outcome = state.load().unwrap();
    assert_eq!(outcome.snapshot.panes.len(), 3);
    let err = state.save(&empty_snapshot(), NORMAL).unwrap_err();
    assert!(matches!(err, PersistError::Refused(RefusedReason::EmptyOverGood { .. })), "{err}");
    let mut fewer = sample_snapshot();
    fewer.panes.truncate(1);
    let err = state.save(&fewer, SaveContext::Shutdown).unwrap_err();
    assert!(matches!(err, PersistError::Refused(RefusedReason::FewerAtShutdown { .. })), "{err}");
    assert_eq!(std::fs::read(state.snapshot_path()).unwrap(), good, "the good record is kept");

    state.save(&empty_snapshot(), SaveContext::Normal { user_closed_all: true }).unwrap();
    // The record on disk is empty now, so an empty shutdown save is no loss.
    state.save(&empty_snapshot(), SaveContext::Shutdown).unwrap();
}

#[test]
fn after_a_corrupt_snapshot_is_moved_aside_any_state_may_be_saved() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("snapshot.json"), b"{{{").unwrap();
    let state = open(root.path());
    assert!(state.load().unwrap().moved_aside.is_some());
    state.save(&empty_snapshot(), SaveContext::Shutdown).unwrap();
}

#[test]
fn a_crashed_save_is_cleaned_up_at_the_next_start_and_the_old_record_loads() {
    let root = tempfile::tempdir().unwrap();
    let seed = open(root.path());
    seed.load().unwrap();
    seed.save(&sample_snapshot(), NORMAL).unwrap();
    seed.write_tail(PANE_A, b"old tail").unwrap();

    let faulty = Arc::new(FaultyFs::new());
    let state = StateDir::open(root.path().to_owned(), faulty.clone()).unwrap();
    state.load().unwrap();
    faulty.crash_after(Trigger::Nth(FsOp::Write, 1));
    let mut next = sample_snapshot();
    next.panes[0].title = "new title".into();
    assert!(state.save(&next, NORMAL).is_err());

    let restarted = open(root.path());
    let _lock = restarted.lock().unwrap();
    let removed = restarted.cleanup_temp_files().unwrap();
    assert_eq!(removed.len(), 1, "the crashed save's temp file");
    let outcome = restarted.load().unwrap();
    assert!(outcome.is_clean());
    assert_eq!(outcome.snapshot.panes[0].title, sample_snapshot().panes[0].title);
    assert_eq!(restarted.read_tail(PANE_A).unwrap().unwrap(), b"old tail");
}

#[test]
fn a_save_copies_into_the_history() {
    let root = tempfile::tempdir().unwrap();
    let state = open(root.path());
    state.load().unwrap();
    let report = state.save(&sample_snapshot(), NORMAL).unwrap();
    let copy = report.history_copy.unwrap();
    assert!(copy.ends_with("snapshots/snapshot-20261129T231500Z.json"), "{copy:?}");
    assert_eq!(report.summary, SnapshotSummary { panes: 3, live: 2, workspaces: 1 });
    assert!(state.save(&sample_snapshot(), NORMAL).unwrap().history_copy.is_none());
}

/// Every file under `dir`, recursively, with its mode.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, u32, bool)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.push((path.clone(), meta.permissions().mode() & 0o777, meta.is_dir()));
        if meta.is_dir() {
            walk(&path, out);
        }
    }
}

#[test]
fn a_secret_in_a_panes_environment_is_nowhere_under_the_state_dir() {
    let root = tempfile::tempdir().unwrap();
    let state = open(&root.path().join("berth"));
    let _lock = state.lock().unwrap();
    state.load().unwrap();
    let mut snapshot = sample_snapshot();
    let inherited = [
        ("AWS_SECRET_ACCESS_KEY", "AKIA-very-secret-value"),
        ("GITHUB_TOKEN", "ghp_very-secret-value"),
        ("TERM", "xterm-256color"),
        ("BERTH_PANE", PANE_A),
    ];
    snapshot.panes[0].env = allowlisted_env([]);
    snapshot.panes[0].env.extend(inherited.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    state.save(&snapshot, SaveContext::Explicit { user_closed_all: false }).unwrap();
    state.write_tail(PANE_A, b"$ echo hi\r\nhi\r\n").unwrap();

    let mut files = Vec::new();
    walk(state.dir(), &mut files);
    assert!(files.len() >= 5, "{files:?}");
    for (path, mode, is_dir) in files {
        if is_dir {
            assert_eq!(mode, 0o700, "{path:?}");
            continue;
        }
        assert_eq!(mode, 0o600, "{path:?}");
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert!(!text.contains("very-secret-value"), "a secret reached {path:?}");
    }
    assert_eq!(RealFs.metadata(state.dir()).unwrap().mode, 0o700);
}

#[test]
fn a_state_dir_that_is_a_symlink_to_a_directory_is_used() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let state = open(&link);
    state.load().unwrap();
    state.save(&sample_snapshot(), NORMAL).unwrap();
    assert!(real.join("snapshot.json").is_file());
}

/// Regression: after a load that skipped panes, the shutdown guard compared against what
/// loaded, so a SIGTERM save put the thinned state over the file. It now counts what the file
/// held, and the original stays as a partial copy whatever a normal save does.
#[test]
fn the_shutdown_guard_counts_what_the_file_held_not_what_loaded() {
    let root = tempfile::tempdir().unwrap();
    let mut value = serde_json::to_value(encode::sanitized(&sample_snapshot())).unwrap();
    value["panes"][1]["id"] = serde_json::json!("bad id");
    let original = serde_json::to_vec(&value).unwrap();
    std::fs::write(root.path().join("snapshot.json"), &original).unwrap();
    let state = open(root.path());
    let outcome = state.load().unwrap();
    assert_eq!(outcome.snapshot.panes.len(), 2);
    let kept = outcome.kept_partial.expect("a partial copy");

    // The restored state as the Store would save it at SIGTERM: the two panes that loaded.
    let err = state.save(&outcome.snapshot, SaveContext::Shutdown).unwrap_err();
    assert!(matches!(err, PersistError::Refused(RefusedReason::FewerAtShutdown { .. })), "{err}");
    assert_eq!(std::fs::read(state.snapshot_path()).unwrap(), original);

    // A normal save may replace it; the partial copy is still there, and history rotation
    // never removes it.
    for n in 0..30u64 {
        let mut next = outcome.snapshot.clone();
        next.saved_at = 1_795_994_100_000 + n * 3_600_000;
        state.save(&next, NORMAL).unwrap();
    }
    assert_eq!(std::fs::read(&kept).unwrap(), original);
}

/// Regression: `berth new -- env AWS_SECRET_ACCESS_KEY=… bash` and a typed `deploy
/// --api-key=…` (saved as `was_running`, and echoed in the tail) reached `snapshot.json`,
/// `snapshots/` and `history/` verbatim. After a save nothing under the state dir holds them.
#[test]
fn no_credential_typed_on_a_command_line_is_anywhere_under_the_state_dir() {
    let root = tempfile::tempdir().unwrap();
    let state = open(&root.path().join("berth"));
    let _lock = state.lock().unwrap();
    state.load().unwrap();
    let mut snapshot = sample_snapshot();
    let secrets = ["AKIA-s3cr3t-1", "sk-live-s3cr3t-2", "hunter2-s3cr3t-3", "pa55-s3cr3t-4"];
    snapshot.panes[0].argv =
        ["env", "AWS_SECRET_ACCESS_KEY=AKIA-s3cr3t-1", "bash"].map(String::from).to_vec();
    snapshot.panes[1].was_running = Some("deploy --api-key=sk-live-s3cr3t-2 --region eu".into());
    snapshot.panes[1].title = "mysql -phunter2-s3cr3t-3".into();
    snapshot.panes[2].agent.reported_resume_argv = Some(
        ["git", "clone", "https://me:pa55-s3cr3t-4@example.com/r.git"].map(String::from).to_vec(),
    );
    state.save(&snapshot, SaveContext::Explicit { user_closed_all: false }).unwrap();
    state
        .write_tail(PANE_A, b"$ deploy --api-key=sk-live-s3cr3t-2 --region eu\r\ndeployed\r\n")
        .unwrap();

    let mut files = Vec::new();
    walk(state.dir(), &mut files);
    let snapshot_text = std::fs::read_to_string(state.snapshot_path()).unwrap();
    assert!(snapshot_text.contains("AWS_SECRET_ACCESS_KEY=REDACTED"), "{snapshot_text}");
    assert!(files.iter().any(|(p, ..)| p.to_string_lossy().contains("snapshots")), "{files:?}");
    for (path, _, is_dir) in files {
        if is_dir {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} reached {path:?}");
        }
    }
}

/// Regression: a save that failed for a full disk or a permission answered `INTERNAL`
/// ("internal error"); the OS error now reaches the client as its own code.
#[test]
fn a_full_disk_and_a_refused_write_get_their_own_error_codes() {
    use crate::error::CommandError;
    for (errno, code, words) in [
        (libc::ENOSPC, "DISK_FULL", "the disk is full"),
        (libc::EDQUOT, "DISK_FULL", "the disk is full"),
        (libc::EACCES, "PERMISSION_DENIED", "permissions"),
        (libc::EROFS, "PERMISSION_DENIED", "read-only"),
        (libc::EIO, "INTERNAL", "I/O error"),
    ] {
        let root = tempfile::tempdir().unwrap();
        let fs = Arc::new(FaultyFs::new());
        let state = StateDir::open(root.path().to_owned(), fs.clone()).unwrap();
        state.load().unwrap();
        fs.fail(Trigger::Every(FsOp::Write), errno);
        let err = state.save(&sample_snapshot(), NORMAL).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(errno), "{err}");
        let answer =
            CommandError::from_os_failure(err.raw_os_error(), format!("save failed: {err}"));
        assert_eq!(answer.code(), code, "{answer}");
        assert!(answer.to_string().contains(words), "{answer}");
    }
}
