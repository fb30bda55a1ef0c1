"""Model calls keep their connection warm (agent_lsp/models/clients.py): the real `openai` SDK against the fake
legacy completions API (HTTP/1.1 with keep-alive, as real endpoints speak it), counting the connections it accepts;
and over HTTP/2 (tests/fakes/h2_front.py in front of it), counting the streams reset."""

from __future__ import annotations

import asyncio
import threading
from typing import Optional

import pytest

from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.models import clients
from agent_lsp.completions.providers.openai import OpenAICompleter
from tests.fakes.certificate import made
from tests.fakes.h2_front import H2Front
from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.waiting import until

PROMPT = CompletionPrompt(path="a.py", language_id="python", prefix="def f():\n    ", suffix="\n")


@pytest.fixture
def fake():
    clients.forget("openai")
    clients._HTTP.clear()  # the process's HTTP clients belong to one event loop: each test's own
    api = FakeLegacyCompletions().start()
    yield api
    api.stop()
    clients.forget("openai")
    clients._HTTP.clear()


async def _ask(completer: OpenAICompleter, stop_after: int = 0, said: Optional[list[str]] = None) -> str:
    """One suggestion's model call, left after `stop_after` pieces (0: read to its finish reason); each piece in
    `said` as it comes."""
    said = [] if said is None else said
    answer = completer.complete(PROMPT)
    try:
        async for text in answer:
            said.append(text)
            if len(said) == stop_after:
                break
    finally:
        await answer.aclose()
    return "".join(said)


async def test_calls_left_at_their_finish_reason_or_early_share_one_connection(fake):
    fake.default = {"text": "return sum(values) / len(values)"}
    completer = OpenAICompleter("fim-test", fake.api_url, "key", "fim", 5.0)
    said = []
    for n in range(6):
        said.append(await _ask(completer, stop_after=n % 2 * 2))
        await until(lambda: not clients._DRAINING)  # the rest read (a keystroke's time): the connection is free
    assert said == ["return sum(values) / len(values)", "return sum(values) "] * 3
    assert (len(fake.requests), fake.httpd.connections, fake.disconnects) == (6, 1, [])


async def test_a_call_cancelled_mid_read_keeps_its_connection(fake):
    resume = threading.Event()
    fake.default = {"text": "one two three", "pause_at": 2, "resume": resume}
    completer = OpenAICompleter("fim-test", fake.api_url, "key", "fim", 5.0)
    said: list[str] = []
    task = asyncio.ensure_future(_ask(completer, said=said))
    await until(lambda: said == ["one ", "two "])
    await asyncio.sleep(0)  # the task is back in the SDK's read, waiting for the third piece
    task.cancel()  # as a superseded suggestion's task is: inside the SDK's read
    resume.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: not clients._DRAINING)
    fake.default = {"text": "again"}
    assert await _ask(completer) == "again"
    assert (fake.httpd.connections, fake.disconnects) == (1, [])


async def test_a_rest_that_does_not_end_is_cut_and_the_next_call_connects_anew(fake):
    fake.default = {"text": "one two", "hang": True}  # after its text, the stream stays open
    completer = OpenAICompleter("fim-test", fake.api_url, "key", "fim", 5.0)
    assert await _ask(completer, stop_after=1) == "one "
    await until(lambda: fake.disconnects)  # closed after REST_SECONDS, not kept forever
    fake.default = {"text": "fresh"}
    assert await _ask(completer) == "fresh"
    assert (fake.httpd.connections, fake.disconnects) == (2, [1])


async def test_over_http2_a_call_left_or_cancelled_early_resets_its_stream_and_keeps_the_connection(
        fake, tmp_path, monkeypatch):
    cert = made(tmp_path / "cert")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert.authority))  # read when the HTTP client is made
    front = H2Front(fake.httpd.server_address[1], cert)
    try:
        completer = OpenAICompleter("fim-test", front.url("/v1"), "key", "fim", 5.0)
        fake.default = {"text": "one two three", "pause_at": 2, "resume": threading.Event()}  # never set
        assert await _ask(completer, stop_after=1) == "one "  # left while the answer is still coming
        await until(lambda: front.resets == 1)
        said: list[str] = []
        task = asyncio.ensure_future(_ask(completer, said=said))
        await until(lambda: said == ["one ", "two "])
        task.cancel()  # inside the SDK's read, as a superseded suggestion's task is
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(lambda: front.resets == 2)
        fake.default = {"text": "again"}
        assert await _ask(completer) == "again"
        await until(lambda: len(fake.disconnects) == 2)
        assert (front.connections, front.streams, front.resets, fake.disconnects) == (1, 3, 2, [1, 2])
    finally:
        front.stop()
