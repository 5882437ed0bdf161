//! A client connection's socket as the connection's task reads and writes it: registered with
//! the runtime for reading only.
//!
//! Tokio's `UnixStream` registers a socket for reading and writing, edge-triggered; every time
//! the client reads a line (an answer, an event a publisher wrote directly) the socket turns
//! writable again and wakes a runtime worker for nothing. Here the socket is registered for
//! reading only, writes are non-blocking `send`s, and only a write that would block registers a
//! duplicate of the socket for writability, until a write goes through. So on the keystroke
//! path a worker wakes once per key: for the request. It must not hold protocol or Store state.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::UnixStream;

/// A connected client socket split into its reading and writing halves.
pub fn split(stream: UnixStream) -> io::Result<(ClientReader, ClientWriter)> {
    let std = stream.into_std()?;
    std.set_nonblocking(true)?;
    let fd = Arc::new(register(OwnedFd::from(std), Interest::READABLE)?);
    Ok((ClientReader { fd: fd.clone() }, ClientWriter { fd, waiting: None }))
}

/// Registers `fd` with the runtime for `interest` only.
fn register(fd: OwnedFd, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` stays open, and the same descriptor, for as long as it lives, and
    // the `AsyncFd` owns it.
    Ok(unsafe { AsyncFd::register_with_interest(fd, interest) }?)
}

/// The reading half: registered with the runtime for readability only.
pub struct ClientReader {
    fd: Arc<AsyncFd<OwnedFd>>,
}

/// The writing half: non-blocking sends; registered for writability only while a write waits.
pub struct ClientWriter {
    fd: Arc<AsyncFd<OwnedFd>>,
    /// A duplicate of the socket registered for writability, while a write would block.
    waiting: Option<AsyncFd<OwnedFd>>,
}

/// Retries `call` on `EINTR`; `WouldBlock` when the socket would block.
fn retry(call: impl Fn() -> isize) -> io::Result<usize> {
    loop {
        let n = call();
        if let Ok(n) = usize::try_from(n) {
            return Ok(n);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// One non-blocking `recv` into `buf`.
fn recv(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    let (ptr, len) = (buf.as_mut_ptr(), buf.len());
    // SAFETY: `ptr` is valid for writes of `len` bytes for the whole call (borrowed from `buf`);
    // `fd` is an open descriptor for the call's duration.
    retry(|| unsafe { libc::recv(fd.as_raw_fd(), ptr.cast(), len, libc::MSG_DONTWAIT) })
}

/// One non-blocking `send` of `buf`; a closed peer is `EPIPE`, never a signal.
fn send(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of its length for the whole call; `fd` is an open
    // descriptor for the call's duration.
    retry(|| unsafe {
        libc::send(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    })
}

impl AsyncRead for ClientReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let read = guard.try_io(|fd| recv(fd.get_ref().as_fd(), unfilled));
            match read {
                Ok(Ok(n)) => {
                    if n > 0 && n < unfilled.len() {
                        // Short of the buffer: the socket is drained, as tokio's own streams
                        // assume; a line arriving since has bumped the readiness past this
                        // guard's, so clearing it loses nothing and saves the `recv` that
                        // would only say "would block".
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Not readable after all: the readiness was cleared; wait for the next.
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsFd for ClientWriter {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.get_ref().as_fd()
    }
}

impl AsyncWrite for ClientWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let Some(waiting) = &self.waiting else {
                match send(self.fd.get_ref().as_fd(), buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        // Registered now, an already writable socket is reported at once, so
                        // no wake-up is lost between the send and the registration.
                        let dup = self.fd.get_ref().try_clone()?;
                        self.waiting = Some(register(dup, Interest::WRITABLE)?);
                        continue;
                    }
                    sent => return Poll::Ready(sent),
                }
            };
            let mut guard = ready!(waiting.poll_write_ready(cx))?;
            let sent = guard.try_io(|fd| send(fd.get_ref().as_fd(), buf));
            match sent {
                Ok(result) => {
                    // The socket takes writes again: stop watching it (a client that reads
                    // must not wake the task), until a write would block again.
                    self.waiting = None;
                    return Poll::Ready(result);
                }
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: shutting down the writing side of the open socket this writer shares.
        let done = unsafe { libc::shutdown(self.fd.get_ref().as_raw_fd(), libc::SHUT_WR) };
        Poll::Ready(if done == 0 { Ok(()) } else { Err(io::Error::last_os_error()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read as _, Write as _};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A connected pair: the server's halves and the client's blocking end.
    async fn pair() -> (ClientReader, ClientWriter, std::os::unix::net::UnixStream) {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        ours.set_nonblocking(true).expect("non-blocking");
        let (r, w) = split(UnixStream::from_std(ours).expect("registered")).expect("split");
        theirs.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        (r, w, theirs)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lines_go_both_ways() {
        let (mut r, mut w, mut client) = pair().await;
        client.write_all(b"ping\n").expect("client writes");
        let mut got = [0u8; 5];
        tokio::time::timeout(Duration::from_secs(10), r.read_exact(&mut got))
            .await
            .expect("read in time")
            .expect("read");
        assert_eq!(&got, b"ping\n");
        w.write_all(b"pong\n").await.expect("write");
        let mut back = [0u8; 5];
        client.read_exact(&mut back).expect("client reads");
        assert_eq!(&back, b"pong\n");
        drop(client);
        let n = tokio::time::timeout(Duration::from_secs(10), r.read(&mut got))
            .await
            .expect("eof in time")
            .expect("read");
        assert_eq!(n, 0, "a closed client reads as the end");
    }

    /// A write larger than the socket's buffer waits for the client to read, and arrives whole.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_that_would_block_waits_for_the_reader_and_arrives_whole() {
        let (_r, mut w, mut client) = pair().await;
        let big: Vec<u8> = (0..8 << 20).map(|i: u32| (i % 251) as u8).collect();
        let expected = big.clone();
        let reader = std::thread::spawn(move || {
            // Let the writer fill the buffer and block first.
            std::thread::sleep(Duration::from_millis(50));
            let mut got = vec![0u8; expected.len()];
            client.read_exact(&mut got).expect("client reads everything");
            got == expected
        });
        tokio::time::timeout(Duration::from_secs(30), w.write_all(&big))
            .await
            .expect("the write finishes once the client reads")
            .expect("write");
        assert!(w.waiting.is_none(), "no longer watching for writability");
        assert!(tokio::task::spawn_blocking(move || reader.join().expect("reader")).await.unwrap());
    }
}
