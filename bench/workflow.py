"""The workflow figures (PROTOCOL §9): subagents run concurrently, and a plan update costs little."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from agent_lsp.core.events import AgentUpdate
from agent_lsp.core.tool import ToolContext
from agent_lsp.protocol import UpdateParams
from agent_lsp.tools.todo_write import TOOL as TODO_WRITE
from bench.figures import DONE, Driven, Row, median, p99, ratio_row, recorded
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.editor import FakeEditor

HELD = 0.5
"""Seconds each subagent's model reply is held before it starts."""


def _replies(body: dict) -> dict:
    """A subagent's reply is held HELD seconds; the chat's own replies are not."""
    if "You are a subagent" in json.dumps(body.get("system")):
        return {"stall": HELD, "content": [{"type": "text", "text": "Report."}]}
    return DONE


def _tasks(count: int) -> dict:
    return {"content": [{"type": "tool_use", "name": "task", "id": f"toolu_t{k}",
                         "input": {"description": f"Task {k}", "prompt": f"Look into part {k}."}}
                        for k in range(count)]}


async def parallel_tasks(runs: int, root: Path) -> list[Row]:
    """Two task calls whose subagents' replies are held 500 ms each, against one."""
    api = FakeMessagesAPI().start()
    api.default = _replies
    one, two = [], []
    async with Driven(api, root) as d:
        for _ in range(runs):
            await d.chat(_tasks(1))
            one.append(d.tool_span())
            await d.chat(_tasks(2))
            two.append(d.tool_span())
    api.stop()
    return [ratio_row(f"task: 2 subagents whose replies are held {HELD * 1000:.0f} ms, vs 1", two, one, 1.2)]


async def plan_update(calls: int) -> list[Row]:
    """What one todo_write call of 20 steps costs: its input checked, the plan update made and sent as JSON."""
    todos = {"todos": [{"content": f"Step {n}: change the module number {n}", "activeForm": f"Changing {n}",
                        "status": "completed" if n < 5 else "in_progress" if n == 5 else "pending"} for n in range(20)]}
    sent: list[str] = []

    def emit(update: AgentUpdate) -> None:
        sent.append(json.dumps(UpdateParams(session_id="s-1", seq=len(sent) + 1, update=update).wire()))

    ctx = ToolContext(editor=FakeEditor(root=Path.cwd()), emit=emit)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await TODO_WRITE.run(ctx, TODO_WRITE.Input.model_validate(todos))
        times.append(time.perf_counter() - started)
    return [recorded(Row("plan update: a todo_write of 20 steps, checked, made and sent, per call", ms_fine(times), "",
                         None, "", None))]


def ms_fine(xs: list[float]) -> str:
    return f"{median(xs) * 1000:.3f} ms (p99 {p99(xs) * 1000:.3f})"


if __name__ == "__main__":
    print(asyncio.run(plan_update(200)))
