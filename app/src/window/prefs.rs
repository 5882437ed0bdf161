//! What the window remembers across its own restarts: the width the sidebar's edge was
//! dragged to. It lives in `window.json` in the local state dir (`$XDG_STATE_HOME/berth/`, or
//! `BERTH_STATE_DIR`), beside the server's snapshot but not in it: it belongs to the window on
//! this machine (an attached window over SSH keeps its own), not to the server's record of
//! workspaces and panes, which DESIGN §5 keeps to what a restore needs.
//!
//! Written atomically (temp file, fsync, rename; 0600 in a 0700 dir) through the server's
//! `persist::durable`, off the event loop's thread. Read once when the window starts: a
//! missing file is the defaults, an unreadable or corrupt one is logged and ignored, and an
//! absurd width is clamped into [`SIDEBAR_WIDTH_RANGE`]; nothing here can stop the window.
//! It must not hold anything the server owns.

use std::path::{Path, PathBuf};

use berth_server::persist::durable::write_atomic;
use berth_server::persist::fs::RealFs;
use serde::{Deserialize, Serialize};

use crate::config::SIDEBAR_WIDTH_RANGE;

/// The file's name in the state dir.
pub const FILE: &str = "window.json";

/// The most bytes read from the file (it holds a few numbers).
const MAX_BYTES: u64 = 64 << 10;

/// What the window remembers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowPrefs {
    /// The sidebar's dragged width in columns, as stored (any number: read through
    /// [`WindowPrefs::sidebar_width`], which clamps it).
    pub sidebar_width: Option<i64>,
}

impl WindowPrefs {
    /// The remembered sidebar width, clamped into [`SIDEBAR_WIDTH_RANGE`].
    pub fn sidebar_width(&self) -> Option<u16> {
        let (lo, hi) = SIDEBAR_WIDTH_RANGE;
        let w = self.sidebar_width?.clamp(i64::from(lo), i64::from(hi));
        u16::try_from(w).ok()
    }
}

/// Where the file is: `window.json` in the state dir the environment names; `None` when
/// none can be found (no `HOME`), and then nothing is remembered.
pub fn path() -> Option<PathBuf> {
    let dir = berth_server::persist::state_dir_path(|name| std::env::var_os(name)).ok()?;
    Some(dir.join(FILE))
}

/// Reads the file at `path`: the defaults when it is missing, unreadable or corrupt (the last
/// two logged).
pub fn load(path: &Path) -> WindowPrefs {
    use std::io::Read as _;
    let mut text = String::new();
    let read = std::fs::File::open(path)
        .and_then(|file| file.take(MAX_BYTES).read_to_string(&mut text).map(|_| ()));
    match read {
        Ok(()) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "ignoring the window's saved state");
            WindowPrefs::default()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => WindowPrefs::default(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the window's saved state");
            WindowPrefs::default()
        }
    }
}

/// Writes `prefs` to `path` atomically and durably.
pub fn save(path: &Path, prefs: &WindowPrefs) -> Result<(), String> {
    let bytes = serde_json::to_vec_pretty(prefs).map_err(|e| e.to_string())?;
    write_atomic(&RealFs, path, &bytes).map_err(|e| e.to_string())
}

/// Remembers the sidebar's width `cols` in the file at `path`, keeping the rest of it, on a
/// thread of its own (a failure is logged).
pub fn remember_sidebar_width(path: PathBuf, cols: u16) {
    let spawned = std::thread::Builder::new().name("berth-window-prefs".into()).spawn(move || {
        let mut prefs = load(&path);
        prefs.sidebar_width = Some(i64::from(cols));
        if let Err(e) = save(&path, &prefs) {
            tracing::warn!(path = %path.display(), error = %e, "cannot remember the sidebar's width");
        }
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the thread that saves the window's state");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_saved_width_is_read_back_in_a_private_file() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("berth").join(FILE);
        assert_eq!(load(&path), WindowPrefs::default(), "no file: the defaults");
        save(&path, &WindowPrefs { sidebar_width: Some(44) }).expect("save");
        assert_eq!(load(&path).sidebar_width(), Some(44));
        let mode = std::fs::metadata(&path).expect("the file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // The thread that remembers a drag's end keeps the rest and writes the new width.
        remember_sidebar_width(path.clone(), 30);
        poll_until(|| load(&path).sidebar_width() == Some(30));
    }

    fn poll_until(mut done: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "not saved within 10 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[test]
    fn absurd_or_corrupt_state_is_clamped_or_ignored_never_fatal() {
        let (lo, hi) = SIDEBAR_WIDTH_RANGE;
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join(FILE);
        let cases: &[(&str, Option<u16>)] = &[
            (r#"{"sidebar_width": 99999999999}"#, Some(hi)),
            (r#"{"sidebar_width": -5}"#, Some(lo)),
            (r#"{"sidebar_width": 0}"#, Some(lo)),
            (r#"{"sidebar_width": null}"#, None),
            (r#"{"sidebar_width": "wide"}"#, None),
            (r#"{"sidebar_width": 40.5}"#, None),
            (r#"{"something_else": 1}"#, None),
            ("not json at all", None),
            ("", None),
            ("\u{0}\u{1}binary", None),
        ];
        for (text, want) in cases {
            std::fs::write(&path, text).expect("write");
            assert_eq!(load(&path).sidebar_width(), *want, "{text:?}");
        }
        // A directory where the file should be: the defaults.
        let odd = dir.path().join("odd");
        std::fs::create_dir(&odd).expect("mkdir");
        assert_eq!(load(&odd), WindowPrefs::default());
    }
}
