//! The adapter table ([`ADAPTERS`]) and what is read through it: an argv's agent (looking
//! through wrappers such as `env` or `npx`), the official resume command, a session id on
//! the agent's own command line, and how a prompt is submitted to its TUI ([`SubmitProfile`]).
//!
//! It must not run anything or read anything but the argv it is given.

use super::kind::{validate_session_id, AgentKind};

impl AgentKind {
    fn adapter(self) -> Option<&'static Adapter> {
        ADAPTERS.iter().find(|a| a.kind == self)
    }
}

/// How one agent is recognised and resumed.
#[derive(Debug)]
pub struct Adapter {
    /// The agent.
    pub kind: AgentKind,
    /// Program names (basenames of argv[0]) that run it.
    pub programs: &'static [&'static str],
    /// The resume command; `{id}` stands for the session id.
    pub resume: &'static [&'static str],
    /// Flags whose value is a session id on the agent's own command line.
    pub session_flags: &'static [&'static str],
    /// A subcommand whose first argument is a session id (`codex resume <id>`).
    pub session_subcommand: Option<&'static str>,
    /// How `pane.submit` types a prompt into its TUI.
    pub submit: SubmitProfile,
    /// Whether the agent reports the end of a turn interrupted by a key (opencode: it
    /// interrupts only on a second Escape, and its plugin then sends `session.status` idle).
    /// Otherwise Berth ends the turn itself when an interrupt key goes through it (claude
    /// sends no hook on an interrupt).
    pub reports_interrupts: bool,
}

/// How `pane.submit` delivers a prompt to a program: the paste, then Enter as a separate write
/// `settle_ms` later, then (where the agent's hooks are wired) a bounded wait for `ack_event`,
/// with Enter pressed once more if it does not come.
///
/// The values are per agent (see `../shared/AGENT-CHANNELS.md`, "Prompt submit"); a program
/// without an adapter gets [`SubmitProfile::GENERIC`] (an agent that reported itself) or
/// [`SubmitProfile::PLAIN`] (a shell or any other program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmitProfile {
    /// Milliseconds between the end of the paste and Enter. An Enter that comes sooner may be
    /// taken as part of the paste (claude: a paste commits 100 ms after its last byte; codex:
    /// fast input turns Enter into a newline for 120 ms).
    pub settle_ms: u64,
    /// The hook event that says the prompt was submitted (`hook_event_name`, or `type` for
    /// opencode's plugin events); it counts only when it moves the pane to `working`. `None`:
    /// the agent has no such event and a submit is never confirmed.
    pub ack_event: Option<&'static str>,
    /// How long to wait for `ack_event` after each Enter, in milliseconds.
    pub ack_wait_ms: u64,
}

impl SubmitProfile {
    /// An agent Berth has no adapter for (it reported itself as `generic`): the paste settles
    /// as long as claude's, and no event confirms it.
    pub const GENERIC: SubmitProfile =
        SubmitProfile { settle_ms: 200, ack_event: None, ack_wait_ms: 0 };

    /// A shell or any other program: Enter right after the text (a separate write), nothing
    /// confirms it.
    pub const PLAIN: SubmitProfile =
        SubmitProfile { settle_ms: 0, ack_event: None, ack_wait_ms: 0 };
}

