"""ripgrep for search and list_files: the `rg` binary, run off the event loop in its own process group.

`rg` comes with agent-lsp (the `ripgrep` wheel puts it next to the interpreter). It walks the workspace the way git
sees it (.gitignore, .ignore, hidden files shown, `.git` and the usual caches skipped, links never followed) and
is killed with its whole process group when the caller is cancelled (an abort) or stops reading (a cap reached).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import posixpath
import re
import shutil
import sys
import sysconfig
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, NamedTuple, Optional

from agent_lsp.core.paths import display
from agent_lsp.core.tool import ToolError
from agent_lsp.processes import kill_group
from agent_lsp.tools.paths import resolve

SKIPPED_DIRS = (".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache")
MAX_FILE_SIZE = "2M"
LINE_LIMIT = 32 * 1024 * 1024
"""A JSON line can hold a whole (minified) file of up to MAX_FILE_SIZE, escaped."""
WALK = ["--no-config", "--no-require-git", "--hidden", "--sort", "path",
        *(arg for name in SKIPPED_DIRS for arg in ("-g", f"!{name}"))]
"""How every run walks: .gitignore honoured in or out of a git repository, deterministic order."""

_FILE_ERROR = re.compile(r"\(os error \d+\)$")
_NOTHING_SEARCHED = "rg: No files were searched"
_binary: Optional[str] = None


def rg_binary() -> str:
    """The `rg` next to this interpreter (an editor may start us by absolute path, venv not on PATH), else PATH's."""
    global _binary
    if _binary is None:
        name = "rg.exe" if os.name == "nt" else "rg"
        places = [Path(sys.executable).parent / name, Path(sysconfig.get_path("scripts")) / name]
        found = next((str(p) for p in places if p.is_file() and os.access(p, os.X_OK)), None) or shutil.which("rg")
        if found is None:
            raise ToolError("ripgrep (`rg`) was not found next to agent-lsp's Python or on PATH; reinstall "
                            "agent-lsp-server (it depends on the `ripgrep` package) or install ripgrep.")
        _binary = found
    return _binary


class Where(NamedTuple):
    """Where rg runs for a path the model gave."""

    start: Path
    """The path, resolved inside the workspace folders."""
    cwd: Path
    """rg's working directory: the path itself, or a file's folder."""
    target: list[str]
    """What rg walks from there: nothing (all of `cwd`), or the file's name."""
    base: str
    """`cwd` as the model sees it (what `join` puts before rg's relative names)."""


def where(roots: list[Path], raw: Optional[str]) -> Where:
    """Where rg runs for `raw` (None: the first workspace folder); a ToolError when it is outside the workspace
    folders or does not exist."""
    start = resolve(roots, raw)
    if not start.exists():
        raise ToolError(f"{raw} does not exist.")
    cwd, target = (start, []) if start.is_dir() else (start.parent, [start.name])
    return Where(start, cwd, target, display(roots, cwd))


class NothingSearched(ToolError):
    """rg found no file to search: every file was filtered out (a glob that matches none, or all excluded)."""


@dataclass(frozen=True)
class Match:
    """One matching line: `path` as rg printed it (relative to where it ran), 1-based `line`, the line's text."""

    path: str
    line: int
    text: str


def parse_match(raw: bytes) -> Optional[Match]:
    """A `rg --json` line → a Match, or None for the other message types (begin, end, context, summary)."""
    return match_of(json.loads(raw))


def match_of(message: dict) -> Optional[Match]:
    """A parsed `rg --json` message → a Match, or None for the other message types."""
    if message.get("type") != "match":
        return None
    data = message["data"]
    return Match(path=_text(data["path"]), line=data["line_number"], text=_text(data["lines"]).rstrip("\r\n"))


def begun(message: dict) -> Optional[str]:
    """The path of a parsed `rg --json` "begin" message (rg starts each file's messages with one), else None."""
    return _text(message["data"]["path"]) if message.get("type") == "begin" else None


MATCH_PREFIX = b'{"type":"match"'
"""How rg starts a match line: the matches of a file we leave out are passed over without parsing them."""


def _text(field: dict) -> str:
    """rg's {"text": …} or, for bytes that are not UTF-8, {"bytes": base64}."""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")


async def lines(args: list[str], cwd: Path, stdin: Optional[bytes] = None) -> AsyncIterator[bytes]:
    """Run `rg *args` in `cwd` and yield its stdout lines. rg exits 1 for "nothing found"; any other failure is a
    ToolError with rg's own message. Closing the iterator early, or cancelling its reader, kills rg's group."""
    process = await asyncio.create_subprocess_exec(
        rg_binary(), *args, cwd=cwd, start_new_session=True,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=LINE_LIMIT)
    stderr_task = asyncio.ensure_future(process.stderr.read())
    # Fed while its output is read: rg writing a full stdout pipe stops reading stdin.
    feeder = asyncio.ensure_future(_feed(process, stdin)) if stdin is not None else None
    finished = False
    try:
        async for line in process.stdout:
            yield line
        code = await process.wait()
        finished = True
        error = (await stderr_task).decode("utf-8", errors="replace").strip()
        if _failed(code, error):
            if "regex parse error" in error:
                raise ToolError(f"pattern is not a valid regular expression (ripgrep syntax): {error}")
            if error.startswith(_NOTHING_SEARCHED):
                raise NothingSearched(error)
            raise ToolError(error or f"rg exited with status {code}")
    finally:
        if not finished:
            kill(process)
            await asyncio.shield(process.wait())
        stderr_task.cancel()
        if feeder is not None:
            feeder.cancel()


async def files_holding(root: Path, word: str, suffix: str) -> int:
    """How many files under `root` named `*{suffix}` hold `word` as a whole word (walked as every run walks)."""
    args = ["-l", "-w", "-F", "--max-filesize", MAX_FILE_SIZE, "-g", f"*{suffix}", *WALK, "--", word, "."]
    count = 0
    try:
        async with aclosing(lines(args, root)) as out:
            async for _ in out:
                count += 1
    except NothingSearched:
        return 0
    return count


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    try:
        process.stdin.write(data)
        await process.stdin.drain()
        process.stdin.close()
    except (BrokenPipeError, ConnectionResetError):  # rg stopped reading (a bad pattern): its exit says why
        pass


def _failed(code: int, stderr: str) -> bool:
    """rg exits 1 when nothing matched, and 2 also when only some files could not be read (permissions, a file
    that vanished): neither is a failure. Anything else (a bad pattern, a bad glob) is."""
    if code in (0, 1):
        return False
    return not (code == 2 and stderr and all(_FILE_ERROR.search(line) for line in stderr.splitlines()))


def kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL rg's process group (it runs in its own session)."""
    if process.returncode is not None:
        return
    try:
        kill_group(process)
    except (ProcessLookupError, PermissionError):
        pass


def join(base: str, rel: str) -> str:
    """A path rg printed relative to `cwd`, as the model sees it (`base` is cwd as the model sees it)."""
    return posixpath.normpath(f"{base}/{rel}") if base not in (".", "") else posixpath.normpath(rel)
