"""Model faults against the real SDK and the fake Messages API: every cell answers a result, the session's next
chat is a request the API accepts, nothing finished is lost, and after an abort no model request begins."""

from __future__ import annotations

import asyncio
import os
import json
import time

import pytest

from tests.e2e.conftest import server_env, text, tool_use
from tests.fakes.messages_api import FakeMessagesAPI, reply_events
from tests.reliability.conftest import OK_REPLY, tally
from tests.reliability.history_check import history_problems
from tests.reliability.rawlsp import ANSWER_CEILING
from tests.reliability.tls_faults import faults_over_tls
from tests.waiting import until

AREA = "model faults (anthropic SDK)"
ERROR = {"error"}
TOOL_REPLY = {"content": [{"type": "text", "text": "Let me look"},
                          {"type": "tool_use", "name": "read_file", "input": {"path": "app.py"}}]}
EVENTS = len(reply_events(TOOL_REPLY, 1))


def error_reply(status: int, kind: str, **headers: str) -> dict:
    return {"status": status, "error": {"type": kind, "message": f"{kind} from the fake"}, "headers": headers}


def sse(*events: dict) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def one_delta(reply: dict) -> dict:
    """The reply's events with each tool input sent in a single input_json_delta."""
    events = []
    for event in reply_events(reply, 1):
        delta = event.get("delta", {})
        if delta.get("type") == "input_json_delta" and events and events[-1].get("delta", {}).get("type") == delta["type"]:
            events[-1]["delta"]["partial_json"] += delta["partial_json"]
        else:
            events.append(json.loads(json.dumps(event)))
    return {"events": events}


START = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "t",
                                               "content": [], "stop_reason": None, "stop_sequence": None,
                                               "usage": {"input_tokens": 1, "output_tokens": 1}}}

CELLS: list[tuple[str, list[dict], set[str]]] = [
    ("429 with retry-after, then a reply", [error_reply(429, "rate_limit_error", **{"retry-after": "0"}), OK_REPLY],
     {"end_turn"}),
    ("500 three times", [error_reply(500, "api_error", **{"retry-after-ms": "10"})] * 3, ERROR),
    ("529 three times", [error_reply(529, "overloaded_error", **{"retry-after-ms": "10"})] * 3, ERROR),
    ("400", [error_reply(400, "invalid_request_error")], ERROR),
    ("401", [error_reply(401, "authentication_error")], ERROR),
    ("error event mid-stream", [{"events": reply_events(text("half"), 1)[:3] + [
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]}], ERROR),
    ("stall before headers (readTimeout 1 s)", [dict(OK_REPLY, stall=2.5)], ERROR),  # not retried
    ("stall mid-stream (readTimeout 1 s)", [dict(text("one two three four"), delay=2.5)], ERROR),
    ("malformed SSE: data not JSON", [{"raw": "event: message_start\ndata: {not json\n\n"}], ERROR),
    ("malformed SSE: no event lines", [{"raw": "data: {}\n\ndata: [DONE]\n\n"}], ERROR),
    ("malformed SSE: deltas without a start", [{"raw": sse(START, {"type": "content_block_delta", "index": 3, "delta": {
        "type": "text_delta", "text": "x"}})}], ERROR),
    ("tool_use with invalid JSON input", [{"events": reply_events(tool_use("read_file", {"path": "a"}), 1)[:2] + [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{bad"}},
        {"type": "content_block_stop", "index": 0}] + reply_events(tool_use("read_file", {}), 1)[-2:]}],
     ERROR | {"end_turn"}),
    ("a lone surrogate in a text delta", [{"raw": sse(START, {"type": "content_block_start", "index": 0,
                                                           "content_block": {"type": "text", "text": ""}})
                                          + 'event: content_block_delta\ndata: {"type": "content_block_delta", '
                                          '"index": 0, "delta": {"type": "text_delta", "text": "a\\ud800b"}}\n\n'
                                          + sse({"type": "content_block_stop", "index": 0},
                                                {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                                    "stop_sequence": None},
                                                 "usage": {"output_tokens": 1}}, {"type": "message_stop"})}],
     {"end_turn"}),
    ("unknown tool", [tool_use("launch_rockets", {"n": 1}), OK_REPLY], {"end_turn"}),
    ("empty content list", [{"content": []}], {"end_turn"}),
    ("tool_use input is a list", [tool_use("read_file", ["app.py"]), OK_REPLY], {"end_turn"}),
    # in one delta: the SDK cannot parse a top-level string's first half (that cell is "invalid JSON" above)
    ("tool_use input is a string", [one_delta(tool_use("read_file", "app.py")), OK_REPLY], {"end_turn"}),
    ("tool_use input is a number", [tool_use("read_file", 7), OK_REPLY], {"end_turn"}),
    ("a path with a NUL byte", [tool_use("read_file", {"path": "app\u0000.py"}), OK_REPLY], {"end_turn"}),
    ("two tool_use blocks with one id", [{"content": [
        {"type": "tool_use", "id": "toolu_same", "name": "read_file", "input": {"path": "app.py"}},
        {"type": "tool_use", "id": "toolu_same", "name": "list_files", "input": {}}]}, OK_REPLY], {"end_turn"}),
] + [
    (f"stream cut after event {k} of {EVENTS}", [dict(TOOL_REPLY, cut_after=k)],
     ERROR if k < EVENTS - 1 else ERROR | {"end_turn"}) for k in range(EVENTS)
]


