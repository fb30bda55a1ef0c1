"""The workflow over ACP (PROTOCOL §9 "ACP"): plan updates, subagents' tool calls with `_meta.parentToolCallId`,
`available_commands_update` and `/name` prompts."""

from __future__ import annotations

import asyncio

import acp
import pytest

from tests.e2e.acp_client import RecordingClient
from tests.waiting import until
from tests.e2e.conftest import text, tool_use
from tests.e2e.test_workflow import PLAN, results, subagent_script


def prompt(agent, session_id: str, words: str):
    return agent.conn.prompt(session_id=session_id, prompt=[acp.text_block(words)])


def wire_updates(client: RecordingClient, kind: str) -> list[dict]:
    return [m["params"]["update"] for m in client.wire
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind]


ENTRIES = [{"content": e["content"], "status": e["status"], "priority": "medium"} for e in PLAN]


async def test_plan_updates_and_the_plan_replayed_on_load(agents, fake_api, workspace):
    fake_api.add(tool_use("todo_write", {"todos": PLAN}, id="toolu_p"), text("Planned."))
    client = RecordingClient()
    agent = await agents(client)
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    assert (await prompt(agent, session_id, "plan it")).stop_reason == "end_turn"
    assert wire_updates(client, "plan") == [{"sessionUpdate": "plan", "entries": ENTRIES}]
    call = next(u for u in wire_updates(client, "tool_call") if u["toolCallId"] == "toolu_p")
    assert (call["kind"], call["title"]) == ("other", "Update the plan")
    await agent.stop()

    again = RecordingClient()
    agent = await agents(again)
    await agent.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    assert wire_updates(again, "plan") == [{"sessionUpdate": "plan", "entries": ENTRIES}]


async def test_subagent_tool_calls_carry_the_parent_in_meta(agents, fake_api, workspace):
    fake_api.add({"content": [
        {"type": "tool_use", "id": "toolu_tA", "name": "task", "input": {"description": "Find greet",
                                                                       "prompt": "Where is greet defined?"}},
        {"type": "tool_use", "id": "toolu_tB", "name": "task", "input": {"description": "Find callers",
                                                                       "prompt": "Who calls it?"}}]})
    fake_api.default = subagent_script
    app = str(workspace / "app.py")
    client = RecordingClient({app: "def greet(name):\n    return 'hi ' + name\n"})
    agent = await agents(client)
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    assert (await prompt(agent, session_id, "look into greet")).stop_reason == "end_turn"
    starts = wire_updates(client, "tool_call")
    assert sorted((u["toolCallId"], (u.get("_meta") or {}).get("parentToolCallId")) for u in starts) == [
        ("toolu_read_A", "toolu_tA"), ("toolu_read_B", "toolu_tB"), ("toolu_tA", None), ("toolu_tB", None)]
    nested = [u for u in wire_updates(client, "tool_call_update") if u.get("_meta")]
    for which in "AB":
        assert [u["status"] for u in nested if u["toolCallId"] == f"toolu_read_{which}"] == ["in_progress",
                                                                                              "completed"]
        assert all(u["_meta"] == {"parentToolCallId": f"toolu_t{which}"} for u in nested
                   if u["toolCallId"] == f"toolu_read_{which}")
    done = {u["toolCallId"]: u for u in wire_updates(client, "tool_call_update") if u.get("status") == "completed"}
    assert done["toolu_tA"]["content"][0]["content"]["text"] == "Report A: greet returns 'hi ' + name."
    final = results(fake_api.requests[-1])
    assert final["toolu_tB"]["content"] == "Report B: greet returns 'hi ' + name."
    # a subagent's own text is not the session's message: only the parent's reply is
    chunks = "".join(u["content"]["text"] for u in wire_updates(client, "agent_message_chunk"))
    assert chunks == "Both reports are in."


async def test_available_commands_and_slash_prompts(agents, fake_api, workspace, tmp_path):
    config = tmp_path / "config"
    (config / "agent-lsp" / "commands").mkdir(parents=True)
    (config / "agent-lsp" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: <path>\n---\nReview $ARGUMENTS.\n")
    folder = workspace / ".agent-lsp" / "commands"
    folder.mkdir(parents=True)
    (folder / "fix.md").write_text("---\ndescription: Fix it\n---\nFix $ARGUMENTS now.\n")
    client = RecordingClient()
    agent = await agents(client, env={"XDG_CONFIG_HOME": str(config)})
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await until(lambda: wire_updates(client, "available_commands_update"))
    (announced,) = wire_updates(client, "available_commands_update")
    assert announced["availableCommands"] == [
        {"name": "compact", "description": "Compact the conversation now: earlier turns are summarised, the full "
                                           "transcript is kept", "input": {"hint": "[what the summary should keep]"}},
        {"name": "memory", "description": "Show the project memory (the facts every chat is told)"},
        {"name": "review", "description": "Review a file", "input": {"hint": "<path>"}}]

    client.answers = ["trust"]  # the first prompt asks about the project's command files, as about its settings
    fake_api.add(text("Reviewed."))
    assert (await prompt(agent, session_id, "/review app.py")).stop_reason == "end_turn"
    (question, _), = client.permission_requests
    assert "holds commands (/fix)" in question.content[0].content.text
    names = [[c["name"] for c in u["availableCommands"]] for u in wire_updates(client, "available_commands_update")]
    assert names == [["compact", "memory", "review"], ["compact", "memory", "fix", "review"]]
    assert fake_api.requests[-1]["messages"][0]["content"][-1]["text"] == "Review app.py."

    with pytest.raises(acp.RequestError) as refused:
        await prompt(agent, session_id, "/nosuch")
    assert refused.value.code == -32602 and "prompt: unknown command /nosuch" in str(refused.value)

    fake_api.add(text("Fixed."))
    assert (await prompt(agent, session_id, "/fix app.py")).stop_reason == "end_turn"
    assert fake_api.requests[-1]["messages"][-1]["content"][-1]["text"] == "Fix app.py now."
    assert len(client.permission_requests) == 1

    shown = asyncio.ensure_future(prompt(agent, session_id, "/memory"))
    assert (await shown).stop_reason == "end_turn"
    assert len(fake_api.requests) == 2
