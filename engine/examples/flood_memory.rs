//! The heap one flooding pane holds: feeds `yes` output into a terminal as a PTY reader would
//! (16 KiB reads) and prints the bytes live after each step, counted by a global allocator.
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

fn main() {
    let chunk: Vec<u8> = b"y\n".repeat(8192);
    let before = LIVE.load(Ordering::Relaxed);
    let mut term = PaneTerminal::new(TermSize { cols: 80, rows: 24 }, DEFAULT_SCROLLBACK);
    println!("new terminal: {} KiB", (LIVE.load(Ordering::Relaxed) - before) >> 10);
    for step in 1..=6 {
        for _ in 0..200 {
            term.feed(&chunk);
        }
        let cells = term.grid_cells();
        println!(
            "after {} MiB of yes: {} KiB live, {} rows",
            (step * 200 * chunk.len()) >> 20,
            (LIVE.load(Ordering::Relaxed) - before) >> 10,
            cells.rows
        );
    }
    term.settle();
    println!("settled: {} KiB live", (LIVE.load(Ordering::Relaxed) - before) >> 10);
}
