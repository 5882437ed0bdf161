//! The review view of a task (`ReviewView`): its diff's files with +/- counts and kind marks,
//! the selected file's hunks with line numbers, and merge/discard with their errors in place.
//!
//! A pure state machine: keys, clicks, the wheel and the link's answers change it, and it says
//! what to fetch or do next as [`ReviewAsk`]s, which `review_link.rs` carries out over the
//! socket on a thread of its own. A file's hunks come in pages of [`PAGE_HUNKS`]; the view
//! holds at most [`HELD_PAGES`] pages (the one the view starts in, one before, two after),
//! asks for the ones it needs as it scrolls and drops the rest, so a huge diff costs the window
//! a bounded amount of memory and never blocks its loop. It must not do I/O, lock the Store or
//! draw; its scene holds only the rows that show.

use std::collections::{BTreeMap, BTreeSet};

use berth_engine::ids::{PaneId, WorkspaceId};
use berth_server::gitctx::diff::{DiffFile, DiffHunk, FileStatus, LineKind};
use berth_server::persist::task_record::TaskRecord;
use winit::keyboard::{Key, ModifiersState, NamedKey};

use crate::render::{
    self, ButtonTone, CellRectU16, ReviewButton, ReviewFileRow, ReviewLine, ReviewLineKind,
    ReviewScene, ReviewSpan,
};

/// Hunks asked for at once (`diff.file`'s `limit`).
pub const PAGE_HUNKS: usize = 50;
/// The most pages of hunks the view holds: the one its top row is in, one before it and two
/// after it.
pub const HELD_PAGES: usize = 4;
/// Rows a wheel step scrolls.
const WHEEL_ROWS: usize = 3;
/// The most rows an error takes.
const MAX_STATUS_ROWS: usize = 4;
/// The most rows of the header (what is reviewed).
const MAX_HEADER_ROWS: usize = 6;

/// What the view needs done (by `review_link.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewAsk {
    /// Find the task to review: the one whose worker is `pane`, else the newest unfinished one
    /// of `workspace`, else the newest unfinished one.
    Resolve {
        /// The focused pane.
        pane: Option<PaneId>,
        /// The shown workspace.
        workspace: Option<WorkspaceId>,
    },
    /// The task's changed files (`diff.files`), of one turn or of all its work.
    Files {
        /// The task.
        task: String,
        /// One turn's checkpoint, or `None` for the whole worktree against the base.
        turn: Option<u32>,
    },
    /// The task itself (`task.show`): label, objective, state, report, turns, conflicts.
    Task {
        /// The task.
        task: String,
    },
    /// Keep a review comment on the task (`task.comment`).
    Comment {
        /// The task.
        task: String,
        /// The file.
        path: String,
        /// The first line.
        start: u64,
        /// The last line.
        end: u64,
        /// The comment.
        text: String,
    },
    /// Send the kept comments to the worker as one prompt (`task.send_comments`).
    SendComments {
        /// The task.
        task: String,
    },
    /// Merge the task another way than a merge commit (`task.finish --merge --…`).
    Land {
        /// The task.
        task: String,
        /// How.
        how: Landing,
    },
    /// A page of a file's hunks (`diff.file`, offset `page × PAGE_HUNKS`).
    Page {
        /// The task.
        task: String,
        /// The file.
        path: String,
        /// Which page.
        page: usize,
        /// The file selection it is for (answers for an older one are dropped).
        generation: u64,
        /// The turn shown (as in `Files`).
        turn: Option<u32>,
    },
    /// Merge (`true`) or discard the task (`task.finish`).
    Finish {
        /// The task.
        task: String,
        /// Merge, else discard.
        merge: bool,
    },
}

/// A way to merge other than a merge commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landing {
    /// One commit: the task's label and the agent's summary.
    Squash,
    /// The task's branch rebased onto the target, then fast-forwarded.
    Rebase,
    /// A fast-forward only.
    FastForward,
}

/// What the link answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ReviewAnswer {
    /// The task found, or why none.
    Resolved(Result<String, String>),
    /// The changed files.
    Files(Result<Vec<DiffFile>, String>),
    /// The task's record.
    Task(Result<Box<TaskRecord>, String>),
    /// A comment kept: the task's record with it.
    Commented(Result<Box<TaskRecord>, String>),
    /// The comments sent: how many, and the task's record after.
    Sent(Result<(usize, Box<TaskRecord>), String>),
    /// A page of hunks: the file's hunk count and the page's hunks.
    Page {
        /// The selection it was asked for.
        generation: u64,
        /// Which page.
        page: usize,
        /// `(total hunks, hunks)`.
        result: Result<(usize, Vec<DiffHunk>), String>,
    },
    /// The finish's outcome.
    Finished(Result<(), String>),
}

