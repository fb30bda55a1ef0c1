"""Child processes, started in one place: the environment a command gets, servers that die with agent-lsp (MCP,
language servers of its own), shell commands (run_command, hooks) inside the OS sandbox when the `sandbox`
setting turns it on (Linux: bubblewrap), and killing a command with its children.

What POSIX alone has is guarded here: on Windows a shell command runs with cmd.exe, a kill takes the process alone
(no process groups), no server gets a parent-death signal (Linux only), and the sandbox says it cannot start."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import shutil
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from agent_lsp.core.paths import real

SHELL = "/bin/sh"
WINDOWS = sys.platform == "win32"
BWRAP = "bwrap"
HELD_BACK_PREFIXES = ("ANTHROPIC_", "OPENAI_")
HELD_BACK_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY", "_PASSWORD")

# exec the program with SIGKILL as its parent-death signal (prctl 1 = PR_SET_PDEATHSIG), unless we are gone already
_LAUNCH = ("import ctypes,os,sys\nppid=int(sys.argv[1])\nctypes.CDLL(None).prctl(1,9)\n"
           "os.getppid()==ppid or os._exit(1)\nos.execvp(sys.argv[2],sys.argv[2:])")


def command_env(environ: dict[str, str], secret: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a command runs with: the server's, without provider variables (ANTHROPIC_*, OPENAI_*),
    without anything named like a credential (*_API_KEY, *_TOKEN, *_SECRET, *_SECRET_KEY, *_ACCESS_KEY,
    *_PASSWORD; any case), and without the names or patterns the user lists in the secretEnv setting."""
    def held_back(name: str) -> bool:
        upper = name.upper()
        return (upper.startswith(HELD_BACK_PREFIXES) or upper.endswith(HELD_BACK_SUFFIXES)
                or any(fnmatch.fnmatchcase(name, pattern) for pattern in secret))

    return {k: v for k, v in environ.items() if not held_back(k)}


def dying_with_us(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The command line that runs `command args` as a child that dies with this process: on Linux it is exec'd
    with SIGKILL as its parent-death signal, so even a SIGKILLed agent-lsp leaves none behind (unchanged
    elsewhere)."""
    if not sys.platform.startswith("linux"):
        return command, args
    return sys.executable, ["-I", "-S", "-c", _LAUNCH, str(os.getpid()), command, *args]


@dataclass(frozen=True)
class Sandbox:
    """The OS sandbox of one chat's commands (the `sandbox` setting, on): bubblewrap with the whole file system
    read-only but `writable` (the workspace folders first), a private /tmp, and no network unless `network`."""

    writable: tuple[Path, ...]
    network: bool = False
    auto_allow: bool = True
    """Commands that run in it need no question outside plan mode (`sandbox.autoAllow`)."""
    bwrap: Optional[str] = None
    """The bubblewrap program; None when it cannot start (`problem` says why)."""
    problem: Optional[str] = None
    """Why it cannot start, naming bwrap and its error: commands then run outside it, each asked first."""

    @property
    def ready(self) -> bool:
        """Whether commands run inside it."""
        return self.bwrap is not None and self.problem is None

    def wrap(self, argv: list[str], cwd: Optional[Path]) -> list[str]:
        """`argv` as it runs inside the sandbox (unchanged when it cannot start)."""
        if not self.ready:
            return argv
        return [self.bwrap, *bwrap_args(self.writable, self.network, cwd), "--", *argv]

    def note(self) -> str:
        """What a command's result says about where it ran."""
        if not self.ready:
            return f"not sandboxed: {self.problem}"
        network = "network allowed" if self.network else "no network"
        return f"sandboxed: only the workspace, a private /tmp and the `writable` paths are writable; {network}"


def bwrap_args(writable: tuple[Path, ...], network: bool, cwd: Optional[Path]) -> list[str]:
    """bubblewrap's options: / read-only, a fresh /dev and /proc, a private /tmp, the `writable` paths bound
    read-write after it (so those under /tmp stay writable), its own process and IPC namespaces, killed with us;
    without network, its own network namespace and /run hidden (the sockets of Docker, D-Bus, agents)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if not network:
        args += ["--unshare-net", "--tmpfs", "/run"]
    for path in dict.fromkeys(writable):  # in order, once each
        args += ["--bind-try", str(path), str(path)]  # a path gone since the settings were read is left out
    args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--setenv", "TMPDIR", "/tmp"]
    if cwd is not None:
        args += ["--chdir", str(cwd)]
    return args


_PROBED: dict[tuple[str, bool], Optional[str]] = {}
"""What starting bubblewrap once gave, by program and network: None when it worked, else its error."""


async def open_sandbox(writable: list[Path], network: bool = False, auto_allow: bool = True) -> Sandbox:
    """The sandbox of a chat whose workspace folders and `writable` setting are `writable`, once bubblewrap is
    found and started once (per program and network, for this process)."""
    found = shutil.which(BWRAP)
    if not sys.platform.startswith("linux"):
        problem: Optional[str] = f"{BWRAP}: the sandbox runs on Linux only (here: {sys.platform})"
    elif found is None:
        problem = f"{BWRAP}: not found on PATH"
    else:
        key = (found, network)
        if key not in _PROBED:
            _PROBED[key] = await _probe(found, network)
        problem = _PROBED[key]
    paths = tuple(real(p) for p in writable)
    return Sandbox(paths, network, auto_allow, found if problem is None else None, problem)


async def _probe(bwrap: str, network: bool) -> Optional[str]:
    """Start `true` in an empty sandbox: None when it ran, else bubblewrap's error."""
    try:
        process = await asyncio.create_subprocess_exec(
            bwrap, *bwrap_args((), network, None), "--", "true", stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await process.communicate()
    except OSError as e:
        return f"{BWRAP}: {e.strerror or e}"
    if process.returncode == 0:
        return None
    message = err.decode("utf-8", "replace").strip().splitlines()
    detail = message[-1] if message else f"exited with {process.returncode}"
    return detail if detail.startswith(f"{BWRAP}:") else f"{BWRAP}: {detail}"


def shell_name() -> str:
    """The shell that runs a command, as the model and the user are told: /bin/sh, on Windows cmd.exe."""
    return "cmd.exe" if WINDOWS else SHELL


def shell_argv(command: str) -> list[str]:
    """The command line that runs `command` in the system's shell: /bin/sh, on Windows cmd.exe (COMSPEC)."""
    if WINDOWS:
        return [os.environ.get("COMSPEC", "cmd.exe"), "/d", "/s", "/c", command]
    return [SHELL, "-c", command]


def kill_group(process: Any) -> None:
    """SIGKILL `process`'s process group (it was started in a session of its own, so its children go too). Windows
    has no process groups: there the process alone is killed, and a child it started may outlive it. Raises
    ProcessLookupError for a process gone already, as os.killpg does."""
    if hasattr(os, "killpg"):
        os.killpg(process.pid, signal.SIGKILL)
    else:
        process.kill()


async def start_shell(command: str, cwd: Optional[Path], sandbox: Optional[Sandbox] = None,
                      **options: Any) -> asyncio.subprocess.Process:
    """`command` run by the system's shell in its own process group (a kill takes its children too; Windows: its
    own process), inside `sandbox` when there is one that can start; `options` as asyncio.create_subprocess_exec
    takes them (env, stdin, ...)."""
    argv = shell_argv(command)
    if sandbox is not None:
        argv = sandbox.wrap(argv, cwd)
    return await asyncio.create_subprocess_exec(*argv, cwd=cwd, start_new_session=True, **options)
