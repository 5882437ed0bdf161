//! The on-disk snapshot schema (a versioned DTO, separate from the Store's types) and the env
//! allowlist; the one encoder that every save goes through is `super::encode`. Fields may be
//! added (with
//! `#[serde(default)]` so older files still load) but never renamed; a change that older Berths
//! could not read bumps [`SNAPSHOT_VERSION`] and adds a step to `migrate`. This module must not
//! read files or know about the Store.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::guard::SnapshotSummary;

/// The snapshot schema this build writes and the newest it reads.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The snapshot's file name in the state dir.
pub const SNAPSHOT_FILE: &str = "snapshot.json";

/// How many notifications a snapshot keeps (the most recent ones).
pub const MAX_NOTIFICATIONS: usize = 200;

/// The largest snapshot file the loader reads; a bigger one is treated as corrupt.
pub const MAX_SNAPSHOT_BYTES: u64 = 64 * 1024 * 1024;

/// The smallest and largest share a split may give its first child.
pub const RATIO_RANGE: (f64, f64) = (0.05, 0.95);

/// The env names kept exactly.
const ENV_EXACT: &[&str] =
    &["TERM", "LANG", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCODE_CONFIG_DIR"];

/// The env name prefixes kept.
const ENV_PREFIXES: &[&str] = &["LC_", "BERTH_"];

/// The agents' config-dir variables, the only env an [`AgentRecord`] keeps.
pub const AGENT_CONFIG_ENV: &[&str] = &["CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCODE_CONFIG_DIR"];

/// The known values of [`PaneRecord::state`].
pub const PANE_STATES: &[&str] = &["LIVE", "RESTORED", "RESUMABLE", "EXITED"];

/// The known values of [`PaneRecord::lifecycle`].
pub const LIFECYCLES: &[&str] = &["starting", "idle", "working", "blocked", "done", "exited"];

/// The known values of [`PaneRecord::attention`].
pub const ATTENTIONS: &[&str] = &["none", "unread", "needs_input", "error"];

/// Whether an env variable named `name` may be written to the state dir.
pub fn is_allowlisted_env(name: &str) -> bool {
    ENV_EXACT.contains(&name)
        || ENV_PREFIXES.iter().any(|p| name.len() > p.len() && name.starts_with(p))
}

/// Keeps exactly the allowlisted variables of `env`: `TERM`, `LANG`, `LC_*`, `BERTH_*`,
/// `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `OPENCODE_CONFIG_DIR`. Everything else (tokens, keys,
/// `PATH`, `HOME` …) is dropped.
pub fn allowlisted_env(
    env: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    env.into_iter().filter(|(name, _)| is_allowlisted_env(name)).collect()
}

/// Keeps only the agents' config-dir variables of `env`.
pub fn agent_config_env(
    env: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    env.into_iter().filter(|(name, _)| AGENT_CONFIG_ENV.contains(&name.as_str())).collect()
}

/// The whole saved state of a server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Snapshot {
    /// The schema version; [`encode`] always writes [`SNAPSHOT_VERSION`].
    pub snapshot_version: u32,
    /// The version of the Berth that wrote it.
    pub server_version: String,
    /// When it was taken, ms since the epoch.
    pub saved_at: u64,
    /// The workspaces, in order, with their tabs.
    pub workspaces: Vec<WorkspaceRecord>,
    /// The focused workspace.
    pub active_workspace_id: Option<String>,
    /// Every pane, flat, each naming its workspace and tab, so one bad entry can be skipped.
    pub panes: Vec<PaneRecord>,
    /// The most recent notifications, oldest first.
    pub notifications: Vec<NotificationRecord>,
    /// The tasks (agents in their own worktrees); a snapshot from before tasks has none.
    pub tasks: Vec<super::task_record::TaskRecord>,
}

