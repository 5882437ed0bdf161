//! The typed answers of the `task.*`, git (`diff.*`, `worktree.list`, `workspace.refresh_git`),
//! `window.review` and `window.view` methods survive the wire: each answer, encoded as the
//! socket encodes it (`serde_json::to_value`, then one line of text), decodes to itself
//! through the decoder the client uses, and its JSON is the shape these methods have always
//! answered (the untyped encoders they replaced are rebuilt here and compared).

use std::path::PathBuf;

use serde_json::{json, Value};

use super::*;
use crate::gitctx::diff::{DiffFile, DiffHunk, DiffLine, FileStatus, LineKind};
use crate::gitctx::request::{
    DiffFileParams, DiffFileReply, DiffFilesParams, DiffFilesReply, GitReply, GitRequest,
    RefreshGitParams, RefreshGitReply, WorktreeListParams, WorktreeListReply,
};
use crate::gitctx::WorktreeEntry;
use crate::persist::task_record::{
    CheckpointRecord, CommentRecord, ConflictRecord, DispositionRecord, TaskRecord,
    TaskResultRecord,
};
use crate::tasks::reply::{CommentsSentReply, RevertReply, TaskListReply, TaskReply};
use crate::tasks::request::{
    CommentParams, FinishParams, ListParams, RevertParams, TaskRef, TaskRequest, WaitParams,
};

/// An answer as the socket sends it and the client reads it back: JSON text on one line.
fn through_the_wire<T: serde::Serialize>(answer: &T) -> Value {
    let line = serde_json::to_value(answer).expect("encodes").to_string();
    assert!(!line.contains('\n'), "one line: {line:?}");
    serde_json::from_str(&line).expect("JSON")
}

fn checkpoint(turn: u32, kind: &str) -> CheckpointRecord {
    CheckpointRecord {
        turn,
        sha: format!("{turn:040}"),
        kind: kind.into(),
        at: 1_700 + u64::from(turn),
    }
}

/// A task with every kind of field set, quotes and non-ASCII included.
fn record() -> TaskRecord {
    TaskRecord {
        id: "task_0123".into(),
        label: "fix \"the\" bug · ü".into(),
        agent: "claude".into(),
        source_repo: "/repo".into(),
        target_branch: Some("main".into()),
        worktree_path: "/repo/.berth/wt".into(),
        branch: "berth/fix".into(),
        base_ref: "HEAD".into(),
        base_sha: "a".repeat(40),
        state: "completed".into(),
        result: Some(TaskResultRecord {
            status: "completed".into(),
            summary: "done\nwell".into(),
            evidence: Some("tests pass".into()),
            reported_at: 5,
            ..TaskResultRecord::default()
        }),
        disposition: DispositionRecord { outcome: "none".into(), ..DispositionRecord::default() },
        status_reason: Some(json!({ "stage": "report", "n": 1.5 })),
        pane_id: Some("pane_9".into()),
        silence_s: 30,
        created_at: 1,
        updated_at: 2,
        checkpoints: vec![checkpoint(1, "turn"), checkpoint(2, "turn")],
        comments: vec![CommentRecord {
            path: "a.rs".into(),
            start: 3,
            end: 4,
            text: "why?".into(),
        }],
        conflicts: vec![ConflictRecord { task: "target:main".into(), files: vec!["a.rs".into()] }],
        ..TaskRecord::default()
    }
}

fn task_ref() -> TaskRef {
    TaskRef { task_id: "task_0123".into() }
}

