"""Protocol 1.1 sessions (PROTOCOL §8): features, agent/newSession, sessions per workspace, usage, full history."""

from __future__ import annotations

import asyncio

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.capabilities import FEATURES
from tests.e2e.conftest import chat, open_doc, text
from tests.waiting import until

SOURCE = "def greet(name):\n    return 'hi ' + name\n"
DIFF = ("--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return 'hi ' + name\n"
        "+    return 'hello ' + name\n")


def usage(input_tokens: int, output_tokens: int, cache_read: int = 0, cache_creation: int = 0) -> dict:
    return {"inputTokens": input_tokens, "outputTokens": output_tokens, "cacheReadInputTokens": cache_read,
            "cacheCreationInputTokens": cache_creation}


async def request(client, method: str, params: dict) -> dict:
    return await client.protocol.send_request_async(method, params)


async def test_initialize_lists_the_features(lsp):
    client = await lsp.start()
    agent = client.initialize_result.capabilities.experimental["agent"]
    assert agent["features"] == FEATURES and "newSession" in FEATURES


async def test_new_session_is_known_before_its_first_chat_and_stored(lsp):
    lsp.fake_api.add(text("First."), text("Titled."))
    client = await lsp.start()
    untitled = (await request(client, "agent/newSession", {}))["sessionId"]
    titled = (await request(client, "agent/newSession", {"title": "  Refactor\n the greeting "}))["sessionId"]
    listed = (await request(client, "agent/sessions", {}))["sessions"]
    assert sorted((s["sessionId"], s["title"], s["turnsCount"]) for s in listed) == sorted(
        [(untitled, "", 0), (titled, "Refactor the greeting", 0)])
    first = await chat(client, "what does app.py do?", sessionId=untitled)
    assert first["sessionId"] == untitled and {u["sessionId"] for u in client.updates} == {untitled}
    await chat(client, "go on", sessionId=titled)
    await lsp.stop_client(client)

    restarted = await lsp.start()
    listed = (await request(restarted, "agent/sessions", {}))["sessions"]
    assert [(s["sessionId"], s["title"], s["turnsCount"]) for s in listed] == [
        (titled, "Refactor the greeting", 1), (untitled, "what does app.py do?", 1)]
    lsp.fake_api.add(text("Fresh."))
    fresh = await chat(restarted, "a chat without a session")  # agent/chat without sessionId still starts one
    assert fresh["sessionId"] not in (titled, untitled) and fresh["finalMessage"] == "Fresh."


@pytest.mark.parametrize("params, field", [({"title": 5}, "title"), ({"title": ["a"]}, "title")])
async def test_new_session_bad_params_name_the_field(lsp, params, field):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await request(client, "agent/newSession", params)
    assert f"{field}:" in raised.value.message
    assert (await request(client, "agent/sessions", {}))["sessions"] == []


