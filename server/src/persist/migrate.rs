//! Migrations of older snapshot schemas to the current one, on read.
//!
//! Each step turns the JSON of version N into the JSON of version N+1, at the `serde_json::Value`
//! level, so that the loader's entry-by-entry decoding (one bad pane never hides the rest) works
//! the same on migrated files. A step skips what it cannot understand and says so in `problems`;
//! it must not fail the whole file and must not write anything (the file is rewritten in the
//! current schema by the next ordinary save).
//!
//! Version 0 (Berth before 0.1) had no `snapshot_version` (some files said `"version": 0`),
//! nested panes inside their tabs, stored a pane's command as one string `cmd`, its size as
//! `cols`/`rows`, its agent as a kind string `agent` plus `agent_session`, had no restore state
//! (a pane with an exit code had ended, any other was live), no tab size, no `auto_resume`,
//! named the active ids `active_workspace`/`active_tab`/`active_pane`, and stored notifications
//! as `{id, pane, title, body, at, read: bool}`.

use serde_json::{json, Map, Value};

/// Migrates `root`, a snapshot object of schema `from`, to the current schema.
pub fn migrate(
    mut root: Map<String, Value>,
    from: u32,
    problems: &mut Vec<String>,
) -> Map<String, Value> {
    if from == 0 {
        root = v0_to_v1(root, problems);
    }
    root
}

fn v0_to_v1(v0: Map<String, Value>, problems: &mut Vec<String>) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("snapshot_version".into(), json!(1));
    copy(&v0, "server_version", &mut out, "server_version");
    copy(&v0, "saved_at", &mut out, "saved_at");
    copy(&v0, "active_workspace", &mut out, "active_workspace_id");
    let mut workspaces = Vec::new();
    let mut panes = Vec::new();
    for (wi, ws) in array(&v0, "workspaces", "the v0 snapshot", problems).iter().enumerate() {
        let Some(ws) = ws.as_object() else {
            problems.push(format!("v0 workspace #{wi} skipped: it is not an object"));
            continue;
        };
        let ws_id = ws.get("id").cloned().unwrap_or(Value::Null);
        let mut tabs = Vec::new();
        for (ti, tab) in
            array(ws, "tabs", &format!("v0 workspace #{wi}"), problems).iter().enumerate()
        {
            let Some(tab) = tab.as_object() else {
                problems
                    .push(format!("v0 tab #{ti} of workspace #{wi} skipped: it is not an object"));
                continue;
            };
            let tab_id = tab.get("id").cloned().unwrap_or(Value::Null);
            let mut size = None;
            for pane in array(tab, "panes", &format!("v0 tab #{ti} of workspace #{wi}"), problems) {
                let Some(pane) = pane.as_object() else {
                    problems.push(format!("a v0 pane of tab #{ti} skipped: it is not an object"));
                    continue;
                };
                let pane = v0_pane(pane, &ws_id, &tab_id);
                size.get_or_insert_with(|| pane.get("size").cloned());
                panes.push(Value::Object(pane));
            }
            let mut new_tab = Map::new();
            copy(tab, "id", &mut new_tab, "id");
            copy(tab, "title", &mut new_tab, "title");
            copy(tab, "layout", &mut new_tab, "layout");
            copy(tab, "active_pane", &mut new_tab, "active_pane_id");
            copy(tab, "created_at", &mut new_tab, "created_at");
            if let Some(Some(size)) = size {
                new_tab.insert("size".into(), size);
            }
            tabs.push(Value::Object(new_tab));
        }
        let mut new_ws = Map::new();
        for key in ["id", "name", "cwd", "created_at"] {
            copy(ws, key, &mut new_ws, key);
        }
        copy(ws, "active_tab", &mut new_ws, "active_tab_id");
        new_ws.insert("auto_resume".into(), json!(false));
        new_ws.insert("tabs".into(), Value::Array(tabs));
        workspaces.push(Value::Object(new_ws));
    }
    out.insert("workspaces".into(), Value::Array(workspaces));
    out.insert("panes".into(), Value::Array(panes));
    let notifications: Vec<Value> = array(&v0, "notifications", "the v0 snapshot", problems)
        .iter()
        .filter_map(|n| n.as_object().map(v0_notification))
        .collect();
    out.insert("notifications".into(), Value::Array(notifications));
    out
}

fn v0_pane(pane: &Map<String, Value>, ws_id: &Value, tab_id: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("workspace_id".into(), ws_id.clone());
    out.insert("tab_id".into(), tab_id.clone());
    for key in ["id", "cwd", "title", "env", "exit_code", "lifecycle", "attention", "created_at"] {
        copy(pane, key, &mut out, key);
    }
    let argv = match pane.get("cmd") {
        Some(Value::String(cmd)) => json!(split_command(cmd)),
        Some(other) => other.clone(),
        None => json!([]),
    };
    out.insert("argv".into(), argv);
    if let (Some(cols), Some(rows)) = (pane.get("cols"), pane.get("rows")) {
        out.insert("size".into(), json!({ "cols": cols, "rows": rows }));
    }
    let ended = pane.get("exit_code").is_some_and(|c| !c.is_null());
    out.insert("state".into(), json!(if ended { "EXITED" } else { "LIVE" }));
    let kind = pane.get("agent").cloned().unwrap_or_else(|| json!("none"));
    let session = pane.get("agent_session").cloned().unwrap_or(Value::Null);
    out.insert("agent".into(), json!({ "kind": kind, "session_id": session }));
    out
}

fn v0_notification(n: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    copy(n, "id", &mut out, "id");
    copy(n, "pane", &mut out, "pane_id");
    copy(n, "title", &mut out, "title");
    copy(n, "body", &mut out, "body");
    copy(n, "at", &mut out, "created_at");
    if n.get("read").and_then(Value::as_bool) == Some(true) {
        copy(n, "at", &mut out, "read_at");
    }
    Value::Object(out)
}

/// Splits a v0 command line into words: whitespace separates, single and double quotes group,
/// a backslash outside single quotes escapes the next character. v0 only ever stored commands
/// it had joined itself, so this need not be a full shell parser.
pub fn split_command(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

fn copy(from: &Map<String, Value>, key: &str, to: &mut Map<String, Value>, as_key: &str) {
    if let Some(v) = from.get(key) {
        to.insert(as_key.into(), v.clone());
    }
}

/// The array at `key`, or nothing (with a problem if something else is there).
fn array<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    owner: &str,
    problems: &mut Vec<String>,
) -> &'a [Value] {
    match obj.get(key) {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => &[],
        Some(_) => {
            problems.push(format!("{owner}: `{key}` is not a list; it was skipped"));
            &[]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v0_commands_split_into_argv() {
        let cases: &[(&str, &[&str])] = &[
            ("claude", &["claude"]),
            ("  cargo   test --all ", &["cargo", "test", "--all"]),
            ("sh -c 'echo a b'", &["sh", "-c", "echo a b"]),
            (r#"git commit -m "it's \"done\"""#, &["git", "commit", "-m", r#"it's "done""#]),
            (r"echo a\ b ''", &["echo", "a b", ""]),
            ("", &[]),
        ];
        for &(cmd, argv) in cases {
            assert_eq!(split_command(cmd), argv, "{cmd}");
        }
    }
}
