"""End-to-end fixtures: the real server as a subprocess (pytest-lsp), the real SDK against a fake Messages API."""

from __future__ import annotations

import asyncio
import os
import tempfile
import sys
from pathlib import Path
from typing import Any, Optional, Union

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from tests.fakes.messages_api import FakeMessagesAPI

SERVER = [sys.executable, "-m", "agent_lsp"]
CEILING = 60.0
"""Seconds: the last-resort bound of every wait in the e2e tests (never a measure of speed)."""


def _dict_converter():
    """Custom methods' params and results stay plain dicts on the test client too."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**obj))
    # lsprotocol reads any object with a `command` member as a Command, but a CodeAction may carry one too (an
    # object, not a string): tell them apart as editors do
    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],
        lambda obj, _: converter.structure(obj, types.Command if isinstance(obj.get("command"), str)
                                           else types.CodeAction))
    return converter


class RecordingClient(LanguageClient):
    """pytest-lsp's client that also keeps what the server writes to stderr (still forwarded to the test's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stderr: list[str] = []

    async def start_io(self, cmd: str, *args: Any, **kwargs: Any) -> None:
        await super().start_io(cmd, *args, **kwargs)
        if self._stderr_forwarder is not None:  # not started yet: replace it by one that also keeps the lines
            self._stderr_forwarder.cancel()
        self._stderr_forwarder = asyncio.create_task(self._keep_stderr())

    async def _keep_stderr(self) -> None:
        while line := await self._server.stderr.readline():
            self.stderr.append(line.decode(errors="replace"))
            sys.stderr.buffer.write(line)

    async def exit_and_read_stderr(self) -> tuple[int, str]:
        """Send exit; wait (with a ceiling) for the server to end; its exit code and its whole stderr."""
        self.exit(None)
        code = await asyncio.wait_for(self._server.wait(), CEILING)
        await asyncio.wait_for(asyncio.shield(self._stderr_forwarder), CEILING)  # read up to EOF
        return code, "".join(self.stderr)


def make_client() -> LanguageClient:
    """A pytest-lsp client that records agent/update, answers applyEdit and agent/diagnostics."""
    client = RecordingClient(converter_factory=_dict_converter)
    register_lsp_features(client)
    client.updates = []
    client.applied = []
    client.apply_result = {"applied": True}
    client.editor_diagnostics = {"items": []}
    client.diagnostics_requests = []
    client.message_requests = []
    client.shown_before_questions = []  # per showMessageRequest: the documents shown (showDocument) before it
    client.message_answer = None
    client.apply_gate = None  # an asyncio.Event: applyEdit is answered only once the test sets it (a slow editor)
    client.apply_answers = 0  # applyEdit requests answered (or given up on the server's $/cancelRequest)
    client.change_after_answer = 0.0  # > 0: send didChange that long after answering applyEdit (as VS Code may)
    client.versions_seen_by_diagnostics = []
    client.docs = {}  # uri -> [version, text]: the test editor's buffers

    @client.feature("agent/update")
    def on_update(ls: LanguageClient, params: Any) -> None:
        ls.updates.append(params)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def on_apply(ls: LanguageClient, params: types.ApplyWorkspaceEditParams):
        ls.applied.append(params)
        try:
            if ls.apply_gate is not None:
                await ls.apply_gate.wait()
            if ls.apply_result.get("applied"):
                if ls.change_after_answer:
                    asyncio.get_running_loop().call_later(ls.change_after_answer, apply_to_buffers, ls, params.edit)
                else:
                    apply_to_buffers(ls, params.edit)
            return types.ApplyWorkspaceEditResult(**ls.apply_result)
        finally:
            ls.apply_answers += 1

    @client.feature("agent/diagnostics")
    def on_diagnostics(ls: LanguageClient, params: Any):
        ls.diagnostics_requests.append(params)
        ls.versions_seen_by_diagnostics.append({uri: version for uri, (version, _) in ls.docs.items()})
        return ls.editor_diagnostics

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_message_request(ls: LanguageClient, params: types.ShowMessageRequestParams):
        ls.message_requests.append(params)
        ls.shown_before_questions.append([d.uri for d in ls.shown_documents])
        if ls.message_answer is Exception:  # a client that cannot ask: it answers with an error
            raise RuntimeError("window/showMessageRequest is not supported")
        return types.MessageActionItem(title=ls.message_answer) if ls.message_answer else None

    return client


