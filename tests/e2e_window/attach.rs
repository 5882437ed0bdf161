//! Windows attached to a `berth server` in another process (issue 17): the server outlives
//! the window. A world of its own: a real `berth server`, an Xvfb display, and `berth`
//! windows that find the server answering on the socket and attach to it. Pixels are read off
//! the X server (GetImage), since an attached window's screen is what is compared.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{alive, poll, rss_kib, TestServer};
use crate::{ocr, run_tool, start_xvfb, Image, Killed, WAIT};

/// The pixel rows at the window's top left out of comparisons: the tab bar and the pane's
/// header (which carries a clock: "working 3s").
const CHROME_PX: u32 = 64;

/// The attached windows' world.
pub(crate) struct Attached {
    windows: Vec<(Killed, String)>,
    pub(crate) server: TestServer,
    _xvfb: Killed,
    display: String,
}

impl Attached {
    pub(crate) fn start() -> Result<Attached, String> {
        // Tasks' worktrees go under the world's own data dir, never the user's.
        let server = crate::support::git::server_with_data_home();
        let (xvfb, display) = start_xvfb(server.root.path())?;
        Ok(Attached { windows: Vec::new(), server, _xvfb: xvfb, display })
    }

    /// Starts `berth` (it must attach: a server answers) and waits for its window and a live
    /// pane; returns the window's index.
    fn open(&mut self, verb: &[&str]) -> usize {
        self.open_env(verb, &[])
    }

    /// [`Attached::open`] with more environment.
    pub(crate) fn open_env(&mut self, verb: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> usize {
        let log = self.server.root.path().join(format!("window{}.log", self.windows.len()));
        let out = std::fs::File::create(&log).expect("the window's log");
        let err = out.try_clone().expect("the window's log");
        let child = self
            .server
            .command()
            .args(verb)
            .env("BERTH_LOG", "info,berth::window=debug,berth::render=debug")
            .env("DISPLAY", &self.display)
            .env("BERTH_CONFIG", self.server.root.path().join("config.toml"))
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WGPU_BACKEND")
            .envs(env.iter().copied())
            .current_dir(&self.server.home)
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("start berth");
        let mut window = Killed { name: "berth (attached)", child };
        let pid = window.pid().to_string();
        let deadline = Instant::now() + WAIT;
        let id = loop {
            if let Ok(Some(status)) = window.child.try_wait() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                panic!("berth exited early with {status}; its log:\n{text}");
            }
            // A window of a running sibling is not this one (xdotool's --pid has been seen to
            // answer with another process's window while this one's has no pid yet).
            let taken: Vec<String> = self
                .windows
                .iter_mut()
                .filter_map(|(w, id)| matches!(w.child.try_wait(), Ok(None)).then(|| id.clone()))
                .collect();
            let found =
                run_tool(&self.display, "xdotool", &["search", "--pid", &pid, "--name", "Berth"])
                    .ok()
                    .and_then(|out| {
                        out.lines().rfind(|id| !taken.iter().any(|t| t == id)).map(str::to_owned)
                    });
            // A standalone server the window starts answers only after a moment.
            let live = berth_server::client::Client::connect(&self.server.socket).is_ok()
                && self.panes().iter().any(|p| p["state"] == "LIVE");
            if let (Some(id), true) = (found, live) {
                break id;
            }
            assert!(Instant::now() < deadline, "no attached window within 30 s");
            std::thread::sleep(Duration::from_millis(100));
        };
        // The window logs that it attached right after it maps.
        poll(Duration::from_secs(10), "the window saying it attached", || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            text.contains("attached to the server").then_some(())
        });
        self.windows.push((window, id));
        self.windows.len() - 1
    }

    pub(crate) fn xdotool(&self, args: &[&str]) {
        run_tool(&self.display, "xdotool", args).unwrap_or_else(|e| panic!("{e}"));
    }

    pub(crate) fn window_id(&self, index: usize) -> String {
        self.windows[index].1.clone()
    }

    /// What window `index` has logged.
    fn log_text(&self, index: usize) -> String {
        let log = self.server.root.path().join(format!("window{index}.log"));
        std::fs::read_to_string(log).unwrap_or_default()
    }

    /// Kills window `index` with SIGKILL and reaps it.
    fn kill_9(&mut self, index: usize) {
        let window = &mut self.windows[index].0;
        let pid = nix::unistd::Pid::from_raw(window.pid());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill -9 the window");
        let _ = window.child.wait();
    }

    /// The number the server gave window `index` (its log says it once its view is taken).
    pub(crate) fn window_number(&self, index: usize) -> u64 {
        let log = self.server.root.path().join(format!("window{index}.log"));
        poll(WAIT, "the window's number in its log", || {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let line = text.lines().rfind(|l| l.contains("the server numbers this window"))?;
            let digits = line.rsplit("window=").next()?;
            digits.trim().trim_matches(|c: char| !c.is_ascii_digit()).parse().ok()
        })
    }

    /// Every pane of the server as `berth ls --json` shows it.
    fn panes(&self) -> Vec<Value> {
        crate::support::panes_of(&self.server.list())
    }

    fn first_pane(&self) -> String {
        self.panes()[0]["id"].as_str().expect("a pane id").to_owned()
    }

    /// The window's pixels as the X server holds them.
    pub(crate) fn grab(&self, index: usize) -> Image {
        grab(&self.display, &self.window_id(index)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Text OCR reads in a window's image.
    fn read_window(&self, index: usize, name: &str) -> String {
        let image = self.grab(index);
        ocr(&image, self.server.root.path(), name, image.height, "6")
    }

    /// Waits until OCR of window `index` reads `text`.
    pub(crate) fn wait_window_text(&self, index: usize, text: &str) {
        let mut last = String::new();
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            last = self.read_window(index, &format!("w{index}"));
            if last.replace(' ', "").contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        if let Some(dir) = std::env::var_os("BERTH_E2E_SHOTS") {
            let name = format!("w{index}.x3.png");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::copy(self.server.root.path().join(&name), Path::new(&dir).join(name));
        }
        let ids: Vec<String> = self.windows.iter().map(|(_, id)| id.clone()).collect();
        let all = run_tool(&self.display, "xdotool", &["search", "--name", "Berth"]);
        panic!("window {index} never showed {text:?}; OCR read:\n{last}\nids {ids:?}, all {all:?}");
    }

    /// Closes window `index` as a user does (the window manager's close: WM_DELETE_WINDOW)
    /// and waits for its process to end.
    pub(crate) fn close(&mut self, index: usize) {
        let id = self.window_id(index);
        request_close(&self.display, &id).unwrap_or_else(|e| panic!("{e}"));
        let window = &mut self.windows[index].0;
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Ok(Some(status)) = window.child.try_wait() {
                break status;
            }
            assert!(Instant::now() < deadline, "the window did not close");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "the window ended with {status}");
    }
}

