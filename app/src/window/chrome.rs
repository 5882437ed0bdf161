//! The window's chrome: the tab bar along the top row, the workspace switcher, the order in
//! which the attention jump visits panes, what a tombstone's overlay says, and the lifecycle
//! marker of a pane header.
//!
//! It owns turning the Store's typed view (`Store::view`) into those pieces of a scene and the hit tests
//! of the tab bar and switcher. It must not change state: the window sends commands for what
//! the user picks here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use berth_engine::ids::{PaneId, TabId, WorkspaceId};
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use berth_server::view::{
    self as state, PaneInfo, ProgressState, ResumePlan, ResumeSource, StateView, WorkspaceView,
};

use super::view::TabView;
use crate::render::{
    self, CellRectU16, Progress, ProgressKind, Ring, SwitcherEntry, SwitcherScene, TabBarScene,
    TabLabel, TombstoneOverlay,
};

/// Rows at the top of the window taken by the tab bar.
pub const TAB_BAR_ROWS: u16 = 1;

/// The most characters of a tab's title shown in the tab bar.
const TAB_TITLE_CHARS: usize = 24;

/// Columns at a tab's right end taken by its close button (`×` and a blank).
pub const CLOSE_COLS: u16 = 2;

/// The header's progress bar for a program's progress report.
pub fn progress_of(progress: &state::Progress) -> Progress {
    let kind = match progress.state {
        ProgressState::Normal => ProgressKind::Normal,
        ProgressState::Error => ProgressKind::Error,
        ProgressState::Indeterminate => ProgressKind::Indeterminate,
        ProgressState::Paused => ProgressKind::Paused,
    };
    Progress { kind, percent: progress.percent }
}

/// The ring drawn around a pane for its attention level, if any.
pub fn ring_of(attention: Attention) -> Option<Ring> {
    match attention {
        Attention::Unread => Some(Ring::Unread),
        Attention::NeedsInput => Some(Ring::NeedsInput),
        Attention::Error => Some(Ring::Error),
        Attention::None => None,
    }
}

/// How many panes of a workspace want attention.
pub fn workspace_attention(ws: &WorkspaceView) -> usize {
    ws.tabs.iter().flat_map(|t| &t.panes).filter(|p| p.wants_attention()).count()
}

/// A tab's title being edited in the tab bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabRename {
    /// The tab.
    pub tab: TabId,
    /// The title typed so far.
    pub text: String,
}

/// The most characters a tab title may have (the Store's limit for names is larger; a tab
/// bar has no room for more).
pub const MAX_TAB_TITLE: usize = 64;

/// The tab bar of the shown tab's workspace, `cols` wide, on window row 0, with the title
/// being edited, if any, and `inbox` (the inbox's affordance: `2 unread`) first at its right
/// end, where a click opens the inbox.
pub fn tab_bar(
    list: &StateView,
    view: &TabView,
    cols: u16,
    rename: Option<&TabRename>,
    inbox: &str,
) -> TabBarScene {
    let Some(ws) = list.workspaces.iter().find(|w| w.id == view.workspace_id) else {
        return TabBarScene::default();
    };
    let elsewhere: usize =
        list.workspaces.iter().filter(|w| w.id != ws.id).map(workspace_attention).sum();
    let mut right = ws.name.clone();
    if list.workspaces.len() > 1 {
        let at = list.workspaces.iter().position(|w| w.id == ws.id).unwrap_or(0);
        right = format!("{right} [{}/{}]", at + 1, list.workspaces.len());
    }
    if elsewhere > 0 {
        right = format!("● {elsewhere} elsewhere  {right}");
    }
    if !inbox.is_empty() {
        right = format!("{inbox}  {right}");
    }
    // The workspace's name keeps a place at the right end (at most a third of the bar, where
    // it is cut short); tabs take what is left.
    let right_cols = u16::try_from(right.chars().count() + 2).unwrap_or(u16::MAX);
    let limit = cols.saturating_sub(right_cols.min(cols / 3));
    let mut tabs = Vec::new();
    let mut col = 0u16;
    for (i, tab) in ws.tabs.iter().enumerate() {
        let title =
            tab_title(tab.title.as_str(), tab.panes.iter().find(|p| p.id == tab.active_pane));
        let attention = tab.panes.iter().filter(|p| p.wants_attention()).count();
        let editing = rename.filter(|r| r.tab == tab.id);
        let text = match editing {
            // The end of what is typed stays in view, the caret after it.
            Some(r) => {
                let typed: String = r.text.chars().rev().take(TAB_TITLE_CHARS).collect();
                format!(" {} {}▏", i + 1, typed.chars().rev().collect::<String>())
            }
            None => format!(" {} {}", i + 1, render::ellipsize(&title, TAB_TITLE_CHARS)),
        };
        let mut width = u16::try_from(render::str_width(&text) + 1).unwrap_or(u16::MAX);
        if attention > 0 {
            width += u16::try_from(format!(" ●{attention}").chars().count()).unwrap_or(0);
        }
        width += CLOSE_COLS;
        if col + width > limit {
            // No room: the rest of the tabs are reached with the keys or the switcher.
            break;
        }
        tabs.push(TabLabel {
            title: text,
            active: tab.id == view.tab_id,
            attention,
            cols: col..col + width,
            editing: editing.is_some(),
        });
        col += width + 1;
    }
    TabBarScene { row: 0, tabs, right }
}

