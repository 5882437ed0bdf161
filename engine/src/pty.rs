//! PTY spawning, reading, writing, resizing and reaping for one pane.
//!
//! Owns the child process of a pane and the three threads that serve it: a reader that hands
//! output to a [`PtyHandler`], a writer that drains a bounded input queue (so a huge paste into a
//! child that never reads cannot block anyone but the writer), and a waiter that reaps the child
//! and records its exit. The master is non-blocking: input sent while the queue is empty is
//! written at once by the sender (a keystroke skips the hop to the writer thread), and what the
//! PTY does not take goes to the queue. It must not know about the Store, sockets or the state
//! dir.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use portable_pty::{native_pty_system, CommandBuilder, MasterPty, PtySize};

use crate::procfs;

/// Environment variables removed from what a child inherits: they belong to the launch of the
/// window, and a child that re-used them would steal its focus or activation.
pub const SCRUBBED_ENV: &[&str] = &["DESKTOP_STARTUP_ID", "XDG_ACTIVATION_TOKEN"];

/// The most input bytes that may wait for a child to read them; beyond it `send` is refused.
pub const MAX_PENDING_INPUT: usize = 16 << 20;

/// How long each step of the close escalation (SIGHUP, then SIGTERM) waits before the next.
pub const ESCALATION_STEP: Duration = Duration::from_millis(1500);

/// Size of one read from the PTY. A Linux PTY hands out about 4 KiB per read (the line
/// discipline's buffer), so a bigger buffer only costs memory: every pane holds one, and 64 KiB
/// cost each idle pane 48 KiB more. (Reading on until the PTY is empty before feeding the
/// terminal was measured too: it lowered `cat` throughput from about 65 to 40 MB/s.)
const READ_CHUNK: usize = 16 << 10;

/// How long a quiet PTY's reader sleeps when its handler has no idle work: it only looks at
/// its stop flag then, which matters when the child has exited (or a close escalated) and a
/// descendant still holds the PTY open; otherwise the PTY's hang-up ends the reader first.
pub const QUIET_POLL_MS: u16 = 1000;
/// A read of at least this many bytes emptied a full line discipline (Linux's holds 4 KiB and
/// hands out 4095 bytes at most per read): more output is probably waiting.
const LINE_DISCIPLINE_FULL: usize = 4095;

/// How long the reader waits for more output after the child has exited, before it stops even
/// though a descendant may still hold the PTY open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);

/// Errors of the PTY module.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// The argv was empty.
    #[error("nothing to run: the command is empty")]
    EmptyArgv,
    /// The working directory does not exist or is not a directory.
    #[error("working directory {0:?} does not exist or is not a directory")]
    BadCwd(PathBuf),
    /// Opening the PTY or starting the child failed.
    #[error("could not start {program:?}: {reason}")]
    Spawn {
        /// The program that was to run.
        program: String,
        /// What went wrong.
        reason: String,
    },
    /// The pending input would exceed [`MAX_PENDING_INPUT`].
    #[error("the pane's input queue is full ({pending} bytes waiting, limit {limit}): the program is not reading its input")]
    InputQueueFull {
        /// Bytes already waiting.
        pending: usize,
        /// The limit.
        limit: usize,
    },
    /// The child has exited or the PTY was closed.
    #[error("the pane's process has exited")]
    Closed,
    /// Resizing failed.
    #[error("resize failed: {0}")]
    Resize(String),
}

/// What to run in a new PTY.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    /// Program and arguments; the program is looked up in `PATH`.
    pub argv: Vec<String>,
    /// The working directory; it must exist.
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment (after the scrub list and `TERM`).
    pub env: Vec<(String, String)>,
    /// Columns of the PTY.
    pub cols: u16,
    /// Rows of the PTY.
    pub rows: u16,
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit code (portable-pty reports 1 for a child killed by a signal).
    pub code: i32,
    /// The signal that killed it, by name, if any.
    pub signal: Option<String>,
}