/// Asks a window to close as a window manager does: a `WM_DELETE_WINDOW` client message
/// (xdotool's windowclose destroys the window instead).
fn request_close(display: &str, window: &str) -> Result<(), String> {
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};
    let (conn, _) = x11rb::connect(Some(display)).map_err(|e| format!("X connect: {e}"))?;
    let id: u32 = window.trim().parse().map_err(|e| format!("window id {window:?}: {e}"))?;
    let atom = |name: &[u8]| -> Result<u32, String> {
        Ok(conn
            .intern_atom(false, name)
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| e.to_string())?
            .atom)
    };
    let (protocols, delete) = (atom(b"WM_PROTOCOLS")?, atom(b"WM_DELETE_WINDOW")?);
    let event = ClientMessageEvent::new(32, id, protocols, [delete, 0, 0, 0, 0]);
    conn.send_event(false, id, EventMask::NO_EVENT, event).map_err(|e| e.to_string())?;
    // A round trip: the X server has handled the event before this connection closes.
    conn.get_input_focus().map_err(|e| e.to_string())?.reply().map_err(|e| e.to_string())?;
    Ok(())
}

/// A window's pixels read with GetImage (24-bit TrueColor: BGRX in memory).
fn grab(display: &str, window: &str) -> Result<Image, String> {
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat};
    let (conn, _) = x11rb::connect(Some(display)).map_err(|e| format!("X connect: {e}"))?;
    let id: u32 = window.trim().parse().map_err(|e| format!("window id {window:?}: {e}"))?;
    let geometry = conn
        .get_geometry(id)
        .map_err(|e| e.to_string())?
        .reply()
        .map_err(|e| format!("geometry: {e}"))?;
    let (w, h) = (geometry.width, geometry.height);
    let image = conn
        .get_image(ImageFormat::Z_PIXMAP, id, 0, 0, w, h, !0)
        .map_err(|e| e.to_string())?
        .reply()
        .map_err(|e| format!("get_image: {e}"))?;
    let bytes_per_pixel = image.data.len() / (usize::from(w) * usize::from(h)).max(1);
    if bytes_per_pixel != 4 {
        return Err(format!("unexpected image format: {bytes_per_pixel} bytes per pixel"));
    }
    conn.flush().map_err(|e| e.to_string())?;
    let pixels = image.data.chunks_exact(4).map(|p| [p[2], p[1], p[0]]).collect();
    Ok(Image { width: u32::from(w), height: u32::from(h), pixels })
}

/// `berth review TASK` on a headless server with two attached windows: the one focused last
/// opens the view (over its own socket connections: an attached window has no Store), shows
/// the hunk's colours, and its merge key merges the task; the view closes. The other window
/// never opens it (regression: every attached window did).
fn an_attached_window_opens_the_review_view(a: &mut Attached) {
    use super::review::{buttons_shown, completed_task, diff_colours, Area};
    let other = a.open(&[]);
    let index = a.open(&[]);
    // Side by side, so that neither hides the other (a hidden window is not drawn).
    for (i, x) in [(other, "0"), (index, "640")] {
        let id = a.window_id(i);
        a.xdotool(&["windowsize", &id, "620", "400"]);
        a.xdotool(&["windowmove", &id, x, "0"]);
    }
    let repo = super::support::git::repo(&a.server, "attached", &[("a.txt", b"one\ntwo\n")]);
    let id = completed_task(&a.server, &repo, "attached-review", "printf 'one\\nTWO\\n' > a.txt");
    // The window focused last is the server's window used last once it has said so.
    let window = a.window_id(index);
    a.xdotool(&["windowfocus", "--sync", &a.window_id(other)]);
    a.xdotool(&["windowfocus", "--sync", &window]);
    let number = a.window_number(index);
    poll(WAIT, "the focused window to be the one used last", || {
        let info = a.server.call("server.info", serde_json::json!({}));
        (info["active_window"] == number).then_some(())
    });
    let out = a.server.berth_ok(&["review", &id]);
    assert!(out.contains("opened in 1 window"), "{out}");
    poll(WAIT, "the attached window's review view with a red and a green row", || {
        let image = a.grab(index);
        let area = Area::on(&a.server, &image);
        let (green, red) = diff_colours(&image, &area);
        (buttons_shown(&image, &area) && green > 300 && red > 300).then_some(())
    });
    // Each window logs the review views it opens (the other's pixels cannot tell: its pane
    // headers may have the buttons' colours).
    let opened = |i: usize| a.log_text(i).contains("opening a task's review view");
    assert!(opened(index), "the window that showed the view did not log it");
    a.xdotool(&["key", "m"]);
    poll(WAIT, "the task merged from the attached window", || {
        let shown: Value =
            serde_json::from_str(&a.server.berth_ok(&["task", "show", &id, "--json"])).ok()?;
        (shown["disposition"]["outcome"] == "merged").then_some(())
    });
    poll(WAIT, "the attached window's view closed", || {
        let image = a.grab(index);
        (!buttons_shown(&image, &Area::on(&a.server, &image))).then_some(())
    });
    assert!(!opened(other), "the other window opened the view too");
    a.close(index);
    a.close(other);
}

/// Pixels that differ between two images of the same size, below the chrome rows.
fn differing(a: &Image, b: &Image) -> usize {
    assert_eq!((a.width, a.height), (b.width, b.height), "the windows differ in size");
    let skip = (CHROME_PX * a.width) as usize;
    a.pixels[skip..].iter().zip(&b.pixels[skip..]).filter(|(x, y)| x != y).count()
}

// ---- the cases ----

