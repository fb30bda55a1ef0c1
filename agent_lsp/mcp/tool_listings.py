"""Each `tools/list` answer of an MCP server looked at before the SDK sees it, whatever the transport (stdio or
streamable HTTP): an entry the SDK's types refuse (say `"required": "x"`) would fail the whole listing, and so the
server; here that entry alone is dropped, and `refused(tool, why)` is told."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncContextManager, AsyncGenerator, Callable, Optional


@asynccontextmanager
async def listings_checked(transport: AsyncContextManager[Any],
                           refused: Optional[Callable[[str, str], None]]) -> AsyncGenerator[Any, None]:
    """The (read stream, write stream) of `transport`, relayed through ToolListings."""
    import anyio

    listings = ToolListings(refused)
    async with transport as streams:
        server_read, server_write = streams[0], streams[1]
        read_writer, read = anyio.create_memory_object_stream[Any](0)
        write, write_reader = anyio.create_memory_object_stream[Any](0)

        async def from_server() -> None:
            async with read_writer:
                async for item in server_read:
                    if getattr(item, "message", None) is not None:  # else an exception, passed on as it is
                        listings.received(item.message)
                    try:
                        await read_writer.send(item)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

        async def to_server() -> None:
            async with write_reader:
                async for item in write_reader:
                    listings.sent(item.message)
                    try:
                        await server_write.send(item)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(from_server)
            tg.start_soon(to_server)
            try:
                yield read, write
            finally:
                tg.cancel_scope.cancel()


class ToolListings:
    """Drops from each `tools/list` answer the tool entries the SDK would refuse under the negotiated protocol
    version (read from the `initialize` answer), telling `refused(tool, why)` of each."""

    def __init__(self, refused: Optional[Callable[[str, str], None]]) -> None:
        self._refused = refused
        self._asked: dict[Any, str] = {}
        self._version = "2025-11-25"

    def sent(self, message: Any) -> None:
        if (method := getattr(message, "method", None)) in ("initialize", "tools/list"):
            self._asked[message.id] = method

    def received(self, message: Any) -> None:
        if not self._asked:
            return
        method = self._asked.pop(getattr(message, "id", None), None)
        result = getattr(message, "result", None)
        if method is None or not isinstance(result, dict):
            return
        if method == "initialize":
            self._version = str(result.get("protocolVersion") or self._version)
        elif isinstance(result.get("tools"), list):
            result["tools"] = [entry for entry in result["tools"] if self._valid(entry)]

    def _valid(self, entry: Any) -> bool:
        from mcp_types.methods import validate_server_result
        from pydantic import ValidationError

        try:
            validate_server_result("tools/list", self._version, {"tools": [entry]})
        except ValidationError as e:
            first = e.errors()[0]
            if self._refused is not None:
                name = entry.get("name") if isinstance(entry, dict) else None
                self._refused(str(name), f"`{'.'.join(str(p) for p in first['loc'][2:])}`: {first['msg']}")
            return False
        except (KeyError, ValueError):  # a version the SDK does not know: the SDK decides
            pass
        return True
