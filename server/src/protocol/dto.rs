//! The wire's DTOs: the JSON shapes of answers, versioned with the protocol, and their
//! mapping to and from the Store's typed view (`crate::view`). Fields may be added, never
//! renamed.

use std::path::PathBuf;

use berth_engine::agents::AgentKind;
use berth_engine::ids::{DecisionId, PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellSize, Layout, SplitDir};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use serde::{Deserialize, Serialize};

use crate::agents::turns::{LifecycleSource, TurnInfo, TurnRecord};
use crate::error::CommandError;

/// The version of this protocol, reported by `server.info`.
pub const PROTOCOL_VERSION: u32 = 1;
use crate::view::{
    AgentView, DecisionAnswer, DecisionOption, PaneInfo, PendingDecision, Progress, ProgressState,
    ReadView, ResumePlan, ResumeSource, ServerInfo, StateView, TabInfo, WorkspaceView,
};

/// A layout on the wire: `{"pane": "pane_…"}` or `{"split": {dir, ratio, first, second}}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum LayoutDto {
    /// A leaf.
    Pane(String),
    /// A split.
    Split(Box<SplitDto>),
}

/// The inside of a split on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SplitDto {
    /// `right` or `down`.
    pub dir: SplitDirDto,
    /// Share of the first child, 0.05–0.95.
    pub ratio: f64,
    /// The left or top child.
    pub first: LayoutDto,
    /// The right or bottom child.
    pub second: LayoutDto,
}

/// A split direction on the wire.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SplitDirDto {
    /// `second` sits beside `first`.
    Right,
    /// `second` sits below `first`.
    Down,
}

impl From<SplitDirDto> for SplitDir {
    fn from(d: SplitDirDto) -> Self {
        match d {
            SplitDirDto::Right => SplitDir::Right,
            SplitDirDto::Down => SplitDir::Down,
        }
    }
}

impl From<SplitDir> for SplitDirDto {
    fn from(d: SplitDir) -> Self {
        match d {
            SplitDir::Right => SplitDirDto::Right,
            SplitDir::Down => SplitDirDto::Down,
        }
    }
}

impl LayoutDto {
    /// The wire form of a layout.
    pub fn from_layout(layout: &Layout) -> Self {
        match layout {
            Layout::Pane(id) => LayoutDto::Pane(id.to_string()),
            Layout::Split { dir, ratio, first, second } => LayoutDto::Split(Box::new(SplitDto {
                dir: (*dir).into(),
                ratio: *ratio,
                first: Self::from_layout(first),
                second: Self::from_layout(second),
            })),
        }
    }

    /// The layout this describes, with its ids checked (but not yet against a tab).
    pub fn to_layout(&self) -> Result<Layout, CommandError> {
        Ok(match self {
            LayoutDto::Pane(id) => Layout::Pane(PaneId::parse(id)?),
            LayoutDto::Split(split) => {
                if !split.ratio.is_finite() {
                    return Err(CommandError::InvalidLayout("ratio must be finite".into()));
                }
                Layout::Split {
                    dir: split.dir.into(),
                    ratio: split.ratio,
                    first: Box::new(split.first.to_layout()?),
                    second: Box::new(split.second.to_layout()?),
                }
            }
        })
    }
}

/// A cell size on the wire.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct SizeDto {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl From<CellSize> for SizeDto {
    fn from(s: CellSize) -> Self {
        SizeDto { cols: s.cols, rows: s.rows }
    }
}

/// The agent fields of a pane on the wire (filled by a later issue; `none` for now).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentDto {
    /// `claude | codex | opencode | cursor | generic | none`.
    pub kind: String,
    /// The agent's session id, if reported.
    pub session_id: Option<String>,
    /// The adapter-built resume command.
    pub resume_argv: Option<Vec<String>>,
}

