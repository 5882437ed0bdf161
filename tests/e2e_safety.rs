//! The socket's safety: permissions, other users, hostile input (RELIABILITY.md #6, #10,
//! #11, #13).

mod support;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use support::*;

#[test]
fn socket_is_0600_in_a_0700_dir() {
    let server = TestServer::start();
    let sock = fs::metadata(&server.socket).unwrap();
    assert_eq!(sock.mode() & 0o777, 0o600);
    let dir = fs::metadata(server.socket.parent().unwrap()).unwrap();
    assert_eq!(dir.mode() & 0o777, 0o700);
    assert_eq!(dir.uid(), nix::unistd::geteuid().as_raw());
}

#[test]
fn unknown_method_is_32601_and_the_connection_lives_on() {
    let server = TestServer::start();
    let mut client = server.client();
    match client.call("no.such.method", json!({})) {
        Err(ClientError::Rpc { code, data_code, .. }) => {
            assert_eq!(code, -32601);
            assert_eq!(data_code, "METHOD_NOT_FOUND");
        }
        other => panic!("expected an error, got {other:?}"),
    }
    client.call("server.info", json!({})).expect("same connection still answers");
}

/// Each hostile line gets a JSON-RPC error with the expected code, and the server serves the
/// next client.
#[test]
fn malformed_requests_get_errors_and_the_server_lives_on() {
    let server = TestServer::start();
    let cases: Vec<(Vec<u8>, i64)> = vec![
        (b"{not json\n".to_vec(), -32700),
        (b"\xff\xfe\xfd\n".to_vec(), -32700),
        (b"[1,2,3]\n".to_vec(), -32600),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1}\n".to_vec(), -32600),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pane.read\",\"params\":{\"pane_id\":42}}\n".to_vec(), -32602),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pane.read\",\"params\":\"x\"}\n".to_vec(), -32602),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pane.read\",\"params\":{\"pane_id\":\"../../etc\"}}\n".to_vec(), -32602),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pane.read\",\"params\":{\"pane_id\":\"-rf\"}}\n".to_vec(), -32602),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pane.read\",\"params\":{\"pane_id\":\"\"}}\n".to_vec(), -32602),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tab.resize\",\"params\":{\"tab_id\":\"tab_x\",\"cols\":-1,\"rows\":5}}\n".to_vec(), -32602),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pane.read\",\"params\":{\"pane_id\":\"pane_nope\"}}\n".to_vec(), -32004),
    ];
    for (line, code) in cases {
        let answer = raw_exchange(&server.socket, &line);
        let value: Value = serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("{:?} → {answer:?}: {e}", String::from_utf8_lossy(&line)));
        assert_eq!(value["error"]["code"], code, "{:?} → {answer}", String::from_utf8_lossy(&line));
        assert!(value["error"]["data"]["code"].is_string());
    }
    // Deeply nested JSON is refused by the parser's depth limit, not by a stack overflow.
    let mut deep = "[".repeat(100_000);
    deep.push('\n');
    let answer = raw_exchange(&server.socket, deep.as_bytes());
    assert!(answer.contains("-32700"), "{answer}");
    server.call("server.info", json!({}));
}

#[test]
fn an_over_long_line_is_refused_and_the_next_client_is_served() {
    let server = TestServer::start();
    let mut line = br#"{"jsonrpc":"2.0","id":1,"method":"server.info","params":{"pad":""#.to_vec();
    line.extend(std::iter::repeat_n(b'a', 2 << 20));
    line.extend(b"\"}}\n");
    let answer = raw_exchange(&server.socket, &line);
    assert!(answer.contains("LINE_TOO_LONG"), "{answer}");
    server.call("server.info", json!({}));

    // Repeating it does not grow the server's memory without bound.
    let before = rss_kib(server.pid());
    for _ in 0..20 {
        raw_exchange(&server.socket, &line);
    }
    let after = rss_kib(server.pid());
    assert!(after < before + 32 * 1024, "RSS grew from {before} KiB to {after} KiB");
}

