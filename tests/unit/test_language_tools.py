"""The seven language tools against a FakeLanguageFeatures port and a FakeEditor: formats, sorting, bounds,
errors, and the rename's diff and edits."""

from __future__ import annotations

import pytest

from agent_lsp.core.ports import LANGUAGE_METHODS, LanguageFeatureError
from agent_lsp.core.tool import MAX_OUTPUT_CHARS, ToolContext, ToolError
from agent_lsp.tools import language_tools
from agent_lsp.tools.call_hierarchy import CallHierarchy, CallHierarchyInput
from agent_lsp.tools.document_symbols import DocumentSymbols, DocumentSymbolsInput
from agent_lsp.tools.find_references import FindReferences, FindReferencesInput
from agent_lsp.tools.find_symbol import FindSymbol, FindSymbolInput
from agent_lsp.tools.go_to_definition import GoToDefinition
from agent_lsp.tools.hover import Hover
from agent_lsp.tools.language_tool import PositionInput
from agent_lsp.tools.rename_symbol import RenameSymbol, RenameSymbolInput
from tests.fakes.editor import FakeEditor
from tests.fakes.language import FakeLanguageFeatures

APP = 'from lib import load\n\n\ndef main():\n    return load("x")\n'
LIB = 'def load(name):\n    """Load it."""\n    return name\n\n\nclass Store:\n    def get(self):\n        return load("y")\n'


@pytest.fixture
def ws(tmp_path):
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "lib.py").write_text(LIB)
    return root


def at(line: int, character: int) -> dict:
    return {"line": line, "character": character}


def rng(line: int, start: int, end: int) -> dict:
    return {"start": at(line, start), "end": at(line, end)}


def loc(root, name: str, line: int, start: int, end: int) -> dict:
    return {"uri": (root / name).as_uri(), "range": rng(line, start, end)}


FOOTER = "index: unknown — the fake reports nothing"


def said(out) -> str:
    """A language tool's answer without its index line (checked: the fake's)."""
    text, footer = out.text.rsplit("\n", 1)
    assert footer == FOOTER
    return text


def context(root, answers: dict, **kwargs) -> ToolContext:
    return ToolContext(editor=FakeEditor(root=root), language=FakeLanguageFeatures(answers, **kwargs))


# ---- which tools are offered ------------------------------------------------------------------------------


def test_the_tools_offered_are_those_whose_methods_can_be_answered():
    every = FakeLanguageFeatures({m: None for m in LANGUAGE_METHODS}, origin="languageServer:pyright")
    offered = language_tools(every)
    assert [t.name for t in offered] == ["find_symbol", "go_to_definition", "find_references", "hover",
                                         "document_symbols", "call_hierarchy", "rename_symbol", "read_symbol",
                                         "replace_symbol", "insert_symbol", "delete_symbol", "impact"]
    assert {t.origin for t in offered} == {"languageServer:pyright"}
    assert [t.kind for t in offered] == ["read"] * 6 + ["edit", "read", "edit", "edit", "edit", "read"]
    some = FakeLanguageFeatures({"textDocument/references": None, "textDocument/prepareCallHierarchy": None,
                                 "callHierarchy/incomingCalls": None, "textDocument/prepareRename": None})
    assert [t.name for t in language_tools(some)] == ["find_references"]
    assert language_tools(None) == [] and language_tools(FakeLanguageFeatures({})) == []


def test_every_tool_definition_together_stays_under_14k_characters():
    from bench.symbol_tools import BUDGET, every_tool_definition  # the bench's row shows the margin

    size, _ = every_tool_definition()
    assert size < BUDGET == 14_000, size


def test_descriptions_stay_short_and_say_when_to_prefer_them():
    every = FakeLanguageFeatures({m: None for m in LANGUAGE_METHODS})
    for tool in language_tools(every):
        assert len(tool.description) <= 200, tool.name
    assert "search" in FindReferences().description and "Prefer" in FindReferences().description


# ---- find_references, go_to_definition --------------------------------------------------------------------


