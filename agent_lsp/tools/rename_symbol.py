"""rename_symbol: the language server's rename of the symbol at a position, applied file by file through the editor
(versioned, revertible), after one confirmation showing a diff per file."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Optional

from pydantic import Field, PrivateAttr

from agent_lsp.core.paths import display, is_inside, uri_to_path
from agent_lsp.core.ports import FileEdit, TextEdit
from agent_lsp.core.positions import line_starts
from agent_lsp.core.tool import Preview, ToolContext, ToolError, ToolOutput, bound
from agent_lsp.tools.editing import Current, current, told_of_disk, unified_diff
from agent_lsp.tools.get_diagnostics import format_diagnostics
from agent_lsp.tools.language_tool import (
    LanguageTool,
    PositionInput,
    Target,
    ask,
    index_line,
    nothing_at,
    offset_of,
    target,
    word_at,
)


@dataclass(frozen=True)
class FileChange:
    """The rename's change to one file, computed on the text the editor has now."""

    path: Path
    name: str
    base: Current
    edits: list[TextEdit]
    diff: str


class RenameSymbolInput(PositionInput):
    newName: str = Field(min_length=1)
    _plan: Optional[list[FileChange]] = PrivateAttr(None)
    """What the preview computed, reused by the run while every file still reads the same."""


def file_edits(edit: dict[str, Any]) -> dict[str, tuple[Optional[int], list[dict]]]:
    """uri → (version the language server saw, its TextEdits) of a WorkspaceEdit, `documentChanges` or `changes`;
    ToolError for a file operation (creating, renaming, deleting a file), which a rename here does not do."""
    merged: dict[str, tuple[Optional[int], list[dict]]] = {}
    if isinstance(edit.get("documentChanges"), list):
        for change in edit["documentChanges"]:
            if not isinstance(change, dict):
                continue
            if "kind" in change:
                raise ToolError(f"The language server's rename would also {change['kind']} a file "
                                f"({change.get('uri') or change.get('oldUri')}); rename_symbol changes text only, so "
                                "nothing was changed. Rename the file yourself, then the symbol.")
            doc = change.get("textDocument") if isinstance(change.get("textDocument"), dict) else {}
            if isinstance(doc.get("uri"), str):
                merged.setdefault(doc["uri"], (doc.get("version"), []))[1].extend(change.get("edits") or [])
    elif isinstance(edit.get("changes"), dict):
        for uri, edits in edit["changes"].items():
            merged.setdefault(uri, (None, []))[1].extend(edits if isinstance(edits, list) else [])
    return merged


def text_edits(text: str, edits: list[dict], name: str) -> list[TextEdit]:
    """Character-offset edits of LSP TextEdits (positions in characters) on `text`; ToolError when they overlap."""
    starts = line_starts(text)
    out = []
    for e in edits:
        where = e.get("range") if isinstance(e, dict) else None
        if not isinstance(where, dict):
            continue
        start, end = offset_of(text, starts, where.get("start") or {}), offset_of(text, starts, where.get("end") or {})
        out.append(TextEdit(start=start, end=max(start, end), new_text=str(e.get("newText", ""))))
    out.sort(key=lambda e: (e.start, e.end))
    if any(a.end > b.start for a, b in pairwise(out)):
        raise ToolError(f"The language server's edits to {name} overlap; nothing was changed.")
    return out


def applied(text: str, edits: list[TextEdit]) -> str:
    """`text` with sorted, non-overlapping edits applied."""
    parts, at = [], 0
    for e in edits:
        parts += [text[at:e.start], e.new_text]
        at = e.end
    return "".join(parts) + text[at:]


