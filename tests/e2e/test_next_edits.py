"""Next-edit suggestions (PROTOCOL §11) over real LSP: the server as a subprocess answering
`textDocument/copilotInlineEdit` in Copilot's shapes, the real SDKs against fakes on 127.0.0.1 — the Messages API,
chat.completions, and the raw prompt on /completions (an open next-edit model such as Zeta) — whole sequences
asserted: what the client got, what the fake saw (requests, closed connections), and the counts."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Optional

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from agent_lsp.models.resolver import SUGGESTION_MODELS
from tests.e2e.conftest import CEILING, open_doc, openai_env, server_env, text
from tests.fakes.chat_completions import FakeChatCompletions
from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.waiting import until

INLINE_EDIT = "textDocument/copilotInlineEdit"
START, END, CURSOR = "<|editable_region_start|>", "<|editable_region_end|>", "<|user_cursor_is_here|>"
SOURCE = "def f(count):\n    return count + 1\n\n\nprint(f(2))\n"
RENAMED = SOURCE.replace("f(count)", "f(total)")
"""The user renamed the parameter on line 0; the model carries it on to line 1."""
CARRIED = RENAMED.replace("return count", "return total")
NOTHING = {"edits": []}


def region(window: str) -> str:
    """A model's answer: the window rewritten, between the markers."""
    return f"{START}\n{window}\n{END}"


def edit(client: Any, uri: str, new_text: str) -> int:
    """The buffer now holds `new_text` (one didChange with the whole text); its new version."""
    version = client.docs[uri][0] + 1
    client.docs[uri] = [version, new_text]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)]))
    return version


def ask(client: Any, uri: str, line: int, character: int, version: Optional[int] = None, msg_id: Any = None,
        **extra: Any) -> Any:
    """A copilotInlineEdit request as copilot-lsp sends it (the buffer's version unless told)."""
    params = {"textDocument": {"uri": uri, "version": client.docs[uri][0] if version is None else version},
              "position": {"line": line, "character": character}, **extra}
    if msg_id is None:
        return asyncio.ensure_future(client.protocol.send_request_async(INLINE_EDIT, params))  # sent now
    return asyncio.wrap_future(client.protocol.send_request(INLINE_EDIT, params, msg_id=msg_id))


def offered(uri: str, version: int, start: tuple[int, int], end: tuple[int, int], new: str, id: int) -> dict:
    return {"edits": [{"range": {"start": {"line": start[0], "character": start[1]},
                                 "end": {"line": end[0], "character": end[1]}},
                       "text": new, "textDocument": {"uri": uri, "version": version},
                       "command": {"title": "Next edit accepted", "command": "agent.nextEditAccepted",
                                   "arguments": [{"id": id}]}}]}


async def stats(client: Any) -> dict:
    return (await client.protocol.send_request_async("agent/completionStats", {}))["nextEdits"]


def counts(**given: int) -> dict:
    base = {"requests": 0, "modelCalls": 0, "shown": 0, "accepted": 0, "stale": 0, "cancelled": 0, "filtered": 0,
            "errors": 0}
    return {**base, **given}


def warnings_of(client: Any) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


def renamed(client: Any, workspace: Any) -> tuple[str, int]:
    """app.py opened as SOURCE, then the parameter renamed on line 0: (its uri, its version)."""
    uri = open_doc(client, workspace / "app.py", SOURCE)
    return uri, edit(client, uri, RENAMED)


# ---- the whole sequence --------------------------------------------------------------------------------------


async def test_the_demo_model_carries_a_rename_on_and_the_change_that_applies_it_counts(lsp, workspace):
    client = await lsp.start("--model", "demo", env=server_env(None, key=False))
    uri, version = renamed(client, workspace)
    answer = await ask(client, uri, 0, 11)
    assert answer == offered(uri, version, (1, 11), (1, 16), "total", 1)
    client.protocol.notify("textDocument/didShowInlineEdit", {"item": {"command": answer["edits"][0]["command"]}})
    edit(client, uri, CARRIED)  # the client applied it (copilot-lsp runs no command)
    assert await stats(client) == counts(requests=1, modelCalls=1, shown=1, accepted=1)
    assert client.messages == []


