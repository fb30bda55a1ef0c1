"""A minimal LSP client over a subprocess's stdio: enough of an editor to drive agent-lsp headless."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Awaitable, Callable, Optional

Handler = Callable[[Any], Any]


class LspClient:
    """Content-Length framed JSON-RPC; server requests are answered by `on_request` handlers."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.on_notification: dict[str, Handler] = {}
        self.on_request: dict[str, Handler] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._reader: Optional[asyncio.Task] = None

    @classmethod
    async def spawn(cls, *command: str, env: Optional[dict[str, str]] = None, stderr: Any = None) -> "LspClient":
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env)
        client = cls(process)
        client._reader = asyncio.create_task(client._read())
        return client

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self._write({"method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        msg_id = next(self._ids)
        future = self._waiting[msg_id] = asyncio.get_running_loop().create_future()
        self._write({"id": msg_id, "method": method, "params": params})
        return await future

    async def _read(self) -> None:
        stdout = self.process.stdout
        while True:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                break
            message = json.loads(await stdout.readexactly(length))
            self._dispatch(message)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("the server exited"))

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            future = self._waiting.pop(message["id"], None)
            if future and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"].get("message")))
                else:
                    future.set_result(message.get("result"))
        elif "id" in message:  # answered in a task: a slow answer must not stop the reading
            asyncio.ensure_future(self._answer(message))
        elif method in self.on_notification:
            self.on_notification[method](message.get("params"))

    async def _answer(self, message: dict[str, Any]) -> None:
        handler = self.on_request.get(message["method"], lambda params: None)
        result = handler(message.get("params"))
        if isinstance(result, Awaitable):
            result = await result
        self._write({"id": message["id"], "result": result})

    async def close(self) -> int:
        await self.request("shutdown", None)
        self.notify("exit", None)
        return await self.process.wait()
