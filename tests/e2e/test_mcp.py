"""MCP servers as tools: a real MCP server (tests/fakes/mcp_server.py, the `mcp` SDK) over stdio and streamable
HTTP, listed by agent/tools, called, confirmed, hidden in plan mode, cancelled by abort, and stopped with us."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import (CEILING, chat, confirm, sent, server_process, text, tool_use, updates_of,
                                 waiting_for_confirmation)
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]


def stdio_server(out: Path) -> dict:
    return {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server", str(out)], "env": {"PYTHONPATH": str(ROOT)}}


def gone(pid: int) -> bool:
    """The process has ended (a zombie waiting to be reaped has ended too)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def tool_results(fake_api, request: int) -> list[dict]:
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"]


def offered(fake_api, request: int) -> list[str]:
    return [t["name"] for t in fake_api.requests[request]["tools"]]


async def list_tools(client) -> list[dict]:
    return (await client.protocol.send_request_async("agent/tools", {}))["tools"]


async def test_stdio_tools_are_listed_called_confirmed_hidden_in_plan_mode_and_stopped_on_shutdown(lsp, tmp_path):
    out = tmp_path / "mcp"
    client = await lsp.start(agent={"confirmTool": True}, init_options={"mcpServers": {"fake": stdio_server(out)}})
    listed = await list_tools(client)
    mcp = [t for t in listed if t["origin"] != "builtin"]
    assert [(t["name"], t["kind"], t["origin"], t["readOnly"], t["description"]) for t in mcp] == [
        ("mcp__fake__lookup", "read", "mcp:fake", True, "Look a word up."),
        ("mcp__fake__shout", "execute", "mcp:fake", False, "Shout a text (writes a file)."),
        ("mcp__fake__wait", "execute", "mcp:fake", False, "Wait until cancelled.")]
    assert {t["name"] for t in listed if t["origin"] == "builtin"} >= {"read_file", "run_command"}
    assert "features" in client.initialize_result.capabilities.experimental["agent"]
    assert {"mcp", "tools"} <= set(client.initialize_result.capabilities.experimental["agent"]["features"])

    lsp.fake_api.add(tool_use("mcp__fake__lookup", {"word": "cat"}, id="toolu_l"),
                     tool_use("mcp__fake__shout", {"text": "hey"}, id="toolu_s"), text("Done."))
    pending = asyncio.ensure_future(chat(client, "look and shout"))
    await until(waiting_for_confirmation(client))
    (request,) = [u for u in updates_of(client) if u["kind"] == "confirmation_request"]
    assert request["name"] == "mcp__fake__shout"  # the read-only lookup was not asked
    await confirm(client, "allow_once")
    assert (await pending)["finalMessage"] == "Done."
    schema = next(t for t in lsp.fake_api.requests[0]["tools"] if t["name"] == "mcp__fake__lookup")["input_schema"]
    assert schema["properties"]["word"]["type"] == "string" and schema["required"] == ["word"]
    assert tool_results(lsp.fake_api, 1) == [{"type": "tool_result", "tool_use_id": "toolu_l", "content": "cat: a word"}]
    assert tool_results(lsp.fake_api, 2) == [{"type": "tool_result", "tool_use_id": "toolu_s", "content": "HEY"}]
    assert (out / "shouted").read_text() == "HEY"

    lsp.fake_api.add(text("A plan."))
    await chat(client, "plan it", permissionMode="plan")
    mcp_offered = [name for name in offered(lsp.fake_api, 3) if name.startswith("mcp__")]
    assert mcp_offered == ["mcp__fake__lookup"]

    pid = int((out / "pid").read_text())
    assert not gone(pid)  # started once: the three chats and the listing shared it
    await lsp.stop_client(client)
    await until(lambda: gone(pid))


