"""Shell hooks from settings, in the shape Claude Code users already write:

    "hooks": {"PreToolUse": [{"matcher": "run_command|edit_file",
                              "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]}],
              "PostToolUse": [...], "UserPromptSubmit": [...], "Stop": [...]}

(`{matcher, command, timeout?}` is accepted as a shorthand for one command). The event goes to the command as JSON
on stdin: `{event, sessionId, cwd, toolName?, toolInput?, toolOutput?, prompt?}`. Exit 0 goes on (stdout of a
UserPromptSubmit hook is added as context); exit 2 blocks the call or prompt, with stderr as the reason; any
other exit code is a warning. The timeout kills the hook's whole process group. With the `sandbox` setting on, hooks
run in the OS sandbox as run_command does (agent_lsp/processes.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Optional

from agent_lsp.config.hooks import HookCommand
from agent_lsp.core.hooks import HookEvent, HookVerdict
from agent_lsp.processes import Sandbox, kill_group, start_shell

MAX_REASON = 2_000

class ShellHooks:
    """A core hook that runs the configured commands of each event."""

    def __init__(self, hooks: dict[str, list[HookCommand]], session_id: str, cwd: Optional[Path],
                 sandbox: Optional[Sandbox] = None) -> None:
        self.hooks = hooks
        self.session_id = session_id
        self.cwd = cwd
        self.sandbox = sandbox

    async def __call__(self, event: HookEvent) -> Optional[HookVerdict]:
        commands = [c for c in self.hooks.get(event.event, []) if _matches(c.matcher, event.tool_name)]
        if not commands:
            return None
        payload = json.dumps({k: v for k, v in {
            "event": event.event, "sessionId": self.session_id, "cwd": str(self.cwd) if self.cwd else None,
            "toolName": event.tool_name, "toolInput": event.tool_input, "toolOutput": event.tool_output,
            "prompt": event.prompt}.items() if v is not None}).encode()
        verdict = HookVerdict()
        for command in commands:
            code, out, err = await _run(command, payload, self.cwd, self.sandbox)
            if code == 0:
                if event.event == "UserPromptSubmit" and out.strip():
                    verdict.context = "\n".join(filter(None, (verdict.context, out.strip())))
            elif code == 2 and event.event in ("PreToolUse", "UserPromptSubmit"):
                verdict.block = (err.strip() or f"blocked by `{command.command}`")[:MAX_REASON]
                return verdict
            elif code is None:
                verdict.warnings.append(f"The {event.event} hook `{command.command}` timed out after "
                                        f"{command.timeout:g} s and was stopped.")
            else:
                detail = f": {err.strip()[:300]}" if err.strip() else ""
                verdict.warnings.append(f"The {event.event} hook `{command.command}` exited with {code}{detail}")
        return verdict


def _matches(matcher: str, tool: Optional[str]) -> bool:
    if tool is None or matcher in ("", "*"):
        return True
    return re.fullmatch(matcher, tool) is not None


async def _run(command: HookCommand, stdin: bytes, cwd: Optional[Path],
               sandbox: Optional[Sandbox]) -> tuple[Optional[int], str, str]:
    """Run one hook command; (exit code, stdout, stderr), exit code None when it timed out (and was killed)."""
    try:
        process = await start_shell(command.command, cwd, sandbox, stdin=asyncio.subprocess.PIPE,
                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as e:
        return 127, "", str(e)
    try:
        async with asyncio.timeout(command.timeout):  # not wait_for (models/retry.py says why)
            out, err = await process.communicate(stdin)
    except BaseException:  # a timeout, or the chat was stopped: the hook must not outlive it
        try:
            kill_group(process)
        except ProcessLookupError:
            pass
        await process.wait()
        if asyncio.current_task().cancelling():
            raise
        return None, "", ""
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
