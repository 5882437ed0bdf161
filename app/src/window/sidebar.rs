//! The sidebar of workspaces and tasks: one entry per workspace — its name, git branch and
//! dirty mark, its panes' attention and lifecycle summary, the latest message of a blocked or
//! done agent, a pending decision with its buttons, and its tasks with their state and
//! elapsed time — along the window's right edge, and what a click on it does.
//!
//! It owns when the sidebar shows, its width, turning the Store's typed view (and the task
//! list) into a [`SidebarScene`] and the hit test of that scene. It must not change state or
//! draw: the window carries out what a click asks for (`pane.focus`, `pane.decide` through
//! `decisions.rs`), `render/sidebar.rs` draws the scene.

use std::path::Path;
use std::time::Duration;

use berth_engine::ids::{PaneId, WorkspaceId};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use berth_server::persist::task_record::TaskRecord;
use berth_server::view::{DecisionAnswer, DecisionOption, StateView, WorkspaceView};

use super::chrome::{self, GitBranches};
use crate::config::{SidebarMode, SIDEBAR_WIDTH_RANGE};
use crate::render::{
    self, ButtonTone, CellRectU16, Ring, SidebarButton, SidebarLine, SidebarScene, SidebarStyle,
};

/// The fewest columns the panes keep beside the sidebar; a narrower window hides it.
pub const MIN_PANE_COLS: u16 = 20;

/// Whether the sidebar shows: the toggle key's choice when it was pressed, else the config's
/// (`auto`: while more than one workspace exists).
pub fn shown(mode: SidebarMode, toggled: Option<bool>, workspaces: usize) -> bool {
    toggled.unwrap_or(match mode {
        SidebarMode::Auto => workspaces > 1,
        SidebarMode::On => true,
        SidebarMode::Off => false,
    })
}

/// The columns the sidebar takes in a window `grid_cols` wide when `wanted` are asked for:
/// within the allowed range, leaving the panes [`MIN_PANE_COLS`]; 0 when that cannot be.
pub fn width(grid_cols: u16, wanted: u16) -> u16 {
    let (lo, hi) = SIDEBAR_WIDTH_RANGE;
    let room = grid_cols.saturating_sub(MIN_PANE_COLS);
    if room < lo {
        return 0;
    }
    wanted.clamp(lo, hi).min(room)
}

/// The width asked for by dragging the edge to window column `col` of a `grid_cols` wide
/// window (the edge is the sidebar's first column).
pub fn dragged_width(grid_cols: u16, col: u16) -> u16 {
    let (lo, hi) = SIDEBAR_WIDTH_RANGE;
    grid_cols.saturating_sub(col).clamp(lo, hi)
}

/// One task as the sidebar lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidebarTask {
    /// Its id (a click on its line opens its review view).
    pub id: String,
    /// The workspace its worker's tab is in.
    pub workspace: WorkspaceId,
    /// Its label.
    pub label: String,
    /// Its state (`working`, `input_required`, `completed` …).
    pub state: String,
    /// Its worker pane, while it has one.
    pub pane: Option<PaneId>,
    /// When it was created, ms since the epoch.
    pub created_at: u64,
    /// When it last changed, ms since the epoch.
    pub updated_at: u64,
    /// Whether its work would conflict with another task's or its target's (a ⚠ mark).
    pub conflicts: bool,
}

/// The tasks of `records` that belong to a workspace, oldest first.
pub fn tasks_of(records: &[TaskRecord]) -> Vec<SidebarTask> {
    let mut tasks: Vec<SidebarTask> = records
        .iter()
        .filter_map(|r| {
            let workspace = WorkspaceId::parse(r.workspace_id.as_deref()?).ok()?;
            Some(SidebarTask {
                id: r.id.clone(),
                workspace,
                label: if r.label.is_empty() { r.id.clone() } else { r.label.clone() },
                state: r.state.clone(),
                pane: r.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok()),
                created_at: r.created_at,
                updated_at: r.updated_at,
                conflicts: !r.conflicts.is_empty(),
            })
        })
        .collect();
    tasks.sort_by_key(|t| t.created_at);
    tasks
}

/// The branch (or short detached SHA) and dirty mark of the workspace whose cwd is `dir`: the
/// server's git context (`WorkspaceView::git`, kept fresh by its watcher); until the server
/// has probed it, the branch from `.git/HEAD` with no dirty mark. The one place the sidebar
/// learns git context; the window runs no `git` itself.
pub fn git_of(list: &StateView, branches: &mut GitBranches, dir: &Path) -> Option<(String, bool)> {
    let known = list.workspaces.iter().find(|w| Path::new(&w.cwd) == dir).and_then(|w| {
        let git = w.git.as_ref()?;
        let name = git
            .branch
            .clone()
            .or_else(|| git.detached_sha.as_deref().map(|sha| sha.chars().take(7).collect()))?;
        Some((name, git.dirty))
    });
    known.or_else(|| branches.branch(dir).map(|branch| (branch, false)))
}