@pytest.fixture
async def server(start_server, fake_api):
    fake_api.default = OK_REPLY
    return await start_server(init_options={"readTimeout": 1}, agent={"confirmTool": True})


def requests_of(fake_api, message: str) -> list[dict]:
    """The model requests whose last user text is `message` (the requests of that chat)."""
    def last_user_text(body):
        for m in reversed(body["messages"]):
            if m["role"] == "user":
                texts = [b["text"] for b in m["content"] if b["type"] == "text"]
                if texts:
                    return texts[-1]
        return None
    return [body for body in fake_api.requests if last_user_text(body) == message]


async def check_next_chat(server, fake_api, session_id: str, said: list[str]) -> list[str]:
    """The next chat in the session answers, its request is a valid history, and every earlier message is kept."""
    problems = []
    answer = await server.request("agent/chat", {"sessionId": session_id, "message": "next, please"})
    result = answer.get("result") or {}
    if result.get("stopReason") != "end_turn":
        problems.append(f"next chat: {answer}")
    sent = requests_of(fake_api, "next, please")
    if not sent:
        problems.append("next chat sent no request")
    else:
        problems += history_problems(sent[-1]["messages"])
    history = (await server.request("agent/history", {"sessionId": session_id}))["result"]["messages"]
    users = [m["content"] for m in history if m["role"] == "user"]
    if users != said + ["next, please"]:
        problems.append(f"lost: history has {users}")
    return problems


async def test_fault_matrix(server, fake_api):
    failures = []
    for n, (name, script, expected) in enumerate(CELLS):
        fake_api.script[:] = list(script)
        message = f"cell {n}: {name}"
        try:
            answer = await server.request("agent/chat", {"message": message, "permissionMode": "bypassPermissions"})
        except asyncio.TimeoutError:
            tally(AREA, cases=1, hangs=1)
            failures.append(f"{name}: no answer")
            continue
        result = answer.get("result") or {}
        problems = []
        if result.get("stopReason") not in expected:
            problems.append(f"stopReason {result.get('stopReason')} not in {expected}: {answer}")
        if result.get("stopReason") == "error" and not result.get("error", {}).get("message"):
            problems.append("an error result without a message")
        lost_before = len(problems)
        problems += await check_next_chat(server, fake_api, result.get("sessionId"), [message])
        tally(AREA, cases=1, wrong=1 if problems else 0,
              lost=sum("lost" in p for p in problems[lost_before:]))
        failures += [f"{name}: {p}" for p in problems]
    assert server.proc.returncode is None
    assert not failures, "\n".join(failures)


