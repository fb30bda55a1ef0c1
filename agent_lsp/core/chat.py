"""One chat as the loop sees it: what it may do (`ChatConfig`) and how far it got (`ChatState`); who allows its
tool calls is an `Approve` (core/ports.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from agent_lsp.core.events import Usage
from agent_lsp.core.hooks import Hook
from agent_lsp.core.messages import Message, ToolResult
from agent_lsp.core.ports import Allow, Emit, ModelError, Permission, PermissionRequest
from agent_lsp.core.tool import Tool


async def allow_all(request: PermissionRequest, emit: Emit) -> Permission:
    """An approval that allows every call (read-only tool sets, tests)."""
    return Allow()


@dataclass
class ChatConfig:
    """What one chat may do."""

    system: str
    tools: list[Tool]
    max_turns: int
    max_tokens: int = 8192
    thinking: int | str | None = None
    context_window: int = 200_000
    compact_threshold: float = 0.8
    """Compact when a request would pass this share of the context window."""
    ends_with: Optional[str] = None
    """The tool whose valid call ends the chat (`finish` for structured output): a reply without it is nudged."""
    hooks: list[Hook] = field(default_factory=list)
    """Called at the loop's hook points (core/hooks.py)."""


@dataclass
class ChatState:
    """How far a chat got; readable at any moment, also after the chat was cancelled."""

    history: list[Message]
    turns: int = 0
    tool_calls: int = 0
    denied: int = 0
    usage: Usage = field(default_factory=Usage)
    final_message: str = ""
    stop_reason: Optional[str] = None
    error: Optional[ModelError] = None
    partial: list[str] = field(default_factory=list)
    """The pieces of text streamed in the current model call and not yet in the history (joined when needed:
    appending to one string would copy it at every delta)."""
    open_calls: dict[str, str] = field(default_factory=dict)
    """Tool calls announced without a terminal status: model id -> the id the editor knows them by."""
    results: dict[str, ToolResult] = field(default_factory=dict)
    """Results of the current turn's calls whose terminal status was sent."""
    compaction: Optional[tuple[int, str]] = None
    """(cut, summary): the model is sent the summary, then history[cut:]."""
    finished: bool = False
    """A tool call ended the chat (see ToolOutput.ends_chat); `structured_output` holds its value."""
    structured_output: Any = None
    streaming_usage: Usage = field(default_factory=Usage)
    """What the model call in flight has used so far, as the provider reported it (not yet in `usage`)."""
    children: dict[str, "ChatState"] = field(default_factory=dict)
    """The subagents running now, by the id of their `task` call."""

    @property
    def partial_text(self) -> str:
        """Text streamed in the current model call and not yet in the history."""
        return "".join(self.partial)
