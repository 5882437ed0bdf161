//! What a snapshot may hold, so that what the server writes it can read again.
//!
//! The loader refuses a file over [`MAX_SNAPSHOT_BYTES`] (it is moved aside as corrupt), so the
//! encoder must never write one. Two things keep it under: every field a program or a client
//! can make long is capped here ([`Caps`]: a pane's command line, titles, directories, env
//! values, tasks' free text and error reports), and finished tasks are pruned by age and count
//! ([`MAX_FINISHED_TASKS`], [`FINISHED_TASK_AGE_MS`]). What was cut is returned as [`Cut`]s,
//! each naming the record and the field, for the save to warn about. If the encoded snapshot is
//! still over [`SAVE_BUDGET_BYTES`] (thousands of panes, each at the caps), the encoder caps
//! again with [`Caps::TIGHT`]; past [`MAX_SNAPSHOT_BYTES`] even then, the save is refused and
//! the good record on disk stays.
//!
//! A pane whose command line was cut keeps the part that fits for display and is marked
//! `argv_cut`: it is never run again from that part (resume refuses it). This module only
//! transforms a [`Snapshot`]; it must not read files or know the Store.

use std::fmt;

use serde_json::Value;

use super::snapshot::{PaneRecord, Snapshot, MAX_SNAPSHOT_BYTES};
use super::task_record::TaskRecord;

/// A saved snapshot past this size is capped again with [`Caps::TIGHT`]; half what the loader
/// reads, so a snapshot can double before the next save and still load.
pub const SAVE_BUDGET_BYTES: usize = (MAX_SNAPSHOT_BYTES / 2) as usize;

/// The most finished tasks (completed, failed, canceled, rejected) a snapshot keeps: the most
/// recently changed ones.
pub const MAX_FINISHED_TASKS: usize = 100;

/// A finished task unchanged for longer than this (30 days, by the snapshot's `saved_at`) is
/// not saved.
pub const FINISHED_TASK_AGE_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// The task states that are final.
const FINISHED_STATES: &[&str] = &["completed", "failed", "canceled", "rejected"];

/// The sizes one snapshot's fields are cut to, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// A pane's command line (its argv, every argument counted with a separator), and each
    /// resume command.
    pub argv: usize,
    /// A title, name, job, directory, env or agent value, notification text.
    pub text: usize,
    /// A task's free text: its objective, constraints, summary and evidence.
    pub task_text: usize,
    /// A task's `status_reason` or `finish_error`, as JSON.
    pub task_report: usize,
    /// Entries of a pane's agent `extra` map.
    pub extra_entries: usize,
}

impl Caps {
    /// The caps every save applies.
    pub const NORMAL: Caps = Caps {
        argv: 64 * 1024,
        text: 4 * 1024,
        task_text: 32 * 1024,
        task_report: 16 * 1024,
        extra_entries: 32,
    };

    /// The caps of a save whose snapshot is over [`SAVE_BUDGET_BYTES`] at [`Caps::NORMAL`].
    pub const TIGHT: Caps =
        Caps { argv: 1024, text: 256, task_text: 1024, task_report: 1024, extra_entries: 4 };
}

/// One field cut (or one record left out) by the caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The record: `pane pane_…`, `task task_…`, `tab tab_…` …
    pub record: String,
    /// The field (`argv`, `title`, `env BERTH_X` …), or `pruned` for a task left out.
    pub field: String,
    /// Its size before, in bytes (a pruned task's age in days).
    pub before: usize,
    /// Its size after, in bytes.
    pub after: usize,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field == "pruned" {
            write!(f, "{} left out (finished {} days ago)", self.record, self.before)
        } else {
            write!(f, "{} {}: {} → {} bytes", self.record, self.field, self.before, self.after)
        }
    }
}

/// The cuts as one line for a warning: the first few named, then a count.
pub fn describe(cuts: &[Cut]) -> String {
    const NAMED: usize = 8;
    let mut text = cuts.iter().take(NAMED).map(Cut::to_string).collect::<Vec<_>>().join("; ");
    if cuts.len() > NAMED {
        text.push_str(&format!("; and {} more", cuts.len() - NAMED));
    }
    text
}

