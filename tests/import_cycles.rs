//! No two source files import each other, directly or in a loop: the import graph of the
//! files of `app/`, `server/` and `engine/` is read from their source and checked for cycles.
//!
//! An edge runs from file A to file B when A names an item of B's module by path: a `use`
//! (`use crate::…`, `use super::…`, `use self::…`, a child module's name), or a path in code
//! (`super::links::LinkState::default()`). Declaring a child module (`mod x;`) is not an
//! import. Paths into other crates are not followed (the crates depend one way, checked by
//! Cargo). Comments and string literals are skipped. Items of a file's inline modules
//! (`mod tests { … }`) belong to that file.
//!
//! `app/` must have no cycle, and neither may `server/` and `engine/`: their known ones, listed
//! in [`KNOWN_CYCLES`], are all gone (issue 12). That list may only shrink: a new cycle fails,
//! and so does a listed one that is gone (then delete its entry).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[path = "support/import_graph.rs"]
mod import_graph;

use import_graph::{
    blank_comments_and_strings, import_graph, load_crate, module_of, root, Edges, SourceFile,
};

/// Cycles that exist in `server/` and `engine/` and are being removed (issue 12; none is left):
/// each entry is the files of one cycle (a strongly connected set), relative to the workspace
/// root. A cycle found must be one of these or lie within one of them.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// The cycles of a graph: its strongly connected sets of more than one file (Tarjan).
fn cycles(edges: &Edges) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let index_of: BTreeMap<&String, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let names: Vec<&String> = nodes.iter().copied().collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (a, b) in edges.keys() {
        next[index_of[a]].push(index_of[b]);
    }
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        sets: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    set.push(w);
                    if w == v {
                        break;
                    }
                }
                self.sets.push(set);
            }
        }
    }
    let n = names.len();
    let mut t = Tarjan {
        next: &next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        sets: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let mut out: Vec<BTreeSet<String>> = t
        .sets
        .into_iter()
        .filter(|s| s.len() > 1)
        .map(|s| s.into_iter().map(|i| names[i].clone()).collect())
        .collect();
    out.sort();
    out
}

/// A cycle as text: its files and the imports between them with their lines.
fn describe(cycle: &BTreeSet<String>, edges: &Edges) -> String {
    let mut text = format!("cycle of {} files:", cycle.len());
    for ((a, b), line) in edges {
        if cycle.contains(a) && cycle.contains(b) {
            text.push_str(&format!("\n    {a}:{line} imports {b}"));
        }
    }
    text
}

/// The cycles of a crate of the workspace, with their descriptions.
fn crate_cycles(krate: &str) -> Vec<(BTreeSet<String>, String)> {
    let files = load_crate(&root(), krate);
    assert!(files.len() > 3, "{krate}/src has source files");
    let edges = import_graph(&files);
    cycles(&edges)
        .into_iter()
        .map(|c| {
            let text = describe(&c, &edges);
            (c, text)
        })
        .collect()
}

#[test]
fn no_two_files_of_the_app_import_each_other() {
    let found = crate_cycles("app");
    let text: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
    assert!(found.is_empty(), "import cycles in app/:\n{}", text.join("\n"));
}

#[test]
fn import_cycles_of_the_server_and_engine_only_shrink() {
    let known: Vec<BTreeSet<String>> =
        KNOWN_CYCLES.iter().map(|c| c.iter().map(|s| (*s).to_owned()).collect()).collect();
    let mut found = crate_cycles("server");
    found.extend(crate_cycles("engine"));
    let new: Vec<&str> = found
        .iter()
        .filter(|(c, _)| !known.iter().any(|k| c.is_subset(k)))
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(new.is_empty(), "new import cycles (not in KNOWN_CYCLES):\n{}", new.join("\n"));
    let gone: Vec<&BTreeSet<String>> = known
        .iter()
        .filter(|k| !found.iter().any(|(c, _)| c.is_subset(k) && !c.is_empty()))
        .collect();
    assert!(gone.is_empty(), "these KNOWN_CYCLES no longer exist; delete them: {gone:?}");
}

/// Writes a crate's files into a temp dir and returns its cycles.
fn cycles_of_sources(sources: &[(&str, &str)]) -> Vec<BTreeSet<String>> {
    let files: Vec<SourceFile> = sources
        .iter()
        .map(|(path, text)| SourceFile {
            path: (*path).to_owned(),
            module: module_of(Path::new(path)),
            code: blank_comments_and_strings(text),
        })
        .collect();
    cycles(&import_graph(&files))
}

fn set(files: &[&str]) -> BTreeSet<String> {
    files.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_checker_finds_loops_through_uses_and_paths_in_code() {
    let main = ("main.rs", "mod a; mod b; mod c;");
    // (case, files, expected cycles).
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<BTreeSet<String>>);
    let cases: Vec<Case<'_>> = vec![
        (
            "two files using each other",
            vec![main, ("a.rs", "use super::b::B; pub struct A;"), ("b.rs", "use crate::a::A;")],
            vec![set(&["a.rs", "b.rs"])],
        ),
        (
            "a loop of three, one through a use group and one through a path in code",
            vec![
                main,
                ("a.rs", "use super::{b::{self, B}};"),
                ("b.rs", "fn f() { let _ = crate::c::C::default(); }"),
                ("c.rs", "use super::*; use super::a::A;"),
            ],
            vec![set(&["a.rs", "b.rs", "c.rs"])],
        ),
        (
            "comments, strings and inline test modules are not imports",
            vec![
                main,
                ("a.rs", "// use super::b;\nconst S: &str = \"crate::b::B\"; use super::b::B;"),
                (
                    "b.rs",
                    "/* crate::a */ const C: char = 'a'; #[cfg(test)] mod tests { use super::*; }",
                ),
            ],
            vec![],
        ),
        (
            "a parent and a child that import each other",
            vec![
                ("main.rs", "mod w; use w::run;"),
                ("w/mod.rs", "mod app; pub fn run() { app::App::new(); } pub struct Waker;"),
                ("w/app.rs", "use super::Waker; pub struct App;"),
            ],
            vec![set(&["w/app.rs", "w/mod.rs"])],
        ),
        (
            "a child using its parent's other child is no loop",
            vec![
                ("main.rs", "mod w;"),
                ("w/mod.rs", "mod app; mod wake; pub use wake::Waker;"),
                ("w/app.rs", "use super::wake::Waker; use super::Waker as W;"),
                ("w/wake.rs", "pub struct Waker;"),
            ],
            vec![],
        ),
    ];
    for (name, sources, expected) in cases {
        assert_eq!(cycles_of_sources(&sources), expected, "{name}");
    }
}
