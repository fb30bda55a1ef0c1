"""When a model request is sent again: only for an answer worth retrying (429, 408, 409, 5xx, or the connection
refused or dropped before any answer), never after a timeout or a certificate that does not verify, at most twice, and
all within one deadline.

The SDKs' own retries are off (`max_retries=0`): they retry a timeout too, so a server that accepts the connection
and never answers held a chat for three readTimeouts.
"""

from __future__ import annotations

import asyncio
import random
import ssl
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Awaitable, Callable, Optional, TypeVar

T = TypeVar("T")

MAX_RETRIES = 2
GRACE = 5.0
"""The deadline of a request's answer, over all its attempts: readTimeout + GRACE seconds from the first."""
MIN_ATTEMPT = 1.0
"""A retry is only sent when at least this long is left before the deadline for its answer."""
MAX_RETRY_AFTER = 60.0


class NoAnswer(Exception):
    """No response headers within `waited` seconds (the attempt's share of the deadline)."""

    def __init__(self, waited: float, attempts: int) -> None:
        super().__init__(f"no answer within {round(waited, 1):g} s")
        self.waited = waited
        self.attempts = attempts


async def open_with_retries(open_once: Callable[[], Awaitable[T]], read_timeout: float,
                            delay_for: Callable[[BaseException, int], Optional[float]]) -> T:
    """`await open_once()` (a request up to its response headers), retried while `delay_for(error, retry)` gives a
    delay and the deadline allows; raises the last error, or NoAnswer when an attempt got no headers in time."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + read_timeout + GRACE
    retry = 0
    while True:
        wait = min(read_timeout, deadline - loop.time())
        try:
            async with asyncio.timeout(wait):  # not wait_for: in 3.11 it loses an abort that lands as the answer does
                return await open_once()
        except TimeoutError:
            raise NoAnswer(wait, retry + 1) from None
        except Exception as error:  # noqa: BLE001 - classified by delay_for, re-raised as it was
            delay = delay_for(error, retry)
            if delay is None or retry >= MAX_RETRIES or loop.time() + delay + MIN_ATTEMPT > deadline:
                raise
        await asyncio.sleep(delay)
        retry += 1


def sdk_delay(sdk: Any, error: BaseException, retry: int) -> Optional[float]:
    """How long to wait before retrying `error` of an official SDK (`anthropic` or `openai`: the same error
    classes), or None when it is not worth retrying. A timeout is never retried: the server took the request and
    said nothing; asking again only multiplies the wait."""
    if isinstance(error, sdk.APITimeoutError):
        return None
    if isinstance(error, sdk.APIConnectionError):  # refused, reset or closed before an answer: nothing was done
        return None if certificate_refused(error) is not None else backoff(retry)
    if not isinstance(error, sdk.APIStatusError):
        return None
    headers = error.response.headers
    should = headers.get("x-should-retry")
    if should in ("true", "false"):
        return retry_after(headers, retry) if should == "true" else None
    if error.status_code in (408, 409, 429) or error.status_code >= 500:
        return retry_after(headers, retry)
    return None


def certificate_refused(error: BaseException) -> Optional[ssl.SSLCertVerificationError]:
    """The TLS certificate failure that caused `error` (anywhere in its chain), None when it is something else: a
    certificate that does not verify now will not verify a second later, so it is never retried."""
    seen: Optional[BaseException] = error
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def retry_after(headers: Any, retry: int) -> Optional[float]:
    """The wait the server asks for, else the backoff; None when it asks for more than MAX_RETRY_AFTER (asking
    again sooner is refused again, and no chat waits that long)."""
    asked = asked_wait(headers)
    if asked is None:
        return backoff(retry)
    return asked if asked <= MAX_RETRY_AFTER else None


def asked_wait(headers: Any) -> Optional[float]:
    """The seconds `retry-after-ms` or `retry-after` (seconds, or an HTTP date: RFC 9110 §10.2.3) ask for; None
    when neither says."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            seconds = _until(value) if scale == 1.0 else None
        if seconds is not None and 0 <= seconds < float("inf"):  # NaN compares false too
            return seconds
    return None


def _until(date: str) -> Optional[float]:
    """Seconds from now until an HTTP date (0 when it is past), None when it is not one."""
    try:
        when = parsedate_to_datetime(date)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)


def backoff(retry: int) -> float:
    """0.5 s, 1 s, 2 s … up to 8 s, less up to a quarter at random (so that many clients do not retry at once)."""
    return min(0.5 * 2 ** retry, 8.0) * (1 - 0.25 * random.random())


def no_answer(url: str, waited: float, attempts: int) -> str:
    """The message of a request that got no response headers in time."""
    earlier = f", after {attempts - 1} failed attempt{'s' if attempts > 2 else ''}" if attempts > 1 else ""
    return f"No response from {url} within {round(waited, 1):g} s (the readTimeout setting{earlier})."
