"""Store version 2: sessions' workspace folders and per-chat records; a version 1 database migrates forward."""

from __future__ import annotations

import json
import sqlite3

from agent_lsp.core.events import Usage
from agent_lsp.core.messages import AssistantMessage, TextPart, UserMessage
from agent_lsp.sessions.history import render_history
from agent_lsp.sessions.store import MIGRATIONS, SCHEMA_VERSION, ChatRecord, SessionRow, open_store

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"


def test_a_version_1_database_migrates_forward_and_keeps_its_sessions(tmp_path):
    db = sqlite3.connect(tmp_path / "sessions.db")
    db.executescript(MIGRATIONS[1])
    db.execute("INSERT INTO sessions (id, title, created_at, updated_at, turns_count) VALUES ('old', 'Old', ?, ?, 1)",
               (T0, T1))
    db.execute("INSERT INTO messages VALUES ('old', 0, ?)", (json.dumps({"kind": "user", "text": "hi"}),))
    db.execute("INSERT INTO tool_calls VALUES ('old', 't1', '{\"status\": \"completed\"}')")
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()

    store, warning = open_store(tmp_path)
    assert warning is None and SCHEMA_VERSION >= 2
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.sessions() == [SessionRow("old", "Old", T0, T1, 1, None, [], Usage())]
    assert store.sessions("file:///ws") == []  # a session from before folders were recorded has none
    assert store.messages("old") == [json.dumps({"kind": "user", "text": "hi"})]
    assert store.tool_calls("old") == {"t1": {"status": "completed"}} and store.chats("old") == []
    chat = ChatRecord(first_message=1, stop_reason="end_turn", duration_ms=12, usage=Usage(input_tokens=3))
    store.save(SessionRow("old", "Old", T0, T1, 2, None), 1, ['{"kind": "user", "text": "again"}'], {}, (chat,))
    assert store.chats("old") == [chat] and store.session("old").usage == Usage(input_tokens=3)


def test_sessions_are_filtered_by_any_of_their_folders_and_sum_their_chats(tmp_path):
    store, _ = open_store(tmp_path)
    store.create(SessionRow("a", "A", T0, T0, 0, None, ["file:///one", "file:///shared"]))
    store.create(SessionRow("b", "B", T0, T1, 0, None, ["file:///two"]))
    chats = (ChatRecord(0, "aborted", 5, Usage(input_tokens=10, output_tokens=1, cache_read_input_tokens=2)),
             ChatRecord(2, "end_turn", 7, Usage(input_tokens=20, output_tokens=4, cache_creation_input_tokens=6)))
    store.save(SessionRow("a", "A", T0, T0, 2, None, ["file:///one", "file:///shared"]), 0, [], {}, chats)
    assert [r.id for r in store.sessions()] == ["b", "a"]
    (a,) = store.sessions("file:///shared")
    assert (a.id, a.workspace_folders) == ("a", ["file:///one", "file:///shared"])
    assert a.usage == Usage(input_tokens=30, output_tokens=5, cache_read_input_tokens=2, cache_creation_input_tokens=6)
    assert [r.id for r in store.sessions("file:///two")] == ["b"] and store.session("b").usage == Usage()
    store.delete("a")
    assert store.chats("a") == []


def test_each_assistant_message_carries_its_chats_record():
    history = [UserMessage(text="one"), AssistantMessage(parts=[TextPart(text="A1")]),
               AssistantMessage(parts=[TextPart(text="A2")]), UserMessage(text="two"),
               AssistantMessage(parts=[TextPart(text="B")]), UserMessage(text="three"),
               AssistantMessage(parts=[TextPart(text="C")])]
    chats = [ChatRecord(3, "aborted", 40, Usage(output_tokens=2)), ChatRecord(5, "end_turn", 50, Usage())]
    rendered = [(m.content, m.stop_reason, m.duration_ms, m.usage.output_tokens if m.usage else None)
                for m in render_history(history, {}, {}, chats)]
    # the first chat predates chat records (a migrated session): no usage for it
    assert rendered == [("one", None, None, None), ("A1", None, None, None), ("A2", None, None, None),
                        ("two", None, None, None), ("B", "aborted", 40, 2), ("three", None, None, None),
                        ("C", "end_turn", 50, 0)]
