"""The live side of sessions: one asyncio task per chat, its confirmations, its seq, and its outcome."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Optional

from agent_lsp.config import Settings, effective_max_turns
from agent_lsp.core.events import AgentUpdate, Decision
from agent_lsp.core.loop import ChatConfig, ChatState, close_aborted, run_chat
from agent_lsp.core.messages import Message, UserMessage
from agent_lsp.core.ports import Model, ModelError, PermissionRequest
from agent_lsp.core.tool import Tool, ToolContext
from agent_lsp.protocol import ChatError, ChatMetadata, ChatResult, ChatUsage
from agent_lsp.sessions.permissions import Ask, Grants, make_permit, offered


class UnknownSession(KeyError):
    """No session has that id."""


class SessionBusy(RuntimeError):
    """A chat is already running in that session."""


class UnknownToolCall(KeyError):
    """No pending confirmation has that id."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Session:
    """One conversation."""

    id: str
    title: str
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    history: list[Message] = field(default_factory=list)
    turns_count: int = 0
    seq: int = 0
    busy: bool = False
    task: Optional[asyncio.Task] = None
    grants: Grants = field(default_factory=Grants)
    pending: dict[str, asyncio.Future] = field(default_factory=dict)
    """Confirmations awaiting agent/confirmTool, by toolCallId."""

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq


@dataclass
class ChatRequest:
    """A parsed agent/chat, with what the edge knows about the editor."""

    message: UserMessage
    settings: Settings
    system: str
    tools: list[Tool]
    ctx: ToolContext


Emit = Callable[[Session, AgentUpdate], None]
BuildModel = Callable[[Settings], Model]


class Sessions:
    """Every session of this server process."""

    def __init__(self, build_model: BuildModel, emit: Emit) -> None:
        self._build_model = build_model
        self._emit = emit
        self._sessions: dict[str, Session] = {}

    def get(self, session_id: str) -> Session:
        """The session, or UnknownSession."""
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    def start(self, title: str) -> Session:
        """A new session titled by its first message."""
        session = Session(id=f"s-{uuid.uuid4().hex[:12]}", title=" ".join(title.split())[:120])
        self._sessions[session.id] = session
        return session

    def all(self) -> list[Session]:
        """Every session, newest first."""
        return sorted(self._sessions.values(), key=lambda s: s.updated_at, reverse=True)

    def delete(self, session_id: str) -> None:
        session = self.get(session_id)
        if session.task:
            session.task.cancel()
        del self._sessions[session_id]

    def reserve(self, session: Session) -> None:
        """Mark the session as running a chat; SessionBusy when it already is."""
        if session.busy:
            raise SessionBusy(session.id)
        session.busy = True

    def release(self, session: Session) -> None:
        """The session's chat has answered."""
        session.busy = False

    def abort(self, session_id: str) -> bool:
        """Cancel the running chat; False when nothing was running."""
        session = self.get(session_id)
        if session.task is None or session.task.done():
            return False
        session.task.cancel()
        return True

    def confirm(self, session_id: str, tool_call_id: str, decision: Decision, message: Optional[str]) -> None:
        """Resolve a pending confirmation."""
        future = self.get(session_id).pending.get(tool_call_id)
        if future is None or future.done():
            raise UnknownToolCall(tool_call_id)
        future.set_result((decision, message))

    def asker(self, session: Session) -> Ask:
        """Ask through agent/confirmTool: a future per tool call, resolved by `confirm`."""

        async def ask(request: PermissionRequest) -> tuple[Decision, Optional[str]]:
            future = asyncio.get_running_loop().create_future()
            session.pending[request.tool_call_id] = future
            try:
                return await future
            finally:
                session.pending.pop(request.tool_call_id, None)

        return ask

    async def chat(self, session: Session, request: ChatRequest, ask: Optional[Ask] = None) -> ChatResult:
        """Run one chat to its end; cancelling the caller aborts the chat, and a result is answered all the same."""
        started = time.monotonic()
        state = ChatState(history=session.history)
        settings = request.settings
        if settings.max_turns == 0:
            return _result(session, state, "disabled", started)
        try:
            model = self._build_model(settings)
        except ModelError as e:
            state.error = e
            return _result(session, state, "error", started)
        mode = settings.permission_mode
        config = ChatConfig(
            system=request.system,
            tools=[t for t in request.tools if offered(t.kind, mode)],
            max_turns=effective_max_turns(settings.max_turns),
            max_tokens=settings.max_tokens,
            thinking=settings.thinking,
        )
        permit = make_permit(mode, session.grants, ask or self.asker(session))

        async def drive() -> None:
            async for update in run_chat(model, request.message, state, config, request.ctx, permit):
                self._emit(session, update)

        task = asyncio.create_task(drive())
        session.task = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # $/cancelRequest of agent/chat: abort, and still answer a result
            task.cancel()
            await asyncio.wait({task})
            asyncio.current_task().uncancel()
        finally:
            session.task = None
            for future in session.pending.values():
                future.cancel()
        if task.cancelled():
            for update in close_aborted(state):
                self._emit(session, update)
        elif task.exception() is not None:
            for update in close_aborted(state):
                self._emit(session, update)
            error = task.exception()
            state.stop_reason, state.error = "error", ModelError("tool_error", f"internal error: {error!r}")
        session.turns_count += state.turns
        session.updated_at = _now()
        return _result(session, state, state.stop_reason or "end_turn", started)


def _result(session: Session, state: ChatState, stop_reason: str, started: float) -> ChatResult:
    usage = state.usage
    error = ChatError(type=state.error.type, message=state.error.message) if state.error else None
    return ChatResult(
        session_id=session.id,
        stop_reason=stop_reason,
        final_message=state.final_message,
        error=error if stop_reason == "error" else None,
        metadata=ChatMetadata(
            turns_count=state.turns,
            tool_calls_count=state.tool_calls,
            denied_tool_calls=state.denied,
            duration_ms=int((time.monotonic() - started) * 1000),
            usage=ChatUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens,
                cache_creation_input_tokens=usage.cache_creation_input_tokens,
            ),
        ),
    )
