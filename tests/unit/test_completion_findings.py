"""What the reliability area of suggestions found (tests/reliability/test_suggestions.py), each a test of its own:
closing a model request however often lets the provider's clean-up end, and a request that has read enough
closes every generator of its stream as it stops (completions/stream.py); a long line is searched for names near
the cursor only (completions/context.py); a suggestion whose buffer changed after its handler returned goes out
with no item (lsp/inline_completion.py's Offered, checked as pygls writes the answer)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import AsyncIterator

from agent_lsp.completions import context
from agent_lsp.completions.place import place_at
from agent_lsp.completions.stream import ModelStream
from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.core.ports import OpenDocument
from agent_lsp.lsp.inline_completion import Offered
from agent_lsp.lsp.server import create_server
from lsprotocol import types
from pygls.workspace import Workspace
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


class Endless:
    """A model that streams lines for ever, through generators of its own, as an SDK's stream does (its reader, the
    HTTP response's chunks); each notes when it is closed."""

    name = "endless"

    def __init__(self) -> None:
        self.closed: list[str] = []

    async def _chunks(self) -> AsyncIterator[str]:
        try:
            n = 0
            while True:
                await asyncio.sleep(0)  # a read from the network
                n += 1
                yield f"line_{n} = {n}\n"
        finally:
            self.closed.append("chunks")

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        chunks = self._chunks()
        try:
            async for text in chunks:  # as an SDK's stream iterates its response
                yield text
        finally:
            self.closed.append("answer")


def test_enough_read_closes_every_generator_of_the_stream():
    """A suggestion that had every line it could keep stopped reading with a break: the provider's own generators
    (the SDK's stream, httpx's response chunks) were left suspended for the garbage collector, which now and then
    finalized one from another thread while it ran ("async generator already executing" in the log)."""
    async def go() -> None:
        model = Endless()
        ended = []
        stream = ModelStream(place_at("file:///a.py", 1, "x = ", 4), 3, model, _prompt, ended.append)
        await asyncio.wait_for(_until(lambda: ended), 10)
        assert model.closed == ["chunks", "answer"]  # from the innermost read outwards, before the stream ended
        assert stream.done and not stream.closed and stream.error is None
        assert stream.suggestion == "line_1 = 1\nline_2 = 2\nline_3 = 3"

    asyncio.run(go())


class _Written:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


class _Editor:
    """What an answer needs of the connection: its open buffers."""

    def __init__(self) -> None:
        self.workspace = Workspace(None)


def _answer_sent(server, result) -> dict:
    written = _Written()
    server.protocol.set_writer(written)
    server.protocol._send_response(7, result=result)  # pygls writes a result only from a handler: no public call
    return json.loads(written.data.split(b"\r\n\r\n", 1)[1])


def test_a_suggestion_whose_buffer_changed_before_the_write_goes_out_with_no_item():
    server, editor = create_server({}), _Editor()
    uri = "file:///w/a.py"
    editor.workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="python", version=3, text="def f():\n    ret"))
    item = {"insertText": "urn 1", "range": {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 7}}}
    assert _answer_sent(server, Offered(editor, uri, 3, [item])) == {"jsonrpc": "2.0", "id": 7, "result": {"items": [item]}}
    editor.workspace.update_text_document(
        types.VersionedTextDocumentIdentifier(uri=uri, version=4),
        types.TextDocumentContentChangeWholeDocument(text="def f():\n    retu"))
    assert _answer_sent(server, Offered(editor, uri, 3, [item])) == {"jsonrpc": "2.0", "id": 7, "result": {"items": []}}
    editor.workspace.remove_text_document(uri)
    assert _answer_sent(server, Offered(editor, uri, 3, [item]))["result"] == {"items": []}
