"""The sidecar for the settings in force: settings change (the user file is re-read, a workspace gets trusted), and
the language servers follow without restarting the ones that did not change."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable, Mapping, Optional

from agent_lsp.config.language_servers import LanguageServerConfig
from agent_lsp.core.paths import real
from agent_lsp.core.ports import Editor
from agent_lsp.sidecar.features import SidecarLanguageFeatures


class SidecarPool:
    """One SidecarLanguageFeatures for the current `languageServers` and workspace folders: `get` answers the same
    one while they stay the same (a new `languageTimeout` applies to it at once), a new one when they change (the
    old one closed in the background), None when no server is configured."""

    def __init__(self, editor_provider: Callable[[], Optional[Editor]], warn: Callable[[str], None]) -> None:
        self._editor_provider = editor_provider
        self._warn = warn
        self._current: Optional[SidecarLanguageFeatures] = None
        self._key: Optional[tuple[dict[str, LanguageServerConfig], list[Path]]] = None
        self._closing: set[asyncio.Task] = set()

    async def get(self, configs: Mapping[str, LanguageServerConfig], roots: list[Path],
                  timeout: float) -> Optional[SidecarLanguageFeatures]:
        """The sidecar for these settings, prepared (which folders have files of its servers' languages, looked at
        once, in a thread)."""
        key = (dict(configs), sorted(real(r) for r in roots))
        if key != self._key:
            self._retire()
            self._key = key
            if configs:
                self._current = SidecarLanguageFeatures(configs, roots, self._editor_provider, self._warn, timeout)
        current = self._current
        if current is not None:
            current.timeout = timeout
            await current.prepare()
        return current

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None:
        """Files changed on disk outside a chat's tools (a revert): the current servers are told."""
        if self._current is not None:
            self._current.disk_changed(paths)

    def _retire(self) -> None:
        if self._current is not None:
            task = asyncio.ensure_future(self._current.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        self._current, self._key = None, None

    async def close(self) -> None:
        """Stop every language server of the pool."""
        self._retire()
        await asyncio.gather(*self._closing, return_exceptions=True)
