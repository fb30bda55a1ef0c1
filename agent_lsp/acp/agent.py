"""The ACP agent: thin handlers (parse, call the sessions, convert) over the same sessions and store as LSP.

Only `acp.schema` is needed to answer `initialize`; the sessions, tools and models are imported on the first
session/new, session/load or session/list, so an editor's spawn → initialize stays light.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from acp import RequestError, schema

from agent_lsp.config import PERMISSION_MODES, Layers, clean
from agent_lsp.acp.outbox import Outbox
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.core.paths import is_inside, real

log = logging.getLogger(__name__)
LIST_PAGE = int(os.environ.get("AGENT_LSP_ACP_LIST_PAGE", "100"))
"""Sessions per session/list page (tests make it small)."""


def invalid(field: str, problem: str) -> RequestError:
    """-32602 naming the field."""
    return RequestError(-32602, f"Invalid params: {field}: {problem}", {"field": field, "fields": [field]})


def directory(cwd: str, field: str = "cwd") -> Path:
    """`cwd` as the absolute directory it must be (its real path), else -32602 naming the field (a NUL, a name too
    long for the system: never an internal error)."""
    try:
        root = Path(cwd)
        if root.is_absolute() and root.is_dir():
            return real(root)
    except (OSError, ValueError):
        pass
    raise invalid(field, f"{cwd[:200]!r} is not an absolute path to a directory")


@dataclass
class Opened:
    """What this connection holds for a session it opened (session/new or session/load); what the session's
    prompts are to use (mode, model, MCP servers, working directory) is on the session (`Session.preferences`)."""

    editor: Any
    """The session's AcpEditor: files through the client, rooted at its working directory."""
    converter: Any
    """The session's UpdateConverter: its updates as ACP session updates."""
    commands: Optional[list[str]] = None
    """The command names last announced (announced again when they change)."""
    cancelled: bool = False
    """The running prompt was cancelled (session/cancel, or a permission answered `cancelled`)."""
    prompts: int = 0
    """session/prompt requests of the session read and not yet answered."""
    trust: Optional[asyncio.Future] = None
    """The trust question the running prompt awaits now (a session/cancel ends it unanswered)."""


