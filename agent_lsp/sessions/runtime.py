"""The live side of sessions: one asyncio task per chat, its confirmations, its seq, and its outcome."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
import uuid
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from pydantic import TypeAdapter

from agent_lsp.config import Settings, effective_max_turns
from agent_lsp.core.events import (
    AgentUpdate,
    Decision,
    Notice,
    Plan,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallUpdate,
    Usage,
)
from agent_lsp.core.hooks import Hook
from agent_lsp.core.loop import ChatConfig, ChatState, close_aborted, compact_now, run_chat
from agent_lsp.core.messages import Message, UserMessage
from agent_lsp.core.ports import Model, ModelError, PermissionRequest
from agent_lsp.core.tool import Tool, ToolContext
from agent_lsp.sessions.checkpoints import (
    Checkpoint,
    RecordingEditor,
    from_rows,
    plan_revert,
    revert_files,
    revert_note,
    to_rows,
)
from agent_lsp.sessions.permissions import Ask, Grants, make_permit, offered
from agent_lsp.sessions.results import ChatFailure, ChatOutcome
from agent_lsp.sessions.store import ChatRecord, CheckpointRow, SessionRow, Store
from agent_lsp.tools.paths import display

log = logging.getLogger(__name__)
MAX_IDLE_SESSIONS = 16
"""Idle sessions kept in memory when there is a store; older ones are reloaded from it on demand."""
_MESSAGE: TypeAdapter = TypeAdapter(Message)
_PROCESS_ONLY = frozenset({"seq", "busy", "task", "grants", "pending"})
"""Session fields that are this process's own, kept when the session is reloaded from the store."""
LEASE_TTL = 30.0
"""A lease whose heartbeat is older than this is taken over even when its process seems alive."""
HEARTBEAT_EVERY = LEASE_TTL / 4
OWNER = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
"""This process as a lease holder (the pid alone could be reused)."""


class UnknownSession(KeyError):
    """No session has that id."""


class SessionBusy(RuntimeError):
    """A chat is already running in that session: in this process, or in the process `pid` (another window)."""

    def __init__(self, session_id: str, pid: Optional[int] = None) -> None:
        self.session_id, self.pid = session_id, pid
        where = f"agent-lsp process {pid} (another window) is running a chat in it" if pid else "a chat is running"
        super().__init__(f"Session {session_id} is busy: {where}.")


class UnknownToolCall(KeyError):
    """No pending confirmation has that id."""


class NothingToRevert(ValueError):
    """The chats named made no edits (or they were reverted already)."""


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
    compaction: Optional[tuple[int, str]] = None
    """(cut, summary) when older turns are sent to the model as a summary."""
    tool_calls: dict[str, dict] = field(default_factory=dict)
    """How each tool call went, as the updates said (for agent/history), by toolCallId."""
    saved: int = 0
    """How many messages of `history` the store has."""
    workspace_folders: list[str] = field(default_factory=list)
    """URIs of the workspace folders of the window that created the session."""
    chats: list[ChatRecord] = field(default_factory=list)
    """How each chat ended and what it used, oldest first."""
    checkpoints: list[Checkpoint] = field(default_factory=list)
    """What each chat changed, oldest first (chats without edits have none); stored with the chat."""
    plan: list[dict[str, str]] = field(default_factory=list)
    """The latest plan the agent sent (`todo_write`), as {content, status} entries."""
    saved_chats: int = 0
    """How many of `chats` the store has."""
    unsaved_calls: set[str] = field(default_factory=set)
    """The ids of `tool_calls` changed since the store last took them (a save writes only these, not them all)."""

    @property
    def chat_count(self) -> int:
        """How many chats the session has had (also those from before chats had records)."""
        return sum(1 for m in self.history if isinstance(m, UserMessage) and m.origin == "user")

    def row(self, usage: bool = True) -> SessionRow:
        """The session as the store lists it; without `usage` its usage is left empty (the store computes it from
        the chats, so a save need not add up every chat)."""
        total = Usage()
        for chat in self.chats if usage else ():
            total = total.plus(chat.usage)
        return SessionRow(id=self.id, title=self.title, created_at=self.created_at, updated_at=self.updated_at,
                          turns_count=self.turns_count, compaction=list(self.compaction) if self.compaction else None,
                          workspace_folders=list(self.workspace_folders), usage=total,
                          plan=[dict(entry) for entry in self.plan])

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
    ends_with: Optional[str] = None
    """A tool whose valid call ends the chat with a structured output (`finish`)."""
    hooks: list[Hook] = field(default_factory=list)
    builtin: Optional[tuple[str, str]] = None
    """A builtin slash command instead of a model turn: ("compact", the user's instructions) or ("memory", the
    text to show)."""


