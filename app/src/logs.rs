//! The log file: `tracing` output to `$XDG_STATE_HOME/berth/berth.log` (0600) as well as to
//! stderr, rotated by size, and `berth logs` to print and follow it.
//!
//! Owns the log file's path, its rotation and the subscriber setup. It must not log anything
//! a user types into a pane (the server's own events decide what is logged, not this module).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;

/// The size past which the log file is rotated.
const MAX_LOG_BYTES: u64 = 5 * 1024 * 1024;
/// How many rotated files are kept (`berth.log.1` … `berth.log.3`).
const KEEP_ROTATED: u32 = 3;
/// How often `berth logs -f` looks for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// The log file's path: `berth.log` in the state dir.
pub fn log_path() -> Result<PathBuf> {
    let dir = berth_server::persist::state_dir_path(|name| std::env::var_os(name))
        .context("cannot find the state dir for the log file")?;
    Ok(dir.join("berth.log"))
}

/// Whether colour may be used on stderr: a terminal, and `NO_COLOR` unset or empty.
pub fn stderr_colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stderr().is_terminal()
}

/// Sends `tracing` output to stderr and to the log file, at the level `BERTH_LOG` sets
/// (default `info`). A log file that cannot be opened is reported once on stderr and skipped.
pub fn init() {
    let filter = || EnvFilter::try_from_env("BERTH_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr_layer = tracing_subscriber::fmt::layer()
        .with_ansi(stderr_colour())
        .with_writer(io::stderr)
        .with_filter(filter());
    let file = log_path().and_then(|path| RotatingFile::open(path).map_err(Into::into));
    let file_layer = match file {
        Ok(file) => Some(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(Mutex::new(file))
                .with_filter(filter()),
        ),
        Err(e) => {
            eprintln!("berth: not writing a log file: {e:#}");
            None
        }
    };
    let _ = tracing_subscriber::registry().with(stderr_layer).with(file_layer).try_init();
}

/// An append-only log file that moves itself to `.1` (and older ones up) past a size.
pub struct RotatingFile {
    path: PathBuf,
    file: File,
    written: u64,
}

impl RotatingFile {
    /// Opens (creating 0600, and the dir 0700) the log file at `path` for appending.
    pub fn open(path: PathBuf) -> io::Result<RotatingFile> {
        if let Some(dir) = path.parent() {
            fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        let file = open_append(&path)?;
        let written = file.metadata()?.len();
        Ok(RotatingFile { path, file, written })
    }

    fn rotated(&self, n: u32) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    fn rotate(&mut self) -> io::Result<()> {
        for n in (1..KEEP_ROTATED).rev() {
            let from = self.rotated(n);
            if from.exists() {
                fs::rename(&from, self.rotated(n + 1))?;
            }
        }
        fs::rename(&self.path, self.rotated(1))?;
        self.file = open_append(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).mode(0o600).open(path)
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written + buf.len() as u64 > MAX_LOG_BYTES && self.written > 0 {
            // A failed rotation keeps writing to the current file rather than losing lines.
            let _ = self.rotate();
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// `berth logs`: prints the last `lines` lines of the log, then with `follow` new lines as
/// they come (until interrupted), reopening the file when it is rotated.
pub fn print(lines: usize, follow: bool) -> Result<ExitCode> {
    let path = log_path()?;
    let mut file = File::open(&path)
        .with_context(|| format!("cannot open {} (has berth run yet?)", path.display()))?;
    let mut text = String::new();
    file.read_to_string(&mut text).with_context(|| format!("reading {}", path.display()))?;
    let all: Vec<&str> = text.lines().collect();
    let mut out = crate::out::stdout();
    for line in &all[all.len().saturating_sub(lines)..] {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    let mut pos = text.len() as u64;
    loop {
        std::thread::sleep(FOLLOW_POLL);
        let len = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if len < pos {
            // Rotated (or truncated): start over on the new file.
            if let Ok(new) = File::open(&path) {
                file = new;
            }
            pos = 0;
        }
        file.seek(SeekFrom::Start(pos))?;
        let mut reader = BufReader::new(&mut file);
        let mut line = String::new();
        while reader.read_line(&mut line)? > 0 {
            if !line.ends_with('\n') {
                break;
            }
            pos += line.len() as u64;
            out.write_all(line.as_bytes())?;
            line.clear();
        }
        out.flush()?;
    }
}
