"""A scripted fake of the Anthropic Messages API on 127.0.0.1, speaking SSE exactly as the API does.

The real `anthropic` SDK is pointed at it with ANTHROPIC_BASE_URL. Each POST /v1/messages takes the next reply of
the script; every request body is recorded. Standalone: `python3 -m tests.fakes.messages_api SCRIPT.json
[--record FILE]` (from the repository's root) prints its base URL on the first line of stdout and serves until
killed (for the editors' tests).

A script is a JSON list of replies:
  {"content": [{"type": "text", "text": "Hi"}, {"type": "tool_use", "name": "read_file", "input": {...}}],
   "stop_reason": "end_turn"|"tool_use"|..., "usage": {...}, "delay": seconds between events,
   "stall": seconds (sleep before the headers), "hold": true (send nothing until the client goes away), and the
   stream options of tests/fakes/sse.py ("cut_after", "reset_after", "hang", "pause_at" ...)}
  {"raw": "text"} (a 200 event stream whose body is exactly this text: malformed SSE; `content_type` and
   `raw_status` make it another body, e.g. an HTML page)
  {"status": 500, "error": {"type": "api_error", "message": "..."}, "headers": {...}}
  {"events": [...raw event dicts...]}
GET /v1/models answers `MODELS` (the Models API's page shape).
"""

from __future__ import annotations

import json
import re
import ssl
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

from tests.fakes.sse import ModelHandler, ModelServer, serve_script, sse


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
    """The fake server: `requests` holds every JSON body received, `disconnects` the replies the client cut;
    over TLS with a server context `tls` (tests/fakes/certificate.py)."""

    def __init__(self, script: Optional[list[dict[str, Any]]] = None, record: Optional[Path] = None,
                 tls: Optional[ssl.SSLContext] = None) -> None:
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
        self.httpd = ModelServer(self._handler(), tls)
        self.base_url = self.httpd.base_url

    def add(self, *replies: dict[str, Any]) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> "FakeMessagesAPI":
        self.httpd.start()
        return self

    def stop(self) -> None:
        self.httpd.stop()

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

    def _handler(self) -> type[ModelHandler]:
        fake = self

        class Handler(ModelHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0].rstrip("/") == "/v1/models":  # the Models API, one page
                    return self.json(200, {"data": MODELS, "has_more": False, "first_id": MODELS[0]["id"],
                                           "last_id": MODELS[-1]["id"]})
                self.json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

            def do_POST(self) -> None:
                raw = self.read_body()
                if raw is None:
                    return
                body = json.loads(raw or b"{}")
                if self.path.startswith("/v1/messages/count_tokens"):
                    return self.json(200, {"input_tokens": len(json.dumps(body)) // 4})
                number, reply = fake._next(body)
                if "status" in reply:
                    error = {"type": "error", "error": reply["error"]}
                    return self.json(reply["status"], error, reply.get("headers", {}))
                if "raw" in reply:  # malformed SSE (or another body), exactly as given
                    time.sleep(reply.get("stall", 0))
                    fake.first_byte_at.append(time.perf_counter())
                    return self.raw(reply.get("raw_status", 200), reply["raw"].encode(),
                                    reply.get("content_type", "text/event-stream"))
                frames = [sse(json.dumps(event), event["type"]) for event in reply_events(reply, number)]
                fake.first_byte_at.append(time.perf_counter() + reply.get("stall", 0))
                if not self.stream_reply(frames, reply, sse('{"type": "ping"}', "ping"),
                                         reply.get("content_type", "text/event-stream"),
                                         reply.get("raw_status", 200)):
                    with fake._lock:
                        fake.disconnects.append(number)

        return Handler


def main() -> None:
    serve_script(lambda script: FakeMessagesAPI(script), lambda fake: fake.base_url, __doc__)


if __name__ == "__main__":
    sys.exit(main())
