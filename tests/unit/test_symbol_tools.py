"""The symbol tools (PROTOCOL §11 "Edits by symbol") against a FakeEditor and a fake LanguageFeatures port whose
documentSymbol answer is computed from the live buffer as jedi-language-server (a symbol starts at `def`) or
pyright (at its first decorator) would give it: one span rule on both, tokens, ambiguity, indentation, refusals."""

from __future__ import annotations

import ast
from dataclasses import replace

import pytest

from agent_lsp.core.ports import IndexStatus, LanguageFeatureError
from agent_lsp.core.tool import Baseline, ToolContext, ToolError
from agent_lsp.tools.delete_symbol import DeleteSymbol, DeleteSymbolInput
from agent_lsp.tools.impact import Impact, ImpactInput
from agent_lsp.tools.insert_symbol import InsertSymbol, InsertSymbolInput
from agent_lsp.core.paths import uri_to_path
from agent_lsp.tools.read_symbol import ReadSymbol
from agent_lsp.tools.replace_symbol import ReplaceSymbol, ReplaceSymbolInput
from agent_lsp.tools.symbols import Lines, SymbolInput, reindent, span, token_of
from tests.fakes.editor import FakeEditor
from tests.fakes.language import FakeLanguageFeatures

SOURCE = '''import functools


# the cache of loads
@functools.lru_cache
def load(name):
    """Load it."""
    return name


class Store:
    # a property
    @property
    def size(self):
        return 1

    async def get(self):
        return load("y")
'''

READY = IndexStatus("ready", "its progress ended")


def rng(line: int, start: int, end_line: int, end: int) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}


