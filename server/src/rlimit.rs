//! Process-wide settings made at start: the open-file limit, and the allocator's handling of
//! big blocks ([`return_big_frees`]).
//!
//! The open-file limit: every pane holds a few descriptors (the PTY master and its clones), so
//! the soft limit of 1024 most sessions start with caps a server at about 200 panes.
//!
//! At start the server raises its soft `RLIMIT_NOFILE` to the hard limit, as most servers do,
//! but to at most [`MAX_SOFT_NOFILE`]: children inherit the limit, and some programs loop over
//! every possible descriptor (a hard limit of 2^30 is not rare in containers).

/// The highest soft limit the server sets (and its children inherit).
pub const MAX_SOFT_NOFILE: u64 = 1 << 16;

/// What raising the limit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NofileChange {
    /// The soft limit before.
    pub before: u64,
    /// The soft limit now.
    pub after: u64,
    /// The hard limit.
    pub hard: u64,
}

/// Raises the soft open-file limit to `min(hard, MAX_SOFT_NOFILE)` when it is lower; never
/// lowers it.
pub fn raise_open_file_limit() -> std::io::Result<NofileChange> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid, writable rlimit for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let (before, hard) = (limit.rlim_cur, limit.rlim_max);
    let want = hard.min(MAX_SOFT_NOFILE);
    if want <= before {
        return Ok(NofileChange { before, after: before, hard });
    }
    limit.rlim_cur = want;
    // SAFETY: `limit` is a valid rlimit; only the soft value changed, within the hard one.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(NofileChange { before, after: want, hard })
}

/// Allocations from this size up get pages of their own (see [`return_big_frees`]).
pub const MMAP_THRESHOLD: i32 = 64 << 10;

/// Makes big allocations (a search's decoded rows, a 4000x500 frame's text) come back to the
/// system when freed: glibc maps them separately only up to a threshold that it raises each
/// time such a block is freed, after which the next big blocks come from the heap, where
/// fragmentation keeps them (the server kept 0.5–1 GB after searches and unread frames,
/// issue 28). A fixed threshold keeps them mapped, and so returned. No-op off glibc.
///
/// It also caps glibc's arenas at [`MAX_ARENAS`]: glibc gives threads up to 8 per core, and
/// every flooding pane's reader thread then keeps the rows it freed in an arena of its own
/// (50 panes running `yes` on 2 cores: about 160 MB more than with 2 arenas, issue 28; more
/// cores, more arenas). Small blocks still come from each thread's own cache first.
pub fn return_big_frees() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; any value is accepted or refused.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS);
    }
}

/// The most malloc arenas the server's threads share (see [`return_big_frees`]).
pub const MAX_ARENAS: i32 = 2;

/// Hands the pages of freed memory back to the system (`malloc_trim`): called when a pane's
/// flood ends, whose plain rows were just packed and freed, so the server's size comes back
/// down after a flood instead of staying at its peak. No-op off glibc.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of the allocator's own heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The least time between two [`return_freed_memory_now_and_then`] trims (process-wide).
pub const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// [`return_freed_memory`], at most once every [`TRIM_EVERY`] in the whole process: called by
/// a flooding reader each time its terminal packed its history in bulk (about once a second
/// per flooding pane), so the plain rows it freed go back during a long flood, while fifty
/// floods still trim once a second. Returns whether it trimmed.
pub fn return_freed_memory_now_and_then() -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    // Milliseconds since `START` of the last trim, plus one (0: never).
    static LAST: AtomicU64 = AtomicU64::new(0);
    let start = *START.get_or_init(std::time::Instant::now);
    let now = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX).saturating_add(1);
    let last = LAST.load(Ordering::Acquire);
    let every = TRIM_EVERY.as_millis() as u64;
    if last != 0 && now.saturating_sub(last) < every {
        return false;
    }
    if LAST.compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire).is_err() {
        // Another reader trims now.
        return false;
    }
    return_freed_memory();
    true
}
