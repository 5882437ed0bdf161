//! Between the Store and the snapshot: taking a snapshot, rebuilding from one, and resuming
//! tombstones.
//!
//! Owns the restore rules of DESIGN.md §5: every pane comes back `RESTORED`, `RESUMABLE` or
//! `EXITED` with its tail, and nothing runs again unless the user asks (`pane.resume`) or the
//! workspace's `auto_resume` allows an adapter-built resume command. It must not write files;
//! `persistence` does that.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use berth_engine::agents::{self, AgentKind};
use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::layout::{CellSize, Layout, SplitDir};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use berth_engine::terminal::{PaneTerminal, ReadRequest, TermSize, DEFAULT_SCROLLBACK};

use crate::commands::SpawnRequest;
use crate::error::CommandError;
use crate::notifications::StoredNotification;
use crate::pane::PaneShared;
use crate::persist::redact::{RedactedLine, RedactedTail};
use crate::persist::stamp::now_ms;
use crate::persist::{
    AgentRecord, LayoutRecord, NotificationRecord, PaneRecord, SizeRecord, Snapshot,
    SplitDirRecord, TabRecord, WorkspaceRecord, SNAPSHOT_VERSION,
};
use crate::store::{AgentInfo, Pane, Store, Tab, Tombstone, Workspace};
use crate::view::{ResumePlan, ResumeSource};

/// The most bytes of scrollback kept as a pane's tail.
pub const TAIL_BYTES: usize = 64 << 10;

/// A pane whose tail must be written with the snapshot.
pub struct TailJob {
    /// The pane.
    pub pane: PaneId,
    /// Its terminal.
    pub shared: Arc<PaneShared>,
    /// Its content generation when the job was made.
    pub content_gen: u64,
}

/// The last [`TAIL_BYTES`] of a terminal's scrollback and screen, with styles, as lines.
pub fn tail_of(term: &PaneTerminal) -> Vec<String> {
    let result =
        term.read(&ReadRequest { since: None, last: Some(DEFAULT_SCROLLBACK + 500), ansi: true });
    let mut total = 0;
    let mut keep = result.lines.len();
    for line in result.lines.iter().rev() {
        total += line.len() + 2;
        if total > TAIL_BYTES {
            break;
        }
        keep -= 1;
    }
    result.lines[keep..].to_vec()
}

/// A pane's history lines as rendered for its last tail, so the next save renders only what is
/// new: history lines render the same while the terminal's history epoch stays the same.
#[derive(Debug, Default)]
pub struct TailCache {
    /// The terminal's history epoch the lines belong to.
    epoch: u64,
    /// The number of the first history line not in `lines`.
    history_end: u64,
    /// Rendered history lines, redacted, oldest first, numbered up to `history_end - 1`.
    lines: VecDeque<RedactedLine>,
    /// Their size as [`tail_of`] counts it (each line plus 2).
    bytes: usize,
}

impl TailCache {
    fn first_seq(&self) -> u64 {
        self.history_end - self.lines.len() as u64
    }

    fn pop_front(&mut self) {
        if let Some(line) = self.lines.pop_front() {
            self.bytes -= line.source_len() + 2;
        }
    }
}

/// [`tail_of`], the same lines (redacted, as a tail file keeps them), rendering only the lines
/// added to the history since the last call with the same `cache` (plus the screen). On the
/// alternate screen, after a resize or after the scrollback was cleared it renders everything,
/// as [`tail_of`] does.
pub fn tail_of_cached(term: &PaneTerminal, cache: &mut Option<TailCache>) -> Vec<String> {
    let mut out = Vec::new();
    cached_tail_lines(term, cache, &mut |line| out.push(line.as_str().to_owned()));
    out
}

/// The tail [`tail_of_cached`] makes, as the bytes of its file: its history lines redacted
/// once, as they enter the cache, and copied straight into the file's bytes (a save of 100
/// tails after a line in each renders and redacts 100 screens, not 100 × 64 KiB; issue 28).
pub fn tail_bytes_cached(term: &PaneTerminal, cache: &mut Option<TailCache>) -> RedactedTail {
    let mut out = RedactedTail::with_capacity(TAIL_BYTES + 4096);
    cached_tail_lines(term, cache, &mut |line| out.push(line));
    out
}

