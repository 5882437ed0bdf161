//! Every `berth …` command the code tells a person to run parses with the real CLI (issue 26,
//! defect 8: `task start`'s ready-timeout told the user to run `berth hooks AGENT`, which does
//! not exist).
//!
//! It reads the string literals of the app, server and engine sources (comments and test
//! modules left out). A command in backticks (`` `berth hook install claude` ``) must parse
//! with [`Cli`] after its placeholders are filled in (`PANE`, `{agent}`, `[--opt V]`, `a|b`);
//! leaving out a required argument is allowed (the text names the verb, as "`berth wait`").
//! Any other `berth WORD` in a string must name a real verb, or be one of a few words of prose
//! ("the berth binary"), so a suggestion outside backticks cannot name a verb that is not there.

use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::cli::Cli;

/// Words that follow "berth " in prose, not as a verb.
const PROSE: &[&str] =
    &["binary", "frame", "readback", "quad", "quads", "named", "run", "installed"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "tests" && name != "testing" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with("tests.rs") && name != "testing.rs" {
            out.push(path);
        }
    }
}

/// The string-literal text of a source's lines: comments and the test module (from its
/// `#[cfg(test)]` on) left out, each with its line number.
fn literal_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        lines.push((n + 1, line.to_owned()));
    }
    lines
}

/// A suggested command's words with its placeholders filled in, up to an ellipsis or a pipe.
fn fill(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    for word in command.split_whitespace() {
        if word == "…" || word == "..." || word == "&" || word == "|" {
            break;
        }
        let word: String =
            word.chars().filter(|c| !matches!(c, '[' | ']' | '"' | '\'' | '\\')).collect();
        let word = word.split('|').next().unwrap_or("").to_owned();
        let filled = if word.starts_with('{') && word.ends_with('}') {
            "claude".to_owned()
        } else if word.contains('…') || word.contains("...") {
            "x".to_owned()
        } else if !word.is_empty() && word.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            match word.as_str() {
                "AGENT" => "claude".to_owned(),
                "S" | "N" | "SEQ" | "SECONDS" | "MS" => "1".to_owned(),
                _ => "x".to_owned(),
            }
        } else {
            word
        };
        if !filled.is_empty() {
            words.push(filled);
        }
    }
    words
}

#[test]
fn every_suggested_berth_command_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["app/src", "server/src", "engine/src"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "the sources were found: {}", files.len());
    let verbs: Vec<String> =
        Cli::command().get_subcommands().map(|c| c.get_name().to_owned()).collect();
    let mut checked = 0;
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable source");
        let shown = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        for (n, line) in literal_lines(&text) {
            // Backticked commands: parsed whole.
            let mut rest = line.as_str();
            while let Some(start) = rest.find("`berth ") {
                let after = &rest[start + 1..];
                let Some(end) = after.find('`') else {
                    bad.push(format!("{shown}:{n}: a suggested command split over lines"));
                    break;
                };
                let command = &after[..end];
                let words = fill(command);
                checked += 1;
                if let Err(e) = Cli::try_parse_from(&words) {
                    let named = matches!(
                        e.kind(),
                        ErrorKind::MissingRequiredArgument
                            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                            | ErrorKind::DisplayHelp
                    );
                    if !named {
                        bad.push(format!("{shown}:{n}: `{command}` does not parse: {}", e.kind()));
                    }
                }
                rest = &after[end + 1..];
            }
            // Any other "berth WORD": a real verb, or prose.
            let mut rest = line.as_str();
            while let Some(start) = rest.find("berth ") {
                let before = rest[..start].chars().next_back();
                rest = &rest[start + "berth ".len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '/') {
                    continue;
                }
                let word: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '-' || c.is_ascii_digit())
                    .collect();
                if word.is_empty() || word.starts_with('-') {
                    continue;
                }
                if !verbs.contains(&word) && !PROSE.contains(&word.as_str()) {
                    bad.push(format!("{shown}:{n}: `berth {word}` is not a verb of the CLI"));
                }
            }
        }
    }
    assert!(checked > 10, "backticked commands were found: {checked}");
    assert!(bad.is_empty(), "suggested commands that do not exist:\n{}", bad.join("\n"));
}

/// The guard itself: the command that defect 8 suggested is caught, a correct one is not.
#[test]
fn the_guard_tells_a_wrong_command_from_a_right_one() {
    assert!(Cli::try_parse_from(fill("berth hooks claude")).is_err());
    assert!(Cli::try_parse_from(fill("berth hook install AGENT")).is_ok());
    assert!(Cli::try_parse_from(fill("berth wait PANE --until idle|blocked [--timeout S]")).is_ok());
    assert!(Cli::try_parse_from(fill("berth read PANE --since SEQ")).is_ok());
    assert_eq!(
        fill("berth task finish task_3f… --merge"),
        ["berth", "task", "finish", "x", "--merge"]
    );
}