/// A pane in `workspace.list`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PaneDto {
    /// Its id.
    pub id: String,
    /// Title (OSC 0/2, else argv[0]).
    pub title: String,
    /// Working directory (OSC 7, else the process's, else where it started).
    pub cwd: String,
    /// What it runs.
    pub argv: Vec<String>,
    /// `LIVE | RESTORED | RESUMABLE | EXITED`.
    pub state: String,
    /// `starting | idle | working | blocked | done | exited`.
    pub lifecycle: String,
    /// `none | unread | needs_input | error`.
    pub attention: String,
    /// Agent information.
    pub agent: AgentDto,
    /// Exit code once exited.
    pub exit_code: Option<i32>,
    /// The signal that ended its program (`SIGTERM`), when one did while Berth ran.
    #[serde(default)]
    pub exit_signal: Option<String>,
    /// The foreground job of a live pane's PTY when it is not the pane's own program.
    #[serde(default)]
    pub job: Option<String>,
    /// The terminal size.
    pub size: SizeDto,
    /// Work in flight at the last save (filled by the persistence issue).
    pub was_running: Option<String>,
    /// The child's pid while live.
    pub pid: Option<i32>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: u64,
    /// The progress the program reports (ConEmu's OSC 9;4), while it shows one.
    #[serde(default)]
    pub progress: Option<ProgressDto>,
    /// Since when the pane has been in its `lifecycle`, ms since the Unix epoch (for
    /// "working for 2m"); for a tombstone, since the server restored it.
    #[serde(default)]
    pub lifecycle_since: Option<u64>,
    /// What `pane.resume` would run now (the whole argv, exactly), for a pane that is not
    /// running; `None` for a live pane.
    #[serde(default)]
    pub resume: Option<ResumeDto>,
    /// Its turns: how the lifecycle was learned, the running turn, the last one.
    #[serde(default)]
    pub turn: TurnDto,
    /// The permission request the pane's agent is waiting on (`berth decide` answers it).
    #[serde(default)]
    pub pending_decision: Option<DecisionDto>,
    /// The git context of its working directory (`root`, `branch`, `detached_sha`, `dirty`,
    /// `ahead`, `behind`, `worktree`); `null` outside a work tree.
    #[serde(default)]
    pub git: Option<crate::gitctx::GitContext>,
}

/// A pending decision on the wire (`pending_decision` of a pane, `decision.list`,
/// `pane.decision` events).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DecisionDto {
    /// Its id (`dec_…`): `pane.decide` may name it.
    pub id: String,
    /// The agent asking (`claude | codex | opencode | cursor`).
    pub agent: String,
    /// The tool it wants to use.
    pub tool: String,
    /// One line: the tool and its command or file.
    pub prompt: String,
    /// More of the request (a few bounded lines).
    pub detail: String,
    /// What can be answered, in order.
    pub options: Vec<DecisionOptionDto>,
    /// Whether an answer can still reach the agent (false once its route is lost).
    pub answerable: bool,
    /// When the request came, ms since the Unix epoch.
    pub received_at: u64,
}

/// One option of a decision on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DecisionOptionDto {
    /// The answer it gives: `allow | always | deny` (what `pane.decide` takes).
    pub id: String,
    /// What to show.
    pub label: String,
}

/// One entry of `decision.list`: a pane and its pending decision.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PaneDecisionDto {
    /// The pane.
    pub pane_id: String,
    /// Its decision.
    pub decision: DecisionDto,
}

impl From<&PendingDecision> for DecisionDto {
    fn from(d: &PendingDecision) -> Self {
        DecisionDto {
            id: d.id.to_string(),
            agent: d.agent.as_str().to_owned(),
            tool: d.tool.clone(),
            prompt: d.prompt.clone(),
            detail: d.detail.clone(),
            options: d
                .options
                .iter()
                .map(|o| DecisionOptionDto {
                    id: o.answer.as_str().to_owned(),
                    label: o.label.clone(),
                })
                .collect(),
            answerable: d.answerable,
            received_at: d.received_at,
        }
    }
}

