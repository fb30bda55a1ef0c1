"""A scripted fake of the OpenAI legacy completions API with `suffix` (fill in the middle) on 127.0.0.1, streaming
SSE exactly as Ollama's OpenAI-compatible API, llama-cpp-python's server and DeepSeek's FIM endpoint do.

The real `openai` SDK is pointed at `{base_url}/v1` (`client.completions.create(prompt=…, suffix=…, stream=True)`
posts to /v1/completions). Each POST takes the next reply of the script; every request body is recorded, and
`disconnects` lists the replies whose client closed the connection before their end. Standalone: `python
-m tests.fakes.legacy_completions SCRIPT.json` prints its API URL and serves until killed.

A script is a JSON list of replies:
  {"text": "the completion", "stall": seconds before the headers, "hold": true (send nothing until the client
   goes away), "finish_reason": "stop"|"length", "chunks": [raw chunk dicts instead of the generated ones], and
   the stream options of tests/fakes/sse.py ("delay", "cut_after", "reset_after", "hang", "pause_at" ...)}
  {"status": 404, "error": {"message": "...", "type": "..."}, "headers": {...}}
  {"raw": "a literal body", "content_type": "text/html", "raw_status": 200} (an HTML page, a damaged stream)
The text streams in word-sized chunks (`text_chunks`), then a chunk with the finish reason, then `data: [DONE]`.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Optional, Union

from tests.fakes.chat_completions import FakeChatCompletions, text_chunks
from tests.fakes.sse import ModelHandler, sse


def reply_chunks(reply: dict[str, Any], number: int, model: str) -> list[dict[str, Any]]:
    """The chunks of one scripted reply, in the API's order (the last one carries the finish reason)."""
    base = {"id": f"cmpl-{number:03d}", "object": "text_completion", "created": 1700000000 + number, "model": model,
            "system_fingerprint": "fp_test"}

    def chunk(text: str, finish: Optional[str] = None) -> dict[str, Any]:
        return {**base, "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]}

    pieces = text_chunks(reply.get("text", "")) if reply.get("text") else []
    return [chunk(piece) for piece in pieces] + [chunk("", reply.get("finish_reason", "stop"))]


class FakeLegacyCompletions(FakeChatCompletions):
    """The fake server (the chat.completions fake's machinery on another route): `requests` holds every body
    received, `disconnects` the replies the client cut short, `default` the reply once the script is empty (or a
    function of the request body giving it; None: a 500)."""

    def __init__(self, script: Optional[list[dict[str, Any]]] = None, tls: Any = None) -> None:
        super().__init__(script, tls=tls)
        self.default: Union[None, dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]] = None

    def _next(self, body: dict[str, Any], authorization: Optional[str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if not self.script and self.default is not None:
                self.script.append(self.default(body) if callable(self.default) else self.default)
        return super()._next(body, authorization)

    def _handler(self) -> type[ModelHandler]:
        fake = self

        class Handler(super()._handler()):  # its models list and its JSON answers; POST is this API's
            def do_POST(self) -> None:
                raw = self.read_body()
                if raw is None:
                    return
                body = json.loads(raw or b"{}")
                path = self.path.split("?")[0].rstrip("/")
                if path != "/v1/completions":
                    return self.json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                if not body.get("stream"):
                    return self.json(400, {"error": {"message": "this fake only streams", "type": "invalid_request"}})
                number, reply = fake._next(body, self.headers.get("authorization"))
                if "status" in reply:
                    return self.json(reply["status"], {"error": {"param": None, "code": None, **reply["error"]}},
                                     reply.get("headers", {}))
                if "raw" in reply:
                    return self.raw(reply.get("raw_status", 200), reply["raw"].encode(), reply["content_type"])
                chunks = reply.get("chunks") or reply_chunks(reply, number, body.get("model", "?"))
                if not self.stream_reply([sse(json.dumps(chunk)) for chunk in chunks], reply, ": keep-alive\n\n",
                                         "text/event-stream", last=sse("[DONE]")):
                    with fake._lock:
                        fake.disconnects.append(number)

        return Handler


if __name__ == "__main__":
    from tests.fakes.chat_completions import main

    sys.exit(main(FakeLegacyCompletions))
