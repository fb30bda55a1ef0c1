"""The ReAct loop: call the model, run the tools it asks for (core/calls.py), feed the results back, until it is
done."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from typing import AsyncIterator, Optional

from agent_lsp.core.calls import run_tool_calls, unique_ids
from agent_lsp.core.chat import ChatConfig, ChatState, allow_all
from agent_lsp.core.compaction import KEEP_SHARE, SUMMARY_SYSTEM, cut_point, size, transcript, view
from agent_lsp.core.events import (
    AgentUpdate,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolCallUpdate,
    TurnStart,
    Usage,
)
from agent_lsp.core.hooks import HookEvent, HookVerdict, run_hooks
from agent_lsp.core.messages import (
    AssistantMessage,
    TextPart,
    ToolResult,
    ToolResultsMessage,
    ToolUsePart,
    UserMessage,
    unanswered_tool_uses,
    usable_part,
)
from agent_lsp.core.surrogates import usable
from agent_lsp.core.ports import Approve, Model, ModelError, ModelReply, ModelRequest, TextChunk, ThinkingChunk
from agent_lsp.core.subagent import Subagents, close_children
from agent_lsp.core.tool import ToolContext

__all__ = ["ChatConfig", "ChatState", "allow_all", "run_chat", "close_aborted", "compact_now", "NUDGE", "SUMMARY_REQUEST"]

NUDGE = "Please do what you described; don't just describe it."
MAX_NUDGES = 2
SUMMARY_REQUEST = (
    "You have reached the turn limit for this request. Do not call any tools. Summarise what you have done "
    "so far and what remains to be done."
)
CANCELLED = "Cancelled by the user before this tool call finished."
PREVIEW_CHARS = 2000
CONCURRENT_KINDS = frozenset({"read", "search"})
_ANNOUNCES = re.compile(
    r"\b(let me|i'll|i will)\s+(now\s+)?(check|look|fix|read|open|search|inspect|examine|review|run|try|update|"
    r"edit|find|see|start|investigate)\b",
    re.IGNORECASE,
)

def _nudge_for(state: ChatState, config: ChatConfig) -> Optional[tuple[str, str]]:
    """(what to tell the model, what to tell the user) when a reply without tool calls should not end the chat."""
    if config.ends_with:
        return (f"Call the {config.ends_with} tool with your final answer.",
                f"The model answered without calling {config.ends_with}; asking it to.")
    if needs_nudge(state.final_message):
        return NUDGE, "The model described work without doing it; asking it to go on."
    return None


def needs_nudge(text: str) -> bool:
    """A reply with no tool call that ends in ':' or '...', or announces work it did not do."""
    tail = text.rstrip()
    if not tail:
        return False
    return tail.endswith((":", "...", "…")) or bool(_ANNOUNCES.search(tail[-300:]))


async def run_chat(
    model: Model, message: UserMessage, state: ChatState, config: ChatConfig, ctx: ToolContext,
    approve: Approve = allow_all,
) -> AsyncIterator[AgentUpdate]:
    """Run one user message to completion, yielding updates; `state` records the outcome."""
    verdict = await run_hooks(config.hooks, HookEvent("UserPromptSubmit", prompt=message.text))
    for warning in verdict.warnings:
        yield Notice(level="warning", message=warning)
    if verdict.context:
        message = message.model_copy(update={"context": "\n\n".join(filter(None, (message.context, verdict.context)))})
    state.history.append(message)
    if verdict.block is not None:
        state.final_message = f"The prompt was blocked by a hook: {verdict.block}"
        state.stop_reason = "end_turn"
        return
    ctx = replace(ctx, subagents=Subagents(model, config, approve, state, _turns))
    async for update in _turns(model, state, config, ctx, approve):
        yield update
    if config.hooks:
        stopped = await run_hooks(config.hooks, HookEvent("Stop", stop_reason=state.stop_reason))
        for warning in stopped.warnings:
            yield Notice(level="warning", message=warning)


async def _turns(
    model: Model, state: ChatState, config: ChatConfig, ctx: ToolContext, approve: Approve
) -> AsyncIterator[AgentUpdate]:
    """Model calls and tool calls until the model is done, a limit is reached, or a call fails."""
    nudges = 0
    while True:
        if state.turns >= config.max_turns:
            yield Notice(message=f"Reached the limit of {config.max_turns} turns; asking the model for a summary.")
            state.history.append(UserMessage(text=SUMMARY_REQUEST, origin="summary_request"))
            async for update in _call_model(model, state, config, tool_choice="none"):
                if not isinstance(update, ModelReply):
                    yield update
            _answer_all(state, "Not run: the turn limit was reached.")  # a model may call tools even so
            state.stop_reason = state.stop_reason or "max_turns"
            return
        state.turns += 1
        yield TurnStart(turn=state.turns, max_turns=config.max_turns)
        reply: Optional[ModelReply] = None
        async for update in _call_model(model, state, config):
            if isinstance(update, ModelReply):
                reply = update
            else:
                yield update
        if reply is None:
            return  # the model failed; _call_model set stop_reason and error
        uses = [p for p in reply.parts if isinstance(p, ToolUsePart)]
        if reply.stop_reason == "max_tokens":
            _answer_all(state, "The reply was cut at max_tokens before this tool call was complete; it was not run.")
            state.stop_reason = "max_tokens"
            return
        if reply.stop_reason == "refusal":
            _answer_all(state, "The model refused; this tool call was not run.")
            state.stop_reason = "refusal"
            return
        if reply.stop_reason == "pause_turn":
            continue
        if not uses:
            nudge = _nudge_for(state, config)
            if nudge and nudges < MAX_NUDGES:
                nudges += 1
                state.history.append(UserMessage(text=nudge[0], origin="nudge"))
                yield Notice(message=nudge[1])
                continue
            state.stop_reason = "end_turn"
            return
        nudges = 0
        async for update in run_tool_calls(uses, state, config, ctx, approve):
            yield update
        state.history.append(ToolResultsMessage(results=[state.results[u.id] for u in uses]))
        state.results.clear()
        if state.finished:
            state.stop_reason = "end_turn"
            return


async def _call_model(
    model: Model, state: ChatState, config: ChatConfig, tool_choice: str = "auto"
) -> AsyncIterator[AgentUpdate | ModelReply]:
    """Stream one model call; append its reply to the history and yield it last, or record the failure."""
    # Stop means stop: an abort that arrived while a tool kept the loop busy is waiting to be handled; let it
    # run (and cancel this chat) before a new model request can begin.
    await asyncio.sleep(0)
    if tool_choice == "auto":
        async for update in _compact_if_needed(model, state, config):
            yield update
    added = await run_hooks(config.hooks, HookEvent("PreModel")) if config.hooks else HookVerdict()
    for warning in added.warnings:
        yield Notice(level="warning", message=warning)
    request = ModelRequest(
        system=f"{config.system}\n\n{added.context}" if added.context else config.system,
        messages=view(state.history, state.compaction),
        tools=[t.spec() for t in config.tools],
        tool_choice=tool_choice,
        max_tokens=config.max_tokens,
        thinking=config.thinking,
    )
    state.partial.clear()
    reply: Optional[ModelReply] = None
    try:
        async for event in model.stream(request):
            if isinstance(event, TextChunk):
                chunk = usable(event.text)
                state.partial.append(chunk)
                yield TextDelta(text=chunk)
            elif isinstance(event, ThinkingChunk):
                yield ThinkingDelta(text=usable(event.text))
            elif isinstance(event, Usage):
                state.streaming_usage = event
            elif isinstance(event, ModelReply):
                reply = event
        if reply is None:
            raise ModelError("llm_error", "The model stream ended without a reply.")
    except ModelError as e:
        commit_partial(state)
        count_streamed_usage(state)
        if e.type == "context_overflow":
            e = ModelError(e.type, f"{e.message} Start a new session, or lower the compactThreshold setting so that "
                                   "agent-lsp compacts the conversation sooner.")
        state.stop_reason, state.error = "error", e
        return
    state.streaming_usage = Usage()
    state.usage = state.usage.plus(reply.usage)
    yield state.usage.model_copy()
    parts = unique_ids([usable_part(p) for p in reply.parts if not (isinstance(p, TextPart) and not p.text.strip())])
    state.partial.clear()
    if parts:
        message = AssistantMessage(parts=parts)
        state.history.append(message)
        state.final_message = message.text
    else:
        state.final_message = ""
    yield ModelReply(parts=parts, stop_reason=reply.stop_reason, usage=reply.usage)


async def _compact_if_needed(model: Model, state: ChatState, config: ChatConfig) -> AsyncIterator[AgentUpdate]:
    """Summarise the older turns with one model call when the next request would pass the threshold."""
    threshold_chars = int(config.context_window * config.compact_threshold * 4)
    sent = view(state.history, state.compaction)
    if len(config.system) + size(sent) <= threshold_chars:
        return
    after = state.compaction[0] if state.compaction else 0
    cut = cut_point(state.history, after, int(threshold_chars * KEEP_SHARE))
    if cut is None:
        return  # nothing older than the current message: the request goes as it is
    try:
        older = await _summarise(model, state, config, cut)
    except ModelError as e:
        yield Notice(level="warning", message=f"Compacting the conversation failed ({e.message}); going on without.")
        return
    yield Notice(message=f"Compacted the conversation: {older} earlier messages were summarised to stay within "
                         "the model's context window; the full transcript is kept.")


async def compact_now(model: Model, state: ChatState, config: ChatConfig, instructions: str = "") -> str:
    """Summarise the whole conversation now (`/compact`), with the user's `instructions` for the summary if any;
    what to tell the user. ModelError when the summary call fails."""
    done = state.compaction[0] if state.compaction else 0
    if not state.history or done >= len(state.history):
        return "Nothing to compact: no turns since the last summary."
    older = await _summarise(model, state, config, len(state.history), instructions)
    return (f"Compacted the conversation: {older} earlier messages were summarised; the next chats start from the "
            "summary, and the full transcript is kept.")


async def _summarise(model: Model, state: ChatState, config: ChatConfig, cut: int, instructions: str = "") -> int:
    """Replace what the model is sent before `cut` by a summary (one model call); how many messages it covers."""
    older = view(state.history[:cut], state.compaction) if state.compaction else state.history[:cut]
    system = f"{SUMMARY_SYSTEM}\n\nThe user asks: {instructions}" if instructions else SUMMARY_SYSTEM
    request = ModelRequest(system=system, messages=[UserMessage(text=transcript(older))], tools=[],
                           max_tokens=config.max_tokens)
    summary, usage = "", None
    async for event in model.stream(request):
        if isinstance(event, ModelReply):
            summary, usage = "".join(p.text for p in event.parts if isinstance(p, TextPart)), event.usage
    if usage:
        state.usage = state.usage.plus(usage)
    state.compaction = (cut, summary.strip() or "(no summary)")
    return len(older)


def _answer_all(state: ChatState, why: str) -> None:
    """Answer every unanswered tool call of the last reply with an error, keeping the history valid."""
    pending = unanswered_tool_uses(state.history)
    if pending:
        state.history.append(
            ToolResultsMessage(
                results=[state.results.get(u.id) or ToolResult(tool_use_id=u.id, content=why, is_error=True) for u in pending]
            )
        )
    state.results.clear()


def commit_partial(state: ChatState) -> None:
    """Keep text streamed before a failure or an abort as an assistant message."""
    text = state.partial_text
    if text.strip():
        state.history.append(AssistantMessage(parts=[TextPart(text=text)]))
        state.final_message = text
    state.partial.clear()


def count_streamed_usage(state: ChatState) -> None:
    """Count what a model call that will not reply (cut, failed, aborted) used so far."""
    state.usage = state.usage.plus(state.streaming_usage)
    state.streaming_usage = Usage()


def close_aborted(state: ChatState) -> list[AgentUpdate]:
    """After a cancel: the terminal updates still owed, and a history every next request can build on (its usage
    counts what the cut model call used)."""
    count_streamed_usage(state)
    had_children = bool(state.children)
    updates: list[AgentUpdate] = [*close_children(state), *(
        ToolCallUpdate(tool_call_id=call_id, status="cancelled", error="Cancelled by the user.")
        for call_id in state.open_calls.values())]
    if had_children:  # their usage was added to the chat's
        updates.append(state.usage.model_copy())
    state.open_calls.clear()
    commit_partial(state)
    _answer_all(state, CANCELLED)
    state.stop_reason = "aborted"
    return updates
