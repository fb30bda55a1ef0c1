"""go_to_definition: where the symbol at a position is defined, `path:line:col: text`."""

from __future__ import annotations

from agent_lsp.core.tool import ToolContext, ToolOutput
from agent_lsp.tools.language_tool import (
    LanguageTool,
    Places,
    PositionInput,
    answered,
    ask,
    locations,
    nothing_at,
    target,
)


class GoToDefinition(LanguageTool):
    name = "go_to_definition"
    needs = ("textDocument/definition",)
    description = (
        "Where the symbol at path:line:column is defined (imports and aliases resolved). Prefer it over search to "
        "find a definition."
    )
    Input = PositionInput

    def title(self, input: PositionInput) -> str:
        return f"Definition at {input.path}:{input.line}:{input.column}"

    async def run(self, ctx: ToolContext, input: PositionInput) -> ToolOutput:
        t = target(ctx, input)
        found = locations(await ask(ctx, "textDocument/definition", t.params, t.path))
        if not found:
            raise nothing_at(t, "definition", ctx)
        return answered(ctx, "\n".join(await Places(ctx).lines(found)), t.path)
