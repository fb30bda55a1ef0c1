"""The store refuses nothing silently: newer schemas are left alone, unreadable files are moved aside."""

from __future__ import annotations

import sqlite3

from agent_lsp.sessions.store import SCHEMA_VERSION, SessionRow, open_store


def test_round_trip_and_reopen(tmp_path):
    store, warning = open_store(tmp_path)
    assert warning is None
    store.create(SessionRow("s1", "title", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", 0, None))
    store.save(SessionRow("s1", "title", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", 2, [1, "summary"]), 0,
               ['{"kind": "user", "text": "hi"}'], {"t1": {"status": "completed"}})
    store.close()
    store, _ = open_store(tmp_path)
    assert store.sessions() == [SessionRow("s1", "title", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", 2,
                                           [1, "summary"])]
    assert store.messages("s1") == ['{"kind": "user", "text": "hi"}']
    assert store.tool_calls("s1") == {"t1": {"status": "completed"}}
    store.delete("s1")
    assert store.sessions() == [] and store.messages("s1") == []


def test_a_newer_schema_is_left_untouched(tmp_path):
    db = sqlite3.connect(tmp_path / "sessions.db")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    before = (tmp_path / "sessions.db").read_bytes()
    store, warning = open_store(tmp_path)
    assert store is None and "written by a newer agent-lsp" in warning and "in memory" in warning
    assert (tmp_path / "sessions.db").read_bytes() == before


def test_an_unreadable_file_is_moved_aside(tmp_path):
    (tmp_path / "sessions.db").write_bytes(b"garbage" * 200)
    store, warning = open_store(tmp_path)
    assert store is not None and "moved aside" in warning
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("sessions.db.unreadable-")]
    assert aside.read_bytes() == b"garbage" * 200


def test_checkpoints_are_committed_with_the_chat_forgotten_when_reverted_and_pruned_with_the_session(tmp_path):
    from agent_lsp.sessions.store import CheckpointRow

    store, _ = open_store(tmp_path)
    row = SessionRow("s1", "t", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", 0, None)
    store.create(row)
    one = CheckpointRow(0, "/w/a.py", "first", "agent-lsp: edit a.py", "x = 1\n", "x = 2\n")
    two = CheckpointRow(1, "/w/big.txt", "second", "agent-lsp: edit big.txt", "ab" * 32, "cd" * 32, True)
    new = CheckpointRow(1, "/w/new.py", "second", "agent-lsp: write new.py", None, "y\n")
    store.save(row, 0, [], {}, checkpoints=(one,))
    store.save(row, 0, [], {}, checkpoints=(two, new))
    store.close()
    store, _ = open_store(tmp_path)
    assert store.checkpoints("s1") == [one, two, new]
    store.save(row, 0, [], {}, reverted=((1, "/w/new.py"),))
    assert store.checkpoints("s1") == [one, two]
    store.delete("s1")
    assert store._db.execute("SELECT COUNT(*) FROM checkpoints").fetchone() == (0,)
