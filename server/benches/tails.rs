//! Saving the tails of 100 panes (issue 28, item 6: a save after new output in every pane cost
//! 110 ms of server CPU against a 50 ms goal), with criterion. Each pane is a 100×50 terminal
//! holding a coloured 64 KiB scrollback; an iteration prints one line into every pane and then
//! makes every tail as the save does: rendered with the pane's cache (`tail_of_cached`), encoded
//! and redacted. `write_100_tails` adds the durable writes into a temp state dir.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use berth_engine::terminal::{PaneTerminal, TermSize, DEFAULT_SCROLLBACK};
use berth_server::persist::fs::RealFs;
use berth_server::persist::StateDir;
use berth_server::restore::{tail_bytes_cached, TailCache};
use criterion::{criterion_group, criterion_main, Criterion};

const PANES: usize = 100;

/// About 64 KiB of coloured lines, as `scripts/bench`'s tail file.
fn coloured_tail(seed: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut n = seed;
    while out.len() < 64 * 1024 {
        n = n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let colour = 31 + (n >> 33) % 7;
        let width = 20 + (n >> 40) % 70;
        let word: String =
            (0..width).map(|i| (b'a' + ((n >> (i % 48)) % 26) as u8) as char).collect();
        out.extend_from_slice(format!("\x1b[{colour}m{word}\x1b[0m plain text {n}\r\n").as_bytes());
    }
    out
}

fn panes() -> Vec<PaneTerminal> {
    (0..PANES)
        .map(|i| {
            let mut term = PaneTerminal::new(TermSize { cols: 100, rows: 50 }, DEFAULT_SCROLLBACK);
            term.feed(&coloured_tail(i));
            term.settle();
            term
        })
        .collect()
}

fn tails_of_100_panes(c: &mut Criterion) {
    let mut terms = panes();
    let mut caches: HashMap<usize, Option<TailCache>> = HashMap::new();
    let mut round = 0u64;
    let mut group = c.benchmark_group("tails");
    group.sample_size(20);
    group.bench_function("render_100_tails_after_a_line_each", |b| {
        b.iter(|| {
            round += 1;
            let mut bytes = 0;
            for (i, term) in terms.iter_mut().enumerate() {
                term.feed(format!("save round {round}\r\n").as_bytes());
                let tail = tail_bytes_cached(term, caches.entry(i).or_default());
                bytes += black_box(tail).as_bytes().len();
            }
            bytes
        })
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let state = StateDir::open(dir.path().to_owned(), Arc::new(RealFs)).expect("state dir");
    group.bench_function("write_100_tails_after_a_line_each", |b| {
        b.iter(|| {
            round += 1;
            for (i, term) in terms.iter_mut().enumerate() {
                term.feed(format!("save round {round}\r\n").as_bytes());
                let tail = tail_bytes_cached(term, caches.entry(i).or_default());
                state.write_redacted_tail(&format!("pane_{i}"), &tail).expect("write");
            }
        })
    });
    group.finish();
}

criterion_group!(benches, tails_of_100_panes);
criterion_main!(benches);
