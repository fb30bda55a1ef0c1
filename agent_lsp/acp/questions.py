"""What agent-lsp asks or tells an ACP user outside a tool's own updates: permission for a tool call, trust in a
workspace's settings files (a tool call of its own), and settings warnings (ACP has no notice update)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Callable, Optional

from acp import RequestError, schema
from acp.helpers import text_block, tool_content, tool_diff_content

from agent_lsp.acp.convert import STATUSES, acp_permission_options
from agent_lsp.acp.outbox import Outbox
from agent_lsp.core.events import DECISIONS
from agent_lsp.core.ports import Permission, PermissionRequest
from agent_lsp.sessions.permissions import decided

log = logging.getLogger(__name__)
TRUST_TITLE = "Trust this workspace's settings?"
TRUST_OPTIONS = {"trust": ("Trust", "allow_always", True), "dont_trust": ("Don't trust", "reject_always", False)}
TRUST_OUTCOMES = {True: "Trusted.", False: "Not trusted: the workspace's hooks and servers stay off.",
                  None: "Not answered: asked again next time."}


async def ask_permission(conn: Any, outbox: Outbox, session_id: str, request: PermissionRequest,
                         cancelled: Callable[[], None]) -> Permission:
    """Whether a tool call runs, asked with session/request_permission; an answer `cancelled` calls `cancelled`
    and cancels the turn, as ACP means it."""
    call = schema.ToolCallUpdate(tool_call_id=request.tool_call_id, title=request.title,
                                 kind=request.kind, status=STATUSES["awaiting_confirmation"],
                                 raw_input=request.input, content=asked_content(request),
                                 locations=[schema.ToolCallLocation(path=str(c.path)) for c in request.changes]
                                 or None)
    await outbox.flush()
    try:
        answer = await conn.request_permission(session_id=session_id, tool_call=call,
                                               options=acp_permission_options())
    except (RequestError, ConnectionError, ValueError) as e:  # ValueError: an answer of the wrong shape
        log.info("session/request_permission failed: %s", str(e)[:300])
        return decided("reject_once", f"the editor could not ask the user ({str(e)[:300]})")
    outcome = answer.outcome
    if outcome.outcome == "cancelled":
        cancelled()
        raise asyncio.CancelledError
    if outcome.option_id not in DECISIONS:
        log.info("session/request_permission: unknown optionId %r, taken as a rejection", outcome.option_id)
        return decided("reject_once")
    return decided(outcome.option_id)


def asked_content(request: Any) -> Optional[list]:
    """What an approval prompt shows: an edit as ACP `diff` content per file (clients show only that in their
    prompt), a command as its command line, else the unified diff as text."""
    if request.changes:
        return [tool_diff_content(str(c.path), c.new_text, c.old_text) for c in request.changes]
    shown = f"`{request.command}`" if request.command else (f"```diff\n{request.diff}```" if request.diff else None)
    return [tool_content(text_block(shown))] if shown else None


async def ask_trust(conn: Any, outbox: Outbox, session_id: str, question: str) -> Optional[bool]:
    """Whether the user trusts the workspace's settings files, asked with session/request_permission on a tool
    call of its own; None when the client cannot ask or the question was cancelled."""
    call_id = f"trust-{uuid.uuid4().hex[:12]}"
    content = [tool_content(text_block(question))]
    outbox.push(session_id, schema.ToolCallStart(session_update="tool_call", tool_call_id=call_id, title=TRUST_TITLE,
                                                 kind="other", status="pending", content=content))
    await outbox.flush()
    options = [schema.PermissionOption(option_id=key, name=name, kind=kind)
               for key, (name, kind, _) in TRUST_OPTIONS.items()]
    answer: Optional[bool] = None
    try:
        reply = await conn.request_permission(session_id=session_id, options=options, tool_call=schema.ToolCallUpdate(
            tool_call_id=call_id, title=TRUST_TITLE, kind="other", status="pending", content=content))
        if reply.outcome.outcome == "selected" and reply.outcome.option_id in TRUST_OPTIONS:
            answer = TRUST_OPTIONS[reply.outcome.option_id][2]
    except (RequestError, ConnectionError, ValueError) as e:  # ValueError: an answer of the wrong shape
        log.info("session/request_permission for trust failed: %s", str(e)[:300])
    outbox.push(session_id, schema.ToolCallProgress(
        session_update="tool_call_update", tool_call_id=call_id, status="completed" if answer is not None else "failed",
        content=[tool_content(text_block(TRUST_OUTCOMES[answer]))]))
    return answer


def warnings_chunk(messages: list[str]) -> schema.AgentMessageChunk:
    """Settings warnings as the start of a reply."""
    note = "\n".join(f"> ⚠ {message}" for message in messages) + "\n\n"
    return schema.AgentMessageChunk(session_update="agent_message_chunk", content=text_block(note))
