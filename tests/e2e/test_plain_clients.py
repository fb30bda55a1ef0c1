"""A plain LSP client: one that declares nothing of `experimental.agent` (vim-lsp, Helix, Kakoune, lsp-mode…), so
it draws no `agent/update`, drops the result of `workspace/executeCommand` and confirms through
`window/showMessageRequest`. It still gets "Fix with agent" on any line, sees the change in each question, and
sees each chat's answer (window/showMessage, and the transcript through window/showDocument where it has it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types

from tests.e2e.conftest import open_doc, sent, text, tool_use
from tests.waiting import until

BROKEN = "def greet(name):\n    return 'hi ' + (name\n"
"""Line 2 does not parse: the server's own syntax check finds it."""


def capabilities(show_document: bool) -> types.ClientCapabilities:
    """What a plain client declares: edits, progress, maybe showDocument; no experimental.agent."""
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(
            work_done_progress=True,
            show_document=types.ShowDocumentClientCapabilities(support=True) if show_document else None),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)))


def line_range(line: int) -> types.Range:
    return types.Range(types.Position(line, 4), types.Position(line, 4))


async def code_actions(client, uri: str, selection: types.Range) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=selection,
        context=types.CodeActionContext(diagnostics=[])))


async def run(client, action: types.CodeAction) -> dict:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments))


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


async def test_fix_on_a_plain_line_gathers_the_syntax_check_and_the_answer_is_shown(lsp):
    lsp.fake_api.add(tool_use("edit_file", {"path": "app.py", "old_string": "(name\n", "new_string": "name\n"}),
                     text("Closed the parenthesis: **line 2** parses again."))
    client = await lsp.start(capabilities=capabilities(show_document=True))
    client.message_answer = "Allow once"
    uri = open_doc(client, lsp.workspace / "app.py", BROKEN)
    (fix,) = await code_actions(client, uri, line_range(1))
    assert (fix.title, fix.kind) == ("Fix with agent", "quickfix")

    result = await run(client, fix)
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn",
                                                             "Closed the parenthesis: **line 2** parses again.")
    (asked,) = [b["text"] for b in sent(lsp.fake_api, 0)[0]["content"] if b["text"].startswith("Fix")]
    assert asked.startswith("Fix this problem in app.py, line 2:\n- line 2: ")
    assert asked.endswith("\nMake the smallest change that fixes it, then check the diagnostics.")
    assert client.docs[uri] == [2, BROKEN.replace("(name\n", "name\n")]

    # the answer, where every client shows something, naming where the whole of it is
    await until(lambda: len(client.shown_documents) == 2)  # the diff before the question, then the transcript
    transcript = path_of(client.shown_documents[-1].uri)
    assert transcript.name == "transcript.md" and lsp.data_dir in transcript.parents
    assert [m.message for m in client.messages] == [
        f"agent-lsp: Closed the parenthesis: **line 2** parses again. (the whole answer: {transcript})"]
    assert client.messages[0].type == types.MessageType.Info
    assert [d.take_focus for d in client.shown_documents] == [False, False]  # the focus stays in the code
    assert path_of(client.shown_documents[0].uri).suffix == ".diff"
    written = transcript.read_text()
    assert written.startswith("# agent-lsp: Fix this problem") and "## You\n\nFix this problem" in written
    assert "edit_file): completed" in written and "-    return 'hi ' + (name" in written
    assert written.rstrip().endswith("Closed the parenthesis: **line 2** parses again.")
    assert client.updates != []  # agent/update is still sent (a client that does not know it ignores it)

    # the transcript goes with its session
    await client.protocol.send_request_async("agent/deleteSession", {"sessionId": result["sessionId"]})
    assert not transcript.parent.exists()


async def test_the_question_shows_the_change_and_opens_the_diff_before_asking(lsp):
    long_text = "".join(f"line {i}\n" for i in range(40))
    lsp.fake_api.add(tool_use("edit_file", {"path": "app.py", "old_string": BROKEN, "new_string": long_text}),
                     tool_use("run_command", {"command": "echo hello > ran.txt"}),
                     text("Done."))
    client = await lsp.start(capabilities=capabilities(show_document=True))
    client.message_answer = "Allow once"
    uri = open_doc(client, lsp.workspace / "app.py", BROKEN)
    (fix, explain, refactor) = await code_actions(client, uri, types.Range(types.Position(0, 0),
                                                                          types.Position(2, 0)))
    assert [fix.title, explain.title, refactor.title] == ["Fix with agent", "Explain with agent",
                                                         "Refactor with agent…"]
    task = asyncio.ensure_future(run(client, refactor))
    await until(lambda: len(client.message_requests) == 1)
    client.message_answer = None  # the command: no answer, so it is rejected
    result = await task
    assert result["stopReason"] == "end_turn"

    edit, command = client.message_requests
    assert [a.title for a in edit.actions] == ["Allow once", "Allow always", "Reject"]  # the safe common one first
    lines = edit.message.splitlines()
    assert lines[0] == "agent-lsp wants to run edit_file: Edit app.py." and lines[-1] == "Allow?"
    diff = lines[1:-1]
    assert len(diff) == 31 and diff[-1].startswith("… ") and diff[-1].endswith(" more lines")
    assert "-def greet(name):" in diff and "+line 0" in diff
    # the whole diff was opened before the question; the command's question names its command line
    (before_edit, before_command) = client.shown_before_questions
    (diff_uri,) = before_edit
    whole = path_of(diff_uri).read_text()
    assert path_of(diff_uri).suffix == ".diff" and "+line 39" in whole and lsp.data_dir in path_of(diff_uri).parents
    assert int(diff[-1].split()[1]) == len(whole.rstrip("\n").splitlines()) - 30
    assert command.message == ("agent-lsp wants to run run_command: `echo hello > ran.txt`.\n"
                               "$ echo hello > ran.txt\nAllow?")
    assert before_command == before_edit  # no diff to open for a command
    assert client.docs[uri][1] == long_text and not (lsp.workspace / "ran.txt").exists()


