"""The chat service: check → reserve → compose → chat → release, once for every front end (LSP, ACP, headless).

A front end parses its wire into `ChatInputs`, hands them over with a `ChatFrontEnd` (what it does in that chat:
where the updates go, who is asked), and converts the `ChatOutcome`. Updates are published as they happen.
"""

from __future__ import annotations

from typing import Optional

from agent_lsp.core.events import AgentUpdate, Decision
from agent_lsp.core.ports import Emit, Permission, PermissionRequest
from agent_lsp.sessions.assembly import ChatAssembly, ChatInputs
from agent_lsp.sessions.chat_run import BuildModel, ChatRequest, ChatRunner, abort, confirm
from agent_lsp.sessions.live import Sessions
from agent_lsp.sessions.results import ChatOutcome
from agent_lsp.sessions.session import Session


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
        (naming the field) or SessionBusy; once it started, it always ends with an outcome (an abort, or the
        caller cancelled, included)."""
        session = self.sessions.get(inputs.session_id) if inputs.session_id else None
        title = inputs.message  # before a file command's prompt replaces it
        checked = await self.assembly.check(inputs)
        if session is None:
            session = self.sessions.start(title, [root.as_uri() for root in inputs.editor.roots])
            inputs.session_id = session.id
        session = self.sessions.reserve(session)
        session.starting, session.abort_asked = True, False
        try:
            await front.reserved(session)
            chosen = {k: v for k, v in inputs.chat_settings.items() if v is not None}
            inputs.chat_settings = {**session.preferences.chat_settings(), **chosen}
            request = await self.assembly.compose(checked)
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
