"""A scripted fake of the Anthropic Messages API on 127.0.0.1, speaking SSE exactly as the API does.

The real `anthropic` SDK is pointed at it with ANTHROPIC_BASE_URL. Each POST /v1/messages takes the next reply of
the script; every request body is recorded. Standalone: `python tests/fakes/messages_api.py SCRIPT.json
[--record FILE]` prints its base URL on the first line of stdout and serves until killed (for the node and
Neovim tests).

A script is a JSON list of replies:
  {"content": [{"type": "text", "text": "Hi"}, {"type": "tool_use", "name": "read_file", "input": {...}}],
   "stop_reason": "end_turn"|"tool_use"|..., "usage": {...}, "delay": seconds between events,
   "cut_after": N (drop the connection after N events), "stall": seconds (sleep before the headers),
   "hold": true (send nothing until the client goes away), "hang": true (after the events, keep the stream open),
   in-process only: "pause_at": N with "resume": a threading.Event (after N events, wait until it is set, or until
   the client goes away)}
  {"raw": "text"} (a 200 event stream whose body is exactly this text: malformed SSE; `content_type` and
   `raw_status` make it another body, e.g. an HTML page)
  {"status": 500, "error": {"type": "api_error", "message": "..."}, "headers": {...}}
  {"events": [...raw event dicts...]}
GET /v1/models answers `MODELS` (the Models API's page shape).
"""

from __future__ import annotations

import argparse
import json
import re
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional


def text_chunks(text: str) -> list[str]:
    """Split text into word-sized deltas, as the API streams it."""
    return re.findall(r"\s*\S+\s*", text) or [text]


def reply_events(reply: dict[str, Any], number: int) -> list[dict[str, Any]]:
    """The SSE events of one scripted reply."""
    if "events" in reply:
        return reply["events"]
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    usage.update(reply.get("usage", {}))
    content = reply.get("content", [])
    stop = reply.get("stop_reason") or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {
            "id": f"msg_{number:03d}", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}},
    ]
    for i, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": t}}
                       for t in text_chunks(block["text"])]
        elif kind == "thinking":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            events.append({"type": "content_block_delta", "index": i,
                           "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
            events.append({"type": "content_block_delta", "index": i,
                           "delta": {"type": "signature_delta", "signature": block.get("signature", "sig")}})
        elif kind == "tool_use":
            tool_id = block.get("id") or f"toolu_{number:03d}_{i}"
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": tool_id, "name": block["name"], "input": {}}})
            raw = json.dumps(block.get("input", {}))
            half = len(raw) // 2
            events += [{"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": part}} for part in (raw[:half], raw[half:])]
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": reply.get("usage", {}).get("output_tokens", 5)}})
    events.append({"type": "message_stop"})
    return events


MODELS = [{"type": "model", "id": "claude-test", "display_name": "Claude Test", "created_at": "2026-01-01T00:00:00Z",
           "lifecycle": "active", "max_input_tokens": 200000, "max_tokens": 64000},
          {"type": "model", "id": "claude-small-test", "display_name": "Claude Small Test",
           "created_at": "2025-06-01T00:00:00Z", "lifecycle": "active"}]


class FakeMessagesAPI:
    """The fake server: `requests` holds every JSON body received, `disconnects` the replies the client cut."""

    def __init__(self, script: Optional[list[dict[str, Any]]] = None, record: Optional[Path] = None) -> None:
        self.script: list[dict[str, Any]] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.disconnects: list[int] = []
        self.first_byte_at: list[float] = []
        """time.perf_counter() when each streamed reply's first byte went out (the benchmarks' clock)."""
        self.record = record
        self.default: Any = None
        """The reply when the script is empty, or a function of the request body giving it (None: a 500
        "script exhausted")."""
        self.arrivals: list[float] = []
        """time.monotonic() at which each request's body was received."""
        self._lock = threading.Lock()
        self._served = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread: Optional[threading.Thread] = None

    def add(self, *replies: dict[str, Any]) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> "FakeMessagesAPI":
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            if self.record:
                self.record.write_text(json.dumps(self.requests))
            self._served += 1
            if not self.script and self.default is not None:
                return self._served, self.default(body) if callable(self.default) else self.default
            if not self.script:
                return self._served, {"status": 500, "error": {"type": "api_error", "message": "script exhausted"},
                                      "headers": {"x-should-retry": "false"}}
            return self._served, self.script.pop(0)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # closing the connection ends the body

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.split("?")[0].rstrip("/") == "/v1/models":  # the Models API, one page
                    return self._json(200, {"data": MODELS, "has_more": False, "first_id": MODELS[0]["id"],
                                            "last_id": MODELS[-1]["id"]})
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client went away before its whole body (an aborted call): no answer
                    return
                body = json.loads(raw or b"{}")
                if self.path.startswith("/v1/messages/count_tokens"):
                    return self._json(200, {"input_tokens": len(json.dumps(body)) // 4})
                number, reply = fake._next(body)
                if "status" in reply:
                    error = {"type": "error", "error": reply["error"]}
                    return self._json(reply["status"], error, reply.get("headers", {}))
                try:
                    time.sleep(reply.get("stall", 0))
                    if reply.get("hold"):
                        self._hold()
                    fake.first_byte_at.append(time.perf_counter())
                    self.send_response(reply.get("raw_status", 200))
                    self.send_header("content-type", reply.get("content_type", "text/event-stream"))
                    self.end_headers()
                    if "raw" in reply:  # malformed SSE (or another body), exactly as given
                        self.wfile.write(reply["raw"].encode())
                        self.wfile.flush()
                        return
                    for n, event in enumerate(reply_events(reply, number)):
                        if "cut_after" in reply and n >= reply["cut_after"]:
                            break
                        if n == reply.get("pause_at"):
                            self._hold(reply["resume"])
                        self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(reply.get("delay", 0))
                    if reply.get("hang"):  # keep the stream open until the client goes away
                        while True:
                            self.wfile.write(b"event: ping\ndata: {\"type\": \"ping\"}\n\n")
                            self.wfile.flush()
                            time.sleep(0.05)
                except (BrokenPipeError, ConnectionResetError):
                    with fake._lock:
                        fake.disconnects.append(number)

            def _hold(self, until: Optional[threading.Event] = None) -> None:
                """Answer nothing until the client closes the connection (then it counts as a disconnect), or
                until `until` is set."""
                while not (until is not None and until.is_set()):
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        raise ConnectionResetError

            def _json(self, status: int, body: dict[str, Any], headers: Optional[dict[str, str]] = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--record", type=Path, help="write every request body received to this JSON file")
    args = parser.parse_args()
    fake = FakeMessagesAPI(json.loads(args.script.read_text()), args.record)
    print(fake.base_url, flush=True)
    try:
        fake.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