class AcpAgent:
    """What `agent-lsp --acp` answers; one per connection."""

    def __init__(self, launch_settings: dict[str, Any], data_dir: Optional[Path]) -> None:
        layer, self.warnings = clean(launch_settings, "the environment")
        self.in_force = SettingsInForce(Layers(environment=layer), self._warn, data_dir)
        self.warnings += self.in_force.refresh()
        self.unshown: list[str] = list(self.warnings)
        """Settings warnings not yet shown in a session (the first prompt shows them)."""
        self.data_dir = data_dir
        self.conn: Any = None
        self.client = schema.ClientCapabilities()
        self.outbox: Optional[Outbox] = None
        self._service: Any = None
        self.opened: dict[str, Opened] = {}
        """The sessions opened in this connection, by id."""
        self.catalog: Any = None
        """The models last offered (session/new, session/load, session/set_config_option)."""
        self.prompting: Optional[str] = None
        """The session whose prompt runs now (the last one to start)."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.outbox = Outbox(conn)

    # ---- lifecycle ---------------------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> schema.InitializeResponse:
        self.client = client_capabilities or schema.ClientCapabilities()
        for warning in self.warnings:
            log.warning(warning)
        from agent_lsp.acp.initialize import initialize_result

        return schema.InitializeResponse.model_validate(initialize_result(protocol_version))

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # keys come from the environment, never over the wire

    @property
    def assembly(self) -> Any:
        """The chat assembly shared with LSP (sessions/assembly.py), the service's."""
        return self.service.assembly

    def _language_servers(self) -> Any:
        """agent-lsp's own language servers: ACP clients cannot answer language requests (the editor of the
        prompt running, if any, gives them its buffers)."""
        from agent_lsp.sidecar import SidecarPool

        return SidecarPool(lambda: self.opened[self.prompting].editor if self.prompting in self.opened else None,
                           lambda message: self._warn([message]))

    def _warn(self, messages: list[str]) -> None:
        """Settings warnings: on stderr now, and in the next prompt's reply."""
        for message in messages:
            log.warning(message)
        self.unshown += messages

    @property
    def service(self) -> Any:
        """The chat service over the sessions and the chat assembly, made (and its modules imported) on first use."""
        if self._service is None:
            from agent_lsp.models.resolver import build_model
            from agent_lsp.sessions.service import open_service

            self._service = open_service(self.in_force, self.data_dir, build_model, self._language_servers)
        return self._service

    @property
    def sessions(self) -> Any:
        """The sessions (sessions/live.py)."""
        return self.service.sessions

    def _session(self, session_id: str) -> Any:
        from agent_lsp.sessions.live import UnknownSession

        try:
            return self.sessions.get(session_id)
        except UnknownSession:
            raise invalid("sessionId", f"unknown session {session_id!r}") from None

    def _open(self, session: Any, cwd: str) -> schema.SessionModeState:
        from agent_lsp.acp.convert import UpdateConverter, acp_modes
        from agent_lsp.acp.editor import AcpEditor

        root = directory(cwd)
        fs = self.client.fs or schema.FileSystemCapabilities()
        editor = AcpEditor(self.conn, session.id, root, bool(fs.read_text_file), bool(fs.write_text_file),
                           self.outbox.flush)
        self.opened[session.id] = Opened(editor, UpdateConverter(
            editor.applied, lambda: self.in_force.current([root]).context_window))
        preferences = session.preferences
        preferences.cwd = root
        preferences.permission_mode = preferences.permission_mode or self.in_force.current([root]).permission_mode
        return acp_modes(preferences.permission_mode)

    # ---- sessions ----------------------------------------------------------------------------------------

    async def new_session(self, cwd: str, additional_directories: Optional[list[str]] = None,
                          mcp_servers: Optional[list[Any]] = None, **kwargs: Any) -> schema.NewSessionResponse:
        session = self.sessions.start(workspace_folders=[directory(cwd).as_uri()])
        self._take_mcp_servers(session, mcp_servers)
        modes = self._open(session, cwd)
        self._announce_commands(session.id)
        return schema.NewSessionResponse(session_id=session.id, modes=modes,
                                         config_options=await self._config_options(session) or None)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Optional[list[Any]] = None,
                           additional_directories: Optional[list[str]] = None,
                           **kwargs: Any) -> schema.LoadSessionResponse:
        from agent_lsp import tools
        from agent_lsp.acp.convert import acp_plan, acp_replay
        from agent_lsp.core.events import PlanEntry
        from agent_lsp.sessions.history import render_history

        session = self._session(session_id)
        if session.busy:
            raise invalid("sessionId", f"session {session_id} is running a prompt")
        self._take_mcp_servers(session, mcp_servers)
        modes = self._open(session, cwd)
        for update in acp_replay(render_history(session.history, tools.BY_NAME, session.tool_calls)):
            self.outbox.push(session_id, update)
        if session.plan:
            self.outbox.push(session_id, acp_plan([PlanEntry.model_validate(e) for e in session.plan]))
        await self.outbox.flush()
        self._announce_commands(session_id)
        return schema.LoadSessionResponse(modes=modes, config_options=await self._config_options(session) or None)

    def _announce_commands(self, session_id: str) -> None:
        """Send the session's slash commands (`available_commands_update`) right after session/new or load:
        listing asks nothing (the project's commands and skills are listed once its folder is trusted: the first
        prompt asks, and they are announced again when its answer changed them)."""
        asyncio.ensure_future(self.send_commands(session_id))

    async def send_commands(self, session_id: str) -> None:
        from agent_lsp.acp.convert import acp_commands

        try:
            found = await self.assembly.invocable([self.sessions.get(session_id).preferences.cwd])
        except Exception as e:  # never a reason to fail the session
            log.warning("the slash commands could not be listed: %r", e)
            return
        self.opened[session_id].commands = [c.name for c in found]
        self.outbox.push(session_id, acp_commands(found))
        await self.outbox.flush()

    async def list_sessions(self, cwd: Optional[str] = None, cursor: Optional[str] = None,
                            **kwargs: Any) -> schema.ListSessionsResponse:
        from agent_lsp.acp.convert import acp_path

        start = 0
        if cursor is not None:
            if not (cursor.isascii() and cursor.isdigit()):
                raise invalid("cursor", f"{cursor[:100]!r} is not a cursor this agent gave")
            start = int(cursor)
        try:  # a folder gone since is a fair filter: only a path no system can have is refused
            folder = real(cwd).as_uri() if cwd else None
        except (OSError, ValueError):
            raise invalid("cwd", f"{cwd[:200]!r} is not a path") from None
        rows = self.sessions.all(folder)
        found = []
        for row in rows[start:start + LIST_PAGE]:
            folders = [p for p in (acp_path(uri) for uri in row.workspace_folders) if p]
            opened = self.sessions.get(row.id).preferences.cwd if row.id in self.opened else None
            known = opened or (folders[0] if folders else None)
            found.append(schema.SessionInfo(session_id=row.id, cwd=str(known or cwd or os.getcwd()),
                                            title=row.title or None, updated_at=row.updated_at))
        more = start + LIST_PAGE < len(rows)
        return schema.ListSessionsResponse(sessions=found, next_cursor=str(start + LIST_PAGE) if more else None)

    def _take_mcp_servers(self, session: Any, servers: Optional[list[Any]]) -> None:
        """The MCP servers the client gave for the session (its user's own configuration, so nothing asks for
        trust): started like the settings' on the first prompt that offers their tools; a bad one is a warning."""
        from agent_lsp.acp.convert import acp_mcp_servers
        from agent_lsp.config import clean

        raw, unsupported = acp_mcp_servers(servers or [])
        layer, problems = clean({"mcpServers": raw}, "the client's mcpServers (session/new, session/load)") if raw else ({}, [])
        session.preferences.mcp_servers = layer.get("mcp_servers", {})
        self._warn(unsupported + problems)

    async def _config_options(self, session: Any) -> list[Any]:
        """The session's settings a client may change: the model, chosen from the provider's list."""
        from agent_lsp.acp.convert import acp_model_option
        from agent_lsp.models.catalog import catalog

        found = self.catalog = await catalog(self.in_force.current([session.preferences.cwd]))
        current = session.preferences.model or found.default
        return [acp_model_option(found.models, current)] if current or found.models else []

    async def set_config_option(self, config_id: str, session_id: str, value: Any,
                                **kwargs: Any) -> schema.SetSessionConfigOptionResponse:
        """session/set_config_option: the model of the session's next prompts (as `agent/chat`'s `model`)."""
        session = self._session(session_id)
        if config_id != "model":
            raise invalid("configId", f"{config_id!r} is not an option of this agent (model)")
        offered = {m.id for m in self.catalog.models} if self.catalog else set()
        if not isinstance(value, str) or (offered and value not in offered):
            raise invalid("value", f"{value!r} is not one of the models offered: {', '.join(sorted(offered))}")
        session.preferences.model = value
        return schema.SetSessionConfigOptionResponse(config_options=await self._config_options(session))

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> schema.SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in PERMISSION_MODES:
            raise invalid("modeId", f"{mode_id!r} is not one of {', '.join(PERMISSION_MODES)}")
        session.preferences.permission_mode = mode_id
        return schema.SetSessionModeResponse()

    # ---- prompt turns ------------------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        self._session(session_id)
        if session_id not in self.opened:
            raise invalid("sessionId", f"session {session_id} is not loaded in this connection: session/load it first")
        opened = self.opened[session_id]
        if not opened.prompts:  # a second prompt of the session (refused as busy) keeps the first's cancel
            opened.cancelled = False
        opened.prompts += 1  # from here a session/cancel cancels this prompt, even before its chat is reserved
        try:
            return await self._prompt(prompt, session_id)
        finally:
            opened.prompts -= 1

    async def _prompt(self, prompt: list[Any], session_id: str) -> schema.PromptResponse:
        from agent_lsp.acp.convert import STOP_REASONS, acp_usage
        from agent_lsp.acp.prompt import AcpPrompt
        from agent_lsp.sessions.assembly import BadInput
        from agent_lsp.sessions.live import SessionBusy

        inputs = self._inputs(session_id, prompt)
        chat = asyncio.ensure_future(self.service.chat(inputs, AcpPrompt(self, session_id)))
        try:
            outcome = await asyncio.shield(chat)
        except asyncio.CancelledError:  # the connection is closing: stop the turn, keep its history, answer nothing
            chat.cancel()
            await asyncio.wait({chat})
            raise
        except BadInput as e:
            raise invalid("prompt" if e.field == "message" else e.field, str(e)) from None
        except SessionBusy:
            raise invalid("sessionId", f"a prompt is already running in session {session_id}") from None
        await self.outbox.flush()  # every update of the turn precedes its answer
        if self.opened[session_id].cancelled or outcome.stop_reason == "aborted":
            used = outcome.usage.input_tokens or outcome.usage.output_tokens  # none when the model was never asked
            return schema.PromptResponse(stop_reason="cancelled", usage=acp_usage(outcome.usage) if used else None)
        if outcome.stop_reason == "error":
            failure = outcome.error
            raise RequestError(-32603, f"The model request failed ({failure.type}): {failure.message}",
                               {"errorType": failure.type, "message": failure.message})
        return schema.PromptResponse(stop_reason=STOP_REASONS[outcome.stop_reason], usage=acp_usage(outcome.usage))

    def _inputs(self, session_id: str, prompt: list[Any]) -> Any:
        """A session/prompt in plain terms, for the chat assembly shared with LSP."""
        from agent_lsp.acp.convert import acp_images, acp_prompt
        from agent_lsp.acp.editor import ThroughClient
        from agent_lsp.sessions.assembly import ChatInputs

        text, attached, mentions = acp_prompt(prompt)
        editor = self.opened[session_id].editor
        # a link to a file of the workspace is read like an @file mention; others stay links in the text (a
        # mention's path is real already: acp_path)
        mentions = [m for m in mentions if m.path.is_file() and any(is_inside(m.path, r) for r in editor.roots)]

        def substitute(tool: Any) -> Any:
            if tool.file_tool:
                return ThroughClient(tool)
            if tool.runs_command and self.client.terminal:
                return self.in_terminal(session_id, tool)
            return tool

        return ChatInputs(message=text, editor=editor, session_id=session_id, mentions=mentions, attached=attached,
                          substitute=substitute, images=acp_images(prompt),
                          ask_trust=lambda question: self._ask_trust(session_id, question))

    async def _ask_trust(self, session_id: str, question: str) -> Optional[bool]:
        """Ask trust in the workspace's settings files; a session/cancel meanwhile ends the question unanswered
        (a client that never answers held the prompt past its cancel)."""
        from agent_lsp.acp.questions import ask_trust

        opened = self.opened[session_id]
        asking = opened.trust = asyncio.ensure_future(ask_trust(self.conn, self.outbox, session_id, question))
        try:
            return await asyncio.shield(asking)
        except asyncio.CancelledError:
            if asking.cancelled() and not asyncio.current_task().cancelling():
                return None  # session/cancel: not answered, asked again next time
            asking.cancel()
            raise
        finally:
            opened.trust = None

    def show_warnings(self, session_id: str) -> None:
        """Settings warnings not shown yet, as the start of this prompt's reply (ACP has no notice update)."""
        if self.unshown:
            from agent_lsp.acp.questions import warnings_chunk

            self.outbox.push(session_id, warnings_chunk(self.unshown))
            self.unshown = []

    def in_terminal(self, session_id: str, tool: Any) -> Any:
        from agent_lsp.acp.convert import terminal_update
        from agent_lsp.acp.terminal import InClientTerminal

        converter = self.opened[session_id].converter

        def started(terminal_id: str) -> None:
            call = converter.running_command
            if call is not None:
                converter.terminals[call] = terminal_id
                self.outbox.push(session_id, terminal_update(call, terminal_id))

        return InClientTerminal(tool, self.conn, session_id, self.outbox.flush, started)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """session/cancel: the running turn stops; its session/prompt answers `cancelled`."""
        from agent_lsp.sessions.live import UnknownSession

        try:
            opened = self.opened.get(session_id)
            if (self.service.abort(session_id) or (opened and opened.prompts)) and opened:
                opened.cancelled = True
            if opened and opened.trust is not None:
                opened.trust.cancel()
        except UnknownSession:
            log.info("session/cancel for unknown session %s", session_id)

    async def close(self) -> None:
        """Stop what the chats started (MCP servers) when the connection ends."""
        if self._service is not None:
            await self._service.close()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "agent-lsp/debugCounts" and os.environ.get("AGENT_LSP_DEBUG") == "1":  # tests' leak checks only
            import threading

            return {"tasks": len(asyncio.all_tasks()), "threads": threading.active_count()}
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
