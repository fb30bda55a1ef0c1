"""read_file: a file's text with line numbers; an open buffer's unsaved text wins over disk."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AnyStr, Optional

from pydantic import Field

from agent_lsp.core.events import Location
from agent_lsp.core.paths import display
from agent_lsp.core.ports import OpenDocument
from agent_lsp.core.tool import MAX_OUTPUT_CHARS, Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.tools.paths import file_location, resolve

DEFAULT_LIMIT = 2000
BLOCK = 1 << 13


class ReadFileInput(ToolInput):
    path: str = Field(description="File path, workspace-relative or absolute inside the workspace.")
    offset: Optional[int] = Field(None, ge=1, description="First line to read, 1-based.")
    limit: Optional[int] = Field(None, ge=1, description=f"How many lines to read (default {DEFAULT_LIMIT}).")


class ReadFile(Tool):
    name = "read_file"
    kind = "read"
    file_tool = True
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
        path = resolve(ctx.editor.roots, input.path, ctx.readable)
        name = display(ctx.editor.roots, path)
        doc = ctx.editor.open_document(path)
        start = (input.offset or 1) - 1
        return ToolOutput(await asyncio.to_thread(_render, doc, path, name, start, input.limit or DEFAULT_LIMIT,
                                                  input.offset), folders=(path.parent,))


def _render(doc: Optional[OpenDocument], path: Path, name: str, start: int, limit: int, offset: Optional[int]) -> str:
    """The tool's answer, in a thread. Only the lines shown are decoded and split."""
    if doc is not None:
        source = ", open in the editor with unsaved changes" if doc.unsaved else ", open in the editor"
        total, window = _window(doc.text, start, limit)
    else:
        source = ""
        total, raw = _file_window(path, start, limit)
        window = raw.decode("utf-8", errors="replace")
    if start and start >= total:
        raise ToolError(f"offset {offset} is past the end of {name} ({total} lines).")
    chosen = window.split("\n")
    if "\r" in window:
        chosen = [line.removesuffix("\r") for line in chosen]
    if window.endswith("\n") or not window:
        chosen.pop()
    header = f"{name} ({total} lines{source})"
    rest = total - start - len(chosen)
    footer = f"\n[{rest} more lines; read on with offset={start + len(chosen) + 1}]" if rest > 0 else ""
    return _numbered(header, chosen, start, footer) if chosen else bound(f"{header}\n(empty)")


def _numbered(header: str, lines: list[str], start: int, footer: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """bound(header, the lines numbered from start + 1, footer) without numbering the lines the cut drops: only
    their lengths are added up (2,000 lines are asked for by default; about 400 fit)."""
    shown, size = [header], len(header)
    for i, line in enumerate(lines):
        if size > limit:
            break
        shown.append(f"{start + i + 1:>6}\t{line}")
        size += 1 + len(shown[-1])
    else:
        return bound("\n".join(shown) + footer, limit)
    prefix = "\n".join(shown)
    dropped = lines[len(shown) - 1:]
    first = start + len(shown)  # the number of the first line not numbered
    numbers = sum(max(6, len(str(n))) for n in range(first, first + len(dropped))) if first + len(dropped) > 999_999 \
        else 6 * len(dropped)
    size += sum(map(len, dropped)) + numbers + 2 * len(dropped) + len(footer)  # each: "\n", number, "\t", text
    newlines = prefix.count("\n", limit) + len(dropped) + footer.count("\n")
    return f"{prefix[:limit]}\n[output truncated: {size - limit} more characters, {newlines} more lines]"


def _file_window(path: Path, start: int, limit: int) -> tuple[int, bytes]:
    """A file's line count and the bytes of its lines start to start + limit - 1 (0-based)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:
            raise ToolError(f"{path} is a binary file.")
        return _window(data, start, limit)
    except IsADirectoryError:
        raise ToolError(f"{path} is a directory; use list_files.") from None
    except FileNotFoundError:
        raise ToolError(f"{path} does not exist.") from None
    except OSError as e:
        raise ToolError(f"{path} cannot be read: {e.strerror}.") from None


def _window(text: AnyStr, start: int, limit: int) -> tuple[int, AnyStr]:
    """How many lines `text` has (split at "\\n" only, as rg and search count them), and its lines start to
    start + limit - 1 (0-based) as one slice."""
    nl = b"\n" if isinstance(text, bytes) else "\n"
    total = text.count(nl) + (1 if text and not text.endswith(nl) else 0)
    begin = _line_offset(text, nl, start)
    if start + limit >= total:
        return total, text[begin:]
    return total, text[begin:_line_offset(text, nl, limit, begin)]


def _line_offset(text: AnyStr, nl: AnyStr, line: int, pos: int = 0) -> int:
    """Where 0-based `line` starts, counting lines from `pos` (the length of `text` when it has fewer lines):
    newlines are counted a block at a time, then found one by one in the block that holds the line (a search line
    by line through 2,000 lines cost more than the rest of a read)."""
    seen = 0
    while seen < line:
        end = min(len(text), pos + BLOCK)
        count = text.count(nl, pos, end)
        if seen + count >= line:
            for _ in range(line - seen):
                pos = text.index(nl, pos) + 1
            return pos
        if end == len(text):
            return end
        seen, pos = seen + count, end
    return pos


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