/// Receives what happens on a PTY, on the reader thread.
pub trait PtyHandler: Send + 'static {
    /// New output from the child. `replies` queues bytes back to the child (answers to terminal
    /// queries such as `ESC [ 6 n`).
    fn on_output(&mut self, bytes: &[u8], replies: &PtyInput);
    /// The child has exited and its remaining output was delivered; called once, last.
    fn on_exit(&mut self, exit: ExitInfo);

    /// No output for a while (about every 100 ms of quiet): a chance to finish work that
    /// waits for a pause, such as a synchronized update that never ended.
    fn on_idle(&mut self, _replies: &PtyInput) {}

    /// Whether [`PtyHandler::on_idle`] has work to do at the next pause. While it has none,
    /// a quiet PTY's reader sleeps until output comes (looking at its stop flag every
    /// [`QUIET_POLL_MS`]) instead of waking every 100 ms.
    fn wants_idle(&self) -> bool {
        true
    }
}

/// The bounded input queue of one PTY; cheap to clone.
#[derive(Clone)]
pub struct PtyInput {
    shared: Arc<InputShared>,
}

struct InputShared {
    state: Mutex<InputState>,
    wake: Condvar,
}

struct InputState {
    chunks: VecDeque<Vec<u8>>,
    pending: usize,
    closed: bool,
    /// The writer thread took a chunk and is writing it: a direct write now would overtake it.
    in_flight: bool,
    /// The master, non-blocking, for direct writes (the writer thread's descriptor, shared);
    /// dropped here when the queue closes.
    fd: Option<Arc<OwnedFd>>,
}

impl PtyInput {
    /// A closed queue with no PTY behind it, for a handler driven without a child (a test
    /// feeding a `PtyHandler` directly): every send is refused as after the child's end.
    pub fn detached() -> Self {
        Self {
            shared: Arc::new(InputShared {
                state: Mutex::new(InputState {
                    chunks: VecDeque::new(),
                    pending: 0,
                    closed: true,
                    in_flight: false,
                    fd: None,
                }),
                wake: Condvar::new(),
            }),
        }
    }

