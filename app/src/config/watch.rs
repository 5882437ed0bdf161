//! Watching the config file: a thread that looks at the file's metadata every
//! [`POLL_INTERVAL`] and calls back when it changed.
//!
//! It owns the polling thread and the rule for "changed": the file's (modification time,
//! length, inode) differs from the last one reported and has stayed the same for one more
//! poll, so that a file caught half-written, or missing for a moment while an editor renames
//! its new copy into place, is not reported. Polling (rather than inotify) follows the path
//! through renames and needs no extra crate. It must not read or parse the file: the callback
//! only tells the window to look.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// How often the file's metadata is read.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// What identifies one version of the file; `None` while it does not exist.
type Signature = Option<(Option<SystemTime>, u64, u64)>;

/// The signature of the file at `path` now.
fn signature(path: &std::path::Path) -> Signature {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok(), meta.len(), meta.ino()))
}

/// Starts the watcher thread for `path`. `changed` is called once per change; the thread ends
/// when it returns false (the window is gone).
pub fn spawn(
    path: PathBuf,
    changed: impl Fn() -> bool + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name("berth-config-watch".into()).spawn(move || {
        let mut reported = signature(&path);
        let mut last = reported;
        loop {
            std::thread::sleep(POLL_INTERVAL);
            let now = signature(&path);
            // Reported once it has held still for a poll.
            if now == last && now != reported {
                reported = now;
                if !changed() {
                    return;
                }
            }
            last = now;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Instant;

    /// Waits up to `limit` for a change report.
    fn wait(rx: &mpsc::Receiver<()>, limit: Duration) -> bool {
        rx.recv_timeout(limit).is_ok()
    }

    #[test]
    fn a_change_is_reported_once_and_an_unchanged_file_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "font_size = 15\n").unwrap();
        let (tx, rx) = mpsc::channel();
        spawn(path.clone(), move || tx.send(()).is_ok()).unwrap();
        assert!(!wait(&rx, POLL_INTERVAL * 3), "nothing changed yet");
        let started = Instant::now();
        std::fs::write(&path, "font_size = 24\n").unwrap();
        assert!(wait(&rx, Duration::from_secs(3)), "the change was not reported");
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(!wait(&rx, POLL_INTERVAL * 3), "one change, one report");
        // An editor's rename into place is a change too (new inode).
        let tmp = dir.path().join("config.toml.new");
        std::fs::write(&tmp, "font_size = 20\n").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert!(wait(&rx, Duration::from_secs(3)), "the rename was not reported");
        std::fs::remove_file(&path).unwrap();
        assert!(wait(&rx, Duration::from_secs(3)), "the removal was not reported");
    }
}
