//! Snapshot encode and decode of 100 panes in 50 tabs, with criterion. The snapshot DTO lives
//! in the server crate (`persist::snapshot`), so this bench is here rather than in
//! `engine/benches/`. Decode goes through the real loader (`persist::load::load` on a temp dir:
//! read, classify, migrate-if-needed, decode entry by entry).

use std::collections::BTreeMap;
use std::hint::black_box;

use berth_server::persist::encode::encode;
use berth_server::persist::fs::RealFs;
use berth_server::persist::load;
use berth_server::persist::snapshot::{
    AgentRecord, LayoutRecord, PaneRecord, SizeRecord, Snapshot, SplitDirRecord, SplitRecord,
    TabRecord, WorkspaceRecord, SNAPSHOT_FILE, SNAPSHOT_VERSION,
};
use criterion::{criterion_group, criterion_main, Criterion};

fn snapshot_of(tabs: usize) -> Snapshot {
    let ws = "ws_00000000-0000-4000-8000-000000000001".to_owned();
    let mut snapshot = Snapshot {
        snapshot_version: SNAPSHOT_VERSION,
        server_version: "0.1.0".into(),
        saved_at: 1_790_000_000_000,
        active_workspace_id: Some(ws.clone()),
        ..Snapshot::default()
    };
    let mut records = Vec::new();
    for t in 0..tabs {
        let tab = format!("tab_00000000-0000-4000-8000-{t:012}");
        let a = format!("pane_00000000-0000-4000-8000-{:012}", 2 * t);
        let b = format!("pane_00000000-0000-4000-8000-{:012}", 2 * t + 1);
        records.push(TabRecord {
            id: tab.clone(),
            title: Some(format!("tab {t}")),
            layout: LayoutRecord::Split(Box::new(SplitRecord {
                dir: SplitDirRecord::Right,
                ratio: 0.5,
                first: LayoutRecord::Pane(a.clone()),
                second: LayoutRecord::Pane(b.clone()),
            })),
            active_pane_id: Some(a.clone()),
            size: SizeRecord { cols: 200, rows: 50 },
            created_at: 1_790_000_000_000,
        });
        for id in [a, b] {
            snapshot.panes.push(PaneRecord {
                id,
                workspace_id: ws.clone(),
                tab_id: tab.clone(),
                argv: vec!["bash".into(), "-l".into()],
                cwd: "/home/user/code/berth".into(),
                title: "bash".into(),
                env: BTreeMap::from([("TERM".into(), "xterm-256color".into())]),
                size: SizeRecord { cols: 100, rows: 50 },
                state: "LIVE".into(),
                agent: AgentRecord::default(),
                was_running: Some("cargo test".into()),
                ..PaneRecord::default()
            });
        }
    }
    snapshot.workspaces.push(WorkspaceRecord {
        id: ws,
        name: "berth".into(),
        cwd: "/home/user/code/berth".into(),
        auto_resume: false,
        agent_drive: false,
        active_tab_id: records.first().map(|t| t.id.clone()),
        tabs: records,
        created_at: 1_790_000_000_000,
    });
    snapshot
}

fn snapshot_100_panes(c: &mut Criterion) {
    let snapshot = snapshot_of(50);
    let bytes = encode(&snapshot).expect("encode");
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join(SNAPSHOT_FILE), &bytes).expect("write");
    let mut group = c.benchmark_group("snapshot");
    group.bench_function("encode_100_panes", |b| b.iter(|| black_box(encode(&snapshot))));
    group.bench_function("load_100_panes", |b| {
        b.iter(|| {
            let outcome = load::load(&RealFs, dir.path()).expect("load");
            assert_eq!(outcome.snapshot.panes.len(), 100);
            outcome
        })
    });
    group.finish();
}

criterion_group!(benches, snapshot_100_panes);
criterion_main!(benches);