/// A tab's title: the one it was given, else its focused pane's.
fn tab_title(given: &str, active: Option<&PaneInfo>) -> String {
    if !given.is_empty() {
        return given.to_owned();
    }
    active.map(|p| p.title.clone()).unwrap_or_default()
}

/// What a click at column `col` of the tab bar hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TabBarHit {
    /// The tab at this index of the workspace.
    Tab(usize),
    /// The close button of the tab at this index.
    Close(usize),
    /// The text at the right end (the inbox's affordance and the workspace's name): it opens
    /// the inbox.
    Right,
    /// Nothing.
    Nothing,
}

/// The tab (or close button, or the right end's text) under column `col` of a bar `cols`
/// wide.
pub fn tab_bar_hit(bar: &TabBarScene, col: u16, cols: u16) -> TabBarHit {
    // Where `render/chrome.rs` puts the right end's text: flush right, after the last tab.
    let right_w = u16::try_from(render::str_width(&bar.right)).unwrap_or(u16::MAX);
    let used = bar.tabs.last().map_or(0, |t| t.cols.end);
    let from = cols.saturating_sub(right_w.saturating_add(1)).max(used + 1);
    if !bar.right.is_empty() && (from..from.saturating_add(right_w)).contains(&col) {
        return TabBarHit::Right;
    }
    for (i, tab) in bar.tabs.iter().enumerate() {
        if tab.cols.contains(&col) {
            return if col + CLOSE_COLS >= tab.cols.end {
                TabBarHit::Close(i)
            } else {
                TabBarHit::Tab(i)
            };
        }
    }
    TabBarHit::Nothing
}

/// The index a dragged tab lands at when released over column `col`.
pub fn drop_index(bar: &TabBarScene, col: u16) -> Option<usize> {
    let last = bar.tabs.len().checked_sub(1)?;
    let at = bar.tabs.iter().position(|t| col < t.cols.end).unwrap_or(last);
    Some(at)
}

/// The next pane wanting attention after `current`, in the order workspaces, tabs and panes
/// are listed, wrapping around; `current` itself only when no other pane wants attention.
pub fn next_attention(list: &StateView, current: Option<&PaneId>) -> Option<PaneId> {
    let panes: Vec<&PaneInfo> =
        list.workspaces.iter().flat_map(|w| &w.tabs).flat_map(|t| &t.panes).collect();
    let start = current.and_then(|c| panes.iter().position(|p| p.id == *c)).map_or(0, |i| i + 1);
    (0..panes.len())
        .map(|k| panes[(start + k) % panes.len()])
        .find(|p| p.wants_attention())
        .map(|p| p.id.clone())
}

