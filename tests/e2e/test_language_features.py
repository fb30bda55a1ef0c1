"""Language intelligence from the editor (PROTOCOL §9): the real server asks a client that declared
`experimental.agent.languageFeatures` with `agent/languageFeature`, in UTF-16, and the model reads characters."""

from __future__ import annotations

import asyncio
from typing import Any

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

LANGUAGE_TOOLS = ["find_symbol", "go_to_definition", "find_references", "hover", "document_symbols",
                  "call_hierarchy", "rename_symbol"]
EVERY_METHOD = ["textDocument/definition", "textDocument/references", "textDocument/hover",
                "textDocument/documentSymbol", "workspace/symbol", "textDocument/prepareCallHierarchy",
                "callHierarchy/incomingCalls", "callHierarchy/outgoingCalls", "textDocument/rename"]
APP = 'from lib import load\n\nMOOD = "😀"; value = load("x")\n'  # the emoji: 1 character, 2 UTF-16 units
LIB = "def load(name):\n    return name\n"


def r(line: int, start: int, end: int) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def answering(client, answers: dict[str, Any], hang: bool = False) -> None:
    """The editor's side: answer agent/languageFeature from `answers` (method → result or a function of the
    request's params giving it), or never (`hang`),
    recording the requests and those the server cancelled."""
    client.language_requests = []
    client.language_cancelled = []

    @client.feature("agent/languageFeature")
    async def on_language_feature(ls, params):
        ls.language_requests.append(params)
        if hang:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:  # the server's $/cancelRequest
                ls.language_cancelled.append(params)
                raise
        answer = answers.get(params["method"])
        return answer(params["params"]) if callable(answer) else answer


async def start(lsp, methods=EVERY_METHOD, timeout: float = 120, **kwargs):
    return await lsp.start(agent={"confirmTool": True, "languageFeatures": methods},
                           init_options={"languageTimeout": timeout}, **kwargs)


def tool_results(fake_api, index: int) -> list[dict]:
    """The tool_result blocks of the model request `index`."""
    return [b for b in sent(fake_api, index)[-1]["content"] if b.get("type") == "tool_result"]


async def list_tools(client) -> list[dict]:
    return (await client.protocol.send_request_async("agent/tools", {}))["tools"]


async def test_references_definition_and_hover_reach_the_model_in_characters(lsp):
    app, lib = (lsp.workspace / "app.py"), (lsp.workspace / "lib.py")
    app.write_text(APP)
    lib.write_text(LIB)
    references = [{"uri": lib.as_uri(), "range": r(0, 4, 8)}, {"uri": app.as_uri(), "range": r(2, 21, 25)},
                  {"uri": app.as_uri(), "range": r(0, 16, 20)}]
    definition = [{"originSelectionRange": r(2, 21, 25), "targetUri": lib.as_uri(), "targetRange": r(0, 0, 31),
                   "targetSelectionRange": r(0, 4, 8)}]
    hover = {"contents": {"kind": "markdown", "value": "```python\ndef load(name: str) -> str\n```"},
             "range": r(2, 21, 25)}
    lsp.fake_api.add(
        tool_use("find_references", {"path": "app.py", "line": 3, "column": 21}, id="toolu_r"),
        tool_use("go_to_definition", {"path": "app.py", "line": 3, "column": 23}, id="toolu_d"),
        tool_use("hover", {"path": "app.py", "line": 3, "column": 21}, id="toolu_h"),
        tool_use("find_references", {"path": "app.py", "line": 2, "column": 1}, id="toolu_n"),
        text("Done."))
    client = await start(lsp)
    assert "languageFeatures" in client.initialize_result.capabilities.experimental["agent"]["features"]
    answering(client, {"textDocument/references": lambda p: references if p["position"]["line"] == 2 else [],
                       "textDocument/definition": definition,
                       "textDocument/hover": hover})
    open_doc(client, app, APP)
    result = await chat(client, "who uses load?")
    assert result["stopReason"] == "end_turn" and result["finalMessage"] == "Done."

    offered = [t["name"] for t in lsp.fake_api.requests[0]["tools"]]
    assert [n for n in offered if n in LANGUAGE_TOOLS] == LANGUAGE_TOOLS
    assert tool_results(lsp.fake_api, 1) == [{"type": "tool_result", "tool_use_id": "toolu_r", "content":
                                              "app.py:1:17: from lib import load\n"
                                              'app.py:3:21: MOOD = "😀"; value = load("x")\n'
                                              "lib.py:1:5: def load(name):"}]
    assert tool_results(lsp.fake_api, 2) == [{"type": "tool_result", "tool_use_id": "toolu_d",
                                              "content": "lib.py:1:5: def load(name):"}]
    assert tool_results(lsp.fake_api, 3) == [{"type": "tool_result", "tool_use_id": "toolu_h",
                                              "content": "```python\ndef load(name: str) -> str\n```"}]
    (nothing,) = tool_results(lsp.fake_api, 4)
    assert nothing["is_error"] is True and nothing["content"].startswith(
        "No references found at app.py:2:1: the position names no symbol")

    uri = app.as_uri()
    assert client.language_requests == [  # positions in UTF-16: the emoji counts twice
        {"method": "textDocument/references", "params": {"textDocument": {"uri": uri},
                                                         "position": {"line": 2, "character": 21},
                                                         "context": {"includeDeclaration": False}}},
        {"method": "textDocument/definition", "params": {"textDocument": {"uri": uri},
                                                         "position": {"line": 2, "character": 23}}},
        {"method": "textDocument/hover", "params": {"textDocument": {"uri": uri},
                                                    "position": {"line": 2, "character": 21}}},
        {"method": "textDocument/references", "params": {"textDocument": {"uri": uri},
                                                         "position": {"line": 1, "character": 0},
                                                         "context": {"includeDeclaration": False}}},
    ]
    assert [u["status"] for u in updates_of(client) if u["kind"] == "tool_call_update" and u["status"] != "running"] \
        == ["completed", "completed", "completed", "failed"]