/// What a key does in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewKey {
    /// Close the view.
    Close,
    /// Scroll a row up.
    Up,
    /// Scroll a row down.
    Down,
    /// Scroll a screen up.
    PageUp,
    /// Scroll a screen down.
    PageDown,
    /// Back to the first hunk.
    Top,
    /// The next hunk.
    NextHunk,
    /// The previous hunk (or the start of this one).
    PrevHunk,
    /// The next file.
    NextFile,
    /// The previous file.
    PrevFile,
    /// Merge the task.
    Merge,
    /// Discard the task (asks again first).
    Discard,
    /// Show the next turn alone (after the last: all the work again).
    NextTurn,
    /// Start a comment on the selected lines (the top line shown when none).
    Comment,
    /// Stretch the selection a line down.
    SelectDown,
    /// Stretch the selection a line up.
    SelectUp,
    /// Send the kept comments to the worker.
    SendComments,
    /// Merge by another way (squash, rebase, fast-forward).
    Land(Landing),
    /// Scroll the diff's text right (long lines).
    ScrollRight,
    /// Scroll the diff's text back left.
    ScrollLeft,
}

impl ReviewKey {
    /// The view's key for a press, if it has one.
    pub fn of(key: Key<&str>, mods: ModifiersState) -> Option<ReviewKey> {
        if mods.control_key() || mods.alt_key() || mods.super_key() {
            return None;
        }
        Some(match key {
            Key::Named(NamedKey::Escape) => ReviewKey::Close,
            Key::Named(NamedKey::ArrowUp) if mods.shift_key() => ReviewKey::SelectUp,
            Key::Named(NamedKey::ArrowDown) if mods.shift_key() => ReviewKey::SelectDown,
            Key::Named(NamedKey::ArrowUp) => ReviewKey::Up,
            Key::Named(NamedKey::ArrowDown) => ReviewKey::Down,
            Key::Named(NamedKey::PageUp) => ReviewKey::PageUp,
            Key::Named(NamedKey::PageDown | NamedKey::Space) => ReviewKey::PageDown,
            Key::Named(NamedKey::Home) => ReviewKey::Top,
            Key::Named(NamedKey::Tab) if mods.shift_key() => ReviewKey::PrevFile,
            Key::Named(NamedKey::Tab | NamedKey::ArrowRight) => ReviewKey::NextFile,
            Key::Named(NamedKey::ArrowLeft) => ReviewKey::PrevFile,
            Key::Character(c) => match c {
                "q" => ReviewKey::Close,
                "k" => ReviewKey::Up,
                "j" => ReviewKey::Down,
                "g" => ReviewKey::Top,
                "n" => ReviewKey::NextHunk,
                "p" | "N" => ReviewKey::PrevHunk,
                "]" | "l" => ReviewKey::NextFile,
                "[" | "h" => ReviewKey::PrevFile,
                "m" => ReviewKey::Merge,
                "d" => ReviewKey::Discard,
                "t" => ReviewKey::NextTurn,
                "c" => ReviewKey::Comment,
                "J" => ReviewKey::SelectDown,
                "K" => ReviewKey::SelectUp,
                "s" => ReviewKey::SendComments,
                "S" => ReviewKey::Land(Landing::Squash),
                "r" => ReviewKey::Land(Landing::Rebase),
                "f" => ReviewKey::Land(Landing::FastForward),
                ">" => ReviewKey::ScrollRight,
                "<" => ReviewKey::ScrollLeft,
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// A button of the view, in the order they are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewButtonAction {
    /// Merge.
    Merge,
    /// Discard.
    Discard,
    /// Send the kept comments to the worker.
    Send,
    /// Close.
    Close,
}

const BUTTONS: [(ReviewButtonAction, &str, ButtonTone); 4] = [
    (ReviewButtonAction::Merge, " Merge m ", ButtonTone::Allow),
    (ReviewButtonAction::Discard, " Discard d ", ButtonTone::Deny),
    (ReviewButtonAction::Send, " Send to agent s ", ButtonTone::Always),
    (ReviewButtonAction::Close, " Close Esc ", ButtonTone::Always),
];

/// What a press at a window cell hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewHit {
    /// A button.
    Button(ReviewButtonAction),
    /// A file of the list (its index).
    File(usize),
    /// Anywhere else on the view.
    Inside,
    /// Not the view.
    Outside,
}

/// The line under the title.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    /// The keys.
    Keys,
    /// Something in progress or done.
    Info(String),
    /// An error, in place (red).
    Error(String),
    /// The first discard key: the next one discards.
    ConfirmDiscard,
}

/// Where things go in a view of `rect`.
struct Geometry {
    header: Vec<String>,
    status: Vec<String>,
    body_row: u16,
    body_rows: usize,
    list_cols: u16,
    file_top: usize,
}

/// The review view shown, numbered so that answers for a view already closed are dropped.
pub struct OpenReview {
    /// Its number.
    pub serial: u64,
    /// The view.
    pub view: ReviewView,
}

/// The review view of one task.
#[derive(Debug, Clone)]
pub struct ReviewView {
    /// The task (`None` while it is being found).
    task: Option<String>,
    /// The changed files (`None` until they come).
    files: Option<Vec<DiffFile>>,
    selected: usize,
    /// Bumped when another file is selected: answers for the old one are dropped.
    generation: u64,
    /// The selected file's hunk count, once a page told it.
    total_hunks: Option<usize>,
    /// The held pages of the selected file's hunks, by page number.
    pages: BTreeMap<usize, Vec<DiffHunk>>,
    /// Pages asked for and not answered yet.
    asked: BTreeSet<usize>,
    /// The top row of the diff: a hunk and a row in it (0 is its `@@` row).
    anchor: (usize, usize),
    status: Status,
    /// A finish is under way.
    finishing: bool,
    /// The view is done (closed, or its task merged or discarded).
    closed: bool,
    /// The task's record, once `task.show` answered.
    record: Option<Box<TaskRecord>>,
    /// The turn shown alone (`None`: all the task's work against its base).
    turn: Option<u32>,
    /// The lines selected for a comment.
    selection: Option<comments::Selection>,
    /// The comment being typed.
    composing: Option<String>,
    /// Each held page's syntax classes and changed words, hunk by hunk, line by line
    /// (`review_syntax.rs`), made when the page comes and dropped with it.
    marks: BTreeMap<usize, Vec<HunkMarks>>,
    /// Columns the diff's text is scrolled right (the line numbers stay).
    hscroll: usize,
}

/// One hunk's marks.
#[derive(Debug, Clone)]
struct HunkMarks {
    spans: Vec<Vec<ReviewSpan>>,
    changed: Vec<Option<(usize, usize)>>,
}

/// Columns one `>` or `<` scrolls the diff's text.
const HSCROLL_COLS: usize = 8;

impl ReviewView {
    /// The view of `task`, and what to fetch first.
    pub fn open(task: String) -> (ReviewView, Vec<ReviewAsk>) {
        let view = ReviewView::empty(Some(task.clone()));
        (view, vec![ReviewAsk::Task { task: task.clone() }, ReviewAsk::Files { task, turn: None }])
    }

    /// The view of the task the focused pane works on (or the workspace's newest), once found.
    pub fn find(
        pane: Option<PaneId>,
        workspace: Option<WorkspaceId>,
    ) -> (ReviewView, Vec<ReviewAsk>) {
        (ReviewView::empty(None), vec![ReviewAsk::Resolve { pane, workspace }])
    }

    fn empty(task: Option<String>) -> ReviewView {
        ReviewView {
            task,
            files: None,
            selected: 0,
            generation: 0,
            total_hunks: None,
            pages: BTreeMap::new(),
            asked: BTreeSet::new(),
            anchor: (0, 0),
            status: Status::Keys,
            finishing: false,
            closed: false,
            record: None,
            turn: None,
            selection: None,
            composing: None,
            marks: BTreeMap::new(),
            hscroll: 0,
        }
    }

    /// The task shown, once known.
    #[cfg(test)]
    pub fn task(&self) -> Option<&str> {
        self.task.as_deref()
    }

    /// Whether the view is done (Escape, or its task was merged or discarded).
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// The error shown in place, if any.
    #[cfg(test)]
    pub fn error(&self) -> Option<&str> {
        match &self.status {
            Status::Error(e) => Some(e),
            _ => None,
        }
    }

    /// How many diff lines the view holds now (its memory is bounded by this).
    #[cfg(test)]
    pub fn held_lines(&self) -> usize {
        self.pages.values().flatten().map(|h| h.lines.len() + 1).sum()
    }

    /// How many pages of hunks it holds.
    #[cfg(test)]
    pub fn held_pages(&self) -> usize {
        self.pages.len()
    }

    /// The selected file.
    fn file(&self) -> Option<&DiffFile> {
        self.files.as_ref()?.get(self.selected)
    }

    /// Whether the selected file has hunks to show.
    fn showable(&self) -> bool {
        self.file().is_some_and(|f| !f.binary && !f.too_large)
    }

    /// Rows hunk `h` takes, if it is held.
    fn hunk_rows(&self, h: usize) -> Option<usize> {
        self.pages.get(&(h / PAGE_HUNKS))?.get(h % PAGE_HUNKS).map(|hunk| hunk.lines.len() + 1)
    }

    fn hunk(&self, h: usize) -> Option<&DiffHunk> {
        self.pages.get(&(h / PAGE_HUNKS))?.get(h % PAGE_HUNKS)
    }

    /// Takes the link's answer; what to fetch next.
    pub fn answer(&mut self, answer: ReviewAnswer) -> Vec<ReviewAsk> {
        match answer {
            ReviewAnswer::Resolved(Ok(task)) => {
                self.task = Some(task.clone());
                vec![ReviewAsk::Task { task: task.clone() }, ReviewAsk::Files { task, turn: None }]
            }
            ReviewAnswer::Task(Ok(record)) => {
                self.record = Some(record);
                Vec::new()
            }
            ReviewAnswer::Commented(Ok(record)) => {
                let n = record.comments.len();
                self.record = Some(record);
                self.status = Status::Info(format!(
                    "comment kept ({n} kept) · s sends them to the agent as one prompt"
                ));
                Vec::new()
            }
            ReviewAnswer::Sent(Ok((sent, record))) => {
                self.record = Some(record);
                self.status = Status::Info(format!(
                    "{sent} comment(s) sent to the agent as one prompt; the task works again"
                ));
                Vec::new()
            }
            ReviewAnswer::Commented(Err(e)) | ReviewAnswer::Sent(Err(e)) => {
                self.status = Status::Error(e);
                Vec::new()
            }
            // The header stays as it was; the diff is what matters.
            ReviewAnswer::Task(Err(e)) => {
                tracing::debug!(error = %e, "the review's task.show failed");
                Vec::new()
            }
            ReviewAnswer::Resolved(Err(e)) | ReviewAnswer::Files(Err(e)) => {
                self.status = Status::Error(e);
                Vec::new()
            }
            ReviewAnswer::Files(Ok(files)) => {
                if files.is_empty() {
                    let what = match self.turn {
                        Some(t) => format!("turn {t} changed nothing"),
                        None => "no changes: nothing to review".into(),
                    };
                    self.status = Status::Info(what);
                } else if self.status != Status::ConfirmDiscard && !self.finishing {
                    self.status = Status::Keys;
                }
                self.files = Some(files);
                self.generation += 1;
                self.selected = usize::MAX;
                self.select(0)
            }
            ReviewAnswer::Page { generation, page, result } => {
                if generation != self.generation {
                    return Vec::new();
                }
                self.asked.remove(&page);
                match result {
                    Ok((total, hunks)) => {
                        self.total_hunks = Some(total);
                        if self.wanted(page) && !hunks.is_empty() {
                            let path = self.file().map(|f| f.path.clone()).unwrap_or_default();
                            let marks = hunks
                                .iter()
                                .map(|h| HunkMarks {
                                    spans: syntax::highlight(&path, h),
                                    changed: syntax::changed_words(h),
                                })
                                .collect();
                            self.marks.insert(page, marks);
                            self.pages.insert(page, hunks);
                        }
                        self.clamp_anchor();
                        self.ensure()
                    }
                    Err(e) => {
                        self.status = Status::Error(e);
                        Vec::new()
                    }
                }
            }
            ReviewAnswer::Finished(Ok(())) => {
                self.finishing = false;
                self.closed = true;
                Vec::new()
            }
            ReviewAnswer::Finished(Err(e)) => {
                self.finishing = false;
                self.status = Status::Error(e);
                Vec::new()
            }
        }
    }

    /// Selects file `index` (clamped): its hunks from the top.
    fn select(&mut self, index: usize) -> Vec<ReviewAsk> {
        let count = self.files.as_ref().map_or(0, Vec::len);
        let index = index.min(count.saturating_sub(1));
        if self.files.is_some() && index == self.selected && self.generation > 0 {
            return Vec::new();
        }
        self.selected = index;
        self.generation += 1;
        self.selection = None;
        self.composing = None;
        self.pages.clear();
        self.marks.clear();
        self.hscroll = 0;
        self.asked.clear();
        self.total_hunks = None;
        self.anchor = (0, 0);
        self.ensure()
    }

    /// The page the view's top row is in.
    fn anchor_page(&self) -> usize {
        self.anchor.0 / PAGE_HUNKS
    }

    /// Whether page `page` is among those the view keeps.
    fn wanted(&self, page: usize) -> bool {
        let at = self.anchor_page();
        page + 1 >= at && page <= at + 2
    }

    /// Asks for the pages the view needs and drops those too far away.
    fn ensure(&mut self) -> Vec<ReviewAsk> {
        let (Some(task), Some(file)) = (self.task.clone(), self.file().cloned()) else {
            return Vec::new();
        };
        if !self.showable() {
            return Vec::new();
        }
        let at = self.anchor_page();
        let keep: Vec<usize> = self.pages.keys().copied().filter(|p| self.wanted(*p)).collect();
        self.pages.retain(|p, _| keep.contains(p));
        self.marks.retain(|p, _| keep.contains(p));
        debug_assert!(self.pages.len() <= HELD_PAGES, "the view holds at most {HELD_PAGES} pages");
        let pages_total = self.total_hunks.map(|t| t.div_ceil(PAGE_HUNKS));
        // Until a page tells the count, the anchor's page; then the pages that exist.
        let mut need = Vec::new();
        match pages_total {
            None => need.push(at),
            Some(total) => {
                need.extend([at, at + 1].into_iter().filter(|p| *p < total));
                if at > 0 && at - 1 < total {
                    need.push(at - 1);
                }
            }
        }
        let mut asks = Vec::new();
        for page in need {
            if self.pages.contains_key(&page) || !self.asked.insert(page) {
                continue;
            }
            asks.push(ReviewAsk::Page {
                task: task.clone(),
                path: file.path.clone(),
                page,
                generation: self.generation,
                turn: self.turn,
            });
        }
        asks
    }

    /// Keeps the anchor on a hunk that exists.
    fn clamp_anchor(&mut self) {
        if let Some(total) = self.total_hunks {
            if total == 0 {
                self.anchor = (0, 0);
            } else if self.anchor.0 >= total {
                self.anchor = (total - 1, 0);
            }
        }
    }

    /// Scrolls `rows` down (positive) or up; it stops where hunks are not held yet.
    fn scroll(&mut self, rows: isize) {
        let mut n = rows.unsigned_abs();
        if rows > 0 {
            while n > 0 {
                let Some(len) = self.hunk_rows(self.anchor.0) else { break };
                let left = len - 1 - self.anchor.1.min(len - 1);
                if n <= left {
                    self.anchor.1 += n;
                    break;
                }
                let last = self.total_hunks.is_some_and(|t| self.anchor.0 + 1 >= t);
                if last {
                    self.anchor.1 = len - 1;
                    break;
                }
                n -= left + 1;
                self.anchor = (self.anchor.0 + 1, 0);
            }
        } else {
            while n > 0 {
                if self.anchor.1 > 0 {
                    let d = n.min(self.anchor.1);
                    self.anchor.1 -= d;
                    n -= d;
                    continue;
                }
                let Some(len) = self.anchor.0.checked_sub(1).and_then(|h| self.hunk_rows(h)) else {
                    break;
                };
                self.anchor = (self.anchor.0 - 1, len - 1);
                n -= 1;
            }
        }
    }

    /// A key, with the diff `rows` high; what to fetch or do.
    pub fn key(&mut self, key: ReviewKey, rows: usize) -> Vec<ReviewAsk> {
        let confirming = self.status == Status::ConfirmDiscard;
        if confirming && key != ReviewKey::Discard {
            self.status = Status::Keys;
        }
        let page = rows.saturating_sub(1).max(1) as isize;
        match key {
            ReviewKey::Close => {
                self.closed = true;
                return Vec::new();
            }
            ReviewKey::Up => self.scroll(-1),
            ReviewKey::Down => self.scroll(1),
            ReviewKey::PageUp => self.scroll(-page),
            ReviewKey::PageDown => self.scroll(page),
            ReviewKey::Top => self.anchor = (0, 0),
            ReviewKey::NextHunk => {
                let last = self.total_hunks.map_or(0, |t| t.saturating_sub(1));
                self.anchor = ((self.anchor.0 + 1).min(last), 0);
            }
            ReviewKey::PrevHunk => {
                self.anchor = match self.anchor {
                    (h, 0) => (h.saturating_sub(1), 0),
                    (h, _) => (h, 0),
                };
            }
            ReviewKey::NextFile => return self.select(self.selected + 1),
            ReviewKey::PrevFile => return self.select(self.selected.saturating_sub(1)),
            ReviewKey::Merge => return self.finish(true),
            ReviewKey::Discard if confirming => return self.finish(false),
            ReviewKey::Discard => {
                if self.task.is_some() && !self.finishing {
                    self.status = Status::ConfirmDiscard;
                }
            }
            ReviewKey::NextTurn => return self.next_turn(),
            ReviewKey::Comment => self.start_comment(),
            ReviewKey::SelectDown => self.stretch(1),
            ReviewKey::SelectUp => self.stretch(-1),
            ReviewKey::SendComments => return self.send_comments(),
            ReviewKey::Land(how) => return self.land(how),
            ReviewKey::ScrollRight => self.hscroll += HSCROLL_COLS,
            ReviewKey::ScrollLeft => self.hscroll = self.hscroll.saturating_sub(HSCROLL_COLS),
        }
        self.ensure()
    }

    /// The turns the task has checkpoints of.
    fn turns(&self) -> Vec<u32> {
        self.record.iter().flat_map(|r| r.checkpoints.iter().map(|c| c.turn)).collect()
    }

    /// Shows the next turn alone, or all the work after the last one; asks the task again
    /// too (new turns may have ended since).
    fn next_turn(&mut self) -> Vec<ReviewAsk> {
        let Some(task) = self.task.clone() else { return Vec::new() };
        let turns = self.turns();
        self.turn = match self.turn {
            None => turns.first().copied(),
            Some(t) => turns.iter().copied().find(|n| *n > t),
        };
        self.files = None;
        self.pages.clear();
        self.marks.clear();
        self.hscroll = 0;
        self.asked.clear();
        self.total_hunks = None;
        self.anchor = (0, 0);
        self.generation += 1;
        self.selection = None;
        self.composing = None;
        vec![ReviewAsk::Task { task: task.clone() }, ReviewAsk::Files { task, turn: self.turn }]
    }

    /// The rows above the status: what is reviewed (label, state, base and branch, the
    /// objective, the worker's report, the turns, conflicts), each cut to `width`.
    fn header_lines(&self, width: usize) -> Vec<String> {
        let Some(r) = self.record.as_deref() else { return Vec::new() };
        let short = |sha: &str| sha.chars().take(10).collect::<String>();
        let mut rows = vec![format!(
            "{} · {} · {} → {}",
            r.label,
            r.state.replace('_', " "),
            short(&r.base_sha),
            r.branch
        )];
        let objective = r.contract.objective.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        rows.push(format!("Objective: {}", objective.trim()));
        if let Some(result) = &r.result {
            let mut report = format!("Report ({}): {}", result.status, result.summary.trim());
            if let Some(evidence) = result.evidence.as_deref().filter(|e| !e.trim().is_empty()) {
                report.push_str(&format!(" · Evidence: {}", evidence.trim()));
            }
            rows.push(report.replace('\n', " "));
        }
        if !r.checkpoints.is_empty() {
            let mut turns = String::from("Turns:");
            let mark =
                |on: bool, text: &str| if on { format!(" [{text}]") } else { format!(" {text}") };
            turns.push_str(&mark(self.turn.is_none(), "all"));
            for c in &r.checkpoints {
                let name = match c.kind.as_str() {
                    "before_revert" => format!("{} (before a revert)", c.turn),
                    "revert" => format!("{} (revert)", c.turn),
                    _ => c.turn.to_string(),
                };
                turns.push_str(&mark(self.turn == Some(c.turn), &name));
            }
            turns.push_str(" · t next turn");
            rows.push(turns);
        }
        rows.extend(self.comments_line());
        for c in &r.conflicts {
            let other = match c.task.strip_prefix("target:") {
                Some(branch) => format!("the target {branch}"),
                None => format!("task {}", c.task),
            };
            rows.push(format!("⚠ conflicts with {other} in {}", c.files.join(", ")));
        }
        rows.truncate(MAX_HEADER_ROWS);
        rows.into_iter().map(|row| render::ellipsize(&row, width.max(8))).collect()
    }

    /// Merge another way, unless a finish is under way.
    fn land(&mut self, how: Landing) -> Vec<ReviewAsk> {
        let Some(task) = self.task.clone() else { return Vec::new() };
        if self.finishing {
            return Vec::new();
        }
        self.finishing = true;
        let doing = match how {
            Landing::Squash => "squashing",
            Landing::Rebase => "rebasing and fast-forwarding",
            Landing::FastForward => "fast-forwarding",
        };
        self.status = Status::Info(format!("{doing} {task}…"));
        vec![ReviewAsk::Land { task, how }]
    }

    /// Merge or discard, unless one is under way.
    fn finish(&mut self, merge: bool) -> Vec<ReviewAsk> {
        let Some(task) = self.task.clone() else { return Vec::new() };
        if self.finishing {
            return Vec::new();
        }
        self.finishing = true;
        let doing = if merge { "merging" } else { "discarding" };
        self.status = Status::Info(format!("{doing} {task}…"));
        vec![ReviewAsk::Finish { task, merge }]
    }

    /// The wheel over the view: `steps` notches up or down.
    pub fn wheel(&mut self, up: bool, steps: usize) -> Vec<ReviewAsk> {
        let rows = (steps * WHEEL_ROWS) as isize;
        self.scroll(if up { -rows } else { rows });
        self.ensure()
    }

    /// A press on what `hit` found, with the diff `rows` high.
    pub fn press(&mut self, hit: ReviewHit, rows: usize) -> Vec<ReviewAsk> {
        match hit {
            ReviewHit::Button(ReviewButtonAction::Merge) => self.key(ReviewKey::Merge, rows),
            ReviewHit::Button(ReviewButtonAction::Discard) => {
                // A click asks no confirmation twice: the button says what it does.
                if self.status != Status::ConfirmDiscard {
                    self.key(ReviewKey::Discard, rows);
                }
                self.key(ReviewKey::Discard, rows)
            }
            ReviewHit::Button(ReviewButtonAction::Close) => self.key(ReviewKey::Close, rows),
            ReviewHit::Button(ReviewButtonAction::Send) => self.key(ReviewKey::SendComments, rows),
            ReviewHit::File(index) => self.select(index),
            ReviewHit::Inside | ReviewHit::Outside => Vec::new(),
        }
    }

    /// What the status rows say, wrapped to `width`.
    fn status_lines(&self, width: usize) -> Vec<String> {
        if let Some(line) = self.composing_line() {
            return wrap(&line, width.max(8), MAX_STATUS_ROWS);
        }
        let text = match &self.status {
            Status::Keys => {
                "↑↓ PgUp PgDn · n p hunk · Tab ⇧Tab file · t turn · < > scroll · c J K comment · s send · m merge (S squash, r rebase, f fast-forward) · d discard · Esc close"
                    .to_owned()
            }
            Status::Info(s) => s.clone(),
            Status::Error(e) => e.clone(),
            Status::ConfirmDiscard => {
                "press d again to discard the task's work (any other key keeps it)".to_owned()
            }
        };
        wrap(&text, width.max(8), MAX_STATUS_ROWS)
    }

    fn geometry(&self, rect: CellRectU16) -> Geometry {
        let width = usize::from(rect.cols.saturating_sub(2));
        let mut header = self.header_lines(width);
        // The header gives way on a short view: the diff keeps at least half.
        header.truncate(usize::from(rect.rows / 4));
        let status = self.status_lines(width);
        let status_rows = u16::try_from(status.len() + header.len()).unwrap_or(1);
        let body_row = rect.row + 1 + status_rows;
        let body_rows = usize::from((rect.row + rect.rows).saturating_sub(body_row));
        let list_cols = (rect.cols * 2 / 5).clamp(16, 48);
        let file_top = (self.selected + 1).saturating_sub(body_rows.max(1));
        Geometry { header, status, body_row, body_rows, list_cols, file_top }
    }

    /// How many diff rows a view of `rect` shows.
    pub fn body_rows(&self, rect: CellRectU16) -> usize {
        self.geometry(rect).body_rows
    }

    /// What a press at window cell (`col`, `row`) hits on a view of `rect`.
    pub fn hit(&self, rect: CellRectU16, col: u16, row: u16) -> ReviewHit {
        if !inside(rect, col, row) {
            return ReviewHit::Outside;
        }
        let g = self.geometry(rect);
        if row == rect.row {
            let rel = col - rect.col;
            let pressed = buttons(rect.cols).into_iter().find(|(_, b)| b.cols.contains(&rel));
            return pressed.map_or(ReviewHit::Inside, |(a, _)| ReviewHit::Button(a));
        }
        if row >= g.body_row && col < rect.col + g.list_cols {
            let index = g.file_top + usize::from(row - g.body_row);
            if index < self.files.as_ref().map_or(0, Vec::len) {
                return ReviewHit::File(index);
            }
        }
        ReviewHit::Inside
    }

    /// The scene of a view covering `rect`.
    pub fn scene(&self, rect: CellRectU16) -> ReviewScene {
        let g = self.geometry(rect);
        let task = match (&self.record, &self.task) {
            (Some(r), _) if !r.label.is_empty() => r.label.clone(),
            (_, Some(t)) => t.clone(),
            _ => "finding the task…".to_owned(),
        };
        let task = match self.turn {
            Some(t) => format!("{task} · turn {t}"),
            None => task,
        };
        let title = match &self.files {
            None => format!("Review {task} · loading…"),
            Some(files) => {
                let added: u64 = files.iter().map(|f| f.added).sum();
                let removed: u64 = files.iter().map(|f| f.removed).sum();
                let n = files.len();
                format!("Review {task} · {n} file{} +{added} −{removed}", plural(n))
            }
        };
        let files = self
            .files
            .iter()
            .flatten()
            .enumerate()
            .skip(g.file_top)
            .take(g.body_rows)
            .map(|(i, f)| file_row(f, i == self.selected))
            .collect();
        ReviewScene {
            rect,
            title,
            buttons: buttons(rect.cols).into_iter().map(|(_, b)| b).collect(),
            error: matches!(self.status, Status::Error(_)),
            header: g.header,
            status: g.status,
            body_row: g.body_row,
            list_cols: g.list_cols,
            files,
            lines: self.rows(g.body_rows),
        }
    }

    /// The diff rows from the anchor, at most `max`.
    fn rows(&self, max: usize) -> Vec<ReviewLine> {
        let note =
            |text: String| ReviewLine { kind: ReviewLineKind::Note, text, ..ReviewLine::default() };
        let Some(file) = self.file() else {
            return match &self.files {
                None => vec![note("loading the files…".into())],
                Some(_) => Vec::new(),
            };
        };
        if file.binary {
            return vec![note("binary file: not shown".into())];
        }
        if file.too_large {
            let lines = file.added + file.removed;
            return vec![note(format!(
                "too large to show here ({lines} changed lines): `berth diff` prints it"
            ))];
        }
        if self.total_hunks == Some(0) {
            return vec![note("no line changes (renamed or mode only)".into())];
        }
        let mut out = Vec::new();
        let (mut h, mut skip) = self.anchor;
        while out.len() < max {
            if self.total_hunks.is_some_and(|t| h >= t) {
                break;
            }
            let Some(hunk) = self.hunk(h) else {
                out.push(note(format!("loading hunk {}…", h + 1)));
                break;
            };
            if skip == 0 {
                let header = format!(
                    "@@ -{},{} +{},{} @@ {}",
                    hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines, hunk.header
                );
                out.push(ReviewLine {
                    kind: ReviewLineKind::Hunk,
                    text: header.trim_end().to_owned(),
                    ..ReviewLine::default()
                });
            }
            let first = skip.saturating_sub(1);
            let marks = self.marks.get(&(h / PAGE_HUNKS)).and_then(|m| m.get(h % PAGE_HUNKS));
            for (i, line) in hunk.lines.iter().enumerate().skip(first) {
                if out.len() >= max {
                    break;
                }
                let spans = marks.and_then(|m| m.spans.get(i)).map_or(&[][..], Vec::as_slice);
                let changed = marks.and_then(|m| m.changed.get(i).copied().flatten());
                let (text, spans, changed) = shifted(&line.text, spans, changed, self.hscroll);
                out.push(ReviewLine {
                    selected: self.selection.is_some_and(|s| s.holds(h, i)),
                    spans,
                    changed,
                    kind: match line.kind {
                        LineKind::Added => ReviewLineKind::Added,
                        LineKind::Removed => ReviewLineKind::Removed,
                        LineKind::Context => ReviewLineKind::Context,
                    },
                    old: line.old_line,
                    new: line.new_line,
                    text,
                });
            }
            h += 1;
            skip = 0;
        }
        out
    }
}

/// A line's text, spans and changed range scrolled `by` chars to the left (tabs as one
/// space each, so the char offsets of the marks stay those of the text).
fn shifted(
    text: &str,
    spans: &[ReviewSpan],
    changed: Option<(usize, usize)>,
    by: usize,
) -> (String, Vec<ReviewSpan>, Option<(usize, usize)>) {
    let text: String = text.chars().skip(by).map(|c| if c == '\t' { ' ' } else { c }).collect();
    let spans = spans
        .iter()
        .filter(|s| s.start + s.len > by)
        .map(|s| {
            let start = s.start.max(by);
            ReviewSpan { start: start - by, len: s.start + s.len - start, class: s.class }
        })
        .collect();
    let changed = changed.filter(|(_, end)| *end > by).map(|(a, b)| (a.max(by) - by, b - by));
    (text, spans, changed)
}

/// Whether window cell (`col`, `row`) is in `rect`.
pub fn inside(rect: CellRectU16, col: u16, row: u16) -> bool {
    (rect.col..rect.col.saturating_add(rect.cols)).contains(&col)
        && (rect.row..rect.row.saturating_add(rect.rows)).contains(&row)
}

/// The buttons at the right end of the title row of a view `cols` wide.
fn buttons(cols: u16) -> Vec<(ReviewButtonAction, ReviewButton)> {
    let all = buttons_of(cols, BUTTONS.iter());
    if all.len() == BUTTONS.len() {
        return all;
    }
    // A narrow view: Send gives way first (its key `s` still sends).
    buttons_of(cols, BUTTONS.iter().filter(|(a, _, _)| *a != ReviewButtonAction::Send))
}

fn buttons_of<'a>(
    cols: u16,
    wanted: impl DoubleEndedIterator<Item = &'a (ReviewButtonAction, &'static str, ButtonTone)>,
) -> Vec<(ReviewButtonAction, ReviewButton)> {
    let mut end = cols.saturating_sub(1);
    let mut out = Vec::new();
    for (action, label, tone) in wanted.rev() {
        let w = u16::try_from(render::str_width(label)).unwrap_or(u16::MAX);
        let Some(start) = end.checked_sub(w) else { break };
        out.push((
            *action,
            ReviewButton { label: (*label).to_owned(), cols: start..end, tone: *tone },
        ));
        end = start.saturating_sub(1);
    }
    out.reverse();
    out
}