async def test_sessions_are_listed_per_workspace_with_their_usage(lsp, tmp_path):
    lsp.fake_api.add(text("In one.", usage={"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 40}),
                     text("In one again.", usage={"input_tokens": 150, "output_tokens": 9}),
                     text("In two."))
    one_root, two_root = lsp.workspace, (tmp_path / "other ws").resolve()
    two_root.mkdir()
    one = await lsp.start()
    lsp.workspace = two_root
    two = await lsp.start()
    in_one = await chat(one, "one")
    await chat(one, "one again", sessionId=in_one["sessionId"])
    in_two = await chat(two, "two")

    def entry(result: dict, root, title: str, turns: int, used: dict) -> dict:
        return {"sessionId": result["sessionId"], "title": title, "turnsCount": turns, "workspace": root.as_uri(),
                "usage": used}

    def listed(answer: dict) -> list[dict]:
        return [{k: v for k, v in s.items() if k not in ("createdAt", "updatedAt")} for s in answer["sessions"]]

    first = entry(in_one, one_root, "one", 2, usage(250, 16, 40))
    second = entry(in_two, two_root, "two", 1, usage(10, 5))
    assert listed(await request(one, "agent/sessions", {"workspace": one_root.as_uri()})) == [first]
    assert listed(await request(one, "agent/sessions", {"workspace": two_root.as_uri() + "/"})) == [second]
    assert "%20" in two_root.as_uri()  # the spelling of a folder's URI does not matter, its path does
    assert listed(await request(two, "agent/sessions", {"workspace": f"file://{two_root}"})) == [second]
    assert listed(await request(two, "agent/sessions", {})) == [second, first]
    assert listed(await request(two, "agent/sessions", {"workspace": (tmp_path / "none").as_uri()})) == []
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await request(one, "agent/sessions", {"workspace": 3})
    assert "workspace:" in raised.value.message


async def test_history_has_tool_outputs_errors_diffs_and_each_chats_usage(lsp):
    edit = {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}
    lsp.fake_api.add(
        {"content": [{"type": "text", "text": "Reading and editing."},
                     {"type": "tool_use", "id": "toolu_r", "name": "read_file", "input": {"path": "gone.py"}},
                     {"type": "tool_use", "id": "toolu_e", "name": "edit_file", "input": edit}],
         "usage": {"input_tokens": 200, "output_tokens": 30}},
        text("Done.", usage={"input_tokens": 300, "output_tokens": 4, "cache_read_input_tokens": 200}),
        text("Nothing else.", stop_reason="end_turn"),
    )
    client = await lsp.start(agent={"confirmTool": True}, init_options={"permissionMode": "acceptEdits"})
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    first = await chat(client, "fix it")
    second = await chat(client, "anything else?", sessionId=first["sessionId"])
    assert first["metadata"]["usage"] == usage(500, 34, 200) and second["metadata"]["usage"] == usage(10, 5)
    streamed = {u["update"]["toolCallId"]: u["update"] for u in client.updates
                if u["update"]["kind"] == "tool_call_update" and u["update"]["status"] in ("completed", "failed")}
    history = await request(client, "agent/history", {"sessionId": first["sessionId"]})
    durations = [(m["content"], m.pop("durationMs")) for m in history["messages"] if m["role"] == "assistant"]
    one, two = first["metadata"]["durationMs"], second["metadata"]["durationMs"]
    assert durations == [("Reading and editing.", one), ("Done.", one), ("Nothing else.", two)]
    gone = f"{(lsp.workspace / 'gone.py')} does not exist."
    assert streamed["toolu_r"]["error"] == gone and streamed["toolu_e"]["diff"] == DIFF
    chat_one = {"usage": usage(500, 34, 200), "stopReason": "end_turn"}
    assert history == {"messages": [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "Reading and editing.", **chat_one, "toolCalls": [
            {"toolCallId": "toolu_r", "name": "read_file", "title": "Read gone.py", "toolKind": "read",
             "input": {"path": "gone.py"}, "status": "failed", "error": gone},
            {"toolCallId": "toolu_e", "name": "edit_file", "title": "Edit app.py", "toolKind": "edit",
             "input": edit, "status": "completed", "output": streamed["toolu_e"]["output"], "diff": DIFF}]},
        {"role": "assistant", "content": "Done.", **chat_one},
        {"role": "user", "content": "anything else?"},
        {"role": "assistant", "content": "Nothing else.", "usage": usage(10, 5), "stopReason": "end_turn"},
    ], "plan": []}
    assert streamed["toolu_e"]["output"].startswith("Edited app.py")


async def test_an_aborted_chat_counts_the_usage_of_its_cut_stream(lsp):
    started = {"type": "message_start", "message": {
        "id": "msg_cut", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 1, "cache_read_input_tokens": 30,
                  "cache_creation_input_tokens": 8}}}
    lsp.fake_api.add({"events": [
        started,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Working on it"}},
    ], "hang": True})
    client = await lsp.start()
    task = asyncio.ensure_future(chat(client, "go"))
    await until(lambda: any(u["update"]["kind"] == "text_delta" for u in client.updates))
    session_id = client.updates[0]["sessionId"]
    assert await request(client, "agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await task
    used = usage(120, 1, 30, 8)
    assert result["stopReason"] == "aborted" and result["metadata"]["usage"] == used
    (listed,) = (await request(client, "agent/sessions", {}))["sessions"]
    assert listed["usage"] == used
    history = await request(client, "agent/history", {"sessionId": session_id})
    assert [(m["role"], m["content"], m.get("stopReason"), m.get("usage")) for m in history["messages"]] == [
        ("user", "go", None, None), ("assistant", "Working on it", "aborted", used)]
