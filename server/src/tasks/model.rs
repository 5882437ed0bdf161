//! What a task is: its states and the one function that says which change is allowed, its
//! contract and the checks on it, the worker's prompt composed from it, and the typed `Task`
//! the Store keeps (mapped to and from the snapshot's `TaskRecord`).
//!
//! Pure data and pure functions: no git, no processes, no Store.

use berth_engine::ids::{PaneId, TaskId};
use serde_json::{json, Value};

use crate::persist::task_record::{ContractRecord, DispositionRecord, TaskRecord};

/// The most bytes an objective may have (32 KiB).
pub const MAX_OBJECTIVE_BYTES: usize = 32 * 1024;
/// The most bytes of a constraint, an acceptance criterion or the output format.
pub const MAX_ITEM_BYTES: usize = 4 * 1024;
/// The most constraints, or acceptance criteria, of one contract.
pub const MAX_ITEMS: usize = 32;
/// The most bytes of the contract's sections together (the prompt's body, headings aside).
pub const MAX_BODY_BYTES: usize = 32 * 1024;
/// The most bytes of a composed prompt: the body, its headings and the task's preamble.
pub const MAX_TASK_PROMPT_BYTES: usize = MAX_BODY_BYTES + 4 * 1024;
/// The most bytes of a report's summary (8 KiB).
pub const MAX_SUMMARY_BYTES: usize = 8 * 1024;
/// The most artifacts of one report.
pub const MAX_ARTIFACTS: usize = 32;
/// The most bytes of a label.
pub const MAX_LABEL_BYTES: usize = 256;
/// The most review comments a task holds before they are sent.
pub const MAX_COMMENTS: usize = 64;
/// The most bytes of one review comment.
pub const MAX_COMMENT_BYTES: usize = 4 * 1024;
/// The highest line number a review comment may name (far past any file Berth diffs).
pub const MAX_COMMENT_LINE: u64 = 10_000_000;
/// The longest a task's start waits for its agent to be ready, in seconds.
pub const MAX_READY_TIMEOUT_S: u64 = 3600;
/// The longest silence a task's watch may be told to wait for, in seconds (a week).
pub const MAX_SILENCE_S: u64 = 7 * 24 * 3600;

/// A task's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Created; the worktree and the agent are being set up.
    Pending,
    /// The agent has its prompt and works.
    Working,
    /// The agent waits for the user (a turn without a report, a decision, silence).
    InputRequired,
    /// The worker reported the work done.
    Completed,
    /// Set-up failed, the worker reported failure, its pane died or a restart found it.
    Failed,
    /// The user canceled it.
    Canceled,
    /// The worker finished but says the work does not meet the acceptance criteria.
    Rejected,
}

impl TaskState {
    /// Every state.
    pub const ALL: [Self; 7] = [
        Self::Pending,
        Self::Working,
        Self::InputRequired,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::Rejected,
    ];

    /// The wire and disk name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Canceled => "canceled",
            Self::Rejected => "rejected",
        }
    }

    /// The state of a wire or disk name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Whether nothing can change the state any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Canceled | Self::Rejected)
    }

    /// The one rule of the lifecycle: `pending → working ⇄ input_required → completed | failed
    /// | canceled | rejected`; a terminal state never changes, and no state moves to itself.
    pub fn can_transition_to(self, to: Self) -> bool {
        use TaskState::*;
        matches!(
            (self, to),
            (Pending, Working)
                | (Working, InputRequired)
                | (InputRequired, Working)
                | (Pending | Working | InputRequired, Completed | Failed | Canceled | Rejected)
        )
    }
}

/// A task's contract as given, checked by [`check_contract`].
pub type Contract = ContractRecord;

fn check_item(what: &str, text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(format!("{what} is empty"));
    }
    if text.len() > MAX_ITEM_BYTES {
        return Err(format!("{what} is {} bytes; at most {MAX_ITEM_BYTES} bytes", text.len()));
    }
    Ok(())
}

