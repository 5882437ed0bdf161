//! A socket peer's place in the process tree, read from `/proc` (once, when a request first
//! needs it; the pidfd keeps that sound however late): outside
//! Berth (a person's terminal), inside it (the chain of processes from the peer up to the
//! server's direct child), or unknown (gone, unreadable). What a caller cannot forge: its
//! environment is never read.
//!
//! It owns reading the ancestry and the peer's pidfd; it must not judge what a caller may do
//! (that is `policy.rs`, against the Store's panes).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A process named so that a reused pid is not mistaken for it: its pid and its start time
/// (clock ticks after boot, `/proc/<pid>/stat` field 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcKey {
    /// The process id.
    pub pid: i32,
    /// When it started, in clock ticks after boot.
    pub start: u64,
}

impl ProcKey {
    /// The key of a running process, if it runs.
    pub fn of(pid: i32) -> Option<ProcKey> {
        stat(pid).map(|s| s.key())
    }

    /// Whether the process is still the one this key names.
    pub fn alive(&self) -> bool {
        stat(self.pid).is_some_and(|s| s.start == self.start && s.state != 'Z')
    }
}

/// What `/proc/<pid>/stat` says that trust needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The process id.
    pub pid: i32,
    /// The command name (`comm`, at most 15 bytes).
    pub comm: String,
    /// The state letter (`Z` for a zombie).
    pub state: char,
    /// The parent's pid.
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
    /// The session.
    pub session: i32,
    /// The start time in clock ticks after boot.
    pub start: u64,
}

impl Stat {
    /// Its key.
    pub fn key(&self) -> ProcKey {
        ProcKey { pid: self.pid, start: self.start }
    }
}

/// Reads `/proc/<pid>/stat`; `None` when the process is gone or the file does not parse.
pub fn stat(pid: i32) -> Option<Stat> {
    if pid <= 0 {
        return None;
    }
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Parses a `/proc/<pid>/stat` line. The name sits in parentheses and may hold anything, so
/// the fields are read after the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_owned();
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // After the name: state(3) ppid(4) pgrp(5) session(6) … starttime(22).
    let field = |n: usize| fields.get(n - 3).copied();
    Some(Stat {
        pid,
        comm,
        state: field(3)?.chars().next()?,
        ppid: field(4)?.parse().ok()?,
        pgrp: field(5)?.parse().ok()?,
        session: field(6)?.parse().ok()?,
        start: field(22)?.parse().ok()?,
    })
}

/// One process of a peer's ancestry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    /// Which process.
    pub key: ProcKey,
    /// Its session.
    pub session: i32,
    /// Its command name.
    pub comm: String,
    /// Its command line, as read when the peer connected (a program may rewrite it: used only
    /// to refuse more, never to allow).
    pub argv: Vec<String>,
}

/// Where a peer sits in the process tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// The server's own process (the embedded window's links to its own socket).
    Server,
    /// Not a descendant of the server: outside Berth.
    Outside {
        /// The peer's session (a pane's session here means the server could not become a
        /// subreaper and an orphan reached init: not a person after all).
        session: i32,
    },
    /// A descendant of the server: the chain from the peer (first) up to the server's direct
    /// child (last). The server is a child subreaper, so a descendant stays one when its
    /// parents exit.
    Inside(Vec<Ancestor>),
    /// It could not be examined (gone before it was looked at, unreadable): trusted with
    /// nothing.
    Unknown(String),
}

/// The most ancestors walked before giving up (a deeper tree is refused as unknown).
const MAX_DEPTH: usize = 512;

/// How often a walk that raced with exiting parents is tried again.
const ATTEMPTS: usize = 4;

/// `SO_PEERPIDFD` (Linux 6.5): a pidfd of the process that connected.
const SO_PEERPIDFD: libc::c_int = 77;

