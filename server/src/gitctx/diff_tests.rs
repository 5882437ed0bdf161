//! The diff parser, on real git output (a temp repo) and on fixed patch text.

use super::*;
use std::path::PathBuf;
use std::process::Command;

const PATCH: &str = "diff --git a/f.txt b/f.txt
index 1111111..2222222 100644
--- a/f.txt
+++ b/f.txt
@@ -1,4 +1,4 @@ fn main
 one
-two
+TWO
 three
 four
@@ -10 +10,2 @@
 ten
+eleven
\\ No newline at end of file
";

#[test]
fn hunks_carry_old_and_new_line_numbers() {
    let hunks = parse_hunks(PATCH.as_bytes());
    assert_eq!(hunks.len(), 2);
    let h = &hunks[0];
    assert_eq!((h.old_start, h.old_lines, h.new_start, h.new_lines), (1, 4, 1, 4));
    assert_eq!(h.header, "fn main");
    let kinds: Vec<_> = h.lines.iter().map(|l| (l.kind, l.old_line, l.new_line)).collect();
    assert_eq!(
        kinds,
        vec![
            (LineKind::Context, Some(1), Some(1)),
            (LineKind::Removed, Some(2), None),
            (LineKind::Added, None, Some(2)),
            (LineKind::Context, Some(3), Some(3)),
            (LineKind::Context, Some(4), Some(4)),
        ]
    );
    assert_eq!(h.lines[2].text, "TWO");
    let h = &hunks[1];
    assert_eq!((h.old_start, h.old_lines, h.new_start, h.new_lines), (10, 1, 10, 2));
    assert_eq!(h.lines[1].new_line, Some(11));
    assert!(h.lines[1].no_newline, "the marker belongs to the line before it");
    assert!(!h.lines[0].no_newline);
}

#[test]
fn numstat_and_name_status_read_renames_and_binaries() {
    let numstat = b"3\t1\ta.txt\x00-\t-\tpic.bin\x000\t0\t\x00old name\x00new name\x00";
    let parsed = parse_numstat_z(numstat);
    assert_eq!(parsed[0], (Some((3, 1)), "a.txt".to_owned(), None));
    assert_eq!(parsed[1], (None, "pic.bin".to_owned(), None));
    assert_eq!(parsed[2], (Some((0, 0)), "new name".to_owned(), Some("old name".to_owned())));
    let status = b"M\x00a.txt\x00R087\x00old name\x00new name\x00D\x00gone\x00";
    let parsed = parse_name_status_z(status);
    assert_eq!(parsed[0], (FileStatus::Modified, "a.txt".to_owned(), None));
    assert_eq!(
        parsed[1],
        (FileStatus::Renamed, "new name".to_owned(), Some("old name".to_owned()))
    );
    assert_eq!(parsed[2], (FileStatus::Deleted, "gone".to_owned(), None));
}

/// A path that counts the comparisons made of it.
#[derive(Debug, Clone)]
struct Counted(String);

impl std::hash::Hash for Counted {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

thread_local! {
    static COMPARISONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        COMPARISONS.with(|c| c.set(c.get() + 1));
        self.0 == other.0
    }
}
impl Eq for Counted {}

