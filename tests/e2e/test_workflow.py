"""The workflow tools over LSP (PROTOCOL §9 "Workflow"): todo_write's plan, task's subagents."""

from __future__ import annotations

import asyncio
import json

from tests.e2e.conftest import chat, shape, text, tool_use, updates_of
from tests.waiting import until

PLAN = [{"content": "Read app.py", "status": "completed"},
        {"content": "Fix greet", "status": "in_progress", "activeForm": "Fixing greet"},
        {"content": "Run the tests", "status": "pending"}]


def results(request: dict) -> dict[str, dict]:
    """The tool results of a request's last message, by tool_use_id."""
    return {b["tool_use_id"]: b for b in request["messages"][-1]["content"] if b["type"] == "tool_result"}


async def test_todo_write_sends_the_plan_keeps_it_with_the_session_and_refuses_a_malformed_list(lsp):
    lsp.fake_api.add(tool_use("todo_write", {"todos": PLAN}, id="toolu_p1"),
                     tool_use("todo_write", {"todos": [{"content": "Fix greet", "status": "done"}]}, id="toolu_p2"),
                     tool_use("todo_write", {"todos": "read, fix"}, id="toolu_p3"),
                     text("Planned."))
    client = await lsp.start()
    result = await chat(client, "fix greet")
    assert result["stopReason"] == "end_turn" and result["finalMessage"] == "Planned."
    updates = updates_of(client)
    assert shape(updates) == [
        "turn_start", "usage", "tool_call", "tool_call_update:running", "plan", "tool_call_update:completed",
        "turn_start", "usage", "tool_call", "tool_call_update:failed",
        "turn_start", "usage", "tool_call", "tool_call_update:failed",
        "turn_start", "text_delta", "usage"]
    entries = [{"content": e["content"], "status": e["status"]} for e in PLAN]
    assert [u for u in updates if u["kind"] == "plan"] == [{"kind": "plan", "entries": entries}]
    call = next(u for u in updates if u["kind"] == "tool_call")
    assert (call["name"], call["toolKind"], call["title"]) == ("todo_write", "other", "Update the plan")
    assert results(lsp.fake_api.requests[1])["toolu_p1"]["content"] == (
        "Plan updated: 3 steps (1 completed, 1 in progress, 1 pending).")
    for request, call_id in ((lsp.fake_api.requests[2], "toolu_p2"), (lsp.fake_api.requests[3], "toolu_p3")):
        refused = results(request)[call_id]
        assert refused["is_error"] and refused["content"].startswith("Invalid input for todo_write: todos")

    session_id = result["sessionId"]
    history = await client.protocol.send_request_async("agent/history", {"sessionId": session_id})
    assert history["plan"] == entries
    await lsp.stop_client(client)
    restarted = await lsp.start()  # the plan is in the store
    history = await restarted.protocol.send_request_async("agent/history", {"sessionId": session_id})
    assert history["plan"] == entries
    other = await restarted.protocol.send_request_async("agent/newSession", {})
    assert (await restarted.protocol.send_request_async("agent/history", other))["plan"] == []


def subagent_script(body: dict) -> dict:
    """The subagents' replies, by their prompt: read a file, then report (concurrent requests, any order)."""
    system = json.dumps(body.get("system"))
    messages = body["messages"]
    if "You are a subagent" not in system:
        return text("Both reports are in.")
    prompt = messages[0]["content"][-1]["text"] if isinstance(messages[0]["content"], list) else messages[0]["content"]
    which = "A" if "greet" in prompt else "B"
    if len(messages) == 1:
        return tool_use("read_file", {"path": "app.py"}, id=f"toolu_read_{which}")
    return text(f"Report {which}: greet returns 'hi ' + name.")


def tools_offered(body: dict) -> list[str]:
    return [t["name"] for t in body["tools"]]


