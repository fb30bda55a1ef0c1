"""A real MCP server (the `mcp` SDK's MCPServer) for the e2e tests, over stdio or streamable HTTP.

`python -m tests.fakes.mcp_server DIR [--http]`: writes DIR/pid (its pid) once serving (with --http, DIR/port
too: an ephemeral port on 127.0.0.1). Tools: `lookup` (readOnlyHint), `shout` (writes DIR/shouted), `wait` (waits
until cancelled, writing DIR/started then DIR/cancelled).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations


def build(out: Path) -> MCPServer:
    server = MCPServer("fake")

    @server.tool(description="Look a word up.", annotations=ToolAnnotations(read_only_hint=True))
    def lookup(word: str) -> str:
        return f"{word}: a word"

    @server.tool(description="Shout a text (writes a file).")
    def shout(text: str) -> str:
        (out / "shouted").write_text(text.upper())
        return text.upper()

    @server.tool(description="Wait until cancelled.")
    async def wait() -> str:
        (out / "started").write_text("1")
        try:
            await asyncio.Event().wait()
        except BaseException:  # the cancellation the client's notifications/cancelled causes
            (out / "cancelled").write_text("1")
            raise
        return "never"

    return server


async def serve_http(server: MCPServer, out: Path) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    (out / "port").write_text(str(sock.getsockname()[1]))
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    server = build(out)
    (out / "pid").write_text(str(os.getpid()))
    if "--http" in sys.argv:
        asyncio.run(serve_http(server, out))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
