"""The language server: the single place with @server.feature. Each handler is thin; the agent/* bodies live in
`handlers.py`, `chat_edits.py` and `code_action_commands.py`, named in one table (AGENT_METHODS) and imported on
the first agent request, so that start-up (once per editor window) stays light and nothing here depends on them."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any, Optional

from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCProtocol, JsonRPCRequestMessage, JsonRPCResponseMessage

from agent_lsp import DISTRIBUTION, __version__
from agent_lsp.capabilities import client_agent_capabilities, server_agent_capabilities
from agent_lsp.config import Layers, clean
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.lsp.code_actions import COMMANDS, code_actions
from agent_lsp.lsp.inline_completion import RAW_PARAMS, register_inline_completion
from agent_lsp.lsp.next_edit import note_client_settings, register_next_edit

log = logging.getLogger(__name__)


def _dict_converter():
    """Keep params and results of non-LSP methods as plain dicts (pygls would make lossy namedtuples)."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(
            cls, lambda obj, cls: cls(**{"params": None, **obj}) if "method" in obj else cls(**obj))
    return converter


class _Writer:
    """The transport's writer; once the client has gone (exit, a broken pipe), writes are dropped: one log line
    when the pipe breaks, no traceback."""

    def __init__(self, writer: Any, protocol: "AgentProtocol") -> None:
        self._writer, self._protocol = writer, protocol

    def write(self, data: bytes) -> Any:
        if self._protocol.closed:
            return None
        try:
            return self._writer.write(data)
        except (OSError, ValueError) as e:  # a broken pipe, a closed stdout: the editor is gone
            self._protocol.client_gone(repr(e))
            return None

    def close(self) -> Any:
        return self._writer.close()