impl DecisionDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<PendingDecision, CommandError> {
        Ok(PendingDecision {
            id: DecisionId::parse(&self.id)?,
            agent: AgentKind::parse(&self.agent).ok_or_else(|| bad("agent", &self.agent))?,
            tool: self.tool.clone(),
            prompt: self.prompt.clone(),
            detail: self.detail.clone(),
            options: self
                .options
                .iter()
                .map(|o| {
                    Ok(DecisionOption {
                        answer: DecisionAnswer::parse(&o.id).ok_or_else(|| bad("answer", &o.id))?,
                        label: o.label.clone(),
                    })
                })
                .collect::<Result<_, CommandError>>()?,
            answerable: self.answerable,
            received_at: self.received_at,
        })
    }
}

/// A pane's turns on the wire.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TurnDto {
    /// How the current lifecycle was learned: `hook`, `osc133`, `process` or `interrupt`
    /// (Berth's own Escape or Ctrl-C ended the turn); `null` when not known yet.
    pub learned_from: Option<String>,
    /// When the running turn started, ms since the Unix epoch; `null` between turns.
    pub running_since: Option<u64>,
    /// Whether the agent's hooks are wired (a hook event came since its program started).
    pub hooks_wired: bool,
    /// The last finished turn.
    pub last: Option<LastTurnDto>,
}

/// A finished turn on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LastTurnDto {
    /// When it started, ms since the Unix epoch; `null` when Berth did not see it start.
    pub started_at: Option<u64>,
    /// When it ended, ms since the Unix epoch.
    pub ended_at: u64,
    /// Its length in ms (`ended_at - started_at`), when its start is known.
    pub duration_ms: Option<u64>,
    /// The lifecycle it ended in: `idle`, `done` or `exited`.
    pub ended_as: String,
    /// How its end was learned (as `learned_from` above).
    pub learned_from: String,
    /// The agent's last message, if it sent one (claude's and codex's
    /// `last_assistant_message`).
    pub last_message: Option<String>,
}

impl From<&TurnRecord> for LastTurnDto {
    fn from(t: &TurnRecord) -> Self {
        LastTurnDto {
            started_at: t.started_at,
            ended_at: t.ended_at,
            duration_ms: t.duration_ms(),
            ended_as: t.ended_as.as_str().to_owned(),
            learned_from: t.learned_from.as_str().to_owned(),
            last_message: t.last_message.clone(),
        }
    }
}

impl From<&TurnInfo> for TurnDto {
    fn from(t: &TurnInfo) -> Self {
        TurnDto {
            learned_from: t.learned_from.map(|s| s.as_str().to_owned()),
            running_since: t.running_since,
            hooks_wired: t.hooks_wired,
            last: t.last.as_ref().map(LastTurnDto::from),
        }
    }
}

impl LastTurnDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<TurnRecord, CommandError> {
        Ok(TurnRecord {
            started_at: self.started_at,
            ended_at: self.ended_at,
            ended_as: Lifecycle::parse(&self.ended_as)
                .ok_or_else(|| bad("lifecycle", &self.ended_as))?,
            learned_from: LifecycleSource::parse(&self.learned_from)
                .ok_or_else(|| bad("lifecycle source", &self.learned_from))?,
            last_message: self.last_message.clone(),
        })
    }
}

impl TurnDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<TurnInfo, CommandError> {
        Ok(TurnInfo {
            learned_from: match &self.learned_from {
                None => None,
                Some(s) => {
                    Some(LifecycleSource::parse(s).ok_or_else(|| bad("lifecycle source", s))?)
                }
            },
            running_since: self.running_since,
            last: self.last.as_ref().map(LastTurnDto::to_view).transpose()?,
            hooks_wired: self.hooks_wired,
        })
    }
}

