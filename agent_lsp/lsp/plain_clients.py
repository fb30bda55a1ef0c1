"""What a plain LSP client is shown: one that declares no `experimental.agent` (see capabilities.py), so draws no
`agent/update` and drops the result of `workspace/executeCommand`. The confirmation question carries the change
(a bounded diff, or the command line), each chat's final answer arrives as `window/showMessage`, and where the
client supports `window/showDocument`, the diff and a Markdown transcript of the session open beside the code.

The files live under `<data dir>/plain/<session id>/`, bounded, and go with their session."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from lsprotocol import types

from agent_lsp import tools
from agent_lsp.core.ports import PermissionRequest
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.sessions.history import render_history

log = logging.getLogger(__name__)
MAX_DIFF_LINES = 30
"""Lines of a diff in the confirmation question; the rest is counted ("… N more lines")."""
MAX_MESSAGE = 400
"""Characters of the final answer in the window/showMessage."""
MAX_FILE = 200_000
"""Characters of a transcript or diff file (a transcript keeps its end, a diff its start)."""
MAX_OUTPUT = 2_000
"""Characters of one tool call's output in the transcript."""
_fallback: Path | None = None


def bounded_diff(diff: str, limit: int = MAX_DIFF_LINES) -> str:
    """The first `limit` lines of a diff, and how many more there are."""
    lines = diff.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit] + [f"… {len(lines) - limit} more lines"])


def question(request: PermissionRequest) -> str:
    """The window/showMessageRequest text: what runs, and the change itself (a fetch: its URL)."""
    if request.kind == "fetch":
        return f"agent-lsp wants to fetch {request.command or request.title}.\nAllow?"
    what = f"`{request.command}`" if request.command else request.title
    if request.command:
        change = f"$ {request.command}"
    else:
        change = bounded_diff(request.diff) if request.diff else ""
    return f"agent-lsp wants to run {request.name}: {what}." + (f"\n{change}" if change else "") + "\nAllow?"


def folder(server: Any, session_id: str) -> Path:
    """Where the files of a session's plain-client views live (a temporary folder when sessions are in memory)."""
    global _fallback
    base = server.data_dir
    if base is None:
        _fallback = _fallback or Path(tempfile.mkdtemp(prefix="agent-lsp-"))
        base = _fallback
    return base / "plain" / "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)


def forget(server: Any, session_id: str) -> None:
    """Remove a deleted session's files."""
    shutil.rmtree(folder(server, session_id), ignore_errors=True)


def _prune(server: Any, keep: set[str]) -> None:
    """Remove the files of sessions that no longer exist."""
    root = folder(server, "x").parent
    if root.is_dir():
        for entry in root.iterdir():
            if entry.is_dir() and entry.name not in keep:
                shutil.rmtree(entry, ignore_errors=True)


def _write(path: Path, text: str) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return True
    except OSError as e:  # a full or read-only disk: the question and the message still say it all
        log.info("could not write %s: %r", path, e)
        return False


def can_show_documents(server: Any) -> bool:
    window = server.client_capabilities.window if server.client_capabilities else None
    return bool(window and window.show_document and window.show_document.support)


async def show(server: Any, path: Path) -> None:
    """Open a file beside the code (window/showDocument), leaving the focus where it is."""
    try:
        await LspEditor(server, client_diagnostics=False).request(  # bounded in time like every question
            types.WINDOW_SHOW_DOCUMENT, {"uri": path.as_uri(), "takeFocus": False})
    except Exception as e:  # a client that cannot open it: the message still says where it is
        log.info("window/showDocument failed: %r", e)


async def show_change(server: Any, session_id: str, request: PermissionRequest) -> None:
    """Before asking: open the whole diff, where the client can show documents."""
    if not request.diff or not can_show_documents(server):
        return
    path = folder(server, session_id) / f"{request.tool_call_id}.diff"
    if _write(path, request.diff[:MAX_FILE]):
        await show(server, path)


def transcript(session: Any) -> str:
    """The session as Markdown: each user message, the tool calls with their status, each answer."""
    parts = [f"# agent-lsp: {session.title or session.id}\n"]
    for entry in render_history(session.history, tools.BY_NAME, session.tool_calls, session.chats):
        if entry.role == "user":
            parts.append("## You\n\n" + entry.content.strip() + "\n")
            continue
        parts.append("## agent-lsp\n")
        for call in entry.tool_calls or []:
            parts.append(f"- **{call.title}** ({call.name}): {call.status}")
            body = call.diff or call.error or call.output
            if body:
                body = body if len(body) <= MAX_OUTPUT else body[:MAX_OUTPUT] + "\n…"
                parts.append("\n  ```\n" + "\n".join("  " + line for line in body.splitlines()) + "\n  ```")
        if entry.content.strip():
            parts.append(("\n" if entry.tool_calls else "") + entry.content.strip() + "\n")
    text = "\n".join(parts) + "\n"
    return text if len(text) <= MAX_FILE else "…\n" + text[-MAX_FILE:]


async def show_answer(server: Any, session: Any, result: dict, keep: set[str]) -> None:
    """A chat ended: its final answer as window/showMessage (bounded, naming where the whole answer is), and the
    transcript opened beside the code where the client can show documents. `keep`: the sessions that exist."""
    path = folder(server, session.id) / "transcript.md"
    _prune(server, keep | {session.id})
    written = _write(path, transcript(session))
    answer = (result.get("finalMessage") or "").strip()
    if result.get("stopReason") == "error":
        error = result.get("error") or {}
        answer, kind = f"the chat failed: {error.get('message', '')}", types.MessageType.Error
    else:
        answer, kind = answer or f"the chat ended ({result.get('stopReason')}).", types.MessageType.Info
    short = " ".join(answer.split())
    short = short if len(short) <= MAX_MESSAGE else short[: MAX_MESSAGE - 1] + "…"
    where = f" (the whole answer: {path})" if written else ""
    server.window_show_message(types.ShowMessageParams(type=kind, message=f"agent-lsp: {short}{where}"))
    if written and can_show_documents(server):
        await show(server, path)
