//! An agent's act on another agent held for a person's consent (issue 30): merging or
//! discarding a task (`task.finish`), submitting a prompt to another pane (`pane.submit`), or
//! closing a pane other than its own (`pane.close`, `tab.close`, `workspace.close`), asked by
//! a caller that does not act for a person. The act opens a Berth decision in the
//! caller's own pane ("claude in api asks to merge task parse-fix"), answered like any other
//! (the window's card, the desktop notification, `berth decide` outside Berth), and goes on
//! only with an allow. A workspace a person opted in (`berth workspace agent-drive NAME on`)
//! lets its agents act without asking.
//!
//! The decision is the caller's own pane's, so nothing in that pane can answer it
//! (`Store::authorize_decide`), and no other agent can either: no call of an agent's ever
//! grants its own act. It must not perform the act itself: its callers do, after the future
//! it returns says yes.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_engine::agents::AgentKind;
use berth_engine::ids::PaneId;

pub use super::Ask;
use super::Caller;
use crate::agents::decide::{bounded_detail, bounded_line, DecisionRequest};
use crate::agents::pending::{wait_for_consent, OpenRequest, CONSENT_SOURCE};
use crate::decisions::{DecisionAnswer, OutcomeReason};
use crate::error::CommandError;
use crate::store::Store;

/// How long an act waits for the person's answer before it is given up (nothing done).
pub const CONSENT_WAIT: Duration = Duration::from_secs(30 * 60);

impl Store {
    /// Whether `caller` may do `act` (words: "merge task parse-fix") at once (`None`), must
    /// ask a person first (`Some`), or may not at all (a caller in no pane: there is nowhere
    /// to ask).
    pub fn consent_for(
        &self,
        caller: &Caller,
        act: &str,
        detail: &str,
    ) -> Result<Option<Ask>, CommandError> {
        if caller.acts_for_person() {
            return Ok(None);
        }
        if let Caller::Pane { workspace, .. } = caller {
            if self.workspaces.iter().any(|w| w.id == *workspace && w.agent_drive) {
                return Ok(None);
            }
        }
        self.ask_for(caller, act, detail).map(Some)
    }

