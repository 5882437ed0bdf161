//! Builders of snapshots for the persistence tests. Test-only; it must not grow logic.

use super::snapshot::{
    LayoutRecord, NotificationRecord, PaneRecord, SizeRecord, Snapshot, SplitDirRecord, TabRecord,
    WorkspaceRecord,
};

/// The sample's workspace.
pub const WS: &str = "ws_main";
/// The sample's first tab, holding [`PANE_A`] beside [`PANE_B`].
pub const TAB_ONE: &str = "tab_one";
/// The sample's second tab, holding [`PANE_C`].
pub const TAB_TWO: &str = "tab_two";
/// A live claude pane.
pub const PANE_A: &str = "pane_a";
/// A live shell pane.
pub const PANE_B: &str = "pane_b";
/// An exited pane.
pub const PANE_C: &str = "pane_c";

/// A pane of `tab` in [`WS`].
pub fn pane(id: &str, tab: &str) -> PaneRecord {
    PaneRecord {
        id: id.into(),
        workspace_id: WS.into(),
        tab_id: tab.into(),
        argv: vec!["/bin/bash".into()],
        cwd: "/home/u/code".into(),
        title: format!("title of {id}"),
        state: "LIVE".into(),
        lifecycle: "idle".into(),
        size: SizeRecord { cols: 60, rows: 40 },
        created_at: 1_000,
        ..PaneRecord::default()
    }
}

/// One workspace, two tabs, three panes and a notification, as the Store would save them.
pub fn sample_snapshot() -> Snapshot {
    let mut a = pane(PANE_A, TAB_ONE);
    a.argv = vec!["claude".into()];
    a.attention = "unread".into();
    a.agent.kind = "claude".into();
    a.agent.session_id = Some("sess-1".into());
    a.agent.resume_argv = Some(vec!["claude".into(), "--resume".into(), "sess-1".into()]);
    let b = pane(PANE_B, TAB_ONE);
    let mut c = pane(PANE_C, TAB_TWO);
    c.state = "EXITED".into();
    c.lifecycle = "exited".into();
    c.exit_code = Some(1);
    Snapshot {
        snapshot_version: 1,
        server_version: "0.1.0".into(),
        saved_at: 1_795_994_100_000,
        workspaces: vec![WorkspaceRecord {
            id: WS.into(),
            name: "main".into(),
            cwd: "/home/u/code".into(),
            auto_resume: false,
            agent_drive: false,
            active_tab_id: Some(TAB_ONE.into()),
            tabs: vec![
                TabRecord {
                    id: TAB_ONE.into(),
                    title: Some("agents".into()),
                    layout: LayoutRecord::split(
                        SplitDirRecord::Right,
                        0.5,
                        LayoutRecord::Pane(PANE_A.into()),
                        LayoutRecord::Pane(PANE_B.into()),
                    ),
                    active_pane_id: Some(PANE_B.into()),
                    size: SizeRecord { cols: 120, rows: 40 },
                    created_at: 1_000,
                },
                TabRecord {
                    id: TAB_TWO.into(),
                    title: None,
                    layout: LayoutRecord::Pane(PANE_C.into()),
                    active_pane_id: Some(PANE_C.into()),
                    size: SizeRecord { cols: 120, rows: 40 },
                    created_at: 2_000,
                },
            ],
            created_at: 1_000,
        }],
        active_workspace_id: Some(WS.into()),
        panes: vec![a, b, c],
        notifications: vec![NotificationRecord {
            id: "notif_1".into(),
            pane_id: Some(PANE_A.into()),
            workspace_id: Some(WS.into()),
            title: "Claude".into(),
            body: "needs input".into(),
            severity: "info".into(),
            source: "hook:claude".into(),
            created_at: 5_000,
            read_at: None,
        }],
        tasks: Vec::new(),
    }
}