/// Joining 100k changed files with their counts compares paths about once per file (issue 28
/// item 6: a `find` per file made it 5·10⁹ comparisons, 15 s); the counts land on the right
/// files, the first of a path wins, and a path git gave no counts for has none.
#[test]
fn counts_are_joined_by_a_map_not_a_search() {
    const N: usize = 100_000;
    let path = |i: usize| Counted(format!("dir{}/file{i}.rs", i % 97));
    let statuses: Vec<_> = (0..N).map(|i| (FileStatus::Modified, path(i), None)).collect();
    // In the reverse order (a search finds each late), one duplicate, one missing.
    let mut numstat: Vec<_> = (1..N).rev().map(|i| (Some((i as u64, 1)), path(i), None)).collect();
    numstat.push((Some((7, 7)), path(5), None));
    COMPARISONS.with(|c| c.set(0));
    let joined = join_counts(statuses, numstat);
    let comparisons = COMPARISONS.with(std::cell::Cell::get);
    assert!(comparisons <= 3 * N as u64, "{comparisons} comparisons for {N} files");
    assert_eq!(joined.len(), N);
    assert_eq!(joined[0].3, None, "no counts for file 0");
    assert_eq!(joined[5].3, Some(Some((5, 1))), "the first entry of a path wins");
    assert!(joined.iter().skip(1).all(|(_, p, _, c)| {
        let i: u64 = p.0.rsplit("file").next().unwrap().trim_end_matches(".rs").parse().unwrap();
        *c == Some(Some((i, 1)))
    }));
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn a_real_repo_lists_every_kind_of_change() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().to_path_buf();
    git(&dir, &["init", "-q", "-b", "main"]);
    let body: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("mod.txt"), &body).unwrap();
    std::fs::write(dir.join("del.txt"), "bye\n").unwrap();
    std::fs::write(dir.join("old.txt"), "same text\nmore\nand more\n").unwrap();
    std::fs::write(dir.join("pic.bin"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(
        dir.join("mod.txt"),
        body.replace("line 2\n", "LINE 2\n").replace("line 30\n", ""),
    )
    .unwrap();
    std::fs::remove_file(dir.join("del.txt")).unwrap();
    git(&dir, &["mv", "old.txt", "new.txt"]);
    std::fs::write(dir.join("pic.bin"), [9u8, 0, 8, 7, 0, 1]).unwrap();
    std::fs::write(dir.join("added.txt"), "fresh\n").unwrap();
    let source = DiffSource { dir: dir.clone(), base: "HEAD".into(), head: None };
    let all = files(&source).unwrap();
    let find = |p: &str| all.iter().find(|f| f.path == p).unwrap_or_else(|| panic!("{p}: {all:?}"));
    assert_eq!(find("mod.txt").status, FileStatus::Modified);
    assert_eq!((find("mod.txt").added, find("mod.txt").removed), (1, 2));
    assert_eq!(find("del.txt").status, FileStatus::Deleted);
    assert_eq!(find("new.txt").status, FileStatus::Renamed);
    assert_eq!(find("new.txt").old_path.as_deref(), Some("old.txt"));
    assert!(find("pic.bin").binary);
    assert_eq!(find("added.txt").status, FileStatus::Added);
    assert!(find("added.txt").untracked);
    assert_eq!(all.len(), 5, "{all:?}");

    let (f, hunks, total) = file(&source, "mod.txt", 0, 10).unwrap();
    assert_eq!(f.status, FileStatus::Modified);
    assert_eq!(total, 2, "{hunks:?}");
    let removed: Vec<_> = hunks[0].lines.iter().filter(|l| l.kind == LineKind::Removed).collect();
    assert_eq!(removed[0].text, "line 2");
    assert_eq!(removed[0].old_line, Some(2));
    let gone = hunks[1].lines.iter().find(|l| l.kind == LineKind::Removed).unwrap();
    assert_eq!((gone.text.as_str(), gone.old_line), ("line 30", Some(30)));
    // Paging: the second hunk alone.
    let (_, page, total) = file(&source, "mod.txt", 1, 1).unwrap();
    assert_eq!((page.len(), total), (1, 2));
    assert_eq!(page[0], hunks[1]);
    // A new file's one hunk; a binary file none.
    let (_, hunks, _) = file(&source, "added.txt", 0, 10).unwrap();
    assert_eq!(hunks[0].lines[0].new_line, Some(1));
    assert_eq!(hunks[0].lines[0].text, "fresh");
    let (f, hunks, total) = file(&source, "pic.bin", 0, 10).unwrap();
    assert!(f.binary && hunks.is_empty() && total == 0);
    assert!(file(&source, "nothing.txt", 0, 10).is_err());
}

/// Regression (issue 27, item 4): an untracked `--output=precious.txt` was taken as git's
/// `--output` option by `git diff --no-index … /dev/null <path>` and truncated the tracked
/// `precious.txt`; any untracked name starting with `-` failed the whole diff.
#[test]
fn an_untracked_name_like_an_option_is_a_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().to_path_buf();
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("precious.txt"), "keep me\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(dir.join("--output=precious.txt"), "x\n").unwrap();
    std::fs::write(dir.join("-p"), "y\nz\n").unwrap();
    let source = DiffSource { dir: dir.clone(), base: "HEAD".into(), head: None };
    let all = files(&source).expect("the diff lists every file");
    assert_eq!(std::fs::read_to_string(dir.join("precious.txt")).unwrap(), "keep me\n");
    let names: Vec<&str> = all.iter().map(|f| f.path.as_str()).collect();
    assert!(names.contains(&"--output=precious.txt") && names.contains(&"-p"), "{names:?}");
    assert_eq!(all.iter().find(|f| f.path == "-p").unwrap().added, 2);
    let (entry, hunks, _) = file(&source, "--output=precious.txt", 0, 10).unwrap();
    assert!(entry.untracked && hunks.len() == 1, "{entry:?} {hunks:?}");
    assert_eq!(std::fs::read_to_string(dir.join("precious.txt")).unwrap(), "keep me\n");
}