def symbols_like(style: str, text: str) -> list[dict]:
    """DocumentSymbols of a Python text: `jedi` starts a symbol at its `def` or `class` line, `pyright` at its first
    decorator; both end at the symbol's last character."""
    lines = text.splitlines()

    def one(node, in_class: bool = False) -> dict:
        first = node.decorator_list[0].lineno - 1 if style == "pyright" and node.decorator_list else node.lineno - 1
        first_col = node.decorator_list[0].col_offset - 1 if style == "pyright" and node.decorator_list \
            else node.col_offset
        name_line = node.lineno - 1
        name_col = lines[name_line].index(node.name)
        kind = 5 if isinstance(node, ast.ClassDef) else 6 if in_class else 12
        children = [one(c, isinstance(node, ast.ClassDef)) for c in node.body
                    if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        return {"name": node.name, "kind": kind,
                "range": {"start": {"line": first, "character": max(first_col, 0)},
                          "end": {"line": node.end_lineno - 1, "character": node.end_col_offset}},
                "selectionRange": {"start": {"line": name_line, "character": name_col},
                                   "end": {"line": name_line, "character": name_col + len(node.name)}},
                "children": children}

    tree = ast.parse(text)
    return [one(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


@pytest.fixture
def ws(tmp_path):
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "store.py").write_text(SOURCE)
    return root


def context(root, style: str = "jedi", references=None, status: IndexStatus = READY) -> ToolContext:
    editor = FakeEditor(root=root)

    def document_symbols(params: dict) -> list[dict]:
        path = uri_to_path(params["textDocument"]["uri"])
        doc = editor.open_document(path)
        return symbols_like(style, doc.text if doc else path.read_text())

    answers = {"textDocument/documentSymbol": document_symbols}
    if references is not None:
        answers["textDocument/references"] = references
    language = FakeLanguageFeatures(answers, origin="languageServer:jedi")
    language.status = status
    return ToolContext(editor=editor, language=language)


async def read(ctx, symbol: str, line=None) -> tuple[str, str]:
    """(the answer, its token)."""
    out = await ReadSymbol().run(ctx, SymbolInput(path="store.py", symbol=symbol, line=line))
    return out.text, out.text.split("token=")[1].split()[0]


# ---- the span rule -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["jedi", "pyright"])
async def test_the_span_is_the_same_whatever_the_server_reports(ws, style):
    ctx = context(ws, style)
    text, token = await read(ctx, "load")
    assert text.splitlines() == [
        f"store.py:5-8 function load token={token}",
        "     5\t@functools.lru_cache",
        "     6\tdef load(name):",
        '     7\t    """Load it."""',
        "     8\t    return name",
        "index: ready — its progress ended",
    ]
    assert token == token_of('@functools.lru_cache\ndef load(name):\n    """Load it."""\n    return name')
    text, _ = await read(ctx, "Store/size")
    assert text.splitlines()[1:4] == ["    13\t    @property", "    14\t    def size(self):",
                                      "    15\t        return 1"]
    text, _ = await read(ctx, "get")
    assert text.splitlines()[1] == "    17\t    async def get(self):"


def test_a_multi_line_decorator_is_in_and_a_statement_above_is_not():
    lines = Lines.of("x = f(\n    1)\n@route(\n    '/a',\n)\ndef a():\n    pass\n")
    assert span(lines, 5, 6, 8, 5, True) == (2, 6)
    lines = Lines.of("class A:\n    @property\n    def a(self): return 1\n    def b(self):\n        pass\n")
    assert span(lines, 3, 4, 12, 3, True) == (3, 4)  # not @property of a: a statement ended between
    lines = Lines.of("// doc\n[Obsolete]\npublic void M() {\n}\n")
    assert span(lines, 0, 3, 1, 2, False) == (1, 3)  # a server that starts at the comment: it is left out


# ---- addressing ----------------------------------------------------------------------------------------------


async def test_an_ambiguous_name_lists_the_candidates_and_line_picks_one(ws):
    (ws / "store.py").write_text(SOURCE + "\n\ndef load(name, other):\n    return other\n")
    ctx = context(ws)
    with pytest.raises(ToolError) as e:
        await read(ctx, "load")
    assert str(e.value).splitlines() == [
        "`load` names 2 symbols in store.py; nothing was changed. Give `line` to pick one:",
        "store.py:6: function load: @functools.lru_cache",
        "store.py:21: function load: def load(name, other):",
    ]
    text, _ = await read(ctx, "load", line=21)
    assert text.splitlines()[1] == "    21\tdef load(name, other):"
    text, _ = await read(ctx, "load", line=5)  # the first line of the span picks it too
    assert text.splitlines()[1] == "     5\t@functools.lru_cache"
    with pytest.raises(ToolError, match="No `load` in store.py starts at line 3; the candidates are"):
        await read(ctx, "load", line=3)


@pytest.mark.parametrize("symbol, message", [
    ("Store/size/local", "reports no symbol `Store/size/local` in store.py .*use edit_file.*It reports: load, "
                         "Store, Store/size, Store/get"),
    ("/get", "reports no symbol `/get`"),
    ("Store//get", "empty name"),
])
async def test_a_name_path_the_server_does_not_report_is_refused(ws, symbol, message):
    with pytest.raises(ToolError, match=message):
        await read(context(ws), symbol)


async def test_a_server_that_answers_garbage_or_fails_is_an_error(ws):
    ctx = context(ws)
    ctx.language.answers["textDocument/documentSymbol"] = {"not": "a list"}
    with pytest.raises(ToolError, match="not a list of symbols"):
        await read(ctx, "load")
    ctx.language.answers["textDocument/documentSymbol"] = LanguageFeatureError("language server `jedi` stopped")
    with pytest.raises(ToolError, match="stopped"):
        await read(ctx, "load")


# ---- replace_symbol ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["jedi", "pyright"])
async def test_a_body_at_column_0_is_indented_as_the_method(ws, style):
    ctx = context(ws, style)
    _, token = await read(ctx, "Store/size")
    out = await ReplaceSymbol().run(ctx, ReplaceSymbolInput(
        path="store.py", symbol="Store/size", token=token, body="@property\ndef size(self):\n    return 2\n"))
    assert (ws / "store.py").read_text() == SOURCE.replace("return 1", "return 2")
    assert out.text.startswith("Replaced `Store/size` in store.py: now lines 13-15, token=")
    assert out.text.endswith("index: ready — its progress ended")
    _, again = await read(ctx, "Store/size")
    assert f"token={again}" in out.text


async def test_the_users_edit_inside_the_symbol_is_never_overwritten(ws):
    ctx = context(ws)
    _, token = await read(ctx, "load")
    typed = SOURCE.replace('    return name', '    return name.strip()')
    ctx.editor.open("store.py", typed, version=2)
    with pytest.raises(ToolError) as e:
        await ReplaceSymbol().run(ctx, ReplaceSymbolInput(path="store.py", symbol="load", token=token,
                                                          body="def load(name):\n    return None"))
    message = str(e.value)
    assert message.startswith(f"`load` changed since it was read (token {token} is now ")
    assert "     8\t    return name.strip()" in message
    assert ctx.editor.applied == [] and ctx.editor.buffers[ws / "store.py"] == typed


async def test_a_change_outside_the_symbol_does_not_matter(ws):
    ctx = context(ws)
    _, token = await read(ctx, "load")
    ctx.editor.open("store.py", "# the user's line\n" + SOURCE, version=2)
    await ReplaceSymbol().run(ctx, ReplaceSymbolInput(path="store.py", symbol="load", token=token,
                                                      body="def load(name):\n    return None"))
    assert ctx.editor.buffers[ws / "store.py"] == "# the user's line\n" + SOURCE.replace(
        '@functools.lru_cache\ndef load(name):\n    """Load it."""\n    return name',
        "def load(name):\n    return None")
    (edit,) = ctx.editor.applied
    assert edit.version == 2


async def test_the_same_text_is_no_change_and_nothing_is_sent(ws):
    ctx = context(ws)
    text, token = await read(ctx, "Store/get")
    body = "async def get(self):\n    return load(\"y\")\n"
    out = await ReplaceSymbol().run(ctx, ReplaceSymbolInput(path="store.py", symbol="Store/get", token=token,
                                                            body=body))
    assert out.text.startswith("No change: `Store/get` in store.py already reads so; nothing was sent.")
    assert ctx.editor.applied == []


async def test_tabs_and_crlf_line_ends_are_kept(ws):
    source = "class A:\r\n\tdef f(self):\r\n\t\treturn 1\r\n"
    (ws / "store.py").write_bytes(source.encode())
    ctx = context(ws)
    ctx.editor.open("store.py", source)
    _, token = await read(ctx, "A/f")
    await ReplaceSymbol().run(ctx, ReplaceSymbolInput(path="store.py", symbol="A/f", token=token,
                                                      body="def f(self):\n    if self:\n        return 2\n"))
    assert ctx.editor.buffers[ws / "store.py"] == "class A:\r\n\tdef f(self):\r\n\t\tif self:\r\n\t\t\treturn 2\r\n"


def test_a_body_copied_with_its_first_line_unindented_is_not_indented_twice():
    assert reindent("def f(self):\n        return 1", "    ", False, 4, "\n") == "    def f(self):\n        return 1"
    assert reindent("    def f(self):\n        return 1", "    ", False, 4, "\n") == \
        "    def f(self):\n        return 1"
    assert reindent("\n\ndef f(self):\n\n  return 1\n\n", "  ", False, 2, "\n") == "  def f(self):\n\n    return 1"
    with pytest.raises(ToolError, match="empty"):
        reindent("\n  \n", "", False, 4, "\n")


async def test_a_change_that_breaks_compilation_is_refused(ws):
    ctx = context(ws)
    _, token = await read(ctx, "load")
    with pytest.raises(ToolError, match=r"store.py would no longer compile \(line \d+: .*\); nothing was changed"):
        await ReplaceSymbol().run(ctx, ReplaceSymbolInput(path="store.py", symbol="load", token=token,
                                                          body="def load(name:\n    return name"))
    assert ctx.editor.applied == []


async def test_the_edit_goes_through_the_editor_versioned_and_a_refusal_says_to_read_again(ws):
    ctx = context(ws)
    ctx.editor.open("store.py", SOURCE, version=7)
    _, token = await read(ctx, "load")
    ctx.editor.refuse_edits = True
    with pytest.raises(ToolError, match="did not apply the edit"):
        await ReplaceSymbol().run(ctx, ReplaceSymbolInput(path="store.py", symbol="load", token=token,
                                                          body="def load(name):\n    return 0"))
    (edit,) = ctx.editor.applied
    assert edit.version == 7 and edit.base_text == SOURCE


async def test_the_preview_shows_the_diff_to_confirm(ws):
    ctx = context(ws)
    _, token = await read(ctx, "Store/size")
    preview = await ReplaceSymbol().preview(ctx, ReplaceSymbolInput(
        path="store.py", symbol="Store/size", token=token, body="@property\ndef size(self):\n    return 2"))
    assert "-        return 1\n+        return 2\n" in preview.diff
    assert preview.changes[0].new_text == SOURCE.replace("return 1", "return 2")
    assert ctx.editor.applied == []


# ---- insert_symbol -------------------------------------------------------------------------------------------


async def test_insert_after_a_method_is_spaced_as_its_siblings(ws):
    ctx = context(ws)
    await InsertSymbol().run(ctx, InsertSymbolInput(path="store.py", anchor="Store/size", where="after",
                                                    text="def clear(self):\n    pass"))
    assert (ws / "store.py").read_text() == SOURCE.replace(
        "        return 1\n\n", "        return 1\n\n    def clear(self):\n        pass\n\n")


async def test_insert_before_goes_above_the_comments_and_decorators(ws):
    ctx = context(ws, "pyright")
    out = await InsertSymbol().run(ctx, InsertSymbolInput(path="store.py", anchor="load", where="before",
                                                          text="def first():\n    return 0\n"))
    assert (ws / "store.py").read_text() == SOURCE.replace(
        "# the cache", "def first():\n    return 0\n\n\n# the cache")
    assert out.text.startswith("Inserted before `load` in store.py: lines 4-5.")


async def test_insert_after_the_last_symbol_and_an_ambiguous_anchor(ws):
    ctx = context(ws)
    await InsertSymbol().run(ctx, InsertSymbolInput(path="store.py", anchor="Store", where="after",
                                                    text="X = 1"))
    assert (ws / "store.py").read_text() == SOURCE + "\n\nX = 1\n"
    (ws / "store.py").write_text(SOURCE + "\n\nclass Store:\n    pass\n")
    with pytest.raises(ToolError, match="`Store` names 2 symbols"):
        await InsertSymbol().run(ctx, InsertSymbolInput(path="store.py", anchor="Store", where="after", text="Y = 2"))


# ---- delete_symbol -------------------------------------------------------------------------------------------


def reference(root, line: int, character: int, name: str = "store.py") -> dict:
    return {"uri": (root / name).as_uri(), "range": {"start": {"line": line, "character": character},
                                                     "end": {"line": line, "character": character + 4}}}


async def test_delete_is_refused_while_a_reference_remains_and_force_deletes(ws):
    (ws / "app.py").write_text("from store import load\n")
    ctx = context(ws, references=lambda p: [reference(ws, 17, 15), reference(ws, 0, 18, "app.py")])
    _, token = await read(ctx, "load")
    with pytest.raises(ToolError) as e:
        await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="load", token=token))
    assert str(e.value).splitlines()[:3] == ["`load` is still referenced 2 times; nothing was deleted:",
                                             "app.py:1:19: from store import load",
                                             'store.py:18:16: return load("y")']
    assert ctx.language.requests[-1][1]["position"] == {"line": 5, "character": 4}
    out = await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="load", token=token, force=True))
    assert "Deleted with force: it was still referenced 2 times." in out.text
    assert (ws / "store.py").read_text() == SOURCE.replace(
        '# the cache of loads\n@functools.lru_cache\ndef load(name):\n    """Load it."""\n    return name\n\n\n', "")


