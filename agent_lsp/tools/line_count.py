"""Line counts of big files by `wc -l`, in processes of their own (no GIL held while a file is counted).

The counts asked for in one turn of the event loop (the `read_file` calls of one model reply start together) share
processes: at most one per core, each `wc -l /dev/fd/3 /dev/fd/4 …` over a share of the files balanced by size.
Starting `wc` costs about as much as counting a 10 MB file: 8 reads of big files on 2 cores start 2 processes, not 8.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

WC_ENV = {"LC_ALL": "C"}
"""wc needs no locale to count newlines, and loading one was a fifth of a small count."""


@dataclass
class _Request:
    fd: int
    """The file, opened for `wc` (which reads it as /dev/fd/N), closed once `wc` has its copy."""
    size: int
    answer: concurrent.futures.Future


class LineCounter:
    """Counts newlines of open files in batches; answers are concurrent futures, so a thread can wait on them."""

    def __init__(self) -> None:
        self._pending: list[_Request] = []
        self._started: Optional[asyncio.Future] = None

    async def count(self, path: Path) -> Optional[concurrent.futures.Future]:
        """A future of the number of "\\n" in `path` (None as its result when `wc` could not count it), or None
        when the file cannot be opened here (the reader reports why). Returns once `wc` runs: a reader started
        before would hold the GIL while the loop starts `wc`."""
        if os.name == "nt":  # no /dev/fd, no wc: the reader counts
            return None
        try:
            # Never blocks the loop: a path that became a FIFO since it was looked at opens at once too.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            size = os.fstat(fd).st_size
        except OSError:
            os.close(fd)
            return None
        answer: concurrent.futures.Future = concurrent.futures.Future()
        loop = asyncio.get_running_loop()
        if self._started is None or self._started.get_loop() is not loop:  # (a loop closed before its flush)
            self._drop()
            self._started = loop.create_future()
            loop.call_soon(self._flush)
        self._pending.append(_Request(fd, size, answer))
        await asyncio.shield(self._started)
        return answer

    def _drop(self) -> None:
        """Forget a batch whose loop is gone: its files are closed, its answers say "not counted"."""
        for request in self._pending:
            os.close(request.fd)
        _answer(self._pending, {})
        self._pending, self._started = [], None

    def _flush(self) -> None:
        batch, started = self._pending, self._started
        self._pending, self._started = [], None
        try:
            for share in _shares(batch, _cores()):
                try:
                    _start(share)
                except Exception:  # its readers count themselves; the next share still starts
                    _answer(share, {})
        finally:
            if started is not None and not started.done():
                started.set_result(None)


def _cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # macOS has no sched_getaffinity
        return os.cpu_count() or 1


def _shares(batch: list[_Request], cores: int) -> list[list[_Request]]:
    """The batch cut into at most `cores` shares of about equal bytes (largest file first, to the lightest)."""
    shares: list[list[_Request]] = [[] for _ in range(min(cores, len(batch)))]
    loads = [0] * len(shares)
    for request in sorted(batch, key=lambda r: r.size, reverse=True):
        lightest = loads.index(min(loads))
        shares[lightest].append(request)
        loads[lightest] += request.size
    return shares


def _start(share: list[_Request]) -> None:
    """One `wc -l` over the share's descriptors, read by a thread of its own; each answer is set exactly once."""
    try:
        process = subprocess.Popen(
            ["wc", "-l", *(f"/dev/fd/{r.fd}" for r in share)], pass_fds=[r.fd for r in share],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**WC_ENV, "PATH": os.environ.get("PATH", os.defpath)})
    except (OSError, ValueError):  # no wc, no process to be had
        _answer(share, {})
        return
    finally:
        for request in share:
            os.close(request.fd)
    try:
        threading.Thread(target=_collect, args=(process, share), name="wc", daemon=True).start()
    except RuntimeError:  # no thread to be had: the readers count
        process.kill()
        process.wait()
        _answer(share, {})


def _collect(process: subprocess.Popen, share: list[_Request]) -> None:
    counts: dict[str, int] = {}
    try:
        out, _ = process.communicate()
        counts = _parse(out)
    finally:
        _answer(share, counts)


def _answer(share: list[_Request], counts: dict[str, int]) -> None:
    for request in share:
        if not request.answer.done():
            request.answer.set_result(counts.get(f"/dev/fd/{request.fd}"))


def _parse(out: bytes) -> dict[str, int]:
    """`wc -l` lines, `  count name`, by name; a file wc could not read has no line, and the total is left out."""
    counts = {}
    for line in out.decode("ascii", errors="replace").splitlines():
        words = line.split(None, 1)
        if len(words) == 2 and words[0].isdigit() and words[1].startswith("/dev/fd/"):
            counts[words[1].strip()] = int(words[0])
    return counts


COUNTER = LineCounter()
