"""Edits through the editor, commands, and who may run what: each permission mode and each decision."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import (
    chat,
    confirm,
    open_doc,
    sent,
    shape,
    text,
    tool_use,
    updates_of,
    waiting_for_confirmation,
)
from tests.waiting import until

SOURCE = "def greet(name):\n    return 'hi ' + name\n"
EDIT = tool_use("edit_file", {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}, id="toolu_e1")
DIFF = ("--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return 'hi ' + name\n"
        "+    return 'hello ' + name\n")


def result_of(fake_api, request: int, index: int = 0) -> dict:
    """The tool_result block the model received in request number `request`."""
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"][index]


async def test_default_mode_asks_and_allow_once_edits_the_buffer(lsp):
    lsp.fake_api.add(EDIT, text("Changed the greeting."))
    client = await lsp.start(agent={"confirmTool": True})
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE, version=4)
    task = asyncio.ensure_future(chat(client, "say hello"))
    await until(waiting_for_confirmation(client))
    assert await confirm(client, "allow_once") == {"accepted": True}
    result = await task
    updates = updates_of(client)
    assert shape(updates) == ["turn_start", "usage", "tool_call", "tool_call_update:awaiting_confirmation",
                              "confirmation_request", "tool_call_update:running", "tool_call_update:completed",
                              "turn_start", "text_delta", "usage"]
    request = updates[4]
    assert request == {"kind": "confirmation_request", "toolCallId": "toolu_e1", "name": "edit_file",
                       "title": "Edit app.py", "input": EDIT["content"][0]["input"], "diff": DIFF,
                       "options": ["allow_once", "allow_always", "reject_once", "reject_always"]}
    assert updates[6]["diff"] == DIFF
    (applied,) = client.applied
    assert applied.label == "agent-lsp: edit app.py"
    (change,) = applied.edit.document_changes
    assert (change.text_document.uri, change.text_document.version) == (uri, 4)
    assert [(e.range.start.line, e.range.start.character, e.range.end.character, e.new_text)
            for e in change.edits] == [(1, 11, 16, "'hello '")]
    assert client.docs[uri] == [5, SOURCE.replace("'hi '", "'hello '")]
    assert (lsp.workspace / "app.py").read_text() == SOURCE  # the buffer changed, not the disk
    assert result_of(lsp.fake_api, 1)["content"] == (
        f"Edited app.py: replaced 1 occurrence.\n{DIFF}\nNo diagnostics after the edit.")
    assert result["metadata"]["deniedToolCalls"] == 0


async def test_allow_always_allows_that_tool_for_the_rest_of_the_session(lsp):
    second = tool_use("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hey '"})
    lsp.fake_api.add(EDIT, second, text("Twice."))
    client = await lsp.start(agent={"confirmTool": True})
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    task = asyncio.ensure_future(chat(client))
    await until(waiting_for_confirmation(client))
    await confirm(client, "allow_always")
    result = await task
    assert [u["kind"] for u in updates_of(client)].count("confirmation_request") == 1
    assert len(client.applied) == 2 and result["stopReason"] == "end_turn"


async def test_reject_once_passes_the_reason_to_the_model(lsp):
    lsp.fake_api.add(EDIT, text("OK, I left it."))
    client = await lsp.start(agent={"confirmTool": True})
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    task = asyncio.ensure_future(chat(client))
    await until(waiting_for_confirmation(client))
    await confirm(client, "reject_once", "keep it informal")
    result = await task
    assert shape(updates_of(client))[3:6] == ["tool_call_update:awaiting_confirmation", "confirmation_request",
                                              "tool_call_update:rejected"]
    assert result_of(lsp.fake_api, 1) == {"type": "tool_result", "tool_use_id": "toolu_e1", "is_error": True,
                                          "content": "The user declined this tool call. Their reason: keep it informal"}
    assert client.applied == [] and result["metadata"]["deniedToolCalls"] == 1


async def test_reject_always_refuses_without_asking_again(lsp):
    lsp.fake_api.add(EDIT, text("Understood."), EDIT, text("Still refused."))
    client = await lsp.start(agent={"confirmTool": True})
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    task = asyncio.ensure_future(chat(client))
    await until(waiting_for_confirmation(client))
    await confirm(client, "reject_always")
    first = await task
    second = await chat(client, "try again", sessionId=first["sessionId"])
    assert [u["kind"] for u in updates_of(client)].count("confirmation_request") == 1
    assert result_of(lsp.fake_api, 3)["content"] == "The user refused edit_file for the rest of this session."
    assert second["metadata"]["deniedToolCalls"] == 1 and client.applied == []


async def test_accept_edits_runs_edits_and_asks_for_commands(lsp):
    command = tool_use("run_command", {"command": "echo from-the-shell"}, id="toolu_c1")
    lsp.fake_api.add(EDIT, command, text("Done."))
    client = await lsp.start(agent={"confirmTool": True})
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    task = asyncio.ensure_future(chat(client, permissionMode="acceptEdits"))
    await until(waiting_for_confirmation(client))
    (request,) = [u["update"] for u in client.updates if u["update"]["kind"] == "confirmation_request"]
    assert (request["name"], request["command"]) == ("run_command", "echo from-the-shell")
    await confirm(client, "allow_once")
    await task
    assert len(client.applied) == 1
    assert result_of(lsp.fake_api, 2)["content"] == "Exit code 0\nfrom-the-shell"


async def test_plan_mode_does_not_offer_edits_or_commands(lsp):
    lsp.fake_api.add(text("Here is a plan."))
    client = await lsp.start(init_options={"permissionMode": "plan"})
    await chat(client)
    offered = [t["name"] for t in lsp.fake_api.requests[0]["tools"]]
    assert offered == ["list_open_buffers", "read_file", "list_files", "search", "get_diagnostics", "todo_write",
                       "task"]


async def test_bypass_permissions_runs_everything_without_asking(lsp):
    write = tool_use("write_file", {"path": "new/notes.txt", "content": "hello\n"}, id="toolu_w1")
    command = tool_use("run_command", {"command": "cat new/notes.txt; exit 3"}, id="toolu_c1")
    lsp.fake_api.add(write, command, text("Done."))
    client = await lsp.start(agent={"confirmTool": True})
    await chat(client, permissionMode="bypassPermissions")
    assert "confirmation_request" not in [u["kind"] for u in updates_of(client)]
    (applied,) = client.applied
    create, edit = applied.edit.document_changes
    assert (create.kind, create.uri) == ("create", (lsp.workspace / "new/notes.txt").as_uri())
    assert (edit.text_document.version, [e.new_text for e in edit.edits]) == (None, ["hello\n"])
    # the test editor records the new file but does not create it on disk
    assert result_of(lsp.fake_api, 2)["content"] == "Exit code 3\ncat: new/notes.txt: No such file or directory"


@pytest.mark.parametrize("answer, status, applied", [("Allow once", "completed", 1), (None, "rejected", 0)])
async def test_show_message_request_fallback(lsp, answer, status, applied):
    lsp.fake_api.add(EDIT, text("ok"))
    client = await lsp.start()  # no experimental.agent.confirmTool
    client.message_answer = answer
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    await chat(client)
    (request,) = client.message_requests
    assert [a.title for a in request.actions] == ["Allow once", "Allow always", "Reject"]
    assert "edit_file" in request.message
    assert shape(updates_of(client))[-4] == f"tool_call_update:{status}" and len(client.applied) == applied


async def test_an_edit_the_client_refuses_fails_and_tells_the_model_to_reread(lsp):
    lsp.fake_api.add(EDIT, text("I will re-read."))
    client = await lsp.start()
    client.apply_result = {"applied": False, "failure_reason": "version mismatch"}
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    await chat(client, permissionMode="acceptEdits")
    assert shape(updates_of(client))[3:5] == ["tool_call_update:running", "tool_call_update:failed"]
    assert result_of(lsp.fake_api, 1)["content"] == (
        "The editor did not apply the edit to app.py (version mismatch). The file may have changed since you read "
        "it: read it again, then retry the edit.")


async def test_a_client_that_never_answers_apply_edit_is_a_bounded_tool_error(lsp):
    lsp.fake_api.add(EDIT, text("Moving on."))
    client = await lsp.start(client_timeout=1.5)
    client.apply_gate = asyncio.Event()  # never set before the server has given up
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    result = await chat(client, permissionMode="acceptEdits")
    client.apply_gate.set()
    assert result["stopReason"] == "end_turn"
    assert result_of(lsp.fake_api, 1) == {"type": "tool_result", "tool_use_id": "toolu_e1", "is_error": True,
                                          "content": "The editor did not answer workspace/applyEdit within 2 s."}


async def test_edit_errors_are_tool_errors_saying_which(lsp):
    missing = tool_use("edit_file", {"path": "app.py", "old_string": "absent", "new_string": "x"})
    twice = tool_use("edit_file", {"path": "app.py", "old_string": "name", "new_string": "who"})
    outside = tool_use("read_file", {"path": "../secret.txt"})
    lsp.fake_api.add(missing, twice, outside, text("ok"))
    client = await lsp.start()
    open_doc(client, lsp.workspace / "app.py", SOURCE)
    await chat(client, permissionMode="acceptEdits")
    assert result_of(lsp.fake_api, 1)["content"].startswith("old_string was not found in app.py.")
    assert result_of(lsp.fake_api, 2)["content"].startswith("old_string occurs 2 times in app.py (lines 1, 2)")
    assert result_of(lsp.fake_api, 3)["content"].startswith("../secret.txt is outside the workspace folders")
    assert client.applied == []


async def test_confirm_tool_for_an_unknown_call_is_invalid_params(lsp):
    lsp.fake_api.add(text("hi"))
    client = await lsp.start()
    result = await chat(client)
    with pytest.raises(JsonRpcInvalidParams) as error:
        await client.protocol.send_request_async(
            "agent/confirmTool", {"sessionId": result["sessionId"], "toolCallId": "nope", "decision": "allow_once"})
    assert "toolCallId:" in error.value.message


async def test_diagnostics_come_from_the_editor_when_it_declares_them(lsp):
    lsp.fake_api.add(tool_use("get_diagnostics", {"path": "app.py"}), text("One warning."))
    client = await lsp.start(agent={"diagnostics": True})
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE)
    client.editor_diagnostics = {"items": [{"uri": uri, "diagnostics": [{
        "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 10}},
        "severity": 2, "message": "unused thing", "source": "pyright"}]}]}
    await chat(client)
    assert client.diagnostics_requests == [{"uris": [uri]}]
    assert result_of(lsp.fake_api, 1)["content"] == "app.py:2:5: warning: unused thing [pyright]"


async def test_without_the_capability_the_server_finds_python_syntax_errors(lsp):
    lsp.fake_api.add(tool_use("get_diagnostics", {}), text("Broken."))
    client = await lsp.start()
    open_doc(client, lsp.workspace / "app.py", "def broken(:\n    pass\n")
    await chat(client)
    assert client.diagnostics_requests == []
    assert result_of(lsp.fake_api, 1)["content"] == (
        "The editor's diagnostics were not available (the editor does not share them with agent-lsp); "
        "these are the syntax errors agent-lsp found itself.\napp.py:1:12: error: invalid syntax [agent-lsp]")


@pytest.mark.parametrize("encodings, column", [(None, 12), (["utf-8"], 15), (["utf-32"], 11)])
async def test_edit_columns_follow_the_negotiated_position_encoding(lsp, encodings, column):
    line = "s = '😀é' + old\n"  # 😀 is 2 UTF-16 units and 4 UTF-8 bytes; é is 1 and 2
    lsp.fake_api.add(tool_use("edit_file", {"path": "u.py", "old_string": "old", "new_string": "new"}), text("ok"))
    caps = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
        workspace=types.WorkspaceClientCapabilities(apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True)))
    client = await lsp.start(capabilities=caps)
    open_doc(client, lsp.workspace / "u.py", line)
    await chat(client, permissionMode="acceptEdits")
    (change,) = client.applied[0].edit.document_changes
    assert [(e.range.start.character, e.range.end.character) for e in change.edits] == [(column, column + 3)]


async def test_an_edit_result_carries_the_editors_diagnostics_after_the_edit(lsp):
    lsp.fake_api.add(EDIT, text("ok"))
    client = await lsp.start(agent={"diagnostics": True})
    client.change_after_answer = 0.3  # the editor answers applyEdit first and sends didChange later
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE)
    client.editor_diagnostics = {"items": [{"uri": uri, "diagnostics": [{
        "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 19}},
        "severity": 1, "message": "greeting too long", "source": "lint"}]}]}
    await chat(client, permissionMode="acceptEdits")
    assert client.diagnostics_requests == [{"uris": [uri]}]
    assert client.versions_seen_by_diagnostics == [{uri: 2}]  # asked once the edit's didChange had arrived
    assert result_of(lsp.fake_api, 1)["content"] == (
        f"Edited app.py: replaced 1 occurrence.\n{DIFF}\nDiagnostics after the edit:\n"
        "app.py:2:12: error: greeting too long [lint]")
