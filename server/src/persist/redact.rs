//! Keeping credentials typed on command lines out of the state dir (RELIABILITY #12), beside
//! the env allowlist of [`super::snapshot`].
//!
//! A pane's argv, title, `was_running` job and resume commands, and its tail, are written to
//! disk; people put secrets on command lines (`env AWS_SECRET_ACCESS_KEY=… bash`,
//! `deploy --api-key=…`, `git clone https://user:pass@host/…`). Before anything reaches the
//! state dir, values are replaced by [`REDACTED`]:
//!
//! - `NAME=value` where NAME looks secret ([`is_secret_name`]: `*TOKEN*`, `*SECRET*`,
//!   `*PASSWORD*`, `*PASSWD*`, `*PASSPHRASE*`, `*APIKEY*`, `*API_KEY*`, `*CREDENTIAL*`,
//!   `*PRIVATE_KEY*`, `*_KEY`, `*_PAT`);
//! - the value of a flag with such a name: `--token=…`, `--api-key …`, `--password …`;
//! - the password of the programs that take one as `-p`: `mysql -p…` (attached) and
//!   `sshpass -p …`;
//! - the password in a URL's user info (`https://user:pass@host`), and what follows
//!   `Bearer ` or an `Authorization:` header.
//!
//! The rules work on words, so they cost one pass over the text. In text (a title, a line of a
//! tail, an argument holding spaces) a word ends at whitespace, at a quote or other punctuation
//! that cannot be part of a flag ([`is_boundary`]: a program quoting a flag back,
//! `unrecognized option '--api-key=…'`, ends the value at the quote) and at an escape sequence;
//! a secret's name whose value is empty (`--token='…'`, `API_KEY="…"`) makes the next word its
//! value. A redacted command that is
//! resumed runs with [`REDACTED`] in place of the secret: losing a credential on restore is the
//! price of not keeping it on disk. This module must not do I/O.

/// What a secret is replaced by.
pub const REDACTED: &str = "REDACTED";

/// Programs whose `-p` flag takes a password attached (`-psecret`); a bare `-p` prompts.
const ATTACHED_P_PROGRAMS: &[&str] =
    &["mysql", "mysqldump", "mysqladmin", "mysqlimport", "mariadb", "mariadb-dump"];

/// Programs whose `-p` flag takes the password as the next word.
const SEPARATE_P_PROGRAMS: &[&str] = &["sshpass"];

/// Whether an env variable or flag name (any case, `-` and `_` alike) names a secret.
pub fn is_secret_name(name: &str) -> bool {
    let name = name.trim_start_matches('-').to_ascii_uppercase().replace('-', "_");
    if name.is_empty() {
        return false;
    }
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "APIKEY",
        "API_KEY",
        "CREDENTIAL",
        "PRIVATE_KEY",
        "ACCESS_KEY",
    ];
    PARTS.iter().any(|p| name.contains(p))
        || name.ends_with("_KEY")
        || name.ends_with("_PAT")
        || name == "PASS"
}

/// What the next word is, after the word just seen.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    /// An ordinary word.
    Plain,
    /// The value of a secret flag (`--token VALUE`): redacted unless it is another flag.
    FlagValue,
    /// The token after `Bearer`.
    BearerToken,
}

/// Redacts words one by one, carrying what a word says about the next one.
struct Redactor {
    next: Next,
    /// The password program seen last, if any (its `-p` rules apply to the words after it).
    program: Option<&'static str>,
}

impl Redactor {
    fn new() -> Self {
        Redactor { next: Next::Plain, program: None }
    }

