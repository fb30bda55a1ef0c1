"""search and list_files on ripgrep: its JSON read right, unsaved buffers overlaid, rg's errors made tool errors."""

from __future__ import annotations

import base64
import json

import pytest

from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.tools import list_files, ripgrep, search
from tests.fakes.editor import FakeEditor


def test_rg_json_lines_become_matches():
    match = {"type": "match", "data": {"path": {"text": "src/a.py"}, "lines": {"text": "  x = 1\r\n"},
                                       "line_number": 7, "absolute_offset": 0, "submatches": []}}
    assert ripgrep.parse_match(json.dumps(match).encode()) == ripgrep.Match("src/a.py", 7, "  x = 1")
    raw = {"type": "match", "data": {"path": {"bytes": base64.b64encode(b"caf\xe9.txt").decode()},
                                     "lines": {"bytes": base64.b64encode(b"na\xefve\n").decode()}, "line_number": 1}}
    assert ripgrep.parse_match(json.dumps(raw).encode()) == ripgrep.Match("caf\ufffd.txt", 1, "na\ufffdve")
    for other in ({"type": "begin", "data": {"path": {"text": "a"}}}, {"type": "summary", "data": {}}):
        assert ripgrep.parse_match(json.dumps(other).encode()) is None
    assert ripgrep.join(".", "src/a.py") == "src/a.py" and ripgrep.join("src", "a.py") == "src/a.py"


@pytest.fixture
def ws(tmp_path):
    root = (tmp_path / "ws").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("one\nTODO disk a\n")
    (root / "src" / "b.py").write_text("TODO disk b\n")
    (root / "src" / "c.txt").write_text("TODO text\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.py").write_text("TODO vendored\n")
    return root


async def test_dirty_buffers_replace_their_files_clean_ones_are_read_on_disk(ws):
    editor = FakeEditor(root=ws)
    editor.open("src/a.py", "TODO buffer 1\nsame\nTODO buffer 3\n")  # unsaved: its disk lines must not show
    editor.open("src/b.py", "TODO disk b\n")  # saved: searched on disk
    editor.open("src/new.py", "a TODO in a file not yet on disk\n")
    out = await search.TOOL.run(ToolContext(editor=editor), search.SearchInput(pattern="TODO", glob="*.py"))
    assert out.text.splitlines() == ["src/a.py:1: TODO buffer 1", "src/a.py:3: TODO buffer 3", "src/b.py:1: TODO disk b",
                                     "src/new.py:1: a TODO in a file not yet on disk"]


async def test_files_whose_buffers_are_searched_are_left_unread_by_rg(ws):
    (ws / "src" / "sub").mkdir()
    (ws / "src" / "sub" / "a.py").write_text("TODO nested\n")  # the same name deeper down: still read
    (ws / "src" / "we*rd.py").write_text("TODO\n")  # a glob could not name it exactly: read, its matches dropped
    skipped = {"src/a.py": "", "src/we*rd.py": "", "other/x.py": "", "src": ""}  # "src": a buffer where rg runs
    args = search._excluded(skipped, "src")
    assert args == ["-g", "!/a.py"]
    read = []
    async for raw in ripgrep.lines(["--json", *ripgrep.WALK, *args, "--", "TODO"], ws / "src"):
        path = ripgrep.begun(json.loads(raw))
        if path is not None:
            read.append(path)
    assert read == ["b.py", "c.txt", "sub/a.py", "we*rd.py"]
    assert search._excluded({"src/a.py": "", "other/x.py": ""}, ".") == ["-g", "!/src/a.py", "-g", "!/other/x.py"]
    many = {f"pkg{n:05d}/module.py": "" for n in range(40_000)}  # more than a command line should carry
    spent = sum(len(arg) for arg in search._excluded(many, "."))
    assert search.EXCLUDE_BUDGET - 40 < spent <= search.EXCLUDE_BUDGET


async def test_every_file_open_and_unsaved_leaves_rg_nothing_to_read_and_that_is_no_error(ws):
    editor = FakeEditor(root=ws)
    context = ToolContext(editor=editor)
    with pytest.raises(ToolError, match="No files were searched"):  # a glob that matches no file says so
        await search.TOOL.run(context, search.SearchInput(pattern="TODO", glob="*.rs"))
    editor.open("src/a.py", "TODO buffer a\n")
    editor.open("src/b.py", "TODO buffer b\n")
    out = await search.TOOL.run(context, search.SearchInput(pattern="TODO", path="src", glob="*.py"))
    assert out.text.splitlines() == ["src/a.py:1: TODO buffer a", "src/b.py:1: TODO buffer b"]


