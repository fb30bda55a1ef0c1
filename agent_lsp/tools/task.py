"""task: hand a self-contained question to a subagent with a fresh context and the read-only tools; its final
report is the result (PROTOCOL §9). Several task calls of one reply run concurrently (kind read)."""

from __future__ import annotations

from pydantic import Field

from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput


class TaskInput(ToolInput):
    description: str = Field(description="A short (3-5 word) label for the task.")
    prompt: str = Field(description="The whole task for the subagent: it sees nothing of this conversation.")


class Task(Tool):
    name = "task"
    kind = "read"
    description = ("Hand a research question (find where X is done, how Y works) to a subagent with a fresh "
                   "context and read/search tools only; it answers with a report. Calls in one reply run in "
                   "parallel.")
    Input = TaskInput

    def title(self, input: TaskInput) -> str:
        return f"Task: {' '.join(input.description.split())[:60] or 'subagent'}"

    async def run(self, ctx: ToolContext, input: TaskInput) -> ToolOutput:
        if not input.prompt.strip():
            raise ToolError("prompt is empty: give the subagent the whole task.")
        if ctx.subagents is None:
            raise ToolError("A subagent cannot start another subagent.")
        return ToolOutput(await ctx.subagents.run(ctx, input.prompt))


TOOL = Task()