/// Hands the lines of [`tail_of_cached`] to `emit`, oldest first.
fn cached_tail_lines(
    term: &PaneTerminal,
    cache: &mut Option<TailCache>,
    emit: &mut dyn FnMut(&RedactedLine),
) {
    let uncached = |emit: &mut dyn FnMut(&RedactedLine)| {
        for line in tail_of(term) {
            emit(&RedactedLine::new(&line));
        }
    };
    if term.alt_screen() {
        *cache = None;
        return uncached(emit);
    }
    let epoch = term.history_epoch();
    let base = term.screen_base_seq();
    let reusable = cache.as_ref().is_some_and(|c| c.epoch == epoch && c.history_end <= base);
    let (mut fresh, mut result) = match cache.take().filter(|_| reusable) {
        Some(c) => {
            let spec = ReadRequest { since: Some(c.history_end), last: None, ansi: true };
            (c, term.read(&spec))
        }
        None => {
            let spec =
                ReadRequest { since: None, last: Some(DEFAULT_SCROLLBACK + 500), ansi: true };
            let result = term.read(&spec);
            let c = TailCache { epoch, history_end: result.first_seq, ..TailCache::default() };
            (c, result)
        }
    };
    if result.first_seq != fresh.history_end {
        // Lines were lost between the cache and now (or the numbers moved): start over.
        *cache = None;
        return uncached(emit);
    }
    // Lines numbered below `base` are history now: cache them; the rest is the screen.
    let history = usize::try_from(base - fresh.history_end).unwrap_or(usize::MAX);
    let screen: Vec<RedactedLine> = result
        .lines
        .split_off(history.min(result.lines.len()))
        .iter()
        .map(|line| RedactedLine::new(line))
        .collect();
    let new_history = result.lines.len();
    // Only the newest TAIL_BYTES of new history can be kept: older lines are not redacted.
    let mut skip = new_history;
    let mut newest = 0;
    for line in result.lines.iter().rev() {
        if newest + line.len() + 2 > TAIL_BYTES {
            break;
        }
        newest += line.len() + 2;
        skip -= 1;
    }
    if skip > 0 {
        fresh.lines.clear();
        fresh.bytes = 0;
    }
    for line in result.lines.iter().skip(skip) {
        let line = RedactedLine::new(line);
        fresh.bytes += line.source_len() + 2;
        fresh.lines.push_back(line);
    }
    fresh.history_end = base;
    while fresh.bytes > TAIL_BYTES
        || (!fresh.lines.is_empty() && fresh.first_seq() < result.oldest_seq)
    {
        fresh.pop_front();
    }
    // The longest suffix of history + screen within TAIL_BYTES, as `tail_of` keeps it.
    let mut total = 0;
    let mut keep_screen = screen.len();
    for line in screen.iter().rev() {
        if total + line.source_len() + 2 > TAIL_BYTES {
            break;
        }
        total += line.source_len() + 2;
        keep_screen -= 1;
    }
    if keep_screen == 0 {
        let mut keep_history = fresh.lines.len();
        for line in fresh.lines.iter().rev() {
            if total + line.source_len() + 2 > TAIL_BYTES {
                break;
            }
            total += line.source_len() + 2;
            keep_history -= 1;
        }
        fresh.lines.iter().skip(keep_history).for_each(&mut *emit);
    }
    screen.iter().skip(keep_screen).for_each(&mut *emit);
    *cache = Some(fresh);
}

/// Encodes tail lines as the bytes of a tail file (`\r\n` line ends, so that feeding them to a
/// terminal puts each on its own line).
pub fn encode_tail(lines: &[String]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 2).sum());
    for line in lines {
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(b"\x1b[0m\r\n");
    }
    bytes
}

