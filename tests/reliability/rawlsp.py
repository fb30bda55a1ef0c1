"""A raw JSON-RPC client for the real server subprocess: exact bytes out, every frame in, no typing layer.

The hostile tests need what pytest-lsp cannot send (bad JSON, wrong Content-Length, batches, lone surrogates) and
pipelined requests by the thousand, so they talk to the server through this: `send_raw(bytes)`, `request(method,
params)` (a future per id), `notifications`, and server-to-client requests answered by `handlers`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Optional

SERVER = [sys.executable, "-m", "agent_lsp"]
ANSWER_CEILING = 60.0
"""A generous bound on any single answer: reaching it counts as a hang, never as a pass."""


def frame(body: bytes | str) -> bytes:
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def dumps(message: Any) -> bytes:
    """JSON as a client would send it; lone surrogates go out as \\u escapes (json's ensure_ascii)."""
    return json.dumps(message).encode()


class RawServer:
    """One server process and the client side of its stdio."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pending: dict[Any, asyncio.Future] = {}
        self.unmatched: list[dict] = []
        """Responses with an id no request of ours had (e.g. id null: the server could not know the id)."""
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.handlers: dict[str, Callable[[Any], Any]] = {}
        self.stderr = bytearray()
        self._ids = itertools.count(1)
        self._reader = asyncio.create_task(self._read())
        self._drain = asyncio.create_task(self._drain_stderr())
        self.closed = asyncio.get_running_loop().create_future()
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    @classmethod
    async def start(cls, *args: str, env: Optional[dict[str, str]] = None, cwd: Optional[Path] = None,
                    **popen: Any) -> "RawServer":
        proc = await asyncio.create_subprocess_exec(
            *SERVER, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd, limit=1 << 24, **popen)
        return cls(proc)

    async def _drain_stderr(self) -> None:  # a chatty server must never block on a full stderr pipe
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            del self.stderr[:-200_000]

    async def _read(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await out.readline()
                    if not line:
                        return
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                    elif line in (b"\r\n", b"\n") and length is not None:
                        break
                message = json.loads(await out.readexactly(length))
                self._dispatch(message)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            if not self.closed.done():
                self.closed.set_result(None)
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed its stdout"))

    def _dispatch(self, message: dict) -> None:
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            handler = self.handlers.get(message["method"])
            result = handler(message.get("params")) if handler else None
            if asyncio.iscoroutine(result):
                asyncio.create_task(self._answer_later(message["id"], result))
            else:
                self.answer(message["id"], result)
        elif "method" in message:
            self.notifications.append(message)
        else:
            future = self.pending.pop(message.get("id"), None)
            if future is None:
                self.unmatched.append(message)
            elif not future.done():
                future.set_result(message)

    async def _answer_later(self, msg_id: Any, coroutine) -> None:
        result = await coroutine
        if result is not NO_ANSWER:
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def answer(self, msg_id: Any, result: Any) -> None:
        if isinstance(result, ErrorAnswer):
            self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": result.code, "message": result.message}})
        elif result is not NO_ANSWER:
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    # ---- sending --------------------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        """Bytes out in the order sent. From another thread (a test driving a server on a loop of its own) the write
        is queued to the loop's thread: an asyncio transport is not thread-safe, and writing into its buffer while the
        loop writes from it raises BufferError."""
        if threading.get_ident() == self._loop_thread:
            self.proc.stdin.write(data)
        else:
            self._loop.call_soon_threadsafe(self.proc.stdin.write, data)

    def send(self, message: Any) -> None:
        self.send_raw(frame(dumps(message)))

    def next_id(self) -> int:
        return next(self._ids)

    def request_future(self, method: str, params: Any = None, msg_id: Any = None, omit_params: bool = False):
        """Send a request; the future resolves to the whole response message."""
        msg_id = self.next_id() if msg_id is None else msg_id
        future = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if not omit_params:
            message["params"] = params
        self.send(message)
        return future

    async def request(self, method: str, params: Any = None, timeout: float = ANSWER_CEILING) -> dict:
        return await asyncio.wait_for(self.request_future(method, params), timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, root: Path, init_options: Any = None, agent: Optional[dict] = None,
                         capabilities: Optional[dict] = None) -> dict:
        caps = capabilities or {"workspace": {"applyEdit": True, "workspaceEdit": {
            "documentChanges": True, "resourceOperations": ["create"]}}}
        if agent is not None:
            caps = {**caps, "experimental": {"agent": agent}}
        answer = await self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps,
            "initializationOptions": init_options,
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]})
        self.notify("initialized", {})
        return answer

    async def stop(self) -> int:
        """shutdown + exit, as an editor does; kill after a bound."""
        if self.proc.returncode is None:
            try:
                await self.request("shutdown", None, timeout=20)
                self.notify("exit", None)
                await self.proc.stdin.drain()
            except (ConnectionError, asyncio.TimeoutError, RuntimeError):
                pass
        return await self.wait_exit()

    async def wait_exit(self, timeout: float = 30) -> int:
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
        self._drain.cancel()
        return self.proc.returncode

    def rss_kb(self) -> int:
        return proc_status(self.proc.pid, "VmRSS")


class ErrorAnswer:
    """A handler returning this answers the server's request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        self.code, self.message = code, message


NO_ANSWER = object()
"""A handler returning this leaves the server's request unanswered (an editor that never answers)."""


def proc_status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def process_counts(pid: int) -> dict[str, int]:
    """What a leak shows in, measured from outside: RSS (kB), open fds, threads, child processes."""
    children = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += len((task / "children").read_text().split())
        except OSError:
            pass
    return {"rss_kb": proc_status(pid, "VmRSS"), "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": proc_status(pid, "Threads"), "children": children}