    /// Whether closing what `cmd` closes (`pane.close`, `tab.close`, `workspace.close`) must
    /// first be agreed to by a person: when the caller does not act for a person and it would
    /// end a live pane other than the caller's own. `None` for every other command.
    pub fn consent_to_close(
        &self,
        caller: &Caller,
        cmd: &crate::commands::Command,
    ) -> Result<Option<Ask>, CommandError> {
        use crate::commands::Command as C;
        if caller.acts_for_person() {
            return Ok(None);
        }
        let (what, panes): (String, Vec<PaneId>) = match cmd {
            C::PaneClose { pane } => (format!("close pane {pane}"), vec![pane.clone()]),
            C::TabClose { tab } => (
                format!("close tab {tab}"),
                self.tabs.get(tab).map(|t| t.layout.panes()).unwrap_or_default(),
            ),
            C::WorkspaceClose { workspace } => {
                let ws = self.workspaces.iter().find(|w| w.id == *workspace);
                let panes = ws
                    .into_iter()
                    .flat_map(|w| &w.tabs)
                    .filter_map(|t| self.tabs.get(t))
                    .flat_map(|t| t.layout.panes())
                    .collect();
                let name = ws.map_or_else(|| workspace.to_string(), |w| w.name.clone());
                (format!("close workspace {name}"), panes)
            }
            _ => return Ok(None),
        };
        let others: Vec<&PaneId> = panes
            .iter()
            .filter(|p| Some(*p) != caller.pane())
            .filter(|p| self.panes.get(*p).is_some_and(|p| p.shared.meta().exit.is_none()))
            .collect();
        if others.is_empty() {
            return Ok(None);
        }
        let detail = others
            .iter()
            .map(|p| {
                let agent = self.panes.get(*p).map_or(AgentKind::None, |p| p.agent.kind);
                match agent {
                    AgentKind::None => format!("pane {p}"),
                    kind => format!("pane {p} ({})", kind.as_str()),
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        self.consent_for(caller, &what, &detail)
    }

    /// The decision that asks a person whether `caller` may do `act`; refused for a caller in
    /// no pane (there is nowhere to ask).
    pub fn ask_for(&self, caller: &Caller, act: &str, detail: &str) -> Result<Ask, CommandError> {
        let Caller::Pane { pane, workspace, .. } = caller else {
            return Err(CommandError::NotPermitted(format!(
                "{} cannot {act}: only a person may, or an agent in a Berth pane with the \
                 person's consent",
                caller.describe()
            )));
        };
        let ws = self.workspaces.iter().find(|w| w.id == *workspace);
        let agent = self.panes.get(pane).map_or(AgentKind::None, |p| p.agent.kind);
        let who = match agent {
            AgentKind::None => "an agent".to_owned(),
            kind => kind.as_str().to_owned(),
        };
        let place = ws.map_or_else(|| format!("pane {pane}"), |w| w.name.clone());
        Ok(Ask {
            pane: pane.clone(),
            agent,
            prompt: bounded_line(&format!("{who} in {place} asks to {act}"), 200),
            detail: bounded_detail(detail),
        })
    }
}

/// Opens the decision for `ask` and returns the future of the person's answer: `Ok` for an
/// allow, else the refusal that says why nothing was done.
pub fn ask_person(
    store: &Arc<Mutex<Store>>,
    ask: Ask,
) -> Result<impl Future<Output = Result<(), CommandError>> + Send + 'static, CommandError> {
    let request = DecisionRequest {
        tool: "Berth".into(),
        prompt: ask.prompt.clone(),
        detail: ask.detail,
        suggestion: None,
        always: false,
    };
    let open = OpenRequest { request, title: ask.prompt.clone(), source: CONSENT_SOURCE.into() };
    let outcome = wait_for_consent(store.clone(), ask.pane, ask.agent, open, CONSENT_WAIT)?;
    let prompt = ask.prompt;
    Ok(async move {
        let outcome = outcome.await;
        match (outcome.reason, outcome.answer) {
            (OutcomeReason::Answered, Some(DecisionAnswer::Allow | DecisionAnswer::Always)) => {
                Ok(())
            }
            (OutcomeReason::Answered, _) => Err(CommandError::NotPermitted(format!(
                "the person declined: {prompt}{}",
                outcome.message.map(|m| format!(" ({m})")).unwrap_or_default()
            ))),
            (OutcomeReason::Timeout, _) => Err(CommandError::Timeout(format!(
                "nobody answered in {} minutes: {prompt}; nothing was done",
                CONSENT_WAIT.as_secs() / 60
            ))),
            _ => Err(CommandError::NotPermitted(format!(
                "the request was taken back before a person answered: {prompt}; nothing was done"
            ))),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use berth_engine::agents::AgentKind;
    use berth_engine::model::{Attention, Lifecycle};

    use super::{ask_person, Ask};
    use crate::agents::pending::tests::{decide, look, store_with_pane};
    use crate::agents::turns::LifecycleSource;
    use crate::commands::Reply;
    use crate::store::Store;

    /// Berth's own question about an act (issue 30's consent) leaves the pane as it found it:
    /// a script idle at its prompt that asked to merge a task is idle again once the person
    /// answers, not `working` until a hook that never comes; its asker gone, no card and no
    /// `needs_input` are left; an agent asking mid-turn goes on working.
    #[tokio::test]
    async fn a_consent_question_leaves_the_pane_as_it_found_it() {
        let (store, pane, _home) = store_with_pane();
        let ask = |store: &Arc<Mutex<Store>>| {
            let ask = Ask {
                pane: pane.clone(),
                agent: AgentKind::None,
                prompt: "an agent in home asks to merge task x".into(),
                detail: String::new(),
            };
            ask_person(store, ask).expect("opens")
        };
        let set = |lifecycle| {
            let locked = store.lock().unwrap();
            locked.panes.get(&pane).unwrap().shared.set_lifecycle(lifecycle, LifecycleSource::Hook);
        };
        for before in [Lifecycle::Idle, Lifecycle::Done, Lifecycle::Working] {
            set(before);
            let answer = ask(&store);
            assert_eq!(look(&store, &pane), (Lifecycle::Blocked, Attention::NeedsInput, true));
            assert!(matches!(decide(&store, &pane), Ok(Reply::Decided { .. })));
            assert!(answer.await.is_ok(), "allowed");
            let (lifecycle, attention, card) = look(&store, &pane);
            assert_eq!((lifecycle, card), (before, false), "answered, from {before:?}");
            assert_ne!(attention, Attention::NeedsInput);

            let answer = ask(&store);
            drop(answer);
            let (lifecycle, attention, card) = look(&store, &pane);
            assert_eq!((lifecycle, card), (before, false), "its asker gone, from {before:?}");
            assert_ne!(attention, Attention::NeedsInput);
        }
        // Two questions: the pane goes back only when the last is settled.
        set(Lifecycle::Idle);
        let first = ask(&store);
        let second = ask(&store);
        assert!(matches!(decide(&store, &pane), Ok(Reply::Decided { .. })));
        assert!(first.await.is_ok());
        assert_eq!(look(&store, &pane).0, Lifecycle::Blocked, "one still open");
        assert!(matches!(decide(&store, &pane), Ok(Reply::Decided { .. })));
        assert!(second.await.is_ok());
        assert_eq!(look(&store, &pane).0, Lifecycle::Idle);
    }
}
