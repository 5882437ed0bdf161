//! Measures the PTY reader thread's throughput: `cat` of a 64 MiB file in a real PTY, with and
//! without feeding the pane's terminal. Run with
//! `cargo run --release -p berth-engine --example pty_throughput [MiB]`.

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use berth_engine::pty::{ExitInfo, Pty, PtyHandler, PtyInput, SpawnSpec};
use berth_engine::terminal::{PaneTerminal, TermSize, DEFAULT_SCROLLBACK};

struct Sink {
    term: Option<PaneTerminal>,
    bytes: u64,
    done: mpsc::Sender<u64>,
}

impl PtyHandler for Sink {
    fn on_output(&mut self, bytes: &[u8], replies: &PtyInput) {
        self.bytes += bytes.len() as u64;
        if let Some(term) = &mut self.term {
            term.feed(bytes);
            for event in term.take_events() {
                if let berth_engine::terminal::TerminalEvent::PtyWrite(reply) = event {
                    let _ = replies.send(&reply);
                }
            }
        }
    }

    fn on_exit(&mut self, _exit: ExitInfo) {
        let _ = self.done.send(self.bytes);
    }
}

fn run(path: &std::path::Path, with_terminal: bool) -> (u64, Duration) {
    let (tx, rx) = mpsc::channel();
    let size = TermSize { cols: 200, rows: 50 };
    let sink = Sink {
        term: with_terminal.then(|| PaneTerminal::new(size, DEFAULT_SCROLLBACK)),
        bytes: 0,
        done: tx,
    };
    let spec = SpawnSpec {
        argv: vec!["cat".into(), path.display().to_string()],
        cwd: std::env::temp_dir(),
        env: Vec::new(),
        cols: size.cols,
        rows: size.rows,
    };
    let start = Instant::now();
    let _pty = Pty::spawn(&spec, sink).expect("spawn cat");
    let bytes = rx.recv_timeout(Duration::from_secs(600)).expect("cat finished");
    (bytes, start.elapsed())
}

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("input.txt");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    let mut written = 0usize;
    let mut n = 0u64;
    while written < mib << 20 {
        // Lines like a build log: some colour, mostly plain text, 100-odd columns.
        let line = format!(
            "\x1b[32m{n:>8}\x1b[0m compiling berth-engine v0.1.0 (/work/main/engine) \x1b[1;34mstep\x1b[0m {} ok\n",
            "x".repeat((n % 40) as usize)
        );
        file.write_all(line.as_bytes()).expect("write");
        written += line.len();
        n += 1;
    }
    drop(file);
    for (label, with_terminal) in [("reader only", false), ("reader + terminal", true)] {
        let (bytes, elapsed) = run(&path, with_terminal);
        let rate = bytes as f64 / (1 << 20) as f64 / elapsed.as_secs_f64();
        println!(
            "{label:>18}: {:.1} MiB in {:.2?} = {rate:.1} MiB/s",
            bytes as f64 / (1 << 20) as f64,
            elapsed
        );
    }
}
