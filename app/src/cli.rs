//! Command-line verbs: each maps onto one socket method (DESIGN.md §4).
//!
//! Errors print one line on stderr and exit 1; usage errors exit 2 (clap's default).
//! `--socket` picks the server for every verb; `BERTH_SOCKET` and the default path come after.
//! The CLI prints no colour of its own (so `NO_COLOR` has nothing to turn off here); the log
//! lines on stderr are coloured only on a terminal and without `NO_COLOR`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use berth_engine::agents::AgentKind;
use berth_engine::ids::{NotificationId, PaneId, TabId, WorkspaceId};
use berth_engine::layout::SplitDir;
use berth_server::agents::work::WaitUntil;
use berth_server::client::Client;
use berth_server::commands::{Command, ReadSpec, Reply, SpawnRequest, WorkspaceSelector};
use berth_server::error::CommandError;
use berth_server::protocol::{ReadDto, WorkspaceListDto};
use berth_server::view::{ResumeSource, StateView};
use berth_server::{Server, ServerConfig};
use clap::{Args, CommandFactory, Parser, Subcommand};
use serde_json::Value;

/// Berth: a GPU terminal for coding agents and shells, with an embedded server.
#[derive(Parser, Debug)]
#[command(
    name = "berth",
    version,
    about,
    arg_required_else_help = false,
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// The server's socket, for every verb (`berth server` binds there). Overrides
    /// BERTH_SOCKET; default $XDG_RUNTIME_DIR/berth/berth.sock.
    #[arg(long, global = true, value_name = "PATH")]
    socket: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Verb>,
}

/// The exit codes, shown at the end of `berth --help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  error (the message on stderr says what happened and what to do)
  2  usage error (unknown verb, bad or missing argument)
  3  `berth wait`: timeout
  4  `berth wait`: the pane exited before reaching the state

Examples:
  berth                                   open the window
  berth new -- claude                     start an agent in a new tab
  berth --socket /tmp/remote.sock ls      list the panes of another server";

/// The socket every verb talks to, decided once at the start of [`run`].
static SOCKET: OnceLock<PathBuf> = OnceLock::new();

/// The socket path: `--socket`, else `BERTH_SOCKET`, else the default.
fn socket() -> &'static Path {
    SOCKET.get_or_init(berth_server::paths::socket_path)
}