    /// The redacted form of one word (no whitespace in it).
    fn word(&mut self, word: &str) -> String {
        let expect = std::mem::replace(&mut self.next, Next::Plain);
        match expect {
            Next::FlagValue if !word.starts_with('-') => return REDACTED.to_owned(),
            Next::BearerToken => {
                if ["bearer", "basic", "token"].iter().any(|s| word.eq_ignore_ascii_case(s)) {
                    // `Authorization: Bearer TOKEN`: the scheme stays, the token goes.
                    self.next = Next::BearerToken;
                    return word.to_owned();
                }
                return REDACTED.to_owned();
            }
            _ => {}
        }
        let base = word.rsplit('/').next().unwrap_or(word);
        if let Some(p) = ATTACHED_P_PROGRAMS.iter().chain(SEPARATE_P_PROGRAMS).find(|p| **p == base)
        {
            self.program = Some(p);
            return word.to_owned();
        }
        if word.eq_ignore_ascii_case("bearer") {
            self.next = Next::BearerToken;
            return word.to_owned();
        }
        if word.eq_ignore_ascii_case("authorization:") {
            self.next = Next::BearerToken;
            return word.to_owned();
        }
        if let Some(program) = self.program {
            if word == "-p" && SEPARATE_P_PROGRAMS.contains(&program) {
                self.next = Next::FlagValue;
                return word.to_owned();
            }
            if ATTACHED_P_PROGRAMS.contains(&program) && word.len() > 2 && word.starts_with("-p") {
                return format!("-p{REDACTED}");
            }
        }
        if let Some((name, value)) = word.split_once('=') {
            let flag = name.starts_with('-');
            let env_like = !flag
                && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if (flag || env_like) && is_secret_name(name) {
                if value.is_empty() {
                    // `--token='…'` in text: the quote ended the word, the value is the next.
                    self.next = Next::FlagValue;
                    return word.to_owned();
                }
                return format!("{name}={REDACTED}");
            }
        } else if word.starts_with("--") && is_secret_name(word) {
            self.next = Next::FlagValue;
            return word.to_owned();
        }
        redact_url_password(word)
    }
}

/// `scheme://user:REDACTED@host…` for a word holding a URL with a password; the word as it is
/// otherwise.
fn redact_url_password(word: &str) -> String {
    let Some(scheme_end) = word.find("://") else { return word.to_owned() };
    let rest_at = scheme_end + 3;
    let rest = &word[rest_at..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else { return word.to_owned() };
    let Some(colon) = authority[..at].find(':') else { return word.to_owned() };
    if colon + 1 == at {
        return word.to_owned();
    }
    format!("{}{REDACTED}{}", &word[..rest_at + colon + 1], &word[rest_at + at..])
}

/// The redacted form of an argv (see the module header).
pub fn redact_argv(argv: &[String]) -> Vec<String> {
    let mut r = Redactor::new();
    argv.iter()
        .map(|arg| {
            // One argument may hold spaces (`-H "Authorization: Bearer x"`) or quotes
            // (`sh -c "deploy --token='x'"`): its words are redacted one by one, and a flag's
            // value is the next argument. A plain argument is one word, punctuation and all
            // (`--token=a'b` loses all of `a'b`).
            if arg.contains(char::is_whitespace) {
                return redact_text_with(&mut r, arg);
            }
            let whole = r.word(arg);
            if whole == *arg && arg.contains(is_boundary) {
                return redact_text_with(&mut r, arg);
            }
            whole
        })
        .collect()
}

/// The redacted form of a line of text (a title, a job, a line of a tail), whitespace kept as
/// it was. Escape sequences (`ESC [ … letter`) around a word do not hide it.
pub fn redact_text(text: &str) -> String {
    #[cfg(test)]
    TEXTS_REDACTED.with(|n| n.set(n.get() + 1));
    redact_text_with(&mut Redactor::new(), text)
}

#[cfg(test)]
thread_local! {
    /// How many texts this thread redacted (tests count the work of a save with it).
    pub(crate) static TEXTS_REDACTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether `c` ends a word in text as whitespace does: quotes and the punctuation that
/// surrounds or separates words in program output and shell code, never a character of a flag,
/// an env name, a token or a URL's user info (`-`, `_`, `=`, `.`, `:`, `/`, `@`, `+`, `%`,
/// `~` stay inside a word).
pub fn is_boundary(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\'' | '"'
                | '`'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '<'
                | '>'
                | ','
                | ';'
                | '|'
                | '&'
        )
        || c == '\u{2018}'
        || c == '\u{2019}'
        || c == '\u{201c}'
        || c == '\u{201d}'
}

/// The length of the CSI sequence (`ESC [ params final`) at the start of `text`, if one is.
fn csi_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&0x1b) || bytes.get(1) != Some(&b'[') {
        return None;
    }
    let len = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
    Some(len + 3)
}

