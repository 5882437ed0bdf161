//! `berth hook install AGENT` also registers `berth mcp` as an MCP server in the agent's own
//! config (issue 30), and `--uninstall` takes exactly that registration out again:
//!
//! - claude: `mcpServers.berth` in `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`), or a
//!   project's `.mcp.json`;
//! - codex: a `[mcp_servers.berth]` table in `~/.codex/config.toml` (`$CODEX_HOME`), or a
//!   project's `.codex/config.toml`;
//! - opencode: `mcp.berth` in `~/.config/opencode/opencode.json` (`$OPENCODE_CONFIG_DIR`,
//!   `$XDG_CONFIG_HOME`), or a project's `opencode.json`.
//!
//! JSON files are edited in place (`json_edit`: every other byte kept); the TOML table is
//! appended as one block and removed only while it is still that exact block. An entry named
//! `berth` that is not Berth's own is left alone (and said so). Files are written through
//! `safe_file` (no link followed inside a project). `berth doctor` reads [`registered`].

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use berth_engine::agents::AgentKind;
use serde_json::{json, Value};

use crate::hook_install::{target, Change};
use crate::json_edit::{self, Child, ChildValue, Edits, Kind};
use crate::safe_file::Target;

/// The name the server is registered under.
const NAME: &str = "berth";

/// The TOML block `berth hook install codex` appends. Codex starts an MCP server with only a
/// few variables of its own environment (HOME, PATH, USER, …): `env_vars` passes on the two
/// that say which Berth server to speak to (`BERTH_SOCKET` in a pane, else the default under
/// `XDG_RUNTIME_DIR`); without them `berth mcp` looked for a socket under /tmp and never
/// reached Berth. Codex 0.171 gives up on an MCP call after 300 s unless `tool_timeout_sec`
/// says more: `wait_task` may wait up to an hour (`WAIT_MAX_S` in `mcp/tools.rs`).
const CODEX_BLOCK: &str =
    "\n# Berth's MCP server (berth hook install codex)\n[mcp_servers.berth]\n\
     command = \"berth\"\nargs = [\"mcp\"]\nenv_vars = [\"BERTH_SOCKET\", \"XDG_RUNTIME_DIR\"]\n\
     tool_timeout_sec = 3660\n";

/// Blocks earlier versions appended: still Berth's own, replaced on install, removed on
/// uninstall.
const OLD_CODEX_BLOCKS: &[&str] = &[
    "\n# Berth's MCP server (berth hook install codex)\n[mcp_servers.berth]\ncommand = \"berth\"\nargs = [\"mcp\"]\n",
];

