"""The read tools against a FakeEditor: confinement, .gitignore, unsaved buffers, bounds."""

from __future__ import annotations

import os
import random

import pytest

from agent_lsp.core.prompt import Environment, editor_context, project_instructions, system_prompt
from agent_lsp.core.tool import ToolContext, ToolError, bound
from agent_lsp.tools import list_files, read_file, search
from tests.fakes.editor import FakeEditor


@pytest.fixture
def ws(tmp_path):
    root = (tmp_path / "ws").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("def a():\n    return 1  # TODO tidy\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("TODO generated\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "debug.log").write_text("TODO in a log\n")
    (tmp_path / "secret.txt").write_text("secret TODO\n")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    return root


def ctx(root) -> ToolContext:
    return ToolContext(editor=FakeEditor(root=root))


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd", "link.txt", "src/../../secret.txt"])
async def test_paths_outside_the_workspace_are_refused(ws, path):
    with pytest.raises(ToolError, match="outside the workspace folders"):
        await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path=path))


async def test_list_files_honours_gitignore_and_skips_links_out(ws):
    out = await list_files.TOOL.run(ctx(ws), list_files.ListFilesInput())
    assert out.text.splitlines() == [".gitignore", "src/a.py"]
    out = await list_files.TOOL.run(ctx(ws), list_files.ListFilesInput(pattern="*.py"))
    assert out.text == "src/a.py"


async def test_search_sees_unsaved_buffers_and_not_ignored_files(ws):
    context = ctx(ws)
    context.editor.open("src/a.py", "def a():\n    return 2  # TODO unsaved\n")
    out = await search.TOOL.run(context, search.SearchInput(pattern="TODO"))
    assert out.text == "src/a.py:2: return 2  # TODO unsaved"
    with pytest.raises(ToolError, match="not a valid regular expression"):
        await search.TOOL.run(context, search.SearchInput(pattern="("))


async def test_read_file_offset_and_limit(ws):
    (ws / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    out = await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path="long.txt", offset=3, limit=2))
    assert out.text == "long.txt (10 lines)\n     3\tline 3\n     4\tline 4\n[6 more lines; read on with offset=5]"
    with pytest.raises(ToolError, match="past the end"):
        await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path="long.txt", offset=20))


def test_output_is_bounded_with_a_note():
    assert bound("abc\ndef\nghi", 5) == "abc\nd\n[output truncated: 6 more characters, 1 more lines]"
    assert bound("short", 5) == "short"


def test_system_prompt_layers(ws):
    (ws / "AGENTS.md").write_text("Use tabs.\n")
    env = Environment(os_name="Linux 6", roots=[ws], open_buffers=[("src/a.py", True)], active_file="src/a.py",
                      selection=(1, 2, "def a():\n    return 1"))
    prompt = system_prompt(env, project_instructions([ws]))
    assert prompt.startswith("You are agent-lsp, a coding agent")
    assert prompt.endswith(f"# Environment\nOperating system: Linux 6\nWorkspace folder: {ws}\n\n"
                           "# Project instructions (AGENTS.md)\nUse tabs.")
    assert editor_context(env) == ("<editor-context>\nOpen buffers: src/a.py (unsaved)\nActive file: src/a.py\n"
                                   "Selection: lines 1-2 of the active file:\n```\ndef a():\n    return 1\n```\n"
                                   "</editor-context>")
    assert editor_context(Environment(os_name="x", roots=[ws])) is None


def test_the_root_instructions_leave_out_a_link_out_of_the_folder_and_read_a_linked_twin_once(ws, tmp_path):
    os.symlink(tmp_path / "secret.txt", ws / "AGENTS.md")
    assert project_instructions([ws]) == []
    os.unlink(ws / "AGENTS.md")
    (ws / "AGENTS.md").write_text("Use tabs.\n")
    os.symlink(ws / "AGENTS.md", ws / "CLAUDE.md")
    assert project_instructions([ws]) == [("AGENTS.md", "Use tabs.\n")]
    os.unlink(ws / "CLAUDE.md")
    (ws / "CLAUDE.md").write_text("Run the tests.\n")  # two files of their own: both
    assert project_instructions([ws]) == [("AGENTS.md", "Use tabs.\n"), ("CLAUDE.md", "Run the tests.\n")]


