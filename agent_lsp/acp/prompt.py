"""One session/prompt as the ACP client sees it: session/update notifications, permission asked through
session/request_permission, and the settings warnings at the start of the reply."""

from __future__ import annotations

from typing import Any, Optional

from agent_lsp.acp.questions import permission_asker
from agent_lsp.core.events import AgentUpdate, Decision
from agent_lsp.core.ports import PermissionRequest
from agent_lsp.sessions.service import ChatFrontEnd
from agent_lsp.sessions.session import Session


class AcpPrompt(ChatFrontEnd):
    """The turn of `session_id` on the connection of `agent` (acp/agent.py AcpAgent)."""

    def __init__(self, agent: Any, session_id: str) -> None:
        self.agent = agent
        self.session_id = session_id
        self.opened = agent.opened[session_id]

        def cancelled() -> None:  # an answer `cancelled` cancels the turn, as ACP means it
            self.opened.cancelled = True
            agent.service.abort(session_id)

        self._ask = permission_asker(agent.conn, agent.outbox, session_id, cancelled)

    async def reserved(self, session: Session) -> None:
        self.session = session
        agent = self.agent
        self.opened.cancelled = False
        agent.prompting = self.session_id
        if [c.name for c in await agent.assembly.invocable([session.preferences.cwd])] != self.opened.commands:
            await agent.send_commands(self.session_id)  # the project's commands or skills were trusted just now

    async def composed(self) -> None:
        self.agent.show_warnings(self.session_id)

    def publish(self, update: AgentUpdate) -> None:
        converted = self.opened.converter.convert(update)
        if converted is not None:
            self.agent.outbox.push(self.session_id, converted)

    async def ask(self, request: PermissionRequest) -> tuple[Decision, Optional[str]]:
        return await self._ask(request)
