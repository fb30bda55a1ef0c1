"""An ACP client for the e2e tests: the SDK's own client side over the pipes of a real `agent-lsp --acp`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Optional

import acp
from acp import schema

from tests.e2e.conftest import server_env

LIMIT = 16 * 1024 * 1024


class RecordingClient:
    """An editor as ACP sees it: buffers it serves to fs/read_text_file, writes it records, permission answers
    scripted in advance (or held until the test answers them), and every message in the order it arrived."""

    def __init__(self, buffers: Optional[dict[str, str]] = None) -> None:
        self.buffers: dict[str, str] = dict(buffers or {})
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.updates: list[Any] = []
        self.wire: list[dict] = []
        """Every JSON-RPC message the agent sent, in arrival order (the SDK's stream observer)."""
        self.answers: list[str] = []
        """optionIds to answer session/request_permission with, in order; when empty the request is held."""
        self.held: list[asyncio.Future] = []
        self.permission_requests: list[Any] = []
        self.terminals: dict[str, dict] = {}
        self.after_read: Any = None
        """Called with (path, how many reads so far) after answering a read: a user typing meanwhile."""

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **kwargs: Any) -> schema.RequestPermissionResponse:
        self.permission_requests.append((tool_call, [o.kind for o in options]))
        if self.answers:
            choice: Optional[str] = self.answers.pop(0)
        else:
            future = asyncio.get_running_loop().create_future()
            self.held.append(future)
            choice = await future
        outcome = (schema.DeniedOutcome(outcome="cancelled") if choice is None
                   else schema.AllowedOutcome(outcome="selected", option_id=choice))
        return schema.RequestPermissionResponse(outcome=outcome)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def read_text_file(self, session_id: str, path: str, line: Optional[int] = None,
                             limit: Optional[int] = None, **kwargs: Any) -> schema.ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.buffers:
            raise acp.RequestError.resource_not_found(path)
        answer = schema.ReadTextFileResponse(content=self.buffers[path])
        if self.after_read:
            self.after_read(path, len(self.reads))
        return answer

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        self.writes.append((path, content))
        self.buffers[path] = content
        return schema.WriteTextFileResponse()

    # terminal/*: a real process per terminal, as an editor's terminal runs it
    async def create_terminal(self, session_id: str, command: str, args: Optional[list[str]] = None,
                              env: Any = None, cwd: Optional[str] = None, output_byte_limit: Optional[int] = None,
                              **kwargs: Any) -> schema.CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        terminal_id = f"term-{len(self.terminals) + 1}"
        output = bytearray()

        async def read() -> None:
            while chunk := await process.stdout.read(4096):
                output.extend(chunk)

        self.terminals[terminal_id] = {"command": [command, *(args or [])], "cwd": cwd, "process": process,
                                       "output": output, "reader": asyncio.ensure_future(read()), "killed": False,
                                       "released": False}
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> schema.WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        code = await terminal["process"].wait()
        await terminal["reader"]
        return schema.WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                                  signal=None if code >= 0 else str(-code))

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        return schema.TerminalOutputResponse(output=terminal["output"].decode(), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        import os
        import signal

        terminal = self.terminals[terminal_id]
        terminal["killed"] = True
        try:
            os.killpg(terminal["process"].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await terminal["process"].wait()
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.terminals[terminal_id]["released"] = True
        return schema.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict) -> dict:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        pass

    def observe(self, event: Any) -> None:
        if event.direction.value == "incoming":
            self.wire.append(event.message)


class AcpAgentProcess:
    """A running `agent-lsp --acp` and the client connection to it."""

    def __init__(self, process: asyncio.subprocess.Process, conn: Any, client: RecordingClient) -> None:
        self.process, self.conn, self.client = process, conn, client
        self.stderr: list[str] = []
        self._stderr = asyncio.ensure_future(self._keep_stderr())

    async def _keep_stderr(self) -> None:
        while line := await self.process.stderr.readline():
            self.stderr.append(line.decode(errors="replace"))
            sys.stderr.buffer.write(line)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()
        await self.conn.close()
        await asyncio.wait_for(self._stderr, 30)
        stderr = "".join(self.stderr)
        assert "Traceback" not in stderr, f"the agent wrote a traceback:\n{stderr}"  # tracebacks are for bugs


async def start_agent(base_url: str, data_dir: Path, client: RecordingClient, *args: str,
                      fs: bool = True, terminal: bool = False, env: Optional[dict[str, str]] = None) -> AcpAgentProcess:
    """Spawn `agent-lsp --acp`, connect, and initialize (offering fs/* when `fs`); `env` adds to its environment."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent_lsp", "--acp", "--data-dir", str(data_dir), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**server_env(base_url), **(env or {})}, limit=LIMIT)
    conn = acp.connect_to_agent(client, process.stdin, process.stdout, observers=[client.observe])
    agent = AcpAgentProcess(process, conn, client)
    agent.initialized = await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal),
        client_info=schema.Implementation(name="agent-lsp-tests", version="1"))
    return agent


def wire_shape(messages: list[dict]) -> list[str]:
    """What the agent sent, as short names: updates (tool ones with their status), its requests, and answers to
    session/prompt; a run of message or thought chunks counts once. `available_commands_update` is left out: it
    follows session/new or load at no fixed place (test_acp_workflow.py checks it)."""
    out: list[str] = []
    for m in messages:
        if m.get("method") == "session/update":
            u = m["params"]["update"]
            kind = u["sessionUpdate"]
            if kind == "available_commands_update":
                continue
            name = f"{kind}:{u['status']}" if kind in ("tool_call", "tool_call_update") and u.get("status") else kind
        elif "method" in m:
            name = m["method"]
        elif "stopReason" in (m.get("result") or {}):
            name = f"answer:{m['result']['stopReason']}"
        elif "error" in m:
            name = f"error:{m['error']['code']}"
        else:
            continue
        if not (out and name == out[-1] and name in ("agent_message_chunk", "agent_thought_chunk")):
            out.append(name)
    return out
