"""run_command in the client's terminal (`terminal/*`), for clients that offer it: the user watches it live."""

from __future__ import annotations

import asyncio
import os
import logging
from typing import Any, Awaitable, Callable

from agent_lsp.core.tool import MAX_OUTPUT_CHARS, Tool, ToolAround, ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.tools.paths import resolve
from agent_lsp import processes
from agent_lsp.tools.run_command import RunCommand

log = logging.getLogger(__name__)


class InClientTerminal(ToolAround):
    """run_command, run by the client: terminal/create, wait_for_exit, output; terminal/kill on timeout or cancel,
    and terminal/release always. `started(terminal_id)` embeds the terminal in the running tool call. On Windows
    the command runs here (cmd.exe), as with a client that has no terminal."""

    def __init__(self, inner: Tool, conn: Any, session_id: str, flush: Callable[[], Awaitable[None]],
                 started: Callable[[str], None]) -> None:
        super().__init__(inner)
        self._conn, self._session_id, self._flush, self._started = conn, session_id, flush, started

    async def run(self, ctx: ToolContext, input: ToolInput) -> ToolOutput:
        if processes.WINDOWS:  # the terminal's command line unsets variables with /usr/bin/env, which Windows lacks
            return await self.inner.run(ctx, input)
        root = resolve(ctx.editor.roots, ".")
        await self._flush()  # the call's in_progress update goes out before the terminal it embeds
        # The client's terminal inherits the client's environment (which started us): unset there what run_command
        # holds back here (provider keys, the secretEnv setting).
        held = sorted(set(os.environ) - set(processes.command_env(dict(os.environ), ctx.secret_env)))
        argv = ["/usr/bin/env", *(a for name in held for a in ("-u", name)), "/bin/sh", "-c", input.command]
        sandbox = self.inner.sandbox if isinstance(self.inner, RunCommand) else None
        if sandbox is not None:  # the sandbox of the `sandbox` setting, as for our own run_command
            argv = sandbox.wrap(argv, root)
        created = await self._conn.create_terminal(session_id=self._session_id, command=argv[0], args=argv[1:],
                                                   cwd=str(root), output_byte_limit=MAX_OUTPUT_CHARS * 4)
        terminal = created.terminal_id
        self._started(terminal)
        try:
            try:
                async with asyncio.timeout(input.timeout):  # not wait_for (models/retry.py says why)
                    # A task of its own, as before: the update that shows the terminal goes out before this request.
                    exit = await asyncio.ensure_future(
                        self._conn.wait_for_terminal_exit(session_id=self._session_id, terminal_id=terminal))
            except TimeoutError:
                await self._kill(terminal)
                output = await self._output(terminal)
                raise ToolError(f"`{input.command}` timed out after {input.timeout} s and was killed.\n{output}")
            except BaseException:  # a cancel: the command must not outlive the turn
                await asyncio.shield(self._kill(terminal))
                raise
            output = await self._output(terminal)
            code = exit.exit_code if exit.exit_code is not None else f"none (signal {exit.signal})"
            where = f" ({sandbox.note()})" if sandbox is not None else ""
            return ToolOutput(f"Exit code {code}{where}\n{output}".rstrip())
        finally:
            await asyncio.shield(self._release(terminal))

    async def _output(self, terminal: str) -> str:
        answer = await self._conn.terminal_output(session_id=self._session_id, terminal_id=terminal)
        note = "[the terminal kept only the end of the output]\n" if answer.truncated else ""
        return bound(note + answer.output)

    async def _kill(self, terminal: str) -> None:
        try:
            await self._conn.kill_terminal(session_id=self._session_id, terminal_id=terminal)
        except Exception as e:  # a client gone or a terminal already ended: nothing left to kill
            log.info("terminal/kill %s: %r", terminal, e)

    async def _release(self, terminal: str) -> None:
        try:
            await self._conn.release_terminal(session_id=self._session_id, terminal_id=terminal)
        except Exception as e:
            log.info("terminal/release %s: %r", terminal, e)
