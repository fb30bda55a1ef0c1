"""The session store: an embedded SQLite database (WAL), one per data directory, shared by every server process.

Schema versions only move forward. A database that cannot be read is moved aside and a new one started; one
written by a newer agent-lsp is left untouched and sessions stay in memory. Either way the server starts and
says which.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agent_lsp.core.events import Usage

SCHEMA_VERSION = 5
MIGRATIONS = {
    1: """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
            turns_count INTEGER NOT NULL DEFAULT 0, compaction TEXT);
        CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, position INTEGER NOT NULL,
            body TEXT NOT NULL, PRIMARY KEY (session_id, position));
        CREATE TABLE tool_calls (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, tool_call_id TEXT NOT NULL,
            record TEXT NOT NULL, PRIMARY KEY (session_id, tool_call_id));
    """,
    # The workspace folders of the window that made the session (`workspace` is the first, `workspace_folders`
    # all of them, as a JSON list of URIs), and one row per chat: where its messages start, how it ended, what
    # it used. Sessions and chats from version 1 have no folders and no chat rows.
    2: """
        ALTER TABLE sessions ADD COLUMN workspace TEXT;
        ALTER TABLE sessions ADD COLUMN workspace_folders TEXT NOT NULL DEFAULT '[]';
        CREATE INDEX sessions_by_workspace ON sessions(workspace);
        CREATE TABLE chats (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            first_message INTEGER NOT NULL, stop_reason TEXT NOT NULL, duration_ms INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
            cache_read_input_tokens INTEGER NOT NULL, cache_creation_input_tokens INTEGER NOT NULL,
            PRIMARY KEY (session_id, first_message));
    """,
    3: """
        CREATE TABLE leases (
            session_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
            heartbeat REAL NOT NULL);
    """,
    # What agent/revert needs, per chat and file: the text before the chat's first edit (NULL: the chat created
    # the file) and after its last one, or their sha256 when the file was over 2 MB (`hashes_only`).
    4: """
        CREATE TABLE checkpoints (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, chat INTEGER NOT NULL,
            path TEXT NOT NULL, message TEXT NOT NULL, label TEXT NOT NULL, before TEXT, after TEXT NOT NULL,
            hashes_only INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, chat, path));
    """,
    5: """
        ALTER TABLE sessions ADD COLUMN plan TEXT;
    """,
}
"""Version 3: session leases (one process runs a session's chat at a time; see `acquire`). Version 4: checkpoints.
Version 5: the session's latest plan (`todo_write`), a JSON list of {content, status}."""
_USAGE_COLUMNS = "input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens"
_SELECT_SESSIONS = (
    "SELECT s.id, s.title, s.created_at, s.updated_at, s.turns_count, s.compaction, s.workspace_folders, s.plan, "
    + ", ".join(f"COALESCE(SUM(c.{c}), 0)" for c in _USAGE_COLUMNS.split(", "))
    + " FROM sessions s LEFT JOIN chats c ON c.session_id = s.id"
)


@dataclass
class SessionRow:
    id: str
    title: str
    created_at: str
    updated_at: str
    turns_count: int
    compaction: Optional[list[Any]]
    workspace_folders: list[str] = field(default_factory=list)
    """URIs of the workspace folders of the window that created the session; the first is its workspace."""
    usage: Usage = field(default_factory=Usage)
    """Cumulative over the session's chats (read only: computed from the chats)."""
    plan: list[dict[str, str]] = field(default_factory=list)
    """The latest plan ({content, status} each), empty when the agent made none."""


@dataclass
class ChatRecord:
    """One chat of a session: its user message is message `first_message`; how it ended and what it used."""

    first_message: int
    stop_reason: str
    duration_ms: int
    usage: Usage


@dataclass
class CheckpointRow:
    """One file as one chat of a session changed it (sessions/checkpoints.py FileChange, with its chat)."""

    chat: int
    path: str
    message: str
    label: str
    before: Optional[str]
    after: str
    hashes_only: bool = False


class StoreUnavailable(Exception):
    """The database exists but must not be written (a newer schema)."""


class Store:
    """Sessions, their messages (JSON, in order) and their tool calls' outcomes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5.0)
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:  # checked before anything is written, even the journal mode
            self._db.close()
            raise StoreUnavailable(f"schema {version}, newer than this agent-lsp's {SCHEMA_VERSION}")
        self._db.execute("PRAGMA journal_mode=WAL")
        # A commit is in the WAL file before it returns, so a killed or crashed process loses nothing; only the
        # WAL's fsync waits for checkpoints (a power loss may undo the last chats), not for each of the 3-4
        # commits of every chat (lease, messages, release), which cost more than the rest of a short chat.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._migrate(version)

    def _migrate(self, version: int) -> None:
        for target in range(version + 1, SCHEMA_VERSION + 1):  # each step atomic: a crash leaves a whole version
            self._db.executescript(f"BEGIN IMMEDIATE; {MIGRATIONS[target]}; PRAGMA user_version={target}; COMMIT;")

    def transaction(self):
        """`with store.transaction():` — one atomic write."""
        return _Transaction(self._db)

    def sessions(self, workspace: Optional[str] = None) -> list[SessionRow]:
        """Every session, newest first; with `workspace`, those whose window had that folder."""
        where, args = ("", ()) if workspace is None else (
            " WHERE EXISTS (SELECT 1 FROM json_each(s.workspace_folders) WHERE value = ?)", (workspace,))
        rows = self._db.execute(f"{_SELECT_SESSIONS}{where} GROUP BY s.id ORDER BY s.updated_at DESC, s.rowid DESC",
                                args).fetchall()
        return [_row(r) for r in rows]

    def session(self, session_id: str) -> Optional[SessionRow]:
        row = self._db.execute(f"{_SELECT_SESSIONS} WHERE s.id = ? GROUP BY s.id", (session_id,)).fetchone()
        return _row(row) if row else None

    def chats(self, session_id: str) -> list[ChatRecord]:
        """The session's chats, oldest first."""
        rows = self._db.execute(f"SELECT first_message, stop_reason, duration_ms, {_USAGE_COLUMNS} FROM chats "
                                "WHERE session_id = ? ORDER BY first_message", (session_id,))
        return [ChatRecord(first_message=r[0], stop_reason=r[1], duration_ms=r[2], usage=_usage(r[3:]))
                for r in rows]

    def messages(self, session_id: str) -> list[str]:
        """The session's messages as stored (JSON), oldest first."""
        rows = self._db.execute("SELECT body FROM messages WHERE session_id = ? ORDER BY position", (session_id,))
        return [r[0] for r in rows]

    def tool_calls(self, session_id: str) -> dict[str, dict[str, Any]]:
        rows = self._db.execute("SELECT tool_call_id, record FROM tool_calls WHERE session_id = ?", (session_id,))
        return {r[0]: json.loads(r[1]) for r in rows}

    def checkpoints(self, session_id: str) -> list[CheckpointRow]:
        """The session's checkpoints, oldest chat first."""
        rows = self._db.execute("SELECT chat, path, message, label, before, after, hashes_only FROM checkpoints "
                                "WHERE session_id = ? ORDER BY chat, rowid", (session_id,))
        return [CheckpointRow(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]

    def create(self, row: SessionRow) -> None:
        folders = row.workspace_folders
        self._db.execute("INSERT INTO sessions (id, title, created_at, updated_at, turns_count, workspace, "
                         "workspace_folders) VALUES (?,?,?,?,?,?,?)",
                         (row.id, row.title, row.created_at, row.updated_at, row.turns_count,
                          folders[0] if folders else None, json.dumps(folders)))

    def save(self, row: SessionRow, first_position: int, bodies: list[str], tool_calls: dict[str, dict],
             chats: tuple[ChatRecord, ...] = (), checkpoints: tuple[CheckpointRow, ...] = (),
             reverted: tuple[tuple[int, str], ...] = ()) -> bool:
        """Append messages from `first_position`, record `chats` and `checkpoints`, forget the (chat, path)
        checkpoints `reverted`, and update the session, in one transaction.
        Appends never overwrite: when the store already holds messages at those positions (another process wrote
        them), ours go after them, and False says the caller's copy is no longer the stored history."""
        with self.transaction():
            (end,) = self._db.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM messages WHERE session_id = ?",
                                      (row.id,)).fetchone()
            in_step = end == first_position
            self._db.execute("UPDATE sessions SET title=?, updated_at=?, turns_count=?, compaction=?, plan=? WHERE id=?",
                             (row.title, row.updated_at, row.turns_count,
                              json.dumps(row.compaction) if row.compaction else None,
                              json.dumps(row.plan) if row.plan else None, row.id))
            self._db.executemany("INSERT INTO messages (session_id, position, body) VALUES (?,?,?)",
                                 [(row.id, end + i, b) for i, b in enumerate(bodies)])
            self._db.executemany("INSERT OR REPLACE INTO tool_calls (session_id, tool_call_id, record) VALUES (?,?,?)",
                                 [(row.id, k, json.dumps(v)) for k, v in tool_calls.items()])
            self._db.executemany(f"INSERT OR REPLACE INTO chats (session_id, first_message, stop_reason, duration_ms, "
                                 f"{_USAGE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                                 [(row.id, c.first_message + end - first_position, c.stop_reason, c.duration_ms, c.usage.input_tokens,
                                   c.usage.output_tokens, c.usage.cache_read_input_tokens,
                                   c.usage.cache_creation_input_tokens) for c in chats])
            self._db.executemany("INSERT OR REPLACE INTO checkpoints (session_id, chat, path, message, label, before, "
                                 "after, hashes_only) VALUES (?,?,?,?,?,?,?,?)",
                                 [(row.id, c.chat, c.path, c.message, c.label, c.before, c.after, int(c.hashes_only))
                                  for c in checkpoints])
            self._db.executemany("DELETE FROM checkpoints WHERE session_id = ? AND chat = ? AND path = ?",
                                 [(row.id, chat, path) for chat, path in reverted])
        return in_step

    def acquire(self, session_id: str, owner: str, ttl: float) -> Optional[int]:
        """Take the session's lease for `owner` (this process); the pid of the live process that holds it
        otherwise. A lease whose process is gone, or whose heartbeat is older than `ttl` seconds, is taken over."""
        host = socket.gethostname()
        now = time.time()
        with self.transaction():
            held = self._db.execute("SELECT owner, pid, host, heartbeat FROM leases WHERE session_id = ?",
                                    (session_id,)).fetchone()
            if held and held[0] != owner and now - held[3] < ttl and (held[2] != host or _alive(held[1])):
                return held[1]
            self._db.execute("INSERT OR REPLACE INTO leases (session_id, owner, pid, host, heartbeat) "
                             "VALUES (?,?,?,?,?)", (session_id, owner, os.getpid(), host, now))
        return None

    def heartbeat(self, owner: str) -> None:
        """Every lease of `owner` is alive."""
        self._db.execute("UPDATE leases SET heartbeat = ? WHERE owner = ?", (time.time(), owner))

    def release(self, session_id: str, owner: str) -> None:
        self._db.execute("DELETE FROM leases WHERE session_id = ? AND owner = ?", (session_id, owner))

    def delete(self, session_id: str) -> None:
        with self.transaction():
            self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self._db.execute("DELETE FROM leases WHERE session_id = ?", (session_id,))

    def close(self) -> None:
        self._db.close()


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, value, traceback) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _row(r: tuple) -> SessionRow:
    return SessionRow(id=r[0], title=r[1], created_at=r[2], updated_at=r[3], turns_count=r[4],
                      compaction=json.loads(r[5]) if r[5] else None, workspace_folders=json.loads(r[6] or "[]"),
                      plan=json.loads(r[7]) if r[7] else [], usage=_usage(r[8:12]))


def _usage(counts: tuple) -> Usage:
    return Usage(input_tokens=counts[0], output_tokens=counts[1], cache_read_input_tokens=counts[2],
                 cache_creation_input_tokens=counts[3])


def open_store(data_dir: Path) -> tuple[Optional[Store], Optional[str]]:
    """The store under `data_dir`, and a warning for the user when it could not be used as it was."""
    path = data_dir / "sessions.db"
    try:
        return Store(path), None
    except StoreUnavailable as e:
        return None, (f"agent-lsp: the session store {path} was written by a newer agent-lsp ({e}); it is left "
                      "untouched, and sessions are kept in memory only until agent-lsp is updated.")
    except sqlite3.DatabaseError as e:
        aside = path.with_name(f"sessions.db.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        try:
            store = Store(path)
        except sqlite3.Error as again:
            return None, f"agent-lsp: the session store {path} cannot be used ({again}); sessions stay in memory."
        return store, (f"agent-lsp: the session store {path} could not be read ({e}); it was moved aside to "
                       f"{aside} and a new one started.")
    except OSError as e:
        return None, f"agent-lsp: the session store {path} cannot be opened ({e}); sessions stay in memory."
