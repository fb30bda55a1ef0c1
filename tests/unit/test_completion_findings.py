"""What the reliability area of suggestions found (tests/reliability/test_suggestions.py), each a test of its own:
closing a model request however often lets the provider's clean-up end (completions/stream.py); a long line is
searched for names near the cursor only (completions/context.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

from agent_lsp.completions import context
from agent_lsp.completions.place import place_at
from agent_lsp.completions.stream import ModelStream
from agent_lsp.core.completion import CompletionPrompt
from agent_lsp.core.ports import OpenDocument
from tests.fakes.language import FakeLanguageFeatures


class Slow:
    """A model whose clean-up takes a moment, as closing an HTTP response does."""

    name = "slow"

    def __init__(self) -> None:
        self.streaming = asyncio.Event()
        self.cleaned = False

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        try:
            yield "par"
            self.streaming.set()
            await asyncio.Event().wait()  # the rest never comes
            yield "t"
        finally:
            await asyncio.sleep(0.01)  # the response's own close: an interrupted one leaves it half-closed
            self.cleaned = True


def test_closing_twice_lets_the_clean_up_end():
    """Two closes in one moment (a newer request and a cancel's grace, a timeout and a closed document) cancelled
    the task twice: the second cancel broke into the provider's clean-up (an httpx response left "already executing",
    reported when the garbage collector met it)."""
    async def go() -> None:
        model = Slow()
        ended = []
        stream = ModelStream(place_at("file:///a.py", 1, "x = ", 4), 8, model,
                             lambda: _prompt(), ended.append)
        await asyncio.wait_for(model.streaming.wait(), 10)
        stream.close()
        await asyncio.sleep(0)  # the cancel is delivered: the clean-up is under way
        stream.close()
        await asyncio.wait_for(_until(lambda: ended), 10)
        assert model.cleaned and stream.closed and ended == [stream]

    asyncio.run(go())


async def _prompt() -> CompletionPrompt:
    return CompletionPrompt(path="a.py", language_id="python", prefix="x = ", suffix="")


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.005)


class NoBuffers:
    roots = [Path("/ws")]

    def get(self, uri: str) -> None:
        return None


def test_a_long_line_is_searched_for_names_near_the_cursor_only(monkeypatch):
    """Every name of the cursor's line was listed for each suggestion: on a 10 MB minified line, 4.5 s of the event
    loop per keystroke, every chat and suggestion waiting."""
    searched = []
    names_before = context.names_before
    monkeypatch.setattr(context, "names_before", lambda text: searched.append(len(text)) or names_before(text))
    line = "a.b(c,d);" * 1_000_000 + "x = load_config("
    doc = OpenDocument(uri="file:///ws/app.js", path=Path("/ws/app.js"), language_id="javascript", version=1,
                       text="// first\n" + line, unsaved=True)
    language = FakeLanguageFeatures({"textDocument/definition": []})
    asyncio.run(context.definitions(context.ContextSource(NoBuffers(), language, ()), doc, len(doc.text)))
    assert searched == [context.NAME_WINDOW]
    assert [r[1]["position"] for r in language.requests] == [
        {"line": 1, "character": line.rindex("load_config")}, {"line": 1, "character": line.rindex("b(")}]
