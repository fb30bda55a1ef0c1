"""The stdio transport of an MCP server: `mcp.client.stdio.stdio_client` (mcp==2.3.0, pinned) with a line reader
that is linear in the size of a message.

The SDK's reader joins every chunk to what it has buffered and splits again, `(buffer + chunk).split("\\n")`: a
50 MB answer arrives in 64 KB chunks and costs gigabytes of copying (over a minute on two busy cores). Here the
pieces of a line are kept in a list and joined once, and a line over MAX_LINE_CHARS is dropped with an error for
the session. Spawning, shutting down and killing the process tree are the SDK's own helpers.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncGenerator

MAX_LINE_CHARS = 256 * 1024 * 1024
"""A message longer than this is not parsed: the call it answers fails instead of the process running out of memory."""


@asynccontextmanager
async def stdio_transport(server: Any, max_line: int = MAX_LINE_CHARS) -> AsyncGenerator[Any, None]:
    """(read stream, write stream) of a server started from `StdioServerParameters`, as `stdio_client` yields; a
    line over `max_line` characters arrives as a ValueError."""
    import sys

    import anyio
    import anyio.lowlevel
    from anyio.streams.text import TextReceiveStream
    from mcp.client import stdio as sdk
    from mcp.shared.message import SessionMessage

    command = await sdk._get_executable_command(server.command)
    process = await sdk._create_platform_compatible_process(
        command=command, args=server.args, env=sdk.get_default_environment() | (server.env or {}),
        errlog=sys.stderr, cwd=server.cwd)
    read_stream_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        stdout = TextReceiveStream(process.stdout, encoding=server.encoding, errors=server.encoding_error_handler)
        try:
            async with read_stream_writer:
                try:
                    pieces: list[str] = []
                    size = 0
                    async for chunk in stdout:
                        start = 0
                        while (end := chunk.find("\n", start)) != -1:
                            pieces.append(chunk[start:end])
                            line, too_long = "".join(pieces), size + end - start > max_line
                            pieces, size, start = [], 0, end + 1
                            message = (ValueError(f"an MCP message over {max_line} characters was dropped")
                                       if too_long else sdk._parse_line(line))
                            try:
                                await read_stream_writer.send(message)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return
                        rest = len(chunk) - start
                        if size + rest <= max_line:  # past it, the rest of the line is only counted
                            pieces.append(chunk[start:])
                        size += rest
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                sdk.logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def stdin_writer() -> None:
        try:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode(server.encoding, server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_stream_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT) as flush_scope:
            await writer_done.wait()
        if flush_scope.cancelled_caught:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # the server process must not leak, even under cancellation
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
