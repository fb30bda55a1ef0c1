"""search: a regex over the workspace, open buffers' unsaved text included, bounded."""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.tools.paths import display, resolve, root_of
from agent_lsp.tools.walk import iter_files

MAX_MATCHES = 200
MAX_FILE_BYTES = 2_000_000


class SearchInput(ToolInput):
    pattern: str = Field(description="Python regular expression, matched per line.")
    path: Optional[str] = Field(None, description="File or directory to search (default: the workspace root).")
    glob: Optional[str] = Field(None, description="Only files whose name matches this glob, e.g. '*.py'.")


class Search(Tool):
    name = "search"
    kind = "search"
    description = (
        "Search files for a regular expression, line by line; open buffers are searched with their unsaved "
        f"text. Results are `path:line: text`, at most {MAX_MATCHES}."
    )
    Input = SearchInput

    def title(self, input: SearchInput) -> str:
        return f"Search {input.pattern!r}" + (f" in {input.path}" if input.path else "")

    async def run(self, ctx: ToolContext, input: SearchInput) -> ToolOutput:
        try:
            regex = re.compile(input.pattern)
        except re.error as e:
            raise ToolError(f"pattern is not a valid regular expression: {e}") from None
        roots = ctx.editor.roots
        start = resolve(roots, input.path)
        if not start.exists():
            raise ToolError(f"{input.path} does not exist.")
        hits: list[str] = []
        for path in iter_files(root_of(roots, start), start, input.glob):
            text = _text(ctx, path)
            if text is None:
                continue
            name = display(roots, path)
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{name}:{number}: {line.strip()[:300]}")
                    if len(hits) > MAX_MATCHES:
                        more = f"\n[more than {MAX_MATCHES} matches; narrow the pattern, path or glob]"
                        return ToolOutput(bound("\n".join(hits[:MAX_MATCHES]) + more))
        return ToolOutput(bound("\n".join(hits)) if hits else "No matches.")


def _text(ctx: ToolContext, path) -> Optional[str]:
    doc = ctx.editor.open_document(path)
    if doc is not None:
        return doc.text
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


TOOL = Search()
