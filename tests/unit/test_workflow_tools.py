"""The workflow's pure parts: the size of the tool definitions, command files and `/name` messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_lsp import tools
from agent_lsp.sessions.commands import Command, expand, invocation, parse_command, read_commands
from agent_lsp.tools.finish import finish_tool
from agent_lsp.tools.forget import Forget
from agent_lsp.tools.memory import MemoryFile
from agent_lsp.tools.remember import Remember
from agent_lsp.tools.skill import Skill, SkillTool

MAX_DEFINITIONS = 12_000


def test_the_whole_tool_set_stays_under_12k_characters_of_definitions():
    memory = MemoryFile(Path("/w/AGENTS.md"), in_workspace=True)
    skill = SkillTool([Skill("review", "Review.", "user", Path("/s"), "Body.")])
    offered = [*tools.ALL, Remember(memory), Forget(memory), finish_tool({"type": "object"}), skill]
    size = sum(len(json.dumps({"name": s.name, "description": s.description, "input_schema": s.input_schema}))
               for s in (t.spec() for t in offered))
    assert size < MAX_DEFINITIONS, size


@pytest.mark.parametrize("message, expected", [
    ("/review app.py", ("review", "app.py")),
    ("  /compact  keep the API\nand the tests ", ("compact", "keep the API\nand the tests")),
    ("/memory", ("memory", "")),
    ("/usr/bin is missing", None),
    ("look at /review", None),
    ("/", None),
])
def test_invocation(message, expected):
    assert invocation(message) == expected


def test_a_command_file_with_front_matter_and_arguments():
    command = parse_command("review", b"---\ndescription: 'Review a file'\nargument-hint: <path>\n# a comment\n"
                                      b"model: ignored\n---\nReview $ARGUMENTS, then $ARGUMENTS again.\n", "user")
    assert command == Command(name="review", description="Review a file", source="user", argument_hint="<path>",
                              body="Review $ARGUMENTS, then $ARGUMENTS again.")
    assert expand(command, "a.py") == "Review a.py, then a.py again."
    plain = parse_command("fix", b"# Fix the build\n\nMake it pass.", "project")
    assert (plain.description, plain.argument_hint) == ("Fix the build", None)
    assert expand(plain, "fast") == "# Fix the build\n\nMake it pass.\n\nARGUMENTS: fast"
    assert expand(plain, "") == "# Fix the build\n\nMake it pass."


@pytest.mark.parametrize("data, problem", [
    (b"---\ndescription: x\nbody", "its front matter has no closing `---` line"),
    (b"---\njust words\n---\nbody", "line 2 of its front matter is not `key: value`"),
    (b"\xff\xfe", "not valid UTF-8"),
])
def test_a_broken_command_file_says_why(data, problem):
    with pytest.raises(ValueError, match=problem.replace("`", ".").replace("(", r"\(")):
        parse_command("x", data, "user")


def test_broken_files_are_skipped_with_a_warning_naming_them(tmp_path):
    (tmp_path / "good.md").write_text("Do it.")
    (tmp_path / "bad.md").write_bytes(b"\xff")
    (tmp_path / "compact.md").write_text("Mine.")
    (tmp_path / "has space.md").write_text("Mine.")
    found, warnings = read_commands(tmp_path, "user")
    assert [c.name for c in found] == ["good"]
    assert sorted(warnings) == [
        f"agent-lsp: the command file {tmp_path / 'bad.md'} was skipped: not valid UTF-8 (invalid start byte at byte 0)",
        f"agent-lsp: the command file {tmp_path / 'compact.md'} was skipped: /compact is a builtin command",
        f"agent-lsp: the command file {tmp_path / 'has space.md'} was skipped: its name is not a command name "
        "(letters, digits, `.`, `_`, `-`)"]
