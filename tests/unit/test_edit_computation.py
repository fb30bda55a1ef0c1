"""The edit computation: which text changes, and where LSP must be told it changes."""

from __future__ import annotations

import pytest

from agent_lsp.core.ports import TextEdit
from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.core.positions import position_at
from agent_lsp.lsp.convert import lsp_text_edits
from agent_lsp.tools import edit_file, write_file
from agent_lsp.tools.edit_file import applied, plan
from tests.fakes.editor import FakeEditor


def test_unique_match_is_one_edit():
    assert plan("a = 1\nb = 2\n", "b = 2", "b = 3", False, "f.py") == [TextEdit(6, 11, "b = 3")]


def test_not_found_says_so():
    with pytest.raises(ToolError, match="old_string was not found in f.py"):
        plan("a = 1\n", "z", "y", False, "f.py")


def test_not_unique_names_the_lines_unless_replace_all():
    text = "x = 1\ny = 2\nx = 1\n"
    with pytest.raises(ToolError, match=r"occurs 2 times in f.py \(lines 1, 3\)"):
        plan(text, "x = 1", "x = 9", False, "f.py")
    edits = plan(text, "x = 1", "x = 9", True, "f.py")
    assert applied(text, edits) == "x = 9\ny = 2\nx = 9\n"


def test_same_or_empty_old_string_is_refused():
    with pytest.raises(ToolError, match="the same"):
        plan("a", "a", "a", False, "f")
    with pytest.raises(ToolError, match="old_string is empty"):
        plan("a", "", "b", False, "f")


def test_crlf_files_keep_their_line_endings():
    text = "def f():\r\n    return 1\r\n"
    edits = plan(text, "def f():\n    return 1", "def f():\n    return 2", False, "f.py")
    assert applied(text, edits) == "def f():\r\n    return 2\r\n"


def test_non_ascii_columns_count_utf16_code_units():
    text = "s = '😀é' + x\n"
    (edit,) = plan(text, "x", "y", False, "f.py")
    assert (edit.start, edit.end) == (11, 12)  # code points
    assert position_at(text, edit.start, "utf-16") == {"line": 0, "character": 12}  # 😀 is two UTF-16 units
    assert position_at(text, edit.start, "utf-8") == {"line": 0, "character": 15}
    assert position_at(text, edit.start, "utf-32") == {"line": 0, "character": 11}
    assert lsp_text_edits(text, [edit], "utf-16") == [
        {"range": {"start": {"line": 0, "character": 12}, "end": {"line": 0, "character": 13}}, "newText": "y"}]


def test_positions_on_later_lines():
    text = "é\n😀😀ab\n"
    assert position_at(text, text.index("b"), "utf-16") == {"line": 1, "character": 5}


async def test_edit_file_goes_through_the_editor_with_the_version_it_read(tmp_path):
    editor = FakeEditor(root=tmp_path.resolve())
    path = editor.open("m.py", "a = 1\n", version=7)
    ctx = ToolContext(editor=editor)
    out = await edit_file.TOOL.run(ctx, edit_file.EditFileInput(path="m.py", old_string="1", new_string="2"))
    (edit,) = editor.applied
    assert (edit.path, edit.version, edit.edits, edit.create) == (path, 7, [TextEdit(4, 5, "2")], False)
    assert editor.buffers[path] == "a = 2\n" and not path.exists()
    assert out.diff == "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    assert out.text == f"Edited m.py: replaced 1 occurrence.\n{out.diff}\nNo diagnostics after the edit."


async def test_a_refused_edit_is_a_tool_error(tmp_path):
    editor = FakeEditor(root=tmp_path.resolve(), refuse_edits=True)
    editor.open("m.py", "a = 1\n")
    with pytest.raises(ToolError, match="did not apply the edit to m.py \\(the document changed\\)"):
        await edit_file.TOOL.run(ToolContext(editor=editor),
                                 edit_file.EditFileInput(path="m.py", old_string="1", new_string="2"))


async def test_write_file_creates_a_new_file(tmp_path):
    editor = FakeEditor(root=tmp_path.resolve())
    out = await write_file.TOOL.run(ToolContext(editor=editor),
                                    write_file.WriteFileInput(path="pkg/new.py", content="x = 1\n"))
    (edit,) = editor.applied
    assert edit.create and edit.version is None and edit.edits == [TextEdit(0, 0, "x = 1\n")]
    assert out.text.startswith("Created pkg/new.py (6 characters).\n--- a/pkg/new.py")


def test_the_diff_of_a_one_line_edit_in_a_file_of_repeated_lines_is_one_hunk():
    """difflib counts lines repeated over 1 % of the file as junk: the diff used to replace the whole file."""
    from agent_lsp.tools.editing import unified_diff

    big = "first line\n" + ("x" * 9 + "\n") * 500
    assert unified_diff("big", big, big.replace("first line", "top", 1)) == (
        "--- a/big\n+++ b/big\n@@ -1,4 +1,4 @@\n-first line\n+top\n xxxxxxxxx\n xxxxxxxxx\n xxxxxxxxx\n")
    tail = big + "end\n" + "y\n" * 50
    assert unified_diff("m", tail, tail.replace("end", "END")) == (
        "--- a/m\n+++ b/m\n@@ -499,7 +499,7 @@\n xxxxxxxxx\n xxxxxxxxx\n xxxxxxxxx\n-end\n+END\n y\n y\n y\n")