/// A saved workspace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkspaceRecord {
    /// Its id (`ws_…`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// The default working directory of its panes.
    pub cwd: String,
    /// Whether agents resume on their own after a restart.
    pub auto_resume: bool,
    /// Whether a person let agents in it type into its other panes (absent in older files:
    /// off).
    pub agent_drive: bool,
    /// The focused tab.
    pub active_tab_id: Option<String>,
    /// Its tabs, in order.
    pub tabs: Vec<TabRecord>,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
}

/// A saved tab.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TabRecord {
    /// Its id (`tab_…`).
    pub id: String,
    /// A title set by a client, if any.
    pub title: Option<String>,
    /// Its layout, in the same JSON shape as the protocol's `LayoutDto`.
    pub layout: LayoutRecord,
    /// The focused pane.
    pub active_pane_id: Option<String>,
    /// Its size in cells.
    pub size: SizeRecord,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
}

/// A saved layout: `{"pane": "pane_…"}` or `{"split": {dir, ratio, first, second}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayoutRecord {
    /// A leaf naming a pane.
    Pane(String),
    /// A split of two subtrees.
    Split(Box<SplitRecord>),
}

impl Default for LayoutRecord {
    /// An empty leaf, which the loader never hands out (it repairs or drops such a tab).
    fn default() -> Self {
        LayoutRecord::Pane(String::new())
    }
}

/// The inside of a saved split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitRecord {
    /// Where `second` sits relative to `first`.
    pub dir: SplitDirRecord,
    /// The share of the first child, 0.05–0.95.
    pub ratio: f64,
    /// The left or top child.
    pub first: LayoutRecord,
    /// The right or bottom child.
    pub second: LayoutRecord,
}

/// A saved split direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitDirRecord {
    /// `second` sits beside `first`.
    Right,
    /// `second` sits below `first`.
    Down,
}

impl LayoutRecord {
    /// A split of `first` and `second`.
    pub fn split(
        dir: SplitDirRecord,
        ratio: f64,
        first: LayoutRecord,
        second: LayoutRecord,
    ) -> Self {
        LayoutRecord::Split(Box::new(SplitRecord { dir, ratio, first, second }))
    }

    /// The pane ids of the leaves, first to last.
    pub fn pane_ids(&self) -> Vec<&str> {
        let mut ids = Vec::new();
        self.collect_ids(&mut ids);
        ids
    }

    fn collect_ids<'a>(&'a self, ids: &mut Vec<&'a str>) {
        match self {
            LayoutRecord::Pane(id) => ids.push(id),
            LayoutRecord::Split(split) => {
                split.first.collect_ids(ids);
                split.second.collect_ids(ids);
            }
        }
    }

    /// Makes every ratio finite and within [`RATIO_RANGE`] (a non-finite one becomes 0.5).
    /// Returns how many ratios were not finite.
    pub fn normalize_ratios(&mut self) -> usize {
        match self {
            LayoutRecord::Pane(_) => 0,
            LayoutRecord::Split(split) => {
                let mut bad = 0;
                if !split.ratio.is_finite() {
                    split.ratio = 0.5;
                    bad += 1;
                }
                split.ratio = split.ratio.clamp(RATIO_RANGE.0, RATIO_RANGE.1);
                bad + split.first.normalize_ratios() + split.second.normalize_ratios()
            }
        }
    }
}

/// A size in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SizeRecord {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl Default for SizeRecord {
    /// 80×24, the size of a terminal nobody has resized.
    fn default() -> Self {
        SizeRecord { cols: 80, rows: 24 }
    }
}

