//! The Unix socket: a safe place for it, one server per socket, and one task per client.
//!
//! Owns the socket directory checks (0700, owned by us, not a symlink), the single-server lock,
//! peer uid checks, the line codec with its size cap, and turning request lines into Store
//! commands. A client's mistake ends, at worst, that client's connection.

use std::fs::{self, File, OpenOptions};
use std::future::Future;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::client_io::{self, ClientWriter};
use crate::commands::Command;
use crate::connections::{idle_timeout, Connection, Connections, Full, MAX_LONG_LIVED};
use crate::control_gate::ControlGate;
use crate::error::CommandError;
use crate::event::Event;
use crate::events::{Delivery, DirectSink, EventBus};
use crate::persist::SaveContext;
use crate::persistence::Persistence;
use crate::protocol::{self, ConnectionMethod, Decoded, MAX_LINE};
use crate::store::Store;
use crate::ui::{UiBridge, UiRequest};

/// What a client connection can reach.
#[derive(Clone)]
pub struct Services {
    /// The Store.
    pub store: Arc<Mutex<Store>>,
    /// The event bus.
    pub bus: EventBus,
    /// The persistence thread, for `snapshot.save`.
    pub persistence: Option<Persistence>,
    /// The window, when the server runs inside one.
    pub ui: Option<UiBridge>,
    /// How many attached windows are open (`window.review` needs one).
    pub windows: crate::screen_stream::AttachedWindows,
}

/// An answer that comes later: a request that waits (for the window, for a pane to reach a
/// state, for a person to decide) returns this future instead of an answer. The connection's
/// task awaits it inside its loop, so it still reads further requests, notices the client
/// hanging up and honours eviction; when the client goes away the future is **dropped**
/// unfinished. Whatever must happen when the waiter vanishes (a route lost, a wait abandoned)
/// belongs in a `Drop` guard the future owns, never in code after an `.await`.
///
/// One waiting request per connection: a second one while the first waits is answered
/// `CONFLICT` at once. A connection that has waited is never closed as idle and, like a
/// subscriber, is not evicted to make room for a new client.
pub type Deferred = Pin<Box<dyn Future<Output = Result<Value, CommandError>> + Send + 'static>>;

/// How a request is answered.
enum Answer {
    /// The answer line, now.
    Now(String),
    /// Work too big for the runtime's workers (a search, a big frame), run on the blocking
    /// pool ([`crate::heavy`]) and awaited before the connection's next request is read, as an
    /// answer made now would be: its id and the future that yields the result's JSON text.
    Work(Option<Value>, crate::heavy::Work),
    /// A waiting request: its id (none for a notification, whose result is dropped) and the
    /// future that yields its result.
    Later(Option<Value>, Deferred),
}

/// The most clients served at once (see [`crate::connections`]): a new client past it takes
/// the place of a connection that neither subscribes nor waits (the oldest silent one, else
/// the longest idle), which [`MAX_LONG_LIVED`] below it always leaves.
pub use crate::connections::MAX_CONNECTIONS;

/// Why the socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// The socket's directory is unsafe.
    #[error("refusing socket directory {dir}: {reason}")]
    UnsafeDir {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another server holds the socket.
    #[error("another Berth server is already running on {0} (stop it, or set BERTH_SOCKET to use another socket)")]
    AlreadyRunning(PathBuf),
    /// Something that is not a socket sits where the socket goes.
    #[error("{0} exists and is not a socket; refusing to replace it")]
    NotASocket(PathBuf),
    /// An OS call failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SocketError {
    let path = path.to_path_buf();
    move |source| SocketError::Io { what, path, source }
}

/// Creates the socket's directory (0700) if missing and checks that it is a real directory,
/// owned by us, with no access for group or others.
pub fn prepare_socket_dir(dir: &Path) -> Result<(), SocketError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::DirBuilder::new().mode(0o700).create(dir).map_err(io_err("cannot create", dir))?;
        }
        Err(e) => return Err(io_err("cannot inspect", dir)(e)),
        Ok(_) => {}
    }
    let meta = fs::symlink_metadata(dir).map_err(io_err("cannot inspect", dir))?;
    let unsafe_dir = |reason: String| SocketError::UnsafeDir { dir: dir.to_path_buf(), reason };
    if meta.file_type().is_symlink() {
        return Err(unsafe_dir("it is a symbolic link".into()));
    }
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_dir(format!("it is owned by uid {}, not by us (uid {me})", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unsafe_dir(format!(
            "its mode is {:o}; it must be 0700 (run: chmod 700 {})",
            meta.mode() & 0o777,
            dir.display()
        )));
    }
    Ok(())
}

/// A socket bound and owned by this server; removes its file when dropped.
pub struct BoundSocket {
    path: PathBuf,
    listener: std::os::unix::net::UnixListener,
    /// Held for the server's lifetime: a second server on the same socket cannot take it.
    _lock: LockFile,
}

/// The single-server lock: an flock on `<socket>.lock`, whose file is removed (while still
/// locked) when this is dropped.
struct LockFile {
    path: PathBuf,
    _lock: nix::fcntl::Flock<File>,
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Removed before the flock is released (when `_lock` drops after this), so a server
        // that opened the old file before the removal sees, once it gets the lock, that the
        // path no longer names its file, and tries again (see `take_lock`).
        let _ = fs::remove_file(&self.path);
    }
}