async def test_abort_cancels_a_running_mcp_call_and_the_server_sees_it(lsp, tmp_path):
    out = tmp_path / "mcp"
    lsp.fake_api.add(tool_use("mcp__fake__wait", {}, id="toolu_w"))
    client = await lsp.start(init_options={"mcpServers": {"fake": stdio_server(out)}})
    pending = asyncio.ensure_future(chat(client, "wait", permissionMode="bypassPermissions"))
    await until(lambda: (out / "started").exists())
    session_id = client.updates[0]["sessionId"]
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    assert (await pending)["stopReason"] == "aborted"
    await until(lambda: (out / "cancelled").exists())
    statuses = [u["status"] for u in updates_of(client) if u["kind"] == "tool_call_update"]
    assert statuses[-1] == "cancelled"

    # the server dies: a call to its tool is an error result naming it, a warning says so, the chat goes on
    pid = int((out / "pid").read_text())
    os.kill(pid, signal.SIGKILL)
    await until(lambda: gone(pid))
    lsp.fake_api.add(tool_use("mcp__fake__lookup", {"word": "cat"}, id="toolu_d"), text("It is gone."))
    assert (await chat(client, "look", permissionMode="bypassPermissions"))["finalMessage"] == "It is gone."
    (result,) = tool_results(lsp.fake_api, 2)
    assert result["is_error"] and result["content"].startswith("The MCP server `fake` failed: ")
    (warning,) = [m.message for m in client.messages]
    assert warning.startswith("agent-lsp: the MCP server `fake` stopped (")
    lsp.fake_api.add(text("Without it."))
    await chat(client, "again", permissionMode="bypassPermissions")
    assert not [name for name in offered(lsp.fake_api, 3) if name.startswith("mcp__")]


async def test_no_mcp_server_outlives_a_sigkilled_agent_lsp(lsp, tmp_path):
    out = tmp_path / "mcp"
    client = await lsp.start(init_options={"mcpServers": {"fake": stdio_server(out)}})
    assert any(t["origin"] == "mcp:fake" for t in await list_tools(client))
    pid = int((out / "pid").read_text())
    os.kill(server_process(client).pid, signal.SIGKILL)
    await server_process(client).wait()
    lsp.clients.remove(client)
    await until(lambda: gone(pid))


async def test_a_trusted_mcp_json_http_server_and_a_bad_entry_beside_it(lsp, tmp_path):
    out = tmp_path / "web"
    web = subprocess.Popen([sys.executable, "-m", "tests.fakes.mcp_server", str(out), "--http"], cwd=ROOT)
    try:
        await until(lambda: (out / "port").exists())
        url = f"http://127.0.0.1:{(out / 'port').read_text()}/mcp"
        (lsp.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {
            "web": {"type": "http", "url": url}, "old": {"type": "sse", "url": url}}}))
        lsp.fake_api.add(tool_use("mcp__web__lookup", {"word": "dog"}, id="toolu_h"), text("Found."))
        client = await lsp.start()
        client.message_answer = "Trust"
        assert (await chat(client, "look it up"))["finalMessage"] == "Found."
        (question,) = client.message_requests
        assert question.message.startswith(f"agent-lsp: {lsp.workspace}/.mcp.json asks to start MCP servers: "
                                           f"`{url}`.")
        assert tool_results(lsp.fake_api, 1) == [{"type": "tool_result", "tool_use_id": "toolu_h",
                                                  "content": "dog: a word"}]
        warnings = [m.message for m in client.messages]
        assert warnings == [f"agent-lsp: setting `mcpServers` from {lsp.workspace}/.mcp.json server `old`: unknown "
                            "type 'sse' (stdio or http) (that server is not started)."]
        assert [t["origin"] for t in await list_tools(client) if t["origin"] != "builtin"] == ["mcp:web"] * 3
    finally:
        web.terminate()
        web.wait(CEILING)


async def test_an_untrusted_workspaces_mcp_server_is_not_started(lsp, tmp_path):
    out = tmp_path / "mcp"
    (lsp.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"fake": stdio_server(out)}}))
    client = await lsp.start()
    client.message_answer = "Don't trust"
    assert all(t["origin"] == "builtin" for t in await list_tools(client))
    (question,) = client.message_requests
    assert "start MCP servers: `" in question.message and "tests.fakes.mcp_server" in question.message
    assert not out.exists()


async def test_a_mcp_json_that_is_not_json_is_a_warning_and_the_chat_goes_on(lsp):
    (lsp.workspace / ".mcp.json").write_text("{not json")
    lsp.fake_api.add(text("Fine."))
    client = await lsp.start()
    assert (await chat(client, "hi"))["finalMessage"] == "Fine."
    (warning,) = [m.message for m in client.messages]
    assert warning.startswith(f"agent-lsp: {lsp.workspace}/.mcp.json cannot be read as JSON (")
    assert warning.endswith("its field `mcpServers` is ignored.")
