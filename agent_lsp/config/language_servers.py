"""The `languageServers` setting (PROTOCOL §9), checked: plain parsing; agent_lsp/sidecar/ runs the servers."""

from __future__ import annotations

import functools
from dataclasses import field
from typing import Any

from agent_lsp.config.mcp_servers import startup_seconds
from agent_lsp.config.section import Entry, an_object, by_name, strings, then

START_TIMEOUT = 30.0
"""Seconds a server may take to start and answer `initialize` before it counts as failed (`startTimeout`)."""


def _languages(languages: tuple[str, ...]) -> tuple[str, ...]:
    bad = [lang for lang in languages if any(c.isspace() for c in lang) or lang == "."]
    if bad:
        raise ValueError(f"holds {bad[0]!r}: each is a languageId (\"python\") or an extension (\".py\")")
    return languages


def _words() -> Any:
    return strings("must be a non-empty list of non-empty strings", at_least=1, non_empty=True)


class LanguageServerConfig(Entry):
    """One language server agent-lsp may run: its argv, the languages it serves (languageIds such as "python", or
    file extensions such as ".py"), and what it is told at start (`initializationOptions`) and when it asks
    (`settings`, answered to workspace/configuration), and how long it may take to start (`startTimeout`)."""

    __pydantic_config__ = {**Entry.__pydantic_config__, "extra": "forbid"}

    command: _words()
    """Its argv."""
    languages: then(_words(), _languages)
    """The languages it serves: languageIds ("python") or file extensions (".py")."""
    initialization_options: Any = None
    """What it is told at start (initialize's initializationOptions)."""
    settings: an_object() = field(default_factory=dict)
    """What it is answered when it asks for its configuration (workspace/configuration)."""
    start_timeout: startup_seconds() = START_TIMEOUT
    """Seconds it may take to start and answer initialize before it counts as failed."""

    def describe(self) -> str:
        return " ".join(self.command)


@functools.cache
def language_servers_by_name() -> Any:
    """The `languageServers` setting: servers by name; a bad one is left out and named, the others run."""
    return by_name(LanguageServerConfig, "language server", "that server is not used")

