"""The MCP stdio transport, the SDK's `stdio_client` on a line-limited command line (mcp/line_limit.py): messages
split across chunks arrive whole, in order; a line over the limit arrives as an error answering its request (null
when the line is not an answer), and the next one is read as usual."""

from __future__ import annotations

import asyncio
import json
import sys

from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_lsp.mcp.line_limit import line_limited, refusal

DROPPED = "the answer has {} bytes, over agent-lsp's limit of {} for one MCP message; it was dropped"


def test_long_lines_split_lines_and_an_over_long_line():
    script = ("import json, sys\nw = sys.stdout.write\n"
              "ping = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'ping'})\n"
              "big = json.dumps({'jsonrpc': '2.0', 'id': 2, 'result': {'text': 'y' * 300000}})\n"
              "w(ping + '\\n' + big[:1000]); sys.stdout.flush()\n"
              "w(big[1000:] + '\\n' + 'x' * 5000 + '\\n' + ping + '\\n'); sys.stdout.flush()\n"
              "sys.stdin.read()\n")

    async def read(limit: int, count: int) -> list:
        command, args = line_limited(sys.executable, ["-c", script], limit)
        async with stdio_client(StdioServerParameters(command=command, args=args)) as (reader, _writer):
            return [await reader.receive() for _ in range(count)]

    async def both() -> list:
        return await read(400_000, 2) + await read(4000, 4)

    got = asyncio.run(both())
    kinds = [type(m.message).__name__ for m in got]
    assert kinds == ["JSONRPCRequest", "JSONRPCResponse", "JSONRPCRequest", "JSONRPCError", "JSONRPCError",
                     "JSONRPCRequest"]
    assert got[1].message.result == {"text": "y" * 300_000}
    big = len(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"text": "y" * 300000}}))
    assert (got[3].message.id, got[3].message.error.message) == (2, DROPPED.format(big, 4000))
    assert (got[4].message.id, got[4].message.error.message) == (None, DROPPED.format(5000, 4000))


def test_the_request_an_over_long_line_answers_is_read_from_either_end():
    def answered(line: dict) -> object:
        text = json.dumps(line).encode()
        return json.loads(refusal(text[:100], text[-100:], len(text), 100))["id"]

    big = "y" * 1000
    assert answered({"jsonrpc": "2.0", "id": 7, "result": {"text": big}}) == 7
    assert answered({"jsonrpc": "2.0", "id": "a\"b", "error": {"code": 1, "message": big}}) == "a\"b"
    assert answered({"result": {"text": big}, "jsonrpc": "2.0", "id": 8}) == 8  # the TypeScript SDK's order
    assert answered({"result": {"text": big, "id": 9}}) is None  # an id, but not the answer's
    assert answered({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage", "params": {"t": big}}) is None
    assert answered({"method": "sampling/createMessage", "params": {"t": big}, "jsonrpc": "2.0", "id": 4}) is None