async def test_the_accept_command_counts_once(lsp, workspace):
    client = await lsp.start("--model", "demo", env=server_env(None, key=False))
    uri, version = renamed(client, workspace)
    answer = await ask(client, uri, 0, 11)
    (suggested,) = answer["edits"]
    edit(client, uri, CARRIED)
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=suggested["command"]["command"], arguments=suggested["command"]["arguments"]))
    assert (await stats(client))["accepted"] == 1
    caps = client.initialize_result.capabilities
    assert "agent.nextEditAccepted" in caps.execute_command_provider.commands
    assert "nextEdits" in caps.experimental["agent"]["features"]


async def test_the_messages_api_is_asked_with_the_diffs_and_the_window(lsp, fake_api, workspace):
    fake_api.add(text(region(CARRIED)))
    client = await lsp.start()
    uri, version = renamed(client, workspace)
    assert await ask(client, uri, 0, 11) == offered(uri, version, (1, 11), (1, 16), "total", 1)
    (request,) = fake_api.requests
    assert request["model"] == SUGGESTION_MODELS["anthropic"] and request["stop_sequences"] == [END]
    assert START in request["system"][0]["text"] and CURSOR in request["system"][0]["text"]
    edits, excerpt = (part["text"] for part in request["messages"][0]["content"])
    assert edits == ("### User Edits:\n\n--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-def f(count):\n"
                     "+def f(total):\n     return count + 1\n \n\n")
    assert excerpt == ("### User Excerpt:\n\n```app.py\n<|start_of_file|>\n" + START + "\ndef f(total" + CURSOR +
                       "):\n    return count + 1\n\n\nprint(f(2))\n\n" + END + "\n```\n\n### Response:\n")


async def test_an_open_next_edit_model_gets_the_raw_prompt_on_completions(lsp, workspace):
    fake = FakeLegacyCompletions().start()
    try:
        fake.add({"text": region(CARRIED)})
        client = await lsp.start(env=openai_env(fake.api_url),
                                 init_options={"nextEdits": {"api": "fim", "model": "zeta"}})
        uri, version = renamed(client, workspace)
        assert await ask(client, uri, 0, 11) == offered(uri, version, (1, 11), (1, 16), "total", 1)
        (request,) = fake.requests
        assert set(request) == {"model", "prompt", "max_tokens", "stream", "stop"}  # no suffix: vLLM refuses one
        assert request["model"] == "zeta" and request["stop"] == [END]
        assert request["prompt"].startswith("### Instruction:\nYou are a code completion assistant")
        assert "-def f(count):\n+def f(total):" in request["prompt"]
        assert request["prompt"].endswith(END + "\n```\n\n### Response:\n")
    finally:
        fake.stop()


async def test_an_openai_compatible_chat_gets_the_same_prompt_as_messages(lsp, workspace):
    api = FakeChatCompletions().start()
    try:
        api.add(text("Here it is:\n```python\n" + CARRIED + "\n```"))  # no markers: the first fenced block
        client = await lsp.start(env=openai_env(api.api_url, model="gpt-test"))
        uri, version = renamed(client, workspace)
        assert await ask(client, uri, 0, 11) == offered(uri, version, (1, 11), (1, 16), "total", 1)
        (request,) = api.requests
        system, user = request["messages"]
        assert system["role"] == "system" and START in system["content"]
        assert user["content"].startswith("### User Edits:") and CURSOR in user["content"]
        assert request["stop"] == [END] and request["model"] == "gpt-test"
    finally:
        api.stop()


def type_over(client: Any, uri: str, line: int, character: int, old: str, new: str) -> int:
    """`old` at (line, character) typed over by `new` a key at a time, an incremental didChange per key as VS Code
    sends them (the selected word replaced by the first key); the buffer's new version."""
    version, source = client.docs[uri]
    for n, key in enumerate(new):
        version += 1
        at = types.Position(line=line, character=character + n)
        end = types.Position(line=line, character=character + len(old)) if n == 0 else at
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=at, end=end), text=key)]))
    lines = source.split("\n")
    lines[line] = lines[line][:character] + new + lines[line][character + len(old):]
    client.docs[uri] = [version, "\n".join(lines)]
    return version


