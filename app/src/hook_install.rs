//! `berth hook install AGENT [--project DIR] [--uninstall]`: Berth's hooks merged into an
//! agent's own settings (and opencode's plugin file written), idempotently.
//!
//! It owns where each agent keeps its hooks, the merge (every existing entry kept, Berth's
//! added once), the backup (`<file>.berth-backup`, the file as it was before Berth changed it)
//! and the uninstall (Berth's entries removed; when nothing else changed since, the backup's
//! bytes come back exactly). `berth doctor` reads [`wiring`]. It must not touch an entry that
//! is not Berth's, nor write a file it could not parse.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use berth_engine::agents::AgentKind;
use berth_server::agents::hooks::{hook_config, hook_entry, hook_events};
use serde_json::{Map, Value};

/// What marks a hook command as Berth's.
const MARK: &str = "berth hook";

/// The file an agent's hooks live in: the project's when `project` is given, else the user's.
pub fn settings_path(
    kind: AgentKind,
    project: Option<&Path>,
    var: &impl Fn(&str) -> Option<OsString>,
) -> Result<PathBuf> {
    let home = || var("HOME").map(PathBuf::from).context("HOME is not set");
    let dir_var = |key: &str| var(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    Ok(match (kind, project) {
        (AgentKind::Claude, Some(dir)) => dir.join(".claude/settings.json"),
        (AgentKind::Claude, None) => match dir_var("CLAUDE_CONFIG_DIR") {
            Some(dir) => dir.join("settings.json"),
            None => home()?.join(".claude/settings.json"),
        },
        (AgentKind::Codex, Some(dir)) => dir.join(".codex/hooks.json"),
        (AgentKind::Codex, None) => match dir_var("CODEX_HOME") {
            Some(dir) => dir.join("hooks.json"),
            None => home()?.join(".codex/hooks.json"),
        },
        (AgentKind::Cursor, Some(dir)) => dir.join(".cursor/hooks.json"),
        (AgentKind::Cursor, None) => home()?.join(".cursor/hooks.json"),
        (AgentKind::Opencode, Some(dir)) => dir.join(".opencode/plugin/berth.js"),
        (AgentKind::Opencode, None) => match dir_var("OPENCODE_CONFIG_DIR") {
            Some(dir) => dir.join("plugin/berth.js"),
            None => match dir_var("XDG_CONFIG_HOME") {
                Some(dir) => dir.join("opencode/plugin/berth.js"),
                None => home()?.join(".config/opencode/plugin/berth.js"),
            },
        },
        (AgentKind::Generic | AgentKind::None, _) => {
            bail!(
                "no hooks to install for {}: give claude, codex, opencode or cursor",
                kind.as_str()
            )
        }
    })
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".berth-backup");
    path.with_file_name(name)
}

fn is_ours(hook: &Value) -> bool {
    hook.get("command").and_then(Value::as_str).is_some_and(|c| c.contains(MARK))
}

/// Whether an entry of an event's list holds one of Berth's hooks.
fn entry_is_ours(kind: AgentKind, entry: &Value) -> bool {
    match kind {
        AgentKind::Cursor => is_ours(entry),
        _ => entry.get("hooks").and_then(Value::as_array).is_some_and(|h| h.iter().any(is_ours)),
    }
}

/// Adds Berth's hooks where they are missing; true when something was added.
pub fn merge(kind: AgentKind, doc: &mut Value) -> Result<bool> {
    let Value::Object(root) = doc else { bail!("the file is not a JSON object") };
    if kind == AgentKind::Cursor && !root.contains_key("version") {
        root.insert("version".into(), Value::from(1));
    }
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else { bail!("its \"hooks\" is not an object") };
    let command = format!("{MARK} {}", kind.as_str());
    let mut changed = false;
    for (event, timeout) in hook_events(kind) {
        let list = hooks.entry(*event).or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else { bail!("its hooks.{event} is not a list") };
        if !list.iter().any(|e| entry_is_ours(kind, e)) {
            list.push(hook_entry(kind, &command, *timeout));
            changed = true;
        }
    }
    Ok(changed)
}

