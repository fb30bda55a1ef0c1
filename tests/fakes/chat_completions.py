"""A scripted fake of an OpenAI-compatible chat.completions API on 127.0.0.1, streaming SSE exactly as the API does.

The real `openai` SDK is pointed at `{base_url}/v1` (OPENAI_BASE_URL or the `baseUrl` setting). Each POST
/v1/chat/completions takes the next reply of the script; every request body is recorded, and GET /v1/models lists
`models`. Standalone: `python tests/fakes/chat_completions.py SCRIPT.json` prints its base URL and serves.

The script is the fake Messages API's (tests/fakes/messages_api.py), so one scenario drives both providers:
  {"content": [{"type": "text"|"thinking"|"tool_use", ...}], "stop_reason": "end_turn"|"tool_use"|"max_tokens"|
   "refusal", "usage": {"input_tokens", "output_tokens", "cache_read_input_tokens"}, "delay", "cut_after", "stall",
   "hold", "hang"}
  {"status": 429, "error": {"type": "rate_limit_error", "message": "..."}, "headers": {...}, "retry_after_date": s}
  (`retry_after_date`: a Retry-After header that is an HTTP date, that many seconds after the answer is sent)
plus what only this API has: a tool_use block's `arguments` (the raw argument text, e.g. malformed JSON) and
`pieces` (how many fragments its arguments are cut into, default 3, cut mid-token); a thinking block's `field`
(`reasoning_content` or `reasoning`); `finish_reason` (overrides the mapped stop_reason); `chunks` (raw chunk
dicts instead of a generated stream); `raw` + `content_type` (+ `raw_status`: a literal body, e.g. an HTML page
or a damaged event stream; `raw_encoding`: how it is encoded, e.g. `latin-1` to send bytes that are not UTF-8);
`silent_after` + `silent_for` (send nothing at all for `silent_for` seconds after that many chunks); in-process
only, `pause_at` + `resume` (after that many chunks, wait until the threading.Event `resume` is set or the client
goes away). Every request's arrival time is in `arrivals`.
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
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional


def text_chunks(text: str) -> list[str]:
    """Split text into word-sized deltas, as the fake Messages API does (standalone: no package import)."""
    return re.findall(r"\s*\S+\s*", text) or [text]


FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}
MODELS = [{"id": "gpt-test", "object": "model", "created": 1700000000, "owned_by": "agent-lsp-tests",
           "context_length": 32768},
          {"id": "qwen-test:7b", "object": "model", "created": 1700000001, "owned_by": "library"}]
ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
               429: "rate_limit_error", 500: "server_error"}


def split(raw: str, pieces: int) -> list[str]:
    """`raw` cut into `pieces` fragments at even character positions, i.e. anywhere inside the JSON text."""
    if pieces <= 1 or len(raw) < pieces:
        return [raw]
    cuts = [len(raw) * k // pieces for k in range(pieces + 1)]
    return [raw[a:b] for a, b in zip(cuts, cuts[1:])]


def reply_chunks(reply: dict[str, Any], number: int, model: str, include_usage: bool) -> list[dict[str, Any]]:
    """The chunks of one scripted reply, in the API's order."""
    if "chunks" in reply:
        return reply["chunks"]
    base = {"id": f"chatcmpl-{number:03d}", "object": "chat.completion.chunk", "created": 1700000000 + number,
            "model": model, "service_tier": "default", "system_fingerprint": "fp_test"}

    def chunk(delta: dict[str, Any], finish: Optional[str] = None) -> dict[str, Any]:
        # With include_usage, every chunk but the last carries `"usage": null`, as the API sends it.
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                **({"usage": None} if include_usage else {})}

    chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
    content = reply.get("content", [])
    calls = 0
    for block in content:
        if block["type"] == "thinking":
            chunks.append(chunk({block.get("field", "reasoning_content"): block["thinking"]}))
        elif block["type"] == "text":
            chunks += [chunk({"content": t}) for t in text_chunks(block["text"])]
        elif block["type"] == "tool_use":
            index, calls = calls, calls + 1
            call_id = block.get("id") or f"call_{number:03d}_{index}"
            raw = block["arguments"] if "arguments" in block else json.dumps(block.get("input", {}), ensure_ascii=False)
            chunks.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                                 "function": {"name": block["name"], "arguments": ""}}]}))
            chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                       for piece in split(raw, block.get("pieces", 3))]
    stop = reply.get("stop_reason") or ("tool_use" if calls else "end_turn")
    chunks.append(chunk({}, reply.get("finish_reason") or FINISH[stop]))
    if include_usage:
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0, **reply.get("usage", {})}
        cached = usage["cache_read_input_tokens"]
        prompt = usage["input_tokens"] + cached
        chunks.append({**base, "choices": [], "usage": {
            "prompt_tokens": prompt, "completion_tokens": usage["output_tokens"],
            "total_tokens": prompt + usage["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}})
    return chunks


class FakeChatCompletions:
    """The fake server: `requests` holds every chat.completions body, `disconnects` the replies the client cut."""

    def __init__(self, script: Optional[list[dict[str, Any]]] = None, models: Optional[list[dict]] = None) -> None:
        self.script: list[dict[str, Any]] = list(script or [])
        self.models = list(MODELS if models is None else models)
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[Optional[str]] = []
        self.arrivals: list[float] = []
        """time.monotonic() of each request's arrival, in the order of `requests`."""
        self.disconnects: list[int] = []
        self.emissions: list[tuple[float, float]] = []
        """(first chunk written, [DONE] written) per complete stream, in time.perf_counter() (for benchmarks)."""
        self._lock = threading.Lock()
        self._served = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.api_url = f"{self.base_url}/v1"
        """What a client's base URL is (the SDK appends /chat/completions, /models)."""

    def add(self, *replies: dict[str, Any]) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> "FakeChatCompletions":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self, body: dict[str, Any], authorization: Optional[str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            self.authorizations.append(authorization)
            self._served += 1
            if not self.script:
                return self._served, {"status": 500, "error": {"type": "server_error", "message": "script exhausted"}}
            return self._served, self.script.pop(0)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # closing the connection ends the body

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    return self._json(200, {"object": "list", "data": fake.models})
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client went away before its whole body (an aborted call): no answer
                    return
                body = json.loads(raw or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                number, reply = fake._next(body, self.headers.get("authorization"))
                if "status" in reply:
                    error = {"message": reply["error"]["message"], "param": None, "code": None,
                             "type": reply["error"].get("type") or ERROR_TYPES.get(reply["status"], "api_error")}
                    headers = dict(reply.get("headers", {}))
                    if "retry_after_date" in reply:  # an HTTP date that many seconds from now
                        headers["retry-after"] = formatdate(time.time() + reply["retry_after_date"], usegmt=True)
                    return self._json(reply["status"], {"error": error}, headers)
                if "raw" in reply:
                    data = reply["raw"].encode(reply.get("raw_encoding", "utf-8"))
                    return self._raw(reply.get("raw_status", 200), data, reply["content_type"])
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                try:
                    time.sleep(reply.get("stall", 0))
                    if reply.get("hold"):
                        self._hold()
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream; charset=utf-8")
                    self.end_headers()
                    chunks = reply_chunks(reply, number, body.get("model", "?"), include_usage)
                    started = time.perf_counter()
                    for n, chunk in enumerate(chunks):
                        if "cut_after" in reply and n >= reply["cut_after"]:
                            return
                        if n == reply.get("pause_at"):
                            self._hold(reply["resume"])
                        self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                        self.wfile.flush()
                        if reply.get("delay"):
                            time.sleep(reply["delay"])
                        if n + 1 == reply.get("silent_after"):  # a stall mid-stream: nothing, not even comments
                            time.sleep(reply.get("silent_for", 30))
                    if reply.get("hang"):  # keep the stream open (SSE comments) until the client goes away
                        while True:
                            self.wfile.write(b": keep-alive\n\n")
                            self.wfile.flush()
                            time.sleep(0.05)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    fake.emissions.append((started, time.perf_counter()))
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

            def _json(self, status: int, body: Any, headers: Optional[dict[str, str]] = None) -> None:
                self._raw(status, json.dumps(body).encode(), "application/json", headers)

            def _raw(self, status: int, data: bytes, content_type: str,
                     headers: Optional[dict[str, str]] = None) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def serve_script(fake_class: Any = None) -> None:
    """Serve the script file named on the command line with `fake_class` (this module's fake by default), its API
    URL on the first line of stdout, until killed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    args = parser.parse_args()
    fake = (fake_class or FakeChatCompletions)(json.loads(args.script.read_text()))
    print(fake.api_url, flush=True)
    try:
        fake.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(serve_script())
