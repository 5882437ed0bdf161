"""`scripts/bench --only window` (issue 29): the window against alacritty and foot, as a person
sees them. Imported by scripts/bench, which passes its helpers in (`bench_window(tmp, cfg,
report, h)`, `h` the bench module itself).

Figures:
  key to screen  X11 (Xvfb, lavapipe/llvmpipe for both): an XTest key press (libXtst through
                 ctypes) → the first changed pixel of the window's framebuffer, read with
                 XGetImage every 1 ms over a band of rows around the last echo (found, untimed,
                 by diffing the whole window after each key). `cat` in the foreground, Berth
                 and alacritty (Debian's) interleaved round by round in the same X server, both
                 windows 1000x640 px. Idle, and with a neighbour flooding the screen with `yes`
                 (Berth: a pane split below the `cat` pane; alacritty: a second window beside
                 it); the flood's rows are found by watching the window with no key pressed and
                 left out of the comparison. Median and p95 per terminal.
  Wayland        headless sway (pixman) as an unprivileged user, Berth native on Wayland and
                 foot (Debian's) as the anchor, Berth on Xvfb beside them: first prompt (launch
                 → the shell's prompt on the server's screen / foot's window shows it in grim's
                 capture) and `cat` of a 100 MB listing (launch of the command → its end marker
                 on the server's screen; foot: the marker file the shell writes after cat).

Nothing here is asserted; the report's targets name the goals.
"""

import ctypes
import ctypes.util
import os
import pwd
import random
import shutil
import signal
import statistics
import subprocess
import time

WIN_W, WIN_H = 1000, 640
KEYSYMS = "abcdefghijklmnopqrstuvwxyz"


# ---------------------------------------------------------------- X11 through ctypes


class XImage(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.POINTER(ctypes.c_char)),
                ("byte_order", ctypes.c_int), ("bitmap_unit", ctypes.c_int),
                ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int),
                ("bits_per_pixel", ctypes.c_int)]


class XProbe:
    """One connection to the X server: XTest keys and XGetImage reads of a window."""

    ZPIXMAP = 2
    ALL_PLANES = 0xFFFFFFFF

    def __init__(self, display):
        self.x = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        self.xtst = ctypes.CDLL(ctypes.util.find_library("Xtst") or "libXtst.so.6")
        self.x.XOpenDisplay.restype = ctypes.c_void_p
        self.x.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self.x.XGetImage.restype = ctypes.POINTER(XImage)
        self.x.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint,
                                     ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
        self.x.XStringToKeysym.restype = ctypes.c_ulong
        self.x.XStringToKeysym.argtypes = [ctypes.c_char_p]
        self.x.XKeysymToKeycode.restype = ctypes.c_ubyte
        self.x.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        self.x.XFlush.argtypes = [ctypes.c_void_p]
        self.x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.x.XFree.argtypes = [ctypes.c_void_p]
        self.xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        self.dpy = self.x.XOpenDisplay(display.encode())
        if not self.dpy:
            raise RuntimeError(f"cannot open X display {display}")

    def keycode(self, name):
        return self.x.XKeysymToKeycode(self.dpy, self.x.XStringToKeysym(name.encode()))

    def key(self, code):
        """Press and release a key (both sent at once, flushed)."""
        self.xtst.XTestFakeKeyEvent(self.dpy, code, 1, 0)
        self.xtst.XTestFakeKeyEvent(self.dpy, code, 0, 0)
        self.x.XFlush(self.dpy)

    def grab(self, window, y, h):
        """The window's pixels in rows y..y+h, full width: (bytes, bytes per row)."""
        img = self.x.XGetImage(self.dpy, window, 0, y, WIN_W, h, self.ALL_PLANES, self.ZPIXMAP)
        if not img:
            raise RuntimeError("XGetImage failed (is the window mapped and unobscured?)")
        bpl = img.contents.bytes_per_line
        data = ctypes.string_at(img.contents.data, bpl * h)
        self.x.XFree(img.contents.data)
        self.x.XFree(img)
        return data, bpl

    def close(self):
        self.x.XCloseDisplay.argtypes = [ctypes.c_void_p]
        self.x.XCloseDisplay(self.dpy)


