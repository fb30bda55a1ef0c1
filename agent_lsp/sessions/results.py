"""What the sessions layer answers, as plain data: each front end (lsp/, acp/) converts it to its own wire types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from agent_lsp.core.events import ToolKind, ToolStatus, Usage, WireModel
from agent_lsp.core.messages import ImagePart

StopReason = Literal["end_turn", "max_turns", "max_tokens", "refusal", "aborted", "disabled", "error"]


@dataclass(frozen=True)
class ChatFailure:
    """Why a chat ended in error; `type` is one of llm_error, tool_error, initialization_failed, context_overflow."""

    type: str
    message: str


@dataclass(frozen=True)
class ChatOutcome:
    """How one chat ended, always with its counts: what agent/chat answers over LSP, session/prompt over ACP."""

    session_id: str
    stop_reason: StopReason
    final_message: str
    turns_count: int
    tool_calls_count: int
    duration_ms: int
    usage: Usage = field(default_factory=Usage)
    denied_tool_calls: int = 0
    error: Optional[ChatFailure] = None
    """Present exactly when stop_reason is "error"."""
    structured_output: Any = None
    """The validated input of the `finish` call that ended a chat with an outputSchema."""


class HistoryToolCall(WireModel):
    """A tool call of a transcript, with how it went: also the wire shape of agent/history's tool calls."""

    tool_call_id: str
    name: str
    title: str
    tool_kind: ToolKind
    input: dict[str, Any]
    status: ToolStatus
    output: Optional[str] = None
    error: Optional[str] = None
    diff: Optional[str] = None


@dataclass(frozen=True)
class HistoryEntry:
    """One user or assistant message of a transcript, as a panel redraws it."""

    role: Literal["user", "assistant"]
    content: str
    tool_calls: Optional[list[HistoryToolCall]] = None
    usage: Optional[Usage] = None
    """On assistant messages: the usage of the chat the message belongs to (None before chats were recorded)."""
    stop_reason: Optional[StopReason] = None
    """On assistant messages: how the chat the message belongs to ended."""
    duration_ms: Optional[int] = None
    """On assistant messages: how long the chat the message belongs to ran."""
    images: Optional[list[ImagePart]] = None
    """On user messages that had images: each, in the order sent (attached first, then mentioned files)."""
