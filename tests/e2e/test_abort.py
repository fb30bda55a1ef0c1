"""Stopping a chat that is streaming: agent/abort, $/cancelRequest and progress cancel all answer a result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.conftest import chat, sent, shape, streamed, text, updates_of
from tests.waiting import until

HANGING = dict(text("Working on it"), hang=True)


async def start_hanging_chat(lsp, client, **params):
    task = asyncio.ensure_future(chat(client, "go", **params))
    await until(lambda: streamed(client) == "Working on it")
    return task, client.updates[0]["sessionId"]


async def assert_session_usable(lsp, client, session_id):
    lsp.fake_api.add(text("Back again."))
    result = await chat(client, "continue", sessionId=session_id)
    assert result["finalMessage"] == "Back again."
    messages = sent(lsp.fake_api, -1)
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Working on it"}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]


async def test_abort_during_the_model_stream(lsp):
    lsp.fake_api.add(HANGING)
    client = await lsp.start()
    task, session_id = await start_hanging_chat(lsp, client)
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await task
    assert result["stopReason"] == "aborted" and result["finalMessage"] == "Working on it"
    assert result["metadata"]["turnsCount"] == 1
    assert shape(updates_of(client)) == ["turn_start", "text_delta"]
    await until(lambda: lsp.fake_api.disconnects == [1])
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": False}
    await assert_session_usable(lsp, client, session_id)


async def test_cancel_request_answers_a_result_not_an_error(lsp):
    lsp.fake_api.add(HANGING)
    client = await lsp.start()
    task = asyncio.ensure_future(client.protocol.send_request_async("agent/chat", {"message": "go"}, msg_id=4242))
    await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
    client.cancel_request(types.CancelParams(id=4242))
    result = await task
    assert result["stopReason"] == "aborted"
    await until(lambda: lsp.fake_api.disconnects == [1])
    await assert_session_usable(lsp, client, result["sessionId"])


async def test_progress_cancel_aborts_the_chat(lsp):
    lsp.fake_api.add(HANGING)
    client = await lsp.start(progress=True)
    task, session_id = await start_hanging_chat(lsp, client)
    (token,) = client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await task
    assert result["stopReason"] == "aborted"
    assert client.progress_reports[token][-1] == types.WorkDoneProgressEnd(message="Stopped: 1 turns, 0 tool calls")


async def test_a_second_chat_on_a_busy_session_is_session_busy(lsp):
    lsp.fake_api.add(HANGING)
    client = await lsp.start()
    task, session_id = await start_hanging_chat(lsp, client)
    from pygls.exceptions import JsonRpcServerError

    try:
        await chat(client, "me too", sessionId=session_id)
    except JsonRpcServerError as error:
        assert error.code == -32001 and session_id in error.message
    else:
        raise AssertionError("a chat on a busy session must fail with -32001")
    await client.protocol.send_request_async("agent/abort", {"sessionId": session_id})
    assert (await task)["stopReason"] == "aborted"


# ---- the cancellation contract in every state (PROTOCOL §2 agent/abort) ----------------------------------

from pygls.exceptions import JsonRpcInvalidParams  # noqa: E402

from tests.e2e.conftest import confirm, open_doc, tool_use, waiting_for_confirmation  # noqa: E402

SOURCE = "def greet(name):\n    return 'hi ' + name\n"
EDIT = tool_use("edit_file", {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}, id="toolu_e1")
CANCELLED = {"type": "tool_result", "tool_use_id": "toolu_e1", "is_error": True,
             "content": "Cancelled by the user before this tool call finished."}


async def abort(client, session_id):
    """agent/abort's answer (how fast an abort lands is measured by bench/abort.py, not here)."""
    return await client.protocol.send_request_async("agent/abort", {"sessionId": session_id})


async def next_chat_sees(lsp, client, session_id, expected_tail):
    """The next chat works, and the history it sends ends with `expected_tail` then the new message."""
    lsp.fake_api.add(text("Continuing."))
    result = await chat(client, "continue", sessionId=session_id)
    assert result["stopReason"] == "end_turn"
    last = sent(lsp.fake_api, -1)[-1]
    content = [b for b in last["content"] if not b.get("text", "").startswith("<editor-context>")]
    assert last["role"] == "user" and content == [*expected_tail, {"type": "text", "text": "continue"}]


