"""The process's SDK clients: one per provider, endpoint and timeout, made on first use; under them, one HTTP client
per SDK whose connections stay warm when a stream is left before its end: HTTP/2 where the endpoint speaks it (a
stream left early is reset, its connection kept), else HTTP/1.1 with the stream's rest read in the background."""

from __future__ import annotations

import asyncio
import contextlib
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
    (proxies from the environment, TCP keep-alive), shared by chats and suggestions to the same endpoint, speaking
    HTTP/2 to a TLS endpoint that offers it (ALPN; plain http:// stays HTTP/1.1), whose response streams keep their
    connection when left early (`warm`, `_reset_left_streams`) and whose idle connections last IDLE_SECONDS.
    AGENT_LSP_KEEP_WARM=0 leaves the SDK's defaults, HTTP/1.1 closing a connection left early (the reference the
    benchmarks compare with)."""
    client = _HTTP.get(sdk.__name__)
    if client is None:
        import httpx2

        if os.environ.get("AGENT_LSP_KEEP_WARM", "1") == "0":
            client = sdk.DefaultAsyncHttpxClient()
        else:
            limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100, keepalive_expiry=IDLE_SECONDS)
            _reset_left_streams()
            client = sdk.DefaultAsyncHttpxClient(event_hooks={"response": [warm]}, limits=limits, http2=True)
        _HTTP[sdk.__name__] = client
    return client


async def warm(response: Any) -> None:
    """An HTTP response hook: its body stream read so that leaving it early neither closes its connection nor
    breaks it. A model stream is left at its stop event, before the body's last bytes, and a suggestion leaves it
    as soon as it has every line it can keep: the HTTP library then closes the connection, and the next request
    pays a new TCP and TLS handshake (two round trips to a remote model). Here the reads run in tasks of their own
    (a cancelled reader leaves the read whole) and the rest is read in the background, bounded, so that the
    connection goes back to the pool. An HTTP/2 stream is left as it is: leaving it resets that stream alone
    (`_reset_left_streams`), and the connection goes on serving the others."""
    if response.http_version != "HTTP/2":
        response.stream = _kept_class()(response.stream)


_RESETTING = False


def _reset_left_streams() -> None:
    """HTTP/2 streams left before their end (a suggestion cancelled or superseded, a stream left at its stop
    event) reset with RST_STREAM at once: the model stops writing an answer no one reads, and the connection's
    flow-control window gets back what the stream had received and not read (else it shrinks with every stream
    left, until the connection stalls). Installed once, before the first HTTP/2 connection."""
    global _RESETTING
    if _RESETTING:
        return
    _RESETTING = True
    import h2.errors
    import h2.events
    import h2.exceptions
    from httpcore2._async.http2 import AsyncHTTP2Connection

    # Private names of httpcore2: it never resets a stream it leaves (upstream encode/httpcore#943, #1022).
    closed = AsyncHTTP2Connection._response_closed

    async def response_closed(self: Any, stream_id: int) -> None:
        unread = self._events.get(stream_id)
        if unread is not None:  # the first close of this stream
            for event in unread:
                if isinstance(event, h2.events.DataReceived):
                    self._h2_state.acknowledge_received_data(event.flow_controlled_length, stream_id)
            try:
                self._h2_state.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
            except h2.exceptions.ProtocolError:  # it had ended (or the whole connection had)
                unread = None
        await closed(self, stream_id)
        if unread is not None:  # the reset sent now, not with the next request (a canceller does not wait for it)
            task = asyncio.get_running_loop().create_task(_send_pending(self))
            _DRAINING.add(task)
            task.add_done_callback(_DRAINING.discard)

    AsyncHTTP2Connection._response_closed = response_closed


async def _send_pending(connection: Any) -> None:
    """What the connection has to send (the reset), within REST_SECONDS: a connection that cannot take a few
    bytes in that time is closed rather than left holding its write lock."""
    try:
        async with connection._write_lock:
            await connection._network_stream.write(connection._h2_state.data_to_send(), REST_SECONDS)
    except Exception:  # the connection is gone or stuck: closed, its other streams fail as on a reset link
        with contextlib.suppress(Exception):
            await connection.aclose()


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
