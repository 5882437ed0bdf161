//! `pane.submit`: a prompt delivered to a pane's program as a person pasting it would: one
//! paste (bracketed when the program asked for it), then Enter as a separate write after the
//! agent's settle delay, then, where the agent's hooks are wired, a bounded wait for its
//! acknowledgement (`UserPromptSubmit`, cursor's `beforeSubmitPrompt`), with Enter pressed once
//! more if it does not come.
//!
//! The per-agent values are the engine's adapter data (`SubmitProfile`); the bytes are the
//! engine's (`agents::submit`). The Store is locked only to check the pane and to write each
//! part, never across a sleep. Once the paste is written the rest runs as a task of its own,
//! so a client that hangs up mid-submit never leaves a prompt pasted without its Enter.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use berth_engine::agents::submit::{enter_bytes, paste_bytes};
use berth_engine::agents::submit_profile;
use berth_engine::ids::PaneId;
use berth_engine::model::Lifecycle;

use super::work::{check_prompt, SubmitOutcome};
use crate::error::CommandError;
use crate::pane::PaneShared;
use crate::store::{Pane, Store};

/// A pasted prompt still to be completed.
struct Pasted {
    shared: Arc<PaneShared>,
    settle: Duration,
    /// The acknowledgement to wait for after each Enter: how long, and the count of
    /// acknowledgements before this prompt.
    ack: Option<(Duration, u64)>,
    /// The prompt as submitted, to compare with the one the agent acknowledges.
    text: String,
    outcome: SubmitOutcome,
    /// Clears the pane's submitting mark when the submit ends, however it ends.
    _submitting: Submitting,
}

/// The pane's one submit in progress.
struct Submitting(Arc<PaneShared>);

impl Drop for Submitting {
    fn drop(&mut self) {
        self.0.meta().turns.submitting = false;
    }
}

fn live_pty(pane: &Pane) -> Result<&dyn crate::process::PaneProcess, CommandError> {
    match (&pane.pty, pane.shared.meta().exit.is_some()) {
        (Some(pty), false) if !pty.is_closing() && pane.tombstone.is_none() => Ok(pty.as_ref()),
        _ => Err(CommandError::PaneNotLive(pane.id.to_string())),
    }
}

impl Store {
    /// Checks that `id` can take a prompt now and pastes it.
    fn submit_paste(
        &self,
        id: &PaneId,
        text: &str,
        force: bool,
        max_bytes: usize,
    ) -> Result<Pasted, CommandError> {
        if max_bytes == berth_engine::agents::submit::MAX_PROMPT_BYTES {
            check_prompt(text)?;
        } else if text.is_empty() || text.len() > max_bytes {
            return Err(CommandError::BadParams(format!(
                "the prompt is {} bytes; 1 to {max_bytes} bytes can be submitted",
                text.len()
            )));
        }
        let pane = self.panes.get(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
        let pty = live_pty(pane)?;
        let lifecycle = self.pane_lifecycle(pane);
        if matches!(lifecycle, Lifecycle::Working | Lifecycle::Blocked) && !force {
            return Err(CommandError::MidTurn(format!(
                "pane {id} is {} (its program is in the middle of a turn); wait for it \
                 (berth wait {id} --until idle) or submit anyway with --force",
                lifecycle.as_str()
            )));
        }
        let profile = submit_profile(pane.agent.kind);
        let bracketed = pane.shared.term.lock().bracketed_paste();
        let (wired, acks) = {
            let mut meta = pane.shared.meta();
            if meta.turns.submitting {
                return Err(CommandError::Conflict(format!(
                    "a prompt is being submitted to pane {id}; wait for its answer"
                )));
            }
            meta.turns.submitting = true;
            (meta.turns.hook_events > 0, meta.turns.prompt_acks)
        };
        let submitting = Submitting(pane.shared.clone());
        pty.send(&paste_bytes(text, bracketed))?;
        let ack = (wired && profile.ack_event.is_some())
            .then(|| (Duration::from_millis(profile.ack_wait_ms), acks));
        Ok(Pasted {
            shared: pane.shared.clone(),
            settle: Duration::from_millis(profile.settle_ms),
            ack,
            text: text.to_owned(),
            outcome: SubmitOutcome {
                pane: id.clone(),
                bytes: text.len(),
                bracketed,
                enter_delay_ms: profile.settle_ms,
                awaited_ack: ack.is_some(),
                confirmed: false,
                enter_retried: false,
                joined: None,
            },
            _submitting: submitting,
        })
    }

    /// Presses Enter in `id`, encoded for the program's keyboard mode now.
    fn submit_enter(&self, id: &PaneId) -> Result<(), CommandError> {
        let pane = self.panes.get(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))?;
        if self.waits_on_person(id) {
            // A permission request opened since the paste: this Enter would answer its dialog,
            // not send the prompt (issue 27: nothing types into a waiting pane on its own).
            return Err(CommandError::Conflict(format!(
                "pane {id} now waits on a permission request: the prompt is pasted but Enter was \
                 not pressed (answer the request, then press Enter or submit again)"
            )));
        }
        let pty = live_pty(pane)?;
        let kitty = pane.shared.term.lock().kitty_all_keys_as_escapes();
        pty.send(enter_bytes(kitty))?;
        Ok(())
    }
}