/// The connected peer's pidfd, where the kernel gives one.
pub fn peer_pidfd(socket: RawFd) -> Option<OwnedFd> {
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` and `len` are valid for writes of the sizes given; the socket is ours.
    let rc = unsafe {
        libc::getsockopt(
            socket,
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    // SAFETY: on success the kernel handed us a new descriptor that nothing else owns.
    (rc == 0 && fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether the process behind a pidfd has not been reaped yet (a zombie counts: its pid is
/// not free for reuse until it is reaped).
fn pidfd_alive(pidfd: &OwnedFd) -> bool {
    // SAFETY: signal 0 only checks; the descriptor is a pidfd we own.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A connection's peer, examined the first time a request needs it (most connections — a
/// window's frames, `berth ls` — never do). Sound however late: the pidfd (or, without one, the
/// start time read when the peer connected) tells whether the pid still names the process
/// that connected; a peer that exited meanwhile is [`Peer::Unknown`].
#[derive(Debug)]
pub struct LazyPeer {
    pid: Option<i32>,
    pidfd: Option<OwnedFd>,
    start: Option<u64>,
    place: std::sync::OnceLock<Peer>,
}

impl LazyPeer {
    /// The peer on `socket`, whose `SO_PEERCRED` pid is `pid`.
    pub fn new(socket: RawFd, pid: Option<i32>) -> LazyPeer {
        let pidfd = peer_pidfd(socket);
        // Without a pidfd, the start time now names the process that connected.
        let start = match (&pidfd, pid) {
            (None, Some(pid)) => stat(pid).map(|s| s.start),
            _ => None,
        };
        LazyPeer { pid, pidfd, start, place: std::sync::OnceLock::new() }
    }

    /// Where the peer sits, examined once.
    pub fn get(&self) -> &Peer {
        self.place.get_or_init(|| {
            let peer = examine(self.pid, self.pidfd.as_ref());
            match (&peer, self.start, self.pidfd.is_some()) {
                (Peer::Inside(chain), Some(start), false)
                    if chain.first().map(|a| a.key.start) != Some(start) =>
                {
                    Peer::Unknown("the process that connected has exited".into())
                }
                (Peer::Outside { .. }, Some(start), false)
                    if self.pid.and_then(stat).map(|s| s.start) != Some(start) =>
                {
                    Peer::Unknown("the process that connected has exited".into())
                }
                _ => peer,
            }
        })
    }
}

/// Examines the peer `pid` (from `SO_PEERCRED`), with its pidfd when the kernel gave one so a
/// peer that exited (and whose pid may be reused) is not taken for another process.
pub fn examine(pid: Option<i32>, pidfd: Option<&OwnedFd>) -> Peer {
    let Some(pid) = pid.filter(|p| *p > 0) else {
        return Peer::Unknown("the peer's process id is unknown".into());
    };
    let server = std::process::id() as i32;
    if pid == server {
        return Peer::Server;
    }
    for _ in 0..ATTEMPTS {
        let Some(walked) = walk(pid, server) else { continue };
        let first = match &walked {
            Peer::Inside(chain) => chain.first().map(|a| a.key),
            _ => None,
        };
        // The pid still names the process that connected: its pidfd is alive (its pid cannot
        // have been reused) or, without one, the same start time is still there.
        let same = match pidfd {
            Some(fd) => pidfd_alive(fd),
            None => first.is_none_or(|k| k.alive()),
        };
        if !same {
            return Peer::Unknown(format!("process {pid} exited after connecting"));
        }
        return walked;
    }
    Peer::Unknown(format!("the ancestry of process {pid} kept changing while it was read"))
}

/// One walk up the parents; `None` when a parent changed under it (try again).
fn walk(pid: i32, server: i32) -> Option<Peer> {
    let Some(mut current) = stat(pid) else {
        return Some(Peer::Unknown(format!("process {pid} is gone")));
    };
    if current.state == 'Z' {
        return Some(Peer::Unknown(format!("process {pid} has exited")));
    }
    let session = current.session;
    let mut chain = Vec::new();
    loop {
        if chain.len() >= MAX_DEPTH {
            return Some(Peer::Unknown(format!("process {pid} has too many ancestors")));
        }
        let ppid = current.ppid;
        let inside = ppid == server;
        if !inside && ppid <= 1 {
            return Some(Peer::Outside { session });
        }
        chain.push(Ancestor {
            key: current.key(),
            session: current.session,
            comm: current.comm.clone(),
            argv: Vec::new(),
        });
        if inside {
            for ancestor in &mut chain {
                ancestor.argv = berth_engine::procfs::cmdline(ancestor.key.pid);
            }
            return Some(Peer::Inside(chain));
        }
        // The parent exited meanwhile (the child was reparented) or its pid was reused (a
        // parent never starts after its child): read the chain again.
        let parent = stat(ppid)?;
        if parent.start > current.start {
            return None;
        }
        current = parent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_with_odd_names() {
        let line = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 987654 5 6";
        let stat = parse_stat(line).unwrap();
        assert_eq!(stat.pid, 4242);
        assert_eq!(stat.comm, "a (b) c");
        assert_eq!((stat.state, stat.ppid, stat.pgrp, stat.session), ('S', 17, 4242, 4242));
        assert_eq!(stat.start, 987654);
        assert!(parse_stat("12 (x) S 1").is_none());
        assert!(parse_stat("").is_none());
    }

    #[test]
    fn this_process_is_outside_a_server_that_is_not_its_ancestor() {
        // The test process is nobody's pane: walking up ends at init.
        let me = std::process::id() as i32;
        assert!(ProcKey::of(me).is_some_and(|k| k.alive()));
        // Examined as if the server were another process: outside.
        assert!(matches!(walk(me, i32::MAX), Some(Peer::Outside { .. })));
        assert_eq!(examine(Some(me), None), Peer::Server);
        assert!(matches!(examine(None, None), Peer::Unknown(_)));
        assert!(matches!(examine(Some(i32::MAX - 1), None), Peer::Unknown(_)));
    }

    #[test]
    fn a_child_of_this_process_is_inside_it() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        // Until it has exec'd, the child is a copy of this process.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while berth_engine::procfs::cmdline(pid) != ["sleep", "30"] {
            assert!(std::time::Instant::now() < deadline, "sleep never started");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let walked = walk(pid, std::process::id() as i32);
        let _ = child.kill();
        let _ = child.wait();
        let Some(Peer::Inside(chain)) = walked else { panic!("{walked:?}") };
        assert_eq!(chain.len(), 1);
        assert_eq!(chain[0].key.pid, pid);
        assert_eq!(chain[0].comm, "sleep");
        assert_eq!(chain[0].argv, ["sleep", "30"]);
    }
}
