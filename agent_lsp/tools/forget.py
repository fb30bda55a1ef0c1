"""forget: remove a fact from the workspace's memory file."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.core.ports import FileChange
from agent_lsp.core.tool import Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.editing import unified_diff
from agent_lsp.tools.memory import MemoryFile, entries, memory_text, without_fact, write_memory


class ForgetInput(ToolInput):
    fact: str = Field(description="The remembered fact to remove, exactly as the memory lists it.")


class Forget(Tool):
    name = "forget"
    kind = "edit"
    description = "Remove a fact from the project's memory (when the user says it no longer holds)."
    Input = ForgetInput

    def __init__(self, memory: MemoryFile) -> None:
        self.memory = memory

    def title(self, input: ForgetInput) -> str:
        return f"Forget: {input.fact[:60]}"

    def _new_text(self, ctx: ToolContext, input: ForgetInput) -> tuple[str, str]:
        text = memory_text(ctx, self.memory)
        new = without_fact(text, input.fact)
        if new is None:
            listed = "\n".join(f"- {e}" for e in entries(text)) or "(nothing is remembered)"
            raise ToolError(f"No remembered fact reads exactly like that. The memory holds:\n{listed}")
        return text, new

    async def preview(self, ctx: ToolContext, input: ForgetInput) -> Preview:
        old, new = self._new_text(ctx, input)
        return Preview(diff=unified_diff(self.memory.path.name, old, new),
                       changes=(FileChange(self.memory.path, old, new),))

    async def run(self, ctx: ToolContext, input: ForgetInput) -> ToolOutput:
        _, new = self._new_text(ctx, input)
        return await write_memory(ctx, self.memory, new, "Forgot the fact")