/// A saved pane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PaneRecord {
    /// Its id (`pane_…`).
    pub id: String,
    /// Its workspace.
    pub workspace_id: String,
    /// Its tab.
    pub tab_id: String,
    /// What it ran.
    pub argv: Vec<String>,
    /// Its working directory at save time.
    pub cwd: String,
    /// Its title at save time.
    pub title: String,
    /// Its env, allowlisted (see [`allowlisted_env`]).
    pub env: BTreeMap<String, String>,
    /// Its size in cells.
    pub size: SizeRecord,
    /// Its restore state at save time: `LIVE`, `RESTORED`, `RESUMABLE` or `EXITED`.
    pub state: String,
    /// Its lifecycle: `starting`, `idle`, `working`, `blocked`, `done` or `exited`.
    pub lifecycle: String,
    /// Its attention: `none`, `unread`, `needs_input` or `error`.
    pub attention: String,
    /// What is known about the agent in it.
    pub agent: AgentRecord,
    /// The exit code, once the process ended.
    pub exit_code: Option<i32>,
    /// The foreground job at save time (information only, never re-run).
    pub was_running: Option<String>,
    /// Creation time, ms since the epoch.
    pub created_at: u64,
    /// Last output, ms since the epoch.
    pub last_activity_at: u64,
    /// Last time the user looked at it, ms since the epoch.
    pub last_seen_at: u64,
    /// Who made it, for trust: `person`, `agent` or `agent:<pane>` (absent in older files:
    /// unknown, which is an agent's).
    pub made_by: String,
    /// Whether `argv` was cut to fit the snapshot ([`super::caps`]): shown, never run again.
    pub argv_cut: bool,
}

impl Default for PaneRecord {
    fn default() -> Self {
        PaneRecord {
            id: String::new(),
            workspace_id: String::new(),
            tab_id: String::new(),
            argv: Vec::new(),
            cwd: String::new(),
            title: String::new(),
            env: BTreeMap::new(),
            size: SizeRecord::default(),
            state: "RESTORED".into(),
            lifecycle: "idle".into(),
            attention: "none".into(),
            agent: AgentRecord::default(),
            exit_code: None,
            was_running: None,
            created_at: 0,
            last_activity_at: 0,
            last_seen_at: 0,
            made_by: String::new(),
            argv_cut: false,
        }
    }
}

/// What is known about the agent in a pane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentRecord {
    /// `claude`, `codex`, `opencode`, `cursor`, `generic` or `none`.
    pub kind: String,
    /// The agent's session id, from a hook, env or API.
    pub session_id: Option<String>,
    /// The adapter-built official resume command.
    pub resume_argv: Option<Vec<String>>,
    /// A resume command the process reported about itself (run only on explicit resume).
    pub reported_resume_argv: Option<Vec<String>>,
    /// The model, if known.
    pub model: Option<String>,
    /// A small map of adapter-specific facts.
    pub extra: BTreeMap<String, String>,
    /// The agent's config-dir env (only the names in [`AGENT_CONFIG_ENV`]).
    pub config_env: BTreeMap<String, String>,
}

impl Default for AgentRecord {
    fn default() -> Self {
        AgentRecord {
            kind: "none".into(),
            session_id: None,
            resume_argv: None,
            reported_resume_argv: None,
            model: None,
            extra: BTreeMap::new(),
            config_env: BTreeMap::new(),
        }
    }
}

/// A saved notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NotificationRecord {
    /// Its id (`notif_…`).
    pub id: String,
    /// The pane that raised it.
    pub pane_id: Option<String>,
    /// The workspace of that pane.
    pub workspace_id: Option<String>,
    /// Its title.
    pub title: String,
    /// Its body.
    pub body: String,
    /// Its severity.
    pub severity: String,
    /// Where it came from (`osc9`, `cli`, `hook:<agent>`, `system` …).
    pub source: String,
    /// When it arrived, ms since the epoch.
    pub created_at: u64,
    /// When the user read it, if they did.
    pub read_at: Option<u64>,
}

impl Default for NotificationRecord {
    fn default() -> Self {
        NotificationRecord {
            id: String::new(),
            pane_id: None,
            workspace_id: None,
            title: String::new(),
            body: String::new(),
            severity: "info".into(),
            source: "system".into(),
            created_at: 0,
            read_at: None,
        }
    }
}

impl SnapshotSummary {
    /// The summary of `snapshot`.
    pub fn of(snapshot: &Snapshot) -> Self {
        SnapshotSummary {
            panes: snapshot.panes.len(),
            live: snapshot.panes.iter().filter(|p| p.state != "EXITED").count(),
            workspaces: snapshot.workspaces.len(),
        }
    }
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
