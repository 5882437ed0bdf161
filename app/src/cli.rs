//! Command-line verbs: each maps onto one socket method (DESIGN.md §4).
//!
//! Errors print one line on stderr and exit 1; usage errors exit 2 (clap's default).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use berth_server::client::Client;
use berth_server::protocol::{ReadDto, WorkspaceListDto};
use berth_server::{Server, ServerConfig};
use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};

/// Berth: a GPU terminal for coding agents and shells, with an embedded server.
#[derive(Parser, Debug)]
#[command(name = "berth", version, about, arg_required_else_help = false)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Verb>,
}

#[derive(Subcommand, Debug)]
enum Verb {
    /// Run the server headless in the foreground (no window).
    Server {
        /// If the saved state was written by a newer Berth, move it aside and start empty
        /// instead of refusing to start.
        #[arg(long)]
        move_aside_future: bool,
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
    },
    /// Record which agent session runs in a pane (for agents' hooks and scripts).
    ReportSession {
        /// The agent: claude, codex, opencode, cursor or generic.
        #[arg(long)]
        agent: String,
        /// The agent's session id.
        #[arg(long)]
        session: String,
        /// The pane; defaults to $BERTH_PANE.
        #[arg(long, env = "BERTH_PANE")]
        pane: String,
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
    /// Always exits 0 and returns within a second, so it never fails the agent.
    Hook {
        /// claude, codex, opencode or cursor.
        agent: String,
        /// The payload; read from stdin when absent (codex passes it as an argument).
        payload: Option<String>,
        /// Print the snippet to paste into the agent's settings instead.
        #[arg(long)]
        print_config: bool,
    },
    /// List workspaces, tabs and panes.
    Ls {
        /// Print the full state as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a new pane in a new tab; prints its id.
    New(NewArgs),
    /// Split a pane; the new pane goes right of or below it. Prints its id.
    Split(SplitArgs),
    /// Send text or named keys to a pane.
    Send(SendArgs),
    /// Print a pane's text (the visible screen unless --since or --lines).
    Read(ReadArgs),
    /// Wait until TEXT appears in a pane.
    Wait(WaitArgs),
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
    /// Print events (one JSON object per line) until interrupted.
    Events,
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

#[derive(Args, Debug)]
struct WaitArgs {
    /// The pane.
    pane: String,
    /// The text to wait for.
    #[arg(long = "for")]
    text: String,
    /// Give up after this many seconds (exit 1).
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let Some(verb) = cli.command else {
        return crate::window::run();
    };
    match verb {
        Verb::Server { move_aside_future } => run_server(move_aside_future),
        Verb::Save => {
            let result = connect()?.call("snapshot.save", json!({}))?;
            println!(
                "saved {} panes ({} tails written) to {}",
                result["panes"].as_u64().unwrap_or(0),
                result["tails"].as_u64().unwrap_or(0),
                result["path"].as_str().unwrap_or("?")
            );
            Ok(ExitCode::SUCCESS)
        }
        Verb::Screenshot { png, tab } => {
            let path = absolute(Some(png))?.unwrap_or_default();
            let result =
                connect()?.call("window.screenshot", json!({ "path": path, "tab_id": tab }))?;
            println!("{}", result["path"].as_str().unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Verb::Resume { pane } => {
            let result = connect()?.call("pane.resume", json!({ "pane_id": pane }))?;
            println!("{}", result["state"].as_str().unwrap_or(""));
            Ok(ExitCode::SUCCESS)
        }
        Verb::ReportSession { agent, session, pane } => {
            connect()?.call(
                "session.report",
                json!({ "pane_id": pane, "agent": agent, "session_id": session }),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Notify { pane, title, body } => {
            let result = connect()?.call(
                "notify",
                json!({ "pane_id": pane, "title": title, "body": body.unwrap_or_default() }),
            )?;
            println!("{}", result["notification_id"].as_str().unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Verb::Notifications { json: as_json, unread, mark_read, pane } => {
            notifications(as_json, unread, mark_read, pane)
        }
        Verb::Hook { agent, payload, print_config } => Ok(hook(&agent, payload, print_config)),
        Verb::Workspace(WorkspaceVerb::AutoResume { workspace, state }) => {
            let mut client = connect()?;
            let id = resolve_workspace(&mut client, &workspace)?;
            client.call(
                "workspace.set_auto_resume",
                json!({ "workspace_id": id, "enabled": state == "on" }),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Ls { json } => ls(json),
        Verb::New(args) => new(args),
        Verb::Split(args) => split(args),
        Verb::Send(args) => send(args),
        Verb::Read(args) => read(args),
        Verb::Wait(args) => wait(args),
        Verb::Close { id } => close(&id),
        Verb::Focus { pane } => {
            connect()?.call("pane.focus", json!({ "pane_id": pane }))?;
            Ok(ExitCode::SUCCESS)
        }
        Verb::Events => events(),
    }
}

fn connect() -> Result<Client> {
    Ok(Client::connect_default()?)
}

fn notifications(
    as_json: bool,
    unread: bool,
    mark_read: bool,
    pane: Option<String>,
) -> Result<ExitCode> {
    let mut client = connect()?;
    if mark_read {
        let result = client.call("notifications.mark_read", json!({ "pane_id": pane }))?;
        println!("marked {} read", result["marked"].as_u64().unwrap_or(0));
        return Ok(ExitCode::SUCCESS);
    }
    let value = client.call("notifications.list", json!({ "unread_only": unread }))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    for n in value["notifications"].as_array().into_iter().flatten() {
        let mark = if n["read_at"].is_null() { "*" } else { " " };
        writeln!(
            out,
            "{mark} {}  {:<10} {}  {}  {}",
            n["id"].as_str().unwrap_or(""),
            n["source"].as_str().unwrap_or(""),
            n["pane_id"].as_str().unwrap_or("-"),
            n["title"].as_str().unwrap_or(""),
            n["body"].as_str().unwrap_or("").replace('\n', " "),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The most payload bytes `berth hook` reads.
const MAX_HOOK_PAYLOAD: u64 = 1 << 20;

/// `berth hook`: never fails the agent (exit 0), bounded in time.
fn hook(agent: &str, payload: Option<String>, print_config: bool) -> ExitCode {
    use std::io::Read;
    let Some(kind) = berth_engine::agents::AgentKind::parse(agent) else {
        eprintln!("berth hook: unknown agent {agent:?} (claude, codex, opencode, cursor)");
        return ExitCode::SUCCESS;
    };
    if print_config {
        match berth_server::hooks::print_config(kind) {
            Some(snippet) => println!("{snippet}"),
            None => eprintln!("berth hook: no hook configuration for {agent}"),
        }
        return ExitCode::SUCCESS;
    }
    let Ok(pane) = std::env::var("BERTH_PANE") else {
        // Not inside a Berth pane (another app sharing the agent's hooks): nothing to do.
        return ExitCode::SUCCESS;
    };
    let payload = match payload {
        Some(p) => p,
        None => {
            let mut text = String::new();
            let _ = std::io::stdin().take(MAX_HOOK_PAYLOAD).read_to_string(&mut text);
            text
        }
    };
    let payload: Value = match serde_json::from_str(&payload) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("berth hook: the payload is not JSON: {e}");
            return ExitCode::SUCCESS;
        }
    };
    let socket = berth_server::paths::socket_path();
    let result =
        Client::connect_with_timeout(&socket, Duration::from_millis(800)).and_then(|mut c| {
            c.call(
                "hook.event",
                json!({ "pane_id": pane, "agent": kind.as_str(), "payload": payload }),
            )
        });
    if let Err(e) = result {
        eprintln!("berth hook: {e}");
    }
    ExitCode::SUCCESS
}

/// A workspace id from a name or an id.
fn resolve_workspace(client: &mut Client, name_or_id: &str) -> Result<String> {
    let list: WorkspaceListDto = serde_json::from_value(client.call("workspace.list", json!({}))?)?;
    let matches: Vec<&str> = list
        .workspaces
        .iter()
        .filter(|w| w.id == name_or_id || w.name == name_or_id)
        .map(|w| w.id.as_str())
        .collect();
    match matches.as_slice() {
        [id] => Ok((*id).to_owned()),
        [] => bail!("no workspace named {name_or_id:?}"),
        _ => bail!("several workspaces are named {name_or_id:?}; use its id"),
    }
}

fn run_server(move_aside_future: bool) -> Result<ExitCode> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BERTH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = ServerConfig { move_aside_future, ..ServerConfig::from_env() };
    let server = Server::bind(&config)?;
    server.run_until_signal()?;
    Ok(ExitCode::SUCCESS)
}

fn ls(as_json: bool) -> Result<ExitCode> {
    let value = connect()?.call("workspace.list", json!({}))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let list: WorkspaceListDto = serde_json::from_value(value).context("reading workspace.list")?;
    let mut out = std::io::stdout().lock();
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
            }
        }
    }
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
    let mut params = json!({ "argv": args.command, "cwd": cwd });
    if let Some(ws) = args.workspace {
        params["workspace"] = json!(ws);
    }
    if let Some(title) = args.title {
        params["title"] = json!(title);
    }
    let result = connect()?.call("pane.spawn", params)?;
    println!("{}", result["pane_id"].as_str().unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

fn split(args: SplitArgs) -> Result<ExitCode> {
    let dir = match (args.right, args.down) {
        (true, false) => "right",
        (false, true) => "down",
        _ => bail!("say where the new pane goes: --right or --down"),
    };
    let params = json!({
        "pane_id": args.pane,
        "dir": dir,
        "argv": args.command,
        "cwd": absolute(args.cwd)?,
    });
    let result = connect()?.call("pane.split", params)?;
    println!("{}", result["pane_id"].as_str().unwrap_or_default());
    Ok(ExitCode::SUCCESS)
}

fn send(args: SendArgs) -> Result<ExitCode> {
    let mut params = json!({ "pane_id": args.pane });
    if args.keys {
        let mut keys = args.words;
        if args.enter {
            keys.push("Enter".into());
        }
        params["keys"] = json!(keys);
    } else {
        params["text"] = json!(args.words.join(" "));
        if args.enter {
            params["keys"] = json!(["Enter"]);
        }
    }
    connect()?.call("pane.send", params)?;
    Ok(ExitCode::SUCCESS)
}

fn read(args: ReadArgs) -> Result<ExitCode> {
    let params = json!({
        "pane_id": args.pane,
        "since": args.since,
        "last": args.lines,
        "ansi": args.ansi,
    });
    let value = connect()?.call("pane.read", params)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    let result: ReadDto = serde_json::from_value(value).context("reading pane.read")?;
    let mut out = std::io::stdout().lock();
    for line in &result.lines {
        writeln!(out, "{line}")?;
    }
    if result.truncated {
        eprintln!("berth: some lines before {} were already gone", result.oldest_seq);
    }
    Ok(ExitCode::SUCCESS)
}

fn wait(args: WaitArgs) -> Result<ExitCode> {
    if !(args.timeout.is_finite() && args.timeout >= 0.0) {
        bail!("--timeout must be a number of seconds");
    }
    let deadline = Instant::now() + Duration::from_secs_f64(args.timeout.min(1e6));
    let mut client = connect()?;
    loop {
        // The screen and the recent scrollback: text that scrolled off just now still counts.
        let value = client.call("pane.read", json!({ "pane_id": args.pane, "last": 500 }))?;
        let found = value["lines"].as_array().is_some_and(|lines| {
            lines.iter().any(|l| l.as_str().is_some_and(|l| l.contains(&args.text)))
        });
        if found {
            return Ok(ExitCode::SUCCESS);
        }
        if Instant::now() >= deadline {
            eprintln!(
                "berth: {:?} did not appear in {} within {}s",
                args.text, args.pane, args.timeout
            );
            return Ok(ExitCode::from(1));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn close(id: &str) -> Result<ExitCode> {
    let (method, key) = if id.starts_with("ws_") {
        ("workspace.close", "workspace_id")
    } else if id.starts_with("tab_") {
        ("tab.close", "tab_id")
    } else if id.starts_with("pane_") {
        ("pane.close", "pane_id")
    } else {
        bail!("{id:?} is not a workspace, tab or pane id (ws_…, tab_…, pane_…)");
    };
    connect()?.call(method, json!({ key: id }))?;
    Ok(ExitCode::SUCCESS)
}

fn events() -> Result<ExitCode> {
    let mut client = connect()?;
    client.subscribe()?;
    let mut out = std::io::stdout().lock();
    loop {
        let event: Value = client.next_event(None)?;
        writeln!(out, "{event}")?;
        out.flush()?;
    }
}
