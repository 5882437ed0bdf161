//! ARCHITECTURE.md's file-by-file list ("Codemap") is checked, not hand-trusted: every Rust
//! source file of `engine/`, `server/` and `app/` is named there, and every file it names
//! exists.
//!
//! A file is named when a backticked token of the Codemap is its path or a tail of it
//! (`terminal/alt.rs` names `engine/src/terminal/alt.rs`; the list names files relative to the
//! folder it is describing). A token that ends in `.rs`, `.py` or `.wgsl` must be such a tail of
//! some file in the repository (outside `target/`), so a file that is renamed or
//! deleted cannot stay on the map.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root (this file's package is `app/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("app/ has a parent").to_path_buf()
}

/// Every file under `dir` (relative to the root, `/`-separated), skipping `target/`,
/// `node_modules/` and hidden folders.
fn files_under(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if name.starts_with('.') || matches!(name.as_str(), "target" | "node_modules") {
                continue;
            }
            files_under(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).expect("under the root");
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The Codemap section of ARCHITECTURE.md: from its heading to the next `## `.
fn codemap(text: &str) -> &str {
    let start = if text.starts_with("## Codemap") {
        0
    } else {
        text.find("\n## Codemap")
            .expect("ARCHITECTURE.md has a `## Codemap` section (the file-by-file list)")
            + 1
    };
    let rest = &text[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    &rest[..end]
}

/// The backticked tokens of `text` that look like file names (one word with a dot).
fn file_tokens(text: &str) -> BTreeSet<String> {
    let mut tokens = BTreeSet::new();
    let mut parts = text.split('`');
    parts.next();
    while let Some(inside) = parts.next() {
        let inside = inside.trim();
        let is_name = !inside.is_empty()
            && inside.contains('.')
            && inside.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
        if is_name {
            tokens.insert(inside.trim_end_matches('/').to_string());
        }
        parts.next();
    }
    tokens
}

/// `path`'s tails at `/` boundaries: `a/b/c.rs` → `a/b/c.rs`, `b/c.rs`, `c.rs`.
fn tails(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once(path).chain(path.match_indices('/').map(move |(i, _)| &path[i + 1..]))
}

#[test]
fn every_source_file_is_on_the_codemap_and_every_file_it_names_exists() {
    let root = root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let tokens = file_tokens(codemap(&text));

    let mut all = Vec::new();
    files_under(&root, &root, &mut all);
    let all_tails: BTreeSet<&str> = all.iter().flat_map(|f| tails(f)).collect();

    let unnamed: Vec<&String> = all
        .iter()
        .filter(|f| {
            ["engine/src/", "server/src/", "app/src/"].iter().any(|p| f.starts_with(p))
                && f.ends_with(".rs")
        })
        .filter(|f| !tails(f).any(|t| tokens.contains(t)))
        .collect();
    assert!(
        unnamed.is_empty(),
        "these source files are not on ARCHITECTURE.md's Codemap (say in a line what each holds, \
         under its folder): {unnamed:#?}"
    );

    let stale: Vec<&String> = tokens
        .iter()
        .filter(|t| [".rs", ".py", ".wgsl"].iter().any(|e| t.ends_with(e)))
        .filter(|t| !all_tails.contains(t.as_str()))
        .collect();
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md's Codemap names files that do not exist (renamed or removed?): {stale:#?}"
    );
}

#[test]
fn the_checks_see_a_missing_and_a_stale_name() {
    let map = "## Codemap\n- `engine/` : `ids.rs` and `gone.rs`.\n## Next\n`other.rs`\n";
    let tokens = file_tokens(codemap(map));
    assert!(tokens.contains("ids.rs") && tokens.contains("gone.rs"));
    assert!(!tokens.contains("other.rs"), "only the Codemap section counts");
    assert!(tails("engine/src/ids.rs").any(|t| t == "ids.rs"));
    assert!(!tails("engine/src/ids.rs").any(|t| t == "s.rs"), "tails end at a `/`");
}
