//! A small MCP client for the suites: line-delimited JSON-RPC over a `berth mcp`'s standard
//! streams (a child of the test, or one running inside a pane behind two FIFOs), with the
//! messages read on a thread and the notifications kept for the test to look at.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::TestServer;

/// How long a test waits for one answer unless it says otherwise.
pub const ANSWER: Duration = Duration::from_secs(30);

/// One MCP session.
pub struct Mcp {
    child: Option<Child>,
    write: Box<dyn Write + Send>,
    read: mpsc::Receiver<Value>,
    next: u64,
    /// Messages read that were not the answer waited for (notifications, other answers).
    pub seen: Vec<Value>,
}

impl Mcp {
    /// `berth mcp` run by the test itself (a process outside Berth: a person's).
    pub fn spawn(server: &TestServer) -> Mcp {
        let mut child = server
            .command()
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start berth mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Mcp::over(Some(child), Box::new(stdin), stdout)
    }

    /// A `berth mcp` whose standard input and output are the FIFOs `input` and `output`
    /// (opened in that order, as the shell that runs it opens them).
    pub fn over_fifos(input: &Path, output: &Path) -> Mcp {
        let write = std::fs::OpenOptions::new().write(true).open(input).expect("open input");
        let read = std::fs::File::open(output).expect("open output");
        Mcp::over(None, Box::new(write), read)
    }

    fn over(
        child: Option<Child>,
        write: Box<dyn Write + Send>,
        read: impl std::io::Read + Send + 'static,
    ) -> Mcp {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(read).lines() {
                let Ok(line) = line else { break };
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    panic!("berth mcp wrote a line that is not JSON: {line:?}");
                };
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Mcp { child, write, read: rx, next: 1, seen: Vec::new() }
    }

    /// The pid of `berth mcp`, when the test started it.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Sends one message.
    pub fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).expect("write to berth mcp");
        self.write.flush().expect("flush");
    }

    /// Sends a request; its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// The next message, or `None` after `timeout`.
    pub fn next_message(&mut self, timeout: Duration) -> Option<Value> {
        self.read.recv_timeout(timeout).ok()
    }

    /// The answer to request `id`, within `timeout`; what else comes meanwhile is kept.
    pub fn answer(&mut self, id: u64, timeout: Duration) -> Value {
        if let Some(at) = self.seen.iter().position(|m| m["id"] == id && m.get("method").is_none())
        {
            return self.seen.remove(at);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.read.recv_timeout(left).unwrap_or_else(|e| {
                panic!("no answer to request {id} ({e}); seen {:?}", self.seen)
            });
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// A request and its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.answer(id, ANSWER)
    }

    /// Calls a tool; the whole answer.
    pub fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.call("tools/call", json!({ "name": name, "arguments": arguments }))
    }

    /// Initializes the session.
    pub fn initialize(&mut self) -> Value {
        let init = self.call(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "berth-tests", "version": "0" }
            }),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        self.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        init
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The text of a tool's successful answer (panics on an error).
pub fn ok_text(answer: &Value) -> String {
    let result = &answer["result"];
    assert!(result.is_object() && result["isError"] != true, "expected success: {answer}");
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// The JSON of a tool's successful answer.
pub fn ok_json(answer: &Value) -> Value {
    let text = ok_text(answer);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The text of a tool's answer that is an error result (`isError`).
pub fn tool_error(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], true, "expected an error result: {answer}");
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// The text of a tool's answer that refuses its arguments: an error result saying so.
pub fn bad_arguments(answer: &Value) -> String {
    let text = tool_error(answer);
    assert!(
        text.starts_with("bad arguments:") || text.starts_with("failed to deserialize parameters"),
        "expected a refusal of the arguments: {answer}"
    );
    text
}

/// The sockets a process holds open (each counted once, however many descriptors it has).
pub fn sockets_of(pid: u32) -> usize {
    let mut sockets: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|l| l.to_string_lossy().into_owned())
                .filter(|l| l.starts_with("socket:"))
                .collect()
        })
        .unwrap_or_default();
    sockets.sort_unstable();
    sockets.dedup();
    sockets.len()
}
