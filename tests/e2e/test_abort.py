"""Stopping a chat that is streaming: agent/abort, $/cancelRequest and progress cancel all answer a result."""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types

from tests.e2e.conftest import chat, shape, text, until, updates_of

HANGING = dict(text("Working on it"), hang=True)


async def start_hanging_chat(lsp, client, **params):
    task = asyncio.ensure_future(chat(client, "go", **params))
    await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
    return task, client.updates[0]["sessionId"]


async def assert_session_usable(lsp, client, session_id):
    lsp.fake_api.add(text("Back again."))
    result = await chat(client, "continue", sessionId=session_id)
    assert result["finalMessage"] == "Back again."
    messages = lsp.fake_api.requests[-1]["messages"]
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Working on it"}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]


async def test_abort_during_the_model_stream(lsp):
    lsp.fake_api.add(HANGING)
    client = await lsp.start()
    task, session_id = await start_hanging_chat(lsp, client)
    started = time.monotonic()
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await task
    assert time.monotonic() - started < 1.0
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
