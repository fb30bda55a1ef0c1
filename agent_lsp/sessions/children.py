"""Child processes that never outlive agent-lsp (MCP servers, language servers of its own): on Linux the child
is exec'd with SIGKILL as its parent-death signal, so even a SIGKILLed agent-lsp leaves none behind."""

from __future__ import annotations

import os
import sys

# exec the program with SIGKILL as its parent-death signal (prctl 1 = PR_SET_PDEATHSIG), unless we are gone already
_LAUNCH = ("import ctypes,os,sys\nppid=int(sys.argv[1])\nctypes.CDLL(None).prctl(1,9)\n"
           "os.getppid()==ppid or os._exit(1)\nos.execvp(sys.argv[2],sys.argv[2:])")


def dying_with_us(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The command line that runs `command args` as a child that dies with this process (unchanged elsewhere
    than on Linux)."""
    if not sys.platform.startswith("linux"):
        return command, args
    return sys.executable, ["-I", "-S", "-c", _LAUNCH, str(os.getpid()), command, *args]