/// The overlay at the bottom of a tombstone: what Enter does (the whole command line that
/// resume runs, from the server's plan, a self-reported one marked as such) and what the
/// pane was.
pub fn overlay_of(
    pane: &PaneInfo,
    home: Option<&Path>,
    error: Option<&str>,
) -> Option<TombstoneOverlay> {
    let cwd = tilde(&pane.cwd, home);
    // A pane without a plan (a test's fixture) follows the server's own rules.
    let plan = pane.resume.clone().or_else(|| match pane.state {
        RestoreState::Resumable => pane
            .agent
            .resume_argv
            .clone()
            .map(|argv| ResumePlan { argv, source: ResumeSource::Adapter }),
        RestoreState::Restored | RestoreState::Exited => {
            Some(ResumePlan { argv: pane.argv.clone(), source: ResumeSource::Argv })
        }
        RestoreState::Live => None,
    });
    if pane.state == RestoreState::Live {
        return None;
    }
    let mut lines = Vec::new();
    if pane.state == RestoreState::Exited {
        match pane.exit_code {
            Some(code) => lines.push(format!("exited with code {code}")),
            None => lines.push("exited".to_owned()),
        }
    }
    match &plan {
        Some(plan) if plan.source == ResumeSource::Reported => lines.push(format!(
            "Enter — run `{}`: a command the program reported about itself, not checked by Berth",
            plan.command_line()
        )),
        Some(plan) if plan.source == ResumeSource::Adapter => {
            lines.push(format!("Enter — resume `{}`", plan.command_line()));
        }
        Some(plan) if pane.state == RestoreState::Exited => {
            lines.push(format!("Enter — restart `{}`", plan.command_line()));
        }
        Some(plan) if is_shell(&plan.argv) => {
            lines.push(format!("Enter — new shell `{}` in `{cwd}`", plan.command_line()));
        }
        Some(plan) => {
            lines.push(format!("Enter — start `{}` again in `{cwd}`", plan.command_line()));
        }
        None => lines.push("Enter — restart".to_owned()),
    }
    if let (Some(job), RestoreState::Restored | RestoreState::Resumable) =
        (&pane.was_running, pane.state)
    {
        lines.push(format!("was running `{job}`"));
    }
    Some(TombstoneOverlay { lines, error: error.map(str::to_owned) })
}

/// Whether `argv` runs a login shell (or nothing, which starts the user's shell).
fn is_shell(argv: &[String]) -> bool {
    let Some(program) = argv.first() else { return true };
    let name = program.rsplit('/').next().unwrap_or(program).trim_start_matches('-');
    matches!(
        name,
        "bash" | "zsh" | "fish" | "sh" | "dash" | "ksh" | "tcsh" | "csh" | "nu" | "elvish"
    )
}

/// `path` with the home directory written `~`.
pub fn tilde(path: &str, home: Option<&Path>) -> String {
    match home.and_then(|h| Path::new(path).strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.to_owned(),
    }
}

/// The most columns of a foreground job's command line a header's marker shows.
const JOB_COLS: usize = 24;

/// A pane header's lifecycle marker: a symbol and a word, with how long a pane has been
/// working once that is a minute or more. A shell's foreground job is named ("▶ running
/// yes"); an ended program says how it ended ("✗ exited 1", "✗ killed by SIGTERM").
pub fn lifecycle_marker(info: &PaneInfo, since: Option<Duration>) -> Option<String> {
    if info.state == RestoreState::Exited {
        return match (&info.exit_signal, info.exit_code) {
            (Some(signal), _) => Some(format!("✗ killed by {signal}")),
            (None, Some(0)) => Some("✓ exited 0".to_owned()),
            (None, Some(code)) => Some(format!("✗ exited {code}")),
            (None, None) => None,
        };
    }
    if info.state != RestoreState::Live {
        return None;
    }
    let text = match info.lifecycle {
        Lifecycle::Working => {
            let what = match &info.job {
                Some(job) => format!("▶ running {}", render::ellipsize(job, JOB_COLS)),
                None => "▶ working".to_owned(),
            };
            match since.map(|d| d.as_secs()) {
                Some(s) if s >= 3600 => format!("{what} for {}h{:02}m", s / 3600, s % 3600 / 60),
                Some(s) if s >= 60 => format!("{what} for {}m", s / 60),
                _ => what,
            }
        }
        Lifecycle::Idle => "◇ idle".to_owned(),
        Lifecycle::Blocked => "◆ blocked".to_owned(),
        Lifecycle::Done => "✓ done".to_owned(),
        Lifecycle::Starting | Lifecycle::Exited => return None,
    };
    Some(text)
}

/// The open workspace switcher: what the user typed and which entry is highlighted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Switcher {
    /// The filter.
    pub query: String,
    /// The highlighted entry, an index into the filtered list.
    pub selected: usize,
}

/// Whether every character of `query` appears in `text` in order (case-insensitive).
fn fuzzy_match(query: &str, text: &str) -> bool {
    let mut chars = text.chars().flat_map(char::to_lowercase);
    query.chars().flat_map(char::to_lowercase).all(|q| chars.any(|c| c == q))
}