async def test_recoverable_tool_calls_reach_the_model_as_errors(server, fake_api):
    """The cells that must not end the chat: the model reads an is_error result naming what was wrong."""
    fake_api.script[:] = [tool_use("read_file", ["app.py"]), {"content": [
        {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": {"path": "a\u0000b"}},
        {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": {"path": "app.py"}}]}, OK_REPLY]
    answer = await server.request("agent/chat", {"message": "recover", "permissionMode": "bypassPermissions"})
    assert answer["result"]["stopReason"] == "end_turn"
    first, second = requests_of(fake_api, "recover")[1:3]
    result = first["messages"][-1]["content"][0]
    assert result["is_error"] and "the input must be a JSON object, not an array; the call was not run" in result["content"]
    results = second["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_x", "toolu_x_dup2"]
    assert "NUL" in results[0]["content"] and "repeated the id" in results[1]["content"]
    assert all(r["is_error"] for r in results)
    assert history_problems(second["messages"]) == []
    tally(AREA, cases=1)


# ---- stop means stop ----------------------------------------------------------------------------------------


async def abort_when(server, fake_api, message: str, params: dict, ready) -> dict:
    """Start a chat, abort it once `ready(notifications)` holds; no request of that chat may arrive after."""
    future = server.request_future("agent/chat", {"message": message, **params})
    await until(lambda: ready([n["params"]["update"] for n in server.notifications if n["method"] == "agent/update"
                               and n["params"]["sessionId"] == _session(server, message)]),
                ANSWER_CEILING, "the chat to get to the point of the abort")
    session_id = _session(server, message)
    aborted_at = time.monotonic()
    assert (await server.request("agent/abort", {"sessionId": session_id}))["result"] == {"aborted": True}
    result = (await asyncio.wait_for(future, ANSWER_CEILING))["result"]
    late = [t for t, body in zip(fake_api.arrivals, fake_api.requests)
            if t > aborted_at and body in requests_of(fake_api, message)]
    assert result["stopReason"] == "aborted"
    assert late == [], f"{len(late)} model request(s) began after the abort"
    return result


def _session(server, message: str):
    """The session of the chat whose first turn is under way (its first agent/update names it)."""
    ids = [n["params"]["sessionId"] for n in server.notifications if n["method"] == "agent/update"]
    return ids[-1] if ids else None


async def test_stop_means_stop(server, fake_api, workspace):
    os.mkfifo(workspace / "pipe")
    cells = [
        ("abort during the model stream", [dict(text("Working on it"), hang=True)], {},
         lambda ups: any(u["kind"] == "text_delta" for u in ups)),
        ("abort during a command", [tool_use("run_command", {"command": "sleep 30"}), OK_REPLY],
         {"permissionMode": "bypassPermissions"},
         lambda ups: any(u["kind"] == "tool_call_update" and u["status"] == "running" for u in ups)),
        # rg reads a pipe nobody writes to: the search is still running when the abort arrives, however fast rg is
        ("abort during a search", [tool_use("search", {"pattern": "ab", "path": "pipe"}), OK_REPLY], {},
         lambda ups: any(u["kind"] == "tool_call_update" and u["status"] == "running" for u in ups)),
        ("abort during a confirmation", [tool_use("run_command", {"command": "echo hi"}), OK_REPLY], {},
         lambda ups: any(u["kind"] == "confirmation_request" for u in ups)),
    ]
    for name, script, params, ready in cells:
        fake_api.script[:] = list(script)
        server.notifications.clear()
        result = await abort_when(server, fake_api, name, params, ready)
        problems = await check_next_chat(server, fake_api, result["sessionId"], [name])
        assert not problems, (name, problems)
        tally(AREA + ": abort", cases=1)


TLS_CELLS: list[tuple[str, list[dict], set[str]]] = [
    ("a reply", [OK_REPLY], {"end_turn"}), ("a reset mid-stream", [dict(TOOL_REPLY, reset_after=3)], ERROR),
    ("ended before its stop event", [dict(TOOL_REPLY, cut_after=4)], ERROR),
    ("a reply after the reset", [OK_REPLY], {"end_turn"}),
]



async def test_faults_over_tls(start_server, tmp_path):
    """A remote model's edges (tests/reliability/tls_faults.py), through the anthropic SDK."""
    def fake(tls):
        api = FakeMessagesAPI(tls=tls).start()
        api.default = OK_REPLY
        return api

    failures = await faults_over_tls(start_server, tmp_path, AREA, fake,
                                     lambda url, ca: server_env(url, SSL_CERT_FILE=ca), lambda api: api.base_url,
                                     "/v1/messages", TLS_CELLS, check_next_chat)
    assert not failures, "\n".join(failures)