/// Where an agent's MCP servers are configured: the project's file when `project` is given.
pub fn config_path(
    kind: AgentKind,
    project: Option<&Path>,
    var: &impl Fn(&str) -> Option<OsString>,
) -> Result<PathBuf> {
    let home = || var("HOME").map(PathBuf::from).context("HOME is not set");
    let dir_var = |key: &str| var(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    Ok(match (kind, project) {
        (AgentKind::Claude, Some(dir)) => dir.join(".mcp.json"),
        (AgentKind::Claude, None) => match dir_var("CLAUDE_CONFIG_DIR") {
            Some(dir) => dir.join(".claude.json"),
            None => home()?.join(".claude.json"),
        },
        (AgentKind::Codex, Some(dir)) => dir.join(".codex/config.toml"),
        (AgentKind::Codex, None) => match dir_var("CODEX_HOME") {
            Some(dir) => dir.join("config.toml"),
            None => home()?.join(".codex/config.toml"),
        },
        (AgentKind::Opencode, Some(dir)) => dir.join("opencode.json"),
        (AgentKind::Opencode, None) => match dir_var("OPENCODE_CONFIG_DIR") {
            Some(dir) => dir.join("opencode.json"),
            None => match dir_var("XDG_CONFIG_HOME") {
                Some(dir) => dir.join("opencode/opencode.json"),
                None => home()?.join(".config/opencode/opencode.json"),
            },
        },
        _ => bail!("no MCP registration for {}", kind.as_str()),
    })
}

/// Whether Berth registers an MCP server for this agent.
pub fn supported(kind: AgentKind) -> bool {
    matches!(kind, AgentKind::Claude | AgentKind::Codex | AgentKind::Opencode)
}

/// The JSON object that holds the servers, and Berth's entry in it.
fn json_entry(kind: AgentKind) -> (&'static str, Value) {
    match kind {
        AgentKind::Opencode => {
            ("mcp", json!({ "type": "local", "command": ["berth", "mcp"], "enabled": true }))
        }
        _ => ("mcpServers", json!({ "type": "stdio", "command": "berth", "args": ["mcp"] })),
    }
}

/// The text with Berth's entry added; `None` when it is there already.
pub fn add_json(kind: AgentKind, text: &str) -> Result<Option<String>> {
    let (holder, entry) = json_entry(kind);
    let doc: Value = serde_json::from_str(text).context("the file is not JSON")?;
    let Value::Object(root_map) = &doc else { bail!("the file is not a JSON object") };
    let root = json_edit::parse(text).map_err(anyhow::Error::msg)?;
    let mut edits = Edits::default();
    match root.member(holder) {
        None => edits.append(
            text,
            &root,
            &[Child::member(
                holder,
                ChildValue::Object(vec![Child::member(NAME, ChildValue::Json(entry.clone()))]),
            )],
        ),
        Some(servers) => {
            let Some(Value::Object(map)) = root_map.get(holder) else {
                bail!("its \"{holder}\" is not an object")
            };
            match map.get(NAME) {
                Some(have) if *have == entry => return Ok(None),
                Some(_) => bail!(
                    "it already has an MCP server named \"{NAME}\" that is not Berth's own entry; \
                     left alone"
                ),
                None => edits.append(
                    text,
                    &servers.value,
                    &[Child::member(NAME, ChildValue::Json(entry.clone()))],
                ),
            }
        }
    }
    let out = edits.apply(text).map_err(anyhow::Error::msg)?;
    let mut want = doc;
    want.as_object_mut()
        .and_then(|r| {
            r.entry(holder).or_insert_with(|| json!({})).as_object_mut().map(|m| {
                m.insert(NAME.into(), entry);
            })
        })
        .context("the file is not a JSON object")?;
    check_same(&out, &want)?;
    Ok(Some(out))
}

/// The text with Berth's entry taken out (and its holder, when that leaves it empty); `None`
/// when it is not there. An entry named `berth` that differs from Berth's is refused.
pub fn remove_json(kind: AgentKind, text: &str) -> Result<Option<String>> {
    let (holder, entry) = json_entry(kind);
    let mut want: Value = serde_json::from_str(text).context("the file is not JSON")?;
    let Some(have) = want.get(holder).and_then(|m| m.get(NAME)) else { return Ok(None) };
    if *have != entry {
        bail!(
            "its MCP server \"{NAME}\" is not the entry Berth wrote (it was changed); left alone"
        );
    }
    let root = json_edit::parse(text).map_err(anyhow::Error::msg)?;
    let Some(servers) = root.member(holder) else { return Ok(None) };
    let Kind::Object(members) = &servers.value.kind else { return Ok(None) };
    let Some(at) = members.iter().position(|m| m.key == NAME) else { return Ok(None) };
    let mut edits = Edits::default();
    let root_map = want.as_object_mut().context("the file is not a JSON object")?;
    if members.len() == 1 {
        let Kind::Object(top) = &root.kind else { return Ok(None) };
        let index = top.iter().position(|m| m.key == holder).unwrap_or_default();
        edits.remove(&root, &[index]);
        root_map.remove(holder);
    } else {
        edits.remove(&servers.value, &[at]);
        if let Some(Value::Object(m)) = root_map.get_mut(holder) {
            m.remove(NAME);
        }
    }
    let out = edits.apply(text).map_err(anyhow::Error::msg)?;
    check_same(&out, &want)?;
    Ok(Some(out))
}

fn check_same(out: &str, want: &Value) -> Result<()> {
    let got: Value = serde_json::from_str(out)
        .map_err(|e| anyhow::anyhow!("the edit did not give valid JSON ({e}); nothing changed"))?;
    if got != *want {
        bail!("the edit did not give the expected config; nothing changed");
    }
    Ok(())
}

/// Whether codex's TOML names a `berth` MCP server, and whether it is Berth's block.
fn codex_state(text: &str) -> Result<(bool, bool)> {
    let doc: toml::Table = toml::from_str(text).context("the file is not valid TOML")?;
    let named = doc.get("mcp_servers").and_then(|s| s.get(NAME)).is_some();
    Ok((named, text.contains(CODEX_BLOCK)))
}

/// The text without an earlier version's block, if it holds one exactly: taking it out takes
/// out `mcp_servers.berth` and changes nothing else (no line of another block left behind).
fn without_old_codex_block(text: &str) -> Option<String> {
    let mut want: toml::Table = toml::from_str(text).ok()?;
    let servers = want.get_mut("mcp_servers")?.as_table_mut()?;
    servers.remove(NAME)?;
    if servers.is_empty() {
        want.remove("mcp_servers");
    }
    OLD_CODEX_BLOCKS.iter().find_map(|old| {
        let out = text.replacen(old, "", 1);
        (out != text && toml::from_str::<toml::Table>(&out).ok()? == want).then_some(out)
    })
}

/// The TOML with Berth's block appended (an earlier version's block replaced by it); `None`
/// when it is there.
pub fn add_toml(text: &str) -> Result<Option<String>> {
    match codex_state(text)? {
        (true, true) => Ok(None),
        (true, false) => match without_old_codex_block(text) {
            Some(rest) => Ok(Some(format!("{rest}{CODEX_BLOCK}"))),
            None => bail!(
                "it already has an MCP server named \"{NAME}\" that is not Berth's own block; \
                 left alone"
            ),
        },
        (false, _) => {
            // The block starts with a line break: it ends a last line that has none.
            let out = format!("{text}{CODEX_BLOCK}");
            toml::from_str::<toml::Table>(&out).context("the appended block did not parse")?;
            Ok(Some(out))
        }
    }
}

/// The TOML with Berth's block taken out; `None` when it is not there.
pub fn remove_toml(text: &str) -> Result<Option<String>> {
    match codex_state(text)? {
        (_, true) => Ok(Some(text.replacen(CODEX_BLOCK, "", 1))),
        (true, false) if without_old_codex_block(text).is_some() => {
            Ok(without_old_codex_block(text))
        }
        (true, false) => bail!(
            "its MCP server \"{NAME}\" is not the block Berth wrote (it was changed); left alone"
        ),
        (false, false) => Ok(None),
    }
}

/// Registers (or with `uninstall`, removes) `berth mcp` for `kind` in `target`.
pub fn apply(kind: AgentKind, target: &Target, uninstall: bool) -> Result<Change> {
    let old = target.read()?;
    let text = match &old {
        Some(bytes) => String::from_utf8(bytes.clone())
            .ok()
            .with_context(|| format!("{} is not UTF-8; nothing changed", target.path.display()))?,
        None => String::new(),
    };
    let toml = kind == AgentKind::Codex;
    let blank = text.trim().is_empty();
    let edited = match (toml, uninstall) {
        (true, false) => add_toml(&text),
        (true, true) => remove_toml(&text),
        (false, false) => add_json(kind, if blank { "{}\n" } else { &text }),
        (false, true) if blank => Ok(None),
        (false, true) => remove_json(kind, &text),
    }
    .with_context(|| format!("{}", target.path.display()))?;
    let Some(new) = edited else { return Ok(Change::Unchanged) };
    let empty = if toml {
        new.trim().is_empty()
    } else {
        serde_json::from_str::<Value>(&new).is_ok_and(|v| v == json!({}))
    };
    if uninstall && empty && old.as_ref().is_some_and(|_| created_by_us(&text, kind)) {
        target.remove()?;
        return Ok(Change::Removed);
    }
    target.check_writable()?;
    target.write(new.as_bytes(), None)?;
    Ok(Change::Written)
}

/// Whether the file holds nothing but what an install into a missing file wrote.
fn created_by_us(text: &str, kind: AgentKind) -> bool {
    match kind {
        AgentKind::Codex => text == CODEX_BLOCK || OLD_CODEX_BLOCKS.contains(&text),
        _ => add_json(kind, "{}\n").ok().flatten().as_deref() == Some(text),
    }
}

/// Whether `berth mcp` is registered in the agent's user-level config, for `berth doctor`:
/// the file looked at, and yes or no.
pub fn registered(
    kind: AgentKind,
    var: &impl Fn(&str) -> Option<OsString>,
) -> Option<(PathBuf, bool)> {
    let path = config_path(kind, None, var).ok()?;
    let text = fs::read_to_string(&path).unwrap_or_default();
    let wired = match kind {
        AgentKind::Codex => codex_state(&text).is_ok_and(|(_, ours)| ours),
        _ => {
            let (holder, entry) = json_entry(kind);
            serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|d| d.get(holder)?.get(NAME).cloned())
                .is_some_and(|e| e == entry)
        }
    };
    Some((path, wired))
}

