"""What a macOS or Windows user gets where POSIX or Linux alone has the means (agent_lsp/processes.py, the headless
run's signals): the sandbox says it cannot start, never a crash; commands run by cmd.exe on Windows; a kill takes the
process alone where there are no process groups; servers are started as they are; Ctrl+C on Windows has no handler
to install. Run on Linux with the platform's answers patched in."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from agent_lsp import processes
from agent_lsp.headless.run import _on_signals
from agent_lsp.processes import dying_with_us, kill_group, open_sandbox, shell_argv


@pytest.mark.parametrize("platform", ["darwin", "win32"])
async def test_the_sandbox_asked_for_off_linux_says_it_cannot_start(platform, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "platform", platform)
    sandbox = await open_sandbox([tmp_path], network=False)
    assert (sandbox.ready, sandbox.bwrap) == (False, None)
    assert sandbox.note() == f"not sandboxed: bwrap: the sandbox runs on Linux only (here: {platform})"
    assert sandbox.wrap(["echo", "hi"], tmp_path) == ["echo", "hi"]


def test_a_shell_command_runs_in_cmd_on_windows_and_in_sh_elsewhere(monkeypatch):
    assert shell_argv("make test") == ["/bin/sh", "-c", "make test"]
    monkeypatch.setattr(processes, "WINDOWS", True)
    monkeypatch.setenv("COMSPEC", r"C:\Windows\system32\cmd.exe")
    assert shell_argv("make test") == [r"C:\Windows\system32\cmd.exe", "/d", "/s", "/c", "make test"]
    monkeypatch.delenv("COMSPEC")
    assert shell_argv("dir") == ["cmd.exe", "/d", "/s", "/c", "dir"]


class _Process:
    pid = 4242
    killed = 0

    def kill(self) -> None:
        self.killed += 1


def test_a_kill_takes_the_process_alone_without_process_groups(monkeypatch):
    monkeypatch.delattr(os, "killpg")
    process = _Process()
    kill_group(process)
    assert process.killed == 1


async def test_a_kill_takes_the_process_group_on_posix():
    process = await asyncio.create_subprocess_exec("/bin/sh", "-c", "sleep 30 & wait", start_new_session=True)
    kill_group(process)
    assert await process.wait() == -9


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_servers_start_as_they_are_without_a_parent_death_signal(platform, monkeypatch):
    monkeypatch.setattr(sys, "platform", platform)
    assert dying_with_us("pyright-langserver", ["--stdio"]) == ("pyright-langserver", ["--stdio"])


def test_no_signal_handler_where_the_loop_takes_none():
    class WindowsLoop:
        def add_signal_handler(self, *args: object) -> None:
            raise NotImplementedError

    assert _on_signals(WindowsLoop(), lambda signum: None) == []  # type: ignore[arg-type]
