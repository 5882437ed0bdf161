//! Trust boundaries for files and repos (issue 27, items 2, 3, 4, 6, 7), end to end with the
//! real binary on a private HOME: `berth hook install` never writes through a link a project
//! plants and gives a user's file back exactly (its bytes, its mode, its link); a repo's own
//! config runs nothing when Berth's git probe looks at it, and an untracked file named like
//! an option is a path to `berth diff`; `berth hook` ends when its agent never closes stdin.

mod support;

use std::io::Write;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use support::git::{git, repo, server_with_data_home};
use support::task::StubTask;
use support::*;

fn install(server: &TestServer, args: &[&str]) -> std::process::Output {
    let mut all = vec!["hook", "install"];
    all.extend_from_slice(args);
    server.berth(&all)
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Regression (issue 27, item 2): a cloned repo carrying `.claude/settings.berth-tmp ->
/// ../../../.bashrc` (a relative link survives `git clone`) turned `~/.bashrc` into the repo's
/// JSON through `berth hook install claude --project DIR`; the same for codex, cursor and
/// opencode, and for a planted backup name.
#[test]
fn a_projects_planted_links_are_never_written_through() {
    let server = TestServer::prepare();
    let home = &server.home;
    let bashrc = home.join(".bashrc");
    std::fs::write(&bashrc, "# my shell\n").unwrap();
    let repo = home.join("src/repo");
    // (agent, the file, where the old temporary file went, links up to HOME)
    let cases = [
        ("claude", ".claude/settings.json", ".claude/settings.berth-tmp", "../../../.bashrc"),
        ("codex", ".codex/hooks.json", ".codex/hooks.berth-tmp", "../../../.bashrc"),
        ("cursor", ".cursor/hooks.json", ".cursor/hooks.berth-tmp", "../../../.bashrc"),
        (
            "opencode",
            ".opencode/plugin/berth.js",
            ".opencode/plugin/berth.berth-tmp",
            "../../../../.bashrc",
        ),
    ];
    for (agent, file, tmp, up) in cases {
        let tmp = repo.join(tmp);
        std::fs::create_dir_all(tmp.parent().unwrap()).unwrap();
        symlink(up, &tmp).unwrap();
        let backup = repo.join(format!("{file}.berth-backup"));
        symlink(up, &backup).unwrap();
        // An existing file, so that a backup is written too.
        let body = if agent == "opencode" { "// mine\n" } else { "{}\n" };
        std::fs::write(repo.join(file), body).unwrap();
        let out = install(&server, &[agent, "--project", repo.to_str().unwrap()]);
        ok(&out);
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# my shell\n", "{agent}");
        assert!(!is_link(&repo.join(file)) && !is_link(&backup), "{agent}");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), body, "{agent}");
    }
    // A link at the settings file itself, or at a directory on the way, is refused.
    let other = home.join("src/other");
    std::fs::create_dir_all(other.join(".cursor")).unwrap();
    symlink("../../../.bashrc", other.join(".cursor/hooks.json")).unwrap();
    symlink("../..", other.join(".claude")).unwrap();
    for agent in ["cursor", "claude"] {
        let out = install(&server, &[agent, "--project", other.to_str().unwrap()]);
        assert!(!out.status.success(), "{agent} wrote through a link");
        assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"), "{agent}");
    }
    assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# my shell\n");
    assert!(!home.join("settings.json").exists());
}

/// Regression (issue 27, item 7): a symlinked `~/.claude/settings.json` became a regular file
/// and stayed one after `--uninstall`; the backup of a 0600 file was 0644; a 0444 file was
/// replaced; an uninstall after another edit sorted the keys and turned big integers into
/// floats; a user's own hook that mentions "berth hook" was deleted.
#[test]
fn install_and_uninstall_give_the_users_file_back_as_it_was() {
    let server = TestServer::prepare();
    let home = &server.home;
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join("dotfiles")).unwrap();
    let real = home.join("dotfiles/claude.json");
    let original = "{\n  \"zeta\": 1,\n  \"alpha\": 123456789012345678901234567890,\n  \"hooks\": {\n    \"Stop\": [\n      { \"hooks\": [{ \"type\": \"command\", \"command\": \"echo 'berth hook claude' >> ~/log\" }] }\n    ]\n  }\n}\n";
    std::fs::write(&real, original).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = home.join(".claude/settings.json");
    symlink("../dotfiles/claude.json", &link).unwrap();

    ok(&install(&server, &["claude"]));
    assert!(is_link(&link), "the link stays a link");
    let installed = std::fs::read_to_string(&real).unwrap();
    let doc: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(doc["hooks"]["PermissionRequest"][0]["hooks"][0]["command"], "berth hook claude");
    // The user's own hook is kept, and Berth's is added beside it.
    let stop = doc["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2, "{installed}");
    assert!(
        installed.starts_with("{\n  \"zeta\": 1,\n  \"alpha\": 123456789012345678901234567890,")
    );
    assert_eq!(std::fs::metadata(&real).unwrap().mode() & 0o777, 0o600);
    let backup = home.join("dotfiles/claude.json.berth-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    assert_eq!(std::fs::metadata(&backup).unwrap().mode() & 0o777, 0o600, "the backup is 0600");

    // Nothing else changed: the exact bytes, the same link.
    ok(&install(&server, &["claude", "--uninstall"]));
    assert!(is_link(&link));
    assert_eq!(std::fs::read_to_string(&real).unwrap(), original);
    assert!(!backup.exists());

    // The user edits the file after an install: uninstall takes out Berth's hooks only, key
    // order and numbers as they were.
    ok(&install(&server, &["claude"]));
    let edited = std::fs::read_to_string(&real).unwrap().replacen(
        "{\n",
        "{\n  \"mine\": 98765432109876543210,\n",
        1,
    );
    std::fs::write(&real, &edited).unwrap();
    ok(&install(&server, &["claude", "--uninstall"]));
    let want = original.replacen("{\n", "{\n  \"mine\": 98765432109876543210,\n", 1);
    assert_eq!(std::fs::read_to_string(&real).unwrap(), want);
    assert!(is_link(&link));

    // A read-only file is refused and left as it was.
    let cursor = home.join(".cursor/hooks.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, "{\"version\": 1}").unwrap();
    std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = install(&server, &["cursor"]);
    assert!(!out.status.success(), "a read-only file was replaced");
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), "{\"version\": 1}");
    assert_eq!(std::fs::metadata(&cursor).unwrap().mode() & 0o777, 0o444);
    assert!(!home.join(".cursor/hooks.json.berth-backup").exists(), "no backup left behind");
}

