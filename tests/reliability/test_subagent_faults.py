"""Subagents (`task`) under fire: an abort while a subagent streams, while it runs a tool, while the parent awaits a
confirmation with a task queued, with two tasks in flight; a subagent whose model call fails (HTTP 500) or stalls.
The chat answers promptly (aborted, or with the subagent's failure as an is_error result), no subagent goes on
asking the model afterwards, the session continues on a history the Messages API accepts, usage is summed."""

from __future__ import annotations

import asyncio
import json

from tests.e2e.conftest import text, tool_use
from tests.reliability.conftest import OK_REPLY, abort_latest, tally
from tests.reliability.history_check import history_problems
from tests.reliability.rawlsp import ANSWER_CEILING, NO_ANSWER
from tests.waiting import holds_within

AREA = "subagents"


def task(prompt: str, id: str) -> dict:
    return {"type": "tool_use", "id": id, "name": "task", "input": {"description": prompt, "prompt": prompt}}


def is_subagent(body: dict) -> bool:
    return "You are a subagent" in json.dumps(body.get("system"))


def results_of(body: dict) -> dict[str, dict]:
    return {b["tool_use_id"]: b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"}


async def test_abort_during_a_task(start_server, fake_api, long_run):
    fake_api.default = OK_REPLY
    server = await start_server(agent={"diagnostics": True})
    server.handlers["agent/diagnostics"] = lambda params: NO_ANSWER
    server.handlers["window/showMessageRequest"] = lambda params: NO_ANSWER
    problems: list[str] = []
    streaming = {"content": [{"type": "text", "text": "Looking into it"}], "hang": True}
    diagnostics = tool_use("get_diagnostics", {"path": "app.py"})
    run = {"type": "tool_use", "id": "toolu_run", "name": "run_command", "input": {"command": "echo hi"}}
    cells = [
        # name, the script, what to wait for before aborting, the permission mode
        ("streams", [{"content": [task("stream", "toolu_s")]}, streaming],
         lambda: any(is_subagent(r) for r in fake_api.requests[first:]), "bypassPermissions"),
        ("runs a tool", [{"content": [task("diagnose", "toolu_d")]}, diagnostics],
         lambda: any(r["method"] == "agent/diagnostics" for r in server.server_requests), "bypassPermissions"),
        ("awaits a confirmation", [{"content": [run, task("queued", "toolu_q")]}],
         lambda: any(r["method"] == "window/showMessageRequest" for r in server.server_requests), "default"),
        ("two tasks", [{"content": [task("one", "toolu_1"), task("two", "toolu_2")]}, {"hold": True},
                       {"hold": True}],
         lambda: sum(1 for r in fake_api.requests[first:] if is_subagent(r)) == 2, "bypassPermissions"),
    ]
    for round_ in range(5 if long_run else 1):
        for name, script, ready, mode in cells:
            server.server_requests.clear()
            first = len(fake_api.requests)
            fake_api.script[:] = list(script)
            sent = len(server.notifications)
            pending = server.request_future("agent/chat", {"message": f"{name} {round_}", "permissionMode": mode})
            if not await holds_within(ready):
                problems.append(f"{name}: never reached ({len(fake_api.requests) - first} requests)")
            try:
                session_id, result = await abort_latest(server, pending, AREA, since=sent)
            except TimeoutError as e:
                raise AssertionError(f"{name}, round {round_}: {e}") from None
            if result["stopReason"] != "aborted":
                problems.append(f"{name}: {result}")
            asked = len(fake_api.requests)
            # the session goes on, on a valid history; no subagent asked the model after the abort
            fake_api.script[:] = [text("Still here.")]
            after = (await server.request("agent/chat", {"message": f"after {name}", "sessionId": session_id,
                                                          "permissionMode": "bypassPermissions"}))["result"]
            later = fake_api.requests[asked:]
            if after["stopReason"] != "end_turn" or len(later) != 1 or is_subagent(later[0]):
                problems.append(f"{name}, after: {after}, {len(later)} requests")
            if later and history_problems(later[-1]["messages"]):
                problems.append(f"{name}: {history_problems(later[-1]['messages'])}")
            tally(AREA, cases=1)
    fake_api.script[:] = []
    if server.proc.returncode is not None:
        tally(AREA, crashes=1)
    tally(AREA, wrong=len(problems))
    assert not problems, "\n".join(problems)


async def test_a_subagent_whose_model_call_fails(start_server, fake_api):
    fake_api.default = OK_REPLY
    server = await start_server(init_options={"readTimeout": 1})
    problems: list[str] = []
    failing = {"status": 500, "error": {"type": "api_error", "message": "overloaded"},
               "headers": {"x-should-retry": "false"}}
    cells = [("HTTP 500", failing, "overloaded"), ("stall", {"hold": True}, "")]
    for name, reply, said in cells:
        first = len(fake_api.requests)
        # the subagent reads a file (one model call that counts), then its next model call fails
        fake_api.script[:] = [{"content": [task(name, "toolu_t")]}, tool_use("read_file", {"path": "app.py"}),
                              reply, text("The subagent failed.")]
        result = (await asyncio.wait_for(server.request("agent/chat", {
            "message": name, "permissionMode": "bypassPermissions"}), ANSWER_CEILING))["result"]
        requests = fake_api.requests[first:]
        final = results_of(requests[-1]).get("toolu_t", {}) if requests else {}
        if result["stopReason"] != "end_turn" or not final.get("is_error") or \
                not final.get("content", "").startswith("The subagent failed:") or said not in final["content"]:
            problems.append(f"{name}: {result}, {final}")
        # usage: the parent's two calls and the subagent's good one, 10 input tokens each
        if result["metadata"]["usage"]["inputTokens"] != 30:
            problems.append(f"{name}: usage {result['metadata']['usage']}")
        if history_problems(requests[-1]["messages"]):
            problems.append(f"{name}: {history_problems(requests[-1]['messages'])}")
        tally(AREA, cases=1)
    fake_api.script[:] = [text("Still here.")]
    after = (await server.request("agent/chat", {"message": "after"}))["result"]
    if after["stopReason"] != "end_turn":
        problems.append(f"after: {after}")
    if server.proc.returncode is not None:
        tally(AREA, crashes=1)
    tally(AREA, wrong=len(problems))
    assert not problems, "\n".join(problems)