/// What a line of the sidebar leads to when clicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineTarget {
    /// The pane a click focuses.
    pub pane: Option<PaneId>,
    /// The pane whose decision the line's buttons answer, with the answer of each button.
    pub answers: Option<(PaneId, Vec<DecisionAnswer>)>,
    /// The task whose review view a click opens (a task's line).
    pub review: Option<String>,
}

/// The sidebar as laid out: the scene drawn and what each of its lines leads to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SidebarLayout {
    /// What is drawn.
    pub scene: SidebarScene,
    /// One per line of the scene.
    pub targets: Vec<LineTarget>,
}

/// What a press at a window cell hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SidebarHit {
    /// The edge (the sidebar's first column): a drag resizes it.
    Edge,
    /// A line leading to this pane.
    Focus(PaneId),
    /// A decision button: the pane and the answer.
    Answer(PaneId, DecisionAnswer),
    /// A task's line: its review view.
    Review(String),
    /// The sidebar, where nothing is.
    Inside,
    /// Not the sidebar.
    Outside,
}

/// The lifecycle summary of a workspace's live panes ("2 working, 1 blocked"), empty when it
/// has none with a known lifecycle.
pub fn summary(ws: &WorkspaceView) -> String {
    let panes = || ws.tabs.iter().flat_map(|t| &t.panes).filter(|p| p.state == RestoreState::Live);
    let count = |l: Lifecycle| panes().filter(|p| p.lifecycle == l).count();
    let mut parts = Vec::new();
    for (l, word) in [
        (Lifecycle::Working, "working"),
        (Lifecycle::Blocked, "blocked"),
        (Lifecycle::Done, "done"),
        (Lifecycle::Idle, "idle"),
    ] {
        let n = count(l);
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let sleeping = ws.tabs.iter().flat_map(|t| &t.panes).filter(|p| p.state != RestoreState::Live);
    let n = sleeping.count();
    if n > 0 {
        parts.push(format!("{n} not running"));
    }
    parts.join(", ")
}

/// The attention of a workspace's panes: the strongest ring and the words ("1 needs input,
/// 2 unread"), or nothing when none wants attention.
pub fn attention(ws: &WorkspaceView) -> Option<(Ring, String)> {
    let panes = || ws.tabs.iter().flat_map(|t| &t.panes);
    let count = |a: Attention| panes().filter(|p| p.attention == a).count();
    let mut parts = Vec::new();
    let mut ring = None;
    for (a, word, r) in [
        (Attention::Error, "error", Ring::Error),
        (Attention::NeedsInput, "needs input", Ring::NeedsInput),
        (Attention::Unread, "unread", Ring::Unread),
    ] {
        let n = count(a);
        if n > 0 {
            ring = ring.or(Some(r));
            parts.push(format!("{n} {word}"));
        }
    }
    Some((ring?, parts.join(", ")))
}

/// How long, written short: "<1m", "12m", "1h05m", "3d".
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        _ if s < 60 => "<1m".to_owned(),
        _ if s < 3600 => format!("{}m", s / 60),
        _ if s < 86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d", s / 86_400),
    }
}

/// A task's state as the sidebar writes it.
fn task_state(state: &str) -> &str {
    match state {
        "input_required" => "needs input",
        other => other,
    }
}

/// A server's header line, before the workspace at index `first` of the state (the window
/// links to several servers, `server_set.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupHeader {
    /// The index of the server's first workspace (past the last: it has none).
    pub first: usize,
    /// Its name and how its link stands.
    pub text: String,
}

