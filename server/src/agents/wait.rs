//! `pane.wait`: an answer once a pane's lifecycle reaches a state (`idle`, `blocked`, `done`,
//! `exited`), with the last turn's message and length and how the state was learned.
//!
//! The wait wakes on every change the pane reports (hooks, OSC 133 marks, the exit, Berth's
//! interrupt) and polls every [`PROBE_INTERVAL`] for what only the process heuristic can tell
//! (a plain program's foreground job). It locks the Store only to look, never across a wait,
//! and owns nothing that outlives it: a client that hangs up drops it.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use berth_engine::ids::PaneId;
use berth_engine::model::{Lifecycle, RestoreState};

use super::turns::TurnInfo;
use super::work::{WaitOutcome, WaitUntil, PROBE_INTERVAL};
use crate::error::CommandError;
use crate::store::Store;

/// What a look at the pane found: its lifecycle (`exited` for a pane without a process), its
/// turns and exit code; `None` when the pane is gone.
fn look(store: &Store, id: &PaneId) -> Option<(Lifecycle, TurnInfo, Option<i32>)> {
    let pane = store.panes.get(id)?;
    let lifecycle = match pane.state() {
        RestoreState::Live => store.pane_lifecycle(pane),
        _ => Lifecycle::Exited,
    };
    let exit_code = match &pane.tombstone {
        Some(tomb) => tomb.exit_code,
        None => pane.exit().map(|e| e.code),
    };
    let turn = pane.shared.meta().turns.info();
    Some((lifecycle, turn, exit_code))
}

fn lock(store: &Mutex<Store>) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts a wait for `until` on pane `id`, giving up after `timeout` (`None`: never). An
/// unknown pane is refused now; the future yields the outcome, or `TIMEOUT`.
pub fn start(
    store: &Arc<Mutex<Store>>,
    id: PaneId,
    until: WaitUntil,
    timeout: Option<Duration>,
) -> Result<impl Future<Output = Result<WaitOutcome, CommandError>> + Send + 'static, CommandError>
{
    let shared =
        lock(store).pane_shared(&id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
    tracing::debug!("pane {id} is waited on until {}", until.as_str());
    let store = store.clone();
    let deadline = timeout.and_then(|t| tokio::time::Instant::now().checked_add(t));
    Ok(async move {
        loop {
            let changed = shared.changed.notified();
            tokio::pin!(changed);
            // Registered before the look, so a change between the look and the wait wakes it.
            changed.as_mut().enable();
            let found = look(&lock(&store), &id);
            let outcome = |reached, (lifecycle, turn, exit_code)| WaitOutcome {
                pane: id.clone(),
                reached,
                lifecycle,
                turn,
                exit_code,
            };
            let now = match found {
                Some(found) if until.reached_by(found.0) => return Ok(outcome(true, found)),
                Some(found) if found.0 == Lifecycle::Exited => return Ok(outcome(false, found)),
                Some((lifecycle, ..)) => lifecycle,
                // Closed: its process is ended with it.
                None => {
                    let turn = shared.meta().turns.info();
                    let exit_code = shared.meta().exit.as_ref().map(|e| e.code);
                    return Ok(outcome(false, (Lifecycle::Exited, turn, exit_code)));
                }
            };
            let expired = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep(PROBE_INTERVAL) => {}
                () = expired => {
                    let waited = timeout.unwrap_or_default().as_secs_f64();
                    return Err(CommandError::Timeout(format!(
                        "pane {id} did not become {} within {waited} s (it is {})",
                        until.as_str(),
                        now.as_str()
                    )));
                }
            }
        }
    })
}