/// `berth server` running → `berth` attaches; typed text runs in the pane and reads back with
/// `berth read`; the window closed → the pane is still LIVE; a new window shows the same
/// screen.
fn attaches_types_and_outlives_the_window(a: &mut Attached) {
    let first = a.open(&[]);
    let id = a.window_id(first);
    a.xdotool(&["windowfocus", "--sync", &id]);
    a.xdotool(&["type", "--delay", "20", "clear; echo WIND\"\"OWONE"]);
    a.xdotool(&["key", "Return"]);
    let pane = a.first_pane();
    a.server.wait_text(&pane, "WINDOWONE", WAIT);
    a.wait_window_text(first, "WINDOWONE");
    // Nothing moves on screen any more (the cursor does not blink by default).
    std::thread::sleep(Duration::from_millis(500));
    let before = a.grab(first);
    assert!(before.distinct_colours() > 2, "the attached window is blank");

    a.close(first);
    let panes = a.panes();
    assert!(!panes.is_empty() && panes.iter().all(|p| p["state"] == "LIVE"), "{panes:?}");
    assert!(alive(a.server.pid()), "the server ended with the window");

    let second = a.open(&["attach"]);
    let id = a.window_id(second);
    a.xdotool(&["windowfocus", "--sync", &id]);
    let after = poll(WAIT, "the same screen in the new window", || {
        std::thread::sleep(Duration::from_millis(200));
        // The window may not be drawable yet right after it maps.
        let after = grab(&a.display, &a.window_id(second)).ok()?;
        (differing(&before, &after) == 0).then_some(after)
    });
    assert_eq!(after.width, before.width);
}

/// Regression: an attached window has no Store of its own and its sidebar listed no tasks.
/// Now it reads the task list from the server: a task started on a temp repo (stub agent)
/// shows as `working` in the attached window's sidebar (OCR of its rows, pixels from the X
/// server), and `completed` after `berth task report`.
fn an_attached_windows_sidebar_lists_tasks(a: &mut Attached) {
    let repo = crate::support::git::repo(&a.server, "attachrepo", &[("a.txt", b"a\n")]);
    let (id, ws) = crate::sidebar::start_stub_task(&a.server, &repo, "attachtask");
    // A second workspace, so the sidebar shows (`auto`).
    let shell = a.server.berth_ok(&["new", "--workspace", "second", "--", "bash", "--norc"]);
    let window = a.open(&[]);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let task = crate::sidebar::wait_task_state(&a.server, &id, "working");
        crate::sidebar::focus_worker(&a.server, &task);
        let (dir, win) = (a.server.root.path().to_path_buf(), a.window_id(window));
        let grab = || grab(&a.display, &win).ok();
        let row =
            crate::sidebar::wait_sidebar_row(&dir, "attach-task", &["attachtask", "working"], grab);
        println!("attached sidebar: the task's row: {row:?}");
        let report = ["task", "report", "--task", &id, "--status", "completed", "--summary", "ok"];
        a.server.berth_ok(&report);
        let done = crate::sidebar::wait_sidebar_row(
            &dir,
            "attach-task",
            &["attachtask", "completed"],
            grab,
        );
        println!("attached sidebar: after the report: {done:?}");
    }));
    crate::sidebar::end_stub_task(&a.server, &id, &ws);
    let _ = a.server.berth(&["close", shell.trim()]);
    a.close(window);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// `kill -9` of an attached window: every pane is still LIVE, none lost.
fn kill_9_of_an_attached_window_loses_nothing(a: &mut Attached) {
    let index = a.windows.len() - 1;
    let pane = a.first_pane();
    a.server.berth_ok(&["split", &pane, "--right"]);
    let panes = poll(WAIT, "two panes", || {
        let panes = a.panes();
        (panes.len() >= 2).then_some(panes)
    });
    a.kill_9(index);
    std::thread::sleep(Duration::from_millis(300));
    let after = a.panes();
    assert_eq!(after.len(), panes.len(), "{after:?}");
    assert!(after.iter().all(|p| p["state"] == "LIVE"), "{after:?}");
    assert!(alive(a.server.pid()), "the server ended with the window");
}

/// Two windows on one server both show a line printed after both attached.
fn two_windows_show_the_same_output(a: &mut Attached) {
    let one = a.open(&[]);
    let two = a.open(&["attach"]);
    // Both have drawn their first frames before they are moved.
    std::thread::sleep(Duration::from_secs(1));
    // Side by side, so neither hides the other's pixels.
    for (index, x) in [(one, "0"), (two, "640")] {
        let id = a.window_id(index);
        a.xdotool(&["windowsize", &id, "620", "400"]);
        a.xdotool(&["windowmove", &id, x, "0"]);
    }
    let pane = a.first_pane();
    a.server.berth_ok(&["send", &pane, "--enter", "clear; echo BOTH\"\"SHOWN"]);
    a.server.wait_text(&pane, "BOTHSHOWN", WAIT);
    a.wait_window_text(one, "BOTHSHOWN");
    a.wait_window_text(two, "BOTHSHOWN");
}

/// The size of the tab both windows show: `(cols, rows)`.
fn tab_size(a: &Attached) -> (u64, u64) {
    let list = a.server.list();
    let size = &list["workspaces"][0]["tabs"][0]["size"];
    (size["cols"].as_u64().unwrap_or(0), size["rows"].as_u64().unwrap_or(0))
}

