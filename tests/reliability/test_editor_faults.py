"""Editor faults: an editor that refuses, fails or never answers; an editor that goes away mid-chat."""

from __future__ import annotations

import asyncio

from tests.e2e.conftest import text, tool_use
from tests.reliability.conftest import OK_REPLY, tally
from tests.reliability.history_check import history_problems
from tests.reliability.rawlsp import ANSWER_CEILING, NO_ANSWER, ErrorAnswer
from tests.waiting import until

AREA = "editor faults"
EDIT = tool_use("edit_file", {"path": "app.py", "old_string": "hi ", "new_string": "hello "})


def tool_statuses(server) -> list[tuple[str, str]]:
    return [(u["status"], u.get("error", "")) for n in server.notifications if n["method"] == "agent/update"
            for u in [n["params"]["update"]] if u["kind"] == "tool_call_update" and u["status"] != "running"]


async def test_an_editor_that_refuses_fails_or_never_answers(start_server, fake_api):
    fake_api.default = OK_REPLY
    server = await start_server(agent={"diagnostics": True})
    cells = [
        ("applyEdit answers an error", "workspace/applyEdit", ErrorAnswer(-32603, "disk on fire"), EDIT,
         "answered workspace/applyEdit with an error"),
        ("applyEdit answers applied: false", "workspace/applyEdit", {"applied": False, "failureReason": "stale"}, EDIT,
         "did not apply the edit"),
        ("applyEdit never answers", "workspace/applyEdit", NO_ANSWER, EDIT, "did not answer workspace/applyEdit"),
        ("agent/diagnostics answers an error", "agent/diagnostics", ErrorAnswer(-32603, "no"),
         tool_use("get_diagnostics", {"path": "app.py"}), ""),
        ("agent/diagnostics never answers", "agent/diagnostics", NO_ANSWER,
         tool_use("get_diagnostics", {"path": "app.py"}), ""),
    ]
    for name, method, answer, call, error in cells:
        server.handlers[method] = lambda params, answer=answer: answer
        fake_api.script[:] = [call, OK_REPLY]
        server.notifications.clear()
        result = (await server.request("agent/chat", {"message": name, "permissionMode": "bypassPermissions"}))["result"]
        assert result["stopReason"] == "end_turn", (name, result)
        ((status, why),) = tool_statuses(server)
        assert (status == "failed" and error in why) if error else status == "completed", (name, status, why)
        assert history_problems(fake_api.requests[-1]["messages"]) == []
        tally(AREA, cases=1)
    assert server.proc.returncode is None


async def test_a_confirmation_popup_never_answered_waits_until_stopped(start_server, fake_api):
    fake_api.default = OK_REPLY
    server = await start_server()
    server.handlers["window/showMessageRequest"] = lambda params: NO_ANSWER
    fake_api.script[:] = [tool_use("run_command", {"command": "echo hi"})]
    chat = server.request_future("agent/chat", {"message": "run it"})
    await until(lambda: any(r["method"] == "window/showMessageRequest" for r in server.server_requests),
                ANSWER_CEILING, "the confirmation popup")
    session = next(n["params"]["sessionId"] for n in server.notifications if n["method"] == "agent/update")
    await server.request("agent/abort", {"sessionId": session})
    result = (await asyncio.wait_for(chat, ANSWER_CEILING))["result"]
    assert result["stopReason"] == "aborted"
    assert tool_statuses(server)[-1][0] == "cancelled"
    tally(AREA, cases=1)


async def test_the_editor_closing_the_pipe_mid_chat(start_server, fake_api, tmp_path):
    fake_api.default = OK_REPLY
    data = tmp_path / "state"
    server = await start_server(data_dir=data)
    fake_api.script[:] = [dict(text("Working on it"), hang=True)]
    server.request_future("agent/chat", {"message": "then the window closed"})
    await until(lambda: any(n["method"] == "agent/update" and n["params"]["update"]["kind"] == "text_delta"
                            for n in server.notifications), ANSWER_CEILING, "a text_delta")
    session = server.notifications[-1]["params"]["sessionId"]
    server.proc.stdin.close()
    assert await server.wait_exit() == 0
    assert "Traceback" not in server.stderr.decode(errors="replace")
    again = await start_server(data_dir=data)
    history = (await again.request("agent/history", {"sessionId": session}))["result"]["messages"]
    assert [(m["role"], m["content"]) for m in history] == [("user", "then the window closed"),
                                                            ("assistant", "Working on it")]
    assert (await again.request("agent/chat", {"sessionId": session, "message": "go on"}))["result"]["stopReason"] \
        == "end_turn"
    assert history_problems(fake_api.requests[-1]["messages"]) == []
    tally(AREA, cases=1)
