"""delete_symbol: a symbol's span and its comment lines above deleted, only when the language server proves nothing
references it (its references, over the live buffers, all inside it, and its index `ready`); `force` deletes anyway."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.core.paths import uri_to_path
from agent_lsp.tools.language_tool import Places, ask, locations, numbers, whole_word
from agent_lsp.tools.symbols import (
    Found,
    Planned,
    SymbolEdit,
    SymbolInput,
    check_token,
    find,
    refuse_broken,
    replaced,
)

REFERENCES = "textDocument/references"
MAX_SHOWN = 30


class DeleteSymbolInput(SymbolInput):
    token: str = Field(description="From read_symbol.")
    force: bool = Field(False, description="Even if not proved unused.")


async def outside_references(ctx: ToolContext, found: Found) -> list[tuple[str, dict]]:
    """The references to the symbol that are not inside the lines being deleted; ToolError when none can be asked."""
    if ctx.language is None or REFERENCES not in ctx.language.methods(found.path):
        raise ToolError(f"No language server answers {REFERENCES} for {found.name}, so nothing proves "
                        f"`{found.symbol.name_path}` unused; nothing was deleted. Run search for its name, then "
                        "delete_symbol with force if it is unused.")
    s = found.symbol
    answer = await ask(ctx, REFERENCES, {"textDocument": {"uri": found.path.as_uri()},
                                         "position": {"line": s.name_line, "character": s.name_column},
                                         "context": {"includeDeclaration": False}}, found.path)
    if answer is not None and not isinstance(answer, list):
        raise ToolError(f"The language server answered {REFERENCES} with something that is not a list; nothing "
                        "was deleted.")
    return [(uri, at) for uri, at in locations(answer)
            if not (uri_to_path(uri) == found.path and s.comments <= numbers(at)[0] <= s.end)]


class DeleteSymbol(SymbolEdit):
    name = "delete_symbol"
    description = (
        "Delete a symbol and its comments if nothing references it (else lists the references)."
    )
    Input = DeleteSymbolInput

    def title(self, input: DeleteSymbolInput) -> str:
        return f"Delete {input.symbol} in {input.path}"

    async def plan(self, ctx: ToolContext, input: DeleteSymbolInput) -> Planned:
        found = await find(ctx, input.path, input.symbol, input.line)
        check_token(found, input.token)
        s = found.symbol
        unproved = ""
        try:
            refs = await outside_references(ctx, found)
        except ToolError:
            if not input.force:
                raise
            refs, unproved = [], "the language server could not be asked for its references"
        if refs and not input.force:
            shown = await Places(ctx).lines(refs[:MAX_SHOWN], sort=True)
            more = f"\n… and {len(refs) - MAX_SHOWN} more" if len(refs) > MAX_SHOWN else ""
            raise ToolError(f"`{s.name_path}` is still referenced {len(refs)} time{'s' * (len(refs) != 1)}; nothing "
                            f"was deleted:\n" + "\n".join(shown) + f"{more}\n{found.index}")
        if not refs and not unproved and not found.index.startswith("index: ready"):
            if not input.force:
                raise ToolError(f"The language server finds no reference to `{s.name_path}`, but its index is not "
                                f"ready, so that proves nothing; nothing was deleted. Run search with "
                                f"pattern `{whole_word(s.path[-1])}`; if nothing uses it, retry with force.\n"
                                f"{found.index}")
            unproved = "the index was not ready"
        first, last = s.comments, s.end
        lines = found.lines
        siblings = found.siblings()
        leading = siblings.index(s) == 0  # the first in its parent: nothing before it to separate from
        while last + 1 < lines.count and lines.blank(last + 1) and (leading or first == 0 or lines.blank(first - 1)):
            last += 1  # the blank lines after it go when those before it keep the separation
        if last + 1 >= lines.count:
            while first > 0 and lines.blank(first - 1):
                first -= 1
        after = replaced(found, first, last, None)
        await refuse_broken(found, after)
        summary = f"Deleted `{s.name_path}` from {found.name} (lines {first + 1}-{last + 1})."
        if refs:
            summary += f" Deleted with force: it was still referenced {len(refs)} time{'s' * (len(refs) != 1)}."
        elif unproved:
            summary += f" Deleted with force: {unproved}, so nothing proved it unused."
        return Planned(found, after, summary, f"delete {s.name_path}")
