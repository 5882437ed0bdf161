//! The real agent CLIs in real Berth panes (issue #20): claude, codex and opencode, installed
//! from npm at pinned versions by `scripts/test-agents`, run with a private HOME and no
//! network.
//!
//! Each case runs only when `BERTH_AGENTS_NPM` names the npm prefix the agents were installed
//! into (`scripts/test-agents` sets it); without it every case prints that it is skipped and
//! passes, so `scripts/test` needs no network. With it, a missing agent is a failure.
//!
//! What is checked, per agent:
//! - its first screen in a Berth pane equals its first screen in tmux at 120×40 (text, trailing
//!   blanks trimmed, lines that depend on chance or the clock masked: see [`Agent::masks`]);
//! - the settings `berth hook --print-config` prints are accepted by the real program, and the
//!   hooks that fire without a login reach Berth with the session id;
//! - a failed resume keeps the whole restored tail and the pane's size;
//! - defect 1 where the real program shows it (claude's `StopFailure` without a login, an
//!   Escape sent through Berth to a codex or opencode turn, codex's own `Interrupt` hook), and
//!   defect 6 (claude shows "Settings Error" for a settings file that is not JSON).
//!
//! Where a case departs from a user's setup it says why: the homes are seeded past each
//! agent's login and trust screens, codex runs in-process instead of through its background
//! daemon, and opencode's plugin SDK comes from the npm cache. Every wait is bounded; a case
//! that fails prints what it saw.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::real_agents::*;
use support::*;

