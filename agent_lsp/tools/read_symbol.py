"""read_symbol: a symbol's span (decorators in, comments above out) with line numbers, its kind and `token`."""

from __future__ import annotations

from agent_lsp.core.tool import ToolContext, ToolOutput, bound
from agent_lsp.tools.language_tool import LanguageTool
from agent_lsp.tools.symbols import SYMBOLS, SymbolInput, find


class ReadSymbol(LanguageTool):
    name = "read_symbol"
    needs = (SYMBOLS,)
    description = (
        "A symbol's code with line numbers and the token replace_symbol and delete_symbol need."
    )
    Input = SymbolInput

    def title(self, input: SymbolInput) -> str:
        return f"Read {input.symbol} in {input.path}"

    async def run(self, ctx: ToolContext, input: SymbolInput) -> ToolOutput:
        found = await find(ctx, input.path, input.symbol, input.line)
        return ToolOutput(bound(f"{found.shown()}\n{found.index}"))
