//! Small `/proc` probes about the processes running in a pane's PTY session.
//!
//! Owns reading `/proc/<pid>/stat` and `cmdline`; it must not signal or change anything.

use std::fs;

/// What `/proc/<pid>/stat` says about one process that matters to Berth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The process id.
    pub pid: i32,
    /// The state letter (`R`, `S`, `Z`, …).
    pub state: char,
    /// The parent process id.
    pub ppid: i32,
    /// The process group id.
    pub pgrp: i32,
    /// The session id.
    pub session: i32,
}

/// Reads and parses `/proc/<pid>/stat`; `None` if the process is gone or unreadable.
pub fn stat(pid: i32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses the text of a `/proc/<pid>/stat` file. The command name sits in parentheses and may
/// hold spaces and parentheses itself, so the fields are read after the last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let pid = text.split(' ').next()?.parse().ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat { pid, state, ppid, pgrp, session })
}

/// Every live (non-zombie) process whose session id is `sid`.
pub fn session_members(sid: i32) -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .filter(|s| s.session == sid && s.state != 'Z')
        .collect()
}

/// The argv of a process from `/proc/<pid>/cmdline`; empty if gone or a kernel thread.
pub fn cmdline(pid: i32) -> Vec<String> {
    let Ok(bytes) = fs::read(format!("/proc/{pid}/cmdline")) else {
        return Vec::new();
    };
    bytes
        .split(|&b| b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

/// The value of one variable in a process's initial environment (`/proc/<pid>/environ`),
/// if the process exists, is readable (same user) and has it.
pub fn environ_var(pid: i32, name: &str) -> Option<String> {
    let bytes = fs::read(format!("/proc/{pid}/environ")).ok()?;
    bytes.split(|&b| b == 0).find_map(|entry| {
        let rest = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        Some(String::from_utf8_lossy(rest).into_owned())
    })
}

/// The current working directory of a process, if it can be read.
pub fn cwd(pid: i32) -> Option<std::path::PathBuf> {
    fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_parentheses_in_the_name_parses() {
        let s = parse_stat("42 (a) b (c)) S 1 42 42 34817 42 4194560 0 0").unwrap();
        assert_eq!(s, ProcStat { pid: 42, state: 'S', ppid: 1, pgrp: 42, session: 42 });
    }

    #[test]
    fn own_process_is_readable() {
        let me = std::process::id() as i32;
        let s = stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(!cmdline(me).is_empty());
        assert!(cwd(me).is_some());
        assert!(session_members(s.session).iter().any(|m| m.pid == me));
    }
}
