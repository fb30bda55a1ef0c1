"""The system prompt, in layers: who the agent is, the editor's environment, the project's own instructions."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from agent_lsp.core.paths import real, under

BASE = """You are agent-lsp, a coding agent working inside the user's editor through its language server protocol.
You see the workspace as the editor sees it: open buffers with their unsaved text, and the diagnostics of the \
editor's language servers. Edits you make land in the user's buffers through the editor, with undo.

How to work:
- Use the tools instead of guessing; read a file before you edit it, and re-read it if an edit is refused.
- Run independent read-only tools in one turn; they run concurrently.
- Keep edits minimal and focused on what was asked; check diagnostics after editing.
- With the symbol tools: rewrite a whole function, method or class with read_symbol then replace_symbol, and use \
edit_file for a few lines inside one; call impact after changing a signature and before delete_symbol. A language \
answer whose `index:` line is not `ready` may be incomplete: confirm an empty one with search.
- Be concise: answer in a few sentences or a short list, with file paths and line numbers where useful.
- When you are done, say what you did and anything left to do. Do not announce work you will not do."""

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS = 20_000
MAX_SELECTION = 4_000
MAX_SKILL_LISTING = 12_000
"""Characters of the skills' names and descriptions in the system prompt; past them, skills are named only."""
MAX_SKILL_NAMES = 4_000
SKILLS_INTRO = ("Skills are procedures for particular tasks. When a task matches a skill's description, call `skill` "
                "with its name first and follow what it says.")


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
    """The AGENTS.md and CLAUDE.md of the first workspace folder that has either: [(file name, text)], bounded. As
    for a subfolder's, a link leading out of the folder is not read (a cloned repository's `AGENTS.md -> ~/.aws/
    credentials` would otherwise go to the model in every request), and CLAUDE.md linked to AGENTS.md is read once."""
    for root in roots:
        found = folder_instructions(root, str(real(root)))
        if found:
            return [(path.name, text) for path, text in found]
    return []


def folder_instructions(folder: Path, inside: Optional[str] = None) -> list[tuple[Path, str]]:
    """A folder's AGENTS.md and CLAUDE.md: [(file, text)], MAX_INSTRUCTIONS characters together. With `inside` (a
    real path), a file whose link leads out of it is left out, and so is one that is a link to the other."""
    found: list[tuple[Path, str]] = []
    taken: set[str] = set()
    budget = MAX_INSTRUCTIONS
    for name in INSTRUCTION_FILES:
        path = folder / name
        if inside is not None:
            resolved = str(real(path))
            if resolved in taken or not under(resolved, inside):
                continue
            taken.add(resolved)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found.append((path, text[:budget]))
        budget = max(0, budget - len(text))
    return found


class SubfolderInstructions:
    """The AGENTS.md / CLAUDE.md of a workspace's subfolders (PROTOCOL §10 "Project instructions where they live"),
    each added to one chat once: the first time one of its calls reads, edits or lists a path under that folder.
    The folder whose files the system prompt holds is never added again; another workspace folder's are, as a
    subfolder's."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [str(real(root)) for root in roots]
        given = next((root for root in self.roots if any(os.path.isfile(os.path.join(root, name))
                                                          for name in INSTRUCTION_FILES)), None)
        self._given = {given} if given else set()
        self._seen = set(self._given)

    def fresh(self) -> "SubfolderInstructions":
        """The same workspace for another context (a subagent's): nothing added yet."""
        other = SubfolderInstructions.__new__(SubfolderInstructions)
        other.roots, other._given, other._seen = self.roots, self._given, set(self._given)
        return other

    def _unseen(self, folders: tuple[Path, ...]) -> list[tuple[str, str]]:
        """(workspace folder, folder) of each folder from a workspace folder down to each of `folders` not looked
        at yet in this chat, now marked as looked at (on the loop: concurrent calls never add one twice)."""
        new = []
        for folder in map(str, folders):
            root = next((r for r in self.roots if under(folder, r)), None)
            if root is None:
                continue
            chain = [root]
            for part in Path(os.path.relpath(folder, root)).parts if folder != root else ():
                chain.append(os.path.join(chain[-1], part))
            for each in chain:
                if each not in self._seen:
                    self._seen.add(each)
                    new.append((root, each))
        return new

    async def note(self, folders: tuple[Path, ...]) -> str:
        """What a call's result gains for the folders it touched: the instructions of those not seen yet, each
        naming its file; "" when there are none."""
        new = self._unseen(folders)
        if not new:
            return ""
        found = await asyncio.to_thread(lambda: [(root, path, text) for root, folder in new
                                                 for path, text in folder_instructions(Path(folder), root)])
        several = len(self.roots) > 1
        parts = []
        for root, path, text in found:
            if not text.strip():
                continue
            shown = os.path.relpath(path, root).replace(os.sep, "/")
            shown = f"{os.path.basename(root)}/{shown}" if several else shown
            where = shown.rsplit("/", 1)[0] + "/" if "/" in shown else "the workspace folder"
            parts.append(f"\n\nInstructions of {shown} (they apply to the files under {where}; given once in this "
                         f"chat):\n{text.strip()}")
        return "".join(parts)


def system_prompt(env: Environment, instructions: Optional[list[tuple[str, str]]] = None,
                  memory: Optional[list[str]] = None, skills: Sequence[tuple[str, str]] = ()) -> str:
    """The system prompt: only what holds for the whole session, so consecutive requests share their prefix.

    `memory` is the project memory kept outside the workspace; memory in AGENTS.md comes with the instructions.
    `skills`: (name, description) of each skill, never its body (the `skill` tool answers that)."""
    lines = [BASE, "", "# Environment", f"Operating system: {env.os_name}"]
    lines += [f"Workspace folder: {root}" for root in env.roots] or ["Workspace folder: (none)"]
    for name, text in instructions or []:
        if text.strip():
            lines += ["", f"# Project instructions ({name})", text.strip()]
    if memory:
        lines += ["", "# Project memory (facts remembered in earlier chats)", *(f"- {fact}" for fact in memory)]
    if skills:
        lines += ["", "# Skills", SKILLS_INTRO, *skill_listing(skills)]
    return "\n".join(lines)


def skill_listing(skills: Sequence[tuple[str, str]]) -> list[str]:
    """A line per skill, `- name: description`, MAX_SKILL_LISTING characters in all; the skills past them named
    only (MAX_SKILL_NAMES characters), then counted."""
    lines, size = [], 0
    for i, (name, description) in enumerate(skills):
        line = f"- {name}: {description}"
        if size + len(line) > MAX_SKILL_LISTING:
            rest = [n for n, _ in skills[i:]]
            shown, length = [], 0
            for n in rest:
                if length + len(n) + 2 > MAX_SKILL_NAMES:
                    break
                shown.append(n)
                length += len(n) + 2
            more = f", and {len(rest) - len(shown)} more" if len(shown) < len(rest) else ""
            lines.append(f"- {len(rest)} more skills, named only (`skill` names them all): {', '.join(shown)}{more}")
            break
        lines.append(line)
        size += len(line) + 1
    return lines


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
