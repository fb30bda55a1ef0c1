"""Suggestions as you type (PROTOCOL §10) over real LSP: the server as a subprocess, the real SDKs against fakes on
127.0.0.1 — the Messages API (`anthropic`, chat with a fill-the-hole prompt) and the legacy completions shape with
`suffix` (`openai` with `completions.api` "fim", as Ollama, llama.cpp and DeepSeek serve it) — whole sequences
asserted: what the client got, and what the fake saw (requests, closed connections)."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from typing import Any, Optional

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled

from tests.e2e.conftest import CEILING, Harness, chat, open_doc, openai_env, server_env, text
from tests.waiting import until
from tests.fakes.chat_completions import FakeChatCompletions
from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.fakes.messages_api import FakeMessagesAPI

COMPLETION = types.TEXT_DOCUMENT_INLINE_COMPLETION
FIM_MODEL = "qwen2.5-coder:1.5b"


@dataclass
class Backend:
    """The model side of a test: the fake and how to script it, the server's environment and settings."""

    kind: str
    fake: Any
    env: dict[str, str]
    init_options: dict[str, Any]

    def says(self, said: str, **extra: Any) -> dict:
        if self.kind == "anthropic":
            return text(f"<completion>{said}</completion>", **extra)
        return {"text": said, **extra}

    def says_in_part(self, said: str, resume: threading.Event, first: bool = True) -> dict:
        """`said`, the stream paused (until `resume` is set) after its first piece of text, or before any."""
        before_text = 2 if self.kind == "anthropic" else 0  # message_start, content_block_start
        return self.says(said, pause_at=before_text + 1 if first else 0, resume=resume)

    def fails(self, status: int, message: str) -> dict:
        kind = "authentication_error" if self.kind == "anthropic" else "invalid_request_error"
        return {"status": status, "error": {"type": kind, "message": message}}

    def failure(self, message: str) -> str:
        """The warning a 401 saying `message` becomes."""
        if self.kind == "anthropic":
            return (f"agent-lsp: no suggestions: {self.fake.base_url}/v1/messages answered 401 authentication_error: "
                    f"{message}")
        return (f"agent-lsp: no suggestions: {self.fake.api_url}/completions answered 401: {message}. Check "
                "OPENAI_API_KEY in the environment the editor starts agent-lsp with.")


@pytest.fixture(params=["anthropic", "fim"])
def backend(request, fake_api):
    if request.param == "anthropic":
        yield Backend("anthropic", fake_api, server_env(fake_api.base_url), {})
        return
    fake = FakeLegacyCompletions().start()
    yield Backend("fim", fake, openai_env(fake.api_url), {"completions": {"api": "fim", "model": FIM_MODEL}})
    fake.stop()


@pytest.fixture
async def lsp(backend, workspace):
    """Servers speaking to `backend`, whose clients send and read inline completions as plain JSON (any shape, bad
    ones too: pytest-lsp would structure them into lsprotocol types)."""
    harness = Harness(backend.fake, workspace)
    original = harness.start

    async def start(*args: Any, init_options: Optional[dict] = None, env: Optional[dict] = None, **kwargs: Any) -> Any:
        options = {**backend.init_options, **(init_options or {})}
        options["completions"] = {**backend.init_options.get("completions", {}),
                                  **(init_options or {}).get("completions", {})}
        client = await original(*args, init_options=options, env=env or backend.env, **kwargs)
        protocol = client.protocol
        message_type, result_type = protocol.get_message_type, protocol.get_result_type
        protocol.get_message_type = lambda method: None if method == COMPLETION else message_type(method)
        protocol.get_result_type = lambda method: None if method == COMPLETION else result_type(method)
        return client

    harness.start = start
    yield harness
    await harness.stop()


def params_at(uri: str, line: int, character: int, **extra: Any) -> dict:
    """textDocument/inlineCompletion params as Neovim 0.12 sends them (Automatic)."""
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
            "context": {"triggerKind": 2}, **extra}


async def suggest(client: Any, uri: str, line: int, character: int, **extra: Any) -> dict:
    return await client.protocol.send_request_async(COMPLETION, params_at(uri, line, character, **extra))


