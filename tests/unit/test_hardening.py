"""The pieces behind the reliability findings, one by one: frames, params checks, tool input, env, leases."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from agent_lsp.core.calls import unique_ids
from agent_lsp.core.messages import ToolUsePart
from agent_lsp.lsp.wire import MAX_FRAME_BYTES, params_problem, parse_frames
from agent_lsp.sessions.store import SessionRow, Store
from agent_lsp.processes import command_env


def frames(data: bytes) -> tuple[list[bytes], list[int]]:
    bodies, too_large = [], []
    stream = io.BytesIO(data)
    parse_frames(stream.readline, stream.read, bodies.append, too_large.append)
    return bodies, too_large


def test_frames_resynchronise_after_a_cut_body_and_skip_absurd_lengths():
    good = b'{"a":1}'
    data = (b"Content-Length: 20\r\n\r\n" + b'{"cut' + b"Content-Length: 7\r\n\r\n" + good
            + b"Content-Length: %d\r\n\r\n" % (2**64) + b"Content-Length: 7\r\n\r\n" + good)
    bodies, too_large = frames(data)
    assert bodies[-1] == good and too_large == [2**64] and MAX_FRAME_BYTES < 2**64


def test_params_problems_name_the_field():
    assert params_problem({"message": "a\ud800"}) == ("message", "contains a lone UTF-16 surrogate (not valid Unicode)")
    assert params_problem({"context": {"uris": ["ok", "\udfff"]}})[0] == "context.uris[1]"
    deep: list = []
    for _ in range(100):
        deep = [deep]
    assert params_problem({"x": deep})[1].startswith("nested deeper")
    assert params_problem(5) == ("params", "must be an object or an array")
    assert params_problem({"message": "fine 😀"}) is None


def test_tool_input_that_is_not_an_object_becomes_an_input_error():
    for raw in (["a"], "a", 7):
        use = ToolUsePart(id="t", name="read_file", input=raw)
        assert use.input == {} and "must be a JSON object" in use.input_error


def test_repeated_tool_ids_of_one_reply_are_made_distinct_and_not_run():
    parts = unique_ids([ToolUsePart(id="t", name="a"), ToolUsePart(id="t", name="b"), ToolUsePart(id="t", name="c")])
    assert [p.id for p in parts] == ["t", "t_dup2", "t_dup3"]
    assert parts[0].input_error is None and all("repeated the id" in p.input_error for p in parts[1:])


def test_commands_run_without_provider_keys_and_listed_secrets():
    env = {"PATH": "/bin", "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "u", "OPENAI_API_KEY": "k",
           "GITHUB_TOKEN": "t", "my_db_password": "p", "AWS_SECRET_ACCESS_KEY": "s", "CORP_VAULT": "v", "HOME": "/h"}
    assert command_env(env, ("CORP_*",)) == {"PATH": "/bin", "HOME": "/h"}


def test_leases_one_owner_at_a_time_and_a_dead_owner_is_taken_over(tmp_path):
    store = Store(tmp_path / "s.db")
    store.create(SessionRow("s1", "t", "a", "a", 0, None))
    assert store.acquire("s1", "me", ttl=30) is None
    assert store.acquire("s1", "me", ttl=30) is None  # re-entrant for the holder
    other = Store(tmp_path / "s.db")
    assert other.acquire("s1", "you", ttl=30) == os.getpid()  # a live holder: busy, naming its pid
    store.release("s1", "me")
    assert other.acquire("s1", "you", ttl=30) is None
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    other._db.execute("UPDATE leases SET pid = ?", (pid,))
    assert store.acquire("s1", "me", ttl=30) is None  # its process is gone


def test_appends_never_overwrite(tmp_path):
    store = Store(tmp_path / "s.db")
    row = SessionRow("s1", "t", "a", "a", 0, None)
    store.create(row)
    assert store.save(row, 0, ['"a"', '"b"'], {}) is True
    assert store.save(row, 0, ['"c"'], {}) is False  # another process wrote positions 0-1 meanwhile
    assert store.messages("s1") == ['"a"', '"b"', '"c"']