#[test]
fn every_task_answer_survives_the_wire() {
    let task = || TaskReply::Task(Box::new(record()));
    let sent = || {
        TaskReply::CommentsSent(Box::new(CommentsSentReply {
            task: record(),
            sent: 2,
            prompt: "Review comments:\n- a.rs:3".into(),
        }))
    };
    let comment = |send| CommentParams {
        task_id: "task_0123".into(),
        path: "a.rs".into(),
        start: 3,
        send,
        ..CommentParams::default()
    };
    let cases: Vec<(TaskRequest, TaskReply)> = vec![
        (TaskRequest::Show(task_ref()), task()),
        (TaskRequest::Cancel(task_ref()), task()),
        (TaskRequest::Finish(FinishParams::default()), task()),
        (TaskRequest::Wait(WaitParams::default()), task()),
        (TaskRequest::Comment(comment(false)), task()),
        (TaskRequest::Comment(comment(true)), sent()),
        (TaskRequest::SendComments(task_ref()), sent()),
        (
            TaskRequest::List(ListParams::default()),
            TaskReply::List(TaskListReply { tasks: vec![record(), TaskRecord::default()] }),
        ),
        (TaskRequest::List(ListParams::default()), TaskReply::List(TaskListReply::default())),
        (
            TaskRequest::RevertTurn(RevertParams::default()),
            TaskReply::Reverted(RevertReply {
                turn: 2,
                saved: checkpoint(3, "before_revert"),
                now: checkpoint(4, "revert"),
            }),
        ),
    ];
    for (request, reply) in cases {
        let wire = through_the_wire(&reply);
        let back = decode_task_reply(&request, wire.clone())
            .unwrap_or_else(|e| panic!("{request:?}: {e}\n{wire}"));
        assert_eq!(back, reply, "{request:?}");
    }
}

#[test]
fn task_answers_keep_their_wire_shape() {
    // A record is the record's own JSON, as `task.show` has always answered.
    let plain = serde_json::to_value(record()).expect("encodes");
    assert_eq!(through_the_wire(&TaskReply::Task(Box::new(record()))), plain);
    assert_eq!(plain["disposition"]["outcome"], "none");
    assert_eq!(plain["checkpoints"][1]["turn"], 2);
    // Comments sent: the record's fields at the top level, with `sent` and `prompt`.
    let mut old = plain.clone();
    old["sent"] = json!(2);
    old["prompt"] = json!("p");
    let sent = CommentsSentReply { task: record(), sent: 2, prompt: "p".into() };
    assert_eq!(through_the_wire(&TaskReply::CommentsSent(Box::new(sent))), old);
    // A list is `{tasks: [...]}`.
    let list = TaskReply::List(TaskListReply { tasks: vec![record()] });
    assert_eq!(through_the_wire(&list), json!({ "tasks": [plain] }));
    // A revert is `{turn, saved, now}`.
    let reverted = RevertReply { turn: 1, saved: checkpoint(2, "x"), now: checkpoint(3, "y") };
    let wire = through_the_wire(&TaskReply::Reverted(reverted));
    assert_eq!(wire["turn"], 1);
    assert_eq!(wire["saved"]["kind"], "x");
    assert_eq!(wire["now"]["turn"], 3);
    assert_eq!(wire.as_object().map(|o| o.len()), Some(3), "{wire}");
}

#[test]
fn a_task_answer_of_the_wrong_shape_is_an_error() {
    let list = TaskRequest::List(ListParams::default());
    assert!(decode_task_reply(&list, json!({ "id": "task_1" })).is_err(), "a record for a list");
    let revert = TaskRequest::RevertTurn(RevertParams::default());
    assert!(decode_task_reply(&revert, json!({ "tasks": [] })).is_err(), "a list for a revert");
    let send = TaskRequest::SendComments(task_ref());
    assert!(decode_task_reply(&send, json!({ "id": "task_1" })).is_err(), "no count sent");
    let show = TaskRequest::Show(task_ref());
    assert!(decode_task_reply(&show, json!({ "state": 3 })).is_err(), "a state that is no text");
}

fn diff_file(path: &str) -> DiffFile {
    DiffFile {
        path: path.into(),
        old_path: Some("old \"name\".rs".into()),
        status: FileStatus::Renamed,
        added: 3,
        removed: 1,
        binary: false,
        too_large: false,
        untracked: false,
    }
}

fn hunk() -> DiffHunk {
    DiffHunk {
        old_start: 1,
        old_lines: 2,
        new_start: 1,
        new_lines: 3,
        header: "fn main() {".into(),
        lines: vec![
            DiffLine {
                kind: LineKind::Context,
                old_line: Some(1),
                new_line: Some(1),
                text: "a".into(),
                no_newline: false,
            },
            DiffLine {
                kind: LineKind::Added,
                old_line: None,
                new_line: Some(2),
                text: "ü\t".into(),
                no_newline: true,
            },
        ],
    }
}

