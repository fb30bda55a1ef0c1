"""One chat whatever the front end: for one workspace and one set of settings (the user's settings file), the
tools offered, the system prompt, the hooks that run and the environment a command sees are the same over LSP and
over ACP — real server processes on each wire, the real anthropic SDK against the fake Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import acp
import pytest
from acp import schema

from tests.e2e.acp_client import RecordingClient, start_agent
from tests.e2e.conftest import chat, sent, server_env, text, tool_use
from tests.waiting import until

COMMAND = 'echo "secret=[$PARITY_SECRET] plain=[$PARITY_PLAIN]"'


def user_settings(config_home: Path, settings: object) -> dict[str, str]:
    """Write the user's settings file under `config_home`; the environment that makes a server read it."""
    (config_home / "agent-lsp").mkdir(parents=True, exist_ok=True)
    text_ = settings if isinstance(settings, str) else json.dumps(settings)
    (config_home / "agent-lsp" / "settings.json").write_text(text_)
    return {"XDG_CONFIG_HOME": str(config_home), "PARITY_SECRET": "s3cr3t", "PARITY_PLAIN": "visible"}


def settings_with_hooks(record: Path, block: bool = False) -> dict:
    hook = f"cat >> {record}; echo >> {record}" + ("; echo 'not here' >&2; exit 2" if block else "")
    return {"secretEnv": ["PARITY_SECRET"], "maxTurns": 5,
            "hooks": {"PreToolUse": [{"matcher": "run_command", "hooks": [{"type": "command", "command": hook}]}],
                      "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'from the prompt hook'"}]}]}}


def tool_result(fake_api, request: int) -> dict:
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"][0]


async def over_lsp(lsp, env: dict[str, str]) -> None:
    client = await lsp.start(env={**server_env(lsp.fake_api.base_url), **env})
    result = await chat(client, "run it", permissionMode="bypassPermissions")
    assert result["stopReason"] == "end_turn"


async def over_acp(fake_api, workspace: Path, env: dict[str, str]) -> None:
    agent = await start_agent(fake_api.base_url, workspace.parent / "state", RecordingClient(), env=env)
    try:
        session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await agent.conn.set_session_mode(session_id=session_id, mode_id="bypassPermissions")
        answer = await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("run it")])
        assert answer.stop_reason == "end_turn"
    finally:
        await agent.stop()


def hook_events(record: Path) -> list[dict]:
    events = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in e.items() if k != "sessionId"} for e in events]


async def test_the_same_settings_give_the_same_chat_over_lsp_and_acp(lsp, tmp_path):
    fake_api, workspace = lsp.fake_api, lsp.workspace
    (workspace / "AGENTS.md").write_text("Always answer in English.\n")
    runs = {}
    for name in ("lsp", "acp"):
        record = tmp_path / f"{name}-hooks.jsonl"
        env = user_settings(tmp_path / f"{name}-config", settings_with_hooks(record))
        first = len(fake_api.requests)
        fake_api.add(tool_use("run_command", {"command": COMMAND}, id=f"toolu_{name}"), text("Ran."))
        await (over_lsp(lsp, env) if name == "lsp" else over_acp(fake_api, workspace, env))
        request = fake_api.requests[first]
        runs[name] = {"system": request["system"], "tools": [t["name"] for t in request["tools"]],
                      "context": [b["text"] for b in request["messages"][0]["content"] if b["type"] == "text"],
                      "output": tool_result(fake_api, first + 1)["content"], "hooks": hook_events(record)}
    assert runs["lsp"] == runs["acp"]
    run = runs["lsp"]
    assert run["output"] == "Exit code 0\nsecret=[] plain=[visible]"  # secretEnv held back, the rest passed on
    assert run["hooks"] == [{"event": "PreToolUse", "cwd": str(workspace), "toolName": "run_command",
                             "toolInput": {"command": COMMAND}}]
    assert any("from the prompt hook" in part for part in run["context"])
    assert "Always answer in English." in json.dumps(run["system"])
    assert {"remember", "forget"} <= set(run["tools"])  # memory, over both


async def test_a_denying_hook_denies_over_both(lsp, tmp_path):
    fake_api, workspace = lsp.fake_api, lsp.workspace
    for name in ("lsp", "acp"):
        record = tmp_path / f"{name}-hooks.jsonl"
        env = user_settings(tmp_path / f"{name}-config", settings_with_hooks(record, block=True))
        first = len(fake_api.requests)
        fake_api.add(tool_use("run_command", {"command": f"touch {name}-ran.txt"}, id=f"toolu_{name}"), text("OK."))
        await (over_lsp(lsp, env) if name == "lsp" else over_acp(fake_api, workspace, env))
        assert tool_result(fake_api, first + 1) == {"type": "tool_result", "tool_use_id": f"toolu_{name}",
                                                     "is_error": True, "content": "A hook refused this call: not here"}
        assert not (workspace / f"{name}-ran.txt").exists()


