"""list_files: files under a path, .gitignore honoured, bounded."""

from __future__ import annotations

from contextlib import aclosing
from typing import Optional

from pydantic import Field

from agent_lsp.core.tool import Tool, ToolContext, ToolInput, ToolOutput, bound
from agent_lsp.tools import ripgrep

MAX_FILES = 1000


class ListFilesInput(ToolInput):
    path: Optional[str] = Field(None, description="Directory to list (default: the workspace root).")
    pattern: Optional[str] = Field(None, description="Glob on file names, e.g. '*.py' or 'src/**/*.ts'.")


class ListFiles(Tool):
    name = "list_files"
    kind = "read"
    description = (
        f"List files under a directory (recursively, .gitignore honoured, at most {MAX_FILES}, in path order), "
        "optionally filtered by a glob pattern."
    )
    Input = ListFilesInput

    def title(self, input: ListFilesInput) -> str:
        return f"List {input.path or '.'}" + (f" ({input.pattern})" if input.pattern else "")

    async def run(self, ctx: ToolContext, input: ListFilesInput) -> ToolOutput:
        at = ripgrep.where(ctx.editor.roots, input.path)
        args = ["--files", *(["-g", input.pattern] if input.pattern else []), *ripgrep.WALK, *at.target]
        found: list[str] = []
        async with aclosing(ripgrep.lines(args, at.cwd)) as out:
            async for raw in out:
                found.append(ripgrep.join(at.base, raw.decode("utf-8", errors="replace").rstrip("\r\n")))
                if len(found) > MAX_FILES:
                    break
        if not found:
            return ToolOutput("No files found.")
        more = f"\n[more than {MAX_FILES} files; narrow the path or pattern]" if len(found) > MAX_FILES else ""
        return ToolOutput(bound("\n".join(found[:MAX_FILES]) + more))


TOOL = ListFiles()