    fn new(fd: Arc<OwnedFd>) -> Self {
        Self {
            shared: Arc::new(InputShared {
                state: Mutex::new(InputState {
                    chunks: VecDeque::new(),
                    pending: 0,
                    closed: false,
                    in_flight: false,
                    fd: Some(fd),
                }),
                wake: Condvar::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, InputState> {
        // A poisoned lock only means a writer thread panicked mid-push; the queue is still valid.
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends bytes to the child, all or nothing. Never blocks on the child: while nothing is
    /// queued the bytes are written at once (non-blocking), and what the PTY does not take now
    /// is queued for the writer thread.
    pub fn send(&self, bytes: &[u8]) -> Result<(), PtyError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut state = self.lock();
        if state.closed {
            return Err(PtyError::Closed);
        }
        if state.pending + bytes.len() > MAX_PENDING_INPUT {
            return Err(PtyError::InputQueueFull {
                pending: state.pending,
                limit: MAX_PENDING_INPUT,
            });
        }
        let mut bytes = bytes;
        if state.chunks.is_empty() && !state.in_flight {
            if let Some(fd) = &state.fd {
                // An error is left to the writer thread, which meets it on the queued bytes.
                bytes = &bytes[write_nonblocking(fd, bytes).unwrap_or(0)..];
                if bytes.is_empty() {
                    return Ok(());
                }
            }
        }
        state.pending += bytes.len();
        state.chunks.push_back(bytes.to_vec());
        drop(state);
        self.shared.wake.notify_one();
        Ok(())
    }

    /// Bytes queued and not yet written to the PTY.
    pub fn pending(&self) -> usize {
        self.lock().pending
    }

    fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.chunks.clear();
        state.pending = 0;
        state.fd = None;
        drop(state);
        self.shared.wake.notify_all();
    }

    /// Blocks until a chunk is available and marks it in flight; `None` once closed.
    fn next_chunk(&self) -> Option<Vec<u8>> {
        let mut state = self.lock();
        loop {
            if state.closed {
                return None;
            }
            if let Some(chunk) = state.chunks.pop_front() {
                state.pending -= chunk.len();
                state.in_flight = true;
                return Some(chunk);
            }
            state = self.shared.wake.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The writer thread finished the chunk it took.
    fn chunk_done(&self) {
        self.lock().in_flight = false;
    }
}

/// Writes as much of `bytes` as the non-blocking `fd` takes now; `Ok(n)` with `n` short of the
/// length when the PTY is full.
fn write_nonblocking(fd: &OwnedFd, bytes: &[u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < bytes.len() {
        let rest = &bytes[done..];
        // SAFETY: `rest` is a valid, readable buffer of `rest.len()` bytes for the whole call,
        // and `fd` is an open descriptor owned by the caller.
        let n = unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
        if n >= 0 {
            done += n as usize;
            continue;
        }
        let err = std::io::Error::last_os_error();
        match err.kind() {
            std::io::ErrorKind::Interrupted => {}
            std::io::ErrorKind::WouldBlock => return Ok(done),
            _ => return Err(err),
        }
    }
    Ok(done)
}

/// Sets `O_NONBLOCK` on the open file description behind `fd` (shared by all its dups).
fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: F_GETFL and F_SETFL on an open descriptor touch only its status flags.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The exit status of the child, filled by the waiter thread.
struct ExitCell {
    exit: Mutex<Option<ExitInfo>>,
    done: Condvar,
}

impl ExitCell {
    fn get(&self) -> Option<ExitInfo> {
        self.exit.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, info: ExitInfo) {
        *self.exit.lock().unwrap_or_else(|p| p.into_inner()) = Some(info);
        self.done.notify_all();
    }

    /// Waits up to `timeout` for the exit; true if the child has exited.
    fn wait(&self, timeout: Duration) -> bool {
        let guard = self.exit.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = self
            .done
            .wait_timeout_while(guard, timeout, |exit| exit.is_none())
            .unwrap_or_else(|p| p.into_inner());
        guard.is_some()
    }
}

/// A running (or finished) child in a PTY.
pub struct Pty {
    /// The master side; `MasterPty` is `Send` but not `Sync`, hence the mutex.
    master: Mutex<Box<dyn MasterPty + Send>>,
    input: PtyInput,
    pid: i32,
    exit: Arc<ExitCell>,
    closing: AtomicBool,
    stop_reader: Arc<AtomicBool>,
}

impl std::fmt::Debug for Pty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pty").field("pid", &self.pid).finish_non_exhaustive()
    }
}

/// Builds the child's environment: the parent's minus [`SCRUBBED_ENV`], plus the terminal's
/// own variables, plus `extra` (which wins).
fn build_command(spec: &SpawnSpec) -> CommandBuilder {
    let mut cmd = CommandBuilder::from_argv(spec.argv.iter().map(OsString::from).collect());
    for key in SCRUBBED_ENV {
        cmd.env_remove(key);
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("COLORTERM", "truecolor");
    cmd.env("TERM_PROGRAM", "berth");
    for (key, value) in &spec.env {
        cmd.env(key, value);
    }
    cmd.cwd(&spec.cwd);
    cmd
}

/// Rust ignores SIGPIPE in its own process, and an ignored signal stays ignored across
/// `exec`, so every child would start with SIGPIPE ignored (`yes | head` would never end).
/// A handler, unlike `SIG_IGN`, is reset to the default by `exec`: installing a no-op handler
/// keeps the server safe from SIGPIPE while children get the default.
fn install_sigpipe_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    extern "C" fn ignore_sigpipe(_: libc::c_int) {}
    ONCE.call_once(|| {
        // SAFETY: the handler is async-signal-safe (it does nothing), and the sigaction struct
        // is fully initialised before the call.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_sigpipe as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGPIPE, &action, std::ptr::null_mut());
        }
    });
}

impl Pty {
    /// Opens a PTY, starts `spec.argv` in it as a session leader, and starts the reader, writer
    /// and waiter threads. `handler` receives output and, last, the exit.
    pub fn spawn(spec: &SpawnSpec, handler: impl PtyHandler) -> Result<Pty, PtyError> {
        let program = spec.argv.first().ok_or(PtyError::EmptyArgv)?.clone();
        if !spec.cwd.is_dir() {
            return Err(PtyError::BadCwd(spec.cwd.clone()));
        }
        let spawn_err = |reason: String| PtyError::Spawn { program: program.clone(), reason };
        install_sigpipe_handler();
        let size = PtySize {
            rows: spec.rows.max(1),
            cols: spec.cols.max(1),
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size).map_err(|e| spawn_err(e.to_string()))?;
        if let Some(fd) = pair.master.as_raw_fd() {
            set_iutf8(fd);
        }
        let mut child = pair
            .slave
            .spawn_command(build_command(spec))
            .map_err(|e| spawn_err(format!("{e:#}")))?;
        // The slave must be closed here, or the reader never sees the end of output.
        drop(pair.slave);
        let pid = child.process_id().map(|p| p as i32).unwrap_or(-1);
        let master = pair.master;
        let read_fd = master
            .as_raw_fd()
            .ok_or_else(|| spawn_err("the PTY has no file descriptor".into()))
            .and_then(|fd| {
                // SAFETY: `fd` belongs to `master`, which is alive for this whole call; the
                // clone is a new descriptor owned by the reader thread.
                let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
                borrowed.try_clone_to_owned().map_err(|e| spawn_err(e.to_string()))
            })?;

        // Every descriptor of the master shares one open file description, so this makes the
        // reader's, the writer's and the direct writes' descriptors non-blocking alike.
        set_nonblocking(&read_fd).map_err(|e| spawn_err(e.to_string()))?;
        // Three descriptors per pane: the master (resizes), the reader's, and one for writes
        // shared by the writer thread and direct writes.
        let write_fd = Arc::new(read_fd.try_clone().map_err(|e| spawn_err(e.to_string()))?);
        let input = PtyInput::new(write_fd.clone());
        let exit = Arc::new(ExitCell { exit: Mutex::new(None), done: Condvar::new() });
        let stop_reader = Arc::new(AtomicBool::new(false));

        let writer_input = input.clone();
        thread::Builder::new()
            .name(format!("pty-writer-{pid}"))
            .spawn(move || write_loop(&write_fd, writer_input))
            .map_err(|e| spawn_err(e.to_string()))?;

        let waiter_exit = exit.clone();
        let waiter_stop = stop_reader.clone();
        thread::Builder::new()
            .name(format!("pty-waiter-{pid}"))
            .spawn(move || {
                let info = match child.wait() {
                    Ok(status) => ExitInfo {
                        code: i32::try_from(status.exit_code()).unwrap_or(i32::MAX),
                        signal: status.signal().map(str::to_owned),
                    },
                    Err(_) => ExitInfo { code: -1, signal: None },
                };
                waiter_exit.set(info);
                waiter_stop.store(true, Ordering::Release);
            })
            .map_err(|e| spawn_err(e.to_string()))?;

        let reader_input = input.clone();
        let reader_exit = exit.clone();
        let reader_stop = stop_reader.clone();
        thread::Builder::new()
            .name(format!("pty-reader-{pid}"))
            .spawn(move || read_loop(read_fd, handler, reader_input, reader_exit, reader_stop))
            .map_err(|e| spawn_err(e.to_string()))?;

        Ok(Pty {
            master: Mutex::new(master),
            input,
            pid,
            exit,
            closing: AtomicBool::new(false),
            stop_reader,
        })
    }

    /// The child's process id (also its process group and session id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// A handle to the input queue.
    pub fn input(&self) -> &PtyInput {
        &self.input
    }

    /// Queues input for the child; see [`PtyInput::send`].
    pub fn send(&self, bytes: &[u8]) -> Result<(), PtyError> {
        self.input.send(bytes)
    }

    /// The exit status, once the child has exited.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.exit.get()
    }

    /// Waits up to `timeout` for the child to exit.
    pub fn wait_exit(&self, timeout: Duration) -> Option<ExitInfo> {
        self.exit.wait(timeout).then(|| self.exit.get()).flatten()
    }

    /// Tells the kernel (and so the child, by SIGWINCH) the new size.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError> {
        let size =
            PtySize { rows: rows.max(1), cols: cols.max(1), pixel_width: 0, pixel_height: 0 };
        self.master
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .resize(size)
            .map_err(|e| PtyError::Resize(e.to_string()))
    }

    /// The PTY's foreground process group, if any (the shell itself when it is idle).
    pub fn foreground_pgrp(&self) -> Option<i32> {
        self.master.lock().unwrap_or_else(|p| p.into_inner()).process_group_leader()
    }

    /// The command line of the job in the PTY's foreground when it is not the child itself
    /// (a shell running `cargo test` answers `["cargo", "test"]`); `None` when the child is
    /// in the foreground, has exited, or the job cannot be read.
    pub fn foreground_job(&self) -> Option<Vec<String>> {
        if self.exit.get().is_some() {
            return None;
        }
        let pgrp = self.foreground_pgrp()?;
        if pgrp == self.pid || pgrp <= 1 {
            return None;
        }
        let argv = procfs::cmdline(pgrp);
        (!argv.is_empty()).then_some(argv)
    }

    /// Ends the child: SIGHUP to every process group of its session, then SIGTERM, then SIGKILL,
    /// each step [`ESCALATION_STEP`] apart, on a background thread. Returns at once; the reader
    /// delivers `on_exit` when the child is reaped. Calling it twice does nothing more.
    pub fn close(&self) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        self.input.close();
        let pid = self.pid;
        let exit = self.exit.clone();
        let stop = self.stop_reader.clone();
        let spawned = thread::Builder::new()
            .name(format!("pty-close-{pid}"))
            .spawn(move || escalate(pid, &exit, &stop));
        if spawned.is_err() {
            // Without a thread to escalate, kill at once rather than leave the child behind.
            signal_session(pid, Signal::SIGKILL, self.exit.get().is_none());
        }
    }

