"""Waiting for a condition, the one way every test does: poll it until it holds, with a ceiling that only a hang
reaches (never a measure of speed)."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Awaitable, Callable, TypeVar, Union

T = TypeVar("T")

CEILING = 60.0
"""A last resort for a loaded machine: a condition still false after this long is a hang."""
EVERY = 0.01


async def until(predicate: Callable[[], Union[T, Awaitable[T]]], timeout: float = CEILING,
                what: str = "the condition", every: float = EVERY) -> T:
    """Wait until `predicate()` (awaited when it returns an awaitable) is truthy, and return it; TimeoutError
    after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value: Any = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError(f"waited {timeout:g} s for {what}")
        await asyncio.sleep(every)


def until_blocking(predicate: Callable[[], T], timeout: float = CEILING, what: str = "the condition",
                   every: float = EVERY) -> T:
    """`until` for code with no event loop (a driver of a terminal program): the thread sleeps between looks."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g} s for {what}")
        time.sleep(every)
    return value


async def holds_within(predicate: Callable[[], Any], timeout: float = CEILING) -> bool:
    """Whether `predicate()` comes to hold within `timeout` seconds (for a test that records a problem and goes
    on)."""
    try:
        await until(predicate, timeout)
    except TimeoutError:
        return False
    return True
