"""The ACP agent: thin handlers (parse, call the sessions, convert) over the same sessions and store as LSP.

Only `acp.schema` is needed to answer `initialize`; the sessions, tools and models are imported on the first
session/new, session/load or session/list, so an editor's spawn → initialize stays light.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any, Optional

from acp import RequestError, schema

from agent_lsp.config import PERMISSION_MODES, Layers, clean
from agent_lsp.acp.outbox import Outbox
from agent_lsp.config.user_file import UserSettingsFile

log = logging.getLogger(__name__)
LIST_PAGE = int(os.environ.get("AGENT_LSP_ACP_LIST_PAGE", "100"))
"""Sessions per session/list page (tests make it small)."""


def invalid(field: str, problem: str) -> RequestError:
    """-32602 naming the field."""
    return RequestError(-32602, f"Invalid params: {field}: {problem}", {"field": field, "fields": [field]})


def directory(cwd: str, field: str = "cwd") -> Path:
    """`cwd` as the absolute directory it must be (resolved), else -32602 naming the field (a NUL, a name too
    long for the system: never an internal error)."""
    try:
        root = Path(cwd)
        if root.is_absolute() and root.is_dir():
            return root.resolve()
    except (OSError, ValueError):
        pass
    raise invalid(field, f"{cwd[:200]!r} is not an absolute path to a directory")


class AcpAgent:
    """What `agent-lsp --acp` answers; one per connection."""

    def __init__(self, launch_settings: dict[str, Any], data_dir: Optional[Path]) -> None:
        layer, self.warnings = clean(launch_settings, "the environment")
        self.user_file = UserSettingsFile()
        self.warnings += self.user_file.refresh()
        self.layers = Layers(environment=layer, user_file=self.user_file.layer)
        self.unshown: list[str] = list(self.warnings)
        """Settings warnings not yet shown in a session (the first prompt shows them)."""
        self._assembly: Any = None
        self.data_dir = data_dir
        self.conn: Any = None
        self.client = schema.ClientCapabilities()
        self.outbox: Optional[Outbox] = None
        self._sessions: Any = None
        self.cwds: dict[str, Path] = {}
        self.modes: dict[str, str] = {}
        self.models: dict[str, str] = {}
        self.mcp_servers: dict[str, Any] = {}
        """The MCP servers each session's client gave in session/new or session/load (checked)."""
        """The model chosen per session with session/set_config_option (else the settings' model)."""
        self.catalogs: dict[str, Any] = {}
        self.editors: dict[str, Any] = {}
        self.converters: dict[str, Any] = {}
        self.cancelled: set[str] = set()
        self.prompting: Optional[str] = None
        """The session whose prompt runs now (the last one to start)."""
        self.commands: dict[str, list[str]] = {}
        """The command names last announced to each session (announced again when they change)."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.outbox = Outbox(conn)

    # ---- lifecycle ---------------------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> schema.InitializeResponse:
        self.client = client_capabilities or schema.ClientCapabilities()
        for warning in self.warnings:
            log.warning(warning)
        from agent_lsp.acp.early import initialize_result

        return schema.InitializeResponse.model_validate(initialize_result(protocol_version))

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # keys come from the environment, never over the wire

    @property
    def assembly(self) -> Any:
        """The chat assembly shared with LSP (sessions/assembly.py), made on first use."""
        if self._assembly is None:
            from agent_lsp.sessions.assembly import ChatAssembly

            self._assembly = ChatAssembly(self.layers, self.data_dir, self._warn, self.user_file,
                                          language_servers=self._language_servers)
        return self._assembly

    def _language_servers(self) -> Any:
        """agent-lsp's own language servers: ACP clients cannot answer language requests (the editor of the
        prompt running, if any, gives them its buffers)."""
        from agent_lsp.sidecar import SidecarPool

        return SidecarPool(lambda: self.editors.get(self.prompting) if self.prompting else None,
                           lambda message: self._warn([message]))

    def _warn(self, messages: list[str]) -> None:
        """Settings warnings: on stderr now, and in the next prompt's reply."""
        for message in messages:
            log.warning(message)
        self.unshown += messages

    @property
    def sessions(self) -> Any:
        """The sessions layer, made (and its modules imported) on first use."""
        if self._sessions is None:
            from agent_lsp.models.resolver import build_model
            from agent_lsp.sessions.runtime import Sessions
            from agent_lsp.sessions.store import open_store

            store = None
            if self.data_dir is not None:
                store, warning = open_store(self.data_dir)
                if warning:
                    log.warning(warning)
            self._sessions = Sessions(build_model, self._emit, store)
        return self._sessions

    def _session(self, session_id: str) -> Any:
        from agent_lsp.sessions.runtime import UnknownSession

        try:
            return self.sessions.get(session_id)
        except UnknownSession:
            raise invalid("sessionId", f"unknown session {session_id!r}") from None

    def _open(self, session_id: str, cwd: str) -> schema.SessionModeState:
        from agent_lsp.acp.convert import UpdateConverter, acp_modes
        from agent_lsp.acp.editor import AcpEditor

        root = directory(cwd)
        fs = self.client.fs or schema.FileSystemCapabilities()
        editor = AcpEditor(self.conn, session_id, root.resolve(), bool(fs.read_text_file), bool(fs.write_text_file),
                           self.outbox.flush)
        self.cwds[session_id], self.editors[session_id] = root.resolve(), editor
        self.converters[session_id] = UpdateConverter(editor.applied)
        self.assembly.refresh_user_file()
        mode = self.modes.setdefault(session_id, self.layers.resolve().permission_mode)
        return acp_modes(mode)

    # ---- sessions ----------------------------------------------------------------------------------------

    async def new_session(self, cwd: str, additional_directories: Optional[list[str]] = None,
                          mcp_servers: Optional[list[Any]] = None, **kwargs: Any) -> schema.NewSessionResponse:
        session = self.sessions.start(workspace_folders=[directory(cwd).as_uri()])
        self._take_mcp_servers(session.id, mcp_servers)
        modes = self._open(session.id, cwd)
        self._announce_commands(session.id)
        return schema.NewSessionResponse(session_id=session.id, modes=modes,
                                         config_options=await self._config_options(session.id) or None)

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
        self._take_mcp_servers(session_id, mcp_servers)
        modes = self._open(session_id, cwd)
        for update in acp_replay(render_history(session.history, tools.BY_NAME, session.tool_calls)):
            self.outbox.push(session_id, update)
        if session.plan:
            self.outbox.push(session_id, acp_plan([PlanEntry.model_validate(e) for e in session.plan]))
        await self.outbox.flush()
        self._announce_commands(session_id)
        return schema.LoadSessionResponse(modes=modes, config_options=await self._config_options(session_id) or None)

    def _announce_commands(self, session_id: str) -> None:
        """Send the session's slash commands (`available_commands_update`) right after session/new or load:
        listing asks nothing (the first prompt asks trust for the project's command files, as for its settings)."""
        asyncio.ensure_future(self._send_commands(session_id))

    async def _send_commands(self, session_id: str) -> None:
        from agent_lsp.acp.convert import acp_commands

        try:
            found = await self.assembly.commands([self.cwds[session_id]])
        except Exception as e:  # never a reason to fail the session
            log.warning("the slash commands could not be listed: %r", e)
            return
        self.commands[session_id] = [c.name for c in found]
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
            folder = Path(cwd).resolve().as_uri() if cwd else None
        except (OSError, ValueError):
            raise invalid("cwd", f"{cwd[:200]!r} is not a path") from None
        rows = self.sessions.all(folder)
        found = []
        for row in rows[start:start + LIST_PAGE]:
            folders = [p for p in (acp_path(uri) for uri in row.workspace_folders) if p]
            known = self.cwds.get(row.id) or (folders[0] if folders else None)
            found.append(schema.SessionInfo(session_id=row.id, cwd=str(known or cwd or os.getcwd()),
                                            title=row.title or None, updated_at=row.updated_at))
        more = start + LIST_PAGE < len(rows)
        return schema.ListSessionsResponse(sessions=found, next_cursor=str(start + LIST_PAGE) if more else None)

    def _take_mcp_servers(self, session_id: str, servers: Optional[list[Any]]) -> None:
        """The MCP servers the client gave for the session (its user's own configuration, so nothing asks for
        trust): started like the settings' on the first prompt that offers their tools; a bad one is a warning."""
        from agent_lsp.acp.convert import acp_mcp_servers
        from agent_lsp.config import clean

        raw, unsupported = acp_mcp_servers(servers or [])
        layer, problems = clean({"mcpServers": raw}, "the client's mcpServers (session/new, session/load)") if raw else ({}, [])
        self.mcp_servers[session_id] = layer.get("mcp_servers", {})
        self._warn(unsupported + problems)

    async def _config_options(self, session_id: str) -> list[Any]:
        """The session's settings a client may change: the model, chosen from the provider's list."""
        from agent_lsp.acp.convert import acp_model_option
        from agent_lsp.models.catalog import catalog

        found = await catalog(self.layers.resolve())
        self.catalogs[session_id] = found
        current = self.models.get(session_id) or found.default
        return [acp_model_option(found.models, current)] if current or found.models else []

    async def set_config_option(self, config_id: str, session_id: str, value: Any,
                                **kwargs: Any) -> schema.SetSessionConfigOptionResponse:
        """session/set_config_option: the model of the session's next prompts (as `agent/chat`'s `model`)."""
        self._session(session_id)
        if config_id != "model":
            raise invalid("configId", f"{config_id!r} is not an option of this agent (model)")
        found = self.catalogs.get(session_id)
        offered = {m.id for m in found.models} if found else set()
        if not isinstance(value, str) or (offered and value not in offered):
            raise invalid("value", f"{value!r} is not one of the models offered: {', '.join(sorted(offered))}")
        self.models[session_id] = value
        return schema.SetSessionConfigOptionResponse(config_options=await self._config_options(session_id))

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> schema.SetSessionModeResponse:
        self._session(session_id)
        if mode_id not in PERMISSION_MODES:
            raise invalid("modeId", f"{mode_id!r} is not one of {', '.join(PERMISSION_MODES)}")
        self.modes[session_id] = mode_id
        return schema.SetSessionModeResponse()

    # ---- prompt turns ------------------------------------------------------------------------------------

    def _emit(self, session: Any, update: Any) -> None:
        converter = self.converters.get(session.id)
        converted = converter.convert(update) if converter else None
        if converted is not None:
            self.outbox.push(session.id, converted)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        from agent_lsp.acp.convert import STOP_REASONS
        from agent_lsp.sessions.assembly import BadInput
        from agent_lsp.sessions.runtime import SessionBusy

        session = self._session(session_id)
        if session_id not in self.editors:
            raise invalid("sessionId", f"session {session_id} is not loaded in this connection: session/load it first")
        try:
            checked = await self.assembly.check(self._inputs(session_id, prompt))
        except BadInput as e:
            raise invalid("prompt" if e.field == "message" else e.field, str(e)) from None
        if [c.name for c in await self.assembly.commands([self.cwds[session_id]])] != self.commands.get(session_id):
            await self._send_commands(session_id)  # the project's commands were trusted just now
        try:
            self.sessions.reserve(session)
        except SessionBusy:
            raise invalid("sessionId", f"a prompt is already running in session {session_id}") from None
        self.cancelled.discard(session_id)
        self.prompting = session_id
        try:
            request = await self.assembly.compose(checked)
            self._show_warnings(session_id)
            chat = asyncio.ensure_future(self.sessions.chat(session, request, self._asker(session_id)))
            try:
                outcome = await asyncio.shield(chat)
            except asyncio.CancelledError:  # the connection is closing: stop the turn, keep its history, answer nothing
                chat.cancel()
                await asyncio.wait({chat})
                raise
        finally:
            self.sessions.release(session)
        await self.outbox.flush()  # every update of the turn precedes its answer
        if session_id in self.cancelled or outcome.stop_reason == "aborted":
            return schema.PromptResponse(stop_reason="cancelled")
        if outcome.stop_reason == "error":
            failure = outcome.error
            raise RequestError(-32603, f"The model request failed ({failure.type}): {failure.message}",
                               {"errorType": failure.type, "message": failure.message})
        return schema.PromptResponse(stop_reason=STOP_REASONS[outcome.stop_reason])

    def _inputs(self, session_id: str, prompt: list[Any]) -> Any:
        """A session/prompt in plain terms, for the chat assembly shared with LSP."""
        from agent_lsp.acp.convert import acp_images, acp_prompt
        from agent_lsp.acp.editor import ThroughClient
        from agent_lsp.acp.questions import ask_trust
        from agent_lsp.sessions.assembly import ChatInputs
        from agent_lsp.tools.paths import is_inside

        text, attached, mentions = acp_prompt(prompt)
        editor = self.editors[session_id]
        # a link to a file of the workspace is read like an @file mention; others stay links in the text
        mentions = [m for m in mentions if m.path.is_file() and any(is_inside(m.path.resolve(), r) for r in editor.roots)]
        through = {"read_file", "edit_file", "write_file"}

        def substitute(tool: Any) -> Any:
            if tool.name in through:
                return ThroughClient(tool)
            if tool.name == "run_command" and self.client.terminal:
                return self._in_terminal(session_id, tool)
            return tool

        return ChatInputs(message=text, editor=editor, session_id=session_id, mentions=mentions, attached=attached,
                          chat_settings={"permission_mode": self.modes[session_id], "model": self.models.get(session_id),
                                         "mcp_servers": self.mcp_servers.get(session_id)},
                          substitute=substitute, images=acp_images(prompt),
                          ask_trust=lambda question: ask_trust(self.conn, self.outbox, session_id, question))

    def _show_warnings(self, session_id: str) -> None:
        """Settings warnings not shown yet, as the start of this prompt's reply (ACP has no notice update)."""
        if self.unshown:
            from agent_lsp.acp.questions import warnings_chunk

            self.outbox.push(session_id, warnings_chunk(self.unshown))
            self.unshown = []

    def _in_terminal(self, session_id: str, tool: Any) -> Any:
        from agent_lsp.acp.convert import terminal_update
        from agent_lsp.acp.terminal import InClientTerminal

        converter = self.converters[session_id]

        def started(terminal_id: str) -> None:
            call = converter.running_command
            if call is not None:
                converter.terminals[call] = terminal_id
                self.outbox.push(session_id, terminal_update(call, terminal_id))

        return InClientTerminal(tool, self.conn, session_id, self.outbox.flush, started)

    def _asker(self, session_id: str):
        """Ask through session/request_permission; an answer `cancelled` cancels the turn, as ACP means it."""
        from agent_lsp.acp.questions import permission_asker

        def cancelled() -> None:
            self.cancelled.add(session_id)
            self.sessions.abort(session_id)

        return permission_asker(self.conn, self.outbox, session_id, cancelled)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """session/cancel: the running turn stops; its session/prompt answers `cancelled`."""
        from agent_lsp.sessions.runtime import UnknownSession

        try:
            if self.sessions.abort(session_id):
                self.cancelled.add(session_id)
        except UnknownSession:
            log.info("session/cancel for unknown session %s", session_id)

    async def close(self) -> None:
        """Stop what the chats started (MCP servers) when the connection ends."""
        if self._assembly is not None:
            await self._assembly.close()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "agent-lsp/debugCounts" and os.environ.get("AGENT_LSP_DEBUG") == "1":  # tests' leak checks only
            import threading

            return {"tasks": len(asyncio.all_tasks()), "threads": threading.active_count()}
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
