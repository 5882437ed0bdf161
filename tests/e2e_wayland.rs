//! End to end through a native Wayland window: the `berth` binary as a client of a headless
//! sway (wlroots' headless backend and pixman renderer, Vulkan through lavapipe), typed into
//! with `wtype`, pointed at through sway's own seat commands, captured with `grim`, its
//! clipboard read with `wl-paste`.
//!
//! One test runs the steps in order against one window (each step builds on the last), since
//! starting a compositor and a window is the expensive part. sway, wtype, grim and
//! wl-clipboard are required (`scripts/test` installs them): a missing tool fails the test
//! with what to install; it never passes without drawing.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use berth_server::dbus::testing::PrivateBus;
use berth_server::notifications::desktop::testing::FakeNotificationServer;
use support::image::{ocr, Image};
use support::*;

/// How long anything here may take to happen.
const WAIT: Duration = Duration::from_secs(30);

/// The user sway runs as when the tests run as root (`nobody`).
const NOBODY: u32 = 65534;

/// The compositor's one output.
const OUTPUT: &str = "HEADLESS-1";

/// A headless sway, the window on it and their dirs. Fields drop in order: the window, then
/// the compositor, then the temp dirs.
struct World {
    window: Option<Killed>,
    /// A virtual keyboard held for the whole test (see [`World::hold_keyboard`]).
    _keyboard: Option<Killed>,
    /// The desktop's notification service on a private session bus.
    notifications: FakeNotificationServer,
    _bus: PrivateBus,
    _sway: Killed,
    server: TestServer,
    /// `WAYLAND_DISPLAY`: the compositor's socket, by absolute path.
    display: String,
    /// sway's IPC socket, for `swaymsg`.
    swaysock: PathBuf,
    window_log: PathBuf,
}

