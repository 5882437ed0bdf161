//! Issue 28 through real sockets and connection tasks: a pane whose terminal is busy (its lock
//! held, as a flooding reader or a long search holds it) delays no other client's answer;
//! searches and big frames run off the runtime's workers; a client that never reads a big
//! answer is closed after the stall timeout; waiting requests and subscribers leave room for
//! short requests.

use std::io::{BufRead as _, Write as _};
use std::time::{Duration, Instant};

use berth_engine::ids::PaneId;
use berth_engine::layout::CellSize;

use super::*;
use crate::commands::{Reply, SpawnRequest, WorkspaceSelector};
use crate::connections::MAX_LONG_LIVED;

/// Generous: these tests assert what happens, never how fast.
const WAIT: Duration = Duration::from_secs(30);

struct Served {
    _dir: tempfile::TempDir,
    path: PathBuf,
    store: Arc<Mutex<Store>>,
    ui: std::sync::mpsc::Receiver<UiRequest>,
    server: tokio::task::JoinHandle<io::Result<()>>,
}

/// A served socket with a Store whose panes run no processes (their terminals are fed by the
/// test), and a window bridge whose requests the test holds.
fn serve() -> Served {
    let dir = tempfile::tempdir().expect("a temp dir");
    let socket = BoundSocket::bind(&dir.path().join("run").join("berth.sock")).expect("bind");
    let bus = EventBus::default();
    let config = crate::store::StoreConfig {
        socket_path: socket.path().to_path_buf(),
        home: dir.path().to_path_buf(),
        shell: "/bin/sh".into(),
    };
    let spawner = crate::process::testing::FakeSpawner::default();
    let store = Store::with_spawner(
        config,
        bus.clone(),
        crate::pane::OutputPulse::default(),
        Arc::new(spawner),
    );
    let store = Arc::new(Mutex::new(store));
    let (ui_tx, ui) = std::sync::mpsc::channel();
    let services = Services {
        store: store.clone(),
        bus,
        persistence: None,
        ui: Some(UiBridge::new(ui_tx, Arc::new(Mutex::new(None)))),
        windows: Default::default(),
    };
    let path = socket.path().to_path_buf();
    let server = tokio::spawn(async move { socket.serve(services).await });
    Served { _dir: dir, path, store, ui, server }
}

/// A pane of `cols` x `rows` whose terminal was fed `lines` lines of words.
fn big_pane(store: &Arc<Mutex<Store>>, cols: u16, rows: u16, lines: usize) -> PaneId {
    let mut store = store.lock().unwrap();
    let spawn = SpawnRequest { argv: vec!["fake".into()], ..Default::default() };
    let cmd = Command::PaneSpawn { workspace: WorkspaceSelector::Active, spawn };
    let Ok(Reply::Spawned { pane, tab, .. }) = store.execute(cmd) else { panic!("no pane") };
    let size = CellSize { cols, rows };
    store.execute(Command::TabResize { tab, size }).expect("resize");
    let shared = store.pane_shared(&pane).expect("live");
    drop(store);
    let words = "alpha beta gamma delta ".repeat(usize::from(cols) / 23 - 1);
    let text: String =
        (0..lines).map(|n| format!("\x1b[3{}m{n:6} {words}\x1b[0m\r\n", n % 7 + 1)).collect();
    shared.term.lock().feed(text.as_bytes());
    pane
}

fn request(id: usize, method: &str, params: Value) -> Vec<u8> {
    let mut line =
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string();
    line.push('\n');
    line.into_bytes()
}

/// A connection with a read deadline.
fn connect(path: &Path) -> StdUnixStream {
    let conn = StdUnixStream::connect(path).expect("connect");
    conn.set_read_timeout(Some(WAIT)).expect("timeout");
    conn
}

/// One request on a fresh connection, as the CLI makes it; its answer.
fn call_once(path: &Path, method: &str, params: Value) -> Value {
    let mut conn = connect(path);
    conn.write_all(&request(1, method, params)).expect("send");
    let mut line = String::new();
    io::BufReader::new(conn).read_line(&mut line).expect("an answer in time");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

/// Regression (issue 28, items 1 and 2): `workspace.list` took every pane's terminal lock (for
/// its size) and `pane.search` ran on the runtime's two workers under that lock, so a pane
/// busy feeding (or 20 searches) stalled every client. Here the test holds the pane's lock the
/// whole time: the listing is answered, and so is everyone else, while 20 searches wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_pane_and_twenty_searches_delay_no_one_else() {
    let served = serve();
    let pane = big_pane(&served.store, 400, 50, 200);
    let shared = served.store.lock().unwrap().pane_shared(&pane).unwrap();
    let path = served.path.clone();
    let checks = tokio::task::spawn_blocking(move || {
        let held = shared.term.lock();
        let search = serde_json::json!({
            "pane_id": pane.as_str(), "query": "not there", "count": true,
            "jump": { "direction": "older" }
        });
        let mut searches: Vec<StdUnixStream> = (0..20)
            .map(|i| {
                let mut c = connect(&path);
                c.write_all(&request(i, "pane.search", search.clone())).expect("send");
                c
            })
            .collect();
        // Every one of them is now waiting for the pane's lock, or queued behind those.
        std::thread::sleep(Duration::from_millis(300));
        let list = call_once(&path, "workspace.list", serde_json::json!({}));
        let panes = &list["result"]["workspaces"][0]["tabs"][0]["panes"];
        assert_eq!(panes[0]["size"]["cols"], 400, "listed while the pane is busy: {list}");
        let info = call_once(&path, "server.info", serde_json::json!({}));
        assert!(info["result"].is_object(), "{info}");
        let (running, peak) = crate::heavy::running();
        assert!(running <= crate::heavy::MAX_RUNNING && peak <= crate::heavy::MAX_RUNNING);
        drop(held);
        // Released, every search ends (bounded by its deadlines) and answers.
        for conn in &mut searches {
            let mut line = String::new();
            io::BufReader::new(conn.try_clone().unwrap()).read_line(&mut line).expect("answer");
            let answer: Value = serde_json::from_str(&line).unwrap();
            assert!(answer["result"].is_object(), "{answer}");
            assert_eq!(answer["result"]["current"], Value::Null, "{answer}");
        }
    });
    checks.await.expect("the checks");
    served.server.abort();
}

