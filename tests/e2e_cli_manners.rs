//! End to end: the CLI behaves like a Linux citizen — any socket, completions, man page, help
//! with exit codes, logs, shell integration and `berth doctor`.

mod support;

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

const WAIT: Duration = Duration::from_secs(15);

/// Every pane id in a `workspace.list` answer.
fn pane_ids(list: &Value) -> Vec<String> {
    panes_of(list).iter().filter_map(|p| p["id"].as_str().map(str::to_owned)).collect()
}

#[test]
fn socket_flag_picks_the_server_for_every_verb() {
    let a = TestServer::start();
    // Server B binds where `--socket` says, not at its default path.
    let mut b = TestServer::prepare();
    let b_dir = b.root.path().join("other");
    fs::DirBuilder::new().mode(0o700).create(&b_dir).unwrap();
    let b_socket = b_dir.join("b.sock");
    b.socket = b_socket.clone();
    let b = b.launch_with(&["--socket", b_socket.to_str().unwrap()]);
    assert!(!b.runtime.join("berth").join("berth.sock").exists());

    let pane_a = a.berth_ok(&["new", "--", "bash", "--norc"]);
    let pane_b =
        b.berth_ok(&["--socket", b_socket.to_str().unwrap(), "new", "--", "bash", "--norc"]);

    // A's environment points at A; `--socket` still wins.
    let via_flag: Value = serde_json::from_str(&a.berth_ok(&[
        "--socket",
        b_socket.to_str().unwrap(),
        "ls",
        "--json",
    ]))
    .unwrap();
    assert_eq!(pane_ids(&via_flag), vec![pane_b.clone()]);
    // The flag may come after the verb too (it is global).
    let after: Value = serde_json::from_str(&a.berth_ok(&[
        "ls",
        "--json",
        "--socket",
        b_socket.to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(pane_ids(&after), vec![pane_b]);
    // Without it, A answers.
    let plain: Value = serde_json::from_str(&a.berth_ok(&["ls", "--json"])).unwrap();
    assert_eq!(pane_ids(&plain), vec![pane_a]);
}

#[test]
fn bash_completions_parse() {
    let out = Command::new(berth_bin()).args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("berth.bash");
    fs::write(&script, &out.stdout).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("shell-init") && text.contains("--socket"), "{text}");
    let check = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    for shell in ["zsh", "fish"] {
        let out = Command::new(berth_bin()).args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
}

#[test]
fn man_page_is_roff_and_renders() {
    let out = Command::new(berth_bin()).arg("man").output().unwrap();
    assert!(out.status.success());
    let roff = String::from_utf8_lossy(&out.stdout);
    // clap_mangen opens with a two-line quote-string prelude (`.ie`/`.el`); the page itself
    // starts at `.TH`, before any section.
    let first_macro = roff.lines().find(|l| !l.starts_with(".ie") && !l.starts_with(".el"));
    assert!(
        first_macro.is_some_and(|l| l.starts_with(".TH berth 1")),
        "{}",
        &roff[..roff.len().min(200)]
    );
    assert!(roff.contains("socket"), "the man page should list --socket");
    let has_man = Command::new("sh").args(["-c", "command -v man"]).output().unwrap();
    if !has_man.status.success() {
        eprintln!("note: `man` is not installed here; only the roff header was checked");
        return;
    }
    let mut child = Command::new("man")
        .args(["-l", "-"])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&out.stdout).unwrap();
    let rendered = child.wait_with_output().unwrap();
    assert!(rendered.status.success(), "{}", String::from_utf8_lossy(&rendered.stderr));
    assert!(String::from_utf8_lossy(&rendered.stdout).contains("berth"));
}

#[test]
fn help_documents_exit_codes_and_examples() {
    let out = Command::new(berth_bin()).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(help.contains("Exit codes") && help.contains("2  usage error"), "{help}");
    assert!(help.contains("--socket"), "{help}");
    for verb in ["new", "send", "submit", "read", "wait", "ls", "completions"] {
        let out = Command::new(berth_bin()).args([verb, "--help"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Example"), "berth {verb} --help has no example:\n{text}");
    }
    // `wait` documents its own exit codes (issue 14).
    let out = Command::new(berth_bin()).args(["wait", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3  timeout") && text.contains("4  the pane exited"), "{text}");
    // A usage error exits 2.
    let bad = Command::new(berth_bin()).arg("no-such-verb").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn listing_verbs_speak_json() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    let ls: Value = serde_json::from_str(&server.berth_ok(&["ls", "--json"])).unwrap();
    assert_eq!(pane_ids(&ls), vec![pane.clone()]);
    let read: Value = serde_json::from_str(&server.berth_ok(&["read", &pane, "--json"])).unwrap();
    assert!(read["lines"].is_array(), "{read}");
    let notes: Value =
        serde_json::from_str(&server.berth_ok(&["notifications", "--json"])).unwrap();
    assert!(notes["notifications"].is_array(), "{notes}");
}

#[test]
fn logs_show_the_server_listening_line() {
    let server = TestServer::start();
    server.berth_ok(&["new", "--", "bash", "--norc"]);
    let log = server.state_dir().join("berth.log");
    assert_eq!(fs::metadata(&log).unwrap().permissions().mode() & 0o777, 0o600);
    let text = poll(WAIT, "the listening line in berth logs", || {
        let text = server.berth_ok(&["logs", "-n", "1000"]);
        text.contains("berth server listening").then_some(text)
    });
    assert!(!text.contains("\x1b["), "the log file holds no colour codes: {text}");
    let one = server.berth_ok(&["logs", "-n", "1"]);
    assert_eq!(one.lines().count(), 1, "{one}");
}

#[test]
fn shell_init_bash_reports_the_cwd_through_osc7() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc", "-i"]);
    let bin = berth_bin();
    server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        &format!("eval \"$('{}' shell-init bash)\"", bin.display()),
    ]);
    server.berth_ok(&["send", &pane, "--enter", "cd /tmp"]);
    let cwd_of = |want: &str| {
        poll(WAIT, &format!("cwd {want}"), || {
            let ls: Value = serde_json::from_str(&server.berth_ok(&["ls", "--json"])).ok()?;
            let cwd = ls["workspaces"][0]["tabs"][0]["panes"][0]["cwd"].as_str()?.to_owned();
            (cwd == want).then_some(())
        })
    };
    cwd_of("/tmp");
    // Only OSC 7 can report a directory the process is not in: the snippet reports $PWD.
    server.berth_ok(&["send", &pane, "--enter", "PWD='/berth osc7 probe'"]);
    cwd_of("/berth osc7 probe");
    // OSC 133 makes the lifecycle exact: a builtin that waits has no foreground child to
    // guess from, yet the pane is working until the prompt comes back.
    let lifecycle_is = |want: &str| {
        poll(WAIT, &format!("lifecycle {want}"), || {
            let ls: Value = serde_json::from_str(&server.berth_ok(&["ls", "--json"])).ok()?;
            (ls["workspaces"][0]["tabs"][0]["panes"][0]["lifecycle"] == want).then_some(())
        })
    };
    lifecycle_is("idle");
    server.berth_ok(&["send", &pane, "--enter", "read -t 300 berth_probe"]);
    lifecycle_is("working");
    server.berth_ok(&["send", &pane, "--keys", "C-c"]);
    lifecycle_is("idle");
    // The snippet parses in every shell it is for (bash checked here; zsh/fish if present).
    let out = Command::new(berth_bin()).args(["shell-init", "bash"]).output().unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("init.bash"), &out.stdout).unwrap();
    let check = Command::new("bash").arg("-n").arg(dir.path().join("init.bash")).output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
}

#[test]
fn doctor_names_a_missing_display_and_bus_and_fails() {
    let server = TestServer::prepare();
    let out = server
        .command()
        .arg("doctor")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("no display"), "{text}");
    assert!(text.contains("no D-Bus session bus"), "{text}");
    assert!(text.contains("headless server"), "{text}");
    // One line per check, each with a level tag.
    for name in ["display", "gpu", "fonts", "d-bus", "logind", "socket dir", "state", "config"] {
        assert!(text.lines().any(|l| l.contains(name)), "no {name} line:\n{text}");
    }
}

/// `berth doctor` says which backend the window would use and why (the same choice the window
/// makes), refuses a forced backend without its display, and names the fallback fonts.
#[test]
fn doctor_names_the_window_backend_and_the_fallback_fonts() {
    let server = TestServer::prepare();
    let doctor = |vars: &[(&str, &str)]| {
        let mut cmd = server.command();
        cmd.arg("doctor").env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
        cmd.env_remove("BERTH_BACKEND");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let display = text.lines().find(|l| l.contains("display")).unwrap_or("").to_owned();
        (display, text)
    };
    let (line, _) = doctor(&[("WAYLAND_DISPLAY", "wayland-9"), ("DISPLAY", ":9")]);
    assert!(
        line.starts_with("ok") && line.contains("runs on wayland (WAYLAND_DISPLAY=wayland-9"),
        "{line}"
    );
    let (line, _) = doctor(&[("DISPLAY", ":9")]);
    assert!(line.starts_with("ok") && line.contains("runs on x11 (DISPLAY=:9"), "{line}");
    let (line, _) =
        doctor(&[("WAYLAND_DISPLAY", "wayland-9"), ("DISPLAY", ":9"), ("BERTH_BACKEND", "x11")]);
    assert!(line.contains("runs on x11") && line.contains("forced by BERTH_BACKEND"), "{line}");
    let (line, _) = doctor(&[("WAYLAND_DISPLAY", "wayland-9"), ("BERTH_BACKEND", "x11")]);
    assert!(line.starts_with("FAIL") && line.contains("DISPLAY is unset"), "{line}");
    let (line, text) = doctor(&[("DISPLAY", ":9"), ("BERTH_BACKEND", "motif")]);
    assert!(line.starts_with("FAIL") && line.contains("not a backend"), "{line}");
    // What Berth controls: the family named draws the character (fontconfig agrees), and it is
    // the one the renderer picks, cosmic-text's own family for the script when the machine has
    // it (scripts/test installs fonts-noto-cjk and fonts-noto-color-emoji; a machine may have
    // others beside them, such as fonts-droid-fallback's Droid Sans Fallback).
    let fonts: Vec<&str> = text.lines().filter(|l| l.contains("fonts")).collect();
    for (what, pattern, preferred) in [
        ("CJK", ":charset=6f22", "Noto Sans CJK SC"),
        ("colour emoji", ":charset=1f980:color=true", "Noto Color Emoji"),
    ] {
        let drawing = families_drawing(pattern);
        let said = format!("{what} falls back to ");
        let named = fonts.iter().find_map(|l| l.split_once(&said)).map(|(_, f)| f.trim());
        match named {
            Some(family) => {
                assert!(drawing.iter().any(|f| f == family), "{family} in {drawing:?}: {fonts:#?}");
                if drawing.iter().any(|f| f == preferred) {
                    assert_eq!(family, preferred, "{drawing:?}: {fonts:#?}");
                }
            }
            None => assert!(
                drawing.is_empty() && fonts.iter().any(|l| l.contains(&format!("draws {what}"))),
                "{drawing:?}: {fonts:#?}"
            ),
        }
    }
}

/// The families fontconfig lists for `pattern` (each face's names, comma-separated there).
fn families_drawing(pattern: &str) -> Vec<String> {
    let out = std::process::Command::new("fc-list").args([pattern, "family"]).output().unwrap();
    assert!(out.status.success(), "fc-list {pattern}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().flat_map(|l| l.split(',')).map(|f| f.trim().to_owned()).collect()
}

#[test]
fn config_verb_prints_the_path_a_default_that_checks_and_names_a_bad_line() {
    let world = TestServer::prepare();
    // The path follows XDG_CONFIG_HOME (here: HOME/.config, HOME being the world's).
    let path = world.berth_ok(&["config"]);
    assert!(path.contains("/.config/berth/config.toml") || path.contains("/berth/config.toml"));
    assert!(path.ends_with("(does not exist; the defaults apply)"), "{path}");

    let default = world.berth_ok(&["config", "--default"]);
    assert!(default.contains("font_size = 15"), "{default}");
    assert!(default.contains("\"ctrl+shift+f5\""), "{default}");
    let file = world.root.path().join("default.toml");
    fs::write(&file, &default).unwrap();
    let ok = world.berth_ok(&["config", "--check", file.to_str().unwrap()]);
    assert!(ok.ends_with(": ok"), "{ok}");

    fs::write(&file, "theme = \"dark\"\n[colors]\nbackground = \"#12\"\n").unwrap();
    let out = world.berth(&["config", "--check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("berth: default.toml line 3: background: \"#12\" is not a colour"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");

    // BERTH_CONFIG names the file the window (and a bare --check) reads.
    let out = world
        .command()
        .env("BERTH_CONFIG", &file)
        .args(["config", "--check"])
        .output()
        .expect("run berth");
    assert_eq!(out.status.code(), Some(1));
    let missing = world.berth(&["config", "--check", "/nonexistent/berth.toml"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("does not exist"));
}

/// Regression (issue 26, defect 7): a reader that goes away is a normal end. `berth ls --json |
/// true` printed a backtrace and exited 101 (and plain `ls` printed "Broken pipe"); every verb
/// that prints now exits 0 without a word when its standard output is a pipe nobody reads, as
/// ripgrep does.
#[test]
fn a_closed_stdout_ends_every_printing_verb_quietly() {
    let server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "bash", "--norc"]);
    server.berth_ok(&["notify", "--pane", &pane, "a note"]);
    server.berth_ok(&["wait", &pane, "--until", "idle"]);
    let verbs: Vec<Vec<&str>> = vec![
        vec!["ls", "--json"],
        vec!["ls"],
        vec!["decisions", "--json"],
        vec!["notifications", "--json"],
        vec!["notifications"],
        vec!["task", "ls", "--json"],
        vec!["wait", &pane, "--until", "idle", "--timeout", "10", "--json"],
        vec!["wait", &pane, "--until", "idle", "--timeout", "10"],
        vec!["server-info"],
        vec!["server-info", "--socket-path"],
        vec!["read", &pane, "--json"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["hook", "--print-config", "claude"],
    ];
    for args in verbs {
        // A pipe whose read end is closed before berth starts: every write gets EPIPE.
        let (read, write) = nix::unistd::pipe().expect("a pipe");
        drop(read);
        let out = server
            .command()
            .args(&args)
            .current_dir(&server.home)
            .stdout(Stdio::from(write))
            .stderr(Stdio::piped())
            .output()
            .expect("run berth");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "berth {args:?}: {}: {stderr}", out.status);
        // `hook --print-config` says where the file goes on stderr, by design.
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| !(args[0] == "hook" && l.starts_with("berth hook: ~/.claude/")))
            .collect();
        assert!(said.is_empty(), "berth {args:?} said: {stderr}");
    }
    // A real failure is still one, with its message.
    let (read, write) = nix::unistd::pipe().expect("a pipe");
    drop(read);
    let out = server
        .command()
        .args(["wait", "pane_nosuchpane", "--until", "idle"])
        .stdout(Stdio::from(write))
        .output()
        .expect("run berth");
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stderr.is_empty());
}