async def test_a_bad_user_settings_file_is_a_warning_naming_it_and_the_rest_holds(lsp, tmp_path):
    fake_api, workspace = lsp.fake_api, lsp.workspace
    env = user_settings(tmp_path / "config", {"maxTurns": "many", "model": "claude-from-the-user-file",
                                               "mcpServers": {"x": {"headers": {"Authorization": "Bearer HIDDEN"}}}})
    path = tmp_path / "config" / "agent-lsp" / "settings.json"
    fake_api.add(text("Hello."))
    client = await lsp.start(env={**server_env(fake_api.base_url), **env})
    assert (await chat(client, "hi"))["stopReason"] == "end_turn"
    assert fake_api.requests[-1]["model"] == "claude-from-the-user-file"  # the good keys are in force
    warnings = [m.message for m in client.messages]
    assert any(str(path) in w and "`maxTurns`" in w for w in warnings)
    assert any(str(path) in w and "`mcpServers`" in w for w in warnings)
    assert "HIDDEN" not in json.dumps(warnings) + "".join(client.stderr)

    record = RecordingClient()
    agent = await start_agent(fake_api.base_url, workspace.parent / "state", record, env=env)
    try:
        session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        fake_api.add(text("Hello."))
        assert (await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("hi")])).stop_reason == "end_turn"
        shown = "".join(u.content.text for u in record.updates if isinstance(u, schema.AgentMessageChunk))
        assert str(path) in shown and "`maxTurns`" in shown and shown.endswith("Hello.")
        await until(lambda: any(str(path) in line for line in agent.stderr))
    finally:
        await agent.stop()
    assert "HIDDEN" not in "".join(agent.stderr)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
async def test_a_user_settings_file_that_is_not_an_object_is_a_warning_and_the_server_stays_up(lsp, tmp_path, content):
    env = user_settings(tmp_path / "config", content)
    lsp.fake_api.add(text("Hello."))
    client = await lsp.start(env={**server_env(lsp.fake_api.base_url), **env})
    assert (await chat(client, "hi"))["stopReason"] == "end_turn"
    (warning,) = [m.message for m in client.messages]
    assert str(tmp_path / "config" / "agent-lsp" / "settings.json") in warning and "ignored" in warning


async def test_the_user_settings_file_is_read_again_when_it_changes(lsp, tmp_path):
    env = user_settings(tmp_path / "config", {"model": "claude-first"})
    lsp.fake_api.add(text("One."), text("Two."))
    client = await lsp.start(env={**server_env(lsp.fake_api.base_url), **env})
    await chat(client, "one")
    user_settings(tmp_path / "config", {"model": "claude-second", "maxTurns": 0})
    assert (await chat(client, "two"))["stopReason"] == "disabled"
    user_settings(tmp_path / "config", {"model": "claude-second"})
    await chat(client, "three")
    assert [r["model"] for r in lsp.fake_api.requests] == ["claude-first", "claude-second"]


async def test_over_acp_the_workspace_settings_ask_for_trust_through_the_client_and_the_answer_is_kept(lsp, tmp_path):
    fake_api, workspace = lsp.fake_api, lsp.workspace
    (workspace / ".agent-lsp").mkdir()
    marker = tmp_path / "hooked.txt"
    (workspace / ".agent-lsp" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": f"echo hooked >> {marker}"}]}]}}))
    client = RecordingClient()
    client.answers = ["trust"]
    agent = await start_agent(fake_api.base_url, workspace.parent / "state", client)
    try:
        session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        fake_api.add(text("One."), text("Two."))
        for words in ("one", "two"):
            assert (await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block(words)])).stop_reason == "end_turn"
    finally:
        await agent.stop()
    (asked, kinds), = client.permission_requests  # asked once, remembered
    assert kinds == ["allow_always", "reject_always"]
    assert "hooks: `echo hooked" in asked.content[0].content.text and str(workspace) in asked.content[0].content.text
    assert marker.read_text() == "hooked\nhooked\n"
    # the same data dir over LSP: the answer holds, nothing asked
    fake_api.add(text("Three."))
    lsp_client = await lsp.start()
    await chat(lsp_client, "three")
    assert lsp_client.message_requests == [] and marker.read_text() == "hooked\nhooked\nhooked\n"


async def test_an_acp_resource_link_to_a_workspace_file_is_read_like_an_at_file_mention(lsp):
    fake_api, workspace = lsp.fake_api, lsp.workspace
    agent = await start_agent(fake_api.base_url, workspace.parent / "state", RecordingClient())
    try:
        session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        fake_api.add(text("Seen."))
        link = schema.ResourceContentBlock(type="resource_link", name="app.py", uri=(workspace / "app.py").as_uri())
        await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("explain"), link])
    finally:
        await agent.stop()
    parts = [b["text"] for b in fake_api.requests[-1]["messages"][0]["content"] if b["type"] == "text"]
    assert any("@file app.py:" in p and "return 'hi ' + name" in p for p in parts)