/// Trailing blanks and blank last lines removed; masked lines replaced by the mask's name.
fn normalise(agent: Agent, lines: &[String]) -> Vec<String> {
    let mut out: Vec<String> = lines
        .iter()
        .map(|line| {
            let line = line.trim_end();
            match agent.masks().iter().find(|(_, hit)| hit(line)) {
                Some((name, _)) => format!("<masked: {name}>"),
                None => line.to_owned(),
            }
        })
        .collect();
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

/// A tmux server of its own, for the reference screens.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn start(dir: &Path, env: &[(String, String)], work: &Path, argv: &[&str]) -> Tmux {
        let socket = dir.join("tmux.sock");
        let conf = dir.join("tmux.conf");
        // No status line, so the pane has all 40 rows, as a Berth pane does.
        fs::write(&conf, "set -g status off\n").unwrap();
        let status = Command::new("tmux")
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .args(["-S", socket.to_str().unwrap(), "-f", conf.to_str().unwrap()])
            .args(["new-session", "-d", "-x", &COLS.to_string(), "-y", &ROWS.to_string()])
            .args(["-c", work.to_str().unwrap(), "--"])
            .args(argv)
            .stdin(Stdio::null())
            .status()
            .expect("tmux runs (apt-get install tmux)");
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    fn screen(&self) -> Vec<String> {
        let out = Command::new("tmux")
            .args(["-S", self.socket.to_str().unwrap(), "capture-pane", "-p"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-S", self.socket.to_str().unwrap(), "kill-server"])
            .stderr(Stdio::null())
            .status();
    }
}

// ---- first screens ----

fn first_screen_matches_tmux(agent: Agent) {
    let case = format!("{}_first_screen_matches_tmux", agent.name());
    let Some(bin) = npm_bin(&case) else { return };
    // Berth first: its pane is 120×40 before the agent starts (a first pane sizes the tab).
    let world = World::new(&bin, agent, false);
    world.pane(&["sleep", "600"]);
    let tab_of = |server: &TestServer| {
        server.list()["workspaces"][0]["tabs"][0]["id"].as_str().unwrap().to_owned()
    };
    let tab = tab_of(&world.server);
    world.server.call("tab.resize", json!({ "tab_id": tab, "cols": COLS, "rows": ROWS }));
    let pane =
        world.server.berth_ok(&["new", "--cwd", world.work.to_str().unwrap(), "--", agent.name()]);
    assert_eq!(pane_size(&world.server, &pane), (u64::from(COLS), u64::from(ROWS)));
    let in_berth =
        settled(&format!("{case} (berth)"), agent.ready(), || berth_screen(&world.server, &pane));

    // tmux, with the same environment, a freshly seeded home at another path and the same
    // work dir (the agents print it).
    let home = world.server.root.path().join("tmux-home");
    agent.seed_home(&home, &world.work, None);
    let env = agent_env(&bin, &home, &world.tools);
    let tmux = Tmux::start(world.server.root.path(), &env, &world.work, &[agent.name()]);
    let in_tmux = settled(&format!("{case} (tmux)"), agent.ready(), || tmux.screen());

    let (berth, tmux) = (normalise(agent, &in_berth), normalise(agent, &in_tmux));
    if berth != tmux {
        let mut report = String::new();
        for i in 0..berth.len().max(tmux.len()) {
            let (b, t) = (berth.get(i), tmux.get(i));
            let mark = if b == t { ' ' } else { '!' };
            report.push_str(&format!(
                "{mark}{i:>2} berth|{}\n    tmux |{}\n",
                b.map_or("<none>", String::as_str),
                t.map_or("<none>", String::as_str)
            ));
        }
        panic!("{case}: the first screens differ\n{report}");
    }
    eprintln!("{case}: {} lines equal", berth.len());
}

#[test]
fn claude_first_screen_matches_tmux() {
    first_screen_matches_tmux(Agent::Claude);
}

#[test]
fn codex_first_screen_matches_tmux() {
    first_screen_matches_tmux(Agent::Codex);
}

#[test]
fn opencode_first_screen_matches_tmux() {
    first_screen_matches_tmux(Agent::Opencode);
}

// ---- settings and hooks ----

/// Claude accepts the settings Berth prints (no "Settings Error"), its `SessionStart` and
/// `UserPromptSubmit` hooks reach Berth with the session id, and without a login its turn ends
/// in `StopFailure`, which ends the pane's turn with `error` attention (defect 1).
#[test]
fn claude_accepts_berths_settings_and_its_hooks_reach_berth() {
    let case = "claude_accepts_berths_settings_and_its_hooks_reach_berth";
    let Some(bin) = npm_bin(case) else { return };
    let world = World::new(&bin, Agent::Claude, true);
    let pane = world.pane(&["claude"]);
    let screen = settled(case, Agent::Claude.ready(), || berth_screen(&world.server, &pane));
    let text = screen.join("\n");
    assert!(!text.contains("Settings Error") && !text.contains("Invalid"), "{text}");
    let session = wait_session(&world, &pane, "claude's SessionStart hook");
    assert!(hook_log(&world.tools).contains("\"SessionStart\""), "{}", hook_log(&world.tools));
    submit(&world.server, &pane, "say hi");
    poll(START, "claude's UserPromptSubmit hook", || {
        hook_log(&world.tools).contains("\"UserPromptSubmit\"").then_some(())
    });
    // Without a login the turn fails: claude sends StopFailure, never Stop.
    let entry = poll(START, "claude's StopFailure to end the turn", || {
        let entry = world.server.pane(&pane)?;
        let failed = hook_log(&world.tools).contains("\"StopFailure\"");
        (failed && entry["lifecycle"] == "done").then_some(entry)
    });
    assert_eq!(entry["attention"], "error", "{entry}");
    assert_eq!(entry["agent"]["session_id"], session.as_str());
    let last = world.server.berth_ok(&["notifications", "--json"]);
    assert!(last.contains("Not logged in"), "the error is the last message: {last}");
}

/// Codex accepts the config Berth prints (it loads it and asks to trust the new hooks, all
/// six of them), its `SessionStart` hook tells Berth the session id when the first prompt
/// starts the thread, before any turn ends (defect 2), and an Escape sent through Berth ends
/// the turn at once (defect 1) while codex's own `Interrupt` hook follows.
#[test]
fn codex_accepts_berths_config_and_learns_the_session_before_a_turn() {
    let case = "codex_accepts_berths_config_and_learns_the_session_before_a_turn";
    let Some(bin) = npm_bin(case) else { return };
    let world = World::new(&bin, Agent::Codex, true);
    let pane = world.pane(&["codex"]);
    let review =
        settled(case, "Hooks need review", || berth_screen(&world.server, &pane)).join("\n");
    assert!(!review.contains("Error loading config"), "{review}");
    assert!(review.contains("6 hooks are new or changed"), "{review}");
    // "2. Trust all and continue".
    world.server.berth_ok(&["send", &pane, "2"]);
    poll(START, "the trust option selected", || {
        berth_screen(&world.server, &pane)
            .iter()
            .any(|l| l.contains("› 2. Trust all and continue"))
            .then_some(())
    });
    world.server.berth_ok(&["send", &pane, "--keys", "Enter"]);
    settled(case, "Ask Codex to do anything", || berth_screen(&world.server, &pane));
    submit(&world.server, &pane, "say hi");
    let session = wait_session(&world, &pane, "codex's SessionStart hook");
    poll(START, "codex's UserPromptSubmit hook", || {
        hook_log(&world.tools).contains("\"UserPromptSubmit\"").then_some(())
    });
    let log = hook_log(&world.tools);
    assert!(log.contains("\"SessionStart\"") && log.contains(&session), "{log}");
    // No network: the turn retries for minutes, `working` all along.
    poll(START, "the turn to be working", || {
        (world.server.pane(&pane)?["lifecycle"] == "working").then_some(())
    });
    world.server.berth_ok(&["send", &pane, "--keys", "Escape"]);
    let entry = world.server.pane(&pane).unwrap();
    assert_eq!(entry["lifecycle"], "idle", "Escape through Berth ends the turn: {entry}");
    poll(START, "codex's Interrupt hook", || {
        hook_log(&world.tools).contains("\"Interrupt\"").then_some(())
    });
    assert_eq!(world.server.pane(&pane).unwrap()["lifecycle"], "idle");
    assert_eq!(world.server.pane(&pane).unwrap()["agent"]["session_id"], session.as_str());
}

/// opencode loads the plugin Berth prints, its events reach Berth with the session id once a
/// prompt creates a session, and one Escape sent through Berth does not end its turn (issue
/// 26: opencode interrupts on the second only; Berth had ended the turn on the first).
#[test]
fn opencode_loads_berths_plugin_and_its_events_reach_berth() {
    let case = "opencode_loads_berths_plugin_and_its_events_reach_berth";
    let Some(bin) = npm_bin(case) else { return };
    let world = World::new(&bin, Agent::Opencode, true);
    // The prompt comes on the command line (opencode submits it at once): a session is what
    // makes opencode send events, and the typing is not what is tested here.
    let pane = world.pane(&["opencode", "--prompt", "say hi"]);
    let session = wait_session(&world, &pane, "opencode's session events");
    assert!(session.starts_with("ses_"), "{session}");
    assert!(hook_log(&world.tools).contains(&session), "{}", hook_log(&world.tools));
    // Its `session.status` busy makes the pane `working` (offline opencode retries the model
    // for minutes). opencode interrupts only on a second Escape (the first shows "esc again
    // to interrupt"), so one Escape through Berth leaves the turn as it is. The interrupt
    // itself, with a real turn, is `opencode_escape_while_working_and_while_blocked`
    // (e2e_turns_openai.rs).
    poll(START, "opencode's busy session to make the pane working", || {
        (world.server.pane(&pane)?["lifecycle"] == "working").then_some(())
    });
    world.server.berth_ok(&["send", &pane, "--keys", "Escape"]);
    let entry = world.server.pane(&pane).unwrap();
    assert_eq!(entry["lifecycle"], "working", "one Escape does not interrupt opencode: {entry}");
}

// ---- failed resumes ----

/// Resumes a session that does not exist after a restart; the pane's tail (60 numbered lines
/// and one 110 columns wide) and its 120×40 size must survive whatever the agent does.
fn failed_resume_keeps_tail_and_size(agent: Agent, session: &str) {
    let case = format!("{}_failed_resume_keeps_the_tail_and_size", agent.name());
    let Some(bin) = npm_bin(&case) else { return };
    let mut world = World::new(&bin, agent, false);
    let pane = world.pane(&["bash", "--norc"]);
    let wide = "w".repeat(110);
    world.server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        &format!("for i in $(seq 1 60); do echo tail-line-$i; done; echo {wide}"),
    ]);
    poll(START, "the tail", || {
        berth_screen(&world.server, &pane).iter().any(|l| l.trim_end() == wide).then_some(())
    });
    world.server.berth_ok(&[
        "report-session",
        "--agent",
        agent.name(),
        "--session",
        session,
        "--pane",
        &pane,
    ]);
    world.server.restart();
    assert_eq!(pane_size(&world.server, &pane), (u64::from(COLS), u64::from(ROWS)));
    let out = world.server.berth(&["resume", &pane]);
    eprintln!("{case}: resume said {}", String::from_utf8_lossy(&out.stdout).trim());
    // Whatever the agent does, give it time to do it: until its screen settles.
    let screen = settled(&case, "", || berth_screen(&world.server, &pane));
    let text = world.server.screen(&pane);
    for i in 1..=60 {
        assert!(
            text.contains(&format!("tail-line-{i}\n")),
            "{case}: tail-line-{i} lost; all lines:\n{text}\nscreen:\n{}",
            screen.join("\n")
        );
    }
    assert!(text.contains(&format!("\n{wide}\n")), "{case}: the wide line rewrapped:\n{text}");
    assert_eq!(pane_size(&world.server, &pane), (u64::from(COLS), u64::from(ROWS)), "{case}");
}

