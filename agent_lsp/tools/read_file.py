"""read_file: a file's text with line numbers; an open buffer's unsaved text wins over disk."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from agent_lsp.core.events import Location
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.tools.paths import display, file_location, resolve

DEFAULT_LIMIT = 2000


class ReadFileInput(ToolInput):
    path: str = Field(description="File path, workspace-relative or absolute inside the workspace.")
    offset: Optional[int] = Field(None, ge=1, description="First line to read, 1-based.")
    limit: Optional[int] = Field(None, ge=1, description=f"How many lines to read (default {DEFAULT_LIMIT}).")


class ReadFile(Tool):
    name = "read_file"
    kind = "read"
    description = (
        "Read a file as the editor has it: an open buffer's unsaved text wins over the file on disk. "
        "Lines come numbered (`   12\\ttext`); use offset and limit for large files."
    )
    Input = ReadFileInput

    def title(self, input: ReadFileInput) -> str:
        return f"Read {input.path}"

    def locations(self, ctx: ToolContext, input: ReadFileInput) -> Optional[list[Location]]:
        return file_location(ctx.editor.roots, input.path)

    async def run(self, ctx: ToolContext, input: ReadFileInput) -> ToolOutput:
        path = resolve(ctx.editor.roots, input.path)
        text, source = read_text(ctx, path)
        lines = text.splitlines()
        start = (input.offset or 1) - 1
        if start and start >= len(lines):
            raise ToolError(f"offset {input.offset} is past the end of {input.path} ({len(lines)} lines).")
        chosen = lines[start : start + (input.limit or DEFAULT_LIMIT)]
        body = "\n".join(f"{start + i + 1:>6}\t{line}" for i, line in enumerate(chosen))
        header = f"{display(ctx.editor.roots, path)} ({len(lines)} lines{source})"
        rest = len(lines) - start - len(chosen)
        footer = f"\n[{rest} more lines; read on with offset={start + len(chosen) + 1}]" if rest > 0 else ""
        return ToolOutput(bound(f"{header}\n{body}{footer}" if body else f"{header}\n(empty)"))


def read_text(ctx: ToolContext, path) -> tuple[str, str]:
    """The text of `path` as the editor has it, and a note saying where it came from."""
    doc = ctx.editor.open_document(path)
    if doc is not None:
        return doc.text, ", open in the editor with unsaved changes" if doc.unsaved else ", open in the editor"
    if path.is_dir():
        raise ToolError(f"{path} is a directory; use list_files.")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolError(f"{path} does not exist.") from None
    except OSError as e:
        raise ToolError(f"{path} cannot be read: {e.strerror}.") from None
    if b"\0" in data[:8192]:
        raise ToolError(f"{path} is a binary file.")
    return data.decode("utf-8", errors="replace"), ""


TOOL = ReadFile()