async def test_delete_when_the_only_references_are_inside_the_symbol(ws):
    ctx = context(ws, references=lambda p: [reference(ws, 14, 8)])
    _, token = await read(ctx, "Store/size")
    await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="Store/size", token=token))
    assert (ws / "store.py").read_text() == SOURCE.replace(
        "    # a property\n    @property\n    def size(self):\n        return 1\n\n", "")


@pytest.mark.parametrize("status", [IndexStatus("unknown", "jedi-language-server reports nothing"),
                                    IndexStatus("loading", "pyright: 3 files to analyze")])
async def test_delete_is_refused_when_the_index_cannot_prove_it_unused(ws, status):
    ctx = context(ws, references=lambda p: [], status=status)
    _, token = await read(ctx, "Store/get")
    with pytest.raises(ToolError, match=rf"its index is not ready, so that proves nothing.*Run search with "
                                        rf"pattern `\\bget\\b`.*\nindex: {status.state}"):
        await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="Store/get", token=token))
    assert ctx.editor.applied == []
    out = await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="Store/get", token=token,
                                                          force=True))
    assert "Deleted with force: the index was not ready" in out.text
    assert (ws / "store.py").read_text() == SOURCE.replace('\n    async def get(self):\n        return load("y")\n', "")


async def test_delete_without_references_to_ask_and_a_dead_server(ws):
    ctx = context(ws)
    _, token = await read(ctx, "Store")
    with pytest.raises(ToolError, match="No language server answers textDocument/references"):
        await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="Store", token=token))
    ctx.language.answers["textDocument/references"] = LanguageFeatureError("language server `jedi` stopped")
    with pytest.raises(ToolError, match="stopped"):
        await DeleteSymbol().run(ctx, DeleteSymbolInput(path="store.py", symbol="Store", token=token))
    assert ctx.editor.applied == []