def edit(client: Any, uri: str, text: str) -> None:
    """The buffer now holds `text` (one didChange with the whole text, a version more)."""
    version = client.docs[uri][0] + 1
    client.docs[uri] = [version, text]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def item(insert: str, line: int, character: int, id: int) -> dict:
    here = {"line": line, "character": character}
    return {"insertText": insert, "range": {"start": here, "end": here},
            "command": {"title": "Suggestion accepted", "command": "agent.completionAccepted", "arguments": [{"id": id}]}}


async def stats(client: Any) -> dict:
    return await client.protocol.send_request_async("agent/completionStats", {})


def warnings_of(client: Any) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


ONLY_ANTHROPIC = pytest.mark.parametrize("backend", ["anthropic"], indirect=True)
"""For what does not depend on the model's wire, and for what only the Messages API is sent."""
ONLY_FIM = pytest.mark.parametrize("backend", ["fim"], indirect=True)


# ---- the same sequences over both wires ---------------------------------------------------------------------


async def test_a_suggestion_then_typed_through_without_a_model_call(lsp, backend, workspace):
    backend.fake.add(backend.says("total(items))"))
    client = await lsp.start()
    source = "def total(xs):\n    return sum(xs)\n\nprint("
    uri = open_doc(client, workspace / "app.py", source + ")")
    assert await suggest(client, uri, 3, 6) == {"items": [item("total(items)", 3, 6, 1)]}  # its `)` is there already
    edit(client, uri, source + "tot)")
    assert await suggest(client, uri, 3, 9) == {"items": [item("al(items)", 3, 9, 2)]}
    edit(client, uri, source + "total(it)")
    assert await suggest(client, uri, 3, 14) == {"items": [item("ems)", 3, 14, 3)]}
    assert len(backend.fake.requests) == 1
    assert await stats(client) == {"requests": 3, "modelCalls": 1, "reused": 2, "cancelled": 0, "stale": 0,
                                   "shown": 0, "accepted": 0, "partiallyAccepted": 0, "errors": 0, "nextEdits": {
                                       "requests": 0, "modelCalls": 0, "shown": 0, "accepted": 0, "stale": 0,
                                       "cancelled": 0, "filtered": 0, "errors": 0}}


async def test_typing_through_a_suggestion_still_streaming_waits_for_the_same_answer(lsp, backend, workspace):
    resume = threading.Event()
    backend.fake.add(backend.says_in_part("compute_the_total(first, second, third)", resume))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "value = ")
    first = asyncio.ensure_future(suggest(client, uri, 0, 8))
    await until(lambda: backend.fake.requests)
    edit(client, uri, "value = com")  # what streamed so far ("compute_the_total(first, ") begins with it
    second = asyncio.ensure_future(suggest(client, uri, 0, 11))
    assert await first == {"items": []}  # superseded: answered at once
    resume.set()
    assert await second == {"items": [item("pute_the_total(first, second, third)", 0, 11, 1)]}
    assert len(backend.fake.requests) == 1 and backend.fake.disconnects == []
    counts = await stats(client)
    assert (counts["modelCalls"], counts["reused"], counts["cancelled"]) == (1, 1, 1)


async def test_typing_something_else_closes_the_stream_and_asks_anew(lsp, backend, workspace):
    resume = threading.Event()
    backend.fake.add(backend.says_in_part("compute_the_total(first, second, third)", resume), backend.says("lue"))
    client = await lsp.start("--log-level", "DEBUG")
    uri = open_doc(client, workspace / "app.py", "value = ")
    first = asyncio.ensure_future(suggest(client, uri, 0, 8))
    await until(lambda: backend.fake.requests)
    edit(client, uri, "value = va")
    assert await suggest(client, uri, 0, 10) == {"items": [item("lue", 0, 10, 1)]}
    assert await first == {"items": []}
    await until(lambda: backend.fake.disconnects == [1])
    resume.set()
    assert len(backend.fake.requests) == 2


