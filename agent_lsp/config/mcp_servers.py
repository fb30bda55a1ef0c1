"""The `mcpServers` setting (and `.mcp.json`), checked: plain parsing, the MCP SDK loads only when a server starts
(mcp/servers.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

START_TIMEOUT = 60.0
"""Seconds a server may take to start and list its tools before it counts as failed (`startTimeout`)."""


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: stdio (`command`, `args`, `env`) or streamable HTTP (`url`, `headers`)."""

    type: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    start_timeout: float = START_TIMEOUT

    def describe(self) -> str:
        return " ".join([self.command, *self.args]) if self.type == "stdio" else self.url


def _strings(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{what} must be an object of strings")
    return tuple(sorted(value.items()))


def start_timeout(value: Any, default: float = START_TIMEOUT) -> float:
    """A `startTimeout` (seconds, 1 … 600; `default` when absent); ValueError naming the field when bad."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 600:
        raise ValueError("`startTimeout` must be a number of seconds from 1 to 600")
    return float(value)


def server_config(value: Any) -> ServerConfig:
    """One entry of `mcpServers`; ValueError saying what is wrong."""
    if not isinstance(value, dict):
        raise ValueError("must be an object")
    timeout = start_timeout(value.get("startTimeout"))
    kind = value.get("type", "http" if "url" in value and "command" not in value else "stdio")
    if kind == "stdio":
        command, args = value.get("command"), value.get("args", [])
        if not isinstance(command, str) or not command.strip():
            raise ValueError("`command` must be a non-empty string")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("`args` must be a list of strings")
        return ServerConfig("stdio", command=command, args=tuple(args), env=_strings(value.get("env"), "`env`"),
                            start_timeout=timeout)
    if kind in ("http", "streamable-http", "streamableHttp"):
        url = value.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError("`url` must be an http(s) URL")
        return ServerConfig("http", url=url, headers=_strings(value.get("headers"), "`headers`"),
                            start_timeout=timeout)
    raise ValueError(f"unknown type {kind!r} (stdio or http)")


class PartlyValid(ValueError):
    """Some entries were bad: `value` keeps the good ones; the message names the bad ones."""

    def __init__(self, message: str, value: Any) -> None:
        super().__init__(message)
        self.value = value


def parse_servers(value: Any) -> dict[str, ServerConfig]:
    """The `mcpServers` object; PartlyValid when some servers are bad (the others still start)."""
    if not isinstance(value, dict):
        raise ValueError("must be an object of servers by name")
    good, problems = {}, []
    for name, entry in value.items():
        try:
            good[name] = server_config(entry)
        except ValueError as e:
            problems.append(f"server `{name}`: {e}")
    if problems:
        raise PartlyValid("; ".join(problems) + " (that server is not started)", good)
    return good
