"""Beyond the chat panel: code actions that start a chat, checkpoints that revert a whole turn, @-mentions, and a
hover that traces an agent's edit (PROTOCOL §8). Any LSP client gets them with no plugin."""

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
    server_env,
    text,
    tool_use,
    waiting_for_confirmation,
)
from tests.waiting import until

SOURCE = "def greet(name):\n    return 'hi ' + nme\n"
OTHER = "VALUE = 1\n"
DIAGNOSTIC = types.Diagnostic(range=types.Range(types.Position(1, 20), types.Position(1, 23)),
                              message="undefined name 'nme'", severity=types.DiagnosticSeverity.Error, source="pyflakes")
FIX = tool_use("edit_file", {"path": "app.py", "old_string": "+ nme", "new_string": "+ name"}, id="toolu_fix")


async def start(lsp, **kwargs):
    """A server that answers agent/debug (AGENT_LSP_DEBUG=1)."""
    return await lsp.start(env=server_env(lsp.fake_api.base_url, AGENT_LSP_DEBUG="1"), **kwargs)


CURSOR = types.Range(types.Position(1, 21), types.Position(1, 21))


def action_request(uri: str, selection: types.Range, diagnostics: list[types.Diagnostic]) -> types.CodeActionParams:
    return types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri), range=selection,
                                  context=types.CodeActionContext(diagnostics=diagnostics))


async def test_code_actions_are_offered_without_loading_the_agent(lsp):
    client = await start(lsp)
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE)
    options = client.initialize_result.capabilities
    assert list(options.code_action_provider.code_action_kinds) == ["quickfix", "refactor"]
    assert sorted(options.execute_command_provider.commands) == ["agent.completionAccepted", "agent.explain", "agent.fix",
                                                                 "agent.nextEditAccepted", "agent.refactor"]

    at_diagnostic = await client.text_document_code_action_async(action_request(uri, CURSOR, [DIAGNOSTIC]))
    (fix,) = at_diagnostic  # the cursor selects nothing, so only the quick fix is offered
    assert (fix.title, fix.kind, fix.command.command) == ("Fix with agent", "quickfix", "agent.fix")
    assert list(fix.diagnostics) == [DIAGNOSTIC]
    (argument,) = fix.command.arguments
    assert argument["uri"] == uri and argument["range"] == {"start": {"line": 1, "character": 20},
                                                            "end": {"line": 1, "character": 23}}
    assert argument["diagnostics"][0]["message"] == "undefined name 'nme'"

    selection = types.Range(types.Position(0, 0), types.Position(1, 0))
    on_selection = await client.text_document_code_action_async(action_request(uri, selection, []))
    assert [(a.title, a.kind, a.command.command) for a in on_selection] == [
        ("Fix with agent", "quickfix", "agent.fix"), ("Explain with agent", "refactor", "agent.explain"),
        ("Refactor with agent…", "refactor", "agent.refactor")]
    assert [list(a.command.arguments) for a in on_selection] == [[{"uri": uri, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}]] * 3
    # a plain line, no diagnostics in the context (a client sends a server only its own, and agent-lsp has none)
    (on_line,) = await client.text_document_code_action_async(action_request(uri, CURSOR, []))
    assert (on_line.title, on_line.kind, on_line.command.command, on_line.diagnostics) == (
        "Fix with agent", "quickfix", "agent.fix", None)
    assert list(on_line.command.arguments) == [{"uri": uri, "range": {"start": {"line": 1, "character": 21},
                                                                "end": {"line": 1, "character": 21}}}]
    only_fixes = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=selection,
        context=types.CodeActionContext(diagnostics=[DIAGNOSTIC], only=[types.CodeActionKind.QuickFix])))
    assert [a.command.command for a in only_fixes] == ["agent.fix"]

    modules = (await client.protocol.send_request_async("agent/debug", {}))["modules"]
    loaded = [m for m in modules if m.startswith(("agent_lsp.lsp.handlers", "agent_lsp.core", "anthropic", "openai"))]
    # the settings' check for surrogates; the language methods `initialize` lists; positions (stdlib only)
    assert sorted(loaded) == ["agent_lsp.core", "agent_lsp.core.language_methods", "agent_lsp.core.positions",
                              "agent_lsp.core.surrogates"]


