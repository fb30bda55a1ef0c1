"""todo_write: the agent's plan as a checklist the user sees, the whole list each time (PROTOCOL §9)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import ConfigDict, Field

from agent_lsp.core.events import Plan, PlanEntry
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput


class Todo(ToolInput):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    content: str = Field(description="The step, imperative (\"Run the tests\").")
    status: Literal["pending", "in_progress", "completed"]
    active_form: Optional[str] = Field(None, alias="activeForm", description="The step while in progress "
                                                                             "(\"Running the tests\").")


class TodoWriteInput(ToolInput):
    todos: list[Todo] = Field(description="The whole updated list.")


class TodoWrite(Tool):
    name = "todo_write"
    kind = "other"
    description = ("Keep a checklist of the steps of a multi-step task, shown to the user. Send the whole list each "
                   "time; mark a step in_progress before starting it and completed as soon as it is done.")
    Input = TodoWriteInput

    def title(self, input: TodoWriteInput) -> str:
        return "Update the plan"

    async def run(self, ctx: ToolContext, input: TodoWriteInput) -> ToolOutput:
        blank = [str(i) for i, todo in enumerate(input.todos) if not todo.content.strip()]
        if blank:
            raise ToolError(f"todos.{blank[0]}.content is empty: every step needs words.")
        entries = [PlanEntry(content=" ".join(t.content.split()), status=t.status) for t in input.todos]
        ctx.emit(Plan(entries=entries))
        counts = {s: sum(e.status == s for e in entries) for s in ("completed", "in_progress", "pending")}
        return ToolOutput(f"Plan updated: {len(entries)} steps ({counts['completed']} completed, "
                          f"{counts['in_progress']} in progress, {counts['pending']} pending).")


TOOL = TodoWrite()
