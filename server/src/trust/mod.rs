//! Trust boundaries (issue 27): who calls the server, told by what the caller cannot forge,
//! and what each caller may do. The property kept: no process that Berth started, or that one
//! of them started through Berth (panes it made, orphans it left), answers a permission
//! request or types into a pane that waits on one without a person's act. ARCHITECTURE.md's
//! "Threat model" says it in full, with what stays out of reach.
//!
//! - `peer.rs`: a socket peer's ancestry from `/proc` (pid and start time per process, the
//!   peer's pidfd), examined when a request first needs it: [`peer::Peer`], [`peer::LazyPeer`].
//! - `consent.rs`: an agent's act on another agent (a task's merge, a prompt submitted to
//!   another pane) held as a decision in its own pane until a person allows it.
//! - `reaper.rs`: the server as a child subreaper, and the reaping of the orphans it adopts.
//! - `policy.rs`: the `impl Store` that turns a peer into a [`Caller`] against the panes, and
//!   the rules ([`crate::store::Store::authorize`], [`crate::store::Store::execute_as`]).
//!
//! It must not read a caller's environment, nor trust a command line to allow anything (a
//! program may rewrite its own; it is read only to refuse more).

pub mod consent;
pub mod peer;
mod policy;
pub mod reaper;

pub use peer::{Peer, ProcKey};

use berth_engine::ids::{PaneId, WorkspaceId};

/// Who made a pane (or last typed into it through Berth), as far as trust goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// A person: the window, a client outside Berth, or a process in a person's pane that no
    /// agent runs above; and nothing else has typed into it through Berth since.
    Person,
    /// A process that does not act for a person made it or typed into it through Berth: the
    /// pane it ran in (`None`: an orphan, a process that could not be examined, or a pane
    /// restored from a snapshot that did not record it).
    Agent {
        /// The pane the process ran in.
        by: Option<PaneId>,
    },
}

impl Default for Provenance {
    /// Unknown is untrusted.
    fn default() -> Self {
        Provenance::Agent { by: None }
    }
}

impl Provenance {
    /// Its spelling in the snapshot: `person`, `agent`, `agent:<pane>`.
    pub fn as_record(&self) -> String {
        match self {
            Provenance::Person => "person".into(),
            Provenance::Agent { by: None } => "agent".into(),
            Provenance::Agent { by: Some(pane) } => format!("agent:{pane}"),
        }
    }

    /// From the snapshot's spelling; anything else (an older snapshot's empty field) is an
    /// agent's, unknown.
    pub fn from_record(text: &str) -> Provenance {
        match text {
            "person" => Provenance::Person,
            _ => Provenance::Agent {
                by: text.strip_prefix("agent:").and_then(|p| PaneId::parse(p).ok()),
            },
        }
    }
}

/// The most agent processes remembered per pane (the oldest dead ones go first).
pub const MAX_AGENT_MARKS: usize = 32;

/// What a pane knows about trust: who made it, and which of its processes are agents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneTrust {
    /// Who made it (or typed into it since).
    pub made_by: Provenance,
    /// Processes in the pane seen running an agent's hooks (the hook's ancestors below the
    /// pane's child): anything below one of them is the agent's.
    pub agents: Vec<ProcKey>,
    /// The pane's own child is (or was) the agent, so everything in the pane is the agent's.
    pub child_is_agent: bool,
}

/// Who calls, as the server judges it for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The window in the server's own process (it calls `Store::execute` directly, or
    /// connects to its own socket): a person's clicks and keys.
    Window,
    /// A process outside Berth (not a descendant of the server): a person's terminal.
    Person,
    /// A process inside a live pane (a descendant of the pane's child).
    Pane {
        /// The pane.
        pane: PaneId,
        /// Its workspace.
        workspace: WorkspaceId,
        /// Whether it acts for a person: a pane a person made and nothing else typed into,
        /// with no agent process above the caller. `None` when it does; else why not.
        not_for_person: Option<String>,
        /// The caller's ancestry below the server (the caller first, the pane's child last).
        chain: Vec<peer::Ancestor>,
    },
    /// A descendant of the server in no live pane: an orphan a pane's program left (its
    /// parents exited), or a process whose pane has ended.
    Orphan {
        /// The pane whose session it is in, if any.
        session_pane: Option<PaneId>,
    },
    /// A process that could not be examined (it exited after connecting, `/proc` unreadable).
    Unknown(String),
}

impl Caller {
    /// Whether the caller's act is a person's.
    pub fn acts_for_person(&self) -> bool {
        match self {
            Caller::Window | Caller::Person => true,
            Caller::Pane { not_for_person, .. } => not_for_person.is_none(),
            Caller::Orphan { .. } | Caller::Unknown(_) => false,
        }
    }

    /// The pane the caller runs in, if it runs in one.
    pub fn pane(&self) -> Option<&PaneId> {
        match self {
            Caller::Pane { pane, .. } => Some(pane),
            _ => None,
        }
    }

    /// What a pane the caller makes (or types into) records.
    pub fn provenance(&self) -> Provenance {
        if self.acts_for_person() {
            return Provenance::Person;
        }
        match self {
            Caller::Pane { pane, .. } => Provenance::Agent { by: Some(pane.clone()) },
            Caller::Orphan { session_pane } => Provenance::Agent { by: session_pane.clone() },
            _ => Provenance::Agent { by: None },
        }
    }

    /// The caller in words, for an error.
    pub fn describe(&self) -> String {
        match self {
            Caller::Window => "the window".into(),
            Caller::Person => "a process outside Berth".into(),
            Caller::Pane { pane, not_for_person: None, .. } => {
                format!("a process in pane {pane}")
            }
            Caller::Pane { pane, not_for_person: Some(why), .. } => {
                format!("a process in pane {pane} ({why})")
            }
            Caller::Orphan { session_pane: Some(pane) } => format!(
                "a process left behind by pane {pane}'s program (its parent exited, so it \
                 cannot be told from an agent)"
            ),
            Caller::Orphan { session_pane: None } => {
                "a process Berth started that is in no live pane".into()
            }
            Caller::Unknown(why) => format!("a process that could not be examined ({why})"),
        }
    }
}

/// Whether a command's outcome depends on who asks: a trust rule checks it, or a pane it
/// makes records its caller. The others (reads, layout, focus …) need no examination.
pub fn needs_caller(cmd: &crate::commands::Command) -> bool {
    use crate::commands::Command as C;
    matches!(
        cmd,
        C::Decide { .. }
            | C::Notify { pane: None, .. }
            | C::PaneSend { .. }
            | C::PaneInput { .. }
            | C::HookEvent { .. }
            | C::SessionReport { .. }
            | C::WorkspaceSetAgentDrive { .. }
            | C::WorkspaceSetAutoResume { .. }
            | C::TabCreate { .. }
            | C::PaneSpawn { .. }
            | C::PaneSplit { .. }
            | C::PaneFocus { .. }
            | C::PaneFocusDirection { .. }
            | C::NotificationsMarkRead { .. }
            | C::PaneClearAttention { .. }
    )
}

/// Where a permission request may be answered from, for errors.
pub const ANSWER_FROM: &str = "answer it in the Berth window (its card or chord), with the \
     desktop notification's buttons, or run `berth decide` in a terminal outside Berth (or in a \
     Berth pane a person opened, with no agent running above it)";

#[cfg(test)]
mod tests;