#[test]
fn a_byte_at_a_time_client_is_answered() {
    let server = TestServer::start();
    let mut stream = UnixStream::connect(&server.socket).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Meanwhile another client is served normally.
    let request = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server.info\"}\n";
    for (i, byte) in request.iter().enumerate() {
        stream.write_all(&[*byte]).unwrap();
        if i == request.len() / 2 {
            server.call("workspace.list", json!({}));
        }
    }
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).unwrap();
    let value: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(value["id"], 7);
    assert_eq!(value["result"]["name"], "berth");
}

#[test]
fn a_client_disconnecting_mid_line_does_not_hurt() {
    let server = TestServer::start();
    for _ in 0..50 {
        let mut stream = UnixStream::connect(&server.socket).unwrap();
        stream.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"meth").unwrap();
    }
    server.call("server.info", json!({}));
}

#[test]
fn another_uid_is_refused() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: dropping to another uid needs root");
        return;
    }
    let server = TestServer::start();
    let nobody = |extra: &[&str]| {
        let mut cmd = std::process::Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        cmd.arg(berth_bin()).args(extra);
        cmd.env("BERTH_SOCKET", &server.socket).current_dir("/");
        cmd.output().expect("run setpriv")
    };
    // The file system alone keeps another user out of the 0700 directory.
    let out = nobody(&["ls"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // Open the path wide so only the server's own peer-uid check stands in the way.
    let socket_dir = server.socket.parent().unwrap().to_path_buf();
    let dirs: Vec<_> = socket_dir
        .ancestors()
        .take_while(|d| d.starts_with(server.root.path()))
        .map(|d| d.to_path_buf())
        .collect();
    let saved: Vec<_> =
        dirs.iter().map(|d| (d.clone(), fs::metadata(d).unwrap().permissions())).collect();
    for dir in &dirs {
        let mode = fs::metadata(dir).unwrap().mode() & 0o777;
        fs::set_permissions(dir, fs::Permissions::from_mode(mode | 0o011)).unwrap();
    }
    fs::set_permissions(&server.socket, fs::Permissions::from_mode(0o666)).unwrap();
    let out = nobody(&["ls"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (dir, perms) in saved {
        fs::set_permissions(dir, perms).unwrap();
    }
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr.contains("uid 65534"), "{stderr}");
    server.call("server.info", json!({}));
}

#[test]
fn a_second_server_on_the_same_socket_refuses_to_start() {
    let server = TestServer::start();
    let out = server.command().arg("server").output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("already running"), "{stderr}");
    server.call("server.info", json!({}));
}

#[test]
fn a_stale_socket_from_a_killed_server_is_replaced() {
    let mut server = TestServer::start();
    server.kill();
    assert!(server.socket.exists(), "SIGKILL leaves the socket file behind");
    server.start_again();
    server.call("server.info", json!({}));
}

#[test]
fn an_unsafe_socket_dir_is_refused() {
    let server = TestServer::start();
    let open = server.root.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let out =
        server.command().arg("server").env("BERTH_SOCKET", open.join("b.sock")).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing socket directory"));

    let link = server.root.path().join("link");
    std::os::unix::fs::symlink(server.socket.parent().unwrap(), &link).unwrap();
    let out =
        server.command().arg("server").env("BERTH_SOCKET", link.join("b.sock")).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
}

#[test]
fn sigterm_stops_the_server_and_its_children() {
    let mut server = TestServer::start();
    let pane = server.berth_ok(&["new", "--", "sh", "-c", "trap '' HUP; exec sleep 4243"]);
    poll(Duration::from_secs(10), "sleep to start", || {
        (!server.pids_matching("sleep 4243").is_empty()).then_some(())
    });
    let _ = pane;
    let status = server.stop().expect("server exits");
    assert!(status.success(), "{status}");
    assert!(server.pids_matching("sleep 4243").is_empty(), "the child outlived the server");
    assert!(!server.socket.exists(), "the socket was not removed");
}
