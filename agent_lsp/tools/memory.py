"""Project memory, what `remember` and `forget` share: where the facts live and how they are written.

By default (`memoryFile: "agents"`) facts are bullets of the "## Memory" section of the workspace's AGENTS.md,
edited through the editor like any file, so the user sees the diff and can undo it. With `"private"` they live
in a file under the data directory, keyed by the workspace, and the repository stays untouched.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from agent_lsp.core.paths import display
from agent_lsp.core.ports import FileEdit
from agent_lsp.core.tool import ToolContext, ToolOutput
from agent_lsp.tools.editing import apply, current, minimal_edit, unified_diff

HEADING = "## Memory"
MAX_MEMORY_CHARS = 10_000
_SECTION = re.compile(r"^## Memory[ \t]*$", re.MULTILINE)
_NEXT_HEADING = re.compile(r"^#{1,2} ", re.MULTILINE)


@dataclass(frozen=True)
class MemoryFile:
    """Where a workspace's facts live; `in_workspace` files are edited through the editor."""

    path: Path
    in_workspace: bool


def memory_file(mode: str, roots: list[Path], data_dir: Optional[Path]) -> Optional[MemoryFile]:
    """The memory file of the first workspace folder (None without one, or for "private" without a data dir)."""
    if not roots:
        return None
    if mode == "private":
        if data_dir is None:
            return None
        key = hashlib.sha256(str(roots[0]).encode()).hexdigest()[:16]
        return MemoryFile(data_dir / "memory" / f"{key}.md", in_workspace=False)
    return MemoryFile(roots[0] / "AGENTS.md", in_workspace=True)


def _section(text: str) -> tuple[int, int]:
    """[start, end) of the Memory section's body in `text`; (-1, -1) when there is none."""
    found = _SECTION.search(text)
    if not found:
        return -1, -1
    start = found.end() + 1 if found.end() < len(text) else found.end()
    following = _NEXT_HEADING.search(text, start)
    return start, following.start() if following else len(text)


def entries(text: str) -> list[str]:
    """The facts of a memory file's text, in order."""
    start, end = _section(text)
    body = text[start:end] if start >= 0 else ""
    return [line[2:].strip() for line in body.splitlines() if line.startswith("- ") and line[2:].strip()]


def with_fact(text: str, fact: str) -> str:
    """`text` with `fact` appended as the last bullet of its Memory section (made when missing)."""
    bullet = f"- {' '.join(fact.split())}\n"
    start, end = _section(text)
    if start < 0:
        lead = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{lead}{HEADING}\n\n{bullet}"
    body = text[start:end].rstrip("\n")
    body = f"{body}\n{bullet}" if body.strip() else f"\n{bullet}"
    rest = text[end:]
    return text[:start] + body + ("\n" + rest if rest else "")


def without_fact(text: str, fact: str) -> Optional[str]:
    """`text` without the bullet whose fact is `fact` (None when no bullet is)."""
    start, end = _section(text)
    if start < 0:
        return None
    wanted = " ".join(fact.split())
    lines = text[start:end].splitlines(keepends=True)
    kept = [line for line in lines if not (line.startswith("- ") and " ".join(line[2:].split()) == wanted)]
    if len(kept) == len(lines):
        return None
    return text[:start] + "".join(kept) + text[end:]


def read_memory(memory: Optional[MemoryFile]) -> list[str]:
    """The facts on disk (what a new chat's system prompt carries)."""
    if memory is None:
        return []
    try:
        return entries(memory.path.read_text(encoding="utf-8", errors="replace")[:MAX_MEMORY_CHARS * 4])
    except OSError:
        return []


async def write_memory(ctx: ToolContext, memory: MemoryFile, new_text: str, summary: str) -> ToolOutput:
    """Write the memory file: through the editor inside the workspace, atomically on disk in the data dir."""
    if memory.in_workspace:
        now = current(ctx, memory.path)
        diff = unified_diff(display(ctx.editor.roots, memory.path), now.text, new_text)
        edit = FileEdit(path=memory.path, base_text=now.text, version=now.version, create=not now.exists,
                        edits=[minimal_edit(now.text, new_text)], label=f"agent-lsp: {summary.lower()}")
        return await apply(ctx, edit, summary + ".", diff)
    memory.path.parent.mkdir(parents=True, exist_ok=True)
    old = memory.path.read_text(encoding="utf-8") if memory.path.exists() else ""
    temporary = memory.path.with_suffix(".tmp")
    temporary.write_text(new_text, encoding="utf-8")
    os.replace(temporary, memory.path)
    return ToolOutput(f"{summary} (private memory file {memory.path}).", diff=unified_diff("memory", old, new_text))


def memory_text(ctx: ToolContext, memory: MemoryFile) -> str:
    """The memory file's current text (the open buffer wins)."""
    if memory.in_workspace:
        return current(ctx, memory.path).text
    try:
        return memory.path.read_text(encoding="utf-8")
    except OSError:
        return ""