fn lock(store: &Mutex<Store>) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts a submit: the checks and the paste happen now (a refusal is answered at once); the
/// returned future yields the outcome once Enter is written and acknowledged (or not). The rest
/// runs as its own task, so dropping the future (the client went away) does not stop it.
pub fn start(
    store: &Arc<Mutex<Store>>,
    pane: PaneId,
    text: &str,
    force: bool,
) -> Result<impl Future<Output = Result<SubmitOutcome, CommandError>> + Send + 'static, CommandError>
{
    start_limited(store, pane, text, force, berth_engine::agents::submit::MAX_PROMPT_BYTES)
}

/// [`start`] with another limit on the prompt's size: a task's composed prompt may be its
/// 32 KiB contract plus the task's preamble (`tasks::model::MAX_TASK_PROMPT_BYTES`).
pub(crate) fn start_limited(
    store: &Arc<Mutex<Store>>,
    pane: PaneId,
    text: &str,
    force: bool,
    max_bytes: usize,
) -> Result<impl Future<Output = Result<SubmitOutcome, CommandError>> + Send + 'static, CommandError>
{
    let pasted = lock(store).submit_paste(&pane, text, force, max_bytes)?;
    let task = tokio::spawn(finish(store.clone(), pane, pasted));
    Ok(async move {
        task.await.map_err(|e| CommandError::Internal(format!("the submit task failed: {e}")))?
    })
}

/// Enter after the settle delay; then the acknowledgement, and Enter once more without it.
async fn finish(
    store: Arc<Mutex<Store>>,
    pane: PaneId,
    mut pasted: Pasted,
) -> Result<SubmitOutcome, CommandError> {
    tokio::time::sleep(pasted.settle).await;
    lock(&store).submit_enter(&pane)?;
    let Some((wait, before)) = pasted.ack else { return Ok(pasted.outcome) };
    if acknowledged(&pasted.shared, before, wait).await {
        pasted.outcome.confirmed = true;
        pasted.outcome.joined = joined(&pasted.shared, &pasted.text);
        return Ok(pasted.outcome);
    }
    tracing::info!(pane = %pane, "no acknowledgement of the prompt; pressing Enter once more");
    lock(&store).submit_enter(&pane)?;
    pasted.outcome.enter_retried = true;
    pasted.outcome.confirmed = acknowledged(&pasted.shared, before, wait).await;
    if pasted.outcome.confirmed {
        pasted.outcome.joined = joined(&pasted.shared, &pasted.text);
    }
    Ok(pasted.outcome)
}

/// The prompt the agent acknowledged, bounded to 2 KiB, when it holds `text` after other text
/// (text already in the agent's input went with it); `None` when it is `text` (blanks at the
/// ends aside) or the agent did not say what it received.
fn joined(shared: &PaneShared, text: &str) -> Option<String> {
    let acked = shared.meta().turns.acked_prompt.clone()?;
    let (got, sent) = (acked.trim(), text.trim());
    if got == sent || !got.contains(sent) {
        return None;
    }
    Some(got.chars().take(2048).collect())
}

/// Whether the pane's agent acknowledges a prompt (its count passes `before`) within `wait`.
async fn acknowledged(shared: &PaneShared, before: u64, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let changed = shared.changed.notified();
        tokio::pin!(changed);
        // Registered before the check, so a change between the check and the wait wakes it.
        changed.as_mut().enable();
        if shared.meta().turns.prompt_acks > before {
            return true;
        }
        if tokio::time::timeout_at(deadline, changed).await.is_err() {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use berth_engine::agents::AgentKind;
    use serde_json::json;

    use crate::commands::{Command, Reply, SpawnRequest, WorkspaceSelector};
    use crate::error::CommandError;
    use crate::process::testing::FakeSpawner;
    use crate::store::{Internal, Store, StoreConfig};

    /// Regression (issue 27): a permission request that opened between a submit's paste and its
    /// Enter got the Enter, which answers the agent's dialog. The Enter is held back now.
    #[test]
    fn a_submits_enter_is_not_pressed_into_a_pane_that_now_waits_on_a_decision() {
        let home = tempfile::tempdir().expect("a temp dir");
        let config = StoreConfig {
            socket_path: home.path().join("berth.sock"),
            home: home.path().to_path_buf(),
            shell: "/bin/sh".into(),
        };
        let spawner = FakeSpawner::default();
        let mut store = Store::with_spawner(
            config,
            crate::events::EventBus::default(),
            crate::pane::OutputPulse::default(),
            Arc::new(spawner.clone()),
        );
        let spawn = SpawnRequest { argv: vec!["claude".into()], ..Default::default() };
        let Ok(Reply::Spawned { pane, .. }) =
            store.execute(Command::PaneSpawn { workspace: WorkspaceSelector::Active, spawn })
        else {
            panic!("no pane")
        };
        store.submit_paste(&pane, "do it", false, 1024).expect("pasted");
        store.submit_enter(&pane).expect("no decision yet: Enter");
        let before = spawner.record().sent.len();
        let (route, _answer) = crate::agents::decide::DecisionRoute::new();
        let payload = json!({"hook_event_name":"PermissionRequest","tool_name":"Bash",
            "tool_input":{"command":"ls"}});
        store
            .execute(Internal::OpenDecision {
                pane: pane.clone(),
                kind: AgentKind::Claude,
                payload,
                id: berth_engine::ids::DecisionId::new(),
                route,
            })
            .expect("opened");
        let refused = store.submit_enter(&pane);
        assert!(
            matches!(refused, Err(CommandError::Conflict(ref m)) if m.contains("Enter was not pressed")),
            "{refused:?}"
        );
        assert_eq!(spawner.record().sent.len(), before, "nothing was written");
    }
}
