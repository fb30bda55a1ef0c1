"""The openai provider over real LSP: the real `openai` SDK against a fake chat.completions API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket

import pytest
from lsprotocol import types

from tests.e2e.conftest import (
    Harness,
    chat,
    confirm,
    open_doc,
    openai_env,
    shape,
    streamed,
    text,
    tool_use,
    updates_of,
    waiting_for_confirmation,
)
from tests.waiting import until
from tests.fakes.chat_completions import FakeChatCompletions

SOURCE = "def greet(name):\n    return 'hi ' + name\n"
DIFF = ("--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return 'hi ' + name\n"
        "+    return 'hello ' + name\n")


@pytest.fixture
def api():
    fake = FakeChatCompletions().start()
    yield fake
    fake.stop()


@pytest.fixture
async def lsp(workspace, api):
    harness = Harness(api, workspace)
    original = harness.start

    async def start(*args, env=None, **kwargs):
        return await original(*args, env=env or openai_env(api.api_url), **kwargs)

    harness.start = start
    yield harness
    await harness.stop()


def messages(api: FakeChatCompletions, index: int) -> list[dict]:
    """The messages of request `index`, without the system prompt."""
    sent = api.requests[index]["messages"]
    assert sent[0]["role"] == "system"
    return sent[1:]


def assert_every_call_answered(sent: list[dict]) -> None:
    """Each assistant message's tool_calls are answered, in order, by the tool messages right after it."""
    for n, message in enumerate(sent):
        ids = [c["id"] for c in message.get("tool_calls") or []]
        if ids:
            answers = sent[n + 1: n + 1 + len(ids)]
            assert [(m["role"], m["tool_call_id"]) for m in answers] == [("tool", i) for i in ids]


async def test_text_only_streams_and_sends_the_request_the_api_expects(lsp, api):
    api.add(text("Hello from a chat.completions model.", usage={"input_tokens": 30, "cache_read_input_tokens": 70,
                                                                  "output_tokens": 9}))
    client = await lsp.start()
    result = await chat(client, "hi")
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Hello from a chat.completions model.")
    assert shape(updates_of(client)) == ["turn_start", "text_delta", "usage"]
    assert result["metadata"]["usage"] == {"inputTokens": 30, "outputTokens": 9, "cacheReadInputTokens": 70,
                                           "cacheCreationInputTokens": 0}
    (request,) = api.requests
    assert request["model"] == "gpt-test" and request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert request["max_tokens"] == 8192 and "tool_choice" not in request
    assert [t["function"]["name"] for t in request["tools"]][:2] == ["list_open_buffers", "read_file"]
    assert {t["type"] for t in request["tools"]} == {"function"}
    assert messages(api, 0) == [{"role": "user", "content": "hi"}]
    assert api.authorizations == ["Bearer test-key"]