async def test_an_accepted_suggestion_has_the_next_one_asked_before_the_client_asks(lsp, backend, workspace):
    resume = threading.Event()
    backend.fake.add(backend.says("compute(1)"), backend.says_in_part(" + offset", resume))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "x = ")
    answer = await suggest(client, uri, 0, 4)
    assert answer == {"items": [item("compute(1)", 0, 4, 1)]}
    edit(client, uri, "x = compute(1)")  # the client applies the item, then runs its command
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="agent.completionAccepted", arguments=answer["items"][0]["command"]["arguments"]))
    await until(lambda: len(backend.fake.requests) == 2)  # the place after it, asked before any request there
    assert "x = compute(1)" in json.dumps(backend.fake.requests[1])
    joined = asyncio.ensure_future(suggest(client, uri, 0, 14))
    await stats(client)  # answered after the request was read: it waits for the model request asked ahead
    resume.set()
    assert await joined == {"items": [item(" + offset", 0, 14, 2)]}
    assert len(backend.fake.requests) == 2 and backend.fake.disconnects == []
    counts = await stats(client)
    assert (counts["requests"], counts["modelCalls"], counts["reused"], counts["accepted"]) == (2, 2, 0, 1)


async def test_a_newer_request_supersedes_and_closes_the_older_stream(lsp, backend, workspace):
    backend.fake.add({"hold": True}, backend.says("1"))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = \nb = ")
    first = asyncio.ensure_future(suggest(client, uri, 0, 4))
    await until(lambda: backend.fake.requests)
    second = await suggest(client, uri, 1, 4)  # another place: it cannot use the older answer
    assert await first == {"items": []}
    assert second == {"items": [item("1", 1, 4, 1)]}
    await until(lambda: backend.fake.disconnects == [1])
    assert (await stats(client))["cancelled"] == 1


async def test_cancel_request_closes_the_stream(lsp, backend, workspace):
    backend.fake.add({"hold": True})
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = ")
    request = asyncio.wrap_future(client.protocol.send_request(COMPLETION, params_at(uri, 0, 4), msg_id="s-1"))
    await until(lambda: backend.fake.requests)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="s-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await request
    await until(lambda: backend.fake.disconnects == [1])  # after the grace in which a newer request could take it
    assert (await stats(client))["cancelled"] == 1


async def test_a_document_changed_meanwhile_gets_no_item(lsp, backend, workspace):
    resume = threading.Event()
    backend.fake.add(backend.says_in_part("1", resume, first=False))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = ")
    request = asyncio.ensure_future(suggest(client, uri, 0, 4))
    await until(lambda: backend.fake.requests)
    edit(client, uri, "a = \n# changed elsewhere, and no request after it")
    await stats(client)  # answered after the change was taken in (in order)
    resume.set()
    assert await request == {"items": []}
    assert (await stats(client))["stale"] == 1


async def test_excluded_files_ask_no_model_and_are_never_context(lsp, backend, workspace):
    backend.fake.add(backend.says("1"))
    client = await lsp.start(init_options={"completions": {"exclude": ["private/*"]}})
    secret = open_doc(client, workspace / ".env", "API_KEY=")
    private = open_doc(client, workspace / "private" / "notes.py", "SECRET_TOKEN = 'abc'\n")
    edit(client, private, "SECRET_TOKEN = 'abcd'\n")
    edit(client, secret, "API_KEY=sk-\n")
    assert await suggest(client, secret, 0, 11) == {"items": []}
    assert await suggest(client, private, 0, 5) == {"items": []}
    assert backend.fake.requests == []
    uri = open_doc(client, workspace / "app.py", "x = ")
    assert await suggest(client, uri, 0, 4) == {"items": [item("1", 0, 4, 1)]}
    sent = json.dumps(backend.fake.requests)
    assert "SECRET_TOKEN" not in sent and "sk-" not in sent and "private" not in sent


async def test_a_model_failure_is_no_item_and_one_warning(lsp, backend, workspace):
    error = backend.fails(401, "invalid api key")
    backend.fake.add(error, error, backend.says("1"), error)
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "x = ")
    answers = []
    for n in range(4):  # each request after a failure asks again: no back-off, no retry
        edit(client, uri, "x = " + " " * n)
        answers.append(await suggest(client, uri, 0, 4 + n))
    assert answers == [{"items": []}, {"items": []}, {"items": [item("1", 0, 6, 1)]}, {"items": []}]
    assert warnings_of(client) == [backend.failure("invalid api key")] * 2  # once, and again after a success
    assert len(backend.fake.requests) == 4
    assert (await stats(client))["errors"] == 3


