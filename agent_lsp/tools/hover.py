"""hover: what the language server says about the symbol at a position (type, signature, documentation)."""

from __future__ import annotations

from typing import Any

from agent_lsp.core.tool import ToolContext, ToolOutput
from agent_lsp.tools.language_tool import LanguageTool, PositionInput, answered, ask, nothing_at, target


def hover_text(contents: Any) -> str:
    """The text of a Hover's contents: MarkupContent, a MarkedString, or a list of MarkedStrings."""
    if isinstance(contents, list):
        return "\n\n".join(part for part in map(hover_text, contents) if part)
    if isinstance(contents, str):
        return contents.strip()
    if isinstance(contents, dict):
        value = str(contents.get("value", "")).strip()
        if "language" in contents and value:  # a MarkedString with a language is a code block
            return f"```{contents['language']}\n{value}\n```"
        return value
    return ""


class Hover(LanguageTool):
    name = "hover"
    needs = ("textDocument/hover",)
    description = (
        "Type, signature and documentation of the symbol at path:line:column, from the language server."
    )
    Input = PositionInput

    def title(self, input: PositionInput) -> str:
        return f"Hover at {input.path}:{input.line}:{input.column}"

    async def run(self, ctx: ToolContext, input: PositionInput) -> ToolOutput:
        t = target(ctx, input)
        answer = await ask(ctx, "textDocument/hover", t.params, t.path)
        text = hover_text(answer.get("contents")) if isinstance(answer, dict) else ""
        if not text:
            raise nothing_at(t, "hover information", ctx)
        return answered(ctx, text, t.path)