/// Two windows of different sizes on one tab: the tab takes the size of the window used
/// last (resized, focused, typed in), and the other does not take it back on its own.
fn the_tab_follows_the_latest_active_window(a: &mut Attached) {
    let (one, two) = (a.windows.len() - 2, a.windows.len() - 1);
    let same = tab_size(a);
    a.xdotool(&["windowsize", &a.window_id(one), "500", "300"]);
    let smaller = poll(WAIT, "the tab to take the resized window's size", || {
        let size = tab_size(a);
        (size != same).then_some(size)
    });
    assert!(smaller.0 < same.0 && smaller.1 < same.1, "{smaller:?} after {same:?}");
    // The other window, bigger, draws the tab padded and does not fight for its size, not
    // even while output makes both draw again.
    let pane = a.first_pane();
    for i in 0..5 {
        a.server.berth_ok(&["send", &pane, "--enter", &format!("echo redraw-{i}")]);
        a.server.wait_text(&pane, &format!("redraw-{i}"), WAIT);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(tab_size(a), smaller, "the other window took the size back unasked");
    a.xdotool(&["windowfocus", "--sync", &a.window_id(two)]);
    poll(WAIT, "the tab to take the focused window's size", || (tab_size(a) == same).then_some(()));
}

/// A window stopped (SIGSTOP) for 10 s while a pane prints 50 MB: the server's memory stays
/// bounded, and after SIGCONT the window shows the final screen.
fn a_stopped_window_does_not_hold_the_server(a: &mut Attached) {
    let index = a.windows.len() - 1;
    let pane = a.first_pane();
    let server = a.server.pid();
    let baseline = rss_kib(server);
    let window = nix::unistd::Pid::from_raw(a.windows[index].0.pid());
    nix::sys::signal::kill(window, nix::sys::signal::Signal::SIGSTOP).expect("SIGSTOP");
    let started = Instant::now();
    a.server.berth_ok(&[
        "send",
        &pane,
        "--enter",
        "clear; yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789 | head -c 50000000; echo; echo FIN\"\"ISHED",
    ]);
    let mut peak = baseline;
    let mut printed = None;
    while started.elapsed() < Duration::from_secs(10) || printed.is_none() {
        peak = peak.max(rss_kib(server));
        if printed.is_none() && a.server.screen(&pane).contains("FINISHED") {
            printed = Some(started.elapsed());
        }
        assert!(started.elapsed() < Duration::from_secs(180), "the 50 MB never finished");
        std::thread::sleep(Duration::from_millis(100));
    }
    let growth = peak.saturating_sub(baseline);
    eprintln!(
        "e2e_window: attached window stopped: server RSS {baseline} KiB before, peak {peak} KiB \
         (+{growth} KiB) while a pane printed 50 MB in {:.1} s",
        printed.unwrap_or_default().as_secs_f64()
    );
    nix::sys::signal::kill(window, nix::sys::signal::Signal::SIGCONT).expect("SIGCONT");
    // Bounded: the scrollback's worth, not the 50 MB (nor a queue of frames).
    assert!(growth < 96 * 1024, "the server grew by {growth} KiB while the window was stopped");
    a.wait_window_text(index, "FINISHED");
}

/// A Unix socket proxy that delays every byte by `delay` each way: a slow link between an
/// attached window and its server. Runs until the process ends.
fn delay_proxy(listen: &Path, upstream: &Path, delay: Duration) {
    use std::io::{Read as _, Write as _};
    use std::os::unix::net::{UnixListener, UnixStream};
    let listener = UnixListener::bind(listen).expect("bind the proxy");
    let upstream = upstream.to_path_buf();
    let pipe = move |mut from: UnixStream, mut to: UnixStream| {
        let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
        std::thread::spawn(move || {
            let mut buf = vec![0; 64 << 10];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 || tx.send((Instant::now() + delay, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        std::thread::spawn(move || {
            while let Ok((due, bytes)) = rx.recv() {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                if to.write_all(&bytes).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(std::net::Shutdown::Both);
        });
    };
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = UnixStream::connect(&upstream) else { continue };
            let (Ok(client2), Ok(server2)) = (client.try_clone(), server.try_clone()) else {
                continue;
            };
            pipe(client, server);
            pipe(server2, client2);
        }
    });
}

/// Over a link that adds 50 ms each way, fast typing arrives whole and in order, and the
/// window shows the output once it stops.
///
/// The typing goes to a shell in a tab of its own, shown alone: the first tab still holds
/// the earlier cases' panes, one of them full of the 50 MB case's lines, and OCR of a window
/// showing those (regression) read the previous case's screen and took over 10 s a read on a
/// loaded machine, so the first read (of a frame from before the last one came over the
/// link) could use up the whole wait.
fn a_slow_link_keeps_typing_correct(a: &mut Attached) {
    let proxy = a.server.root.path().join("slow.sock");
    delay_proxy(&proxy, &a.server.socket, Duration::from_millis(50));
    let proxy = proxy.to_str().expect("temp paths are UTF-8").to_owned();
    let pane = a.server.berth_ok(&["new", "--", "bash", "--norc"]).trim().to_owned();
    a.server.berth_ok(&["focus", &pane]);
    let index = a.open(&["--socket", &proxy, "attach"]);
    let id = a.window_id(index);
    a.xdotool(&["windowraise", &id]);
    a.xdotool(&["windowfocus", "--sync", &id]);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        type_over_the_slow_link(a, index, &pane);
    }));
    // The cases after this one use the first tab again.
    a.server.berth_ok(&["close", &pane]);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// Types a command with a checksum of every key into `pane` through window `index`; the
/// pane prints it, and the window shows it.
fn type_over_the_slow_link(a: &Attached, index: usize, pane: &str) {
    // Every key counts and their order too: the pane prints a checksum of what arrived.
    let keys = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let sum = std::process::Command::new("sh")
        .args(["-c", &format!("printf %s {keys} | cksum")])
        .output()
        .expect("cksum");
    let sum = String::from_utf8_lossy(&sum.stdout).trim().to_owned();
    let typed = format!("echo SLOW\"\"LINK $(printf %s {keys} | cksum)");
    a.xdotool(&["type", "--delay", "5", &format!("clear; {typed}")]);
    a.xdotool(&["key", "Return"]);
    let want = format!("SLOWLINK {sum}");
    let deadline = Instant::now() + WAIT;
    while !a.server.screen(pane).contains(&want) {
        assert!(Instant::now() < deadline, "typed over the slow link:\n{}", a.server.screen(pane));
        std::thread::sleep(Duration::from_millis(100));
    }
    a.wait_window_text(index, "SLOWLINK");
}

/// The wheel scrolls an attached window's own view of a pane through the scrollback (the
/// server sends the rows at that offset); a key brings it back to the live screen.
fn the_wheel_scrolls_an_attached_window_back(a: &mut Attached) {
    let index = a.windows.len() - 1;
    let id = a.window_id(index);
    a.xdotool(&["windowraise", &id]);
    let pane = a.first_pane();
    let print = "clear; echo FIRST''LINE; seq 2 149 | sed s/^/SCROLL/; echo LAST''LINE";
    a.server.berth_ok(&["send", &pane, "--enter", print]);
    a.server.wait_text(&pane, "LASTLINE", WAIT);
    a.wait_window_text(index, "LASTLINE");
    // The first pane is the left one; the pointer goes over it.
    a.xdotool(&["mousemove", "--window", &id, "100", "200"]);
    for _ in 0..60 {
        a.xdotool(&["click", "4"]);
    }
    a.wait_window_text(index, "FIRSTLINE");
    a.xdotool(&["windowfocus", "--sync", &id]);
    a.xdotool(&["mousemove", "--window", &id, "100", "200"]);
    a.xdotool(&["click", "1"]);
    a.xdotool(&["key", "space"]);
    a.wait_window_text(index, "LASTLINE");
}

/// Key encoding in an attached window follows the modes the frames carry: a program that
/// pushed the kitty keyboard protocol's flag 1 gets Shift+Enter as `CSI 13;2u`.
fn an_attached_window_encodes_keys_by_the_frames_modes(a: &mut Attached) {
    const READER: &str = "stty raw -echo; printf '\\033[>1u'; printf 'KITTY''READY\\r\\n'; \
        got=$(timeout --foreground 60 head -c 7 | od -An -tx1 | tr -d ' \\n'); printf '\\033[<u'; \
        stty sane; echo \"kitty-got $got\"; exec sleep 600";
    let index = a.windows.len() - 1;
    let id = a.window_id(index);
    let pane = a.server.berth_ok(&["new", "--", "sh", "-c", READER]).trim().to_owned();
    a.server.wait_text(&pane, "KITTYREADY", WAIT);
    a.server.berth_ok(&["focus", &pane]);
    a.xdotool(&["windowraise", &id]);
    // The window shows the reader's pane, so it holds a frame with the reader's modes.
    a.wait_window_text(index, "KITTYREADY");
    a.xdotool(&["windowfocus", "--sync", &id]);
    a.xdotool(&["key", "shift+Return"]);
    // ESC [ 1 3 ; 2 u
    a.server.wait_text(&pane, "kitty-got 1b5b31333b3275", WAIT);
    a.server.berth_ok(&["close", &pane]);
}

/// The last window still running, or a new one when none is (the cases below also run
/// alone).
fn live_window(a: &mut Attached) -> usize {
    let live = a.windows.iter_mut().rposition(|(w, _)| matches!(w.child.try_wait(), Ok(None)));
    match live {
        Some(index) => index,
        None => a.open(&["attach"]),
    }
}

/// Starts a pane in a tab of its own running `script` (then sleeping), shows it in window
/// `index` and waits until the server's screen has `ready`; returns the pane's id.
fn show_program(a: &Attached, index: usize, script: &str, ready: &str) -> String {
    let script = format!("{script}; exec sleep 600");
    let pane = a.server.berth_ok(&["new", "--", "sh", "-c", &script]).trim().to_owned();
    a.server.wait_text(&pane, ready, WAIT);
    a.server.berth_ok(&["focus", &pane]);
    let id = a.window_id(index);
    a.xdotool(&["windowraise", &id]);
    a.xdotool(&["windowfocus", "--sync", &id]);
    pane
}

/// Text selected by a mouse drag in an attached window (whose rows are frames from the
/// server, not a terminal of its own) is what the release puts on the primary selection
/// (from the rows the window holds) and, after output scrolled those rows away, what
/// Ctrl+Shift+C puts on the clipboard (the lines read from the server): pasted with
/// Shift+Insert and Ctrl+Shift+V into a program that reads two lines, exactly that text
/// arrives twice.
fn a_drag_in_an_attached_window_copies_exactly_the_text(a: &mut Attached) {
    let index = live_window(a);
    let id = a.window_id(index);
    // The word in pure green, so its cells are found by colour; no cursor.
    let print = r"printf '\033[?25l\033[2J\033[6;4Hleft \033[38;2;0;255;0mDRAG''SELECT\033[0m right'; \
        read -r _; seq 1 100 | sed s/^/after-/";
    let pane = show_program(a, index, print, "DRAGSELECT");
    let green = |[r, g, b]: [u8; 3]| g > 200 && r < 90 && b < 90;
    let (x0, y0, x1, y1) = poll(WAIT, "the green word in the attached window", || {
        let image = grab(&a.display, &id).ok()?;
        crate::bounding_box(&image, CHROME_PX, green)
    });
    let y = ((y0 + y1) / 2).to_string();
    a.xdotool(&["mousemove", "--window", &id, &(x0.saturating_sub(2)).to_string(), &y]);
    a.xdotool(&["mousedown", "1"]);
    a.xdotool(&["mousemove", "--window", &id, &((x0 + x1) / 2).to_string(), &y]);
    a.xdotool(&["mousemove", "--window", &id, &(x1 + 2).to_string(), &y]);
    a.xdotool(&["mouseup", "1"]);
    // Output scrolls the selected row out of every frame the window gets.
    a.server.berth_ok(&["send", &pane, "--keys", "Enter"]);
    a.server.wait_text(&pane, "after-100", WAIT);
    a.wait_window_text(index, "after-");
    a.xdotool(&["key", "ctrl+shift+c"]);
    // A program that reads two lines gets the primary selection's text and the clipboard's.
    let reader = show_program(
        a,
        index,
        r#"printf 'paste-here\n'; IFS= read -r p; IFS= read -r c; printf 'GOT[%s][%s]\n' "$p" "$c""#,
        "paste-here",
    );
    a.wait_window_text(index, "paste-here");
    a.xdotool(&["key", "shift+Insert"]);
    a.xdotool(&["key", "Return"]);
    a.xdotool(&["key", "ctrl+shift+v"]);
    a.xdotool(&["key", "Return"]);
    a.server.wait_text(&reader, "GOT[", WAIT);
    let screen = a.server.screen(&reader);
    let got = screen.lines().find(|l| l.starts_with("GOT[")).unwrap_or_default().to_owned();
    assert_eq!(got, "GOT[DRAGSELECT][DRAGSELECT]", "the selections held something else:\n{screen}");
    a.server.berth_ok(&["close", &reader]);
    a.server.berth_ok(&["close", &pane]);
}

/// Ctrl+Shift+F in an attached window finds a word printed far up in the scrollback, rows
/// the window does not hold (the server searches): the view scrolls there and the match is
/// highlighted in the current match's colour; Esc takes the highlight away.
fn search_in_an_attached_window_scrolls_to_a_match_it_did_not_hold(a: &mut Attached) {
    let index = live_window(a);
    let id = a.window_id(index);
    // Palette::dark()'s search_match and search_current.
    let highlight = |p: [u8; 3]| p == [0xc8, 0xa2, 0x4a] || p == [0xff, 0x8c, 0x1a];
    let current = |p: [u8; 3]| p == [0xff, 0x8c, 0x1a];
    let print = r"printf 'FAR''NEEDLE\n'; seq 1 300 | sed s/^/filler-/; printf 'search-ready\n'";
    let pane = show_program(a, index, print, "search-ready");
    // The tab may be taller than this window (another window sized it): the bottom rows can
    // be clipped, so the window is known to show the pane by a line above them.
    a.wait_window_text(index, "filler-29");
    let before = a.grab(index);
    assert_eq!(before.count(highlight), 0, "search colours before any search");
    assert!(!a.read_window(index, "before-search").contains("NEEDLE"), "the word is on view");
    a.xdotool(&["key", "ctrl+shift+f"]);
    a.xdotool(&["type", "--delay", "20", "FARNEEDLE"]);
    let cur = poll(WAIT, "the match far up highlighted in the attached window", || {
        let image = grab(&a.display, &id).ok()?;
        let cur = image.count(current);
        // Nine cells of the current match's colour, most of each cell's pixels.
        (cur > 9 * 60).then_some(cur)
    });
    // The view is at the match: the filler's first lines show too.
    a.wait_window_text(index, "filler-1");
    assert!(!a.server.screen(&pane).contains("FARNEEDLEFARNEEDLE"), "typed into the pane");
    a.xdotool(&["key", "Escape"]);
    poll(WAIT, "no highlights after Esc", || {
        let image = grab(&a.display, &id).ok()?;
        (image.count(highlight) == 0).then_some(())
    });
    eprintln!("e2e_window: attached search highlighted {cur} px of the current match");
    a.server.berth_ok(&["close", &pane]);
}

/// Ctrl+click on a URL in an attached window runs the opener with it (as in the embedded
/// window), and so does Ctrl+click on an OSC 8 hyperlink, whose target only the server knew.
fn ctrl_click_in_an_attached_window_opens_links(a: &mut Attached) {
    crate::write_opener_stub(a.server.root.path()).unwrap_or_else(|e| panic!("{e}"));
    let opener = a.server.root.path().join(crate::OPENER_STUB);
    let index = a.open_env(&["attach"], &[("BERTH_OPENER", opener.as_os_str())]);
    let id = a.window_id(index);
    let opened = a.server.root.path().join(crate::OPENED_FILE);
    // (the link, what prints it, what the window then shows, spaces left out).
    let cases = [
        (
            "https://example.org/berth-attach",
            "for i in $(seq 80); do echo https://example.org/berth-attach; done",
            "example.org/berth-attach",
        ),
        (
            "https://osc8.example/attach",
            r"for i in $(seq 80); do printf '\033]8;;https://osc8.example/attach\033\\CLICK ME HERE\033]8;;\033\\\n'; done",
            "CLICKMEHERE",
        ),
    ];
    for (url, print, shown) in cases {
        let pane = show_program(a, index, &format!("{print}; echo link-$((6*7))"), "link-42");
        a.wait_window_text(index, shown);
        let _ = std::fs::remove_file(&opened);
        let y = (crate::window_height(&a.display, &id) / 2).to_string();
        a.xdotool(&["mousemove", "--window", &id, "49", &y]);
        a.xdotool(&["keydown", "ctrl"]);
        a.xdotool(&["mousemove", "--window", &id, "50", &y]);
        a.xdotool(&["click", "1"]);
        a.xdotool(&["keyup", "ctrl"]);
        let text = poll(WAIT, "the opener to be run with the link", || {
            std::fs::read_to_string(&opened).ok().filter(|t| t.contains(url))
        });
        assert_eq!(text.trim(), url, "the opener got exactly the link, once");
        a.server.berth_ok(&["close", &pane]);
    }
    a.close(index);
}

/// The forwarder the fake `ssh` runs: a Unix socket at argv[1] piped to the one at argv[2].
const FORWARDER: &str = r#"
import socket, sys, threading
local, remote = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX)
srv.bind(local)
srv.listen(8)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
while True:
    c, _ = srv.accept()
    u = socket.socket(socket.AF_UNIX)
    u.connect(remote)
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
"#;

