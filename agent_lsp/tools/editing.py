"""What edit_file and write_file share: the text they edit, the diff the user sees, and the editor's verdict."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from agent_lsp.core.paths import display
from agent_lsp.core.ports import FileEdit, TextEdit
from agent_lsp.core.tool import ToolContext, ToolError, ToolOutput, bound
from agent_lsp.tools.get_diagnostics import format_diagnostics
from agent_lsp.tools.read_file import read_text


@dataclass(frozen=True)
class Current:
    """A file's text as the editor has it now, and the document version it was read at (None: not open)."""

    text: str
    version: Optional[int]
    exists: bool


def current(ctx: ToolContext, path: Path) -> Current:
    """The text an edit must be computed on: the open buffer, else the file on disk, else nothing."""
    doc = ctx.editor.open_document(path)
    if doc is not None:
        return Current(doc.text, doc.version, True)
    if not path.exists():
        return Current("", None, False)
    text, _ = read_text(ctx, path)
    return Current(text, None, True)


def minimal_edit(old: str, new: str) -> TextEdit:
    """One edit turning `old` into `new`, touching only the span between their common prefix and suffix (so the
    editor's undo and the user's cursor move as little as possible)."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    eol = "\r\n" if old.endswith("\r\n") else "\n" if old.endswith("\n") else ""
    if eol and start == end_old == len(old) and new.endswith(eol):
        # Text added after the last line end starts on a line past the last, where Neovim 0.11 appends it as lines
        # and keeps an empty one; the same text inserted before that line end lands the same everywhere.
        start, end_old, end_new = start - len(eol), end_old - len(eol), end_new - len(eol)
    return TextEdit(start=start, end=end_old, new_text=new[start:end_new])


def unified_diff(name: str, before: str, after: str) -> str:
    """A unified diff of the change, as `git diff` would show it."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    # Only the changed region (and its context) is diffed: difflib counts a line repeated in over 1 % of a big
    # file as junk, which made a one-line edit of such a file a whole-file replacement (megabytes of diff).
    head, shortest = 0, min(len(a), len(b))
    while head < shortest and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    skip, cut = max(0, head - 3), max(0, tail - 3)
    lines = difflib.unified_diff(a[skip:len(a) - cut], b[skip:len(b) - cut], fromfile=f"a/{name}",
                                 tofile=f"b/{name}")
    shifted = (_HUNK.sub(lambda m: f"@@ -{int(m[1]) + skip}{m[2]} +{int(m[3]) + skip}{m[4]} @@", line, count=1)
               if skip and line.startswith("@@") else line for line in lines)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in shifted)


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def told_of_disk(ctx: ToolContext, path: Path, version: Optional[int]) -> None:
    """An edit of a file that was not open (`version` None) went to disk unless the editor opened it: the language
    servers agent-lsp runs must learn of it."""
    if version is None and ctx.language is not None and ctx.editor.open_document(path) is None:
        ctx.language.disk_changed([path])


async def apply(ctx: ToolContext, edit: FileEdit, summary: str, diff: str) -> ToolOutput:
    """Send the edit to the editor; the result carries the diff and, when available, diagnostics after it."""
    outcome = await ctx.editor.apply_edit(edit)
    told_of_disk(ctx, edit.path, edit.version)
    name = display(ctx.editor.roots, edit.path)
    if not outcome.applied:
        why = f" ({outcome.message})" if outcome.message else ""
        raise ToolError(f"The editor did not apply the edit to {name}{why}. The file may have changed since you "
                        "read it: read it again, then retry the edit.")
    text = f"{summary}{f' {outcome.message}.' if outcome.message else ''}\n{diff}"
    report = await ctx.editor.diagnostics([edit.path])
    if report.from_editor or edit.path.suffix in (".py", ".pyi"):
        found = format_diagnostics(ctx.editor.roots, report.items)
        text += f"\nDiagnostics after the edit:\n{found}" if found else "\nNo diagnostics after the edit."
    return ToolOutput(bound(text), diff=diff, folders=(edit.path.parent,))