#[test]
fn every_git_answer_survives_the_wire() {
    let files = DiffFilesReply {
        target: "task_1".into(),
        dir: PathBuf::from("/repo/wt"),
        base: "b".repeat(40),
        files: vec![diff_file("a.rs"), diff_file("b c.rs")],
    };
    let file = DiffFileReply {
        target: "ws_1".into(),
        file: diff_file("a.rs"),
        offset: 50,
        total_hunks: 51,
        hunks: vec![hunk()],
    };
    let worktrees = WorktreeListReply {
        repo: PathBuf::from("/repo"),
        worktrees: vec![WorktreeEntry {
            path: "/repo".into(),
            head: Some("c".repeat(40)),
            branch: Some("main".into()),
            detached: false,
            bare: false,
            main: true,
            locked: false,
            prunable: false,
            workspaces: vec!["ws_1".into()],
            tasks: vec!["task_1".into()],
        }],
    };
    let diff_files = GitRequest::DiffFiles(DiffFilesParams { target: "task_1".into(), turn: None });
    let diff_file_request = GitRequest::DiffFile(DiffFileParams {
        target: "ws_1".into(),
        path: "a.rs".into(),
        offset: 50,
        limit: None,
        turn: Some(1),
    });
    let cases: Vec<(GitRequest, GitReply, Value)> = vec![
        (
            diff_files,
            GitReply::DiffFiles(files.clone()),
            serde_json::to_value(&files).expect("encodes"),
        ),
        (
            diff_file_request,
            GitReply::DiffFile(file.clone()),
            serde_json::to_value(&file).expect("encodes"),
        ),
        (
            GitRequest::RefreshGit(RefreshGitParams {}),
            GitReply::RefreshGit(RefreshGitReply { probed: 4 }),
            json!({ "probed": 4 }),
        ),
        (
            GitRequest::WorktreeList(WorktreeListParams { repo: "/repo".into() }),
            GitReply::WorktreeList(worktrees.clone()),
            serde_json::to_value(&worktrees).expect("encodes"),
        ),
    ];
    for (request, reply, shape) in cases {
        let wire = through_the_wire(&reply);
        // Untagged: the answer is the reply struct's own JSON, as before the enum.
        assert_eq!(wire, shape, "{request:?}");
        let back = decode_git_reply(&request, wire).unwrap_or_else(|e| panic!("{request:?}: {e}"));
        assert_eq!(back, reply, "{request:?}");
    }
    // The wrong shape is an error, not a guess.
    let list = GitRequest::WorktreeList(WorktreeListParams { repo: "/repo".into() });
    assert!(decode_git_reply(&list, json!({ "probed": 4 })).is_err());
}

#[test]
fn window_answers_survive_the_wire() {
    for reply in [
        ReviewReply { task_id: "task_1".into(), windows: 1, window_id: Some(7) },
        ReviewReply { task_id: "task_2".into(), windows: 3, window_id: None },
    ] {
        let wire = through_the_wire(&reply);
        // The shape `window.review` has always answered.
        let old = json!({ "task_id": reply.task_id, "windows": reply.windows, "window_id": reply.window_id });
        assert_eq!(wire, old);
        let back: ReviewReply = serde_json::from_value(wire).expect("decodes");
        assert_eq!(back, reply);
    }
    let view = crate::screen_stream::WindowViewReply { ok: true, window_id: Some(5) };
    let wire = through_the_wire(&view);
    assert_eq!(wire, json!({ "ok": true, "window_id": 5 }));
    assert_eq!(
        serde_json::from_value::<crate::screen_stream::WindowViewReply>(wire).ok(),
        Some(view)
    );
    // An older server's answer had no number.
    let old: crate::screen_stream::WindowViewReply =
        serde_json::from_value(json!({ "ok": true })).expect("decodes");
    assert_eq!(old.window_id, None);
}
