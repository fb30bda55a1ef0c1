"""Sending agent/update: per-session seq, and text deltas coalesced for at most ~20 ms."""

from __future__ import annotations

import asyncio
from typing import Callable, Optional

from agent_lsp.core.events import AgentUpdate, TextDelta, ThinkingDelta

COALESCE_SECONDS = 0.02


class UpdateStream:
    """Buffers consecutive text (or thinking) deltas of one session and one agent (the chat's, or a subagent's);
    anything else flushes them first."""

    def __init__(self, send: Callable[[AgentUpdate], None]) -> None:
        self._send = send
        self._kind: Optional[type[TextDelta] | type[ThinkingDelta]] = None
        self._parent: Optional[str] = None
        self._pieces: list[str] = []
        """The pending text, joined once when sent (not copied at every delta)."""
        self._timer: Optional[asyncio.TimerHandle] = None

    def push(self, update: AgentUpdate) -> None:
        if isinstance(update, (TextDelta, ThinkingDelta)):
            self._text(type(update), update.parent_tool_call_id, update.text)
            return
        self.flush()
        self._send(update)

    def _text(self, kind: type[TextDelta] | type[ThinkingDelta], parent: Optional[str], text: str) -> None:
        if self._kind is kind and self._parent == parent:
            self._pieces.append(text)
            return
        self.flush()
        self._kind, self._parent, self._pieces = kind, parent, [text]
        self._timer = asyncio.get_running_loop().call_later(COALESCE_SECONDS, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._kind is not None:
            kind, text = self._kind, "".join(self._pieces)
            self._kind, self._pieces = None, []
            self._send(kind.model_construct(text=text, parent_tool_call_id=self._parent))