/// The workspaces the switcher lists for `query`: (workspace id, entry).
pub fn switcher_entries(
    list: &StateView,
    query: &str,
    home: Option<&Path>,
    git: &mut GitBranches,
) -> Vec<(WorkspaceId, SwitcherEntry)> {
    list.workspaces
        .iter()
        .filter(|w| !w.tabs.is_empty())
        .filter(|w| fuzzy_match(query, &w.name) || fuzzy_match(query, &w.cwd))
        .map(|w| {
            let mut detail = tilde(&w.cwd, home);
            if let Some(branch) = git.branch(Path::new(&w.cwd)) {
                detail = format!("{detail}  [{branch}]");
            }
            let entry = SwitcherEntry {
                name: w.name.clone(),
                detail,
                attention: workspace_attention(w),
                current: list.active_workspace.as_ref() == Some(&w.id),
            };
            (w.id.clone(), entry)
        })
        .collect()
}

/// The switcher as drawn: centred near the top of a `cols × rows` window.
pub fn switcher_scene(
    switcher: &Switcher,
    entries: &[(WorkspaceId, SwitcherEntry)],
    cols: u16,
    rows: u16,
) -> SwitcherScene {
    let width = cols.saturating_sub(4).min(72).max(cols.min(20));
    let shown = entries.len().min(usize::from(rows.saturating_sub(4)).max(1));
    let height = u16::try_from(shown).unwrap_or(1) + 3;
    let col = (cols - width) / 2;
    let row = (TAB_BAR_ROWS + 1).min(rows.saturating_sub(height));
    let selected = switcher.selected.min(entries.len().saturating_sub(1));
    // Keep the highlighted entry in view (with no entries there is none: `first` is 0).
    let first = (selected + 1).saturating_sub(shown.max(1));
    SwitcherScene {
        rect: CellRectU16::new(col, row, width, height.min(rows)),
        query: switcher.query.clone(),
        entries: entries.iter().skip(first).take(shown).map(|(_, e)| e.clone()).collect(),
        selected: selected - first,
        ..SwitcherScene::default()
    }
}

/// The entry under window cell (`col`, `row`) of a drawn switcher, as an index into the
/// drawn entries.
pub fn switcher_hit(scene: &SwitcherScene, col: u16, row: u16) -> Option<usize> {
    let r = scene.rect;
    if col < r.col || col >= r.col + r.cols || row < r.row + 2 {
        return None;
    }
    let at = usize::from(row - r.row - 2);
    (at < scene.entries.len()).then_some(at)
}

/// Git branches of workspace directories, read from `.git/HEAD` (cheap: one small file) and
/// kept for a few seconds.
#[derive(Debug, Default)]
pub struct GitBranches {
    cache: HashMap<PathBuf, (Option<String>, Instant)>,
}

/// How long a branch read from disk is trusted.
const GIT_TTL: Duration = Duration::from_secs(5);

impl GitBranches {
    /// The branch checked out in the repository holding `dir` (a short commit id when
    /// detached), if it is one.
    pub fn branch(&mut self, dir: &Path) -> Option<String> {
        let now = Instant::now();
        if let Some((branch, at)) = self.cache.get(dir) {
            if now.duration_since(*at) < GIT_TTL {
                return branch.clone();
            }
        }
        let branch = read_branch(dir);
        self.cache.insert(dir.to_owned(), (branch.clone(), now));
        branch
    }
}

