"""Project instructions where they live (PROTOCOL §10): a subfolder's AGENTS.md / CLAUDE.md joins a chat once, the
first time the chat reads, edits or lists a path under that folder, named in that tool's result."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_lsp import tools
from agent_lsp.core.loop import ChatConfig, ChatState, run_chat
from agent_lsp.core.messages import ToolResultsMessage, UserMessage
from agent_lsp.core.prompt import MAX_INSTRUCTIONS, SubfolderInstructions
from agent_lsp.core.tool import ToolContext
from agent_lsp.models.scripted import ScriptedModel
from tests.fakes.editor import FakeEditor


def calls(*uses: tuple[str, dict]) -> dict:
    return {"content": [{"type": "tool_use", "id": f"t{i}", "name": n, "input": a} for i, (n, a) in enumerate(uses, 1)]}


async def results_of_chat(root: Path, script: list[dict], instructions: SubfolderInstructions) -> list[str]:
    """Every tool result of one chat, in order."""
    state = ChatState(history=[])
    config = ChatConfig(system="sys", tools=list(tools.ALL), max_turns=10)
    ctx = ToolContext(editor=FakeEditor(root=root), instructions=instructions)
    async for _ in run_chat(ScriptedModel([*script, {"content": [{"type": "text", "text": "Done."}]}]),
                            UserMessage(text="go"), state, config, ctx):
        pass
    return [r.content for m in state.history if isinstance(m, ToolResultsMessage) for r in m.results]


@pytest.fixture
def root(tmp_path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "AGENTS.md").write_text("Root rules.\n")
    (root / "pkg" / "AGENTS.md").write_text("Use tabs in pkg.\n")
    (root / "pkg" / "deep" / "CLAUDE.md").write_text("Deep rules.\n")
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (root / "pkg" / "deep" / "b.py").write_text("b = 2\n")
    (root / "other" / "c.py").write_text("c = 3\n")
    return root


PKG = "\n\nInstructions of pkg/AGENTS.md (they apply to the files under pkg/; given once in this chat):\nUse tabs in pkg."
DEEP = ("\n\nInstructions of pkg/deep/CLAUDE.md (they apply to the files under pkg/deep/; given once in this chat):\n"
        "Deep rules.")


async def test_a_subfolder_s_instructions_join_the_chat_once_named_in_the_first_result(root):
    script = [calls(("read_file", {"path": "pkg/a.py"}), ("read_file", {"path": "pkg/a.py"})),
              calls(("list_files", {"path": "pkg"})),
              calls(("read_file", {"path": "pkg/deep/b.py"})),
              calls(("edit_file", {"path": "other/c.py", "old_string": "c = 3", "new_string": "c = 4"})),
              calls(("read_file", {"path": "AGENTS.md"}))]
    results = await results_of_chat(root, script, SubfolderInstructions([root]))
    assert results == [
        "pkg/a.py (1 lines)\n     1\ta = 1" + PKG,
        "pkg/a.py (1 lines)\n     1\ta = 1",
        "pkg/AGENTS.md\npkg/a.py\npkg/deep/CLAUDE.md\npkg/deep/b.py",
        "pkg/deep/b.py (1 lines)\n     1\tb = 2" + DEEP,
        results[4],
        "AGENTS.md (1 lines)\n     1\tRoot rules.",  # the root's is in the system prompt already
    ]
    assert results[4].startswith("Edited other/c.py: replaced 1 occurrence.") and "Instructions" not in results[4]

    again = await results_of_chat(root, [calls(("list_files", {"path": "pkg/deep"}))], SubfolderInstructions([root]))
    assert again == ["pkg/deep/CLAUDE.md\npkg/deep/b.py" + PKG + DEEP]  # another chat: given again


async def test_writing_a_file_in_a_subfolder_counts_and_a_subagent_has_its_own(root):
    instructions = SubfolderInstructions([root])
    results = await results_of_chat(root, [calls(("write_file", {"path": "pkg/new.py", "content": "n = 0\n"}))],
                                    instructions)
    assert results[0].startswith("Created pkg/new.py") and results[0].endswith(PKG)
    assert await instructions.fresh().note(((root / "pkg"),)) == PKG
    assert await instructions.note(((root / "pkg"),)) == ""


async def test_a_link_out_of_the_workspace_is_not_read_and_the_text_is_bounded(root, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("a private key")
    os.symlink(secret, root / "other" / "AGENTS.md")
    (root / "pkg" / "AGENTS.md").write_text("x" * (MAX_INSTRUCTIONS + 5000))
    os.symlink(root / "pkg" / "AGENTS.md", root / "pkg" / "CLAUDE.md")  # the same file twice: once
    instructions = SubfolderInstructions([root])
    assert await instructions.note((root / "other",)) == ""
    note = await instructions.note((root / "pkg" / "deep",))
    assert note.count("Instructions of") == 2 and "pkg/CLAUDE.md" not in note
    assert note.split("\n")[3] == "x" * MAX_INSTRUCTIONS


async def test_another_workspace_folder_s_own_file_counts_as_a_subfolder_s(tmp_path):
    first, second = (tmp_path / "first").resolve(), (tmp_path / "second").resolve()
    for folder in (first, second):
        (folder / "src").mkdir(parents=True)
        (folder / "AGENTS.md").write_text(f"Rules of {folder.name}.\n")
    instructions = SubfolderInstructions([first, second])
    assert await instructions.note((first / "src",)) == ""  # the first one's is in the system prompt
    assert await instructions.note((second / "src", second)) == (
        "\n\nInstructions of second/AGENTS.md (they apply to the files under second/; given once in this chat):\n"
        "Rules of second.")
    assert await instructions.note((tmp_path,)) == ""  # outside every folder