async def test_references_are_sorted_unique_with_the_buffers_text(ws, tmp_path):
    outside = tmp_path / "site" / "lib.pyi"
    answer = [loc(ws, "lib.py", 7, 15, 19), loc(ws, "app.py", 4, 11, 15), loc(ws, "app.py", 0, 16, 20),
              loc(ws, "app.py", 4, 11, 15), {"uri": outside.as_uri(), "range": rng(0, 4, 8)}]
    ctx = context(ws, {"textDocument/references": answer})
    ctx.editor.open("app.py", APP.replace('load("x")', 'load("unsaved")'))
    out = await FindReferences().run(ctx, FindReferencesInput(path="lib.py", line=1, column=5))
    assert said(out).splitlines() == [
        f"{outside}:1:5",
        "app.py:1:17: from lib import load",
        'app.py:5:12: return load("unsaved")',
        'lib.py:8:16: return load("y")',
    ]
    assert ctx.language.requests == [("textDocument/references", {
        "textDocument": {"uri": (ws / "lib.py").as_uri()}, "position": at(0, 4),
        "context": {"includeDeclaration": False}}, ws / "lib.py")]


async def test_a_servers_malformed_places_and_lone_surrogates_give_a_result_the_model_can_read(ws):
    answer = [{"uri": (ws / "app.py").as_uri(), "range": {"start": {"line": "zero", "character": []}}},
              {"uri": (ws / "app.py").as_uri(), "range": rng(0, 1.5, 2)},  # type: ignore[arg-type]
              {"uri": "file:///elsewhere/\ud800.py", "range": rng(2, 0, 1)},
              {"uri": "file:///a%00b.py", "range": rng(3, 0, 1)}, loc(ws, "app.py", 0, 5, 8)]
    ctx = context(ws, {"textDocument/definition": answer, "textDocument/hover": {"contents": "lone \udc00 here"}})
    out = await GoToDefinition().run(ctx, PositionInput(path="app.py", line=1, column=6))
    assert said(out).splitlines() == ["/elsewhere/\\ud800.py:3:1", "file:///a%00b.py:4:1",
                                     "app.py:1:6: from lib import load"]
    out = await Hover().run(ctx, PositionInput(path="app.py", line=1, column=6))
    assert said(out) == "lone \\udc00 here"


async def test_columns_count_characters_when_an_emoji_comes_first(ws):
    (ws / "emoji.py").write_text('x = "😀😀"; load(1)\n')
    answer = [loc(ws, "emoji.py", 0, 11, 15)]  # the port answers in characters
    ctx = context(ws, {"textDocument/references": answer, "textDocument/definition": answer})
    out = await FindReferences().run(ctx, FindReferencesInput(path="emoji.py", line=1, column=12))
    assert said(out) == 'emoji.py:1:12: x = "😀😀"; load(1)'
    assert ctx.language.requests[0][1]["position"] == at(0, 11)


async def test_definition_follows_location_links(ws):
    link = {"originSelectionRange": rng(4, 11, 15), "targetUri": (ws / "lib.py").as_uri(),
            "targetRange": rng(0, 0, 30), "targetSelectionRange": rng(0, 4, 8)}
    ctx = context(ws, {"textDocument/definition": [link]})
    out = await GoToDefinition().run(ctx, PositionInput(path="app.py", line=5, column=12))
    assert said(out) == "lib.py:1:5: def load(name):"
    ctx = context(ws, {"textDocument/definition": loc(ws, "lib.py", 6, 4, 7)})  # a single Location
    out = await GoToDefinition().run(ctx, PositionInput(path="app.py", line=5, column=12))
    assert said(out) == "lib.py:7:5: def get(self):"


@pytest.mark.parametrize("answer", [None, []])
async def test_a_position_that_names_no_symbol_is_an_error_saying_why(ws, answer):
    ctx = context(ws, {"textDocument/definition": answer, "textDocument/references": answer})
    with pytest.raises(ToolError, match=r"No definition at app.py:4:1: the position names no symbol.*def main"):
        await GoToDefinition().run(ctx, PositionInput(path="app.py", line=4, column=1))
    with pytest.raises(ToolError, match=r"No references found at app.py:4:1"):
        await FindReferences().run(ctx, FindReferencesInput(path="app.py", line=4, column=1))


@pytest.mark.parametrize("path, line, column, message", [
    ("../elsewhere.py", 1, 1, "outside the workspace"),
    ("app.py", 9, 1, "app.py has 6 lines; line 9 is past its end"),
    ("app.py", 1, 40, "Line 1 of app.py has 20 characters; column 40 is past its end"),
    ("missing.py", 1, 1, "does not exist"),
])
async def test_bad_positions_are_errors_and_nothing_is_asked(ws, path, line, column, message):
    ctx = context(ws, {"textDocument/definition": []})
    with pytest.raises(ToolError, match=message):
        await GoToDefinition().run(ctx, PositionInput(path=path, line=line, column=column))
    assert ctx.language.requests == []


