"""search: a ripgrep regex over the workspace, open buffers' unsaved text included, bounded."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import posixpath
import re
import warnings
from bisect import bisect_right
from contextlib import aclosing
from functools import lru_cache
from pathlib import Path
from typing import Optional

from pydantic import Field

from agent_lsp.core.paths import displayer, real, under
from agent_lsp.core.ports import OpenDocument
from agent_lsp.core.tool import Tool, ToolContext, ToolInput, ToolOutput, bound
from agent_lsp.tools import ripgrep
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
        at = ripgrep.where(roots, input.path)
        # Which buffers replace their files is worked out first, in a thread: rg then leaves those files unread.
        dirty = asyncio.ensure_future(dirty_buffers(ctx.editor.open_documents(), roots, at.start, at.cwd, input.glob))
        disk = asyncio.ensure_future(_search_disk(input.pattern, input.glob, at.cwd, at.target, at.base, skip=dirty))
        buffers = asyncio.ensure_future(_then_search_buffers(input.pattern, dirty))
        try:
            on_disk, in_buffers = await asyncio.gather(disk, buffers)
        finally:  # when one fails (a bad pattern) the other stops too, its rg killed before we answer
            for task in (disk, buffers, dirty):
                task.cancel()
            await asyncio.gather(disk, buffers, dirty, return_exceptions=True)
        hits = sorted(on_disk + in_buffers, key=lambda m: (m.path.split("/"), m.line))
        if not hits:
            return ToolOutput("No matches.")
        shown = "\n".join(f"{m.path}:{m.line}: {m.text.strip()[:MAX_LINE_CHARS]}" for m in hits[:MAX_MATCHES])
        more = f"\n[more than {MAX_MATCHES} matches; narrow the pattern, path or glob]" if len(hits) > MAX_MATCHES \
            else ""
        return ToolOutput(bound(shown + more))


async def _then_search_buffers(pattern: str, dirty: asyncio.Future) -> list[Match]:
    return await search_buffers(pattern, await asyncio.shield(dirty))


async def _search_disk(pattern: str, glob: Optional[str], cwd: Path, target: list[str], base: str,
                       skip: asyncio.Future) -> list[Match]:
    """The first MAX_MATCHES + 1 matches on disk, in path order, leaving out the files `skip` names (a future,
    shared with the buffers' search)."""
    skipped = await asyncio.shield(skip)  # shared: not cancelled from here
    # With every file of a workspace open and edited, reading the files only to drop their matches was most of rg's
    # time: rg is told to leave them out. What a glob cannot name is still dropped below.
    args = ["--json", "--max-filesize", ripgrep.MAX_FILE_SIZE, *(["-g", glob] if glob else []), *ripgrep.WALK,
            *_excluded(skipped, base), "--", pattern, *target]
    hits: list[Match] = []
    passing = False
    try:
        async with aclosing(ripgrep.lines(args, cwd)) as out:
            async for raw in out:
                if passing and raw.startswith(ripgrep.MATCH_PREFIX):  # a file whose buffer is searched instead
                    continue
                message = json.loads(raw)
                path, match = ripgrep.begun(message), ripgrep.match_of(message)
                if path is None and match is None:
                    continue
                if path is not None:
                    passing = ripgrep.join(base, path) in skipped
                    continue
                name = ripgrep.join(base, match.path)
                if name not in skipped:
                    hits.append(Match(name, match.line, match.text))
                if len(hits) > MAX_MATCHES:
                    break
    except ripgrep.NothingSearched:
        if not skipped:  # a glob that matches no file: rg's message says so
            raise
    return hits


_GLOB_SPECIAL = re.compile(r"[*?\[\]{}\\]|^[!#]|^\s|\s$")
"""A name with these would need glob escapes: it is left to the filter rather than to rg's glob syntax."""
EXCLUDE_BUDGET = 24_000 if os.name == "nt" else 500_000
"""The characters of exclusions put on rg's command line (Windows allows 32,767 in all); past it, files are read
and their matches dropped."""


def _excluded(skipped: dict[str, str], base: str) -> list[str]:
    """rg arguments that leave out the files of `skipped` (names as the model sees them) under `base` (rg's cwd as
    the model sees it): `-g !/rel/path` each, anchored at rg's cwd, overriding every ignore file."""
    base = posixpath.normpath(base) if base else "."
    prefix = "" if base == "." else base.rstrip("/") + "/"
    args, spent = [], 0
    for name in skipped:
        if not name.startswith(prefix):
            continue
        rel = name[len(prefix):]
        if not rel or rel.startswith("../") or _GLOB_SPECIAL.search(rel):
            continue
        glob = f"!/{rel}"
        spent += 2 + len(glob)
        if spent > EXCLUDE_BUDGET:
            break
        args += ["-g", glob]
    return args


async def dirty_buffers(docs: list[OpenDocument], roots: list[Path], start: Path, cwd: Path,
                        glob: Optional[str]) -> dict[str, str]:
    """The open buffers under `start` (matching `glob`) whose text differs from their file, by name as the model
    sees it: rg must not read those files, their text is searched instead. Finding out may read files, so it
    happens in a thread."""
    if not docs:
        return {}

    def find() -> dict[str, str]:
        # Strings, not Path objects: with 1,000 buffers open the Path arithmetic cost more than the lookups.
        real_start, real_cwd = str(real(start)), str(real(cwd))
        name = displayer(roots)
        found = {}
        for doc in docs:
            if doc.path is None:
                continue
            resolved = _realpath(str(doc.path))
            if not under(resolved, real_start):
                continue
            rel = resolved[len(real_cwd):].lstrip(os.sep)
            if any(part in ripgrep.SKIPPED_DIRS for part in rel.split(os.sep)):
                continue
            if glob and not _glob_matches(Path(resolved), Path(real_cwd), glob):
                continue
            if doc.unsaved:
                found[name(resolved)] = doc.text
        return found

    return await asyncio.to_thread(find)


@lru_cache(maxsize=16384)
def _realpath(path: str) -> str:
    """A buffer's real path, remembered as the editor's index of buffers remembers it (a link changed under an
    open buffer is not followed anew): realpath's lstat of every folder, for 1,000 buffers, was most of a search."""
    return str(real(path))


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
    reads the pattern the same way; otherwise all the buffers go through one rg, so the syntax is rg's."""
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
    names, firsts, data = await asyncio.to_thread(_concatenate, buffers)
    hits: list[Match] = []
    # -a: a NUL in one buffer must not make rg call the whole stream binary and stop reading it.
    async with aclosing(ripgrep.lines(["--json", "--no-config", "-a", "--", pattern, "-"], Path.cwd(),
                                      stdin=data)) as out:
        async for raw in out:
            match = ripgrep.parse_match(raw)
            if match is not None:
                k = bisect_right(firsts, match.line) - 1
                hits.append(Match(names[k], match.line - firsts[k] + 1, match.text))
                if len(hits) > MAX_MATCHES:
                    break
    return hits


def _concatenate(buffers: dict[str, str]) -> tuple[list[str], list[int], bytes]:
    """One stream for rg's stdin (a match never spans lines, so never two buffers): the buffers' names in path
    order, the
    stream line number of each one's first line, and the texts each ending with a newline (lines are split on
    "\\n" only, as rg numbers them)."""
    names = sorted(buffers, key=lambda name: name.split("/"))  # path order: the first matches are enough
    firsts, parts, line = [], [], 1
    for name in names:
        text = buffers[name]
        if text and not text.endswith("\n"):
            text += "\n"
        firsts.append(line)
        line += text.count("\n")
        parts.append(text)
    return names, firsts, "".join(parts).encode("utf-8", errors="surrogatepass")


_LINE_BOUND = re.compile(r"\\[AZ]|\(\?<?[=!]|\(\?[a-zA-Z]*-")
"""What reads differently over a whole text than over one line: \\A and \\Z, lookarounds, flags turned off."""


def _search_texts(regex: re.Pattern, buffers: dict[str, str]) -> list[Match]:
    """The buffers' matches in path order, up to the first MAX_MATCHES + 1 buffer by buffer (the rest would not be
    shown). Lines are split on "\\n" only, as rg numbers them."""
    whole = None
    if not _LINE_BOUND.search(regex.pattern):
        try:
            whole = re.compile(regex.pattern, regex.flags | re.MULTILINE)
        except re.error:
            whole = None
    hits: list[Match] = []
    for name in sorted(buffers, key=lambda name: name.split("/")):  # path order: the first matches are enough
        text = buffers[name]
        hits += _search_lines(regex, name, text) if whole is None else _search_sparse(regex, whole, name, text)
        if len(hits) > MAX_MATCHES:
            break
    return hits


def _search_lines(regex: re.Pattern, name: str, text: str) -> list[Match]:
    """Every line through `regex`, one by one."""
    lines = text.split("\n")
    if lines[-1] == "":  # the text ends with a newline: no line after it
        lines.pop()
    return [Match(name, number, line.rstrip("\r")) for number, line in enumerate(lines, 1) if regex.search(line)]


def _search_sparse(regex: re.Pattern, whole: re.Pattern, name: str, text: str) -> list[Match]:
    """The same answer as _search_lines, with only the lines where `whole` (the pattern over the whole text, ^ and
    $ at line ends) finds something looked at one by one. A match within a line is a match of `whole` starting at
    the same place, so the leftmost match of `whole` is never after the first matching line: the lines before it
    are skipped in one C-level scan."""
    hits = []
    pos, line_number, counted_to = 0, 1, 0
    end = len(text)
    while pos < end:
        found = whole.search(text, pos)
        if found is None:
            break
        line_start = max(pos, text.rfind("\n", pos, found.start()) + 1)
        if line_start >= end:  # an empty match after the last newline: there is no line there
            break
        line_end = text.find("\n", found.start())
        if line_end < 0:
            line_end = end
        line_number += text.count("\n", counted_to, line_start)
        counted_to = line_start
        line = text[line_start:line_end]
        if regex.search(line):
            hits.append(Match(name, line_number, line.rstrip("\r")))
        pos = line_end + 1
    return hits


TOOL = Search()
