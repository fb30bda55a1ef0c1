"""What the server writes to stderr (the editor's log): expected outcomes are one line, never a traceback; the
server ends promptly and quietly when the editor shuts it down, even with a chat running."""

from __future__ import annotations

import asyncio

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import CEILING, chat, server_process, stderr_read, text
from tests.waiting import until


async def shut_down(lsp, client) -> tuple[int, str]:
    """shutdown then exit, as an editor does; the exit code and everything the server wrote to stderr."""
    lsp.clients.remove(client)
    await asyncio.wait_for(client.shutdown_async(None), CEILING)
    code, stderr = await client.exit_and_read_stderr()
    await client.stop()
    return code, stderr


async def test_invalid_params_is_one_log_line_not_a_traceback(lsp):
    client = await lsp.start("--log-level", "INFO")
    with pytest.raises(JsonRpcInvalidParams):
        await chat(client, "   ")
    with pytest.raises(JsonRpcInvalidParams):
        await client.protocol.send_request_async("agent/abort", {"sessionId": 3})
    code, stderr = await shut_down(lsp, client)
    assert code == 0
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if "-32602" in line]
    assert len(lines) == 2 and "agent/chat" in lines[0] and "agent/abort" in lines[1], stderr


async def test_shutdown_with_a_chat_running_exits_quietly(lsp):
    lsp.fake_api.add(dict(text("Working on it"), hang=True))
    client = await lsp.start()
    running = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
    code, stderr = await shut_down(lsp, client)
    assert code == 0
    assert stderr == "", stderr
    running.cancel()
    restarted = await lsp.start()  # what the chat had done was saved as it was cancelled
    (session,) = (await restarted.protocol.send_request_async("agent/sessions", {}))["sessions"]
    history = await restarted.protocol.send_request_async("agent/history", {"sessionId": session["sessionId"]})
    assert [(m["role"], m["content"], m.get("stopReason")) for m in history["messages"]] == [
        ("user", "go", None), ("assistant", "Working on it", "aborted")]


async def test_a_client_that_goes_away_mid_chat_is_not_an_error(lsp):
    lsp.fake_api.add(dict(text("Working on it"), hang=True))
    client = await lsp.start()
    running = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
    lsp.clients.remove(client)
    server_process(client).stdin.close()  # the editor died: stdin ends without shutdown or exit
    code = await asyncio.wait_for(server_process(client).wait(), CEILING)
    await stderr_read(client)
    await client.stop()
    running.cancel()
    stderr = "".join(client.stderr)
    assert "Traceback" not in stderr, stderr
    assert code == 0