/// A fake `ssh` first on PATH: logs its argv, runs a remote command here (so `berth
/// server-info --socket-path` really runs), and performs `-L LOCAL:REMOTE` with a local
/// forwarder, writing its pid. No network: the "remote" server is this test's.
fn fake_ssh(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map_err(|e| format!("python3 (the fake ssh's forwarder) is needed: {e}"))?;
    let python = String::from_utf8_lossy(&python.stdout).trim().to_owned();
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("forwarder.py"), FORWARDER).map_err(|e| e.to_string())?;
    let script = format!(
        r#"#!/bin/bash
printf '%s\n' "$*" >> '{dir}/argv'
spec=
while [ $# -gt 0 ]; do
  case "$1" in
    -p|-o) shift 2 ;;
    -L) spec=$2; shift 2 ;;
    -N) shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
shift # the destination
if [ $# -gt 0 ]; then exec "$@"; fi
echo $$ > '{dir}/forward.pid'
exec '{python}' '{dir}/forwarder.py' "${{spec%%:*}}" "${{spec#*:}}"
"#,
        dir = dir.display()
    );
    let ssh = dir.join("ssh");
    std::fs::write(&ssh, script).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(crate::support::berth_bin(), dir.join("berth"))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// `berth attach ssh://tester@localhost:2222` asks the remote berth for its socket, forwards
