//! `berth attach ssh://[user@]host[:port]`: the SSH forward the window rides on.
//!
//! Asks the remote Berth where its socket is (`ssh host berth server-info --socket-path`),
//! forwards a local socket of this user's to it (`ssh -N -o ExitOnForwardFailure=yes -L
//! LOCAL:REMOTE host`), attaches the window to the local end, and ends the forward (and
//! removes its socket) when the window closes. The forward gets SIGTERM should the window
//! die first (PR_SET_PDEATHSIG), so a `kill -9` of the window leaves no ssh behind.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long the forward may take to answer on its local socket.
const FORWARD_START: Duration = Duration::from_secs(30);

/// An `ssh://` target: `[user@]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `user@host` or `host`, as ssh takes it.
    pub destination: String,
    /// The port, when one was given.
    pub port: Option<u16>,
}

impl Target {
    /// Parses `ssh://[user@]host[:port]` (a trailing `/` is allowed).
    pub fn parse(text: &str) -> Result<Target> {
        let Some(rest) = text.strip_prefix("ssh://") else {
            bail!("{text:?} is not an ssh:// address (ssh://[user@]host[:port])");
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((user, hostport)) => (Some(user), hostport),
            None => (None, rest),
        };
        let (host, port) = match hostport.strip_prefix('[') {
            // [v6]:port
            Some(v6) => {
                let (host, after) =
                    v6.split_once(']').with_context(|| format!("{text:?}: no closing ]"))?;
                (host, after.strip_prefix(':'))
            }
            None => match hostport.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (hostport, None),
            },
        };
        let bad = |s: &str| s.is_empty() || s.starts_with('-') || s.contains(['/', ' ', '@']);
        if bad(host) || user.is_some_and(bad) {
            bail!("{text:?} is not an ssh:// address (ssh://[user@]host[:port])");
        }
        let port = port
            .map(|p| p.parse::<u16>().ok().filter(|p| *p > 0))
            .map(|p| p.with_context(|| format!("{text:?}: the port is not a number 1-65535")))
            .transpose()?;
        let destination = match user {
            Some(user) => format!("{user}@{host}"),
            None => host.to_owned(),
        };
        Ok(Target { destination, port })
    }

    /// `ssh [-p PORT]` with the options every call shares.
    fn ssh(&self) -> Command {
        let mut ssh = Command::new("ssh");
        if let Some(port) = self.port {
            ssh.arg("-p").arg(port.to_string());
        }
        ssh
    }
}

/// Forwards a local socket to `target`'s server for a window that links to several servers
/// (`ordinal` tells two forwards to one host apart): the local socket, answering, and the
/// forward, ended on drop.
pub fn forward(target: &Target, ordinal: usize) -> Result<(PathBuf, Forward)> {
    let remote = remote_socket(target)?;
    let local = local_socket(target)?;
    let local = local.with_file_name(format!(
        "{}-{ordinal}.sock",
        local.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    let forward = Forward::start(target, &local, &remote)?;
    Ok((local, forward))
}

/// `ssh host berth server-info --socket-path`: the remote user's socket.
pub fn remote_socket(target: &Target) -> Result<String> {
    let out = target
        .ssh()
        .args(["-o", "BatchMode=yes", "--", target.destination.as_str()])
        .args(["berth", "server-info", "--socket-path"])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run ssh (is OpenSSH's client installed?)")?;
    if !out.status.success() {
        bail!(
            "`ssh {} berth server-info --socket-path` failed ({}): the remote machine needs \
             berth installed and on the PATH of a non-interactive shell",
            target.destination,
            out.status
        );
    }
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !path.starts_with('/') || path.contains('\n') {
        bail!("the remote berth named no socket path (it printed {path:?})");
    }
    Ok(path)
}

/// The local end: `$XDG_RUNTIME_DIR/berth/ssh-<host>-<pid>.sock` (the socket's own,
/// private directory; the host cut to 40 characters, for the 108 bytes of a socket path).
pub fn local_socket(target: &Target) -> Result<PathBuf> {
    let dir = berth_server::paths::socket_path()
        .parent()
        .map(Path::to_path_buf)
        .context("the socket path has no directory")?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    let host: String = target
        .destination
        .chars()
        .take(40)
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' })
        .collect();
    Ok(dir.join(format!("ssh-{host}-{}.sock", std::process::id())))
}

/// The running `ssh -N -L`, ended (and its local socket removed) on drop.
pub struct Forward {
    child: Child,
    local: PathBuf,
}

impl Forward {
    /// Starts `ssh -N -L LOCAL:REMOTE` and waits until the local socket answers.
    pub fn start(target: &Target, local: &Path, remote: &str) -> Result<Forward> {
        let _ = std::fs::remove_file(local);
        let spec = format!("{}:{remote}", local.display());
        let mut ssh = target.ssh();
        ssh.args([
            "-N",
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            spec.as_str(),
            "--",
            target.destination.as_str(),
        ])
        .stdin(Stdio::null());
        // SAFETY: prctl is async-signal-safe and touches only the child's own state.
        unsafe {
            ssh.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = ssh.spawn().context("cannot run ssh (is OpenSSH's client installed?)")?;
        let mut forward = Forward { child, local: local.to_path_buf() };
        let deadline = Instant::now() + FORWARD_START;
        loop {
            if let Ok(Some(status)) = forward.child.try_wait() {
                bail!("the ssh forward to {} ended with {status}", target.destination);
            }
            if berth_server::client::Client::connect_with_timeout(local, Duration::from_secs(5))
                .is_ok()
            {
                return Ok(forward);
            }
            if Instant::now() > deadline {
                bail!(
                    "the ssh forward to {} did not answer on {} within {} s (is the remote \
                     server running? `berth server`, or enable berth-server.service there)",
                    target.destination,
                    local.display(),
                    FORWARD_START.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: a plain syscall on our own child, not reaped yet (its pid is ours).
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.local);
    }
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn parses_ssh_addresses() {
        let t = |s: &str| Target::parse(s).map(|t| (t.destination, t.port));
        assert_eq!(t("ssh://host").unwrap(), ("host".into(), None));
        assert_eq!(t("ssh://me@host:2222").unwrap(), ("me@host".into(), Some(2222)));
        assert_eq!(t("ssh://me@host/").unwrap(), ("me@host".into(), None));
        assert_eq!(t("ssh://[::1]:22").unwrap(), ("::1".into(), Some(22)));
        for bad in
            ["host", "ssh://", "ssh://-oProxyCommand=x", "ssh://h:0", "ssh://h:x", "ssh://a@"]
        {
            assert!(Target::parse(bad).is_err(), "{bad} parsed");
        }
    }
}