async def test_a_chat_runs_beside_suggestions(lsp, backend, workspace):
    resume = threading.Event()  # the chat streams on only once the suggestion has been answered
    env, options, chats = backend.env, {}, None
    if backend.kind == "anthropic":
        answer = text("A chat answer, in parts.", pause_at=3, resume=resume)
        backend.fake.default = lambda body: (backend.says("done()") if body.get("stop_sequences") == ["</completion>"]
                                             else answer)
    else:  # the chat on a chat.completions server, suggestions from the FIM one (`completions.baseUrl`)
        chats = FakeChatCompletions().start()
        chats.add(text("A chat answer, in parts.", pause_at=2, resume=resume))
        env, options = openai_env(chats.api_url), {"completions": {"baseUrl": backend.fake.api_url}}
        backend.fake.default = backend.says("done()")
    try:
        client = await lsp.start(env=env, init_options=options)
        uri = open_doc(client, workspace / "app.py", "x = ")
        chatting = asyncio.ensure_future(chat(client, "hi"))
        await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
        assert await suggest(client, uri, 0, 4) == {"items": [item("done()", 0, 4, 1)]}
        assert not chatting.done()
        resume.set()
        result = await chatting
        assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "A chat answer, in parts.")
    finally:
        resume.set()
        if chats is not None:
            chats.stop()


async def test_bad_input_is_no_item_and_the_server_goes_on(lsp, backend, workspace):
    backend.fake.default = backend.says("1")
    client = await lsp.start(init_options={"completions": {"maxLines": "three", "timeout": "soon", "exclude": 5}})
    uri = open_doc(client, workspace / "app.py", "x = \n")
    assert await suggest(client, uri, 0, 40) == {"items": []}  # past the end of the line
    assert await suggest(client, uri, 9, 0) == {"items": []}  # past the end of the document
    assert await suggest(client, (workspace / "never.py").as_uri(), 0, 0) == {"items": []}  # never opened
    long_line = open_doc(client, workspace / "long.py", "x = " + "a" * 10_000_000)
    assert await suggest(client, long_line, 0, 10_000_004) == {"items": [item("1", 0, 10_000_004, 1)]}
    assert len(json.dumps(backend.fake.requests[-1])) < 50_000  # a bounded window of it
    surrogate = open_doc(client, workspace / "s.py", "name = 'caf\ud800")  # arrives as U+FFFD
    assert await suggest(client, surrogate, 0, 12) == {"items": [item("1", 0, 12, 2)]}
    binary = open_doc(client, workspace / "b.bin", "\x00\x01\x02ELF")
    assert await suggest(client, binary, 0, 3) == {"items": []}
    calls = len(backend.fake.requests)
    many = [asyncio.ensure_future(suggest(client, uri, 0, 4)) for _ in range(200)]
    texts = [[i["insertText"] for i in a["items"]] for a in await asyncio.wait_for(asyncio.gather(*many), CEILING)]
    answered = texts.index(["1"])  # each newer one supersedes the older, until the one model answer is there
    assert texts == [[]] * answered + [["1"]] * (200 - answered)  # and then it answers every one after it
    assert len(backend.fake.requests) == calls + 1 and warnings_of(client) == [
        "agent-lsp: setting `completions` from initializationOptions has problems: `completions.maxLines` must be an "
        "integer from 1 to 200 (its default applies); `completions.timeout` must be a number of seconds from 0.1 to "
        "600 (its default applies); `completions.exclude` must be a list of globs (its default applies)."]


# ---- what each wire sends ------------------------------------------------------------------------------------