fn redact_text_with(r: &mut Redactor, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        // What separates words: boundaries and whole CSI sequences, kept as they are.
        let mut gap = 0;
        loop {
            let here = &rest[gap..];
            if let Some(len) = csi_len(here) {
                gap += len;
            } else if let Some(c) = here.chars().next().filter(|&c| is_boundary(c)) {
                gap += c.len_utf8();
            } else {
                break;
            }
        }
        out.push_str(&rest[..gap]);
        rest = &rest[gap..];
        // A word runs to the next boundary or escape; an escape that is not a whole CSI
        // sequence is kept with everything after it up to the next boundary.
        let end = rest.find(|c: char| is_boundary(c) || c == '\x1b').unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        if !word.is_empty() {
            out.push_str(&r.word(word));
        }
        rest = after;
        if rest.starts_with('\x1b') && csi_len(rest).is_none() {
            let end = rest.find(is_boundary).unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    out
}

/// One line of a tail, its secrets redacted ([`redact_text`]): a save keeps the lines of a
/// pane's history redacted once, as they enter its cache, instead of redacting the whole tail
/// at every save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedLine {
    text: String,
    source_len: usize,
}

impl RedactedLine {
    /// `line` (without its line end) with its secrets redacted.
    pub fn new(line: &str) -> Self {
        RedactedLine { text: redact_text(line), source_len: line.len() }
    }

    /// The redacted text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The length in bytes of the line before redaction (what a tail's budget counts).
    pub fn source_len(&self) -> usize {
        self.source_len
    }
}

/// The bytes of a tail file made only of redacted lines (each ended with `ESC [0m`, CR, LF,
/// as `restore::encode_tail` writes them), which [`super::tails::write_redacted_tail`] writes
/// without redacting again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedactedTail(Vec<u8>);

impl RedactedTail {
    /// An empty tail with room for `bytes`.
    pub fn with_capacity(bytes: usize) -> Self {
        RedactedTail(Vec::with_capacity(bytes))
    }

    /// Appends `line` and its line end.
    pub fn push(&mut self, line: &RedactedLine) {
        self.0.extend_from_slice(line.text.as_bytes());
        self.0.extend_from_slice(b"\x1b[0m\r\n");
    }