/// Takes the exclusive lock on `lock_path`, creating the file. A lock on a file that was
/// removed meanwhile (its server stopped) is dropped and taken again on the new file.
fn take_lock(path: &Path, lock_path: &Path) -> Result<nix::fcntl::Flock<File>, SocketError> {
    const ATTEMPTS: usize = 8;
    for _ in 0..ATTEMPTS {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(lock_path)
            .map_err(io_err("cannot open lock file", lock_path))?;
        let lock = match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        {
            Ok(lock) => lock,
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
                return Err(SocketError::AlreadyRunning(path.to_path_buf()))
            }
            Err((_, errno)) => return Err(io_err("cannot lock", lock_path)(errno.into())),
        };
        let ours = lock.metadata().map_err(io_err("cannot inspect", lock_path))?;
        match fs::metadata(lock_path) {
            Ok(now) if now.ino() == ours.ino() && now.dev() == ours.dev() => return Ok(lock),
            // Removed or replaced while we waited for it: try the file that is there now.
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err("cannot inspect", lock_path)(e)),
        }
    }
    Err(SocketError::AlreadyRunning(path.to_path_buf()))
}

impl BoundSocket {
    /// Checks the directory, takes the one-server lock, replaces a stale socket and binds.
    pub fn bind(path: &Path) -> Result<BoundSocket, SocketError> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        prepare_socket_dir(dir)?;
        let lock_path = path.with_extension("lock");
        let lock = take_lock(path, &lock_path)?;
        // From here on the lock file is ours: it goes when this BoundSocket does (or now, if
        // the bind fails), so a refused or stopped server leaves none behind.
        let lock = LockFile { path: lock_path, _lock: lock };
        match fs::symlink_metadata(path) {
            Ok(meta) => {
                use std::os::unix::fs::FileTypeExt;
                if !meta.file_type().is_socket() {
                    return Err(SocketError::NotASocket(path.to_path_buf()));
                }
                if StdUnixStream::connect(path).is_ok() {
                    // A server without our lock (an older build) answers on it.
                    return Err(SocketError::AlreadyRunning(path.to_path_buf()));
                }
                tracing::info!(socket = %path.display(), "replacing a stale socket");
                fs::remove_file(path).map_err(io_err("cannot remove stale socket", path))?;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("cannot inspect", path)(e)),
        }
        let listener =
            std::os::unix::net::UnixListener::bind(path).map_err(io_err("cannot bind", path))?;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .map_err(io_err("cannot set permissions on", path))?;
        listener.set_nonblocking(true).map_err(io_err("cannot configure", path))?;
        Ok(BoundSocket { path: path.to_path_buf(), listener, _lock: lock })
    }

    /// Where the socket is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts clients forever on the current tokio runtime.
    pub async fn serve(&self, services: Services) -> io::Result<()> {
        let listener = UnixListener::from_std(self.listener.try_clone()?)?;
        let table = Arc::new(Connections::default());
        let idle = idle_timeout();
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(conn) => conn,
                Err(e) => {
                    // Running out of fds must not end the server; wait a moment and go on.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let admitted = table.admit(MAX_CONNECTIONS);
            let services = services.clone();
            tokio::spawn(async move {
                if let Err(e) = serve_client(stream, services, admitted, idle).await {
                    tracing::debug!(error = %e, "client connection ended with an error");
                }
            });
        }
    }
}

impl Drop for BoundSocket {
    fn drop(&mut self) {
        // The socket goes first, then (as `_lock` drops) the lock file.
        let _ = fs::remove_file(&self.path);
    }
}

/// What reading one line gave.
enum Line {
    Complete(Vec<u8>),
    TooLong,
    Eof,
}

/// Reads one line of at most [`MAX_LINE`] bytes. Cancel-safe: a partial line stays in `buf`.
async fn next_line<R: AsyncBufRead + Unpin>(reader: &mut R, buf: &mut Vec<u8>) -> io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Line::Eof);
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (available.len(), false),
        };
        if buf.len() + take > MAX_LINE {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&available[..take]);
        reader.consume(if done { take + 1 } else { take });
        if done {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Line::Complete(std::mem::take(buf)));
        }
    }
}