    /// True once `close` was called.
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        self.close();
    }
}

/// Sends `signal` to every process group found in the session `sid` (the child's own group
/// first while the child is not reaped). Returns how many groups were signalled.
fn signal_session(sid: i32, signal: Signal, leader_alive: bool) -> usize {
    if sid <= 1 {
        return 0;
    }
    // Once the leader is reaped its pid may be reused, so only groups still found in the
    // session are signalled then.
    let mut groups = if leader_alive { vec![sid] } else { Vec::new() };
    for member in procfs::session_members(sid) {
        if !groups.contains(&member.pgrp) && member.pgrp > 1 {
            groups.push(member.pgrp);
        }
    }
    groups.iter().filter(|&&pgrp| killpg(Pid::from_raw(pgrp), signal).is_ok()).count()
}

/// The close escalation: HUP, TERM, KILL until the child has exited and its session is empty.
fn escalate(pid: i32, exit: &ExitCell, stop_reader: &AtomicBool) {
    for signal in [Signal::SIGHUP, Signal::SIGCONT, Signal::SIGTERM] {
        signal_session(pid, signal, exit.get().is_none());
        if signal == Signal::SIGCONT {
            // SIGCONT wakes stopped jobs so that SIGTERM can reach them; it needs no wait.
            continue;
        }
        let deadline = Instant::now() + ESCALATION_STEP;
        while Instant::now() < deadline {
            if exit.wait(Duration::from_millis(50)) && procfs::session_members(pid).is_empty() {
                stop_reader.store(true, Ordering::Release);
                return;
            }
        }
    }
    signal_session(pid, Signal::SIGKILL, exit.get().is_none());
    exit.wait(ESCALATION_STEP);
    stop_reader.store(true, Ordering::Release);
}

