"""Two server processes (two editor windows) on one data dir, both continuing the same session."""

from __future__ import annotations

import asyncio
import signal

from tests.e2e.conftest import text
from tests.reliability.conftest import OK_REPLY, tally
from tests.reliability.rawlsp import ANSWER_CEILING
from tests.waiting import until

AREA = "two windows, one session"


async def wait_for_update(server, kind: str) -> str:
    return await until(lambda: next((n["params"]["sessionId"] for n in server.notifications if n["method"] ==
                                     "agent/update" and n["params"]["update"]["kind"] == kind), None),
                       ANSWER_CEILING, f"a {kind} update")


async def user_messages(server, session_id: str) -> list[str]:
    history = (await server.request("agent/history", {"sessionId": session_id}))["result"]["messages"]
    return [m["content"] for m in history if m["role"] == "user"]


async def test_a_session_running_in_another_window_is_busy_and_nothing_is_overwritten(start_server, fake_api):
    fake_api.default = OK_REPLY
    a = await start_server()
    b = await start_server()
    session = (await a.request("agent/chat", {"message": "first from A"}))["result"]["sessionId"]
    fake_api.add(dict(text("Working on it"), hang=True))
    a.notifications.clear()
    running = a.request_future("agent/chat", {"sessionId": session, "message": "long one in A"})
    await wait_for_update(a, "text_delta")
    busy = await b.request("agent/chat", {"sessionId": session, "message": "B tries"})
    assert busy["error"]["code"] == -32001
    assert f"process {a.proc.pid}" in busy["error"]["message"] and session in busy["error"]["message"]
    assert (await a.request("agent/abort", {"sessionId": session}))["result"] == {"aborted": True}
    assert (await asyncio.wait_for(running, ANSWER_CEILING))["result"]["stopReason"] == "aborted"
    said = ["first from A", "long one in A"]
    for n in range(2):  # alternate windows: each one continues what the other wrote
        for name, server in (("B", b), ("A", a)):
            message = f"{name} round {n}"
            answer = await server.request("agent/chat", {"sessionId": session, "message": message})
            assert answer["result"]["stopReason"] == "end_turn", answer
            said.append(message)
            sent = fake_api.requests[-1]["messages"]
            assert [m["content"][-1]["text"] for m in sent if m["role"] == "user"] == said
    assert await user_messages(a, session) == said
    assert await user_messages(b, session) == said
    tally(AREA, cases=2 + len(said))


async def test_both_windows_at_once_never_lose_a_chat(start_server, fake_api):
    fake_api.default = dict(OK_REPLY, delay=0.01)
    a = await start_server()
    b = await start_server()
    session = (await a.request("agent/chat", {"message": "start"}))["result"]["sessionId"]
    done, busy = ["start"], 0
    for n in range(3):
        answers = await asyncio.gather(
            a.request("agent/chat", {"sessionId": session, "message": f"A {n}"}),
            b.request("agent/chat", {"sessionId": session, "message": f"B {n}"}))
        for name, answer in zip("AB", answers):
            if "error" in answer:
                assert answer["error"]["code"] == -32001, answer
                busy += 1
            else:
                done.append(f"{name} {n}")
    stored = await user_messages(b, session)
    assert sorted(stored) == sorted(done), (stored, done)  # every finished chat, once; none overwritten
    tally(AREA, cases=6, lost=len(set(done) - set(stored)))


async def test_a_dead_windows_lease_is_taken_over(start_server, fake_api):
    fake_api.default = OK_REPLY
    a = await start_server()
    b = await start_server()
    session = (await a.request("agent/chat", {"message": "before"}))["result"]["sessionId"]
    fake_api.add(dict(text("Working on it"), hang=True))
    a.notifications.clear()
    a.request_future("agent/chat", {"sessionId": session, "message": "interrupted"})
    await wait_for_update(a, "text_delta")
    a.proc.send_signal(signal.SIGKILL)
    await a.proc.wait()
    answer = await b.request("agent/chat", {"sessionId": session, "message": "after"})
    assert answer["result"]["stopReason"] == "end_turn", answer
    assert await user_messages(b, session) == ["before", "after"]
    tally(AREA, cases=1)