async fn next_event(events: &mut Option<mpsc::Receiver<Delivery>>) -> Option<Delivery> {
    match events {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The waiting request's result; never ready when nothing waits. Cancel-safe: the future stays
/// in `waiting` until it is ready.
async fn wait_for(waiting: &mut Option<(Option<Value>, Deferred)>) -> Result<Value, CommandError> {
    match waiting {
        Some((_, deferred)) => deferred.as_mut().await,
        None => std::future::pending().await,
    }
}

/// Runs a write to the client unless the connection is evicted first; then the write is
/// abandoned and the connection ends (a partly written line no longer matters), so a client
/// that does not read cannot keep a task and a descriptor after giving up its place.
async fn unless_evicted(
    evict: &tokio::sync::Notify,
    write: impl std::future::Future<Output = io::Result<()>>,
) -> io::Result<()> {
    tokio::select! {
        result = write => result,
        () = evict.notified() => Err(io::Error::other("evicted to make room for a new client")),
    }
}

/// An answer at least this long (a big frame) must be taken by its client within
/// [`stall_timeout`], else the connection ends and what it was owed is freed: a client that
/// asks and never reads holds at most one such answer (its next request is read only after),
/// and only for that long.
pub const BIG_ANSWER: usize = 1 << 20;

/// How long a client may take to read a [`BIG_ANSWER`] (30 s).
pub const STALL_TIMEOUT: Duration = Duration::from_secs(30);

static STALL_MS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(STALL_TIMEOUT.as_millis() as u64);
static OWED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The stall timeout in force ([`STALL_TIMEOUT`] unless a test changed it).
fn stall_timeout() -> Duration {
    Duration::from_millis(STALL_MS.load(std::sync::atomic::Ordering::Relaxed))
}

/// Bytes of big answers that clients are being sent now and have not taken yet.
pub fn owed_bytes() -> usize {
    OWED.load(std::sync::atomic::Ordering::Acquire)
}

/// Counts a big answer in [`owed_bytes`] while it is written.
struct Owed(usize);

impl Drop for Owed {
    fn drop(&mut self) {
        OWED.fetch_sub(self.0, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Writes an answer of `len` bytes; a big one ([`BIG_ANSWER`]) is counted as owed and must
/// be taken within the stall timeout, else the connection ends.
async fn owed(len: usize, write: impl Future<Output = io::Result<()>>) -> io::Result<()> {
    if len < BIG_ANSWER {
        return write.await;
    }
    OWED.fetch_add(len, std::sync::atomic::Ordering::AcqRel);
    let _owed = Owed(len);
    match tokio::time::timeout(stall_timeout(), write).await {
        Ok(written) => written,
        Err(_) => {
            tracing::info!(bytes = len, "closed a client that did not read a big answer");
            Err(io::Error::new(io::ErrorKind::TimedOut, "the client did not read a big answer"))
        }
    }
}

/// Waits until a connection without a subscription has been idle for `timeout`; never for a
/// subscriber.
async fn idle_deadline(subscribed: bool, last_active: tokio::time::Instant, timeout: Duration) {
    if subscribed {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep_until(last_active + timeout).await;
}

async fn serve_client(
    stream: UnixStream,
    services: Services,
    admitted: Result<Connection, Full>,
    idle: Duration,
) -> io::Result<()> {
    let cred = stream.peer_cred()?;
    let (peer, peer_pid) = (cred.uid(), cred.pid());
    // Who connected, by its place in the process tree (never its environment), examined when
    // a request first needs it; a peer that has exited by then is trusted with nothing.
    let place = {
        use std::os::fd::AsRawFd as _;
        crate::trust::peer::LazyPeer::new(stream.as_raw_fd(), peer_pid)
    };
    let me = nix::unistd::geteuid().as_raw();
    // Registered for reading only (see `client_io`): a client reading its lines wakes no one.
    let (read_half, mut write) = client_io::split(stream)?;
    if peer != me {
        tracing::warn!(peer_uid = peer, "refused a client running as another user");
        let err = CommandError::Unauthorized { peer, server: me };
        write.write_all(protocol::encode_error(None, &err).as_bytes()).await?;
        return Ok(());
    }
    let slot = match admitted {
        Ok(slot) => slot,
        Err(Full { max }) => {
            let err = CommandError::Busy(format!(
                "{max} clients are connected and every one of them subscribes to events or \
                 waits for an answer"
            ));
            write.write_all(protocol::encode_error(None, &err).as_bytes()).await?;
            return Ok(());
        }
    };
    let mut last_active = tokio::time::Instant::now();
    let mut reader = BufReader::with_capacity(64 << 10, read_half);
    let mut buf = Vec::new();
    let mut events: Option<mpsc::Receiver<Delivery>> = None;
    let mut sink = ConnectionSink(None);
    let view =
        crate::screen_stream::ReportedView::new(services.store.clone(), services.windows.clone());
    // The request that waits for its answer, if any (see [`Deferred`]).
    let mut waiting: Option<(Option<Value>, Deferred)> = None;
    loop {
        // A subscriber or a waiting request is never idle.
        let busy = events.is_some() || waiting.is_some();
        tokio::select! {
            line = next_line(&mut reader, &mut buf) => match line? {
                Line::Eof => return Ok(()),
                Line::TooLong => {
                    let err = CommandError::LineTooLong(MAX_LINE);
                    let line = protocol::encode_error(None, &err);
                    send_answer(&mut write, sink.0.as_deref(), &mut events, &line).await?;
                    // The rest of the line cannot be framed; end this connection only.
                    return Ok(());
                }
                Line::Complete(line) => {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    // A request marks the connection as one that talks (never evicted
                    // before a silent one).
                    slot.touch();
                    let conn = Conn { peer: &place, write: &write, view: &view, slot: &slot };
                    // Flooding readers hold back until this is answered (`control_gate`).
                    let mut in_flight = Some(ControlGate::global().enter());
                    let answered = match answer(&line, &services, &mut events, &mut sink.0, conn) {
                        Some(Answer::Later(id, _)) if waiting.is_some() => {
                            let err = CommandError::Conflict(
                                "this connection already has a request waiting for its answer \
                                 (open another connection)"
                                    .into(),
                            );
                            id.map(|id| protocol::encode_error(Some(&id), &err))
                        }
                        Some(Answer::Later(id, deferred)) => {
                            waiting = Some((id, deferred));
                            None
                        }
                        Some(Answer::Now(line)) => Some(line),
                        Some(Answer::Work(id, work)) => {
                            // Work for the pool (a search, a big frame) is not a short
                            // request: the floods go on meanwhile.
                            in_flight = None;
                            let result = tokio::select! {
                                result = work => result,
                                () = slot.evict.notified() => return Ok(()),
                            };
                            id.map(|id| match result {
                                Ok(json) => protocol::encode_result_json(&id, &json),
                                Err(err) => protocol::encode_error(Some(&id), &err),
                            })
                        }
                        None => None,
                    };
                    if waiting.is_none() {
                        // A waiting place taken for a request that answered at once.
                        slot.wait_ended();
                    }
                    if let Some(answer) = answered {
                        let sent = send_answer(&mut write, sink.0.as_deref(), &mut events, &answer);
                        // A client that does not take its answer holds back no flood.
                        if answer.len() >= BIG_ANSWER {
                            in_flight = None;
                        }
                        unless_evicted(&slot.evict, owed(answer.len(), sent)).await?;
                    }
                    drop(in_flight);
                    // Time spent answering is not idle time.
                    last_active = tokio::time::Instant::now();
                    slot.touch();
                }
            },
            result = wait_for(&mut waiting) => {
                let id = waiting.take().and_then(|(id, _)| id);
                slot.wait_ended();
                if let Some(id) = id {
                    let line = match result {
                        Ok(result) => protocol::encode_result(&id, result),
                        Err(err) => protocol::encode_error(Some(&id), &err),
                    };
                    let sent = send_answer(&mut write, sink.0.as_deref(), &mut events, &line);
                    unless_evicted(&slot.evict, owed(line.len(), sent)).await?;
                }
                last_active = tokio::time::Instant::now();
                slot.touch();
            }
            () = idle_deadline(busy, last_active, idle) => {
                let notice = protocol::encode_event(&Event::ConnectionClosed {
                    reason: format!(
                        "no request for {} s and no subscription (connect again when needed)",
                        idle.as_secs_f64()
                    ),
                });
                send_answer(&mut write, sink.0.as_deref(), &mut events, &notice).await?;
                return Ok(());
            }
            () = slot.evict.notified() => {
                let notice = protocol::encode_event(&Event::ConnectionClosed {
                    reason: "the server was at its client limit and this connection was the \
                             longest idle without a subscription"
                        .into(),
                });
                send_answer(&mut write, sink.0.as_deref(), &mut events, &notice).await?;
                return Ok(());
            }
            event = next_event(&mut events) => match event {
                Some(event) => {
                    let line = event.line(protocol::encode_event);
                    let written = async {
                        let Some(sink) = sink.0.as_deref() else {
                            return write.write_all(line.as_bytes()).await;
                        };
                        sink.begin_write();
                        write.write_all(line.as_bytes()).await?;
                        end_write(&mut write, sink, true).await
                    };
                    unless_evicted(&slot.evict, written).await?;
                }
                None => {
                    // The bus dropped this subscriber because it fell behind.
                    let notice = protocol::encode_event(&crate::event::Event::SubscriberDropped {
                        reason: "the client did not read events fast enough".into(),
                    });
                    send_answer(&mut write, sink.0.as_deref(), &mut events, &notice).await?;
                    return Ok(());
                }
            },
        }
    }
}

/// What a request's answer may need to know about its connection.
#[derive(Clone, Copy)]
struct Conn<'a> {
    /// Where the peer sits in the process tree, examined when first needed.
    peer: &'a crate::trust::peer::LazyPeer,
    /// The connection's writing half (a subscription duplicates its descriptor).
    write: &'a ClientWriter,
    /// What an attached window on this connection last said it shows.
    view: &'a crate::screen_stream::ReportedView,
    /// Its place in the table of connections (a subscription or a wait takes a long-lived one).
    slot: &'a Connection,
}

/// A connection's direct sink, closed when the connection's task ends (by any path).
struct ConnectionSink(Option<Arc<DirectSink>>);

impl Drop for ConnectionSink {
    fn drop(&mut self) {
        if let Some(sink) = &self.0 {
            sink.close();
        }
    }
}

/// Writes an answer (or a notice) to the client, after the events already queued for it
/// (one of them may be the rest of a line a publisher wrote in part), never interleaved with
/// a publisher's direct write.
async fn send_answer(
    write: &mut ClientWriter,
    sink: Option<&DirectSink>,
    events: &mut Option<mpsc::Receiver<Delivery>>,
    line: &str,
) -> io::Result<()> {
    let Some(sink) = sink else { return write.write_all(line.as_bytes()).await };
    let queued = sink.begin_write();
    if queued > 0 {
        if let Some(rx) = events.as_mut() {
            for _ in 0..queued {
                let Ok(event) = rx.try_recv() else { break };
                write.write_all(event.line(protocol::encode_event).as_bytes()).await?;
                sink.event_written();
            }
        }
    }
    write.write_all(line.as_bytes()).await?;
    end_write(write, sink, false).await
}

/// Ends a write of the connection's task (`event`: a queued event): writes the events held
/// meanwhile (see [`DirectSink::end_write`]) until none are left and the sink is idle again.
/// On an error the connection ends, and its sink with it.
async fn end_write(write: &mut ClientWriter, sink: &DirectSink, event: bool) -> io::Result<()> {
    let mut held = sink.end_write(event);
    while !held.is_empty() {
        for event in held {
            write.write_all(event.line(protocol::encode_event).as_bytes()).await?;
        }
        held = sink.end_write(false);
    }
    Ok(())
}

/// Executes one request line; returns its answer (now, or a [`Deferred`] one), or `None` for a
/// notification answered now. A subscription gets a [`DirectSink`] on a duplicate of the
/// connection's socket, so that events can skip the queue while the connection is idle.
fn answer(
    line: &[u8],
    services: &Services,
    events: &mut Option<mpsc::Receiver<Delivery>>,
    sink: &mut Option<Arc<DirectSink>>,
    conn: Conn<'_>,
) -> Option<Answer> {
    let write = conn.write;
    let request = match protocol::decode_request(line) {
        Ok(request) => request,
        Err((id, err)) => return Some(Answer::Now(protocol::encode_error(id.as_ref(), &err))),
    };
    let id = request.id;
    let now = |outcome: Result<Value, CommandError>| -> Option<Answer> {
        let id = id.clone()?;
        Some(Answer::Now(match outcome {
            Ok(result) => protocol::encode_result(&id, result),
            Err(err) => protocol::encode_error(Some(&id), &err),
        }))
    };
    let decoded = match protocol::decode_method(&request.method, request.params) {
        Ok(decoded) => decoded,
        Err(err) => return now(Err(err)),
    };
    // A subscription or a request that waits takes a long-lived place (see `connections`).
    let long_lived = match &decoded {
        Decoded::Connection(ConnectionMethod::Subscribe) => Some(true),
        Decoded::Connection(
            ConnectionMethod::Screenshot { .. }
            | ConnectionMethod::WindowServers(_)
            | ConnectionMethod::DecisionRequest { .. }
            | ConnectionMethod::Submit { .. }
            | ConnectionMethod::Wait { .. }
            | ConnectionMethod::Task(_)
            | ConnectionMethod::Git(_),
        ) => Some(false),
        _ => None,
    };
    if let Some(subscribe) = long_lived.filter(|&s| !s || events.is_none()) {
        if let Err(full) = conn.slot.hold_long(subscribe, MAX_LONG_LIVED) {
            return now(Err(CommandError::Busy(format!(
                "{} clients already subscribe to events or wait for an answer, the most this \
                 server keeps; short requests are still answered (end an idle `berth events`, \
                 `berth wait` or agent hook, or try again)",
                full.max
            ))));
        }
    }
    match decoded {
        Decoded::Connection(ConnectionMethod::Subscribe) => {
            if events.is_none() {
                use std::os::fd::AsFd as _;
                *events = Some(match write.as_fd().try_clone_to_owned() {
                    Ok(fd) => {
                        let direct = DirectSink::new(fd, protocol::encode_event);
                        *sink = Some(direct.clone());
                        services.bus.subscribe_direct(direct)
                    }
                    // Without a second descriptor, events take the queue only.
                    Err(e) => {
                        tracing::debug!(error = %e, "no direct event writes for a client");
                        services.bus.subscribe()
                    }
                });
            }
            now(Ok(reply_value(&protocol::SubscribeReply { subscribed: true })))
        }
        Decoded::Connection(ConnectionMethod::Screenshot { tab, path }) => {
            match screenshot(services, tab, path) {
                Ok(deferred) => Some(Answer::Later(id, deferred)),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::WindowServers(op)) => {
            // Which servers the window shows is the person's: an agent pointing the window
            // at a server it runs could put questions before the person in Berth's name.
            let allowed = {
                let store = services.store.lock().unwrap_or_else(|p| p.into_inner());
                let caller = store.caller_of(conn.peer.get());
                store.authorize_attention(&caller, "change the window's servers")
            };
            match allowed.and_then(|()| window_servers(services, op)) {
                Ok(deferred) => Some(Answer::Later(id, deferred)),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::SaveSnapshot) => now(save(services)),
        Decoded::Connection(ConnectionMethod::ScreenFrames(panes)) => {
            match crate::screen_stream::frames(&services.store, panes) {
                Ok(crate::heavy::Outcome::Now(json)) => {
                    let id = id?;
                    Some(Answer::Now(protocol::encode_result_json(&id, &json)))
                }
                Ok(crate::heavy::Outcome::Work(work)) => Some(Answer::Work(id, work)),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::PaneSearch(request)) => {
            match crate::screen_stream::search(&services.store, *request) {
                Ok(work) => Some(Answer::Work(id, work)),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::WindowAttach { header_rows }) => {
            if let Err(err) = window_caller(services, conn) {
                return now(Err(err));
            }
            let attached = crate::screen_stream::attach(&services.store, header_rows);
            if attached.is_ok() {
                conn.view.attached();
            }
            now(attached)
        }
        Decoded::Connection(ConnectionMethod::Review { task }) => {
            now(review(services, task).map(|r| reply_value(&r)))
        }
        Decoded::Connection(ConnectionMethod::WindowView {
            visible,
            focused_pane,
            window_focused,
        }) => {
            if let Err(err) = window_caller(services, conn) {
                return now(Err(err));
            }
            now(conn
                .view
                .report(crate::store::WindowView { visible, focused_pane, window_focused })
                .map(|r| reply_value(&r)))
        }
        Decoded::Connection(ConnectionMethod::NotificationActivate { id, activation_token }) => {
            let op = crate::store::Internal::ActivateNotification {
                id: id.to_string(),
                token: activation_token,
            };
            let mut store = services.store.lock().unwrap_or_else(|p| p.into_inner());
            // A click is a person's act: it focuses the pane and may report to its program.
            let caller = store.caller_of(conn.peer.get());
            if let Err(err) = store.authorize_activation(&caller) {
                return now(Err(err));
            }
            let result = store.execute(op);
            now(result.map(|_| serde_json::json!({ "ok": true })))
        }
        Decoded::Connection(ConnectionMethod::DecisionRequest { pane, kind, payload, wait_ms }) => {
            // Only a hook in the pane (or a person) opens a decision there.
            let allowed = {
                let mut store = services.store.lock().unwrap_or_else(|p| p.into_inner());
                let caller = store.caller_of(conn.peer.get());
                store.authorize_decision_request(&caller, &pane)
            };
            if let Err(err) = allowed {
                return now(Err(err));
            }
            let wait = Duration::from_millis(wait_ms);
            match crate::agents::pending::wait_for_answer(
                services.store.clone(),
                pane,
                kind,
                payload,
                wait,
            ) {
                Ok(outcome) => Some(Answer::Later(
                    id,
                    Box::pin(async move {
                        let outcome = outcome.await;
                        Ok(reply_value(&protocol::DecisionOutcomeReply::from(&outcome)))
                    }),
                )),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::Submit { pane, text, force }) => {
            let (caller, allowed) = {
                let mut store = services.store.lock().unwrap_or_else(|p| p.into_inner());
                let caller = store.caller_of(conn.peer.get());
                let allowed = store.authorize_submit(&caller, &pane, &text, false);
                (caller, allowed)
            };
            let ask = match allowed {
                Ok(ask) => ask,
                Err(err) => return now(Err(err)),
            };
            if let Some(ask) = ask {
                // An agent's prompt to a pane it may not drive: the person agrees first.
                let consent = match crate::trust::consent::ask_person(&services.store, ask) {
                    Ok(consent) => consent,
                    Err(err) => return now(Err(err)),
                };
                let store = services.store.clone();
                return Some(Answer::Later(
                    id,
                    Box::pin(async move {
                        consent.await?;
                        let again = store
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .authorize_submit(&caller, &pane, &text, true);
                        again?;
                        let submit = crate::agents::submit::start(&store, pane, &text, force)?;
                        submit.await.map(|o| reply_value(&protocol::SubmitReply::from(&o)))
                    }),
                ));
            }
            match crate::agents::submit::start(&services.store, pane, &text, force) {
                Ok(submit) => Some(Answer::Later(
                    id,
                    Box::pin(async move {
                        submit.await.map(|o| reply_value(&protocol::SubmitReply::from(&o)))
                    }),
                )),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::Wait { pane, until, timeout_ms }) => {
            let timeout = timeout_ms.map(Duration::from_millis);
            match crate::agents::wait::start(&services.store, pane, until, timeout) {
                Ok(wait) => Some(Answer::Later(
                    id,
                    Box::pin(async move {
                        wait.await.map(|o| reply_value(&protocol::WaitReply::from(&o)))
                    }),
                )),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::Task(request)) => {
            // Who asks: a worker reports for its own task, known by the pane it runs in.
            let caller =
                services.store.lock().unwrap_or_else(|p| p.into_inner()).caller_of(conn.peer.get());
            let reporter = crate::tasks::serve::Reporter::of(&caller);
            // An agent's merge or discard waits for the person's consent (`trust::consent`).
            let ask = crate::tasks::serve::consent(&services.store, &request, &caller);
            match ask {
                Ok(Some(ask)) => {
                    let consent = match crate::trust::consent::ask_person(&services.store, ask) {
                        Ok(consent) => consent,
                        Err(err) => return now(Err(err)),
                    };
                    let store = services.store.clone();
                    Some(Answer::Later(
                        id,
                        Box::pin(async move {
                            consent.await?;
                            crate::tasks::serve::serve(&store, *request, reporter)?
                                .await
                                .map(|r| reply_value(&r))
                        }),
                    ))
                }
                Ok(None) => match crate::tasks::serve::serve(&services.store, *request, reporter) {
                    Ok(answer) => Some(Answer::Later(
                        id,
                        Box::pin(async move { answer.await.map(|r| reply_value(&r)) }),
                    )),
                    Err(err) => now(Err(err)),
                },
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Connection(ConnectionMethod::Git(request)) => {
            match crate::gitctx::serve::serve(&services.store, *request) {
                Ok(answer) => Some(Answer::Later(
                    id,
                    Box::pin(async move { answer.await.map(|r| reply_value(&r)) }),
                )),
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Command(
            cmd @ (Command::PaneClose { .. }
            | Command::TabClose { .. }
            | Command::WorkspaceClose { .. }),
        ) => {
            // An agent closing another's pane: the person agrees first (`trust::consent`).
            let ask = {
                let store = services.store.lock().unwrap_or_else(|p| p.into_inner());
                let caller = store.caller_of(conn.peer.get());
                store.consent_to_close(&caller, &cmd)
            };
            match ask {
                Ok(None) => now(command(services, cmd, conn)),
                Ok(Some(ask)) => match crate::trust::consent::ask_person(&services.store, ask) {
                    Ok(consent) => {
                        let store = services.store.clone();
                        Some(Answer::Later(
                            id,
                            Box::pin(async move {
                                consent.await?;
                                let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
                                store.execute(cmd).map(|reply| protocol::encode_reply(&reply))
                            }),
                        ))
                    }
                    Err(err) => now(Err(err)),
                },
                Err(err) => now(Err(err)),
            }
        }
        Decoded::Command(cmd @ Command::Decide { .. }) => {
            let Command::Decide { pane, .. } = &cmd else { unreachable!() };
            let pane = pane.clone();
            let reply = match command(services, cmd, conn) {
                Ok(reply) => reply,
                Err(err) => return now(Err(err)),
            };
            // An answer handed on to Berth's plugin (opencode): done only once the plugin
            // says the agent took it.
            let decided = reply.get("decision_id").and_then(Value::as_str).map(str::to_owned);
            let waiter = decided.as_deref().and_then(|d| {
                let id = berth_engine::ids::DecisionId::parse(d).ok()?;
                let mut store = services.store.lock().unwrap_or_else(|p| p.into_inner());
                Some((id.clone(), store.take_delivery(&pane, &id)?))
            });
            let Some((decision, waiter)) = waiter else { return now(Ok(reply)) };
            let store = services.store.clone();
            Some(Answer::Later(
                id,
                Box::pin(async move {
                    let wait = crate::agents::decide::DELIVERY_WAIT;
                    match tokio::time::timeout(wait, waiter).await {
                        Ok(Ok(Ok(()))) => Ok(reply),
                        Ok(Ok(Err(why))) => Err(CommandError::Conflict(format!(
                            "opencode did not take the answer to decision {decision} ({why}); \
                             nothing was granted: the question is still open, answer it again"
                        ))),
                        Ok(Err(_)) | Err(_) => {
                            store
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .delivery_timed_out(&pane, &decision);
                            Err(CommandError::Timeout(format!(
                                "opencode did not confirm the answer to decision {decision} \
                                 within {} s: it may not have reached opencode; answer in \
                                 opencode's own dialog",
                                wait.as_secs()
                            )))
                        }
                    }
                }),
            ))
        }
        Decoded::Command(cmd) => now(command(services, cmd, conn)),
    }
}

/// `window.review`: the window used last (the embedded one or an attached one) is told to open
/// the review view of `task`, through the event bus the windows follow (when it closes, one
/// still open takes its place); every window, while none has reported a view; refused when
/// there is none.
fn review(
    services: &Services,
    task: berth_engine::ids::TaskId,
) -> Result<protocol::ReviewReply, CommandError> {
    let store = services.store.lock().unwrap_or_else(|p| p.into_inner());
    // The task must exist (its record answers NO_SUCH_TASK otherwise).
    store.task_record(&task)?;
    let target = store.active_window;
    drop(store);
    let attached = services.windows.load(std::sync::atomic::Ordering::Acquire);
    let windows = attached + usize::from(services.ui.is_some());
    if windows == 0 {
        return Err(CommandError::Conflict(
            "no window is open on this server: run `berth` (or `berth attach`) first, then \
             `berth review TASK` (`berth diff TASK` prints the diff here)"
                .into(),
        ));
    }
    services
        .bus
        .publish(crate::event::Event::ReviewRequested { task: task.clone(), window: target });
    let told = if target.is_some() { 1 } else { windows };
    Ok(protocol::ReviewReply { task_id: task.to_string(), windows: told, window_id: target })
}

/// `snapshot.save`: a save now, on this worker (it blocks on fsync).
fn save(services: &Services) -> Result<Value, CommandError> {
    let Some(persistence) = &services.persistence else {
        return Err(CommandError::Conflict("this server does not persist state".into()));
    };
    // The save blocks on fsync; let the runtime move other tasks off this worker.
    let context = SaveContext::Explicit { user_closed_all: false };
    match tokio::task::block_in_place(|| persistence.save_now_detailed(context)) {
        Ok(outcome) => Ok(reply_value(&protocol::SaveReply {
            saved: true,
            panes: outcome.panes,
            tails: outcome.tails,
            bytes: outcome.bytes,
            path: outcome.path.into(),
        })),
        Err(e) => Err(CommandError::from_os_failure(e.errno, format!("save failed: {e}"))),
    }
}

/// `window.attach` and `window.view` are a window's, a person's process: an agent reporting a
/// pane as looked at would keep its attention and its notifications from the person
/// (`Store::authorize_attention`).
fn window_caller(services: &Services, conn: Conn<'_>) -> Result<(), CommandError> {
    let store = services.store.lock().unwrap_or_else(|p| p.into_inner());
    let caller = store.caller_of(conn.peer.get());
    store.authorize_attention(&caller, "report what the window shows")
}

/// A Store command, under the Store's lock.
fn command(services: &Services, cmd: Command, conn: Conn<'_>) -> Result<Value, CommandError> {
    // A panic inside a command must not take the server down; the Store's maps stay usable
    // (each command checks before it changes anything).
    let mut store = services.store.lock().unwrap_or_else(|p| p.into_inner());
    // Who asks, judged against the panes now, where a trust rule looks at it (`trust`).
    let caller = crate::trust::needs_caller(&cmd).then(|| store.caller_of(conn.peer.get()));
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &caller {
        Some(caller) => store.execute_as(caller, cmd),
        None => store.execute(cmd),
    }))
    .unwrap_or_else(|_| Err(CommandError::Internal("the command panicked".into())))
    .map(|reply| protocol::encode_reply(&reply))
}

/// `window.servers`: the window changes or lists its links to other servers; the answer
/// waits for it (at most 20 s) without holding a runtime worker.
fn window_servers(services: &Services, op: crate::ui::ServersOp) -> Result<Deferred, CommandError> {
    let Some(ui) = &services.ui else {
        return Err(CommandError::Conflict(
            "no window: this is a headless server (the window that links to other servers is \
             `berth` with its embedded server)"
                .into(),
        ));
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    ui.send(UiRequest::Servers { op, reply }).map_err(CommandError::Conflict)?;
    Ok(Box::pin(async move {
        let listed = tokio::time::timeout(Duration::from_secs(20), answer)
            .await
            .map_err(|_| CommandError::Internal("the window did not answer in time".into()))?
            .map_err(|_| CommandError::Internal("the window went away before answering".into()))?
            .map_err(CommandError::BadParams)?;
        Ok(reply_value(&listed))
    }))
}

/// `ui.screenshot`: the window renders the tab; the answer waits for it (at most 20 s) without
/// holding a runtime worker.
fn screenshot(
    services: &Services,
    tab: Option<String>,
    path: PathBuf,
) -> Result<Deferred, CommandError> {
    let Some(ui) = &services.ui else {
        return Err(CommandError::Conflict(
            "no window: this is a headless server (run `berth` to open the window)".into(),
        ));
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    ui.send(UiRequest::Screenshot { tab, reply }).map_err(CommandError::Conflict)?;
    Ok(Box::pin(async move {
        let png = tokio::time::timeout(Duration::from_secs(20), answer)
            .await
            .map_err(|_| CommandError::Internal("the window did not answer in time".into()))?
            .map_err(|_| CommandError::Internal("the window went away before answering".into()))?
            .map_err(CommandError::Internal)?;
        let bytes = png.len();
        let written = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || std::fs::write(&path, &png)).await
        };
        let written = written.map_err(|e| CommandError::Internal(format!("writing: {e}")))?;
        written.map_err(|e| {
            let message = format!("cannot write {}: {e}", path.display());
            match CommandError::from_os_failure(e.raw_os_error(), message) {
                CommandError::Internal(message) => CommandError::BadParams(message),
                specific => specific,
            }
        })?;
        Ok(reply_value(&protocol::ScreenshotReply { path, bytes }))
    }))
}

/// The JSON of a connection-level answer (plain data; it always serialises).
fn reply_value<T: serde::Serialize>(reply: &T) -> Value {
    serde_json::to_value(reply).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waiting request (a screenshot the window has not drawn yet) does not hold up the
    /// connection: later requests are answered meanwhile, a second waiting one is refused, the
    /// first is answered when the window replies, and a client that hangs up drops its wait.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiting_request_leaves_its_connection_usable_and_dies_with_it() {
        use std::io::{BufRead as _, Write as _};
        let dir = tempfile::tempdir().expect("a temp dir");
        let runtime = dir.path().join("run");
        let socket = BoundSocket::bind(&runtime.join("berth.sock")).expect("bind");
        let bus = EventBus::default();
        let config = crate::store::StoreConfig {
            socket_path: socket.path().to_path_buf(),
            home: dir.path().to_path_buf(),
            shell: "/bin/sh".into(),
        };
        let store = Store::new(config, bus.clone(), crate::pane::OutputPulse::default());
        let (ui_tx, ui_rx) = std::sync::mpsc::channel();
        let services = Services {
            store: Arc::new(Mutex::new(store)),
            bus,
            persistence: None,
            ui: Some(UiBridge::new(ui_tx, Arc::new(Mutex::new(None)))),
            windows: Default::default(),
        };
        let path = socket.path().to_path_buf();
        let server = tokio::spawn(async move { socket.serve(services).await });
        let png = dir.path().join("shot.png");
        let png_json = serde_json::to_string(&png).unwrap();
        let screenshot = move |id: u32| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"window.screenshot\",\
                 \"params\":{{\"path\":{png_json}}}}}\n"
            )
        };
        let client = tokio::task::spawn_blocking(move || {
            let deadline = Some(Duration::from_secs(10));
            let mut conn = StdUnixStream::connect(&path).expect("connect");
            conn.set_read_timeout(deadline).unwrap();
            let mut lines = io::BufReader::new(conn.try_clone().unwrap()).lines();
            let mut next = || -> Value {
                serde_json::from_str(&lines.next().expect("an answer").expect("read")).unwrap()
            };
            conn.write_all(screenshot(1).as_bytes()).unwrap();
            let Ok(UiRequest::Screenshot { reply, .. }) =
                ui_rx.recv_timeout(Duration::from_secs(10))
            else {
                panic!("the window got no request")
            };
            conn.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"server.info\"}\n").unwrap();
            let info = next();
            assert_eq!(info["id"], 2, "answered while the screenshot waits: {info}");
            assert!(info["result"].is_object(), "{info}");
            conn.write_all(screenshot(3).as_bytes()).unwrap();
            let refused = next();
            assert_eq!(refused["id"], 3, "{refused}");
            assert_eq!(refused["error"]["data"]["code"], "CONFLICT", "{refused}");
            reply.send(Ok(vec![1, 2, 3])).unwrap();
            let shot = next();
            assert_eq!(shot["id"], 1, "{shot}");
            assert_eq!(shot["result"]["bytes"], 3, "{shot}");
            assert_eq!(std::fs::read(&png).unwrap(), [1, 2, 3]);

            conn.write_all(screenshot(4).as_bytes()).unwrap();
            let Ok(UiRequest::Screenshot { reply, .. }) =
                ui_rx.recv_timeout(Duration::from_secs(10))
            else {
                panic!("the window got no second request")
            };
            drop(lines);
            drop(conn);
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while !reply.is_closed() {
                assert!(std::time::Instant::now() < until, "the wait outlived its client");
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        client.await.expect("the client's checks");
        server.abort();
    }

    #[tokio::test]
    async fn lines_are_split_capped_and_cancel_safe() {
        let data = b"{\"a\":1}\r\n\n{\"b\":2}\n".to_vec();
        let mut reader = BufReader::with_capacity(3, &data[..]);
        let mut buf = Vec::new();
        let mut lines = Vec::new();
        loop {
            match next_line(&mut reader, &mut buf).await.unwrap() {
                Line::Complete(l) => lines.push(String::from_utf8(l).unwrap()),
                Line::Eof => break,
                Line::TooLong => panic!("not too long"),
            }
        }
        assert_eq!(lines, ["{\"a\":1}", "", "{\"b\":2}"]);

        let long = vec![b'x'; MAX_LINE + 10];
        let mut reader = BufReader::new(&long[..]);
        assert!(matches!(next_line(&mut reader, &mut Vec::new()).await.unwrap(), Line::TooLong));
    }

    #[test]
    fn unsafe_socket_dirs_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(prepare_socket_dir(&open), Err(SocketError::UnsafeDir { .. })));

        let link = tmp.path().join("link");
        let real = tmp.path().join("real");
        fs::DirBuilder::new().mode(0o700).create(&real).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(prepare_socket_dir(&link), Err(SocketError::UnsafeDir { .. })));
        prepare_socket_dir(&real).unwrap();

        let fresh = tmp.path().join("fresh");
        prepare_socket_dir(&fresh).unwrap();
        assert_eq!(fs::metadata(&fresh).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_second_bind_on_the_same_socket_is_refused_and_a_stale_one_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let path = dir.join("berth.sock");
        let first = BoundSocket::bind(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert!(matches!(BoundSocket::bind(&path), Err(SocketError::AlreadyRunning(_))));
        drop(first);
        // A socket file left behind by a killed server (no lock held, nobody listening).
        let stale = std::os::unix::net::UnixListener::bind(&path).unwrap();
        drop(stale);
        let again = BoundSocket::bind(&path).unwrap();
        drop(again);
        fs::write(&path, b"not a socket").unwrap();
        assert!(matches!(BoundSocket::bind(&path), Err(SocketError::NotASocket(_))));
    }

    /// Regression: a server refused on an occupied socket (or stopped) left `berth.lock`
    /// behind; the lock file now lives exactly as long as a bound socket.
    #[test]
    fn no_lock_file_outlives_its_server_or_a_refused_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let path = dir.join("berth.sock");
        let lock = path.with_extension("lock");
        let first = BoundSocket::bind(&path).unwrap();
        assert!(lock.exists());
        assert!(matches!(BoundSocket::bind(&path), Err(SocketError::AlreadyRunning(_))));
        assert!(lock.exists(), "the running server keeps its lock file");
        drop(first);
        assert!(!lock.exists() && !path.exists(), "{:?}", fs::read_dir(&dir).unwrap().count());
        // Refused because something that is not a socket sits there: nothing left either.
        fs::write(&path, b"not a socket").unwrap();
        assert!(BoundSocket::bind(&path).is_err());
        assert!(!lock.exists());
        fs::remove_file(&path).unwrap();
        // Refused because an older server without the lock answers on the socket.
        let old = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(matches!(BoundSocket::bind(&path), Err(SocketError::AlreadyRunning(_))));
        assert!(!lock.exists());
        drop(old);
        // A lock file whose server went away while another waited is taken afresh.
        let again = BoundSocket::bind(&path).unwrap();
        assert!(lock.exists());
        drop(again);
    }
}

#[cfg(test)]
#[path = "socket_event_tests.rs"]
mod event_tests;

#[cfg(test)]
#[path = "socket_load_tests.rs"]
mod load_tests;