async def test_typed_key_by_key_the_next_edit_comes_and_what_is_left_of_it_costs_no_model_call(lsp, fake_api,
                                                                                             workspace):
    source = "def f(count):\n    a = count\n    return a + count\n\n\nprint(f(2))\n"
    fake_api.add(text(region(source.replace("count", "total"))))  # the model rewrites the window: both uses
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", source)
    version = type_over(client, uri, 0, 6, "count", "total")
    assert await ask(client, uri, 0, 11) == offered(uri, version, (1, 8), (2, 20), "total\n    return a + total", 1)
    version = type_over(client, uri, 1, 8, "count", "total")  # made by hand, not taken with Tab
    assert await ask(client, uri, 1, 13) == offered(uri, version, (2, 15), (2, 20), "total", 2)
    (request,) = fake_api.requests
    edits = request["messages"][0]["content"][0]["text"]
    assert "-def f(count):\n+def f(total):" in edits  # the keys told as one edit
    assert await stats(client) == counts(requests=2, modelCalls=1)


# ---- the filters ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [
    region(RENAMED),  # unchanged
    region(RENAMED.replace("return count + 1", "return count+1")),  # whitespace only
    region(RENAMED.replace("f(total)", "f(total, step)")),  # an insertion at the cursor: ghost text
    region(RENAMED.replace("print(f(2))", "\n".join(f"x{n} = {n}" for n in range(11)))),  # more than maxLines
    region(SOURCE),  # undoes the user's latest change
    region(RENAMED.replace("f(total)", "f(tot)")),  # deletes what the user just typed
    f"{START}\n{START}\n{RENAMED}\n{END}",  # the region opened twice
    "I would rename it.",  # no window at all: the whole answer, which rewrites the whole window
], ids=["unchanged", "whitespace", "ghost-text", "too-large", "undo", "undo-typed", "twice", "prose"])
async def test_a_filtered_answer_is_no_edit(lsp, fake_api, workspace, answer):
    fake_api.add(text(answer))
    client = await lsp.start()
    uri, _ = renamed(client, workspace)
    assert await ask(client, uri, 0, 11) == NOTHING
    assert await stats(client) == counts(requests=1, modelCalls=1, filtered=1)


async def test_a_dismissed_suggestion_does_not_come_back(lsp, fake_api, workspace):
    fake_api.add(text(region(CARRIED)), text(region(CARRIED.replace("print(f(2))", "print(f(3))"))))
    client = await lsp.start()
    uri, version = renamed(client, workspace)
    first = await ask(client, uri, 0, 11)
    assert first["edits"][0]["text"] == "total"
    edit(client, uri, RENAMED.replace("print(f(2))", "print(f(3))"))  # the user typed something else
    assert await ask(client, uri, 0, 11) == NOTHING  # the model offers the same edit again
    assert await stats(client) == counts(requests=2, modelCalls=2, filtered=1)


async def test_an_edit_typed_by_hand_is_not_dismissed_from_the_next_line_that_reads_the_same(lsp, fake_api,
                                                                                             workspace):
    source = "def f(count):\n    return count\n\n\nprint(f(2))\nprint(f(2))\n"
    added = source.replace("f(count)", "f(count, strict=False)")
    first = added.replace("print(f(2))", "print(f(2, strict=True))", 1)
    fake_api.add(text(region(first)), text(region(first.replace("print(f(2))", "print(f(2, strict=True))"))))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", source)
    version = edit(client, uri, added)
    assert await ask(client, uri, 0, 22) == offered(uri, version, (4, 9), (4, 9), ", strict=True", 1)
    edit(client, uri, added.replace("print(f(2))", "print(f(2, s))", 1))  # typing it, not taking it with Tab
    version = edit(client, uri, first)
    assert await ask(client, uri, 0, 22) == offered(uri, version, (5, 9), (5, 9), ", strict=True", 2)
    assert await stats(client) == counts(requests=2, modelCalls=2)


# ---- fresh and cheap -----------------------------------------------------------------------------------------


async def test_a_newer_request_answers_the_older_and_closes_its_model_request(lsp, fake_api, workspace):
    fake_api.add({"hold": True}, text(region(CARRIED)))
    client = await lsp.start()
    uri, version = renamed(client, workspace)
    first = ask(client, uri, 0, 10)
    await until(lambda: fake_api.requests)
    second = await ask(client, uri, 0, 11)
    assert await first == NOTHING
    assert second == offered(uri, version, (1, 11), (1, 16), "total", 1)
    await until(lambda: fake_api.disconnects == [1])
    assert await stats(client) == counts(requests=2, modelCalls=2, cancelled=1)


