"""A server's transport from its configuration, on the SDK's public clients: `streamable_http_client`, or
`stdio_client` on the server's command line run by line_limit.py (no line of its output over MAX_LINE_BYTES) as a
child that dies with agent-lsp."""

from __future__ import annotations

import shutil
import sys
from contextlib import asynccontextmanager
from typing import Any, AsyncGenerator, Callable

from agent_lsp.config.mcp_servers import ServerConfig
from agent_lsp.mcp.line_limit import line_limited

ChildCommand = Callable[[str, list[str]], tuple[str, list[str]]]
"""The command line that runs `command args` as a child that never outlives agent-lsp."""

HTTP_TIMEOUT, HTTP_READ_TIMEOUT = 30.0, 300.0
"""The SDK's own timeouts for streamable HTTP (a response stream may stay open for minutes)."""


@asynccontextmanager
async def transport(config: ServerConfig, child_command: ChildCommand) -> AsyncGenerator[Any, None]:
    """The (read stream, write stream) of the server `config` names; OSError when its command is not found."""
    if config.type == "http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
        async with httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as client, \
                streamable_http_client(config.url, http_client=client) as streams:
            yield streams
        return

    from mcp.client.stdio import StdioServerParameters, stdio_client

    if shutil.which(config.command) is None:
        raise OSError(f"`{config.command}` was not found")
    command, args = child_command(*line_limited(config.command, list(config.args)))
    async with stdio_client(StdioServerParameters(command=command, args=args, env=dict(config.env) or None),
                            errlog=sys.stderr) as streams:
        yield streams
