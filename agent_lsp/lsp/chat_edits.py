"""The edits the chats made, in the editor: `agent/revert` undoes those of the last chats, and the hover names the
chat that wrote a line (PROTOCOL §8, §9 "Checkpoints that survive restarts")."""

from __future__ import annotations

from typing import Any, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agent_lsp.core.paths import uri_to_path
from agent_lsp.lsp import documents
from agent_lsp.lsp.connection import connection_of
from agent_lsp.lsp.handlers import SESSION_BUSY, parse, session_of
from agent_lsp.protocol import RefusedRevert, RevertParams, RevertResult
from agent_lsp.sessions.chat_run import NothingToRevert
from agent_lsp.sessions.live import SessionBusy, UnknownSession


async def agent_revert(ls: Any, params: Any) -> dict:
    p = parse(RevertParams, params)
    connection = connection_of(ls)
    session = session_of(connection, p.session_id)
    try:
        reverted, refused = await connection.service.revert(session, p.to_chat, connection.editor())
    except SessionBusy:
        raise JsonRpcException(code=SESSION_BUSY, message=f"Session {session.id} is busy: a chat is running.") from None
    except NothingToRevert as e:
        field = "toChat" if p.to_chat is not None else "sessionId"
        raise JsonRpcInvalidParams(f"Invalid params: {field}: nothing to revert: {e}", data={"fields": [field]}) from None
    return RevertResult(reverted=[path.as_uri() for path in reverted],
                        refused=[RefusedRevert(uri=path.as_uri(), reason=why) for path, why in refused]).wire()


def hover(ls: Any, params: types.HoverParams) -> Optional[types.Hover]:
    """On a line the agent wrote in a chat of the window's current session (and that still reads as it wrote it):
    which chat, what it was asked, and which edit wrote the line."""
    connection = ls.connection
    path = uri_to_path(params.text_document.uri)  # a real path, as the checkpoints keep them
    if connection is None or connection.current is None or path is None:
        return None
    try:
        session = connection.sessions.get(connection.current)
    except UnknownSession:
        return None
    line = params.position.line
    document = documents.current(ls, params.text_document.uri)
    now = document.lines[line].rstrip("\r\n") if document and line < len(document.lines) else None
    for checkpoint in reversed(session.checkpoints):
        change = checkpoint.files.get(path)
        if change is None:
            continue
        written = change.after.splitlines()
        if line < len(written) and written[line] == now and line in change.changed_lines():
            asked = " ".join(checkpoint.message.split())
            asked = asked if len(asked) <= 120 else asked[:119] + "…"
            what = change.label.removeprefix("agent-lsp: ")
            text = f"**agent-lsp** wrote this line in chat {checkpoint.chat + 1} of this session ({what}).\n\n> {asked}"
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                               range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)))
        return None
    return None