/// Decodes a tail file into lines.
pub fn decode_tail(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .map(|l| l.strip_suffix("\x1b[0m").unwrap_or(l).to_owned())
        .collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

fn layout_record(layout: &Layout) -> LayoutRecord {
    match layout {
        Layout::Pane(id) => LayoutRecord::Pane(id.to_string()),
        Layout::Split { dir, ratio, first, second } => LayoutRecord::split(
            match dir {
                SplitDir::Right => SplitDirRecord::Right,
                SplitDir::Down => SplitDirRecord::Down,
            },
            *ratio,
            layout_record(first),
            layout_record(second),
        ),
    }
}

fn layout_from_record(record: &LayoutRecord) -> Option<Layout> {
    Some(match record {
        LayoutRecord::Pane(id) => Layout::Pane(PaneId::parse(id).ok()?),
        LayoutRecord::Split(split) => Layout::Split {
            dir: match split.dir {
                SplitDirRecord::Right => SplitDir::Right,
                SplitDirRecord::Down => SplitDir::Down,
            },
            ratio: split.ratio,
            first: Box::new(layout_from_record(&split.first)?),
            second: Box::new(layout_from_record(&split.second)?),
        },
    })
}

fn parse_state(s: &str) -> RestoreState {
    match s {
        "LIVE" => RestoreState::Live,
        "RESUMABLE" => RestoreState::Resumable,
        "EXITED" => RestoreState::Exited,
        _ => RestoreState::Restored,
    }
}

fn parse_lifecycle(s: &str) -> Lifecycle {
    match s {
        "starting" => Lifecycle::Starting,
        "working" => Lifecycle::Working,
        "blocked" => Lifecycle::Blocked,
        "done" => Lifecycle::Done,
        "exited" => Lifecycle::Exited,
        _ => Lifecycle::Idle,
    }
}

fn parse_attention(s: &str) -> Attention {
    match s {
        "unread" => Attention::Unread,
        "needs_input" => Attention::NeedsInput,
        "error" => Attention::Error,
        _ => Attention::None,
    }
}

/// How a restored pane comes back: an ended process stays `Exited`; anything else is
/// `Resumable` when the adapter can build a resume command, else `Restored`.
pub fn classify(saved: RestoreState, agent: &AgentInfo) -> RestoreState {
    match saved {
        RestoreState::Exited => RestoreState::Exited,
        _ if agent.resume_argv().is_some() => RestoreState::Resumable,
        _ => RestoreState::Restored,
    }
}

/// What a restore did, for the log and for auto-resume.
#[derive(Debug, Default)]
pub struct RestoreReport {
    /// Panes rebuilt.
    pub panes: usize,
    /// Of those, resumable.
    pub resumable: usize,
    /// Panes in workspaces with auto-resume on that may resume themselves, most recently
    /// active first.
    pub auto_resume_candidates: Vec<PaneId>,
}

impl Store {
    /// The Store as a snapshot DTO, and the tails that changed since `written` (pane id →
    /// content generation already on disk).
    pub fn to_snapshot(&self, written: &HashMap<PaneId, u64>) -> (Snapshot, Vec<TailJob>) {
        let mut panes = Vec::new();
        let mut jobs = Vec::new();
        let workspaces = self
            .workspaces
            .iter()
            .map(|ws| WorkspaceRecord {
                id: ws.id.to_string(),
                name: ws.name.clone(),
                cwd: ws.cwd.display().to_string(),
                auto_resume: ws.auto_resume,
                agent_drive: ws.agent_drive,
                active_tab_id: ws.active_tab.as_ref().map(ToString::to_string),
                created_at: ws.created_at,
                tabs: ws
                    .tabs
                    .iter()
                    .filter_map(|t| self.tabs.get(t))
                    .map(|tab| {
                        for pane in tab.layout.panes().iter().filter_map(|p| self.panes.get(p)) {
                            panes.push(self.pane_record(pane));
                            let generation = pane.shared.content_gen();
                            if pane.tombstone.is_none()
                                && written.get(&pane.id) != Some(&generation)
                            {
                                jobs.push(TailJob {
                                    pane: pane.id.clone(),
                                    shared: pane.shared.clone(),
                                    content_gen: generation,
                                });
                            }
                        }
                        TabRecord {
                            id: tab.id.to_string(),
                            title: tab.title.clone(),
                            layout: layout_record(&tab.layout),
                            active_pane_id: Some(tab.active_pane.to_string()),
                            size: SizeRecord { cols: tab.size.cols, rows: tab.size.rows },
                            created_at: tab.created_at,
                        }
                    })
                    .collect(),
            })
            .collect();
        let snapshot = Snapshot {
            snapshot_version: SNAPSHOT_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            saved_at: now_ms(),
            workspaces,
            active_workspace_id: self.active_workspace.as_ref().map(ToString::to_string),
            panes,
            notifications: self.notifications.iter().map(NotificationRecord::from).collect(),
            tasks: self.task_records(None),
        };
        (snapshot, jobs)
    }

    fn pane_record(&self, pane: &Pane) -> PaneRecord {
        let meta = pane.shared.meta().clone();
        let size = pane.shared.size();
        let (lifecycle, exit_code, last_activity) = match &pane.tombstone {
            Some(t) => (t.lifecycle, t.exit_code, t.last_activity_at),
            None => (meta.lifecycle, pane.exit().map(|e| e.code), meta.last_activity_ms),
        };
        PaneRecord {
            id: pane.id.to_string(),
            workspace_id: pane.workspace.to_string(),
            tab_id: pane.tab.to_string(),
            argv: pane.argv.clone(),
            cwd: self.pane_cwd(pane),
            title: self.pane_title(pane),
            // The encoder filters this through the allowlist; only the agent's config dirs
            // are worth carrying.
            env: pane.agent.config_env.clone(),
            size: SizeRecord { cols: size.cols, rows: size.rows },
            state: pane.state().as_str().to_owned(),
            lifecycle: lifecycle.as_str().to_owned(),
            attention: pane.attention.as_str().to_owned(),
            agent: AgentRecord {
                kind: pane.agent.kind.as_str().to_owned(),
                session_id: pane.agent.session_id.clone(),
                resume_argv: pane.agent.resume_argv(),
                reported_resume_argv: pane.agent.reported_resume_argv.clone(),
                model: pane.agent.model.clone(),
                extra: Default::default(),
                config_env: pane.agent.config_env.clone(),
            },
            exit_code,
            was_running: self.pane_was_running(pane),
            created_at: pane.created_at,
            last_activity_at: last_activity,
            last_seen_at: pane.last_seen_at,
            made_by: pane.trust.made_by.as_record(),
            argv_cut: pane.tombstone.as_ref().is_some_and(|t| t.argv_cut),
        }
    }

    /// Rebuilds workspaces, tabs and panes from a snapshot (into an empty Store). `tails` gives
    /// each pane's tail lines. Nothing is started.
    pub(crate) fn restore(
        &mut self,
        snapshot: &Snapshot,
        mut tails: HashMap<String, Vec<String>>,
    ) -> RestoreReport {
        let mut report = RestoreReport::default();
        let records: HashMap<&str, &PaneRecord> =
            snapshot.panes.iter().map(|p| (p.id.as_str(), p)).collect();
        let mut candidates: Vec<(u64, PaneId)> = Vec::new();
        for ws in &snapshot.workspaces {
            let Ok(ws_id) = WorkspaceId::parse(&ws.id) else { continue };
            let mut tab_ids = Vec::new();
            for tab in &ws.tabs {
                let (Ok(tab_id), Some(mut layout)) =
                    (TabId::parse(&tab.id), layout_from_record(&tab.layout))
                else {
                    continue;
                };
                layout.clamp_ratios();
                // The loader resets sizes beyond the limits; clamping keeps that true here.
                let size = berth_engine::limits::clamp_size(CellSize {
                    cols: tab.size.cols,
                    rows: tab.size.rows,
                });
                for pane_id in layout.panes() {
                    let Some(record) = records.get(pane_id.as_str()) else { continue };
                    let tail = tails.remove(pane_id.as_str()).unwrap_or_default();
                    let pane = pane_from_record(&pane_id, &ws_id, &tab_id, record, tail);
                    report.panes += 1;
                    if pane.state() == RestoreState::Resumable {
                        report.resumable += 1;
                        if ws.auto_resume {
                            let last = pane.tombstone.as_ref().map_or(0, |t| t.last_activity_at);
                            candidates.push((last, pane_id.clone()));
                        }
                    }
                    self.panes.insert(pane_id.clone(), pane);
                }
                let active_pane = tab
                    .active_pane_id
                    .as_deref()
                    .and_then(|p| PaneId::parse(p).ok())
                    .filter(|p| layout.contains(p))
                    .or_else(|| layout.panes().into_iter().next());
                let Some(active_pane) = active_pane else { continue };
                self.tabs.insert(
                    tab_id.clone(),
                    Tab {
                        id: tab_id.clone(),
                        workspace: ws_id.clone(),
                        title: tab.title.clone(),
                        layout,
                        active_pane,
                        size,
                        created_at: tab.created_at,
                    },
                );
                self.last_tab_size = size;
                tab_ids.push(tab_id);
            }
            let active_tab = ws
                .active_tab_id
                .as_deref()
                .and_then(|t| TabId::parse(t).ok())
                .filter(|t| tab_ids.contains(t))
                .or_else(|| tab_ids.first().cloned());
            self.workspaces.push(Workspace {
                id: ws_id,
                name: ws.name.clone(),
                cwd: PathBuf::from(&ws.cwd),
                tabs: tab_ids,
                active_tab,
                auto_resume: ws.auto_resume,
                agent_drive: ws.agent_drive,
                created_at: ws.created_at,
            });
        }
        self.active_workspace = snapshot
            .active_workspace_id
            .as_deref()
            .and_then(|w| WorkspaceId::parse(w).ok())
            .filter(|w| self.workspaces.iter().any(|ws| &ws.id == w))
            .or_else(|| self.workspaces.first().map(|w| w.id.clone()));
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        self.notifications.restore(snapshot.notifications.iter().map(StoredNotification::from));
        self.restore_tasks(&snapshot.tasks);
        report.auto_resume_candidates = candidates.into_iter().map(|(_, id)| id).collect();
        report
    }

    /// Starts a tombstone's process again in the same pane slot: a resumable agent's official
    /// resume command (else one it reported about itself), otherwise its argv, in the saved
    /// cwd (or home, with a note, if that is gone). The tail stays above the new output. On
    /// failure the tombstone stays and the error shows in it.
    pub fn resume(&mut self, id: &PaneId) -> Result<(), CommandError> {
        self.resume_with(id, false)
    }

    /// Like [`Store::resume`], for auto-resume: only an adapter-built resume command may run.
    pub(crate) fn auto_resume(&mut self, id: &PaneId) -> Result<(), CommandError> {
        self.resume_with(id, true)
    }

    /// What [`Store::resume`] would run for `pane` now: the one answer the window, `berth ls
    /// --json` and `berth resume --dry-run` show, and the one resume runs. `None` for a live
    /// pane.
    pub(crate) fn resume_plan(&self, pane: &Pane) -> Option<ResumePlan> {
        if pane.tombstone.is_none() && pane.state() == RestoreState::Live {
            return None;
        }
        let own = || {
            let argv = if pane.argv.is_empty() {
                vec![self.config.shell.clone()]
            } else {
                pane.argv.clone()
            };
            ResumePlan { argv, source: ResumeSource::Argv }
        };
        if pane.tombstone.is_none() {
            // An ended live pane restarts its own program.
            return Some(own());
        }
        if let Some(argv) = pane.agent.resume_argv() {
            return Some(ResumePlan { argv, source: ResumeSource::Adapter });
        }
        match &pane.agent.reported_resume_argv {
            Some(argv) => Some(ResumePlan { argv: argv.clone(), source: ResumeSource::Reported }),
            None => Some(own()),
        }
    }

    fn resume_with(&mut self, id: &PaneId, automatic: bool) -> Result<(), CommandError> {
        let pane = self.panes.get(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
        let plan = self.resume_plan(pane);
        let Some(tomb) = pane.tombstone.clone() else {
            if pane.state() == RestoreState::Live {
                return Err(CommandError::Conflict(format!("pane {id} is already running")));
            }
            // An ended live pane: restart its argv on this explicit request.
            return self.restart_exited(id);
        };
        let argv = match plan {
            Some(plan) if plan.source == ResumeSource::Argv && tomb.argv_cut => {
                return Err(CommandError::Conflict(format!(
                    "pane {id}'s command line was too long to save whole, so it is not run \
                     again; start it yourself"
                )))
            }
            Some(plan) if !automatic || plan.source == ResumeSource::Adapter => plan.argv,
            _ => {
                return Err(CommandError::Conflict(format!(
                    "pane {id} has no adapter-built resume command"
                )))
            }
        };
        let (ws_id, tab_id) = (pane.workspace.clone(), pane.tab.clone());
        let mut notes = Vec::new();
        let cwd = if Path::new(&tomb.cwd).is_dir() {
            PathBuf::from(&tomb.cwd)
        } else {
            notes.push(format!(
                "berth: the saved directory {} is gone; starting in {}",
                tomb.cwd,
                self.config.home.display()
            ));
            self.config.home.clone()
        };
        let size = self.pane_size_in_tab(&tab_id, id);
        let term = self.new_terminal(TermSize { cols: size.cols, rows: size.rows });
        let shared = PaneShared::new(id.clone(), term);
        {
            let mut term = shared.term.lock();
            term.feed(&encode_tail(&tomb.tail));
            for note in &notes {
                term.feed(format!("\x1b[0;33m{note}\x1b[0m\r\n").as_bytes());
            }
            // A line marks where the old session's tail ends and the resumed one begins.
            term.feed(
                format!("\x1b[0;2m{}\x1b[0m\r\n", resume_marker(&argv, size.cols)).as_bytes(),
            );
            scroll_screen_into_history(&mut term);
        }
        let spawn = SpawnRequest {
            argv: argv.clone(),
            cwd: None,
            env: env_pairs(&pane.agent),
            title: None,
        };
        match self.start_pane(id, &ws_id, &spawn, cwd, size, Some(shared)) {
            Ok(started) => {
                let pane = self
                    .panes
                    .get_mut(id)
                    .ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
                tracing::info!(pane = %id, argv = ?started.argv.first(), automatic, "pane resumed");
                pane.shared = started.shared;
                pane.pty = Some(started.pty);
                pane.tombstone = None;
                pane.start_cwd = started.cwd;
                pane.argv = if pane.agent.kind == AgentKind::None {
                    started.argv
                } else {
                    pane.argv.clone()
                };
                self.publish_pane_changed(id);
                Ok(())
            }
            Err(err) => {
                let message = format!("berth: could not resume ({}): {err}", argv.join(" "));
                tracing::warn!(pane = %id, error = %err, "resume failed");
                if let Some(pane) = self.panes.get_mut(id) {
                    if let Some(tomb) = &mut pane.tombstone {
                        tomb.tail.push(format!("\x1b[0;31m{message}\x1b[0m"));
                    }
                }
                self.publish_pane_changed(id);
                Err(err)
            }
        }
    }

    fn restart_exited(&mut self, id: &PaneId) -> Result<(), CommandError> {
        let pane = self.panes.get(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
        let (ws_id, tab_id, shared) =
            (pane.workspace.clone(), pane.tab.clone(), pane.shared.clone());
        let cwd = PathBuf::from(self.pane_cwd(pane));
        let cwd = if cwd.is_dir() { cwd } else { self.config.home.clone() };
        let spawn = SpawnRequest {
            argv: pane.argv.clone(),
            cwd: None,
            env: env_pairs(&pane.agent),
            title: None,
        };
        let size = self.pane_size_in_tab(&tab_id, id);
        shared.reset_exit();
        let started = self.start_pane(id, &ws_id, &spawn, cwd, size, Some(shared))?;
        if let Some(pane) = self.panes.get_mut(id) {
            pane.pty = Some(started.pty);
        }
        self.publish_pane_changed(id);
        Ok(())
    }

    fn pane_size_in_tab(&self, tab: &TabId, pane: &PaneId) -> CellSize {
        self.tabs
            .get(tab)
            .and_then(|t| t.layout.rects(t.size).into_iter().find(|(p, _)| p == pane))
            .map(|(_, r)| self.pane_size_for(r))
            .unwrap_or(crate::store::DEFAULT_TAB_SIZE)
    }

    pub(crate) fn publish_pane_changed(&self, id: &PaneId) {
        self.bus.publish(crate::event::Event::PaneChanged { pane: id.clone() });
    }
}

/// The line written under a resumed pane's restored tail, `cols` wide at most: a rule naming
/// the command that resumed it, so the scrollback shows where the new session starts.
pub fn resume_marker(argv: &[String], cols: u16) -> String {
    let cols = usize::from(cols).max(12);
    let command: String = argv.join(" ").chars().filter(|c| !c.is_control()).collect();
    let mut text = format!("── resumed: {command} ");
    if text.chars().count() > cols {
        text = text.chars().take(cols - 2).collect();
        text.push_str("… ");
    }
    let rule = cols.saturating_sub(text.chars().count());
    text.extend(std::iter::repeat_n('─', rule));
    text
}

/// Scrolls the lines above the cursor of a freshly restored terminal into its scrollback and
/// puts the cursor home on a blank screen, before the resumed program starts. Whatever that
/// program does to the screen (enter and leave the alternate screen, `ESC[H ESC[J`, redraw
/// over it) the restored tail stays readable above its output, as tmux keeps it.
fn scroll_screen_into_history(term: &mut PaneTerminal) {
    // The screen's rows are counted from 0 at its top; the cursor is always on the screen.
    let row = term.term().grid().cursor.point.line.0.max(0);
    if row == 0 {
        return;
    }
    let rows = term.size().rows;
    let mut bytes = format!("\x1b[{rows};1H").into_bytes();
    bytes.extend(std::iter::repeat_n(b'\n', row as usize));
    bytes.extend_from_slice(b"\x1b[H");
    term.feed(&bytes);
}

fn env_pairs(agent: &AgentInfo) -> Vec<(String, String)> {
    agent.config_env.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn pane_from_record(
    id: &PaneId,
    ws: &WorkspaceId,
    tab: &TabId,
    record: &PaneRecord,
    tail: Vec<String>,
) -> Pane {
    let kind = AgentKind::parse(&record.agent.kind).unwrap_or(AgentKind::None);
    let agent = AgentInfo {
        kind,
        session_id: record
            .agent
            .session_id
            .clone()
            .filter(|s| agents::validate_session_id(s).is_ok()),
        reported_resume_argv: record.agent.reported_resume_argv.clone(),
        model: record.agent.model.clone(),
        config_env: record
            .agent
            .config_env
            .iter()
            .filter(|(k, _)| agents::AGENT_CONFIG_ENV.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    let state = classify(parse_state(&record.state), &agent);
    let size = berth_engine::limits::clamp_size(CellSize {
        cols: record.size.cols,
        rows: record.size.rows,
    });
    let size = TermSize { cols: size.cols, rows: size.rows };
    // A tombstone's terminal stays empty and holds no grid: its text lives compactly in `tail`
    // until resumed (which gives the pane a new terminal).
    let shared = PaneShared::new(id.clone(), PaneTerminal::dormant(size, 0));
    let lifecycle = match state {
        RestoreState::Exited => Lifecycle::Exited,
        _ => parse_lifecycle(&record.lifecycle),
    };
    Pane {
        id: id.clone(),
        workspace: ws.clone(),
        tab: tab.clone(),
        argv: record.argv.clone(),
        start_cwd: PathBuf::from(&record.cwd),
        given_title: None,
        shared,
        pty: None,
        attention: parse_attention(&record.attention),
        agent,
        tombstone: Some(Tombstone {
            state,
            title: record.title.clone(),
            cwd: record.cwd.clone(),
            lifecycle,
            exit_code: record.exit_code,
            was_running: record.was_running.clone(),
            tail,
            last_activity_at: record.last_activity_at,
            argv_cut: record.argv_cut,
        }),
        trust: crate::trust::PaneTrust {
            made_by: crate::trust::Provenance::from_record(&record.made_by),
            ..Default::default()
        },
        created_at: record.created_at,
        last_seen_at: record.last_seen_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resume marker is a rule as wide as the pane, naming the command, and a long command
    /// is cut with `…` so the line never wraps.
    #[test]
    fn the_resume_marker_fills_the_row_and_never_wraps() {
        let argv = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let line = resume_marker(&argv("claude --resume 3f2a"), 40);
        assert_eq!(line, "── resumed: claude --resume 3f2a ───────");
        assert_eq!(line.chars().count(), 40);
        let long = resume_marker(&argv(&format!("codex resume {}", "x".repeat(60))), 30);
        assert_eq!(long.chars().count(), 30);
        assert!(long.ends_with("… "), "{long}");
    }

    /// The cached tail is always the tail: after output, partial lines, a flood past the ring
    /// and past 64 KiB, a resize, `CSI 3 J`, a reset and the alternate screen.
    #[test]
    fn cached_tails_equal_full_renders_at_every_step() {
        for ring in [100, DEFAULT_SCROLLBACK] {
            let mut term = PaneTerminal::new(TermSize { cols: 60, rows: 10 }, ring);
            let mut cache = None;
            type Step = Box<dyn Fn(&mut PaneTerminal)>;
            let steps: Vec<Step> = vec![
                Box::new(|t| t.feed(b"\x1b[31mred\x1b[0m first\r\nsecond")),
                Box::new(|t| t.feed(b" line\r\nthird\r\n")),
                Box::new(|t| {
                    for n in 0..300 {
                        t.feed(
                            format!("\x1b[3{}mline {n}\x1b[0m {}\r\n", n % 8, "x".repeat(n % 50))
                                .as_bytes(),
                        );
                    }
                }),
                Box::new(|t| t.feed(b"\x1b[5Aoverwritten\x1b[5B\r\n")),
                Box::new(|t| t.resize(TermSize { cols: 30, rows: 12 })),
                Box::new(|t| t.feed(b"after resize\r\n")),
                Box::new(|t| t.feed(b"\x1b[3J")),
                Box::new(|t| t.feed(b"after clear\r\n")),
                Box::new(|t| {
                    for n in 0..3000 {
                        t.feed(format!("{n} {}\r\n", "y".repeat(40)).as_bytes());
                    }
                }),
                Box::new(|t| t.feed(b"\x1b[?1049hin the alternate screen")),
                Box::new(|t| t.feed(b"\x1b[?1049lback\r\n")),
                Box::new(|t| t.feed(b"\x1bc")),
                Box::new(|t| t.feed(b"fresh after reset\r\n")),
                Box::new(|t| t.feed(b"")),
            ];
            for (i, step) in steps.iter().enumerate() {
                step(&mut term);
                assert_eq!(
                    tail_of_cached(&term, &mut cache),
                    tail_of(&term),
                    "ring {ring}, step {i}"
                );
            }
        }
    }

    /// The bytes a save writes from its cache are the whole tail's, redacted, at every step:
    /// a secret in the history, on the screen, and past the cache's reach.
    #[test]
    fn cached_tail_bytes_are_the_redacted_tail() {
        use crate::persist::redact::redact_tail;
        let mut term = PaneTerminal::new(TermSize { cols: 60, rows: 10 }, DEFAULT_SCROLLBACK);
        let mut cache = None;
        let steps: [&[u8]; 4] = [
            b"$ deploy --api-key=sk-live-s3cr3t-1 --region eu\r\nok\r\n",
            b"\x1b[32mgreen\x1b[0m and GITHUB_TOKEN=ghp_s3cr3t2 on screen",
            b"\r\nmore\r\n",
            b"",
        ];
        let check = |term: &PaneTerminal, cache: &mut Option<TailCache>, step: usize| {
            let bytes = tail_bytes_cached(term, cache);
            let text = String::from_utf8_lossy(bytes.as_bytes()).into_owned();
            let whole = String::from_utf8(redact_tail(&encode_tail(&tail_of(term)))).unwrap();
            assert!(
                text == whole,
                "step {step}: {} bytes, the whole tail {}",
                text.len(),
                whole.len()
            );
            assert!(!text.contains("s3cr3t"), "step {step}: {text}");
        };
        for (i, step) in steps.iter().enumerate() {
            term.feed(step);
            check(&term, &mut cache, i);
        }
        // Past 64 KiB of new output at once, then a line at a time.
        for n in 0..3000 {
            term.feed(format!("{n} --password=hunter{n}xyz {}\r\n", "z".repeat(n % 40)).as_bytes());
            if n == 2000 || n > 2990 {
                check(&term, &mut cache, n);
            }
        }
    }

    /// Regression (issue 28, item 6: saving 100 tails cost 110 ms of CPU): a save after one
    /// new line redacts that line and the screen, not the whole 64 KiB tail again.
    #[test]
    fn a_save_after_one_line_redacts_only_the_new_line_and_the_screen() {
        use crate::persist::redact::TEXTS_REDACTED;
        let rows = 10;
        let mut term = PaneTerminal::new(TermSize { cols: 80, rows }, DEFAULT_SCROLLBACK);
        for n in 0..3000 {
            term.feed(format!("line {n} {}\r\n", "x".repeat(n % 60)).as_bytes());
        }
        let mut cache = None;
        let redacted = || TEXTS_REDACTED.with(|n| n.get());
        let before = redacted();
        let first = tail_bytes_cached(&term, &mut cache);
        assert!(redacted() - before > 1000, "the first save redacts the whole tail");
        term.feed(b"one more line\r\n");
        let before = redacted();
        let next = tail_bytes_cached(&term, &mut cache);
        let work = redacted() - before;
        assert!(work <= usize::from(rows) + 1, "{work} lines redacted for one new line");
        assert_ne!(first, next);
    }

    #[test]
    fn tails_round_trip_through_their_file_form() {
        let lines = vec!["\x1b[31mred\x1b[0m".to_owned(), String::new(), "plain".to_owned()];
        assert_eq!(decode_tail(&encode_tail(&lines)), lines);
        assert!(decode_tail(b"").is_empty());
    }

    #[test]
    fn restore_states_follow_the_rules() {
        let agent = |kind, id: Option<&str>| AgentInfo {
            kind,
            session_id: id.map(str::to_owned),
            reported_resume_argv: None,
            model: None,
            config_env: Default::default(),
        };
        let cases = [
            (RestoreState::Live, agent(AgentKind::None, None), RestoreState::Restored),
            (RestoreState::Live, agent(AgentKind::Claude, Some("s1")), RestoreState::Resumable),
            (RestoreState::Live, agent(AgentKind::Claude, None), RestoreState::Restored),
            (RestoreState::Live, agent(AgentKind::Generic, Some("s1")), RestoreState::Restored),
            (RestoreState::Exited, agent(AgentKind::Claude, Some("s1")), RestoreState::Exited),
            (RestoreState::Restored, agent(AgentKind::Codex, Some("t1")), RestoreState::Resumable),
            (RestoreState::Resumable, agent(AgentKind::None, None), RestoreState::Restored),
        ];
        for (saved, agent, want) in cases {
            assert_eq!(classify(saved, &agent), want, "{saved:?} {agent:?}");
        }
    }
}
