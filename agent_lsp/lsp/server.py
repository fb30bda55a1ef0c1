"""The language server: the single place with @server.feature. Handlers parse, call the sessions, convert."""

from __future__ import annotations

import logging
import platform
from typing import Any, Optional

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from agent_lsp import __version__, tools
from agent_lsp.config import Layers, Settings, clean
from agent_lsp.core.events import AgentUpdate
from agent_lsp.core.prompt import Environment, project_instructions, system_prompt
from agent_lsp.core.tool import ToolContext
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.progress import ChatProgress
from agent_lsp.lsp.updates import UpdateStream
from agent_lsp.models.registry import build_model
from agent_lsp.protocol import (
    AbortResult,
    ChatParams,
    ChatResult,
    ClientAgentCapabilities,
    ConfirmToolParams,
    ConfirmToolResult,
    DeleteSessionResult,
    HistoryResult,
    ServerAgentCapabilities,
    SessionInfo,
    SessionParams,
    SessionsResult,
    UpdateParams,
)
from agent_lsp.sessions.history import render_history
from agent_lsp.sessions.permissions import Ask
from agent_lsp.sessions.runtime import ChatRequest, Session, SessionBusy, Sessions, UnknownSession, UnknownToolCall
from agent_lsp.tools.paths import display

log = logging.getLogger(__name__)
SESSION_BUSY = -32001
CONFIRM_ACTIONS = {"Allow once": "allow_once", "Allow always": "allow_always", "Reject": "reject_once"}


def _dict_converter():
    """Keep params and results of non-LSP methods as plain dicts (pygls would make lossy namedtuples)."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**{"params": None, **obj}) if "method" in obj
                                          else cls(**obj))
    return converter


class AgentProtocol(LanguageServerProtocol):
    """pygls's protocol plus the agent capabilities and a guard for late replies."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        caps = ServerAgentCapabilities(tools=[t.name for t in tools.ALL])
        result.capabilities.experimental = {"agent": caps.wire()}
        return result

    def _handle_response(self, msg_id, result=None, error=None):
        future = self._request_futures.get(msg_id)
        if future is not None and future.cancelled():  # a reply to a request an abort gave up on (pygls#621)
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)


class AgentServer(LanguageServer):
    """The agent-lsp server: settings layers, sessions, and how updates reach the client."""

    def __init__(self, launch_settings: dict[str, Any]) -> None:
        super().__init__("agent-lsp", __version__, protocol_cls=AgentProtocol, converter_factory=_dict_converter)
        layer, self.pending_warnings = clean(launch_settings, "the environment")
        self.layers = Layers(environment=layer)
        self.agent_caps = ClientAgentCapabilities()
        self.sessions = Sessions(build_model, self.emit)
        self.streams: dict[str, UpdateStream] = {}
        self.progress: dict[str, ChatProgress] = {}

    def emit(self, session: Session, update: AgentUpdate) -> None:
        """Send an update of `session` (coalescing text) and move its progress along."""
        stream = self.streams.get(session.id)
        if stream is None:
            stream = self.streams[session.id] = UpdateStream(lambda u: self._notify(session, u))
        stream.push(update)
        if session.id in self.progress:
            self.progress[session.id].report(update)

    def _notify(self, session: Session, update: AgentUpdate) -> None:
        params = UpdateParams(session_id=session.id, seq=session.next_seq(), update=update)
        self.protocol.notify("agent/update", params.wire())

    def warn(self, messages: list[str]) -> None:
        for message in messages:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    def editor(self) -> LspEditor:
        return LspEditor(self, client_diagnostics=self.agent_caps.diagnostics)

    def ask_by_message(self) -> Ask:
        """Confirmation through window/showMessageRequest, for clients without agent/confirmTool."""

        async def ask(request):
            what = f"`{request.command}`" if request.command else request.title
            answer = await self.window_show_message_request_async(types.ShowMessageRequestParams(
                type=types.MessageType.Warning, message=f"agent-lsp wants to run {request.name}: {what}. Allow?",
                actions=[types.MessageActionItem(title=t) for t in CONFIRM_ACTIONS]))
            title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
            return CONFIRM_ACTIONS.get(title, "reject_once"), None

        return ask


def parse(model: type[BaseModel], params: Any) -> Any:
    """Validate raw params; a mismatch is -32602 naming each field."""
    try:
        return model.model_validate({} if params is None else params)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'params'}: {err['msg']}" for err in e.errors())
        fields = [".".join(map(str, err["loc"])) for err in e.errors()]
        raise JsonRpcInvalidParams(f"Invalid params: {problems}", data={"fields": fields}) from None


def session_of(server: AgentServer, session_id: str) -> Session:
    """The session, or -32602 naming sessionId."""
    try:
        return server.sessions.get(session_id)
    except UnknownSession:
        raise JsonRpcInvalidParams(f"Invalid params: sessionId: unknown session {session_id!r}",
                                   data={"fields": ["sessionId"]}) from None


