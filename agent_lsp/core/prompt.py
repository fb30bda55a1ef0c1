"""The system prompt, in layers: who the agent is, the editor's environment, the project's own instructions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

BASE = """You are agent-lsp, a coding agent working inside the user's editor through its language server protocol.
You see the workspace as the editor sees it: open buffers with their unsaved text, and the diagnostics of the \
editor's language servers. Edits you make land in the user's buffers through the editor, with undo.

How to work:
- Use the tools instead of guessing; read a file before you edit it, and re-read it if an edit is refused.
- Run independent read-only tools in one turn; they run concurrently.
- Keep edits minimal and focused on what was asked; check diagnostics after editing.
- Be concise: answer in a few sentences or a short list, with file paths and line numbers where useful.
- When you are done, say what you did and anything left to do. Do not announce work you will not do."""

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS = 20_000
MAX_SELECTION = 4_000


@dataclass
class Environment:
    """What the editor tells the agent about where it is."""

    os_name: str
    roots: list[Path]
    open_buffers: list[tuple[str, bool]] = field(default_factory=list)
    """(path as shown, has unsaved changes): the active buffer and the most recently opened ones"""
    more_buffers: int = 0
    """How many other buffers are open (list_open_buffers lists them)"""
    active_file: Optional[str] = None
    selection: Optional[tuple[int, int, str]] = None
    """(first line, last line, selected text), 1-based lines"""


def project_instructions(roots: list[Path]) -> list[tuple[str, str]]:
    """The AGENTS.md and CLAUDE.md of the first workspace folder that has either: [(file name, text)], bounded."""
    for root in roots:
        found = []
        budget = MAX_INSTRUCTIONS
        for name in INSTRUCTION_FILES:
            try:
                text = (root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found.append((name, text[:budget]))
            budget = max(0, budget - len(text))
        if found:
            return found
    return []


def system_prompt(env: Environment, instructions: Optional[list[tuple[str, str]]] = None,
                  memory: Optional[list[str]] = None) -> str:
    """The system prompt: only what holds for the whole session, so consecutive requests share their prefix.

    `memory` is the project memory kept outside the workspace; memory in AGENTS.md comes with the instructions."""
    lines = [BASE, "", "# Environment", f"Operating system: {env.os_name}"]
    lines += [f"Workspace folder: {root}" for root in env.roots] or ["Workspace folder: (none)"]
    for name, text in instructions or []:
        if text.strip():
            lines += ["", f"# Project instructions ({name})", text.strip()]
    if memory:
        lines += ["", "# Project memory (facts remembered in earlier chats)", *(f"- {fact}" for fact in memory)]
    return "\n".join(lines)


def editor_context(env: Environment) -> Optional[str]:
    """What the editor shows right now, sent along with the user's message."""
    lines = []
    if env.open_buffers:
        more = f", and {env.more_buffers} more (list_open_buffers lists them all)" if env.more_buffers else ""
        lines.append("Open buffers: " + ", ".join(f"{p} (unsaved)" if dirty else p for p, dirty in env.open_buffers)
                     + more)
    if env.active_file:
        lines.append(f"Active file: {env.active_file}")
    if env.selection:
        first, last, text = env.selection
        lines.append(f"Selection: lines {first}-{last} of the active file:\n```\n{text[:MAX_SELECTION]}\n```")
    return "\n".join(["<editor-context>", *lines, "</editor-context>"]) if lines else None
