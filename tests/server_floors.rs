//! No file of `server/src` imports a file on a floor above its own: the server's files stand
//! on floors, lowest first (leaves, the disk, models, panes, the Store, services, the wire),
//! and an import (as `import_cycles.rs` reads them from the source) may only run down or
//! along a floor. The Store is built from models and knows no service; a service works the
//! Store and knows no wire; only the wire (the protocol, the socket, the client) spells JSON-RPC.
//!
//! Each file is on the floor of the longest path in [`FLOORS`] naming it (a folder, ending in
//! `/`, or a file; a pattern `*x` names every file whose path ends in `x` and wins over the
//! others), and every file must be on one. Files that are only a module's tests
//! (`*_tests.rs`, `*/tests.rs`) stand on the top floor: they exercise their floor from above
//! (a Store test may run a service and read the wire); tests inline in a file are that file's. A feature folder (`agents/`, `tasks/`,
//! `gitctx/`, `notifications/`, `trust/`) stands on the models floor: what the Store holds and
//! what its commands carry; its files that work on the Store (`impl Store` blocks, the
//! Store's side of its commands) and its services (the requests served off the Store's lock,
//! watchers) are named on those floors, the feature's split between them.
//!
//! [`KNOWN_UPWARD`] lists the imports back up a floor that are left, being removed (issue
//! 32). It may only shrink: a new one fails, and so does a listed one that is gone (then
//! delete its entry).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[path = "support/import_graph.rs"]
#[allow(dead_code)]
mod import_graph;

use import_graph::{
    blank_comments_and_strings, import_graph, load_crate, module_of, root, SourceFile,
};

/// The floors of `server/src`, lowest first: a name and the paths on it, relative to
/// `server/src/`.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "leaves: errors, paths, limits, the work pool, the control gate, screens and searches as data, OS buses",
        &[
            "error.rs",
            "paths.rs",
            "rlimit.rs",
            "heavy.rs",
            "control_gate.rs",
            "pane_search.rs",
            "screen.rs",
            "dbus/",
            "logind.rs",
            "logind/",
        ],
    ),
    ("the disk: the snapshot's DTOs and the state dir", &["persist/"]),
    (
        "models: what the Store holds, its commands, events and views, the event bus",
        &[
            "decisions.rs",
            "view.rs",
            "event.rs",
            "events.rs",
            "commands.rs",
            "agents/",
            "gitctx/",
            "tasks/",
            "notifications/",
            "trust/",
        ],
    ),
    ("panes: a pane's I/O threads and its process", &["pane.rs", "process.rs"]),
    (
        "the Store: its state, its commands' one path, restore",
        &[
            "store.rs",
            "restore.rs",
            // The features' sides of the Store.
            "agents/pending.rs",
            "agents/reports.rs",
            "tasks/ops.rs",
            "trust/policy.rs",
        ],
    ),
    (
        "services: requests served off the Store's lock, watchers, saving, screen streams",
        &[
            "persistence.rs",
            "screen_stream.rs",
            "agents/submit.rs",
            "agents/wait.rs",
            "gitctx/serve.rs",
            "gitctx/watch.rs",
            "notifications/intake.rs",
            "tasks/checkpoint.rs",
            "tasks/conflicts.rs",
            "tasks/finish.rs",
            "tasks/serve.rs",
            "tasks/start.rs",
            "tasks/watch.rs",
            "trust/consent.rs",
        ],
    ),
    (
        "the wire: JSON-RPC, the socket, the client, the window's bridge, the server",
        &[
            "protocol.rs",
            "protocol/",
            "client.rs",
            "client_io.rs",
            "connections.rs",
            "socket.rs",
            "ui.rs",
            "lib.rs",
        ],
    ),
    ("tests: files that are only a module's tests", &["*_tests.rs", "*/tests.rs"]),
];

/// Imports back up a floor that are left (issue 32), as (from, to) relative to `server/src/`.
/// This list may only shrink.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// How well `pattern` names `path`: `None` when it does not, else its length (a `*x`
/// pattern: above any length).
fn names(pattern: &str, path: &str) -> Option<usize> {
    let named = match pattern.strip_prefix('*') {
        Some(suffix) => path.ends_with(suffix),
        None if pattern.ends_with('/') => path.starts_with(pattern),
        None => path == pattern,
    };
    named.then(|| if pattern.starts_with('*') { usize::MAX } else { pattern.len() })
}

/// The floor of `path` (relative to the crate's `src/`) under `floors`: the index of the floor
/// whose path names it best.
fn floor_of(floors: &[(&str, &[&str])], path: &str) -> Option<usize> {
    floors
        .iter()
        .enumerate()
        .flat_map(|(i, (_, paths))| paths.iter().map(move |p| (i, *p)))
        .filter_map(|(i, p)| names(p, path).map(|score| (i, score)))
        .max_by_key(|(_, score)| *score)
        .map(|(i, _)| i)
}

/// An import back up a floor: (from, to) relative to the crate's `src/`, with the line and
/// the two floors.
type Upward = BTreeMap<(String, String), (usize, usize, usize)>;