class RenameSymbol(LanguageTool):
    name = "rename_symbol"
    kind = "edit"
    needs = ("textDocument/rename",)
    description = (
        "Rename the symbol at path:line:column everywhere, as the language server computes it (exact references, "
        "imports). Prefer it over edit_file to rename."
    )
    Input = RenameSymbolInput

    def title(self, input: RenameSymbolInput) -> str:
        return f"Rename {input.path}:{input.line}:{input.column} to {input.newName}"

    async def _plan(self, ctx: ToolContext, input: RenameSymbolInput, t: Target) -> list[FileChange]:
        prepare = ctx.language is not None and "textDocument/prepareRename" in ctx.language.methods(t.path)
        if prepare and await ask(ctx, "textDocument/prepareRename", t.params, t.path) is None:
            raise nothing_at(t, "symbol that can be renamed")
        edit = await ask(ctx, "textDocument/rename", {**t.params, "newName": input.newName}, t.path)
        per_file = file_edits(edit) if isinstance(edit, dict) else {}
        if not per_file:
            raise nothing_at(t, "symbol to rename")
        roots = ctx.editor.roots
        files = []
        for uri, (version, edits) in per_file.items():
            path = uri_to_path(uri)
            if path is None or not any(is_inside(path, root) for root in roots):
                raise ToolError(f"The rename would change {path or uri}, outside the workspace; nothing was changed.")
            name = display(roots, path)
            now = current(ctx, path)
            if not now.exists:
                raise ToolError(f"The rename would change {name}, which does not exist; nothing was changed.")
            if version is not None and now.version is not None and version != now.version:
                raise ToolError(f"{name} changed while the language server computed the rename; try again.")
            files.append((path, name, now, edits))

        def compute() -> list[FileChange]:  # diffs of every file: CPU work, off the event loop
            out = []
            for path, name, now, edits in sorted(files, key=lambda f: f[1]):
                changes = text_edits(now.text, edits, name)
                after = applied(now.text, changes)
                if after != now.text:
                    out.append(FileChange(path, name, now, changes, unified_diff(name, now.text, after)))
            return out

        changes = await asyncio.to_thread(compute)
        if not changes:
            raise ToolError(f"Renaming the symbol at {t.where} to {input.newName} changes nothing.")
        return changes

    def _still_valid(self, ctx: ToolContext, changes: Optional[list[FileChange]]) -> bool:
        return changes is not None and all(current(ctx, c.path) == c.base for c in changes)

    async def preview(self, ctx: ToolContext, input: RenameSymbolInput) -> Preview:
        input._plan = await self._plan(ctx, input, target(ctx, input))
        return Preview(diff="".join(c.diff for c in input._plan))

    async def run(self, ctx: ToolContext, input: RenameSymbolInput) -> ToolOutput:
        t = target(ctx, input)
        changes = input._plan if self._still_valid(ctx, input._plan) else await self._plan(ctx, input, t)
        label = f"agent-lsp: rename {word_at(t.line_text, t.column)} to {input.newName}"
        done: list[str] = []
        for c in changes:
            outcome = await ctx.editor.apply_edit(FileEdit(path=c.path, base_text=c.base.text, version=c.base.version,
                                                           edits=c.edits, label=label))
            told_of_disk(ctx, c.path, c.base.version)
            if not outcome.applied:
                why = f" ({outcome.message})" if outcome.message else ""
                so_far = f" It was applied to {', '.join(done)} already." if done else ""
                raise ToolError(f"The editor did not apply the rename to {c.name}{why}.{so_far} The file may have "
                                "changed since the rename was computed: read it again, then retry.")
            done.append(c.name)
        diff = "".join(c.diff for c in changes)
        count = sum(len(c.edits) for c in changes)
        text = (f"Renamed {word_at(t.line_text, t.column)} to {input.newName}: {count} edit{'s' * (count != 1)} in "
                f"{len(changes)} file{'s' * (len(changes) != 1)} ({', '.join(done)}).\n{diff}")
        report = await ctx.editor.diagnostics([c.path for c in changes])
        if report.from_editor or any(c.path.suffix in (".py", ".pyi") for c in changes):
            found = format_diagnostics(ctx.editor.roots, report.items)
            text += f"\nDiagnostics after the rename:\n{found}" if found else "\nNo diagnostics after the rename."
        return ToolOutput(f"{bound(text)}\n{index_line(ctx, t.path)}", diff=diff)