# ---- impact --------------------------------------------------------------------------------------------------


def impact_context(ws, **answers) -> ToolContext:
    refs = [reference(ws, 20, 15), reference(ws, 0, 18, "app.py"), reference(ws, 2, 4, "app.py")]
    ctx = context(ws, references=lambda p: refs if p["position"]["line"] == 5 else [])
    ctx.language.answers.update(answers)
    (ws / "app.py").write_text("from store import load\n\nx = load('a')\n")
    ctx.editor.open("store.py", SOURCE.replace("def load(name):", "def load(name, strict):")
                    .replace("        return 1\n\n", "        return 1\n\n    def clear(self):\n        pass\n\n"))
    return replace(ctx, baseline=Baseline({ws / "store.py": SOURCE}))


async def test_impact_names_what_changed_and_its_callers_from_references(ws):
    out = await Impact().run(impact_context(ws), ImpactInput())
    assert out.text.splitlines() == [
        "## load (store.py:6): changed function",
        "references: 3 in 2 files: app.py, store.py",
        "callers (from references; jedi has no call hierarchy):",
        "  app.py: module level (2)",
        "  store.py: Store/get (1)",
        "implementations: jedi does not offer textDocument/implementation",
        "## Store/clear (store.py:17): added method",
        "references: 0 in 0 files",
        "callers (from references; jedi has no call hierarchy): none",
        "implementations: jedi does not offer textDocument/implementation",
        "diagnostics: the editor did not send its own diagnostics",
        "index: ready — its progress ended",
    ]


