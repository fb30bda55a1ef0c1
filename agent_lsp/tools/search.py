"""search: a ripgrep regex over the workspace, open buffers' unsaved text included, bounded."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import warnings
from contextlib import aclosing
from pathlib import Path
from typing import Optional

from pydantic import Field

from agent_lsp.core.ports import OpenDocument
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.tools import ripgrep
from agent_lsp.tools.paths import display, is_inside, resolve
from agent_lsp.tools.ripgrep import Match

MAX_MATCHES = 200
MAX_LINE_CHARS = 300


class SearchInput(ToolInput):
    pattern: str = Field(description="Regular expression in ripgrep (Rust regex) syntax, matched per line, "
                                     "e.g. `def \\w+\\(` or `(?i)todo`.")
    path: Optional[str] = Field(None, description="File or directory to search (default: the workspace root).")
    glob: Optional[str] = Field(None, description="Only files whose name matches this glob, e.g. '*.py'.")


class Search(Tool):
    name = "search"
    kind = "search"
    description = (
        "Search files for a regular expression (ripgrep syntax), line by line, .gitignore honoured; open "
        f"buffers are searched with their unsaved text. Results are `path:line: text`, at most {MAX_MATCHES}."
    )
    Input = SearchInput

    def title(self, input: SearchInput) -> str:
        return f"Search {input.pattern!r}" + (f" in {input.path}" if input.path else "")

    async def run(self, ctx: ToolContext, input: SearchInput) -> ToolOutput:
        roots = ctx.editor.roots
        start = resolve(roots, input.path)
        if not start.exists():
            raise ToolError(f"{input.path} does not exist.")
        cwd, target = (start, []) if start.is_dir() else (start.parent, [start.name])
        base = display(roots, cwd)
        dirty = await dirty_buffers(ctx.editor.open_documents(), start, cwd, input.glob)
        names = {display(roots, path): text for path, text in dirty}
        disk = asyncio.ensure_future(_search_disk(input.pattern, input.glob, cwd, target, base, skip=set(names)))
        buffers = asyncio.ensure_future(search_buffers(input.pattern, names))
        try:
            on_disk, in_buffers = await asyncio.gather(disk, buffers)
        finally:  # when one fails (a bad pattern) the other stops too, its rg killed before we answer
            for task in (disk, buffers):
                task.cancel()
            await asyncio.gather(disk, buffers, return_exceptions=True)
        hits = sorted(on_disk + in_buffers, key=lambda m: (m.path.split("/"), m.line))
        if not hits:
            return ToolOutput("No matches.")
        shown = "\n".join(f"{m.path}:{m.line}: {m.text.strip()[:MAX_LINE_CHARS]}" for m in hits[:MAX_MATCHES])
        more = f"\n[more than {MAX_MATCHES} matches; narrow the pattern, path or glob]" if len(hits) > MAX_MATCHES \
            else ""
        return ToolOutput(bound(shown + more))


async def _search_disk(pattern: str, glob: Optional[str], cwd: Path, target: list[str], base: str,
                       skip: set[str]) -> list[Match]:
    """The first MAX_MATCHES + 1 matches on disk, in path order, leaving out the files in `skip`."""
    args = ["--json", "--max-filesize", ripgrep.MAX_FILE_SIZE, *(["-g", glob] if glob else []), *ripgrep.WALK,
            "--", pattern, *target]
    hits: list[Match] = []
    async with aclosing(ripgrep.lines(args, cwd)) as out:
        async for raw in out:
            match = ripgrep.parse_match(raw)
            if match is None:
                continue
            name = ripgrep.join(base, match.path)
            if name in skip:
                continue
            hits.append(Match(name, match.line, match.text))
            if len(hits) > MAX_MATCHES:
                break
    return hits


async def dirty_buffers(docs: list[OpenDocument], start: Path, cwd: Path,
                        glob: Optional[str]) -> list[tuple[Path, str]]:
    """The open buffers under `start` (matching `glob`) whose text differs from their file: rg must not read
    those files, their text is searched instead. Finding out may read files, so it happens in a thread."""
    if not docs:
        return []

    def find() -> list[tuple[Path, str]]:
        found = []
        for doc in docs:
            if doc.path is None:
                continue
            real = Path(os.path.realpath(doc.path))
            if not is_inside(real, start) or not _glob_matches(real, cwd, glob):
                continue
            if any(part in ripgrep.SKIPPED_DIRS for part in real.relative_to(cwd).parts):
                continue
            if doc.unsaved:
                found.append((real, doc.text))
        return found

    return await asyncio.to_thread(find)


def _glob_matches(path: Path, cwd: Path, glob: Optional[str]) -> bool:
    """rg's `-g` for a buffer: a glob with a `/` matches the path under `cwd`, one without it the file name."""
    if not glob:
        return True
    negate = glob.startswith("!")
    glob = glob.removeprefix("!")
    rel = path.relative_to(cwd).as_posix()
    if "/" in glob:
        hit = fnmatch.fnmatchcase(rel, glob) or fnmatch.fnmatchcase(rel, glob.removeprefix("**/"))
    else:
        hit = fnmatch.fnmatchcase(path.name, glob)
    return hit != negate


async def search_buffers(pattern: str, buffers: dict[str, str]) -> list[Match]:
    """Matches in buffers' text (by name as the model sees it). In memory, in a thread, with Python's `re` when it
    reads the pattern the same way; otherwise each buffer goes through rg's stdin, so the syntax is rg's."""
    if not buffers:
        return []
    try:
        with warnings.catch_warnings():  # a FutureWarning means Python reads it differently ([[:alpha:]])
            warnings.simplefilter("error")
            regex = re.compile(pattern)
    except (re.error, FutureWarning):
        regex = None
    if regex is not None:
        return await asyncio.to_thread(_search_texts, regex, buffers)
    hits: list[Match] = []
    for name, text in buffers.items():
        async with aclosing(ripgrep.lines(["--json", "--no-config", "--", pattern, "-"], Path.cwd(),
                                          stdin=text.encode())) as out:
            async for raw in out:
                match = ripgrep.parse_match(raw)
                if match is not None:
                    hits.append(Match(name, match.line, match.text))
    return hits


def _search_texts(regex: re.Pattern, buffers: dict[str, str]) -> list[Match]:
    """Lines are split on "\\n" only, as rg numbers them."""
    hits = []
    for name, text in buffers.items():
        lines = text.split("\n")
        if lines[-1] == "":  # the text ends with a newline: no line after it
            lines.pop()
        hits += [Match(name, number, line.rstrip("\r")) for number, line in enumerate(lines, 1) if regex.search(line)]
    return hits


TOOL = Search()
