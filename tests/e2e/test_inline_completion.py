"""Suggestions as you type (PROTOCOL §10) over real LSP: the server as a subprocess, the real `anthropic` SDK against
the fake Messages API, whole sequences asserted (what the client got, what the fake saw)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from tests.e2e.conftest import CEILING, chat, open_doc, server_env, text, until, updates_of

COMPLETION = types.TEXT_DOCUMENT_INLINE_COMPLETION


@pytest.fixture
async def lsp(lsp):
    """The harness, its clients sending and reading inline completions as plain JSON (any shape, bad ones too)."""
    original = lsp.start

    async def start(*args: Any, **kwargs: Any) -> Any:
        client = await original(*args, **kwargs)
        protocol = client.protocol
        message_type, result_type = protocol.get_message_type, protocol.get_result_type
        protocol.get_message_type = lambda method: None if method == COMPLETION else message_type(method)
        protocol.get_result_type = lambda method: None if method == COMPLETION else result_type(method)
        return client

    lsp.start = start
    return lsp


async def suggest(client: Any, uri: str, line: int, character: int, **extra: Any) -> dict:
    """textDocument/inlineCompletion as Neovim 0.12 sends it (Automatic)."""
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
              "context": {"triggerKind": 2}, **extra}
    return await client.protocol.send_request_async(COMPLETION, params)


def edit(client: Any, uri: str, text: str) -> None:
    """The buffer now holds `text` (one didChange with the whole text, a version more)."""
    version = client.docs[uri][0] + 1
    client.docs[uri] = [version, text]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def at_end(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines) - 1, len(lines[-1])


def item(insert: str, line: int, character: int, id: int) -> dict:
    here = {"line": line, "character": character}
    return {"insertText": insert, "range": {"start": here, "end": here},
            "command": {"title": "Suggestion accepted", "command": "agent.completionAccepted", "arguments": [{"id": id}]}}


async def stats(client: Any) -> dict:
    return await client.protocol.send_request_async("agent/completionStats", {})


def completion(said: str, **extra: Any) -> dict:
    return text(f"<completion>{said}</completion>", **extra)


async def test_the_capability_and_the_feature_are_declared(lsp):
    client = await lsp.start()
    caps = client.initialize_result.capabilities
    assert caps.inline_completion_provider is True
    assert "agent.completionAccepted" in caps.execute_command_provider.commands
    assert "inlineCompletion" in caps.experimental["agent"]["features"]


async def test_a_suggestion_then_typed_through_without_a_model_call(lsp, fake_api, workspace):
    fake_api.add(completion("total(items)\n"))
    client = await lsp.start()
    source = "def total(xs):\n    return sum(xs)\n\nprint("
    uri = open_doc(client, workspace / "app.py", source + ")")
    assert await suggest(client, uri, 3, 6) == {"items": [item("total(items)", 3, 6, 1)]}
    edit(client, uri, source + "tot)")
    assert await suggest(client, uri, 3, 9) == {"items": [item("al(items)", 3, 9, 2)]}
    assert len(fake_api.requests) == 1
    request = fake_api.requests[0]
    assert request["model"] == "claude-haiku-4-5" and "temperature" not in request
    assert request["stop_sequences"] == ["</completion>"]
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    prompt = "".join(block["text"] for block in request["messages"][0]["content"])
    assert '<file path="app.py" language="python">\ndef total(xs):' in prompt
    assert "print(<hole/>)\n</file>\nComplete the rest of the marker's line only." in prompt
    assert await stats(client) == {"requests": 2, "modelCalls": 1, "reused": 1, "cancelled": 0, "stale": 0,
                                   "shown": 0, "accepted": 0, "partiallyAccepted": 0, "errors": 0}


async def test_typing_through_a_suggestion_still_streaming_waits_for_the_same_answer(lsp, fake_api, workspace):
    fake_api.add(completion("compute_the_total(first, second, third)", delay=0.3))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "value = ")
    first = asyncio.ensure_future(suggest(client, uri, 0, 8))
    await until(lambda: fake_api.requests)
    edit(client, uri, "value = com")
    second = await suggest(client, uri, 0, 11)
    assert await first == {"items": []}  # superseded: answered at once
    assert second == {"items": [item("pute_the_total(first, second, third)", 0, 11, 1)]}
    assert len(fake_api.requests) == 1 and fake_api.disconnects == []
    assert (await stats(client))["reused"] == 1


async def test_a_newer_request_supersedes_and_closes_the_older_stream(lsp, fake_api, workspace):
    fake_api.add({"hold": True}, completion("1"))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = \nb = ")
    first = asyncio.ensure_future(suggest(client, uri, 0, 4))
    await until(lambda: fake_api.requests)
    second = await suggest(client, uri, 1, 4)  # another place: it cannot use the older answer
    assert await first == {"items": []}
    assert second == {"items": [item("1", 1, 4, 1)]}
    await until(lambda: fake_api.disconnects == [1])
    assert (await stats(client))["cancelled"] == 1


async def test_cancel_request_closes_the_stream(lsp, fake_api, workspace):
    fake_api.add({"hold": True})
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = ")
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 4}, "context": {"triggerKind": 2}}
    request = asyncio.wrap_future(client.protocol.send_request(COMPLETION, params, msg_id="suggestion-1"))
    await until(lambda: fake_api.requests)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="suggestion-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await request
    await until(lambda: fake_api.disconnects == [1])  # within the grace a newer request may take it over
    assert (await stats(client))["cancelled"] == 1


async def test_a_document_changed_meanwhile_gets_no_item(lsp, fake_api, workspace):
    fake_api.add(completion("1", stall=0.5))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = ")
    request = asyncio.ensure_future(suggest(client, uri, 0, 4))
    await until(lambda: fake_api.requests)
    edit(client, uri, "a = \n# changed elsewhere, no request after it")
    assert await request == {"items": []}
    assert (await stats(client))["stale"] == 1


async def test_excluded_files_ask_no_model_and_are_never_context(lsp, fake_api, workspace):
    fake_api.add(completion("1"))
    client = await lsp.start(init_options={"completions": {"exclude": ["private/*"]}})
    secret = open_doc(client, workspace / ".env", "API_KEY=")
    private = open_doc(client, workspace / "private" / "notes.py", "SECRET_TOKEN = 'abc'\n")
    edit(client, private, "SECRET_TOKEN = 'abcd'\n")
    edit(client, secret, "API_KEY=sk-\n")
    assert await suggest(client, secret, 0, 11) == {"items": []}
    assert await suggest(client, private, 0, 5) == {"items": []}
    assert fake_api.requests == []
    uri = open_doc(client, workspace / "app.py", "x = ")
    assert await suggest(client, uri, 0, 4) == {"items": [item("1", 0, 4, 1)]}
    sent = json.dumps(fake_api.requests)
    assert "SECRET_TOKEN" not in sent and "sk-" not in sent and "private" not in sent


async def test_other_buffers_recently_changed_are_context(lsp, fake_api, workspace):
    fake_api.add(completion("1"))
    client = await lsp.start()
    other = open_doc(client, workspace / "models.py", "class Invoice:\n    pass\n")
    edit(client, other, "class Invoice:\n    amount: int\n")
    uri = open_doc(client, workspace / "app.py", "x = ")
    await suggest(client, uri, 0, 4)
    prompt = fake_api.requests[0]["messages"][0]["content"][0]["text"]
    assert '<snippet path="models.py" kind="open buffer" first-line="1">\nclass Invoice:\n    amount: int\n' in prompt


async def test_a_model_failure_is_no_item_and_one_warning(lsp, fake_api, workspace):
    error = {"status": 401, "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    fake_api.add(error, error, completion("1"), error)
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "x = ")
    for n in range(4):
        edit(client, uri, "x = " + " " * n)
        assert await suggest(client, uri, 0, 4 + n) == ({"items": [item("1", 0, 6, 1)]} if n == 2 else {"items": []})
    warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert warnings == [f"agent-lsp: no suggestions: {fake_api.base_url}/v1/messages answered 401: invalid x-api-key"] * 2
    assert len(fake_api.requests) == 4
    assert (await stats(client))["errors"] == 3


async def test_a_chat_runs_beside_suggestions(lsp, fake_api, workspace):
    def reply(body: dict) -> dict:
        if body.get("stop_sequences") == ["</completion>"]:
            return completion("done()")
        return text("A chat answer.", delay=0.05)

    fake_api.default = reply
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "x = ")
    chatting = asyncio.ensure_future(chat(client, "hi"))
    await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
    assert await suggest(client, uri, 0, 4) == {"items": [item("done()", 0, 4, 1)]}
    result = await chatting
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "A chat answer.")


async def test_the_demo_model_completes_from_the_workspace(lsp, workspace):
    client = await lsp.start("--model", "demo", env=server_env(None, key=False))
    open_doc(client, workspace / "lib.py", "def greet(name):\n    return 'hi ' + name\n")
    uri = open_doc(client, workspace / "app.py", "    return 'h")
    assert await suggest(client, uri, 0, 13) == {"items": [item("i ' + name", 0, 13, 1)]}
    assert (await stats(client))["modelCalls"] == 1


async def test_acceptance_is_counted_silently(lsp, workspace):
    client = await lsp.start("--model", "demo", env=server_env(None, key=False))
    uri = open_doc(client, workspace / "app.py", "import os\nimp")
    answer = await suggest(client, uri, 1, 3)
    assert answer == {"items": [item("ort os", 1, 3, 1)]}
    shown = answer["items"][0]
    client.protocol.notify("textDocument/didShowCompletion", {"item": shown})
    client.protocol.notify("textDocument/didPartiallyAcceptCompletion", {"item": shown, "acceptedLength": 3})
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="agent.completionAccepted", arguments=shown["command"]["arguments"]))
    counts = await stats(client)
    assert (counts["shown"], counts["partiallyAccepted"], counts["accepted"]) == (1, 1, 1)
    assert client.messages == []


async def test_disabled_suggestions(lsp, fake_api, workspace):
    client = await lsp.start(init_options={"completions": {"enabled": False}})
    uri = open_doc(client, workspace / "app.py", "x = ")
    assert await suggest(client, uri, 0, 4) == {"items": []}
    assert fake_api.requests == []


@pytest.mark.parametrize("params, field", [
    ({"position": {"line": 0, "character": 0}}, "textDocument"),
    ({"textDocument": {"uri": 3}, "position": {"line": 0, "character": 0}}, "textDocument.uri"),
    ({"textDocument": {"uri": "file:///x.py"}}, "position"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": 0}}, "position.line"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": "1"}}, "position.character"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}, "context": {"triggerKind": 7}},
     "context.triggerKind"),
    ({"textDocument": {"uri": "file:///x\ud800.py"}, "position": {"line": 0, "character": 0}}, "textDocument.uri"),
])
async def test_malformed_requests_are_invalid_params_naming_the_field(lsp, params, field):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await client.protocol.send_request_async(COMPLETION, params)
    assert field in raised.value.message


async def test_bad_input_is_no_item_and_the_server_goes_on(lsp, fake_api, workspace):
    fake_api.default = lambda body: completion("1")
    client = await lsp.start(init_options={"completions": {"maxLines": "three", "timeout": "soon", "model": 5}})
    uri = open_doc(client, workspace / "app.py", "x = \n")
    assert await suggest(client, uri, 0, 40) == {"items": []}  # past the end of the line
    assert await suggest(client, uri, 9, 0) == {"items": []}  # past the end of the document
    assert await suggest(client, (workspace / "never.py").as_uri(), 0, 0) == {"items": []}  # never opened
    long_line = open_doc(client, workspace / "long.py", "x = " + "a" * 10_000_000)
    assert await suggest(client, long_line, 0, 10_000_004) == {"items": [item("1", 0, 10_000_004, 1)]}
    assert len(json.dumps(fake_api.requests[-1])) < 50_000  # a bounded window of it
    surrogate = open_doc(client, workspace / "s.py", "name = 'caf\ud800")
    assert await suggest(client, surrogate, 0, 12) == {"items": [item("1", 0, 12, 2)]}
    binary = open_doc(client, workspace / "b.bin", "\x00\x01\x02ELF")
    assert await suggest(client, binary, 0, 3) == {"items": []}
    many = [asyncio.ensure_future(suggest(client, uri, 0, 4)) for _ in range(200)]
    answers = await asyncio.wait_for(asyncio.gather(*many), CEILING)
    assert answers[:-1] == [{"items": []}] * 199 and len(answers[-1]["items"]) == 1
    warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert any("`completions.maxLines`" in w and "`completions.timeout`" in w and "`completions.model`" in w
               for w in warnings)