/// Drains the input queue into the (non-blocking) master, waiting for room with `poll`; once
/// the queue closes, sends the child an end of file, as portable-pty's own writer does when
/// dropped (Berth does not take that writer: it would cost a descriptor per pane).
fn write_loop(fd: &OwnedFd, input: PtyInput) {
    'chunks: while let Some(chunk) = input.next_chunk() {
        let mut done = 0;
        while done < chunk.len() {
            match write_nonblocking(fd, &chunk[done..]) {
                Ok(n) => done += n,
                Err(_) => {
                    // The PTY is gone; refuse further input instead of queueing it forever.
                    input.close();
                    break 'chunks;
                }
            }
            if done < chunk.len() {
                // Full: wait for room, looking up now and then in case the queue was closed.
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLOUT)];
                let _ = poll(&mut fds, PollTimeout::from(100u16));
                if input.lock().closed {
                    break 'chunks;
                }
            }
        }
        input.chunk_done();
    }
    send_eof(fd);
}

/// Marks the PTY's input as UTF-8 (`IUTF8`, as tmux and the other terminals do), before the
/// child starts: without it, the line discipline's erase in cooked mode (Backspace at a `read`
/// prompt, in `cat`) takes one byte of a multibyte character instead of the whole character.
/// The master and the slave share one termios on Linux. Best effort: a failure leaves the
/// kernel's default.
fn set_iutf8(fd: std::os::fd::RawFd) {
    // SAFETY: a zeroed termios is a valid value for tcgetattr to fill in.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is the PTY master, open for this whole call; `t` is a writable termios.
    if unsafe { libc::tcgetattr(fd, &mut t) } == 0 && t.c_iflag & libc::IUTF8 == 0 {
        t.c_iflag |= libc::IUTF8;
        // SAFETY: as above; `t` is the termios tcgetattr filled in, with one flag added.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
    }
}