async def test_two_tasks_run_subagents_with_read_tools_and_nested_updates(lsp):
    lsp.fake_api.add({"content": [
        {"type": "tool_use", "id": "toolu_tA", "name": "task", "input": {"description": "Find greet",
                                                                       "prompt": "Where is greet defined?"}},
        {"type": "tool_use", "id": "toolu_tB", "name": "task", "input": {"description": "Find callers",
                                                                       "prompt": "Who calls it?"}}]})
    lsp.fake_api.default = subagent_script
    client = await lsp.start()
    result = await chat(client, "look into greet", permissionMode="bypassPermissions")
    assert result["stopReason"] == "end_turn" and result["finalMessage"] == "Both reports are in."
    requests = lsp.fake_api.requests
    assert len(requests) == 6
    subagent_requests = [r for r in requests if "You are a subagent" in json.dumps(r["system"])]
    assert len(subagent_requests) == 4
    assert all(tools_offered(r) == ["list_open_buffers", "read_file", "list_files", "search", "get_diagnostics"]
               for r in subagent_requests)
    assert "task" in tools_offered(requests[0]) and "todo_write" in tools_offered(requests[0])
    final = results(requests[-1])
    assert final["toolu_tA"]["content"] == "Report A: greet returns 'hi ' + name."
    assert final["toolu_tB"]["content"] == "Report B: greet returns 'hi ' + name."
    assert not final["toolu_tA"].get("is_error") and not final["toolu_tB"].get("is_error")
    # the subagents' context is fresh: their first request is their prompt alone
    firsts = [r for r in subagent_requests if len(r["messages"]) == 1]
    assert sorted(m["messages"][0]["content"][-1]["text"] for m in firsts) == ["Where is greet defined?",
                                                                                "Who calls it?"]

    updates = updates_of(client)
    top = [u for u in updates if "parentToolCallId" not in u]
    assert shape(top) == ["turn_start", "usage", "tool_call", "tool_call", "tool_call_update:running",
                          "tool_call_update:running", "usage", "usage", "tool_call_update:completed",
                          "tool_call_update:completed", "turn_start", "text_delta", "usage"]
    for parent, which in (("toolu_tA", "A"), ("toolu_tB", "B")):
        nested = [u for u in updates if u.get("parentToolCallId") == parent]
        assert shape(nested) == ["turn_start", "tool_call", "tool_call_update:running", "tool_call_update:completed",
                                 "turn_start", "text_delta"]
        call = next(u for u in nested if u["kind"] == "tool_call")
        assert (call["toolCallId"], call["name"], call["toolKind"]) == (f"toolu_read_{which}", "read_file", "read")
        done = [u for u in updates if u["kind"] == "tool_call_update" and u["toolCallId"] == parent
                and u["status"] == "completed"]
        assert done[0]["output"] == f"Report {which}: greet returns 'hi ' + name."
    # every request's usage counts: six model calls of 10 input and 5 output tokens
    assert result["metadata"]["usage"]["inputTokens"] == 60
    assert result["metadata"]["usage"]["outputTokens"] == 30
    assert [u for u in top if u["kind"] == "usage"][-1]["inputTokens"] == 60
    # agent/history shows the task calls, not the subagents' own calls
    history = await client.protocol.send_request_async("agent/history", {"sessionId": result["sessionId"]})
    calls = [c["toolCallId"] for m in history["messages"] for c in m.get("toolCalls") or []]
    assert calls == ["toolu_tA", "toolu_tB"]


async def test_a_task_with_an_empty_prompt_is_a_tool_error_and_the_chat_goes_on(lsp):
    lsp.fake_api.add(tool_use("task", {"description": "Nothing", "prompt": "  "}, id="toolu_e"), text("Sorry."))
    client = await lsp.start()
    result = await chat(client, "go")
    assert result["finalMessage"] == "Sorry."
    refused = results(lsp.fake_api.requests[1])["toolu_e"]
    assert refused["is_error"] and refused["content"] == "prompt is empty: give the subagent the whole task."
    assert len(lsp.fake_api.requests) == 2


async def test_abort_stops_every_subagent(lsp):
    lsp.fake_api.add({"content": [
        {"type": "tool_use", "id": "toolu_t1", "name": "task", "input": {"description": "One", "prompt": "one"}},
        {"type": "tool_use", "id": "toolu_t2", "name": "task", "input": {"description": "Two", "prompt": "two"}}]})
    lsp.fake_api.default = {"hold": True}
    client = await lsp.start()
    running = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: len(lsp.fake_api.requests) == 3)
    session_id = client.updates[0]["sessionId"]
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await running
    assert result["stopReason"] == "aborted"
    await until(lambda: len(lsp.fake_api.disconnects) == 2)
    updates = updates_of(client)
    ends = {u["toolCallId"]: u["status"] for u in updates if u["kind"] == "tool_call_update"
            and u["status"] != "running"}
    assert ends == {"toolu_t1": "cancelled", "toolu_t2": "cancelled"}
    nested = [u["kind"] for u in updates if "parentToolCallId" in u]
    assert sorted(nested) == ["turn_start", "turn_start"]
