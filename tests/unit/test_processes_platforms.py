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
from agent_lsp.processes import dying_with_us, kill_group, open_sandbox, shell_argv, shell_name
from agent_lsp.tools.run_command import RunCommand, RunCommandInput


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


def test_the_model_is_told_which_shell_runs_its_command(monkeypatch):
    assert shell_name() == "/bin/sh"
    assert RunCommandInput.model_json_schema()["properties"]["command"]["description"] == (
        "Shell command, run with /bin/sh in the workspace root.")
    monkeypatch.setattr(processes, "WINDOWS", True)
    assert shell_name() == "cmd.exe"  # the description, made when the module loads, says so on Windows


async def test_run_command_over_acp_runs_here_on_windows_not_in_the_clients_terminal(monkeypatch):
    """The client's terminal gets `/usr/bin/env -u NAME… /bin/sh -c`; Windows has neither, so the command runs
    here (cmd.exe, the held-back variables left out as for any command) and the client is never asked."""
    from agent_lsp.acp.terminal import InClientTerminal

    ran = []

    class Inner(RunCommand):
        async def run(self, ctx, input):
            ran.append(input.command)
            return "ran here"

    monkeypatch.setattr(processes, "WINDOWS", True)
    tool = InClientTerminal(Inner(), conn=None, session_id="s", flush=None, started=None)
    assert await tool.run(None, RunCommandInput(command="dir")) == "ran here"
    assert ran == ["dir"]


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