/// Prunes finished tasks and cuts every long field of `snapshot` to `caps`; returns what it cut.
pub fn apply(snapshot: &mut Snapshot, caps: Caps) -> Vec<Cut> {
    let mut cuts = Vec::new();
    prune_tasks(snapshot, &mut cuts);
    for pane in &mut snapshot.panes {
        cap_pane(pane, caps, &mut cuts);
    }
    for ws in &mut snapshot.workspaces {
        let record = format!("workspace {}", ws.id);
        cap_text(&mut ws.name, caps.text, &record, "name", &mut cuts);
        cap_text(&mut ws.cwd, caps.text, &record, "cwd", &mut cuts);
        for tab in &mut ws.tabs {
            if let Some(title) = &mut tab.title {
                cap_text(title, caps.text, &format!("tab {}", tab.id), "title", &mut cuts);
            }
        }
    }
    for n in &mut snapshot.notifications {
        let record = format!("notification {}", n.id);
        cap_text(&mut n.title, caps.text, &record, "title", &mut cuts);
        cap_text(&mut n.body, caps.text, &record, "body", &mut cuts);
    }
    for task in &mut snapshot.tasks {
        cap_task(task, caps, &mut cuts);
    }
    cuts
}

/// Which of `tasks` (each: finished or not, when it last changed, ms since the epoch) are kept
/// at `now`: every task still running, and of the finished ones those changed within
/// [`FINISHED_TASK_AGE_MS`], at most the [`MAX_FINISHED_TASKS`] most recently changed (of
/// equal times, the one listed later counts as the more recent). The one
/// rule for the saved snapshot ([`apply`]) and the running Store (`Store::prune_tasks`), so the
/// server holds what it saves.
pub fn tasks_to_keep(tasks: &[(bool, u64)], now: u64) -> Vec<bool> {
    let age = |updated_at: u64| now.saturating_sub(updated_at);
    let mut recent: Vec<usize> = (0..tasks.len())
        .filter(|&i| tasks[i].0 && age(tasks[i].1) <= FINISHED_TASK_AGE_MS)
        .collect();
    // Newest first; of equal times, the later listed first.
    recent.sort_by_key(|&i| std::cmp::Reverse((tasks[i].1, i)));
    recent.truncate(MAX_FINISHED_TASKS);
    let mut keep: Vec<bool> = tasks.iter().map(|&(finished, _)| !finished).collect();
    for i in recent {
        keep[i] = true;
    }
    keep
}

/// Whether a saved task state is final.
pub fn is_finished_state(state: &str) -> bool {
    FINISHED_STATES.contains(&state)
}

/// Leaves out the finished tasks older than [`FINISHED_TASK_AGE_MS`] and all but the
/// [`MAX_FINISHED_TASKS`] most recently changed; tasks still running are always kept.
fn prune_tasks(snapshot: &mut Snapshot, cuts: &mut Vec<Cut>) {
    let now = snapshot.saved_at;
    let facts: Vec<(bool, u64)> = snapshot
        .tasks
        .iter()
        .map(|t: &TaskRecord| (is_finished_state(&t.state), t.updated_at))
        .collect();
    let keep = tasks_to_keep(&facts, now);
    let mut index = 0;
    snapshot.tasks.retain(|t| {
        let kept = keep[index];
        index += 1;
        if !kept {
            let days = (now.saturating_sub(t.updated_at) / (24 * 60 * 60 * 1000)) as usize;
            cuts.push(Cut {
                record: format!("task {}", t.id),
                field: "pruned".into(),
                before: days,
                after: 0,
            });
        }
        kept
    });
}

fn cap_pane(pane: &mut PaneRecord, caps: Caps, cuts: &mut Vec<Cut>) {
    let record = format!("pane {}", pane.id);
    let before = argv_bytes(&pane.argv);
    if before > caps.argv {
        cut_argv(&mut pane.argv, caps.argv);
        pane.argv_cut = true;
        cuts.push(Cut {
            record: record.clone(),
            field: "argv".into(),
            before,
            after: argv_bytes(&pane.argv),
        });
    }
    for (field, argv) in [
        ("resume_argv", &mut pane.agent.resume_argv),
        ("reported_resume_argv", &mut pane.agent.reported_resume_argv),
    ] {
        // A resume command that does not fit is left out whole: a cut one would run something else.
        let before = argv.as_deref().map_or(0, argv_bytes);
        if before > caps.argv {
            *argv = None;
            cuts.push(Cut { record: record.clone(), field: field.into(), before, after: 0 });
        }
    }
    cap_text(&mut pane.cwd, caps.text, &record, "cwd", cuts);
    cap_text(&mut pane.title, caps.text, &record, "title", cuts);
    if let Some(job) = &mut pane.was_running {
        cap_text(job, caps.text, &record, "was_running", cuts);
    }
    for (name, value) in pane.env.iter_mut().chain(pane.agent.config_env.iter_mut()) {
        cap_text(value, caps.text, &record, &format!("env {name}"), cuts);
    }
    let agent = &mut pane.agent;
    for (field, value) in [("session_id", &mut agent.session_id), ("model", &mut agent.model)] {
        if value.as_ref().is_some_and(|v| v.len() > caps.text) {
            let before = value.take().map_or(0, |v| v.len());
            cuts.push(Cut { record: record.clone(), field: field.into(), before, after: 0 });
        }
    }
    if agent.extra.len() > caps.extra_entries {
        let before = agent.extra.len();
        let keep: Vec<String> = agent.extra.keys().take(caps.extra_entries).cloned().collect();
        agent.extra.retain(|k, _| keep.contains(k));
        cuts.push(Cut {
            record: record.clone(),
            field: "extra entries".into(),
            before,
            after: keep.len(),
        });
    }
    let long: Vec<String> = agent
        .extra
        .iter()
        .filter(|(k, v)| k.len() + v.len() > caps.text)
        .map(|(k, _)| k.clone())
        .collect();
    for key in long {
        let before = agent.extra.remove(&key).map_or(0, |v| v.len());
        cuts.push(Cut { record: record.clone(), field: "extra".into(), before, after: 0 });
    }
}

