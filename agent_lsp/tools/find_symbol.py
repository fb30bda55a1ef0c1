"""find_symbol: the workspace's symbols matching a query (workspace/symbol), `path:line:col: kind name (container)`."""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from agent_lsp.core.tool import ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.language_tool import (
    SYMBOL_KINDS,
    LanguageTool,
    Places,
    answered,
    ask,
    empty_answer,
    kind_name,
)

MAX_SYMBOLS = 200


class FindSymbolInput(ToolInput):
    query: str = Field(description="Name or part of it.")
    kind: Optional[str] = Field(None, description="class, function, method, variable...")


class FindSymbol(LanguageTool):
    name = "find_symbol"
    needs = ("workspace/symbol",)
    description = (
        "Find where classes, functions, variables... are defined, by name, across the workspace (the language "
        "server's index). Prefer it over search to locate a definition."
    )
    Input = FindSymbolInput

    def title(self, input: FindSymbolInput) -> str:
        return f"Find symbol {input.query!r}"

    async def run(self, ctx: ToolContext, input: FindSymbolInput) -> ToolOutput:
        kind = input.kind.strip().lower().replace(" ", "_") if input.kind else None
        if kind is not None and kind not in SYMBOL_KINDS:
            raise ToolError(f"Unknown kind {input.kind!r}; use one of: {', '.join(SYMBOL_KINDS)}.")
        answer = await ask(ctx, "workspace/symbol", {"query": input.query})
        symbols = [s for s in answer or [] if isinstance(s, dict) and isinstance(s.get("location"), dict)
                   and isinstance(s["location"].get("uri"), str)]
        if kind is not None:
            symbols = [s for s in symbols if kind_name(s.get("kind")) == kind]
        if not symbols:
            return ToolOutput(empty_answer(ctx, f"No symbol matches {input.query!r}" +
                                           (f" of kind {kind}." if kind else "."), re.escape(input.query)))
        places = Places(ctx)
        lines = []
        for s in symbols[:MAX_SYMBOLS]:
            uri, where = s["location"]["uri"], s["location"].get("range")
            at = places.where(uri, where["start"]) if isinstance(where, dict) else places.name(uri)
            container = f" ({s['containerName']})" if s.get("containerName") else ""
            lines.append(f"{at}: {kind_name(s.get('kind'))} {s.get('name', '?')}{container}")
        more = len(symbols) - MAX_SYMBOLS
        if more > 0:
            lines.append(f"[{more} more symbols; narrow the query or give a kind]")
        return answered(ctx, "\n".join(lines))
