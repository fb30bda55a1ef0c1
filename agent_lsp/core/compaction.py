"""Compaction: when a request would pass a share of the context window, summarise the older turns.

The full transcript stays as it is (the store keeps every message); only what the model is sent changes: a
summary of everything before a cut, then the turns after it verbatim. A cut only falls before a user message,
so tool_use/tool_result pairs are never split.
"""

from __future__ import annotations

import json
from typing import Optional

from agent_lsp.core.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage

SUMMARY_SYSTEM = (
    "You summarise the earlier part of a coding session between a user and an agent working in the user's "
    "editor, so that the agent can continue without it. Keep: the user's goals and constraints, decisions made, "
    "files read or changed (with paths) and what changed, commands run and their outcomes, errors met, and what "
    "remains to do. Be factual and compact; use a short list."
)
KEEP_SHARE = 0.5
"""After compacting, the verbatim turns should take at most this share of the threshold."""


def view(history: list[Message], compaction: Optional[tuple[int, str]]) -> list[Message]:
    """What the model is sent: the summary, then the turns after the cut."""
    if not compaction:
        return list(history)
    cut, summary = compaction
    return [UserMessage(text=f"<summary of the earlier conversation>\n{summary}\n</summary>", origin="summary"),
            *history[cut:]]


IMAGE_CHARS = 6_400
"""What an image counts for: the APIs bill an image by its pixels, at most about 1,600 tokens, not by its base64."""


def size(messages: list[Message]) -> int:
    """Characters of the messages as sent (a stand-in for tokens: about four characters each)."""
    return sum(_chars(m) for m in messages)


def _chars(message: Message) -> int:
    if isinstance(message, UserMessage) and message.images:
        return len(json.dumps(message.model_dump(mode="json", exclude={"images"}))) + IMAGE_CHARS * len(
            message.images)
    return len(json.dumps(message.model_dump(mode="json")))


def cut_point(history: list[Message], after: int, keep_chars: int) -> Optional[int]:
    """Where to cut: the earliest user message past `after` whose suffix fits `keep_chars`, else the last one."""
    candidates = [i for i, m in enumerate(history) if isinstance(m, UserMessage) and i > after]
    if not candidates:
        return None
    for i in candidates:
        if size(history[i:]) <= keep_chars:
            return i
    return candidates[-1]


def transcript(messages: list[Message]) -> str:
    """The older turns as plain text for the summary call."""
    lines = []
    for m in messages:
        if isinstance(m, UserMessage):
            lines.append(f"USER: {m.text}" + (f" [with {len(m.images)} image(s)]" if m.images else ""))
        elif isinstance(m, AssistantMessage):
            if m.text.strip():
                lines.append(f"AGENT: {m.text}")
            lines += [f"AGENT CALLED {u.name} {json.dumps(u.input)}" for u in m.tool_uses]
        elif isinstance(m, ToolResultsMessage):
            lines += [f"RESULT{' (error)' if r.is_error else ''}: {r.content[:2000]}" for r in m.results]
    return "\n".join(lines)