/// Every adapter Berth ships.
pub const ADAPTERS: &[Adapter] = &[
    Adapter {
        kind: AgentKind::Claude,
        programs: &["claude"],
        resume: &["claude", "--resume", "{id}"],
        session_flags: &["--resume", "-r", "--session-id"],
        session_subcommand: None,
        // A paste commits after PASTE_COMPLETION_TIMEOUT_MS = 100 ms; an Enter sooner joins it
        // (>= 150 ms is the known-good figure). 200 ms leaves room for scheduling.
        submit: SubmitProfile {
            settle_ms: 200,
            ack_event: Some("UserPromptSubmit"),
            ack_wait_ms: 3000,
        },
        reports_interrupts: false,
    },
    Adapter {
        kind: AgentKind::Codex,
        programs: &["codex"],
        resume: &["codex", "resume", "{id}"],
        session_flags: &[],
        session_subcommand: Some("resume"),
        // Paste-burst: fast input turns Enter into a newline for 120 ms.
        submit: SubmitProfile {
            settle_ms: 200,
            ack_event: Some("UserPromptSubmit"),
            ack_wait_ms: 3000,
        },
        reports_interrupts: false,
    },
    Adapter {
        kind: AgentKind::Opencode,
        programs: &["opencode"],
        resume: &["opencode", "--session", "{id}"],
        session_flags: &["--session", "-s"],
        session_subcommand: None,
        // Its paste handling is not documented (its official submit is the HTTP API); claude's
        // margin. Berth's plugin forwards `session.status`, which turns busy on a prompt; it
        // sends its events one `berth hook` process at a time, in order, and a new session's
        // `session.created` goes first: on a loaded machine the ack came after more than 3 s
        // and the Enter pressed again found an empty input (issue 26, the real opencode).
        submit: SubmitProfile {
            settle_ms: 200,
            ack_event: Some("session.status"),
            ack_wait_ms: 6000,
        },
        reports_interrupts: true,
    },
    Adapter {
        kind: AgentKind::Cursor,
        programs: &["cursor-agent"],
        resume: &["cursor-agent", "--resume", "{id}"],
        session_flags: &["--resume"],
        session_subcommand: None,
        // Bracketed-paste handling unverified; claude's margin.
        submit: SubmitProfile {
            settle_ms: 200,
            ack_event: Some("beforeSubmitPrompt"),
            ack_wait_ms: 3000,
        },
        reports_interrupts: false,
    },
];

/// Whether `kind` reports the end of a turn it interrupted itself (see
/// [`Adapter::reports_interrupts`]).
pub fn reports_interrupts(kind: AgentKind) -> bool {
    kind.adapter().is_some_and(|a| a.reports_interrupts)
}

/// How `pane.submit` types a prompt for `kind` (see [`SubmitProfile`]).
pub fn submit_profile(kind: AgentKind) -> SubmitProfile {
    match kind.adapter() {
        Some(adapter) => adapter.submit,
        None if kind == AgentKind::None => SubmitProfile::PLAIN,
        None => SubmitProfile::GENERIC,
    }
}

/// Programs that run another program named by a later argument.
const WRAPPERS: &[&str] = &["env", "node", "npx", "bunx", "bun", "pnpx", "nice", "nohup", "exec"];

fn basename(arg: &str) -> &str {
    arg.rsplit('/').next().unwrap_or(arg)
}

/// The index in `argv` of the program that actually runs, looking through wrappers such as
/// `env`, `node` or `npx` (and `env`'s `VAR=value` assignments).
pub fn program_index(argv: &[String]) -> Option<usize> {
    let mut i = 0;
    while let Some(arg) = argv.get(i) {
        let name = basename(arg);
        if WRAPPERS.contains(&name) {
            i += 1;
            // Skip the wrapper's own options and env assignments.
            while argv.get(i).is_some_and(|a| a.starts_with('-') || a.contains('=')) {
                i += 1;
            }
            continue;
        }
        return Some(i);
    }
    None
}

/// Which agent an argv runs, judged by the program's name (through wrappers); `None` if it is
/// no known agent.
pub fn detect_kind(argv: &[String]) -> AgentKind {
    let Some(index) = program_index(argv) else { return AgentKind::None };
    let name = basename(&argv[index]);
    // npm packages such as @anthropic-ai/claude-code run as `claude-code`.
    let name = name.strip_suffix(".js").unwrap_or(name);
    ADAPTERS
        .iter()
        .find(|a| {
            a.programs.contains(&name) || (a.kind == AgentKind::Claude && name == "claude-code")
        })
        .map_or(AgentKind::None, |a| a.kind)
}

