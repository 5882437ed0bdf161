//! Test fixtures the window's parts share: a live pane as the Store's view shows it, with
//! every field at a plain default, for tests to change with struct update syntax.

use berth_engine::agents::AgentKind;
use berth_engine::ids::PaneId;
use berth_engine::layout::CellSize;
use berth_engine::model::{Attention, Lifecycle, RestoreState};
use berth_server::view::{AgentView, PaneInfo};

/// A live, idle `sh` pane `id` in `/`, 80×24, no agent, nothing pending.
pub(super) fn pane_info(id: &str) -> PaneInfo {
    PaneInfo {
        id: PaneId::parse(id).expect("a pane id"),
        title: "sh".into(),
        cwd: "/".into(),
        argv: vec!["sh".into()],
        state: RestoreState::Live,
        lifecycle: Lifecycle::Idle,
        attention: Attention::None,
        agent: AgentView { kind: AgentKind::None, session_id: None, resume_argv: None },
        exit_code: None,
        exit_signal: None,
        job: None,
        size: CellSize { cols: 80, rows: 24 },
        was_running: None,
        pid: None,
        created_at: 0,
        progress: None,
        lifecycle_since: None,
        resume: None,
        pending_decision: None,
        turn: Default::default(),
        git: None,
    }
}