async def test_abort_while_a_confirmation_is_pending(lsp):
    lsp.fake_api.add(EDIT)
    client = await lsp.start(agent={"confirmTool": True})
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    task = asyncio.ensure_future(chat(client, "go"))
    await until(waiting_for_confirmation(client))
    session_id = client.updates[0]["sessionId"]
    answer = await abort(client, session_id)
    result = await task
    assert answer == {"aborted": True}
    assert result["stopReason"] == "aborted"
    updates = updates_of(client)
    assert shape(updates) == ["turn_start", "usage", "tool_call", "tool_call_update:awaiting_confirmation",
                              "confirmation_request", "tool_call_update:cancelled"]
    assert updates[-1] == {"kind": "tool_call_update", "toolCallId": "toolu_e1", "status": "cancelled",
                           "error": "Cancelled by the user."}
    with pytest.raises(JsonRpcInvalidParams):
        await confirm(client, "allow_once")
    assert client.applied == []
    await next_chat_sees(lsp, client, session_id, [CANCELLED])


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


async def test_abort_while_a_command_runs_kills_its_process_group(lsp):
    command = "echo $$ > shell.pid; echo started; sleep 30; echo never"
    lsp.fake_api.add(tool_use("run_command", {"command": command}, id="toolu_c1"))
    client = await lsp.start()
    task = asyncio.ensure_future(chat(client, "go", permissionMode="bypassPermissions"))
    await until(lambda: any(u["update"].get("output") == "started\n" for u in client.updates))
    pgid = int((lsp.workspace / "shell.pid").read_text())
    assert group_alive(pgid)
    answer = await abort(client, client.updates[0]["sessionId"])
    result = await task
    assert answer == {"aborted": True} and result["stopReason"] == "aborted"
    assert not group_alive(pgid)
    assert shape(updates_of(client)) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:running", "tool_call_update:cancelled"]
    await next_chat_sees(lsp, client, result["sessionId"], [dict(CANCELLED, tool_use_id="toolu_c1")])


async def test_abort_while_an_edit_awaits_the_clients_answer(lsp):
    lsp.fake_api.add(EDIT)
    client = await lsp.start()
    client.apply_gate = asyncio.Event()  # the editor answers only after the abort
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    task = asyncio.ensure_future(chat(client, "go", permissionMode="acceptEdits"))
    await until(lambda: len(client.applied) == 1)
    answer = await abort(client, client.updates[0]["sessionId"])
    result = await task
    assert answer == {"aborted": True} and result["stopReason"] == "aborted"
    assert shape(updates_of(client)) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:cancelled"]
    # The editor's late answer (here: to the server's $/cancelRequest) goes out before the next chat; it is
    # ignored quietly.
    client.apply_gate.set()
    await until(lambda: client.apply_answers == 1)
    await next_chat_sees(lsp, client, result["sessionId"], [CANCELLED])
    assert client.messages == []


async def test_abort_between_turns(lsp):
    lsp.fake_api.add(tool_use("list_open_buffers", {}, id="toolu_l1"), dict(text("late"), hold=True))
    client = await lsp.start()
    task = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: [u["update"]["kind"] for u in client.updates][-1:] == ["turn_start"]
                and len(client.updates) > 1)
    answer = await abort(client, client.updates[0]["sessionId"])
    result = await task
    assert answer == {"aborted": True} and result["stopReason"] == "aborted"
    assert result["metadata"]["turnsCount"] == 2 and result["metadata"]["toolCallsCount"] == 1
    assert shape(updates_of(client)) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:completed", "turn_start"]
    lsp.fake_api.script.clear()
    await next_chat_sees(lsp, client, result["sessionId"], [
        {"type": "tool_result", "tool_use_id": "toolu_l1", "content": "No documents are open in the editor."}])
