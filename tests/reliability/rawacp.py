"""A raw ACP client for the real `agent-lsp --acp` subprocess: newline-delimited JSON-RPC, exact bytes, no SDK.

The hostile ACP tests need what the SDK's client cannot send (bad JSON, batches, partial lines, lone surrogates,
answers of the wrong shape) and answers they control to the agent's own requests (fs/*, terminal/*,
session/request_permission): a handler per method returns a result, an `ErrorAnswer`, `NO_ANSWER`, or a
coroutine giving one of those later.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Any, Callable, Optional

from tests.reliability.rawlsp import ANSWER_CEILING, NO_ANSWER, ErrorAnswer
from tests.waiting import until

SERVER = [sys.executable, "-m", "agent_lsp", "--acp"]
__all__ = ["RawAcp", "line", "ANSWER_CEILING", "NO_ANSWER", "ErrorAnswer"]


def line(message: Any) -> bytes:
    """One frame: JSON (lone surrogates as \\u escapes) and a newline."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class RawAcp:
    """One `agent-lsp --acp` process and the client side of its stdio."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pending: dict[Any, asyncio.Future] = {}
        self.unmatched: list[dict] = []
        """Responses with an id no request of ours had (id null: the agent could not read the id)."""
        self.notifications: list[dict] = []
        self.agent_requests: list[dict] = []
        self.wire: list[dict] = []
        """Everything the agent sent, in order."""
        self.handlers: dict[str, Callable[[Any], Any]] = {}
        self.stderr = bytearray()
        self.bad_lines: list[bytes] = []
        """Lines on stdout that are not JSON (never expected)."""
        self._ids = itertools.count(1)
        self._reader = asyncio.create_task(self._read())
        self._drain = asyncio.create_task(self._drain_stderr())
        self.closed = asyncio.get_running_loop().create_future()

    @classmethod
    async def start(cls, *args: str, env: Optional[dict[str, str]] = None, cwd: Optional[Path] = None) -> "RawAcp":
        proc = await asyncio.create_subprocess_exec(
            *SERVER, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd, limit=1 << 26)
        return cls(proc)

    async def _drain_stderr(self) -> None:  # a chatty agent must never block on a full stderr pipe
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            del self.stderr[:-200_000]

    async def _read(self) -> None:
        try:
            while raw := await self.proc.stdout.readline():
                try:
                    message = json.loads(raw)
                except ValueError:
                    self.bad_lines.append(raw[:500])
                    continue
                self.wire.append(message)
                self._dispatch(message)
        except (ConnectionError, ValueError):
            pass
        finally:
            if not self.closed.done():
                self.closed.set_result(None)
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the agent closed its stdout"))

    def _dispatch(self, message: dict) -> None:
        if "method" in message and "id" in message:
            self.agent_requests.append(message)
            handler = self.handlers.get(message["method"])
            result = handler(message.get("params")) if handler else ErrorAnswer(-32601, "no such method here")
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
        self.answer(msg_id, await coroutine)

    def answer(self, msg_id: Any, result: Any) -> None:
        if isinstance(result, ErrorAnswer):
            self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": result.code, "message": result.message}})
        elif isinstance(result, RawAnswer):
            self.send_raw(result.data.replace(b"$ID", json.dumps(msg_id).encode()))
        elif result is not NO_ANSWER:
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    # ---- sending --------------------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        if not self.proc.stdin.is_closing():
            self.proc.stdin.write(data)

    def send(self, message: Any) -> None:
        self.send_raw(line(message))

    def next_id(self) -> int:
        return next(self._ids)

    def request_future(self, method: str, params: Any = None) -> asyncio.Future:
        """Send a request; the future resolves to the whole response message."""
        msg_id = self.next_id()
        future = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any = None, timeout: float = ANSWER_CEILING) -> dict:
        return await asyncio.wait_for(self.request_future(method, params), timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, fs: bool = True, terminal: bool = True) -> dict:
        return await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {
            "fs": {"readTextFile": fs, "writeTextFile": fs}, "terminal": terminal},
            "clientInfo": {"name": "rawacp", "version": "1"}})

    async def new_session(self, cwd: Path) -> str:
        answer = await self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        return answer["result"]["sessionId"]

    def prompt(self, session_id: str, text: str) -> asyncio.Future:
        return self.request_future("session/prompt", {"sessionId": session_id,
                                                      "prompt": [{"type": "text", "text": text}]})

    def updates(self, session_id: Optional[str] = None) -> list[dict]:
        return [n["params"]["update"] for n in self.notifications if n["method"] == "session/update"
                and (session_id is None or n["params"].get("sessionId") == session_id)]

    async def until(self, predicate, timeout: float = ANSWER_CEILING) -> None:
        """Wait for a condition on what arrived; the timeout is a last-resort ceiling (a hang). The agent's
        output closing first fails it too."""
        await until(lambda: predicate() or self.closed.done(), timeout)
        if not predicate():
            raise TimeoutError("condition not met: the agent's output closed")

    async def close_stdin(self) -> None:
        if not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    async def wait_exit(self, timeout: float = 30) -> int:
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        await asyncio.wait({self._reader, self._drain}, timeout=10)
        return self.proc.returncode

    async def stop(self) -> int:
        """Close stdin, as an editor does when it is done with the agent."""
        await self.close_stdin()
        return await self.wait_exit()


class RawAnswer:
    """A handler returning this answers with exactly these bytes (`$ID` replaced by the request's id)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
