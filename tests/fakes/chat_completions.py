"""A scripted fake of an OpenAI-compatible chat.completions API on 127.0.0.1, streaming SSE exactly as the API does.

The real `openai` SDK is pointed at `{base_url}/v1` (OPENAI_BASE_URL or the `baseUrl` setting). Each POST
/v1/chat/completions takes the next reply of the script; every request body is recorded, and GET /v1/models lists
`models`. Standalone: `python3 -m tests.fakes.chat_completions SCRIPT.json` prints its API URL and serves.

The script is the fake Messages API's (tests/fakes/messages_api.py), so one scenario drives both providers:
  {"content": [{"type": "text"|"thinking"|"tool_use", ...}], "stop_reason": "end_turn"|"tool_use"|"max_tokens"|
   "refusal", "usage": {"input_tokens", "output_tokens", "cache_read_input_tokens"}, "stall", "hold", and the
   stream options of tests/fakes/sse.py ("delay", "cut_after", "reset_after", "hang", "silent_after" ...)}
  {"status": 429, "error": {"type": "rate_limit_error", "message": "..."}, "headers": {...}, "retry_after_date": s}
  (`retry_after_date`: a Retry-After header that is an HTTP date, that many seconds after the answer is sent)
plus what only this API has: a tool_use block's `arguments` (the raw argument text, e.g. malformed JSON) and
`pieces` (how many fragments its arguments are cut into, default 3, cut mid-token); a thinking block's `field`
(`reasoning_content` or `reasoning`); `finish_reason` (overrides the mapped stop_reason); `chunks` (raw chunk
dicts instead of a generated stream); `raw` + `content_type` (+ `raw_status`: a literal body, e.g. an HTML page
or a damaged event stream; `raw_encoding`: how it is encoded, e.g. `latin-1` to send bytes that are not UTF-8);
Every request's arrival time is in `arrivals`.
"""

from __future__ import annotations

import json
import re
import ssl
import sys
import threading
import time
from email.utils import formatdate
from typing import Any, Optional

from tests.fakes.sse import ModelHandler, ModelServer, serve_script, sse


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

    def __init__(self, script: Optional[list[dict[str, Any]]] = None, models: Optional[list[dict]] = None,
                 tls: Optional[ssl.SSLContext] = None) -> None:
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
        self.httpd = ModelServer(self._handler(), tls)
        self.base_url = self.httpd.base_url
        self.api_url = f"{self.base_url}/v1"
        """What a client's base URL is (the SDK appends /chat/completions, /models)."""

    def add(self, *replies: dict[str, Any]) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> "FakeChatCompletions":
        self.httpd.start()
        return self

    def stop(self) -> None:
        self.httpd.stop()

    def _next(self, body: dict[str, Any], authorization: Optional[str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            self.arrivals.append(time.monotonic())
            self.authorizations.append(authorization)
            self._served += 1
            if not self.script:
                return self._served, {"status": 500, "error": {"type": "server_error", "message": "script exhausted"}}
            return self._served, self.script.pop(0)

    def _handler(self) -> type[ModelHandler]:
        fake = self

        class Handler(ModelHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    return self.json(200, {"object": "list", "data": fake.models})
                self.json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

            def do_POST(self) -> None:
                raw = self.read_body()
                if raw is None:
                    return
                body = json.loads(raw or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self.json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                number, reply = fake._next(body, self.headers.get("authorization"))
                if "status" in reply:
                    error = {"message": reply["error"]["message"], "param": None, "code": None,
                             "type": reply["error"].get("type") or ERROR_TYPES.get(reply["status"], "api_error")}
                    headers = dict(reply.get("headers", {}))
                    if "retry_after_date" in reply:  # an HTTP date that many seconds from now
                        headers["retry-after"] = formatdate(time.time() + reply["retry_after_date"], usegmt=True)
                    return self.json(reply["status"], {"error": error}, headers)
                if "raw" in reply:
                    data = reply["raw"].encode(reply.get("raw_encoding", "utf-8"))
                    return self.raw(reply.get("raw_status", 200), data, reply["content_type"])
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                chunks = reply_chunks(reply, number, body.get("model", "?"), include_usage)
                frames = [sse(json.dumps(chunk, ensure_ascii=False)) for chunk in chunks]
                started = time.perf_counter() + reply.get("stall", 0)
                if not self.stream_reply(frames, reply, ": keep-alive\n\n", "text/event-stream; charset=utf-8",
                                         last=sse("[DONE]")):
                    with fake._lock:
                        fake.disconnects.append(number)
                elif not any(k in reply for k in ("cut_after", "reset_after")):
                    fake.emissions.append((started, time.perf_counter()))

        return Handler


def main(fake_class: Any = None) -> None:
    """Serve the script file named on the command line with `fake_class` (this module's fake by default)."""
    serve_script(fake_class or FakeChatCompletions, lambda fake: fake.api_url, __doc__)


if __name__ == "__main__":
    sys.exit(main())
