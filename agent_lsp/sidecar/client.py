"""pygls's language client, speaking plain dicts, for one language server child process.

pygls types every standard message with lsprotocol; the port speaks plain LSP shapes, so this client keeps params
and results as the JSON they are (no namedtuples, no attrs), answers the few requests a server sends its client,
and ignores the notifications a headless client has no use for (logs, diagnostics); server.py reads progress.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Optional

from lsprotocol.types import CANCEL_REQUEST
from pygls.lsp.client import LanguageClient
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

log = logging.getLogger(__name__)


def _plain_converter():
    """pygls's converter, but generic messages keep their params and results as plain JSON."""
    converter = default_converter()
    converter.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**{"params": None, **obj}))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**{"params": None, **obj}))
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**{"result": None, **obj}))
    return converter


class PlainProtocol(JsonRPCProtocol):
    """JSON-RPC with plain params; quiet about notifications nobody handles and about late answers to requests
    given up on (a timeout, a cancelled caller)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._abandoned: set[Any] = set()

    # pygls 2.1 has no public hook for a server's $/cancelRequest, unhandled notifications or late replies
    def _handle_notification(self, method_name: str, params: Any) -> None:
        if method_name == CANCEL_REQUEST:  # the server gives up on a request it sent us
            future = self._request_futures.pop(params.get("id") if isinstance(params, dict) else None, None)
            if future is not None:
                future.cancel()
            return
        if method_name in self.fm.features:
            super()._handle_notification(method_name, params)

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if msg_id in self._abandoned:
            self._abandoned.discard(msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def abandon(self, msg_id: Any) -> None:
        """Give up on a request: forget it and tell the server ($/cancelRequest)."""
        # pygls 2.1 has no public way to forget a request sent (_request_futures)
        if self._request_futures.pop(msg_id, None) is not None:
            self._abandoned.add(msg_id)
            self.notify(CANCEL_REQUEST, {"id": msg_id})

    def pending(self) -> int:
        """Requests sent and not yet answered nor given up on."""
        # pygls 2.1 has no public list of the requests awaiting an answer (_request_futures)
        return sum(1 for f in self._request_futures.values() if not f.done())


class SidecarClient(LanguageClient):
    """The client side of one language server process; `on_exit(returncode)` when the process ends."""

    def __init__(self, on_exit: Callable[[Optional[int]], None]) -> None:
        super().__init__("agent-lsp", "1", protocol_cls=PlainProtocol, converter_factory=_plain_converter)
        self._on_exit = on_exit

    @property
    def plain(self) -> PlainProtocol:
        return self.protocol  # type: ignore[return-value]

    @property
    def process(self) -> Optional[asyncio.subprocess.Process]:
        """The server process, once started."""
        return self._server  # pygls 2.1's LanguageClient keeps the process it started private (_server)

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self._on_exit(server.returncode)

    def report_server_error(self, error: Exception, source: Any) -> None:
        log.debug("language server message not handled: %s", error)

    async def finished(self) -> None:
        """Wait for the reading tasks to end (the process has exited)."""
        # pygls 2.1 keeps its reading tasks private (_async_tasks); stop() re-raises a read cut short by exit
        await asyncio.gather(*self._async_tasks, return_exceptions=True)
