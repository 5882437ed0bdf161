//! The import graph of a crate's source files, read from their text: shared by the tests of
//! how files import each other (`import_cycles.rs`: no loops; `server_floors.rs`: no import
//! back up a floor).
//!
//! An edge runs from file A to file B when A names an item of B's module by path: a `use`
//! (`use crate::…`, `use super::…`, `use self::…`, a child module's name), or a path in code
//! (`super::links::LinkState::default()`). Declaring a child module (`mod x;`) is not an
//! import. Paths into other crates are not followed. Comments and string literals are skipped.
//! Items of a file's inline modules (`mod tests { … }`) belong to that file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A source file of a crate: its path (relative to the workspace root) and module path.
pub struct SourceFile {
    /// Its path, relative to the workspace root (`server/src/store.rs`).
    pub path: String,
    /// Its module path within its crate.
    pub module: Vec<String>,
    /// Its text with comments and literals blanked.
    pub code: String,
}

/// One import found: the line it is on.
pub type Edges = BTreeMap<(String, String), usize>;

/// The workspace root (this file's package is `app/`).
pub fn root() -> PathBuf {
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
pub fn module_of(relative: &Path) -> Vec<String> {
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
pub fn load_crate(root: &Path, krate: &str) -> Vec<SourceFile> {
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
pub fn blank_comments_and_strings(text: &str) -> String {
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
pub fn import_graph(files: &[SourceFile]) -> Edges {
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
