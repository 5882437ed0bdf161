//! `berth doctor`: checks what Berth needs from the machine and explains each finding on one
//! line with a fix.
//!
//! Owns only the checks and their wording. It reads and probes; it must not create, change or
//! repair anything (no dirs made, no files moved, no settings written).

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use berth_engine::agents::AgentKind;

/// How long the GPU adapter probe may take before it counts as missing.
const ADAPTER_TIMEOUT: Duration = Duration::from_secs(15);

/// How bad a finding is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    /// Fine.
    Ok,
    /// Something is missing, but Berth works without it.
    Warn,
    /// The window cannot work (the headless server may still).
    Blocker,
}

/// One check's finding.
struct Finding {
    level: Level,
    name: &'static str,
    text: String,
}

impl Finding {
    fn new(level: Level, name: &'static str, text: impl Into<String>) -> Finding {
        Finding { level, name, text: text.into() }
    }
}

/// Runs every check, prints one line each, and exits 1 if anything blocks use.
pub fn run(socket: &Path) -> Result<ExitCode> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut findings = vec![display(&var)];
    findings.extend(gpu_and_fonts());
    findings.extend(fallback_fonts());
    findings.push(session_bus(&var));
    findings.push(logind(&var));
    findings.push(socket_dir(socket));
    findings.extend(state_dir());
    findings.push(config_file());
    findings.extend(agents(&var));
    for f in &findings {
        let tag = match f.level {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Blocker => "FAIL",
        };
        outln!("{tag}  {:<14} {}", f.name, f.text);
    }
    if findings.iter().any(|f| f.level == Level::Blocker) {
        outln!("berth doctor: the window cannot start here; the headless server (`berth server`) still works");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn display(var: &impl Fn(&str) -> Option<OsString>) -> Finding {
    use crate::window::backend::{choose, NoBackend};
    match choose(var) {
        Ok(choice) => Finding::new(
            Level::Ok,
            "display",
            format!(
                "the window runs on {} ({}={}; {})",
                choice.backend.name(),
                choice.backend.display_var(),
                choice.display,
                choice.why
            ),
        ),
        Err(NoBackend::NoDisplay) => Finding::new(
            Level::Blocker,
            "display",
            "no display: DISPLAY and WAYLAND_DISPLAY are unset; fix: run inside a desktop session (or Xvfb), or use `berth server` headless",
        ),
        Err(e) => Finding::new(Level::Blocker, "display", format!("{e}; fix: unset BERTH_BACKEND or set it to x11 or wayland with its display")),
    }
}

/// `berth __gpu-probe`: opens the offscreen renderer (adapter and bundled font) and prints the
/// adapter's name; exit 0 on success, 3 when there is no adapter.
pub fn gpu_probe() -> ExitCode {
    match crate::render::Renderer::offscreen(64, 64, Default::default()) {
        Ok(renderer) => {
            println!("{}", renderer.adapter_info());
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{e}");
            ExitCode::from(3)
        }
    }
}

/// The GPU adapter, through the same offscreen renderer `berth screenshot` uses (which also
/// loads the bundled font). It runs in a child process (`berth __gpu-probe`): a driver that
/// hangs is killed at the deadline, and one that crashes cannot take the doctor with it.
fn gpu_and_fonts() -> Vec<Finding> {
    let outcome = probe_in_child();
    match outcome {
        Ok(Ok(info)) => {
            let software = ["llvmpipe", "lavapipe", "swiftshader", "Cpu"].iter().any(|s| info.contains(s));
            let gpu = if software {
                Finding::new(Level::Ok, "gpu", format!("{info}: software rendering (works, uses the CPU); fix for speed: install your GPU's Vulkan driver"))
            } else {
                Finding::new(Level::Ok, "gpu", info)
            };
            vec![gpu, Finding::new(Level::Ok, "fonts", "the bundled JetBrains Mono loads")]
        }
        Ok(Err(e)) => vec![
            Finding::new(Level::Blocker, "gpu", format!("no GPU adapter: {e}; fix: install a Vulkan driver (mesa-vulkan-drivers gives lavapipe)")),
            Finding::new(Level::Warn, "fonts", "not checked (the font is loaded by the renderer, which needs an adapter)"),
        ],
        Err(problem) => vec![
            Finding::new(Level::Blocker, "gpu", format!("{problem}; fix: check the Vulkan driver (vulkaninfo)")),
            Finding::new(Level::Warn, "fonts", "not checked (the renderer did not start)"),
        ],
    }
}

/// The system fonts for what the bundled font lacks (CJK, colour emoji): which family draws
/// each, or the package that would.
fn fallback_fonts() -> Vec<Finding> {
    use crate::render::fallback::{font_for, system_fonts, FALLBACKS};
    let db = system_fonts();
    FALLBACKS
        .iter()
        .map(|fallback| match font_for(&db, fallback) {
            Some(family) => Finding::new(
                Level::Ok,
                "fonts",
                format!("{} falls back to {family}", fallback.what),
            ),
            None => Finding::new(
                Level::Warn,
                "fonts",
                format!(
                    "no installed font draws {} ({}): it shows as empty boxes; fix: apt-get install {}",
                    fallback.what, fallback.probe, fallback.package
                ),
            ),
        })
        .collect()
}

/// Runs `berth __gpu-probe`: `Ok(Ok(adapter))`, `Ok(Err(no adapter))`, or `Err(what went
/// wrong with the probe itself)`.
fn probe_in_child() -> Result<Result<String, String>, String> {
    use std::io::Read;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the berth binary: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .arg("__gpu-probe")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run the GPU probe: {e}"))?;
    let deadline = std::time::Instant::now() + ADAPTER_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the adapter probe did not answer within {}s",
                    ADAPTER_TIMEOUT.as_secs()
                ));
            }
        }
    };
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    let line = out.lines().next().unwrap_or("").trim().to_owned();
    match status.code() {
        Some(0) if !line.is_empty() => Ok(Ok(line)),
        Some(3) => Ok(Err(line)),
        _ => Err(format!(
            "the GPU probe failed ({status}){}",
            if line.is_empty() { String::new() } else { format!(": {line}") }
        )),
    }
}

