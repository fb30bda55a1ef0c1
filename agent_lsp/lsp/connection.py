"""The state of one LSP connection's agent side: its chat service (sessions, chat assembly), the window's current
session, and how a chat's updates, progress and questions reach the client (`LspChat`). Made on the first agent
request (`connection_of`), with everything the agent needs behind it."""

from __future__ import annotations

import logging
from typing import Any, Optional

from lsprotocol import types

from agent_lsp.core.events import AgentUpdate
from agent_lsp.core.ports import Emit, Permission, PermissionRequest
from agent_lsp.lsp import plain_clients
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.language_features import EditorLanguageFeatures
from agent_lsp.lsp.progress import ChatProgress, Token
from agent_lsp.lsp.updates import UpdateStream
from agent_lsp.models.resolver import build_model
from agent_lsp.protocol import ConfirmationRequest, UpdateParams
from agent_lsp.sessions.chat_run import ChatRequest, confirmation
from agent_lsp.sessions.permissions import decided
from agent_lsp.sessions.service import ChatFrontEnd, open_service
from agent_lsp.sessions.session import Session

log = logging.getLogger(__name__)
CONFIRM_ACTIONS = {"Allow once": "allow_once", "Allow always": "allow_always", "Reject": "reject_once"}
TRUST_ACTIONS = {"Trust": True, "Don't trust": False}


class Connection:
    """The agent side of the connection: its chat service and sessions, and the client's questions."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.service = open_service(server.in_force, server.data_dir, build_model, self._language_servers)
        self.assembly = self.service.assembly
        self.sessions = self.service.sessions
        self.current: Optional[str] = None
        """The window's current session: the last one chatted in (code actions continue it)."""

    def notify(self, session: Session, update: AgentUpdate) -> None:
        """Send one agent/update of `session`, numbered by the session's seq."""
        params = UpdateParams(session_id=session.id, seq=session.next_seq(), update=update)
        self.server.protocol.notify("agent/update", params.wire())

    def editor(self) -> LspEditor:
        return LspEditor(self.server, client_diagnostics=self.server.agent_caps["diagnostics"])

    def language(self, editor: LspEditor) -> EditorLanguageFeatures:
        """The editor's own language servers, through agent/languageFeature (none unless the client declared it)."""
        return EditorLanguageFeatures(self.server, editor)

    def _language_servers(self) -> Any:
        from agent_lsp.sidecar import SidecarPool  # only when a chat's settings name language servers

        return SidecarPool(self.editor, lambda message: self.server.warn([message]))

    async def _choose(self, message: str, titles: list[str]) -> Optional[str]:
        """The title the user chose in a window/showMessageRequest; None when dismissed or not answered."""
        answer = await self.server.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=message, actions=[types.MessageActionItem(title=t) for t in titles]))
        return answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)

    async def ask_by_message(self, session_id: str, request: PermissionRequest) -> Permission:
        """Confirmation through window/showMessageRequest, for clients without agent/confirmTool: the question
        shows the change (lsp/plain_clients.py), opened first as a whole where the client can show documents.
        "Allow once" stays first: some clients (vim-lsp) answer null to any other choice, and null rejects."""
        await plain_clients.show_change(self.server, session_id, request)
        try:
            title = await self._choose(plain_clients.question(request), list(CONFIRM_ACTIONS))
        except Exception as e:  # a client that cannot ask (no showMessageRequest): nothing runs unasked
            log.info("window/showMessageRequest failed: %r; the call is rejected", e)
            title = None
        return decided(CONFIRM_ACTIONS.get(title, "reject_once"))

    async def ask_trust(self, question: str) -> Optional[bool]:
        """Whether the user trusts the workspace folder's own files (window/showMessageRequest); None if dismissed."""
        try:
            return TRUST_ACTIONS.get(await self._choose(question, list(TRUST_ACTIONS)))
        except Exception as e:  # a client that cannot ask: nothing runs
            log.info("window/showMessageRequest for trust failed: %r", e)
            return None


def connection_of(server: Any) -> Connection:
    """The connection's agent side, made on first use."""
    if server.connection is None:
        server.connection = Connection(server)
    return server.connection


class LspChat(ChatFrontEnd):
    """One agent/chat as the client sees it: agent/update numbered by the session's seq (text coalesced), the
    work-done progress (`token`: the client's, else one the server creates), and each confirmation asked through
    agent/confirmTool, or window/showMessageRequest for a client without it."""

    def __init__(self, connection: Connection, token: Optional[Token]) -> None:
        self.connection = connection
        self.token = token
        self.stream: Optional[UpdateStream] = None
        self.progress: Optional[ChatProgress] = None

    async def reserved(self, session: Session) -> None:
        self.session = session
        self.stream = UpdateStream(lambda update: self.connection.notify(session, update))

    async def composed(self, request: ChatRequest) -> None:
        session_id = self.session.id
        self.connection.current = session_id
        self.progress = await ChatProgress.open(self.connection.server, self.token,
                                                lambda: self.connection.service.abort(session_id))

    def publish(self, update: AgentUpdate) -> None:
        """Send an update (coalescing text) and move the progress along."""
        self.stream.push(update)
        if self.progress:
            self.progress.report(update)

    async def ask(self, request: PermissionRequest, emit: Emit) -> Permission:
        emit(ConfirmationRequest.asking(request))
        if self.connection.server.agent_caps["confirmTool"]:
            return decided(*await confirmation(self.session, request.tool_call_id))
        return await self.connection.ask_by_message(self.session.id, request)

    def flush(self) -> None:
        """The chat is over: send the text still coalescing."""
        if self.stream:
            self.stream.flush()

    def end(self, summary: str) -> None:
        """End the progress with the chat's summary."""
        if self.progress:
            self.progress.end(summary)