/// The sidebar of `list` in `rect` (its first column is the edge), with `tasks`, the git
/// context `git` gives for a directory, at wall time `now_ms`; `groups` head each server's
/// workspaces (none when the window has one server).
pub fn layout(
    list: &StateView,
    tasks: &[SidebarTask],
    mut git: impl FnMut(&Path) -> Option<(String, bool)>,
    rect: CellRectU16,
    now_ms: u64,
    groups: &[GroupHeader],
) -> SidebarLayout {
    let room = usize::from(rect.cols.saturating_sub(2));
    let mut lines = Vec::new();
    let mut targets = Vec::new();
    let mut push = |line: SidebarLine, target: LineTarget| {
        lines.push(line);
        targets.push(target);
    };
    let header = |text: &str| SidebarLine {
        text: render::ellipsize(text, room),
        style: SidebarStyle::Server,
        ..SidebarLine::default()
    };
    let nowhere = LineTarget { pane: None, answers: None, review: None };
    for (index, ws) in list.workspaces.iter().enumerate() {
        for g in groups.iter().filter(|g| g.first == index) {
            push(header(&g.text), nowhere.clone());
        }
        if ws.tabs.is_empty() {
            continue;
        }
        let current = list.active_workspace.as_ref() == Some(&ws.id);
        let all = || ws.tabs.iter().flat_map(|t| &t.panes);
        // A click on the entry goes to a pane that wants attention, else the shown pane.
        let shown = ws
            .tabs
            .iter()
            .find(|t| ws.active_tab.as_ref() == Some(&t.id))
            .or(ws.tabs.first())
            .map(|t| t.active_pane.clone());
        let jump = all().find(|p| p.wants_attention()).map(|p| p.id.clone()).or(shown);
        let to = |pane: Option<PaneId>| LineTarget { pane, answers: None, review: None };
        let ring = attention(ws);
        let mut title = ws.name.clone();
        if let Some((branch, dirty)) = git(Path::new(&ws.cwd)) {
            title = format!("{title}  {branch}{}", if dirty { " *" } else { "" });
        }
        let title_room = room.saturating_sub(if ring.is_some() { 2 } else { 0 });
        push(
            SidebarLine {
                text: render::ellipsize(&title, title_room),
                style: SidebarStyle::Title,
                ring: ring.as_ref().map(|(r, _)| *r),
                current,
                buttons: Vec::new(),
            },
            to(jump.clone()),
        );
        let mut status = summary(ws);
        if let Some((_, words)) = &ring {
            status = if status.is_empty() { words.clone() } else { format!("{words} · {status}") };
        }
        if !status.is_empty() {
            push(
                SidebarLine {
                    text: render::ellipsize(&format!(" {status}"), room),
                    style: SidebarStyle::Summary,
                    current,
                    ..SidebarLine::default()
                },
                to(jump.clone()),
            );
        }
        // The latest message of a blocked or done agent.
        let latest = all()
            .filter(|p| matches!(p.lifecycle, Lifecycle::Blocked | Lifecycle::Done))
            .filter_map(|p| {
                let last = p.turn.last.as_ref()?;
                let message =
                    last.last_message.as_deref()?.lines().find(|l| !l.trim().is_empty())?;
                Some((last.ended_at, p.id.clone(), message.trim().to_owned()))
            })
            .max_by_key(|(at, _, _)| *at);
        if let Some((_, pane, message)) = latest {
            push(
                SidebarLine {
                    text: render::ellipsize(&format!(" “{message}”"), room),
                    style: SidebarStyle::Message,
                    current,
                    ..SidebarLine::default()
                },
                to(Some(pane)),
            );
        }
        // Pending decisions: the question, then the answers as buttons.
        for p in all() {
            let Some(d) = p.pending_decision.as_ref().filter(|d| d.answerable) else { continue };
            let what = if d.tool.is_empty() { "permission".to_owned() } else { d.tool.clone() };
            push(
                SidebarLine {
                    text: render::ellipsize(&format!(" ? asks to run {what}"), room),
                    style: SidebarStyle::Decision,
                    current,
                    ..SidebarLine::default()
                },
                to(Some(p.id.clone())),
            );
            let (buttons, answers) = decision_buttons(&d.options, room).into_iter().unzip();
            push(
                SidebarLine {
                    style: SidebarStyle::Decision,
                    current,
                    buttons,
                    ..SidebarLine::default()
                },
                LineTarget {
                    pane: Some(p.id.clone()),
                    answers: Some((p.id.clone(), answers)),
                    review: None,
                },
            );
        }
        for task in tasks.iter().filter(|t| t.workspace == ws.id) {
            let end = if matches!(task.state.as_str(), "working" | "pending" | "input_required") {
                now_ms
            } else {
                task.updated_at
            };
            let took = elapsed(Duration::from_millis(end.saturating_sub(task.created_at)));
            let mark = if task.conflicts { " ⚠" } else { "" };
            let tail = format!("{mark} {} {took}", task_state(&task.state));
            let label_room = room.saturating_sub(render::str_width(&tail) + 3);
            let text = format!("  ▸ {}{tail}", render::ellipsize(&task.label, label_room));
            push(
                SidebarLine {
                    text: render::ellipsize(&text, room),
                    style: SidebarStyle::Task,
                    current,
                    ..SidebarLine::default()
                },
                LineTarget {
                    review: Some(task.id.clone()),
                    ..to(task.pane.clone().or_else(|| jump.clone()))
                },
            );
        }
        push(SidebarLine { style: SidebarStyle::Blank, ..SidebarLine::default() }, to(None));
    }
    // Servers with no workspace (or none yet: not connected) come last.
    for g in groups.iter().filter(|g| g.first >= list.workspaces.len()) {
        push(header(&g.text), nowhere.clone());
    }
    SidebarLayout { scene: SidebarScene { rect, lines }, targets }
}

/// The word a decision's button is shortened to when its label does not fit.
fn short_label(answer: DecisionAnswer) -> &'static str {
    match answer {
        DecisionAnswer::Allow => "Allow",
        DecisionAnswer::Always => "Always",
        DecisionAnswer::Deny => "Deny",
    }
}

/// Buttons labelled `labels` from text column `start` on, one blank between them, each label
/// padded with a blank either side; `None` when they do not fit in `room` columns.
fn place_buttons(
    start: usize,
    labels: &[(DecisionAnswer, String)],
    room: usize,
) -> Option<Vec<(SidebarButton, DecisionAnswer)>> {
    let mut col = start;
    let mut row = Vec::new();
    for (answer, text) in labels {
        let label = format!(" {text} ");
        let w = render::str_width(&label);
        if col + w > room {
            return None;
        }
        let cols = u16::try_from(col).ok()?..u16::try_from(col + w).ok()?;
        let tone = match answer {
            DecisionAnswer::Allow => ButtonTone::Allow,
            DecisionAnswer::Always => ButtonTone::Always,
            DecisionAnswer::Deny => ButtonTone::Deny,
        };
        row.push((SidebarButton { label, cols, tone }, *answer));
        col += w + 1;
    }
    Some(row)
}