async def test_fix_with_agent_runs_a_chat_that_edits_through_the_usual_confirmation(lsp):
    lsp.fake_api.add(FIX, text("Fixed the typo."))
    client = await start(lsp, agent={"confirmTool": True}, progress=True)
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE)
    (fix,) = await client.text_document_code_action_async(action_request(uri, CURSOR, [DIAGNOSTIC]))
    task = asyncio.ensure_future(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=fix.command.command, arguments=fix.command.arguments)))
    await until(waiting_for_confirmation(client))
    await confirm(client, "allow_once")
    result = await task
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "Fixed the typo.")
    assert client.docs[uri] == [2, SOURCE.replace("+ nme", "+ name")]
    (asked,) = [b["text"] for b in sent(lsp.fake_api, 0)[0]["content"] if b["text"].startswith("Fix")]
    assert asked == ("Fix this problem in app.py, line 2:\n- undefined name 'nme'\nMake the smallest change that "
                     "fixes it, then check the diagnostics.")
    (token,) = client.progress_reports
    kinds = [type(r).__name__ for r in client.progress_reports[token]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"

    lsp.fake_api.add(text("It greets."))
    explain = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="agent.explain", arguments=[{"uri": uri, "range": {"start": {"line": 0, "character": 0},
                                                                  "end": {"line": 1, "character": 0}}}]))
    assert explain["sessionId"] == result["sessionId"]  # the window's current session goes on


@pytest.mark.parametrize("arguments, field", [
    (None, "arguments"),
    ([{"uri": "file:///elsewhere/x.py", "range": {"start": {"line": 0, "character": 0},
                                                 "end": {"line": 0, "character": 0}}}], "arguments.0.uri"),
    ([{"uri": 3}], "arguments.0.uri"),
])
async def test_a_command_with_bad_arguments_is_invalid_params_and_starts_nothing(lsp, arguments, field):
    client = await start(lsp)
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command="agent.fix",
                                                                                arguments=arguments))
    assert field in raised.value.message
    assert lsp.fake_api.requests == []
    assert (await client.protocol.send_request_async("agent/sessions", {}))["sessions"] == []


async def test_revert_undoes_the_last_chat_and_refuses_a_file_the_user_changed(lsp):
    first = tool_use("edit_file", {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"})
    second_app = tool_use("edit_file", {"path": "app.py", "old_string": "'hello '", "new_string": "'hey '"})
    second_other = tool_use("edit_file", {"path": "other.py", "old_string": "1", "new_string": "2"})
    lsp.fake_api.add(first, text("One."), second_app, second_other, text("Two."))
    client = await lsp.start()
    app = open_doc(client, lsp.workspace / "app.py", SOURCE)
    other = open_doc(client, lsp.workspace / "other.py", OTHER)
    one = await chat(client, "first", permissionMode="bypassPermissions")
    after_one = client.docs[app][1]
    await chat(client, "second", sessionId=one["sessionId"], permissionMode="bypassPermissions")
    assert client.docs[other][1] == "VALUE = 2\n"

    answer = await client.protocol.send_request_async("agent/revert", {"sessionId": one["sessionId"]})
    assert answer == {"reverted": [(lsp.workspace / "app.py").as_uri(), (lsp.workspace / "other.py").as_uri()],
                      "refused": []}
    assert client.docs[app][1] == after_one and client.docs[other][1] == OTHER
    assert client.applied[-1].label == "agent-lsp: revert other.py"

    with pytest.raises(JsonRpcInvalidParams, match="sessionId: nothing to revert"):
        await client.protocol.send_request_async("agent/revert", {"sessionId": one["sessionId"]})

    # the user types into app.py after the first chat's edit: reverting everything leaves app.py alone
    version, current = client.docs[app]
    typed = current + "# mine\n"
    client.docs[app] = [version + 1, typed]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=app, version=version + 1),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed)]))
    lsp.fake_api.add(second_other, text("Again."))
    await chat(client, "third", sessionId=one["sessionId"], permissionMode="bypassPermissions")
    answer = await client.protocol.send_request_async("agent/revert", {"sessionId": one["sessionId"], "toChat": 0})
    assert answer["reverted"] == [other] and [r["uri"] for r in answer["refused"]] == [app]
    assert "changed since" in answer["refused"][0]["reason"]
    assert client.docs[app][1] == typed and client.docs[other][1] == OTHER

    lsp.fake_api.add(text("Noted."))
    await chat(client, "and now?", sessionId=one["sessionId"])
    told = [b["text"] for m in sent(lsp.fake_api, -1) for b in m["content"] if b.get("text", "").startswith("[agent-lsp]")]
    assert told[-1].startswith("[agent-lsp] The user reverted the edits you made in chats 1 to 3 of this session.")


