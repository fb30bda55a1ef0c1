"""Sending agent/update: per-session seq, and text deltas coalesced for at most ~20 ms."""

from __future__ import annotations

import asyncio
from typing import Callable, Optional

from agent_lsp.core.events import AgentUpdate, TextDelta, ThinkingDelta

COALESCE_SECONDS = 0.02


class UpdateStream:
    """Buffers consecutive text (or thinking) deltas of one session; anything else flushes them first."""

    def __init__(self, send: Callable[[AgentUpdate], None]) -> None:
        self._send = send
        self._pending: Optional[TextDelta | ThinkingDelta] = None
        self._timer: Optional[asyncio.TimerHandle] = None

    def push(self, update: AgentUpdate) -> None:
        if isinstance(update, (TextDelta, ThinkingDelta)):
            if self._pending is not None and type(self._pending) is type(update):
                self._pending = type(update)(text=self._pending.text + update.text)
                return
            self.flush()
            self._pending = update
            self._timer = asyncio.get_running_loop().call_later(COALESCE_SECONDS, self.flush)
            return
        self.flush()
        self._send(update)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self._send(pending)
