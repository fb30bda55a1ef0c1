"""The shared scenario table: each scenario is written once and runs once per provider, so the two cannot drift.

A scenario's script is in the fake Messages API's format, which the fake chat.completions API reads too; what the
model was sent is compared in a provider-neutral form (`transcript`), so one expectation holds for both wires.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.conftest import (
    Harness,
    chat,
    confirm,
    open_doc,
    openai_env,
    server_env,
    shape,
    streamed,
    text,
    tool_use,
    updates_of,
    waiting_for_confirmation,
)
from tests.waiting import until
from tests.fakes.chat_completions import FakeChatCompletions
from tests.fakes.messages_api import FakeMessagesAPI

SOURCE = "def greet(name):\n    return 'hi ' + name\n"
EDIT = tool_use("edit_file", {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}, id="call_e1")
DIFF = ("--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return 'hi ' + name\n"
        "+    return 'hello ' + name\n")


@dataclass
class Provider:
    """One provider's fake, the server environment that points the real SDK at it, and its wire read back."""

    name: str
    fake: Any
    env: dict[str, str]

    def transcript(self, index: int) -> list[dict]:
        """Request `index` as [{"user": text} | {"assistant": text, "calls": [[id, name, input]]} |
        {"tool": id, "content": text, "error": bool}]."""
        body = self.fake.requests[index]
        return anthropic_transcript(body["messages"]) if self.name == "anthropic" else openai_transcript(
            body["messages"])


def anthropic_transcript(messages: list[dict]) -> list[dict]:
    out: list[dict] = []
    for m in messages:
        blocks = m["content"]
        if m["role"] == "assistant":
            out.append({"assistant": "".join(b["text"] for b in blocks if b["type"] == "text"),
                        "calls": [[b["id"], b["name"], b["input"]] for b in blocks if b["type"] == "tool_use"]})
            continue
        out += [{"tool": b["tool_use_id"], "content": b["content"], "error": b.get("is_error", False)}
                for b in blocks if b["type"] == "tool_result"]
        texts = [b["text"] for b in blocks if b["type"] == "text"]
        if texts:
            out.append({"user": "\n\n".join(texts)})
    return out


def openai_transcript(messages: list[dict]) -> list[dict]:
    out: list[dict] = []
    for m in messages:
        if m["role"] == "user":  # consecutive user messages read as one, as the Messages API merges them
            if out and "user" in out[-1]:
                out[-1]["user"] += "\n\n" + m["content"]
            else:
                out.append({"user": m["content"]})
        elif m["role"] == "assistant":
            out.append({"assistant": m["content"] or "", "calls": [
                [c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])]
                for c in m.get("tool_calls", [])]})
        elif m["role"] == "tool":
            error = m["content"].startswith("Error: ")
            out.append({"tool": m["tool_call_id"], "content": m["content"].removeprefix("Error: ") if error
                        else m["content"], "error": error})
    return out


@pytest.fixture(params=["anthropic", "openai"])
def provider(request):
    if request.param == "anthropic":
        fake = FakeMessagesAPI().start()
        yield Provider("anthropic", fake, server_env(fake.base_url, AGENT_LSP_CLIENT_TIMEOUT="1.5"))
    else:
        fake = FakeChatCompletions().start()
        yield Provider("openai", fake, openai_env(fake.api_url))
    fake.stop()


@pytest.fixture
async def lsp(provider, workspace):
    harness = Harness(provider.fake, workspace)
    original = harness.start

    async def start(*args, **kwargs):
        return await original(*args, env=provider.env, **kwargs)

    harness.start = start
    yield harness
    await harness.stop()


async def test_text(lsp, provider):
    provider.fake.add(text("Hello there, from either wire."))
    client = await lsp.start()
    result = await chat(client, "hi")
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Hello there, from either wire.")
    assert shape(updates_of(client)) == ["turn_start", "text_delta", "usage"]
    assert result["metadata"]["usage"] == {"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 0,
                                           "cacheCreationInputTokens": 0}
    assert provider.transcript(0) == [{"user": "hi"}]


