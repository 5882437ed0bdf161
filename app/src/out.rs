//! The CLI's standard output. A reader that goes away (`berth ls --json | head -1`, `| true`)
//! is a normal end for a command-line program: the verb stops and `berth` exits 0 without a
//! word, as ripgrep does (Rust ignores SIGPIPE, so a write to a closed pipe fails with EPIPE
//! instead of killing the process; `println!` would panic on it).
//!
//! Every verb writes through [`stdout`] (or the [`outln!`] and [`out!`] macros over it): a
//! write that finds the pipe closed fails with an error holding [`Closed`], which `main` tells
//! apart from every other error with [`is_closed`] (a socket's broken pipe stays an error). The
//! hook's answer to its agent (`berth hook`) keeps its own writer: it ignores a closed stdout.

use std::fmt;
use std::io::{self, Write};

/// The reader of standard output went away.
#[derive(Debug)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output was closed")
    }
}

impl std::error::Error for Closed {}

/// Standard output, locked, for a verb's output.
pub struct Stdout(io::StdoutLock<'static>);

/// Standard output for a verb: its broken pipe becomes [`Closed`].
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

fn mark(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, Closed)
    } else {
        e
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(mark)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(mark)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(mark)
    }
}

/// Whether an error is standard output's reader going away.
pub fn is_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<Closed>()
            || e.downcast_ref::<io::Error>()
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<Closed>())
    })
}

/// `println!` for a verb: `?`s the write, so a closed pipe ends the verb quietly.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!($crate::out::stdout(), $($arg)*)?;
    }};
}

/// `print!` for a verb, flushed: `?`s the write, so a closed pipe ends the verb quietly.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = $crate::out::stdout();
        write!(out, $($arg)*)?;
        out.flush()?;
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_stdout_counts() {
        let closed = anyhow::Error::from(mark(io::Error::from(io::ErrorKind::BrokenPipe)));
        assert!(is_closed(&closed));
        assert!(is_closed(&closed.context("printing the list")));
        // A socket's broken pipe (the server went away) is an error to report.
        let socket = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(!is_closed(&socket));
        let other = anyhow::Error::from(mark(io::Error::from(io::ErrorKind::Other)));
        assert!(!is_closed(&other));
    }
}
