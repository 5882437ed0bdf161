#!/usr/bin/env python3
"""A scripted Anthropic Messages API on loopback, for real claude turns in tests.

    model_anthropic.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

Listens on 127.0.0.1 (a free port, written to PORT once it listens) and answers
`POST /v1/messages` (streamed SSE or not, as the request asks), `POST
/v1/messages/count_tokens` and `GET /v1/models`; anything else gets a 404 in the API's error
format. Every request is logged to REQUESTS.jsonl as one JSON line: `path`, `kind` (`main`,
`side`, `count_tokens`, `models`, `other`), the `marker` and `step` it was answered from, and
the whole `body`.

SCRIPT.json maps markers to steps, and is read again on every request (a test may add cases
while the server runs):

    {"cases": {"T-ALLOW": [
        {"tool": "Bash", "input": {"command": "echo hi", "description": "Say hi"}},
        {"text": "All done."}
    ]}}

A main call (one that offers claude's `Bash` tool) is answered from the case whose marker the
latest user prompt holds (the text blocks of a user message, never a tool result's content): its step is the
number of assistant messages after that prompt, so a retried request gets the same answer and
a resumed conversation picks up where its last prompt is. Steps:

- `{"text": T}`: the final text, `stop_reason` `end_turn`;
- `{"tool": NAME, "input": {...}}` (optional `"text"` before it): a `tool_use` block, its input
  streamed as `input_json_delta` pieces, `stop_reason` `tool_use`;
- `"delay": S` on any step: waits S seconds before answering (a turn that stays `working`
  long enough to be seen);
- `{"hang": S, "text": T}`: streams the text T, then keeps the stream open, sending `ping`
  events, for up to S seconds or until the client goes away (a turn that is still working
  when the test interrupts it).

A prompt with no known marker, or a step past the end, gets the text `(no script)`. Side calls
(no `Bash` tool offered: titles, summaries, the key check) never consume a step: they get a
short text, JSON where the system prompt asks for JSON.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
ARGS = None
COUNTER = [0]


def next_id(prefix):
    with LOCK:
        COUNTER[0] += 1
        return "%s_berth%06d" % (prefix, COUNTER[0])


def log(entry):
    line = json.dumps(entry, ensure_ascii=False)
    with LOCK:
        with open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()


def load_cases():
    try:
        with open(ARGS.script, encoding="utf-8") as f:
            return json.load(f).get("cases", {})
    except (OSError, ValueError) as e:
        print("model_anthropic: cannot read the script: %s" % e, file=sys.stderr)
        return {}


def blocks(content):
    """A message's content as a list of blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def prompt_text(message):
    """The text blocks of a user message (never a tool result's content), or None.

    After an interrupted tool call claude sends the next prompt in the same user message as
    the tool result it made up ("interrupted"), so a message with a tool result may hold a
    prompt too.
    """
    if message.get("role") != "user":
        return None
    parts = blocks(message.get("content"))
    texts = [b.get("text", "") for b in parts if b.get("type") == "text"]
    return "\n".join(texts) if texts else None


def choose(body, cases):
    """(marker, step index, step) for a main call."""
    messages = body.get("messages") or []
    for i in range(len(messages) - 1, -1, -1):
        text = prompt_text(messages[i])
        if text is None:
            continue
        for marker in sorted(cases, key=len, reverse=True):
            if marker in text:
                step = sum(1 for m in messages[i + 1:] if m.get("role") == "assistant")
                steps = cases[marker]
                if step < len(steps):
                    return marker, step, steps[step]
                return marker, step, {"text": "(no script)"}
    return None, None, {"text": "(no script)"}


def is_main(body):
    tools = body.get("tools") or []
    return any(isinstance(t, dict) and t.get("name") == "Bash" for t in tools)


def system_text(body):
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in blocks(system))


def side_text(body):
    """A sensible short answer to a call that is not a turn's (title, summary, key check)."""
    system = system_text(body).lower()
    if "title" in system and "json" in system:
        return json.dumps({"title": "Berth test"})
    if "json" in system:
        return json.dumps({"isNewTopic": True, "title": "Berth test"})
    return "Berth test"


def content_of(step):
    """The assistant content blocks of a step, and its stop reason."""
    out = []
    if step.get("text") is not None:
        out.append({"type": "text", "text": step["text"]})
    if step.get("tool"):
        out.append({
            "type": "tool_use",
            "id": next_id("toolu"),
            "name": step["tool"],
            "input": step.get("input", {}),
        })
        return out, "tool_use"
    return out, "end_turn"