/// A decision's buttons on one sidebar row of `room` text columns, with the answer of each.
/// Deny is never dropped: labels shorten first — the "always" rule ellipsised ("Always allow
/// Bash(car…"), the others to a word ("Allow", "Deny"), then every one to a word ("Always");
/// only then does "always" go (the card and its key still offer it), then the row's leading
/// blank, and in a sidebar too narrow even for that, Deny stays alone.
pub fn decision_buttons(
    options: &[DecisionOption],
    room: usize,
) -> Vec<(SidebarButton, DecisionAnswer)> {
    let full: Vec<(DecisionAnswer, String)> =
        options.iter().map(|o| (o.answer, o.label.clone())).collect();
    let short = |keep: &dyn Fn(DecisionAnswer) -> bool| -> Vec<(DecisionAnswer, String)> {
        let kept = full.iter().filter(|(a, _)| keep(*a));
        kept.map(|(a, _)| (*a, short_label(*a).to_owned())).collect()
    };
    let mut tiers = vec![(1, full.clone())];
    // The "always" label ellipsised into what the others leave, those full, then short.
    for others_short in [false, true] {
        let mut labels: Vec<(DecisionAnswer, String)> = full
            .iter()
            .map(|(a, l)| match a {
                DecisionAnswer::Always => (*a, l.clone()),
                _ if others_short => (*a, short_label(*a).to_owned()),
                _ => (*a, l.clone()),
            })
            .collect();
        let Some(i) = labels.iter().position(|(a, _)| *a == DecisionAnswer::Always) else {
            continue;
        };
        let others: usize = labels
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (_, l))| render::str_width(l) + 3)
            .sum();
        // The leading blank, the others with their padding and gaps, its own padding.
        let avail = room.saturating_sub(1 + others + 2);
        if avail >= render::str_width("Always…") {
            labels[i].1 = render::ellipsize(&labels[i].1, avail);
            tiers.push((1, labels));
        }
    }
    tiers.push((1, short(&|_| true)));
    let no_always = short(&|a| a != DecisionAnswer::Always);
    tiers.push((1, no_always.clone()));
    tiers.push((0, no_always));
    let deny = short(&|a| a == DecisionAnswer::Deny);
    let alone = if deny.is_empty() { short(&|_| true).into_iter().take(1).collect() } else { deny };
    tiers.push((0, alone.clone()));
    for (start, labels) in &tiers {
        if let Some(row) = place_buttons(*start, labels, room) {
            return row;
        }
    }
    // Narrower than " Deny ": the word itself ellipsised.
    let squeezed: Vec<(DecisionAnswer, String)> = alone
        .into_iter()
        .map(|(a, l)| (a, render::ellipsize(&l, room.saturating_sub(2))))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    place_buttons(0, &squeezed, room).unwrap_or_default()
}

/// What a press at window cell (`col`, `row`) hits on the sidebar laid out as `laid`.
pub fn hit(laid: &SidebarLayout, col: u16, row: u16) -> SidebarHit {
    let r = laid.scene.rect;
    if col < r.col || col >= r.col + r.cols || row < r.row || row >= r.row + r.rows {
        return SidebarHit::Outside;
    }
    if col == r.col {
        return SidebarHit::Edge;
    }
    let at = usize::from(row - r.row);
    let (Some(line), Some(target)) = (laid.scene.lines.get(at), laid.targets.get(at)) else {
        return SidebarHit::Inside;
    };
    let text_col = col - r.col - 1;
    if let Some((pane, answers)) = &target.answers {
        let pressed = line.buttons.iter().position(|b| b.cols.contains(&text_col));
        return match pressed.and_then(|i| answers.get(i)) {
            Some(answer) => SidebarHit::Answer(pane.clone(), *answer),
            None => SidebarHit::Inside,
        };
    }
    if let Some(task) = &target.review {
        return SidebarHit::Review(task.clone());
    }
    target.pane.clone().map_or(SidebarHit::Inside, SidebarHit::Focus)
}

/// The sidebar's rectangle in a window of `grid_cols` × `grid_rows` cells when it is `cols`
/// wide: along the right edge, below the tab bar.
pub fn rect(grid_cols: u16, grid_rows: u16, cols: u16) -> CellRectU16 {
    let top = chrome::TAB_BAR_ROWS;
    CellRectU16::new(grid_cols.saturating_sub(cols), top, cols, grid_rows.saturating_sub(top))
}

