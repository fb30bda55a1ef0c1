"""document_symbols: a file's outline from the language server, `line: kind name`, indented by nesting."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agent_lsp.core.paths import display
from agent_lsp.core.tool import ToolContext, ToolInput, ToolOutput
from agent_lsp.tools.language_tool import (
    LanguageTool,
    answered,
    ask,
    index_line,
    is_position,
    kind_name,
    numbers,
    split_lines,
)
from agent_lsp.tools.paths import resolve
from agent_lsp.tools.read_file import read_text


class DocumentSymbolsInput(ToolInput):
    path: str = Field(description="Workspace-relative file.")


def _line(where: Any) -> int:
    """The 0-based start line of a Range."""
    start = where.get("start") if isinstance(where, dict) else None
    return numbers(start)[0] if is_position(start) else 0


def _lines(symbol: dict) -> tuple[int, int]:
    """Where a symbol starts (to sort) and where its name is (to show): a DocumentSymbol's range and
    selectionRange, a SymbolInformation's location."""
    if "range" in symbol:
        return _line(symbol["range"]), _line(symbol.get("selectionRange", symbol["range"]))
    location = symbol.get("location")
    line = _line(location.get("range")) if isinstance(location, dict) else 0
    return line, line


def outline(symbols: list[Any], depth: int = 0) -> list[str]:
    """`line: kind name` per symbol (1-based), children indented under their parent, in the order of the file.
    DocumentSymbol trees and flat SymbolInformation lists both."""
    out = []
    for s in sorted((s for s in symbols if isinstance(s, dict)), key=_lines):
        out.append(f"{'  ' * depth}{_lines(s)[1] + 1}: {kind_name(s.get('kind'))} {s.get('name', '?')}")
        if isinstance(s.get("children"), list):
            out += outline(s["children"], depth + 1)
    return out


class DocumentSymbols(LanguageTool):
    name = "document_symbols"
    needs = ("textDocument/documentSymbol",)
    description = (
        "A file's outline: classes, functions, methods by line. Prefer it over reading a large file whole."
    )
    Input = DocumentSymbolsInput

    def title(self, input: DocumentSymbolsInput) -> str:
        return f"Outline of {input.path}"

    async def run(self, ctx: ToolContext, input: DocumentSymbolsInput) -> ToolOutput:
        path = resolve(ctx.editor.roots, input.path)
        text, _ = read_text(ctx, path)  # a directory or a missing file is refused before asking
        answer = await ask(ctx, "textDocument/documentSymbol", {"textDocument": {"uri": path.as_uri()}}, path)
        lines = outline(answer) if isinstance(answer, list) else []
        name = display(ctx.editor.roots, path)
        if not lines:
            return ToolOutput(f"The language server knows no symbols in {name} ({len(split_lines(text))} lines).\n"
                              f"{index_line(ctx, path)}")
        return answered(ctx, "\n".join(lines), path)