class AgentProtocol(LanguageServerProtocol):
    """pygls's protocol plus the agent capabilities, a guard for late replies, one log line (not a traceback)
    for a request answered with a JSON-RPC error on purpose (-32602, -32001...), a quiet, quick exit, and no
    notification's future kept once it is done."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._methods: dict[Any, str] = {}
        """The method of each request being handled, for the log line of an error answer."""
        self.closed = False
        """The client has gone (exit, or the transport broke): nothing more is sent."""
        self.exit_code: Optional[int] = None
        """Set by `exit`: 0 after a shutdown request, 1 without (LSP); None when the input just ended."""

    def set_writer(self, writer: Any, *args: Any, **kwargs: Any) -> None:
        super().set_writer(_Writer(writer, self), *args, **kwargs)

    def client_gone(self, why: str) -> None:
        """Stop sending: the client cannot read any more."""
        if not self.closed:
            self.closed = True
            log.info("the client has gone (%s); nothing more is sent", why)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:
        """Stop every request still running and send nothing more; leave the message loop as pygls does (the
        running chats are cancelled as the loop closes, and cli.py ends the process without a slow teardown)."""
        # pygls 2.1 has no public shutdown flag nor list of the requests running (_shutdown, _request_futures)
        self.exit_code = 0 if self._shutdown else 1
        self.closed = True
        for future in list(self._request_futures.values()):
            if not (isinstance(future, asyncio.Task) and future.cancelling()):  # shutdown cancelled it already
                future.cancel()
        sys.exit(self.exit_code)

    # pygls 2.1 has no public hook on an answer; it logs expected errors with a traceback (_send_handler_result)
    def _handle_request(self, msg_id, method_name, params):
        self._methods[msg_id] = method_name
        super()._handle_request(msg_id, method_name, params)
        if msg_id not in self._request_futures:  # answered already (a sync handler, an unknown method)
            self._methods.pop(msg_id, None)

    # pygls 2.1 keeps a notification handler's future in its private table of running requests for good (a leak
    # per didChange) and offers no public hook to take it out
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        if getattr(callback, "__func__", None) is JsonRPCProtocol._check_handler_result:
            # a notification's handler: pygls files its future under a made-up id in the table of requests being
            # handled and never takes it out (a future per didChange, for good); out once it is done
            check = callback

            def callback(future: Any, msg_id: Any = msg_id) -> None:
                self._request_futures.pop(msg_id, None)
                check(future)

        super()._execute_handler(msg_id, handler, callback, args, kwargs)

    # pygls 2.1 has no public hook for $/cancelRequest: it warns for every id already answered
    def _handle_cancel_notification(self, msg_id):
        if isinstance(msg_id, bool) or not isinstance(msg_id, (int, float, str)):  # no request has such an id
            log.info("$/cancelRequest with an id no request can have (%s) dropped", type(msg_id).__name__)
            return
        if msg_id not in self._request_futures:  # answered already: clients send these routinely (no warning)
            log.debug("$/cancelRequest for %s, which is no longer running", msg_id)
            return
        super()._handle_cancel_notification(msg_id)

    def _send_handler_result(self, future, *, msg_id):
        method = self._methods.pop(msg_id, "a request")
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException):  # an expected answer; pygls would log it with a traceback
            self._request_futures.pop(msg_id, None)
            log.info("%s answered error %s: %s", method, error.code, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def get_message_type(self, method: str) -> Any:
        return None if method in RAW_PARAMS else super().get_message_type(method)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        general = params.capabilities.general
        offered = (general.position_encodings or []) if general is not None else []
        if types.PositionEncodingKind.Utf16 in offered:  # Copilot's clients send UTF-16 whatever is negotiated
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"agent": server_agent_capabilities()}
        result.capabilities.inline_completion_provider = True  # for every client (pygls would send {} or nothing)
        return result

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams):
        if params.command not in COMMANDS:
            return (yield from super().lsp_workspace__execute_command(params))
        # the agent's commands need the whole params (the work-done token), not just their arguments
        return (yield _body("code_action_commands", "execute_command"), (self.fm.server, params), None)

    # pygls 2.1 has no public hook for a reply to a request cancelled here: it fails setting the result
    def _handle_response(self, msg_id, result=None, error=None):
        future = self._request_futures.get(msg_id)
        if future is not None and future.cancelled():  # a reply to a request an abort gave up on (pygls#621)
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)

    # pygls 2.1 has no public hook on an answer as it is written: it sends the traceback in data, and a suggestion
    # made stale by a didChange read after its handler returned would go out as it was
    def _send_response(self, msg_id, result=None, error=None):
        if callable(getattr(result, "at_write", None)):  # a suggestion, sent only while its version holds
            result = result.at_write()
        if error is not None and error.data is not None and error.code == -32603:
            # pygls ships the traceback (with the install's file paths) in data: the log has it, the client not
            error = ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)


class AgentServer(LanguageServer):
    """The agent-lsp server: its settings layers, the client's agent capabilities, and the agent state."""

    def __init__(self, launch_settings: dict[str, Any], data_dir: Optional[Path]) -> None:
        super().__init__(DISTRIBUTION, __version__, protocol_cls=AgentProtocol, converter_factory=_dict_converter)
        self.data_dir = data_dir
        """Where the session store lives; None keeps sessions in memory."""
        layer, self.pending_warnings = clean(launch_settings, "the environment")
        self.in_force = SettingsInForce(Layers(environment=layer), self.warn, data_dir)
        """The settings in force; the user's settings file is first read at `initialized`: checking settings loads
        pydantic, which the answer to `initialize` does not wait for."""
        self.layers = self.in_force.layers
        """The layers the client sets (initializationOptions, workspace/configuration)."""
        self.initialization_options: Any = None
        """As the client sent them; checked at `initialized` too."""
        self.warm_modules: tuple[str, ...] = ()
        """What the SDK warm-up imports (set at `initialized`; () when the settings use no SDK)."""
        self.agent_caps = {"confirmTool": False, "diagnostics": False, "languageFeatures": [], "updates": False}
        self.language_status: Optional[tuple[str, Optional[str]]] = None
        """(state, server) as the client last said with agent/languageStatus; None: it never did."""
        self.connection: Any = None
        """The connection's agent side (`lsp/connection.py` Connection), made on the first agent/* request."""

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve on stdio through the hardened reader (lsp/wire.py); when the client goes away, running chats
        are stopped and saved before the process exits."""
        from agent_lsp.lsp.wire import serve_stdio

        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(serve_stdio(self.protocol, stdin or sys.stdin.buffer, self._client_gone))
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one TCP client at a time on host:port through the hardened reader."""
        from agent_lsp.lsp.wire import serve_stream

        async def main() -> None:
            ended = asyncio.Event()

            async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                self.protocol.set_writer(writer)
                await serve_stream(self.protocol, reader)
                await self._client_gone()
                self.shutdown()
                ended.set()  # the client has gone: stop listening too

            async with await asyncio.start_server(connection, host, port):
                await ended.wait()

        try:
            asyncio.run(main())
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def _client_gone(self) -> None:
        """Stop what the client can no longer see (chats answer a result and save their session)."""
        # pygls 2.1 has no public list of the requests still running (_request_futures)
        tasks = [f for f in self.protocol._request_futures.values() if isinstance(f, asyncio.Task) and not f.done()]
        for task in tasks:
            if not task.cancelling():  # `exit` cancelled it already: a second cancel would stop it saving
                task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)

    def warn(self, messages: list[str]) -> None:
        """A window/showMessage warning per message."""
        for message in messages:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))