    /// The file's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The redacted bytes of a tail file: each line through [`redact_text`]; bytes that are not
/// UTF-8 are kept as they are.
pub fn redact_tail(bytes: &[u8]) -> Vec<u8> {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.split('\n').map(redact_text).collect::<Vec<_>>().join("\n").into_bytes(),
        Err(_) => bytes
            .split(|&b| b == b'\n')
            .map(|line| match std::str::from_utf8(line) {
                Ok(line) => redact_text(line).into_bytes(),
                Err(_) => line.to_vec(),
            })
            .collect::<Vec<_>>()
            .join(&b'\n'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &str) -> Vec<String> {
        words.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn secret_names() {
        for (name, secret) in [
            ("AWS_SECRET_ACCESS_KEY", true),
            ("GITHUB_TOKEN", true),
            ("OPENAI_API_KEY", true),
            ("DB_PASSWORD", true),
            ("PGPASSWORD", true),
            ("STRIPE_APIKEY", true),
            ("GH_PAT", true),
            ("--api-key", true),
            ("--token", true),
            ("--client-secret", true),
            ("--password", true),
            ("PATH", false),
            ("HOME", false),
            ("TERM", false),
            ("KEYBOARD", false),
            ("--verbose", false),
            ("--keymap", false),
            ("", false),
        ] {
            assert_eq!(is_secret_name(name), secret, "{name}");
        }
    }

    #[test]
    fn argvs_are_redacted_by_the_table() {
        let rows = [
            ("env AWS_SECRET_ACCESS_KEY=abc123 bash", "env AWS_SECRET_ACCESS_KEY=REDACTED bash"),
            ("deploy --api-key=sk-live-1 --region eu", "deploy --api-key=REDACTED --region eu"),
            ("deploy --api-key sk-live-1 --region eu", "deploy --api-key REDACTED --region eu"),
            ("cli --token tok --verbose", "cli --token REDACTED --verbose"),
            ("mysql --password -h db", "mysql --password -h db"),
            ("mysql -uroot -phunter2 db", "mysql -uroot -pREDACTED db"),
            ("mysql -p db", "mysql -p db"),
            ("sshpass -p hunter2 ssh host", "sshpass -p REDACTED ssh host"),
            ("ssh -p 2222 host", "ssh -p 2222 host"),
            ("mkdir -p /tmp/x", "mkdir -p /tmp/x"),
            (
                "git clone https://user:pa55@example.com/r.git",
                "git clone https://user:REDACTED@example.com/r.git",
            ),
            ("git clone ssh://git@example.com/r.git", "git clone ssh://git@example.com/r.git"),
            ("open https://example.com/a:b@c", "open https://example.com/a:b@c"),
            ("make FOO=bar", "make FOO=bar"),
            ("cargo test --features=x", "cargo test --features=x"),
            ("claude --resume 42", "claude --resume 42"),
        ];
        for (given, want) in rows {
            assert_eq!(redact_argv(&argv(given)).join(" "), want, "{given}");
        }
        let header = vec![
            "curl".to_owned(),
            "-H".to_owned(),
            "Authorization: Bearer abc.def".to_owned(),
            "https://x".to_owned(),
        ];
        assert_eq!(redact_argv(&header)[2], "Authorization: Bearer REDACTED");
    }

    #[test]
    fn text_keeps_its_spacing_and_escapes() {
        let rows = [
            ("$ deploy  --api-key=sk1\r", "$ deploy  --api-key=REDACTED\r"),
            (
                "\x1b[32m$\x1b[0m GITHUB_TOKEN=ghp_x gh pr",
                "\x1b[32m$\x1b[0m GITHUB_TOKEN=REDACTED gh pr",
            ),
            ("\x1b[1m--password=x\x1b[0m", "\x1b[1m--password=REDACTED\x1b[0m"),
            ("plain text, nothing here", "plain text, nothing here"),
            ("", ""),
        ];
        for (given, want) in rows {
            assert_eq!(redact_text(given), want, "{given:?}");
        }
        let tail = b"$ mysql -psecret\r\nok\r\n\xff\xfe --token t\r\n";
        let out = redact_tail(tail);
        assert_eq!(out, b"$ mysql -pREDACTED\r\nok\r\n\xff\xfe --token t\r\n".to_vec());
    }

    /// A program quoting a flag back ends the secret at the quote, as whitespace would (issue
    /// 28 item 7: `sleep: unrecognized option '--api-key=sekret999'` kept the secret).
    #[test]
    fn quotes_and_punctuation_end_a_word() {
        let rows = [
            (
                "sleep: unrecognized option '--api-key=sekret999'",
                "sleep: unrecognized option '--api-key=REDACTED'",
            ),
            ("error: \"--token=abc\" is not valid", "error: \"--token=REDACTED\" is not valid"),
            ("`GITHUB_TOKEN=ghp_x`", "`GITHUB_TOKEN=REDACTED`"),
            ("\u{2018}--password=pw\u{2019}", "\u{2018}--password=REDACTED\u{2019}"),
            ("(--secret=s1), --verbose", "(--secret=REDACTED), --verbose"),
            ("[--api-key=k];echo", "[--api-key=REDACTED];echo"),
            ("x|API_KEY=v&&y", "x|API_KEY=REDACTED&&y"),
            ("deploy --token='abc' now", "deploy --token='REDACTED' now"),
            ("API_KEY=\"abc\" run", "API_KEY=\"REDACTED\" run"),
            ("curl -H 'Authorization: Bearer xyz'", "curl -H 'Authorization: Bearer REDACTED'"),
            ("git clone 'https://u:pw@h/r'", "git clone 'https://u:REDACTED@h/r'"),
            ("'--api-key' 'k2'", "'--api-key' 'REDACTED'"),
            ("\x1b[1m'--token=t'\x1b[0m", "\x1b[1m'--token=REDACTED'\x1b[0m"),
            ("\x1b[31m--token\x1b[0m value", "\x1b[31m--token\x1b[0m REDACTED"),
            ("it's fine, (really) [ok]", "it's fine, (really) [ok]"),
            ("\x1b]0;t\x07 --token=x", "\x1b]0;t\x07 --token=REDACTED"),
        ];
        for (given, want) in rows {
            assert_eq!(redact_text(given), want, "{given:?}");
        }
        let tail =
            b"$ sleep --api-key=sekret999\r\nsleep: unrecognized option '--api-key=sekret999'\r\n";
        let out = String::from_utf8(redact_tail(tail)).unwrap();
        assert!(!out.contains("sekret999"), "{out}");
        // An argument is one word unless it holds spaces or the whole word kept a secret.
        let args = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(redact_argv(&args(&["cli", "--token=a'b"])), args(&["cli", "--token=REDACTED"]));
        assert_eq!(
            redact_argv(&args(&["sh", "-c", "deploy --token='x'"])),
            args(&["sh", "-c", "deploy --token='REDACTED'"])
        );
        assert_eq!(
            redact_argv(&args(&["echo", "'--api-key=k'"])),
            args(&["echo", "'--api-key=REDACTED'"])
        );
    }
}
