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
use std::path::{Path, PathBuf};

/// Cycles that exist in `server/` and `engine/` and are being removed (issue 12; none is left):
/// each entry is the files of one cycle (a strongly connected set), relative to the workspace
/// root. A cycle found must be one of these or lie within one of them.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// A source file of a crate: its path (relative to the workspace root) and module path.
struct SourceFile {
    path: String,
    module: Vec<String>,
    code: String,
}

/// One import found: the line it is on.
type Edges = BTreeMap<(String, String), usize>;

/// The workspace root (this file's package is `app/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("app/ has a parent").to_path_buf()
}

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file relative to its crate's `src/` (`window/app.rs` → `window::app`,
/// `render/mod.rs` → `render`, `main.rs` → the crate root).
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> =
        relative.with_extension("").iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "main" || parts[0] == "lib") {
        parts.clear();
    }
    parts
}

/// The crate's source files with comments, strings and character literals blanked.
fn load_crate(root: &Path, krate: &str) -> Vec<SourceFile> {
    let src = root.join(krate).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let relative = path.strip_prefix(&src).expect("under src/");
            SourceFile {
                path: format!("{krate}/src/{}", relative.display()),
                module: module_of(relative),
                code: blank_comments_and_strings(&text),
            }
        })
        .collect()
}

/// `text` with comments, string literals and character literals replaced by spaces (line
/// breaks kept, so line numbers stay true).
fn blank_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
                out.push(' ');
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars.get(i.wrapping_sub(1)).is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    _ => j += 1,
                }
            }
            for &c in &chars[i..j.min(chars.len())] {
                blank(&mut out, c);
            }
            i = j;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            if i < chars.len() {
                out.push(' ');
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{..}') or a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// A token of blanked code: an identifier, `::`, or one other character.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of blanked code with their lines.
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The paths a `use` tree names, expanded (`a::{b, c::d}` → `a::b`, `a::c::d`); `self` in a
/// group names the group's prefix, `*` stays as a segment.
fn expand_use_tree(tokens: &[Token]) -> Vec<Vec<String>> {
    fn tree(tokens: &[Token], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        loop {
            match tokens.get(*at) {
                Some(Token::Ident(name)) if name == "as" => {
                    // `as name`: the alias does not change what is imported.
                    *at += 2;
                }
                Some(Token::Ident(name)) => {
                    if name != "self" {
                        path.push(name.clone());
                    }
                    *at += 1;
                }
                Some(Token::PathSep) => *at += 1,
                Some(Token::Punct('*')) => {
                    path.push("*".to_owned());
                    *at += 1;
                }
                Some(Token::Punct('{')) => {
                    *at += 1;
                    loop {
                        tree(tokens, at, &path, out);
                        match tokens.get(*at) {
                            Some(Token::Punct(',')) => *at += 1,
                            Some(Token::Punct('}')) => {
                                *at += 1;
                                break;
                            }
                            _ => break,
                        }
                        if tokens.get(*at) == Some(&Token::Punct('}')) {
                            *at += 1;
                            break;
                        }
                    }
                    return;
                }
                _ => break,
            }
        }
        if path.len() > prefix.len() || !path.is_empty() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    // A leading `::` names an external crate.
    if tokens.first() == Some(&Token::PathSep) {
        return out;
    }
    tree(tokens, &mut at, &[], &mut out);
    out
}

/// The imports of one file as (module path it names, line), resolved against the file's
/// module and its inline modules; `modules` holds every module path of the crate.
fn imports_of(
    file: &SourceFile,
    modules: &BTreeMap<Vec<String>, String>,
) -> Vec<(Vec<String>, usize)> {
    let toks = tokens(&file.code);
    let mut found = Vec::new();
    // Inline modules: (module path, brace depth at which it closes).
    let mut stack: Vec<(Vec<String>, usize)> = vec![(file.module.clone(), 0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let current = stack.last().expect("the file's module").0.clone();
        match &toks[i].0 {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if stack.len() > 1 && stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                i += 1;
            }
            Token::Ident(kw) if kw == "mod" => {
                if let (Some((Token::Ident(name), _)), Some((Token::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    let mut inner = current.clone();
                    inner.push(name.clone());
                    stack.push((inner, depth));
                    depth += 1;
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Token::Ident(kw) if kw == "use" => {
                let line = toks[i].1;
                let end =
                    (i..toks.len()).find(|&j| toks[j].0 == Token::Punct(';')).unwrap_or(toks.len());
                let tree: Vec<Token> = toks[i + 1..end].iter().map(|(t, _)| t.clone()).collect();
                for path in expand_use_tree(&tree) {
                    if let Some(target) = resolve(&current, &path, modules) {
                        found.push((target, line));
                    }
                }
                i = end + 1;
            }
            Token::Ident(first) => {
                // A path in code: ident (:: ident)+, not preceded by `$` (`$crate`) or `::`.
                let after_sep_or_dollar =
                    i > 0 && matches!(toks[i - 1].0, Token::PathSep | Token::Punct('$'));
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while let (Some((Token::PathSep, _)), Some((Token::Ident(next), _))) =
                    (toks.get(j), toks.get(j + 1))
                {
                    path.push(next.clone());
                    j += 2;
                }
                if path.len() > 1 && !after_sep_or_dollar {
                    if let Some(target) = resolve(&current, &path, modules) {
                        found.push((target, toks[i].1));
                    }
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    found
}

/// The module a path names, within the crate: `crate::`, `super::`, `self::` or a child
/// module of `current`; `None` for other crates and for names that are not modules.
fn resolve(
    current: &[String],
    path: &[String],
    modules: &BTreeMap<Vec<String>, String>,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = current.to_vec();
    let mut rest = path;
    match path.first()?.as_str() {
        "crate" => {
            base.clear();
            rest = &path[1..];
        }
        "self" => rest = &path[1..],
        "super" => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        first => {
            let mut child = base.clone();
            child.push(first.to_owned());
            if !modules.contains_key(&child) {
                return None;
            }
        }
    }
    let mut full = base;
    full.extend(rest.iter().filter(|s| *s != "*").cloned());
    // The longest prefix that is a module.
    (0..=full.len()).rev().map(|n| full[..n].to_vec()).find(|m| modules.contains_key(m))
}

/// The import graph of a crate: (from file, to file) → first line.
fn import_graph(files: &[SourceFile]) -> Edges {
    let mut modules: BTreeMap<Vec<String>, String> =
        files.iter().map(|f| (f.module.clone(), f.path.clone())).collect();
    // Inline modules belong to their file.
    for f in files {
        let toks = tokens(&f.code);
        for w in toks.windows(3) {
            if let (Token::Ident(kw), Token::Ident(name), Token::Punct('{')) =
                (&w[0].0, &w[1].0, &w[2].0)
            {
                if kw == "mod" {
                    let mut m = f.module.clone();
                    m.push(name.clone());
                    modules.entry(m).or_insert_with(|| f.path.clone());
                }
            }
        }
    }
    let mut edges = Edges::new();
    for f in files {
        for (target, line) in imports_of(f, &modules) {
            let to = &modules[&target];
            if *to != f.path {
                edges.entry((f.path.clone(), to.clone())).or_insert(line);
            }
        }
    }
    edges
}

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
