//! Shared helpers of the end-to-end suites: a real `berth server` on temp dirs, the CLI, and
//! bounded polling.
//!
//! Every server runs with its own `XDG_RUNTIME_DIR`, `XDG_STATE_HOME` and `HOME` under a temp
//! dir, so no test touches the user's real state, socket or dotfiles.

#![allow(dead_code, unused_imports)]

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub mod git;
pub mod image;
pub mod mcp;
pub mod real_agents;
pub mod task;

pub use berth_server::client::{Client, ClientError};
pub use serde_json::{json, Value};

/// The `berth` binary Cargo built for these tests.
pub fn berth_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_berth"))
}

/// Polls `check` every 50 ms until it returns `Some`, or panics with `what` at the deadline.
pub fn poll<T>(timeout: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The JSON a CLI command printed on stdout; panics with its output unless it succeeded.
pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// Every pane of a `workspace.list` answer (or of `berth ls --json`), workspace by workspace
/// and tab by tab.
pub fn panes_of(list: &Value) -> Vec<Value> {
    list["workspaces"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|w| w["tabs"].as_array().cloned().unwrap_or_default())
        .flat_map(|t| t["panes"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// The fds and threads of the server `pid` at rest, once one pane was opened and closed
/// through `client` (so what is created lazily is in the baseline) and the warm-up threads
/// have finished.
pub fn warm_baseline(pid: i32, client: &mut Client) -> (usize, usize) {
    let warm = client.call("pane.spawn", json!({ "argv": ["sleep", "100"] })).unwrap();
    client.call("pane.close", json!({ "pane_id": warm["pane_id"] })).unwrap();
    poll(Duration::from_secs(15), "warm-up threads to finish", || {
        let threads = thread_count(pid);
        (threads <= 8).then_some((fd_count(pid), threads))
    })
}

/// A `berth server` process on temp dirs; stopped (SIGTERM, then SIGKILL) when dropped.
pub struct TestServer {
    /// The temp dir holding everything of this server.
    pub root: tempfile::TempDir,
    /// `XDG_RUNTIME_DIR` of the server.
    pub runtime: PathBuf,
    /// `XDG_STATE_HOME` of the server.
    pub state: PathBuf,
    /// `HOME` of the server and its children.
    pub home: PathBuf,
    /// The socket path.
    pub socket: PathBuf,
    child: Option<Child>,
    log: PathBuf,
    extra_env: Vec<(String, String)>,
    server_args: Vec<String>,
}

impl TestServer {
    /// Starts a server and waits until it answers.
    pub fn start() -> TestServer {
        let mut server = Self::prepare();
        server.spawn_server();
        server
    }

    /// The dirs of a server, not started yet (see [`TestServer::launch`]).
    pub fn prepare() -> TestServer {
        let root = tempfile::Builder::new().prefix("berth-e2e-").tempdir().expect("temp dir");
        let mk = |name: &str| {
            let dir = root.path().join(name);
            fs::DirBuilder::new().mode(0o700).create(&dir).expect("create dir");
            dir
        };
        let (runtime, state, home) = (mk("runtime"), mk("state"), mk("home"));
        let socket = runtime.join("berth").join("berth.sock");
        TestServer {
            log: root.path().join("server.log"),
            root,
            runtime,
            state,
            home,
            socket,
            child: None,
            extra_env: Vec::new(),
            server_args: Vec::new(),
        }
    }

    /// Adds a variable to the environment of the server (and so of its panes) and the CLI.
    pub fn with_env(mut self, key: &str, value: &str) -> TestServer {
        self.extra_env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Starts a prepared server and waits until it answers.
    pub fn launch(self) -> TestServer {
        self.launch_with(&[])
    }

    /// Starts a prepared server with extra `berth server` arguments.
    pub fn launch_with(mut self, args: &[&str]) -> TestServer {
        self.server_args = args.iter().map(|a| a.to_string()).collect();
        self.spawn_server();
        self
    }

    /// The state dir the server uses (`$XDG_STATE_HOME/berth`).
    pub fn state_dir(&self) -> PathBuf {
        self.state.join("berth")
    }

    /// Runs `berth server` in this world and returns its output, for servers expected to refuse
    /// to start.
    pub fn run_server_once(&self, args: &[&str]) -> Output {
        self.command()
            .arg("server")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run berth server")
    }

    /// The environment every process of this server's world gets.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("XDG_RUNTIME_DIR", self.runtime.clone()),
            ("XDG_STATE_HOME", self.state.clone()),
            ("HOME", self.home.clone()),
        ]
    }

    /// A command for the `berth` binary in this server's world.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(berth_bin());
        cmd.env_remove("BERTH_SOCKET").env_remove("BERTH_PANE").env_remove("BERTH_WORKSPACE");
        for (key, value) in self.env() {
            cmd.env(key, value);
        }
        cmd.env("SHELL", "/bin/bash").env("BERTH_LOG", "info,berth_server=debug");
        for (key, value) in &self.extra_env {
            cmd.env(key, value);
        }
        cmd
    }

    fn spawn_server(&mut self) {
        let log =
            fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("log file");
        let child = self
            .command()
            .arg("server")
            .args(&self.server_args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start berth server");
        self.child = Some(child);
        let socket = self.socket.clone();
        poll(Duration::from_secs(20), "the server to listen", || {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("berth server exited early with {status}; log:\n{}", self.log_text());
            }
            Client::connect(&socket).ok().and_then(|mut c| c.call("server.info", json!({})).ok())
        });
    }

    /// The server's log so far.
    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The server's pid.
    pub fn pid(&self) -> i32 {
        self.child.as_ref().map(|c| c.id() as i32).expect("server running")
    }

    /// A new client connection.
    pub fn client(&self) -> Client {
        Client::connect(&self.socket).expect("connect to the test server")
    }

    /// Calls one method on a fresh connection and returns its result (panics on error).
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.client().call(method, params).unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// Runs the CLI with `args` and returns its output.
    pub fn berth(&self, args: &[&str]) -> Output {
        self.command().args(args).current_dir(&self.home).output().expect("run berth")
    }

    /// Runs the CLI, asserts success, and returns stdout trimmed.
    pub fn berth_ok(&self, args: &[&str]) -> String {
        let out = self.berth(args);
        assert!(
            out.status.success(),
            "berth {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// `workspace.list` as JSON.
    pub fn list(&self) -> Value {
        self.call("workspace.list", json!({}))
    }

    /// Finds a pane's entry in `workspace.list`.
    pub fn pane(&self, pane: &str) -> Option<Value> {
        panes_of(&self.list()).into_iter().find(|p| p["id"] == pane)
    }

    /// The visible text of a pane joined with newlines.
    pub fn screen(&self, pane: &str) -> String {
        let result = self.call("pane.read", json!({ "pane_id": pane, "last": 200 }));
        result["lines"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    /// Waits until `text` shows in a pane.
    pub fn wait_text(&self, pane: &str, text: &str, timeout: Duration) {
        poll(timeout, &format!("{text:?} in {pane}"), || {
            self.screen(pane).contains(text).then_some(())
        })
    }

    /// Stops the server with SIGTERM and waits (bounded) for it to exit.
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        child.wait().ok()
    }

    /// Kills the server with SIGKILL (no chance to clean up).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a server again on the same dirs.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn_server();
    }

    /// Starts a server on the same dirs after `kill`.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "server still running");
        self.spawn_server();
    }

    /// Every live pid of this server's world whose command line holds `needle`'s words as
    /// whole, consecutive arguments: a pane's child, or anything it started, since each pane
    /// gets `BERTH_SOCKET=<this server's socket>` and passes it on. The environment a process
    /// started with stays in `/proc/PID/environ` after its parent is gone, so children that
    /// outlived the server (or a server that was killed) are found too; the same command run
    /// by anyone else on the machine is not.
    pub fn pids_matching(&self, needle: &str) -> Vec<i32> {
        let marker = format!("BERTH_SOCKET={}", self.socket.display());
        pids_with_args(needle).into_iter().filter(|&pid| environ_has(pid, &marker)).collect()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Number of open fds of a process.
pub fn fd_count(pid: i32) -> usize {
    fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// Number of threads of a process.
pub fn thread_count(pid: i32) -> usize {
    fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.count()).unwrap_or(0)
}

/// Resident memory of a process in KiB.
pub fn rss_kib(pid: i32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// Whether a process exists (and is not a zombie).
pub fn alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| !r.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Every live pid whose command line holds `needle`'s words as whole, consecutive arguments,
/// on the whole machine. Tests use [`TestServer::pids_matching`], which keeps only the
/// processes of their own server: another test run or a user's `sleep 300` matches this too.
fn pids_with_args(needle: &str) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            // Whole arguments: "sleep 100" is `sleep` then `100`, not `sleep 1000000` (a
            // benchmark's tmux running at the same time matched that once).
            let want: Vec<&str> = needle.split(' ').collect();
            fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let text = String::from_utf8_lossy(&c);
                let args: Vec<&str> = text.split('\0').filter(|a| !a.is_empty()).collect();
                args.windows(want.len()).any(|w| w == want.as_slice())
            })
        })
        .filter(|&pid| alive(pid))
        .collect()
}

/// Whether the environment a process started with holds `entry` (`KEY=value`) exactly.
/// False when it cannot be read (another user's process, or one that has ended).
fn environ_has(pid: i32, entry: &str) -> bool {
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
}

/// Writes raw bytes to the socket and reads one answer line (or EOF → empty string).
pub fn raw_exchange(socket: &Path, bytes: &[u8]) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    // The server may close after answering a hostile line before it has read all of it.
    let _ = stream.write_all(bytes);
    let mut line = String::new();
    let _ = BufReader::new(stream).read_line(&mut line);
    line
}

/// A child process killed (SIGTERM, then SIGKILL) when dropped.
pub struct Killed {
    /// What it is, for messages.
    pub name: &'static str,
    /// The process.
    pub child: Child,
}

impl Killed {
    /// Its pid.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Stops the process: SIGTERM, up to `grace` to exit, then SIGKILL.
    pub fn stop(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(status);
        }
        let pid = nix::unistd::Pid::from_raw(self.pid());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("e2e: {} did not stop on SIGTERM; killing it", self.name);
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(10));
    }
}