/// Checks a contract before anything is created: an objective of 1 byte to 32 KiB, at most
/// [`MAX_ITEMS`] constraints and acceptance criteria of at most 4 KiB each, and a body of at
/// most 32 KiB in all.
pub fn check_contract(contract: &Contract) -> Result<(), String> {
    let objective = &contract.objective;
    if objective.trim().is_empty() {
        return Err("the objective is empty; say what the worker should do (--objective)".into());
    }
    if objective.len() > MAX_OBJECTIVE_BYTES {
        return Err(format!(
            "the objective is {} bytes; at most {MAX_OBJECTIVE_BYTES} bytes (32 KiB)",
            objective.len()
        ));
    }
    for (what, items) in
        [("constraint", &contract.constraints), ("acceptance criterion", &contract.acceptance)]
    {
        if items.len() > MAX_ITEMS {
            return Err(format!("{} {what}s; at most {MAX_ITEMS}", items.len()));
        }
        for item in items {
            check_item(&format!("a {what}"), item)?;
        }
    }
    if let Some(format) = &contract.output_format {
        check_item("the output format", format)?;
    }
    let body = objective.len()
        + contract.constraints.iter().chain(&contract.acceptance).map(String::len).sum::<usize>()
        + contract.output_format.as_ref().map_or(0, String::len);
    if body > MAX_BODY_BYTES {
        return Err(format!(
            "the contract is {body} bytes in all; at most {MAX_BODY_BYTES} bytes (32 KiB)"
        ));
    }
    Ok(())
}

/// Checks a label: at most [`MAX_LABEL_BYTES`], no control characters.
pub fn check_label(label: &str) -> Result<(), String> {
    if label.len() > MAX_LABEL_BYTES || label.chars().any(char::is_control) {
        return Err(format!(
            "the label must be at most {MAX_LABEL_BYTES} bytes without control characters"
        ));
    }
    Ok(())
}

/// The branch's name part for a task: a few words of the label (or objective) and the id's
/// first hex digits, e.g. `fix-the-parser-3f9a1c`; always `[a-z0-9-]`, never empty.
pub fn slug(id: &TaskId, label: &str) -> String {
    let mut words = String::new();
    for c in label.chars() {
        if words.len() >= 32 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            words.push(c.to_ascii_lowercase());
        } else if !words.is_empty() && !words.ends_with('-') {
            words.push('-');
        }
    }
    let words = words.trim_end_matches('-');
    let hex = &id.as_str()[TaskId::PREFIX.len()..];
    let short = &hex[..hex.len().min(8)];
    if words.is_empty() {
        format!("task-{short}")
    } else {
        format!("{words}-{short}")
    }
}

/// The prompt a worker receives: a preamble naming the task, its branch and base, and how to
/// report, then the contract's sections. `berth` is the program the worker is told to run:
/// this server's own binary by its absolute path where known (an agent that runs commands in
/// a login shell, as codex does with `bash -lc`, gets the PATH the profile sets, which need not
/// hold Berth's), and the task named on the command line (nothing rests on the environment).
pub fn compose_prompt(
    id: &TaskId,
    branch: &str,
    base_sha: &str,
    contract: &Contract,
    berth: Option<&str>,
) -> String {
    let berth = berth.map_or_else(|| "berth".to_owned(), shell_word);
    let mut p = format!(
        "You are working on Berth task {id}, in your own git worktree on branch {branch}, cut \
         from {base_sha}. Stay inside this worktree; commit your work on this branch. When you \
         are done, or blocked, run \
         `{berth} task report --task {id} --status completed|failed|rejected --summary \"...\"` \
         exactly so (the absolute path: a login shell may not have Berth on its PATH).\
         \n\n## Objective\n\n{}\n",
        contract.objective
    );
    if !contract.constraints.is_empty() {
        p.push_str("\n## Constraints\n\n");
        for c in &contract.constraints {
            p.push_str(&format!("- {c}\n"));
        }
    }
    if !contract.acceptance.is_empty() {
        p.push_str("\n## Acceptance Criteria\n\n");
        for c in &contract.acceptance {
            p.push_str(&format!("- {c}\n"));
        }
    }
    if let Some(format) = &contract.output_format {
        p.push_str(&format!("\n## Expected Output Format\n\n{format}\n"));
    }
    p
}

/// `word` as one shell word: as it is when it is plain, else in single quotes.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// One task as the Store keeps it: the typed id, state and pane, and the rest of its record.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Its id.
    pub id: TaskId,
    /// Its state, changed only through [`Task::transition`].
    state: TaskState,
    /// The worker pane, while it has one.
    pub pane: Option<PaneId>,
    /// Everything else, as saved (its `id`, `state` and `pane_id` are written by
    /// [`Task::to_record`]).
    pub record: TaskRecord,
}

/// A transition that the lifecycle does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTransition {
    /// From.
    pub from: TaskState,
    /// To.
    pub to: TaskState,
}

impl std::fmt::Display for BadTransition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.from.is_terminal() {
            write!(f, "the task is {} already; a finished task does not change", self.from.as_str())
        } else {
            write!(f, "a {} task cannot become {}", self.from.as_str(), self.to.as_str())
        }
    }
}

