"""Big inputs (outputs cut with a note, memory bounded) and a soak (nothing grows after warm-up)."""

from __future__ import annotations

import asyncio
import os

from tests.e2e.conftest import tool_use
from tests.reliability.conftest import OK_REPLY, tally
from tests.reliability.history_check import history_problems
from tests.reliability.rawlsp import process_counts

CUT_NOTE = "[output truncated"


def results_of(body: dict) -> list[dict]:
    return [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]


async def test_big_inputs(start_server, fake_api, workspace, long_run):
    mb = 50 if long_run else 8
    (workspace / "big.txt").write_bytes(b"a line of text\n" * (mb * 1024 * 1024 // 15))
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4096)
    (workspace / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1") * 1000)
    server = await start_server()
    buffer = "\n".join(f"row {i}" for i in range(100_000))
    (workspace / "open.py").write_text("saved = 1\n")  # the editor's unsaved 100,000 lines win
    server.notify("textDocument/didOpen", {"textDocument": {"uri": (workspace / "open.py").as_uri(),
                                                            "languageId": "python", "version": 1, "text": buffer}})
    printed = 100 if long_run else 20
    fake_api.script[:] = [
        {"content": [tool_use("read_file", {"path": "big.txt"})["content"][0],
                     tool_use("read_file", {"path": "blob.bin"})["content"][0],
                     tool_use("read_file", {"path": "latin1.txt"})["content"][0],
                     tool_use("read_file", {"path": "open.py", "limit": 100_000})["content"][0],
                     tool_use("search", {"pattern": "row 9", "path": "open.py"})["content"][0]]},
        tool_use("run_command", {"command": f"head -c {printed * 1024 * 1024} /dev/zero | tr '\\0' x"}),
        OK_REPLY]
    before = process_counts(server.proc.pid)["rss_kb"]
    message = "m" * (1024 * 1024)
    result = (await server.request("agent/chat", {"message": message, "permissionMode": "bypassPermissions"}))["result"]
    assert result["stopReason"] == "end_turn"
    reads, command = results_of(fake_api.requests[1]), results_of(fake_api.requests[2])[0]
    big, blob, latin, open_buffer, search = reads
    assert CUT_NOTE in big["content"] and len(big["content"]) < 31_000
    assert blob["is_error"] and "binary" in blob["content"]
    assert "caf\ufffd cr\ufffdme" in latin["content"]
    assert CUT_NOTE in open_buffer["content"] and len(open_buffer["content"]) < 31_000
    assert "more than 200 matches" in search["content"]
    assert "characters cut from the middle" in command["content"] and len(command["content"]) < 31_000
    assert fake_api.requests[0]["messages"][0]["content"][-1]["text"] == message
    assert history_problems(fake_api.requests[2]["messages"]) == []
    grown_mb = (process_counts(server.proc.pid)["rss_kb"] - before) / 1024
    assert grown_mb < 6 * mb + 150, f"RSS grew {grown_mb:.0f} MB"
    tally("big inputs", cases=7)


def soak_reply(body: dict) -> dict:
    """Per request, not per arrival order (lanes run at once): a user message gets two tool calls (every fifth
    chat also a command), their results get the answer."""
    last = body["messages"][-1]["content"]
    if any(b["type"] == "tool_result" for b in last):
        return OK_REPLY
    calls = [{"type": "tool_use", "name": "read_file", "input": {"path": "app.py"}},
             {"type": "tool_use", "name": "list_files", "input": {}}]
    if int(last[-1]["text"].rsplit(" ", 1)[-1]) % 5 == 0:
        calls.append({"type": "tool_use", "name": "run_command", "input": {"command": "echo soak"}})
    return {"content": calls}


async def test_soak(start_server, fake_api, long_run):
    chats = 3000 if long_run else 300
    lanes = 10
    fake_api.default = soak_reply
    server = await start_server(AGENT_LSP_DEBUG="1")

    async def lane(n: int, first: int, count: int) -> list[dict]:
        session, results = None, []
        for i in range(first, first + count):
            params = {"message": f"lane {n} chat {i}", "permissionMode": "bypassPermissions"}
            if session:
                params["sessionId"] = session
            answer = await server.request("agent/chat", params)
            results.append(answer.get("result") or answer)
            session = results[-1].get("sessionId", session)
        return results

    warm_up = 3
    warm = await asyncio.gather(*(lane(n, 0, warm_up) for n in range(lanes)))
    baseline = {**process_counts(server.proc.pid), **(await server.request("agent/_debugCounts", {}))["result"]}
    rest = await asyncio.gather(*(lane(n, warm_up, chats // lanes - warm_up) for n in range(lanes)))
    finished = [r for results in warm + rest for r in results]
    assert len(finished) == chats
    assert all(r.get("stopReason") == "end_turn" and r["metadata"]["toolCallsCount"] >= 2 for r in finished), \
        [r for r in finished if r.get("stopReason") != "end_turn" or r["metadata"]["toolCallsCount"] < 2][:3]
    after = {**process_counts(server.proc.pid), **(await server.request("agent/_debugCounts", {}))["result"]}
    assert after["fds"] <= baseline["fds"] + 4, (baseline, after)
    # The asyncio default executor (file reads, search overlays) starts its threads lazily, as concurrent work
    # needs them, up to its fixed size of min(32, cpus + 4): growth up to that is not a leak, growth past it is.
    executor = min(32, (os.cpu_count() or 1) + 4)
    assert after["threads"] <= max(baseline["threads"] + 2, 3 + executor), (baseline, after)
    assert after["children"] == 0 and after["tasks"] <= baseline["tasks"], (baseline, after)
    assert after["rss_kb"] - baseline["rss_kb"] < 40_000, (baseline, after)
    print(f"soak: {len(finished)} chats; after warm-up {baseline}; at the end {after}")
    tally("soak", cases=len(finished))
