"""The chat service: check → reserve → compose (the folder's trust question first) → chat → release, once for every
front end (LSP, ACP, headless), and `open_service`, which builds it with its store and sessions for each of them.

A front end parses its wire into `ChatInputs`, hands them over with a `ChatFrontEnd` (what it does in that chat:
where the updates go, who is asked), and converts the `ChatOutcome`. Updates are published as they happen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.core.events import AgentUpdate, Decision
from agent_lsp.core.ports import Emit, Permission, PermissionRequest
from agent_lsp.sessions.assembly import BadInput, ChatAssembly, ChatInputs, LanguageServers
from agent_lsp.sessions.chat_run import BuildModel, ChatRequest, ChatRunner, abort, confirm
from agent_lsp.sessions.live import Sessions
from agent_lsp.sessions.results import ChatOutcome
from agent_lsp.sessions.session import Session
from agent_lsp.sessions.store import open_store


class ChatFrontEnd:
    """What a front end does in one chat: it is told the session the chat runs in, renders each update as it
    happens, and answers the permission questions (a front end that cannot ask answers them itself)."""

    session: Optional[Session] = None

    async def reserved(self, session: Session) -> None:
        """The chat will run in `session`, reserved for it; it is not composed yet."""
        self.session = session

    async def composed(self, request: ChatRequest) -> None:
        """The chat is composed as `request` (the settings in force known, their warnings given) and about to run."""

    def publish(self, update: AgentUpdate) -> None:
        """Render one update of the chat."""
        raise NotImplementedError

    async def ask(self, request: PermissionRequest, emit: Emit) -> Permission:
        """Whether a tool call the chat's rules leave to the user runs (an `Approve`; `emit` sends updates in
        order with the call's own, such as the question itself)."""
        raise NotImplementedError


class ChatService:
    """Chats in the sessions of one front end's connection, composed by its chat assembly."""

    def __init__(self, sessions: Sessions, assembly: ChatAssembly, build_model: BuildModel) -> None:
        self.sessions = sessions
        self.assembly = assembly
        self._runner = ChatRunner(sessions, build_model)

    async def chat(self, inputs: ChatInputs, front: ChatFrontEnd) -> ChatOutcome:
        """Run one chat to its end. Without a session id, a session of the editor's folders is started once the
        inputs passed the checks, titled by the message. The chat does not start on UnknownSession, BadInput
        (naming the field) or SessionBusy; the workspace folder's trust question is asked only once the session is
        reserved (a busy session asks nothing), and a session started for a chat that then does not start (an
        unknown `/name`) is gone again. Once it started, it always ends with an outcome (an abort, or the caller
        cancelled, included)."""
        session = self.sessions.get(inputs.session_id) if inputs.session_id else None
        title = inputs.message  # before a file command's prompt replaces it
        checked = await self.assembly.check(inputs)
        started = session is None
        if session is None:
            session = self.sessions.start(title, [root.as_uri() for root in inputs.editor.roots])
            inputs.session_id = session.id
        session = self.sessions.reserve(session)
        session.starting, session.abort_asked = True, False
        try:
            await front.reserved(session)
            chosen = {k: v for k, v in inputs.chat_settings.items() if v is not None}
            inputs.chat_settings = {**session.preferences.chat_settings(), **chosen}
            try:
                request = await self.assembly.compose(checked)
            except BadInput:
                if started:
                    self.sessions.delete(session.id)
                raise
            await front.composed(request)
            return await self._runner.run(session, request, front.publish, front.ask)
        finally:
            session.starting = session.abort_asked = False
            self.sessions.release(session)

    async def revert(self, session: Session, to_chat: Optional[int], editor) -> tuple[list, list]:
        """Undo the edits of the last chat, or of every chat after the first `to_chat` (see ChatRunner.revert);
        SessionBusy while a chat runs in the session."""
        session = self.sessions.reserve(session)
        try:
            reverted, refused = await self._runner.revert(session, to_chat, editor)
        finally:
            self.sessions.release(session)
        self.assembly.disk_changed(reverted)  # a closed file restored on disk: its language servers must know
        return reverted, refused

    def abort(self, session_id: str) -> bool:
        """Cancel the session's running chat; False when nothing was running. UnknownSession."""
        return abort(self.sessions.get(session_id))

    def confirm(self, session_id: str, tool_call_id: str, decision: Decision, message: Optional[str]) -> None:
        """Answer a pending confirmation; UnknownSession, UnknownToolCall."""
        confirm(self.sessions.get(session_id), tool_call_id, decision, message)

    async def close(self) -> None:
        """Stop what the chats started (MCP servers, language servers)."""
        await self.assembly.close()


def open_service(in_force: SettingsInForce, data_dir: Optional[Path], build_model: BuildModel,
                 language_servers: Optional[Callable[[], LanguageServers]] = None) -> ChatService:
    """The chat service of one front end's connection: its store in `data_dir` (None: sessions in memory; a store
    that cannot open is a warning and sessions stay in memory), its sessions and its chat assembly over the settings
    in force; the same for LSP, ACP and headless runs."""
    store = None
    if data_dir is not None:
        store, warning = open_store(data_dir)
        in_force.warn([warning] if warning else [])
    return ChatService(Sessions(store), ChatAssembly(in_force, data_dir, language_servers), build_model)