def usage(output=10):
    return {
        "input_tokens": 100,
        "output_tokens": output,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "berth-model-anthropic"

    def log_message(self, fmt, *args):  # quiet: requests go to the log file
        pass

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > 64 * 1024 * 1024:
            raise ValueError("bad Content-Length")
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw.decode("utf-8")) if raw else {}

    def send_json(self, status, obj):
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", next_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def not_found(self, path):
        self.send_json(404, {
            "type": "error",
            "error": {"type": "not_found_error", "message": "no such endpoint: %s" % path},
        })

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.rstrip("/") == "/v1/models":
            log({"path": self.path, "kind": "models", "body": None})
            self.send_json(200, {
                "data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Sonnet",
                          "created_at": "2025-01-01T00:00:00Z"}],
                "has_more": False, "first_id": "claude-sonnet-4-5",
                "last_id": "claude-sonnet-4-5",
            })
            return
        log({"path": self.path, "kind": "other", "method": "GET", "body": None})
        self.not_found(path)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        try:
            body = self.read_body()
        except ValueError as e:
            log({"path": self.path, "kind": "other", "error": str(e), "body": None})
            self.send_json(400, {"type": "error",
                                 "error": {"type": "invalid_request_error", "message": str(e)}})
            return
        if path == "/v1/messages/count_tokens":
            log({"path": self.path, "kind": "count_tokens", "body": body})
            self.send_json(200, {"input_tokens": 100})
            return
        if path != "/v1/messages":
            log({"path": self.path, "kind": "other", "method": "POST", "body": body})
            self.not_found(path)
            return
        model = body.get("model") or "claude-sonnet-4-5"
        if is_main(body):
            marker, index, step = choose(body, load_cases())
            log({"path": self.path, "kind": "main", "marker": marker, "step": index,
                 "body": body})
        else:
            marker, index, step = None, None, {"text": side_text(body)}
            log({"path": self.path, "kind": "side", "body": body})
        delay = step.get("delay")
        if isinstance(delay, (int, float)) and 0 < delay <= 30:
            time.sleep(delay)
        if body.get("stream"):
            self.stream(model, step)
        else:
            content, stop = content_of(step)
            self.send_json(200, {
                "id": next_id("msg"), "type": "message", "role": "assistant", "model": model,
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": usage(),
            })

    def event(self, name, data):
        chunk = ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode("utf-8")
        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.flush()

    def hang(self, step):
        """Streams the step's text, then pings until its time is up or the client leaves."""
        self.event("content_block_start", {
            "type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}})
        self.event("content_block_delta", {
            "type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": step.get("text") or "Thinking."}})
        deadline = time.monotonic() + min(float(step["hang"]), 600.0)
        while time.monotonic() < deadline:
            self.event("ping", {"type": "ping"})
            time.sleep(0.5)
        self.event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self.event("message_delta", {
            "type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 10}})
        self.event("message_stop", {"type": "message_stop"})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def stream(self, model, step):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", next_id("req"))
        self.end_headers()
        try:
            self.event("message_start", {"type": "message_start", "message": {
                "id": next_id("msg"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": usage(1),
            }})
            if step.get("hang") is not None:
                self.hang(step)
                return
            content, stop = content_of(step)
            for index, block in enumerate(content):
                if block["type"] == "text":
                    self.event("content_block_start", {
                        "type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}})
                    text = block["text"]
                    for at in range(0, max(len(text), 1), 2048):
                        self.event("content_block_delta", {
                            "type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": text[at:at + 2048]}})
                else:
                    self.event("content_block_start", {
                        "type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": block["id"],
                                          "name": block["name"], "input": {}}})
                    raw = json.dumps(block["input"])
                    # In pieces, as the real API streams a tool's input.
                    for at in range(0, len(raw), 16):
                        self.event("content_block_delta", {
                            "type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta",
                                      "partial_json": raw[at:at + 16]}})
                self.event("content_block_stop", {"type": "content_block_stop",
                                                  "index": index})
            self.event("message_delta", {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 10}})
            self.event("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            log({"path": self.path, "kind": "closed", "body": None})
            self.close_connection = True


def watch_parent(pid):
    """Exits once the process that started the server is gone (a test binary that ended)."""
    while os.getppid() == pid:
        time.sleep(0.5)
    os._exit(0)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--parent", type=int, help="exit when this process is gone")
    ARGS = parser.parse_args()
    if ARGS.parent:
        threading.Thread(target=watch_parent, args=(ARGS.parent,), daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