/// What `pane.resume` would run, and where that command came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ResumeDto {
    /// The whole command line that would run.
    pub argv: Vec<String>,
    /// `adapter` (built by Berth from the agent's session id), `self-reported` (a command
    /// a process reported about itself with `session.report`: not checked by Berth) or `argv`
    /// (the pane's own program again).
    pub source: String,
}

impl ResumeDto {
    /// Whether a process reported this command about itself (Berth has not checked it).
    pub fn is_self_reported(&self) -> bool {
        self.source == ResumeSource::Reported.as_str()
    }

    /// The command line as a shell would read it: every argument, quoted where needed, so
    /// that what is shown is exactly what runs.
    pub fn command_line(&self) -> String {
        shell_words(&self.argv)
    }
}

impl From<&ResumePlan> for ResumeDto {
    fn from(plan: &ResumePlan) -> Self {
        ResumeDto { argv: plan.argv.clone(), source: plan.source.as_str().into() }
    }
}

pub use crate::view::shell_words;

/// A program's progress report (OSC `9;4;state;percent`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProgressDto {
    /// `normal | error | indeterminate | paused`.
    pub state: String,
    /// Percent done, when the state has one (not for `indeterminate`).
    pub percent: Option<u8>,
}

/// A tab in `workspace.list`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TabDto {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The focused pane.
    pub active_pane_id: String,
    /// Its layout.
    pub layout: LayoutDto,
    /// The tab's size in cells.
    pub size: SizeDto,
    /// Its panes, in layout order.
    pub panes: Vec<PaneDto>,
}

/// A workspace in `workspace.list`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkspaceDto {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its working directory.
    pub cwd: String,
    /// Whether agents resume on their own after a restart.
    pub auto_resume: bool,
    /// Whether agents in it may type into its other panes.
    #[serde(default)]
    pub agent_drive: bool,
    /// The focused tab.
    pub active_tab_id: Option<String>,
    /// Its tabs, in order.
    pub tabs: Vec<TabDto>,
    /// The git context of its directory, as a pane's.
    #[serde(default)]
    pub git: Option<crate::gitctx::GitContext>,
}

/// The result of `workspace.list`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorkspaceListDto {
    /// Every workspace, in order.
    pub workspaces: Vec<WorkspaceDto>,
    /// The focused workspace.
    pub active_workspace_id: Option<String>,
}

/// The result of `pane.read`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReadDto {
    /// The pane.
    pub pane_id: String,
    /// The lines, oldest first.
    pub lines: Vec<String>,
    /// `content_seq` of the first line returned.
    pub first_seq: u64,
    /// `content_seq` of the cursor's line: pass it as `since` to poll for what is new.
    pub next_seq: u64,
    /// The oldest `content_seq` still held.
    pub oldest_seq: u64,
    /// True when `since` was older than the oldest line held (some lines were lost).
    pub truncated: bool,
}

/// The result of `server.info`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerInfoDto {
    /// Always `berth`.
    pub name: String,
    /// Berth's version.
    pub version: String,
    /// The protocol's version ([`PROTOCOL_VERSION`]).
    pub protocol: u32,
    /// The server's pid.
    pub pid: u32,
    /// Its socket.
    pub socket: PathBuf,
    /// When it started, ms since the Unix epoch.
    pub started_at: u64,
    /// How many git context probes the server has run (`gitctx`): flat while nothing
    /// changes, since nothing polls.
    #[serde(default)]
    pub git_probes: u64,
    /// How many times the git watcher looked at the directories (`gitctx`): flat while
    /// nothing but pane output happens.
    #[serde(default)]
    pub git_checks: u64,
    /// The window `berth review` opens the view in: the one used last (0: the embedded
    /// window; else an attached window's number, `window_id` of its `window.view` answer).
    #[serde(default)]
    pub active_window: Option<u64>,
}

/// A kept notification on the wire: the same record the snapshot saves.
pub type NotificationDto = crate::persist::NotificationRecord;

