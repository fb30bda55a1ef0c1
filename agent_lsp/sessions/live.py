"""The sessions this process has in memory, over the store: loaded on demand (and again when another process added
to them), saved after each chat, leased while a chat runs (with a heartbeat), evicted when idle."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import uuid
from dataclasses import fields
from typing import Any, Callable, Optional

from pydantic import TypeAdapter

from agent_lsp.core.messages import Message
from agent_lsp.sessions.checkpoints import from_rows
from agent_lsp.sessions.session import KEPT_WHEN_EVICTED, PROCESS_ONLY, Session, title_of
from agent_lsp.sessions.store import CheckpointRow, SessionRow, Store

log = logging.getLogger(__name__)
MAX_IDLE_SESSIONS = 16
"""Idle sessions kept in memory when there is a store; older ones are reloaded from it on demand."""
MESSAGE: TypeAdapter = TypeAdapter(Message)
"""A transcript message as the store keeps it (JSON)."""
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


class Sessions:
    """Every session: those this process runs, and those the store keeps (any process's, any day's)."""

    def __init__(self, store: Optional[Store] = None) -> None:
        self._store = store
        self._sessions: dict[str, Session] = {}
        self._beat: Optional[asyncio.TimerHandle] = None
        self._evicted: dict[str, dict[str, Any]] = {}
        """What only this process knows of a session evicted from memory (KEPT_WHEN_EVICTED)."""

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
        history = [MESSAGE.validate_json(body) for body in self._store.messages(session_id)]
        session = Session(id=row.id, title=row.title, created_at=row.created_at, updated_at=row.updated_at,
                          turns_count=row.turns_count, history=history, saved=len(history),
                          compaction=tuple(row.compaction) if row.compaction else None,
                          tool_calls=self._store.tool_calls(session_id), workspace_folders=row.workspace_folders,
                          chats=(chats := self._store.chats(session_id)), saved_chats=len(chats), plan=row.plan,
                          checkpoints=from_rows(self._store.checkpoints(session_id)))
        if cached is not None:  # refreshed in place (a caller may hold it); what lives only in this process stays
            for name in (f.name for f in fields(Session)):
                if name not in PROCESS_ONLY:
                    setattr(cached, name, getattr(session, name))
            return cached
        for name, value in self._evicted.pop(session_id, {}).items():
            setattr(session, name, value)
        self._evict()  # before adding it: the session asked for is never the one evicted
        self._sessions[session_id] = session
        return session

    def start(self, title: str = "", workspace_folders: Optional[list[str]] = None) -> Session:
        """A new session of the window with `workspace_folders`; without a title, its first chat's message titles it."""
        session = Session(id=f"s-{uuid.uuid4().hex[:12]}", title=title_of(title),
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

    def save(self, session: Session, checkpoints: tuple[CheckpointRow, ...] = (),
             reverted: tuple[tuple[int, str], ...] = ()) -> bool:
        """Commit what the chat appended (and its checkpoints, or what a revert undid), before it answers; False
        when the store could not take it (logged; the session stays in memory)."""
        if not self._store:
            return True
        # Only what changed since the last save: per-chat cost must not grow with the session.
        bodies = [MESSAGE.dump_json(m).decode() for m in session.history[session.saved:]]
        chats = tuple(session.chats[session.saved_chats:])
        calls = {k: session.tool_calls[k] for k in session.unsaved_calls if k in session.tool_calls}
        in_step = self._write(lambda: self._store.save(session.row(usage=False), session.saved, bodies, calls,
                                                       chats, checkpoints, reverted))
        if in_step is None:
            return False
        session.saved = len(session.history) if in_step else -1  # -1: reload the stored history next time
        session.saved_chats = len(session.chats)
        session.unsaved_calls.clear()
        return True

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
            self._evicted[session.id] = {name: getattr(session, name) for name in KEPT_WHEN_EVICTED}
