"""A model request's opening under a time limit: an abort that lands as the answer arrives is never lost."""

from __future__ import annotations

import asyncio

import pytest

from agent_lsp.models.retry import NoAnswer, open_with_retries


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
