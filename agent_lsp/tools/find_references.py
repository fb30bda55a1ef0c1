"""find_references: every reference to the symbol at a position, `path:line:col: text`, sorted."""

from __future__ import annotations

import asyncio

from agent_lsp.core.paths import uri_to_path
from agent_lsp.core.ports import LanguageFeatureError
from agent_lsp.core.tool import ToolContext, ToolError, ToolOutput
from agent_lsp.tools.language_tool import (
    MAX_LINE_CHARS,
    LanguageTool,
    Places,
    PositionInput,
    Target,
    answered,
    ask,
    empty_answer,
    locations,
    reference_limit_note,
    target,
    whole_word,
    word_at,
)


class FindReferencesInput(PositionInput):
    includeDeclaration: bool = False


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
        references = ask(ctx, "textDocument/references", params, t.path)
        if input.includeDeclaration or not _own_server(ctx, t):
            found = locations(await references)
        else:  # asked side by side: the declaration costs no extra wait
            answer, declared = await asyncio.gather(references, _declarations(ctx, t))
            found = [(uri, p) for uri, p in locations(answer) if _place(uri, p) not in declared]
        if not found:
            raise ToolError(empty_answer(
                ctx, f"No references found at {t.where}: the position names no symbol, or the symbol has no "
                     f"references{'' if input.includeDeclaration else ' besides its declaration'}. The line reads: "
                     f"{t.line_text.strip()[:MAX_LINE_CHARS]}", whole_word(word_at(t.line_text, t.column)), t.path))
        note = await reference_limit_note(ctx, t.path, word_at(t.line_text, t.column))
        places = "\n".join(await Places(ctx).lines(found, sort=True))
        return answered(ctx, f"{places}\n{note}" if note else places, t.path)


def _own_server(ctx: ToolContext, t: Target) -> bool:
    """Whether agent-lsp's own language server answers. Some servers, jedi-language-server among them, list the
    declaration whatever includeDeclaration says: here the declaration is dropped for our own server; the VS Code
    and Neovim clients drop it themselves (the definition at the same position, asked alongside)."""
    origin = ctx.language.methods(t.path).get("textDocument/references", "") if ctx.language else ""
    return origin.startswith("languageServer:")


def _place(uri: str, position: dict) -> tuple:
    return uri_to_path(uri), position.get("line"), position.get("character")


async def _declarations(ctx: ToolContext, t: Target) -> set[tuple]:
    """The places the symbol's definition names (nothing when the server cannot tell)."""
    if "textDocument/definition" not in ctx.language.methods(t.path):
        return set()
    try:
        return {_place(uri, p) for uri, p in locations(await ctx.language.request("textDocument/definition",
                                                                                 t.params, t.path))}
    except LanguageFeatureError:
        return set()