async def test_impact_with_a_call_hierarchy_and_a_removed_symbol(ws):
    item = {"name": "load", "uri": (ws / "store.py").as_uri()}
    caller = {"name": "get", "uri": (ws / "store.py").as_uri(), "range": rng(17, 4, 18, 24),
              "selectionRange": rng(17, 14, 17, 17)}
    ctx = impact_context(ws, **{"textDocument/prepareCallHierarchy": [item],
                                "callHierarchy/incomingCalls": [{"from": caller, "fromRanges": []}],
                                "textDocument/implementation": []})
    ctx.editor.open("store.py", SOURCE.replace('    async def get(self):\n        return load("y")\n', "")
                    .replace("return name", "return name * 2"))
    out = await Impact().run(ctx, ImpactInput())
    assert out.text.splitlines()[:4] == [
        "## load (store.py:6): changed function", "references: 3 in 2 files: app.py, store.py", "callers:",
        "  store.py:18:15: get"]
    assert "implementations: none" in out.text
    assert "## Store/get (store.py): removed\nreferences: the language server cannot find references to removed " \
           "code; run search with pattern `\\bget\\b` for what still uses it" in out.text


async def test_impact_of_nothing_changed_and_of_named_targets(ws):
    ctx = context(ws, references=lambda p: [])
    out = await Impact().run(ctx, ImpactInput())
    assert out.text == "No symbol changed since the chat began.\nindex: ready — its progress ended"
    out = await Impact().run(ctx, ImpactInput(targets=[{"path": "store.py", "symbol": "Store/size"}]))
    assert out.text.splitlines()[:2] == ["## Store/size (store.py:14): named method", "references: 0 in 0 files"]
    with pytest.raises(ToolError, match="reports no symbol `nope`"):
        await Impact().run(ctx, ImpactInput(targets=[{"path": "store.py", "symbol": "nope"}]))