def apply_to_buffers(client: LanguageClient, edit: types.WorkspaceEdit) -> None:
    """Apply an edit to the open buffers as an editor would, and tell the server with didChange."""
    per_uri = [(c.text_document.uri, c.edits) for c in edit.document_changes or [] if hasattr(c, "edits")]
    per_uri += list((edit.changes or {}).items())
    for uri, edits in per_uri:
        if uri not in client.docs:
            continue
        version, text = client.docs[uri]
        lines = text.splitlines(keepends=True) + [""]
        offset = lambda p: sum(len(line) for line in lines[: p.line]) + p.character  # noqa: E731 (ASCII tests)
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
        client.docs[uri] = [version + 1, text]
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def sent(fake_api: FakeMessagesAPI, index: int) -> list[dict]:
    """The messages of request `index` as the model read them (prompt-cache markers left out)."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        return [strip(v) for v in value] if isinstance(value, list) else value

    return strip(fake_api.requests[index]["messages"])


NO_USER_SETTINGS = tempfile.mkdtemp(prefix="agent-lsp-config-")
"""XDG_CONFIG_HOME of the servers under test: the developer's own user settings file never applies."""


def server_process(client: LanguageClient) -> asyncio.subprocess.Process:
    """The server's process: pygls' JsonRPCClient keeps it in `_server`, with no public accessor."""
    return client._server


async def stderr_read(client: LanguageClient) -> None:
    """Wait until all of a stopped server's stderr is read: pytest-lsp reads it in its `_stderr_forwarder` task,
    with no public way to wait for it."""
    if client._stderr_forwarder is not None:
        await asyncio.wait_for(asyncio.shield(client._stderr_forwarder), CEILING)


def server_env(base_url: Optional[str], key: bool = True, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_LSP_", "OPENAI_"))}
    env["AGENT_LSP_OFFLINE"] = "1"
    env["XDG_CONFIG_HOME"] = NO_USER_SETTINGS
    # A chat's wait for a language or MCP server still starting is a ceiling: on a loaded machine a start can take
    # longer than the default 10 s, and the chat would go on without that server's tools.
    env["AGENT_LSP_LANGUAGE_START_WAIT"] = env["AGENT_LSP_MCP_START_WAIT"] = str(CEILING)
    if key:
        env["ANTHROPIC_API_KEY"] = "test-key"
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    env.update(extra)
    return env


def openai_env(api_url: Optional[str], model: Optional[str] = "gpt-test", key: bool = True, **extra: str):
    """The server's environment for the openai provider against a fake chat.completions API at `api_url`."""
    env = server_env(None, key=False, AGENT_LSP_PROVIDER="openai", AGENT_LSP_CLIENT_TIMEOUT="1.5", **extra)
    if model:
        env["AGENT_LSP_MODEL"] = model
    if api_url:
        env["OPENAI_BASE_URL"] = api_url
    if key:
        env["OPENAI_API_KEY"] = "test-key"
    return env


def confirm(client: LanguageClient, decision: str, message: Optional[str] = None, index: int = -1):
    """Answer the latest confirmation_request (or the one at `index`)."""
    requests = [u for u in client.updates if u["update"]["kind"] == "confirmation_request"]
    request = requests[index]
    params = {"sessionId": request["sessionId"], "toolCallId": request["update"]["toolCallId"], "decision": decision}
    if message:
        params["message"] = message
    return client.protocol.send_request_async("agent/confirmTool", params)


def waiting_for_confirmation(client: LanguageClient, count: int = 1):
    return lambda: sum(u["update"]["kind"] == "confirmation_request" for u in client.updates) >= count


@pytest.fixture
def fake_api():
    api = FakeMessagesAPI().start()
    yield api
    api.stop()


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    return root.resolve()


class Harness:
    """Starts servers for one test and stops them all afterwards."""

    def __init__(self, fake_api: FakeMessagesAPI, workspace: Path) -> None:
        self.fake_api = fake_api
        self.workspace = workspace
        self.data_dir = workspace.parent / "state"
        self.clients: list[LanguageClient] = []
        self.started: list[LanguageClient] = []

    async def start(self, *args: str, agent: Optional[dict] = None, progress: bool = False,
                    init_options: Any = None, env: Optional[dict[str, str]] = None,
                    capabilities: Optional[types.ClientCapabilities] = None,
                    client_timeout: float = CEILING) -> LanguageClient:
        """Start a server. How long it waits for this client's answers is a ceiling unless a test needs it to
        give up (`client_timeout`, with a client that never answers), so that no test depends on load."""
        waits = {"AGENT_LSP_CLIENT_TIMEOUT": str(client_timeout), "AGENT_LSP_DID_CHANGE_WAIT": str(CEILING)}
        config = ClientServerConfig(server_command=[*SERVER, "--data-dir", str(self.data_dir), *args],
                                    client_factory=make_client,
                                    server_env={**(env or server_env(self.fake_api.base_url)), **waits})
        client = await config.start()
        self.clients.append(client)
        self.started.append(client)
        caps = capabilities or types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=progress),
            workspace=types.WorkspaceClientCapabilities(apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True, resource_operations=[types.ResourceOperationKind.Create])),
            experimental={"agent": agent} if agent is not None else None,
        )
        client.initialize_result = await client.initialize_session(types.InitializeParams(
            capabilities=caps, initialization_options=init_options, root_uri=self.workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.workspace.as_uri(), name="ws")]))
        return client

    async def stop_client(self, client: LanguageClient) -> None:
        """Shut one server down the way an editor does (shutdown, exit)."""
        self.clients.remove(client)
        await asyncio.wait_for(client.shutdown_session(), CEILING)
        if server_process(client).returncode is not None:
            await stderr_read(client)
        await client.stop()

    async def stop(self) -> None:
        """Stop every server; a traceback in any one's stderr fails the test (tracebacks are for bugs)."""
        for client in list(self.clients):
            await self.stop_client(client)
        for client in self.started:
            stderr = "".join(client.stderr)
            assert "Traceback" not in stderr, f"the server wrote a traceback:\n{stderr}"


