"""The `languageServers` setting (PROTOCOL §9), checked: plain parsing; agent_lsp/sidecar/ runs the servers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from agent_lsp.config.mcp_servers import PartlyValid, start_timeout

FIELDS = ("command", "languages", "initializationOptions", "settings", "startTimeout")
START_TIMEOUT = 30.0
"""Seconds a server may take to start and answer `initialize` before it counts as failed (`startTimeout`)."""


@dataclass(frozen=True)
class LanguageServerConfig:
    """One language server agent-lsp may run: its argv, the languages it serves (languageIds such as "python", or
    file extensions such as ".py"), and what it is told at start (`initializationOptions`) and when it asks
    (`settings`, answered to workspace/configuration), and how long it may take to start (`startTimeout`)."""

    command: tuple[str, ...]
    languages: tuple[str, ...]
    initialization_options: Any = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    start_timeout: float = START_TIMEOUT

    def describe(self) -> str:
        return " ".join(self.command)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"`{what}` must be a non-empty list of non-empty strings")
    return tuple(v.strip() for v in value)


def language_server_config(value: Any) -> LanguageServerConfig:
    """One entry of `languageServers`; ValueError saying what is wrong."""
    if not isinstance(value, dict):
        raise ValueError("must be an object with `command` and `languages`")
    unknown = sorted(k for k in value if k not in FIELDS)
    if unknown:
        raise ValueError("unknown field " + ", ".join(f"`{k}`" for k in unknown)
                         + " (the fields are " + ", ".join(f"`{k}`" for k in FIELDS) + ")")
    command = _strings(value.get("command"), "command")
    languages = _strings(value.get("languages"), "languages")
    bad = [lang for lang in languages if any(c.isspace() for c in lang) or lang == "."]
    if bad:
        raise ValueError(f"`languages` holds {bad[0]!r}: each is a languageId (\"python\") or an extension "
                         "(\".py\")")
    settings = value.get("settings", {})
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise ValueError("`settings` must be an object")
    return LanguageServerConfig(command=command, languages=languages,
                                initialization_options=value.get("initializationOptions"), settings=settings,
                                start_timeout=start_timeout(value.get("startTimeout"), START_TIMEOUT))


def parse_language_servers(value: Any) -> dict[str, LanguageServerConfig]:
    """The `languageServers` object; PartlyValid when some servers are bad (the others still run)."""
    if not isinstance(value, dict):
        raise ValueError("must be an object of language servers by name")
    good, problems = {}, []
    for name, entry in value.items():
        try:
            good[name] = language_server_config(entry)
        except ValueError as e:
            problems.append(f"language server `{name}`: {e}")
    if problems:
        raise PartlyValid("; ".join(problems) + " (that server is not used)", good)
    return good
