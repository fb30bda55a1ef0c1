"""What the model sees of the editor for one suggestion, within a budget (PROTOCOL §10): windows of the unsaved
buffer around the cursor, bounded snippets of the most recently changed other open buffers, and definitions of the
name before the cursor through the LanguageFeatures port when they answer in time. An excluded file is never
sent, neither for its own suggestions nor as context for another file's."""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Optional, Sequence

from agent_lsp.completions.ports import Documents
from agent_lsp.completions.prompt import CompletionPrompt, Snippet
from agent_lsp.config.completions import DEFAULT_EXCLUDE
from agent_lsp.core.ports import LanguageFeatureError, LanguageFeatures, OpenDocument

log = logging.getLogger(__name__)

PREFIX_CHARS = 6000
SUFFIX_CHARS = 2000
SNIPPET_CHARS = 1200
SNIPPET_LINES = 12
"""Lines on each side of another buffer's last change, or after a definition's first line."""
OTHER_BUFFERS = 3
DEFINITIONS = 2
DEFINITION_BUDGET = 0.3
"""Seconds the language features may take, all definitions together; what has not answered by then is left out."""
NAME_WINDOW = 400
"""Characters before the cursor looked at for names worth a definition."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_PART = re.compile(r"[A-Za-z0-9_]")


def shown_path(uri: str, path: Optional[Path], roots: Sequence[Path]) -> str:
    """How the model is told which file: workspace-relative when it is in a workspace folder."""
    if path is None:
        return uri
    for root in roots:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def excluded(uri: str, path: Optional[Path], roots: Sequence[Path], patterns: Iterable[str]) -> bool:
    """Whether a file is never sent: its name, its workspace-relative path or its whole path matches one of the
    default globs or of `patterns`."""
    name = PurePosixPath(path.as_posix() if path is not None else uri).name
    shown = shown_path(uri, path, roots)
    full = path.as_posix() if path is not None else uri
    for pattern in (*DEFAULT_EXCLUDE, *patterns):
        pattern = pattern.removeprefix("./")
        if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(shown, pattern) or \
                fnmatch.fnmatchcase(full, pattern) or fnmatch.fnmatchcase(shown, pattern.removeprefix("**/")):
            return True
    return False


def windows(text: str, offset: int) -> tuple[str, str, int]:
    """(prefix, suffix, stable): up to PREFIX_CHARS before the cursor from a line's start and up to SUFFIX_CHARS
    after it to a line's end; `stable` is how much of the prefix precedes the cursor's line."""
    start = max(0, offset - PREFIX_CHARS)
    if start:
        newline = text.find("\n", start, offset)
        start = newline + 1 if newline >= 0 else start
    end = min(len(text), offset + SUFFIX_CHARS)
    if end < len(text):
        newline = text.rfind("\n", offset, end)
        end = newline if newline >= 0 else end
    prefix = text[start:offset]
    return prefix, text[offset:end], prefix.rfind("\n") + 1


@dataclass
class ContextSource:
    """Where context comes from for one request: the open buffers, the language features (None: none), the
    exclusions in force."""

    documents: Documents
    language: Optional[LanguageFeatures]
    exclude: tuple[str, ...]

    def allowed(self, doc: OpenDocument) -> bool:
        return not excluded(doc.uri, doc.path, self.documents.roots, self.exclude)


async def build_prompt(source: ContextSource, doc: OpenDocument, offset: int, max_lines: int,
                       single_line: bool) -> CompletionPrompt:
    """The prompt for a suggestion at `offset` of `doc` (a file that is not excluded)."""
    roots = source.documents.roots
    prefix, suffix, stable = windows(doc.text, offset)
    snippets = other_buffers(source, doc)
    snippets += await definitions(source, doc, offset)
    return CompletionPrompt(path=shown_path(doc.uri, doc.path, roots), language_id=doc.language_id, prefix=prefix,
                            suffix=suffix, snippets=tuple(snippets), max_lines=max_lines, single_line=single_line,
                            stable_prefix=stable)


def other_buffers(source: ContextSource, current: OpenDocument) -> list[Snippet]:
    """Around the last change of the most recently changed other open buffers (not excluded, not empty there)."""
    snippets = []
    for uri, line in source.documents.recent():
        if len(snippets) == OTHER_BUFFERS:
            break
        if uri == current.uri:
            continue
        doc = source.documents.get(uri)
        if doc is None or not source.allowed(doc):
            continue
        first, text = around(doc.text, line)
        if text.strip():
            snippets.append(Snippet(path=shown_path(uri, doc.path, source.documents.roots), text=text, kind="buffer",
                                    first_line=first + 1))
    return snippets


def around(text: str, line: int, before: int = SNIPPET_LINES, after: int = SNIPPET_LINES) -> tuple[int, str]:
    """(first line, text) of the lines from `line - before` to `line + after`, cut to SNIPPET_CHARS."""
    start = 0
    for _ in range(max(0, line - before)):  # the offset of the first line kept, without splitting the whole text
        newline = text.find("\n", start)
        if newline < 0:
            break
        start = newline + 1
    first = text.count("\n", 0, start)
    lines = text[start: start + SNIPPET_CHARS * 2].split("\n")[: (line - first) + after + 1]
    return first, "\n".join(lines)[:SNIPPET_CHARS].rstrip()


async def definitions(source: ContextSource, doc: OpenDocument, offset: int) -> list[Snippet]:
    """The definitions of the names the cursor's line calls or reads last, found within DEFINITION_BUDGET."""
    language = source.language
    if language is None or doc.path is None or "textDocument/definition" not in language.methods(doc.path):
        return []
    line_start = doc.text.rfind("\n", 0, offset) + 1
    line = doc.text.count("\n", 0, line_start)
    start = max(line_start, offset - NAME_WINDOW)  # not the whole of a long line: a minified one is megabytes
    names = [start - line_start + column for column in names_before(doc.text[start:offset])
             if not (column == 0 and start > line_start and _NAME_PART.match(doc.text, start - 1))]  # not one cut
    found: list[Snippet] = []
    try:
        async with asyncio.timeout(DEFINITION_BUDGET):
            for column in names[:DEFINITIONS]:
                params = {"textDocument": {"uri": doc.uri}, "position": {"line": line, "character": column}}
                try:
                    answer = await language.request("textDocument/definition", params, doc.path)
                except LanguageFeatureError as e:
                    log.debug("no definition for a suggestion: %s", e)
                    continue
                snippet = await _definition_snippet(source, answer, doc, line)
                if snippet is not None and snippet not in found:
                    found.append(snippet)
    except TimeoutError:
        log.debug("definitions for a suggestion: over the budget of %g s", DEFINITION_BUDGET)
    return found


def names_before(line_before: str) -> list[int]:
    """Columns of the names worth a definition, the most telling first: the ones called or dotted into, the nearest
    first, then the line's last name (the one being typed) when it is not one of them."""
    names = list(_NAME.finditer(line_before))
    called = [m for m in reversed(names) if line_before[m.end(): m.end() + 1] in ("(", ".")]
    last = [names[-1]] if names and names[-1] not in called else []
    return [m.start() for m in called + last]


async def _definition_snippet(source: ContextSource, answer: Any, doc: OpenDocument, line: int) -> Optional[Snippet]:
    """The lines at the first place of a definition answer (Location, Location[], LocationLink[])."""
    from agent_lsp.core.paths import uri_to_path
    from agent_lsp.tools.language_tool import locations  # what the language tools read answers with

    places = locations(answer)
    if not places:
        return None
    uri, start = places[0]
    if uri == doc.uri and abs(start["line"] - line) <= SNIPPET_LINES:
        return None  # in the window around the cursor already
    other = source.documents.get(uri)
    path = other.path if other is not None else uri_to_path(uri)
    if excluded(uri, path, source.documents.roots, source.exclude):
        return None
    text = other.text if other is not None else await asyncio.to_thread(_read, path) if path is not None else None
    if text is None:
        return None
    first_line, body = around(text, start["line"], before=0)
    return Snippet(path=shown_path(uri, path, source.documents.roots), text=body, kind="definition",
                   first_line=first_line + 1)


def _read(path: Path) -> Optional[str]:
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return None
