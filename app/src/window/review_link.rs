//! The review view's link to the server (`ReviewLink`): a thread of its own with its own
//! socket connection that carries out the view's [`ReviewAsk`]s (`task.list`, `diff.files`,
//! `diff.file`, `task.finish`) in order and hands the answers back, waking the window's loop.
//!
//! The same path for the embedded and an attached window (both reach the server's socket), so
//! git and a merge never run on the event loop's thread and the window never locks the Store
//! for them. It must not draw or touch the view's state: answers go through its inbox.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_server::client::{Client, ClientError};
use berth_server::gitctx::request::{DiffFileParams, DiffFilesParams};
use berth_server::persist::task_record::TaskRecord;
use berth_server::tasks::reply::TaskReply;
use berth_server::tasks::request::{CommentParams, FinishParams, ListParams, TaskRef, TaskRequest};

use super::review::{Landing, ReviewAnswer, ReviewAsk, PAGE_HUNKS};
use super::wake::Waker;

/// How long git may take for one answer.
const GIT_WAIT: Duration = Duration::from_secs(60);
/// How long a merge or discard may take.
const FINISH_WAIT: Duration = Duration::from_secs(180);
/// Asks queued for the thread. The view asks for at most three pages, the files and one
/// finish at a time, so this is never reached in use; when full the ask is answered with an
/// error at once.
const QUEUE: usize = 64;

/// A task whose review `berth review` asked for, set by the event forwarder and taken by the
/// event loop.
#[derive(Clone, Default)]
pub(super) struct ReviewRequest(Arc<Mutex<Option<String>>>);

impl ReviewRequest {
    /// Asks for `task`'s review (the latest ask wins).
    pub(super) fn request(&self, task: String) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
    }

    /// The task asked for since the last call, if any.
    pub(super) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Answers waiting for the window, each with the number of the view that asked.
type Inbox = Arc<Mutex<Vec<(u64, ReviewAnswer)>>>;

/// The link: asks in, answers out.
pub(super) struct ReviewLink {
    asks: SyncSender<(u64, ReviewAsk)>,
    inbox: Inbox,
}

impl ReviewLink {
    /// Starts the thread that serves asks on the socket at `socket`, waking `waker` with each
    /// answer.
    pub(super) fn spawn(socket: PathBuf, waker: Waker) -> std::io::Result<ReviewLink> {
        let (asks, queued) = std::sync::mpsc::sync_channel(QUEUE);
        let inbox = Inbox::default();
        let out = inbox.clone();
        std::thread::Builder::new()
            .name("berth-review".into())
            .spawn(move || serve(&socket, &queued, &out, &waker))?;
        Ok(ReviewLink { asks, inbox })
    }

    /// Queues `asks` for the view numbered `view`.
    pub(super) fn send(&self, view: u64, asks: Vec<ReviewAsk>) {
        for ask in asks {
            match self.asks.try_send((view, ask)) {
                Ok(()) => {}
                Err(TrySendError::Full((_, ask)) | TrySendError::Disconnected((_, ask))) => {
                    let answer = failed(&ask, "the review link is busy or gone; close and reopen");
                    self.inbox.lock().unwrap_or_else(|p| p.into_inner()).push((view, answer));
                }
            }
        }
    }

