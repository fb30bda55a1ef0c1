"""run_command: a shell command in the workspace root, output streamed and bounded, killed on abort or timeout."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import signal
import time

from pydantic import Field

from agent_lsp.core.tool import MAX_OUTPUT_CHARS, Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.paths import resolve

REPORT_EVERY = 0.1
KEEP = MAX_OUTPUT_CHARS // 2
HELD_BACK_PREFIXES = ("ANTHROPIC_", "OPENAI_")
HELD_BACK_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY", "_PASSWORD")


def command_env(environ: dict[str, str], secret: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a command runs with: the server's, without provider variables (ANTHROPIC_*, OPENAI_*),
    without anything named like a credential (*_API_KEY, *_TOKEN, *_SECRET, *_SECRET_KEY, *_ACCESS_KEY,
    *_PASSWORD; any case), and without the names or patterns the user lists in the secretEnv setting."""
    def held_back(name: str) -> bool:
        upper = name.upper()
        return (upper.startswith(HELD_BACK_PREFIXES) or upper.endswith(HELD_BACK_SUFFIXES)
                or any(fnmatch.fnmatchcase(name, pattern) for pattern in secret))

    return {k: v for k, v in environ.items() if not held_back(k)}


class RunCommandInput(ToolInput):
    command: str = Field(description="Shell command, run with /bin/sh in the workspace root.")
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
    name = "run_command"
    kind = "execute"
    description = (
        "Run a shell command in the workspace root (tests, builds, git, linters). Output (stdout and stderr "
        "together) streams to the user and comes back bounded, with the exit code. Commands are killed on "
        "timeout or when the user stops the agent."
    )
    Input = RunCommandInput

    def title(self, input: RunCommandInput) -> str:
        return f"Run `{input.command}`"

    async def preview(self, ctx: ToolContext, input: RunCommandInput) -> Preview:
        return Preview(command=input.command)

    async def run(self, ctx: ToolContext, input: RunCommandInput) -> ToolOutput:
        root = resolve(ctx.editor.roots, ".")
        process = await asyncio.create_subprocess_shell(
            input.command, cwd=root, env=command_env(dict(os.environ), ctx.secret_env), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)  # its own group: kill takes its children too
        output = Output()
        try:
            async with asyncio.timeout(input.timeout):  # not wait_for (models/retry.py says why)
                await self._read(process, output, ctx)
        except TimeoutError:
            _kill(process)
            await process.wait()
            raise ToolError(f"`{input.command}` timed out after {input.timeout} s and was killed.\n{output.text()}")
        except BaseException:  # an abort cancels us: the command must not outlive the chat
            _kill(process)
            await process.wait()
            raise
        code = await process.wait()
        return ToolOutput(f"Exit code {code}\n{output.text()}".rstrip())

    async def _read(self, process: asyncio.subprocess.Process, output: Output, ctx: ToolContext) -> None:
        last_report = 0.0
        while chunk := await process.stdout.read(4096):
            output.add(chunk.decode("utf-8", errors="replace"))
            if time.monotonic() - last_report >= REPORT_EVERY:
                last_report = time.monotonic()
                ctx.report(output.text()[-2000:])


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


TOOL = RunCommand()
