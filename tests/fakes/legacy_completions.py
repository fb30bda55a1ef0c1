"""A scripted fake of the OpenAI legacy completions API with `suffix` (fill in the middle) on 127.0.0.1, streaming
SSE exactly as Ollama's OpenAI-compatible API, llama.cpp's server and DeepSeek's FIM endpoint do.

The real `openai` SDK is pointed at `{base_url}/v1` (`client.completions.create(prompt=…, suffix=…, stream=True)`
posts to /v1/completions). Each POST takes the next reply of the script; every request body is recorded, and
`disconnects` lists the replies whose client closed the connection before their end. Standalone: `python
tests/fakes/legacy_completions.py SCRIPT.json` prints its API URL and serves until killed.

A script is a JSON list of replies:
  {"text": "the completion", "delay": seconds between chunks, "stall": seconds before the headers,
   "hold": true (send nothing until the client goes away), "finish_reason": "stop"|"length"}
  {"status": 404, "error": {"message": "...", "type": "..."}}
The text streams in word-sized chunks (`text_chunks`), then a chunk with the finish reason, then `data: [DONE]`.
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
from typing import Any, Callable, Optional, Union


def text_chunks(text: str) -> list[str]:
    """Split text into word-sized pieces (whitespace kept), as a server streams tokens."""
    return re.findall(r"\s*\S+\s*", text) or [text]


def reply_chunks(reply: dict[str, Any], number: int, model: str) -> list[dict[str, Any]]:
    """The chunks of one scripted reply, in the API's order (the last one carries the finish reason)."""
    base = {"id": f"cmpl-{number:03d}", "object": "text_completion", "created": 1700000000 + number, "model": model,
            "system_fingerprint": "fp_test"}

    def chunk(text: str, finish: Optional[str] = None) -> dict[str, Any]:
        return {**base, "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]}

    pieces = text_chunks(reply.get("text", "")) if reply.get("text") else []
    return [chunk(piece) for piece in pieces] + [chunk("", reply.get("finish_reason", "stop"))]


Reply = Union[dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]]


class FakeLegacyCompletions:
    """The fake server: `requests` holds every body received, `disconnects` the replies the client cut short."""

    def __init__(self, script: Optional[list[dict[str, Any]]] = None) -> None:
        self.script: list[dict[str, Any]] = list(script or [])
        self.default: Optional[Reply] = None
        """The reply when the script is empty, or a function of the request body giving it (None: a 500)."""
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.disconnects: list[int] = []
        self.arrivals: list[float] = []
        """time.monotonic() of each request's arrival."""
        self._lock = threading.Lock()
        self._served = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.api_url = f"{self.base_url}/v1"
        """What a client's base URL is (the SDK appends /completions)."""

    def add(self, *replies: dict[str, Any]) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> "FakeLegacyCompletions":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.arrivals.append(time.monotonic())
            self._served += 1
            if self.script:
                return self._served, self.script.pop(0)
            if self.default is not None:
                return self._served, self.default(body) if callable(self.default) else self.default
            return self._served, {"status": 500, "error": {"message": "script exhausted", "type": "server_error"}}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # closing the connection ends the body

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                path = self.path.split("?")[0].rstrip("/")
                if path != "/v1/completions":
                    return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                number, reply = fake._next(path, body)
                if "status" in reply:
                    return self._json(reply["status"], {"error": {"param": None, "code": None, **reply["error"]}})
                try:
                    time.sleep(reply.get("stall", 0))
                    if reply.get("hold"):  # answer nothing until the client closes the connection
                        while True:
                            readable, _, _ = select.select([self.connection], [], [], 0.05)
                            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                                raise ConnectionResetError
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    if not body.get("stream"):
                        raise ValueError("this fake streams only")
                    for chunk in reply_chunks(reply, number, body.get("model", "?")):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(reply.get("delay", 0))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    with fake._lock:
                        fake.disconnects.append(number)

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path)
    args = parser.parse_args()
    fake = FakeLegacyCompletions(json.loads(args.script.read_text()))
    print(fake.api_url, flush=True)
    try:
        fake.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
