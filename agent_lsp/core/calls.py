"""Running one model reply's tool calls: announce each, check hooks and permission, run reads concurrently and
everything else in order, and answer every call exactly once, in call order."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import AsyncIterator, Optional

from pydantic import ValidationError

from agent_lsp.core.chat import ChatConfig, ChatState
from agent_lsp.core.events import AgentUpdate, Notice, ToolCall, ToolCallUpdate
from agent_lsp.core.hooks import Hook, HookEvent, run_hooks
from agent_lsp.core.messages import ToolResult, ToolUsePart, wire_id
from agent_lsp.core.ports import INDEX_PREFIX, Approve, Deny, PermissionRequest
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, bound

PREVIEW_CHARS = 2000
CONCURRENT_KINDS = frozenset({"read", "search"})


def output_preview(text: str) -> str:
    """The output a completed update carries: cut for the editor, but a language answer's `index:` line (its last)
    kept, as clients show it (PROTOCOL §11)."""
    shown = bound(text, PREVIEW_CHARS)
    last = text.rsplit("\n", 1)[-1]
    return f"{shown}\n{last}" if shown != text and last.startswith(INDEX_PREFIX) else shown


@dataclass
class _Prepared:
    use: ToolUsePart
    tool: Optional[Tool]
    input: Optional[ToolInput]
    problem: Optional[str]
    wire_id: str = ""
    """The call's id for the editor (unique in the session); the model's own id stays in the history."""


def _prepare(use: ToolUsePart, config: ChatConfig) -> _Prepared:
    tool = next((t for t in config.tools if t.name == use.name), None)
    if tool is None:
        names = ", ".join(t.name for t in config.tools)
        return _Prepared(use, None, None, f"Unknown tool {use.name!r}. Available tools: {names}.")
    if use.input_error:
        return _Prepared(use, tool, None, f"Invalid input for {use.name}: {use.input_error}. Call the tool again "
                                          "with its arguments as one JSON object.")
    try:
        return _Prepared(use, tool, tool.Input.model_validate(use.input), None)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'input'}: {err['msg']}" for err in e.errors())
        return _Prepared(use, tool, None, f"Invalid input for {use.name}: {problems}.")


def _earlier_calls(history: list) -> dict[str, int]:
    """How many calls of the session before its last reply had each model id."""
    seen: dict[str, int] = {}
    for message in history[:-1]:
        for use in getattr(message, "tool_uses", ()):
            seen[use.id] = seen.get(use.id, 0) + 1
    return seen


def _describe(call: _Prepared, ctx: ToolContext) -> tuple[str, Optional[list]]:
    """A call's title and locations; odd input (a NUL in a path) must not end the chat here."""
    if not (call.tool and call.input):
        return call.use.name, None
    try:
        return call.tool.title(call.input), call.tool.locations(ctx, call.input)
    except Exception:
        return call.use.name, None


def unique_ids(parts: list) -> list:
    """Tool calls of one reply whose id repeats an earlier one's get a distinct id and an input_error: the
    Messages API needs each tool_use of a message answered by exactly one tool_result (one-to-one by id), and
    running a repeated call twice is unsafe."""
    seen: set[str] = set()
    out = []
    for part in parts:
        if isinstance(part, ToolUsePart):
            if part.id in seen or not part.id:
                fresh, n = f"{part.id or 'toolu'}_dup", 2
                while f"{fresh}{n}" in seen:
                    n += 1
                part = part.model_copy(update={"id": f"{fresh}{n}", "input_error": (
                    f"This call repeated the id {part.id!r} of another call, so it was not run. Call the tool "
                    "again if it is still needed.")})
            seen.add(part.id)
        out.append(part)
    return out


def _groups(calls: list[_Prepared]) -> list[list[_Prepared]]:
    """Consecutive read-only calls form one concurrent group; every other call runs alone, in order."""
    groups: list[list[_Prepared]] = []
    for call in calls:
        concurrent = call.tool is not None and call.tool.kind in CONCURRENT_KINDS
        if concurrent and groups and groups[-1][-1].tool is not None and groups[-1][-1].tool.kind in CONCURRENT_KINDS:
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