@pytest_asyncio.fixture
async def agents(fake_api, workspace):
    """Starts `agent-lsp --acp` processes connected to a RecordingClient (e2e/acp_client.py); stops them all."""
    from tests.e2e.acp_client import start_agent  # acp_client imports this module

    started = []

    async def start(client, *args: str, **kw):
        agent = await start_agent(fake_api.base_url, workspace.parent / "state", client, *args, **kw)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        await agent.stop()


@pytest_asyncio.fixture
async def lsp(fake_api, workspace):
    harness = Harness(fake_api, workspace)
    yield harness
    await harness.stop()


def open_doc(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.docs[uri] = [version, text]
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


async def chat(client: LanguageClient, message: str = "hi", **params: Any) -> dict:
    return await client.protocol.send_request_async("agent/chat", {"message": message, **params})


def updates_of(client: LanguageClient, session_id: Optional[str] = None) -> list[dict]:
    """The update payloads received, for one session."""
    return [u["update"] for u in client.updates if session_id is None or u["sessionId"] == session_id]


def streamed(client: LanguageClient) -> str:
    """The text the chat's `text_delta` updates carried so far (a fake's reply comes in more than one delta: wait for
    all of it before acting on "the model is streaming")."""
    return "".join(u["update"]["text"] for u in client.updates if u["update"]["kind"] == "text_delta")


def shape(updates: list[dict]) -> list[str]:
    """Kinds (with tool statuses); a run of text deltas counts once."""
    kinds = [f"{u['kind']}:{u['status']}" if u["kind"] == "tool_call_update" else u["kind"] for u in updates]
    return [k for i, k in enumerate(kinds) if not (k in ("text_delta", "thinking_delta") and i and kinds[i - 1] == k)]


def text(t: str, **extra: Any) -> dict:
    return {"content": [{"type": "text", "text": t}], **extra}


def tool_use(name: str, input: dict, id: Optional[str] = None, say: str = "") -> dict:
    content = [{"type": "text", "text": say}] if say else []
    return {"content": content + [{"type": "tool_use", "name": name, "input": input, **({"id": id} if id else {})}]}