#[test]
fn claude_failed_resume_keeps_the_tail_and_size() {
    failed_resume_keeps_tail_and_size(Agent::Claude, "0b6c3a57-9a0e-4a8e-bd54-2c5a6a0c0d11");
}

#[test]
fn codex_failed_resume_keeps_the_tail_and_size() {
    failed_resume_keeps_tail_and_size(Agent::Codex, "0199a0b6-7c1e-7f00-9b5e-3d2c1a0f9e88");
}

#[test]
fn opencode_failed_resume_keeps_the_tail_and_size() {
    failed_resume_keeps_tail_and_size(Agent::Opencode, "ses_0a1b2c3d4e5fBerthGone");
}

// ---- reply order ----

/// How many cursor position reports (`ESC [ row ; col R`) `bytes` holds.
fn cursor_reports(bytes: &[u8]) -> usize {
    let mut count = 0;
    let mut i = 0;
    while let Some(start) = bytes[i..].windows(2).position(|w| w == b"\x1b[") {
        let mut j = i + start + 2;
        let digits = |j: &mut usize| {
            let from = *j;
            while bytes.get(*j).is_some_and(u8::is_ascii_digit) {
                *j += 1;
            }
            *j > from
        };
        if digits(&mut j) && bytes.get(j) == Some(&b';') {
            j += 1;
            if digits(&mut j) && bytes.get(j) == Some(&b'R') {
                count += 1;
            }
        }
        i = i + start + 2;
    }
    count
}

