//! Where the socket lives.
//!
//! `BERTH_SOCKET` wins; otherwise `$XDG_RUNTIME_DIR/berth/berth.sock`; without a runtime dir,
//! `/tmp/berth-<uid>/berth.sock` (the directory is checked like any other: 0700, ours).

use std::path::PathBuf;

/// The socket path from the environment.
pub fn socket_path() -> PathBuf {
    if let Some(path) = std::env::var_os("BERTH_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("berth"),
        None => PathBuf::from(format!("/tmp/berth-{}", nix::unistd::geteuid().as_raw())),
    };
    dir.join("berth.sock")
}