/// Removes Berth's hooks (and the entries, lists and objects left empty by that alone); true
/// when something was removed.
pub fn strip(kind: AgentKind, doc: &mut Value) -> bool {
    let Some(Value::Object(hooks)) = doc.get_mut("hooks") else { return false };
    let mut changed = false;
    let mut emptied = Vec::new();
    for (event, list) in hooks.iter_mut() {
        let Value::Array(list) = list else { continue };
        let mut removed = false;
        if kind == AgentKind::Cursor {
            let before = list.len();
            list.retain(|e| !is_ours(e));
            removed = list.len() != before;
        } else {
            list.retain_mut(|entry| {
                let Some(Value::Array(inner)) = entry.get_mut("hooks") else { return true };
                let before = inner.len();
                inner.retain(|h| !is_ours(h));
                if inner.len() == before {
                    return true;
                }
                removed = true;
                !inner.is_empty()
            });
        }
        if removed {
            changed = true;
            if list.is_empty() {
                emptied.push(event.clone());
            }
        }
    }
    for event in emptied {
        hooks.remove(&event);
    }
    if changed && hooks.is_empty() {
        if let Value::Object(root) = doc {
            root.remove("hooks");
        }
    }
    changed
}

fn read_json(path: &Path) -> Result<(Option<Vec<u8>>, Value)> {
    match fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {
            Ok((Some(bytes), Value::Object(Map::new())))
        }
        Ok(bytes) => {
            let doc = serde_json::from_slice(&bytes).with_context(|| {
                format!("{} is not valid JSON; fix it first (nothing was changed)", path.display())
            })?;
            Ok((Some(bytes), doc))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, Value::Object(Map::new()))),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Writes through a temporary file and a rename, keeping the old file's permissions.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension("berth-tmp");
    fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Ok(meta) = fs::metadata(path) {
        let _ = fs::set_permissions(&tmp, meta.permissions());
    }
    fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
}

fn pretty(doc: &Value) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(doc)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// What an install or uninstall did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Nothing to do (already installed, or nothing of Berth's to remove).
    Unchanged,
    /// The file was written (a backup of the old one beside it, if there was one).
    Written,
    /// The file was put back exactly as the backup held it.
    Restored,
    /// The file held only Berth's hooks and was removed.
    Removed,
}

/// Installs (or with `uninstall`, removes) Berth's hooks in `path`.
pub fn apply(kind: AgentKind, path: &Path, uninstall: bool) -> Result<Change> {
    if kind == AgentKind::Opencode {
        return apply_plugin(path, uninstall);
    }
    let (old, mut doc) = read_json(path)?;
    let backup = backup_path(path);
    if !uninstall {
        let changed = merge(kind, &mut doc)
            .with_context(|| format!("cannot merge into {}", path.display()))?;
        if !changed {
            return Ok(Change::Unchanged);
        }
        if let Some(old) = &old {
            write_file(&backup, old)?;
        }
        write_file(path, &pretty(&doc)?)?;
        return Ok(Change::Written);
    }
    if !strip(kind, &mut doc) {
        return Ok(Change::Unchanged);
    }
    // Nothing but Berth's hooks changed since the backup: its bytes come back exactly.
    if let Ok(saved) = fs::read(&backup) {
        if let Ok(mut saved_doc) = serde_json::from_slice::<Value>(&saved) {
            strip(kind, &mut saved_doc);
            if saved_doc == doc {
                write_file(path, &saved)?;
                let _ = fs::remove_file(&backup);
                return Ok(Change::Restored);
            }
        }
    }
    let empty = match &doc {
        Value::Object(root) => root.keys().all(|k| kind == AgentKind::Cursor && k == "version"),
        _ => false,
    };
    if empty && !backup.exists() {
        fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
        return Ok(Change::Removed);
    }
    write_file(path, &pretty(&doc)?)?;
    Ok(Change::Written)
}

