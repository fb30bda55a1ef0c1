"""A stdio MCP server's command line with its output lines limited in length, and the program that does it
(`python -I -S line_limit.py LIMIT COMMAND ARGS…`, standard library only): the server runs in the program's place
(exec, so its pid and exit status are the ones the SDK sees) and a forked child passes each line of its stdout on
as it ends; a line over LIMIT bytes is not passed on but answered with a JSON-RPC error for its request.

Why: the SDK's stdio reader joins a long line chunk by chunk, `(buffer + chunk).split("\\n")`, which is quadratic in
the line's length: on two cores with 4 to 10 processes running, a 50 MB answer took it 15 s, a line of
MAX_LINE_BYTES 0.8 to 1.8 s. A model reads at most 30,000 characters of a tool's answer anyway.
"""

from __future__ import annotations

import os
import re
import sys

MAX_LINE_BYTES = 8 * 1024 * 1024
KEEP = 64 * 1024
"""Bytes kept from each end of an over-long line: enough to find the id of the request it answers."""

_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_JSONRPC = rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
# An answer is recognised by the order of its members: `{"jsonrpc", "id", "result" | "error"}` (most SDKs) or
# `{"result" | "error", …, "id"}` (the TypeScript SDK); a request or a notification from the server is neither.
_ID_FIRST = re.compile(rb'\s*\{\s*' + _JSONRPC + rb'"id"\s*:\s*' + _ID + rb'\s*,\s*' + _JSONRPC +
                       rb'"(?:result|error)"')
_RESULT_FIRST = re.compile(rb'\s*\{\s*"(?:result|error)"')
_ID_LAST = re.compile(rb',\s*"id"\s*:\s*' + _ID + rb'\s*\}\s*$')


def line_limited(command: str, args: list[str], limit: int = MAX_LINE_BYTES) -> tuple[str, list[str]]:
    """The command line that runs `command args` with each line of its output at most `limit` bytes (unchanged
    where Python cannot fork)."""
    if not hasattr(os, "fork"):
        return command, args
    return sys.executable, ["-I", "-S", os.path.abspath(__file__), str(limit), command, *args]


def refusal(head: bytes, tail: bytes, size: int, limit: int) -> bytes:
    """The line sent in place of an over-long one (`head` and `tail` its first and last bytes): a JSON-RPC error
    answering its request, or with a null id (dropped by the SDK) when it is not an answer the order shows."""
    found = _ID_FIRST.match(head) or (_ID_LAST.search(tail) if _RESULT_FIRST.match(head) else None)
    request_id = found.group(1) if found else b"null"
    message = f"the answer has {size} bytes, over agent-lsp's limit of {limit} for one MCP message; it was dropped"
    return b'{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"%s"}}\n' % (request_id, message.encode())


def relay(source: int, limit: int) -> None:
    """Pass the lines read from `source` on to stdout, each when it ends; an over-long one as its `refusal`."""
    pieces: list[bytes] = []  # the line so far, while within the limit
    size, head, tail = 0, b"", b""
    while chunk := os.read(source, 1 << 20):
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end == -1 else chunk[start:end]
            size += len(piece)
            if size <= limit:
                pieces.append(piece)
            elif not head:  # the line just went over: keep its head, and from now on only its tail
                line = b"".join([*pieces, piece])
                head, tail, pieces = line[:KEEP], line[-KEEP:], []
            else:
                tail = (tail + piece)[-KEEP:]
            if end == -1:
                break
            _send(b"".join([*pieces, b"\n"]) if size <= limit else refusal(head, tail, size, limit))
            pieces, size, head, tail, start = [], 0, b"", b"", end + 1
    if pieces:
        _send(b"".join(pieces))


def _send(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def main(argv: list[str]) -> None:
    """LIMIT COMMAND ARGS…: exec the command with its stdout going through a forked `relay`."""
    limit, command = int(argv[1]), argv[2]
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        os.close(write_end)
        os.close(0)
        try:
            relay(read_end, limit)
        except OSError:  # agent-lsp closed the pipe: the server is being stopped
            pass
        os._exit(0)
    os.dup2(write_end, 1)
    os.close(write_end)
    os.close(read_end)
    try:
        os.execvp(command, argv[2:])
    except OSError as e:
        sys.stderr.write(f"agent-lsp: {command}: {e}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)