/// Regression (issue 27, item 3): the git probe's `git status` ran the repo's
/// `core.fsmonitor`, `git worktree add` (task start) its `post-checkout` hook, and a diff
/// or a status its filter and diff drivers. A repo is data: none of them runs now.
#[test]
fn a_repos_own_config_and_hooks_run_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let dir = crate::tasks::git::tests::hostile_repo(&root);
    assert!(
        crate::tasks::git::tests::ran(&root).is_empty(),
        "setting up ran {:?}",
        crate::tasks::git::tests::ran(&root)
    );
    // Racily clean and then really changed: status and diff must look at the content.
    std::fs::write(dir.join("a.txt"), "two\n").unwrap();
    let (ctx, _) = crate::gitctx::probe(&dir).expect("a git context");
    assert!(ctx.dirty);
    let source = DiffSource { dir: dir.clone(), base: "HEAD".into(), head: None };
    let files = files(&source).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    file(&source, "a.txt", 0, 10).unwrap();
    let wt = root.join("wt");
    let wt_text = wt.display().to_string();
    crate::tasks::git::git_ok(
        &dir,
        &["worktree", "add", "-b", "t1", "--end-of-options", &wt_text, "HEAD"],
    )
    .unwrap();
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "one\n");
    assert_eq!(
        crate::tasks::git::tests::ran(&root),
        Vec::<String>::new(),
        "git ran the repo's programs"
    );
}

/// Paging through a file's hunks against a fixed commit runs its `git diff` once; a change to
/// the file runs it again; a turn's diff (two commits) is kept too.
#[test]
fn paging_a_big_diff_reuses_one_git_diff_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().to_path_buf();
    git(&dir, &["init", "-q", "-b", "main"]);
    let body: String = (1..=2_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("big.txt"), &body).unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"]);
    let base = String::from_utf8(
        std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    let changed: String = (1..=2_000)
        .map(|i| if i % 10 == 0 { format!("LINE {i}\n") } else { format!("line {i}\n") })
        .collect();
    std::fs::write(dir.join("big.txt"), &changed).unwrap();
    let source = DiffSource { dir: dir.clone(), base: base.clone(), head: None };
    let mut ran = Vec::new();
    let mut seen = 0;
    for page in 0..4 {
        let (_, hunks, total, git_ran) = file_paged(&source, "big.txt", page * 50, 50).unwrap();
        assert_eq!(total, 200, "one hunk per changed line, 7 lines apart");
        seen += hunks.len();
        ran.push(git_ran);
    }
    assert_eq!(seen, 200);
    assert_eq!(ran, [true, false, false, false], "one git diff for four pages");
    std::fs::write(dir.join("big.txt"), changed.replace("LINE 10\n", "line 10\n")).unwrap();
    let (_, _, total, git_ran) = file_paged(&source, "big.txt", 0, 50).unwrap();
    assert!(git_ran, "the file changed: git runs again");
    assert_eq!(total, 199);
    // A workspace's diff against HEAD is never kept (HEAD moves).
    let head = DiffSource { dir: dir.clone(), base: "HEAD".into(), head: None };
    assert!(file_paged(&head, "big.txt", 0, 50).unwrap().3);
    assert!(file_paged(&head, "big.txt", 50, 50).unwrap().3);
}