async def test_a_document_changed_meanwhile_gets_no_edit(lsp, fake_api, workspace):
    resume = threading.Event()
    fake_api.add(text(region(CARRIED), pause_at=2, resume=resume))
    client = await lsp.start()
    uri, _ = renamed(client, workspace)
    request = ask(client, uri, 0, 11)
    await until(lambda: fake_api.requests)
    edit(client, uri, RENAMED + "# more\n")
    await stats(client)  # answered after the change was taken in (in order)
    resume.set()
    assert await request == NOTHING
    assert (await stats(client))["stale"] == 1


async def test_cancel_request_closes_the_model_request(lsp, fake_api, workspace):
    fake_api.add({"hold": True})
    client = await lsp.start()
    uri, _ = renamed(client, workspace)
    request = ask(client, uri, 0, 11, msg_id="n-1")
    await until(lambda: fake_api.requests)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="n-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await request
    await until(lambda: fake_api.disconnects == [1])
    assert (await stats(client))["cancelled"] == 1


async def test_a_burst_makes_at_most_three_model_requests_and_the_last_is_fresh(lsp, fake_api, workspace):
    fake_api.default = lambda body: text(region(body_window(body)))
    client = await lsp.start()
    uri, _ = renamed(client, workspace)
    requests = []
    loop = asyncio.get_running_loop()
    began = loop.time()
    for n in range(10):  # one a tenth of a second, each after an edit
        edit(client, uri, RENAMED + f"# {n}\n")
        requests.append(ask(client, uri, 0, 11))
        await asyncio.sleep(max(0.0, began + 0.1 * (n + 1) - loop.time()))  # the pace of a burst, not a wait
    answers = await asyncio.wait_for(asyncio.gather(*requests), CEILING)
    assert answers[:-1] == [NOTHING] * 9 and answers[-1]["edits"][0]["text"] == "total"
    assert answers[-1]["edits"][0]["textDocument"]["version"] == client.docs[uri][0]
    assert len(fake_api.requests) <= 3
    assert "# 9" in json.dumps(fake_api.requests[-1])  # the last answer came from a request begun after its edit


def body_window(body: dict) -> str:
    """The window of a Messages API next-edit request, with the rename carried on (an oracle's answer)."""
    excerpt = body["messages"][0]["content"][1]["text"]
    window = excerpt.split(START + "\n", 1)[1].split("\n" + END, 1)[0].replace(CURSOR, "")
    return window.replace("return count", "return total")


async def test_an_answer_waits_at_most_the_timeout(lsp, fake_api, workspace):
    fake_api.add(text(region(CARRIED)), {"hold": True})
    client = await lsp.start(init_options={"nextEdits": {"timeout": 2}})
    uri, _ = renamed(client, workspace)
    assert (await ask(client, uri, 0, 11))["edits"][0]["text"] == "total"  # the SDK loaded, a connection open
    edit(client, uri, RENAMED + "\n")
    assert await ask(client, uri, 0, 11) == NOTHING
    await until(lambda: fake_api.disconnects == [2])
    assert warnings_of(client) == ["agent-lsp: no next edits: no next edit within 2 s (the nextEdits.timeout "
                                   "setting)"]


async def test_a_model_failure_is_no_edit_and_one_warning(lsp, fake_api, workspace):
    error = {"status": 401, "error": {"type": "authentication_error", "message": "invalid api key"}}
    fake_api.add(error, error)
    client = await lsp.start()
    uri, _ = renamed(client, workspace)
    assert await ask(client, uri, 0, 11) == NOTHING
    edit(client, uri, RENAMED + "\n")
    assert await ask(client, uri, 0, 11) == NOTHING
    assert warnings_of(client) == [f"agent-lsp: no next edits: {fake_api.base_url}/v1/messages answered 401 "
                                   "authentication_error: invalid api key"]
    assert (await stats(client))["errors"] == 2


# ---- settings and Copilot's clients ------------------------------------------------------------------------