// ---- view → wire ----

impl From<&ServerInfo> for ServerInfoDto {
    fn from(info: &ServerInfo) -> Self {
        ServerInfoDto {
            name: "berth".into(),
            version: info.version.clone(),
            protocol: PROTOCOL_VERSION,
            pid: info.pid,
            socket: info.socket.clone(),
            started_at: info.started_at,
            git_probes: crate::gitctx::probe_count(),
            git_checks: crate::gitctx::check_count(),
            active_window: info.active_window,
        }
    }
}

impl From<&ReadView> for ReadDto {
    fn from(r: &ReadView) -> Self {
        ReadDto {
            pane_id: r.pane.to_string(),
            lines: r.lines.clone(),
            first_seq: r.first_seq,
            next_seq: r.next_seq,
            oldest_seq: r.oldest_seq,
            truncated: r.truncated,
        }
    }
}

impl From<&Progress> for ProgressDto {
    fn from(p: &Progress) -> Self {
        ProgressDto { state: p.state.as_str().to_owned(), percent: p.percent }
    }
}

impl From<&PaneInfo> for PaneDto {
    fn from(p: &PaneInfo) -> Self {
        PaneDto {
            id: p.id.to_string(),
            title: p.title.clone(),
            cwd: p.cwd.clone(),
            argv: p.argv.clone(),
            state: p.state.as_str().to_owned(),
            lifecycle: p.lifecycle.as_str().to_owned(),
            attention: p.attention.as_str().to_owned(),
            agent: AgentDto {
                kind: p.agent.kind.as_str().to_owned(),
                session_id: p.agent.session_id.clone(),
                resume_argv: p.agent.resume_argv.clone(),
            },
            exit_code: p.exit_code,
            exit_signal: p.exit_signal.clone(),
            job: p.job.clone(),
            size: p.size.into(),
            was_running: p.was_running.clone(),
            pid: p.pid,
            created_at: p.created_at,
            progress: p.progress.as_ref().map(ProgressDto::from),
            lifecycle_since: p.lifecycle_since,
            resume: p.resume.as_ref().map(ResumeDto::from),
            turn: TurnDto::from(&p.turn),
            pending_decision: p.pending_decision.as_ref().map(DecisionDto::from),
            git: p.git.clone(),
        }
    }
}

impl From<&TabInfo> for TabDto {
    fn from(t: &TabInfo) -> Self {
        TabDto {
            id: t.id.to_string(),
            title: t.title.clone(),
            active_pane_id: t.active_pane.to_string(),
            layout: LayoutDto::from_layout(&t.layout),
            size: t.size.into(),
            panes: t.panes.iter().map(PaneDto::from).collect(),
        }
    }
}

impl From<&WorkspaceView> for WorkspaceDto {
    fn from(w: &WorkspaceView) -> Self {
        WorkspaceDto {
            id: w.id.to_string(),
            name: w.name.clone(),
            cwd: w.cwd.clone(),
            auto_resume: w.auto_resume,
            agent_drive: w.agent_drive,
            active_tab_id: w.active_tab.as_ref().map(ToString::to_string),
            tabs: w.tabs.iter().map(TabDto::from).collect(),
            git: w.git.clone(),
        }
    }
}

impl From<&StateView> for WorkspaceListDto {
    fn from(s: &StateView) -> Self {
        WorkspaceListDto {
            workspaces: s.workspaces.iter().map(WorkspaceDto::from).collect(),
            active_workspace_id: s.active_workspace.as_ref().map(ToString::to_string),
        }
    }
}

// ---- wire → view (clients) ----

fn bad(what: &str, value: &str) -> CommandError {
    CommandError::BadParams(format!("unknown {what} {value:?} in the server's answer"))
}

