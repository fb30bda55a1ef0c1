"""A model endpoint that speaks HTTP/2 (as api.anthropic.com and api.openai.com do): the real server as a
subprocess, the real SDKs over TLS to tests/fakes/h2_front.py in front of the fake models, for the Messages API and
FIM. Suggestions cancelled or superseded reset their stream and keep the one connection; a chat after suggestions
shares it; a GOAWAY between requests or mid-answer costs a new connection, never a crash or a hang. Whole counts
asserted: connections accepted, streams, streams reset, the requests the fake saw closed."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Optional

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from tests.e2e.conftest import chat, open_doc, openai_env, server_env, text
from tests.e2e.test_inline_completion import (  # noqa: F401 (lsp: the fixture, on this module's backend)
    COMPLETION, FIM_MODEL, ONLY_ANTHROPIC, Backend, item, lsp, params_at, stats, suggest, warnings_of)
from tests.fakes.certificate import made
from tests.fakes.h2_front import H2Front
from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.waiting import until


@dataclass
class OverH2(Backend):
    front: Optional[H2Front] = None


@pytest.fixture(params=["anthropic", "fim"])
def backend(request, fake_api, tmp_path):
    cert = made(tmp_path / "cert")
    trusted = {"SSL_CERT_FILE": str(cert.authority)}  # the server's process alone trusts the run's certificate
    fake = fake_api if request.param == "anthropic" else FakeLegacyCompletions().start()
    front = H2Front(fake.httpd.server_address[1], cert)
    if request.param == "anthropic":
        yield OverH2("anthropic", fake, server_env(front.url(), **trusted), {}, front)
    else:
        yield OverH2("fim", fake, openai_env(front.url("/v1"), **trusted),
                     {"completions": {"api": "fim", "model": FIM_MODEL}}, front)
        fake.stop()
    front.stop()


async def test_cancelled_and_superseded_suggestions_keep_one_connection(lsp, backend, workspace):
    fake, front = backend.fake, backend.front
    resume = threading.Event()
    fake.add(backend.says("1"))
    for _ in range(3):  # cancelled before the answer began
        fake.add({"hold": True})
    fake.add(backend.says_in_part("2", resume))  # cancelled in the middle of the answer
    for _ in range(3):  # superseded by a request at another place, which is answered
        fake.add({"hold": True}, backend.says("3"))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "".join(f"x{n} = \n" for n in range(11)))  # a line each
    assert await suggest(client, uri, 0, 5) == {"items": [item("1", 0, 5, 1)]}
    for n in range(4):
        request = asyncio.wrap_future(client.protocol.send_request(COMPLETION, params_at(uri, 1 + n, 5),
                                                                   msg_id=f"c{n}"))
        await until(lambda: len(fake.requests) == 2 + n)
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=f"c{n}"))
        with pytest.raises(JsonRpcRequestCancelled):
            await request
        await until(lambda: front.resets == 1 + n)
    resume.set()
    for n in range(3):
        first = asyncio.ensure_future(suggest(client, uri, 5 + n, 5))
        await until(lambda: len(fake.requests) == 6 + 2 * n)
        second = await suggest(client, uri, 8 + n, 5)
        assert await first == {"items": []}
        assert second == {"items": [item("3", 8 + n, 5, 2 + n)]}
        await until(lambda: front.resets == 5 + n)
    await until(lambda: len(fake.disconnects) == 7)
    assert (front.connections, front.streams, front.resets) == (1, 11, 7)
    assert fake.disconnects == [2, 3, 4, 5, 6, 8, 10]  # every model call left, seen closed by the model
    counts = await stats(client)
    assert (counts["requests"], counts["modelCalls"], counts["cancelled"]) == (11, 11, 7)
    assert warnings_of(client) == []


@ONLY_ANTHROPIC
async def test_a_chat_after_suggestions_shares_their_connection(lsp, backend, workspace):
    fake, front = backend.fake, backend.front
    fake.add(backend.says("1"), backend.says("2"), text("Hello there."))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = \nb = \n")
    assert await suggest(client, uri, 0, 4) == {"items": [item("1", 0, 4, 1)]}
    assert await suggest(client, uri, 1, 4) == {"items": [item("2", 1, 4, 2)]}
    answer = await chat(client, "hi")
    assert answer["stopReason"] == "end_turn"
    assert (front.connections, front.streams, front.resets, len(fake.requests)) == (1, 3, 0, 3)


async def test_goaway_between_requests_and_mid_answer_costs_a_connection_never_a_suggestion_lost(
        lsp, backend, workspace):
    fake, front = backend.fake, backend.front
    fake.add(backend.says("1"), backend.says("2"), backend.says("3 and more"), backend.says("4"))
    client = await lsp.start()
    uri = open_doc(client, workspace / "app.py", "a = \nb = \nc = \nd = \n")
    assert await suggest(client, uri, 0, 4) == {"items": [item("1", 0, 4, 1)]}
    front.goaway()  # between requests: the next one finds the connection gone and opens another
    assert await suggest(client, uri, 1, 4) == {"items": [item("2", 1, 4, 2)]}
    assert front.connections == 2
    front.goaway_after_data = 1  # mid-answer: the stream is cut, no item, said once
    assert await suggest(client, uri, 2, 4) == {"items": []}
    assert await suggest(client, uri, 3, 4) == {"items": [item("4", 3, 4, 3)]}
    assert (front.connections, front.streams, len(fake.requests)) == (3, 4, 4)
    url = front.url("/v1/messages" if backend.kind == "anthropic" else "/v1/completions")
    ended = "the endpoint ended its HTTP/2 connection (GOAWAY, NO_ERROR); the next request opens a new one"
    assert warnings_of(client) == [f"agent-lsp: no suggestions: The model stream from {url} " + (
        f"failed: {ended}" if backend.kind == "anthropic" else f"broke off after 1 chunk ({ended}).")]
