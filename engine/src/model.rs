//! Small domain enums shared by the server and the window: restore state, lifecycle, attention.
//!
//! They carry no data and do no I/O; their wire names live here so that every crate spells
//! them the same way.

/// Whether a pane has a process and, if not, what can be done about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RestoreState {
    /// The child is running and the PTY is attached.
    Live,
    /// Rebuilt after a restart; no process yet.
    Restored,
    /// Restored, and an agent adapter knows how to resume its session.
    Resumable,
    /// The process ended; the scrollback is kept.
    Exited,
}

impl RestoreState {
    /// Every value, in declaration order.
    pub const ALL: &'static [Self] = &[Self::Live, Self::Restored, Self::Resumable, Self::Exited];

    /// The value of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == name)
    }

    /// The wire name (`LIVE`, `RESTORED`, `RESUMABLE`, `EXITED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "LIVE",
            Self::Restored => "RESTORED",
            Self::Resumable => "RESUMABLE",
            Self::Exited => "EXITED",
        }
    }
}

/// What the program in a pane is doing, as far as Berth can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lifecycle {
    /// Just spawned.
    Starting,
    /// Waiting for the user.
    Idle,
    /// Busy (an agent's turn in progress).
    Working,
    /// Waiting for a permission or answer.
    Blocked,
    /// A task finished.
    Done,
    /// The process ended.
    Exited,
}

impl Lifecycle {
    /// Every value, in declaration order.
    pub const ALL: &'static [Self] =
        &[Self::Starting, Self::Idle, Self::Working, Self::Blocked, Self::Done, Self::Exited];

    /// The value of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == name)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Idle => "idle",
            Self::Working => "working",
            Self::Blocked => "blocked",
            Self::Done => "done",
            Self::Exited => "exited",
        }
    }
}

/// Whether a pane wants the user to look at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Attention {
    /// Nothing to see.
    None,
    /// Something new arrived.
    Unread,
    /// The program waits for an answer.
    NeedsInput,
    /// Something failed.
    Error,
}

impl Attention {
    /// Every value, in declaration order.
    pub const ALL: &'static [Self] = &[Self::None, Self::Unread, Self::NeedsInput, Self::Error];

    /// The value of a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.as_str() == name)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Unread => "unread",
            Self::NeedsInput => "needs_input",
            Self::Error => "error",
        }
    }
}