/// The official resume command for a session, built by the adapter; `None` for kinds without
/// one or an invalid id.
pub fn resume_argv(kind: AgentKind, session_id: &str) -> Option<Vec<String>> {
    validate_session_id(session_id).ok()?;
    let adapter = kind.adapter()?;
    Some(adapter.resume.iter().map(|part| part.replace("{id}", session_id)).collect())
}

/// A session id that the agent's own command line names (`claude --resume X`,
/// `codex resume X`, `opencode -s X`, `cursor-agent --resume=X`), if valid.
pub fn session_from_argv(kind: AgentKind, argv: &[String]) -> Option<String> {
    let adapter = kind.adapter()?;
    let start = program_index(argv)? + 1;
    let args = &argv[start.min(argv.len())..];
    let mut found = None;
    for (i, arg) in args.iter().enumerate() {
        for flag in adapter.session_flags {
            if arg == flag {
                found = args.get(i + 1).cloned();
            } else if let Some(value) = arg.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                found = Some(value.to_owned());
            }
        }
        if adapter.session_subcommand == Some(arg.as_str()) && i == 0 {
            found = args.get(1).cloned();
        }
    }
    found.filter(|id| validate_session_id(id).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn kinds_are_detected_from_argv() {
        let cases = [
            ("claude", AgentKind::Claude),
            ("/usr/local/bin/claude --model opus", AgentKind::Claude),
            ("npx @anthropic-ai/claude-code", AgentKind::Claude),
            ("node /opt/lib/node_modules/@anthropic-ai/claude-code/cli.js", AgentKind::None),
            ("env FOO=1 codex", AgentKind::Codex),
            ("opencode -s ses_abc", AgentKind::Opencode),
            ("cursor-agent --resume chat1", AgentKind::Cursor),
            ("bash", AgentKind::None),
            ("", AgentKind::None),
            ("env", AgentKind::None),
            ("claudette", AgentKind::None),
        ];
        for (line, want) in cases {
            assert_eq!(detect_kind(&argv(line)), want, "{line:?}");
        }
    }

    #[test]
    fn resume_commands_are_the_official_ones() {
        let cases = [
            (AgentKind::Claude, "abc-123", Some("claude --resume abc-123")),
            (AgentKind::Codex, "0199a-b", Some("codex resume 0199a-b")),
            (AgentKind::Opencode, "ses_42", Some("opencode --session ses_42")),
            (AgentKind::Cursor, "chat:7", Some("cursor-agent --resume chat:7")),
            (AgentKind::Generic, "x", None),
            (AgentKind::None, "x", None),
            (AgentKind::Claude, "--dangerously-skip-permissions", None),
            (AgentKind::Claude, "a b", None),
            (AgentKind::Claude, "", None),
            (AgentKind::Claude, "x;rm -rf /", None),
        ];
        for (kind, id, want) in cases {
            let got = resume_argv(kind, id).map(|a| a.join(" "));
            assert_eq!(got.as_deref(), want, "{kind:?} {id:?}");
        }
    }

    #[test]
    fn session_ids_are_read_from_the_agents_own_argv() {
        let cases = [
            (AgentKind::Claude, "claude --resume abc", Some("abc")),
            (AgentKind::Claude, "claude -r abc --model x", Some("abc")),
            (AgentKind::Claude, "claude --session-id=u-1", Some("u-1")),
            (AgentKind::Claude, "claude --resume", None),
            (AgentKind::Claude, "claude", None),
            (AgentKind::Codex, "codex resume th_1", Some("th_1")),
            (AgentKind::Codex, "codex exec resume th_1", None),
            (AgentKind::Opencode, "opencode -s ses_9", Some("ses_9")),
            (AgentKind::Cursor, "cursor-agent --resume=c1", Some("c1")),
            (AgentKind::Cursor, "cursor-agent --resume -x", None),
        ];
        for (kind, line, want) in cases {
            assert_eq!(session_from_argv(kind, &argv(line)).as_deref(), want, "{line:?}");
        }
    }
}