/// Regression (issue 27, item 6): a hook whose stdin never closed hung forever (and so its
/// agent, up to the agent's own timeout).
#[test]
fn a_hook_whose_stdin_stays_open_still_ends() {
    let server = TestServer::prepare();
    for payload in [&b"{\"hook_event_name\":\"Stop\",\"session_id\":\"s\"}\n"[..], b""] {
        let mut child = server
            .command()
            .args(["hook", "claude"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kept open (not dropped) until the hook has ended.
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(payload).unwrap();
        let status = poll(Duration::from_secs(30), "the hook to end with stdin open", || {
            child.try_wait().ok().flatten()
        });
        assert!(status.success());
        drop(stdin);
    }
}

/// Regression (issue 27, items 3 and 4): Berth's automatic git probe ran the repo's own
/// `core.fsmonitor`; an untracked `--output=precious.txt` made `berth diff` truncate the
/// tracked `precious.txt`, and any untracked name starting with `-` failed the whole diff.
#[test]
fn a_repo_runs_nothing_through_berths_git_and_names_stay_paths() {
    let server = server_with_data_home();
    let dir = repo(&server, "proj", &[("precious.txt", b"keep me\n")]);
    let marker = server.root.path().join("fsmonitor.ran");
    let script = server.root.path().join("fsmonitor.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(&dir, &["config", "core.fsmonitor", script.to_str().unwrap()]);
    std::fs::write(dir.join("--output=precious.txt"), "x\n").unwrap();
    std::fs::write(dir.join("-n"), "y\n").unwrap();

    let cwd = dir.display().to_string();
    server.call("workspace.create", json!({ "name": "proj", "cwd": cwd }));
    poll(Duration::from_secs(10), "the repo's git context", || {
        let list = json_of(&server.berth(&["ls", "--json"]));
        let ws = list["workspaces"].as_array()?.iter().find(|w| w["name"] == "proj")?.clone();
        (ws["git"]["dirty"] == true).then_some(())
    });
    let answer = json_of(&server.berth(&["diff", "proj", "--json"]));
    let names: Vec<&str> =
        answer["files"].as_array().unwrap().iter().filter_map(|f| f["path"].as_str()).collect();
    assert!(names.contains(&"--output=precious.txt") && names.contains(&"-n"), "{answer}");
    let one = server.berth_ok(&["diff", "proj", "--", "--output=precious.txt"]);
    assert!(one.contains("+x"), "{one}");
    assert_eq!(std::fs::read_to_string(dir.join("precious.txt")).unwrap(), "keep me\n");
    assert!(!marker.exists(), "the probe ran the repo's core.fsmonitor");
}

/// Regression (issue 27, item 3): `berth task start` ran the repo's `post-checkout` hook
/// through `git worktree add`. Hooks run only when the user says so in their own global git
/// config (`berth.runHooks`), which a repo's `.git/config` cannot.
#[test]
fn task_start_runs_a_repos_hook_only_when_the_user_opted_in() {
    let server = server_with_data_home();
    let dir = repo(&server, "proj", &[("a.txt", b"one\n")]);
    let marker = server.root.path().join("post-checkout.ran");
    let hook = dir.join(".git/hooks/post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The repo's own config cannot opt in.
    git(&dir, &["config", "berth.runHooks", "true"]);
    let task = StubTask::labelled(&server, &dir, "first").objective("Look").start(&server);
    assert_eq!(task["state"], "working", "{task}");
    assert!(!marker.exists(), "task start ran the repo's post-checkout hook");
    // The user's own global config can.
    std::fs::write(server.home.join(".gitconfig"), "[berth]\n\trunHooks = true\n").unwrap();
    let task = StubTask::labelled(&server, &dir, "second").objective("Look").start(&server);
    assert_eq!(task["state"], "working", "{task}");
    assert!(marker.exists(), "the user opted in to hooks");
}