async def test_turned_off_and_excluded_ask_no_model(lsp, fake_api, workspace):
    client = await lsp.start(init_options={"completions": {"exclude": ["secret/*"]},
                                           "editorInfo": {"name": "Neovim", "version": "0.11.4"},
                                           "editorPluginInfo": {"name": "copilot-lsp", "version": "0"}})
    hidden = open_doc(client, workspace / "secret" / "keys.py", "TOKEN = 'abc'\n")
    edit(client, hidden, "TOKEN = 'abcdef'\n")
    assert await ask(client, hidden, 0, 5) == NOTHING
    uri, _ = renamed(client, workspace)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"nextEditSuggestions": {"enabled": False}}))
    assert await ask(client, uri, 0, 11) == NOTHING
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"agentLsp": {"nextEdits": {"enabled": True}}}))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"nextEditSuggestions": {"enabled": True}}))
    client.protocol.notify("textDocument/didFocus", {"textDocument": {"uri": "file://"}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"agentLsp": {"nextEdits": {"enabled": False}}}))
    assert await ask(client, uri, 0, 11) == NOTHING
    assert fake_api.requests == []
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"agentLsp": {}}))
    fake_api.add(text(region(CARRIED)))
    assert (await ask(client, uri, 0, 11))["edits"][0]["text"] == "total"
    assert "TOKEN" not in json.dumps(fake_api.requests) and "secret" not in json.dumps(fake_api.requests)
    assert warnings_of(client) == []


async def test_utf16_is_negotiated_whenever_offered(lsp, fake_api, workspace):
    client = await lsp.start(capabilities=types.ClientCapabilities(general=types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16])))
    assert client.initialize_result.capabilities.position_encoding == types.PositionEncodingKind.Utf16
    source = "s = '😀'; count = 1\ns2 = '😀'; y = count\n"
    fake_api.add(text(region(source.replace("count", "total"))))
    uri = open_doc(client, workspace / "app.py", source)
    version = edit(client, uri, source.replace("count = 1", "total = 1"))
    assert await ask(client, uri, 0, 17) == offered(uri, version, (1, 15), (1, 20), "total", 1)  # 😀: 2 units


async def test_a_bad_setting_is_a_warning_naming_it(lsp, fake_api, workspace):
    fake_api.add(text(region(CARRIED)))
    client = await lsp.start(init_options={"nextEdits": {"maxLines": "ten", "linesAbove": -1}})
    uri, _ = renamed(client, workspace)
    assert (await ask(client, uri, 0, 11))["edits"][0]["text"] == "total"
    assert warnings_of(client) == [
        "agent-lsp: setting `nextEdits` from initializationOptions has problems: `nextEdits.maxLines` must be an "
        "integer from 1 to 100 (its default applies); `nextEdits.linesAbove` must be an integer from 0 to 50 (its "
        "default applies)."]


# ---- bad input -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("params, field", [
    ([], "params"),
    ({"position": {"line": 0, "character": 0}}, "textDocument"),
    ({"textDocument": {"uri": 3, "version": 1}, "position": {"line": 0, "character": 0}}, "textDocument.uri"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}}, "textDocument.version"),
    ({"textDocument": {"uri": "file:///x.py", "version": "1"}, "position": {"line": 0, "character": 0}},
     "textDocument.version"),
    ({"textDocument": {"uri": "file:///x.py", "version": 1}}, "position"),
    ({"textDocument": {"uri": "file:///x.py", "version": 1}, "position": {"line": -1, "character": 0}},
     "position.line"),
    ({"textDocument": {"uri": "file:///x.py", "version": 1}, "position": {"line": 0, "character": True}},
     "position.character"),
])
async def test_malformed_requests_are_invalid_params_naming_the_field(lsp, params, field):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await client.protocol.send_request_async(INLINE_EDIT, params)
    assert field in raised.value.message


async def test_what_cannot_be_answered_is_no_edit_and_the_server_goes_on(lsp, fake_api, workspace):
    fake_api.default = text(region(CARRIED))
    client = await lsp.start()
    uri, version = renamed(client, workspace)
    never = (workspace / "never.py").as_uri()
    client.docs[never] = [1, ""]
    assert await ask(client, never, 0, 0) == NOTHING  # never opened
    assert await ask(client, uri, 0, 40) == NOTHING  # past the end of the line
    assert await ask(client, uri, 40, 0) == NOTHING  # past the end of the document
    assert await ask(client, uri, 0, 11, version=version + 7) == NOTHING  # a version the server never saw
    assert await ask(client, uri, 0, 11, context={"triggerKind": 99}) == offered(uri, version, (1, 11), (1, 16),
                                                                                "total", 1)
    assert await stats(client) == counts(requests=2, modelCalls=1, stale=1)  # the first three asked nothing