/// The imports of `files` (paths relative to `src/`) that run up a floor, and the files on no
/// floor.
fn upward_imports(files: &[SourceFile], floors: &[(&str, &[&str])]) -> (Upward, Vec<String>) {
    let unplaced: Vec<String> = files
        .iter()
        .filter(|f| floor_of(floors, &f.path).is_none())
        .map(|f| f.path.clone())
        .collect();
    let mut up = Upward::new();
    for ((from, to), line) in import_graph(files) {
        if let (Some(a), Some(b)) = (floor_of(floors, &from), floor_of(floors, &to)) {
            if b > a {
                up.insert((from, to), (line, a, b));
            }
        }
    }
    (up, unplaced)
}

/// The server's files, their paths relative to `server/src/`.
fn server_files() -> Vec<SourceFile> {
    let mut files = load_crate(&root(), "server");
    assert!(files.len() > 50, "server/src has its source files");
    for f in &mut files {
        f.path = f.path.strip_prefix("server/src/").expect("under server/src/").to_owned();
    }
    files
}

fn describe(up: &Upward, which: &BTreeSet<(String, String)>) -> String {
    up.iter()
        .filter(|(k, _)| which.contains(k))
        .map(|((from, to), (line, a, b))| {
            format!("\n    {from}:{line} imports {to} ({} → {})", FLOORS[*a].0, FLOORS[*b].0)
        })
        .collect()
}

#[test]
fn every_server_file_is_on_a_floor() {
    let files = server_files();
    let (_, unplaced) = upward_imports(&files, FLOORS);
    assert!(
        unplaced.is_empty(),
        "files of server/src on no floor (add them to FLOORS): {unplaced:?}"
    );
    // Every path of FLOORS names a file.
    let stale: Vec<&str> = FLOORS
        .iter()
        .flat_map(|(_, paths)| paths.iter().copied())
        .filter(|p| !files.iter().any(|f| names(p, &f.path).is_some()))
        .collect();
    assert!(stale.is_empty(), "FLOORS names paths that hold no file: {stale:?}");
}

#[test]
fn imports_back_up_a_floor_only_shrink() {
    let (up, _) = upward_imports(&server_files(), FLOORS);
    let known: BTreeSet<(String, String)> =
        KNOWN_UPWARD.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    let new: BTreeSet<(String, String)> =
        up.keys().filter(|k| !known.contains(*k)).cloned().collect();
    assert!(
        new.is_empty(),
        "{} imports back up a floor in server/src (not in KNOWN_UPWARD):{}",
        new.len(),
        describe(&up, &new)
    );
    let gone: Vec<&(String, String)> = known.iter().filter(|k| !up.contains_key(*k)).collect();
    assert!(gone.is_empty(), "these KNOWN_UPWARD imports no longer exist; delete them: {gone:?}");
}

#[test]
fn the_checker_finds_imports_up_a_floor() {
    const TOY: &[(&str, &[&str])] = &[
        ("models", &["model.rs", "feature/"]),
        ("store", &["store.rs", "feature/side.rs"]),
        ("wire", &["wire.rs", "lib.rs"]),
        ("tests", &["*_tests.rs"]),
    ];
    let files = |sources: &[(&str, &str)]| -> Vec<SourceFile> {
        sources
            .iter()
            .map(|(path, text)| SourceFile {
                path: (*path).to_owned(),
                module: module_of(Path::new(path)),
                code: blank_comments_and_strings(text),
            })
            .collect()
    };
    let lib = ("lib.rs", "mod model; mod store; mod wire; mod feature; mod other;");
    // (case, files, expected (from, to) upward, expected unplaced).
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<(&'a str, &'a str)>, Vec<&'a str>);
    let cases: Vec<Case<'_>> = vec![
        (
            "down and along a floor is fine; a folder's file on its own floor counts there",
            vec![
                lib,
                ("store.rs", "use crate::model::M; use crate::feature::F;"),
                ("feature/mod.rs", "mod side; pub struct F; use crate::model::M;"),
                ("feature/side.rs", "use crate::store::Store; use super::F;"),
                ("wire.rs", "fn f() { crate::store::Store::new(); }"),
                ("model.rs", "// use crate::wire::X;\nconst S: &str = \"crate::store\";"),
                ("feature/side_tests.rs", "use crate::wire::encode;"),
            ],
            vec![],
            vec![],
        ),
        (
            "a model naming the store, one in a folder naming the wire by a path in code",
            vec![
                lib,
                ("model.rs", "use crate::store::Store;"),
                ("feature/mod.rs", "fn f() { super::wire::encode(); }"),
                ("store.rs", ""),
                ("wire.rs", "pub fn encode() {}"),
                ("other.rs", ""),
            ],
            vec![("feature/mod.rs", "wire.rs"), ("model.rs", "store.rs")],
            vec!["other.rs"],
        ),
    ];
    for (name, sources, expected, unplaced) in cases {
        let (up, missing) = upward_imports(&files(&sources), TOY);
        let found: Vec<(&str, &str)> = up.keys().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(found, expected, "{name}");
        assert_eq!(missing, unplaced, "{name}");
    }
}