#[derive(Subcommand, Debug)]
enum Verb {
    /// Run the server headless in the foreground (no window).
    #[command(
        after_help = "Example:\n  berth --socket /tmp/second.sock server &   a second server for scripts"
    )]
    Server {
        /// If the saved state was written by a newer Berth, move it aside and start empty
        /// instead of refusing to start.
        #[arg(long)]
        move_aside_future: bool,
    },
    /// Open a window on the server that answers on the socket; closing the window leaves
    /// the server and its panes running.
    #[command(
        after_help = "Examples:\n  berth attach --socket /tmp/second.sock   a window on a second server\n  \
                      berth attach ssh://me@box:2222          a window on box's server, over ssh\n  \
                      berth attach --add ssh://gpu            the running window shows gpu's too\n  \
                      berth attach --add --socket /tmp/b.sock  … and the server on that socket\n  \
                      berth attach --remove gpu               it stops showing gpu's"
    )]
    Attach {
        /// `ssh://[user@]host[:port]`: forward the remote user's socket over ssh (asked with
        /// `ssh host berth server-info --socket-path`) for as long as the window is open.
        remote: Option<String>,
        /// Link the running window (the one with the embedded server on the default socket)
        /// to another server beside its own: a socket path or `ssh://` address; with no
        /// value, the server `--socket` names.
        #[arg(long, value_name = "ADDRESS", num_args = 0..=1, conflicts_with_all = ["remote", "remove", "list"])]
        add: Option<Option<String>>,
        /// Drop the running window's link to the server of this name (its panes go on there).
        #[arg(long, value_name = "NAME", conflicts_with_all = ["remote", "list"])]
        remove: Option<String>,
        /// List the running window's servers and how their links stand.
        #[arg(long, conflicts_with = "remote")]
        list: bool,
    },
    /// What the server says of itself; `--socket-path` prints only the socket's path
    /// (asking no server: `berth attach ssh://` runs it on the remote machine).
    #[command(
        after_help = "Example:\n  berth server-info --socket-path   where this user's server binds"
    )]
    ServerInfo {
        /// Print the socket path this user's server binds and exit.
        #[arg(long)]
        socket_path: bool,
    },
    /// Save the state now (it is also saved on its own after every change).
    Save,
    /// Ask the running window to draw a tab into a PNG file.
    Screenshot {
        /// Where to write the PNG.
        #[arg(long)]
        png: PathBuf,
        /// The tab; defaults to the active one.
        #[arg(long)]
        tab: Option<String>,
    },
    /// Start a restored pane again: an agent through its official resume command, a shell
    /// afresh in its saved directory, an ended program anew.
    Resume {
        /// The pane.
        pane: String,
        /// Print the whole command line resume would run (and where it came from); run
        /// nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Record which agent session runs in a pane (for agents' hooks and scripts).
    ReportSession {
        /// The agent: claude, codex, opencode, cursor or generic.
        #[arg(long)]
        agent: String,
        /// The agent's session id.
        #[arg(long)]
        session: String,
        /// The pane; defaults to $BERTH_PANE. Naming another pane than your own takes --pane.
        #[arg(long)]
        pane: Option<String>,
    },
    /// Workspace settings.
    #[command(subcommand)]
    Workspace(WorkspaceVerb),
    /// Raise a notification (pane defaults to $BERTH_PANE).
    Notify {
        /// The pane it concerns.
        #[arg(long, env = "BERTH_PANE")]
        pane: Option<String>,
        /// The title.
        title: String,
        /// The body.
        body: Option<String>,
    },
    /// List notifications.
    #[command(after_help = "Example:\n  berth notifications --unread --json")]
    Notifications {
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
        /// Only those not read yet.
        #[arg(long)]
        unread: bool,
        /// Mark them read (all, or a pane's with --pane) instead of listing.
        #[arg(long)]
        mark_read: bool,
        /// With --mark-read: only this pane's.
        #[arg(long)]
        pane: Option<String>,
    },
    /// Called by an agent's hooks: reads the hook's JSON (argument or stdin) and tells Berth.
    /// Always exits 0 and never fails the agent; a permission request waits for an answer
    /// (`berth decide`, the window, a desktop action) and prints it in the agent's format.
    #[command(
        args_conflicts_with_subcommands = true,
        after_help = "Examples:\n  berth hook install claude            wire claude's hooks (kept idempotent)\n  berth hook claude --print-config      print the settings file's content"
    )]
    Hook {
        /// Install or remove Berth's hooks in an agent's settings.
        #[command(subcommand)]
        install: Option<HookVerb>,
        /// claude, codex, opencode or cursor.
        #[arg(required = true)]
        agent: Option<String>,
        /// The payload; read from stdin when absent (codex passes it as an argument).
        payload: Option<String>,
        /// Print the agent's settings file instead: its exact content on stdout, where it goes
        /// and what to know on stderr.
        #[arg(long)]
        print_config: bool,
        /// For a permission request: seconds to wait for an answer before the agent's own
        /// prompt takes over (default per agent: claude 570, codex 30, cursor 104, opencode
        /// 600; also BERTH_DECISION_WAIT).
        #[arg(long, value_name = "SECONDS")]
        wait: Option<f64>,
    },
    /// Answer the permission request an agent in a pane is waiting on.
    #[command(
        after_help = "Examples:\n  berth decide pane_1 allow\n  berth decide pane_1 deny --message 'use the test database'\n\nAn answer is taken only while the agent's hook still waits (exit 1 with the reason\notherwise: nothing pending, another decision, or the route to the agent lost)."
    )]
    Decide {
        /// The pane.
        pane: String,
        /// allow (once), always (claude and opencode) or deny.
        #[arg(value_parser = ["allow", "always", "deny"])]
        answer: String,
        /// A message for the agent (with deny).
        #[arg(long)]
        message: Option<String>,
        /// The decision meant (`dec_…`); refused if it is no longer the pane's current one.
        #[arg(long)]
        id: Option<String>,
    },
    /// List the permission requests agents are waiting on.
    #[command(
        after_help = "Example:\n  berth decisions --json | jq '.decisions[].decision.prompt'"
    )]
    Decisions {
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List workspaces, tabs and panes.
    #[command(
        after_help = "Example:\n  berth ls --json | jq '.workspaces[].tabs[].panes[] | {id, state, cwd}'"
    )]
    Ls {
        /// Print the full state as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a new pane in a new tab; prints its id.
    #[command(
        after_help = "Example:\n  pane=$(berth new --workspace api --cwd ~/code/api -- claude)"
    )]
    New(NewArgs),
    /// Split a pane; the new pane goes right of or below it. Prints its id.
    #[command(after_help = "Example:\n  berth split \"$BERTH_PANE\" --right -- htop")]
    Split(SplitArgs),
    /// Send text or named keys to a pane.
    #[command(
        after_help = "Examples:\n  berth send pane_1 --enter 'cargo test'\n  berth send pane_1 --keys C-c"
    )]
    Send(SendArgs),
    /// Print a pane's text (the visible screen unless --since or --lines).
    #[command(after_help = "Example:\n  berth read pane_1 --lines 200 --json")]
    Read(ReadArgs),
    /// Search a pane's scrollback and screen for QUERY (a regex, else literal text; smart
    /// case): prints each match as FIRST_SEQ:COL-LAST_SEQ:COL, oldest first (at most 2000).
    #[command(after_help = "Example:\n  berth search pane_1 'error\\[E[0-9]+\\]'\n\
        Exits 1 when nothing matches. `berth read PANE --since SEQ` prints from a match on.")]
    Search {
        /// The pane.
        pane: String,
        /// What to look for.
        query: String,
        /// Print the whole answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Submit a prompt to the agent in a pane, as a person pasting it would: one paste, then
    /// Enter after the agent's settle delay; confirmed by its hook where its hooks are wired.
    #[command(after_help = SUBMIT_HELP)]
    Submit(SubmitArgs),
    /// Wait until TEXT appears in a pane, or until its lifecycle reaches a state.
    #[command(after_help = WAIT_HELP)]
    Wait(WaitArgs),
    /// Tasks: agents working in parallel, each on a contract in its own git worktree.
    #[command(subcommand, after_help = crate::task_cli::TASK_HELP)]
    Task(crate::task_cli::TaskVerb),
    /// A task's or a workspace's changes: the files with +/- counts, and their hunks.
    Diff(crate::git_cli::DiffArgs),
    /// Git worktrees of a repo, with the workspaces and tasks using each.
    #[command(subcommand)]
    Worktree(crate::git_cli::WorktreeVerb),
    /// Open a task's review view (its diff, merge and discard) in the running window.
    Review(crate::git_cli::ReviewArgs),
    /// Close a workspace, tab or pane by id.
    Close {
        /// A `ws_…`, `tab_…` or `pane_…` id.
        id: String,
    },
    /// Focus a pane.
    Focus {
        /// The pane.
        pane: String,
    },
    /// Print events (one JSON object per line; always JSON) until interrupted.
    #[command(after_help = "Example:\n  berth events | jq -c 'select(.event == \"pane.state\")'")]
    Events,
    /// Print a completion script for a shell.
    #[command(
        after_help = "Examples:\n  berth completions bash > ~/.local/share/bash-completion/completions/berth\n  berth completions zsh > ~/.zfunc/_berth\n  berth completions fish > ~/.config/fish/completions/berth.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout.
    #[command(after_help = "Example:\n  berth man | man -l -")]
    Man,
    /// Print the log file's last lines ($XDG_STATE_HOME/berth/berth.log); BERTH_LOG=debug logs more.
    #[command(after_help = "Example:\n  berth logs -f -n 100")]
    Logs {
        /// Keep printing new lines until interrupted.
        #[arg(short, long)]
        follow: bool,
        /// How many lines to print first.
        #[arg(short = 'n', long, default_value_t = 50)]
        lines: usize,
    },
    /// Print a snippet for your shell's rc file that reports the directory (OSC 7) and marks
    /// prompts (OSC 133).
    #[command(
        after_help = "Examples:\n  eval \"$(berth shell-init bash)\"    in ~/.bashrc\n  eval \"$(berth shell-init zsh)\"     in ~/.zshrc\n  berth shell-init fish | source     in ~/.config/fish/config.fish"
    )]
    ShellInit {
        /// The shell.
        shell: crate::shell_init::InitShell,
    },
    /// Show where the window's config file is, print the commented default file, or check a
    /// file for mistakes (one line naming the line and key).
    #[command(
        after_help = "Examples:\n  berth config                         the file's path, and whether it exists\n  berth config --default > ~/.config/berth/config.toml\n  berth config --check                 check the file the window reads\n  berth config --check my.toml         check another file"
    )]
    Config {
        /// Print the default config file, every key commented.
        #[arg(long, conflicts_with = "check")]
        default: bool,
        /// Check a config file (the window's when FILE is left out); exits 1 if it has a
        /// mistake.
        #[arg(long, value_name = "FILE", num_args = 0..=1)]
        check: Option<Option<PathBuf>>,
    },
    /// Serve the Model Context Protocol on stdin/stdout, for an agent to drive Berth (its
    /// tools: status, read_pane, start_task, wait_task, finish_task …). Agents start it
    /// themselves once `berth hook install AGENT` registered it.
    Mcp,
    /// Check the display, GPU, fonts, D-Bus, logind, socket, state and agents; one line each,
    /// with a fix. Exits 1 if the window cannot start.
    Doctor,
    /// Internal: opens the GPU adapter and prints its name (run by `berth doctor` in a child
    /// process, so a driver that crashes or hangs cannot take the doctor with it).
    #[command(name = "__gpu-probe", hide = true)]
    GpuProbe,
}

