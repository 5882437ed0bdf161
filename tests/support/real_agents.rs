//! The harness of the suites with the real agent CLIs (`tests/e2e_agents.rs`,
//! `tests/e2e_turns_*.rs`): where `scripts/test-agents` installed them, a private home seeded
//! past each agent's login and trust screens, the environment every agent gets, a `berth` in
//! front of the real one that records the hook payloads, and a Berth server for the panes.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{berth_bin, json, poll, TestServer, Value};

/// How long an agent may take to draw its first screen (opencode takes about 10 s on a busy
/// machine the first time).
pub const START: Duration = Duration::from_secs(60);
/// How long a screen must stay unchanged to count as drawn.
pub const SETTLE: Duration = Duration::from_millis(1500);
pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;

/// The npm prefix holding the agents, or `None` (the case is skipped) when the suite was not
/// asked for.
pub fn npm_bin(case: &str) -> Option<PathBuf> {
    let Some(prefix) = std::env::var_os("BERTH_AGENTS_NPM") else {
        eprintln!("{case}: skipped: BERTH_AGENTS_NPM is not set (scripts/test-agents sets it)");
        return None;
    };
    let bin = PathBuf::from(prefix).join("node_modules").join(".bin");
    for agent in ["claude", "codex", "opencode"] {
        assert!(
            bin.join(agent).exists(),
            "{case}: {} is missing: run scripts/test-agents to install the agents",
            bin.join(agent).display()
        );
    }
    Some(bin)
}

/// Where `scripts/test-agents` installed `@opencode-ai/plugin`, to seed opencode's config dir.
pub fn opencode_config_seed() -> PathBuf {
    let prefix = std::env::var_os("BERTH_AGENTS_NPM").expect("BERTH_AGENTS_NPM");
    PathBuf::from(prefix).join("opencode-config")
}

/// A named mask: the lines it hides from the comparison of first screens.
pub type Mask = (&'static str, fn(&str) -> bool);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Opencode,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Opencode => "opencode",
        }
    }

    /// Text that shows once the agent's first screen is up.
    pub fn ready(self) -> &'static str {
        match self {
            Agent::Claude => "for shortcuts",
            Agent::Codex => "OpenAI Codex",
            Agent::Opencode => "Ask anything",
        }
    }

    /// Lines of the first screen that differ between runs for reasons that are not the
    /// terminal's: each has a name, printed where it masks a line.
    pub fn masks(self) -> &'static [Mask] {
        match self {
            Agent::Claude => &[
                // Under tmux only: claude's advice to turn tmux's focus-events on.
                ("claude-tmux-focus-events", |l| l.contains("tmux focus-events")),
            ],
            Agent::Codex => &[
                // A random "Tip:" line under the banner.
                ("codex-tip", |l| l.trim_start().starts_with("Tip:")),
            ],
            Agent::Opencode => &[
                // A random tip under the prompt box.
                ("opencode-tip", |l| l.contains("● Tip")),
                // A random example prompt in the prompt box.
                ("opencode-example-prompt", |l| l.contains("Ask anything…")),
            ],
        }
    }

    /// Seeds a private home so that the agent starts without a login screen or a trust
    /// dialog, with Berth's hook settings when `hooks`.
    pub fn seed_home(self, home: &Path, work: &Path, hooks: Option<&str>) {
        let _ = fs::remove_dir_all(home);
        fs::create_dir_all(home).unwrap();
        let work = work.display();
        match self {
            Agent::Claude => {
                fs::write(
                    home.join(".claude.json"),
                    format!(
                        r#"{{"hasCompletedOnboarding":true,"theme":"dark","projects":{{"{work}":{{"hasTrustDialogAccepted":true,"hasCompletedProjectOnboarding":true}}}}}}"#
                    ),
                )
                .unwrap();
                if let Some(settings) = hooks {
                    fs::create_dir_all(home.join(".claude")).unwrap();
                    fs::write(home.join(".claude/settings.json"), settings).unwrap();
                }
            }
            Agent::Codex => {
                let dir = home.join(".codex");
                fs::create_dir_all(&dir).unwrap();
                // An API key that is never checked (no network) takes the place of a login.
                fs::write(
                    dir.join("auth.json"),
                    r#"{"auth_mode":"apikey","OPENAI_API_KEY":"sk-berth-test-not-a-key"}"#,
                )
                .unwrap();
                // Codex would start a background app-server daemon that outlives the pane
                // and whose control socket under /tmp is shared by every codex of the user:
                // the cases run codex in-process instead (`daemon_auto_start = false`).
                let config = format!(
                    "forced_login_method = \"api\"\ncheck_for_update_on_startup = false\n\n\
                     [features]\ndaemon_auto_start = false\n\n\
                     [projects.\"{work}\"]\ntrust_level = \"trusted\"\n\n{}",
                    hooks.unwrap_or_default()
                );
                fs::write(dir.join("config.toml"), config).unwrap();
            }
            Agent::Opencode => {
                if let Some(plugin) = hooks {
                    let dir = home.join(".config/opencode");
                    fs::create_dir_all(dir.join("plugin")).unwrap();
                    fs::write(dir.join("plugin/berth.js"), plugin).unwrap();
                    // With a plugin in its config dir opencode installs its plugin SDK there
                    // with npm at start, which hangs offline: the script installed it already.
                    let seed = opencode_config_seed();
                    for name in ["package.json", "package-lock.json", "node_modules"] {
                        let status = Command::new("cp")
                            .arg("-a")
                            .arg(seed.join(name))
                            .arg(&dir)
                            .status()
                            .unwrap();
                        assert!(status.success(), "seeding opencode's config dir from {seed:?}");
                    }
                }
            }
        }
    }
}

