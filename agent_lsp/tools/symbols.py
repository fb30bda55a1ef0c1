"""What the symbol tools share (PROTOCOL §11 "Edits by symbol"): symbols found by name path in a file's
documentSymbol answer, their span by one rule whatever the server reports, the token of a span, bodies indented
as the file has them, and the refusals (an ambiguous name, one the server does not report, a changed span, a Python
file that would no longer compile).

The span rule: the declaration with the decorators or attributes directly above it, whole lines (so the keywords
before the name, `async`, `export`, `type`…, are in), through its last line; comment lines above are out (a
docstring inside is in). jedi starts a symbol at `def`, pyright at its decorator: both give the same span here.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Optional, Union

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from agent_lsp.core.ports import FileChange, FileEdit
from agent_lsp.core.tool import Preview, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.editing import Current, apply, current, minimal_edit, unified_diff
from agent_lsp.core.paths import display
from agent_lsp.core.positions import LINE_BREAK, is_position, line_starts, split_lines
from agent_lsp.tools.language_tool import LanguageTool, ask, index_line, kind_name, port
from agent_lsp.tools.paths import resolve

SYMBOLS = "textDocument/documentSymbol"
PYTHON = (".py", ".pyi")
MAX_LISTED = 40
"""Symbols named when a name path matches none (the rest counted)."""

DECORATOR = re.compile(r"[ \t]*(@|#\[|\[)")
PY_DECORATOR = re.compile(r"[ \t]*@")
COMMENT = re.compile(r"[ \t]*(#(?![\[!])|//|/\*|\*|--)")
OPENS, CLOSES = "([{", ")]}"


Line = Union[Annotated[int, Field(ge=1)], SkipJsonSchema[None]]
"""An optional 1-based line, its schema an integer alone (a null alternative would cost every tool's definition)."""


class SymbolInput(ToolInput):
    path: str
    symbol: str = Field(description="Name path: Class/method.")
    line: Line = None  # the refusal of an ambiguous name says what it is for


# ---- lines ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lines:
    """A text cut at LSP's line breaks: each line's content and where it starts and ends (offsets)."""

    text: str
    starts: tuple[int, ...]
    contents: tuple[str, ...]

    @staticmethod
    def of(text: str) -> "Lines":
        return Lines(text, tuple(line_starts(text)), tuple(split_lines(text)))

    def end(self, line: int) -> int:
        """The offset where `line`'s content ends (before its line break)."""
        return self.starts[line] + len(self.contents[line])

    @property
    def eol(self) -> str:
        """The file's line end (its first one; `\\n` when it has none)."""
        m = LINE_BREAK.search(self.text)
        return m.group() if m else "\n"

    def blank(self, line: int) -> bool:
        return not self.contents[line].strip()

    @property
    def count(self) -> int:
        """The lines with text or a line end (the empty one after a final line end is not one)."""
        return len(self.contents) - (1 if len(self.contents) > 1 and not self.contents[-1] else 0)


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def depth(text: str) -> int:
    """How many brackets `text` leaves open (strings are not told apart: a decorator's are balanced anyway)."""
    return sum(1 for c in text if c in OPENS) - sum(1 for c in text if c in CLOSES)


# ---- symbols and their spans ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Symbol:
    """A symbol the server reports, with its span (0-based lines, both ends in)."""

    path: tuple[str, ...]
    kind: str
    start: int
    """The span's first line: decorators and attributes in, comments out."""
    end: int
    name_line: int
    name_column: int
    comments: int
    """The first of the comment lines directly above the span (`start` when none)."""
    parent: tuple[str, ...]

    @property
    def name_path(self) -> str:
        return "/".join(p.replace("/", "\\/") for p in self.path)


def _range(where: Any) -> Optional[tuple[int, int, int, int]]:
    if isinstance(where, dict) and is_position(where.get("start")) and is_position(where.get("end")):
        s, e = where["start"], where["end"]
        return s["line"], s["character"], e["line"], e["character"]
    return None


def span(lines: Lines, start: int, end: int, end_character: int, name_line: int, python: bool) -> tuple[int, int]:
    """The span rule on the server's range (first line, last line, the end's character) of a symbol whose name is
    on `name_line`: comment lines the server included above the declaration dropped, decorators and attributes
    directly above it added, an end at column 0 of the next line or on blank lines pulled back."""
    last = len(lines.contents) - 1
    start, end, name_line = min(max(start, 0), last), min(max(end, 0), last), min(max(name_line, 0), last)
    if end > start and end_character == 0:
        end -= 1
    end = max(end, name_line)
    while end > name_line and lines.blank(end):
        end -= 1
    while start < name_line and (lines.blank(start) or COMMENT.match(lines.contents[start])):
        start += 1
    marker = PY_DECORATOR if python else DECORATOR
    own = indentation(lines.contents[start])
    while start > 0:  # decorators above, one at a time; a decorator may run over several lines
        above = None
        for k in range(start - 1, max(-1, start - 31), -1):
            text = lines.contents[k]
            if not text.strip():
                break
            if marker.match(text) and indentation(text) == own:
                opened = 0
                for j in range(k, start):
                    opened += depth(lines.contents[j])
                    if opened <= 0 and j < start - 1:  # a statement ended before the declaration: not its decorator
                        break
                else:
                    above = k if opened == 0 else None
                break
        if above is None:
            break
        start = above
    return start, end


def comments_above(lines: Lines, start: int) -> int:
    """The first line of the comment lines directly above `start` (`start` when there are none)."""
    while start > 0 and COMMENT.match(lines.contents[start - 1]) and lines.contents[start - 1].strip():
        start -= 1
    return start


def symbols_of(answer: Any, lines: Lines, python: bool) -> list[Symbol]:
    """Every symbol of a documentSymbol answer (DocumentSymbol trees; flat SymbolInformation named by their
    container), in the order of the file."""
    found: list[Symbol] = []

    def add(item: dict, parent: tuple[str, ...]) -> None:
        name = item.get("name")
        if not isinstance(name, str) or not name:
            return
        whole = _range(item.get("range")) or _range((item.get("location") or {}).get("range"))
        if whole is None:
            return
        chosen = _range(item.get("selectionRange")) or whole
        if "location" in item and not parent and isinstance(item.get("containerName"), str) and item["containerName"]:
            parent = tuple(item["containerName"].split("."))
        first, last = span(lines, whole[0], whole[2], whole[3], chosen[0], python)
        path = (*parent, name)
        found.append(Symbol(path, kind_name(item.get("kind")), first, last, min(chosen[0], len(lines.contents) - 1),
                            chosen[1], comments_above(lines, first), parent))
        for child in item.get("children") or []:
            if isinstance(child, dict):
                add(child, path)

    for item in answer if isinstance(answer, list) else []:
        if isinstance(item, dict):
            add(item, ())
    found.sort(key=lambda s: (s.start, s.name_line))
    return found


def parse_name_path(symbol: str) -> tuple[bool, tuple[str, ...]]:
    """(anchored at the file, the names) of a name path; `\\/` is a `/` inside a name."""
    anchored = symbol.startswith("/")
    parts = tuple(p.replace("\0", "/").strip() for p in symbol.replace("\\/", "\0").strip("/").split("/"))
    if not all(parts):
        raise ToolError(f"symbol `{symbol}` has an empty name in it; give a name path such as `Class/method`.")
    return anchored, parts


def matching(symbols: list[Symbol], symbol: str) -> list[Symbol]:
    """The symbols a name path names: the whole path from the file when it starts with `/`, else its end."""
    anchored, parts = parse_name_path(symbol)
    n = len(parts)
    return [s for s in symbols if (s.path == parts if anchored else s.path[-n:] == parts)]


def token_of(text: str) -> str:
    """The token of a span's text: it changes whenever the text does."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def numbered(lines: Lines, first: int, last: int) -> str:
    return "\n".join(f"{n + 1:>6}\t{lines.contents[n]}" for n in range(first, last + 1))


# ---- finding one symbol --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """A symbol found in the text the editor has now."""

    path: Path
    name: str
    """The file as the model sees it."""
    now: Current
    lines: Lines
    symbols: list[Symbol]
    symbol: Symbol
    index: str
    """The index line of the answer."""

    @property
    def text(self) -> str:
        """The span's text (without the line end of its last line)."""
        return self.lines.text[self.lines.starts[self.symbol.start]:self.lines.end(self.symbol.end)]

    @property
    def token(self) -> str:
        return token_of(self.text)

    @property
    def python(self) -> bool:
        return self.path.suffix in PYTHON

    def where(self, s: Optional[Symbol] = None) -> str:
        s = s or self.symbol
        return f"{self.name}:{s.start + 1}-{s.end + 1}"

    def shown(self) -> str:
        """The span with line numbers, its kind and token."""
        s = self.symbol
        return (f"{self.where()} {s.kind} {s.name_path} token={self.token}\n"
                f"{numbered(self.lines, s.start, s.end)}")

    def siblings(self) -> list[Symbol]:
        return [s for s in self.symbols if s.parent == self.symbol.parent]


async def find(ctx: ToolContext, raw_path: str, symbol: str, line: Optional[int], what: str = "symbol") -> Found:
    """The one symbol `symbol` names in the file (`line` choosing among several); ToolError naming why not."""
    path = resolve(ctx.editor.roots, raw_path)
    name = display(ctx.editor.roots, path)
    parse_name_path(symbol)
    port(ctx, SYMBOLS, path)
    now = current(ctx, path)
    if not now.exists:
        raise ToolError(f"{name} does not exist.")
    answer = await ask(ctx, SYMBOLS, {"textDocument": {"uri": path.as_uri()}}, path)
    if current(ctx, path) != now:  # the user typed while the server answered: its lines may be off
        now = current(ctx, path)
        answer = await ask(ctx, SYMBOLS, {"textDocument": {"uri": path.as_uri()}}, path)
    if answer is not None and not isinstance(answer, list):
        raise ToolError(f"The language server answered {SYMBOLS} for {name} with something that is not a list of "
                        "symbols; nothing was changed. Use edit_file.")
    lines = Lines.of(now.text)
    python = path.suffix in PYTHON
    symbols = await asyncio.to_thread(symbols_of, answer or [], lines, python)
    index = index_line(ctx, path)
    candidates = matching(symbols, symbol)
    if line is not None:
        picked = [s for s in candidates if line - 1 in (s.name_line, s.start)]
        if not picked and candidates:
            raise ToolError(f"No `{symbol}` in {name} starts at line {line}; the candidates are:\n"
                            f"{_candidates(lines, name, candidates)}")
        candidates = picked
    if not candidates:
        known = [s.name_path for s in symbols]
        listed = ", ".join(known[:MAX_LISTED]) + (f" and {len(known) - MAX_LISTED} more" if len(known) > MAX_LISTED
                                                  else "")
        raise ToolError(f"The language server reports no {what} `{symbol}` in {name} (a local variable or a level "
                        f"it leaves out is not addressable); use edit_file for it. It reports: "
                        f"{listed or 'no symbols'}.\n{index}")
    if len(candidates) > 1:
        raise ToolError(f"`{symbol}` names {len(candidates)} symbols in {name}; nothing was changed. Give `line` to "
                        f"pick one:\n{_candidates(lines, name, candidates)}")
    found = Found(path, name, now, lines, symbols, candidates[0], index)
    s = found.symbol
    if s.start == s.end and lines.contents[s.end].rstrip().endswith((":", "{")):
        raise ToolError(f"The language server reports only the first line of `{s.name_path}` in {name}, not where it "
                        "ends; nothing was changed. Use edit_file for it.")
    return found


def _candidates(lines: Lines, name: str, candidates: list[Symbol]) -> str:
    return "\n".join(f"{name}:{s.name_line + 1}: {s.kind} {s.name_path}: "
                     f"{lines.contents[s.start].strip()[:200]}" for s in candidates)


def check_token(found: Found, token: str) -> None:
    """ToolError when the symbol's text is no longer the one read (the user's edit inside it is never lost)."""
    if token.strip() != found.token:
        raise ToolError(f"`{found.symbol.name_path}` changed since it was read (token {token.strip()} is now "
                        f"{found.token}); nothing was edited. It now reads:\n{found.shown()}\nMake your edit on this "
                        "text, with its token.")


# ---- new text ------------------------------------------------------------------------------------------------


def indent_style(lines: Lines) -> tuple[bool, int]:
    """(tabs, spaces per level) as the file indents: its first indented line decides tabs; the smallest indent
    in spaces is a level (4 when none)."""
    tabs, widths = None, []
    for text in lines.contents:
        lead = indentation(text)
        if lead and text.strip():
            tabs = lead.startswith("\t") if tabs is None else tabs
            if "\t" not in lead:
                widths.append(len(lead))
    return bool(tabs), min(widths) if widths else 4


def reindent(body: str, indent: str, tabs: bool, unit: int, eol: str) -> str:
    """`body` (at column 0 or already indented) as whole lines at `indent`, the file's tabs or spaces and line end;
    ToolError when it has no text."""
    rows = LINE_BREAK.split(body)
    while rows and not rows[0].strip():
        rows.pop(0)
    while rows and not rows[-1].strip():
        rows.pop()
    if not rows:
        raise ToolError("The text is empty; nothing was changed (delete_symbol deletes a symbol).")
    if tabs:  # a level is the body's own indent step in spaces, or a tab
        steps = {len(indentation(r).expandtabs(1)) for r in rows if r.strip() and "\t" not in indentation(r)}
        positive = sorted(w for w in steps if w > 0)
        unit = positive[0] if positive else unit

    def width(lead: str) -> int:
        return sum(unit if c == "\t" else 1 for c in lead)

    base = width(indent)
    widths = [width(indentation(r)) if r.strip() else None for r in rows]
    rest = [w for w in widths[1:] if w is not None]
    if widths[0] == 0 and base and rest and min(rest) >= base + unit:
        widths[0] = base  # the first line's indent was lost (copied from a read), the others kept theirs
    least = min(w for w in widths if w is not None)

    def lead_of(w: int) -> str:
        return "\t" * (w // unit) + " " * (w % unit) if tabs else " " * w

    out = []
    for row, w in zip(rows, widths):
        out.append("" if w is None else lead_of(base + w - least) + row.lstrip(" \t"))
    return eol.join(out)


def compiles(text: str, name: str) -> Optional[str]:
    """None when Python compiles `text`; else the error, as `line N: message`."""
    try:
        compile(text, name, "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"line {e.lineno}: {e.msg}"
    except (ValueError, RecursionError, MemoryError) as e:
        return str(e) or type(e).__name__
    return None


async def refuse_broken(found: Found, after: str) -> None:
    """ToolError when a Python file that compiled would no longer compile after the change."""
    if not found.python:
        return
    broken = await asyncio.to_thread(compiles, after, found.name)
    if broken is not None and await asyncio.to_thread(compiles, found.now.text, found.name) is None:
        raise ToolError(f"After this change {found.name} would no longer compile ({broken}); nothing was changed.")


# ---- the change ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    """A change to one file, with what the user sees and what the model reads after it."""

    found: Found
    after: str
    summary: str
    label: str
    """What the edit is called in the editor's undo ("replace Cart/total")."""

    @property
    def diff(self) -> str:
        return unified_diff(self.found.name, self.found.now.text, self.after)

    @property
    def unchanged(self) -> bool:
        return self.after == self.found.now.text

    def preview(self) -> Preview:
        if self.unchanged:
            return Preview(unchanged=True)
        return Preview(diff=self.diff, changes=(FileChange(self.found.path, self.found.now.text, self.after),))

    async def apply(self, ctx: ToolContext) -> ToolOutput:
        """Nothing sent when nothing changes; else the edit through the editor, as edit_file's."""
        f = self.found
        if self.unchanged:
            return ToolOutput(f"No change: `{f.symbol.name_path}` in {f.name} already reads so; nothing was sent.\n"
                              f"{f.index}")
        edit, diff = await asyncio.to_thread(lambda: (minimal_edit(f.now.text, self.after), self.diff))
        out = await apply(ctx, FileEdit(path=f.path, base_text=f.now.text, version=f.now.version, edits=[edit],
                                        label=f"agent-lsp: {self.label}"), self.summary, diff)
        out.text += f"\n{f.index}"
        return out


def replaced(found: Found, first: int, last: int, block: Optional[str]) -> str:
    """The text with lines `first`..`last` (both in) replaced by `block` (None: removed, line ends and all)."""
    lines = found.lines
    start = lines.starts[first]
    if block is None:
        if last + 1 < len(lines.starts):
            return lines.text[:start] + lines.text[lines.starts[last + 1]:]
        if start > 0:  # the last line, with no line end: the line end before it goes instead
            start = lines.end(first - 1)
        return lines.text[:start]
    return lines.text[:start] + block + lines.text[lines.end(last):]


class SymbolEdit(LanguageTool):
    """A tool that edits by symbol: `plan` computes the change on the buffer as it is, for the confirmation and
    again to run it (the user may have typed while asked: the token check sees it)."""

    kind = "edit"
    needs = (SYMBOLS,)

    async def plan(self, ctx: ToolContext, input: Any) -> Planned:
        raise NotImplementedError

    async def preview(self, ctx: ToolContext, input: Any) -> Preview:
        return (await self.plan(ctx, input)).preview()

    async def run(self, ctx: ToolContext, input: Any) -> ToolOutput:
        return await (await self.plan(ctx, input)).apply(ctx)
