"""write_file: create a file or replace its whole text, through the editor (workspace/applyEdit)."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from agent_lsp.core.events import Location
from agent_lsp.core.paths import display
from agent_lsp.core.ports import FileChange, FileEdit, TextEdit
from agent_lsp.core.tool import Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.editing import apply, current, unified_diff
from agent_lsp.tools.paths import file_location, resolve


class WriteFileInput(ToolInput):
    path: str = Field(description="File to write, workspace-relative or absolute inside the workspace.")
    content: str = Field(description="The whole new text of the file.")


class WriteFile(Tool):
    name = "write_file"
    kind = "edit"
    file_tool = True
    description = (
        "Create a file, or replace the whole text of an existing one, through the editor. Prefer edit_file for "
        "changes to existing files."
    )
    Input = WriteFileInput

    def title(self, input: WriteFileInput) -> str:
        return f"Write {input.path}"

    def locations(self, ctx: ToolContext, input: WriteFileInput) -> Optional[list[Location]]:
        return file_location(ctx.editor.roots, input.path)

    def _compute(self, ctx: ToolContext, input: WriteFileInput):
        path = resolve(ctx.editor.roots, input.path)
        if path.is_dir():
            raise ToolError(f"{input.path} is a directory.")
        now = current(ctx, path)
        return path, now, unified_diff(display(ctx.editor.roots, path), now.text, input.content)

    async def preview(self, ctx: ToolContext, input: WriteFileInput) -> Preview:
        path, now, diff = self._compute(ctx, input)
        return Preview(diff=diff, changes=(FileChange(path, now.text if now.exists else None, input.content),))

    async def run(self, ctx: ToolContext, input: WriteFileInput) -> ToolOutput:
        path, now, diff = self._compute(ctx, input)
        edit = FileEdit(path=path, base_text=now.text, version=now.version, create=not now.exists,
                        edits=[TextEdit(start=0, end=len(now.text), new_text=input.content)],
                        label=f"agent-lsp: write {path.name}")
        verb = "Overwrote" if now.exists else "Created"
        return await apply(ctx, edit, f"{verb} {display(ctx.editor.roots, path)} ({len(input.content)} characters).",
                           diff)


TOOL = WriteFile()