AGENT_METHODS: dict[str, tuple[str, str, bool]] = {
    # method: (module of agent_lsp.lsp, function, async)
    "agent/chat": ("handlers", "agent_chat", True),
    "agent/tools": ("handlers", "agent_tools", True),
    "agent/commands": ("handlers", "agent_commands", True),
    "agent/skills": ("handlers", "agent_skills", True),
    "agent/models": ("handlers", "agent_models", True),
    "agent/newSession": ("handlers", "agent_new_session", False),
    "agent/abort": ("handlers", "agent_abort", False),
    "agent/confirmTool": ("handlers", "agent_confirm_tool", False),
    "agent/sessions": ("handlers", "agent_sessions", False),
    "agent/history": ("handlers", "agent_history", False),
    "agent/deleteSession": ("handlers", "agent_delete_session", False),
    "agent/revert": ("chat_edits", "agent_revert", True),
    "agent/memoryFile": ("handlers", "agent_memory_file", True),
    "agent/languageStatus": ("handlers", "agent_language_status", False),
}
"""The agent/* requests (and notifications) and the body that answers each, imported on first use."""


def _body(module: str, name: str) -> Any:
    """A handler body of agent_lsp.lsp.`module`, imported on first use."""
    return getattr(importlib.import_module(f"agent_lsp.lsp.{module}"), name)


_LOADED: set[str] = set()
"""The handler modules whose import has finished."""


async def _load(ls: "AgentServer", module: str) -> None:
    """The first agent request: start the SDK warm-up now if the settings want one (a chat sent right after
    start-up waits for that import instead of running its own), and import the body off the loop."""
    from agent_lsp.lsp.warmup import warm
    from agent_lsp.models import preload

    if ls.warm_modules:
        warm(ls.warm_modules)
    await preload.imported(f"agent_lsp.lsp.{module}")
    _LOADED.add(module)


def _register(server: "AgentServer", method: str, module: str, name: str, is_async: bool) -> None:
    """Answer `method` with the body `module`.`name` (pygls calls a coroutine function as a task, a plain one
    inline: abort and confirmTool stay plain so they are answered before the next message is read)."""
    if is_async:
        async def handler(ls: AgentServer, params: Any) -> Any:
            if module not in _LOADED:  # (in sys.modules already while the warm-up is still running it)
                await _load(ls, module)
            return await _body(module, name)(ls, params)
    else:
        def handler(ls: AgentServer, params: Any) -> Any:
            return _body(module, name)(ls, params)
    server.feature(method)(handler)


def create_server(launch_settings: Optional[dict[str, Any]] = None, data_dir: Optional[Path] = None) -> AgentServer:
    """The server with every handler registered."""
    server = AgentServer(launch_settings or {}, data_dir)

    @server.feature(types.INITIALIZE)
    def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
        ls.agent_caps, well_formed = client_agent_capabilities(params.capabilities.experimental)
        if not well_formed:
            ls.pending_warnings.append("agent-lsp: capabilities.experimental.agent is malformed; it is ignored.")
        ls.initialization_options = params.initialization_options

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
        ls.pending_warnings += ls.in_force.refresh()
        ls.layers.initialization_options, warnings = clean(ls.initialization_options, "initializationOptions")
        ls.warn(ls.pending_warnings + warnings)
        ls.pending_warnings = []
        await pull_configuration(ls)
        from agent_lsp.lsp.warmup import schedule_warmup

        ls.warm_modules = schedule_warmup(ls.in_force.current([]))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        note_client_settings(ls, settings)
        if isinstance(settings, dict) and isinstance(settings.get("agentLsp"), dict):
            ls.layers.workspace, warnings = clean(settings["agentLsp"], "workspace configuration")
            ls.warn(warnings)
        else:
            await pull_configuration(ls)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Refactor]))
    def code_action(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return code_actions(params, ls.protocol.fm.converter.unstructure)

    for command in COMMANDS:  # listed in executeCommandProvider; AgentProtocol runs them
        server.command(command)(lambda ls, *args: None)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AgentServer, params: types.HoverParams) -> Optional[types.Hover]:
        return _body("chat_edits", "hover")(ls, params) if ls.connection is not None else None

    if os.environ.get("AGENT_LSP_DEBUG") == "1":  # for tests: what this process has loaded, without timing it

        @server.feature("agent/debug")
        def agent_debug(ls: AgentServer, params: Any) -> dict:
            from agent_lsp.models import preload

            return {"modules": sorted(sys.modules), "preloaded": list(preload.IMPORTED)}

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AgentServer, params: Any) -> None:
        if ls.connection is not None:  # nothing to stop when no agent request came
            await _body("handlers", "shutdown")(ls)

    if os.environ.get("AGENT_LSP_DEBUG") == "1":  # tests' leak checks only; never offered otherwise

        @server.feature("agent/_debugCounts")
        def agent_debug_counts(ls: AgentServer, params: Any) -> dict:
            # pygls 2.1 has no public count of the requests still running (_request_futures)
            return {"tasks": len(asyncio.all_tasks()), "threads": threading.active_count(),
                    "requests": len(ls.protocol._request_futures)}

    for method, (module, name, is_async) in AGENT_METHODS.items():
        _register(server, method, module, name, is_async)
    register_inline_completion(server)
    register_next_edit(server)
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