async def test_a_method_nothing_answers_is_an_error(ws):
    with pytest.raises(ToolError, match="No language server answers textDocument/hover"):
        await Hover().run(ToolContext(editor=FakeEditor(root=ws)), PositionInput(path="app.py", line=1, column=1))
    ts_only = context(ws, {"textDocument/hover": None}, only={"textDocument/hover": {".ts"}})
    with pytest.raises(ToolError, match="No language server answers textDocument/hover for app.py"):
        await Hover().run(ts_only, PositionInput(path="app.py", line=1, column=1))


async def test_a_failed_or_slow_server_is_an_error_naming_it(ws):
    failing = LanguageFeatureError("The editor's language servers did not answer textDocument/references within 5 s.")
    ctx = context(ws, {"textDocument/references": failing})
    with pytest.raises(ToolError, match="did not answer textDocument/references within 5 s"):
        await FindReferences().run(ctx, FindReferencesInput(path="app.py", line=5, column=12))


async def test_many_references_are_bounded(ws):
    lines = "".join(f"load({i})\n" for i in range(5000))
    (ws / "many.py").write_text(lines)
    answer = [loc(ws, "many.py", i, 0, 4) for i in range(5000)]
    out = await FindReferences().run(context(ws, {"textDocument/references": answer}),
                                     FindReferencesInput(path="many.py", line=1, column=1, includeDeclaration=True))
    assert len(out.text) < MAX_OUTPUT_CHARS + 200
    assert out.text.startswith("many.py:1:1: load(0)\nmany.py:2:1: load(1)\n")  # sorted by line, not as text
    assert out.text.splitlines()[-2].startswith("[output truncated:")


# ---- hover, document_symbols, find_symbol, call_hierarchy -------------------------------------------------


@pytest.mark.parametrize("contents, text", [
    ({"kind": "markdown", "value": "```python\ndef load(name) -> str\n```\nLoad it."},
     "```python\ndef load(name) -> str\n```\nLoad it."),
    ([{"language": "python", "value": "def load(name)"}, "Load it."], "```python\ndef load(name)\n```\n\nLoad it."),
    ("plain", "plain"),
])
async def test_hover_shows_the_servers_text(ws, contents, text):
    ctx = context(ws, {"textDocument/hover": {"contents": contents, "range": rng(4, 11, 15)}})
    assert said(await Hover().run(ctx, PositionInput(path="app.py", line=5, column=12))) == text


@pytest.mark.parametrize("answer", [None, {"contents": ""}, {"contents": []}])
async def test_an_empty_hover_is_an_error(ws, answer):
    with pytest.raises(ToolError, match="No hover information at app.py:2:1"):
        await Hover().run(context(ws, {"textDocument/hover": answer}), PositionInput(path="app.py", line=2, column=1))


async def test_document_symbols_are_an_indented_outline(ws):
    tree = [
        {"name": "Store", "kind": 5, "range": rng(5, 0, 30), "selectionRange": rng(5, 6, 11), "children": [
            {"name": "get", "kind": 6, "range": rng(6, 4, 30), "selectionRange": rng(6, 8, 11)}]},
        {"name": "load", "kind": 12, "range": rng(0, 0, 30), "selectionRange": rng(0, 4, 8)},
    ]
    ctx = context(ws, {"textDocument/documentSymbol": tree})
    out = await DocumentSymbols().run(ctx, DocumentSymbolsInput(path="lib.py"))
    assert said(out) == "1: function load\n6: class Store\n  7: method get"
    flat = [{"name": "main", "kind": 12, "location": loc(ws, "app.py", 3, 0, 10)},
            {"name": "load", "kind": 13, "location": loc(ws, "app.py", 0, 16, 20), "containerName": "lib"}]
    out = await DocumentSymbols().run(context(ws, {"textDocument/documentSymbol": flat}),
                                      DocumentSymbolsInput(path="app.py"))
    assert said(out) == "1: variable load\n4: function main"
    out = await DocumentSymbols().run(context(ws, {"textDocument/documentSymbol": None}),
                                      DocumentSymbolsInput(path="app.py"))
    assert said(out) == "The language server knows no symbols in app.py (6 lines)."


