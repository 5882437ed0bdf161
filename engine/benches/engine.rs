//! The engine's ceiling, measured from memory with criterion: a pane's terminal fed the two
//! inputs of `scripts/bench` (MB/s), the OSC scanner alone (its overhead in front of the VT
//! parser), and layout operations on a 100-pane tab.
//!
//! `scripts/bench` passes its generated inputs through `BERTH_BENCH_INPUTS` (a folder holding
//! `listing-<MB>MB.bin` and `mixed-<MB>MB.bin`, `BERTH_BENCH_INPUT_MB` naming the size); the
//! first 4 MiB of each are used. Without them, small inputs of the same kinds are generated
//! here from a fixed seed, so `cargo bench` works on its own.

use std::hint::black_box;
use std::time::Duration;

use berth_engine::ids::PaneId;
use berth_engine::layout::{CellSize, FocusDir, Layout, SplitDir};
use berth_engine::osc::OscScanner;
use berth_engine::terminal::{PaneTerminal, TermSize, DEFAULT_SCROLLBACK};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// How much of each input one iteration feeds.
const SLICE: usize = 4 << 20;
/// The PTY reader's chunk size, so the terminal sees the same chunking as from a real PTY.
const CHUNK: usize = 64 * 1024;

/// A tiny deterministic generator (xorshift), so the fallback inputs need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn fallback(name: &str) -> Vec<u8> {
    let mut rng = Rng(0x5eed_0000_0000_0007);
    let mut out = String::new();
    let mut n = 0u64;
    while out.len() < SLICE {
        n += 1;
        if name == "listing" {
            out.push_str(&format!(
                "-rw-r--r-- 1 berth berth {:>9} Jan {:2} 12:{:02} \x1b[0m\x1b[01;34mfile_{}.rs\x1b[0m\n",
                rng.below(100_000_000),
                rng.below(28) + 1,
                rng.below(60),
                rng.below(10_000)
            ));
        } else {
            for _ in 0..rng.below(12) + 3 {
                match rng.below(10) {
                    0 => out.push_str(&format!("\x1b[38;5;{}m", rng.below(256))),
                    1 => out.push_str(&format!(
                        "\x1b[38;2;{};{};{}m",
                        rng.below(256),
                        rng.below(256),
                        rng.below(256)
                    )),
                    2 => out.push_str("\x1b[0m"),
                    _ => {}
                }
                out.push_str(if rng.below(50) == 0 { "漢🦀 " } else { "render pane " });
            }
            out.push_str("\x1b[0m\r\n");
            if n.is_multiple_of(20) {
                out.push_str(&format!("\r\x1b[2K[{:#<25}] {:3}%\r\n", "", n % 101));
            }
        }
    }
    out.into_bytes()
}

fn input(name: &str) -> Vec<u8> {
    if let (Ok(dir), Ok(mb)) =
        (std::env::var("BERTH_BENCH_INPUTS"), std::env::var("BERTH_BENCH_INPUT_MB"))
    {
        let path = std::path::Path::new(&dir).join(format!("{name}-{mb}MB.bin"));
        if let Ok(mut bytes) = std::fs::read(&path) {
            bytes.truncate(SLICE);
            return bytes;
        }
    }
    fallback(name)
}

fn terminal_feed(c: &mut Criterion) {
    let mut group = c.benchmark_group("terminal_feed");
    group.sample_size(10).measurement_time(Duration::from_secs(4));
    for name in ["listing", "mixed"] {
        let bytes = input(name);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        // One terminal for all iterations, like a long-lived pane whose scrollback is full.
        let mut term = PaneTerminal::new(TermSize { cols: 200, rows: 50 }, DEFAULT_SCROLLBACK);
        group.bench_function(name, |b| {
            b.iter(|| {
                for chunk in bytes.chunks(CHUNK) {
                    term.feed(black_box(chunk));
                }
                black_box(term.take_events());
            })
        });
    }
    group.finish();
}

fn osc_scan(c: &mut Criterion) {
    let mut group = c.benchmark_group("osc_scan");
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    for name in ["listing", "mixed"] {
        let bytes = input(name);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        let mut scanner = OscScanner::new();
        let mut scratch = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut passed = 0usize;
                for chunk in bytes.chunks(CHUNK) {
                    passed += scanner.filter(black_box(chunk), &mut scratch).len();
                }
                black_box(scanner.take_events());
                passed
            })
        });
    }
    group.finish();
}

/// A tab of `n` panes built by splitting the last pane, alternating directions.
fn tab_of(n: usize) -> (Layout, Vec<PaneId>) {
    let first = PaneId::new();
    let mut layout = Layout::single(first.clone());
    let mut panes = vec![first];
    for i in 1..n {
        let new = PaneId::new();
        let dir = if i % 2 == 0 { SplitDir::Right } else { SplitDir::Down };
        let target = panes[panes.len() / 2].clone();
        layout.split(&target, new.clone(), dir).expect("split");
        panes.push(new);
    }
    (layout, panes)
}

fn layout_ops(c: &mut Criterion) {
    let mut group = c.benchmark_group("layout");
    let size = CellSize { cols: 400, rows: 200 };
    group.bench_function("build_100_panes", |b| b.iter(|| black_box(tab_of(100))));
    let (layout, panes) = tab_of(100);
    group.bench_function("rects_100_panes", |b| b.iter(|| black_box(layout.rects(size))));
    group.bench_function("dividers_100_panes", |b| b.iter(|| black_box(layout.dividers(size))));
    group.bench_function("neighbour_100_panes", |b| {
        b.iter(|| black_box(layout.neighbour(&panes[50], FocusDir::Right, size)))
    });
    group.bench_function("remove_and_split_100_panes", |b| {
        b.iter_batched(
            || layout.clone(),
            |mut l| {
                l.remove(&panes[37]).expect("remove");
                l.split(&panes[10], panes[37].clone(), SplitDir::Down).expect("split");
                l
            },
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, terminal_feed, osc_scan, layout_ops);
criterion_main!(benches);