/// The window's sidebar state: the toggle key's choice, the dragged width (remembered across
/// restarts in `prefs.rs`'s file), and the git lookups' cache.
#[derive(Debug, Default)]
pub struct SidebarState {
    /// Shown or hidden by the toggle key (`None`: as the config says).
    pub toggled: Option<bool>,
    /// The width the edge was dragged to, this time or before (`None`: the config's).
    pub dragged: Option<u16>,
    /// Where the dragged width is remembered (`None`: nowhere).
    pub remember_in: Option<std::path::PathBuf>,
    /// How many workspaces the last frame's view had (for `auto`).
    pub workspaces: usize,
    /// Branches and dirty marks of workspace directories.
    pub git: std::cell::RefCell<GitBranches>,
}

impl SidebarState {
    /// The state a window starts with: the width remembered in the file at `path` (clamped),
    /// if any.
    pub fn remembered(path: Option<std::path::PathBuf>) -> Self {
        let dragged = path.as_deref().map(super::prefs::load).and_then(|p| p.sidebar_width());
        Self { dragged, remember_in: path, ..Self::default() }
    }

    /// A drag of the edge ended: its width is remembered (written off this thread).
    pub fn drag_ended(&self) {
        if let (Some(path), Some(cols)) = (&self.remember_in, self.dragged) {
            super::prefs::remember_sidebar_width(path.clone(), cols);
        }
    }

    /// The columns the sidebar takes in a window `grid_cols` wide (0 when hidden).
    pub fn cols(&self, mode: SidebarMode, configured: u16, grid_cols: u16) -> u16 {
        if !shown(mode, self.toggled, self.workspaces) {
            return 0;
        }
        width(grid_cols, self.dragged.unwrap_or(configured))
    }