async def test_find_symbol_lists_kind_name_and_container_and_filters_by_kind(ws):
    answer = [{"name": "load", "kind": 12, "location": loc(ws, "lib.py", 0, 4, 8)},
              {"name": "get", "kind": 6, "location": loc(ws, "lib.py", 6, 8, 11), "containerName": "Store"},
              {"name": "Store", "kind": 5, "location": {"uri": (ws / "lib.py").as_uri()}}]  # a WorkspaceSymbol
    ctx = context(ws, {"workspace/symbol": answer})
    out = await FindSymbol().run(ctx, FindSymbolInput(query="o"))
    assert said(out).splitlines() == ["lib.py:1:5: function load", "lib.py:7:9: method get (Store)",
                                     "lib.py: class Store"]
    assert ctx.language.requests == [("workspace/symbol", {"query": "o"}, None)]
    assert said(await FindSymbol().run(ctx, FindSymbolInput(query="o", kind="Method"))) == \
        "lib.py:7:9: method get (Store)"
    assert said(await FindSymbol().run(ctx, FindSymbolInput(query="o", kind="enum"))) == \
        "No symbol matches 'o' of kind enum. That is no proof there are none, as the index is not ready: run " \
        "search with pattern `o`."
    with pytest.raises(ToolError, match="Unknown kind 'widget'; use one of: file, module"):
        await FindSymbol().run(ctx, FindSymbolInput(query="o", kind="widget"))


async def test_call_hierarchy_lists_callers_or_callees_at_their_definitions(ws):
    load = {"name": "load", "kind": 12, "uri": (ws / "lib.py").as_uri(), "range": rng(0, 0, 30),
            "selectionRange": rng(0, 4, 8), "data": {"id": 1}}
    main = {"name": "main", "kind": 12, "uri": (ws / "app.py").as_uri(), "range": rng(3, 0, 30),
            "selectionRange": rng(3, 4, 8)}
    get = {"name": "get", "kind": 6, "uri": (ws / "lib.py").as_uri(), "range": rng(6, 4, 30),
           "selectionRange": rng(6, 8, 11)}
    ctx = context(ws, {
        "textDocument/prepareCallHierarchy": [load],
        "callHierarchy/incomingCalls": [{"from": get, "fromRanges": [rng(7, 15, 19)]},
                                        {"from": main, "fromRanges": [rng(4, 11, 15)]}],
        "callHierarchy/outgoingCalls": [],
    })
    out = await CallHierarchy().run(ctx, CallHierarchyInput(path="lib.py", line=1, column=5, direction="incoming"))
    assert said(out) == "app.py:4:5: main\nlib.py:7:9: get"
    assert [r[0] for r in ctx.language.requests] == ["textDocument/prepareCallHierarchy", "callHierarchy/incomingCalls"]
    assert ctx.language.requests[1][1] == {"item": load}
    out = await CallHierarchy().run(ctx, CallHierarchyInput(path="lib.py", line=1, column=5, direction="outgoing"))
    assert said(out) == "No calls from load found. That is no proof there are none, as the index is not ready: " \
                         "run search with pattern `\\bload\\b`."
    ctx.language.answers["textDocument/prepareCallHierarchy"] = None
    with pytest.raises(ToolError, match="No function or method at lib.py:2:5"):
        await CallHierarchy().run(ctx, CallHierarchyInput(path="lib.py", line=2, column=5, direction="incoming"))


# ---- rename_symbol ----------------------------------------------------------------------------------------


def rename_changes(root) -> dict:
    return {"changes": {
        (root / "lib.py").as_uri(): [{"range": rng(7, 15, 19), "newText": "fetch"},
                                     {"range": rng(0, 4, 8), "newText": "fetch"}],
        (root / "app.py").as_uri(): [{"range": rng(0, 16, 20), "newText": "fetch"},
                                     {"range": rng(4, 11, 15), "newText": "fetch"}],
    }}


def rename_document_changes(root, app_version) -> dict:
    changes = rename_changes(root)["changes"]
    return {"documentChanges": [
        {"textDocument": {"uri": uri, "version": app_version if uri.endswith("app.py") else None}, "edits": edits}
        for uri, edits in changes.items()]}


