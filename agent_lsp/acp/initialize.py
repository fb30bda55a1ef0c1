"""`initialize` answered before the ACP SDK has loaded.

`import acp` builds ACP's whole schema (hundreds of pydantic models: about a second, more on a busy machine), and an
editor waits for `initialize` every time it spawns an agent. So `agent-lsp --acp` reads the first message itself
and, when it is a well-formed `initialize`, answers it at once from plain data while the SDK loads in a thread;
the SDK's connection then takes over the same streams, and the agent is told the client's capabilities as if the
SDK had delivered the request. Anything else is handed to the SDK untouched.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Optional

from agent_lsp import __version__

PROTOCOL_VERSION = 1
"""ACP's protocol version this agent speaks (the SDK's `acp.PROTOCOL_VERSION`; a test keeps them equal)."""
LINE_LIMIT = 50 * 1024 * 1024


def initialize_result(requested: Any) -> dict[str, Any]:
    """The `initialize` answer exactly as the SDK serialises it (defaults left out; a test holds the two equal):
    the single source of the agent's capabilities."""
    version = min(requested, PROTOCOL_VERSION) if isinstance(requested, int) and requested >= 1 else PROTOCOL_VERSION
    return {
        "protocolVersion": version,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"embeddedContext": True, "image": True},  # audio: false, the default
            "sessionCapabilities": {"list": {}},
            "auth": {},
        },
        "agentInfo": {"name": "agent-lsp-server", "title": "agent-lsp", "version": __version__},
    }


def initialize_request(line: bytes) -> Optional[dict[str, Any]]:
    """The message when `line` is an `initialize` request this module can answer; None for anything else
    (which the SDK then answers, errors included)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or type(params.get("protocolVersion")) is not int:
        return None
    if not isinstance(params.get("clientCapabilities", {}), dict):
        return None
    return message


async def stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and stdout as asyncio streams, as the SDK makes them (POSIX pipes)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def answer_initialize(reader: asyncio.StreamReader,
                            writer: asyncio.StreamWriter) -> tuple[Optional[dict[str, Any]], asyncio.StreamReader]:
    """Read the first message; answer it when it is `initialize`. Returns the initialize params (None when it was
    not answered here) and the reader the SDK goes on with (one that replays the first line when it was not)."""
    try:
        line = await reader.readline()
    except (ValueError, asyncio.LimitOverrunError):  # a first line over the limit is no initialize: dropped, and
        return None, reader  # the SDK reads on (any rest of that line not yet read is answered -32700)
    request = initialize_request(line) if line else None
    if request is not None:
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": initialize_result(request["params"]["protocolVersion"])}
        writer.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
        await writer.drain()
        return request["params"], reader
    replay = asyncio.StreamReader(limit=LINE_LIMIT)
    replay.feed_data(line)
    if not line:  # end of input: the SDK sees the same end
        replay.feed_eof()
        return None, replay

    async def pump() -> None:
        while chunk := await reader.read(65536):
            replay.feed_data(chunk)
        replay.feed_eof()

    replay.pump = asyncio.ensure_future(pump())  # kept alive by the reader that needs it
    return None, replay
