"""Subagents: a `task` call runs the loop again with a fresh context and the read-only tools, the same model and
approval; its updates reach the chat tagged with the call's id, its usage adds to the chat's (PROTOCOL §9)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator, Callable

from agent_lsp.core.chat import ChatConfig, ChatState
from agent_lsp.core.events import AgentUpdate, ToolCallUpdate, Usage
from agent_lsp.core.messages import UserMessage
from agent_lsp.core.ports import Approve, Model
from agent_lsp.core.tool import Tool, ToolContext, ToolError

SUBAGENT_KINDS = frozenset({"read", "search"})
NOT_NESTED = frozenset({"task"})
SUBAGENT_SYSTEM = (
    "You are a subagent: another agent handed you the task below. You can only read and search; you cannot edit "
    "files or run commands. Work on your own, then answer with a concise, self-contained report (what you found, "
    "with file paths and line numbers); that report is all the other agent will see."
)
CANCELLED = "Cancelled by the user before this tool call finished."
Turns = Callable[[Model, ChatState, ChatConfig, ToolContext, Approve], AsyncIterator[AgentUpdate]]


def subagent_tools(tools: list[Tool]) -> list[Tool]:
    """What a subagent may use: the read and search tools, never another `task`."""
    return [t for t in tools if t.kind in SUBAGENT_KINDS and t.name not in NOT_NESTED]


@dataclass
class Subagents:
    """What a chat's `task` calls share: its model, configuration, approval and state (for usage and abort)."""

    model: Model
    config: ChatConfig
    approve: Approve
    parent: ChatState
    turns: Turns
    """The loop's model-and-tools cycle (core/loop.py), run again for each subagent."""

    async def run(self, ctx: ToolContext, prompt: str) -> str:
        """Run one subagent on `prompt` for the call `ctx.tool_call_id`; its final text."""
        parent_id = ctx.tool_call_id
        state = ChatState(history=[UserMessage(text=prompt)])
        config = replace(self.config, system=f"{self.config.system}\n\n{SUBAGENT_SYSTEM}",
                         tools=subagent_tools(self.config.tools), ends_with=None)
        self.parent.children[parent_id] = state
        # a fresh context: the subfolders' instructions are added again for the subagent's own reads
        child_ctx = replace(ctx, subagents=None, instructions=ctx.instructions.fresh() if ctx.instructions else None)
        try:
            async for update in self.turns(self.model, state, config, child_ctx, self.approve):
                if not isinstance(update, Usage):  # the chat's usage is sent once the subagent's is added to it
                    ctx.emit(update.model_copy(update={"parent_tool_call_id": parent_id}))
        except asyncio.CancelledError:
            raise  # the chat is aborted: close_children (from close_aborted) closes what is still open
        except BaseException:
            for update in end_child(self.parent, parent_id):
                ctx.emit(update)
            raise
        end_child(self.parent, parent_id)
        ctx.emit(self.parent.usage.model_copy())
        if state.error is not None:
            raise ToolError(f"The subagent failed: {state.error.message}")
        return state.final_message.strip() or "(The subagent gave no answer.)"


def end_child(parent: ChatState, parent_id: str) -> list[Any]:
    """A subagent is over: its usage (also what a cut model call used) adds to the chat's; the updates that close
    its calls still open (cancelled)."""
    child = parent.children.pop(parent_id, None)
    if child is None:
        return []
    parent.usage = parent.usage.plus(child.usage).plus(child.streaming_usage)
    child.streaming_usage = Usage()
    closed = [ToolCallUpdate(tool_call_id=call_id, status="cancelled", error=CANCELLED, parent_tool_call_id=parent_id)
              for call_id in child.open_calls.values()]
    child.open_calls.clear()
    return closed


def close_children(parent: ChatState) -> list[Any]:
    """After an abort: every running subagent ended (see end_child)."""
    return [update for parent_id in list(parent.children) for update in end_child(parent, parent_id)]