/// `berth hook install`'s MCP half: registers or removes, and says what it did.
pub fn run(agent: &str, project: Option<&Path>, uninstall: bool) -> Result<()> {
    let Some(kind) = AgentKind::parse(agent).filter(|k| supported(*k)) else { return Ok(()) };
    let var = |key: &str| std::env::var_os(key);
    let path = config_path(kind, project, &var)?;
    let target = target(project, &path)?;
    let change = apply(kind, &target, uninstall)?;
    let agent = kind.as_str();
    let shown = path.display();
    match (uninstall, change) {
        (false, Change::Unchanged) => println!("{agent}: Berth's MCP server is already in {shown}"),
        (false, _) => println!("{agent}: Berth's MCP server (berth mcp) registered in {shown}"),
        (true, Change::Unchanged) => println!("{agent}: no Berth MCP server in {shown}"),
        (true, Change::Removed) => {
            println!("{agent}: removed {shown} (it held only Berth's MCP server)")
        }
        (true, _) => println!("{agent}: Berth's MCP server removed from {shown}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_registrations_come_out_exactly_as_they_went_in() {
        let cases = [
            "{}\n",
            "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\" }\n  }\n}\n",
            "{\"mcp\": {\"a\": {\"type\": \"local\", \"command\": [\"a\"]}}, \"x\": 1}",
            "{\n  \"numStartups\" :  3\n}\n",
        ];
        for kind in [AgentKind::Claude, AgentKind::Opencode] {
            for text in cases {
                let added = add_json(kind, text).unwrap().expect("added");
                assert!(registered_in(kind, &added), "{added}");
                assert_eq!(add_json(kind, &added).unwrap(), None, "idempotent");
                let removed = remove_json(kind, &added).unwrap().expect("removed");
                assert_eq!(removed, text, "{kind:?}: exactly as before");
                assert_eq!(remove_json(kind, text).unwrap(), None);
            }
        }
    }

    fn registered_in(kind: AgentKind, text: &str) -> bool {
        let (holder, entry) = json_entry(kind);
        let doc: Value = serde_json::from_str(text).unwrap();
        doc[holder][NAME] == entry
    }

    #[test]
    fn a_berth_entry_that_is_not_ours_is_left_alone() {
        let theirs = "{\"mcpServers\": {\"berth\": {\"command\": \"/opt/other\"}}}";
        assert!(add_json(AgentKind::Claude, theirs).is_err());
        assert!(remove_json(AgentKind::Claude, theirs).is_err());
        let toml = "[mcp_servers.berth]\ncommand = \"/opt/other\"\n";
        assert!(add_toml(toml).is_err());
        assert!(remove_toml(toml).is_err());
    }

    /// Codex passes an MCP server only a few variables and gives up on a call after 300 s:
    /// Berth's block passes on where the server is and allows the longest `wait_task`.
    #[test]
    fn the_codex_block_reaches_berth_and_outwaits_wait_task() {
        let doc: toml::Table = toml::from_str(CODEX_BLOCK).unwrap();
        let berth = &doc["mcp_servers"][NAME];
        let vars: Vec<&str> =
            berth["env_vars"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        assert_eq!(vars, ["BERTH_SOCKET", "XDG_RUNTIME_DIR"], "{CODEX_BLOCK}");
        let timeout = berth["tool_timeout_sec"].as_integer().unwrap();
        assert!(timeout as u64 > crate::mcp::WAIT_MAX_S, "{CODEX_BLOCK}");
    }

    /// A block an earlier version wrote is still Berth's: install replaces it, uninstall takes
    /// it out, each leaving the rest as it was.
    #[test]
    fn an_earlier_codex_block_is_upgraded_and_removed() {
        for old in OLD_CODEX_BLOCKS {
            for before in ["", "model = \"o3\"\n", "[mcp_servers.docs]\ncommand = \"d\"\n"] {
                let text = format!("{before}{old}");
                let added = add_toml(&text).unwrap().expect("replaced");
                assert_eq!(added, format!("{before}{CODEX_BLOCK}"));
                assert_eq!(remove_toml(&text).unwrap().as_deref(), Some(before));
            }
            assert!(created_by_us(old, AgentKind::Codex));
            // Changed after it was written (a line added to the table): no longer Berth's.
            let edited = format!("{old}startup_timeout_sec = 5\n");
            assert!(add_toml(&edited).is_err() && remove_toml(&edited).is_err());
        }
    }

    #[test]
    fn the_codex_block_comes_out_exactly() {
        for text in
            ["", "model = \"o3\"\n", "model = \"o3\"", "[mcp_servers.docs]\ncommand = \"d\"\n"]
        {
            let added = add_toml(text).unwrap().expect("added");
            assert!(codex_state(&added).unwrap().1, "{added}");
            assert_eq!(add_toml(&added).unwrap(), None);
            let removed = remove_toml(&added).unwrap().expect("removed");
            assert_eq!(removed, text);
        }
    }
}
