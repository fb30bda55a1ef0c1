"""One conversation: its transcript and records (what the store keeps), and what only this process knows of it
(its seq, the chat running in it, its standing answers and the preferences its front end set)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from agent_lsp.core.events import Usage
from agent_lsp.core.messages import Message, UserMessage
from agent_lsp.sessions.checkpoints import Checkpoint
from agent_lsp.sessions.permissions import Grants
from agent_lsp.sessions.store import ChatRecord, SessionRow


def now() -> str:
    """The time as sessions record it: UTC, ISO 8601 with milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def title_of(text: str) -> str:
    """A session title: whitespace folded, at most 120 characters."""
    return " ".join(text.split())[:120]


@dataclass
class Preferences:
    """What a front end chose for the session's next chats (ACP's session mode, model picker and MCP servers,
    its working directory); None: the settings decide."""

    permission_mode: Optional[str] = None
    model: Optional[str] = None
    mcp_servers: Optional[dict[str, Any]] = None
    """MCP servers the client gave for the session (checked), besides those of the settings."""
    cwd: Optional[Path] = None

    def chat_settings(self) -> dict[str, Any]:
        """The preferences as a chat's own settings."""
        return {"permission_mode": self.permission_mode, "model": self.model, "mcp_servers": self.mcp_servers}


@dataclass
class Session:
    """One conversation."""

    id: str
    title: str
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)
    history: list[Message] = field(default_factory=list)
    turns_count: int = 0
    seq: int = 0
    busy: bool = False
    task: Optional[asyncio.Task] = None
    grants: Grants = field(default_factory=Grants)
    pending: dict[str, asyncio.Future] = field(default_factory=dict)
    """Confirmations awaiting agent/confirmTool, by toolCallId."""
    preferences: Preferences = field(default_factory=Preferences)
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


PROCESS_ONLY = frozenset({"seq", "busy", "task", "grants", "pending", "preferences"})
"""Session fields that are this process's own, kept when the session is reloaded from the store."""
KEPT_WHEN_EVICTED = ("seq", "grants", "preferences")
"""What only this process knows of an idle session, kept while it is out of memory."""
