"""Standard work-done progress for a chat: begin, a report per step, end with a summary."""

from __future__ import annotations

import logging
import uuid
from typing import Callable, Optional, Union

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from agent_lsp.core.events import AgentUpdate, ToolCall, TurnStart
from agent_lsp.protocol import ConfirmationRequest

log = logging.getLogger(__name__)
Token = Union[int, str]


def progress_message(update: AgentUpdate) -> Optional[str]:
    """The human line an update puts in the progress report, if any."""
    if isinstance(update, TurnStart):
        return "Thinking…"
    if isinstance(update, ToolCall):
        return f"Running {update.name}"
    if isinstance(update, ConfirmationRequest):
        return f"Waiting for your answer: {update.title}"
    return None


class ChatProgress:
    """The progress of one chat; `on_cancel` runs when the user cancels it in the editor."""

    def __init__(self, server: LanguageServer, token: Token) -> None:
        self._server = server
        self.token = token
        self._last: Optional[str] = None

    @classmethod
    async def open(cls, server: LanguageServer, token: Optional[Token], on_cancel: Callable[[], None]):
        """The client's token, else a server-created one when the client declared window.workDoneProgress."""
        if token is None:
            window = server.client_capabilities.window
            if not (window and window.work_done_progress):
                return None
            token = f"agent-{uuid.uuid4().hex}"
            try:
                await server.work_done_progress.create_async(token)
            except Exception as e:  # a strict client may refuse; the chat goes on without progress
                log.info("window/workDoneProgress/create refused: %r", e)
                return None
        progress = cls(server, token)
        progress._begin(on_cancel)
        return progress

    def _begin(self, on_cancel: Callable[[], None]) -> None:
        self._server.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(title="Agent", cancellable=True))
        future = self._server.work_done_progress.tokens[self.token]
        future.add_done_callback(lambda f: on_cancel() if f.cancelled() else None)

    def report(self, update: AgentUpdate) -> None:
        message = progress_message(update)
        if message and message != self._last:
            self._last = message
            self._server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def end(self, summary: str) -> None:
        self._server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=summary))
        # pygls never forgets a token; a long-lived server must, or reusing a client token would fail
        self._server.work_done_progress.tokens.pop(self.token, None)