/// The environment every agent gets, in tmux and in Berth alike.
pub fn agent_env(bin: &Path, home: &Path, tools: &Path) -> Vec<(String, String)> {
    let berth_dir = berth_bin().parent().unwrap().to_path_buf();
    vec![
        ("HOME".into(), home.display().to_string()),
        (
            "PATH".into(),
            format!(
                "{}:{}:{}:/usr/local/bin:/usr/bin:/bin",
                tools.display(),
                bin.display(),
                berth_dir.display()
            ),
        ),
        ("LANG".into(), "C.UTF-8".into()),
        ("XDG_CONFIG_HOME".into(), home.join(".config").display().to_string()),
        ("XDG_DATA_HOME".into(), home.join(".local/share").display().to_string()),
        ("XDG_CACHE_HOME".into(), home.join(".cache").display().to_string()),
        // Keep the agents off the network even where the suite is not network-isolated.
        ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()),
        ("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()),
        ("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into()),
    ]
}

/// A `berth` in front of the real one that appends each hook payload it is given to
/// `hooks.log` (one line: the agent, then the payload), so a case can tell what the agent sent
/// from what Berth made of it.
pub fn hook_recorder(tools: &Path) {
    fs::create_dir_all(tools).unwrap();
    let log = tools.join("hooks.log");
    let script = format!(
        "#!/bin/bash\nif [ \"$1\" = hook ] && [ \"$#\" -eq 2 ]; then\n  payload=$(cat)\n  \
         printf '%s %s\\n' \"$2\" \"$(printf '%s' \"$payload\" | tr -d '\\n')\" >> '{log}'\n  \
         printf '%s' \"$payload\" | '{berth}' \"$@\"\n  exit \"${{PIPESTATUS[1]}}\"\nfi\n\
         if [ \"$1\" = hook ]; then printf '%s %s\\n' \"$2\" \"$3\" >> '{log}'; fi\n\
         exec '{berth}' \"$@\"\n",
        log = log.display(),
        berth = berth_bin().display()
    );
    fs::write(tools.join("berth"), script).unwrap();
    fs::set_permissions(tools.join("berth"), fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn hook_log(tools: &Path) -> String {
    fs::read_to_string(tools.join("hooks.log")).unwrap_or_default()
}

/// Polls `capture` until `ready` shows and the screen stays the same for [`SETTLE`].
pub fn settled(what: &str, ready: &str, mut capture: impl FnMut() -> Vec<String>) -> Vec<String> {
    let deadline = Instant::now() + START;
    let mut last: Option<(Vec<String>, Instant)> = None;
    loop {
        let now = Instant::now();
        let screen = capture();
        let has_ready = screen.iter().any(|l| l.contains(ready));
        match &last {
            Some((prev, since)) if has_ready && *prev == screen => {
                if now.duration_since(*since) >= SETTLE {
                    return screen;
                }
            }
            _ => last = Some((screen.clone(), now)),
        }
        assert!(
            now < deadline,
            "{what}: no settled screen with {ready:?} within {START:?}; last:\n{}",
            screen.join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The visible screen of a Berth pane.
pub fn berth_screen(server: &TestServer, pane: &str) -> Vec<String> {
    let read = server.call("pane.read", json!({ "pane_id": pane }));
    read["lines"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

pub fn pane_size(server: &TestServer, pane: &str) -> (u64, u64) {
    let entry = server.pane(pane).unwrap_or_else(|| panic!("pane {pane} is gone"));
    (entry["size"]["cols"].as_u64().unwrap(), entry["size"]["rows"].as_u64().unwrap())
}

/// A Berth server whose panes get the agents' environment, and a work dir outside any git
/// checkout.
pub struct World {
    pub server: TestServer,
    pub work: PathBuf,
    pub tools: PathBuf,
}

impl World {
    pub fn new(bin: &Path, agent: Agent, hooks: bool) -> World {
        World::new_with(bin, agent, hooks, &[])
    }

    /// [`World::new`] with more variables in the environment of the server and its panes (a
    /// model server's address, an API key).
    pub fn new_with(bin: &Path, agent: Agent, hooks: bool, env: &[(&str, &str)]) -> World {
        let mut server = TestServer::prepare();
        let work = server.root.path().join("work");
        let tools = server.root.path().join("tools");
        fs::create_dir_all(&work).unwrap();
        hook_recorder(&tools);
        let settings = hooks.then(|| print_config(agent));
        agent.seed_home(&server.home, &work, settings.as_deref());
        for (key, value) in agent_env(bin, &server.home, &tools) {
            server = server.with_env(&key, &value);
        }
        for (key, value) in env {
            server = server.with_env(key, value);
        }
        let server = server.launch();
        World { server, work, tools }
    }

    /// A new pane of 120×40 running `argv` in the work dir.
    pub fn pane(&self, argv: &[&str]) -> String {
        let mut args = vec!["new", "--cwd", self.work.to_str().unwrap(), "--"];
        args.extend_from_slice(argv);
        let pane = self.server.berth_ok(&args);
        self.server.call("pane.resize", json!({ "pane_id": pane, "cols": COLS, "rows": ROWS }));
        pane
    }
}

/// What `berth hook --print-config AGENT` prints on standard output.
pub fn print_config(agent: Agent) -> String {
    let out = Command::new(berth_bin())
        .args(["hook", agent.name(), "--print-config"])
        .output()
        .expect("berth hook --print-config");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// Sends `text`, then Enter as a separate write later, as a person types (claude joins an
/// Enter that comes with a paste to the paste).
pub fn submit(server: &TestServer, pane: &str, text: &str) {
    server.berth_ok(&["send", pane, text]);
    std::thread::sleep(Duration::from_millis(400));
    server.berth_ok(&["send", pane, "--keys", "Enter"]);
}

pub fn wait_session(world: &World, pane: &str, what: &str) -> String {
    poll(START, what, || {
        let entry = world.server.pane(pane)?;
        entry["agent"]["session_id"].as_str().map(str::to_owned)
    })
}

/// A prompt of exactly `len` bytes, many lines, starting with `marker` (the suites' 32 KiB
/// prompt).
#[allow(dead_code)] // each suite includes the support module; not every suite sends one
pub fn long_prompt(marker: &str, len: usize) -> String {
    let mut text = format!("{marker} a long prompt follows.\n");
    let mut line = 0;
    while text.len() < len {
        line += 1;
        text.push_str(&format!("line {line:05}: the quick brown fox jumps over the lazy dog\n"));
    }
    text.truncate(len - 1);
    text.push('.');
    text
}

/// The arguments of `berth task start --json` for a real `agent` working `objective` in
/// `repo`, ready within `ready_secs`.
#[allow(dead_code)] // each suite includes the support module; not every suite starts tasks
pub fn task_start_args(repo: &Path, agent: &str, objective: &str, ready_secs: u32) -> Vec<String> {
    let repo = repo.to_str().expect("a UTF-8 repository path");
    let args =
        ["task", "start", "--json", "--repo", repo, "--agent", agent, "--objective", objective];
    let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    args.extend(["--ready-timeout".to_owned(), ready_secs.to_string()]);
    args
}

/// `berth task start --json` for a real `agent` (see [`task_start_args`]): the task it prints.
#[allow(dead_code)] // each suite includes the support module; not every suite starts tasks
pub fn start_task(
    server: &TestServer,
    repo: &Path,
    agent: &str,
    objective: &str,
    ready_secs: u32,
) -> Value {
    let args = task_start_args(repo, agent, objective, ready_secs);
    let out = server.berth_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}
