//! The terminal fed from memory, timed by the thread's CPU clock instead of the wall clock, so
//! that a busy shared machine changes the figure less than it changes criterion's (which
//! `scripts/bench` reports): `cargo run --release -p berth-engine --example feed_cpu -- FILE...`.
//!
//! Each file's first 4 MiB go to one 200x50 pane's terminal (5000 lines of scrollback) in 64 KiB
//! chunks, as the criterion bench feeds them, once to warm up and then `ROUNDS` times; the best
//! and the median round are printed in MB/s of CPU time. `FEED_CHUNK=4096` feeds the chunks the
//! PTY reader hands over instead, and `FEED_ROUNDS=1` runs fewer rounds (under callgrind).

use std::time::Duration;

use berth_engine::terminal::{PaneTerminal, TermSize, DEFAULT_SCROLLBACK};

const SLICE: usize = 4 << 20;
const CHUNK: usize = 64 * 1024;
const ROUNDS: usize = 7;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let chunk = env_or("FEED_CHUNK", CHUNK).max(1);
    let rounds = env_or("FEED_ROUNDS", ROUNDS).max(1);
    for path in std::env::args().skip(1) {
        let mut bytes = std::fs::read(&path).expect("readable input");
        bytes.truncate(SLICE);
        let mut term = PaneTerminal::new(TermSize { cols: 200, rows: 50 }, DEFAULT_SCROLLBACK);
        let mut rates = Vec::new();
        for round in 0..=rounds {
            let start = thread_cpu();
            for chunk in bytes.chunks(chunk) {
                term.feed(std::hint::black_box(chunk));
            }
            std::hint::black_box(term.take_events());
            let cpu = thread_cpu() - start;
            if round > 0 {
                rates.push(bytes.len() as f64 / 1e6 / cpu.as_secs_f64());
            }
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{path}: median {:.1} MB/s, best {:.1} MB/s (CPU time, {rounds} rounds of {} MB)",
            rates[rounds / 2],
            rates[rounds - 1],
            bytes.len() as f64 / 1e6
        );
    }
}