/// Regression (issue 28, item 3): `screen.frames` for a 4000x500 pane was captured and
/// encoded on the runtime's workers, under the pane's lock; twelve clients asking and never
/// reading cost the server 136–250 MB each and stalled `berth ls`. Big frames now run on the
/// work pool, a client owes at most one answer, and one that does not take a big answer within
/// the stall timeout is closed, what it was owed freed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_big_frames_stall_no_one_and_are_let_go() {
    STALL_MS.store(1500, std::sync::atomic::Ordering::Relaxed);
    let served = serve();
    let pane = big_pane(&served.store, 4000, 500, 600);
    let shared = served.store.lock().unwrap().pane_shared(&pane).unwrap();
    let path = served.path.clone();
    let checks = tokio::task::spawn_blocking(move || {
        let held = shared.term.lock();
        let ask = serde_json::json!({ "panes": [{ "pane_id": pane.as_str() }] });
        let clients: Vec<StdUnixStream> = (0..12)
            .map(|i| {
                let mut c = connect(&path);
                c.write_all(&request(i, "screen.frames", ask.clone())).expect("send");
                c
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        let list = call_once(&path, "workspace.list", serde_json::json!({}));
        assert!(list["result"].is_object(), "listed while twelve frames wait: {list}");
        drop(held);
        // The frames are made (two at a time) and owed to clients that do not read.
        let until = Instant::now() + WAIT;
        while owed_bytes() < BIG_ANSWER {
            assert!(Instant::now() < until, "no big answer was ever owed");
            std::thread::sleep(Duration::from_millis(20));
        }
        let list = call_once(&path, "workspace.list", serde_json::json!({}));
        assert!(list["result"].is_object(), "listed while frames are owed: {list}");
        // Past the stall timeout each connection is closed and what it was owed freed.
        let until = Instant::now() + 4 * WAIT;
        while owed_bytes() > 0 {
            assert!(Instant::now() < until, "{} bytes still owed", owed_bytes());
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(clients);
    });
    checks.await.expect("the checks");
    STALL_MS.store(STALL_TIMEOUT.as_millis() as u64, std::sync::atomic::Ordering::Relaxed);
    served.server.abort();
}

/// Regression (issue 28, item 4): 256 subscribers or waiting requests made every new client
/// `BUSY` ("all of them subscribed"), `berth decide` included. Long-lived connections now
/// have their own limit, refused with an accurate message, and short requests always get in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_requests_and_subscribers_leave_room_for_short_requests() {
    let _ = crate::rlimit::raise_open_file_limit();
    let served = serve();
    let path = served.path.clone();
    let ui = served.ui;
    let checks = tokio::task::spawn_blocking(move || {
        let shot = serde_json::json!({ "path": "/nonexistent/shot.png" });
        let mut held = Vec::new();
        let mut windows = Vec::new();
        for i in 0..MAX_LONG_LIVED {
            let mut c = connect(&path);
            if i % 2 == 0 {
                c.write_all(&request(i, "events.subscribe", Value::Null)).unwrap();
                let mut line = String::new();
                io::BufReader::new(c.try_clone().unwrap()).read_line(&mut line).unwrap();
                assert!(line.contains("\"subscribed\":true"), "{line}");
            } else {
                // A request that waits (for the window, which holds it unanswered).
                c.write_all(&request(i, "window.screenshot", shot.clone())).unwrap();
                let Ok(request) = ui.recv_timeout(WAIT) else { panic!("no screenshot request") };
                windows.push(request);
            }
            held.push(c);
        }
        // One more that would wait or subscribe is refused, accurately, and stays usable.
        let mut extra = connect(&path);
        let mut lines = io::BufReader::new(extra.try_clone().unwrap()).lines();
        extra.write_all(&request(1, "events.subscribe", Value::Null)).unwrap();
        let refused: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert_eq!(refused["id"], 1, "{refused}");
        assert_eq!(refused["error"]["data"]["code"], "BUSY", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("subscribe to events or wait"), "{message}");
        extra.write_all(&request(2, "server.info", Value::Null)).unwrap();
        let info: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        assert!(info["result"].is_object(), "{info}");
        // New clients keep getting in, a person's answer among them.
        for _ in 0..100 {
            let info = call_once(&path, "server.info", serde_json::json!({}));
            assert!(info["result"].is_object(), "{info}");
        }
        let decide = serde_json::json!({ "pane_id": PaneId::new().as_str(), "answer": "allow" });
        let answer = call_once(&path, "pane.decide", decide);
        assert_eq!(answer["error"]["data"]["code"], "NO_SUCH_PANE", "answered: {answer}");
        // A wait that ends gives its place back.
        drop(windows.pop());
        let until = Instant::now() + WAIT;
        loop {
            extra.write_all(&request(3, "events.subscribe", Value::Null)).unwrap();
            let line = lines.next().unwrap().unwrap();
            if line.contains("\"subscribed\":true") {
                break;
            }
            assert!(line.contains("BUSY") && Instant::now() < until, "{line}");
            std::thread::sleep(Duration::from_millis(20));
        }
        drop((held, windows, extra));
    });
    checks.await.expect("the checks");
    served.server.abort();
}
