"""The per-document freshness of suggestions (agent_lsp/completions/suggestions.py) with a model the test streams by
hand: typing through costs no model call (also while streaming), a newer request supersedes and closes the older
model request unless it uses it, a cancel closes it after the grace, never an answer for an older version, failures
shown once per cause until a success; the last suggestion is remembered for the REMEMBERED documents most
recently suggested in; a suggestion accepted or typed through to its end has the next one asked ahead."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator, Optional, Union

import pytest

from agent_lsp.completions import suggestions as engine
from agent_lsp.completions.place import place_at
from agent_lsp.completions.suggestions import Ask, Suggestions
from agent_lsp.config import Settings
from agent_lsp.config.completions import CompletionsSettings
from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.core.ports import ModelError, OpenDocument

ROOT = Path("/ws")
URI = (ROOT / "app.py").as_uri()


class Call:
    """One model request: the test feeds it text (`send`), ends it (`end`) or fails it (`fail`)."""

    def __init__(self, prompt: CompletionPrompt) -> None:
        self.prompt = prompt
        self.queue: asyncio.Queue[Union[str, None, Exception]] = asyncio.Queue()
        self.closed = False
        self.ended = False

    def send(self, text: str) -> None:
        self.queue.put_nowait(text)

    def end(self) -> None:
        self.queue.put_nowait(None)

    def fail(self, message: str) -> None:
        self.queue.put_nowait(ModelError("llm_error", message))


class HandModel:
    name = "hand"

    def __init__(self) -> None:
        self.calls: list[Call] = []

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        call = Call(prompt)
        self.calls.append(call)
        try:
            while True:
                item = await call.queue.get()
                if item is None:
                    call.ended = True
                    return
                if isinstance(item, Exception):
                    call.ended = True
                    raise item
                yield item
        finally:
            call.closed = not call.ended


class Buffers:
    def __init__(self) -> None:
        self.docs: dict[str, OpenDocument] = {}
        self.roots = [ROOT]

    def set(self, text: str, version: int, uri: str = URI) -> OpenDocument:
        path = Path(uri.removeprefix("file://"))
        self.docs[uri] = OpenDocument(uri, path, "python", version, text, True)
        return self.docs[uri]

    def get(self, uri: str) -> Optional[OpenDocument]:
        return self.docs.get(uri)

    def recent(self) -> list[tuple[str, int]]:
        return [(uri, 0) for uri in self.docs]

    def all(self) -> list[OpenDocument]:
        return list(self.docs.values())


class Rig:
    def __init__(self, **completions: Any) -> None:
        self.model = HandModel()
        self.buffers = Buffers()
        self.warnings: list[str] = []
        self.options = CompletionsSettings(**completions)
        self.engine = Suggestions(self.buffers, lambda: (Settings(model="script:none"), self.options),
                                  self.warnings.append, completer_for=lambda choice: self.model, env={})
        self.version = 0

    def type(self, text: str, uri: str = URI) -> OpenDocument:
        self.version += 1
        return self.buffers.set(text, self.version, uri)

    def change(self, text: str, uri: str = URI) -> OpenDocument:
        """`type`, and the engine told of the change as the didChange handler tells it."""
        doc = self.type(text, uri)
        self.engine.changed(uri)
        return doc

    async def answered(self, doc: OpenDocument, said: str) -> Any:
        """A request at the end of `doc`, its model call (the next one) answering `said`: the Suggestion."""
        calls = len(self.model.calls)
        task = self.ask(doc)
        await until(lambda: len(self.model.calls) == calls + 1)
        self.model.calls[calls].send(said)
        self.model.calls[calls].end()
        return await task

    def ask(self, doc: OpenDocument, offset: Optional[int] = None) -> asyncio.Task:
        return asyncio.ensure_future(self.engine.suggest(Ask(doc, len(doc.text) if offset is None else offset)))


async def until(predicate) -> None:
    for _ in range(10_000):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition not met")


async def text_of(task: asyncio.Task) -> Optional[str]:
    answer = await task
    return answer.text if answer is not None else None


async def test_a_suggestion_then_typing_through_it_costs_no_model_call():
    rig = Rig()
    first = rig.ask(rig.type("x = "))
    await until(lambda: rig.model.calls)
    rig.model.calls[0].send("compute")
    rig.model.calls[0].send("(1)")
    rig.model.calls[0].end()
    assert await text_of(first) == "compute(1)"
    assert await text_of(rig.ask(rig.type("x = com"))) == "pute(1)"
    assert await text_of(rig.ask(rig.type("x = compute("))) == "1)"
    assert len(rig.model.calls) == 1
    assert (rig.engine.stats.requests, rig.engine.stats.model_calls, rig.engine.stats.reused) == (3, 1, 2)


async def test_only_the_documents_most_recently_suggested_in_keep_their_suggestion(monkeypatch):
    monkeypatch.setattr(engine, "REMEMBERED", 2)
    rig = Rig()
    uris = [(ROOT / f"m{n}.py").as_uri() for n in range(3)]
    for n, uri in enumerate(uris):
        asked = rig.ask(rig.type("x = ", uri))
        await until(lambda: len(rig.model.calls) == n + 1)
        rig.model.calls[n].send("compute(1)")
        rig.model.calls[n].end()
        assert await text_of(asked) == "compute(1)"
    assert await text_of(rig.ask(rig.type("x = com", uris[2]))) == "pute(1)"
    assert await text_of(rig.ask(rig.type("x = com", uris[1]))) == "pute(1)"
    assert len(rig.model.calls) == 3 and set(rig.engine._states) == set(uris[1:])
    forgotten = rig.ask(rig.type("x = com", uris[0]))  # the oldest was forgotten: asked anew
    await until(lambda: len(rig.model.calls) == 4)
    rig.model.calls[3].send("bine(2)")
    rig.model.calls[3].end()
    assert await text_of(forgotten) == "bine(2)"
    assert rig.engine.stats.reused == 2


async def test_typing_through_a_suggestion_still_streaming_shares_its_model_request():
    rig = Rig()
    first = rig.ask(rig.type("x = "))
    await until(lambda: rig.model.calls)
    call = rig.model.calls[0]
    call.send("comp")
    second = rig.ask(rig.type("x = co"))  # agrees with what streamed so far
    assert await text_of(first) is None  # answered at once: superseded
    call.send("ute()")
    third = rig.ask(rig.type("x = compu"))  # typed past what had streamed when it was asked
    assert await text_of(second) is None
    call.end()
    assert await text_of(third) == "te()"
    assert len(rig.model.calls) == 1 and not call.closed
    assert rig.engine.stats.cancelled == 2


async def test_typing_something_else_closes_the_model_request_and_asks_anew():
    rig = Rig()
    first = rig.ask(rig.type("x = "))
    await until(lambda: rig.model.calls)
    rig.model.calls[0].send("compute")
    second = rig.ask(rig.type("x = val"))
    assert await text_of(first) is None
    await until(lambda: len(rig.model.calls) == 2)
    assert rig.model.calls[0].closed
    rig.model.calls[1].send("ue")
    rig.model.calls[1].end()
    assert await text_of(second) == "ue"


async def test_a_request_that_waited_before_any_text_asks_anew_once_the_text_disagrees():
    rig = Rig()
    first = rig.ask(rig.type("x = "))
    await until(lambda: rig.model.calls)
    second = rig.ask(rig.type("x = val"))  # nothing streamed yet: it waits for the same answer
    assert await text_of(first) is None
    rig.model.calls[0].send("compute")  # no longer what was typed
    await until(lambda: len(rig.model.calls) == 2)
    assert rig.model.calls[0].closed
    rig.model.calls[1].send("ue")
    rig.model.calls[1].end()
    assert await text_of(second) == "ue"


async def test_a_request_elsewhere_supersedes_and_closes_at_once():
    rig = Rig()
    doc = rig.type("a = 1\nb = ")
    first = rig.ask(doc)
    await until(lambda: rig.model.calls)
    second = rig.ask(doc, offset=4)  # another place of the same version
    assert await text_of(first) is None
    await until(lambda: len(rig.model.calls) == 2)
    assert rig.model.calls[0].closed


async def test_a_changed_document_gets_nothing():
    rig = Rig()
    first = rig.ask(rig.type("x = "))
    await until(lambda: rig.model.calls)
    rig.type("x = \n# edited elsewhere")  # no request follows: the answer would be for an older version
    rig.model.calls[0].send("1")
    rig.model.calls[0].end()
    assert await text_of(first) is None
    assert rig.engine.stats.stale == 1


async def test_a_cancelled_request_closes_its_model_request_after_the_grace_unless_taken_over(monkeypatch):
    monkeypatch.setattr(engine, "CANCEL_GRACE", 0.0)
    rig = Rig()
    first = rig.ask(rig.type("x = "))
    await until(lambda: rig.model.calls)
    first.cancel()
    await until(lambda: rig.model.calls[0].closed)
    assert rig.engine.stats.cancelled == 1

    monkeypatch.setattr(engine, "CANCEL_GRACE", 60.0)
    second = rig.ask(rig.type("y = "))
    await until(lambda: len(rig.model.calls) == 2)
    rig.model.calls[1].send("fo")
    await asyncio.sleep(0)
    second.cancel()  # as VS Code does before it sends the next request
    third = rig.ask(rig.type("y = f"))
    rig.model.calls[1].send("o()")
    rig.model.calls[1].end()
    assert await text_of(third) == "oo()"
    assert len(rig.model.calls) == 2 and not rig.model.calls[1].closed


async def test_failures_are_shown_once_per_cause_until_a_success():
    rig = Rig()
    for n in range(2):
        task = rig.ask(rig.type("x = " + "y" * n))
        await until(lambda: len(rig.model.calls) == n + 1)
        rig.model.calls[n].fail("401: invalid x-api-key")
        assert await text_of(task) is None
    task = rig.ask(rig.type("x = z"))
    await until(lambda: len(rig.model.calls) == 3)
    rig.model.calls[2].send("1")
    rig.model.calls[2].end()
    assert await text_of(task) == "1"
    task = rig.ask(rig.type("x = zz"))
    await until(lambda: len(rig.model.calls) == 4)
    rig.model.calls[3].fail("401: invalid x-api-key")
    assert await text_of(task) is None
    assert rig.warnings == ["agent-lsp: no suggestions: 401: invalid x-api-key"] * 2
    assert rig.engine.stats.errors == 3


async def test_excluded_disabled_and_binary_ask_no_model():
    rig = Rig(exclude=["secrets/*.py"])
    for uri in ((ROOT / ".env").as_uri(), (ROOT / "secrets" / "k.py").as_uri(), (ROOT / "id_rsa").as_uri()):
        assert await text_of(rig.ask(rig.type("KEY=", uri))) is None
    assert await text_of(rig.ask(rig.type("x = \x00\x01"))) is None
    off = Rig(enabled=False)
    assert await text_of(off.ask(off.type("x = "))) is None
    assert rig.model.calls == [] and off.model.calls == []


async def test_a_timeout_closes_the_model_request():
    rig = Rig(timeout=0.05)
    task = rig.ask(rig.type("x = "))
    assert await text_of(task) is None
    assert rig.model.calls[0].closed
    assert rig.warnings == ["agent-lsp: no suggestions: no suggestion within 0.05 s (the completions.timeout setting)"]


def test_typed_since():
    text = "def f(x):\n    return g(x)\n"
    at = text.index("g(") + 2
    origin = place_at(URI, 1, text, at)
    assert place_at(URI, 2, text[:at] + "ab" + text[at:], at + 2).typed_since(origin) == "ab"
    assert place_at(URI, 1, text, at).typed_since(origin) == ""
    assert place_at(URI, 2, text[:at] + "ab" + text[at:], at + 1).typed_since(origin) is None  # cursor moved back
    assert place_at(URI, 2, "#\n" + text, at + 2).typed_since(origin) is None  # an edit before the cursor
    assert place_at(URI, 2, text + "#", at).typed_since(origin) is None  # an edit after it
    assert place_at("file:///other", 1, text, at).typed_since(origin) is None




# ---- asking ahead after an accepted suggestion ----------------------------------------------------------------


async def test_an_accepted_suggestion_has_the_next_asked_ahead_and_the_next_request_joins_it():
    rig = Rig()
    offered = await rig.answered(rig.type("x = "), "compute(1)")
    doc = rig.type("x = compute(1)")  # the client applied the item; its change not told: the command finds it
    rig.engine.accepted(offered.id)
    await until(lambda: len(rig.model.calls) == 2)  # before any request at the new place
    assert rig.model.calls[1].prompt.prefix.endswith("x = compute(1)")
    rig.model.calls[1].send(" + 2")
    rig.engine.accepted(offered.id)  # the same acceptance again (a client that also sends the change): no second
    joined = rig.ask(doc)
    rig.model.calls[1].end()
    assert await text_of(joined) == " + 2"
    assert len(rig.model.calls) == 2 and not rig.model.calls[1].closed
    stats = rig.engine.stats
    assert (stats.requests, stats.model_calls, stats.accepted, rig.engine.asked_ahead) == (2, 2, 2, 1)


async def test_typed_through_to_its_end_asks_ahead_and_typing_on_that_agrees_keeps_it():
    rig = Rig()
    await rig.answered(rig.type("x = "), "compute(1)")
    rig.change("x = compute")
    assert len(rig.model.calls) == 1  # not at its end yet
    rig.change("x = compute(1)")
    await until(lambda: len(rig.model.calls) == 2)
    rig.model.calls[1].send(" + 2")
    doc = rig.change("x = compute(1) +")  # typing on what it streams
    rig.model.calls[1].end()
    assert await text_of(rig.ask(doc)) == " 2"
    assert len(rig.model.calls) == 2 and rig.engine.stats.reused == 1


async def test_a_change_elsewhere_closes_the_model_request_asked_ahead():
    rig = Rig()
    await rig.answered(rig.type("x = "), "compute(1)")
    rig.change("x = compute(1)")
    await until(lambda: len(rig.model.calls) == 2)
    rig.change("# a comment\nx = compute(1)")
    await until(lambda: rig.model.calls[1].closed)
    rig.change("x = compute(1)")  # the same text again: the same acceptance, not asked again
    await asyncio.sleep(0)
    assert len(rig.model.calls) == 2


async def test_a_newer_request_elsewhere_supersedes_the_model_request_asked_ahead():
    rig = Rig()
    await rig.answered(rig.type("x = "), "compute(1)")
    doc = rig.change("x = compute(1)")
    await until(lambda: len(rig.model.calls) == 2)
    elsewhere = rig.ask(doc, offset=0)  # another place: it cannot use what was asked at the end
    await until(lambda: len(rig.model.calls) == 3)
    assert rig.model.calls[1].closed
    rig.model.calls[2].send("2")
    rig.model.calls[2].end()
    assert await text_of(elsewhere) == "2"


async def test_no_ask_ahead_off_excluded_or_switched_off_or_in_another_document():
    rig = Rig()
    other = (ROOT / "other.py").as_uri()
    mine = await rig.answered(rig.type("x = "), "compute(1)")
    await rig.answered(rig.type("y = ", other), "compute(2)")
    rig.type("y = compute(2)", other)  # applied, but not the one accepted
    rig.engine.accepted(mine.id)  # its own document does not hold it
    rig.options = CompletionsSettings(enabled=False)
    rig.change("x = compute(1)")
    rig.options = CompletionsSettings(exclude=["other.py"])
    rig.change("y = compute(2)", other)
    await asyncio.sleep(0)
    assert len(rig.model.calls) == 2 and rig.engine.asked_ahead == 0

    rig = Rig()
    rig.engine.env = {"AGENT_LSP_ASK_AHEAD": "0"}
    await rig.answered(rig.type("x = "), "compute(1)")
    rig.change("x = compute(1)")
    await asyncio.sleep(0)
    assert len(rig.model.calls) == 1


async def test_a_wasted_ask_ahead_waits_for_the_requests_to_catch_up_with_the_model_calls():
    rig = Rig()
    await rig.answered(rig.type("x = "), "compute(1)")
    rig.change("x = compute(1)")  # asked ahead: 2 calls for 1 request
    await until(lambda: len(rig.model.calls) == 2)
    rig.change("# z\nx = compute(1)")  # elsewhere: the call asked ahead is wasted
    await until(lambda: rig.model.calls[1].closed)
    await rig.answered(rig.type("# z\nx = compute(1)\nz = "), "3")
    rig.change("# z\nx = compute(1)\nz = 3")  # 3 calls for 2 requests: nothing more asked ahead
    await asyncio.sleep(0)
    assert len(rig.model.calls) == 3 and rig.engine.asked_ahead == 1


async def test_a_model_request_asked_ahead_that_no_request_joins_is_closed_at_the_timeout():
    rig = Rig(timeout=0.05)
    await rig.answered(rig.type("x = "), "compute(1)")
    rig.change("x = compute(1)")  # the client asks nothing more: it left Insert mode, say
    await until(lambda: len(rig.model.calls) == 2)
    await asyncio.wait_for(until_closed(rig.model.calls[1]), 5)
    assert rig.warnings == []  # nobody waited: nothing to tell


async def until_closed(call: Call) -> None:
    while not call.closed:
        await asyncio.sleep(0.01)


async def test_nothing_to_offer_after_an_accepted_suggestion_is_asked_once():
    rig = Rig()
    await rig.answered(rig.type("x = compute(1)\n"), "y = 2")
    doc = rig.change("x = compute(1)\ny = 2")
    await until(lambda: len(rig.model.calls) == 2)
    rig.model.calls[1].end()  # the model has nothing to add there
    await until(lambda: rig.model.calls[1].ended)
    assert await text_of(rig.ask(doc)) is None
    assert await text_of(rig.ask(doc)) is None  # Neovim asks again at the same place: nothing, and no call
    asked = rig.ask(rig.change("x = compute(1)\ny = 2\n"))  # typed on: asked anew
    await until(lambda: len(rig.model.calls) == 3)
    rig.model.calls[2].send("z = 3")
    rig.model.calls[2].end()
    assert await text_of(asked) == "z = 3"
    assert rig.engine.asked_ahead == 1
