#!/usr/bin/env python3
"""A scripted OpenAI API on loopback, for real codex and opencode turns in tests.

    model_openai.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

Listens on 127.0.0.1 (a free port, written to PORT once it listens) and answers
`POST /v1/responses` (the Responses API codex speaks, streamed SSE), `POST
/v1/chat/completions` (the Chat Completions opencode's OpenAI-compatible provider speaks,
streamed or not) and `GET /v1/models`; anything else gets a 404 in the API's error format.
Every request is logged to REQUESTS.jsonl as one JSON line: `path`, `kind` (`main`, `side`,
`models`, `other`), the `marker` and `step` it was answered from, and the whole `body`.

SCRIPT.json maps markers to steps, and is read again on every request:

    {"cases": {"T-ALLOW": [
        {"tool": "bash", "input": {"command": "echo hi", "description": "Say hi"}},
        {"text": "All done."}
    ]}}

A main call (one that offers tools) is answered from the case whose marker the latest user
prompt holds (a user message's text, never a tool's output): its step is the number of
answers the model gave after that prompt (assistant messages, tool calls), so a retried
request gets the same answer and a resumed conversation picks up where its last prompt is.
Steps: `{"text": T}` a final text; `{"tool": NAME, "input": {...}}` a function call with
those arguments (`{report}` in them: the report command the prompt names, as a task's prompt
says how to report); `"namespace": NS` with it calls function NAME of the request's namespace
NS (codex offers an MCP server's tools as namespace `mcp__SERVER`); `"delay": S` waits S seconds first; `{"hang": S, "text": T}` streams T and
keeps the stream open for up to S seconds or until the client goes away. A prompt with no
known marker, or a step past the end, gets the text `(no script)`. Side calls (no tools:
titles, summaries) never consume a step.
"""

import argparse
import json
import os
import re
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
        print("model_openai: cannot read the script: %s" % e, file=sys.stderr)
        return {}


def text_of(content):
    """The text of a message's content: a string, or text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type") in
                         ("text", "input_text", "output_text"))
    return ""


def items_of(body):
    """The conversation as (role, text) items: `user` prompts, `answer` for each thing the
    model said (an assistant message, a tool call), `tool` for tool output."""
    out = []
    if "messages" in body:  # Chat Completions
        for m in body.get("messages") or []:
            role = m.get("role")
            if role == "user":
                out.append(("user", text_of(m.get("content"))))
            elif role == "assistant":
                out.append(("answer", text_of(m.get("content"))))
            elif role == "tool":
                out.append(("tool", text_of(m.get("content"))))
        return out
    inp = body.get("input")
    if isinstance(inp, str):
        return [("user", inp)]
    for item in inp or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            out.append(("user", text_of(item.get("content"))))
        elif kind == "message" and item.get("role") == "assistant":
            out.append(("answer", text_of(item.get("content"))))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            out.append(("answer", ""))
        elif kind.endswith("_output"):
            out.append(("tool", str(item.get("output"))))
    return out


def choose(body, cases):
    """(marker, step index, step) for a main call."""
    items = items_of(body)
    for i in range(len(items) - 1, -1, -1):
        role, text = items[i]
        if role != "user":
            continue
        for marker in sorted(cases, key=len, reverse=True):
            if marker in text:
                step = sum(1 for r, _ in items[i + 1:] if r == "answer")
                steps = cases[marker]
                if step < len(steps):
                    return marker, step, fill(steps[step], text)
                return marker, step, {"text": "(no script)"}
    return None, None, {"text": "(no script)"}


REPORT = re.compile(r"`([^`]*? task report(?: --task \S+)?) --status")


def fill(value, prompt):
    """The step's input with `{report}` replaced by the report command the prompt names (a
    task's prompt says how to report; a model follows it)."""
    if isinstance(value, str):
        if "{report}" in value:
            found = REPORT.search(prompt or "")
            value = value.replace("{report}", found.group(1) if found else "berth task report")
        return value
    if isinstance(value, list):
        return [fill(v, prompt) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, prompt) for k, v in value.items()}
    return value


