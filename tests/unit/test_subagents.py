"""Subagents in the loop (core/subagent.py) with the scripted model: an abort closes their open calls."""

from __future__ import annotations

import asyncio

from agent_lsp import tools
from agent_lsp.core.events import ToolCall, ToolCallUpdate, TurnStart, Usage
from agent_lsp.core.loop import ChatConfig, ChatState, close_aborted, run_chat
from agent_lsp.core.messages import UserMessage
from agent_lsp.core.subagent import CANCELLED
from agent_lsp.core.tool import Tool, ToolContext, ToolInput, ToolOutput
from agent_lsp.models.scripted import ScriptedModel
from tests.fakes.editor import FakeEditor


class NoInput(ToolInput):
    pass


class WaitForever(Tool):
    """A read that never ends, until cancelled."""

    name = "wait_forever"
    kind = "read"
    description = "Wait."
    Input = NoInput

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, ctx: ToolContext, input: NoInput) -> ToolOutput:
        self.started.set()
        await asyncio.Event().wait()
        return ToolOutput("never")


async def test_an_abort_cancels_the_subagents_open_calls_and_counts_their_usage(tmp_path):
    waiting = WaitForever()
    model = ScriptedModel([
        {"content": [{"type": "tool_use", "id": "t1", "name": "task", "input": {"description": "d", "prompt": "p"}}]},
        {"content": [{"type": "tool_use", "id": "sub1", "name": "wait_forever", "input": {}}]},
    ])
    state = ChatState(history=[])
    config = ChatConfig(system="sys", tools=[*tools.ALL, waiting], max_turns=5)
    updates = []

    async def drive() -> None:
        async for update in run_chat(model, UserMessage(text="go"), state, config,
                                     ToolContext(editor=FakeEditor(root=tmp_path))):
            updates.append(update)

    chat = asyncio.create_task(drive())
    await asyncio.wait_for(waiting.started.wait(), 60)
    chat.cancel()
    await asyncio.gather(chat, return_exceptions=True)
    assert [u for u in updates if u.parent_tool_call_id] == [
        TurnStart(turn=1, max_turns=5, parent_tool_call_id="t1"),
        ToolCall(tool_call_id="sub1", name="wait_forever", title="wait_forever", tool_kind="read", input={},
                 parent_tool_call_id="t1"),
        ToolCallUpdate(tool_call_id="sub1", status="running", parent_tool_call_id="t1")]
    assert close_aborted(state) == [
        ToolCallUpdate(tool_call_id="sub1", status="cancelled", error=CANCELLED, parent_tool_call_id="t1"),
        ToolCallUpdate(tool_call_id="t1", status="cancelled", error="Cancelled by the user."),
        Usage(input_tokens=20, output_tokens=10)]
    assert state.children == {} and state.usage == Usage(input_tokens=20, output_tokens=10)
    # the subagent was offered the read tools only, with a fresh context
    sub_request = model.requests[1]
    assert [t.name for t in sub_request.tools] == ["list_open_buffers", "read_file", "list_files", "search",
                                                   "get_diagnostics", "wait_forever"]
    assert [m.text for m in sub_request.messages] == ["p"]
