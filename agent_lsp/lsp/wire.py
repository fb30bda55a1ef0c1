"""The base protocol, hardened: Content-Length frames in, one checked JSON-RPC message at a time to pygls.

pygls's own reader answers nothing for a body it cannot parse, hands nested objects that carry a `jsonrpc` member
to its message decoder, allocates whatever a Content-Length announces, and lets a body nested past Python's
recursion limit go unanswered. Here every request gets an answer (JSON-RPC 2.0 §5): -32700 for a body that is not
JSON, -32600 for a message that is not a request, -32601 for a method the server does not offer, -32602 naming the
field for params it cannot take (a lone UTF-16 surrogate, nesting deeper than MAX_DEPTH, a shape the method's type
refuses). Notifications are never answered: a bad one is logged in one line and dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from typing import Any, Awaitable, Callable, Optional

from pygls.protocol import JsonRPCProtocol

from agent_lsp.core.surrogates import SURROGATE, printable, replaced
from agent_lsp.lsp.documents import PINNED, pin

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 256 * 1024 * 1024
"""A larger Content-Length is refused (-32600) and its frame skipped; the body is never allocated."""
MAX_HEADER_LINE = 8192
MAX_DEPTH = 64
"""Deepest nesting of params accepted; LSP messages stay far below it."""
CHUNK = 1 << 20
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d{1,30})[ \t]*\r?\n?$", re.IGNORECASE)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


class Dispatcher:
    """Checks each message and hands the good ones to pygls; answers the rest itself."""

    def __init__(self, protocol: JsonRPCProtocol, on_exit: Optional[Callable[[], None]] = None) -> None:
        self.protocol = protocol
        self.initialized = False
        self.on_exit = on_exit
        """Called instead of letting `exit`'s SystemExit stop the loop at once: the chats it cancelled still have
        to save their sessions."""

    # ---- framing ------------------------------------------------------------------------------------------

    def frame_too_large(self, length: int) -> None:
        log.error("a message announced %d bytes, over the limit of %d; it was skipped", length, MAX_FRAME_BYTES)
        self.error(None, INVALID_REQUEST,
                   f"Invalid Request: Content-Length {length} is over the limit of {MAX_FRAME_BYTES} bytes; skipped.")

    def body(self, data: bytes) -> None:
        """One frame's body."""
        try:
            message = json.loads(data)
        except RecursionError:
            return self._too_deep(data)
        except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are both ValueErrors
            log.warning("a message that is not JSON was dropped: %s", e)
            return self.error(None, PARSE_ERROR, f"Parse error: {e}")
        if isinstance(message, list):  # a JSON-RPC batch: LSP has none, so each member is taken on its own
            if not message:
                return self.error(None, INVALID_REQUEST, "Invalid Request: an empty batch.")
            for member in message:
                self.message(member)
            return
        self.message(message)

    # ---- one message --------------------------------------------------------------------------------------

    def message(self, message: Any) -> None:
        if not isinstance(message, dict):
            return self.error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object.")
        has_id = "id" in message
        msg_id = message.get("id")
        if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, (int, str, type(None)))):
            return self.error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer.")
        method = message.get("method")
        if message.get("jsonrpc") != "2.0":
            if has_id and "method" in message:
                self.error(msg_id, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0".')
            else:
                log.warning("a message without jsonrpc 2.0 was dropped")
            return
        if "method" not in message:
            return self._response(message, has_id)
        if not isinstance(method, str):
            return self.error(msg_id if has_id else None, INVALID_REQUEST, "Invalid Request: method must be a string.")
        if has_id:
            self._request(message, msg_id, method)
        else:
            self._notification(message, method)

    def _request(self, message: dict, msg_id: Any, method: str) -> None:
        # pygls 2.1 has no public flag for a shutdown received (_shutdown); it leaves later requests unanswered
        if self.protocol._shutdown and method != "exit":
            return self.error(msg_id, INVALID_REQUEST, "Invalid Request: the server is shutting down.")
        if not self._offered(method):
            log.info("request for %r, which agent-lsp does not offer", method)
            return self.error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "initialize":
            if self.initialized:
                return self.error(msg_id, INVALID_REQUEST, "Invalid Request: the server is already initialized.")
        params = message.get("params")
        problem = params_problem(params, surrogates=False) or params_problem(_surrogates_matter(method, params))
        if problem:
            field, why = problem
            log.info("%s: invalid params: %s: %s", method, field, why)
            return self.error(msg_id, INVALID_PARAMS, f"Invalid params: {field}: {why}", {"fields": [field]})
        try:
            structured = self.protocol.structure_message(message)
        except Exception as e:
            why = _short(e.__cause__ or e)
            log.info("%s: invalid params: %s", method, why)
            return self.error(msg_id, INVALID_PARAMS, f"Invalid params for {method}: {why}", {"fields": ["params"]})
        if method == "initialize":
            self.initialized = True
        if method in PINNED:  # in read order: a didChange read after this request must not change what it reads
            pin(self.protocol, getattr(structured, "params", None))
        self._handle(structured, msg_id)

    def _notification(self, message: dict, method: str) -> None:
        if not self._offered(method) and method not in ("$/cancelRequest", "exit"):
            log.debug("notification %r is not handled; ignored", method)
            return
        params = message.get("params")
        problem = params_problem(params, surrogates=False)
        if problem:
            log.warning("%s dropped: %s: %s", method, *problem)
            return
        if isinstance(params, (dict, list)) and has_surrogates(params):  # text stays usable: U+FFFD, same width
            message = {**message, "params": replaced(params)}
        try:
            structured = self.protocol.structure_message(message)
        except Exception as e:
            log.warning("%s dropped: invalid params: %s", method, _short(e.__cause__ or e))
            return
        self._handle(structured, None)

    def _response(self, message: dict, has_id: bool) -> None:
        if not has_id or ("result" not in message and "error" not in message):
            return self.error(None, INVALID_REQUEST, "Invalid Request: neither a request, a notification nor a response.")
        try:
            structured = self.protocol.structure_message(message)
        except Exception as e:
            log.warning("a response to %r was dropped: %s", message.get("id"), _short(e.__cause__ or e))
            return
        self._handle(structured, None)

    def _handle(self, structured: Any, msg_id: Any) -> None:
        try:
            self.protocol.handle_message(structured)
        except SystemExit:
            if self.on_exit is None:
                raise
            self.on_exit()
        except KeyboardInterrupt:
            raise
        except Exception as e:
            log.error("handling a message failed: %s", _short(e), exc_info=True)
            if msg_id is not None:
                self.error(msg_id, INTERNAL_ERROR, f"Internal error: {_short(e)}")

    def _offered(self, method: str) -> bool:
        fm = self.protocol.fm
        return method in fm.builtin_features or method in fm.features

    def _too_deep(self, data: bytes) -> None:
        """A body nested past the parser's limit: answered -32602 when its top-level id can be found."""
        from agent_lsp.core.jsonscan import MISSING, top_level_id  # rare: not loaded at start-up

        msg_id, method = top_level_id(data)
        log.warning("a message nested too deep to parse was dropped (method %r)", method)
        if msg_id is not MISSING:
            self.error(msg_id, INVALID_PARAMS, f"Invalid params: params: nested deeper than {MAX_DEPTH} levels",
                       {"fields": ["params"]})

    def error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        """Send an error response (id null when the request's id could not be known)."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        # pygls 2.1 has no public call to send a response outside a handler (_send_data)
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})


# ---- params checks ----------------------------------------------------------------------------------------


def params_problem(params: Any, surrogates: bool = True) -> Optional[tuple[str, str]]:
    """(field path, why) for params no handler can take: not a structured value, too deep, a lone surrogate."""
    if params is None:
        return None
    if not isinstance(params, (dict, list)):
        return "params", "must be an object or an array"
    stack: list[tuple[Any, str, int]] = [(params, "", 1)]  # iterative: a deep value must not exhaust the stack
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                return path or "params", f"nested deeper than {MAX_DEPTH} levels"
            for key, item in value.items():
                name = f"{path}.{key}" if path else str(key)
                if surrogates and SURROGATE.search(key):
                    return printable(name), "a member name contains a lone UTF-16 surrogate"
                stack.append((item, name, depth + 1))
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                return path or "params", f"nested deeper than {MAX_DEPTH} levels"
            stack.extend((item, f"{path}[{i}]" if path else f"[{i}]", depth + 1) for i, item in enumerate(value))
        elif surrogates and isinstance(value, str) and not value.isascii() and SURROGATE.search(value):
            return printable(path or "params"), "contains a lone UTF-16 surrogate (not valid Unicode)"
    return None


def _surrogates_matter(method: str, params: Any) -> Any:
    """The part of a request's params where a lone surrogate is -32602: all of it, except initialize's
    initializationOptions, whose settings config.clean checks, each bad one a warning and never a failed start."""
    if method == "initialize" and isinstance(params, dict) and "initializationOptions" in params:
        return {k: v for k, v in params.items() if k != "initializationOptions"}
    return params


def has_surrogates(value: Any) -> bool:
    return SURROGATE.search(json.dumps(value, ensure_ascii=False)) is not None


def _short(error: BaseException) -> str:
    """One line about an error, without a traceback."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300]}" if text else type(error).__name__


# ---- the read loops ---------------------------------------------------------------------------------------


def parse_frames(readline: Callable[[int], bytes], read: Callable[[int], bytes],
                 deliver: Callable[[bytes], None], too_large: Callable[[int], None]) -> None:
    """Read frames until EOF (blocking): each whole body goes to `deliver`. A header line that does not end in a
    Content-Length header is skipped, so a stream cut mid-body finds the next frame again."""
    length: Optional[int] = None
    while True:
        line = readline(MAX_HEADER_LINE)
        if not line:
            return
        match = _CONTENT_LENGTH.search(line) if line.endswith(b"\n") else None
        if match:
            length = int(match.group(1))
            continue
        if line.strip() or length is None:
            continue  # another header (Content-Type), or noise between frames
        size, length = length, None
        if size > MAX_FRAME_BYTES:
            too_large(size)
            continue
        chunks, left = [], size
        while left:  # in chunks: memory grows with what arrives, never with what was announced
            chunk = read(min(left, CHUNK))
            if not chunk:
                return
            chunks.append(chunk)
            left -= len(chunk)
        deliver(b"".join(chunks))


async def serve_stdio(protocol: JsonRPCProtocol, stdin: Any, on_eof: Callable[[], Awaitable[None]]) -> None:
    """Read stdin on a thread of its own; every whole message is handled on the event loop, in order.

    One callback per message (not one executor round trip per header line) also means that a message which
    arrived while the loop was busy, such as an abort, is handled before the loop's next step."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    dispatcher = Dispatcher(protocol, on_exit=lambda: done.done() or done.set_result(None))
    source = FdReader(stdin.fileno())

    def reader() -> None:
        try:
            parse_frames(source.readline, source.read,
                         lambda body: loop.call_soon_threadsafe(dispatcher.body, body),
                         lambda size: loop.call_soon_threadsafe(dispatcher.frame_too_large, size))
        except (OSError, ValueError) as e:
            log.warning("reading stdin failed: %s", _short(e))
        finally:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))

    threading.Thread(target=reader, name="agent-lsp-stdin", daemon=True).start()
    await done
    await on_eof()


class FdReader:
    """readline/read over a file descriptor with os.read: no buffered-reader lock held by the reading thread, so
    the process can exit while it waits (a BufferedReader's lock makes the interpreter abort at shutdown)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.eof = False

    def _fill(self) -> bool:
        if self.eof:
            return False
        data = os.read(self.fd, CHUNK)
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    def readline(self, limit: int) -> bytes:
        while True:
            end = self.buffer.find(b"\n", 0, limit)
            if end >= 0 or len(self.buffer) >= limit:
                cut = end + 1 if end >= 0 else limit
                line = bytes(self.buffer[:cut])
                del self.buffer[:cut]
                return line
            if not self._fill():
                line = bytes(self.buffer)
                self.buffer.clear()
                return line

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n and self._fill():
            pass
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data


async def serve_stream(protocol: JsonRPCProtocol, reader: asyncio.StreamReader) -> None:
    """The same frames over an asyncio stream (TCP)."""
    dispatcher = Dispatcher(protocol)
    length: Optional[int] = None
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return
        except asyncio.LimitOverrunError as e:
            await reader.readexactly(e.consumed)  # an overlong header line is noise: drop it
            continue
        match = _CONTENT_LENGTH.search(line)
        if match:
            length = int(match.group(1))
            continue
        if line.strip() or length is None:
            continue
        size, length = length, None
        if size > MAX_FRAME_BYTES:
            dispatcher.frame_too_large(size)
            continue
        try:
            body = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            return
        dispatcher.body(body)