#[derive(Subcommand, Debug)]
enum HookVerb {
    /// Merge Berth's hooks into an agent's settings (a backup beside it; a second install
    /// changes nothing); with --uninstall, take them out again.
    Install {
        /// claude, codex, opencode or cursor.
        agent: String,
        /// Wire this project's settings instead of your own (e.g. DIR/.claude/settings.json).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Remove Berth's hooks, leaving every other entry as it was.
        #[arg(long)]
        uninstall: bool,
    },
}

#[derive(Subcommand, Debug)]
enum WorkspaceVerb {
    /// Let the agents of a workspace resume on their own after a restart (default: off).
    AutoResume {
        /// The workspace, by name or id.
        workspace: String,
        /// `on` or `off`.
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
    /// Let the agents of a workspace type into its other panes (`berth send`, `berth submit`),
    /// for an orchestrating agent (default: off). Never into a pane that waits on a permission
    /// request, and never an answer to one. Only a person may set it (from a terminal outside
    /// Berth, or a Berth pane a person opened).
    AgentDrive {
        /// The workspace, by name or id.
        workspace: String,
        /// `on` or `off`.
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
}

#[derive(Args, Debug)]
struct NewArgs {
    /// The workspace, by name (created if missing); defaults to the active one.
    #[arg(long)]
    workspace: Option<String>,
    /// The working directory; defaults to the current one.
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// A title for the pane.
    #[arg(long)]
    title: Option<String>,
    /// The command to run; defaults to your shell.
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(Args, Debug)]
struct SplitArgs {
    /// The pane to split.
    pane: String,
    /// Put the new pane to the right.
    #[arg(long, conflicts_with = "down")]
    right: bool,
    /// Put the new pane below.
    #[arg(long)]
    down: bool,
    /// The working directory; defaults to the split pane's.
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// The command to run; defaults to your shell.
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(Args, Debug)]
struct SendArgs {
    /// The pane.
    pane: String,
    /// Press Enter after the text.
    #[arg(long)]
    enter: bool,
    /// Treat the arguments as key names (Enter, C-c, Up, F5 …) instead of text.
    #[arg(long)]
    keys: bool,
    /// The text (joined with spaces), or key names with --keys.
    #[arg(required = true, allow_hyphen_values = true)]
    words: Vec<String>,
}

#[derive(Args, Debug)]
struct ReadArgs {
    /// The pane.
    pane: String,
    /// Print lines whose content_seq is at least SEQ (history included).
    #[arg(long, conflicts_with = "lines")]
    since: Option<u64>,
    /// Print the last N lines of scrollback and screen.
    #[arg(long)]
    lines: Option<usize>,
    /// Keep colours and attributes as escape sequences.
    #[arg(long)]
    ansi: bool,
    /// Print the whole answer as JSON (with next_seq for polling).
    #[arg(long)]
    json: bool,
}

const SUBMIT_HELP: &str = "\
The prompt goes as one bracketed paste (when the program asked for bracketed paste; a plain
shell without it gets the text with line ends as Enter), then Enter as a separate write after
the agent's settle delay (claude, codex, cursor, opencode: 200 ms; other programs: none).
Where the agent's hooks are wired (a hook event came from the pane since its program started),
Berth waits up to 3 s for its acknowledgement (UserPromptSubmit; cursor: beforeSubmitPrompt)
and presses Enter once more if it does not come. A pane whose program is working or blocked
is refused unless --force. At most 32 KiB.

Prints `confirmed`, `not confirmed (Enter pressed twice)` or `sent (hooks not wired: …)`.

Exit codes:
  0  submitted (confirmed or not: see the output, or `confirmed` with --json)
  1  error: no such pane, not running, mid-turn without --force, too long

Examples:
  berth submit pane_1 'Fix the failing test in src/parse.rs'
  git diff | berth submit pane_1 -
  berth submit pane_1 --file prompt.md && berth wait pane_1 --until idle";

const WAIT_HELP: &str = "\
--until idle ends when the pane is not in a turn (idle, or done: a finished turn); done only
after a finished turn (an interrupted one ends idle); blocked when it waits for a permission
or an answer; exited when its process ended. It prints the agent's last message, if any
(--json: the whole answer: lifecycle, learned_from hook|osc133|process|interrupt,
last_message, turn_ms, exit_code).

Exit codes:
  0  reached (the text appeared, or the state)
  1  error
  3  timeout (--timeout; default 30 s with --for, 600 s with --until)
  4  the pane exited (or closed) before reaching the state

Examples:
  berth wait pane_1 --for 'test result' --timeout 120 && berth read pane_1
  berth submit pane_1 'Run the tests' && berth wait pane_1 --until idle --timeout 900";

#[derive(Args, Debug)]
struct SubmitArgs {
    /// The pane.
    pane: String,
    /// The prompt; `-` reads it from standard input.
    #[arg(required_unless_present = "file", conflicts_with = "file", allow_hyphen_values = true)]
    text: Option<String>,
    /// Read the prompt from this file.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Submit even while the pane's program is working or blocked (mid-turn).
    #[arg(long)]
    force: bool,
    /// Print the whole answer as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct WaitArgs {
    /// The pane.
    pane: String,
    /// The text to wait for.
    #[arg(long = "for", required_unless_present = "until", conflicts_with = "until")]
    text: Option<String>,
    /// The lifecycle state to wait for.
    #[arg(long, value_parser = ["idle", "blocked", "done", "exited"])]
    until: Option<String>,
    /// Give up after this many seconds (exit 3); default 30 with --for, 600 with --until.
    #[arg(long)]
    timeout: Option<f64>,
    /// With --until: print the whole answer as JSON.
    #[arg(long)]
    json: bool,
}

/// `berth config`: the path, the default file, or a check.
fn run_config(default: bool, check: Option<Option<PathBuf>>) -> Result<ExitCode> {
    if default {
        out!("{}", crate::config::default_file());
        return Ok(ExitCode::SUCCESS);
    }
    let path = match check.clone().flatten() {
        Some(path) => path,
        None => crate::config::path().ok_or_else(|| {
            anyhow::anyhow!("no config location: set HOME, XDG_CONFIG_HOME or BERTH_CONFIG")
        })?,
    };
    if check.is_none() {
        let state = if path.exists() { "exists" } else { "does not exist; the defaults apply" };
        outln!("{} ({state})", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    if check.as_ref().is_some_and(Option::is_some) && !path.exists() {
        anyhow::bail!("{} does not exist", path.display());
    }
    match crate::config::load(&path) {
        Ok(_) => {
            outln!("{}: ok", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("berth: {e} ({})", path.display());
            Ok(ExitCode::from(1))
        }
    }
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let socket_given = cli.socket.clone();
    if let Some(path) = cli.socket {
        let path = absolute(Some(path))?.unwrap_or_default();
        // The only place SOCKET is set, before any verb reads it.
        let _ = SOCKET.set(path);
    }
    let Some(verb) = cli.command else {
        crate::logs::init();
        return crate::window::open(socket().to_path_buf(), false);
    };
    match verb {
        Verb::Server { move_aside_future } => run_server(move_aside_future),
        Verb::Attach { add, remove, list, .. } if add.is_some() || remove.is_some() || list => {
            window_servers(add, remove, socket_given)
        }
        Verb::Attach { remote: None, .. } => {
            crate::logs::init();
            crate::window::open(socket().to_path_buf(), true)
        }
        Verb::Attach { remote: Some(remote), .. } => {
            crate::logs::init();
            crate::window::attach_ssh(&remote)
        }
        Verb::ServerInfo { socket_path: true } => {
            outln!("{}", socket().display());
            Ok(ExitCode::SUCCESS)
        }
        Verb::ServerInfo { socket_path: false } => {
            match connect()?.execute(Command::ServerInfo)? {
                Reply::ServerInfo(info) => {
                    outln!("version {}", info.version);
                    outln!("pid {}", info.pid);
                    outln!("socket {}", info.socket.display());
                    outln!("started_at {}", info.started_at);
                }
                other => return Err(unexpected(&other)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Verb::Completions { shell } => {
            let mut command = Cli::command();
            // Rendered first: clap_complete panics on a write error (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "berth", &mut script);
            crate::out::stdout().write_all(&script)?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Man => {
            clap_mangen::Man::new(Cli::command()).render(&mut crate::out::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Logs { follow, lines } => crate::logs::print(lines, follow),
        Verb::ShellInit { shell } => {
            out!("{}", crate::shell_init::snippet(shell));
            Ok(ExitCode::SUCCESS)
        }
        Verb::Config { default, check } => run_config(default, check),
        Verb::Doctor => crate::doctor::run(socket()),
        Verb::Mcp => crate::mcp::run(socket()),
        Verb::GpuProbe => Ok(crate::doctor::gpu_probe()),
        Verb::Save => {
            let saved = connect()?.save()?;
            outln!(
                "saved {} panes ({} tails written) to {}",
                saved.panes,
                saved.tails,
                saved.path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Verb::Screenshot { png, tab } => {
            let path = absolute(Some(png))?.unwrap_or_default();
            let tab = tab.as_deref().map(TabId::parse).transpose().map_err(CommandError::from)?;
            let shot = connect()?.screenshot(tab.map(|t| t.to_string()), path)?;
            outln!("{}", shot.path.display());
            Ok(ExitCode::SUCCESS)
        }
        Verb::Resume { pane, dry_run: true } => resume_dry_run(&pane),
        Verb::Resume { pane, dry_run: false } => {
            let pane = pane_id(&pane)?;
            match connect()?.execute(Command::PaneResume { pane })? {
                Reply::Resumed { state, .. } => outln!("{}", state.as_str()),
                other => return Err(unexpected(&other)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Verb::ReportSession { agent, session, pane } => {
            let explicit_pane = pane.is_some();
            let pane = pane
                .or_else(|| std::env::var("BERTH_PANE").ok().filter(|p| !p.is_empty()))
                .context("no pane: run this inside a Berth pane, or give --pane")?;
            let cmd = Command::SessionReport {
                pane: pane_id(&pane)?,
                kind: agent_kind(&agent)?,
                session_id: session,
                resume_argv: None,
                model: None,
                explicit_pane,
            };
            connect()?.execute(cmd)?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Notify { pane, title, body } => {
            let cmd = Command::Notify {
                pane: pane.as_deref().map(pane_id).transpose()?,
                title,
                body: body.unwrap_or_default(),
                source: "cli".into(),
            };
            match connect()?.execute(cmd)? {
                Reply::Notified { id } => outln!("{id}"),
                other => return Err(unexpected(&other)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Verb::Notifications { json: as_json, unread, mark_read, pane } => {
            notifications(as_json, unread, mark_read, pane)
        }
        Verb::Hook { install: Some(HookVerb::Install { agent, project, uninstall }), .. } => {
            let project = absolute(project)?;
            let code = crate::hook_install::run(&agent, project.as_deref(), uninstall)?;
            // The MCP server (`berth mcp`) goes with the hooks, in the agent's own config.
            crate::mcp_install::run(&agent, project.as_deref(), uninstall)?;
            Ok(code)
        }
        Verb::Hook { agent, payload, print_config, wait, .. } => {
            Ok(hook(agent.as_deref().unwrap_or_default(), payload, print_config, wait))
        }
        Verb::Decide { pane, answer, message, id } => {
            crate::decide::decide(socket(), &pane, &answer, message, id.as_deref())
        }
        Verb::Decisions { json } => crate::decide::list(socket(), json),
        Verb::Workspace(WorkspaceVerb::AutoResume { workspace, state }) => {
            let mut client = connect()?;
            let workspace = resolve_workspace(&mut client, &workspace)?;
            client
                .execute(Command::WorkspaceSetAutoResume { workspace, enabled: state == "on" })?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Workspace(WorkspaceVerb::AgentDrive { workspace, state }) => {
            let mut client = connect()?;
            let workspace = resolve_workspace(&mut client, &workspace)?;
            client
                .execute(Command::WorkspaceSetAgentDrive { workspace, enabled: state == "on" })?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Ls { json } => ls(json),
        Verb::New(args) => new(args),
        Verb::Split(args) => split(args),
        Verb::Send(args) => send(args),
        Verb::Read(args) => read(args),
        Verb::Search { pane, query, json } => search(&pane, query, json),
        Verb::Submit(args) => submit(args),
        Verb::Wait(args) => wait(args),
        Verb::Task(verb) => crate::task_cli::run(connect()?, verb),
        Verb::Diff(args) => crate::git_cli::diff(connect()?, args),
        Verb::Worktree(verb) => crate::git_cli::worktree(connect()?, verb),
        Verb::Review(args) => crate::git_cli::review(connect()?, args),
        Verb::Close { id } => close(&id),
        Verb::Focus { pane } => {
            let pane = pane_id(&pane)?;
            connect()?.execute(Command::PaneFocus { pane })?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Events => events(),
    }
}

fn connect() -> Result<Client> {
    Ok(Client::connect(socket())?)
}

/// `berth attach --add/--remove/--list`: asks the running window (through its embedded
/// server's socket) to change or list its links to other servers.
fn window_servers(
    add: Option<Option<String>>,
    remove: Option<String>,
    socket_given: Option<PathBuf>,
) -> Result<ExitCode> {
    use berth_server::ui::ServersOp;
    // `--add --socket PATH`: the window is on the default socket, PATH is what it links to.
    let (window, op) = match (add, remove) {
        (Some(Some(address)), _) => (socket().to_path_buf(), ServersOp::Add(address)),
        (Some(None), _) => {
            let Some(path) = socket_given else {
                bail!("--add needs an address (a socket path or ssh://host) or --socket PATH");
            };
            let path = absolute(Some(path))?.unwrap_or_default();
            (berth_server::paths::socket_path(), ServersOp::Add(path.display().to_string()))
        }
        (None, Some(name)) => (socket().to_path_buf(), ServersOp::Remove(name)),
        (None, None) => (socket().to_path_buf(), ServersOp::List),
    };
    if let ServersOp::Add(address) = &op {
        // Checked here too, for an error before any window is asked.
        crate::config::ServerAddress::parse(address).map_err(anyhow::Error::msg)?;
    }
    let listed = Client::connect(&window)?.window_servers(op)?;
    for server in listed.servers {
        let address = server.address.as_deref().unwrap_or("(this window's own)");
        outln!("{}\t{}\t{}", server.name, server.status, address);
    }
    Ok(ExitCode::SUCCESS)
}

/// A pane id from the command line, checked as the server would.
fn pane_id(text: &str) -> Result<PaneId> {
    Ok(PaneId::parse(text).map_err(CommandError::from)?)
}

fn agent_kind(name: &str) -> Result<AgentKind> {
    AgentKind::parse(name).ok_or_else(|| {
        anyhow::anyhow!("unknown agent {name:?} (claude, codex, opencode, cursor, generic)")
    })
}

/// An answer of the wrong shape: a server of another version.
fn unexpected(reply: &Reply) -> anyhow::Error {
    anyhow::anyhow!("the server gave an unexpected answer: {reply:?}")
}

/// The whole state, typed.
fn state(client: &mut Client) -> Result<StateView> {
    match client.execute(Command::WorkspaceList)? {
        Reply::State(state) => Ok(*state),
        other => Err(unexpected(&other)),
    }
}

/// Prints a value as the server's JSON would be printed (keys sorted).
fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let value: Value = serde_json::to_value(value)?;
    outln!("{}", serde_json::to_string_pretty(&value)?);
    Ok(())
}

fn notifications(
    as_json: bool,
    unread: bool,
    mark_read: bool,
    pane: Option<String>,
) -> Result<ExitCode> {
    let mut client = connect()?;
    if mark_read {
        let pane = pane.as_deref().map(pane_id).transpose()?;
        let ids: Vec<NotificationId> = Vec::new();
        match client.execute(Command::NotificationsMarkRead { ids, pane })? {
            Reply::Marked { count } => outln!("marked {count} read"),
            other => return Err(unexpected(&other)),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let list = match client.execute(Command::NotificationsList { unread_only: unread })? {
        Reply::Notifications(list) => list,
        other => return Err(unexpected(&other)),
    };
    if as_json {
        print_json(&serde_json::json!({ "notifications": list }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = crate::out::stdout();
    for n in &list {
        let mark = if n.read_at.is_none() { "*" } else { " " };
        writeln!(
            out,
            "{mark} {}  {:<10} {}  {}  {}",
            n.id,
            n.source,
            n.pane_id.as_deref().unwrap_or("-"),
            n.title,
            n.body.replace('\n', " "),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The most payload bytes `berth hook` reads.
const MAX_HOOK_PAYLOAD: u64 = 1 << 20;

/// `berth hook`: never fails the agent (exit 0), bounded in time (a permission request by its
/// wait).
fn hook(agent: &str, payload: Option<String>, print_config: bool, wait: Option<f64>) -> ExitCode {
    let Some(kind) = berth_engine::agents::AgentKind::parse(agent) else {
        eprintln!("berth hook: unknown agent {agent:?} (claude, codex, opencode, cursor)");
        return ExitCode::SUCCESS;
    };
    if print_config {
        // Standard output is exactly the file's content; what to do with it goes to stderr.
        match berth_server::agents::hooks::hook_config(kind) {
            Some(config) => {
                eprintln!("berth hook: {}: {}", config.path, config.note);
                // Never fails the agent: a closed stdout is ignored here.
                let _ = crate::out::stdout().write_all(config.content.as_bytes());
            }
            None => eprintln!("berth hook: no hook configuration for {agent}"),
        }
        return ExitCode::SUCCESS;
    }
    let started = std::time::Instant::now();
    let deadline = crate::decide::hook_deadline(kind, started);
    let pane = std::env::var("BERTH_PANE");
    let payload = match payload {
        Some(p) => p,
        None => {
            let until = started + crate::decide::PAYLOAD_WAIT;
            let bytes = crate::decide::read_payload(MAX_HOOK_PAYLOAD, until);
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let payload: Value = match serde_json::from_str(&payload) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("berth hook: the payload is not JSON: {e}");
            return crate::decide::fallback(kind, &Value::Null);
        }
    };
    let is_request = berth_server::agents::decide::request_of(kind, &payload).is_some();
    let Ok(pane) = pane else {
        // Not inside a Berth pane (another app sharing the agent's hooks): nothing to tell,
        // and a permission request gets the agent's own fallback (never a grant).
        return if is_request {
            crate::decide::fallback(kind, &payload)
        } else {
            ExitCode::SUCCESS
        };
    };
    let pane = match PaneId::parse(&pane) {
        Ok(pane) => pane,
        Err(e) => {
            eprintln!("berth hook: BERTH_PANE: {}", CommandError::from(e));
            return crate::decide::fallback(kind, &payload);
        }
    };
    if is_request {
        let wait = crate::decide::wait_for(kind, wait);
        return crate::decide::hook_decision(socket(), kind, pane, payload, wait, deadline);
    }
    let result = Client::connect_with_timeout(socket(), Duration::from_millis(800))
        .and_then(|mut c| c.execute(Command::HookEvent { pane, kind, payload }));
    if let Err(e) = result {
        eprintln!("berth hook: {e}");
    }
    ExitCode::SUCCESS
}

/// A workspace id from a name or an id.
fn resolve_workspace(client: &mut Client, name_or_id: &str) -> Result<WorkspaceId> {
    let state = state(client)?;
    let matches: Vec<&WorkspaceId> = state
        .workspaces
        .iter()
        .filter(|w| w.id.as_str() == name_or_id || w.name == name_or_id)
        .map(|w| &w.id)
        .collect();
    match matches.as_slice() {
        [id] => Ok((*id).clone()),
        [] => bail!("no workspace named {name_or_id:?}"),
        _ => bail!("several workspaces are named {name_or_id:?}; use its id"),
    }
}

fn run_server(move_aside_future: bool) -> Result<ExitCode> {
    crate::logs::init();
    let config = ServerConfig { socket_path: socket().to_path_buf(), move_aside_future };
    let server = Server::bind(&config)?;
    server.run_until_signal()?;
    Ok(ExitCode::SUCCESS)
}

fn ls(as_json: bool) -> Result<ExitCode> {
    let state = state(&mut connect()?)?;
    let list = WorkspaceListDto::from(&state);
    if as_json {
        print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = crate::out::stdout();
    for ws in &list.workspaces {
        let active = if list.active_workspace_id.as_deref() == Some(&ws.id) { "*" } else { " " };
        writeln!(out, "{active} {}  {}  {}", ws.id, ws.name, ws.cwd)?;
        for tab in &ws.tabs {
            let active = if ws.active_tab_id.as_deref() == Some(&tab.id) { "*" } else { " " };
            writeln!(
                out,
                "  {active} {}  {}  {}x{}",
                tab.id, tab.title, tab.size.cols, tab.size.rows
            )?;
            for pane in &tab.panes {
                let active = if tab.active_pane_id == pane.id { "*" } else { " " };
                let exit = pane.exit_code.map(|c| format!(" exit={c}")).unwrap_or_default();
                writeln!(
                    out,
                    "    {active} {}  {:<9} {}x{}  {}  {}{exit}",
                    pane.id, pane.state, pane.size.cols, pane.size.rows, pane.title, pane.cwd
                )?;
                if let Some(d) = &pane.pending_decision {
                    let state = if d.answerable { "waits" } else { "can no longer be answered" };
                    writeln!(out, "        decision {} {state}: {}", d.id, d.prompt)?;
                    for line in crate::decide::request_lines(d) {
                        writeln!(out, "          {line}")?;
                    }
                }
                if let Some(plan) = pane.resume.as_ref().filter(|p| p.is_self_reported()) {
                    writeln!(
                        out,
                        "        resume runs `{}` (self-reported by the program, not checked)",
                        plan.command_line()
                    )?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `berth resume --dry-run`: the server's resume plan for a pane, as `ls --json` carries it.
fn resume_dry_run(pane: &str) -> Result<ExitCode> {
    let id = pane_id(pane)?;
    let state = state(&mut connect()?)?;
    let found = state.workspaces.iter().flat_map(|w| &w.tabs).flat_map(|t| &t.panes);
    let Some(info) = found.into_iter().find(|p| p.id == id) else {
        bail!("no pane {pane}");
    };
    let Some(plan) = &info.resume else {
        bail!("pane {pane} is running ({}); there is nothing to resume", info.state.as_str());
    };
    outln!("{}", plan.command_line());
    let source = match plan.source {
        ResumeSource::Adapter => "built by Berth from the agent's session id",
        ResumeSource::Reported => "self-reported by a program in the pane: not checked by Berth",
        ResumeSource::Argv => "the pane's own command",
    };
    eprintln!("berth: would run in {} ({source})", info.cwd);
    Ok(ExitCode::SUCCESS)
}

fn current_dir() -> Option<PathBuf> {
    std::env::current_dir().ok()
}

fn absolute(dir: Option<PathBuf>) -> Result<Option<PathBuf>> {
    Ok(match dir {
        Some(d) if d.is_relative() => Some(std::env::current_dir()?.join(d)),
        other => other,
    })
}

fn new(args: NewArgs) -> Result<ExitCode> {
    let cwd = absolute(args.cwd)?.or_else(current_dir);
    let workspace = match args.workspace {
        Some(name) => WorkspaceSelector::Name(name),
        None => WorkspaceSelector::Active,
    };
    let spawn = SpawnRequest { argv: args.command, cwd, env: Vec::new(), title: args.title };
    match connect()?.execute(Command::PaneSpawn { workspace, spawn })? {
        Reply::Spawned { pane, .. } => outln!("{pane}"),
        other => return Err(unexpected(&other)),
    }
    Ok(ExitCode::SUCCESS)
}

fn split(args: SplitArgs) -> Result<ExitCode> {
    let dir = match (args.right, args.down) {
        (true, false) => SplitDir::Right,
        (false, true) => SplitDir::Down,
        _ => bail!("say where the new pane goes: --right or --down"),
    };
    let pane = pane_id(&args.pane)?;
    let spawn =
        SpawnRequest { argv: args.command, cwd: absolute(args.cwd)?, env: Vec::new(), title: None };
    match connect()?.execute(Command::PaneSplit { pane, dir, spawn })? {
        Reply::Pane { pane } => outln!("{pane}"),
        other => return Err(unexpected(&other)),
    }
    Ok(ExitCode::SUCCESS)
}

fn send(args: SendArgs) -> Result<ExitCode> {
    let pane = pane_id(&args.pane)?;
    let (text, keys) = if args.keys {
        let mut keys = args.words;
        if args.enter {
            keys.push("Enter".into());
        }
        (None, keys)
    } else {
        let keys = if args.enter { vec!["Enter".to_owned()] } else { Vec::new() };
        (Some(args.words.join(" ")), keys)
    };
    connect()?.execute(Command::PaneSend { pane, text, keys })?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a pane's text, typed.
fn read_pane(
    client: &mut Client,
    pane: &PaneId,
    spec: ReadSpec,
) -> Result<berth_server::view::ReadView> {
    match client.execute(Command::PaneRead { pane: pane.clone(), spec })? {
        Reply::Read(read) => Ok(read),
        other => Err(unexpected(&other)),
    }
}

fn read(args: ReadArgs) -> Result<ExitCode> {
    let pane = pane_id(&args.pane)?;
    let spec = ReadSpec { since: args.since, last: args.lines, ansi: args.ansi };
    let result = read_pane(&mut connect()?, &pane, spec)?;
    if args.json {
        print_json(&ReadDto::from(&result))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = crate::out::stdout();
    for line in &result.lines {
        writeln!(out, "{line}")?;
    }
    if result.truncated {
        eprintln!("berth: some lines before {} were already gone", result.oldest_seq);
    }
    Ok(ExitCode::SUCCESS)
}

/// `berth search`: every match in the pane (`pane.search`), oldest first.
fn search(pane: &str, query: String, json: bool) -> Result<ExitCode> {
    use berth_server::pane_search::SearchRequest;
    let pane = pane_id(pane)?;
    let request = SearchRequest {
        pane_id: pane.to_string(),
        query,
        jump: None,
        offset: 0,
        covered: 0,
        count: true,
        all: true,
    };
    let reply = connect()?.search(request)?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&reply)?);
    } else {
        let mut out = crate::out::stdout();
        for m in &reply.matches {
            writeln!(out, "{}:{}-{}:{}", m.start.seq, m.start.col, m.end.seq, m.end.col)?;
        }
        if reply.more || reply.count.is_some_and(|c| c > reply.matches.len()) {
            eprintln!("berth: more matches than the {} printed", reply.matches.len());
        }
    }
    Ok(if reply.matches.is_empty() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// `berth submit`: the prompt from the argument, a file or standard input.
fn submit(args: SubmitArgs) -> Result<ExitCode> {
    use berth_engine::agents::submit::MAX_PROMPT_BYTES;
    use std::io::Read;
    let pane = pane_id(&args.pane)?;
    let text = match (args.text, args.file) {
        (Some(text), None) if text != "-" => text,
        (Some(_), None) => {
            let mut bytes = Vec::new();
            std::io::stdin().take(MAX_PROMPT_BYTES as u64 + 1).read_to_end(&mut bytes)?;
            prompt_text(bytes, "standard input")?
        }
        (_, Some(file)) => {
            let opened = std::fs::File::open(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let mut bytes = Vec::new();
            opened.take(MAX_PROMPT_BYTES as u64 + 1).read_to_end(&mut bytes)?;
            prompt_text(bytes, &file.display().to_string())?
        }
        (None, None) => bail!("give the prompt: TEXT, - (standard input) or --file FILE"),
    };
    let reply = connect()?.submit(pane, text, args.force)?;
    if args.json {
        print_json(&reply)?;
        if reply.joined.is_some() {
            return Ok(ExitCode::FAILURE);
        }
    } else if let Some(got) = &reply.joined {
        eprintln!(
            "berth submit: the agent received the prompt joined to text already in its input: \
             {:?}",
            got
        );
        return Ok(ExitCode::FAILURE);
    } else if !reply.awaited_ack {
        outln!("sent (hooks not wired: nothing confirms it)");
    } else if reply.confirmed {
        outln!("confirmed{}", if reply.enter_retried { " (Enter pressed twice)" } else { "" });
    } else {
        outln!("not confirmed (Enter pressed twice)");
    }
    Ok(ExitCode::SUCCESS)
}

/// A prompt read from a file or standard input: UTF-8, within the limit.
fn prompt_text(bytes: Vec<u8>, from: &str) -> Result<String> {
    use berth_engine::agents::submit::MAX_PROMPT_BYTES;
    if bytes.len() > MAX_PROMPT_BYTES {
        bail!("the prompt in {from} is longer than {MAX_PROMPT_BYTES} bytes (32 KiB), the most that can be submitted");
    }
    String::from_utf8(bytes).with_context(|| format!("the prompt in {from} is not UTF-8"))
}

/// The exit code of a wait that timed out.
const EXIT_TIMEOUT: u8 = 3;
/// The exit code of a wait whose pane exited first.
const EXIT_PANE_EXITED: u8 = 4;

fn wait(args: WaitArgs) -> Result<ExitCode> {
    let default = if args.until.is_some() { 600.0 } else { 30.0 };
    let timeout = args.timeout.unwrap_or(default);
    if !(timeout.is_finite() && timeout >= 0.0) {
        bail!("--timeout must be a number of seconds");
    }
    let pane = pane_id(&args.pane)?;
    let limit = Duration::from_secs_f64(timeout.min(1e6));
    if let Some(until) = &args.until {
        let until = WaitUntil::parse(until).context("--until: idle, blocked, done or exited")?;
        return wait_until(pane, until, limit, args.json);
    }
    let text = args.text.unwrap_or_default();
    let deadline = Instant::now() + limit;
    let mut client = connect()?;
    let spec = ReadSpec { since: None, last: Some(500), ansi: false };
    loop {
        // The screen and the recent scrollback: text that scrolled off just now still counts.
        let read = read_pane(&mut client, &pane, spec)?;
        let found = read.lines.iter().any(|l| l.contains(&text));
        if found {
            return Ok(ExitCode::SUCCESS);
        }
        if Instant::now() >= deadline {
            eprintln!("berth: {text:?} did not appear in {} within {timeout}s", args.pane);
            return Ok(ExitCode::from(EXIT_TIMEOUT));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `berth wait --until`: the server answers when the state is reached.
fn wait_until(pane: PaneId, until: WaitUntil, limit: Duration, json: bool) -> Result<ExitCode> {
    let reply = match connect()?.wait_until(pane.clone(), until, Some(limit)) {
        Ok(reply) => reply,
        Err(e) if e.code() == Some(CommandError::Timeout(String::new()).code()) => {
            eprintln!("berth: {e}");
            return Ok(ExitCode::from(EXIT_TIMEOUT));
        }
        Err(e) => return Err(e.into()),
    };
    if json {
        print_json(&reply)?;
    } else if let Some(message) = &reply.last_message {
        outln!("{message}");
    }
    if !reply.reached {
        let code = reply.exit_code.map(|c| format!(" (exit code {c})")).unwrap_or_default();
        eprintln!("berth: pane {pane} exited{code} before it was {}", until.as_str());
        return Ok(ExitCode::from(EXIT_PANE_EXITED));
    }
    Ok(ExitCode::SUCCESS)
}

fn close(id: &str) -> Result<ExitCode> {
    let checked = |e| anyhow::Error::from(CommandError::from(e));
    let cmd = if id.starts_with(WorkspaceId::PREFIX) {
        Command::WorkspaceClose { workspace: WorkspaceId::parse(id).map_err(checked)? }
    } else if id.starts_with(TabId::PREFIX) {
        Command::TabClose { tab: TabId::parse(id).map_err(checked)? }
    } else if id.starts_with(PaneId::PREFIX) {
        Command::PaneClose { pane: PaneId::parse(id).map_err(checked)? }
    } else {
        bail!("{id:?} is not a workspace, tab or pane id (ws_…, tab_…, pane_…)");
    };
    connect()?.execute(cmd)?;
    Ok(ExitCode::SUCCESS)
}

fn events() -> Result<ExitCode> {
    let mut client = connect()?;
    client.subscribe()?;
    let mut out = crate::out::stdout();
    loop {
        // Printed as the server sent it: events newer than this CLI pass through too.
        let event: Value = client.next_event(None)?;
        writeln!(out, "{event}")?;
        out.flush()?;
    }
}