async def test_fix_on_a_plain_line_lists_the_editors_diagnostics_there_when_declared(lsp):
    lsp.fake_api.add(text("Renamed it."))
    client = await lsp.start(agent={"diagnostics": True})
    uri = open_doc(client, lsp.workspace / "app.py", "def greet(name):\n    return 'hi ' + nme\n")
    at = lambda line: {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}}
    client.editor_diagnostics = {"items": [{"uri": uri, "diagnostics": [
        {"range": at(1), "message": "undefined name 'nme'", "severity": 1, "source": "pyflakes"},
        {"range": at(0), "message": "missing docstring", "severity": 3}]}]}
    (fix,) = await code_actions(client, uri, line_range(1))
    await run(client, fix)
    assert client.diagnostics_requests == [{"uris": [uri]}]
    (asked,) = [b["text"] for b in sent(lsp.fake_api, 0)[0]["content"] if b["text"].startswith("Fix")]
    assert asked == ("Fix this problem in app.py, line 2:\n- line 2: undefined name 'nme' (pyflakes)\nMake the "
                     "smallest change that fixes it, then check the diagnostics.")
    assert client.messages == []  # it declared experimental.agent: it shows the chat itself


async def test_a_clean_line_says_nothing_was_found_and_a_question_answered_with_an_error_rejects(lsp):
    lsp.fake_api.add(tool_use("write_file", {"path": "new.py", "content": "x = 2\n"}), text("Could not write."))
    client = await lsp.start(capabilities=capabilities(show_document=False))
    client.message_answer = Exception
    uri = open_doc(client, lsp.workspace / "app.py", "x = 1\n")
    (fix,) = await code_actions(client, uri, line_range(0))
    result = await run(client, fix)
    (asked,) = [b["text"] for b in sent(lsp.fake_api, 0)[0]["content"] if b["text"].startswith("Fix")]
    assert asked == ("Fix the problem in app.py, line 1 (the server's syntax check finds nothing there, and the "
                     "editor's diagnostics were not available): read the code, find what is wrong, make the "
                     "smallest change that fixes it, then check the diagnostics.")
    assert len(client.message_requests) == 1 and result["metadata"]["deniedToolCalls"] == 1
    assert not (lsp.workspace / "new.py").exists()
    assert [m.message.split(" (the whole")[0] for m in client.messages] == ["agent-lsp: Could not write."]


async def test_a_client_without_show_document_gets_the_answer_as_a_bounded_message(lsp):
    long_answer = "word " * 300
    lsp.fake_api.add(text(long_answer))
    client = await lsp.start(capabilities=capabilities(show_document=False))
    uri = open_doc(client, lsp.workspace / "app.py", "x = 1\n")
    (explain,) = [a for a in await code_actions(client, uri, types.Range(types.Position(0, 0), types.Position(1, 0)))
                  if a.title == "Explain with agent"]
    result = await run(client, explain)
    assert result["finalMessage"] == long_answer
    await until(lambda: client.messages != [])
    (message,) = client.messages
    head, where = message.message.split(" (the whole answer: ")
    assert head.startswith("agent-lsp: word word") and head.endswith("…") and len(head) < 420
    transcript = Path(where.rstrip(")"))
    assert transcript.read_text().rstrip().endswith(long_answer.strip())
    assert client.shown_documents == []


async def test_a_client_that_declares_the_agent_gets_no_message_for_an_answer(lsp):
    lsp.fake_api.add(text("It sets x."))
    client = await lsp.start(agent={"confirmTool": True}, capabilities=None)
    uri = open_doc(client, lsp.workspace / "app.py", "x = 1\n")
    (_, explain, _) = await code_actions(client, uri, types.Range(types.Position(0, 0), types.Position(1, 0)))
    assert (await run(client, explain))["finalMessage"] == "It sets x."
    assert client.messages == [] and client.shown_documents == []


async def test_a_cancel_for_an_answered_request_logs_no_warning(lsp):
    client = await lsp.start(capabilities=capabilities(show_document=False))
    uri = open_doc(client, lsp.workspace / "app.py", "x = 1\n")
    msg_id = "answered-1"
    answer = client.protocol.send_request_async(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=line_range(0),
        context=types.CodeActionContext(diagnostics=[])), msg_id=msg_id)
    assert [a.title for a in await answer] == ["Fix with agent"]
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    assert await code_actions(client, uri, line_range(0))  # the cancel was read before this answer
    lsp.clients.remove(client)
    await asyncio.wait_for(client.shutdown_async(None), 60)
    code, stderr = await client.exit_and_read_stderr()
    await client.stop()
    assert code == 0 and "WARNING" not in stderr and "Cancel" not in stderr, stderr
