"""Warming the model SDK after `initialized`: the first chat should not pay for `import anthropic` (seconds on a
busy machine), and start-up should not either, so it happens a little later, in a background thread; or at the
first agent request, if that comes sooner, which then awaits this same import (models/preload.py)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Mapping

from agent_lsp.config import Settings
from agent_lsp.models import preload
from agent_lsp.models.resolver import SDK_MODULES, resolve

log = logging.getLogger(__name__)
WARM_DELAY = 1.0
"""Seconds after `initialized` before warming: the editor's own start-up requests go first."""
WARM_MODULES = ("agent_lsp.lsp.handlers", *SDK_MODULES["anthropic"])
"""In this order: the agent side first (what every agent/* request imports), so that a request arriving meanwhile
waits for that one module, then the SDK."""
_warming = False
"""`warm` has run: by the timer or by the first agent request, whichever came first."""


def warm_modules(settings: Settings, env: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """What a first chat with these settings imports: the agent side, then its SDK; () when it uses no SDK."""
    sdk = resolve(settings, env).sdk
    return ("agent_lsp.lsp.handlers",) + sdk if sdk else ()


def schedule_warmup(settings: Settings) -> tuple[str, ...]:
    """Warm the SDK `WARM_DELAY` seconds from now when these settings would use one; the modules it will import
    (() when none). The first agent request starts it sooner (`warm` runs once)."""
    modules = warm_modules(settings)
    if modules:
        asyncio.get_running_loop().call_later(WARM_DELAY, warm, modules)
    return modules


def warm(modules: tuple[str, ...] = WARM_MODULES) -> None:
    """Import `modules` in the background (once per process, whoever asks first); log when the SDK is in."""
    # Not niced: a chat that starts meanwhile waits for this import, and a niced thread on a busy machine would
    # make that chat wait many times longer (priority inversion). The delay keeps it off start-up.
    global _warming
    if _warming:
        return
    _warming = True
    started = time.perf_counter()
    futures = preload.load(modules)
    logged = []

    def done(_: object) -> None:  # in whichever thread finished last; the list makes it one line
        if all(f.done() and f.exception() is None for f in futures) and not logged:
            logged.append(True)
            log.info("warmed the %s SDK in %.2f s", modules[2], time.perf_counter() - started)

    for future in futures:
        future.add_done_callback(done)
