"""insert_symbol: new code beside a symbol, `before` (above its comments and decorators) or `after` (below its
last line), indented as it and separated by the blank lines its siblings have."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_lsp.core.tool import ToolContext, ToolInput
from agent_lsp.tools.symbols import (
    Found,
    Line,
    Planned,
    SymbolEdit,
    find,
    indent_style,
    indentation,
    refuse_broken,
    reindent,
)


class InsertSymbolInput(ToolInput):
    path: str
    anchor: str = Field(description="Name path: Class/method.")
    where: Literal["before", "after"]
    text: str
    line: Line = None


def separation(found: Found) -> int:
    """The blank lines between the anchor and its siblings (the nearest gap); 2 between top-level Python
    symbols and 1 elsewhere when it has none."""
    lines, me = found.lines, found.symbol
    siblings = found.siblings()
    at = siblings.index(me)
    gaps = []
    pairs = [(siblings[i], siblings[i + 1]) for i in (at, at - 1) if 0 <= i and i + 1 < len(siblings)]
    for a, b in pairs:
        if b.comments > a.end:
            gaps.append(sum(1 for n in range(a.end + 1, b.comments) if lines.blank(n)))
    if gaps:
        return gaps[0]
    return 2 if found.python and not me.parent else 1


def blanks_before(found: Found, line: int) -> int:
    n = 0
    while line - 1 - n >= 0 and found.lines.blank(line - 1 - n):
        n += 1
    return n if line - n > 0 else -1  # -1: nothing above


def blanks_after(found: Found, line: int) -> int:
    count, n = len(found.lines.contents), 0
    while line + 1 + n < count and found.lines.blank(line + 1 + n):
        n += 1
    return n if line + 1 + n < count else -1  # -1: nothing below


class InsertSymbol(SymbolEdit):
    name = "insert_symbol"
    description = "Insert code before or after a symbol, indented and spaced like its siblings."
    Input = InsertSymbolInput

    def title(self, input: InsertSymbolInput) -> str:
        return f"Insert {input.where} {input.anchor} in {input.path}"

    async def plan(self, ctx: ToolContext, input: InsertSymbolInput) -> Planned:
        found = await find(ctx, input.path, input.anchor, input.line, "anchor")
        s, lines = found.symbol, found.lines
        eol = lines.eol
        tabs, unit = indent_style(lines)
        block = reindent(input.text, indentation(lines.contents[s.start]), tabs, unit, eol)
        sep = separation(found)
        text = lines.text
        if input.where == "before":
            at = lines.starts[s.comments]
            above = blanks_before(found, s.comments)
            lead = eol * (sep - above) if above >= 0 and above < sep else ""
            after = text[:at] + lead + block + eol + eol * sep + text[at:]
            first = s.comments + len(lead) // len(eol)
        else:
            at = lines.end(s.end)
            below = blanks_after(found, s.end)
            trail = eol * (sep - below) if below >= 0 and below < sep else ""
            after = text[:at] + eol + eol * sep + block + trail + text[at:]
            first = s.end + 1 + sep
        await refuse_broken(found, after)
        last = first + block.count(eol)
        summary = f"Inserted {input.where} `{s.name_path}` in {found.name}: lines {first + 1}-{last + 1}."
        return Planned(found, after, summary, f"insert {input.where} {s.name_path}")
