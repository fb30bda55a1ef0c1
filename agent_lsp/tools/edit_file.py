"""edit_file: replace an exact string in a file, through the editor (workspace/applyEdit)."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from agent_lsp.core.events import Location
from agent_lsp.core.paths import display
from agent_lsp.core.ports import FileChange, FileEdit, TextEdit
from agent_lsp.core.tool import Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.editing import apply, current, unified_diff
from agent_lsp.tools.paths import file_location, resolve


class EditFileInput(ToolInput):
    path: str = Field(description="File to edit, workspace-relative or absolute inside the workspace.")
    old_string: str = Field(description="The exact text to replace (unique in the file unless replace_all).")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of exactly one.")


def plan(text: str, old: str, new: str, replace_all: bool, name: str) -> list[TextEdit]:
    """The text edits replacing `old` by `new` in `text`; ToolError when `old` is missing or not unique."""
    if old == new:
        raise ToolError("old_string and new_string are the same; there is nothing to change.")
    if not old:
        raise ToolError("old_string is empty; use write_file to create or overwrite a file.")
    if "\r\n" in text and "\r" not in old:  # the model reads lines without \r; the file keeps its CRLF endings
        old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
    starts, at = [], text.find(old)
    while at != -1:
        starts.append(at)
        at = text.find(old, at + len(old))
    if not starts:
        raise ToolError(f"old_string was not found in {name}. Read the file again and copy the text exactly, "
                        "including indentation.")
    if len(starts) > 1 and not replace_all:
        lines = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:10])
        raise ToolError(f"old_string occurs {len(starts)} times in {name} (lines {lines}); add surrounding "
                        "context to make it unique, or set replace_all.")
    return [TextEdit(start=s, end=s + len(old), new_text=new) for s in starts]


def applied(text: str, edits: list[TextEdit]) -> str:
    """`text` with `edits` (non-overlapping) applied."""
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + e.new_text + text[e.end :]
    return text


class EditFile(Tool):
    name = "edit_file"
    kind = "edit"
    file_tool = True
    description = (
        "Replace old_string with new_string in a file. The edit goes through the editor, so it lands in the "
        "open buffer (with undo) and is refused if the user changed the document since you read it. old_string "
        "must match exactly and be unique unless replace_all is true. Read the file first."
    )
    Input = EditFileInput

    def title(self, input: EditFileInput) -> str:
        return f"Edit {input.path}"

    def locations(self, ctx: ToolContext, input: EditFileInput) -> Optional[list[Location]]:
        return file_location(ctx.editor.roots, input.path)

    def _compute(self, ctx: ToolContext, input: EditFileInput):
        path = resolve(ctx.editor.roots, input.path)
        now = current(ctx, path)
        name = display(ctx.editor.roots, path)
        if not now.exists:
            raise ToolError(f"{name} does not exist; use write_file to create it.")
        edits = plan(now.text, input.old_string, input.new_string, input.replace_all, name)
        return path, now, edits, unified_diff(name, now.text, applied(now.text, edits))

    async def preview(self, ctx: ToolContext, input: EditFileInput) -> Preview:
        path, now, edits, diff = self._compute(ctx, input)
        return Preview(diff=diff, changes=(FileChange(path, now.text, applied(now.text, edits)),))

    async def run(self, ctx: ToolContext, input: EditFileInput) -> ToolOutput:
        path, now, edits, diff = self._compute(ctx, input)  # again: the buffer may have changed while we asked
        edit = FileEdit(path=path, base_text=now.text, version=now.version, edits=edits,
                        label=f"agent-lsp: edit {path.name}")
        count = f"{len(edits)} occurrences" if len(edits) > 1 else "1 occurrence"
        return await apply(ctx, edit, f"Edited {display(ctx.editor.roots, path)}: replaced {count}.", diff)


TOOL = EditFile()
