//! Review comments in the review view (issue 31): lines of a hunk selected (`c` starts on the
//! top line shown, `J`/`K` or ⇧↓/⇧↑ stretch the range within its hunk), a comment typed in the
//! status row (Enter keeps it on the task with `task.comment`, Escape drops it), the kept
//! comments listed in the header, and `s` (or the Send button) sending them all to the worker
//! as one prompt (`task.send_comments`).
//!
//! Part of the view's state machine (`review.rs`): no I/O, it says what to do as
//! [`ReviewAsk`]s.

use berth_server::gitctx::diff::LineKind;

use super::{ReviewAsk, ReviewView, Status};

/// Lines selected in one hunk: indices into its lines, `from` where the selection started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Selection {
    pub(super) hunk: usize,
    pub(super) from: usize,
    pub(super) to: usize,
}

impl Selection {
    /// The first and last line index.
    pub(super) fn span(&self) -> (usize, usize) {
        (self.from.min(self.to), self.from.max(self.to))
    }

    /// Whether line `index` of hunk `hunk` is selected.
    pub(super) fn holds(&self, hunk: usize, index: usize) -> bool {
        let (a, b) = self.span();
        self.hunk == hunk && (a..=b).contains(&index)
    }
}

/// The most characters of a comment typed in the view.
const MAX_TYPED: usize = 2000;

impl ReviewView {
    /// Whether a comment is being typed (then every printable key is its text).
    pub fn composing(&self) -> bool {
        self.composing.is_some()
    }

    /// The line at the top of the diff: the anchor's hunk and its first line shown.
    fn top_line(&self) -> Option<(usize, usize)> {
        let (h, row) = self.anchor;
        let hunk = self.hunk(h)?;
        let index = row.saturating_sub(1).min(hunk.lines.len().checked_sub(1)?);
        Some((h, index))
    }

    /// Selects from the top line shown when nothing is selected; moves the selection's end
    /// `by` lines within its hunk.
    pub(super) fn stretch(&mut self, by: isize) {
        let Some(sel) = self
            .selection
            .or_else(|| self.top_line().map(|(hunk, i)| Selection { hunk, from: i, to: i }))
        else {
            return;
        };
        let len = self.hunk(sel.hunk).map_or(0, |h| h.lines.len());
        let to = sel.to.saturating_add_signed(by).min(len.saturating_sub(1));
        self.selection = Some(Selection { to, ..sel });
    }

    /// The selected file's path and the line numbers of the selection (the task's side of the
    /// file: a removed line counts by its old number).
    fn selected_lines(&self) -> Option<(String, u64, u64)> {
        let sel = self.selection?;
        let hunk = self.hunk(sel.hunk)?;
        let (a, b) = sel.span();
        let number = |i: usize| {
            let line = hunk.lines.get(i)?;
            match line.kind {
                LineKind::Removed => line.old_line,
                _ => line.new_line,
            }
        };
        let (start, end) = (number(a)?, number(b)?);
        Some((self.file()?.path.clone(), start.min(end), start.max(end)))
    }

    /// `c`: starts typing a comment on the selection (the top line shown when none).
    pub(super) fn start_comment(&mut self) {
        if self.task.is_none() || self.finishing {
            return;
        }
        if self.selection.is_none() {
            self.stretch(0);
        }
        if self.selected_lines().is_some() {
            self.composing = Some(String::new());
        }
    }

    /// Text typed while composing (control characters dropped).
    pub fn type_text(&mut self, text: &str) {
        let Some(typed) = &mut self.composing else { return };
        for c in text.chars().filter(|c| !c.is_control()) {
            if typed.chars().count() < MAX_TYPED {
                typed.push(c);
            }
        }
    }

    /// Backspace while composing.
    pub fn backspace(&mut self) {
        if let Some(typed) = &mut self.composing {
            typed.pop();
        }
    }

    /// Escape while composing: the comment is dropped, the selection stays.
    pub fn cancel_comment(&mut self) {
        self.composing = None;
    }

    /// Enter while composing: the comment is kept on the task (`task.comment`).
    pub fn keep_comment(&mut self) -> Vec<ReviewAsk> {
        let (Some(task), Some(typed)) = (self.task.clone(), self.composing.take()) else {
            return Vec::new();
        };
        let Some((path, start, end)) = self.selected_lines() else { return Vec::new() };
        if typed.trim().is_empty() {
            return Vec::new();
        }
        self.selection = None;
        self.status = Status::Info(format!("keeping the comment on {path}:{start}…"));
        vec![ReviewAsk::Comment { task, path, start, end, text: typed.trim().to_owned() }]
    }

    /// `s` or the Send button: every kept comment to the worker as one prompt.
    pub(super) fn send_comments(&mut self) -> Vec<ReviewAsk> {
        let Some(task) = self.task.clone() else { return Vec::new() };
        let kept = self.record.as_ref().map_or(0, |r| r.comments.len());
        if kept == 0 {
            self.status = Status::Info(
                "no comments to send: select lines (c, J/K), type, Enter keeps it".into(),
            );
            return Vec::new();
        }
        self.status = Status::Info(format!("sending {kept} comment(s) to the worker…"));
        vec![ReviewAsk::SendComments { task }]
    }

    /// The status row while composing.
    pub(super) fn composing_line(&self) -> Option<String> {
        let typed = self.composing.as_ref()?;
        let at = match self.selected_lines() {
            Some((path, a, b)) if a == b => format!("{path}:{a}"),
            Some((path, a, b)) => format!("{path}:{a}-{b}"),
            None => "?".into(),
        };
        Some(format!("Comment on {at}: {typed}▏ · Enter keep · Esc drop"))
    }

    /// The header's row listing the kept comments.
    pub(super) fn comments_line(&self) -> Option<String> {
        let comments = &self.record.as_ref()?.comments;
        if comments.is_empty() {
            return None;
        }
        let each: Vec<String> = comments
            .iter()
            .map(|c| {
                let at = if c.end > c.start {
                    format!("{}:{}-{}", c.path, c.start, c.end)
                } else {
                    format!("{}:{}", c.path, c.start)
                };
                format!("{at} “{}”", c.text.lines().next().unwrap_or(""))
            })
            .collect();
        Some(format!("Comments ({}, s sends): {}", comments.len(), each.join("; ")))
    }
}
