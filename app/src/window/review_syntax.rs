//! Readable hunks for the review view (issue 31): each line's syntax classes by the file's
//! type (syntect's bundled Sublime grammars, parsed with its pure-Rust regex engine; the
//! colours are the theme's, chosen by the renderer from the class), and the words that
//! changed within a line (a removed line and the added line that replaced it, marked between
//! their common start and end).
//!
//! Pure functions over a hunk's lines: no I/O, no drawing. A hunk is parsed from its own
//! first line (the file above it is not read), which is right for all but a hunk that starts
//! inside a block comment or a multi-line string.

use std::sync::OnceLock;

use berth_server::gitctx::diff::{DiffHunk, LineKind};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

use crate::render::{ReviewSpan, SyntaxClass};

/// The most characters of a line that are parsed (a minified file's line is shown plain).
const MAX_PARSED_CHARS: usize = 2_000;

/// The bundled grammars, loaded once (tens of ms) the first time a hunk is shown.
fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The grammar for `path`, by its extension (or its whole name: `Makefile`).
fn syntax_for(path: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map_or(name, |(_, e)| e);
    set.find_syntax_by_extension(ext).or_else(|| set.find_syntax_by_extension(name))
}

/// The class of the innermost scope that has one.
fn class_of(stack: &ScopeStack) -> Option<SyntaxClass> {
    stack.as_slice().iter().rev().find_map(|scope| classify(*scope))
}

fn classify(scope: Scope) -> Option<SyntaxClass> {
    let name = scope.build_string();
    let starts = |p: &str| name.starts_with(p);
    Some(if starts("comment") {
        SyntaxClass::Comment
    } else if starts("string") || starts("constant.character") {
        SyntaxClass::String
    } else if starts("constant.numeric") || starts("constant.language") {
        SyntaxClass::Constant
    } else if starts("entity.name.type") || starts("support.type") {
        SyntaxClass::Type
    } else if starts("keyword.operator") {
        return None;
    } else if starts("keyword") || starts("storage") {
        // `storage.type` is how the grammars name `fn`, `let`, `struct`: keywords.
        SyntaxClass::Keyword
    } else if starts("entity.name.function")
        || starts("support.function")
        || starts("support.macro")
    {
        SyntaxClass::Function
    } else {
        return None;
    })
}

/// Each line's classed spans (char offsets), for a hunk of the file `path`; empty lists for a
/// file type without a grammar.
pub fn highlight(path: &str, hunk: &DiffHunk) -> Vec<Vec<ReviewSpan>> {
    let Some(syntax) = syntax_for(path) else { return vec![Vec::new(); hunk.lines.len()] };
    let set = syntaxes();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::with_capacity(hunk.lines.len());
    for line in &hunk.lines {
        if line.text.chars().count() > MAX_PARSED_CHARS {
            out.push(Vec::new());
            continue;
        }
        let text = format!("{}\n", line.text);
        let Ok(ops) = state.parse_line(&text, set) else {
            out.push(Vec::new());
            continue;
        };
        let mut spans: Vec<ReviewSpan> = Vec::new();
        let mut at = 0; // byte offset reached
        let mut push = |from: usize, to: usize, class: Option<SyntaxClass>| {
            let Some(class) = class else { return };
            let to = to.min(line.text.len());
            if from >= to {
                return;
            }
            let start = line.text[..from].chars().count();
            let len = line.text[from..to].chars().count();
            match spans.last_mut() {
                Some(last) if last.class == class && last.start + last.len == start => {
                    last.len += len;
                }
                _ => spans.push(ReviewSpan { start, len, class }),
            }
        };
        for (offset, op) in ops {
            push(at, offset, class_of(&stack));
            at = offset;
            if stack.apply(&op).is_err() {
                break;
            }
        }
        push(at, line.text.len(), class_of(&stack));
        out.push(spans);
    }
    out
}