RENAME_APP = "from lib import load\n\nvalue = load('x')\n"


async def test_rename_asks_once_with_a_diff_per_file_applies_versioned_and_reverts(lsp):
    app, lib = (lsp.workspace / "app.py"), (lsp.workspace / "lib.py")
    app.write_text(RENAME_APP)
    lib.write_text(LIB)
    edit = {"documentChanges": [
        {"textDocument": {"uri": app.as_uri(), "version": 1}, "edits": [
            {"range": r(0, 16, 20), "newText": "fetch"}, {"range": r(2, 8, 12), "newText": "fetch"}]},
        {"textDocument": {"uri": lib.as_uri(), "version": 1}, "edits": [{"range": r(0, 4, 8), "newText": "fetch"}]},
    ]}
    rename = tool_use("rename_symbol", {"path": "lib.py", "line": 1, "column": 5, "newName": "fetch"}, id="toolu_n")
    lsp.fake_api.add(rename, text("Renamed."))
    client = await start(lsp)
    answering(client, {"textDocument/rename": edit})
    app_uri, lib_uri = open_doc(client, app, RENAME_APP), open_doc(client, lib, LIB)
    task = asyncio.ensure_future(chat(client, "rename load to fetch"))
    await until(waiting_for_confirmation(client))
    (request,) = [u["update"] for u in client.updates if u["update"]["kind"] == "confirmation_request"]
    assert request["name"] == "rename_symbol"
    assert request["diff"] == (
        "--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n-from lib import load\n+from lib import fetch\n \n"
        "-value = load('x')\n+value = fetch('x')\n"
        "--- a/lib.py\n+++ b/lib.py\n@@ -1,2 +1,2 @@\n-def load(name):\n+def fetch(name):\n     return name\n")
    await confirm(client, "allow_once")
    result = await task
    assert result["finalMessage"] == "Renamed."
    (done,) = tool_results(lsp.fake_api, 1)
    assert done["content"].startswith("Renamed load to fetch: 3 edits in 2 files (app.py, lib.py).\n--- a/app.py")
    assert "is_error" not in done
    (call_update,) = [u for u in updates_of(client) if u["kind"] == "tool_call_update" and u["status"] == "completed"]
    assert call_update["diff"] == request["diff"]

    assert [r["method"] for r in client.language_requests] == ["textDocument/rename"]
    assert client.language_requests[0]["params"] == {"textDocument": {"uri": lib_uri},
                                                     "position": {"line": 0, "character": 4}, "newName": "fetch"}
    assert [(c.text_document.uri, c.text_document.version) for a in client.applied
            for c in a.edit.document_changes] == [(app_uri, 1), (lib_uri, 1)]
    assert client.docs[app_uri][1] == RENAME_APP.replace("load", "fetch")
    assert client.docs[lib_uri][1] == LIB.replace("load", "fetch")

    answer = await client.protocol.send_request_async("agent/revert", {"sessionId": result["sessionId"]})
    assert answer == {"reverted": [app_uri, lib_uri], "refused": []}
    assert client.docs[app_uri][1] == RENAME_APP and client.docs[lib_uri][1] == LIB