/// The branch of the repository holding `dir`, from its `.git/HEAD` (a `.git` file of a
/// worktree points to the real git dir).
fn read_branch(dir: &Path) -> Option<String> {
    let mut at = Some(dir);
    while let Some(d) = at {
        let git = d.join(".git");
        let git_dir = if git.is_dir() {
            Some(git)
        } else if git.is_file() {
            std::fs::read_to_string(&git)
                .ok()
                .and_then(|s| s.strip_prefix("gitdir:").map(|p| d.join(p.trim())))
        } else {
            None
        };
        if let Some(git_dir) = git_dir {
            let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
            let head = head.trim();
            return Some(match head.strip_prefix("ref: refs/heads/") {
                Some(branch) => branch.to_owned(),
                None => head.chars().take(8).collect(),
            });
        }
        at = d.parent();
    }
    None
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::window::fixtures;
    use berth_engine::layout::{CellSize, Layout};
    use berth_server::view::TabInfo;

    fn pane_id(id: &str) -> PaneId {
        PaneId::parse(id).expect("a pane id")
    }

    fn pane(id: &str, attention: Attention) -> PaneInfo {
        PaneInfo {
            title: format!("title-{}", id.trim_start_matches("pane_")),
            cwd: "/home/u/code".into(),
            argv: vec!["bash".into()],
            attention,
            ..fixtures::pane_info(id)
        }
    }

    fn tab(id: &str, title: &str, panes: Vec<PaneInfo>) -> TabInfo {
        TabInfo {
            id: TabId::parse(id).expect("a tab id"),
            title: title.into(),
            active_pane: panes[0].id.clone(),
            layout: Layout::single(panes[0].id.clone()),
            size: CellSize { cols: 80, rows: 24 },
            panes,
        }
    }

    fn ws(id: &str, name: &str, tabs: Vec<TabInfo>) -> WorkspaceView {
        WorkspaceView {
            id: WorkspaceId::parse(id).expect("a workspace id"),
            name: name.into(),
            cwd: format!("/home/u/{name}"),
            git: None,
            auto_resume: false,
            agent_drive: false,
            active_tab: Some(tabs[0].id.clone()),
            tabs,
        }
    }

    pub(crate) fn list() -> StateView {
        StateView {
            workspaces: vec![
                ws(
                    "ws_a",
                    "berth",
                    vec![
                        tab(
                            "tab_1",
                            "agents",
                            vec![
                                pane("pane_1", Attention::None),
                                pane("pane_2", Attention::Unread),
                            ],
                        ),
                        tab("tab_2", "", vec![pane("pane_3", Attention::None)]),
                    ],
                ),
                ws(
                    "ws_b",
                    "site",
                    vec![tab("tab_3", "web", vec![pane("pane_4", Attention::NeedsInput)])],
                ),
            ],
            active_workspace: Some(WorkspaceId::parse("ws_a").expect("a workspace id")),
        }
    }

    #[test]
    fn the_tab_bar_lists_tabs_with_unread_counts() {
        let list = list();
        let view = TabView::active(&list).expect("a tab");
        let bar = tab_bar(&list, &view, 100, None, "3 unread");
        let titles: Vec<&str> = bar.tabs.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(titles, [" 1 agents", " 2 title-3"]);
        assert_eq!(bar.tabs[0].attention, 1);
        assert!(bar.tabs[0].active && !bar.tabs[1].active);
        assert_eq!(bar.right, "3 unread  ● 1 elsewhere  berth [1/2]");
        // Tabs do not overlap and the close button is the last two columns of each.
        assert!(bar.tabs[0].cols.end < bar.tabs[1].cols.start);
        let close = bar.tabs[0].cols.end - 1;
        assert_eq!(tab_bar_hit(&bar, close, 100), TabBarHit::Close(0));
        assert_eq!(tab_bar_hit(&bar, bar.tabs[1].cols.start, 100), TabBarHit::Tab(1));
        assert_eq!(tab_bar_hit(&bar, bar.tabs[1].cols.end + 1, 100), TabBarHit::Nothing);
        // The right end's text (the inbox's affordance first) opens the inbox.
        let right = 100 - 1 - render::str_width(&bar.right) as u16;
        assert_eq!(tab_bar_hit(&bar, right, 100), TabBarHit::Right);
        assert_eq!(tab_bar_hit(&bar, 98, 100), TabBarHit::Right);
        assert_eq!(tab_bar_hit(&bar, 99, 100), TabBarHit::Nothing);
        assert_eq!(drop_index(&bar, 99), Some(1));
        assert_eq!(drop_index(&bar, 0), Some(0));
    }

    #[test]
    fn a_tab_being_renamed_shows_what_is_typed_and_a_caret() {
        let list = list();
        let view = TabView::active(&list).expect("a tab");
        let tab_2 = TabId::parse("tab_2").expect("a tab id");
        let rename = TabRename { tab: tab_2.clone(), text: "logs".into() };
        let bar = tab_bar(&list, &view, 100, Some(&rename), "");
        assert_eq!(bar.tabs[1].title, " 2 logs▏");
        assert!(bar.tabs[1].editing && !bar.tabs[0].editing);
        let long = TabRename { tab: tab_2, text: "x".repeat(40) + "END" };
        let bar = tab_bar(&list, &view, 200, Some(&long), "");
        assert!(bar.tabs[1].title.ends_with("END▏"), "{}", bar.tabs[1].title);
    }

    #[test]
    fn a_narrow_tab_bar_drops_tabs_that_do_not_fit() {
        let list = list();
        let view = TabView::active(&list).expect("a tab");
        let bar = tab_bar(&list, &view, 40, None, "");
        assert_eq!(bar.tabs.len(), 1);
        assert!(bar.tabs[0].cols.end <= 40);
    }

    #[test]
    fn the_attention_jump_goes_round_every_workspace() {
        let list = list();
        let next = |list: &StateView, current: Option<&str>| {
            next_attention(list, current.map(pane_id).as_ref()).map(|p| p.to_string())
        };
        assert_eq!(next(&list, Some("pane_1")).as_deref(), Some("pane_2"));
        assert_eq!(next(&list, Some("pane_2")).as_deref(), Some("pane_4"));
        assert_eq!(next(&list, Some("pane_4")).as_deref(), Some("pane_2"));
        assert_eq!(next(&list, None).as_deref(), Some("pane_2"));
        let mut quiet = list.clone();
        for p in quiet.workspaces.iter_mut().flat_map(|w| &mut w.tabs).flat_map(|t| &mut t.panes) {
            p.attention = Attention::None;
        }
        assert_eq!(next(&quiet, Some("pane_1")), None);
    }

    #[test]
    fn overlays_say_what_enter_does() {
        let home = Path::new("/home/u");
        let mut p = pane("pane_1", Attention::None);
        p.state = RestoreState::Resumable;
        p.agent.resume_argv = Some(vec!["claude".into(), "--resume".into(), "42".into()]);
        let o = overlay_of(&p, Some(home), None).expect("an overlay");
        assert_eq!(o.lines, ["Enter — resume `claude --resume 42`"]);

        p.state = RestoreState::Restored;
        p.agent.resume_argv = None;
        p.was_running = Some("cargo test".into());
        let o = overlay_of(&p, Some(home), Some("no such file")).expect("an overlay");
        assert_eq!(o.lines, ["Enter — new shell `bash` in `~/code`", "was running `cargo test`"]);
        assert_eq!(o.error.as_deref(), Some("no such file"));

        p.argv = vec!["htop".into()];
        p.was_running = None;
        let o = overlay_of(&p, None, None).expect("an overlay");
        assert_eq!(o.lines, ["Enter — start `htop` again in `/home/u/code`"]);

        p.state = RestoreState::Exited;
        p.exit_code = Some(2);
        let o = overlay_of(&p, None, None).expect("an overlay");
        assert_eq!(o.lines, ["exited with code 2", "Enter — restart `htop`"]);

        // Regression: a plain shell pane with a planted, self-reported command showed "new
        // shell" while Enter ran the planted command. The overlay shows the server's plan.
        p.state = RestoreState::Restored;
        p.argv = vec!["bash".into()];
        p.resume = Some(ResumePlan {
            argv: vec!["/bin/sh".into(), "-c".into(), "touch /tmp/planted".into()],
            source: ResumeSource::Reported,
        });
        let o = overlay_of(&p, None, None).expect("an overlay");
        assert_eq!(
            o.lines,
            ["Enter — run `/bin/sh -c 'touch /tmp/planted'`: a command the program reported \
              about itself, not checked by Berth"]
        );

        p.state = RestoreState::Live;
        assert_eq!(overlay_of(&p, None, None), None);
    }

    #[test]
    fn lifecycle_markers() {
        let info =
            |lifecycle, state| PaneInfo { lifecycle, state, ..fixtures::pane_info("pane_1") };
        let m =
            |l, s, secs: Option<u64>| lifecycle_marker(&info(l, s), secs.map(Duration::from_secs));
        let (live, working) = (RestoreState::Live, Lifecycle::Working);
        assert_eq!(m(working, live, Some(5)).as_deref(), Some("▶ working"));
        assert_eq!(m(working, live, Some(150)).as_deref(), Some("▶ working for 2m"));
        assert_eq!(m(working, live, Some(3720)).as_deref(), Some("▶ working for 1h02m"));
        assert_eq!(m(Lifecycle::Blocked, live, None).as_deref(), Some("◆ blocked"));
        assert_eq!(m(Lifecycle::Done, live, None).as_deref(), Some("✓ done"));
        assert_eq!(m(Lifecycle::Idle, live, None).as_deref(), Some("◇ idle"));
        assert_eq!(m(working, RestoreState::Restored, None), None);
        assert_eq!(m(Lifecycle::Starting, live, None), None);
    }

    #[test]
    fn a_running_job_is_named_and_an_ended_program_says_how_it_ended() {
        let base = fixtures::pane_info("pane_1");
        let marker = |p: PaneInfo, secs: u64| lifecycle_marker(&p, Some(Duration::from_secs(secs)));
        // A shell running `yes` is not idle: the header names the job.
        let yes =
            PaneInfo { lifecycle: Lifecycle::Working, job: Some("yes".into()), ..base.clone() };
        assert_eq!(marker(yes.clone(), 5).as_deref(), Some("▶ running yes"));
        assert_eq!(marker(yes, 150).as_deref(), Some("▶ running yes for 2m"));
        let long = "cargo test --workspace --all-targets -- --test-threads 1";
        let cargo =
            PaneInfo { lifecycle: Lifecycle::Working, job: Some(long.into()), ..base.clone() };
        let shown = marker(cargo, 5).expect("a marker");
        assert_eq!(shown, format!("▶ running {}", render::ellipsize(long, JOB_COLS)));
        assert!(shown.ends_with('…'));
        // An ended program: its exit code, or the signal that ended it.
        let exited = |code, signal: Option<&str>| PaneInfo {
            state: RestoreState::Exited,
            lifecycle: Lifecycle::Exited,
            exit_code: code,
            exit_signal: signal.map(str::to_owned),
            ..base.clone()
        };
        assert_eq!(marker(exited(Some(1), None), 0).as_deref(), Some("✗ exited 1"));
        assert_eq!(marker(exited(Some(0), None), 0).as_deref(), Some("✓ exited 0"));
        let killed = exited(Some(1), Some("SIGTERM"));
        assert_eq!(marker(killed, 0).as_deref(), Some("✗ killed by SIGTERM"));
        assert_eq!(marker(exited(None, None), 0), None);
    }

    #[test]
    fn the_switcher_filters_and_keeps_the_selection_in_view() {
        let list = list();
        let mut git = GitBranches::default();
        let all = switcher_entries(&list, "", None, &mut git);
        assert_eq!(all.len(), 2);
        assert!(all[0].1.current);
        assert_eq!(all[1].1.attention, 1);
        let some = switcher_entries(&list, "ST", None, &mut git);
        assert_eq!(some.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["ws_b"]);
        assert!(switcher_entries(&list, "zzz", None, &mut git).is_empty());
        let scene = switcher_scene(&Switcher { query: String::new(), selected: 1 }, &all, 100, 30);
        assert_eq!(scene.entries.len(), 2);
        assert_eq!(scene.selected, 1);
        assert_eq!(switcher_hit(&scene, scene.rect.col + 1, scene.rect.row + 3), Some(1));
        assert_eq!(switcher_hit(&scene, scene.rect.col + 1, scene.rect.row), None);
        // A window too short for both entries shows the highlighted one.
        let scene = switcher_scene(&Switcher { query: String::new(), selected: 1 }, &all, 100, 5);
        assert_eq!(scene.entries.len(), 1);
        assert_eq!(scene.entries[0].name, "site");
    }

    #[test]
    fn git_branches_come_from_head() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::create_dir_all(repo.join("src/deep")).expect("mkdir");
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature/x\n").expect("write");
        assert_eq!(read_branch(&repo.join("src/deep")).as_deref(), Some("feature/x"));
        std::fs::write(repo.join(".git/HEAD"), "0123456789abcdef\n").expect("write");
        assert_eq!(read_branch(&repo).as_deref(), Some("01234567"));
        assert_eq!(read_branch(dir.path()), None);
    }

    #[test]
    fn tilde_shortens_home() {
        let home = Path::new("/home/u");
        assert_eq!(tilde("/home/u", Some(home)), "~");
        assert_eq!(tilde("/home/u/x/y", Some(home)), "~/x/y");
        assert_eq!(tilde("/etc", Some(home)), "/etc");
        assert_eq!(render::ellipsize("abcdef", 4), "abc…");
        assert_eq!(render::ellipsize("ab\u{7}c", 4), "abc");
        // Widths, not characters: a wide character takes two cells.
        assert_eq!(render::ellipsize("漢字漢字", 5), "漢字…");
    }
}
