"""MCP servers as tools: the servers of this process, started on the first chat that needs them and stopped with
the process.

The `mcp` SDK is imported only when a server starts (it costs most of a second). A stdio server is our child in
its own process group (the SDK kills the group on close), started by the `child_command` the caller gives, so that
even a SIGKILLed agent-lsp leaves none behind.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from agent_lsp.config import env_seconds
from agent_lsp.config.mcp_servers import ServerConfig
from agent_lsp.core.tool import ToolError
from agent_lsp.mcp.server_tool import McpTool, schema_problem
from agent_lsp.mcp.tool_listings import listings_checked
from agent_lsp.mcp.transports import ChildCommand, transport

log = logging.getLogger(__name__)
CHAT_WAIT = env_seconds("AGENT_LSP_MCP_START_WAIT", 10.0)
"""Seconds a chat waits for servers still starting; it then goes on without their tools, offered once they are up
(a server has its own `startTimeout` to start at all). The environment overrides it (a ceiling under test)."""
STOP_TIMEOUT = 10.0


@dataclass
class _Server:
    name: str
    config: ServerConfig
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    session: Any = None
    tools: list[McpTool] = field(default_factory=list)
    task: Optional[asyncio.Task] = None
    late: bool = False
    """A chat went on without this server's tools (warned once)."""


class McpServers:
    """The MCP servers of this process, by name: each started once, on first need; `close` stops them all."""

    def __init__(self, warn: Callable[[str], None], child_command: ChildCommand) -> None:
        self._warn = warn
        self._child_command = child_command
        self._servers: dict[str, _Server] = {}

    async def tools(self, configs: Mapping[str, ServerConfig], wait: Optional[float] = CHAT_WAIT) -> list[McpTool]:
        """The tools of the configured servers, starting those not started yet (a server keeps the configuration
        it started with for the life of the process). Servers still starting after `wait` seconds (None: however
        long they take) are left out of this answer, with one warning each; later chats take their tools once they
        are up, without waiting for them again."""
        for name, config in configs.items():
            if name not in self._servers:
                server = self._servers[name] = _Server(name, config)
                server.task = asyncio.create_task(self._run(server), name=f"mcp server {name}")
        wanted = [self._servers[name] for name in configs]
        waiting = [asyncio.ensure_future(s.ready.wait()) for s in wanted if not s.ready.is_set() and not s.late]
        if waiting:
            try:
                await asyncio.wait(waiting, timeout=wait)
            finally:
                for waiter in waiting:
                    waiter.cancel()
        for s in wanted:
            if not s.ready.is_set() and not s.late and wait is not None:
                s.late = True
                self._warn(f"agent-lsp: the MCP server `{s.name}` ({s.config.describe()}) is still starting after "
                           f"{wait:g} s; this chat goes on without its tools, which are offered once it has started.")
        return [tool for s in wanted if s.ready.is_set() and s.session is not None for tool in s.tools]

    async def close(self) -> None:
        """Stop every server (their context exits close stdio pipes and kill process groups)."""
        for server in self._servers.values():
            server.stop.set()
        tasks = [s.task for s in self._servers.values() if s.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_TIMEOUT)

    async def _run(self, server: _Server) -> None:
        try:
            from mcp import ClientSession  # the SDK costs most of a second: only once a server is configured

            async with AsyncExitStack() as stack:
                streams = await stack.enter_async_context(listings_checked(
                    transport(server.config, self._child_command), self._refused(server)))
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                try:
                    async with asyncio.timeout(server.config.start_timeout):
                        await session.initialize()
                        listed = await _list_tools(session)
                except TimeoutError:
                    raise TimeoutError(f"no answer within {server.config.start_timeout:g} s (its `startTimeout`)")
                server.tools = [McpTool(server.name, t.name, t.description or t.title or "", t.input_schema,
                                        bool(t.annotations and t.annotations.read_only_hint), self._caller(server))
                                for t in listed if self._usable(server, t)]
                server.session = session
                server.ready.set()
                await server.stop.wait()
        except Exception as e:  # a server that cannot start is a warning; the other tools go on
            if not server.ready.is_set():
                self._warn(f"agent-lsp: the MCP server `{server.name}` ({server.config.describe()}) did not start: "
                           f"{_reason(e)}; its tools are not offered.")
            else:
                log.info("MCP server %s ended: %r", server.name, e)
        finally:
            server.session = None
            server.ready.set()

    def _usable(self, server: _Server, tool: Any) -> bool:
        problem = schema_problem(tool.input_schema)
        if problem:
            self._warn(f"agent-lsp: the tool `{tool.name}` of the MCP server `{server.name}` has an input schema "
                       f"that is not valid JSON Schema ({problem}); it is not offered.")
        return problem is None

    def _refused(self, server: _Server) -> Callable[[str, str], None]:
        def warn(tool: str, why: str) -> None:
            self._warn(f"agent-lsp: the tool `{tool}` of the MCP server `{server.name}` is not a valid MCP tool "
                       f"({why}); it is not offered.")

        return warn

    def _caller(self, server: _Server):
        async def call(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            session = server.session
            if session is None:
                raise ToolError(f"The MCP server `{server.name}` is not running.")
            try:
                result = await session.call_tool(tool, arguments)
            except asyncio.CancelledError:
                raise  # an abort: the SDK tells the server (notifications/cancelled)
            except Exception as e:
                if _answered(e):  # an error answer (say, one over agent-lsp's line limit): the server goes on
                    raise ToolError(f"The MCP server `{server.name}` answered an error: {e}") from None
                # the server died or broke the protocol: its tools are offered no more
                if server.session is session:
                    server.session = None
                    self._warn(f"agent-lsp: the MCP server `{server.name}` stopped ({_reason(e)}); its tools are "
                               "no longer offered.")
                raise ToolError(f"The MCP server `{server.name}` failed: {_reason(e)}") from None
            parts = [getattr(c, "text", None) or f"[{getattr(c, 'type', 'content')} omitted]" for c in result.content]
            if not parts and result.structured_content is not None:
                parts = [json.dumps(result.structured_content)]
            return "\n".join(parts), bool(result.is_error)

        return call


def _answered(e: Exception) -> bool:
    """`e` is the server's JSON-RPC error answer, not the connection's end."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(e, MCPError) and e.code != CONNECTION_CLOSED


def _reason(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup) and e.exceptions:
        return _reason(e.exceptions[0])
    return str(e) or type(e).__name__


async def _list_tools(session: Any) -> list:
    tools, cursor = [], None
    while True:
        from mcp import types

        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools
