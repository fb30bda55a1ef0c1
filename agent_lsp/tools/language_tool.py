"""What the language tools share: the method behind each, positions from the model's 1-based line and column,
locations shown as `path:line:col: text`, symbol kinds by name.

Positions the LanguageFeatures port takes and answers count characters, 0-based (as LSP, in code points); the model
counts lines and columns from 1. Only this module converts between the two.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable, Optional

from pydantic import Field

from agent_lsp.core.events import Location
from agent_lsp.core.paths import display, is_inside, uri_to_path
from agent_lsp.core.ports import LanguageFeatureError, LanguageFeatures
from agent_lsp.core.positions import LINE_BREAK, is_position, split_lines
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.core.surrogates import scrubbed
from agent_lsp.tools import ripgrep
from agent_lsp.tools.paths import file_location, resolve
from agent_lsp.tools.read_file import read_text

MAX_LINE_CHARS = 300

SYMBOL_KINDS = (
    "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum",
    "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key",
    "null", "enum_member", "struct", "event", "operator", "type_parameter",
)
"""LSP's SymbolKind 1..26, as the model reads and names them."""


class PositionInput(ToolInput):
    path: str = Field(description="Workspace-relative file.")
    line: int = Field(ge=1, description="1-based.")
    column: int = Field(ge=1, description="1-based, in characters, on the name.")


def kind_name(kind: Any) -> str:
    """The name of an LSP SymbolKind number."""
    return SYMBOL_KINDS[kind - 1] if isinstance(kind, int) and 1 <= kind <= len(SYMBOL_KINDS) else "symbol"


def numbers(position: Any) -> tuple[int, int]:
    """(line, character) of a server's position; ToolError when they are not whole numbers."""
    if not is_position(position):
        raise ToolError(f"The language server answered a malformed position: {str(position)[:100]}")
    return position["line"], position["character"]


def offset_of(text: str, starts: list[int], position: dict) -> int:
    """The character offset of a (character-counting) LSP position in `text`; past a line's end is its end."""
    line, character = (max(n, 0) for n in numbers(position))
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content_end = start + len(LINE_BREAK.sub("", text[start:end]))
    return min(start + character, content_end)


# ---- the method behind a tool, and asking it ---------------------------------------------------------------


def port(ctx: ToolContext, method: str, path: Optional[Path] = None) -> LanguageFeatures:
    """The port that can answer `method` (for `path`); ToolError saying so when nothing can."""
    language = ctx.language
    if language is None or method not in language.methods(path):
        where = f" for {display(ctx.editor.roots, path)}" if path is not None else ""
        raise ToolError(f"No language server answers {method}{where}; use search and read_file instead.")
    return language


async def ask(ctx: ToolContext, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
    """The language server's answer; its failure (a timeout, an error) is a ToolError the model reads."""
    language = port(ctx, method, path)
    try:
        answer = await language.request(method, params, path)
    except LanguageFeatureError as e:
        raise ToolError(str(e)) from None
    # a lone surrogate a server escaped in its JSON would fail the chat when the result is sent on
    return await asyncio.to_thread(scrubbed, answer) if answer is not None else None


def index_line(ctx: ToolContext, path: Optional[Path] = None) -> str:
    """The line ending a language tool's answer: how much the index of the server answering for `path` knows."""
    language = ctx.language
    if language is None:
        return "index: unknown — no language server answers here"
    return language.index(path).line


def answered(ctx: ToolContext, text: str, path: Optional[Path] = None) -> ToolOutput:
    """A language tool's answer, bounded, ending with the index line."""
    return ToolOutput(f"{bound(text)}\n{index_line(ctx, path)}")


async def reference_limit_note(ctx: ToolContext, path: Path, word: str) -> Optional[str]:
    """When the server answering references for `path` reads at most N files holding a name in one search and more
    hold `word` in its workspace folder besides `path`, the sentence saying its references may stop there and
    naming the `search` that finds them all (None otherwise)."""
    limit = ctx.language.index(path).reference_files if ctx.language is not None else None
    root = next((r for r in ctx.editor.roots if is_inside(path, r)), None)
    if limit is None or root is None or not re.fullmatch(r"\w+", word):
        return None
    try:
        holding = await ripgrep.files_holding(root, word, path.suffix)
    except ToolError:
        return None
    if holding - 1 <= limit:  # the file asked about is read whatever the limit
        return None
    return (f"These may be incomplete: the language server reads at most {limit} of the files that hold `{word}` "
            f"in one search, and {holding} do here. Run search with pattern `{whole_word(word)}` for the rest.")


def whole_word(word: str) -> str:
    """The search pattern for a name as a whole word."""
    return rf"\b{re.escape(word)}\b" if re.fullmatch(r"\w+", word) else re.escape(word)


def empty_answer(ctx: ToolContext, what: str, pattern: str, path: Optional[Path] = None) -> str:
    """An answer that found nothing, with the index line; when the index is not `ready`, it says that is no proof
    and names the `search` to run (`pattern`)."""
    line = index_line(ctx, path)
    if line.startswith("index: ready"):
        return f"{what}\n{line}"
    return (f"{what} That is no proof there are none, as the index is not ready: run search with pattern "
            f"`{pattern}`.\n{line}")


# ---- the model's position ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The place the model named: its file, the 1-based line and column, and how that line reads."""

    path: Path
    name: str
    """The path as the model sees it."""
    line: int
    column: int
    line_text: str

    @property
    def where(self) -> str:
        return f"{self.name}:{self.line}:{self.column}"

    @property
    def document(self) -> dict[str, Any]:
        return {"textDocument": {"uri": self.path.as_uri()}}

    @property
    def params(self) -> dict[str, Any]:
        """The TextDocumentPositionParams of the place (0-based, characters)."""
        return {**self.document, "position": {"line": self.line - 1, "character": self.column - 1}}


def target(ctx: ToolContext, input: PositionInput) -> Target:
    """The model's 1-based line and column in a file of the workspace, checked against its text (the open
    buffer's, else the file's)."""
    roots = ctx.editor.roots
    path = resolve(roots, input.path)
    name = display(roots, path)
    text, _ = read_text(ctx, path)
    lines = split_lines(text)
    if input.line > len(lines):
        raise ToolError(f"{name} has {len(lines)} lines; line {input.line} is past its end.")
    line_text = lines[input.line - 1]
    if input.column > len(line_text) + 1:
        raise ToolError(f"Line {input.line} of {name} has {len(line_text)} characters; column {input.column} is "
                        f"past its end. The line reads: {line_text.strip()[:MAX_LINE_CHARS]}")
    return Target(path, name, input.line, input.column, line_text)


def word_at(line: str, column: int) -> str:
    """The identifier under a 1-based column."""
    for m in re.finditer(r"\w+", line):
        if m.start() <= column - 1 <= m.end():
            return m.group()
    return "symbol"


def nothing_at(t: Target, what: str, ctx: Optional[ToolContext] = None) -> ToolError:
    """The error for a position where the language server found nothing (with `ctx`: and how much its index
    knows, naming the search to run when that is no proof)."""
    said = (f"No {what} at {t.where}: the position names no symbol the language server knows. The line "
            f"reads: {t.line_text.strip()[:MAX_LINE_CHARS]}")
    return ToolError(empty_answer(ctx, said, whole_word(word_at(t.line_text, t.column)), t.path) if ctx else said)


# ---- locations as the model reads them ---------------------------------------------------------------------


def locations(result: Any) -> list[tuple[str, dict]]:
    """(uri, start position) of each Location or LocationLink in a definition/references answer."""
    items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        uri = item.get("targetUri", item.get("uri"))
        where = item.get("targetSelectionRange") or item.get("targetRange") or item.get("range")
        if isinstance(uri, str) and isinstance(where, dict) and is_position(where.get("start")):
            found.append((uri, where["start"]))
    return found


class Places:
    """Shows places as `path:line:col` (1-based, columns in characters) with the line's text: the open buffer's
    unsaved text when open, else the file's; files outside the workspace are named but not read."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._lines: dict[Path, Optional[list[str]]] = {}
        self._names: dict[str, str] = {}

    def name(self, uri: str) -> str:
        """The path as the model sees it (workspace-relative inside the workspace)."""
        name = self._names.get(uri)
        if name is None:  # once per file: an answer may name one file 100,000 times
            path = uri_to_path(uri)
            name = self._names[uri] = uri if path is None else display(self._ctx.editor.roots, path)
        return name

    def where(self, uri: str, position: dict) -> str:
        line, character = numbers(position)
        return f"{self.name(uri)}:{line + 1}:{character + 1}"

    def sort_key(self, uri: str, position: dict) -> tuple:
        return (self.name(uri), *numbers(position))

    async def load(self, uris: Iterable[str]) -> None:
        """Read the texts of these files once: open buffers now, the others' files off the event loop."""
        roots = self._ctx.editor.roots
        on_disk = []
        for path in {p for p in map(uri_to_path, uris) if p is not None} - self._lines.keys():
            doc = self._ctx.editor.open_document(path)
            if doc is not None:
                self._lines[path] = split_lines(doc.text)
            elif any(is_inside(path, root) for root in roots):
                on_disk.append(path)
            else:
                self._lines[path] = None

        def read() -> dict[Path, Optional[list[str]]]:
            texts = {}
            for path in on_disk:
                try:
                    texts[path] = split_lines(path.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    texts[path] = None
            return texts

        if on_disk:
            self._lines.update(await asyncio.to_thread(read))

    def text(self, uri: str, line: int) -> Optional[str]:
        """The text of a (0-based) line of a loaded file; None when it is not known."""
        path = uri_to_path(uri)
        lines = self._lines.get(path) if path is not None else None
        if lines is None or not 0 <= line < len(lines):
            return None
        return lines[line].strip()[:MAX_LINE_CHARS]

    async def lines(self, places: list[tuple[str, dict]], sort: bool = False) -> list[str]:
        """One `path:line:col: text` line per distinct place."""
        await self.load(uri for uri, _ in places)
        seen, out = set(), []
        ordered = sorted(places, key=lambda p: self.sort_key(*p)) if sort else places
        for uri, position in ordered:
            where = self.where(uri, position)
            if where in seen:
                continue
            seen.add(where)
            text = self.text(uri, numbers(position)[0])
            out.append(f"{where}: {text}" if text is not None else where)
        return out


class LanguageTool(Tool):
    """A tool answered by a language server: offered when something can answer `needs`; `origin` says what
    ("editor" or "languageServer:<name>", as `agent/tools` lists it)."""

    kind = "read"
    needs: ClassVar[tuple[str, ...]]

    def __init__(self, origin: str = "editor") -> None:
        self.origin = origin

    def locations(self, ctx: ToolContext, input: ToolInput) -> Optional[list[Location]]:
        raw = getattr(input, "path", None)
        return file_location(ctx.editor.roots, raw) if raw else None