def changed_rows(a, b, bpl, rows, skip=()):
    """Rows whose bytes differ between two grabs of the same band (`skip`: rows left out)."""
    return [r for r in range(rows) if r not in skip and a[r * bpl:(r + 1) * bpl] != b[r * bpl:(r + 1) * bpl]]


def noisy_rows(probe, window, watch=1.5):
    """Rows of the window that change with no key pressed (a flooding neighbour), over `watch` s."""
    noisy = set()
    prev, bpl = probe.grab(window, 0, WIN_H)
    deadline = time.monotonic() + watch
    while time.monotonic() < deadline:
        time.sleep(0.02)
        cur, _ = probe.grab(window, 0, WIN_H)
        noisy.update(changed_rows(prev, cur, bpl, WIN_H))
        prev = cur
    # A margin: glyphs of the flood's rows antialias into the rows beside them.
    return {r + d for r in noisy for d in (-2, -1, 0, 1, 2) if 0 <= r + d < WIN_H}


def key_to_screen(probe, window, n, warmup, noisy=frozenset(), band=96, timeout=2.0):
    """`n` keys into the focused `cat`: ms from the XTest press to the first changed pixel in a
    band of rows around the last echo, read every 1 ms. A Return every 40 keys (untimed)."""
    codes = [probe.keycode(k) for k in KEYSYMS]
    ret = probe.keycode("Return")
    gaps = random.Random(29)
    full, bpl = probe.grab(window, 0, WIN_H)
    centre = None
    out = []
    for i in range(warmup + n):
        if i % 40 == 39:
            probe.key(ret)
            time.sleep(0.1)
            full, _ = probe.grab(window, 0, WIN_H)
            continue
        if centre is None:
            y0, h = 0, WIN_H
        else:
            y0 = max(0, min(WIN_H - band, centre - band // 2))
            h = band
        skip = {r - y0 for r in noisy if y0 <= r < y0 + h}
        base, _ = probe.grab(window, y0, h)
        t0 = time.monotonic()
        probe.key(codes[i % len(codes)])
        seen = None
        while time.monotonic() - t0 < timeout:
            cur, _ = probe.grab(window, y0, h)
            if changed_rows(base, cur, bpl, h, skip):
                seen = time.monotonic()
                break
            time.sleep(0.001)
        time.sleep(gaps.uniform(0.03, 0.05))
        after, _ = probe.grab(window, 0, WIN_H)
        rows = changed_rows(full, after, bpl, WIN_H, noisy)
        full = after
        if rows:
            centre = (min(rows) + max(rows)) // 2 if max(rows) - min(rows) < band else rows[-1]
        if seen is None:
            print(f"    key {i}: no change within {timeout:.0f} s")
            continue
        if i >= warmup:
            out.append((seen - t0) * 1000)
    return out


# ---------------------------------------------------------------- the terminals on X11


def xdo(display, *args, check=True):
    return subprocess.run(["xdotool", *args], env=dict(os.environ, DISPLAY=display), check=check,
                          capture_output=True, text=True).stdout


def find_window(display, pid, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the terminal exited ({proc.returncode})")
        ids = xdo(display, "search", "--onlyvisible", "--pid", str(pid), check=False).split()
        if ids:
            return int(ids[-1])
        time.sleep(0.1)
    raise TimeoutError("the window did not appear")


def place(display, wid, x, y):
    xdo(display, "windowsize", "--sync", str(wid), str(WIN_W), str(WIN_H), check=False)
    xdo(display, "windowmove", "--sync", str(wid), str(x), str(y), check=False)
    xdo(display, "windowfocus", "--sync", str(wid), check=False)


def stop(proc):
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def berth_x11_round(h, tmp, xvfb, probe, name, n, warmup, flood):
    srv = h.BerthServer(tmp, name)
    win = h.Window(srv, xvfb, [], "window")
    srv.proc = win.proc
    try:
        srv.conn = h.wait_until(srv._connect, 60, 0.05, "the embedded window's socket")
        wid = find_window(xvfb.display, win.proc.pid, win.proc)
        place(xvfb.display, wid, 0, 0)
        cat = srv.conn.call("pane.spawn", {"argv": ["cat"]})["pane_id"]
        if flood:
            srv.conn.call("pane.split", {"pane_id": cat, "dir": "down", "argv": ["yes"]})
            srv.conn.call("pane.focus", {"pane_id": cat})
        time.sleep(1.0)
        noisy = noisy_rows(probe, wid) if flood else frozenset()
        return key_to_screen(probe, wid, n, warmup, noisy)
    finally:
        stop(win.proc)


def alacritty_x11_round(tmp, xvfb, probe, name, n, warmup, flood):
    home = os.path.join(tmp, name)
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, DISPLAY=xvfb.display, HOME=home, LIBGL_ALWAYS_SOFTWARE="1")
    env.pop("WAYLAND_DISPLAY", None)
    log = open(os.path.join(home, "alacritty.log"), "ab")
    procs = []
    try:
        if flood:
            yes = subprocess.Popen(["alacritty", "--class", "flood", "-e", "yes"], env=env, stdout=log, stderr=log)
            procs.append(yes)
            place(xvfb.display, find_window(xvfb.display, yes.pid, yes), WIN_W + 10, 0)
        cat = subprocess.Popen(["alacritty", "-e", "cat"], env=env, stdout=log, stderr=log)
        procs.append(cat)
        wid = find_window(xvfb.display, cat.pid, cat)
        place(xvfb.display, wid, 0, 0)
        time.sleep(1.0)
        noisy = noisy_rows(probe, wid) if flood else frozenset()
        return key_to_screen(probe, wid, n, warmup, noisy)
    finally:
        for p in procs:
            stop(p)


# ---------------------------------------------------------------- Wayland (headless sway)

SWAY_USER = "berthbench"


class Sway:
    """Headless sway (pixman) run as an unprivileged user; clients connect as this user."""

    def __init__(self, tmp):
        try:
            pwd.getpwnam(SWAY_USER)
        except KeyError:
            subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", SWAY_USER], check=True)
        ent = pwd.getpwnam(SWAY_USER)
        self.dir = os.path.join(tmp, "sway")
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        os.chmod(tmp, 0o755)
        os.chown(self.dir, ent.pw_uid, ent.pw_gid)
        with open(os.path.join(self.dir, "sway.conf"), "w") as f:
            f.write("output HEADLESS-1 resolution 1280x800\ndefault_border none\n")
        self.log = open(os.path.join(tmp, "sway.log"), "ab")
        self.proc = subprocess.Popen(
            ["setpriv", f"--reuid={ent.pw_uid}", f"--regid={ent.pw_gid}", "--clear-groups", "env", "-i",
             "PATH=/usr/bin:/bin", f"HOME={self.dir}", f"XDG_RUNTIME_DIR={self.dir}", "WLR_BACKENDS=headless",
             "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1", "sway", "-c", os.path.join(self.dir, "sway.conf")],
            stdout=self.log, stderr=self.log, start_new_session=True)
        self.display = os.path.join(self.dir, "wayland-1")
        deadline = time.monotonic() + 30
        while not os.path.exists(self.display):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sway did not start; see {self.log.name}")
            time.sleep(0.05)

    def env(self, base):
        env = dict(base, WAYLAND_DISPLAY=self.display)
        env.pop("DISPLAY", None)
        return env

    def stop(self):
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


PROMPT = "READY$ "


def berth_shell_config(srv):
    """A config whose shell is bash with a known prompt (and no rc files)."""
    config = os.path.join(srv.dir, "config.toml")
    with open(config, "w") as f:
        f.write("font_size = 15\n")
    srv.env["SHELL"] = shutil.which("bash")
    # ~/.bashrc comes after /etc/bash.bashrc, which sets a prompt of its own.
    with open(os.path.join(srv.env["HOME"], ".bashrc"), "w") as f:
        f.write(f"PS1='{PROMPT}'\n")
    return config


def thread_cpu(pid):
    """CPU ms (utime + stime) of a process's threads, summed by thread name."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                st = f.read()
        except OSError:
            continue
        name = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")
    return out


def berth_first_prompt_and_cat(h, tmp, name, env_extra, file, marker):
    """Launch the embedded window on a first start; ms to the prompt on the server's screen,
    then s for `cat FILE` typed by pane.send to its end marker."""
    srv = h.BerthServer(tmp, name)
    srv.env["BERTH_LOG"] = os.environ.get("BERTH_BENCH_LOG", "warn")
    config = berth_shell_config(srv)
    trace = os.path.join(srv.dir, "window.trace")
    env = dict(srv.env, BERTH_CONFIG=config, BERTH_LATENCY_TRACE=trace, **env_extra)
    if "WAYLAND_DISPLAY" in env_extra:
        env.pop("DISPLAY", None)
        env["BERTH_BACKEND"] = "wayland"
    log = open(os.path.join(srv.dir, "window.log"), "ab")
    t0 = time.monotonic()
    proc = subprocess.Popen([h.BIN], env=env,
                            cwd=env["HOME"], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    srv.proc = proc
    try:
        srv.conn = h.wait_until(srv._connect, 60, 0.005, "the window's socket")
        pane = h.wait_until(lambda: (srv.panes() or [None])[0], 60, 0.005, "the first pane")
        pid = pane["id"]
        h.wait_until(lambda: PROMPT.strip() in srv.screen(pid), 60, 0.005, "the prompt")
        # The window's last presented frame with changed cells once the screen is quiet: the
        # one that shows the prompt (nothing changes after it; the cursor does not blink).
        time.sleep(0.5)
        with open(trace) as f:
            ats = [int(line.split()[1]) / 1e6 for line in f if line.startswith("frame ")]
        shown = max(ats) if ats else time.monotonic()
        prompt_ms = (shown - t0) * 1000
        cpu0 = thread_cpu(proc.pid)
        t1 = time.monotonic()
        srv.conn.call("pane.send", {"pane_id": pid, "text": f"cat {file}; echo {marker[:4]}''{marker[4:]}\r"})
        h.wait_until(lambda: marker in srv.screen(pid), 600, 0.02, "the end marker")
        if os.environ.get("BERTH_BENCH_CPU"):
            cpu1 = thread_cpu(proc.pid)
            print("    cpu ms by thread:", {k: v - cpu0.get(k, 0) for k, v in cpu1.items() if v - cpu0.get(k, 0) > 20})
        time.sleep(0.5)
        with open(trace) as f:
            last = max(int(line.split()[1]) / 1e6 for line in f if line.startswith("frame "))
        # The window's last frame (it shows the marker) when it came after the server's screen.
        return prompt_ms, max(last, t1) - t1
    finally:
        stop(proc)


def foot_first_prompt_and_cat(sway, tmp, name, file):
    """foot on sway: ms to the prompt drawn (grim captures, compared to the empty output), and s
    for `cat FILE` (the shell touches a file when cat is done)."""
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    done = os.path.join(d, "done")
    go = os.path.join(d, "go")
    rc = os.path.join(d, "rc")
    with open(rc, "w") as f:
        f.write(f"PS1='{PROMPT}'\ntouch {d}/prompt\nread _ < {go}; t0=$(date +%s.%N); cat {file}; "
                f"t1=$(date +%s.%N); echo \"$t0 $t1\" > {done}\n")
    os.mkfifo(go)
    env = sway.env(dict(os.environ, HOME=d))
    t0 = time.monotonic()
    proc = subprocess.Popen(["foot", "-o", "font=monospace:size=11", "bash", "--rcfile", rc, "-i"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # foot draws its first frame before the shell prints; the prompt file marks the shell ready
        # and a grim capture after it the prompt on screen.
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(d, "prompt")):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise TimeoutError("foot's shell did not start")
            time.sleep(0.002)
        prompt_ms = (time.monotonic() - t0) * 1000
        time.sleep(0.5)
        t1 = time.monotonic()
        with open(go, "w") as g:
            g.write("\n")
        while not os.path.exists(done):
            if time.monotonic() - t1 > 600 or proc.poll() is not None:
                raise TimeoutError("foot's cat did not end")
            time.sleep(0.02)
        return prompt_ms, time.monotonic() - t1
    finally:
        stop(proc)


# ---------------------------------------------------------------- the section


def ensure_packages(tools):
    """Installs the Debian packages of missing tools (as root, apt-get); returns what is missing."""
    missing = [pkg for tool, pkg in tools if not shutil.which(tool)]
    if missing and os.geteuid() == 0:
        print(f"  installing {' '.join(missing)}")
        subprocess.run(["apt-get", "update"], check=False, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *missing], check=False)
    return [pkg for tool, pkg in tools if not shutil.which(tool)]


def load_note():
    load1, load5, _ = os.getloadavg()
    return f"load average {load1:.2f} / {load5:.2f} on {os.cpu_count()} CPUs"


def bench_window(tmp, cfg, report, h):
    missing = ensure_packages([("Xvfb", "xvfb"), ("xdotool", "xdotool"), ("alacritty", "alacritty"),
                               ("sway", "sway"), ("foot", "foot")])
    if any(p in missing for p in ("xvfb", "xdotool", "alacritty")):
        print(f"  missing {' '.join(missing)}: the window figures are skipped")
        return
    n = 40 if cfg.quick else 200
    rounds = cfg.rounds
    xvfb = h.Xvfb(tmp)
    probe = XProbe(xvfb.display)
    loads = []
    try:
        res = {(t, f): [] for t in ("berth", "alacritty") for f in (False, True)}
        per_round = max(10, n // rounds)
        for r in range(rounds):
            for flood in (False, True):
                for term in ("berth", "alacritty"):
                    name = f"win-{term}-{'flood' if flood else 'idle'}-{r}"
                    if term == "berth":
                        xs = berth_x11_round(h, tmp, xvfb, probe, name, per_round, 5, flood)
                    else:
                        xs = alacritty_x11_round(tmp, xvfb, probe, name, per_round, 5, flood)
                    res[(term, flood)] += xs
                    loads.append(os.getloadavg()[0])
                    if xs:
                        print(f"  {term} {'flood' if flood else 'idle '} round {r}: median {statistics.median(xs):.2f} ms"
                              f", p95 {h.pct(xs, 95):.2f} ms, max {max(xs):.1f} (n={len(xs)}; {load_note()})")
        note = (f"XTest key → first changed pixel (XGetImage every 1 ms), `cat`, Xvfb + lavapipe/llvmpipe, "
                f"{WIN_W}x{WIN_H} px windows, interleaved; load average {min(loads):.1f}–{max(loads):.1f} "
                f"on {os.cpu_count()} CPUs")
        for flood in (False, True):
            tag = "flood" if flood else "idle"
            b, a = res[("berth", flood)], res[("alacritty", flood)]
            if not b or not a:
                continue
            extra = " (a neighbour pane/window running `yes`)" if flood else ""
            report.add(f"window.key_to_screen.{tag}.median", b, a, "ms", "wall", note + extra)
            report.add_scalar(f"window.key_to_screen.{tag}.p95", h.pct(b, 95), h.pct(a, 95), "ms", "wall",
                              note + extra)
            report.add_scalar(f"window.key_to_screen.{tag}.max", max(b), max(a), "ms", "wall", note + extra)
    finally:
        probe.close()

    # Wayland: Berth native, foot as the anchor, and Berth on X11 beside them.
    file = os.path.join(tmp, "window-cat-100mb.txt")
    mb = 10 if cfg.quick else 100
    h.gen_listing(file, mb * 1_000_000)
    os.chmod(tmp, 0o755)
    os.chmod(file, 0o644)
    wl = {"berth_x11": [], "berth_wayland": [], "foot": []}
    sway = None
    try:
        if "sway" not in missing:
            sway = Sway(tmp)
        for r in range(max(2, rounds - 2)):
            marker = f"CATEND{r}"
            wl["berth_x11"].append(berth_first_prompt_and_cat(h, tmp, f"wl-x11-{r}", {"DISPLAY": xvfb.display},
                                                              file, marker))
            if sway:
                wl["berth_wayland"].append(berth_first_prompt_and_cat(
                    h, tmp, f"wl-wl-{r}", {"WAYLAND_DISPLAY": sway.display}, file, marker))
                if "foot" not in missing:
                    wl["foot"].append(foot_first_prompt_and_cat(sway, tmp, f"wl-foot-{r}", file))
            print("  round {}: {} ({})".format(r, ", ".join(
                f"{k} prompt {v[-1][0]:.0f} ms, cat {v[-1][1]:.2f} s" for k, v in wl.items() if v), load_note()))
    finally:
        if sway:
            sway.stop()
        xvfb.stop()
    note = f"first start: launch → bash's prompt on the pane; {load_note()}"
    for key in ("berth_x11", "berth_wayland", "foot"):
        if wl[key]:
            report.add(f"window.{key}.first_prompt", [p for p, _ in wl[key]], None, "ms", "wall", note)
            report.add(f"window.{key}.cat_{mb}mb", [c for _, c in wl[key]], None, "s", "wall",
                       f"`cat` of a {mb} MB listing in the shown pane: typed → its end marker on the pane")
