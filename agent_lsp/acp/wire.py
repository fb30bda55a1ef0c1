"""ACP's wire, hardened: newline-delimited JSON-RPC on stdio, one checked message at a time to the SDK's connection.

The SDK's own stdio transport logs a traceback for a line that is not JSON and answers nothing, and its receive
loop dies (the agent stops serving) on a line that is JSON but not an object (`[1]`, a batch, `5`), on a response
whose id is an array or object, or on an error answer that is not an object. Here every request gets an answer
(JSON-RPC 2.0 §5): -32700 for a line that is not JSON, -32600 for a message that is not a request, notification
or response, -32602 naming the field for params no handler can take (a lone UTF-16 surrogate, nesting deeper than
MAX_DEPTH), and the SDK's own -32602 (a pydantic error list) said as the contract says it: the field in the
message and in `data.fields`. Notifications and the client's answers are never answered: a bad one is logged in
one line and dropped; a lone surrogate in them becomes U+FFFD. Once the client has gone, an answer to it is
dropped and a request to it fails with ConnectionError (no traceback: a client leaving is expected).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Optional

from agent_lsp.core.jsonscan import MISSING, top_level_id
from agent_lsp.core.surrogates import SURROGATE, find_surrogate, printable, replaced

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 256 * 1024 * 1024
"""A longer line is refused (-32600, id null) and skipped."""
MAX_DEPTH = 64
"""Deepest nesting of params accepted; ACP messages stay far below it."""
CHUNK = 1 << 20
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
NOTIFICATIONS = ("session/cancel",)
"""The notifications an ACP agent takes (others would reach the SDK's router, which logs a traceback)."""
_ID_TYPES = (str, int, float, type(None))


class StdioWire:
    """The SDK's Transport (send, receive, close) over asyncio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._gone = False

    # ---- in ---------------------------------------------------------------------------------------------

    async def receive(self) -> Optional[dict[str, Any]]:
        """The next message the SDK can take; None at the end of input."""
        while True:
            line = await self._line()
            if line is None:
                return None
            line = line.strip()
            if not line:
                continue
            message = await self._checked(line)
            if message is not None:
                return message

    async def _line(self) -> Optional[bytes]:
        """One line (without a limit on the reader's buffer); b"" for a line too long (answered, skipped)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as e:
                chunk = await self._reader.readexactly(e.consumed)
            except asyncio.IncompleteReadError as e:
                if not e.partial and not chunks:
                    return None
                chunk = e.partial + b"\n"  # the last line, without its newline
            size += len(chunk)
            if size > MAX_LINE_BYTES:
                chunks.clear()
                if not chunk.endswith(b"\n"):
                    continue  # drop the rest of the line as it arrives
                log.warning("a line of over %d bytes was dropped", MAX_LINE_BYTES)
                await self._error(None, INVALID_REQUEST, f"Invalid request: a line over the limit of {MAX_LINE_BYTES} bytes")
                return b""
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)

    async def _checked(self, line: bytes) -> Optional[dict[str, Any]]:
        """The message when the SDK can take it; otherwise the error is answered (when it is a request) and
        None is returned."""
        try:
            message = json.loads(line)
        except RecursionError:
            msg_id, _ = top_level_id(line)
            msg_id = None if msg_id is MISSING else msg_id  # answered with a null id, as JSON-RPC says
            log.warning("a message nested too deep to parse was dropped")
            await self._error(msg_id, INVALID_PARAMS, f"Invalid params: params: nested deeper than {MAX_DEPTH} levels",
                              {"fields": ["params"]})
            return None
        except ValueError as e:
            log.warning("a line that is not JSON was dropped: %s", str(e)[:200])
            await self._error(None, PARSE_ERROR, f"Parse error: {str(e)[:200]}")
            return None
        if not isinstance(message, dict):
            what = "a batch (ACP has none)" if isinstance(message, list) else f"a JSON {type(message).__name__}"
            log.warning("a message that is %s was dropped", what)
            await self._error(None, INVALID_REQUEST, f"Invalid request: {what}, not a JSON-RPC message object")
            return None
        msg_id, method = message.get("id"), message.get("method")
        if isinstance(msg_id, bool) or not isinstance(msg_id, _ID_TYPES):
            log.warning("a message whose id is %s was dropped", type(msg_id).__name__)
            await self._error(None, INVALID_REQUEST, "Invalid request: id must be a string, a number or null")
            return None
        if "method" in message:
            if not isinstance(method, str):
                log.warning("a message whose method is not a string was dropped")
                if "id" in message:
                    await self._error(msg_id, INVALID_REQUEST, "Invalid request: method must be a string")
                return None
            return await self._call(message)
        if "id" not in message:
            log.warning("a message with neither method nor id was dropped")
            await self._error(None, INVALID_REQUEST, "Invalid request: neither a method nor an id")
            return None
        return _answer(message)

    async def _call(self, message: dict[str, Any]) -> Optional[dict[str, Any]]:
        """A request or notification; its params checked."""
        params, request = message.get("params"), "id" in message
        problem = _params_problem(params)
        if not request and message["method"] not in NOTIFICATIONS and not message["method"].startswith("_"):
            log.info("notification %s dropped: not one this agent takes", message["method"][:100])
            return None
        if not request:
            if problem is not None and problem[1].startswith("contains a lone"):  # its text stays usable: U+FFFD
                params, problem = replaced(params), None
                message = {**message, "params": params}
            problem = problem or _notification_problem(message["method"], params)
            if problem is not None:
                log.warning("notification %s dropped: %s: %s", message["method"], problem[0][:200], problem[1])
                return None
        if problem is None:
            return message
        field, why = problem
        field = field if len(field) <= 200 else field[:200] + "…"
        log.info("%s: invalid params: %s: %s", message["method"], field, why)
        await self._error(message["id"], INVALID_PARAMS, f"Invalid params: {field}: {why}", {"fields": [field]})
        return None

    # ---- out --------------------------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message. To a client gone: an answer is dropped, a request raises ConnectionError."""
        if "error" in message:
            message = {**message, "error": _said(message["error"])}
        try:
            data = json.dumps(message, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):  # something of ours the SDK could not serialise
            data = json.dumps(message, separators=(",", ":"), default=repr)
        await self._write(data.encode() + b"\n", "method" in message)

    async def _write(self, data: bytes, request: bool) -> None:
        try:
            if self._gone or self._writer.is_closing():
                raise ConnectionResetError("the client closed its end")
            self._writer.write(data)
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as e:
            if not self._gone:
                log.info("the client has gone (%s); nothing more is sent", e)
            self._gone = True
            if request:
                raise ConnectionError("the client has gone") from None

    async def _error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self._write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error}).encode() + b"\n", False)

    async def close(self) -> None:
        return None  # stdout stays open until the process ends: the last answers must get out


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    """A client's answer the SDK can take: an error object it can read, text without lone surrogates."""
    if "error" in message and message["error"] is not None:
        error = message["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
            log.info("the client answered %r with a malformed error; taken as an error", message.get("id"))
            message = {**message, "error": {"code": -32603, "message": f"a malformed error: {str(error)[:200]}"}}
        elif not isinstance(error.get("message"), str):
            message = {**message, "error": {**error, "message": str(error.get("message"))[:200]}}
    if find_surrogate(message) is not None:
        message = replaced(message)
    return message


def _notification_problem(method: str, params: Any) -> Optional[tuple[str, str]]:
    """(field, why) for a notification whose params its type refuses (the SDK would log a traceback)."""
    from acp import schema
    from pydantic import ValidationError

    model = {"session/cancel": schema.CancelNotification}.get(method)
    if model is None:
        return None
    try:
        model.model_validate(params)
    except ValidationError as e:
        said = _said({"code": INVALID_PARAMS, "data": {"errors": e.errors(include_input=False, include_url=False)}})
        return said["data"]["fields"][0], said["message"].split(": ", 2)[-1]
    return None


def _params_problem(params: Any) -> Optional[tuple[str, str]]:
    """(field path, why) for params no handler can take: too deep, a lone surrogate."""
    if not isinstance(params, (dict, list)):
        return None  # the SDK's validation names what is wrong with these
    stack: list[tuple[Any, str, int]] = [(params, "", 1)]  # iterative: a deep value must not exhaust the stack
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
            return path or "params", f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(value, dict):
            for key, item in value.items():
                name = f"{path}.{key}" if path else str(key)
                if SURROGATE.search(key):
                    return printable(name), "a member name contains a lone UTF-16 surrogate"
                stack.append((item, name, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]" if path else f"[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str) and not value.isascii() and SURROGATE.search(value):
            return printable(path or "params"), "contains a lone UTF-16 surrogate (not valid Unicode)"
    return None


def _said(error: Any) -> Any:
    """The SDK's -32602 for params its types refuse (`data.errors`, pydantic's list, which may hold the whole
    input and objects JSON cannot carry) as the contract says it: the first field and why in the message, every
    field in `data.fields`."""
    data = error.get("data") if isinstance(error, dict) else None
    if not isinstance(error, dict) or error.get("code") != INVALID_PARAMS or not isinstance(data, dict) or not isinstance(data.get("errors"), list):
        return error
    fields, reasons = [], []
    for item in data["errors"]:
        loc = item.get("loc", ()) if isinstance(item, dict) else ()
        name = ""
        for part in loc:
            name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
        fields.append(printable(name or "params"))
        reasons.append(str(item.get("msg", "invalid")) if isinstance(item, dict) else "invalid")
    if not fields:
        return {"code": INVALID_PARAMS, "message": "Invalid params", "data": {"fields": ["params"]}}
    unique = list(dict.fromkeys(fields))
    return {"code": INVALID_PARAMS, "message": f"Invalid params: {fields[0]}: {printable(reasons[0])[:300]}",
            "data": {"fields": unique[:20]}}
