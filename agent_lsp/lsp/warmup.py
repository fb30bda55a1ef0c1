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


OPENAI_MODULES = ("agent_lsp.lsp.handlers", "agent_lsp.models.openai", "openai", "httpx2")


def warm_modules(settings: Settings, env: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The modules a chat with these settings imports on its first model call; () when it uses no SDK."""
    if wants_anthropic(settings, env):
        return WARM_MODULES
    model = settings.model or ""
    if settings.provider == "openai" and model != "demo" and not model.startswith("script:"):
        return OPENAI_MODULES
    return ()


def schedule_warmup(settings: Settings) -> bool:
    """Warm the SDK `WARM_DELAY` seconds from now when these settings would use one; whether it was scheduled."""
    modules = warm_modules(settings)
    if not modules:
        return False
    asyncio.get_running_loop().call_later(WARM_DELAY, lambda: threading.Thread(
        target=_warm, args=(modules,), name="agent-lsp-warmup", daemon=True).start())
    return True


def _warm(modules: tuple[str, ...] = WARM_MODULES) -> None:
    # Not niced: a chat that starts meanwhile waits on this thread's import lock, and a niced thread on a busy
    # machine would make that chat wait many times longer (priority inversion). The delay keeps it off start-up.
    started = time.perf_counter()
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as e:  # the first chat will import it again and say what is wrong
            log.info("warming %s failed: %r", name, e)
            return
    log.info("warmed the %s SDK in %.2f s", modules[2], time.perf_counter() - started)
