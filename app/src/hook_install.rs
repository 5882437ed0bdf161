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

use crate::json_edit::{self, Child, ChildValue, Edits, Kind};
use crate::safe_file::Target;

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
    name.push(BACKUP);
    path.with_file_name(name)
}

/// What a backup's name adds to the file's.
const BACKUP: &str = ".berth-backup";

/// Whether a hook is exactly one that `berth hook install` writes: its command is `berth hook
/// AGENT` and nothing else (a user's own hook that merely mentions it is theirs).
fn is_ours(kind: AgentKind, hook: &Value) -> bool {
    let command = hook.get("command").and_then(Value::as_str);
    let typed = kind == AgentKind::Cursor
        || hook.get("type").and_then(Value::as_str).is_none_or(|t| t == "command");
    typed && command.is_some_and(|c| c.trim() == format!("{MARK} {}", kind.as_str()))
}

/// Whether an entry of an event's list holds one of Berth's hooks.
fn entry_is_ours(kind: AgentKind, entry: &Value) -> bool {
    match kind {
        AgentKind::Cursor => is_ours(kind, entry),
        _ => entry
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|h| h.iter().any(|h| is_ours(kind, h))),
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
            list.retain(|e| !is_ours(kind, e));
            removed = list.len() != before;
        } else {
            list.retain_mut(|entry| {
                let Some(Value::Array(inner)) = entry.get_mut("hooks") else { return true };
                let before = inner.len();
                inner.retain(|h| !is_ours(kind, h));
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

/// The text of `path` and its value; an empty (or blank) file reads as `{}`.
fn read_json(target: &Target) -> Result<(Option<Vec<u8>>, String, Value)> {
    let Some(bytes) = target.read()? else {
        return Ok((None, "{}\n".to_owned(), Value::Object(Map::new())));
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((Some(bytes), "{}\n".to_owned(), Value::Object(Map::new())));
    }
    let bad = || {
        format!("{} is not valid JSON; fix it first (nothing was changed)", target.path.display())
    };
    let text = String::from_utf8(bytes.clone()).ok().with_context(bad)?;
    let doc = serde_json::from_str(&text).with_context(bad)?;
    Ok((Some(bytes), text, doc))
}

/// The text with Berth's hooks added where they are missing, every other byte as it was;
/// `None` when all are there.
pub fn merge_text(kind: AgentKind, text: &str) -> Result<Option<String>> {
    let mut want: Value = serde_json::from_str(text).context("the file is not JSON")?;
    if !merge(kind, &mut want)? {
        return Ok(None);
    }
    let root = json_edit::parse(text).map_err(anyhow::Error::msg)?;
    let command = format!("{MARK} {}", kind.as_str());
    let entry = |timeout: &Option<u32>| hook_entry(kind, &command, *timeout);
    let mut edits = Edits::default();
    let mut top = Vec::new();
    if kind == AgentKind::Cursor && root.member("version").is_none() {
        top.push(Child::member("version", ChildValue::Json(Value::from(1))));
    }
    match root.member("hooks") {
        None => {
            let events = hook_events(kind)
                .iter()
                .map(|(event, timeout)| {
                    Child::member(event, ChildValue::Json(Value::Array(vec![entry(timeout)])))
                })
                .collect();
            top.push(Child::member("hooks", ChildValue::Object(events)));
        }
        Some(hooks) => {
            let mut new_events = Vec::new();
            for (event, timeout) in hook_events(kind) {
                match hooks.value.member(event) {
                    None => new_events.push(Child::member(
                        event,
                        ChildValue::Json(Value::Array(vec![entry(timeout)])),
                    )),
                    Some(list) => {
                        let ours = list
                            .value
                            .value(text)
                            .as_array()
                            .is_some_and(|l| l.iter().any(|e| entry_is_ours(kind, e)));
                        if !ours {
                            edits.append(text, &list.value, &[Child::item(entry(timeout))]);
                        }
                    }
                }
            }
            edits.append(text, &hooks.value, &new_events);
        }
    }
    edits.append(text, &root, &top);
    let out = edits.apply(text).map_err(anyhow::Error::msg)?;
    check_same(&out, &want)?;
    Ok(Some(out))
}

/// The text with Berth's hooks taken out (and the entries, lists and objects left empty by
/// that alone), every other byte as it was; `None` when there were none.
pub fn strip_text(kind: AgentKind, text: &str) -> Result<Option<String>> {
    let mut want: Value = serde_json::from_str(text).context("the file is not JSON")?;
    if !strip(kind, &mut want) {
        return Ok(None);
    }
    let root = json_edit::parse(text).map_err(anyhow::Error::msg)?;
    let Some(hooks) = root.member("hooks") else { return Ok(None) };
    let Kind::Object(events) = &hooks.value.kind else { return Ok(None) };
    let mut edits = Edits::default();
    let mut gone_events = Vec::new();
    for (at, event) in events.iter().enumerate() {
        let Kind::Array(entries) = &event.value.kind else { continue };
        let mut gone_entries = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            if kind == AgentKind::Cursor {
                if is_ours(kind, &entry.value(text)) {
                    gone_entries.push(i);
                }
                continue;
            }
            let Some(inner) = entry.member("hooks") else { continue };
            let Kind::Array(hooks) = &inner.value.kind else { continue };
            let gone: Vec<usize> = hooks
                .iter()
                .enumerate()
                .filter(|(_, h)| is_ours(kind, &h.value(text)))
                .map(|(k, _)| k)
                .collect();
            if !gone.is_empty() && gone.len() == hooks.len() {
                gone_entries.push(i);
            } else {
                edits.remove(&inner.value, &gone);
            }
        }
        if !gone_entries.is_empty() && gone_entries.len() == entries.len() {
            gone_events.push(at);
        } else {
            edits.remove(&event.value, &gone_entries);
        }
    }
    if !gone_events.is_empty() && gone_events.len() == events.len() {
        let Kind::Object(members) = &root.kind else { return Ok(None) };
        let at = members.iter().position(|m| m.key == "hooks").unwrap_or_default();
        edits.remove(&root, &[at]);
    } else {
        edits.remove(&hooks.value, &gone_events);
    }
    let out = edits.apply(text).map_err(anyhow::Error::msg)?;
    check_same(&out, &want)?;
    Ok(Some(out))
}

/// The edited text must read as the value the plain merge or strip gives (else nothing is
/// written).
fn check_same(out: &str, want: &Value) -> Result<()> {
    let got: Value = serde_json::from_str(out)
        .map_err(|e| anyhow::anyhow!("the edit did not give valid JSON ({e}); nothing changed"))?;
    if got != *want {
        bail!("the edit did not give the expected settings; nothing changed");
    }
    Ok(())
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

/// The file an install or uninstall works on: a project's (no link followed under the
/// project's directory) or the user's own (a link at the file itself is followed, and stays).
pub fn target(project: Option<&Path>, path: &Path) -> Result<Target> {
    match project {
        Some(dir) => {
            let rel = path
                .strip_prefix(dir)
                .with_context(|| format!("{} is not inside {}", path.display(), dir.display()))?;
            Target::in_project(dir, rel)
        }
        None => Target::for_user(path),
    }
}

/// Installs (or with `uninstall`, removes) Berth's hooks in `target`.
pub fn apply(kind: AgentKind, target: &Target, uninstall: bool) -> Result<Change> {
    if kind == AgentKind::Opencode {
        return apply_plugin(target, uninstall);
    }
    let (old, text, mut doc) = read_json(target)?;
    let backup = target.sibling(BACKUP)?;
    if !uninstall {
        let Some(new) = merge_text(kind, &text)
            .with_context(|| format!("cannot merge into {}", target.path.display()))?
        else {
            return Ok(Change::Unchanged);
        };
        // A read-only file is refused before its backup is made.
        target.check_writable()?;
        if let Some(old) = &old {
            backup.write(old, Some(target))?;
        }
        target.write(new.as_bytes(), None)?;
        return Ok(Change::Written);
    }
    let Some(new) = strip_text(kind, &text)? else {
        return Ok(Change::Unchanged);
    };
    strip(kind, &mut doc);
    // Nothing but Berth's hooks changed since the backup: its bytes come back exactly.
    if let Ok(Some(saved)) = backup.read() {
        if let Ok(mut saved_doc) = serde_json::from_slice::<Value>(&saved) {
            strip(kind, &mut saved_doc);
            if saved_doc == doc {
                target.write(&saved, None)?;
                backup.remove()?;
                return Ok(Change::Restored);
            }
        }
    }
    let empty = match &doc {
        Value::Object(root) => root.keys().all(|k| kind == AgentKind::Cursor && k == "version"),
        _ => false,
    };
    if empty && !backup.exists()? {
        target.remove()?;
        return Ok(Change::Removed);
    }
    target.write(new.as_bytes(), None)?;
    Ok(Change::Written)
}

fn apply_plugin(target: &Target, uninstall: bool) -> Result<Change> {
    let ours = hook_config(AgentKind::Opencode).map(|c| c.content).unwrap_or_default();
    let current = target.read()?;
    let backup = target.sibling(BACKUP)?;
    if !uninstall {
        if current.as_deref() == Some(ours.as_bytes()) {
            return Ok(Change::Unchanged);
        }
        target.check_writable()?;
        if let Some(current) = &current {
            backup.write(current, Some(target))?;
        }
        target.write(ours.as_bytes(), None)?;
        return Ok(Change::Written);
    }
    match current {
        Some(bytes) if bytes == ours.as_bytes() => match backup.read()? {
            Some(saved) => {
                target.write(&saved, Some(&backup))?;
                backup.remove()?;
                Ok(Change::Restored)
            }
            None => {
                target.remove()?;
                Ok(Change::Removed)
            }
        },
        Some(_) => {
            bail!("{} is not Berth's plugin (it was changed); left alone", target.path.display())
        }
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
    let target = target(project, &path)?;
    let change = apply(kind, &target, uninstall)?;
    let shown = match &target.link {
        Some(link) => {
            format!("{} (the file its link {} names)", target.path.display(), link.display())
        }
        None => target.path.display().to_string(),
    };
    let backup = backup_path(&target.path);
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
    let doc = fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .unwrap_or(Value::Null);
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

    /// Regression (issue 27, item 7): an uninstall after any other edit sorted the keys and
    /// turned big integers into floats, and a user's hook that merely mentions "berth hook"
    /// was taken for Berth's. Edits touch Berth's own lines only.
    #[test]
    fn text_edits_take_back_exactly_what_they_added() {
        let texts = [
            "{}\n",
            "{\n  \"z\": 1,\n  \"a\": 123456789012345678901234567890\n}\n",
            "{\"z\":1,\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"x\"}]}]}}",
            "{\n\t\"hooks\": {\n\t\t\"Other\": []\n\t},\n\t\"b\": [1.50, 2e3]\n}",
        ];
        for kind in [AgentKind::Claude, AgentKind::Codex] {
            for text in texts {
                let added = merge_text(kind, text).unwrap().expect("hooks added");
                let doc: Value = serde_json::from_str(&added).unwrap();
                let entry = &doc["hooks"]["Stop"];
                assert!(entry.as_array().unwrap().iter().any(|e| entry_is_ours(kind, e)));
                assert_eq!(merge_text(kind, &added).unwrap(), None, "a second install: nothing");
                let back = strip_text(kind, &added).unwrap().expect("hooks removed");
                assert_eq!(back, text, "{kind:?}: {added}");
            }
        }
        let cursor = "{\n  \"version\": 1,\n  \"n\": 18446744073709551616\n}\n";
        let added = merge_text(AgentKind::Cursor, cursor).unwrap().unwrap();
        assert_eq!(strip_text(AgentKind::Cursor, &added).unwrap().unwrap(), cursor);

        // A user's own hook that mentions Berth's command is theirs: kept by an uninstall,
        // and not taken for Berth's by an install.
        let mine = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo berth hook claude"}]}]}}"#;
        assert_eq!(strip_text(AgentKind::Claude, mine).unwrap(), None);
        let added = merge_text(AgentKind::Claude, mine).unwrap().unwrap();
        let doc: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(doc["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(strip_text(AgentKind::Claude, &added).unwrap().unwrap(), mine);
    }
}
