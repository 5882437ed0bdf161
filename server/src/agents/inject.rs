//! Hooks through an agent's own command-line flag: a pane Berth starts with `claude` gets
//! Berth's hooks as `claude --settings '<json>'`, so they work with no `berth hook install`.
//!
//! It owns only the rewrite of the argv a pane's process starts with; the pane keeps the argv it
//! was given (so resume commands and the snapshot never carry the flag). It must not change
//! anything when the user already wired Berth's hooks in claude's settings (hooks from every
//! settings source run, and two `berth hook` calls would open two decisions), nor when the
//! command line already names `--settings`.

use std::path::{Path, PathBuf};

use berth_engine::agents::{program_index, AgentKind};

/// The argv to start: for claude, `argv` with `--settings <json>` after its own arguments (before
/// a `--` that ends its options), so what the user gave reads the same first (`claude --resume
/// ID --settings …`); else `argv` unchanged.
pub fn with_hooks(
    argv: &[String],
    kind: AgentKind,
    env: &[(String, String)],
    cwd: &Path,
) -> Vec<String> {
    if kind != AgentKind::Claude
        || argv.iter().any(|a| a == "--settings" || a.starts_with("--settings="))
        || claude_already_wired(env, cwd)
    {
        return argv.to_vec();
    }
    let (Some(index), Some(berth)) = (program_index(argv), berth_binary()) else {
        return argv.to_vec();
    };
    let mut out = argv.to_vec();
    let settings = super::hooks::claude_settings(&berth);
    let at =
        argv.iter().skip(index + 1).position(|a| a == "--").map_or(argv.len(), |i| index + 1 + i);
    out.splice(at..at, ["--settings".to_owned(), settings]);
    out
}

/// This binary, as the hooks should call it (`BERTH_HOOK_BIN` overrides it).
pub(crate) fn berth_binary() -> Option<String> {
    if let Some(bin) = std::env::var("BERTH_HOOK_BIN").ok().filter(|b| !b.is_empty()) {
        return Some(bin);
    }
    std::env::current_exe().ok()?.to_str().map(str::to_owned)
}

/// Whether claude's user or project settings already call `berth hook claude`.
fn claude_already_wired(env: &[(String, String)], cwd: &Path) -> bool {
    let var = |key: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(key).ok())
            .filter(|v| !v.is_empty())
    };
    let user_dir = var("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".claude")));
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(dir) = user_dir {
        files.push(dir.join("settings.json"));
    }
    files.push(cwd.join(".claude/settings.json"));
    files.push(cwd.join(".claude/settings.local.json"));
    files.iter().any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("berth hook claude")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn claude_gets_settings_after_the_program_and_nothing_else_changes() {
        let home = tempfile::tempdir().unwrap();
        let env = vec![("HOME".to_owned(), home.path().display().to_string())];
        let cwd = home.path();
        let argv = words("env FOO=1 claude --resume s-1");
        let out = with_hooks(&argv, AgentKind::Claude, &env, cwd);
        assert_eq!(&out[..5], &argv[..], "the resume command reads as it was");
        assert_eq!(out[5], "--settings");
        let settings: serde_json::Value = serde_json::from_str(&out[6]).unwrap();
        assert!(settings["hooks"]["PermissionRequest"].is_array());
        assert_eq!(out.len(), 7);
        // Before a `--` that ends claude's options.
        let out = with_hooks(&words("claude -- fix it"), AgentKind::Claude, &env, cwd);
        assert_eq!(out[0], "claude");
        assert_eq!(out[1], "--settings");
        assert_eq!(&out[3..], ["--", "fix", "it"]);

        for (argv, kind) in [
            (words("codex"), AgentKind::Codex),
            (words("bash -l"), AgentKind::None),
            (words("claude --settings x.json"), AgentKind::Claude),
            (words("claude --settings=x.json"), AgentKind::Claude),
        ] {
            assert_eq!(with_hooks(&argv, kind, &env, cwd), argv, "{argv:?}");
        }

        // The user wired the hooks in claude's settings: no second set.
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"berth hook claude"}]}]}}"#,
        )
        .unwrap();
        assert_eq!(with_hooks(&words("claude"), AgentKind::Claude, &env, cwd), words("claude"));
    }
}