impl ServerInfoDto {
    /// The typed form.
    pub fn to_view(&self) -> ServerInfo {
        ServerInfo {
            version: self.version.clone(),
            pid: self.pid,
            socket: self.socket.clone(),
            started_at: self.started_at,
            active_window: self.active_window,
        }
    }
}

impl ReadDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<ReadView, CommandError> {
        Ok(ReadView {
            pane: PaneId::parse(&self.pane_id)?,
            lines: self.lines.clone(),
            first_seq: self.first_seq,
            next_seq: self.next_seq,
            oldest_seq: self.oldest_seq,
            truncated: self.truncated,
        })
    }
}

impl PaneDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<PaneInfo, CommandError> {
        let progress = match &self.progress {
            None => None,
            Some(p) => Some(Progress {
                state: ProgressState::parse(&p.state).ok_or_else(|| bad("progress", &p.state))?,
                percent: p.percent,
            }),
        };
        Ok(PaneInfo {
            id: PaneId::parse(&self.id)?,
            title: self.title.clone(),
            cwd: self.cwd.clone(),
            argv: self.argv.clone(),
            state: RestoreState::parse(&self.state).ok_or_else(|| bad("state", &self.state))?,
            lifecycle: Lifecycle::parse(&self.lifecycle)
                .ok_or_else(|| bad("lifecycle", &self.lifecycle))?,
            attention: Attention::parse(&self.attention)
                .ok_or_else(|| bad("attention", &self.attention))?,
            agent: AgentView {
                kind: AgentKind::parse(&self.agent.kind)
                    .ok_or_else(|| bad("agent", &self.agent.kind))?,
                session_id: self.agent.session_id.clone(),
                resume_argv: self.agent.resume_argv.clone(),
            },
            exit_code: self.exit_code,
            exit_signal: self.exit_signal.clone(),
            job: self.job.clone(),
            size: CellSize { cols: self.size.cols, rows: self.size.rows },
            was_running: self.was_running.clone(),
            pid: self.pid,
            created_at: self.created_at,
            progress,
            lifecycle_since: self.lifecycle_since,
            resume: match &self.resume {
                None => None,
                Some(r) => Some(ResumePlan {
                    argv: r.argv.clone(),
                    source: ResumeSource::parse(&r.source)
                        .ok_or_else(|| bad("resume source", &r.source))?,
                }),
            },
            turn: self.turn.to_view()?,
            pending_decision: self
                .pending_decision
                .as_ref()
                .map(DecisionDto::to_view)
                .transpose()?,
            git: self.git.clone(),
        })
    }
}

impl TabDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<TabInfo, CommandError> {
        Ok(TabInfo {
            id: TabId::parse(&self.id)?,
            title: self.title.clone(),
            active_pane: PaneId::parse(&self.active_pane_id)?,
            layout: self.layout.to_layout()?,
            size: CellSize { cols: self.size.cols, rows: self.size.rows },
            panes: self.panes.iter().map(PaneDto::to_view).collect::<Result<_, _>>()?,
        })
    }
}

impl WorkspaceDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<WorkspaceView, CommandError> {
        Ok(WorkspaceView {
            id: WorkspaceId::parse(&self.id)?,
            name: self.name.clone(),
            cwd: self.cwd.clone(),
            auto_resume: self.auto_resume,
            agent_drive: self.agent_drive,
            active_tab: self.active_tab_id.as_deref().map(TabId::parse).transpose()?,
            tabs: self.tabs.iter().map(TabDto::to_view).collect::<Result<_, _>>()?,
            git: self.git.clone(),
        })
    }
}

impl WorkspaceListDto {
    /// The typed form.
    pub fn to_view(&self) -> Result<StateView, CommandError> {
        Ok(StateView {
            workspaces: self
                .workspaces
                .iter()
                .map(WorkspaceDto::to_view)
                .collect::<Result<_, _>>()?,
            active_workspace: self
                .active_workspace_id
                .as_deref()
                .map(WorkspaceId::parse)
                .transpose()?,
        })
    }
}