    /// The toggle key: flips whether it shows.
    pub fn toggle(&mut self, mode: SidebarMode) {
        self.toggled = Some(!shown(mode, self.toggled, self.workspaces));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::fixtures;
    use berth_engine::agents::AgentKind;
    use berth_engine::ids::TabId;
    use berth_engine::layout::{CellSize, Layout};
    use berth_server::agents::turns::{LifecycleSource, TurnRecord};
    use berth_server::view::{AgentView, DecisionOption, PaneInfo, PendingDecision, TabInfo};

    fn pane(id: &str, lifecycle: Lifecycle, attention: Attention) -> PaneInfo {
        PaneInfo {
            title: id.into(),
            cwd: "/w".into(),
            lifecycle,
            attention,
            agent: AgentView { kind: AgentKind::Claude, session_id: None, resume_argv: None },
            ..fixtures::pane_info(id)
        }
    }

    fn ws(id: &str, name: &str, panes: Vec<PaneInfo>) -> WorkspaceView {
        let tab = TabInfo {
            id: TabId::parse(&format!("tab_{id}")).expect("a tab id"),
            title: String::new(),
            active_pane: panes[0].id.clone(),
            layout: Layout::single(panes[0].id.clone()),
            size: CellSize { cols: 80, rows: 24 },
            panes,
        };
        WorkspaceView {
            id: WorkspaceId::parse(&format!("ws_{id}")).expect("a workspace id"),
            name: name.into(),
            cwd: format!("/src/{name}"),
            auto_resume: false,
            agent_drive: false,
            active_tab: Some(tab.id.clone()),
            tabs: vec![tab],
            git: None,
        }
    }

    fn list() -> StateView {
        let mut done = pane("pane_3", Lifecycle::Done, Attention::Unread);
        done.turn.last = Some(TurnRecord {
            started_at: Some(0),
            ended_at: 10,
            ended_as: Lifecycle::Done,
            learned_from: LifecycleSource::Hook,
            last_message: Some("\nAll 12 tests pass.\nsecond line".into()),
        });
        let mut asking = pane("pane_4", Lifecycle::Blocked, Attention::NeedsInput);
        asking.pending_decision = Some(PendingDecision {
            tool: "Bash".into(),
            options: vec![
                DecisionOption { label: "Allow".into(), answer: DecisionAnswer::Allow },
                DecisionOption { label: "Deny".into(), answer: DecisionAnswer::Deny },
            ],
            answerable: true,
            id: berth_engine::ids::DecisionId::new(),
            agent: AgentKind::Claude,
            prompt: String::new(),
            detail: String::new(),
            received_at: 0,
        });
        StateView {
            workspaces: vec![
                ws(
                    "a",
                    "berth",
                    vec![
                        pane("pane_1", Lifecycle::Working, Attention::None),
                        pane("pane_2", Lifecycle::Working, Attention::None),
                        asking,
                    ],
                ),
                ws("b", "site", vec![done]),
            ],
            active_workspace: Some(WorkspaceId::parse("ws_a").expect("a workspace id")),
        }
    }

    fn task(ws: &str, label: &str, state: &str, pane: Option<&str>) -> SidebarTask {
        SidebarTask {
            id: format!("task_{label}"),
            workspace: WorkspaceId::parse(ws).expect("a workspace id"),
            label: label.into(),
            state: state.into(),
            pane: pane.map(|p| PaneId::parse(p).expect("a pane id")),
            created_at: 1_000,
            updated_at: 61_000,
            conflicts: false,
        }
    }

    fn git(dir: &Path) -> Option<(String, bool)> {
        match dir.to_str()? {
            "/src/berth" => Some(("main".into(), true)),
            "/src/site" => Some(("feature/x".into(), false)),
            _ => None,
        }
    }

    fn texts(laid: &SidebarLayout) -> Vec<String> {
        laid.scene.lines.iter().map(|l| l.text.clone()).collect()
    }

    /// With several servers, each one's header comes before its first workspace, a server
    /// with none (not connected yet) at the end; a header leads nowhere when clicked.
    #[test]
    fn server_headers_head_their_workspaces() {
        let list = list();
        let rect = CellRectU16::new(68, 1, 32, 30);
        let groups = [
            GroupHeader { first: 0, text: "▣ local · connected".into() },
            GroupHeader { first: 1, text: "▣ devbox · reconnecting in 4 s".into() },
            GroupHeader { first: list.workspaces.len(), text: "▣ gpu · unreachable".into() },
        ];
        let laid = layout(&list, &[], git, rect, 0, &groups);
        let lines = texts(&laid);
        let at = |text: &str| lines.iter().position(|l| l.contains(text)).unwrap_or(usize::MAX);
        let (local, devbox, gpu) = (at("▣ local"), at("▣ devbox"), at("▣ gpu"));
        let (first_ws, second_ws) = (at(&list.workspaces[0].name), at(&list.workspaces[1].name));
        assert!(local < first_ws && first_ws < devbox && devbox < second_ws, "{lines:?}");
        assert_eq!(gpu, lines.len() - 1, "{lines:?}");
        assert_eq!(laid.scene.lines[devbox].style, SidebarStyle::Server);
        assert_eq!(laid.targets[devbox].pane, None);
        // One server: no headers, as before.
        let alone = layout(&list, &[], git, rect, 0, &[]);
        assert!(texts(&alone).iter().all(|l| !l.contains('▣')), "{:?}", texts(&alone));
    }

    #[test]
    fn summaries_count_lifecycles_and_attention() {
        let list = list();
        assert_eq!(summary(&list.workspaces[0]), "2 working, 1 blocked");
        assert_eq!(summary(&list.workspaces[1]), "1 done");
        let (ring, words) = attention(&list.workspaces[0]).expect("attention");
        assert_eq!((ring, words.as_str()), (Ring::NeedsInput, "1 needs input"));
        let (ring, _) = attention(&list.workspaces[1]).expect("attention");
        assert_eq!(ring, Ring::Unread);
        let mut quiet = list.workspaces[0].clone();
        quiet.tabs[0].panes.iter_mut().for_each(|p| p.attention = Attention::None);
        assert_eq!(attention(&quiet), None);
        assert_eq!(elapsed(Duration::from_secs(5)), "<1m");
        assert_eq!(elapsed(Duration::from_secs(125)), "2m");
        assert_eq!(elapsed(Duration::from_secs(3_900)), "1h05m");
        assert_eq!(elapsed(Duration::from_secs(200_000)), "2d");
    }

    #[test]
    fn an_entry_per_workspace_with_branch_message_decision_and_tasks() {
        let list = list();
        let tasks = [
            task("ws_a", "fix the parser", "working", Some("pane_2")),
            task("ws_b", "docs", "completed", None),
        ];
        let rect = CellRectU16::new(68, 1, 32, 30);
        let laid = layout(&list, &tasks, git, rect, 181_000, &[]);
        assert_eq!(
            texts(&laid),
            [
                "berth  main *",
                " 1 needs input · 2 working, 1 blocked",
                " ? asks to run Bash",
                "",
                "  ▸ fix the parser working 3m",
                "",
                "site  feature/x",
                " 1 unread · 1 done",
                " “All 12 tests pass.”",
                "  ▸ docs completed 1m",
                "",
            ]
            .map(|s| render::ellipsize(s, 30))
        );
        let lines = &laid.scene.lines;
        assert_eq!(lines[0].ring, Some(Ring::NeedsInput));
        assert!(lines[0].current && !lines[6].current);
        assert_eq!(lines[6].ring, Some(Ring::Unread));
        // The decision's buttons, one blank apart, answer exactly that pane's decision.
        let buttons: Vec<&str> = lines[3].buttons.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(buttons, [" Allow ", " Deny "]);
        assert_eq!(lines[3].buttons[0].cols, 1..8);
        assert_eq!(lines[3].buttons[1].cols, 9..15);
        assert_eq!(laid.targets.len(), lines.len());
    }

    /// A claude request's three options, its rule as long as the issue's.
    fn claude_options() -> Vec<DecisionOption> {
        vec![
            DecisionOption { label: "Allow once".into(), answer: DecisionAnswer::Allow },
            DecisionOption {
                label: "Always allow Bash(cargo test:*)".into(),
                answer: DecisionAnswer::Always,
            },
            DecisionOption { label: "Deny".into(), answer: DecisionAnswer::Deny },
        ]
    }

    fn labels(row: &[(SidebarButton, DecisionAnswer)]) -> Vec<&str> {
        row.iter().map(|(b, _)| b.label.trim()).collect()
    }

    #[test]
    fn deny_is_never_dropped_labels_shorten_instead() {
        use DecisionAnswer::{Allow, Always, Deny};
        let options = claude_options();
        // Wide: every label in full.
        let wide = decision_buttons(&options, 60);
        assert_eq!(labels(&wide), ["Allow once", "Always allow Bash(cargo test:*)", "Deny"]);
        // The default 32-column sidebar (30 text columns), as at 1000 and 1500 px: the rule
        // is ellipsised; Deny stays.
        let default = decision_buttons(&options, 30);
        assert_eq!(labels(&default), ["Allow once", "Always…", "Deny"]);
        let wider = decision_buttons(&options, 40);
        assert_eq!(labels(&wider), ["Allow once", "Always allow Bas…", "Deny"]);
        // Then the others shorten to a word.
        assert_eq!(labels(&decision_buttons(&options, 29)), ["Allow", "Always all…", "Deny"]);
        assert_eq!(labels(&decision_buttons(&options, 24)), ["Allow", "Always", "Deny"]);
        assert_eq!(labels(&decision_buttons(&options, 16)), ["Allow", "Deny"]);
        assert_eq!(labels(&decision_buttons(&options, 14)), ["Allow", "Deny"]);
        assert_eq!(labels(&decision_buttons(&options, 8)), ["Deny"]);
        assert_eq!(labels(&decision_buttons(&options, 4)), ["D…"]);
        for room in 4..80 {
            let row = decision_buttons(&options, room);
            let answers: Vec<DecisionAnswer> = row.iter().map(|(_, a)| *a).collect();
            assert!(answers.contains(&Deny), "room {room}: {:?}", labels(&row));
            // In order, within the room, apart, each as wide as its label.
            assert!(answers.windows(2).all(|w| (w[0], w[1]) != (Deny, Allow)), "room {room}");
            assert!(row.iter().all(|(b, _)| usize::from(b.cols.end) <= room), "room {room}");
            assert!(row.windows(2).all(|w| w[0].0.cols.end < w[1].0.cols.start), "room {room}");
            for (b, _) in &row {
                assert_eq!(usize::from(b.cols.end - b.cols.start), render::str_width(&b.label));
            }
            if room >= 24 {
                assert_eq!(answers, [Allow, Always, Deny], "room {room}");
            }
        }
    }

    #[test]
    fn the_default_sidebar_lays_out_deny_with_a_long_rule() {
        let mut list = list();
        let asking = &mut list.workspaces[0].tabs[0].panes[2];
        asking.pending_decision.as_mut().expect("a decision").options = claude_options();
        for grid_cols in [111, 166] {
            // 1000 and 1500 px windows of 9-pixel cells, the sidebar at its default width.
            let rect = rect(grid_cols, 40, width(grid_cols, 32));
            let laid = layout(&list, &[], git, rect, 0, &[]);
            let row = laid.scene.lines.iter().position(|l| !l.buttons.is_empty());
            let row = row.expect("a row of buttons");
            let answers = &laid.targets[row].answers.as_ref().expect("answers").1;
            assert_eq!(answers.last(), Some(&DecisionAnswer::Deny), "{grid_cols} columns");
            let deny = laid.scene.lines[row].buttons.last().expect("a button");
            assert_eq!(deny.label, " Deny ");
            // A click on Deny answers deny.
            let col = rect.col + 1 + deny.cols.start + 1;
            let pane = asking_id();
            assert_eq!(
                hit(&laid, col, rect.row + u16::try_from(row).expect("a row")),
                SidebarHit::Answer(pane, DecisionAnswer::Deny)
            );
        }
    }

    fn asking_id() -> PaneId {
        PaneId::parse("pane_4").expect("a pane id")
    }

    #[test]
    fn hits_focus_panes_answer_decisions_and_grab_the_edge() {
        let list = list();
        let tasks = [task("ws_a", "fix the parser", "working", Some("pane_2"))];
        let rect = CellRectU16::new(68, 1, 32, 30);
        let laid = layout(&list, &tasks, git, rect, 181_000, &[]);
        let focus = |p: &str| SidebarHit::Focus(PaneId::parse(p).expect("a pane id"));
        assert_eq!(hit(&laid, 67, 1), SidebarHit::Outside);
        assert_eq!(hit(&laid, 68, 5), SidebarHit::Edge);
        // The title goes to the pane that wants attention.
        assert_eq!(hit(&laid, 70, 1), focus("pane_4"));
        // The task line opens its review view.
        assert_eq!(hit(&laid, 70, 5), SidebarHit::Review("task_fix the parser".into()));
        // The second workspace's title goes to its pane.
        assert_eq!(hit(&laid, 70, 7), focus("pane_3"));
        // Buttons: text columns start one past the edge.
        let pane_4 = PaneId::parse("pane_4").expect("a pane id");
        assert_eq!(
            hit(&laid, 69 + 2, 4),
            SidebarHit::Answer(pane_4.clone(), DecisionAnswer::Allow)
        );
        assert_eq!(hit(&laid, 69 + 10, 4), SidebarHit::Answer(pane_4, DecisionAnswer::Deny));
        assert_eq!(hit(&laid, 69 + 8, 4), SidebarHit::Inside);
        // Below the last line.
        assert_eq!(hit(&laid, 70, 29), SidebarHit::Inside);
    }

    #[test]
    fn shown_and_width() {
        assert!(!shown(SidebarMode::Auto, None, 1));
        assert!(shown(SidebarMode::Auto, None, 2));
        assert!(shown(SidebarMode::On, None, 1));
        assert!(!shown(SidebarMode::Off, None, 3));
        assert!(shown(SidebarMode::Off, Some(true), 1));
        assert!(!shown(SidebarMode::On, Some(false), 1));
        let mut state = SidebarState { workspaces: 2, ..SidebarState::default() };
        assert_eq!(state.cols(SidebarMode::Auto, 32, 120), 32);
        state.toggle(SidebarMode::Auto);
        assert_eq!(state.cols(SidebarMode::Auto, 32, 120), 0);
        state.toggle(SidebarMode::Auto);
        state.dragged = Some(dragged_width(120, 80));
        assert_eq!(state.cols(SidebarMode::Auto, 32, 120), 40);
        // The panes keep their columns: a narrow window gives the sidebar less, or none.
        assert_eq!(width(50, 40), 30);
        assert_eq!(width(30, 40), 0);
        assert_eq!(width(200, 500), SIDEBAR_WIDTH_RANGE.1);
        assert_eq!(dragged_width(120, 119), SIDEBAR_WIDTH_RANGE.0);
    }

    #[test]
    fn drag_math_follows_the_pointer_within_the_range() {
        let (lo, hi) = SIDEBAR_WIDTH_RANGE;
        // The edge under the pointer: the sidebar spans from that column to the right edge.
        assert_eq!(dragged_width(200, 160), 40);
        assert_eq!(dragged_width(200, 200 - lo), lo);
        // Past either end: clamped, never zero or wider than allowed.
        assert_eq!(dragged_width(200, 0), hi);
        assert_eq!(dragged_width(200, 250), lo);
        assert_eq!(dragged_width(0, 0), lo);
        // A dragged width the window cannot afford leaves the panes their columns.
        assert_eq!(width(60, dragged_width(60, 0)), 60 - MIN_PANE_COLS);
    }

    #[test]
    fn the_remembered_width_is_read_back_clamped() {
        let (lo, hi) = SIDEBAR_WIDTH_RANGE;
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join(crate::window::prefs::FILE);
        assert_eq!(SidebarState::remembered(Some(path.clone())).dragged, None);
        assert_eq!(SidebarState::remembered(None).dragged, None);
        std::fs::write(&path, r#"{"sidebar_width": 37}"#).expect("write");
        assert_eq!(SidebarState::remembered(Some(path.clone())).dragged, Some(37));
        std::fs::write(&path, r#"{"sidebar_width": 100000}"#).expect("write");
        assert_eq!(SidebarState::remembered(Some(path.clone())).dragged, Some(hi));
        std::fs::write(&path, r#"{"sidebar_width": 1}"#).expect("write");
        let state = SidebarState::remembered(Some(path.clone()));
        assert_eq!(state.dragged, Some(lo));
        std::fs::write(&path, "{{{").expect("write");
        assert_eq!(SidebarState::remembered(Some(path.clone())).dragged, None);
        // A drag's end writes the width where the next window reads it.
        let mut state = SidebarState::remembered(Some(path.clone()));
        state.dragged = Some(dragged_width(120, 80));
        state.drag_ended();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while SidebarState::remembered(Some(path.clone())).dragged != Some(40) {
            assert!(std::time::Instant::now() < deadline, "the width was not remembered");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn tasks_come_from_records_with_a_workspace() {
        let record = |id: &str, ws: Option<&str>, created: u64| TaskRecord {
            id: id.into(),
            label: String::new(),
            state: "working".into(),
            workspace_id: ws.map(str::to_owned),
            pane_id: Some("pane_9".into()),
            created_at: created,
            ..TaskRecord::default()
        };
        let tasks = tasks_of(&[
            record("task_b", Some("ws_a"), 20),
            record("task_a", Some("ws_a"), 10),
            record("task_c", None, 5),
        ]);
        let labels: Vec<&str> = tasks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["task_a", "task_b"]);
        assert_eq!(tasks[0].pane, PaneId::parse("pane_9").ok());
        assert!(!tasks[0].conflicts);
    }

    /// A task whose work conflicts with another's (or its target's) is marked on its line.
    #[test]
    fn a_conflicting_task_is_marked() {
        let list = list();
        let clash = SidebarTask { conflicts: true, ..task("ws_a", "clash", "completed", None) };
        let tasks = [clash, task("ws_a", "calm", "completed", None)];
        let laid = layout(&list, &tasks, git, CellRectU16::new(68, 1, 32, 30), 181_000, &[]);
        let text = texts(&laid);
        let line =
            |label: &str| text.iter().find(|t| t.contains(label)).cloned().unwrap_or_default();
        assert!(line("clash").contains("clash ⚠ completed"), "{text:?}");
        assert!(!line("calm").contains('⚠'), "{text:?}");
    }
}