@ONLY_ANTHROPIC
async def test_anthropic_is_asked_to_fill_the_hole_with_a_small_model_and_a_cached_prompt(lsp, backend, workspace):
    backend.fake.add(backend.says("1"))
    client = await lsp.start()
    other = open_doc(client, workspace / "models.py", "class Invoice:\n    pass\n")
    edit(client, other, "class Invoice:\n    amount: int\n")
    uri = open_doc(client, workspace / "app.py", "def f():\n    return g(\n\nprint(f())\n")
    await suggest(client, uri, 1, 13)
    (request,) = backend.fake.requests
    assert request["model"] == "claude-haiku-5-5" and "temperature" not in request
    assert request["stop_sequences"] == ["</completion>"] and request["max_tokens"] == 416
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    context, hole = request["messages"][0]["content"]
    assert context == {"type": "text", "cache_control": {"type": "ephemeral"}, "text": (
        '<snippet path="models.py" kind="open buffer" first-line="1">\nclass Invoice:\n    amount: int\n'
        '</snippet>\n<file path="app.py" language="python">\ndef f():\n')}
    assert hole == {"type": "text", "text": "    return g(<hole/>\n\nprint(f())\n</file>\nFill <hole/> with at most 8 lines."}


@ONLY_FIM
async def test_fim_posts_prompt_and_suffix_to_the_legacy_completions_shape(lsp, backend, workspace):
    backend.fake.add(backend.says("1"), backend.says("x"))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "def f():\n    return g(\n\nprint(f())\n")
    await suggest(client, uri, 1, 13)
    edit(client, uri, "def f():\n    return g()\n\nprint(f())\n")
    await suggest(client, uri, 1, 13)
    assert backend.fake.requests == [
        {"model": FIM_MODEL, "prompt": "def f():\n    return g(", "suffix": "\n\nprint(f())\n", "max_tokens": 416,
         "stream": True},
        {"model": FIM_MODEL, "prompt": "def f():\n    return g(", "suffix": ")\n\nprint(f())\n", "max_tokens": 96,
         "stream": True, "stop": ["\n"]}]


@ONLY_ANTHROPIC
async def test_definitions_from_the_editor_are_context_in_characters(lsp, backend, workspace):
    backend.fake.add(backend.says("x)"))
    lib = workspace / "lib.py"
    lib.write_text("import os\n\n\ndef load(name):\n    return os.environ[name]\n")
    client = await lsp.start(agent={"languageFeatures": ["textDocument/definition"]})
    client.language_requests = []

    @client.feature("agent/languageFeature")
    def on_language_feature(ls, params):
        ls.language_requests.append(params)
        return [{"uri": lib.as_uri(), "range": {"start": {"line": 3, "character": 4},
                                                "end": {"line": 3, "character": 8}}}]

    uri = open_doc(client, workspace / "app.py", 'MOOD = "😀"; value = load(')  # the emoji: 2 UTF-16 units
    assert await suggest(client, uri, 0, 26) == {"items": [item("x)", 0, 26, 1)]}
    assert client.language_requests == [{"method": "textDocument/definition", "params": {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 21}}}]  # `load`, in UTF-16 units
    context = backend.fake.requests[0]["messages"][0]["content"][0]["text"]
    assert context.startswith('<snippet path="lib.py" kind="definition" first-line="4">\n'
                              "def load(name):\n    return os.environ[name]\n</snippet>\n")
    sent = backend.fake.requests[0]["messages"][0]["content"][1]["text"]
    assert sent.startswith('MOOD = "😀"; value = load(<hole/>')


@ONLY_ANTHROPIC
async def test_openai_compatible_chat_gets_the_same_hole_as_chat_messages(lsp, workspace):
    api = FakeChatCompletions().start()
    try:
        api.add(text("<completion>1 + 2</completion>"))
        client = await lsp.start(env=openai_env(api.api_url, model="gpt-test"))
        uri = open_doc(client, workspace / "app.py", "total = ")
        assert await suggest(client, uri, 0, 8) == {"items": [item("1 + 2", 0, 8, 1)]}
        (request,) = api.requests
        assert {k: request[k] for k in ("model", "stream", "stop", "max_tokens")} == {
            "model": "gpt-test", "stream": True, "stop": ["</completion>"], "max_tokens": 416}
        system, user = request["messages"]
        assert system["role"] == "system" and "<hole/>" in system["content"]
        assert user == {"role": "user", "content": '<file path="app.py" language="python">\ntotal = <hole/>\n'
                                                   "</file>\nFill <hole/> with at most 8 lines."}
    finally:
        api.stop()


