"""One headless chat as the chat service's front end: updates rendered on stdout as they happen, and permission
questions answered without anyone to ask (a tool the user allowed on the command line runs, any other is refused
and the model told why)."""

from __future__ import annotations

import sys
from typing import Optional, TextIO

from agent_lsp.core.events import AgentUpdate
from agent_lsp.core.ports import Allow, Deny, Emit, Permission, PermissionRequest
from agent_lsp.headless.output import Output
from agent_lsp.models.resolver import resolve
from agent_lsp.sessions.chat_run import ChatRequest
from agent_lsp.sessions.permissions import offered
from agent_lsp.sessions.service import ChatFrontEnd


def refusal(name: str) -> str:
    """What the model reads for a call that would have asked."""
    return (f"{name} needs the user's approval, and nobody can be asked in this headless run (agent-lsp run): it was "
            f"refused. Go on without it; the user can allow it with `--allowed-tools {name}` or `--permission-mode`.")


class HeadlessChat(ChatFrontEnd):
    """The chat of `agent-lsp run`."""

    def __init__(self, output: Output, allowed_tools: frozenset[str], stderr: Optional[TextIO] = None) -> None:
        self.output = output
        self.allowed_tools = allowed_tools
        self.stderr = stderr or sys.stderr

    async def composed(self, request: ChatRequest) -> None:
        settings = request.settings
        offers = [t.name for t in request.tools if offered(t.kind, settings.permission_mode)]
        self.output.init(self.session.id, resolve(settings).model, offers)

    def publish(self, update: AgentUpdate) -> None:
        self.output.update(update)

    async def ask(self, request: PermissionRequest, emit: Emit) -> Permission:
        if request.name in self.allowed_tools:
            return Allow()
        what = f" (`{request.command}`)" if request.command else ""
        print(f"agent-lsp run: {request.name}{what} refused: nobody can be asked; allow it with --allowed-tools "
              f"{request.name}", file=self.stderr, flush=True)
        return Deny(refusal(request.name))
