"""Sessions not in use leave memory when a store keeps them, and come back whole on demand."""

from __future__ import annotations

from agent_lsp.sessions.live import MAX_IDLE_SESSIONS, Sessions
from agent_lsp.sessions.store import Store


def test_idle_sessions_are_evicted_and_reloaded_from_the_store(tmp_path):
    sessions = Sessions(Store(tmp_path / "s.db"))
    started = [sessions.start("chat 0")]
    started[0].grants.allowed.add("run_command")
    started[0].seq = 7
    started += [sessions.start(f"chat {n}") for n in range(1, MAX_IDLE_SESSIONS + 4)]
    for session in started[1:]:
        sessions.release(session)
    assert len(sessions._sessions) == MAX_IDLE_SESSIONS
    again = sessions.get(started[0].id)
    assert again is not started[0] and again.title == "chat 0"
    assert again.seq == 7 and again.grants.allowed == {"run_command"}
    assert sessions.get(started[0].id) is again  # the oldest, yet the one asked for stays
    no_store = Sessions()
    for n in range(MAX_IDLE_SESSIONS + 4):
        no_store.release(no_store.start(str(n)))
    assert len(no_store._sessions) == MAX_IDLE_SESSIONS + 4
