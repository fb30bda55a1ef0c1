"""A model request's opening under a time limit: an abort that lands as the answer arrives is never lost; the
wait a server asks for before a retry."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest

from agent_lsp.models.retry import NoAnswer, asked_wait, open_with_retries, retry_after


async def test_an_abort_landing_as_the_answer_arrives_still_aborts():
    answer = asyncio.get_running_loop().create_future()
    opening = asyncio.ensure_future(open_with_retries(lambda: answer, 10.0, lambda error, retry: None))
    await asyncio.sleep(0)  # the opening now waits for the answer
    answer.set_result("headers")
    opening.cancel()  # in the same turn of the loop: Python 3.11's wait_for returned "headers" here
    with pytest.raises(asyncio.CancelledError):
        await opening


async def test_no_answer_within_the_time_is_no_answer():
    never = asyncio.get_running_loop().create_future()
    with pytest.raises(NoAnswer, match="no answer within 0.2 s"):
        await open_with_retries(lambda: never, 0.2, lambda error, retry: None)
    assert never.cancelled()


def test_the_wait_a_server_asks_for():
    soon = formatdate(time.time() + 30, usegmt=True)
    assert 28 <= asked_wait({"retry-after": soon}) <= 30  # an HTTP date (RFC 9110), to the second
    assert asked_wait({"retry-after": formatdate(time.time() - 60, usegmt=True)}) == 0.0  # past: now
    assert asked_wait({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert [asked_wait({"retry-after": v}) for v in ("7", "0", "-1", "nan", "inf", "soon", "")] == [
        7.0, 0.0, None, None, None, None, None]
    assert asked_wait({}) is None
    assert retry_after({"retry-after": "60"}, 0) == 60.0
    assert retry_after({"retry-after": "61"}, 0) is None  # more than a chat waits: not asked again
    assert 0.375 <= retry_after({"retry-after": "soon"}, 0) <= 0.5  # unreadable: the backoff


def test_a_certificate_that_does_not_verify_is_never_retried_a_dropped_connection_is():
    import ssl

    import anthropic
    import httpx2

    from agent_lsp.models.retry import sdk_delay

    request = httpx2.Request("POST", "https://models.example/v1/messages")

    def connection_error(cause: BaseException) -> BaseException:
        try:
            raise anthropic.APIConnectionError(request=request) from cause
        except anthropic.APIConnectionError as error:
            return error

    refused = ssl.SSLCertVerificationError(1, "certificate verify failed: self-signed certificate")
    assert sdk_delay(anthropic, connection_error(refused), 0) is None
    dropped = sdk_delay(anthropic, connection_error(ConnectionResetError("reset by peer")), 0)
    assert dropped is not None and 0.375 <= dropped <= 0.5