    /// The answers that came since the last call.
    pub(super) fn take(&self) -> Vec<(u64, ReviewAnswer)> {
        std::mem::take(&mut *self.inbox.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// An ask's answer when it could not be carried out.
fn failed(ask: &ReviewAsk, why: &str) -> ReviewAnswer {
    let why = why.to_owned();
    match ask {
        ReviewAsk::Resolve { .. } => ReviewAnswer::Resolved(Err(why)),
        ReviewAsk::Files { .. } => ReviewAnswer::Files(Err(why)),
        ReviewAsk::Task { .. } => ReviewAnswer::Task(Err(why)),
        ReviewAsk::Comment { .. } => ReviewAnswer::Commented(Err(why)),
        ReviewAsk::SendComments { .. } => ReviewAnswer::Sent(Err(why)),
        ReviewAsk::Page { page, generation, .. } => {
            ReviewAnswer::Page { generation: *generation, page: *page, result: Err(why) }
        }
        ReviewAsk::Finish { .. } | ReviewAsk::Land { .. } => ReviewAnswer::Finished(Err(why)),
    }
}

/// The thread: each ask in order, on one connection made again when it breaks.
fn serve(socket: &Path, queued: &Receiver<(u64, ReviewAsk)>, inbox: &Inbox, waker: &Waker) {
    let mut client: Option<Client> = None;
    while let Ok((view, ask)) = queued.recv() {
        let answer = carry_out(socket, &mut client, &ask);
        inbox.lock().unwrap_or_else(|p| p.into_inner()).push((view, answer));
        if !waker.wake() {
            return;
        }
    }
}

/// One ask, with one retry on a connection that broke while idle.
fn carry_out(socket: &Path, client: &mut Option<Client>, ask: &ReviewAsk) -> ReviewAnswer {
    for attempt in 0..2 {
        if client.is_none() {
            match Client::connect(socket) {
                Ok(c) => *client = Some(c),
                Err(e) => return failed(ask, &format!("cannot reach the server: {e}")),
            }
        }
        let Some(c) = client.as_mut() else { break };
        match answer(c, ask) {
            Err(ClientError::Io(e)) if attempt == 0 => {
                tracing::debug!(error = %e, "the review connection broke; connecting again");
                *client = None;
            }
            Err(e) => return failed(ask, &message(&e)),
            Ok(answer) => return answer,
        }
    }
    failed(ask, "the server does not answer")
}

/// A client error as the view shows it: the server's own message.
fn message(e: &ClientError) -> String {
    e.to_string()
}

fn answer(client: &mut Client, ask: &ReviewAsk) -> Result<ReviewAnswer, ClientError> {
    Ok(match ask {
        ReviewAsk::Resolve { pane, workspace } => {
            let tasks = client.task_list(ListParams::default(), Some(GIT_WAIT))?;
            let open: Vec<&TaskRecord> =
                tasks.iter().filter(|t| t.disposition.outcome == "none").collect();
            let newest = |f: &dyn Fn(&TaskRecord) -> bool| {
                open.iter().filter(|t| f(t)).max_by_key(|t| t.created_at).map(|t| t.id.clone())
            };
            let pane = pane.as_ref().map(|p| p.as_str().to_owned());
            let ws = workspace.as_ref().map(|w| w.as_str().to_owned());
            let found = newest(&|t| pane.is_some() && t.pane_id == pane)
                .or_else(|| newest(&|t| ws.is_some() && t.workspace_id == ws))
                .or_else(|| newest(&|_| true));
            ReviewAnswer::Resolved(found.ok_or_else(|| {
                "no task to review: start one with `berth task start` (finished tasks are \
                 merged or discarded already)"
                    .to_owned()
            }))
        }
        ReviewAsk::Task { task } => {
            let shown = client.task_record(
                TaskRequest::Show(TaskRef { task_id: task.clone() }),
                Some(GIT_WAIT),
            )?;
            ReviewAnswer::Task(Ok(Box::new(shown)))
        }
        ReviewAsk::Comment { task, path, start, end, text } => {
            let params = CommentParams {
                task_id: task.clone(),
                path: path.clone(),
                start: *start,
                end: Some(*end),
                text: text.clone(),
                send: false,
            };
            let record = client.task_record(TaskRequest::Comment(params), Some(GIT_WAIT))?;
            ReviewAnswer::Commented(Ok(Box::new(record)))
        }
        ReviewAsk::SendComments { task } => {
            let asked = TaskRequest::SendComments(TaskRef { task_id: task.clone() });
            match client.task(asked, Some(FINISH_WAIT))? {
                TaskReply::CommentsSent(sent) => {
                    ReviewAnswer::Sent(Ok((sent.sent, Box::new(sent.task))))
                }
                other => {
                    return Err(ClientError::Protocol(format!(
                        "task.send_comments answered {}",
                        other.shape()
                    )))
                }
            }
        }
        ReviewAsk::Files { task, turn } => {
            let params = DiffFilesParams { target: task.clone(), turn: *turn };
            let reply = client.diff_files(params, Some(GIT_WAIT))?;
            ReviewAnswer::Files(Ok(reply.files))
        }
        ReviewAsk::Page { task, path, page, generation, turn } => {
            let params = DiffFileParams {
                target: task.clone(),
                path: path.clone(),
                offset: page * PAGE_HUNKS,
                limit: Some(PAGE_HUNKS),
                turn: *turn,
            };
            let reply = client.diff_file(params, Some(GIT_WAIT))?;
            ReviewAnswer::Page {
                generation: *generation,
                page: *page,
                result: Ok((reply.total_hunks, reply.hunks)),
            }
        }
        ReviewAsk::Land { task, how } => {
            let params = FinishParams {
                task_id: task.clone(),
                merge: true,
                squash: *how == Landing::Squash,
                rebase: *how == Landing::Rebase,
                ff_only: *how == Landing::FastForward,
                ..FinishParams::default()
            };
            client.task(TaskRequest::Finish(params), Some(FINISH_WAIT))?;
            ReviewAnswer::Finished(Ok(()))
        }
        ReviewAsk::Finish { task, merge } => {
            let params = FinishParams {
                task_id: task.clone(),
                merge: *merge,
                discard: !*merge,
                ..FinishParams::default()
            };
            client.task(TaskRequest::Finish(params), Some(FINISH_WAIT))?;
            ReviewAnswer::Finished(Ok(()))
        }
    })
}
