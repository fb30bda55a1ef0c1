"""A transcript redrawn for a chat panel: user and assistant turns, each tool call with its outcome."""

from __future__ import annotations

from bisect import bisect_right
from typing import Optional, Sequence

from agent_lsp.core.messages import AssistantMessage, Message, ToolResult, ToolResultsMessage, UserMessage, call_ids
from agent_lsp.core.tool import Tool
from agent_lsp.sessions.results import HistoryEntry, HistoryToolCall
from agent_lsp.sessions.store import ChatRecord


def render_history(history: list[Message], tools: dict[str, Tool], records: dict[str, dict],
                   chats: Sequence[ChatRecord] = ()) -> list[HistoryEntry]:
    """The panel's view of a transcript; messages the loop wrote on the user's behalf are left out.

    `records` are the tool calls as their updates described them (title, status, diff…); a call without one is
    described from its tool and result. Each assistant message carries the usage and stop reason of the chat it
    belongs to, when `chats` has it (sessions older than the chat records have none)."""
    ids = call_ids(history)
    answers = _answers(history)
    starts = [c.first_message for c in chats]
    out: list[HistoryEntry] = []
    for position, message in enumerate(history):
        if isinstance(message, UserMessage) and message.origin == "user":
            out.append(HistoryEntry(role="user", content=message.text, images=list(message.images) or None))
        elif isinstance(message, AssistantMessage):
            calls = []
            for use in message.tool_uses:
                call_id = ids[(position, use.id)]
                if call_id in records:
                    calls.append(_recorded(records[call_id]))
                    continue
                tool, result = tools.get(use.name), answers.get((position, use.id))
                calls.append(HistoryToolCall(
                    tool_call_id=call_id, name=use.name, title=_title(tool, use.input) or use.name,
                    tool_kind=tool.kind if tool else "other", input=use.input,
                    status="completed" if result and not result.is_error else "failed",
                    output=result.content if result and not result.is_error else None,
                    error=result.content if result and result.is_error else None,
                ))
            chat = _chat_of(chats, starts, position)
            out.append(HistoryEntry(role="assistant", content=message.text, tool_calls=calls or None,
                                    usage=chat.usage if chat else None, stop_reason=chat.stop_reason if chat else None,
                                    duration_ms=chat.duration_ms if chat else None))
    return out


def _answers(history: list[Message]) -> dict[tuple[int, str], ToolResult]:
    """Each tool result by (index of the assistant message whose call it answers, model id)."""
    answers, replied = {}, -1
    for index, message in enumerate(history):
        if isinstance(message, AssistantMessage):
            replied = index
        elif isinstance(message, ToolResultsMessage):
            answers.update({(replied, r.tool_use_id): r for r in message.results})
    return answers


def _chat_of(chats: Sequence[ChatRecord], starts: list[int], position: int) -> Optional[ChatRecord]:
    """The chat whose messages include `position` (chats are sorted by their first message)."""
    index = bisect_right(starts, position) - 1
    return chats[index] if index >= 0 else None


def _title(tool: Tool | None, raw: dict) -> str | None:
    if tool is None:
        return None
    try:
        return tool.title(tool.Input.model_validate(raw))
    except ValueError:
        return None


def _recorded(record: dict) -> HistoryToolCall:
    """A tool call as its updates recorded it (the wire form of core's ToolCall and ToolCallUpdate)."""
    return HistoryToolCall(tool_call_id=record["toolCallId"], name=record["name"], title=record["title"],
                           tool_kind=record["toolKind"], input=record["input"], status=record["status"],
                           output=record.get("output"), error=record.get("error"), diff=record.get("diff"))