/// Writes a newline and the terminal's EOF character (EOF counts only after a newline), if the
/// PTY has one set; errors are ignored (the child may be gone).
fn send_eof(fd: &OwnedFd) {
    // SAFETY: a zeroed termios is a valid value for tcgetattr to fill in.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is an open descriptor and `t` a writable termios.
    if unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) } == 0 {
        let eof = t.c_cc[libc::VEOF];
        if eof != 0 {
            let _ = write_nonblocking(fd, &[b'\n', eof]);
        }
    }
}

fn read_loop(
    fd: OwnedFd,
    mut handler: impl PtyHandler,
    input: PtyInput,
    exit: Arc<ExitCell>,
    stop: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut exited_at: Option<Instant> = None;
    // The last read took all the line discipline held (a flood): while the output was fed, the
    // kernel has most likely refilled it, so the next read goes first and `poll` only waits
    // after a read finds nothing (one system call per read instead of two in a flood).
    let mut flooding = false;
    loop {
        let stopping = stop.load(Ordering::Acquire);
        if stopping {
            let since = *exited_at.get_or_insert_with(Instant::now);
            if since.elapsed() >= DRAIN_AFTER_EXIT {
                break;
            }
        }
        if !flooding {
            let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
            let wait = if stopping || handler.wants_idle() { 100 } else { QUIET_POLL_MS };
            match poll(&mut fds, PollTimeout::from(wait)) {
                Ok(0) => {
                    handler.on_idle(&input);
                    continue;
                }
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
        // SAFETY: `buf` is a valid, writable buffer of `buf.len()` bytes for the whole call.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        flooding = n >= LINE_DISCIPLINE_FULL as isize;
        match n {
            0 => break,
            n if n > 0 => handler.on_output(&buf[..n as usize], &input),
            _ => {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::Interrupted
                    || err.kind() == std::io::ErrorKind::WouldBlock
                {
                    continue;
                }
                // EIO: every slave fd is closed, the session is over.
                break;
            }
        }
    }
    drop(fd);
    // The child may not be reaped yet when the output ends first; its exit follows shortly.
    let info = loop {
        if let Some(info) = exit.get() {
            break info;
        }
        exit.wait(Duration::from_millis(200));
    };
    input.close();
    handler.on_exit(info);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    struct Collect {
        tx: mpsc::Sender<Result<Vec<u8>, ExitInfo>>,
    }

    impl PtyHandler for Collect {
        fn on_output(&mut self, bytes: &[u8], _: &PtyInput) {
            let _ = self.tx.send(Ok(bytes.to_vec()));
        }
        fn on_exit(&mut self, exit: ExitInfo) {
            let _ = self.tx.send(Err(exit));
        }
    }

    /// `argv` at 80x24 in the temp dir, with `BERTH_TEST_VAR=set`.
    fn spec(argv: &[&str]) -> SpawnSpec {
        SpawnSpec {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: std::env::temp_dir(),
            env: vec![("BERTH_TEST_VAR".into(), "set".into())],
            cols: 80,
            rows: 24,
        }
    }

    fn spawn(argv: &[&str]) -> (Pty, mpsc::Receiver<Result<Vec<u8>, ExitInfo>>) {
        let (tx, rx) = mpsc::channel();
        (Pty::spawn(&spec(argv), Collect { tx }).unwrap(), rx)
    }

    /// Collects output until the exit arrives or the deadline passes.
    fn run_to_exit(rx: &mpsc::Receiver<Result<Vec<u8>, ExitInfo>>) -> (String, ExitInfo) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left).expect("child did not exit in time") {
                Ok(bytes) => out.extend(bytes),
                Err(exit) => return (String::from_utf8_lossy(&out).into_owned(), exit),
            }
        }
    }

    /// Backspace in cooked mode erases a whole multibyte character (IUTF8): without the flag,
    /// the line discipline takes one byte of `é` and the program reads `a` and a stray byte.
    #[test]
    fn cooked_erase_takes_a_whole_utf8_character() {
        let (pty, rx) = spawn(&["sh", "-c", "read -r line; printf '[%s]' \"$line\""]);
        pty.send("aé\x7f\n".as_bytes()).unwrap();
        let (out, _) = run_to_exit(&rx);
        assert!(out.ends_with("[a]"), "the program read {out:?}");
    }

    /// A handler that says whether it wants idle calls, and counts them.
    struct Idle {
        wants: bool,
        calls: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl PtyHandler for Idle {
        fn on_output(&mut self, _: &[u8], _: &PtyInput) {}
        fn on_exit(&mut self, _: ExitInfo) {}
        fn on_idle(&mut self, _: &PtyInput) {
            self.calls.fetch_add(1, Ordering::Relaxed);
        }
        fn wants_idle(&self) -> bool {
            self.wants
        }
    }

    /// A quiet pane whose handler has no idle work is not woken every 100 ms (a wake-up per
    /// pane ten times a second, for nothing); one that has work is.
    #[test]
    fn a_quiet_reader_calls_on_idle_only_while_its_handler_wants_it() {
        let spawn_idle = |wants: bool| {
            let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let idle = Idle { wants, calls: calls.clone() };
            (Pty::spawn(&spec(&["sleep", "30"]), idle).unwrap(), calls)
        };
        let (quiet, quiet_calls) = spawn_idle(false);
        let (busy, busy_calls) = spawn_idle(true);
        // Bounded: the wanting reader is called within a few of its 100 ms polls.
        let deadline = Instant::now() + Duration::from_secs(10);
        while busy_calls.load(Ordering::Relaxed) < 3 {
            assert!(Instant::now() < deadline, "on_idle was never called");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Less than QUIET_POLL_MS can have passed for the quiet one only if this ran fast;
        // either way it cannot have been called more often than once a second.
        let quiet_bound = Instant::now();
        let elapsed_ms = quiet_bound.duration_since(deadline - Duration::from_secs(10)).as_millis();
        let most = 1 + elapsed_ms / u128::from(QUIET_POLL_MS);
        assert!(quiet_calls.load(Ordering::Relaxed) as u128 <= most);
        quiet.close();
        busy.close();
    }

    #[test]
    fn child_sees_terminal_env_and_exit_code_is_recorded() {
        let (_pty, rx) =
            spawn(&["sh", "-c", "echo \"T=$TERM C=$COLORTERM V=$BERTH_TEST_VAR\"; exit 7"]);
        let (out, exit) = run_to_exit(&rx);
        assert!(out.contains("T=xterm-256color C=truecolor V=set"), "{out:?}");
        assert_eq!(exit.code, 7);
    }

    #[test]
    fn a_flood_arrives_whole_and_in_order_and_the_reader_still_waits_after_it() {
        // 2 MB of numbered lines: the reader reads on without polling while reads come back
        // full, and must still wait (not spin or stop) when the output pauses, then read the
        // rest.
        let (_pty, rx) =
            spawn(&["sh", "-c", "seq 1 300000; sleep 0.3; echo after-the-pause; exit 3"]);
        let (out, exit) = run_to_exit(&rx);
        let lines: Vec<&str> = out.split("\r\n").collect();
        let want: Vec<String> = (1..=300_000).map(|n| n.to_string()).collect();
        assert_eq!(lines.len(), want.len() + 2, "{} bytes", out.len());
        assert!(lines[..want.len()].iter().zip(&want).all(|(a, b)| a == b));
        assert_eq!(lines[want.len()..], ["after-the-pause", ""]);
        assert_eq!(exit.code, 3);
    }

    #[test]
    fn child_starts_with_sigpipe_at_its_default() {
        let (_pty, rx) = spawn(&["sh", "-c", "grep SigIgn /proc/self/status"]);
        let (out, _) = run_to_exit(&rx);
        let mask = out.split_whitespace().nth(1).expect("SigIgn line");
        let mask = u64::from_str_radix(mask, 16).unwrap();
        assert_eq!(
            mask & (1 << (libc::SIGPIPE - 1)),
            0,
            "SIGPIPE is ignored in the child: {out:?}"
        );
    }

    #[test]
    fn input_reaches_the_child() {
        let (pty, rx) = spawn(&["sh", "-c", "read line; echo \"got:$line\""]);
        pty.send(b"hello\n").unwrap();
        let (out, exit) = run_to_exit(&rx);
        assert!(out.contains("got:hello"), "{out:?}");
        assert_eq!(exit.code, 0);
    }

    #[test]
    fn scrubbed_variables_do_not_reach_the_child() {
        // The parent's environment cannot be changed safely in a threaded test, so check the
        // builder instead: removed keys have no value in the child's environment.
        let spec = SpawnSpec {
            argv: vec!["true".into()],
            cwd: "/".into(),
            env: vec![],
            cols: 80,
            rows: 24,
        };
        let cmd = build_command(&spec);
        for key in SCRUBBED_ENV {
            assert!(cmd.get_env(key).is_none());
        }
    }

    /// Direct writes (queue empty) and queued writes (PTY full) keep the bytes in order.
    #[test]
    fn input_arrives_complete_and_in_order_through_direct_and_queued_writes() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("got");
        let mut sent = Vec::new();
        let mut chunks = Vec::new();
        for i in 0..400usize {
            let len = if i % 7 == 0 { 4000 } else { 1 + i % 13 };
            let chunk: Vec<u8> = (0..len).map(|j| b'a' + ((i + j) % 26) as u8).collect();
            sent.extend_from_slice(&chunk);
            chunks.push(chunk);
        }
        let script =
            format!("stty raw -echo; head -c {} > '{}'; echo done", sent.len(), out.display());
        let (pty, rx) = spawn(&["sh", "-c", &script]);
        std::thread::sleep(Duration::from_millis(200));
        for (i, chunk) in chunks.iter().enumerate() {
            pty.send(chunk).unwrap();
            if i % 50 == 0 {
                // Let the queue drain, so the next sends take the direct path again.
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let (text, _) = run_to_exit(&rx);
        assert!(text.contains("done"), "{text}");
        assert_eq!(std::fs::read(&out).unwrap(), sent);
    }

    #[test]
    fn paste_into_a_child_that_never_reads_is_capped_not_blocking() {
        let (pty, _rx) = spawn(&["sleep", "30"]);
        let chunk = vec![b'x'; 1 << 20];
        let mut refused = false;
        for _ in 0..(MAX_PENDING_INPUT / chunk.len() + 4) {
            if let Err(PtyError::InputQueueFull { .. }) = pty.send(&chunk) {
                refused = true;
                break;
            }
        }
        assert!(refused, "the queue never filled");
        pty.close();
        assert!(pty.wait_exit(Duration::from_secs(8)).is_some());
    }

    #[test]
    fn close_escalates_past_an_ignored_hangup() {
        let (pty, rx) = spawn(&["sh", "-c", "trap '' HUP; exec sleep 4242"]);
        // Give the shell time to install the trap before the signal arrives.
        std::thread::sleep(Duration::from_millis(200));
        let pid = pty.pid();
        pty.close();
        let (_, exit) = run_to_exit(&rx);
        assert_eq!(
            exit.signal.as_deref().map(|s| s.contains("Terminated")),
            Some(true),
            "{exit:?}"
        );
        assert!(procfs::stat(pid).is_none(), "child {pid} was not reaped");
    }

    #[test]
    fn foreground_job_names_what_the_shell_runs() {
        let (pty, _rx) = spawn(&["bash", "--norc", "--noprofile", "-i"]);
        assert_eq!(pty.foreground_job(), None);
        pty.send(b"sleep 31415\n").unwrap();
        // Until the shell's fork runs `sleep`, the job is that fork, with the shell's command
        // line (a subshell stays so, and is a job as much): wait for the program itself.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut job = None;
        while Instant::now() < deadline {
            job = pty.foreground_job();
            if job.as_deref().is_some_and(|j| j.first().map(String::as_str) != Some("bash")) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(job.expect("no foreground job appeared"), ["sleep", "31415"]);
        pty.close();
    }

    #[test]
    fn bad_cwd_and_empty_argv_are_refused() {
        let (tx, _rx) = mpsc::channel();
        let mut spec = SpawnSpec { argv: vec![], cwd: "/".into(), env: vec![], cols: 80, rows: 24 };
        assert!(matches!(Pty::spawn(&spec, Collect { tx: tx.clone() }), Err(PtyError::EmptyArgv)));
        spec.argv = vec!["true".into()];
        spec.cwd = "/nonexistent/berth".into();
        assert!(matches!(Pty::spawn(&spec, Collect { tx }), Err(PtyError::BadCwd(_))));
    }
}
