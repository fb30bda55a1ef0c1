"""The `mcpServers` setting (and `.mcp.json`), checked: plain parsing, the MCP SDK loads only when a server starts
(mcp/servers.py)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_lsp.config.issues import PartlyValid
from agent_lsp.config.section import Entry, by_name, matching, number, string_map, strings, text

__all__ = ["START_TIMEOUT", "PartlyValid", "ServerConfig", "mcp_servers_by_name", "startup_seconds"]

START_TIMEOUT = 60.0
"""Seconds a server may take to start and list its tools before it counts as failed (`startTimeout`)."""
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")


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


def startup_seconds() -> Any:
    """A `startTimeout`: seconds, 1 ... 600."""
    return number(1, 600, " of seconds")


class StdioServer(Entry):
    """A server agent-lsp starts as a process, speaking MCP on its standard input and output."""

    command: text()
    """The program."""
    type: Literal["stdio"] = "stdio"
    """stdio: the default without a `url`."""
    args: strings("must be a list of strings") = ()
    """Its arguments."""
    env: string_map("must be an object of strings") = field(default_factory=dict)
    """Environment variables set for it, besides agent-lsp's own."""
    start_timeout: startup_seconds() = START_TIMEOUT
    """Seconds it may take to start and list its tools before it counts as failed."""

    def config(self) -> ServerConfig:
        return ServerConfig("stdio", command=self.command, args=self.args, env=tuple(sorted(self.env.items())),
                            start_timeout=self.start_timeout)


class HttpServer(Entry):
    """A server agent-lsp reaches over streamable HTTP."""

    url: matching(r"^https?://", "must be an http(s) URL")
    """Its endpoint."""
    type: Literal[HTTP_TYPES] = "http"
    """http: the default with a `url` and no `command`."""
    headers: string_map("must be an object of strings") = field(default_factory=dict)
    """HTTP headers sent with every request (an Authorization header, say)."""
    start_timeout: startup_seconds() = START_TIMEOUT
    """Seconds it may take to start and list its tools before it counts as failed."""

    def config(self) -> ServerConfig:
        return ServerConfig("http", url=self.url, headers=tuple(sorted(self.headers.items())),
                            start_timeout=self.start_timeout)


def _typed(value: Any) -> Any:
    """A server's `type` as MCP clients take it: when left out, http for a `url` without a `command`, else stdio."""
    if not isinstance(value, dict):
        raise ValueError("must be an object")
    kind = value.get("type", "http" if "url" in value and "command" not in value else "stdio")
    if kind != "stdio" and kind not in HTTP_TYPES:
        raise ValueError(f"unknown type {kind!r} (stdio or http)")
    return {**value, "type": kind}


@functools.cache
def mcp_servers_by_name() -> Any:
    """The `mcpServers` setting: servers by name, each as a ServerConfig; a bad one is left out and named, the
    others start."""
    from typing import Annotated, Union

    from pydantic import AfterValidator, BeforeValidator, Discriminator

    server = Annotated[Union[StdioServer, HttpServer], Discriminator("type"), BeforeValidator(_typed),
                       AfterValidator(lambda s: s.config())]
    return by_name(server, "server", "that server is not started")
