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
    while True:
        timeout = 0.05
        if turn_end is not None:
            timeout = max(0.0, min(timeout, turn_end - time.monotonic()))
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            pending += chunk
        if turn_end is not None and time.monotonic() >= turn_end:
            turn_end = None
            hook({"hook_event_name": "Stop", "stop_hook_active": False,
                  "last_assistant_message": args.message})
            os.write(1, b"turn over\r\n")
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
                    turn_end = time.monotonic() + args.turn_ms / 1000.0
                paste_end = None
            elif byte in (b"\x03", b"\x1b"):
                record("interrupt", key=byte.decode(), in_turn=turn_end is not None)
                turn_end = None
            else:
                prompt += byte.decode(errors="replace")


def ready_timeout(fd):
    """Whether more input is readable within 50 ms."""
    ready, _, _ = select.select([fd], [], [], 0.05)
    return bool(ready)


if __name__ == "__main__":
    main()