fn session_bus(var: &impl Fn(&str) -> Option<OsString>) -> Finding {
    let Some(address) = var("DBUS_SESSION_BUS_ADDRESS") else {
        return Finding::new(
            Level::Warn,
            "d-bus",
            "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset): no desktop notifications, in-window ones still work; fix: run inside a desktop session or `dbus-run-session`",
        );
    };
    let address = address.to_string_lossy().into_owned();
    match address.split(',').find_map(|p| p.strip_prefix("unix:path=")) {
        Some(path) if !Path::new(path).exists() => Finding::new(
            Level::Warn,
            "d-bus",
            format!("the session bus socket {path} does not exist; fix: restart your session's dbus"),
        ),
        _ => Finding::new(
            Level::Ok,
            "d-bus",
            format!("session bus at {address} (the notification service itself is checked by the server at its first notification; see `berth logs`)"),
        ),
    }
}

fn logind(var: &impl Fn(&str) -> Option<OsString>) -> Finding {
    let system_bus = var("DBUS_SYSTEM_BUS_ADDRESS")
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unix:path=/run/dbus/system_bus_socket".into());
    let socket_ok = system_bus
        .split(',')
        .find_map(|p| p.strip_prefix("unix:path="))
        .is_none_or(|p| Path::new(p).exists());
    if !socket_ok {
        return Finding::new(Level::Warn, "logind", format!("no system bus at {system_bus}: Berth cannot save before suspend or shutdown; it still saves after every change"));
    }
    if Path::new("/run/systemd/seats").exists() {
        Finding::new(Level::Ok, "logind", "systemd-logind is running")
    } else {
        Finding::new(Level::Warn, "logind", "systemd-logind is not running: Berth cannot save before suspend or shutdown; it still saves after every change")
    }
}

