"""Warming the model SDK after `initialized`: the first chat should not pay for `import anthropic` (seconds on a
busy machine), and start-up should not either, so it happens a little later, in a background thread."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import threading
import time
from typing import Mapping

from agent_lsp.config import Settings

log = logging.getLogger(__name__)
WARM_DELAY = 1.0
"""Seconds after `initialized` before warming: the editor's own start-up requests go first."""
WARM_MODULES = ("agent_lsp.lsp.handlers", "agent_lsp.models.anthropic", "anthropic", "httpx2")
"""In this order: the agent side first (what every agent/* request imports), so that a request arriving meanwhile
waits for that one module rather than importing pydantic alongside this thread."""


def wants_anthropic(settings: Settings, env: Mapping[str, str] = os.environ) -> bool:
    """Whether a chat with these settings would use the anthropic SDK (as `models.registry.build_model` decides)."""
    model = settings.model or ""
    if settings.provider in ("demo", "openai") or model == "demo" or model.startswith("script:"):
        return False
    return settings.provider == "anthropic" or bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


def schedule_warmup(settings: Settings) -> bool:
    """Warm the SDK `WARM_DELAY` seconds from now when these settings would use it; whether it was scheduled."""
    if not wants_anthropic(settings):
        return False
    asyncio.get_running_loop().call_later(WARM_DELAY, lambda: threading.Thread(
        target=_warm, name="agent-lsp-warmup", daemon=True).start())
    return True


def _warm() -> None:
    # Not niced: a chat that starts meanwhile waits on this thread's import lock, and a niced thread on a busy
    # machine would make that chat wait many times longer (priority inversion). The delay keeps it off start-up.
    started = time.perf_counter()
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception as e:  # the first chat will import it again and say what is wrong
            log.info("warming %s failed: %r", name, e)
            return
    log.info("warmed the anthropic SDK in %.2f s", time.perf_counter() - started)
