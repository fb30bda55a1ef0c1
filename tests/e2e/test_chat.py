"""agent/chat over real LSP: streaming, seq, tools seeing unsaved text, progress, retries, failures."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.capabilities import FEATURES
from agent_lsp.core.language_methods import LANGUAGE_METHODS
from tests.e2e.conftest import chat, open_doc, sent, server_env, shape, text, tool_use, updates_of


async def test_text_deltas_concatenate_to_final_message_and_seq_has_no_gaps(lsp):
    lsp.fake_api.add(text("Hello from the fake Messages API, streamed word by word."), text("Second answer."))
    client = await lsp.start()
    first = await chat(client, "hi")
    second = await chat(client, "again", sessionId=first["sessionId"])
    updates = updates_of(client)
    assert shape(updates) == ["turn_start", "text_delta", "usage", "turn_start", "text_delta", "usage"]
    second_turn = [i for i, u in enumerate(updates) if u["kind"] == "turn_start"][1]  # deltas coalesce by time
    deltas = [u["text"] for u in updates[:second_turn] if u["kind"] == "text_delta"]
    assert "".join(deltas) == first["finalMessage"] == "Hello from the fake Messages API, streamed word by word."
    assert [u["seq"] for u in client.updates] == list(range(1, len(client.updates) + 1))
    assert {u["sessionId"] for u in client.updates} == {first["sessionId"]}
    assert first["stopReason"] == second["stopReason"] == "end_turn"
    assert first["metadata"]["turnsCount"] == 1 and first["metadata"]["toolCallsCount"] == 0
    assert first["metadata"]["usage"] == {"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 0,
                                          "cacheCreationInputTokens": 0}
    # the second chat continued the session: the model saw the first exchange
    assert [m["role"] for m in sent(lsp.fake_api, 1)] == ["user", "assistant", "user"]


async def test_read_file_sends_the_unsaved_buffer_to_the_model(lsp):
    path = lsp.workspace / "app.py"
    lsp.fake_api.add(tool_use("read_file", {"path": "app.py"}, id="toolu_r1", say="Reading."), text("It greets."))
    client = await lsp.start()
    open_doc(client, path, "def greet(name):\n    return 'hello ' + name  # unsaved edit\n")
    result = await chat(client, "what does app.py do?", context={"activeUri": path.as_uri()})
    assert result["stopReason"] == "end_turn" and result["finalMessage"] == "It greets."
    tool_result = sent(lsp.fake_api, 1)[2]["content"][0]
    assert tool_result == {
        "type": "tool_result", "tool_use_id": "toolu_r1",
        "content": "app.py (2 lines, open in the editor with unsaved changes)\n"
                   "     1\tdef greet(name):\n     2\t    return 'hello ' + name  # unsaved edit"}
    assert shape(updates_of(client)) == ["turn_start", "text_delta", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:completed", "turn_start", "text_delta", "usage"]
    context, message = sent(lsp.fake_api, 0)[0]["content"]
    assert context == {"type": "text", "text": "<editor-context>\nOpen buffers: app.py (unsaved)\n"
                                               "Active file: app.py\n</editor-context>"}
    assert message == {"type": "text", "text": "what does app.py do?"}


async def test_progress_begin_report_end_with_a_server_token(lsp):
    lsp.fake_api.add(tool_use("list_open_buffers", {}), text("Nothing open."))
    client = await lsp.start(progress=True)
    await chat(client)
    (token, reports), = client.progress_reports.items()
    assert reports == [
        types.WorkDoneProgressBegin(title="Agent", cancellable=True),
        types.WorkDoneProgressReport(message="Thinking…"),
        types.WorkDoneProgressReport(message="Running list_open_buffers"),
        types.WorkDoneProgressReport(message="Thinking…"),
        types.WorkDoneProgressEnd(message="Done: 2 turns, 1 tool calls"),
    ]


async def test_progress_uses_the_client_token_and_is_not_created_without_the_capability(lsp):
    lsp.fake_api.add(text("One."), text("Two."))
    client = await lsp.start(progress=False)
    await chat(client)
    assert client.progress_reports == {}  # no window.workDoneProgress: no server-created token
    client.progress_reports["tok-1"] = []
    await chat(client, workDoneToken="tok-1")
    assert client.progress_reports["tok-1"] == [
        types.WorkDoneProgressBegin(title="Agent", cancellable=True),
        types.WorkDoneProgressReport(message="Thinking…"),
        types.WorkDoneProgressEnd(message="Done: 1 turns, 0 tool calls"),
    ]


async def test_a_500_then_a_200_is_retried_and_succeeds(lsp):
    lsp.fake_api.add({"status": 500, "error": {"type": "api_error", "message": "boom"},
                      "headers": {"retry-after-ms": "10"}}, text("Recovered."))
    client = await lsp.start()
    result = await chat(client)
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Recovered.")
    assert len(lsp.fake_api.requests) == 2


async def test_a_stream_cut_before_message_delta_is_an_llm_error_and_the_session_stays_usable(lsp):
    lsp.fake_api.add(dict(text("Partial answer that never ends"), cut_after=4), text("Fine now."))
    client = await lsp.start()
    result = await chat(client)
    assert result["stopReason"] == "error" and result["error"]["type"] == "llm_error"
    assert "stop reason" in result["error"]["message"]
    again = await chat(client, "retry", sessionId=result["sessionId"])
    assert again["finalMessage"] == "Fine now."
    assert [m["role"] for m in sent(lsp.fake_api, 1)] == ["user", "assistant", "user"]


async def test_an_error_status_is_an_llm_error_result_with_the_sdk_message(lsp):
    lsp.fake_api.add({"status": 400, "error": {"type": "invalid_request_error", "message": "bad tools"}})
    client = await lsp.start()
    result = await chat(client)
    assert result["stopReason"] == "error"
    assert result["error"] == {"type": "llm_error", "message": f"{lsp.fake_api.base_url}/v1/messages answered 400 "
                                                               "invalid_request_error: bad tools"}
    assert result["metadata"]["turnsCount"] == 1


@pytest.mark.parametrize("params, field", [
    ({}, "message"),
    ({"message": "   "}, "message"),
    ({"message": 42}, "message"),
    ({"message": "hi", "permissionMode": "yolo"}, "permissionMode"),
    ({"message": "hi", "maxTurns": "3"}, "maxTurns"),
    ({"message": "hi", "maxTurns": -2}, "maxTurns"),
    ({"message": "hi", "sessionId": "nope"}, "sessionId"),
    ({"message": "hi", "context": {"activeUri": 7}}, "context.activeUri"),
])
async def test_bad_chat_params_are_invalid_params_naming_the_field(lsp, params, field):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as error:
        await client.protocol.send_request_async("agent/chat", params)
    assert error.value.code == -32602
    assert f"{field}:" in error.value.message


@pytest.mark.parametrize("method, params, field", [
    ("agent/abort", {}, "sessionId"),
    ("agent/abort", {"sessionId": "missing"}, "sessionId"),
    ("agent/confirmTool", {"sessionId": "s", "toolCallId": "t", "decision": "maybe"}, "decision"),
    ("agent/history", {"sessionId": 3}, "sessionId"),
    ("agent/deleteSession", None, "sessionId"),
])
async def test_bad_params_of_other_methods(lsp, method, params, field):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as error:
        await client.protocol.send_request_async(method, params)
    assert f"{field}:" in error.value.message


async def test_no_key_is_initialization_failed_and_the_server_stays_up(lsp):
    client = await lsp.start(env=server_env(None, key=False))
    result = await chat(client)
    assert result["stopReason"] == "error" and result["error"]["type"] == "initialization_failed"
    assert "ANTHROPIC_API_KEY" in result["error"]["message"] and "--model demo" in result["error"]["message"]
    demo = await chat(client, "now with the demo", model="demo")
    assert demo["stopReason"] == "end_turn" and "demo model" in demo["finalMessage"]


async def test_capabilities_and_bad_settings(lsp):
    client = await lsp.start(init_options={"maxTurns": "lots", "permissionMode": "plan", "colour": "blue",
                                           "serverCommand": "agent-lsp", "serverArgs": [], "trace": {"server": "off"}})
    agent = client.initialize_result.capabilities.experimental["agent"]
    assert agent == {"protocolVersion": 1, "permissionModes": ["default", "acceptEdits", "plan", "bypassPermissions"],
                     "tools": ["list_open_buffers", "read_file", "list_files", "search", "get_diagnostics",
                               "edit_file", "write_file", "run_command", "todo_write", "task"],
                     "features": FEATURES, "languageMethods": list(LANGUAGE_METHODS)}
    sync = client.initialize_result.capabilities.text_document_sync
    assert (sync.open_close, sync.change) == (True, types.TextDocumentSyncKind.Incremental)
    await chat(client, maxTurns=0)  # a round trip: the warnings sent at `initialized` have arrived
    warnings = [m.message for m in client.messages]
    assert warnings == [
        "agent-lsp: setting `maxTurns` from initializationOptions must be an integer from -1 to 100; "
        "using the default instead.",
        "agent-lsp: unknown setting `colour` from initializationOptions is ignored.",
    ]


async def test_max_turns_zero_disables_the_chat(lsp):
    client = await lsp.start()
    result = await chat(client, maxTurns=0)
    assert (result["stopReason"], result["finalMessage"], result["metadata"]["turnsCount"]) == ("disabled", "", 0)
    assert lsp.fake_api.requests == [] and client.updates == []


async def test_thinking_streams_and_goes_back_unchanged_with_its_signature(lsp):
    thinking = {"type": "thinking", "thinking": "The user wants the buffers.", "signature": "EqQBsig=="}
    lsp.fake_api.add({"content": [thinking, {"type": "tool_use", "id": "toolu_t1", "name": "list_open_buffers",
                                             "input": {}}]}, text("None open."))
    client = await lsp.start(init_options={"thinking": {"budgetTokens": 2048}, "maxTokens": 4096})
    await chat(client)
    assert lsp.fake_api.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert lsp.fake_api.requests[0]["max_tokens"] == 4096
    assert shape(updates_of(client))[:3] == ["turn_start", "thinking_delta", "usage"]
    assert updates_of(client)[1] == {"kind": "thinking_delta", "text": "The user wants the buffers."}
    assert sent(lsp.fake_api, 1)[1] == {"role": "assistant", "content": [
        thinking, {"type": "tool_use", "id": "toolu_t1", "name": "list_open_buffers", "input": {}}]}


async def test_max_tokens_answers_a_half_written_tool_call_as_an_error(lsp):
    cut = {"content": [{"type": "text", "text": "Writing"}, {"type": "tool_use", "id": "toolu_m1",
                                                             "name": "write_file", "input": {}}],
           "stop_reason": "max_tokens"}
    lsp.fake_api.add(cut, text("Shorter now."))
    client = await lsp.start()
    result = await chat(client)
    assert (result["stopReason"], result["finalMessage"]) == ("max_tokens", "Writing")
    assert "tool_call" not in [u["kind"] for u in updates_of(client)]
    await chat(client, "go on", sessionId=result["sessionId"])
    assert sent(lsp.fake_api, 1)[2]["content"][0] == {
        "type": "tool_result", "tool_use_id": "toolu_m1", "is_error": True,
        "content": "The reply was cut at max_tokens before this tool call was complete; it was not run."}


async def test_workspace_configuration_beats_initialization_options_and_chat_params_beat_both(lsp):
    lsp.fake_api.add(text("a"), text("b"))
    client = await lsp.start(init_options={"permissionMode": "bypassPermissions"})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"agentLsp": {"permissionMode": "plan", "maxTurns": 1, "serverCommand": "/opt/agent-lsp",
                               "serverArgs": ["--log-level", "INFO"], "trace": {"server": "verbose"}}}))
    await chat(client)
    assert client.messages == []  # the client's own keys (how to start the server, tracing) are not warned about
    assert "edit_file" not in [t["name"] for t in lsp.fake_api.requests[0]["tools"]]
    assert updates_of(client)[0] == {"kind": "turn_start", "turn": 1, "maxTurns": 1}
    await chat(client, permissionMode="default")
    assert "edit_file" in [t["name"] for t in lsp.fake_api.requests[1]["tools"]]
