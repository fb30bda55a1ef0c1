"""Suggestions with no network: the demo model's, from the workspace's open buffers (PROTOCOL §10 "Offline"), and a
scripted model's (`script:FILE`, the format of models/scripted.py) for tests."""

from __future__ import annotations

import asyncio
import re
from typing import AsyncIterator, Callable, Iterable

from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.core.ports import ModelError, OpenDocument


class DemoCompleter:
    """When the cursor's line so far begins another line of an open buffer (the same file first), the rest of that
    line."""

    name = "demo"

    def __init__(self, documents: Callable[[], Iterable[OpenDocument]]) -> None:
        self._documents = documents
        """The open buffers it may look at (none that is excluded), the cursor's own first."""

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        so_far = prompt.prefix[prompt.prefix.rfind("\n") + 1:]
        whole = so_far + prompt.suffix.split("\n", 1)[0]
        start = so_far.lstrip()
        if not start:
            return
        for doc in self._documents():
            for line in doc.text.splitlines():
                candidate = line.lstrip()
                if candidate.startswith(start) and len(candidate) > len(start) and line != whole:
                    yield candidate[len(start):]
                    return
            await asyncio.sleep(0)  # many buffers: let the loop breathe between them


class ScriptCompleter:
    """Answers each suggestion with the text of the next reply of a script file (models/scripted.py's format); a
    reply with `error` fails, `delay` paces its words."""

    def __init__(self, model: str) -> None:
        from agent_lsp.models.scripted import ScriptedModel

        self.name = model
        self._script = ScriptedModel.from_file(model.removeprefix("script:")).script

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        if not self._script:
            raise ModelError("llm_error", "the model script is exhausted")
        reply = self._script.pop(0)
        if "error" in reply:
            raise ModelError("llm_error", reply["error"].get("message", "scripted error"))
        text = "".join(b["text"] for b in reply.get("content", []) if b.get("type") == "text")
        for word in re.findall(r"\s*\S+\s*", text) or [text]:
            await asyncio.sleep(reply.get("delay", 0))
            yield word