async def test_tool_call(lsp, provider):
    provider.fake.add(tool_use("list_open_buffers", {}, id="call_l1", say="Looking."), text("Nothing open."))
    client = await lsp.start()
    result = await chat(client, "what is open?")
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Nothing open.")
    assert shape(updates_of(client)) == ["turn_start", "text_delta", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:completed", "turn_start", "text_delta", "usage"]
    assert provider.transcript(1) == [
        {"user": "what is open?"},
        {"assistant": "Looking.", "calls": [["call_l1", "list_open_buffers", {}]]},
        {"tool": "call_l1", "content": "No documents are open in the editor.", "error": False}]


async def test_parallel_reads(lsp, provider):
    (lsp.workspace / "b.py").write_text("B = 2\n")
    provider.fake.add(
        {"content": [{"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "app.py"}},
                     {"type": "tool_use", "id": "call_b", "name": "read_file", "input": {"path": "b.py"}}]},
        text("Both read."))
    client = await lsp.start()
    result = await chat(client, "read both")
    assert result["finalMessage"] == "Both read."
    _, call, first, second = provider.transcript(1)
    assert call == {"assistant": "", "calls": [["call_a", "read_file", {"path": "app.py"}],
                                               ["call_b", "read_file", {"path": "b.py"}]]}
    assert (first["tool"], second["tool"]) == ("call_a", "call_b")
    assert first["content"].startswith("app.py (2 lines") and second["content"].startswith("b.py (1 lines")


async def test_edit_confirmed_then_one_rejected(lsp, provider):
    second = tool_use("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hey '"},
                      id="call_e2")
    provider.fake.add(EDIT, second, text("Left it at hello."))
    client = await lsp.start(agent={"confirmTool": True})
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE, version=4)
    task = asyncio.ensure_future(chat(client, "say hello"))
    await until(waiting_for_confirmation(client))
    await confirm(client, "allow_once")
    await until(waiting_for_confirmation(client, 2))
    await confirm(client, "reject_once", "Keep hello.")
    result = await task
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Left it at hello.")
    assert client.docs[uri] == [5, SOURCE.replace("'hi '", "'hello '")]
    transcript = provider.transcript(2)
    assert transcript[2] == {"tool": "call_e1", "error": False, "content":
                             f"Edited app.py: replaced 1 occurrence.\n{DIFF}\nNo diagnostics after the edit."}
    assert transcript[4]["tool"] == "call_e2" and transcript[4]["error"] is True
    assert "Keep hello." in transcript[4]["content"]


async def test_abort_mid_stream(lsp, provider):
    provider.fake.add(dict(text("Working on it"), hang=True))
    client = await lsp.start()
    task = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: streamed(client) == "Working on it")
    session_id = client.updates[0]["sessionId"]
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await task
    assert (result["stopReason"], result["finalMessage"]) == ("aborted", "Working on it")
    assert shape(updates_of(client)) == ["turn_start", "text_delta"]
    await until(lambda: provider.fake.disconnects == [1])
    provider.fake.add(text("Back again."))
    assert (await chat(client, "continue", sessionId=session_id))["finalMessage"] == "Back again."
    assert provider.transcript(1) == [{"user": "go"}, {"assistant": "Working on it", "calls": []},
                                      {"user": "continue"}]


async def test_compaction(lsp, provider):
    long = "x" * 1500
    provider.fake.add(text(f"First {long}"), text(f"Second {long}"), text("SUMMARY: two long answers."),
                      text("Third."))
    client = await lsp.start(init_options={"contextWindow": 1000, "compactThreshold": 0.9})
    one = await chat(client, "one")
    await chat(client, "two", sessionId=one["sessionId"])
    third = await chat(client, "three", sessionId=one["sessionId"])
    assert third["finalMessage"] == "Third."
    assert "tools" not in provider.fake.requests[2]
    assert provider.transcript(2) == [{"user": f"USER: one\nAGENT: First {long}"}]
    assert provider.transcript(3) == [
        {"user": "<summary of the earlier conversation>\nSUMMARY: two long answers.\n</summary>\n\ntwo"},
        {"assistant": f"Second {long}", "calls": []}, {"user": "three"}]
    assert shape(updates_of(client))[-4:] == ["turn_start", "notice", "text_delta", "usage"]


LISTED = {
    "anthropic": {"models": [{"id": "claude-test", "displayName": "Claude Test", "provider": "anthropic",
                              "contextWindow": 200000},
                             {"id": "claude-small-test", "displayName": "Claude Small Test", "provider": "anthropic"}],
                  "default": "claude-sonnet-5-5"},
    "openai": {"models": [{"id": "gpt-test", "provider": "openai", "contextWindow": 32768},
                          {"id": "qwen-test:7b", "provider": "openai"}], "default": "gpt-test"},
}


async def test_agent_models_lists_the_providers_models(lsp, provider):
    client = await lsp.start()
    assert await client.protocol.send_request_async("agent/models", {}) == LISTED[provider.name]
    assert "models" in client.initialize_result.capabilities.experimental["agent"]["features"]


async def test_an_html_page_instead_of_the_api_is_named_on_either_wire(lsp, provider):
    """A proxy's login page answered 200: the chat ends with an error naming the URL and what came back, then the
    next chat works (the same check for both provider families, chats and suggestions: models/streams.py)."""
    provider.fake.add({"raw": "<!doctype html><html><body>Sign in</body></html>", "content_type": "text/html"},
                      text("Right place."))
    client = await lsp.start()
    page = await chat(client)
    url = (f"{provider.fake.base_url}/v1/messages" if provider.name == "anthropic"
           else f"{provider.fake.api_url}/chat/completions")
    api = "the Messages API" if provider.name == "anthropic" else "an OpenAI-compatible API"
    assert (page["stopReason"], page["error"]["type"]) == ("error", "llm_error")
    assert page["error"]["message"].startswith(f"{url} answered 200 with an HTML page (text/html), not {api}.")
    assert (await chat(client))["finalMessage"] == "Right place."
