//! The events the server pushes to subscribers: one closed enum.
//!
//! Publishers (the Store, a pane's reader thread, the notification path) build an [`Event`];
//! the bus encodes it once through `protocol`, which owns its JSON form.

use berth_engine::ids::{PaneId, TabId, WorkspaceId};

use crate::view::NotificationView;

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A workspace was made.
    WorkspaceCreated {
        /// Which one.
        workspace: WorkspaceId,
    },
    /// A workspace's name or settings changed.
    WorkspaceChanged {
        /// Which one.
        workspace: WorkspaceId,
    },
    /// A workspace closed.
    WorkspaceClosed {
        /// Which one.
        workspace: WorkspaceId,
    },
    /// A tab was made.
    TabCreated {
        /// Which one.
        tab: TabId,
        /// Its workspace.
        workspace: WorkspaceId,
    },
    /// A tab's title, place, layout or size changed.
    TabChanged {
        /// Which one.
        tab: TabId,
    },
    /// A tab closed.
    TabClosed {
        /// Which one.
        tab: TabId,
    },
    /// A pane was made.
    PaneCreated {
        /// Which one.
        pane: PaneId,
        /// Its tab.
        tab: TabId,
    },
    /// Something about a pane changed (size, title, attention, agent, state).
    PaneChanged {
        /// Which one.
        pane: PaneId,
    },
    /// A pane closed.
    PaneClosed {
        /// Which one.
        pane: PaneId,
    },
    /// A pane has new output (coalesced).
    PaneOutput {
        /// Which one.
        pane: PaneId,
    },
    /// A pane's program reported progress (ConEmu's OSC 9;4 numbers; state 0 ends it).
    PaneProgress {
        /// Which one.
        pane: PaneId,
        /// The state number.
        state: u8,
        /// The percent, if given.
        percent: Option<u8>,
    },
    /// A pane's process ended.
    PaneExited {
        /// Which one.
        pane: PaneId,
        /// Its exit code.
        exit_code: i32,
        /// The signal that ended it, if one did.
        signal: Option<String>,
    },
    /// The focus moved.
    FocusChanged {
        /// The focused pane.
        pane: PaneId,
        /// Its tab.
        tab: TabId,
        /// Its workspace.
        workspace: WorkspaceId,
    },
    /// A notification was kept.
    Notification(Box<NotificationView>),
    /// A notification that should reach the desktop, which this server cannot show (its
    /// desktop notifications are off or no notification service answers it): the attached
    /// window numbered `window` (the one whose view the server holds) shows it on its own
    /// desktop, and no one else does.
    NotificationDesktop {
        /// The notification.
        notification: Box<NotificationView>,
        /// The window that shows it (`window_id` of its `window.view` answers).
        window: u64,
    },
    /// The user clicked a desktop notification.
    NotificationActivated {
        /// Its id.
        id: String,
        /// The pane it concerns.
        pane: PaneId,
        /// The notification server's token for raising the window (xdg-activation), if it sent
        /// one.
        activation_token: Option<String>,
    },
    /// A pane's pending decision was set, changed (e.g. it became not answerable) or cleared
    /// (`None`: answered, retracted or gone).
    Decision {
        /// Which pane.
        pane: PaneId,
        /// The decision now, if any.
        decision: Option<crate::decisions::PendingDecision>,
    },
    /// The server closes this connection (idle without a subscription, or evicted to make
    /// room); the last line it gets.
    ConnectionClosed {
        /// Why.
        reason: String,
    },
    /// The bus dropped this subscriber (it did not read fast enough); the last event it gets.
    SubscriberDropped {
        /// Why.
        reason: String,
    },
    /// A task changed (state, pane, result, disposition).
    TaskChanged {
        /// The task.
        task: berth_engine::ids::TaskId,
        /// Its state now (`pending`, `working` … the wire name).
        state: String,
    },
    /// The git context of a directory (a workspace's or a pane's) changed (`gitctx`).
    GitChanged {
        /// The directory.
        dir: String,
        /// Its context now; `None`: not in a git work tree (any more).
        git: Option<crate::gitctx::GitContext>,
    },
    /// `berth review TASK` asked for a task's review view (`window.review`); nothing in the
    /// Store changed.
    ReviewRequested {
        /// The task.
        task: berth_engine::ids::TaskId,
        /// The one window that opens it (the one used last: `EMBEDDED_WINDOW` or an attached
        /// window's number); `None`: every window (none has reported a view since the server
        /// started or the one used last closed).
        window: Option<u64>,
    },
}
