"""A fake FIM model on 127.0.0.1 that knows what the author really typed: the legacy completions shape
(`POST /v1/completions {model, prompt, suffix, stream}`, SSE as Ollama, llama.cpp's server and DeepSeek send it).

It answers the true next text at the cursor (to the end of the typed block, at most `lines` lines) after a set
latency, and records each call: when it arrived, when its last byte went, and when the client closed it early.
A call arrives when its connection is accepted: the fake's own thread start and header parsing (about 0.8 ms on
the bench machine) are the model server's time, not the editor server's.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional


@dataclass
class Call:
    arrived: float
    """When the fake accepted the call's connection."""
    finished: Optional[float] = None
    """When the last byte went; None when the client closed the stream first."""
    closed: Optional[float] = None
    """When the client was seen closing the stream before its end."""
    answer: str = ""
    prompt: str = ""
    finished_wall: Optional[float] = None
    """`finished` on the wall clock (a server's log stamps its lines with it)."""


@dataclass
class Truth:
    final: str = ""
    start: int = 0
    end: int = 0


@dataclass
class OracleModel:
    latency: float = 0.3
    lines: int = 3
    fixed: Optional[str] = None
    """Answer this to every call instead of the truth."""
    truth: Truth = field(default_factory=Truth)
    calls: list[Call] = field(default_factory=list)
    piece: int = 8
    """Characters per streamed chunk (a chunk every 5 ms at most)."""

    def start(self) -> "OracleModel":
        self._server = _StampingServer(("127.0.0.1", 0), self._handler())
        self._lock = threading.Lock()
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answer(self, prompt: str) -> str:
        """The text the author typed after `prompt`'s end, when the prompt ends inside the typed block."""
        if self.fixed is not None:
            return self.fixed
        truth = self.truth
        tail = prompt[-300:]
        at = truth.final.rfind(tail, 0, truth.end)
        if at < 0 or not truth.start <= at + len(tail) <= truth.end:
            return ""
        rest = truth.final[at + len(tail):truth.end]
        return "\n".join(rest.split("\n")[:self.lines])

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                call = Call(fake._server.accepted.pop(self.request, time.perf_counter()))
                with fake._lock:
                    fake.calls.append(call)
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client went away before its whole body (an aborted call): no answer
                    return
                body = json.loads(raw or b"{}")
                call.prompt = body.get("prompt", "")
                call.answer = fake.answer(call.prompt)
                if self._closed_within(fake.latency):
                    call.closed = time.perf_counter()
                    return
                try:
                    if not body.get("stream"):
                        return self._whole(body, call)
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    pieces = [call.answer[i:i + fake.piece] for i in range(0, len(call.answer), fake.piece)] or [""]
                    for n, piece in enumerate(pieces):
                        chunk = {"id": "cmpl-oracle", "object": "text_completion", "created": 1700000000,
                                 "model": body.get("model", "oracle"),
                                 "choices": [{"index": 0, "text": piece, "logprobs": None,
                                              "finish_reason": "stop" if n == len(pieces) - 1 else None}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        if n < len(pieces) - 1 and self._closed_within(0.005):
                            call.closed = time.perf_counter()
                            return
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    call.finished, call.finished_wall = time.perf_counter(), time.time()
                except (BrokenPipeError, ConnectionResetError):
                    call.closed = time.perf_counter()

            def _whole(self, body: dict[str, Any], call: Call) -> None:
                data = json.dumps({"id": "cmpl-oracle", "object": "text_completion", "created": 1700000000,
                                   "model": body.get("model", "oracle"),
                                   "choices": [{"index": 0, "text": call.answer, "logprobs": None,
                                                "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                call.finished, call.finished_wall = time.perf_counter(), time.time()

            def _closed_within(self, seconds: float) -> bool:
                """Wait `seconds`, watching the socket: True as soon as the client closes it."""
                deadline = time.perf_counter() + seconds
                while (left := deadline - time.perf_counter()) > 0:
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.002))
                    if readable:
                        try:
                            if not self.connection.recv(1, socket.MSG_PEEK):
                                return True
                        except OSError:
                            return True
                return False

        return Handler


class _StampingServer(ThreadingHTTPServer):
    """A thread per connection, each stamped as it is accepted (before its thread starts)."""

    daemon_threads = True

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.accepted: dict[Any, float] = {}

    def process_request(self, request: Any, client_address: Any) -> None:
        self.accepted[request] = time.perf_counter()
        super().process_request(request, client_address)
