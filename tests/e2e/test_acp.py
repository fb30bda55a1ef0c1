"""`agent-lsp --acp` driven by the ACP SDK's own client side, the real anthropic SDK against the fake API."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import acp
import pytest
from acp import schema

from tests.e2e.acp_client import RecordingClient, start_agent, until, wire_shape
from tests.e2e.conftest import chat, sent, text, tool_use

MODES = ["default", "acceptEdits", "plan", "bypassPermissions"]


def prompt(agent, session_id: str, words: str):
    return asyncio.ensure_future(agent.conn.prompt(session_id=session_id, prompt=[acp.text_block(words)]))


async def round_trip(agent) -> None:
    """A request answered after everything the agent sent before it: nothing arrives after this but its answer."""
    await agent.conn.list_sessions()


@pytest.fixture
async def agents(fake_api, workspace):
    started = []

    async def start(client: RecordingClient, *args: str, **kw):
        agent = await start_agent(fake_api.base_url, workspace.parent / "state", client, *args, **kw)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        await agent.stop()


async def test_initialize_and_a_prompt_with_a_tool_call_reading_the_unsaved_buffer(agents, fake_api, workspace):
    app = str(workspace / "app.py")
    client = RecordingClient({app: "def greet(name):\n    return 'hello ' + name  # unsaved\n"})
    agent = await agents(client)
    init = agent.initialized
    assert init.protocol_version == 1
    assert (init.agent_info.name, init.agent_info.version) == ("agent-lsp-server", "0.2.0")
    caps = init.agent_capabilities
    assert caps.load_session and caps.prompt_capabilities.embedded_context
    assert caps.session_capabilities.list is not None
    new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert [m.id for m in new.modes.available_modes] == MODES and new.modes.current_mode_id == "default"

    fake_api.add(tool_use("read_file", {"path": "app.py"}, id="toolu_r", say="Let me look."), text("It says hello."))
    answer = await prompt(agent, new.session_id, "what does greet say?")
    assert answer.stop_reason == "end_turn"
    assert wire_shape(client.wire) == [
        "agent_message_chunk", "tool_call:pending", "tool_call_update:in_progress", "fs/read_text_file",
        "tool_call_update:completed", "agent_message_chunk", "answer:end_turn"]
    start = next(u for u in client.updates if isinstance(u, schema.ToolCallStart))
    assert (start.kind, start.title, start.locations[0].path, start.raw_input) == (
        "read", "Read app.py", app, {"path": "app.py"})
    result = sent(fake_api, 1)[-1]["content"][0]["content"]
    assert "return 'hello ' + name  # unsaved" in result and "unsaved changes" in result
