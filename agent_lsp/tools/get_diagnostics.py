"""get_diagnostics: the editor's diagnostics as `path:line:col: severity: message`."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from agent_lsp.core.paths import display
from agent_lsp.core.ports import Diagnostic
from agent_lsp.core.tool import Tool, ToolContext, ToolInput, ToolOutput, bound
from agent_lsp.tools.paths import resolve

UNAVAILABLE = "The editor's diagnostics were not available ({why}); these are the syntax errors agent-lsp found itself."


class GetDiagnosticsInput(ToolInput):
    path: Optional[str] = Field(None, description="File to check (omit: every open document).")


class GetDiagnostics(Tool):
    name = "get_diagnostics"
    kind = "read"
    description = (
        "Errors and warnings the editor's language servers report, as `path:line:col: severity: message` "
        "(1-based). Omit path for every open document."
    )
    Input = GetDiagnosticsInput

    def title(self, input: GetDiagnosticsInput) -> str:
        return f"Diagnostics of {input.path}" if input.path else "Diagnostics of open documents"

    async def run(self, ctx: ToolContext, input: GetDiagnosticsInput) -> ToolOutput:
        paths = [resolve(ctx.editor.roots, input.path)] if input.path else None
        report = await ctx.editor.diagnostics(paths)
        body = format_diagnostics(ctx.editor.roots, report.items) or "No diagnostics."
        note = UNAVAILABLE.format(why=report.unavailable)
        return ToolOutput(bound(body if report.from_editor else f"{note}\n{body}"))


def format_diagnostics(roots, items: list[Diagnostic]) -> str:
    """One `path:line:col: severity: message` line per diagnostic, sorted by place."""
    ordered = sorted(items, key=lambda d: (str(d.path), d.line, d.column))
    return "\n".join(
        f"{display(roots, d.path)}:{d.line}:{d.column}: {d.severity}: {d.message}"
        + (f" [{d.source}]" if d.source else "")
        for d in ordered
    )


TOOL = GetDiagnostics()
