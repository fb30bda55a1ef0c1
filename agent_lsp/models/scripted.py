"""A scripted model: replies come from a JSON script file, for tests that run the server as a subprocess.

`--model script:PATH`. The script is the list format the fake Messages API reads (tests/fakes/messages_api.py):
each reply has `content` blocks (text, thinking, tool_use), an optional `stop_reason`, `usage` and `delay`
(seconds between chunks); a reply with `status` and `error` fails the call as a model error.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, AsyncIterator

from agent_lsp.core.events import Usage
from agent_lsp.core.messages import TextPart, ThinkingPart, ToolUsePart
from agent_lsp.core.ports import ModelError, ModelEvent, ModelReply, ModelRequest, TextChunk, ThinkingChunk


class ScriptedModel:
    """Answers each call with the next scripted reply; records every request it was given."""

    def __init__(self, script: list[dict[str, Any]], name: str = "scripted") -> None:
        self.name = name
        self.script = list(script)
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_file(cls, path: str) -> "ScriptedModel":
        """Load a script file."""
        try:
            return cls(json.loads(Path(path).read_text()), name=f"script:{path}")
        except (OSError, ValueError) as e:
            raise ModelError("initialization_failed", f"cannot read the model script {path}: {e}") from None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if not self.script:
            raise ModelError("llm_error", "the model script is exhausted")
        reply = self.script.pop(0)
        if "error" in reply:
            raise ModelError("llm_error", reply["error"].get("message", "scripted error"))
        delay = reply.get("delay", 0)
        parts = []
        for n, block in enumerate(reply.get("content", [])):
            if block["type"] == "text":
                for word in _words(block["text"]):
                    await asyncio.sleep(delay)
                    yield TextChunk(word)
                parts.append(TextPart(text=block["text"]))
            elif block["type"] == "thinking":
                await asyncio.sleep(delay)
                yield ThinkingChunk(block["thinking"])
                parts.append(ThinkingPart(thinking=block["thinking"], signature=block.get("signature", "sig")))
            elif block["type"] == "tool_use":
                await asyncio.sleep(delay)
                tool_id = block.get("id") or f"toolu_{len(self.requests):03d}_{n}"
                parts.append(ToolUsePart(id=tool_id, name=block["name"], input=block.get("input", {})))
        stop = reply.get("stop_reason") or ("tool_use" if any(isinstance(p, ToolUsePart) for p in parts) else "end_turn")
        usage = {"input_tokens": 10, "output_tokens": 5, **reply.get("usage", {})}
        yield ModelReply(parts=parts, stop_reason=stop, usage=Usage(**usage))


def _words(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) or [text]