@pytest.mark.parametrize("padding", [0, 600_000])  # 1.2 MB of padding: a big file
async def test_read_file_numbers_lines_as_search_does(ws, padding):
    (ws / "crlf.txt").write_bytes(b"-\n" * padding + b"one\r\ntwo\x0cstill two\r\n\r\nfour TODO")
    total = padding + 4
    out = await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path="crlf.txt", offset=padding + 1))
    assert out.text == (f"crlf.txt ({total} lines)\n{padding + 1:>6}\tone\n{padding + 2:>6}\ttwo\x0cstill two\n"
                        f"{padding + 3:>6}\t\n{padding + 4:>6}\tfour TODO")
    found = await search.TOOL.run(ctx(ws), search.SearchInput(pattern="TODO", path="crlf.txt"))
    assert found.text == f"crlf.txt:{padding + 4}: four TODO"
    out = await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path="crlf.txt", offset=padding + 2, limit=2))
    assert out.text == (f"crlf.txt ({total} lines)\n{padding + 2:>6}\ttwo\x0cstill two\n{padding + 3:>6}\t\n"
                        f"[1 more lines; read on with offset={padding + 4}]")
    out = await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path="crlf.txt", limit=2))
    assert out.text.split("\n")[1:] == ["     1\t-" if padding else "     1\tone",
                                         "     2\t-" if padding else "     2\ttwo\x0cstill two",
                                         f"[{total - 2} more lines; read on with offset=3]"]
    (ws / "empty.txt").write_bytes(b"")
    out = await read_file.TOOL.run(ctx(ws), read_file.ReadFileInput(path="empty.txt"))
    assert out.text == "empty.txt (0 lines)\n(empty)"


async def test_read_file_of_an_open_buffer_counts_its_lines_the_same_way(ws):
    context = ctx(ws)
    context.editor.open("src/a.py", "a\r\nb\n\nc")
    out = await read_file.TOOL.run(context, read_file.ReadFileInput(path="src/a.py", offset=4))
    assert out.text == "src/a.py (4 lines, open in the editor with unsaved changes)\n     4\tc"
    with pytest.raises(ToolError, match=r"offset 5 is past the end of src/a.py \(4 lines\)"):
        await read_file.TOOL.run(context, read_file.ReadFileInput(path="src/a.py", offset=5))


def test_read_file_numbers_only_the_lines_the_cut_keeps_and_says_the_same_as_bound():
    rng = random.Random(2)
    for _ in range(2000):
        lines = ["".join(rng.choice("ab\t\r ") for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(1, 60))]
        start, header = rng.choice([0, 3, 999_990, 5_000_000]), "h" * rng.randint(0, 20)
        footer, limit = rng.choice(["", "\n[3 more lines; read on with offset=9]"]), rng.randint(1, 400)
        whole = header + "\n" + "\n".join(f"{start + i + 1:>6}\t{line}" for i, line in enumerate(lines)) + footer
        assert read_file._numbered(header, lines, start, footer, limit) == bound(whole, limit)


def test_read_file_window_is_the_lines_a_plain_split_gives():
    """Lines found by counting a block at a time, across block boundaries, in str and bytes alike."""
    rng = random.Random(5)
    for _ in range(300):
        lengths = rng.choice([(0, 3), (0, 200), (read_file.BLOCK - 2, read_file.BLOCK + 2)])
        text = "\n".join("x" * rng.randint(*lengths) for _ in range(rng.randint(0, 80)))
        text += rng.choice(["", "\n"])
        lines = text.split("\n") if text else []
        if text.endswith("\n"):
            lines.pop()
        start, limit = rng.randint(0, len(lines) + 2), rng.randint(1, 90)
        wanted = "".join(line + "\n" for line in lines[start:start + limit])
        if start + limit >= len(lines) and not text.endswith("\n") and wanted:
            wanted = wanted[:-1]
        for kind in (str, bytes):
            data = text if kind is str else text.encode()
            total, window = read_file._window(data, start, limit)
            assert total == len(lines)
            assert window == (wanted if kind is str else wanted.encode())