fn require_tool(name: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{name}` is not installed: the Wayland tests need it (apt-get install {package})"
    );
}

impl World {
    fn start() -> World {
        for (tool, package) in [
            ("sway", "sway"),
            ("swaymsg", "sway"),
            ("setpriv", "util-linux"),
            ("wtype", "wtype"),
            ("grim", "grim"),
            ("wl-paste", "wl-clipboard"),
            ("tesseract", "tesseract-ocr"),
        ] {
            require_tool(tool, package);
        }
        let server = TestServer::prepare();
        let root = server.root.path().to_path_buf();
        // sway refuses to run as root: as root (CI), it runs as `nobody` with a runtime dir of
        // its own, and the window (root) reaches its socket by absolute path.
        let as_root = nix::unistd::geteuid().is_root();
        let sway_run = if as_root {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(&root, fs::Permissions::from_mode(0o711)).expect("chmod root");
            let dir = root.join("sway-run");
            fs::create_dir(&dir).expect("create sway's runtime dir");
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod");
            let nobody = nix::unistd::Uid::from_raw(NOBODY);
            nix::unistd::chown(&dir, Some(nobody), Some(nix::unistd::Gid::from_raw(NOBODY)))
                .expect("chown sway's runtime dir");
            dir
        } else {
            server.runtime.clone()
        };
        let config = root.join("sway.conf");
        fs::write(
            &config,
            format!(
                "output {OUTPUT} resolution 1280x800 position 0,0 scale 1\n\
                 default_border none\n\
                 xwayland disable\n\
                 focus_follows_mouse no\n\
                 focus_on_window_activation focus\n"
            ),
        )
        .expect("write the sway config");
        let log = fs::File::create(root.join("sway.log")).expect("create the sway log");
        let mut sway = if as_root {
            let mut cmd = Command::new("setpriv");
            cmd.args([
                format!("--reuid={NOBODY}"),
                format!("--regid={NOBODY}"),
                "--clear-groups".into(),
                "sway".into(),
            ]);
            cmd
        } else {
            Command::new("sway")
        };
        let child = sway
            .arg("-c")
            .arg(&config)
            .env("XDG_RUNTIME_DIR", &sway_run)
            .env("HOME", &sway_run)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_RENDERER", "pixman")
            .env("WLR_HEADLESS_OUTPUTS", "1")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("SWAYSOCK")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("dup the log"))
            .stderr(log)
            .spawn()
            .expect("start sway");
        let mut sway = Killed { name: "sway", child };
        let runtime = sway_run.clone();
        let deadline = Instant::now() + WAIT;
        let (display, swaysock) = loop {
            if let Ok(Some(status)) = sway.child.try_wait() {
                panic!(
                    "sway exited early ({status}); its log:\n{}",
                    fs::read_to_string(root.join("sway.log")).unwrap_or_default()
                );
            }
            let names: Vec<String> = fs::read_dir(&runtime)
                .map(|dir| {
                    dir.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()
                })
                .unwrap_or_default();
            let display = names.iter().find(|n| n.starts_with("wayland-") && !n.ends_with(".lock"));
            let ipc = names.iter().find(|n| n.starts_with("sway-ipc.") && n.ends_with(".sock"));
            if let (Some(display), Some(ipc)) = (display, ipc) {
                break (runtime.join(display).to_string_lossy().into_owned(), runtime.join(ipc));
            }
            assert!(Instant::now() < deadline, "sway made no Wayland socket within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        };
        let bus = PrivateBus::start().expect("start a private dbus-daemon");
        let notifications =
            FakeNotificationServer::start(bus.address()).expect("start the notification server");
        let mut world = World {
            window: None,
            _keyboard: None,
            notifications,
            _bus: bus,
            _sway: sway,
            server,
            display,
            swaysock,
            window_log: root.join("window.log"),
        };
        world.wait_for_output();
        world.hold_keyboard();
        world.launch();
        world
    }

    /// Keeps a keyboard on the seat, as a desktop always has: each `wtype` adds one and takes
    /// it away when done, and a seat whose last keyboard goes away sends the window no focus
    /// change at all, so the window could keep believing it has the focus (and keep a pane's
    /// notifications off the desktop) after sway moved it to a hidden workspace.
    fn hold_keyboard(&mut self) {
        let child = Command::new("wtype")
            .args(["-s", "600000"])
            .env("XDG_RUNTIME_DIR", &self.server.runtime)
            .env("WAYLAND_DISPLAY", &self.display)
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a held wtype");
        self._keyboard = Some(Killed { name: "wtype", child });
        poll(WAIT, "the held keyboard on the seat", || {
            let seats = self.swaymsg(&["-t", "get_seats"]).ok()?;
            seats.contains("virtual_keyboard").then_some(())
        });
    }

    /// Waits until sway answers on its IPC socket with its output.
    fn wait_for_output(&self) {
        poll(WAIT, "sway's output", || {
            self.swaymsg(&["-t", "get_outputs"]).ok().filter(|o| o.contains(OUTPUT)).map(|_| ())
        });
    }

    /// Starts the window on the compositor and waits until it is mapped and its pane is live.
    fn launch(&mut self) {
        let log = fs::File::create(&self.window_log).expect("create the window log");
        let config = self.server.root.path().join("config.toml");
        fs::write(&config, "font_size = 15\n").expect("write the config");
        let child = self
            .server
            .command()
            .env("WAYLAND_DISPLAY", &self.display)
            .env_remove("DISPLAY")
            .env_remove("WGPU_BACKEND")
            .env_remove("BERTH_BACKEND")
            .env("DBUS_SESSION_BUS_ADDRESS", self._bus.address())
            .env("BERTH_LOGIND", "0")
            .env("BERTH_CONFIG", &config)
            .current_dir(&self.server.home)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("dup the log"))
            .stderr(log)
            .spawn()
            .expect("start berth");
        self.window = Some(Killed { name: "berth", child });
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) =
                self.window.as_mut().and_then(|w| w.child.try_wait().ok().flatten())
            {
                panic!("berth exited early with {status}; its log:\n{}", self.log());
            }
            let mapped = self.window_node().is_some();
            let live = Client::connect(&self.server.socket).is_ok()
                && self.server.list()["workspaces"][0]["tabs"][0]["panes"][0]["state"] == "LIVE";
            if mapped && live {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no berth window within 30 s; its log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.window_log).unwrap_or_default()
    }

    fn window_pid(&self) -> i32 {
        self.window.as_ref().expect("a window").pid()
    }

    /// Runs a Wayland client tool (bounded by `timeout(1)`) on the compositor.
    fn tool(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let out = Command::new("timeout")
            .arg("20")
            .arg(program)
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.server.runtime)
            .env("WAYLAND_DISPLAY", &self.display)
            .env("SWAYSOCK", &self.swaysock)
            .env_remove("DISPLAY")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{program} {args:?} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn swaymsg(&self, args: &[&str]) -> Result<String, String> {
        self.tool("swaymsg", args)
    }

    fn run(&self, program: &str, args: &[&str]) -> String {
        self.tool(program, args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The window's node in sway's tree: the view whose pid is the window's.
    fn window_node(&self) -> Option<Value> {
        let tree: Value = serde_json::from_str(&self.swaymsg(&["-t", "get_tree"]).ok()?).ok()?;
        fn find(node: &Value, pid: i64) -> Option<Value> {
            if node["pid"].as_i64() == Some(pid) {
                return Some(node.clone());
            }
            let children = node["nodes"].as_array().into_iter().flatten();
            let floating = node["floating_nodes"].as_array().into_iter().flatten();
            children.chain(floating).find_map(|n| find(n, pid))
        }
        find(&tree, i64::from(self.window_pid()))
    }

    fn first_pane(&self) -> String {
        self.panes()[0]["id"].as_str().expect("a pane id").to_owned()
    }

    fn panes(&self) -> Vec<Value> {
        let out = self.server.berth_ok(&["ls", "--json"]);
        let list: Value = serde_json::from_str(&out).expect("ls --json prints JSON");
        list["workspaces"][0]["tabs"][0]["panes"].as_array().cloned().unwrap_or_default()
    }

    /// Types with a virtual keyboard. Each `wtype` adds a keyboard to the seat and removes it
    /// when done; the window binds its `wl_keyboard` only when the seat gains one, so a key
    /// sent at once would be lost: `-s 300` first gives it the time.
    fn wtype(&self, args: &[&str]) {
        let mut all = vec!["-s", "300", "-d", "10"];
        all.extend_from_slice(args);
        self.run("wtype", &all);
    }

    /// Types `text` and presses Return.
    fn type_line(&self, text: &str) {
        self.wtype(&[text, "-k", "Return"]);
    }

    /// The whole output as `grim` captures it.
    fn grab(&self, name: &str) -> Image {
        let path = self.server.root.path().join(name);
        self.run("grim", &[path.to_str().expect("temp paths are UTF-8")]);
        if let Some(dir) = std::env::var_os("BERTH_E2E_SHOTS") {
            let _ = fs::create_dir_all(&dir);
            let _ = fs::copy(&path, Path::new(&dir).join(name));
        }
        Image::read(&path)
    }

    fn set_scale(&self, scale: &str) {
        self.run("swaymsg", &["output", OUTPUT, "scale", scale]);
    }
}

/// A virtual pointer on the compositor's seat (wlr-virtual-pointer): headless sway has no
/// pointer device, and its `seat … cursor` commands move a cursor no client sees while the seat
/// has no pointer.
mod pointer {
    use std::os::unix::net::UnixStream;
    use std::path::Path;

    use wayland_client::globals::{registry_queue_init, GlobalListContents};
    use wayland_client::protocol::wl_pointer::ButtonState;
    use wayland_client::protocol::{wl_registry, wl_seat::WlSeat};
    use wayland_client::{delegate_noop, Connection, Dispatch, EventQueue, QueueHandle};
    use wayland_protocols_wlr::virtual_pointer::v1::client::{
        zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
        zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
    };

    /// `BTN_LEFT` of linux/input-event-codes.h.
    const BTN_LEFT: u32 = 0x110;

    pub struct State;

    impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
        fn event(
            _: &mut Self,
            _: &wl_registry::WlRegistry,
            _: wl_registry::Event,
            _: &GlobalListContents,
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
        }
    }
    delegate_noop!(State: ignore WlSeat);
    delegate_noop!(State: ZwlrVirtualPointerManagerV1);
    delegate_noop!(State: ZwlrVirtualPointerV1);

    pub struct VirtualPointer {
        queue: EventQueue<State>,
        pointer: ZwlrVirtualPointerV1,
        /// The output layout's size: positions are given within it.
        extent: (u32, u32),
        time: u32,
    }

    impl VirtualPointer {
        /// A pointer on the compositor at `socket`, in a layout of `extent` pixels.
        pub fn new(socket: &Path, extent: (u32, u32)) -> VirtualPointer {
            let stream = UnixStream::connect(socket).expect("connect to the compositor");
            let conn = Connection::from_socket(stream).expect("a Wayland connection");
            let (globals, mut queue) = registry_queue_init::<State>(&conn).expect("globals");
            let qh = queue.handle();
            let seat: WlSeat = globals.bind(&qh, 1..=7, ()).expect("a seat");
            let manager: ZwlrVirtualPointerManagerV1 =
                globals.bind(&qh, 1..=2, ()).expect("the compositor offers virtual pointers");
            let pointer = manager.create_virtual_pointer(Some(&seat), &qh, ());
            queue.roundtrip(&mut State).expect("roundtrip");
            VirtualPointer { queue, pointer, extent, time: 0 }
        }

        fn tick(&mut self) -> u32 {
            self.time += 16;
            self.time
        }

        fn send(&mut self) {
            self.pointer.frame();
            self.queue.roundtrip(&mut State).expect("roundtrip");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }

        /// Moves to `(x, y)` in layout pixels.
        pub fn move_to(&mut self, x: u32, y: u32) {
            let time = self.tick();
            self.pointer.motion_absolute(time, x, y, self.extent.0, self.extent.1);
            self.send();
        }

        /// Presses or releases the left button.
        pub fn left(&mut self, pressed: bool) {
            let time = self.tick();
            let state = if pressed { ButtonState::Pressed } else { ButtonState::Released };
            self.pointer.button(time, BTN_LEFT, state);
            self.send();
        }
    }
}

/// An xdg-activation token from the compositor, as a notification server obtains one for the
/// program whose notification the user clicked.
mod activation {
    use std::os::unix::net::UnixStream;
    use std::path::Path;

    use wayland_client::globals::{registry_queue_init, GlobalListContents};
    use wayland_client::protocol::wl_registry;
    use wayland_client::{delegate_noop, Connection, Dispatch, QueueHandle};
    use wayland_protocols::xdg::activation::v1::client::{
        xdg_activation_token_v1::{self, XdgActivationTokenV1},
        xdg_activation_v1::XdgActivationV1,
    };

    #[derive(Default)]
    pub struct State(Option<String>);

    impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
        fn event(
            _: &mut Self,
            _: &wl_registry::WlRegistry,
            _: wl_registry::Event,
            _: &GlobalListContents,
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
        }
    }
    delegate_noop!(State: XdgActivationV1);

    impl Dispatch<XdgActivationTokenV1, ()> for State {
        fn event(
            state: &mut Self,
            _: &XdgActivationTokenV1,
            event: xdg_activation_token_v1::Event,
            _: &(),
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
            if let xdg_activation_token_v1::Event::Done { token } = event {
                state.0 = Some(token);
            }
        }
    }

    /// A fresh token from the compositor at `socket`.
    pub fn token(socket: &Path) -> String {
        let stream = UnixStream::connect(socket).expect("connect to the compositor");
        let conn = Connection::from_socket(stream).expect("a Wayland connection");
        let (globals, mut queue) = registry_queue_init::<State>(&conn).expect("globals");
        let qh = queue.handle();
        let activation: XdgActivationV1 =
            globals.bind(&qh, 1..=1, ()).expect("the compositor offers xdg-activation");
        let request = activation.get_activation_token(&qh, ());
        request.set_app_id("notification-server".into());
        request.commit();
        let mut state = State::default();
        for _ in 0..50 {
            queue.roundtrip(&mut state).expect("roundtrip");
            if let Some(token) = state.0.take() {
                return token;
            }
        }
        panic!("the compositor issued no activation token");
    }
}

/// The bounding box `(x0, y0, x1, y1)` (inclusive) of the bright pixels (text on the dark
/// theme) below `from_y`, or `None` when there are none.
fn ink_below(image: &Image, from_y: u32) -> Option<(u32, u32, u32, u32)> {
    let mut bbox: Option<(u32, u32, u32, u32)> = None;
    for y in from_y..image.height {
        for x in 0..image.width {
            let [r, g, b] = image.pixels[(y * image.width + x) as usize];
            if u32::from(r) + u32::from(g) + u32::from(b) > 3 * 150 {
                bbox = Some(match bbox {
                    None => (x, y, x, y),
                    Some((x0, y0, x1, y1)) => (x0.min(x), y0.min(y), x1.max(x), y1.max(y)),
                });
            }
        }
    }
    bbox
}

/// Clears the pane and prints `text` alone at row 14, column 5 (its letters written as octal
/// escapes, so the typed command line cannot contain them), with the prompt back at row 2.
fn show_alone(w: &World, pane: &str, text: &str, marker: &str) {
    let octal: String = text.bytes().map(|b| format!("\\{b:o}")).collect();
    w.type_line(&format!("clear; printf '\\e[14;5H{octal}\\e[2;1H'; echo {marker}-$((6*7))"));
    w.server.wait_text(pane, &format!("{marker}-42"), WAIT);
    // The frame after the output: give the compositor a moment to take the new buffer.
    std::thread::sleep(Duration::from_millis(500));
}

#[test]
fn the_window_is_a_native_wayland_client() {
    let w = World::start();
    let pane = w.first_pane();

    // A native client: an xdg-shell view with the desktop file's id, no DISPLAY in its
    // environment (XWayland is off in this compositor anyway), and the log names the backend.
    let node = w.window_node().expect("the window in sway's tree");
    assert_eq!(node["shell"], "xdg_shell", "{node}");
    assert_eq!(node["app_id"], "berth", "{node}");
    let environ = fs::read(format!("/proc/{}/environ", w.window_pid())).expect("read environ");
    assert!(
        !environ.split(|&b| b == 0).any(|e| e.starts_with(b"DISPLAY=")),
        "the window has DISPLAY in its environment"
    );
    assert!(
        w.log().contains("backend=\"wayland\"") || w.log().contains("backend=wayland"),
        "{}",
        w.log()
    );

    // Text typed with a virtual keyboard runs in the shell, reads back and shows on screen.
    w.type_line("clear; echo wl-$((6*7))");
    w.server.wait_text(&pane, "wl-42", WAIT);
    std::thread::sleep(Duration::from_millis(500));
    let shot = w.grab("typed.png");
    assert_eq!((shot.width, shot.height), (1280, 800), "grim captures the whole output");
    let text = ocr(&shot, w.server.root.path(), "typed", 160, "6");
    // Case folded: tesseract reads this font's `l` as `L` now and then (the pixels are right;
    // the screen's text came back through the server above).
    assert!(
        text.to_lowercase().contains("wl-42"),
        "OCR of the output did not find the typed text: {text:?}"
    );

    // Glyph height at scale 1, then at 1.5: the renderer draws at the real scale.
    show_alone(&w, &pane, "HHHHHHHHHH", "s1");
    let (_, y0, _, y1) = ink_below(&w.grab("scale1.png"), 200).expect("the H's at scale 1");
    let at_1 = y1 - y0 + 1;
    let cols_at_1 = w.panes()[0]["size"]["cols"].as_u64().expect("cols");
    w.set_scale("1.5");
    poll(WAIT, "the panes to re-lay out at scale 1.5", || {
        (w.panes()[0]["size"]["cols"].as_u64() != Some(cols_at_1)).then_some(())
    });
    show_alone(&w, &pane, "HHHHHHHHHH", "s15");
    let (_, y0, _, y1) = ink_below(&w.grab("scale15.png"), 300).expect("the H's at scale 1.5");
    let at_15 = y1 - y0 + 1;
    let want = f64::from(at_1) * 1.5;
    eprintln!("e2e_wayland: glyph height {at_1} px at scale 1, {at_15} px at scale 1.5");
    assert!(
        (f64::from(at_15) - want).abs() <= 1.0,
        "glyph height {at_15} px at scale 1.5, want {want} ± 1 (it is {at_1} px at scale 1)"
    );
    w.set_scale("1");
    poll(WAIT, "the panes to re-lay out at scale 1", || {
        (w.panes()[0]["size"]["cols"].as_u64() == Some(cols_at_1)).then_some(())
    });

    // Copy: a selection dragged with the seat's pointer, Ctrl+Shift+C, then wl-paste reads it
    // (the clipboard) and the primary selection holds it too.
    show_alone(&w, &pane, "CLIPME", "clip");
    let (x0, y0, x1, y1) = ink_below(&w.grab("clip.png"), 200).expect("CLIPME on screen");
    let mut pointer = pointer::VirtualPointer::new(Path::new(&w.display), (1280, 800));
    // The window binds its wl_pointer once the seat has one: give it a moment.
    std::thread::sleep(Duration::from_millis(300));
    let y = (y0 + y1) / 2;
    pointer.move_to(x0.saturating_sub(3), y);
    pointer.left(true);
    pointer.move_to((x0 + x1) / 2, y);
    pointer.move_to(x1 + 3, y);
    pointer.left(false);
    w.wtype(&["-M", "ctrl", "-M", "shift", "c", "-m", "shift", "-m", "ctrl"]);
    let pasted = poll(WAIT, "wl-paste to read the copied text", || {
        w.tool("wl-paste", &["--no-newline"]).ok().filter(|t| t.contains("CLIPME"))
    });
    assert_eq!(pasted.trim(), "CLIPME");
    let primary = w.tool("wl-paste", &["--primary", "--no-newline"]).unwrap_or_default();
    assert_eq!(primary.trim(), "CLIPME", "the primary selection");

    // The split chord gives two panes.
    w.wtype(&["-M", "ctrl", "-M", "shift", "e", "-m", "shift", "-m", "ctrl"]);
    poll(WAIT, "two panes after Ctrl+Shift+E", || (w.panes().len() == 2).then_some(()));

    // A click on a desktop notification raises the window through xdg-activation, with the
    // token the notification server hands over: the window is on another workspace, so only
    // an activation the compositor honours brings it back and focuses it.
    w.run("swaymsg", &["workspace", "2"]);
    poll(WAIT, "the window to lose focus", || (w.window_node()?["visible"] == false).then_some(()));
    // The window tells the Store it lost the focus when sway hides it (a hidden Wayland
    // window gets no frames, so this cannot wait for the next one); it learns of it a moment
    // later, so the pane prints again every 3 s until the desktop gets a notification.
    let calls = w.notifications.call_count();
    let mut sent_at: Option<Instant> = None;
    let deadline = Instant::now() + WAIT;
    while w.notifications.call_count() <= calls {
        if Instant::now() > deadline {
            let log = w.log();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            panic!(
                "no desktop notification within 30 s; notifications: {}; the window's log ends:\n{}",
                w.server.berth_ok(&["notifications", "--json"]),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        if sent_at.is_none_or(|at| at.elapsed() > Duration::from_secs(3)) {
            w.server.berth_ok(&["send", &pane, "--enter", r"printf '\e]9;wake up\a'"]);
            sent_at = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let call = w.notifications.calls().last().cloned().expect("the notification");
    assert!(call.body.contains("wake up") || call.summary.contains("wake up"), "{call:?}");
    let token = activation::token(Path::new(&w.display));
    w.notifications
        .invoke_action_with_token(call.id, "default", Some(&token))
        .expect("a click with a token");
    poll(WAIT, "the window raised and focused by the click", || {
        let node = w.window_node()?;
        (node["focused"] == true && node["visible"] == true).then_some(())
    });
}