/// The socket's directory, checked like the server checks it but without creating it.
fn socket_dir(socket: &Path) -> Finding {
    let dir = socket.parent().unwrap_or(Path::new("."));
    match fs::symlink_metadata(dir) {
        Err(_) => Finding::new(
            Level::Ok,
            "socket dir",
            format!("{} does not exist yet (the server creates it 0700)", dir.display()),
        ),
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => Finding::new(
            Level::Blocker,
            "socket dir",
            format!(
                "{} is not a real directory; fix: remove it and let the server create it",
                dir.display()
            ),
        ),
        Ok(meta) if meta.uid() != my_uid() => Finding::new(
            Level::Blocker,
            "socket dir",
            format!(
                "{} is owned by uid {}, not by you; fix: use another --socket or remove it",
                dir.display(),
                meta.uid()
            ),
        ),
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => Finding::new(
            Level::Blocker,
            "socket dir",
            format!(
                "{} has mode {:o}; fix: chmod 700 {}",
                dir.display(),
                meta.permissions().mode() & 0o777,
                dir.display()
            ),
        ),
        Ok(_) => {
            let live = std::os::unix::net::UnixStream::connect(socket).is_ok();
            let server = if live { "a server is listening" } else { "no server is running" };
            Finding::new(
                Level::Ok,
                "socket dir",
                format!("{} is private (0700); {server} on {}", dir.display(), socket.display()),
            )
        }
    }
}

fn state_dir() -> Vec<Finding> {
    let dir = match berth_server::persist::state_dir_path(|name| std::env::var_os(name)) {
        Ok(dir) => dir,
        Err(e) => {
            return vec![Finding::new(
                Level::Blocker,
                "state dir",
                format!("{e}; fix: set HOME or XDG_STATE_HOME"),
            )]
        }
    };
    let mut findings = Vec::new();
    let snapshot = dir.join("snapshot.json");
    match fs::metadata(&snapshot) {
        Err(_) => findings.push(Finding::new(
            Level::Ok,
            "state",
            format!("no snapshot in {} yet (nothing saved)", dir.display()),
        )),
        Ok(meta) => {
            let version = fs::read(&snapshot)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| v["snapshot_version"].as_u64());
            let age = meta
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .map(|d| format!("{}s ago", d.as_secs()))
                .unwrap_or_else(|| "at an unknown time".into());
            let (level, what) = match version {
                Some(v) => (Level::Ok, format!("version {v}")),
                None => (
                    Level::Warn,
                    "unreadable (the server will set it aside and start empty)".into(),
                ),
            };
            findings.push(Finding::new(
                level,
                "state",
                format!("{}: {what}, {} bytes, saved {age}", snapshot.display(), meta.len()),
            ));
        }
    }
    let corrupt: Vec<PathBuf> = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("snapshot.json.corrupt-"))
        })
        .collect();
    if !corrupt.is_empty() {
        findings.push(Finding::new(
            Level::Warn,
            "state",
            format!(
                "{} corrupt snapshot(s) set aside in {} (e.g. {}); fix: inspect and delete them",
                corrupt.len(),
                dir.display(),
                corrupt[0].display()
            ),
        ));
    }
    findings
}

