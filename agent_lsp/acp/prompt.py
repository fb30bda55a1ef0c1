"""One session/prompt as the ACP client sees it: session/update notifications, permission asked through
session/request_permission, and the settings warnings at the start of the reply."""

from __future__ import annotations

from typing import Any

from agent_lsp.acp.questions import ask_permission
from agent_lsp.core.events import AgentUpdate
from agent_lsp.core.ports import Emit, Permission, PermissionRequest
from agent_lsp.sessions.chat_run import ChatRequest
from agent_lsp.sessions.service import ChatFrontEnd
from agent_lsp.sessions.session import Session


class AcpPrompt(ChatFrontEnd):
    """The turn of `session_id` on the connection of `agent` (acp/agent.py AcpAgent)."""

    def __init__(self, agent: Any, session_id: str) -> None:
        self.agent = agent
        self.session_id = session_id
        self.opened = agent.opened[session_id]

    async def reserved(self, session: Session) -> None:
        self.session = session
        agent = self.agent
        if self.opened.cancelled:  # cancelled before its chat was reserved: it ends as soon as it starts
            agent.service.abort(self.session_id)
        agent.prompting = self.session_id

    async def composed(self, request: ChatRequest) -> None:
        agent = self.agent
        if [c.name for c in await agent.assembly.invocable([self.session.preferences.cwd])] != self.opened.commands:
            await agent.send_commands(self.session_id)  # the folder was trusted just now: its commands and skills
        agent.show_warnings(self.session_id)

    def publish(self, update: AgentUpdate) -> None:
        converted = self.opened.converter.convert(update)
        if converted is not None:
            self.agent.outbox.push(self.session_id, converted)

    async def ask(self, request: PermissionRequest, emit: Emit) -> Permission:
        return await ask_permission(self.agent.conn, self.agent.outbox, self.session_id, request, self._cancelled)

    def _cancelled(self) -> None:
        """A permission answered `cancelled`: the turn is cancelled, as ACP means it."""
        self.opened.cancelled = True
        self.agent.service.abort(self.session_id)