def environment(editor: LspEditor, params: ChatParams) -> Environment:
    """What the system prompt tells the model about the editor."""
    roots = editor.roots
    docs = editor.open_documents()
    env = Environment(os_name=f"{platform.system()} {platform.release()}", roots=roots,
                      open_buffers=[(display(roots, d.path) if d.path else d.uri, d.unsaved) for d in docs])
    context = params.context
    if context and context.active_uri:
        active = next((d for d in docs if d.uri == context.active_uri), None)
        env.active_file = display(roots, active.path) if active and active.path else context.active_uri
        if active and context.selection:
            lines = active.text.splitlines()
            first, last = context.selection.start.line, context.selection.end.line
            env.selection = (first + 1, last + 1, "\n".join(lines[first:last + 1]))
    return env


def summary(result: ChatResult) -> str:
    """The progress end message."""
    meta = result.metadata
    done = f"{meta.turns_count} turns, {meta.tool_calls_count} tool calls"
    return {"end_turn": f"Done: {done}", "aborted": f"Stopped: {done}", "error": "Failed: " +
            (result.error.message if result.error else "")}.get(result.stop_reason, f"{result.stop_reason}: {done}")


def create_server(launch_settings: Optional[dict[str, Any]] = None) -> AgentServer:
    """The server with every handler registered."""
    server = AgentServer(launch_settings or {})

    @server.feature(types.INITIALIZE)
    def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
        experimental = params.capabilities.experimental
        agent = experimental.get("agent") if isinstance(experimental, dict) else None
        try:
            ls.agent_caps = ClientAgentCapabilities.model_validate(agent or {})
        except ValidationError:
            ls.pending_warnings.append("agent-lsp: capabilities.experimental.agent is malformed; it is ignored.")
        ls.layers.initialization_options, warnings = clean(params.initialization_options, "initializationOptions")
        ls.pending_warnings += warnings

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
        ls.warn(ls.pending_warnings)
        ls.pending_warnings = []
        await pull_configuration(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("agentLsp"), dict):
            ls.layers.workspace, warnings = clean(settings["agentLsp"], "workspace configuration")
            ls.warn(warnings)
        else:
            await pull_configuration(ls)

    @server.feature("agent/chat")
    async def agent_chat(ls: AgentServer, params: Any) -> dict:
        p = parse(ChatParams, params)
        session = session_of(ls, p.session_id) if p.session_id else ls.sessions.start(p.message)
        try:
            ls.sessions.reserve(session)
        except SessionBusy:
            raise JsonRpcException(code=SESSION_BUSY, message=f"Session {session.id} is busy: a chat is running.")
        try:
            settings: Settings = ls.layers.resolve(
                {"permission_mode": p.permission_mode, "max_turns": p.max_turns, "model": p.model})
            editor = ls.editor()
            request = ChatRequest(message=p.message, settings=settings,
                                  system=system_prompt(environment(editor, p), project_instructions(editor.roots)),
                                  tools=list(tools.ALL), ctx=ToolContext(editor=editor))
            progress = await ChatProgress.open(ls, p.work_done_token, lambda: ls.sessions.abort(session.id))
            if progress:
                ls.progress[session.id] = progress
            ask = None if ls.agent_caps.confirm_tool else ls.ask_by_message()
            result = await ls.sessions.chat(session, request, ask)
        finally:
            ls.sessions.release(session)
            stream = ls.streams.get(session.id)
            if stream:
                stream.flush()
            progress = ls.progress.pop(session.id, None)
        if progress:
            progress.end(summary(result))
        return result.wire()

    @server.feature("agent/abort")
    def agent_abort(ls: AgentServer, params: Any) -> dict:
        p = parse(SessionParams, params)
        session_of(ls, p.session_id)
        return AbortResult(aborted=ls.sessions.abort(p.session_id)).wire()

    @server.feature("agent/confirmTool")
    def agent_confirm_tool(ls: AgentServer, params: Any) -> dict:
        p = parse(ConfirmToolParams, params)
        session_of(ls, p.session_id)
        try:
            ls.sessions.confirm(p.session_id, p.tool_call_id, p.decision, p.message)
        except UnknownToolCall:
            raise JsonRpcInvalidParams(
                f"Invalid params: toolCallId: no confirmation is pending for {p.tool_call_id!r}",
                data={"fields": ["toolCallId"]}) from None
        return ConfirmToolResult().wire()

    @server.feature("agent/sessions")
    def agent_sessions(ls: AgentServer, params: Any) -> dict:
        return SessionsResult(sessions=[
            SessionInfo(session_id=s.id, title=s.title, created_at=s.created_at, updated_at=s.updated_at,
                        turns_count=s.turns_count) for s in ls.sessions.all()]).wire()

    @server.feature("agent/history")
    def agent_history(ls: AgentServer, params: Any) -> dict:
        session = session_of(ls, parse(SessionParams, params).session_id)
        return HistoryResult(messages=render_history(session.history, tools.BY_NAME)).wire()

    @server.feature("agent/deleteSession")
    def agent_delete_session(ls: AgentServer, params: Any) -> dict:
        session = session_of(ls, parse(SessionParams, params).session_id)
        ls.sessions.delete(session.id)
        return DeleteSessionResult().wire()

    return server


async def pull_configuration(ls: AgentServer) -> None:
    """Ask the client for the `agentLsp` section when it supports workspace/configuration."""
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="agentLsp")]))
    except Exception as e:  # a client that cannot answer leaves the other layers in force
        log.info("workspace/configuration failed: %r", e)
        return
    section = answer[0] if answer else None
    ls.layers.workspace, warnings = clean(section, "workspace configuration")
    ls.warn(warnings)