/// Defect 5 with the real program: opencode asks for OSC 99 support (`p=?`) between cursor
/// position queries and reads the answers in order; before the fix its OSC 99 answer came
/// after the cursor reports to the queries that followed it. `script` sits between Berth and
/// opencode and logs both directions: the queries opencode wrote and the replies Berth sent.
#[test]
fn opencode_gets_its_osc_99_answer_in_the_order_it_asked() {
    let case = "opencode_gets_its_osc_99_answer_in_the_order_it_asked";
    let Some(bin) = npm_bin(case) else { return };
    let world = World::new(&bin, Agent::Opencode, false);
    let (input, output) = (world.tools.join("in.log"), world.tools.join("out.log"));
    let (input_s, output_s) = (input.to_str().unwrap(), output.to_str().unwrap());
    let pane = world.pane(&["script", "-q", "-f", "-I", input_s, "-O", output_s, "-c", "opencode"]);
    const QUERY: &[u8] = b"\x1b]99;i=opentui-notifications:p=?;";
    let (queries, replies) = poll(START, "opencode's OSC 99 query and Berth's answer", || {
        let (out, inp) = (fs::read(&output).ok()?, fs::read(&input).ok()?);
        let asked = out.windows(QUERY.len()).position(|w| w == QUERY)?;
        let answered = inp.windows(QUERY.len()).position(|w| w == QUERY)?;
        Some((out[..asked].to_vec(), inp[..answered].to_vec()))
    });
    let asked_before = queries.windows(4).filter(|w| w == b"\x1b[6n").count();
    let answered_before = cursor_reports(&replies);
    assert_eq!(
        answered_before,
        asked_before,
        "{case}: cursor reports before the OSC 99 answer (left) should answer only the queries \
         before the OSC 99 query (right); replies: {:?}; screen:\n{}",
        String::from_utf8_lossy(&replies),
        berth_screen(&world.server, &pane).join("\n")
    );
}