Emit = Callable[[Session, AgentUpdate], None]
EmitText = Callable[[Session, str, bool], None]
"""Sends streamed text of a session's chat: (session, text, is thinking)."""
BuildModel = Callable[[Settings], Model]


class Sessions:
    """Every session: those this process runs, and those the store keeps (any process's, any day's)."""

    def __init__(self, build_model: BuildModel, emit: Emit, store: Optional[Store] = None,
                 emit_text: Optional[EmitText] = None) -> None:
        """`emit_text` sends streamed text without an update object per delta (an edge that coalesces text);
        without it each delta is emitted as a TextDelta or ThinkingDelta."""
        self._build_model = build_model
        self._emit = emit
        self._emit_text = emit_text or self._text_as_update
        self._store = store
        self._sessions: dict[str, Session] = {}
        self._beat: Optional[asyncio.TimerHandle] = None
        self._evicted: dict[str, tuple[int, Grants]] = {}
        """What only this process knows of a session evicted from memory: its seq and standing answers."""

    def get(self, session_id: str) -> Session:
        """The session, or UnknownSession. It is (re)loaded from the store when this process has not seen it
        yet, or when another process (another editor window) has added to it since."""
        cached = self._sessions.get(session_id)
        if cached is not None and (cached.busy or self._store is None or len(cached.history) > cached.saved >= 0):
            return cached  # running, or holding what the store could not take (disk full): this copy is newer
        row = self._store.session(session_id) if self._store else None
        if row is None:
            if cached is not None:  # never stored (the store failed): this process's copy is all there is
                return cached
            raise UnknownSession(session_id)
        if cached is not None and cached.updated_at == row.updated_at and cached.saved >= 0:
            return cached
        history = [_MESSAGE.validate_json(body) for body in self._store.messages(session_id)]
        session = Session(id=row.id, title=row.title, created_at=row.created_at, updated_at=row.updated_at,
                          turns_count=row.turns_count, history=history, saved=len(history),
                          compaction=tuple(row.compaction) if row.compaction else None,
                          tool_calls=self._store.tool_calls(session_id), workspace_folders=row.workspace_folders,
                          chats=(chats := self._store.chats(session_id)), saved_chats=len(chats), plan=row.plan,
                          checkpoints=from_rows(self._store.checkpoints(session_id)))
        if cached is not None:  # refreshed in place (a caller may hold it); what lives only in this process stays
            for name in (f.name for f in fields(Session)):
                if name not in _PROCESS_ONLY:
                    setattr(cached, name, getattr(session, name))
            return cached
        if session_id in self._evicted:
            session.seq, session.grants = self._evicted.pop(session_id)
        self._evict()  # before adding it: the session asked for is never the one evicted
        self._sessions[session_id] = session
        return session

    def start(self, title: str = "", workspace_folders: Optional[list[str]] = None) -> Session:
        """A new session of the window with `workspace_folders`; without a title, its first chat's message titles it."""
        session = Session(id=f"s-{uuid.uuid4().hex[:12]}", title=_title(title),
                          workspace_folders=list(workspace_folders or []))
        self._evict()
        self._sessions[session.id] = session
        if self._store:
            self._write(lambda: self._store.create(session.row()))
        return session

    def all(self, workspace: Optional[str] = None) -> list[SessionRow]:
        """Every session, newest first; with `workspace` (a folder URI), those whose window had that folder."""
        rows = {r.id: r for r in (self._store.sessions(workspace) if self._store else [])}
        rows.update({s.id: s.row() for s in self._sessions.values() if (s.id not in rows or s.busy)
                     and (workspace is None or workspace in s.workspace_folders)})
        return sorted(rows.values(), key=lambda r: r.updated_at, reverse=True)

    def delete(self, session_id: str) -> None:
        session = self.get(session_id)
        if session.task:
            session.task.cancel()
        del self._sessions[session_id]
        self._evicted.pop(session_id, None)
        if self._store:
            self._write(lambda: self._store.delete(session_id))

    def _save(self, session: Session, checkpoints: tuple[CheckpointRow, ...] = (),
              reverted: tuple[tuple[int, str], ...] = ()) -> None:
        """Commit what the chat appended (and its checkpoints, or what a revert undid), before it answers."""
        if not self._store:
            return
        # Only what changed since the last save: per-chat cost must not grow with the session.
        bodies = [_MESSAGE.dump_json(m).decode() for m in session.history[session.saved:]]
        chats = tuple(session.chats[session.saved_chats:])
        calls = {k: session.tool_calls[k] for k in session.unsaved_calls if k in session.tool_calls}
        in_step = self._write(lambda: self._store.save(session.row(usage=False), session.saved, bodies, calls,
                                                       chats, checkpoints, reverted))
        if in_step is None:
            self._publish(session, Notice(level="warning", message=(
                "This chat could not be saved to the session store (see the log); it is kept in memory only.")))
            return
        session.saved = len(session.history) if in_step else -1  # -1: reload the stored history next time
        session.saved_chats = len(session.chats)
        session.unsaved_calls.clear()

    def _write(self, action: Callable[[], Any]) -> Any:
        """The action's value, or None when the store could not be written (logged; the chat goes on)."""
        try:
            return action()
        except sqlite3.Error as e:  # the chat's answer matters more than its record: log and go on
            log.error("the session store could not be written: %r", e)
            return None

    def reserve(self, session: Session) -> Session:
        """Mark the session as running a chat, and answer it as the store has it now; SessionBusy when a chat
        runs in it already, in this process or in another one holding its lease."""
        if session.busy:
            raise SessionBusy(session.id)
        if self._store:
            try:
                holder = self._store.acquire(session.id, OWNER, LEASE_TTL)
            except sqlite3.Error as e:  # a store that cannot be written cannot be shared either: go on alone
                log.warning("the session lease could not be taken: %r", e)
                holder = None
            if holder is not None:
                raise SessionBusy(session.id, holder)
            session = self.get(session.id)  # what another window added before the lease was ours
        session.busy = True
        if self._store and self._beat is None:
            self._beat = asyncio.get_running_loop().call_later(HEARTBEAT_EVERY, self._heartbeat)
        return session

    def _heartbeat(self) -> None:
        self._beat = None
        if self._store and any(s.busy for s in self._sessions.values()):
            self._write(lambda: self._store.heartbeat(OWNER))
            self._beat = asyncio.get_running_loop().call_later(HEARTBEAT_EVERY, self._heartbeat)

    def release(self, session: Session) -> None:
        """The session's chat has answered."""
        session.busy = False
        if self._store:
            self._write(lambda: self._store.release(session.id, OWNER))
        self._evict()

    def _evict(self) -> None:
        """Forget all but the MAX_IDLE_SESSIONS most recent idle sessions that the store holds whole."""
        if self._store is None or len(self._sessions) <= MAX_IDLE_SESSIONS:
            return
        idle = [s for s in self._sessions.values()
                if not s.busy and s.task is None and not s.pending and s.saved == len(s.history)]
        idle.sort(key=lambda s: s.updated_at)
        for session in idle[:max(0, len(self._sessions) - MAX_IDLE_SESSIONS)]:
            del self._sessions[session.id]
            self._evicted[session.id] = (session.seq, session.grants)

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

    async def chat(self, session: Session, request: ChatRequest, ask: Optional[Ask] = None) -> ChatOutcome:
        """Run one chat to its end; cancelling the caller aborts the chat, and a result is answered all the same."""
        started = time.monotonic()
        if request.builtin is not None:
            return await self._builtin(session, request, started)
        # Text straight to the edge: _publish records nothing of it, and a reply streams thousands of deltas.
        state = ChatState(history=session.history, stream_to=lambda text, thinking: self._emit_text(session, text,
                                                                                                   thinking))
        settings = request.settings
        if settings.max_turns == 0:
            return _result(session, state, "disabled", started)
        try:
            model = self._build_model(settings)
        except ModelError as e:
            state.error = e
            return _result(session, state, "error", started)
        first_message = len(session.history)
        session.title = session.title or _title(request.message.text)
        mode = settings.permission_mode
        config = ChatConfig(
            system=request.system,
            tools=[t for t in request.tools if offered(t.kind, mode)],
            max_turns=effective_max_turns(settings.max_turns),
            max_tokens=settings.max_tokens,
            thinking=settings.thinking,
            context_window=settings.context_window,
            compact_threshold=settings.compact_threshold,
            ends_with=request.ends_with,
            hooks=request.hooks,
        )
        state.compaction = session.compaction
        permit = make_permit(mode, session.grants, ask or self.asker(session))
        checkpoint = Checkpoint(chat=session.chat_count, message=request.message.text)
        ctx = replace(request.ctx, editor=RecordingEditor(request.ctx.editor, checkpoint))

        async def drive() -> None:
            async for update in run_chat(model, request.message, state, config, ctx, permit):
                self._publish(session, update)

        task = asyncio.create_task(drive())
        session.task = task
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # $/cancelRequest of agent/chat: abort, and still answer a result
            task.cancel()
            me = asyncio.current_task()
            while not task.done():  # a second cancel (shutdown, then exit) must not stop the chat being saved
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    pass
            while me.cancelling():
                me.uncancel()
        finally:
            session.task = None
            for future in session.pending.values():
                future.cancel()
        if task.cancelled() or task.exception() is not None:
            for update in close_aborted(state):
                self._publish(session, update)
        if not task.cancelled() and task.exception() is not None:
            log.error("chat failed", exc_info=task.exception())
            state.stop_reason = "error"
            state.error = ModelError("tool_error", f"internal error: {task.exception()!r}")
        if checkpoint.files:
            session.checkpoints.append(checkpoint)
        session.turns_count += state.turns
        session.updated_at = _now()
        session.compaction = state.compaction
        outcome = _result(session, state, state.stop_reason or "end_turn", started)
        session.chats.append(ChatRecord(first_message=first_message, stop_reason=outcome.stop_reason,
                                        duration_ms=outcome.duration_ms, usage=outcome.usage))
        self._save(session, checkpoints=to_rows(checkpoint))
        return outcome

    async def _builtin(self, session: Session, request: ChatRequest, started: float) -> ChatOutcome:
        """Run a builtin command: `/compact` compacts the session now (one model call, abortable), `/memory`
        shows its text. Neither adds to the transcript."""
        state = ChatState(history=session.history, compaction=session.compaction)
        name, argument = request.builtin
        text = argument
        if name == "compact":
            try:
                model = self._build_model(request.settings)
                config = ChatConfig(system=request.system, tools=[], max_turns=1,
                                    max_tokens=request.settings.max_tokens)
                session.task = asyncio.ensure_future(compact_now(model, state, config, argument))
                text = await session.task
            except ModelError as e:
                state.error = e
                return _result(session, state, "error", started)
            except asyncio.CancelledError:  # agent/abort, or $/cancelRequest: answered all the same
                me = asyncio.current_task()
                while me.cancelling():
                    me.uncancel()
                return _result(session, state, "aborted", started)
            finally:
                session.task = None
            if state.usage != Usage():
                self._publish(session, state.usage.model_copy())
            session.compaction = state.compaction
            session.updated_at = _now()
            self._save(session)
        self._publish(session, TextDelta(text=text))
        state.final_message = text
        return _result(session, state, "end_turn", started)

    async def revert(self, session: Session, to_chat: Optional[int], editor) -> tuple[list, list]:
        """Undo the edits of the last chat, or of every chat after the first `to_chat`; answers (reverted paths,
        refused (path, reason)). The history tells the model what was undone. NothingToRevert when the chats named
        made no edits still in place."""
        first = session.chat_count - 1 if to_chat is None else to_chat
        chosen = [c for c in session.checkpoints if c.chat >= first]
        if not chosen:
            which = "the last chat" if to_chat is None else f"the chats after the first {to_chat}"
            raise NothingToRevert(f"{which} of session {session.id} made no edits that can be reverted")
        reverted, refused = await revert_files(editor, plan_revert(chosen))
        undone = []
        for checkpoint in chosen:  # what was restored is gone from the checkpoints; what was refused stays
            for path in reverted:
                if checkpoint.files.pop(path, None) is not None:
                    undone.append((checkpoint.chat, str(path)))
        session.checkpoints = [c for c in session.checkpoints if c.files]
        note = revert_note(sorted({c.chat for c in chosen}), [display(editor.roots, p) for p in reverted],
                           [(display(editor.roots, p), why) for p, why in refused])
        session.history.append(UserMessage(text=note, origin="revert"))
        session.updated_at = _now()
        self._save(session, reverted=tuple(undone))
        return reverted, refused

    def _text_as_update(self, session: Session, text: str, thinking: bool) -> None:
        self._emit(session, (ThinkingDelta if thinking else TextDelta).model_construct(text=text))

    def _publish(self, session: Session, update: AgentUpdate) -> None:
        """Send an update, and remember how tool calls went and the latest plan for agent/history (a subagent's
        calls are not in the transcript: only sent)."""
        if update.parent_tool_call_id is not None:
            pass
        elif isinstance(update, Plan):
            session.plan = [entry.wire() for entry in update.entries]
        elif isinstance(update, ToolCall):
            session.tool_calls[update.tool_call_id] = {**update.wire(), "status": "running"}
            session.unsaved_calls.add(update.tool_call_id)
        elif isinstance(update, ToolCallUpdate) and update.tool_call_id in session.tool_calls:
            record = session.tool_calls[update.tool_call_id]
            record.update({k: v for k, v in update.wire().items() if k in ("status", "output", "error", "diff")})
            session.unsaved_calls.add(update.tool_call_id)
        self._emit(session, update)


def _title(text: str) -> str:
    """A session title: whitespace folded, at most 120 characters."""
    return " ".join(text.split())[:120]


def _result(session: Session, state: ChatState, stop_reason: str, started: float) -> ChatOutcome:
    error = ChatFailure(type=state.error.type, message=state.error.message) if state.error else None
    return ChatOutcome(
        session_id=session.id,
        stop_reason=stop_reason,
        final_message=state.final_message,
        error=error if stop_reason == "error" else None,
        turns_count=state.turns,
        tool_calls_count=state.tool_calls,
        denied_tool_calls=state.denied,
        duration_ms=int((time.monotonic() - started) * 1000),
        usage=state.usage.model_copy(),
        structured_output=state.structured_output if state.finished else None,
    )