impl Task {
    /// A new pending task.
    pub fn new(id: TaskId, record: TaskRecord) -> Self {
        Self { id, state: TaskState::Pending, pane: None, record }
    }

    /// Its state.
    pub fn state(&self) -> TaskState {
        self.state
    }

    /// Moves to `to` if the lifecycle allows it, recording why (`reason` replaces the status
    /// reason; `None` clears it).
    pub fn transition(
        &mut self,
        to: TaskState,
        reason: Option<Value>,
        now: u64,
    ) -> Result<(), BadTransition> {
        if !self.state.can_transition_to(to) {
            return Err(BadTransition { from: self.state, to });
        }
        self.state = to;
        self.record.status_reason = reason;
        self.record.updated_at = now;
        Ok(())
    }

    /// Back to `working` for a reviewer's comments: from `input_required`, or from
    /// `completed` or `rejected` while the work is not merged or discarded (the report is
    /// cleared then; the worker reports again). The one way out of a terminal state: the
    /// worker's pane is still there and the reviewer asked for more. A working task stays.
    pub fn reopen(&mut self, now: u64) -> Result<(), BadTransition> {
        let to = TaskState::Working;
        let reopenable = matches!(self.state, TaskState::Completed | TaskState::Rejected)
            && self.record.disposition.outcome.as_str() != "merged"
            && self.record.disposition.outcome.as_str() != "discarded"
            && self.pane.is_some();
        match self.state {
            TaskState::Working => Ok(()),
            TaskState::InputRequired => self.transition(to, None, now),
            _ if reopenable => {
                self.state = to;
                self.record.result = None;
                self.record.status_reason = Some(json!({ "reason": "review_comments" }));
                self.record.updated_at = now;
                Ok(())
            }
            from => Err(BadTransition { from, to }),
        }
    }

    /// The record to save or send.
    pub fn to_record(&self) -> TaskRecord {
        let mut record = self.record.clone();
        record.id = self.id.to_string();
        record.state = self.state.as_str().to_owned();
        record.pane_id = self.pane.as_ref().map(ToString::to_string);
        if record.disposition.outcome.is_empty() {
            record.disposition.outcome = "none".into();
        }
        record
    }

    /// A task from its saved record; `None` when its id or state cannot be read.
    pub fn from_record(record: TaskRecord) -> Option<Self> {
        let id = TaskId::parse(&record.id).ok()?;
        let state = TaskState::parse(&record.state)?;
        let pane = record.pane_id.as_deref().and_then(|p| PaneId::parse(p).ok());
        Some(Self { id, state, pane, record })
    }
}

/// The prompt that carries review comments to the worker: each file and line range with
/// its comment, in the order they were made.
pub fn compose_comments(comments: &[crate::persist::task_record::CommentRecord]) -> String {
    let mut p = String::from(
        "A reviewer commented on your changes. Address each comment in this worktree, then \
         report again with `berth task report`.\n",
    );
    for c in comments {
        p.push_str(&format!("\n- {}:{}: {}", c.path, range_text(c), c.text.trim()));
    }
    p.push('\n');
    p
}

fn range_text(c: &crate::persist::task_record::CommentRecord) -> String {
    if c.end > c.start {
        format!("{}-{}", c.start, c.end)
    } else {
        c.start.to_string()
    }
}

/// A fresh record's disposition.
pub fn no_disposition() -> DispositionRecord {
    DispositionRecord { outcome: "none".into(), ..DispositionRecord::default() }
}

