"""The agent side of one LSP connection: its sessions, the chat assembly, and how updates, progress and questions
reach the client. Made on the first agent request (`agent_of`), with everything the agent needs behind it."""

from __future__ import annotations

import logging
from typing import Any, Optional

from lsprotocol import types

from agent_lsp.core.events import AgentUpdate
from agent_lsp.lsp import plain
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.language import EditorLanguageFeatures
from agent_lsp.lsp.progress import ChatProgress
from agent_lsp.lsp.updates import UpdateStream
from agent_lsp.models.resolver import build_model
from agent_lsp.protocol import UpdateParams
from agent_lsp.sessions.assembly import ChatAssembly
from agent_lsp.sessions.permissions import Ask
from agent_lsp.sessions.runtime import Session, Sessions
from agent_lsp.sessions.store import open_store

log = logging.getLogger(__name__)
CONFIRM_ACTIONS = {"Allow once": "allow_once", "Allow always": "allow_always", "Reject": "reject_once"}
TRUST_ACTIONS = {"Trust": True, "Don't trust": False}


class Agent:
    """The agent side of the server: sessions, and how their updates and progress reach the client."""

    def __init__(self, server: Any) -> None:
        self.server = server
        store = None
        if server.data_dir is not None:
            store, warning = open_store(server.data_dir)
            server.warn([warning] if warning else [])
        self.sessions = Sessions(build_model, self.emit, store, emit_text=self.emit_text)
        self.assembly = ChatAssembly(server.layers, server.data_dir, server.warn, server.user_file,
                                     language_servers=self._language_servers)
        self.streams: dict[str, UpdateStream] = {}
        self.progress: dict[str, ChatProgress] = {}
        self.current: Optional[str] = None
        """The window's current session: the last one chatted in (code actions continue it)."""

    def emit(self, session: Session, update: AgentUpdate) -> None:
        """Send an update of `session` (coalescing text) and move its progress along."""
        stream = self.streams.get(session.id)
        if stream is None:
            stream = self.streams[session.id] = UpdateStream(lambda u: self._notify(session, u))
        stream.push(update)
        if session.id in self.progress:
            self.progress[session.id].report(update)

    def emit_text(self, session: Session, text: str, thinking: bool) -> None:
        """Send streamed text of `session`'s chat (coalesced; it moves no progress along)."""
        stream = self.streams.get(session.id)
        if stream is None:
            stream = self.streams[session.id] = UpdateStream(lambda u: self._notify(session, u))
        stream.push_text(text, thinking)

    def _notify(self, session: Session, update: AgentUpdate) -> None:
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

    def ask_by_message(self, session_id: str) -> Ask:
        """Confirmation through window/showMessageRequest, for clients without agent/confirmTool: the question
        shows the change (lsp/plain.py), opened first as a whole where the client can show documents. "Allow once"
        stays first: some clients (vim-lsp) answer null to any other choice, and null rejects."""

        async def ask(request):
            await plain.show_change(self.server, session_id, request)
            try:
                title = await self._choose(plain.question(request), list(CONFIRM_ACTIONS))
            except Exception as e:  # a client that cannot ask (no showMessageRequest): nothing runs unasked
                log.info("window/showMessageRequest failed: %r; the call is rejected", e)
                title = None
            return CONFIRM_ACTIONS.get(title, "reject_once"), None

        return ask

    async def ask_trust(self, question: str) -> Optional[bool]:
        """Whether the user trusts the workspace's settings files (window/showMessageRequest); None if dismissed."""
        try:
            return TRUST_ACTIONS.get(await self._choose(question, list(TRUST_ACTIONS)))
        except Exception as e:  # a client that cannot ask: nothing runs
            log.info("window/showMessageRequest for trust failed: %r", e)
            return None


def agent_of(server: Any) -> Agent:
    """The connection's agent, made on first use."""
    if server.agent is None:
        server.agent = Agent(server)
    return server.agent
