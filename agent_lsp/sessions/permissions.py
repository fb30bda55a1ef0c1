"""Who may run what (PROTOCOL §5): the permission mode, the session's standing answers, a command in the OS sandbox
(`sandbox.autoAllow`, PROTOCOL §10), and asking the user."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit
from typing import Awaitable, Callable, Optional

from agent_lsp.core.events import ConfirmationRequest, Decision, ToolCallUpdate
from agent_lsp.core.chat import Emit
from agent_lsp.core.ports import Allow, Deny, Permission, PermissionRequest

ASKING_KINDS = frozenset({"edit", "execute", "fetch"})
Ask = Callable[[PermissionRequest], Awaitable[tuple[Decision, Optional[str]]]]


def offered(kind: str, mode: str) -> bool:
    """Whether a tool of this kind is offered to the model at all (plan mode hides edits, commands and fetches)."""
    return not (mode == "plan" and kind in ASKING_KINDS)


def grant_key(request: PermissionRequest) -> str:
    """What `allow_always` covers: the tool, for run_command the command's first word, for web_fetch the host."""
    if request.name == "run_command":
        words = str(request.input.get("command", "")).split()
        return f"run_command:{words[0] if words else ''}"
    if request.name == "web_fetch":
        return f"web_fetch:{(urlsplit(str(request.input.get('url', ''))).hostname or '').lower()}"
    return request.name


@dataclass
class Grants:
    """A session's standing answers."""

    allowed: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)


def declined(message: Optional[str]) -> str:
    """The tool result the model reads for a rejected call."""
    return "The user declined this tool call." + (f" Their reason: {message}" if message else "")


def make_permit(mode: str, grants: Grants, ask: Ask):
    """The loop's permit callback for one chat."""

    async def permit(request: PermissionRequest, emit: Emit) -> Permission:
        if request.kind not in ASKING_KINDS or mode == "bypassPermissions":
            return Allow()
        if mode == "acceptEdits" and request.kind == "edit":
            return Allow()
        if mode == "plan":
            return Deny(f"{request.name} is refused in plan mode.")
        key = grant_key(request)
        if request.name in grants.refused:
            return Deny(f"The user refused {request.name} for the rest of this session.")
        if key in grants.allowed or request.sandbox_auto_allow:  # the OS sandbox confines it (sandbox.autoAllow)
            return Allow()
        emit(ToolCallUpdate(tool_call_id=request.tool_call_id, status="awaiting_confirmation"))
        emit(ConfirmationRequest(tool_call_id=request.tool_call_id, name=request.name, title=request.title,
                                 input=request.input, diff=request.diff, command=request.command))
        decision, message = await ask(request)
        if decision == "allow_always":
            grants.allowed.add(key)
        if decision == "reject_always":
            grants.refused.add(request.name)
        return Allow() if decision.startswith("allow") else Deny(declined(message))

    return permit
