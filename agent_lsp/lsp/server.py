"""The language server: the single place with @server.feature. Each handler is thin; agent/* bodies live in
`handlers.py`, imported on the first agent request so that start-up (once per editor window) stays light."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from agent_lsp import DISTRIBUTION, __version__
from agent_lsp.capabilities import client_agent_capabilities, server_agent_capabilities
from agent_lsp.config import Layers, clean

log = logging.getLogger(__name__)


def _dict_converter():
    """Keep params and results of non-LSP methods as plain dicts (pygls would make lossy namedtuples)."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(
            cls, lambda obj, cls: cls(**{"params": None, **obj}) if "method" in obj else cls(**obj))
    return converter


class AgentProtocol(LanguageServerProtocol):
    """pygls's protocol plus the agent capabilities and a guard for late replies."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"agent": server_agent_capabilities()}
        return result

    def _handle_response(self, msg_id, result=None, error=None):
        future = self._request_futures.get(msg_id)
        if future is not None and future.cancelled():  # a reply to a request an abort gave up on (pygls#621)
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)


class AgentServer(LanguageServer):
    """The agent-lsp server: its settings layers, the client's agent capabilities, and the agent state."""

    def __init__(self, launch_settings: dict[str, Any], data_dir: Optional[Path]) -> None:
        super().__init__(DISTRIBUTION, __version__, protocol_cls=AgentProtocol, converter_factory=_dict_converter)
        self.data_dir = data_dir
        """Where the session store lives; None keeps sessions in memory."""
        layer, self.pending_warnings = clean(launch_settings, "the environment")
        self.layers = Layers(environment=layer)
        self.agent_caps = {"confirmTool": False, "diagnostics": False}
        self.agent: Any = None
        """The agent state (`handlers.Agent`), made on the first agent/* request."""

    def warn(self, messages: list[str]) -> None:
        """A window/showMessage warning per message."""
        for message in messages:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))


def _handlers():
    from agent_lsp.lsp import handlers

    return handlers


def create_server(launch_settings: Optional[dict[str, Any]] = None, data_dir: Optional[Path] = None) -> AgentServer:
    """The server with every handler registered."""
    server = AgentServer(launch_settings or {}, data_dir)

    @server.feature(types.INITIALIZE)
    def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
        ls.agent_caps, well_formed = client_agent_capabilities(params.capabilities.experimental)
        if not well_formed:
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
        return await _handlers().agent_chat(ls, params)

    @server.feature("agent/abort")
    def agent_abort(ls: AgentServer, params: Any) -> dict:
        return _handlers().agent_abort(ls, params)

    @server.feature("agent/confirmTool")
    def agent_confirm_tool(ls: AgentServer, params: Any) -> dict:
        return _handlers().agent_confirm_tool(ls, params)

    @server.feature("agent/sessions")
    def agent_sessions(ls: AgentServer, params: Any) -> dict:
        return _handlers().agent_sessions(ls, params)

    @server.feature("agent/history")
    def agent_history(ls: AgentServer, params: Any) -> dict:
        return _handlers().agent_history(ls, params)

    @server.feature("agent/deleteSession")
    def agent_delete_session(ls: AgentServer, params: Any) -> dict:
        return _handlers().agent_delete_session(ls, params)

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