/// The evidence of a failed stage.
pub fn stage_evidence(stage: &str, detail: impl Into<String>) -> Value {
    json!({ "stage": stage, "error": detail.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (from, to) pair against the documented table.
    #[test]
    fn every_transition_pair_follows_the_table() {
        use TaskState::*;
        let allowed: &[(TaskState, &[TaskState])] = &[
            (Pending, &[Working, Completed, Failed, Canceled, Rejected]),
            (Working, &[InputRequired, Completed, Failed, Canceled, Rejected]),
            (InputRequired, &[Working, Completed, Failed, Canceled, Rejected]),
            (Completed, &[]),
            (Failed, &[]),
            (Canceled, &[]),
            (Rejected, &[]),
        ];
        let mut checked = 0;
        for (from, tos) in allowed {
            for to in TaskState::ALL {
                assert_eq!(from.can_transition_to(to), tos.contains(&to), "{from:?} → {to:?}");
                let mut task = Task::new(TaskId::new(), TaskRecord::default());
                task.state = *from;
                let moved = task.transition(to, None, 1);
                assert_eq!(moved.is_ok(), tos.contains(&to));
                assert_eq!(task.state(), if moved.is_ok() { to } else { *from });
                checked += 1;
            }
        }
        assert_eq!(checked, 49);
        for s in TaskState::ALL {
            assert_eq!(TaskState::parse(s.as_str()), Some(s));
            assert!(crate::persist::task_record::TASK_STATES.contains(&s.as_str()));
        }
    }

    #[test]
    fn contracts_are_checked_before_anything_is_made() {
        let ok = |objective: &str| Contract { objective: objective.into(), ..Contract::default() };
        assert!(check_contract(&ok("x")).is_ok());
        assert!(check_contract(&ok(&"x".repeat(MAX_OBJECTIVE_BYTES))).is_ok());
        assert!(check_contract(&ok("")).unwrap_err().contains("empty"));
        assert!(check_contract(&ok(" \n")).unwrap_err().contains("empty"));
        assert!(check_contract(&ok(&"x".repeat(33 * 1024))).unwrap_err().contains("32 KiB"));
        let mut many = ok("x");
        many.constraints = vec!["c".into(); MAX_ITEMS + 1];
        assert!(check_contract(&many).is_err());
        let mut big = ok(&"x".repeat(MAX_OBJECTIVE_BYTES - 10));
        big.acceptance = vec!["a".repeat(100)];
        assert!(check_contract(&big).unwrap_err().contains("in all"));
        let mut blank = ok("x");
        blank.output_format = Some(String::new());
        assert!(check_contract(&blank).is_err());
        // The largest contract accepted still makes a prompt `pane.submit` takes for a task.
        let mut largest = ok(&"x".repeat(MAX_BODY_BYTES - 2 * MAX_ITEMS - 1));
        largest.constraints = vec!["c".into(); MAX_ITEMS];
        largest.acceptance = vec!["a".into(); MAX_ITEMS];
        largest.output_format = Some("f".into());
        check_contract(&largest).unwrap();
        let prompt =
            compose_prompt(&TaskId::new(), &"b".repeat(256), &"0".repeat(64), &largest, None);
        assert!(prompt.len() <= MAX_TASK_PROMPT_BYTES, "{}", prompt.len());
    }

    /// Issue 26: codex runs commands in `bash -lc`, whose profile resets PATH; the prompt
    /// names Berth by its absolute path, quoted for the shell, and the task by its id.
    #[test]
    fn the_prompt_names_berth_by_its_path_and_the_task_by_its_id() {
        let id = TaskId::new();
        let contract = Contract { objective: "x".into(), ..Contract::default() };
        let p = compose_prompt(&id, "b", "c", &contract, Some("/opt/my berth/bin/berth"));
        assert!(
            p.contains(&format!("`'/opt/my berth/bin/berth' task report --task {id} --status")),
            "{p}"
        );
        let p = compose_prompt(&id, "b", "c", &contract, Some("/usr/bin/berth"));
        assert!(p.contains(&format!("`/usr/bin/berth task report --task {id} ")), "{p}");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn slugs_are_branch_safe_and_distinct() {
        let a = TaskId::new();
        let s = slug(&a, "Fix the parser: ünïcode & --flags!");
        assert!(s.starts_with("fix-the-parser-n-code-flags-"), "{s}");
        assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
        assert!(slug(&a, "!!!").starts_with("task-"));
        assert_ne!(slug(&a, "x"), slug(&TaskId::new(), "x"));
    }

    #[test]
    fn the_prompt_names_the_task_and_holds_the_sections_set() {
        let id = TaskId::new();
        let contract = Contract {
            objective: "Add a file".into(),
            constraints: vec!["no deps".into()],
            acceptance: vec![],
            output_format: Some("a list".into()),
        };
        let p = compose_prompt(&id, "berth/x", "abc123", &contract, None);
        for part in [id.as_str(), "berth/x", "abc123", "berth task report", "## Objective"] {
            assert!(p.contains(part), "{part}");
        }
        assert!(p.contains("## Constraints\n\n- no deps"));
        assert!(!p.contains("## Acceptance Criteria"));
        assert!(p.contains("## Expected Output Format\n\na list"));
        let record = Task::new(id.clone(), TaskRecord::default()).to_record();
        let back = Task::from_record(record).unwrap();
        assert_eq!(back.id, id);
        assert_eq!(back.state(), TaskState::Pending);
    }
}