fn cap_task(task: &mut TaskRecord, caps: Caps, cuts: &mut Vec<Cut>) {
    let record = format!("task {}", task.id);
    cap_text(&mut task.label, caps.text, &record, "label", cuts);
    let c = &mut task.contract;
    cap_text(&mut c.objective, caps.task_text, &record, "objective", cuts);
    for item in c.constraints.iter_mut() {
        cap_text(item, caps.task_text, &record, "constraint", cuts);
    }
    for item in c.acceptance.iter_mut() {
        cap_text(item, caps.task_text, &record, "acceptance", cuts);
    }
    if let Some(format) = &mut c.output_format {
        cap_text(format, caps.task_text, &record, "output_format", cuts);
    }
    if let Some(result) = &mut task.result {
        cap_text(&mut result.summary, caps.task_text, &record, "summary", cuts);
        if let Some(evidence) = &mut result.evidence {
            cap_text(evidence, caps.task_text, &record, "evidence", cuts);
        }
        for artifact in &mut result.artifacts {
            cap_text(&mut artifact.name, caps.text, &record, "artifact name", cuts);
            cap_text(&mut artifact.path, caps.text, &record, "artifact path", cuts);
        }
    }
    for path in [&mut task.source_repo, &mut task.worktree_path, &mut task.base_ref] {
        cap_text(path, caps.text, &record, "path", cuts);
    }
    for (field, value) in
        [("status_reason", &mut task.status_reason), ("finish_error", &mut task.finish_error)]
    {
        cap_report(value, caps.task_report, &record, field, cuts);
    }
}

/// A report (`{stage, error}`, conflicting files …) over `cap` as JSON becomes
/// `{"cut": "<its JSON, cut>"}`, still an object a reader shows.
fn cap_report(
    value: &mut Option<Value>,
    cap: usize,
    record: &str,
    field: &str,
    cuts: &mut Vec<Cut>,
) {
    let Some(report) = value else { return };
    let mut json = report.to_string();
    let before = json.len();
    if before <= cap {
        return;
    }
    json.truncate(json.floor_char_boundary(cap));
    let after = json.len();
    *report = serde_json::json!({ "cut": json });
    cuts.push(Cut { record: record.into(), field: field.into(), before, after });
}

/// Cuts `text` to at most `cap` bytes on a character boundary, ending it with `…`.
fn cap_text(text: &mut String, cap: usize, record: &str, field: &str, cuts: &mut Vec<Cut>) {
    let before = text.len();
    if before <= cap {
        return;
    }
    let ellipsis = "…";
    text.truncate(text.floor_char_boundary(cap.saturating_sub(ellipsis.len())));
    text.push_str(ellipsis);
    cuts.push(Cut { record: record.into(), field: field.into(), before, after: text.len() });
}

/// The bytes of a command line: its arguments and a separator after each.
fn argv_bytes(argv: &[String]) -> usize {
    argv.iter().map(|a| a.len() + 1).sum()
}

/// Keeps the arguments of `argv` that fit in `cap` bytes, the last one cut if it must be.
fn cut_argv(argv: &mut Vec<String>, cap: usize) {
    let mut used = 0;
    let mut keep = 0;
    for arg in argv.iter_mut() {
        let room = cap.saturating_sub(used + 1);
        if arg.len() > room {
            if room > 0 {
                arg.truncate(arg.floor_char_boundary(room));
                keep += 1;
            }
            break;
        }
        used += arg.len() + 1;
        keep += 1;
    }
    argv.truncate(keep);
}

#[cfg(test)]
#[path = "caps_tests.rs"]
mod tests;
