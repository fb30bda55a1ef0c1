"""Closing a suggestion's model request (agent_lsp/completions/stream.py): however many times it is asked, the
provider's own clean-up (closing its HTTP response) runs to its end."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

from agent_lsp.completions.place import place_at
from agent_lsp.completions.stream import ModelStream
from agent_lsp.core.completion import CompletionPrompt


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