async def run_tool_calls(
    uses: list[ToolUsePart], state: ChatState, config: ChatConfig, ctx: ToolContext, approve: Approve
) -> AsyncIterator[AgentUpdate]:
    """Announce every call, run them (reads concurrently), and yield terminal updates in call order."""
    calls = [_prepare(use, config) for use in uses]
    earlier = _earlier_calls(state.history)
    for call in calls:
        call.wire_id = wire_id(call.use.id, earlier.get(call.use.id, 0))
        state.tool_calls += 1
        state.open_calls[call.use.id] = call.wire_id
        title, locations = _describe(call, ctx)
        yield ToolCall(
            tool_call_id=call.wire_id,
            name=call.use.name,
            title=title,
            tool_kind=call.tool.kind if call.tool else "other",
            input=call.use.input,
            locations=locations,
        )
    queue: asyncio.Queue = asyncio.Queue()
    done = object()

    async def work() -> None:
        try:
            for group in _groups(calls):
                outcomes = await asyncio.gather(*(_run_one(c, state, ctx, approve, queue.put_nowait, config.hooks) for c in group))
                for outcome in outcomes:
                    queue.put_nowait(outcome)
        finally:
            queue.put_nowait(done)

    worker = asyncio.create_task(work())
    try:
        while (item := await queue.get()) is not done:
            if isinstance(item, tuple):
                result, update = item
                state.results[result.tool_use_id] = result
                state.open_calls.pop(result.tool_use_id, None)
                yield update
            else:
                yield item
        await worker
    finally:
        if not worker.done():
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)


async def _run_one(
    call: _Prepared, state: ChatState, ctx: ToolContext, approve: Approve, emit, hooks: list[Hook]
) -> tuple[ToolResult, ToolCallUpdate]:
    """Check the hooks and the permission, run one call; answer its result and its terminal update."""
    model_id, call_id = call.use.id, call.wire_id

    def failed(message: str) -> tuple[ToolResult, ToolCallUpdate]:
        return (
            ToolResult(tool_use_id=model_id, content=message, is_error=True),
            ToolCallUpdate(tool_call_id=call_id, status="failed", error=message),
        )

    if call.problem or call.tool is None or call.input is None:
        return failed(call.problem or "Invalid tool call.")
    tool, input, raw = call.tool, call.input, call.use.input
    if hooks:
        pre = await run_hooks(hooks, HookEvent("PreToolUse", tool_name=tool.name, tool_input=raw))
        for warning in pre.warnings:
            emit(Notice(level="warning", message=warning))
        if pre.block is not None:
            state.denied += 1
            reason = f"A hook refused this call: {pre.block}"
            return (ToolResult(tool_use_id=model_id, content=reason, is_error=True),
                    ToolCallUpdate(tool_call_id=call_id, status="rejected", error=reason))
        if pre.input is not None:
            try:
                input, raw = tool.Input.model_validate(pre.input), pre.input
            except ValidationError as e:
                return failed(f"A hook rewrote the input of {tool.name} into an invalid one: {e.errors()[0]['msg']}.")
    try:
        preview = await tool.preview(ctx, input)
    except ToolError as e:
        return failed(str(e))
    except Exception as e:  # a tool bug must not end the chat: the model reads it and goes on
        return failed(f"{tool.name} failed: {type(e).__name__}: {e}")
    request = PermissionRequest(
        tool_call_id=call_id, name=tool.name, kind=tool.kind, title=tool.title(input), input=raw,
        diff=preview.diff, command=preview.command, changes=preview.changes,
        sandbox_auto_allow=preview.sandbox_auto_allow,
    )
    decision = None if preview.unchanged else await approve(request, emit)  # nothing to allow: it sends nothing
    if isinstance(decision, Deny):
        state.denied += 1
        return (
            ToolResult(tool_use_id=model_id, content=decision.message, is_error=True),
            ToolCallUpdate(tool_call_id=call_id, status=decision.status, error=decision.message),
        )
    emit(ToolCallUpdate(tool_call_id=call_id, status="running"))
    tool_ctx = replace(
        ctx, report=lambda text: emit(ToolCallUpdate(tool_call_id=call_id, status="running", output=bound(text, PREVIEW_CHARS))),
        emit=emit, tool_call_id=call_id,
    )
    try:
        output = await tool.run(tool_ctx, input)
    except ToolError as e:
        return failed(str(e))
    except Exception as e:  # a tool bug must not end the chat: the model reads it and goes on
        return failed(f"{tool.name} failed: {type(e).__name__}: {e}")
    if output.ends_chat:
        state.finished, state.structured_output = True, output.value
    text = output.text
    if hooks:
        post = await run_hooks(hooks, HookEvent("PostToolUse", tool_name=tool.name, tool_input=raw, tool_output=text))
        for warning in post.warnings:
            emit(Notice(level="warning", message=warning))
        text = text if post.output is None else post.output
    text = bound(text)
    if output.folders and ctx.instructions is not None:  # a subfolder's AGENTS.md, once per chat, after the cut
        text += await ctx.instructions.note(output.folders)
    return (
        ToolResult(tool_use_id=model_id, content=text),
        ToolCallUpdate(tool_call_id=call_id, status="completed", output=output_preview(text), diff=output.diff),
    )