# ---- what does not depend on the wire ----------------------------------------------------------------------


@ONLY_ANTHROPIC
async def test_the_capability_and_the_feature_are_declared(lsp):
    client = await lsp.start()
    caps = client.initialize_result.capabilities
    assert caps.inline_completion_provider is True
    assert "agent.completionAccepted" in caps.execute_command_provider.commands
    assert "inlineCompletion" in caps.experimental["agent"]["features"]


@ONLY_ANTHROPIC
async def test_the_demo_model_completes_from_the_workspace(lsp, workspace):
    client = await lsp.start("--model", "demo", env=server_env(None, key=False))
    open_doc(client, workspace / "lib.py", "def greet(name):\n    return 'hi ' + name\n")
    uri = open_doc(client, workspace / "app.py", "    return 'h")
    assert await suggest(client, uri, 0, 13) == {"items": [item("i ' + name", 0, 13, 1)]}
    assert (await stats(client))["modelCalls"] == 1


@ONLY_ANTHROPIC
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


@ONLY_ANTHROPIC
async def test_the_settings_sources_apply_to_the_next_request(lsp, backend, workspace):
    (workspace / ".agent-lsp").mkdir()
    (workspace / ".agent-lsp" / "settings.json").write_text(json.dumps(
        {"completions": {"maxLines": 2, "baseUrl": "https://elsewhere.example"}}))  # a workspace may not send code away
    client = await lsp.start()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"agentLsp": {"completions": {"enabled": False}}}))
    uri = open_doc(client, workspace / "app.py", "x = ")
    assert await suggest(client, uri, 0, 4) == {"items": []}
    assert backend.fake.requests == []
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"agentLsp": {}}))
    backend.fake.add(backend.says("\n".join(f"line{n}" for n in range(5))))
    assert await suggest(client, uri, 0, 4) == {"items": [item("line0\nline1", 0, 4, 1)]}  # the workspace file's
    assert len(backend.fake.requests) == 1  # ... and still the Messages API of the environment


@ONLY_ANTHROPIC
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


async def test_a_change_read_after_the_request_never_gets_an_item_for_the_newer_text(fake_api, tmp_path):
    """In one write: the request at version 1 (after `    ret`), its didChange to version 2 (`zz_` at the start
    of that line), a request for a document never opened. The change is read before the first handler runs (the
    third request is answered first); the first is answered for the version it was asked about: no item (an item
    made from version 2's text at version 1's column would insert inside `zz_    ret`)."""
    from tests.reliability.rawlsp import RawServer, dumps, frame

    fake_api.default = lambda body: text("<completion>urn total</completion>")
    root = tmp_path / "ws"
    root.mkdir()
    source = "def total(xs):\n    total = 0\n    total += sum(xs)\n    ret\n"
    uri = (root / "a.py").as_uri()
    server = await RawServer.start(env=server_env(fake_api.base_url, XDG_CONFIG_HOME=str(tmp_path / "config")))
    try:
        await server.initialize(root)
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": source}})
        first, never = server.next_id(), server.next_id()
        answers = {msg_id: asyncio.get_running_loop().create_future() for msg_id in (first, never)}
        server.pending.update(answers)
        server.send_raw(b"".join(frame(dumps(message)) for message in (
            {"jsonrpc": "2.0", "id": first, "method": COMPLETION, "params": {
                "textDocument": {"uri": uri}, "position": {"line": 3, "character": 7},
                "context": {"triggerKind": 2}}},
            {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {
                    "start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}}, "text": "zz_"}]}},
            {"jsonrpc": "2.0", "id": never, "method": COMPLETION, "params": {
                "textDocument": {"uri": (root / "never.py").as_uri()}, "position": {"line": 0, "character": 0},
                "context": {"triggerKind": 2}}})))
        done = await asyncio.wait_for(asyncio.gather(*answers.values()), CEILING)
        assert [answer["result"] for answer in done] == [{"items": []}, {"items": []}]
        assert fake_api.requests == []  # asked about version 1, which is gone: nothing to ask the model
    finally:
        await server.stop()
