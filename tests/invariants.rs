//! ARCHITECTURE.md's "must not"s that a look at the source can check: which crate may use
//! what, and where the wire's method names may be spelled. Cheap greps, run with the suite.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let mut entries: Vec<_> =
            std::fs::read_dir(dir).expect("a source dir").flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), &mut out);
    assert!(!out.is_empty(), "no sources under {dir}");
    out
}

/// Source text without `//` comments, so prose may name what code must not use.
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn offenders(dir: &str, needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in sources(dir) {
        let text = code(&text);
        for needle in needles {
            if text.contains(needle) {
                found.push(format!("{} uses {needle}", path.display()));
            }
        }
    }
    found
}

#[test]
fn the_engine_has_no_runtime_sockets_or_state_files() {
    let found = offenders(
        "engine/src",
        &["tokio", "UnixStream", "UnixListener", "TcpStream", "XDG_STATE_HOME", "berth_server"],
    );
    assert!(found.is_empty(), "{found:#?}");
    let manifest = std::fs::read_to_string(root().join("engine/Cargo.toml")).expect("manifest");
    for dep in ["tokio", "berth-server", "zbus"] {
        assert!(!manifest.contains(dep), "engine/Cargo.toml names {dep}");
    }
}

#[test]
fn the_server_does_not_draw() {
    let found = offenders("server/src", &["wgpu", "glyphon", "winit", "berth::"]);
    assert!(found.is_empty(), "{found:#?}");
    let manifest = std::fs::read_to_string(root().join("server/Cargo.toml")).expect("manifest");
    for dep in ["wgpu", "glyphon", "winit"] {
        assert!(!manifest.contains(dep), "server/Cargo.toml names {dep}");
    }
}

#[test]
fn the_store_answers_in_types_not_wire_json() {
    for file in ["server/src/store.rs", "server/src/commands.rs", "server/src/view.rs"] {
        let text = code(&std::fs::read_to_string(root().join(file)).expect("source"));
        for needle in ["crate::protocol", "serde_json::json", "json!("] {
            assert!(!text.contains(needle), "{file} uses {needle}");
        }
    }
}

/// Method names are spelled in `protocol` alone; the CLI builds `Command`s and reads typed
/// replies, never `result["…"]`.
#[test]
fn method_names_live_in_the_protocol_alone() {
    let protocol = std::fs::read_to_string(root().join("server/src/protocol.rs")).expect("src");
    let start = protocol.find("pub const METHODS").expect("the METHODS table");
    let table = &protocol[start..protocol[start..].find("];").expect("its end") + start];
    let methods: Vec<&str> = table.split('"').skip(1).step_by(2).collect();
    assert!(methods.len() >= 30, "{methods:?}");
    let cli = code(&std::fs::read_to_string(root().join("app/src/cli.rs")).expect("cli"));
    for method in &methods {
        assert!(!cli.contains(&format!("\"{method}\"")), "cli.rs spells {method:?}");
    }
    // `value["key"]`: an expression followed by a string index (`vec!["…"]` and `= ["…"]`
    // are lists).
    let indexed = cli.match_indices("[\"").any(|(at, _)| {
        cli[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ')' | ']'))
    });
    assert!(!indexed, "cli.rs indexes JSON by key");
    for (path, text) in sources("server/src").into_iter().chain(sources("app/src")) {
        if path.ends_with("protocol.rs") || path.components().any(|c| c.as_os_str() == "protocol") {
            continue;
        }
        let text = code(&text);
        for method in methods.iter().filter(|m| m.contains('.')) {
            // `.call("pane.read", …)` style uses outside the codec.
            assert!(
                !text.contains(&format!("(\"{method}\"")),
                "{} sends {method:?} by name",
                path.display()
            );
        }
    }
}

/// The window and the renderer read the Store's typed view (`Store::view`: ids, `Layout`,
/// enums), never the wire's DTOs or its spelling of states.
#[test]
fn the_window_reads_the_typed_view_not_the_wire() {
    for dir in ["app/src/window", "app/src/render"] {
        let found = offenders(dir, &["berth_server::protocol", "Dto"]);
        assert!(found.is_empty(), "{found:#?}");
    }
    let found = offenders("app/src/window", &["\"RESUMABLE\"", "\"EXITED\"", "\"needs_input\""]);
    assert!(found.is_empty(), "{found:#?}");
}

/// ARCHITECTURE.md's codemap names every source file (by its path in its crate or folder, or
/// its name), so a newcomer finds each one on the map.
#[test]
fn the_codemap_names_every_source_file() {
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut missing = Vec::new();
    for dir in [
        "engine/src",
        "server/src",
        "app/src",
        "engine/tests",
        "engine/benches",
        "server/benches",
        "app/tests",
        "app/examples",
        "tests",
    ] {
        for (path, _) in sources(dir) {
            let rel = path.strip_prefix(root().join(dir)).expect("under its dir");
            let rel = rel.to_string_lossy().into_owned();
            let name = path.file_name().expect("a name").to_string_lossy().into_owned();
            let parts: Vec<&str> = rel.rsplit('/').take(2).collect();
            let last_two = parts.iter().rev().copied().collect::<Vec<_>>().join("/");
            let named = [rel.as_str(), last_two.as_str(), name.as_str()].iter().any(|form| {
                map.contains(&format!("`{form}`")) || map.contains(&format!("{form}`"))
            });
            if !named {
                missing.push(format!("{dir}/{rel}"));
            }
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md does not name: {missing:#?}");
}
