//! The heap one flooding pane holds: feeds `yes` output into a terminal as a PTY reader would
//! (16 KiB reads) and prints the bytes live while it floods and once it settled, counted by a
//! global allocator, for a few scrollback settings and widths (the figures in the guide's
//! "Memory bounds").
//! `cargo run --release -p berth-engine --example flood_memory`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use berth_engine::terminal::{PaneTerminal, TermSize, DEFAULT_SCROLLBACK};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller promised for `layout`.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller promised.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The heap live now, above `base`.
fn live_since(base: usize) -> usize {
    LIVE.load(Ordering::Relaxed).saturating_sub(base)
}

/// One pane of `cols`×`rows` with `scrollback` lines fed `mib` MiB of `line` repeated: the heap
/// it holds while the flood goes on and once it settled, and per history cell.
fn measure(cols: u16, rows: u16, scrollback: usize, line: &[u8], mib: usize) {
    let mut chunk = Vec::with_capacity(16 << 10);
    while chunk.len() + line.len() <= 16 << 10 {
        chunk.extend_from_slice(line);
    }
    let base = LIVE.load(Ordering::Relaxed);
    let mut term = PaneTerminal::new(TermSize { cols, rows }, scrollback);
    let new = live_since(base);
    let mut fed = 0;
    while fed < mib << 20 {
        term.feed(&chunk);
        fed += chunk.len();
    }
    let flooding = live_since(base);
    let history = term.grid_cells().rows.saturating_sub(usize::from(rows));
    term.settle();
    let settled = live_since(base);
    let cells = (history * usize::from(cols)).max(1);
    println!(
        "{cols:>4}x{rows:<3} scrollback {scrollback:>6}: new {:>6} KiB; flooding {:>7} KiB; \
         settled {:>6} KiB; {history} history rows, {:.2} B/cell settled, {:.2} B/cell flooding",
        new >> 10,
        flooding >> 10,
        settled >> 10,
        settled.saturating_sub(new) as f64 / cells as f64,
        flooding.saturating_sub(new) as f64 / cells as f64,
    );
}

fn main() {
    // `yes` (one printed cell a line) and a full line of coloured words (every cell printed).
    let coloured: Vec<u8> = {
        let mut l = Vec::new();
        for n in 0..20 {
            l.extend_from_slice(format!("\x1b[3{}mword{n:<5}", n % 7 + 1).as_bytes());
        }
        l.extend_from_slice(b"\x1b[0m\r\n");
        l
    };
    for (name, line) in [("yes", &b"y\n"[..]), ("200 coloured cells a line", &coloured[..])] {
        println!("{name}:");
        for scrollback in [1000, DEFAULT_SCROLLBACK, 20_000] {
            for (cols, rows) in [(80, 24), (200, 50)] {
                measure(cols, rows, scrollback, line, 48);
            }
        }
    }
}
