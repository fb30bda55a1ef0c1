"""web_fetch and image prompt blocks over ACP: `agent-lsp --acp` through the ACP SDK's client side, the real anthropic
SDK against the fake API, a real web server on 127.0.0.1."""

from __future__ import annotations

import base64
import json

import acp
import pytest
from acp import RequestError, schema

from tests.e2e.acp_client import RecordingClient, wire_shape
from tests.e2e.conftest import sent, text, tool_use
from tests.fakes.web_server import WebServer

PNG64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(48))).decode()
GIF64 = base64.b64encode(b"GIF89a" + bytes(24)).decode()


@pytest.fixture
def web():
    server = WebServer()
    yield server
    server.close()


@pytest.fixture
def allow_private(tmp_path) -> dict[str, str]:
    """A user settings file letting web_fetch reach 127.0.0.1."""
    config = tmp_path / "config"
    (config / "agent-lsp").mkdir(parents=True)
    (config / "agent-lsp" / "settings.json").write_text(json.dumps({"webFetch": {"allowPrivate": True}}))
    return {"XDG_CONFIG_HOME": str(config)}


async def test_image_prompt_blocks_reach_the_model(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    assert agent.initialized.agent_capabilities.prompt_capabilities.image is True
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    fake_api.add(text("A screenshot."))
    answer = await agent.conn.prompt(session_id=session_id, prompt=[
        acp.text_block("what is this?"), acp.image_block(PNG64, "image/png")])
    assert answer.stop_reason == "end_turn"
    (user,) = sent(fake_api, 0)
    images = [b for b in user["content"] if b["type"] == "image"]
    assert images == [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}}]
    assert user["content"][-1] == {"type": "text", "text": "what is this?"}


async def test_an_image_only_prompt_reaches_the_model_as_an_image_block(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    fake_api.add(text("A screenshot."))
    answer = await agent.conn.prompt(session_id=session_id, prompt=[acp.image_block(PNG64, "image/png")])
    assert answer.stop_reason == "end_turn"
    (user,) = sent(fake_api, 0)
    assert user["content"] == [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                            "data": PNG64}}]


async def test_a_prompt_with_neither_words_nor_image_is_invalid_params_naming_prompt(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    for prompt in ([acp.text_block(" ")], []):
        with pytest.raises(RequestError) as error:
            await agent.conn.prompt(session_id=session_id, prompt=prompt)
        assert error.value.code == -32602 and "prompt" in str(error.value)
    assert fake_api.requests == []


async def test_session_load_replays_a_user_message_with_its_image_blocks(agents, fake_api, workspace):
    first = await agents(RecordingClient())
    session_id = (await first.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    fake_api.add(text("A screenshot."), text("Just a picture."))
    await first.conn.prompt(session_id=session_id, prompt=[
        acp.text_block("what is this?"), acp.image_block(PNG64, "image/png"), acp.image_block(GIF64, "image/gif")])
    await first.conn.prompt(session_id=session_id, prompt=[acp.image_block(PNG64, "image/png")])
    client = RecordingClient()
    again = await agents(client)  # a new process on the same data dir
    await again.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    replayed = [u for u in client.updates if not isinstance(u, schema.AvailableCommandsUpdate)]
    assert [(u.session_update, u.content.model_dump(exclude_none=True)) for u in replayed] == [
        ("user_message_chunk", {"type": "text", "text": "what is this?"}),
        ("user_message_chunk", {"type": "image", "mime_type": "image/png", "data": PNG64}),
        ("user_message_chunk", {"type": "image", "mime_type": "image/gif", "data": GIF64}),
        ("agent_message_chunk", {"type": "text", "text": "A screenshot."}),
        ("user_message_chunk", {"type": "image", "mime_type": "image/png", "data": PNG64}),
        ("agent_message_chunk", {"type": "text", "text": "Just a picture."}),
    ]
    assert all(isinstance(u.content, schema.ImageContentBlock) for u in replayed if u.content.type == "image")


async def test_a_bad_image_block_is_invalid_params_naming_it(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    with pytest.raises(RequestError) as error:
        await agent.conn.prompt(session_id=session_id, prompt=[
            acp.text_block("look"), acp.image_block(PNG64, "image/bmp")])
    assert error.value.code == -32602 and "prompt.1" in str(error.value.data or error.value)
    assert fake_api.requests == []


async def test_web_fetch_asks_with_the_url_and_kind_fetch(agents, fake_api, workspace, web, allow_private):
    client = RecordingClient()
    client.answers = ["allow_once"]
    agent = await agents(client, env=allow_private)
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    url = web.url("/page.html")
    fake_api.add(tool_use("web_fetch", {"url": url}, id="toolu_f"), text("Read it."))
    answer = await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("read the page")])
    assert answer.stop_reason == "end_turn"
    assert wire_shape(client.wire) == [
        "usage_update", "tool_call:pending", "tool_call_update:pending", "session/request_permission",
        "tool_call_update:in_progress", "tool_call_update:completed", "agent_message_chunk", "usage_update",
        "answer:end_turn"]
    start = next(u for u in client.updates if isinstance(u, schema.ToolCallStart))
    assert (start.kind, start.title, start.raw_input) == ("fetch", f"Fetch {url}", {"url": url})
    (asked, _), = client.permission_requests
    assert asked.kind == "fetch" and url in asked.content[0].content.text
    result = sent(fake_api, 1)[-1]["content"][0]
    assert result["content"].startswith("# Fetch me\n\n# Widgets") and "is_error" not in result


async def test_web_fetch_is_not_offered_in_plan_mode(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await agent.conn.set_session_mode(session_id=session_id, mode_id="plan")
    fake_api.add(text("Planned."))
    await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("plan")])
    assert "web_fetch" not in [t["name"] for t in fake_api.requests[0]["tools"]]