/// A file's row in the list.
fn file_row(f: &DiffFile, selected: bool) -> ReviewFileRow {
    let mark = match f.status {
        FileStatus::Added => 'A',
        FileStatus::Modified => 'M',
        FileStatus::Deleted => 'D',
        FileStatus::Renamed => 'R',
        FileStatus::Copied => 'C',
        FileStatus::TypeChanged => 'T',
        FileStatus::Unmerged => 'U',
    };
    let path = match &f.old_path {
        Some(old) => format!("{old} → {}", f.path),
        None => f.path.clone(),
    };
    let counts = if f.binary {
        "binary".to_owned()
    } else if f.too_large {
        "too large".to_owned()
    } else {
        format!("+{} −{}", f.added, f.removed)
    };
    ReviewFileRow { mark, path, counts, selected }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `text` in rows of at most `width` characters, broken at spaces where it can, at most
/// `max` rows (the last one cut with `…`).
fn wrap(text: &str, width: usize, max: usize) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in text.split_whitespace() {
        let fits = render::str_width(&row) + 1 + render::str_width(word) <= width;
        if !row.is_empty() && !fits {
            rows.push(std::mem::take(&mut row));
        }
        if !row.is_empty() {
            row.push(' ');
        }
        row.push_str(word);
        while render::str_width(&row) > width {
            let head: String = row.chars().take(width).collect();
            let tail: String = row.chars().skip(width).collect();
            rows.push(head);
            row = tail;
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    if rows.len() > max {
        rows.truncate(max);
        if let Some(last) = rows.last_mut() {
            *last = render::ellipsize(&format!("{last} …"), width);
        }
    }
    rows
}

#[path = "review_comments.rs"]
mod comments;
#[path = "review_syntax.rs"]
mod syntax;

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