@pytest.mark.parametrize("shape", ["changes", "documentChanges"])
async def test_rename_previews_a_diff_per_file_and_applies_each_through_the_editor(ws, shape):
    unsaved = APP.replace("def main():", "def main():  # unsaved")
    answer = rename_changes(ws) if shape == "changes" else rename_document_changes(ws, 3)
    ctx = context(ws, {"textDocument/rename": answer})
    ctx.editor.open("app.py", unsaved, version=3)
    tool, input = RenameSymbol(), RenameSymbolInput(path="lib.py", line=1, column=5, newName="fetch")
    preview = await tool.preview(ctx, input)
    assert preview.diff.count("--- a/") == 2
    assert preview.diff.index("--- a/app.py") < preview.diff.index("--- a/lib.py")
    assert "-def load(name):\n+def fetch(name):\n" in preview.diff
    assert '-    return load("x")\n+    return fetch("x")\n' in preview.diff
    out = await tool.run(ctx, input)
    assert out.text.startswith("Renamed load to fetch: 4 edits in 2 files (app.py, lib.py).\n")
    assert out.diff == preview.diff
    assert [r[0] for r in ctx.language.requests] == ["textDocument/rename"]  # the preview's answer is reused
    assert ctx.language.requests[0][1] == {"textDocument": {"uri": (ws / "lib.py").as_uri()},
                                           "position": at(0, 4), "newName": "fetch"}
    app, lib = ctx.editor.applied
    assert (app.path, app.version, app.base_text, app.label) == (ws / "app.py", 3, unsaved, "agent-lsp: rename load to fetch")
    assert [(e.start, e.end, e.new_text) for e in app.edits] == [(16, 20, "fetch"), (57, 61, "fetch")]
    assert unsaved[57:61] == "load"
    assert (lib.path, lib.version) == (ws / "lib.py", None)
    assert ctx.editor.buffers[ws / "app.py"] == unsaved.replace("load", "fetch")
    assert (ws / "lib.py").read_text() == LIB.replace("load", "fetch")


async def test_rename_asks_again_when_a_file_changed_since_the_preview(ws):
    ctx = context(ws, {"textDocument/rename": rename_changes(ws)})
    ctx.editor.open("app.py", APP, version=1)
    tool, input = RenameSymbol(), RenameSymbolInput(path="lib.py", line=1, column=5, newName="fetch")
    await tool.preview(ctx, input)
    ctx.editor.open("app.py", APP, version=2)  # the user typed (and undid) meanwhile
    await tool.run(ctx, input)
    assert [r[0] for r in ctx.language.requests] == ["textDocument/rename", "textDocument/rename"]
    assert ctx.editor.applied[0].version == 2


async def test_rename_checks_prepare_rename_first_when_available(ws):
    ctx = context(ws, {"textDocument/prepareRename": None, "textDocument/rename": rename_changes(ws)})
    with pytest.raises(ToolError, match="No symbol that can be renamed at app.py:2:1"):
        await RenameSymbol().preview(ctx, RenameSymbolInput(path="app.py", line=2, column=1, newName="x"))
    assert [r[0] for r in ctx.language.requests] == ["textDocument/prepareRename"]


@pytest.mark.parametrize("answer, message", [
    (None, "No symbol to rename at lib.py:1:5"),
    ({"changes": {}}, "No symbol to rename at lib.py:1:5"),
    ({"documentChanges": [{"kind": "rename", "oldUri": "file:///ws/lib.py", "newUri": "file:///ws/l2.py"}]},
     "would also rename a file"),
    ({"changes": {"file:///usr/lib/python3/json/__init__.py": [{"range": rng(0, 0, 1), "newText": "x"}]}},
     "outside the workspace; nothing was changed"),
    ({"changes": {"LIB": [{"range": rng(0, 4, 8), "newText": "x"}, {"range": rng(0, 6, 9), "newText": "y"}]}},
     "edits to lib.py overlap"),
    ({"documentChanges": [{"textDocument": {"uri": "APP", "version": 1}, "edits": []}]},
     "app.py changed while the language server computed the rename"),
])
async def test_a_rename_that_cannot_be_applied_changes_nothing(ws, answer, message):
    def fill(value):
        if isinstance(value, dict):
            return {fill(k): fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return {"LIB": (ws / "lib.py").as_uri(), "APP": (ws / "app.py").as_uri()}.get(value, value)

    ctx = context(ws, {"textDocument/rename": fill(answer)})
    ctx.editor.open("app.py", APP, version=2)
    with pytest.raises(ToolError, match=message):
        await RenameSymbol().preview(ctx, RenameSymbolInput(path="lib.py", line=1, column=5, newName="fetch"))
    assert ctx.editor.applied == []


async def test_a_refused_rename_says_what_was_applied(ws):
    ctx = context(ws, {"textDocument/rename": rename_changes(ws)})
    ctx.editor.refuse_edits = True
    with pytest.raises(ToolError, match="The editor did not apply the rename to app.py .the document changed."):
        await RenameSymbol().run(ctx, RenameSymbolInput(path="lib.py", line=1, column=5, newName="fetch"))
