"""The sandbox through the real server: run_command and hooks under bubblewrap, without a question in default mode,
not offered in plan mode; the fallback (no bwrap on PATH) that warns once and asks; a workspace file that cannot
turn it off; over ACP, the client's terminal running the command in it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import acp
import pytest

from tests.e2e.acp_client import RecordingClient
from tests.e2e.conftest import (
    chat,
    confirm,
    sent,
    server_env,
    shape,
    text,
    tool_use,
    updates_of,
    waiting_for_confirmation,
)
from tests.waiting import until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap runs on Linux")
SANDBOXED = "sandboxed: only the workspace, a private /tmp and the `writable` paths are writable; no network"
ON = {"sandbox": {"enabled": True}}
PROBE = Path("/etc/agent-lsp-sandbox-e2e-probe")
RUN = tool_use("run_command", {"command": f"echo made > made.txt; touch {PROBE}"}, id="toolu_s1")
DENIED = f"touch: cannot touch '{PROBE}': Read-only file system"


def result_of(fake_api, request: int) -> dict:
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"][0]


async def test_a_sandboxed_command_runs_without_a_question_in_default_mode(lsp):
    lsp.fake_api.add(RUN, text("Made it."))
    client = await lsp.start(agent={"confirmTool": True}, init_options=ON)
    result = await chat(client, "make a file")
    assert result["stopReason"] == "end_turn"
    kinds = shape(updates_of(client))
    once = [k for i, k in enumerate(kinds) if not (i and k == kinds[i - 1] == "tool_call_update:running")]
    assert once == ["turn_start", "usage", "tool_call", "tool_call_update:running", "tool_call_update:completed",
                    "turn_start", "text_delta", "usage"]  # no question: running output previews count once
    assert result_of(lsp.fake_api, 1) == {"type": "tool_result", "tool_use_id": "toolu_s1",
                                          "content": f"Exit code 1 ({SANDBOXED})\n{DENIED}"}
    assert (lsp.workspace / "made.txt").read_text() == "made\n" and not PROBE.exists()
    assert client.messages == []


async def test_plan_mode_does_not_offer_commands_with_the_sandbox_on(lsp):
    lsp.fake_api.add(text("Here is the plan."))
    client = await lsp.start(init_options=ON)
    await chat(client, "plan it", permissionMode="plan")
    offered = [t["name"] for t in lsp.fake_api.requests[0]["tools"]]
    assert "run_command" not in offered and "read_file" in offered


async def test_without_bwrap_one_warning_and_every_command_asks(lsp, tmp_path):
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    client = await lsp.start(agent={"confirmTool": True}, init_options=ON,
                             env=server_env(lsp.fake_api.base_url, PATH=str(empty)))
    for n in (1, 2):
        lsp.fake_api.add(tool_use("run_command", {"command": f"echo {n} > ran{n}.txt"}, id=f"toolu_f{n}"),
                         text("Ran."))
        task = asyncio.ensure_future(chat(client, "run it"))
        await until(waiting_for_confirmation(client, n))  # autoAllow is on, yet it asks
        await confirm(client, "allow_once")
        assert (await task)["stopReason"] == "end_turn"
        assert result_of(lsp.fake_api, 2 * n - 1)["content"] == "Exit code 0 (not sandboxed: bwrap: not found on PATH)"
        assert (lsp.workspace / f"ran{n}.txt").read_text() == f"{n}\n"
    assert [(m.type, m.message) for m in client.messages] == [
        (2, "agent-lsp: the sandbox cannot start (bwrap: not found on PATH): commands run outside it, and each asks "
            "before it runs.")]  # 2 = Warning, once for both chats


async def test_a_hook_runs_in_the_sandbox(lsp):
    hooks = {"PreToolUse": [{"matcher": "run_command", "hooks": [
        {"type": "command", "command": f"touch {PROBE}; echo $? > hook-status; cat > hook-event.json"}]}]}
    lsp.fake_api.add(RUN, text("Made it."))
    client = await lsp.start(init_options={**ON, "hooks": hooks})
    await chat(client, "make a file")
    assert (lsp.workspace / "hook-status").read_text() == "1\n" and not PROBE.exists()
    assert json.loads((lsp.workspace / "hook-event.json").read_text())["toolName"] == "run_command"
    assert (lsp.workspace / "made.txt").exists()


async def test_a_workspace_file_cannot_turn_the_sandbox_off(lsp):
    (lsp.workspace / ".agent-lsp").mkdir()
    source = lsp.workspace / ".agent-lsp" / "settings.json"
    source.write_text(json.dumps({"sandbox": {"enabled": False, "network": True}}))
    lsp.fake_api.add(RUN, text("Made it."))
    client = await lsp.start(agent={"confirmTool": True}, init_options=ON)
    await chat(client, "make a file")
    assert result_of(lsp.fake_api, 1)["content"] == f"Exit code 1 ({SANDBOXED})\n{DENIED}"
    assert client.message_requests == []  # no trust question: the file may only tighten the sandbox
    assert [m.message for m in client.messages] == [
        f"agent-lsp: `sandbox.{key}` from {source} is ignored: a workspace's settings file may turn the sandbox on "
        "or tighten it, never turn it off or loosen it." for key in ("enabled", "network")]


async def test_over_acp_the_client_terminal_runs_the_command_in_the_sandbox(agents, fake_api, workspace, tmp_path):
    config = tmp_path / "config"
    (config / "agent-lsp").mkdir(parents=True)
    (config / "agent-lsp" / "settings.json").write_text(json.dumps(ON))
    client = RecordingClient()
    agent = await agents(client, terminal=True, env={"XDG_CONFIG_HOME": str(config)})
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    fake_api.add(RUN, text("Made it."))
    answer = await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("make a file")])
    assert answer.stop_reason == "end_turn" and client.permission_requests == []  # default mode, not asked
    (terminal,) = client.terminals.values()
    assert terminal["command"][0] == "/usr/bin/bwrap" and terminal["command"][-3:] == [
        "/bin/sh", "-c", f"echo made > made.txt; touch {PROBE}"]
    assert sent(fake_api, 1)[-1]["content"][0]["content"] == f"Exit code 1 ({SANDBOXED})\n{DENIED}"
    assert (workspace / "made.txt").read_text() == "made\n" and not PROBE.exists()
