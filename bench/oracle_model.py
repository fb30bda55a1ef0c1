"""A fake FIM model on 127.0.0.1 that knows what the author really typed: the legacy completions shape
(`POST /v1/completions {model, prompt, suffix, stream}`, SSE as Ollama, llama.cpp's server and DeepSeek send it).

It answers the true next text at the cursor (to the end of the typed block, at most `lines` lines) after a set
latency, and records each call: when it arrived, when its last byte went, and when the client closed it early.
It speaks the three APIs suggestions use (FIM, chat.completions and the Messages API, the last two with the
fill-the-hole prompt), over tests/fakes/sse.py's HTTP/1.1, and over TLS when given a server context. A call arrives
when its request line is read.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from tests.fakes.sse import ModelHandler, ModelServer, sse


@dataclass
class Call:
    arrived: float
    """When the fake read the call's request line."""
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


HOLE = "<hole/>"
"""Where the cursor is in a chat model's fill-the-hole prompt (agent_lsp/completions/providers/hole.py)."""


@dataclass
class OracleModel:
    latency: float = 0.3
    lines: int = 3
    fixed: Optional[str] = None
    """Answer this to every call instead of the truth."""
    truth: Truth = field(default_factory=Truth)
    calls: list[Call] = field(default_factory=list)
    tls: Optional[ssl.SSLContext] = None
    """Serve over TLS with this server context (tests/fakes/certificate.py)."""
    piece: int = 8
    """Characters per streamed piece."""
    pace: float = 0.005
    """Seconds between the 8-character pieces of an answer, watching for the client closing (0: all at once, the
    model's time is then its latency alone)."""

    def start(self) -> "OracleModel":
        self._server = ModelServer(self._handler(), self.tls)
        self._lock = threading.Lock()
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"{self._server.base_url}/v1"

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

    def _handler(self) -> type[ModelHandler]:
        fake = self

        class Handler(ModelHandler):
            def do_POST(self) -> None:
                call = Call(self.arrived)
                with fake._lock:
                    fake.calls.append(call)
                raw = self.read_body()
                if raw is None:
                    return
                body = json.loads(raw or b"{}")
                api = _API.get(self.path.split("?")[0].rstrip("/"))
                if api is None:
                    return self.json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                call.prompt = _before_cursor(api, body)
                call.answer = fake.answer(call.prompt)
                if self.closed_within(fake.latency):
                    call.closed = time.perf_counter()
                    return
                if not body.get("stream"):
                    self.json(200, _whole(api, body, call.answer))
                    call.finished, call.finished_wall = time.perf_counter(), time.time()
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    frames = _frames(api, body, call.answer, fake.piece)
                    for n, frame in enumerate(frames):
                        self.chunk(frame.encode())
                        if n < len(frames) - 1 and fake.pace and self.closed_within(fake.pace):
                            call.closed = time.perf_counter()
                            self.close_connection = True
                            return
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    call.finished, call.finished_wall = time.perf_counter(), time.time()
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    call.closed = time.perf_counter()
                    self.close_connection = True

        return Handler


_API = {"/v1/completions": "fim", "/v1/chat/completions": "chat", "/v1/messages": "anthropic"}


def _before_cursor(api: str, body: dict[str, Any]) -> str:
    """The text before the cursor: FIM's `prompt`, else the fill-the-hole prompt up to its marker."""
    if api == "fim":
        return body.get("prompt", "")
    content = body["messages"][-1]["content"]
    text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    return text.split(HOLE, 1)[0]


def _pieces(answer: str, size: int = 8) -> list[str]:
    return [answer[i:i + size] for i in range(0, len(answer), size)] or [""]


def _frames(api: str, body: dict[str, Any], answer: str, size: int = 8) -> list[str]:
    """The answer as the API streams it, in `size`-character pieces."""
    model = body.get("model", "oracle")
    if api == "anthropic":
        pieces = _pieces("<completion>" + answer, size)
        events = [{"type": "message_start", "message": {
            "id": "msg_oracle", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
        events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
                   for piece in pieces]
        events += [{"type": "content_block_stop", "index": 0},
                   {"type": "message_delta", "delta": {"stop_reason": "stop_sequence", "stop_sequence": "</completion>"},
                    "usage": {"output_tokens": len(pieces)}},
                   {"type": "message_stop"}]
        return [sse(json.dumps(event), event["type"]) for event in events]
    if api == "chat":
        pieces = _pieces("<completion>" + answer, size)
        chunks = [{"id": "chatcmpl-oracle", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
                   "choices": [{"index": 0, "delta": {"content": piece}, "logprobs": None,
                                "finish_reason": "stop" if n == len(pieces) - 1 else None}]}
                  for n, piece in enumerate(pieces)]
    else:
        pieces = _pieces(answer, size)
        chunks = [{"id": "cmpl-oracle", "object": "text_completion", "created": 1700000000, "model": model,
                   "choices": [{"index": 0, "text": piece, "logprobs": None,
                                "finish_reason": "stop" if n == len(pieces) - 1 else None}]}
                  for n, piece in enumerate(pieces)]
    return [sse(json.dumps(chunk)) for chunk in chunks] + [sse("[DONE]")]


def _whole(api: str, body: dict[str, Any], answer: str) -> dict[str, Any]:
    """The answer in one JSON body (a request without `stream`)."""
    model = body.get("model", "oracle")
    if api == "anthropic":
        return {"id": "msg_oracle", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": f"<completion>{answer}</completion>"}],
                "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
    if api == "chat":
        return {"id": "chatcmpl-oracle", "object": "chat.completion", "created": 1700000000, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": f"<completion>{answer}</completion>"},
                             "logprobs": None, "finish_reason": "stop"}]}
    return {"id": "cmpl-oracle", "object": "text_completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "text": answer, "logprobs": None, "finish_reason": "stop"}]}
