"""call_hierarchy: who calls the function at a position, or what it calls, `path:line:col: name` each."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent_lsp.core.tool import ToolContext, ToolOutput
from agent_lsp.tools.language_tool import (
    LanguageTool,
    Places,
    PositionInput,
    answered,
    ask,
    empty_answer,
    nothing_at,
    target,
    whole_word,
)


class CallHierarchyInput(PositionInput):
    direction: Literal["incoming", "outgoing"] = Field(description="incoming: callers; outgoing: callees.")


class CallHierarchy(LanguageTool):
    name = "call_hierarchy"
    needs = ("textDocument/prepareCallHierarchy", "callHierarchy/incomingCalls", "callHierarchy/outgoingCalls")
    description = (
        "Callers (incoming) or callees (outgoing) of the function at path:line:column. Prefer it over search to "
        "trace calls."
    )
    Input = CallHierarchyInput

    def title(self, input: CallHierarchyInput) -> str:
        return f"{'Callers' if input.direction == 'incoming' else 'Callees'} of {input.path}:{input.line}:{input.column}"

    async def run(self, ctx: ToolContext, input: CallHierarchyInput) -> ToolOutput:
        t = target(ctx, input)
        items = await ask(ctx, "textDocument/prepareCallHierarchy", t.params, t.path)
        items = [i for i in items or [] if isinstance(i, dict)] if isinstance(items, list) else []
        if not items:
            raise nothing_at(t, "function or method", ctx)
        incoming = input.direction == "incoming"
        method, end = ("callHierarchy/incomingCalls", "from") if incoming else ("callHierarchy/outgoingCalls", "to")
        found = []
        for item in items:
            calls = await ask(ctx, method, {"item": item}, t.path)
            for call in calls if isinstance(calls, list) else []:
                other = call.get(end) if isinstance(call, dict) else None
                where = other.get("selectionRange") or other.get("range") if isinstance(other, dict) else None
                if isinstance(where, dict) and isinstance(other.get("uri"), str):
                    found.append((other["uri"], where.get("start") or {}, str(other.get("name", "?"))))
        names = ", ".join(str(i.get("name", "?")) for i in items)
        if not found:
            return ToolOutput(empty_answer(ctx, f"No {'callers of' if incoming else 'calls from'} {names} found.",
                                           whole_word(str(items[0].get("name", ""))), t.path))
        places = Places(ctx)
        found.sort(key=lambda f: places.sort_key(f[0], f[1]))
        lines = list(dict.fromkeys(f"{places.where(uri, at)}: {name}" for uri, at, name in found))
        return answered(ctx, "\n".join(lines), t.path)
