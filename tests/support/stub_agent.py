#!/usr/bin/env python3
"""A stub coding agent for tests/e2e_agents_work.rs: a TUI that takes prompts the way claude's
does (see ../shared/AGENT-CHANNELS.md, "Prompt submit") and reports through the real
`berth hook claude` CLI with the documented JSON.

- Turns on bracketed paste (DECSET 2004) and reads its terminal raw.
- Records every paste's exact text, and every Enter with the time since the last paste ended.
- An Enter sooner than --paste-window ms after a paste ends joins the paste (claude commits a
  paste 100 ms after its last byte), as a newline in the prompt; a later one submits it.
- On submit: the `UserPromptSubmit` hook (unless --no-ack), then a turn of --turn-ms, then the
  `Stop` hook with `last_assistant_message` = --message. An Enter with nothing typed does
  nothing. Ctrl-C or a lone Escape during a turn cancels it and, like claude, fires no hook.
- At start, the `SessionStart` hook (so the pane's hooks are wired), then "stub ready".
- With --on-submit CMD, each submitted prompt also runs CMD through `sh -c` in the stub's cwd
  (a task's worktree: commit a file, run `berth task report`), during the turn.
- With --ask COMMAND, a submitted prompt asks permission to run COMMAND, as the real claude
  does (issue 26): `PreToolUse`, then the `PermissionRequest` hook runs concurrently with its
  own dialog on screen ("Allow? 1 yes / 2 no / esc"); a spinner is redrawn every 100 ms while
  it works (claude's is). The first answer wins: the hook's (allow runs the tool, deny ends the
  turn with `Stop`, no decision keeps the dialog), or a key in its own dialog, which kills the
  hook as claude does: `y`/`1` runs the tool for --tool-ms, then `PostToolUse` and `Stop`;
  `n`/`2`/Escape/Ctrl-C print "Interrupted · What should Claude do instead?" and send no hook.
  --hook-wait S gives the permission hook `BERTH_DECISION_WAIT=S`.

Everything it sees goes to --log as JSON lines: {"event": "paste"|"enter"|"submit"|
"joined"|"empty_enter"|"interrupt"|"hook", ...}.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import termios
import time
import tty

PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--berth", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--paste-window", type=float, default=100.0)
    parser.add_argument("--turn-ms", type=float, default=200.0)
    parser.add_argument("--message", default="stub finished")
    parser.add_argument("--no-ack", action="store_true")
    parser.add_argument("--on-submit", default=None)
    parser.add_argument("--ask", default=None)
    parser.add_argument("--tool-ms", type=float, default=1500.0)
    parser.add_argument("--hook-wait", default=None)
    args = parser.parse_args()

    log = open(args.log, "a", buffering=1)

    def record(event, **fields):
        fields["event"] = event
        fields["t"] = time.monotonic()
        log.write(json.dumps(fields) + "\n")

    def hook(payload):
        payload.setdefault("session_id", "stub-session-1")
        done = subprocess.run(
            [args.berth, "hook", "claude"],
            input=json.dumps(payload).encode(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=10,
        )
        record("hook", name=payload["hook_event_name"], rc=done.returncode,
               stderr=done.stderr.decode(errors="replace"))

    def ask(command):
        """Starts the permission hook without waiting for it, as claude does."""
        payload = {"session_id": "stub-session-1", "hook_event_name": "PermissionRequest",
                   "tool_name": "Bash", "tool_input": {"command": command}}
        env = dict(os.environ)
        if args.hook_wait is not None:
            env["BERTH_DECISION_WAIT"] = args.hook_wait
        proc = subprocess.Popen([args.berth, "hook", "claude"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
        record("asked", command=command)
        return proc
    hook.ask = ask

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    try:
        os.write(1, b"\x1b[?2004h")
        hook({"hook_event_name": "SessionStart", "source": "startup"})
        os.write(1, b"stub ready\r\n")
        run(args, record, hook, fd)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def run(args, record, hook, fd):
    pending = b""  # bytes read but not yet understood
    paste = None  # the text of a paste in progress
    prompt = ""  # what is typed (pasted) and not submitted
    paste_end = None  # when the last paste ended
    turn_end = None  # when the running turn ends
    asking = None  # with --ask: the permission hook's process while the dialog is up
    tool_end = None  # with --ask: when the allowed tool finishes
    spun = 0.0  # when the spinner was last drawn

    def settle(how):
        """The question is answered (`how`: yes, no, allow, deny)."""
        nonlocal asking, tool_end, turn_end
        proc, asking = asking, None
        if proc.poll() is None:
            proc.kill()  # claude kills its hook when its own dialog is answered
            proc.wait()
        record("settled", how=how)
        if how in ("yes", "allow"):
            tool_end = time.monotonic() + args.tool_ms / 1000.0
        elif how == "deny":
            turn_end = time.monotonic()
        else:
            os.write(1, b"\r\x1b[KInterrupted \xc2\xb7 What should Claude do instead?\r\n> ")

    while True:
        timeout = 0.05
        if turn_end is not None:
            timeout = max(0.0, min(timeout, turn_end - time.monotonic()))
        watched = [fd] + ([asking.stdout] if asking is not None and asking.stdout else [])
        ready, _, _ = select.select(watched, [], [], timeout)
        if asking is not None and asking.stdout and asking.stdout in ready:
            out = asking.stdout.read()
            asking.wait()
            record("hook_answer", stdout=out.decode(errors="replace"))
            try:
                behavior = json.loads(out)["hookSpecificOutput"]["decision"]["behavior"]
            except (ValueError, KeyError, TypeError):
                behavior = None
            if behavior is None:
                asking.stdout = None  # no decision: the dialog stays, only a key answers now
                asking = _Answered(asking)
            else:
                settle(behavior)
        if fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            pending += chunk
        now = time.monotonic()
        if (turn_end is not None or tool_end is not None) and args.ask and now - spun >= 0.1:
            spun = now
            os.write(1, ("\r\x1b[K%s working" % "|/-\\"[int(now * 10) % 4]).encode())
        if tool_end is not None and now >= tool_end:
            tool_end = None
            hook({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                  "tool_input": {"command": args.ask}, "tool_response": {}})
            turn_end = now
        if turn_end is not None and time.monotonic() >= turn_end:
            turn_end = None
            hook({"hook_event_name": "Stop", "stop_hook_active": False,
                  "last_assistant_message": args.message})
            os.write(1, b"\r\x1b[Kturn over\r\n")
        while pending:
            if paste is not None:
                end = pending.find(PASTE_END)
                if end < 0:
                    # Keep a possible partial end marker for the next read.
                    keep = len(PASTE_END) - 1
                    paste += pending[:-keep] if len(pending) > keep else b""
                    pending = pending[-keep:] if len(pending) > keep else pending
                    break
                paste += pending[:end]
                pending = pending[end + len(PASTE_END):]
                text = paste.decode()
                record("paste", text=text, bytes=len(paste))
                prompt += text
                paste = None
                paste_end = time.monotonic()
                continue
            if pending.startswith(PASTE_START):
                pending = pending[len(PASTE_START):]
                paste = b""
                continue
            if PASTE_START.startswith(pending) and ready_timeout(fd):
                break  # a partial start marker with more to come: read the rest
            byte, pending = pending[:1], pending[1:]
            if byte == b"\r":
                now = time.monotonic()
                gap = None if paste_end is None else (now - paste_end) * 1000.0
                record("enter", gap_ms=gap)
                if gap is not None and gap < args.paste_window:
                    record("joined", gap_ms=gap)
                    prompt += "\n"
                elif prompt == "":
                    record("empty_enter")
                else:
                    record("submit", text=prompt, gap_ms=gap)
                    text, prompt = prompt, ""
                    if not args.no_ack:
                        hook({"hook_event_name": "UserPromptSubmit", "prompt": text})
                    if args.on_submit:
                        done = subprocess.run(["sh", "-c", args.on_submit], stdin=subprocess.DEVNULL,
                                              capture_output=True, timeout=60)
                        record("on_submit", rc=done.returncode,
                               stdout=done.stdout.decode(errors="replace"),
                               stderr=done.stderr.decode(errors="replace"))
                    if args.ask:
                        hook({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "tool_input": {"command": args.ask}})
                        asking = hook.ask(args.ask)
                        os.write(1, ("\r\nAllow Bash: %s? 1 yes / 2 no / esc\r\n"
                                     % args.ask).encode())
                    else:
                        turn_end = time.monotonic() + args.turn_ms / 1000.0
                paste_end = None
            elif asking is not None and byte in (b"y", b"1"):
                settle("yes")
            elif asking is not None and byte in (b"n", b"2", b"\x03", b"\x1b"):
                settle("no")
            elif byte in (b"\x03", b"\x1b"):
                record("interrupt", key=byte.decode(), in_turn=turn_end is not None)
                turn_end = None
                tool_end = None
            else:
                prompt += byte.decode(errors="replace")


class _Answered:
    """A permission hook that ended with no decision: the dialog stays up."""

    def __init__(self, proc):
        self.stdout = None
        self.proc = proc

    def poll(self):
        return self.proc.poll()

    def kill(self):
        pass

    def wait(self):
        return self.proc.wait()


def ready_timeout(fd):
    """Whether more input is readable within a second: the rest of a paste's start marker
    split across reads (on a loaded machine its bytes have been seen to come more than 50 ms
    apart, and the marker then read as typed text made every line of the paste a submit)."""
    ready, _, _ = select.select([fd], [], [], 1.0)
    return bool(ready)


if __name__ == "__main__":
    main()
