//! The rules, as `impl Store`: a peer judged against the panes ([`Store::caller_of`]), and
//! what each caller may do ([`Store::authorize`] and the checks beside it), applied by
//! [`Store::execute_as`], the socket's way into the Store.
//!
//! - Answering a permission request (`pane.decide`): a person only (the window, a process
//!   outside Berth, or a process in a pane a person made with no agent above it), and never
//!   from inside the pane that asks.
//! - Typing into a pane (`pane.send`, `pane.input`, `pane.submit`): never into the caller's
//!   own pane from inside it; into a pane that waits on a permission request only for a
//!   person; into another pane, for a caller that does not act for a person, only in a
//!   workspace where a person turned agent driving on. Input from such a caller makes the
//!   pane an agent's (its provenance), so what runs there later is not taken for a person.
//! - Speaking for a pane (`hook.event`, `session.report`, `decision.request`): a process
//!   inside a pane only for its own pane; a person for any.
//! - Settings that widen what agents may do (`workspace.set_agent_drive`,
//!   `workspace.set_auto_resume`): a person only.
//!
//! It must not write to a pane or answer anything itself; it refuses or records.

use berth_engine::ids::PaneId;
use berth_engine::model::Lifecycle;

use super::peer::{Ancestor, Peer};
use super::{Caller, Provenance, ANSWER_FROM, MAX_AGENT_MARKS};
use crate::commands::{Command, Reply};
use crate::error::CommandError;
use crate::store::{Op, Store};

