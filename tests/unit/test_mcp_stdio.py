"""The MCP stdio transport's line reader: messages split across chunks arrive whole, in order; a line over the
limit arrives as an error and the next one is read as usual."""

from __future__ import annotations

import asyncio
import sys

from mcp.client.stdio import StdioServerParameters

from agent_lsp.sessions.mcp_stdio import stdio_transport


def test_long_lines_split_lines_and_an_over_long_line():
    script = ("import json, sys\nw = sys.stdout.write\n"
              "ping = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'ping'})\n"
              "big = json.dumps({'jsonrpc': '2.0', 'id': 2, 'result': {'text': 'y' * 300000}})\n"
              "w(ping + '\\n' + big[:1000]); sys.stdout.flush()\n"
              "w(big[1000:] + '\\n' + 'x' * 5000 + '\\n' + ping + '\\n'); sys.stdout.flush()\n"
              "sys.stdin.read()\n")

    async def read() -> list:
        params = StdioServerParameters(command=sys.executable, args=["-c", script])
        async with stdio_transport(params, max_line=400_000) as (reader, _writer):
            first = [await reader.receive() for _ in range(2)]
        async with stdio_transport(StdioServerParameters(command=sys.executable, args=["-c", script]),
                                   max_line=4000) as (reader, _writer):
            second = [await reader.receive() for _ in range(4)]
        return first + second

    got = asyncio.run(read())
    kinds = [type(m).__name__ for m in got]
    assert kinds == ["SessionMessage", "SessionMessage", "SessionMessage", "ValueError", "ValueError",
                     "SessionMessage"]
    assert got[1].message.result == {"text": "y" * 300_000}
    assert str(got[3]) == "an MCP message over 4000 characters was dropped"