async def test_one_tool_call_and_its_result_go_back_as_a_tool_message(lsp, api):
    api.add(tool_use("read_file", {"path": "app.py"}, id="call_r1", say="Reading."), text("It greets."))
    client = await lsp.start()
    uri = open_doc(client, lsp.workspace / "app.py", "def greet(name):\n    return 'yo ' + name\n")
    result = await chat(client, "what does app.py do?", context={"activeUri": uri})
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "It greets.")
    assert shape(updates_of(client)) == ["turn_start", "text_delta", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:completed", "turn_start", "text_delta", "usage"]
    user, assistant, tool = messages(api, 1)
    assert user == {"role": "user", "content": "<editor-context>\nOpen buffers: app.py (unsaved)\nActive file: "
                                               "app.py\n</editor-context>\n\nwhat does app.py do?"}
    assert assistant == {"role": "assistant", "content": "Reading.", "tool_calls": [
        {"id": "call_r1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "app.py"}'}}]}
    assert tool == {"role": "tool", "tool_call_id": "call_r1",
                    "content": "app.py (2 lines, open in the editor with unsaved changes)\n"
                               "     1\tdef greet(name):\n     2\t    return 'yo ' + name"}


async def test_two_parallel_reads_answer_in_call_order(lsp, api):
    (lsp.workspace / "b.py").write_text("B = 2\n")
    api.add({"content": [{"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "app.py"}},
                         {"type": "tool_use", "id": "call_b", "name": "read_file", "input": {"path": "b.py"}}]},
            text("Both read."))
    client = await lsp.start()
    result = await chat(client, "read both")
    assert result["finalMessage"] == "Both read." and result["metadata"]["toolCallsCount"] == 2
    assert [(u["toolCallId"], u["input"]) for u in updates_of(client) if u["kind"] == "tool_call"] == [
        ("call_a", {"path": "app.py"}), ("call_b", {"path": "b.py"})]
    _, assistant, first, second = messages(api, 1)
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"] and assistant["content"] is None
    assert (first["tool_call_id"], second["tool_call_id"]) == ("call_a", "call_b")
    assert first["content"].startswith("app.py (2 lines") and "return 'hi ' + name" in first["content"]
    assert second["content"].startswith("b.py (1 lines") and "B = 2" in second["content"]


async def test_an_edit_confirmed_is_applied_in_the_editor(lsp, api):
    edit = {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}
    api.add(tool_use("edit_file", edit, id="call_e1"), text("Changed the greeting."))
    client = await lsp.start(agent={"confirmTool": True})
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE, version=4)
    task = asyncio.ensure_future(chat(client, "say hello"))
    await until(waiting_for_confirmation(client))
    assert await confirm(client, "allow_once") == {"accepted": True}
    result = await task
    assert result["stopReason"] == "end_turn"
    assert client.docs[uri] == [5, SOURCE.replace("'hi '", "'hello '")]
    assert messages(api, 1)[-1] == {"role": "tool", "tool_call_id": "call_e1", "content":
                                    f"Edited app.py: replaced 1 occurrence.\n{DIFF}\nNo diagnostics after the edit."}


async def test_malformed_arguments_are_an_error_result_and_the_loop_goes_on(lsp, api):
    api.add({"content": [{"type": "tool_use", "id": "call_bad", "name": "read_file", "arguments": '{"path": "app.py"'},
                         {"type": "tool_use", "id": "call_unk", "name": "open_file", "input": {"path": "app.py"}},
                         {"type": "tool_use", "id": "call_typ", "name": "read_file", "input": {"path": 3}}]},
            {"content": [{"type": "tool_use", "id": "call_arr", "name": "read_file", "arguments": '["app.py"]'}]},
            tool_use("read_file", {"path": "app.py"}, id="call_ok"), text("Read it at last."))
    client = await lsp.start()
    result = await chat(client, "read app.py")
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Read it at last.")
    ends = [(u["toolCallId"], u["status"]) for u in updates_of(client)
            if u["kind"] == "tool_call_update" and u["status"] != "running"]
    assert ends == [("call_bad", "failed"), ("call_unk", "failed"), ("call_typ", "failed"), ("call_arr", "failed"),
                    ("call_ok", "completed")]
    sent = messages(api, 3)
    assert_every_call_answered(sent)
    bad_call, bad_result, unknown_result, type_result, array_call, array_result = sent[1:7]
    assert bad_call["tool_calls"][0]["function"] == {"name": "read_file", "arguments": "{}"}
    assert bad_result["content"] == (
        "Error: Invalid input for read_file: the arguments are not valid JSON (Expecting ',' delimiter, at "
        "character 17): '{\"path\": \"app.py\"'. Call the tool again with its arguments as one JSON object.")
    assert unknown_result["content"].startswith("Error: Unknown tool 'open_file'. Available tools: list_open_buffers,")
    assert type_result["content"].startswith("Error: Invalid input for read_file: path:")
    assert array_result["content"].startswith(
        "Error: Invalid input for read_file: the arguments are a JSON array, not an object: '[\"app.py\"]'.")
    assert sent[8]["content"].startswith("app.py (2 lines")


async def test_length_is_max_tokens_and_a_half_written_call_is_answered(lsp, api):
    api.add({"content": [{"type": "text", "text": "Writing"},
                         {"type": "tool_use", "id": "call_w", "name": "write_file", "arguments": '{"path": "a'}],
             "stop_reason": "max_tokens"}, text("Shorter."))
    client = await lsp.start()
    result = await chat(client)
    assert (result["stopReason"], result["finalMessage"]) == ("max_tokens", "Writing")
    assert "tool_call" not in [u["kind"] for u in updates_of(client)]
    await chat(client, "go on", sessionId=result["sessionId"])
    assert messages(api, 1)[2] == {"role": "tool", "tool_call_id": "call_w", "content": "Error: The reply was cut "
                                   "at max_tokens before this tool call was complete; it was not run."}


async def test_a_429_then_a_200_is_retried_by_the_sdk(lsp, api):
    api.add({"status": 429, "error": {"message": "slow down"}, "headers": {"retry-after-ms": "10"}}, text("Done."))
    client = await lsp.start()
    result = await chat(client)
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Done.")
    assert len(api.requests) == 2 and api.requests[0] == api.requests[1]


async def test_a_cut_stream_is_an_llm_error_and_the_session_stays_usable(lsp, api):
    api.add(dict(text("Partial answer that never ends"), cut_after=3), text("Fine now."))
    client = await lsp.start()
    result = await chat(client)
    assert result["stopReason"] == "error" and result["error"]["type"] == "llm_error"
    assert "no finish_reason" in result["error"]["message"]
    again = await chat(client, "retry", sessionId=result["sessionId"])
    assert again["finalMessage"] == "Fine now."
    assert messages(api, 1) == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Partial answer "},
                                {"role": "user", "content": "retry"}]


async def test_abort_mid_stream_closes_it_and_the_next_request_answers_every_call(lsp, api):
    api.add(tool_use("list_open_buffers", {}, id="call_l1"), dict(text("Working on it"), hang=True))
    client = await lsp.start()
    task = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: streamed(client) == "Working on it")
    session_id = client.updates[0]["sessionId"]
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await task
    assert (result["stopReason"], result["finalMessage"]) == ("aborted", "Working on it")
    await until(lambda: api.disconnects == [2])
    api.add(text("Back again."))
    assert (await chat(client, "continue", sessionId=session_id))["finalMessage"] == "Back again."
    sent = messages(api, 2)
    assert_every_call_answered(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent[3:] == [{"role": "assistant", "content": "Working on it"}, {"role": "user", "content": "continue"}]


async def test_a_model_without_tool_support_is_a_clear_llm_error(lsp, api):
    api.add({"status": 400, "error": {"message": "registry.ollama.ai/library/gemma:2b does not support tools"}})
    client = await lsp.start()
    result = await chat(client)
    assert result["stopReason"] == "error" and result["error"]["type"] == "llm_error"
    message = result["error"]["message"]
    assert message.startswith("The model `gpt-test` does not support tool calls (the server answered 400: "
                              "registry.ollama.ai/library/gemma:2b does not support tools).")
    assert "qwen2.5-coder" in message and "`model` setting" in message


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_wrong_base_url_says_what_was_reached_and_the_server_stays_up(lsp, api):
    api.add({"raw": "<!doctype html><html><body>Welcome to nginx!</body></html>", "content_type": "text/html"},
            text("Right place."))
    nothing = f"http://127.0.0.1:{free_port()}/v1"
    client = await lsp.start(env=openai_env(nothing))
    result = await chat(client)
    assert result["stopReason"] == "error" and result["error"]["type"] == "llm_error"
    assert result["error"]["message"].startswith(f"Could not reach the model API at {nothing}/chat/completions (")
    assert "Expected an OpenAI-compatible server there" in result["error"]["message"]
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"agentLsp": {"baseUrl": api.api_url}}))
    html = await chat(client)
    assert html["error"]["message"].startswith(f"{api.api_url}/chat/completions answered 200 with an HTML page "
                                               "(text/html), not an OpenAI-compatible API.")
    assert (await chat(client))["finalMessage"] == "Right place."


async def test_the_model_setting_is_required_and_a_missing_key_is_fine_with_a_base_url(lsp, api):
    api.add(text("No key needed."))
    client = await lsp.start(env=openai_env(api.api_url, model=None, key=False))
    result = await chat(client)
    assert result["stopReason"] == "error" and result["error"]["type"] == "initialization_failed"
    assert "needs the `model` setting" in result["error"]["message"]
    assert (await chat(client, model="qwen-test:7b"))["finalMessage"] == "No key needed."
    assert api.requests[0]["model"] == "qwen-test:7b" and api.authorizations == ["Bearer not-needed"]


async def test_agent_models_lists_the_servers_models(lsp, api):
    client = await lsp.start()
    assert await client.protocol.send_request_async("agent/models", {}) == {
        "models": [{"id": "gpt-test", "provider": "openai", "contextWindow": 32768},
                   {"id": "qwen-test:7b", "provider": "openai"}],
        "default": "gpt-test"}


async def test_agent_models_answers_the_configured_model_with_the_error_when_listing_fails(lsp, api):
    client = await lsp.start(env=openai_env(f"http://127.0.0.1:{free_port()}/v1"))
    answer = await client.protocol.send_request_async("agent/models", {})
    assert answer["models"] == [{"id": "gpt-test", "provider": "openai"}] and answer["default"] == "gpt-test"
    assert answer["error"].startswith("Could not reach the model API at http://127.0.0.1:")

