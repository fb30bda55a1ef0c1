"""remember: keep a fact about the project for every later chat, in the workspace's memory file."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.core.ports import FileChange
from agent_lsp.core.tool import Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.editing import unified_diff
from agent_lsp.tools.memory import MemoryFile, entries, memory_text, with_fact, write_memory


class RememberInput(ToolInput):
    fact: str = Field(description="One short fact worth knowing in every later chat (a convention, a command, "
                                  "a decision), written as a sentence.")


class Remember(Tool):
    name = "remember"
    kind = "edit"
    description = ("Remember a fact about this project for every later chat (it is added to the project's memory, "
                   "which each chat's instructions include). Use it for lasting conventions, commands and "
                   "decisions the user states, not for the task at hand.")
    Input = RememberInput

    def __init__(self, memory: MemoryFile) -> None:
        self.memory = memory

    def title(self, input: RememberInput) -> str:
        return f"Remember: {input.fact[:60]}"

    def _new_text(self, ctx: ToolContext, input: RememberInput) -> tuple[str, str]:
        fact = " ".join(input.fact.split())
        if not fact:
            raise ToolError("fact is empty.")
        text = memory_text(ctx, self.memory)
        if fact in entries(text):
            raise ToolError("That fact is already remembered.")
        return text, with_fact(text, fact)

    async def preview(self, ctx: ToolContext, input: RememberInput) -> Preview:
        old, new = self._new_text(ctx, input)
        return Preview(diff=unified_diff(self.memory.path.name, old, new),
                       changes=(FileChange(self.memory.path, old, new),))

    async def run(self, ctx: ToolContext, input: RememberInput) -> ToolOutput:
        _, new = self._new_text(ctx, input)
        return await write_memory(ctx, self.memory, new, "Remembered the fact")