/// Program names of shells: a hook's shell wrapper, or a person's interactive shell.
const SHELLS: &[&str] =
    &["sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "ash", "busybox", "nu"];

fn is_shell(a: &Ancestor) -> bool {
    SHELLS.contains(&a.comm.as_str())
}

/// What an allowed command leaves behind once it succeeded.
enum Effect {
    None,
    /// A caller that does not act for a person typed into this pane.
    Taint(PaneId, Provenance),
    /// A process in this pane spoke for it as its agent: its ancestors are the agent's.
    MarkAgents(PaneId, Vec<Ancestor>),
}

/// What typing into a pane takes, for a caller that may not be refused outright.
enum InputRule {
    /// Allowed; what it leaves behind.
    Allowed(Effect),
    /// An agent's input into a pane it may not drive: a person must agree first.
    AskFirst,
}

fn refuse(message: String) -> CommandError {
    CommandError::NotPermitted(message)
}

impl Store {
    /// Judges a peer against the panes now.
    pub fn caller_of(&self, peer: &Peer) -> Caller {
        let chain = match peer {
            Peer::Server => return Caller::Window,
            Peer::Outside { session } => {
                // In a pane's session yet outside: an orphan that reached init (the server is
                // no subreaper), never a person.
                let session_pane = self
                    .panes
                    .values()
                    .find(|p| p.pty.as_ref().is_some_and(|pty| pty.pid() == *session))
                    .map(|p| p.id.clone());
                return match session_pane {
                    Some(pane) => Caller::Orphan { session_pane: Some(pane) },
                    None => Caller::Person,
                };
            }
            Peer::Unknown(why) => return Caller::Unknown(why.clone()),
            Peer::Inside(chain) => chain,
        };
        let Some(child) = chain.last() else {
            return Caller::Unknown("an empty ancestry".into());
        };
        let pane = self.panes.values().find(|p| {
            p.pty.as_ref().is_some_and(|pty| pty.pid() == child.key.pid)
                && p.shared.meta().exit.is_none()
        });
        let Some(pane) = pane else {
            let sid = chain[0].session;
            let session_pane = self
                .panes
                .values()
                .find(|p| p.pty.as_ref().is_some_and(|pty| pty.pid() == sid))
                .map(|p| p.id.clone());
            return Caller::Orphan { session_pane };
        };
        let not_for_person = match &pane.trust.made_by {
            Provenance::Agent { by: Some(by) } => Some(format!(
                "pane {} was opened or typed into through Berth by a process in pane {by} that \
                 does not act for a person",
                pane.id
            )),
            Provenance::Agent { by: None } => Some(format!(
                "pane {} was opened or typed into by an agent or an orphaned process, or before \
                 Berth recorded who opens panes",
                pane.id
            )),
            Provenance::Person => self.agent_above(pane, chain),
        };
        Caller::Pane {
            pane: pane.id.clone(),
            workspace: pane.workspace.clone(),
            not_for_person,
            chain: chain.clone(),
        }
    }

    /// Why a process in `pane` with ancestry `chain` runs under an agent, if it does. When
    /// unsure it says so: an agent reported in the pane without a process to tell it by
    /// makes the whole pane the agent's.
    fn agent_above(&self, pane: &crate::store::Pane, chain: &[Ancestor]) -> Option<String> {
        use berth_engine::agents::{detect_kind, AgentKind};
        if pane.trust.child_is_agent || detect_kind(&pane.argv) != AgentKind::None {
            return Some(format!("pane {}'s own program is an agent", pane.id));
        }
        for a in chain {
            if pane.trust.agents.contains(&a.key) {
                return Some(format!(
                    "it runs under an agent's process ({}, pid {})",
                    a.comm, a.key.pid
                ));
            }
            let kind = detect_kind(&a.argv);
            if kind != AgentKind::None {
                return Some(format!("it runs under {} (pid {})", kind.as_str(), a.key.pid));
            }
        }
        if pane.agent.kind != AgentKind::None && pane.trust.agents.is_empty() {
            return Some(format!(
                "an agent ({}) was reported in pane {} and Berth cannot tell its process",
                pane.agent.kind.as_str(),
                pane.id
            ));
        }
        None
    }

    /// Executes a client's command (or an internal op) for `caller`: refused unless the rules
    /// allow it; a pane it makes records the caller's provenance.
    pub fn execute_as(
        &mut self,
        caller: &Caller,
        op: impl Into<Op>,
    ) -> Result<Reply, CommandError> {
        let mut op = op.into();
        if let (Op::Client(Command::Notify { pane: pane @ None, .. }), Some(own)) =
            (&mut op, caller.pane())
        {
            // A notification that names no pane comes from the caller's own (by its ancestry).
            *pane = Some(own.clone());
        }
        let effect = match &op {
            Op::Client(cmd) => self.authorize(caller, cmd)?,
            Op::Internal(_) => Effect::None,
        };
        let result = self.acting_as(caller.provenance(), |s| s.execute(op));
        if result.is_ok() {
            self.apply_effect(effect);
        }
        result
    }

    /// Runs `f` with panes it makes recorded as made by `made_by` (a task's worker, started by
    /// whoever asked for the task).
    pub(crate) fn acting_as<T>(
        &mut self,
        made_by: Provenance,
        f: impl FnOnce(&mut Store) -> T,
    ) -> T {
        /// Puts the Store's provenance back even if `f` panics (the socket catches panics
        /// and goes on; a provenance left behind would be recorded on the next pane).
        struct Restore<'a>(&'a mut Store, Provenance);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.acting = std::mem::replace(&mut self.1, Provenance::Person);
            }
        }
        let before = std::mem::replace(&mut self.acting, made_by);
        let guard = Restore(self, before);
        f(&mut *guard.0)
    }

    fn apply_effect(&mut self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Taint(pane, by) => {
                if let Some(p) = self.panes.get_mut(&pane) {
                    if p.trust.made_by == Provenance::Person {
                        tracing::info!(pane = %pane, by = ?by, "typed into by an agent: no longer a person's pane");
                        p.trust.made_by = by;
                    }
                }
            }
            Effect::MarkAgents(pane, chain) => self.mark_agents(&pane, &chain),
        }
    }

    /// Checks `cmd` for `caller`.
    fn authorize(&self, caller: &Caller, cmd: &Command) -> Result<Effect, CommandError> {
        match cmd {
            Command::Decide { pane, .. } => {
                self.authorize_decide(caller, pane)?;
                Ok(Effect::None)
            }
            Command::PaneSend { pane, .. } | Command::PaneInput { pane, .. } => {
                self.authorize_input(caller, pane)
            }
            Command::HookEvent { pane, .. } => self.authorize_speak(caller, pane, None),
            Command::SessionReport { pane, explicit_pane, .. } => {
                self.authorize_speak(caller, pane, Some(*explicit_pane))
            }
            Command::PaneFocus { .. }
            | Command::PaneFocusDirection { .. }
            | Command::NotificationsMarkRead { .. }
            | Command::PaneClearAttention { .. } => {
                self.authorize_attention(
                    caller,
                    "move the person's focus or mark what needs them as seen",
                )?;
                Ok(Effect::None)
            }
            Command::WorkspaceSetAgentDrive { .. } | Command::WorkspaceSetAutoResume { .. } => {
                if caller.acts_for_person() {
                    Ok(Effect::None)
                } else {
                    Err(refuse(format!(
                        "{} cannot change what a workspace lets agents do; a person sets it \
                         (the window, or `berth workspace` in a terminal outside Berth)",
                        caller.describe()
                    )))
                }
            }
            _ => Ok(Effect::None),
        }
    }

    /// What the person sees and where they type: focus (`pane.focus`, `pane.focus_direction`),
    /// attention and unread marks (`pane.clear_attention`, `notifications.mark_read`) and an
    /// attached window's report of what it shows (`window.attach`, `window.view`) are a
    /// person's. An agent that moved the focus could have the person's next keys land in
    /// another pane (one with a permission prompt open); one that reported a pane as looked at
    /// or cleared its attention would hide that pane's question from the person.
    pub fn authorize_attention(&self, caller: &Caller, what: &str) -> Result<(), CommandError> {
        if caller.acts_for_person() {
            return Ok(());
        }
        Err(refuse(format!(
            "{} cannot {what}: that is the person's (the window, or `berth` in a terminal \
             outside Berth or in a pane a person opened)",
            caller.describe()
        )))
    }

    /// `notification.activate`: a click on a notification, a person's act only (the window, a
    /// desktop notification's action). It may write the click report a program asked for
    /// into its pane, so an agent activating one would forge the person's click.
    pub fn authorize_activation(&self, caller: &Caller) -> Result<(), CommandError> {
        if caller.acts_for_person() {
            return Ok(());
        }
        Err(refuse(format!(
            "{} cannot activate a notification: a click on one is a person's act (the window, \
             or the desktop notification)",
            caller.describe()
        )))
    }

    /// `pane.decide` for `pane`.
    pub(crate) fn authorize_decide(
        &self,
        caller: &Caller,
        pane: &PaneId,
    ) -> Result<(), CommandError> {
        if caller.pane() == Some(pane) {
            return Err(refuse(format!(
                "a process inside pane {pane} cannot answer that pane's permission request; \
                 {ANSWER_FROM}"
            )));
        }
        if caller.acts_for_person() {
            return Ok(());
        }
        Err(refuse(format!(
            "{} cannot answer pane {pane}'s permission request: only a person may; {ANSWER_FROM}",
            caller.describe()
        )))
    }

    /// Whether a pane waits on a person's answer: a decision on its card (answerable or
    /// not: after a lost route the agent asks in its own dialog), or an agent blocked on one.
    pub fn waits_on_person(&self, pane: &PaneId) -> bool {
        self.decisions.current(pane).is_some()
            || self.panes.get(pane).is_some_and(|p| self.pane_lifecycle(p) == Lifecycle::Blocked)
    }

    /// Typing into `pane` (`pane.send`, `pane.input`): what `input_rule` would ask a person
    /// for is refused (a decision per keystroke would be no consent at all).
    fn authorize_input(&self, caller: &Caller, pane: &PaneId) -> Result<Effect, CommandError> {
        match self.input_rule(caller, pane)? {
            InputRule::Allowed(effect) => Ok(effect),
            InputRule::AskFirst => Err(refuse(format!(
                "{} cannot type into pane {pane}: an agent may drive other panes only in its own \
                 workspace, once a person turned it on (`berth workspace agent-drive NAME on`, \
                 run outside Berth)",
                caller.describe()
            ))),
        }
    }

    /// Typing into `pane`: refused, allowed, or to be asked of a person first.
    fn input_rule(&self, caller: &Caller, pane: &PaneId) -> Result<InputRule, CommandError> {
        if caller.pane() == Some(pane) {
            return Err(refuse(format!(
                "a process inside pane {pane} cannot type into its own pane (as TIOCSTI is \
                 refused by the kernel: it could answer its own program's prompts)"
            )));
        }
        if caller.acts_for_person() {
            return Ok(InputRule::Allowed(Effect::None));
        }
        let target = self.pane_ref(pane)?;
        if self.waits_on_person(pane) {
            return Err(refuse(format!(
                "{} cannot type into pane {pane}: it waits on a permission request, which only a \
                 person may answer; {ANSWER_FROM}",
                caller.describe()
            )));
        }
        let driven = match caller {
            Caller::Pane { workspace, .. } => {
                *workspace == target.workspace
                    && self.workspaces.iter().any(|w| w.id == *workspace && w.agent_drive)
            }
            _ => false,
        };
        if !driven {
            return Ok(InputRule::AskFirst);
        }
        Ok(InputRule::Allowed(Effect::Taint(pane.clone(), caller.provenance())))
    }

    /// `pane.submit`: the rules of `pane.send`, except that where an agent may not drive the
    /// pane it asks the person first (issue 30): `Some` is the decision to open, after whose
    /// allow the submit is authorized again with `consented`. Never into the caller's own
    /// pane nor into one that waits on a person, consent or not.
    pub fn authorize_submit(
        &mut self,
        caller: &Caller,
        pane: &PaneId,
        text: &str,
        consented: bool,
    ) -> Result<Option<super::consent::Ask>, CommandError> {
        let effect = match self.input_rule(caller, pane)? {
            InputRule::Allowed(effect) => effect,
            InputRule::AskFirst if consented => Effect::Taint(pane.clone(), caller.provenance()),
            InputRule::AskFirst => {
                let target = self.pane_ref(pane)?;
                let whom = match target.agent.kind {
                    berth_engine::agents::AgentKind::None => format!("pane {pane}"),
                    kind => format!("{} in pane {pane}", kind.as_str()),
                };
                return self.ask_for(caller, &format!("send a prompt to {whom}"), text).map(Some);
            }
        };
        self.apply_effect(effect);
        Ok(None)
    }

    /// Speaking for `pane` as its agent (`hook.event`; `session.report` with `explicit`: named
    /// on purpose, `Some(false)`: by default).
    fn authorize_speak(
        &self,
        caller: &Caller,
        pane: &PaneId,
        explicit: Option<bool>,
    ) -> Result<Effect, CommandError> {
        if let Caller::Pane { pane: own, chain, .. } = caller {
            if own == pane {
                return Ok(Effect::MarkAgents(pane.clone(), chain.clone()));
            }
        }
        if !caller.acts_for_person() {
            return Err(refuse(format!(
                "{} may speak only for its own pane, not for pane {pane} (a person may name \
                 another pane: `--pane`, from a terminal outside Berth)",
                caller.describe()
            )));
        }
        if explicit == Some(false) {
            // A person's report for a pane it does not run in must say so: no resume command
            // is planted in a pane by accident or by default.
            let own = match caller.pane() {
                Some(own) => format!("runs in pane {own}"),
                None => "does not run in a Berth pane".to_owned(),
            };
            return Err(CommandError::BadParams(format!(
                "session.report names pane {pane} but the reporting process {own}; to report \
                 for another pane, name it on purpose (berth report-session --pane {pane}, or \
                 \"explicit_pane\": true)"
            )));
        }
        Ok(Effect::None)
    }

    /// `decision.request`: only a hook running in the pane (by its ancestry), or a person,
    /// opens a decision there. A hook in the pane marks its ancestors as the agent's.
    pub fn authorize_decision_request(
        &mut self,
        caller: &Caller,
        pane: &PaneId,
    ) -> Result<(), CommandError> {
        let effect = match caller {
            Caller::Window | Caller::Person => Effect::None,
            Caller::Pane { pane: own, chain, .. } if own == pane => {
                Effect::MarkAgents(pane.clone(), chain.clone())
            }
            _ => {
                return Err(refuse(format!(
                    "{} cannot open a permission request for pane {pane}: only a hook running in \
                     that pane may",
                    caller.describe()
                )))
            }
        };
        self.apply_effect(effect);
        Ok(())
    }

    /// A hook's ancestry `chain` (the hook first, the pane's child last) in `pane`: every
    /// process between the two is the agent's (or its shell wrapper). The pane's child is the
    /// agent too unless it is a shell with a program other than a shell between it and the
    /// hook (a person's shell running the agent).
    fn mark_agents(&mut self, pane: &PaneId, chain: &[Ancestor]) {
        let Some(p) = self.panes.get_mut(pane) else { return };
        let Some((child, rest)) = chain.split_last() else { return };
        let between = rest.get(1..).unwrap_or_default();
        let agent_between = between.iter().any(|a| !is_shell(a));
        if !is_shell(child) || !agent_between {
            p.trust.child_is_agent = true;
        }
        for a in between {
            if !p.trust.agents.contains(&a.key) {
                p.trust.agents.push(a.key);
            }
        }
        if p.trust.agents.len() > MAX_AGENT_MARKS {
            p.trust.agents.retain(|k| k.alive());
            let excess = p.trust.agents.len().saturating_sub(MAX_AGENT_MARKS);
            p.trust.agents.drain(..excess);
        }
    }

    /// Turns agent driving on or off for a workspace.
    pub(crate) fn set_agent_drive(
        &mut self,
        workspace: &berth_engine::ids::WorkspaceId,
        enabled: bool,
    ) -> Result<(), CommandError> {
        let ws = self
            .workspaces
            .iter_mut()
            .find(|w| w.id == *workspace)
            .ok_or_else(|| CommandError::NoSuchWorkspace(workspace.to_string()))?;
        ws.agent_drive = enabled;
        Ok(())
    }

    fn pane_ref(&self, id: &PaneId) -> Result<&crate::store::Pane, CommandError> {
        self.panes.get(id).ok_or_else(|| CommandError::NoSuchPane(id.to_string()))
    }
}