fn apply_plugin(path: &Path, uninstall: bool) -> Result<Change> {
    let ours = hook_config(AgentKind::Opencode).map(|c| c.content).unwrap_or_default();
    let current = fs::read_to_string(path).ok();
    let backup = backup_path(path);
    if !uninstall {
        if current.as_deref() == Some(ours) {
            return Ok(Change::Unchanged);
        }
        if let Some(current) = &current {
            write_file(&backup, current.as_bytes())?;
        }
        write_file(path, ours.as_bytes())?;
        return Ok(Change::Written);
    }
    match current {
        Some(text) if text == ours => {
            if backup.exists() {
                fs::rename(&backup, path)
                    .with_context(|| format!("cannot restore {}", path.display()))?;
                Ok(Change::Restored)
            } else {
                fs::remove_file(path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
                Ok(Change::Removed)
            }
        }
        Some(_) => bail!("{} is not Berth's plugin (it was changed); left alone", path.display()),
        None => Ok(Change::Unchanged),
    }
}

/// `berth hook install`: prints what it did.
pub fn run(agent: &str, project: Option<&Path>, uninstall: bool) -> Result<ExitCode> {
    let kind = AgentKind::parse(agent)
        .filter(|k| !matches!(k, AgentKind::Generic | AgentKind::None))
        .with_context(|| {
            format!("unknown agent {agent:?}: give claude, codex, opencode or cursor")
        })?;
    let var = |key: &str| std::env::var_os(key);
    let path = settings_path(kind, project, &var)?;
    let change = apply(kind, &path, uninstall)?;
    let shown = path.display();
    let backup = backup_path(&path);
    match (uninstall, change) {
        (false, Change::Unchanged) => println!("{agent}: Berth's hooks are already in {shown}"),
        (false, _) => {
            println!("{agent}: Berth's hooks merged into {shown}");
            if backup.exists() {
                println!("  the file as it was: {}", backup.display());
            }
            if kind == AgentKind::Codex {
                println!("  codex asks you to trust new hooks at its next start (or in /hooks)");
            }
        }
        (true, Change::Unchanged) => println!("{agent}: no Berth hooks in {shown}"),
        (true, Change::Restored) => println!("{agent}: {shown} restored from its backup"),
        (true, Change::Removed) => {
            println!("{agent}: removed {shown} (it held only Berth's hooks)")
        }
        (true, Change::Written) => println!("{agent}: Berth's hooks removed from {shown}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// How an agent's user-level settings are wired, for `berth doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wiring {
    /// The file looked at.
    pub path: PathBuf,
    /// Whether any of Berth's hooks is there.
    pub hooks: bool,
    /// Whether the permission-request hook is there (decisions through Berth).
    pub decisions: bool,
}

/// How an agent's user-level settings are wired.
pub fn wiring(kind: AgentKind, var: &impl Fn(&str) -> Option<OsString>) -> Option<Wiring> {
    let path = settings_path(kind, None, var).ok()?;
    if kind == AgentKind::Opencode {
        let text = fs::read_to_string(&path).unwrap_or_default();
        let hooks = text.contains(MARK);
        return Some(Wiring { decisions: hooks && text.contains("permission.asked"), hooks, path });
    }
    let doc = read_json(&path).map(|(_, d)| d).unwrap_or(Value::Null);
    let ours = |event: &str| {
        doc.get("hooks")
            .and_then(|h| h.get(event))
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|e| entry_is_ours(kind, e)))
    };
    let hooks = hook_events(kind).iter().any(|(e, _)| ours(e));
    let decisions = match kind {
        AgentKind::Cursor => ours("beforeShellExecution"),
        _ => ours("PermissionRequest"),
    };
    Some(Wiring { path, hooks, decisions })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_merge_keeps_every_entry_and_a_strip_takes_back_only_berths() {
        let original = json!({
            "model": "opus",
            "hooks": {
                "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }],
                "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "guard" }] }]
            }
        });
        let mut doc = original.clone();
        assert!(merge(AgentKind::Claude, &mut doc).unwrap());
        assert_eq!(doc["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
        assert_eq!(doc["hooks"]["Stop"][1]["hooks"][0]["command"], "berth hook claude");
        assert_eq!(doc["hooks"]["PreToolUse"], original["hooks"]["PreToolUse"]);
        assert_eq!(doc["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"], 600);
        let once = doc.clone();
        assert!(!merge(AgentKind::Claude, &mut doc).unwrap(), "a second merge adds nothing");
        assert_eq!(doc, once);
        assert!(strip(AgentKind::Claude, &mut doc));
        assert_eq!(doc, original);

        let mut cursor = json!({});
        assert!(merge(AgentKind::Cursor, &mut cursor).unwrap());
        assert_eq!(cursor["version"], 1);
        assert_eq!(cursor["hooks"]["beforeShellExecution"][0]["command"], "berth hook cursor");
        assert!(strip(AgentKind::Cursor, &mut cursor));
        assert_eq!(cursor, json!({ "version": 1 }));

        for bad in [json!([]), json!({ "hooks": [] }), json!({ "hooks": { "Stop": {} } })] {
            assert!(merge(AgentKind::Claude, &mut bad.clone()).is_err(), "{bad}");
        }
    }
}
