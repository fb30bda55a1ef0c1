"""Sessions that survive: restart and continue, list / history / delete, SIGKILL, compaction, prompt caching."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import chat, sent, server_process, shape, text, tool_use, updates_of
from tests.waiting import until


async def test_a_restarted_server_continues_a_session_by_id(lsp):
    lsp.fake_api.add(text("First answer."), text("Second answer."))
    first_server = await lsp.start()
    first = await chat(first_server, "remember the number 7")
    await lsp.stop_client(first_server)
    second_server = await lsp.start()
    second = await chat(second_server, "which number?", sessionId=first["sessionId"])
    assert second["sessionId"] == first["sessionId"] and second["finalMessage"] == "Second answer."
    assert sent(lsp.fake_api, 1) == [
        {"role": "user", "content": [{"type": "text", "text": "remember the number 7"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "First answer."}]},
        {"role": "user", "content": [{"type": "text", "text": "which number?"}]},
    ]
    assert [u["seq"] for u in second_server.updates] == [1, 2, 3]  # seq starts again in each process


async def test_list_history_and_delete(lsp):
    lsp.fake_api.add(tool_use("read_file", {"path": "app.py"}, id="toolu_r1", say="Reading."), text("It greets."),
                     text("Another session."))
    client = await lsp.start()
    one = await chat(client, "  what does\napp.py do?  ")
    two = await chat(client, "second")
    listed = (await client.protocol.send_request_async("agent/sessions", {}))["sessions"]
    assert [(s["sessionId"], s["title"], s["turnsCount"]) for s in listed] == [
        (two["sessionId"], "second", 1), (one["sessionId"], "what does app.py do?", 2)]
    assert all(s["createdAt"].endswith("Z") and s["updatedAt"] >= s["createdAt"] for s in listed)
    history = await client.protocol.send_request_async("agent/history", {"sessionId": one["sessionId"]})
    output = "app.py (2 lines)\n     1\tdef greet(name):\n     2\t    return 'hi ' + name"
    assert all(m.pop("durationMs") >= 0 for m in history["messages"] if m["role"] == "assistant")
    chat_one = {"stopReason": "end_turn", "usage": {"inputTokens": 20, "outputTokens": 10, "cacheReadInputTokens": 0,
                                                    "cacheCreationInputTokens": 0}}
    assert history == {"messages": [
        {"role": "user", "content": "  what does\napp.py do?  "},
        {"role": "assistant", "content": "Reading.", **chat_one, "toolCalls": [{
            "toolCallId": "toolu_r1", "name": "read_file", "title": "Read app.py", "toolKind": "read",
            "input": {"path": "app.py"}, "status": "completed", "output": output}]},
        {"role": "assistant", "content": "It greets.", **chat_one},
    ], "plan": []}
    assert await client.protocol.send_request_async("agent/deleteSession", {"sessionId": one["sessionId"]}) \
        == {"deleted": True}
    listed = (await client.protocol.send_request_async("agent/sessions", {}))["sessions"]
    assert [s["sessionId"] for s in listed] == [two["sessionId"]]
    with pytest.raises(JsonRpcInvalidParams):
        await client.protocol.send_request_async("agent/history", {"sessionId": one["sessionId"]})


async def test_sigkill_mid_chat_then_resume(lsp):
    lsp.fake_api.add(text("Answered before the crash."), dict(text("never finished"), hang=True))
    client = await lsp.start()
    first = await chat(client, "one")
    pending = asyncio.ensure_future(chat(client, "two", sessionId=first["sessionId"]))
    def streaming_two() -> bool:  # the second chat's text has started to arrive
        kinds = [u["update"]["kind"] for u in client.updates]
        starts = [i for i, kind in enumerate(kinds) if kind == "turn_start"]
        return len(starts) == 2 and "text_delta" in kinds[starts[1]:]

    await until(streaming_two)
    os.kill(server_process(client).pid, signal.SIGKILL)
    await server_process(client).wait()
    pending.cancel()
    lsp.clients.remove(client)
    restarted = await lsp.start()
    history = await restarted.protocol.send_request_async("agent/history", {"sessionId": first["sessionId"]})
    assert [(m["role"], m["content"], m.get("stopReason")) for m in history["messages"]] == [
        ("user", "one", None), ("assistant", "Answered before the crash.", "end_turn")]
    lsp.fake_api.add(text("Resumed."))
    resumed = await chat(restarted, "three", sessionId=first["sessionId"])
    assert resumed["finalMessage"] == "Resumed."
    assert [m["content"][-1]["text"] for m in sent(lsp.fake_api, 2)] == ["one", "Answered before the crash.", "three"]


async def test_compaction_summarises_older_turns_and_keeps_the_transcript(lsp):
    long = "x" * 1500
    lsp.fake_api.add(text(f"First {long}"), text(f"Second {long}"), text("SUMMARY: two long answers."),
                     text("Third."))
    client = await lsp.start(init_options={"contextWindow": 1000, "compactThreshold": 0.9})
    one = await chat(client, "one")
    await chat(client, "two", sessionId=one["sessionId"])
    third = await chat(client, "three", sessionId=one["sessionId"])
    summary_request = lsp.fake_api.requests[2]
    assert summary_request["system"][0]["text"].startswith("You summarise the earlier part of a coding session")
    assert "tools" not in summary_request
    assert sent(lsp.fake_api, 2) == [{"role": "user", "content": [{"type": "text", "text": f"USER: one\nAGENT: First {long}"}]}]
    # the summary replaces the first exchange; the recent one is kept verbatim, cut before a user message
    assert sent(lsp.fake_api, 3) == [
        {"role": "user", "content": [
            {"type": "text", "text": "<summary of the earlier conversation>\nSUMMARY: two long answers.\n</summary>"},
            {"type": "text", "text": "two"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"Second {long}"}]},
        {"role": "user", "content": [{"type": "text", "text": "three"}]}]
    assert shape(updates_of(client))[-4:] == ["turn_start", "notice", "text_delta", "usage"]
    assert third["finalMessage"] == "Third."
    history = await client.protocol.send_request_async("agent/history", {"sessionId": one["sessionId"]})
    assert [m["content"][:6] for m in history["messages"]] == ["one", "First ", "two", "Second", "three", "Third."]


async def test_consecutive_requests_share_a_byte_identical_cached_prefix(lsp):
    lsp.fake_api.add(tool_use("list_open_buffers", {}), text("Done."), text("Again."))
    client = await lsp.start()
    first = await chat(client, "one")
    await chat(client, "two", sessionId=first["sessionId"])
    requests = lsp.fake_api.requests
    for request in requests:  # the breakpoints: after the system prompt, and on the last block
        assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
        marked = [(i, j) for i, m in enumerate(request["messages"]) for j, b in enumerate(m["content"])
                  if "cache_control" in b]
        assert marked == [(len(request["messages"]) - 1, len(request["messages"][-1]["content"]) - 1)]
    for k in range(1, len(requests)):
        before, after = requests[k - 1], requests[k]
        assert json.dumps(after["tools"]) == json.dumps(before["tools"])
        assert json.dumps(after["system"]) == json.dumps(before["system"])
        n = len(before["messages"])  # everything the earlier request sent comes again, byte for byte
        assert json.dumps(sent(lsp.fake_api, k)[:n]) == json.dumps(sent(lsp.fake_api, k - 1))
    assert len(requests) == 3


async def test_a_corrupt_store_is_moved_aside_and_the_server_starts(lsp):
    lsp.data_dir.mkdir()
    (lsp.data_dir / "sessions.db").write_bytes(b"not a database" * 100)
    lsp.fake_api.add(text("Still here."))
    client = await lsp.start()
    result = await chat(client)
    assert result["finalMessage"] == "Still here."
    (warning,) = [m.message for m in client.messages]
    assert "could not be read" in warning and "moved aside" in warning
    assert [p.name.startswith("sessions.db.unreadable-") for p in lsp.data_dir.iterdir()].count(True) == 1


async def test_two_editor_windows_see_each_others_turns(lsp):
    lsp.fake_api.add(text("From window one."), text("From window two."), text("Window one again."))
    one = await lsp.start()
    two = await lsp.start()
    first = await chat(one, "hello from one")
    await chat(two, "hello from two", sessionId=first["sessionId"])
    await chat(one, "back in one", sessionId=first["sessionId"])
    assert [m["content"][-1]["text"] for m in sent(lsp.fake_api, 2)] == [
        "hello from one", "From window one.", "hello from two", "From window two.", "back in one"]
    assert [u["seq"] for u in one.updates] == list(range(1, 7))  # seq is per process, and carries over a reload
