"""Importing a model SDK once, in a background thread, for whoever asks first: the warm-up after start-up, or the
first model call, which awaits the same import instead of running it on the event loop (where a chat racing the
warm-up would block the loop on the import lock) or starting a second one."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import sys
import threading
import time
from typing import Iterable

log = logging.getLogger(__name__)

_lock = threading.Lock()
_futures: dict[str, concurrent.futures.Future] = {}
"""Each module asked for: done when its import has run (or failed)."""
IMPORTED: list[str] = []
"""The modules this process imported through here, in order, each once (shown by `agent/debug`)."""


def load(modules: Iterable[str]) -> list[concurrent.futures.Future]:
    """Start importing in a background thread whichever of `modules` nobody asked for yet; a future for each."""
    modules = tuple(modules)
    with _lock:
        mine = [m for m in modules if m not in _futures]
        for name in mine:
            _futures[name] = concurrent.futures.Future()
        futures = [_futures[m] for m in modules]
    if mine:
        threading.Thread(target=_run, args=(mine,), name="agent-lsp-preload", daemon=True).start()
    return futures


async def imported(*modules: str) -> None:
    """Return once `modules` are imported, by this call's thread or by one already under way. A failed import is
    not raised here: the caller's own `import` then fails with the real error."""
    for future in load(modules):
        if future.done():  # every call after the first: no trip through the loop
            continue
        try:
            # shielded: a caller cancelled meanwhile (a suggestion the editor cancels, an aborted chat) would cancel
            # the shared future, and every later caller would wait for it for ever
            await asyncio.shield(asyncio.wrap_future(future))
        except Exception:
            pass


def _run(modules: list[str]) -> None:
    started = time.perf_counter()
    for name in modules:
        future = _futures[name]
        try:
            if name not in sys.modules:
                importlib.import_module(name)
                IMPORTED.append(name)
        except Exception as e:  # the caller's own import says what is wrong
            log.info("importing %s failed: %r", name, e)
            future.set_exception(e)
        else:
            future.set_result(None)
    log.info("imported %s in %.2f s", ", ".join(modules), time.perf_counter() - started)