def usage_chat():
    return {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def usage_responses():
    return {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "berth-model-openai"

    def log_message(self, fmt, *args):  # quiet: requests go to the log file
        pass

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > 64 * 1024 * 1024:
            raise ValueError("bad Content-Length")
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd":
            raise ValueError("zstd request bodies are not supported")
        return json.loads(raw.decode("utf-8")) if raw else {}

    def send_json(self, status, obj):
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def not_found(self, path):
        self.send_json(404, {"error": {"type": "invalid_request_error", "code": "not_found",
                                       "message": "no such endpoint: %s" % path}})

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.rstrip("/").endswith("/models"):
            log({"path": self.path, "kind": "models", "body": None})
            self.send_json(200, {"object": "list", "data": [
                {"id": "scripted", "object": "model", "created": 1700000000,
                 "owned_by": "berth"}]})
            return
        log({"path": self.path, "kind": "other", "method": "GET", "body": None})
        self.not_found(path)

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        try:
            body = self.read_body()
        except ValueError as e:
            log({"path": self.path, "kind": "other", "error": str(e), "body": None})
            self.send_json(400, {"error": {"type": "invalid_request_error", "message": str(e)}})
            return
        if not (path.endswith("/responses") or path.endswith("/chat/completions")):
            log({"path": self.path, "kind": "other", "method": "POST", "body": body})
            self.not_found(path)
            return
        if body.get("tools"):
            marker, index, step = choose(body, load_cases())
            log({"path": self.path, "kind": "main", "marker": marker, "step": index,
                 "body": body})
        else:
            marker, index, step = None, None, {"text": "Berth test"}
            log({"path": self.path, "kind": "side", "body": body})
        delay = step.get("delay")
        if isinstance(delay, (int, float)) and 0 < delay <= 30:
            time.sleep(delay)
        try:
            if path.endswith("/responses"):
                self.answer_responses(body, step)
            elif body.get("stream"):
                self.chat_stream(body, step)
            else:
                self.chat_once(body, step)
        except (BrokenPipeError, ConnectionResetError):
            log({"path": self.path, "kind": "closed", "body": None})
            self.close_connection = True

    # ---- streaming ----

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, text):
        data = text.encode("utf-8")
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def hang_for(self, step, ping):
        deadline = time.monotonic() + min(float(step["hang"]), 600.0)
        while time.monotonic() < deadline:
            ping()
            time.sleep(0.5)

    # ---- Responses (codex) ----

    def answer_responses(self, body, step):
        model = body.get("model") or "scripted"
        rid = next_id("resp")
        seq = [0]

        def event(name, data):
            data = dict(data, type=name, sequence_number=seq[0])
            seq[0] += 1
            self.chunk("event: %s\ndata: %s\n\n" % (name, json.dumps(data)))

        base = {"id": rid, "object": "response", "created_at": int(time.time()),
                "model": model, "status": "in_progress", "output": []}
        self.start_stream()
        event("response.created", {"response": base})
        event("response.in_progress", {"response": base})
        output = []
        if step.get("tool"):
            item = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                    "name": step["tool"], "arguments": json.dumps(step.get("input", {})),
                    "status": "completed"}
            if step.get("namespace"):
                # A tool of a namespace the request offers (codex offers an MCP server's tools
                # as the functions of namespace `mcp__SERVER`): the call names both.
                item["namespace"] = step["namespace"]
            event("response.output_item.added", {"output_index": 0,
                                                 "item": dict(item, arguments="",
                                                              status="in_progress")})
            event("response.function_call_arguments.delta", {
                "output_index": 0, "item_id": item["id"], "delta": item["arguments"]})
            event("response.function_call_arguments.done", {
                "output_index": 0, "item_id": item["id"], "arguments": item["arguments"]})
            event("response.output_item.done", {"output_index": 0, "item": item})
            output.append(item)
        else:
            text = step.get("text") or ""
            mid = next_id("msg")
            part = {"type": "output_text", "text": "", "annotations": []}
            event("response.output_item.added", {"output_index": 0, "item": {
                "type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                "content": []}})
            event("response.content_part.added", {"output_index": 0, "item_id": mid,
                                                  "content_index": 0, "part": part})
            for at in range(0, max(len(text), 1), 2048):
                event("response.output_text.delta", {"output_index": 0, "item_id": mid,
                                                     "content_index": 0,
                                                     "delta": text[at:at + 2048]})
            if step.get("hang") is not None:
                self.hang_for(step, lambda: self.chunk(": ping\n\n"))
            event("response.output_text.done", {"output_index": 0, "item_id": mid,
                                                "content_index": 0, "text": text})
            done = dict(part, text=text)
            event("response.content_part.done", {"output_index": 0, "item_id": mid,
                                                 "content_index": 0, "part": done})
            item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                    "content": [done]}
            event("response.output_item.done", {"output_index": 0, "item": item})
            output.append(item)
        event("response.completed", {"response": dict(base, status="completed", output=output,
                                                      usage=usage_responses())})
        self.end_stream()

    # ---- Chat Completions (opencode) ----

    def chat_message(self, step):
        if step.get("tool"):
            call = {"id": next_id("call"), "type": "function",
                    "function": {"name": step["tool"],
                                 "arguments": json.dumps(step.get("input", {}))}}
            return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        return {"role": "assistant", "content": step.get("text") or ""}, "stop"

    def chat_once(self, body, step):
        message, finish = self.chat_message(step)
        self.send_json(200, {"id": next_id("chatcmpl"), "object": "chat.completion",
                             "created": int(time.time()), "model": body.get("model"),
                             "choices": [{"index": 0, "message": message,
                                          "finish_reason": finish}],
                             "usage": usage_chat()})

    def chat_stream(self, body, step):
        cid = next_id("chatcmpl")
        model = body.get("model") or "scripted"

        def send(delta, finish=None, usage=None):
            data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage is not None:
                data["choices"] = []
                data["usage"] = usage
            self.chunk("data: %s\n\n" % json.dumps(data))

        self.start_stream()
        send({"role": "assistant", "content": ""})
        message, finish = self.chat_message(step)
        if message.get("tool_calls"):
            call = message["tool_calls"][0]
            send({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                  "function": {"name": call["function"]["name"],
                                               "arguments": ""}}]})
            raw = call["function"]["arguments"]
            for at in range(0, len(raw), 16):
                send({"tool_calls": [{"index": 0, "function": {"arguments": raw[at:at + 16]}}]})
        else:
            text = message["content"]
            for at in range(0, max(len(text), 1), 2048):
                send({"content": text[at:at + 2048]})
            if step.get("hang") is not None:
                self.hang_for(step, lambda: self.chunk(": ping\n\n"))
        send({}, finish)
        send({}, usage=usage_chat())
        self.chunk("data: [DONE]\n\n")
        self.end_stream()


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
