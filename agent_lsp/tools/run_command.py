"""run_command: a shell command in the workspace root, output streamed and bounded, killed on abort or timeout;
inside the OS sandbox when the `sandbox` setting turns it on, its result saying where it ran."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Optional

from pydantic import Field

from agent_lsp.core.tool import MAX_OUTPUT_CHARS, Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.processes import Sandbox, command_env, kill_group, shell_name, start_shell
from agent_lsp.tools.paths import resolve

REPORT_EVERY = 0.1
KEEP = MAX_OUTPUT_CHARS // 2


class RunCommandInput(ToolInput):
    # the model writes for the shell that runs it: cmd.exe on Windows knows no `export`, `$VAR` or `2>/dev/null`
    command: str = Field(description=f"Shell command, run with {shell_name()} in the workspace root.")
    timeout: int = Field(120, ge=1, le=3600, description="Seconds before the command is killed (default 120).")


class Output:
    """Head and tail of a command's output: the start says what ran, the end says how it ended."""

    def __init__(self) -> None:
        self.head = ""
        self.tail = ""
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.head) < KEEP:
            room = KEEP - len(self.head)
            self.head, text = self.head + text[:room], text[room:]
        self.tail += text
        if len(self.tail) > KEEP:
            self.dropped += len(self.tail) - KEEP
            self.tail = self.tail[-KEEP:]

    def text(self) -> str:
        cut = f"\n[... {self.dropped} characters cut from the middle ...]\n" if self.dropped else ""
        return self.head + cut + self.tail


class RunCommand(Tool):
    """run_command; with the `sandbox` setting on, made per chat with its sandbox (processes.py)."""

    name = "run_command"
    kind = "execute"
    runs_command = True
    description = (
        "Run a shell command in the workspace root (tests, builds, git, linters). Output (stdout and stderr "
        "together) streams to the user and comes back bounded, with the exit code. Commands are killed on "
        "timeout or when the user stops the agent."
    )
    Input = RunCommandInput

    def __init__(self, sandbox: Optional[Sandbox] = None) -> None:
        self.sandbox = sandbox

    def title(self, input: RunCommandInput) -> str:
        return f"Run `{input.command}`"

    async def preview(self, ctx: ToolContext, input: RunCommandInput) -> Preview:
        sandbox = self.sandbox
        return Preview(command=input.command,
                       sandbox_auto_allow=sandbox is not None and sandbox.ready and sandbox.auto_allow)

    async def run(self, ctx: ToolContext, input: RunCommandInput) -> ToolOutput:
        root = resolve(ctx.editor.roots, ".")
        process = await start_shell(
            input.command, root, self.sandbox, env=command_env(dict(os.environ), ctx.secret_env),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        output = Output()
        where = f" ({self.sandbox.note()})" if self.sandbox is not None else ""
        # whatever the command writes on disk, the language servers must learn of: said before (a request while it
        # runs looks for what it wrote so far) and after (what it wrote since)
        told = ctx.language.disk_changed if ctx.language is not None else lambda paths: None
        told(None)
        try:
            async with asyncio.timeout(input.timeout):  # not wait_for (models/retry.py says why)
                await self._read(process, output, ctx)
        except TimeoutError:
            _kill(process)
            await process.wait()
            raise ToolError(f"`{input.command}` timed out after {input.timeout} s and was killed{where}.\n"
                            f"{output.text()}")
        except BaseException:  # an abort cancels us: the command must not outlive the chat
            _kill(process)
            await process.wait()
            raise
        finally:
            told(None)
        code = await process.wait()
        return ToolOutput(f"Exit code {code}{where}\n{output.text()}".rstrip())

    async def _read(self, process: asyncio.subprocess.Process, output: Output, ctx: ToolContext) -> None:
        last_report = 0.0
        while chunk := await process.stdout.read(4096):
            output.add(chunk.decode("utf-8", errors="replace"))
            if time.monotonic() - last_report >= REPORT_EVERY:
                last_report = time.monotonic()
                ctx.report(output.text()[-2000:])


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        kill_group(process)
    except ProcessLookupError:
        pass


TOOL = RunCommand()