/// The changed part (char range) of each line that replaced another or was replaced: a run of
/// removed lines followed by a run of added ones is paired line by line, and each pair's
/// common start and end are left unmarked. `None` for the other lines, and for a pair with
/// nothing in common (all of it changed: the row's own colour says so).
pub fn changed_words(hunk: &DiffHunk) -> Vec<Option<(usize, usize)>> {
    let lines = &hunk.lines;
    let mut out = vec![None; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind != LineKind::Removed {
            i += 1;
            continue;
        }
        let removed = i;
        while i < lines.len() && lines[i].kind == LineKind::Removed {
            i += 1;
        }
        let added = i;
        while i < lines.len() && lines[i].kind == LineKind::Added {
            i += 1;
        }
        let pairs = (added - removed).min(i - added);
        for k in 0..pairs {
            let (old, new) = (&lines[removed + k].text, &lines[added + k].text);
            if let Some((a, b)) = differing(old, new) {
                out[removed + k] = Some(a);
                out[added + k] = Some(b);
            }
        }
    }
    out
}

/// The char ranges of `old` and `new` between their common start and common end, widened to
/// whole words; `None` when they share nothing or are the same.
fn differing(old: &str, new: &str) -> Option<((usize, usize), (usize, usize))> {
    let (a, b): (Vec<char>, Vec<char>) = (old.chars().collect(), new.chars().collect());
    let mut pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let most = a.len().min(b.len()) - pre;
    let mut suf = a.iter().rev().zip(b.iter().rev()).take(most).take_while(|(x, y)| x == y).count();
    if pre == 0 && suf == 0 || pre == a.len() && pre == b.len() {
        return None;
    }
    let word = |c: &char| c.is_alphanumeric() || *c == '_';
    let in_word = |s: &[char], i: usize| s.get(i).is_some_and(word);
    // Whole words: a common start or end that stops inside a word gives the word back.
    while pre > 0 && in_word(&a, pre - 1) && (in_word(&a, pre) || in_word(&b, pre)) {
        pre -= 1;
    }
    while suf > 0
        && in_word(&a, a.len() - suf)
        && (a.len() > suf && in_word(&a, a.len() - suf - 1)
            || b.len() > suf && in_word(&b, b.len() - suf - 1))
    {
        suf -= 1;
    }
    if pre == 0 && suf == 0 {
        return None;
    }
    Some(((pre, a.len() - suf), (pre, b.len() - suf)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_server::gitctx::diff::DiffLine;

    fn hunk(lines: &[(LineKind, &str)]) -> DiffHunk {
        DiffHunk {
            old_start: 1,
            old_lines: 1,
            new_start: 1,
            new_lines: 1,
            header: String::new(),
            lines: lines
                .iter()
                .map(|(kind, text)| DiffLine {
                    kind: *kind,
                    old_line: Some(1),
                    new_line: Some(1),
                    text: (*text).to_owned(),
                    no_newline: false,
                })
                .collect(),
        }
    }

    #[test]
    fn a_rust_line_has_keywords_strings_and_comments() {
        let h = hunk(&[(LineKind::Added, "fn main() { let s = \"hi\"; // greet")]);
        let spans = &highlight("src/main.rs", &h)[0];
        let class_at = |col: usize| {
            spans.iter().find(|s| (s.start..s.start + s.len).contains(&col)).map(|s| s.class)
        };
        assert_eq!(class_at(0), Some(SyntaxClass::Keyword), "{spans:?}");
        assert_eq!(class_at(3), Some(SyntaxClass::Function), "{spans:?}");
        assert_eq!(class_at(21), Some(SyntaxClass::String), "{spans:?}");
        assert_eq!(class_at(30), Some(SyntaxClass::Comment), "{spans:?}");
        assert!(highlight("notes.unknown-kind", &h)[0].is_empty());
    }

    #[test]
    fn the_changed_words_of_a_replaced_line_are_marked() {
        let h = hunk(&[
            (LineKind::Context, "a"),
            (LineKind::Removed, "let total = count + 1;"),
            (LineKind::Added, "let total = amount + 1;"),
            (LineKind::Added, "extra"),
        ]);
        let marks = changed_words(&h);
        assert_eq!(marks[0], None);
        assert_eq!(marks[1], Some((12, 17)), "\"count\"");
        assert_eq!(marks[2], Some((12, 18)), "\"amount\"");
        assert_eq!(marks[3], None, "an added line that replaced nothing");
        let same = hunk(&[(LineKind::Removed, "abc"), (LineKind::Added, "xyz")]);
        assert_eq!(changed_words(&same), [None, None], "nothing in common: no marks");
    }
}
