"""replace_symbol: a symbol's span replaced by a new body, indented as the span, only while its text is still the
one read (`token`)."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.core.tool import ToolContext
from agent_lsp.tools.symbols import (
    Planned,
    SymbolEdit,
    SymbolInput,
    check_token,
    find,
    indent_style,
    indentation,
    refuse_broken,
    reindent,
    replaced,
    token_of,
)


class ReplaceSymbolInput(SymbolInput):
    token: str = Field(description="From read_symbol.")
    body: str = Field(description="The whole new symbol.")


class ReplaceSymbol(SymbolEdit):
    name = "replace_symbol"
    description = (
        "Replace a whole symbol (decorators, signature, body); indentation kept. Prefer it to edit_file for whole "
        "functions."
    )
    Input = ReplaceSymbolInput

    def title(self, input: ReplaceSymbolInput) -> str:
        return f"Replace {input.symbol} in {input.path}"

    async def plan(self, ctx: ToolContext, input: ReplaceSymbolInput) -> Planned:
        found = await find(ctx, input.path, input.symbol, input.line)
        check_token(found, input.token)
        s, lines = found.symbol, found.lines
        tabs, unit = indent_style(lines)
        block = reindent(input.body, indentation(lines.contents[s.start]), tabs, unit, lines.eol)
        after = replaced(found, s.start, s.end, block)
        if after != found.now.text:
            await refuse_broken(found, after)
        last = s.start + block.count(lines.eol)
        summary = (f"Replaced `{s.name_path}` in {found.name}: now lines {s.start + 1}-{last + 1}, "
                   f"token={token_of(block)}.")
        return Planned(found, after, summary, f"replace {s.name_path}")