/// The agents Berth knows, the files their hooks live in, and whether `berth hook` is wired
/// there (and its permission-request hook, for decisions through Berth).
fn agents(var: &impl Fn(&str) -> Option<OsString>) -> Vec<Finding> {
    let home = var("HOME").map(PathBuf::from).unwrap_or_default();
    let config = var("XDG_CONFIG_HOME").map(PathBuf::from).unwrap_or_else(|| home.join(".config"));
    let table: [(&str, AgentKind, Vec<PathBuf>); 4] = [
        ("claude", AgentKind::Claude, vec![home.join(".claude/settings.json")]),
        (
            "codex",
            AgentKind::Codex,
            vec![home.join(".codex/config.toml"), home.join(".codex/hooks.json")],
        ),
        (
            "opencode",
            AgentKind::Opencode,
            vec![config.join("opencode/plugin"), config.join("opencode/plugins")],
        ),
        ("cursor-agent", AgentKind::Cursor, vec![home.join(".cursor/hooks.json")]),
    ];
    let path = var("PATH").unwrap_or_default();
    table
        .into_iter()
        .filter_map(|(binary, kind, configs)| {
            std::env::split_paths(&path).find(|d| d.join(binary).is_file())?;
            let agent = kind.as_str();
            let wiring = crate::hook_install::wiring(kind, var);
            let wired = wiring.as_ref().is_some_and(|w| w.hooks)
                || configs.iter().any(|c| mentions_berth_hook(c));
            let decisions = wiring.as_ref().is_some_and(|w| w.decisions);
            let file = wiring.as_ref().map_or(configs[0].clone(), |w| w.path.clone());
            let injected = if kind == AgentKind::Claude {
                " (panes Berth starts get them anyway, through claude --settings)"
            } else {
                ""
            };
            let hooks = match (wired, decisions) {
                (true, true) => Finding::new(
                    Level::Ok,
                    "agent",
                    format!("{binary}: wired in {}, permission requests included", file.display()),
                ),
                (true, false) => Finding::new(
                    Level::Warn,
                    "agent",
                    format!("{binary}: its hooks call `berth hook` but not for permission requests, so Berth cannot answer them{injected}; fix: `berth hook install {agent}`"),
                ),
                (false, _) => Finding::new(
                    Level::Warn,
                    "agent",
                    format!("{binary} is on PATH but its hooks are not wired (states are guessed from the screen){injected}; fix: `berth hook install {agent}` (merges into {})", file.display()),
                ),
            };
            // Whether the agent can drive Berth through `berth mcp` (issue 30).
            let mcp = crate::mcp_install::registered(kind, var).map(|(file, wired)| {
                if wired {
                    Finding::new(
                        Level::Ok,
                        "mcp",
                        format!("{binary}: `berth mcp` is registered in {}", file.display()),
                    )
                } else {
                    Finding::new(
                        Level::Warn,
                        "mcp",
                        format!("{binary}: `berth mcp` is not registered, so it cannot drive Berth's tasks; fix: `berth hook install {agent}` (adds it to {})", file.display()),
                    )
                }
            });
            Some(std::iter::once(hooks).chain(mcp))
        })
        .flatten()
        .collect()
}

/// Whether a config file (or any file in a plugin dir) mentions `berth hook`.
fn mentions_berth_hook(path: &Path) -> bool {
    let read = |p: &Path| fs::read_to_string(p).is_ok_and(|t| t.contains("berth hook"));
    if path.is_dir() {
        fs::read_dir(path).into_iter().flatten().filter_map(|e| e.ok()).any(|e| read(&e.path()))
    } else {
        read(path)
    }
}

/// Our effective uid (the owner of `/proc/self`), without a libc dependency.
/// The window's config file: absent (defaults), good, or its mistake.
fn config_file() -> Finding {
    let Some(path) = crate::config::path() else {
        return Finding::new(Level::Warn, "config", "no config location: set HOME or BERTH_CONFIG");
    };
    if !path.exists() {
        return Finding::new(
            Level::Ok,
            "config",
            format!(
                "{} does not exist: the defaults apply (`berth config --default` prints a start)",
                path.display()
            ),
        );
    }
    match crate::config::load(&path) {
        Ok(_) => Finding::new(Level::Ok, "config", format!("{} loads", path.display())),
        Err(e) => Finding::new(
            Level::Warn,
            "config",
            format!("{e}; the window keeps the defaults until it is fixed ({})", path.display()),
        ),
    }
}

fn my_uid() -> u32 {
    fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX)
}
