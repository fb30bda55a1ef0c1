"""find_references: every reference to the symbol at a position, `path:line:col: text`, sorted."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.core.tool import ToolContext, ToolError, ToolOutput, bound
from agent_lsp.tools.language import MAX_LINE_CHARS, LanguageTool, Places, PositionInput, ask, locations, target


class FindReferencesInput(PositionInput):
    includeDeclaration: bool = Field(False)


class FindReferences(LanguageTool):
    name = "find_references"
    needs = ("textDocument/references",)
    description = (
        "Exact references to the symbol at path:line:column (no comments or strings; unsaved text included). "
        "Prefer it over search for a symbol."
    )
    Input = FindReferencesInput

    def title(self, input: FindReferencesInput) -> str:
        return f"References at {input.path}:{input.line}:{input.column}"

    async def run(self, ctx: ToolContext, input: FindReferencesInput) -> ToolOutput:
        t = target(ctx, input)
        params = {**t.params, "context": {"includeDeclaration": input.includeDeclaration}}
        found = locations(await ask(ctx, "textDocument/references", params, t.path))
        if not found:
            raise ToolError(f"No references found at {t.where}: the position names no symbol, or the symbol has no "
                            f"references{'' if input.includeDeclaration else ' besides its declaration'}. The line "
                            f"reads: {t.line_text.strip()[:MAX_LINE_CHARS]}")
        return ToolOutput(bound("\n".join(await Places(ctx).lines(found, sort=True))))
