//! Real git repos for the suites that need one (tasks, git context, diffs).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::TestServer;

/// Runs git in `dir`; panics with its output when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A repo `name` in the server's temp dir, on `main` with one commit holding `files`.
pub fn repo(server: &TestServer, name: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let dir = server.root.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["config", "user.name", "Test"]);
    git(&dir, &["config", "user.email", "test@example.com"]);
    for (path, body) in files {
        std::fs::write(dir.join(path), body).unwrap();
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "first"]);
    dir.canonicalize().unwrap()
}

/// A server whose worktrees go under its own temp `XDG_DATA_HOME`.
pub fn server_with_data_home() -> TestServer {
    let server = TestServer::prepare();
    let data = server.root.path().join("data");
    server.with_env("XDG_DATA_HOME", &data.display().to_string()).launch()
}