async def test_a_pattern_only_ripgrep_reads_still_searches_buffers(ws):
    editor = FakeEditor(root=ws)
    editor.open("src/a.py", "alpha 1\n")
    out = await search.TOOL.run(ToolContext(editor=editor), search.SearchInput(pattern="[[:alpha:]]+ 1"))
    assert out.text == "src/a.py:1: alpha 1"  # Python's re cannot read [[:alpha:]]; rg's stdin searched the buffer


async def test_invalid_patterns_and_globs_are_tool_errors_with_rgs_message(ws):
    context = ToolContext(editor=FakeEditor(root=ws))
    with pytest.raises(ToolError, match="(?s)not a valid regular expression.*unclosed group"):
        await search.TOOL.run(context, search.SearchInput(pattern="(a"))
    with pytest.raises(ToolError, match="glob"):
        await list_files.TOOL.run(context, list_files.ListFilesInput(pattern="a[b"))


async def test_list_files_caps_and_stops_rg(ws):
    for n in range(list_files.MAX_FILES + 5):
        (ws / "src" / f"f{n:04d}.txt").write_text("")
    out = await list_files.TOOL.run(ToolContext(editor=FakeEditor(root=ws)), list_files.ListFilesInput(path="src"))
    lines = out.text.splitlines()
    assert len(lines) == list_files.MAX_FILES + 1 and lines[-1].startswith("[more than 1000 files")
    assert lines[:3] == ["src/a.py", "src/b.py", "src/c.txt"]


@pytest.mark.parametrize("pattern", ["TODO", r"^x", r"x$", r"^$", r"\s$", r"a\s+b", r"(?i)todo\b", r"[^a]", r"x*",
                                     r"(?s)a.b", r"\bb", r"(?<!a)b", r"a\Z", r"\Ab", r"(?i:a)(?-i:B)"])
def test_buffers_searched_in_one_scan_give_the_line_by_line_answer(pattern):
    texts = ["", "\n", "a\n", "a\n\nb", "x\r\nTODO x\r\n", "a\nb\n", "a \n b\nab\n", "TODO\ntodo x\n\n\nx", "aB\nb",
             "a\n" * 50 + "todo\n" + "b\n" * 50, "x" * 10 + "\n"]
    regex = __import__("re").compile(pattern)
    for text in texts:
        assert search._search_texts(regex, {"f": text}) == search._search_lines(regex, "f", text), (pattern, text)


async def test_buffers_only_ripgrep_reads_go_through_one_rg_with_their_own_line_numbers():
    buffers = {"b.py": "x\nalpha 1\n\nbeta 1", "a.py": "", "c/d.py": "beta 1\r\nnothing\nzeta 1\n"}
    hits = await search.search_buffers("[[:alpha:]]+ 1$", buffers)
    assert sorted(hits, key=lambda m: (m.path, m.line)) == [
        ripgrep.Match("b.py", 2, "alpha 1"), ripgrep.Match("b.py", 4, "beta 1"), ripgrep.Match("c/d.py", 3, "zeta 1")]


async def test_a_pattern_on_every_line_of_many_unsaved_buffers_shows_the_first_in_path_order(ws):
    editor = FakeEditor(root=ws)
    for n in (3, 1, 2):
        (ws / f"d{n}.txt").write_text("TODO on disk\n" * 150)
        editor.open(f"d{n}.txt", "TODO in the buffer\n" * 150)
    for pattern in ("TODO", "[[:upper:]]+ in"):  # Python's re, then rg for the buffers
        out = await search.TOOL.run(ToolContext(editor=editor), search.SearchInput(pattern=pattern))
        lines = out.text.splitlines()
        assert lines[:-1] == [f"d1.txt:{n}: TODO in the buffer" for n in range(1, 151)] + \
            [f"d2.txt:{n}: TODO in the buffer" for n in range(1, search.MAX_MATCHES - 149)]
        assert lines[-1].startswith("[more than 200 matches")


async def test_buffers_through_rg_are_fed_while_its_output_is_read_and_a_bad_pattern_is_a_tool_error():
    hits = await search.search_buffers("[[:alpha:]]", {"a.py": "x\n" * 300_000})  # more output than a pipe holds
    assert [m.line for m in hits] == list(range(1, search.MAX_MATCHES + 2))
    for size in (1, 300_000):  # rg exits on the pattern before or while it is fed
        with pytest.raises(ToolError, match="not a valid regular expression"):
            await search.search_buffers("(", {"a.py": "x\n" * size})