async def test_impact_since_saved_and_new_syntax_errors(ws):
    ctx = context(ws, references=lambda p: [])
    ctx.editor.open("store.py", SOURCE.replace("    return name\n", "    return name +\n"))
    ctx.language.answers["textDocument/documentSymbol"] = lambda p: symbols_like("jedi", SOURCE)
    out = await Impact().run(ctx, ImpactInput(since="saved"))
    assert out.text.startswith("## load (store.py:6): changed function")
    assert "syntax errors since the baseline (compile()):\nstore.py: new: line 8: invalid syntax" in out.text


# ---- what changed on disk reaches the language servers ----------------------------------------------------------


async def test_a_command_and_a_write_to_a_closed_file_tell_the_language_servers(ws):
    from agent_lsp.tools.edit_file import TOOL as EDIT, EditFileInput
    from agent_lsp.tools.run_command import TOOL as RUN, RunCommandInput

    ctx = context(ws)
    await RUN.run(ctx, RunCommandInput(command="echo hi > written.py"))
    assert ctx.language.disk_changes == [None, None]  # before the command and after it: which files is not known
    await EDIT.run(ctx, EditFileInput(path="store.py", old_string="return 1", new_string="return 2"))
    assert ctx.language.disk_changes[2:] == [[ws / "store.py"]]
    ctx.editor.open("store.py", SOURCE)
    await EDIT.run(ctx, EditFileInput(path="store.py", old_string="return 1", new_string="return 3"))
    assert len(ctx.language.disk_changes) == 3  # an open buffer: the servers see it through the editor


async def test_an_imported_name_or_a_variable_holds_no_call(ws):
    """jedi lists the names an import brings, and module variables, as symbols: a reference on their line is at
    module level, not a call from them."""
    ctx = impact_context(ws)
    (ws / "app.py").write_text("from store import Store, load\n\nx = load('a')\n")
    variable = lambda name, line, start: {"name": name, "kind": 13, "range": rng(line, 0, line, 29),  # noqa: E731
                                          "selectionRange": rng(line, start, line, start + len(name))}
    jedi = ctx.language.answers["textDocument/documentSymbol"]
    ctx.language.answers["textDocument/documentSymbol"] = lambda p: [
        variable("Store", 0, 18), variable("load", 0, 25), variable("x", 2, 0)] \
        if p["textDocument"]["uri"].endswith("/app.py") else jedi(p)
    out = await Impact().run(ctx, ImpactInput())
    assert out.text.splitlines()[2:5] == ["callers (from references; jedi has no call hierarchy):",
                                          "  app.py: module level (2)", "  store.py: Store/get (1)"]