async def test_revert_deletes_a_file_the_chat_created(lsp):
    write = tool_use("write_file", {"path": "notes.txt", "content": "hello\n"})
    lsp.fake_api.add(write, text("Wrote it."))
    no_resource_operations = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
        apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)))
    client = await lsp.start(capabilities=no_resource_operations)
    result = await chat(client, "write notes", permissionMode="bypassPermissions")
    assert (lsp.workspace / "notes.txt").read_text() == "hello\n"
    answer = await client.protocol.send_request_async("agent/revert", {"sessionId": result["sessionId"]})
    assert answer == {"reverted": [(lsp.workspace / "notes.txt").as_uri()], "refused": []}
    assert not (lsp.workspace / "notes.txt").exists()


async def test_mentions_are_expanded_into_the_message_and_a_bad_one_is_named(lsp):
    (lsp.workspace / "other.py").write_text(OTHER)
    lsp.fake_api.add(text("Seen."))
    client = await lsp.start()
    app = open_doc(client, lsp.workspace / "app.py", SOURCE)
    mentions = [{"kind": "file", "uri": (lsp.workspace / "other.py").as_uri()},
                {"kind": "selection", "uri": app, "range": {"start": {"line": 1, "character": 0},
                                                             "end": {"line": 1, "character": 5}}}]
    await chat(client, "look", context={"mentions": mentions})
    (context, message) = sent(lsp.fake_api, 0)[0]["content"]
    assert message == {"type": "text", "text": "look"}
    assert context["text"].endswith(
        "<mentions>\n@file other.py:\n```\nVALUE = 1\n```\n\n"
        "@selection of app.py, lines 2-2:\n```\n    return 'hi ' + nme\n```\n</mentions>")

    outside = [{"kind": "file", "uri": "file:///etc/hostname"}]
    with pytest.raises(JsonRpcInvalidParams, match="context.mentions.0.uri"):
        await chat(client, "look", context={"mentions": outside})
    assert len(lsp.fake_api.requests) == 1


async def test_hover_on_a_line_the_agent_wrote_names_the_chat(lsp):
    lsp.fake_api.add(FIX, text("Fixed."))
    client = await lsp.start()
    uri = open_doc(client, lsp.workspace / "app.py", SOURCE)
    await chat(client, "fix the typo please", permissionMode="bypassPermissions")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, 5)))
    assert hover.contents.value == ("**agent-lsp** wrote this line in chat 1 of this session (edit app.py).\n\n"
                                    "> fix the typo please")
    untouched = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 1)))
    assert untouched is None
    escaped = uri.replace("/app.py", "/%61pp.py")  # another spelling of the same URI (VS Code escapes "c:" so)
    again = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=escaped), position=types.Position(1, 5)))
    assert again is not None and again.contents.value == hover.contents.value