async def test_a_client_that_never_answers_is_an_error_after_the_timeout_and_the_chat_goes_on(lsp):
    lsp.fake_api.add(tool_use("find_references", {"path": "app.py", "line": 1, "column": 5}, id="toolu_r"),
                     text("Fell back."))
    client = await start(lsp, timeout=1)
    answering(client, {}, hang=True)
    result = await chat(client, "who calls greet?")
    assert result["stopReason"] == "end_turn" and result["finalMessage"] == "Fell back."
    assert tool_results(lsp.fake_api, 1) == [{
        "type": "tool_result", "tool_use_id": "toolu_r", "is_error": True,
        "content": "The editor's language servers did not answer textDocument/references within 1 s."}]
    await until(lambda: len(client.language_cancelled) == 1)  # the server cancelled its request on the client


async def test_abort_during_a_language_request_answers_aborted_and_leaves_nothing_pending(lsp):
    lsp.fake_api.add(tool_use("hover", {"path": "app.py", "line": 1, "column": 5}, id="toolu_h"))
    client = await start(lsp)
    answering(client, {}, hang=True)
    task = asyncio.ensure_future(chat(client, "what is greet?"))
    await until(lambda: len(client.language_requests) == 1)
    answer = await client.protocol.send_request_async("agent/abort", {"sessionId": client.updates[0]["sessionId"]})
    result = await task
    assert answer == {"aborted": True} and result["stopReason"] == "aborted"
    assert shape(updates_of(client)) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:cancelled"]
    await until(lambda: client.language_cancelled == client.language_requests)


async def test_tools_follow_the_methods_the_client_declared(lsp):
    plain = await lsp.start()
    assert not {t["name"] for t in await list_tools(plain)} & set(LANGUAGE_TOOLS)
    await lsp.stop_client(plain)
    some = await start(lsp, methods=["textDocument/references", "textDocument/hover", "textDocument/frobnicate"])
    listed = [t for t in await list_tools(some) if t["name"] in LANGUAGE_TOOLS]
    assert [(t["name"], t["kind"], t["origin"], t["readOnly"]) for t in listed] == [
        ("find_references", "read", "editor", True), ("hover", "read", "editor", True)]
    await lsp.stop_client(some)
    bad = await lsp.start(agent={"languageFeatures": "textDocument/references"})
    assert not {t["name"] for t in await list_tools(bad)} & set(LANGUAGE_TOOLS)
    await until(lambda: any("malformed" in m.message for m in bad.messages))


async def test_call_hierarchy_outline_and_workspace_symbols_in_characters(lsp):
    app, lib = (lsp.workspace / "app.py"), (lsp.workspace / "lib.py")
    app.write_text('MOOD = "😀"; from lib import load\n\ndef main(): return load("x")\n')
    lib.write_text(LIB)
    load = {"name": "load", "kind": 12, "uri": lib.as_uri(), "range": r(0, 0, 31), "selectionRange": r(0, 4, 8)}
    main = {"name": "main", "kind": 12, "uri": app.as_uri(), "range": r(2, 0, 28), "selectionRange": r(2, 4, 8)}
    emoji_main = dict(main, range=r(0, 0, 33), selectionRange=r(0, 29, 33))  # a caller after the emoji
    answers = {
        "textDocument/prepareCallHierarchy": [load],
        "callHierarchy/incomingCalls": [{"from": main, "fromRanges": [r(2, 19, 23)]},
                                        {"from": emoji_main, "fromRanges": [r(0, 29, 33)]}],
        "textDocument/documentSymbol": [{"name": "load", "kind": 12, "range": r(0, 0, 31),
                                         "selectionRange": r(0, 4, 8), "children": [
                                             {"name": "name", "kind": 13, "range": r(0, 9, 13),
                                              "selectionRange": r(0, 9, 13)}]}],
        "workspace/symbol": [{"name": "load", "kind": 12, "location": {"uri": app.as_uri(), "range": r(0, 29, 33)},
                              "containerName": "app"}],
    }
    lsp.fake_api.add(
        tool_use("call_hierarchy", {"path": "lib.py", "line": 1, "column": 5, "direction": "incoming"}, id="toolu_c"),
        tool_use("document_symbols", {"path": "lib.py"}, id="toolu_o"),
        tool_use("find_symbol", {"query": "load"}, id="toolu_s"),
        text("Done."))
    client = await start(lsp)
    answering(client, answers)
    result = await chat(client, "who calls load?")
    assert result["finalMessage"] == "Done."
    assert [b["content"] for i in (1, 2, 3) for b in tool_results(lsp.fake_api, i)] == [
        "app.py:1:29: main\napp.py:3:5: main", "1: function load\n  1: variable name",
        "app.py:1:29: function load (app)"]
    assert [r["method"] for r in client.language_requests] == [
        "textDocument/prepareCallHierarchy", "callHierarchy/incomingCalls", "textDocument/documentSymbol",
        "workspace/symbol"]
    assert client.language_requests[1]["params"] == {"item": load}  # the item as the editor gave it