/// a local socket to it with `ssh -N -o ExitOnForwardFailure=yes -L`, attaches, and ends the
/// forward when the window closes (and when it is killed: PR_SET_PDEATHSIG).
fn attach_over_ssh_forwards_and_tears_down(a: &mut Attached) {
    let bin = a.server.root.path().join("fake-ssh");
    fake_ssh(&bin).unwrap_or_else(|e| panic!("{e}"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.clone()];
    paths.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(paths).expect("PATH");
    let index = a.open_env(&["attach", "ssh://tester@localhost:2222"], &[("PATH", &path)]);
    let argv = std::fs::read_to_string(bin.join("argv")).unwrap_or_default();
    let lines: Vec<&str> = argv.lines().collect();
    let remote = a.server.socket.display().to_string();
    assert_eq!(lines.len(), 2, "{argv}");
    assert_eq!(
        lines[0], "-p 2222 -o BatchMode=yes -- tester@localhost berth server-info --socket-path",
        "{argv}"
    );
    let forward = lines[1];
    assert!(
        forward.starts_with("-p 2222 -N -o ExitOnForwardFailure=yes -L ")
            && forward.ends_with(&format!(":{remote} -- tester@localhost")),
        "{argv}"
    );
    let local = forward
        .split(' ')
        .nth(6)
        .and_then(|spec| spec.split(':').next())
        .map(std::path::PathBuf::from)
        .expect("the local socket");
    assert!(local != a.server.socket && local.exists(), "{argv}");
    let forward_pid = |bin: &Path| -> i32 {
        let text = std::fs::read_to_string(bin.join("forward.pid")).unwrap_or_default();
        text.trim().parse().expect("the forward's pid")
    };
    let pid = forward_pid(&bin);
    assert!(alive(pid), "the forward is not running");
    // The window works through it.
    let id = a.window_id(index);
    a.xdotool(&["windowraise", &id]);
    let pane = a.first_pane();
    a.server.berth_ok(&["send", &pane, "--enter", "clear; echo OVER\"\"SSH"]);
    a.server.wait_text(&pane, "OVERSSH", WAIT);
    a.wait_window_text(index, "OVERSSH");

    a.close(index);
    assert!(!alive(pid), "the forward outlived the window");
    assert!(!local.exists(), "the forward's socket is left at {}", local.display());
    assert!(alive(a.server.pid()), "the server ended with the window");

    // kill -9 of the window: the forward goes too.
    std::fs::remove_file(bin.join("forward.pid")).expect("the pid file");
    let index = a.open_env(&["attach", "ssh://tester@localhost:2222"], &[("PATH", &path)]);
    let pid = forward_pid(&bin);
    a.kill_9(index);
    poll(WAIT, "the forward ending with the killed window", || (!alive(pid)).then_some(()));
    let panes = a.panes();
    assert!(panes.iter().all(|p| p["state"] == "LIVE"), "{panes:?}");
}

/// `server = "standalone"` with no server running: `berth` starts `berth server` as a process
/// of its own and attaches; `kill -9` of the window leaves the pane running; `berth` brings
/// it back LIVE on the same server.
fn standalone_mode_outlives_a_killed_window() -> Result<(), String> {
    let server = TestServer::prepare();
    let (_xvfb, display) = start_xvfb(server.root.path())?;
    let config = server.root.path().join("config.toml");
    std::fs::write(&config, "server = \"standalone\"\n").map_err(|e| e.to_string())?;
    // The detached server is not this test's child: whatever happens, the one answering on
    // the socket is stopped by pid at the end.
    struct StopAtEnd(std::path::PathBuf);
    impl Drop for StopAtEnd {
        fn drop(&mut self) {
            let Ok(mut client) = berth_server::client::Client::connect(&self.0) else { return };
            let Ok(info) = client.call("server.info", serde_json::json!({})) else { return };
            let Some(pid) = info["pid"].as_i64().and_then(|p| i32::try_from(p).ok()) else {
                return;
            };
            let target = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(target, nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            while alive(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if alive(pid) {
                let _ = nix::sys::signal::kill(target, nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
    let mut world = Attached { windows: Vec::new(), server, _xvfb, display };
    // Declared after the world, so dropped before its temp dirs (and the socket) go.
    let _stop = StopAtEnd(world.server.socket.clone());
    let first = world.open(&[]);
    let log =
        std::fs::read_to_string(world.server.root.path().join("window0.log")).unwrap_or_default();
    assert!(log.contains("started a standalone server"), "{log}");
    let info = world.server.call("server.info", serde_json::json!({}));
    let pid = i32::try_from(info["pid"].as_i64().unwrap_or(0)).unwrap_or(0);
    let window_pid = world.windows[first].0.pid();
    assert!(pid > 0 && pid != window_pid, "the server runs in the window's process: {info}");
    // The server leads a session of its own (field 6 of /proc/PID/stat is the session id).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let session = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(3));
    assert_eq!(session, Some(pid.to_string().as_str()), "the server's session: {stat}");

    let pane = world.first_pane();
    world.server.berth_ok(&["send", &pane, "--enter", "echo agent-$((40+2)); sleep 600"]);
    world.server.wait_text(&pane, "agent-42", WAIT);
    let window = &mut world.windows[first].0;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(window.pid()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .map_err(|e| e.to_string())?;
    let _ = window.child.wait();
    assert!(alive(pid), "the standalone server died with the window");
    let sleeping = world.server.pids_matching("sleep 600");
    assert_eq!(sleeping.len(), 1, "the pane's program does not run on: {sleeping:?}");

    let again = world.open(&[]);
    let log = std::fs::read_to_string(world.server.root.path().join(format!("window{again}.log")))
        .unwrap_or_default();
    assert!(!log.contains("started a standalone server"), "a second server was started: {log}");
    let info = world.server.call("server.info", serde_json::json!({}));
    assert_eq!(info["pid"].as_i64(), Some(i64::from(pid)), "another server answers");
    let panes = world.panes();
    assert!(panes.iter().any(|p| p["id"] == pane.as_str() && p["state"] == "LIVE"), "{panes:?}");
    world.wait_window_text(again, "agent-42");
    Ok(())
}

/// A notification raised on a server reached by an attached window reaches this desktop
/// exactly once: a server that cannot show it (no notification service answers it, as on a
/// remote machine) names the window, which shows it on its own session bus, and a click on
/// it focuses the pane; a server that shows it itself is not doubled by the window.
fn remote_notifications_reach_this_desktop_once() -> Result<(), String> {
    use berth_server::dbus::testing::PrivateBus;
    use berth_server::notifications::desktop::testing::FakeNotificationServer;
    let bus = PrivateBus::start().map_err(|e| format!("a private dbus-daemon: {e}"))?;
    let fake = FakeNotificationServer::start(bus.address())
        .map_err(|e| format!("the fake notification server: {e:?}"))?;
    let address = std::ffi::OsString::from(bus.address());
    for (case, server_bus) in [("remote", None), ("local", Some(bus.address()))] {
        let prepared = TestServer::prepare().with_env("BERTH_LOGIND", "0");
        // No notification service answers the "remote" server: nothing listens there.
        let dead = format!("unix:path={}", prepared.root.path().join("no-bus").display());
        let server =
            prepared.with_env("DBUS_SESSION_BUS_ADDRESS", server_bus.unwrap_or(&dead)).launch();
        let (xvfb, display) = start_xvfb(server.root.path())?;
        let mut world = Attached { windows: Vec::new(), server, _xvfb: xvfb, display };
        world.open_env(&["attach"], &[("DBUS_SESSION_BUS_ADDRESS", &address)]);
        let pane = world.first_pane();
        // Another tab in front: the first pane is out of sight, so its notifications are for
        // the desktop whether or not the window has the focus.
        world.server.berth_ok(&["new", "--", "bash", "--norc"]);
        let seen = |prefix: &str| -> Vec<_> {
            fake.calls().into_iter().filter(|c| c.summary.starts_with(prefix)).collect()
        };
        // Until the window has told the server it shows the other tab, a notification may be
        // stored read (the window was looking at its pane); each try has its own title.
        let mut shown = None;
        for i in 0..10 {
            let title = format!("{case}-{i}");
            world.server.berth_ok(&[
                "send",
                &pane,
                "--enter",
                &format!(r"printf '\e]9;{title}\a'"),
            ]);
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline && seen(&format!("{case}-")).is_empty() {
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(call) = seen(&format!("{case}-")).into_iter().next() {
                shown = Some(call);
                break;
            }
        }
        let call = shown.ok_or_else(|| format!("{case}: no notification reached the bus"))?;
        // A second copy, from the window or the server, would arrive within this wait.
        std::thread::sleep(Duration::from_millis(1500));
        let copies = seen(&call.summary);
        if copies.len() != 1 {
            return Err(format!(
                "{case}: {:?} shown {} times: {copies:?}",
                call.summary,
                copies.len()
            ));
        }
        if seen(&format!("{case}-")).len() != 1 {
            return Err(format!(
                "{case}: more than one try shown: {:?}",
                seen(&format!("{case}-"))
            ));
        }
        if case == "remote" {
            // A click on the window's notification focuses the pane on the server.
            fake.invoke_action(call.id, "default").map_err(|e| format!("ActionInvoked: {e:?}"))?;
            poll(WAIT, "the click to focus the pane", || {
                let list = world.server.list();
                let ws = &list["workspaces"][0];
                (ws["active_tab_id"] == ws["tabs"][0]["id"]
                    && ws["tabs"][0]["active_pane_id"] == pane.as_str())
                .then_some(())
            });
        }
    }
    Ok(())
}

/// Runs the attached windows' cases; returns (passed, failed).
pub(crate) fn run() -> (usize, usize) {
    type Case = (&'static str, fn(&mut Attached));
    let cases: &[Case] = &[
        ("attaches_types_and_outlives_the_window", attaches_types_and_outlives_the_window),
        ("kill_9_of_an_attached_window_loses_nothing", kill_9_of_an_attached_window_loses_nothing),
        ("two_windows_show_the_same_output", two_windows_show_the_same_output),
        ("the_tab_follows_the_latest_active_window", the_tab_follows_the_latest_active_window),
        ("a_stopped_window_does_not_hold_the_server", a_stopped_window_does_not_hold_the_server),
        ("a_slow_link_keeps_typing_correct", a_slow_link_keeps_typing_correct),
        ("the_wheel_scrolls_an_attached_window_back", the_wheel_scrolls_an_attached_window_back),
        (
            "an_attached_window_encodes_keys_by_the_frames_modes",
            an_attached_window_encodes_keys_by_the_frames_modes,
        ),
        (
            "a_drag_in_an_attached_window_copies_exactly_the_text",
            a_drag_in_an_attached_window_copies_exactly_the_text,
        ),
        (
            "search_in_an_attached_window_scrolls_to_a_match_it_did_not_hold",
            search_in_an_attached_window_scrolls_to_a_match_it_did_not_hold,
        ),
        (
            "ctrl_click_in_an_attached_window_opens_links",
            ctrl_click_in_an_attached_window_opens_links,
        ),
        ("attach_over_ssh_forwards_and_tears_down", attach_over_ssh_forwards_and_tears_down),
        ("an_attached_windows_sidebar_lists_tasks", an_attached_windows_sidebar_lists_tasks),
        ("an_attached_window_opens_the_review_view", an_attached_window_opens_the_review_view),
        (
            "an_attached_window_has_the_inbox_and_the_toast",
            crate::inbox::an_attached_window_has_the_inbox_and_the_toast,
        ),
    ];
    // The cases that set up a world of their own.
    let own_names = [
        "standalone_mode_outlives_a_killed_window",
        "remote_notifications_reach_this_desktop_once",
        "one_window_shows_and_answers_a_second_server",
    ];
    if !cases.iter().any(|(name, _)| crate::selected(name))
        && !own_names.iter().any(|name| crate::selected(name))
    {
        return (0, 0);
    }
    let mut world = match std::panic::catch_unwind(Attached::start) {
        Ok(Ok(world)) => world,
        Ok(Err(e)) => {
            eprintln!("e2e_window: cannot set up the attached windows: {e}");
            return (0, 1);
        }
        Err(_) => return (0, 1),
    };
    let (mut passed, mut failed) = (0, 0);
    for (name, case) in cases.iter().filter(|(name, _)| crate::selected(name)) {
        let ok =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&mut world))).is_ok();
        println!("test attach::{name} ... {}", if ok { "ok" } else { "FAILED" });
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    type WorldCase = (&'static str, fn() -> Result<(), String>);
    let own_worlds: &[WorldCase] = &[
        ("standalone_mode_outlives_a_killed_window", standalone_mode_outlives_a_killed_window),
        (
            "remote_notifications_reach_this_desktop_once",
            remote_notifications_reach_this_desktop_once,
        ),
        (
            "one_window_shows_and_answers_a_second_server",
            crate::servers::one_window_shows_and_answers_a_second_server,
        ),
    ];
    for (name, case) in own_worlds.iter().filter(|(name, _)| crate::selected(name)) {
        let outcome = std::panic::catch_unwind(case);
        let ok = matches!(outcome, Ok(Ok(())));
        if let Ok(Err(e)) = &outcome {
            eprintln!("e2e_window: {name}: {e}");
        }
        println!("test attach::{name} ... {}", if ok { "ok" } else { "FAILED" });
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    if failed > 0 {
        for i in 0..world.windows.len() {
            let log = world.server.root.path().join(format!("window{i}.log"));
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            eprintln!("e2e_window: attached window {i}'s log:\n{text}");
        }
        eprintln!("e2e_window: the server's log:\n{}", world.server.log_text());
    }
    (passed, failed)
}
