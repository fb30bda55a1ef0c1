"""A model endpoint that accepts the request and never answers costs one readTimeout, one request, and a message
that says so; retries are kept to answers worth retrying (5xx, 429, a refused connection), within one deadline.

Both providers, through the real server and the real SDKs against the fakes. No timed asserts: the request count
proves that nothing was retried, and the message proves which timeout ended the chat.
"""

from __future__ import annotations

import socket

import pytest

from tests.e2e.conftest import openai_env, text
from tests.fakes.chat_completions import FakeChatCompletions
from tests.reliability.conftest import OK_REPLY, tally

HOLD = {"hold": True}
"""The fake reads the request and sends nothing (no status line, no headers) until the client closes."""


@pytest.fixture
def chat_api():
    fake = FakeChatCompletions().start()
    yield fake
    fake.stop()


def server_500(kind: str = "api_error") -> dict:
    return {"status": 500, "error": {"type": kind, "message": "boom"}, "headers": {"retry-after-ms": "10"}}


async def chat(server, message: str) -> dict:
    answer = await server.request("agent/chat", {"message": message})
    return answer["result"]


async def test_anthropic_a_server_that_never_answers_ends_the_chat_after_one_request(start_server, fake_api):
    fake_api.script[:] = [HOLD, OK_REPLY]
    server = await start_server(init_options={"readTimeout": 2})
    result = await chat(server, "hello?")
    url = f"{fake_api.base_url}/v1/messages"
    assert (result["stopReason"], result["error"]) == ("error", {
        "type": "llm_error", "message": f"No response from {url} within 2 s (the readTimeout setting)."})
    assert len(fake_api.requests) == 1
    assert (await chat(server, "again"))["stopReason"] == "end_turn"  # the session goes on
    assert len(fake_api.requests) == 2
    tally("model faults (anthropic SDK)", cases=1)


async def test_anthropic_5xx_is_retried_then_a_stall_after_it_is_not(start_server, fake_api):
    fake_api.script[:] = [server_500(), OK_REPLY, server_500(), HOLD, OK_REPLY]
    server = await start_server(init_options={"readTimeout": 2})
    assert (await chat(server, "one"))["stopReason"] == "end_turn"
    assert len(fake_api.requests) == 2
    result = await chat(server, "two")
    assert result["stopReason"] == "error"
    assert result["error"]["message"].startswith(f"No response from {fake_api.base_url}/v1/messages within ")
    assert result["error"]["message"].endswith("s (the readTimeout setting, after 1 failed attempt).")
    assert len(fake_api.requests) == 4
    tally("model faults (anthropic SDK)", cases=2)


@pytest.fixture
async def openai_server(start_server, chat_api):
    async def start(**init):
        return await start_server(init_options=init, env=openai_env(chat_api.api_url))
    return start


async def test_openai_a_server_that_never_answers_ends_the_chat_after_one_request(openai_server, chat_api):
    chat_api.script[:] = [HOLD, text("ok")]
    server = await openai_server(readTimeout=2)
    result = await chat(server, "hello?")
    url = f"{chat_api.api_url}/chat/completions"
    assert (result["stopReason"], result["error"]) == ("error", {
        "type": "llm_error", "message": f"No response from {url} within 2 s (the readTimeout setting)."})
    assert len(chat_api.requests) == 1
    assert (await chat(server, "again"))["stopReason"] == "end_turn"
    tally("model faults (openai SDK)", cases=1)


async def test_openai_a_stall_mid_stream_is_one_read_timeout(openai_server, chat_api):
    chat_api.script[:] = [text("one two three four", delay=4), text("ok")]
    server = await openai_server(readTimeout=1)
    result = await chat(server, "slow")
    assert result["stopReason"] == "error" and result["error"]["message"] == (
        f"The model stream from {chat_api.api_url}/chat/completions stalled: nothing arrived for 1 s "
        "(the readTimeout setting).")
    assert len(chat_api.requests) == 1
    tally("model faults (openai SDK)", cases=1)


async def test_openai_retries_5xx_and_429_but_not_400(openai_server, chat_api):
    rate = {"status": 429, "error": {"type": "rate_limit_error", "message": "slow down"},
            "headers": {"retry-after": "0"}}
    bad = {"status": 400, "error": {"type": "invalid_request_error", "message": "no"}}
    chat_api.script[:] = [server_500(), rate, text("ok"), bad, server_500(), server_500(), server_500()]
    server = await openai_server(readTimeout=5)
    assert (await chat(server, "one"))["stopReason"] == "end_turn"
    assert len(chat_api.requests) == 3
    assert (await chat(server, "two"))["error"]["message"] == "400: no"
    assert len(chat_api.requests) == 4
    assert (await chat(server, "three"))["error"]["message"] == "500: boom"
    assert len(chat_api.requests) == 7  # the first try and two retries
    tally("model faults (openai SDK)", cases=3)


async def test_a_refused_connection_is_retried_and_then_named(openai_server, chat_api):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = await openai_server(readTimeout=2, baseUrl=f"http://127.0.0.1:{port}/v1")
    result = await chat(server, "anyone?")
    assert result["stopReason"] == "error"
    assert result["error"]["message"].startswith(
        f"Could not reach the model API at http://127.0.0.1:{port}/v1/chat/completions (")
    tally("model faults (openai SDK)", cases=1)
