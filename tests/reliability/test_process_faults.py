"""Process faults: SIGKILL mid-chat again and again on one data dir; a data dir that cannot be written."""

from __future__ import annotations

import json
import resource
import signal
import sqlite3

from tests.reliability.conftest import tally
from tests.reliability.history_check import history_problems
from tests.reliability.rawlsp import ANSWER_CEILING
from tests.waiting import until

KILLS = 20
OK = [{"content": [{"type": "text", "text": "ok"}]}]
LONG = [{"content": [{"type": "text", "text": "working " * 2000}], "delay": 0.05}]
COMMAND = [{"content": [{"type": "tool_use", "name": "run_command", "input": {"command": "sleep 30"}}]}]


def scripted(path, replies) -> list[str]:
    """`--model script:path`: the in-process scripted model (no SDK to import per process: these tests are about
    the process and its store, and start many servers). Each chat reads the file anew."""
    path.write_text(json.dumps(replies))
    return ["--model", f"script:{path}"]


async def until_update(server, kind: str) -> None:
    await until(lambda: any(n["method"] == "agent/update" and n["params"]["update"]["kind"] == kind
                            for n in server.notifications), ANSWER_CEILING, f"a {kind} update")


async def test_sigkill_mid_chat_twenty_times(start_server, tmp_path, workspace):
    data = tmp_path / "killed"
    script = tmp_path / "script.json"
    finished: dict[str, list[str]] = {}  # session -> user messages of its finished chats
    interrupted = []
    session = None
    for n in range(KILLS):
        server = await start_server(*scripted(script, OK), data_dir=data)
        message = f"finished {n}"
        params = {"message": message, **({"sessionId": session} if session and n % 2 else {})}
        result = (await server.request("agent/chat", params))["result"]
        assert result["stopReason"] == "end_turn"
        session = result["sessionId"]
        finished.setdefault(session, []).append(message)
        # the next chat dies mid-stream: alternately mid-text and mid-command, in the same session
        scripted(script, LONG if n % 2 else COMMAND)
        server.notifications.clear()
        server.request_future("agent/chat", {"sessionId": session, "message": f"interrupted {n}",
                                             "permissionMode": "bypassPermissions"})
        await until_update(server, "text_delta" if n % 2 else "tool_call_update")
        server.proc.send_signal(signal.SIGKILL)
        await server.proc.wait()
        interrupted.append(session)
    db = sqlite3.connect(data / "sessions.db")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    server = await start_server(*scripted(script, OK), data_dir=data)
    for session_id, messages in finished.items():
        history = (await server.request("agent/history", {"sessionId": session_id}))["result"]["messages"]
        users = [m["content"] for m in history if m["role"] == "user"]
        assert [u for u in users if u.startswith("finished")] == messages, (session_id, users)
    for session_id in set(interrupted):  # each interrupted session goes on, as a request the API accepts
        result = (await server.request("agent/chat", {"sessionId": session_id, "message": "go on"}))["result"]
        assert result["stopReason"] == "end_turn"
    db = sqlite3.connect(data / "sessions.db")
    for (session_id,) in db.execute("SELECT id FROM sessions"):
        from agent_lsp.models.anthropic import api_messages
        from agent_lsp.sessions.runtime import _MESSAGE
        history = [_MESSAGE.validate_json(b) for (b,) in db.execute(
            "SELECT body FROM messages WHERE session_id = ? ORDER BY position", (session_id,))]
        assert history_problems(api_messages(history)) == [], session_id
    tally("process: SIGKILL mid-chat", cases=KILLS)


async def test_a_data_dir_that_cannot_be_used_keeps_chats_in_memory(start_server, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    server = await start_server(*scripted(tmp_path / "s.json", OK), data_dir=blocker / "state")
    first = (await server.request("agent/chat", {"message": "one"}))["result"]
    second = (await server.request("agent/chat", {"sessionId": first["sessionId"], "message": "two"}))["result"]
    assert second["stopReason"] == "end_turn"
    warnings = [n["params"]["message"] for n in server.notifications if n["method"] == "window/showMessage"]
    assert any("sessions stay in memory" in w for w in warnings), warnings
    history = (await server.request("agent/history", {"sessionId": first["sessionId"]}))["result"]["messages"]
    assert [m["content"] for m in history] == ["one", "ok", "two", "ok"]
    assert server.proc.returncode is None
    tally("process: unusable or full data dir", cases=1)


async def test_a_full_disk_keeps_chats_in_memory_with_a_warning(start_server, tmp_path):
    """RLIMIT_FSIZE makes every write past the store's current size fail as a full disk would (EFBIG)."""
    args = scripted(tmp_path / "s.json", [{"content": [{"type": "text", "text": "a long answer " * 500}]}])
    data = tmp_path / "full"
    warm = await start_server(*args, data_dir=data)
    await warm.request("agent/chat", {"message": "made the store"})
    await warm.stop()
    size = sum(p.stat().st_size for p in data.iterdir())
    limit = size + 4096
    server = await start_server(*args, data_dir=data, preexec_fn=lambda: resource.setrlimit(
        resource.RLIMIT_FSIZE, (limit, limit)))
    session = None
    for n in range(4):
        answer = await server.request("agent/chat", {"message": f"chat {n}", **({"sessionId": session} if session else {})})
        assert answer["result"]["stopReason"] == "end_turn", answer
        session = answer["result"]["sessionId"]
    notices = [n["params"]["update"]["message"] for n in server.notifications if n["method"] == "agent/update"
               and n["params"]["update"]["kind"] == "notice"]
    assert any("could not be saved" in m for m in notices), notices
    history = (await server.request("agent/history", {"sessionId": session}))["result"]["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == [f"chat {n}" for n in range(4)]
    assert server.proc.returncode is None
    tally("process: unusable or full data dir", cases=4)
