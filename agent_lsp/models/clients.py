"""The process's SDK clients: one per provider, endpoint and timeout, made on first use; under them, one HTTP client
per SDK whose connections stay warm when a stream is left before its end."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable, Hashable, Optional

_CLIENTS: dict[tuple[str, Hashable], Any] = {}
_HTTP: dict[str, Any] = {}
_DRAINING: set[asyncio.Task] = set()

REST_BYTES = 64 * 1024
"""The most of a stream's rest read after its reader left it, to keep its connection; more, and it is closed."""
REST_SECONDS = 0.5
"""The longest the rest is waited for: a model still writing a long answer is cut (the connection with it)."""
IDLE_SECONDS = 60.0
"""How long an idle connection is kept (the HTTP library's default is 5 s: a pause in typing, or reading a chat's
answer, would cost the next request a new handshake)."""


def shared_client(provider: str, key: Hashable, make: Callable[[], Any]) -> Any:
    """The one client of `provider` for `key` (its base URL, credentials, timeout): its connection pool and TLS
    context serve every chat of every session instead of being built again for each."""
    client = _CLIENTS.get((provider, key))
    if client is None:
        client = _CLIENTS[(provider, key)] = make()
    return client


def http_client(sdk: Any) -> Any:
    """The one HTTP client under every client of the SDK module `sdk` (anthropic, openai): its own default client
    (proxies from the environment, TCP keep-alive), shared by chats and suggestions to the same endpoint, whose
    response streams keep their connection when left early (`warm`) and whose idle connections last IDLE_SECONDS.
    AGENT_LSP_KEEP_WARM=0 leaves the SDK's defaults, closing a connection left early (the reference the benchmarks
    compare with)."""
    client = _HTTP.get(sdk.__name__)
    if client is None:
        import httpx2

        if os.environ.get("AGENT_LSP_KEEP_WARM", "1") == "0":
            client = sdk.DefaultAsyncHttpxClient()
        else:
            limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100, keepalive_expiry=IDLE_SECONDS)
            client = sdk.DefaultAsyncHttpxClient(event_hooks={"response": [warm]}, limits=limits)
        _HTTP[sdk.__name__] = client
    return client


async def warm(response: Any) -> None:
    """An HTTP response hook: its body stream read so that leaving it early neither closes its connection nor
    breaks it. A model stream is left at its stop event, before the body's last bytes, and a suggestion leaves it
    as soon as it has every line it can keep: the HTTP library then closes the connection, and the next request
    pays a new TCP and TLS handshake (two round trips to a remote model). Here the reads run in tasks of their own
    (a cancelled reader leaves the read whole) and the rest is read in the background, bounded, so that the
    connection goes back to the pool."""
    response.stream = _kept_class()(response.stream)


_KEPT: Optional[type] = None


def _kept_class() -> type:
    global _KEPT
    if _KEPT is None:
        import httpx2

        class Kept(httpx2.AsyncByteStream):
            def __init__(self, inner: Any) -> None:
                self._inner = inner
                self._parts = inner.__aiter__()
                self._pending: Optional[asyncio.Future] = None
                self._ended = False
                self._closed = False

            async def _part(self) -> Optional[bytes]:
                try:
                    return await self._parts.__anext__()
                except StopAsyncIteration:
                    return None

            def _next(self) -> asyncio.Future:
                if self._pending is None:
                    self._pending = asyncio.ensure_future(self._part())
                return self._pending

            async def __aiter__(self) -> Any:
                while not self._ended:
                    part = await asyncio.shield(self._next())  # a cancel here leaves the read running, whole
                    self._pending = None
                    if part is None:
                        self._ended = True
                        return
                    yield part

            async def aclose(self) -> None:
                if self._closed:
                    return
                self._closed = True
                if self._ended:
                    await self._inner.aclose()  # read to its end: the connection goes back to the pool
                    return
                task = asyncio.get_running_loop().create_task(self._rest())
                _DRAINING.add(task)
                task.add_done_callback(_DRAINING.discard)

            async def _rest(self) -> None:
                read = 0
                try:
                    async with asyncio.timeout(REST_SECONDS):
                        while read <= REST_BYTES:
                            part = await self._next()
                            self._pending = None
                            if part is None:
                                self._ended = True
                                break
                            read += len(part)
                except Exception:  # the rest did not come (a timeout, a reset): the connection is closed below
                    pass
                finally:
                    if self._pending is not None and not self._pending.done():
                        self._pending.cancel()
                    await self._inner.aclose()

        _KEPT = Kept
    return _KEPT


def forget(provider: str) -> None:
    """Drop the clients of `provider` (tests that point a provider at another endpoint)."""
    for key in [k for k in _CLIENTS if k[0] == provider]:
        del _CLIENTS[key]
