"""The bodies of the agent/* handlers: parse the params, call the sessions, convert the answer.

Imported on the first agent request (see server.py), with everything the agent needs behind it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
from pathlib import Path
from typing import Any, Optional

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agent_lsp import tools
from agent_lsp.config import Settings
from agent_lsp.core.events import AgentUpdate, Usage
from agent_lsp.core.messages import UserMessage
from agent_lsp.core.prompt import Environment, editor_context, project_instructions, system_prompt
from agent_lsp.core.tool import ToolContext
from agent_lsp.lsp.convert import lsp_folder_uri, lsp_uri_to_path
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.lsp.language import EditorLanguageFeatures
from agent_lsp.lsp.progress import ChatProgress
from agent_lsp.lsp.server import AgentServer
from agent_lsp.lsp.trust import workspace_file_layer
from agent_lsp.lsp.updates import UpdateStream
from agent_lsp.models.catalog import catalog
from agent_lsp.models.registry import build_model
from agent_lsp.protocol import (
    AbortResult,
    ChatError,
    ChatMetadata,
    ChatParams,
    ChatResult,
    ChatUsage,
    ConfirmToolParams,
    ConfirmToolResult,
    DeleteSessionResult,
    HistoryMessage,
    HistoryResult,
    HistoryToolCall,
    ModelEntry,
    ModelsParams,
    ModelsResult,
    NewSessionParams,
    NewSessionResult,
    SessionInfo,
    SessionParams,
    SessionsParams,
    SessionsResult,
    ToolInfo,
    ToolsParams,
    ToolsResult,
    UpdateParams,
)
from agent_lsp.sessions.history import render_history
from agent_lsp.sessions.mcp import McpServers
from agent_lsp.sessions.mentions import BadMention, Mention, expand_mentions
from agent_lsp.sessions.permissions import Ask
from agent_lsp.sessions.results import ChatOutcome, HistoryEntry
from agent_lsp.sessions.runtime import (
    ChatRequest,
    Session,
    SessionBusy,
    Sessions,
    UnknownSession,
    UnknownToolCall,
)
from agent_lsp.sessions.shell_hooks import ShellHooks
from agent_lsp.sessions.store import open_store
from agent_lsp.sessions.trust import Trust
from agent_lsp.tools.forget import Forget
from agent_lsp.tools.memory import MemoryFile, memory_file, read_memory
from agent_lsp.tools.paths import display
from agent_lsp.tools.remember import Remember

log = logging.getLogger(__name__)
SESSION_BUSY = -32001
MAX_LISTED_BUFFERS = 20
CONFIRM_ACTIONS = {"Allow once": "allow_once", "Allow always": "allow_always", "Reject": "reject_once"}


class Agent:
    """The agent side of the server: sessions, and how their updates and progress reach the client."""

    def __init__(self, server: AgentServer) -> None:
        self.server = server
        store = None
        if server.data_dir is not None:
            store, warning = open_store(server.data_dir)
            server.warn([warning] if warning else [])
        self.sessions = Sessions(build_model, self.emit, store)
        self.streams: dict[str, UpdateStream] = {}
        self.progress: dict[str, ChatProgress] = {}
        self.trust = Trust(server.data_dir)
        self.mcp = McpServers(lambda message: server.warn([message]))
        self.current: Optional[str] = None
        """The window's current session: the last one chatted in (code actions continue it)."""

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
        self.server.protocol.notify("agent/update", params.wire())

    def editor(self) -> LspEditor:
        return LspEditor(self.server, client_diagnostics=self.server.agent_caps["diagnostics"])

    def ask_by_message(self) -> Ask:
        """Confirmation through window/showMessageRequest, for clients without agent/confirmTool."""

        async def ask(request):
            what = f"`{request.command}`" if request.command else request.title
            answer = await self.server.window_show_message_request_async(types.ShowMessageRequestParams(
                type=types.MessageType.Warning, message=f"agent-lsp wants to run {request.name}: {what}. Allow?",
                actions=[types.MessageActionItem(title=t) for t in CONFIRM_ACTIONS]))
            title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
            return CONFIRM_ACTIONS.get(title, "reject_once"), None

        return ask


def agent_of(server: AgentServer) -> Agent:
    if server.agent is None:
        server.agent = Agent(server)
    return server.agent


def parse(model: type[BaseModel], params: Any) -> Any:
    """Validate raw params; a mismatch is -32602 naming each field."""
    try:
        return model.model_validate({} if params is None else params)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'params'}: {err['msg']}" for err in e.errors())
        fields = [".".join(map(str, err["loc"])) for err in e.errors()]
        raise JsonRpcInvalidParams(f"Invalid params: {problems}", data={"fields": fields}) from None


def session_of(agent: Agent, session_id: str) -> Session:
    """The session, or -32602 naming sessionId."""
    try:
        return agent.sessions.get(session_id)
    except UnknownSession:
        raise JsonRpcInvalidParams(f"Invalid params: sessionId: unknown session {session_id!r}",
                                   data={"fields": ["sessionId"]}) from None


async def environment(editor: LspEditor, params: ChatParams) -> Environment:
    """What the system prompt tells the model about the editor: the active buffer and the most recently opened
    ones, at most MAX_LISTED_BUFFERS (list_open_buffers has the rest)."""
    roots = editor.roots
    docs = editor.open_documents()
    context = params.context
    active = next((d for d in docs if d.uri == context.active_uri), None) if context and context.active_uri else None
    listed = docs[-MAX_LISTED_BUFFERS:]
    if active is not None and active not in listed:
        listed = [active, *listed[1:]]
    flags = await asyncio.to_thread(lambda: [d.unsaved for d in listed])  # may read the files
    env = Environment(os_name=f"{platform.system()} {platform.release()}", roots=roots,
                      open_buffers=[(display(roots, d.path) if d.path else d.uri, dirty)
                                    for d, dirty in zip(listed, flags)],
                      more_buffers=len(docs) - len(listed))
    if context and context.active_uri:
        path = active.path if active else lsp_uri_to_path(context.active_uri)
        env.active_file = display(roots, Path(os.path.realpath(path))) if path else context.active_uri  # as tools take it
        if active and context.selection:
            lines = active.text.splitlines()
            first, last = context.selection.start.line, context.selection.end.line
            env.selection = (first + 1, last + 1, "\n".join(lines[first:last + 1]))
    return env


def chat_result(outcome: ChatOutcome) -> ChatResult:
    """The agent/chat answer for a chat's outcome."""
    return ChatResult(
        session_id=outcome.session_id,
        stop_reason=outcome.stop_reason,
        final_message=outcome.final_message,
        error=ChatError(type=outcome.error.type, message=outcome.error.message) if outcome.error else None,
        metadata=ChatMetadata(
            turns_count=outcome.turns_count,
            tool_calls_count=outcome.tool_calls_count,
            denied_tool_calls=outcome.denied_tool_calls,
            duration_ms=outcome.duration_ms,
            usage=chat_usage(outcome.usage),
        ),
        structured_output=outcome.structured_output,
    )


def finishing(p: ChatParams) -> list:
    """`finish` when the chat asks for structured output (-32602 naming outputSchema when that is not a valid JSON
    Schema)."""
    if p.output_schema is None:
        return []
    from agent_lsp.tools.finish import InvalidSchema, finish_tool

    try:
        return [finish_tool(p.output_schema)]
    except InvalidSchema as e:
        raise JsonRpcInvalidParams(f"Invalid params: outputSchema: not a valid JSON Schema: {e}",
                                   data={"fields": ["outputSchema"]}) from None


async def available_tools(ls: AgentServer, agent: "Agent", editor: LspEditor, settings: Settings) -> list:
    """Every tool a chat with these settings can be offered: the built-in ones, memory, the MCP servers' (each
    server started on first need)."""
    memory = memory_file(settings.memory_file, editor.roots, ls.data_dir)
    mcp = await agent.mcp.tools(settings.mcp_servers) if settings.mcp_servers else []
    return [*tools.ALL, *tools.language_tools(EditorLanguageFeatures(ls, editor)), *memory_tools(memory), *mcp]


def memory_tools(memory: Optional[MemoryFile]) -> list:
    """`remember` and `forget`, when the workspace has somewhere to keep facts."""
    return [Remember(memory), Forget(memory)] if memory else []


def chat_usage(usage: Usage) -> ChatUsage:
    """The wire form of a usage count."""
    return ChatUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                     cache_read_input_tokens=usage.cache_read_input_tokens,
                     cache_creation_input_tokens=usage.cache_creation_input_tokens)


def history_message(entry: HistoryEntry) -> HistoryMessage:
    """An agent/history message for a transcript entry."""
    calls = [HistoryToolCall.model_validate(vars(c)) for c in entry.tool_calls] if entry.tool_calls else None
    return HistoryMessage(role=entry.role, content=entry.content, tool_calls=calls,
                          usage=chat_usage(entry.usage) if entry.usage else None, stop_reason=entry.stop_reason,
                          duration_ms=entry.duration_ms)


def summary(result: ChatResult) -> str:
    """The progress end message."""
    meta = result.metadata
    done = f"{meta.turns_count} turns, {meta.tool_calls_count} tool calls"
    if result.stop_reason == "error":
        return "Failed: " + (result.error.message if result.error else "")
    return {"end_turn": f"Done: {done}", "aborted": f"Stopped: {done}"}.get(result.stop_reason,
                                                                           f"{result.stop_reason}: {done}")


async def mentioned(editor: LspEditor, p: ChatParams) -> Optional[str]:
    """The chat's @-mentions expanded; -32602 naming the mention that cannot be read."""
    raw = p.context.mentions if p.context and p.context.mentions else []
    found = [Mention(kind=m.kind, path=lsp_uri_to_path(m.uri) if m.uri else None, name=m.name,
                     lines=(m.range.start.line, m.range.end.line) if m.range else None) for m in raw]
    try:
        return await expand_mentions(ToolContext(editor=editor), found)
    except BadMention as e:
        raise JsonRpcInvalidParams(f"Invalid params: {e.field}: {e}", data={"fields": [e.field]}) from None


async def chat_request(ls: AgentServer, agent: Agent, editor: LspEditor, p: ChatParams, session: Session,
                       attached: Optional[str], finish: list) -> ChatRequest:
    """What a chat is told and may use: the settings in force (the workspace's own file included), the editor's
    context and the mentions, the system prompt with the project's instructions and memory, the tools (built-in,
    memory, MCP, `finish`) and the hooks."""
    ls.layers.workspace_file = await workspace_file_layer(ls, agent, editor.roots)
    settings: Settings = ls.layers.resolve(
        {"permission_mode": p.permission_mode, "max_turns": p.max_turns, "model": p.model})
    env = await environment(editor, p)
    memory = memory_file(settings.memory_file, editor.roots, ls.data_dir)
    context = "\n\n".join(part for part in (editor_context(env), attached) if part) or None
    root = editor.roots[0] if editor.roots else None
    return ChatRequest(message=UserMessage(text=p.message, context=context), settings=settings,
                       system=system_prompt(env, project_instructions(editor.roots),
                                            read_memory(memory) if memory and not memory.in_workspace else None),
                       tools=[*await available_tools(ls, agent, editor, settings), *finish],
                       ctx=ToolContext(editor=editor, secret_env=settings.secret_env,
                                       language=EditorLanguageFeatures(ls, editor)),
                       ends_with="finish" if p.output_schema is not None else None,
                       hooks=[ShellHooks(settings.hooks, session.id, root)] if settings.hooks else [])


async def agent_chat(ls: AgentServer, params: Any) -> dict:
    p = parse(ChatParams, params)
    finish = finishing(p)
    agent = agent_of(ls)
    editor = agent.editor()
    attached = await mentioned(editor, p)
    session = session_of(agent, p.session_id) if p.session_id else new_session(ls, p.message)
    try:
        session = agent.sessions.reserve(session)
    except SessionBusy as e:
        raise JsonRpcException(code=SESSION_BUSY, message=str(e), data={"sessionId": e.session_id}) from None
    agent.current = session.id
    progress: Optional[ChatProgress] = None
    try:
        request = await chat_request(ls, agent, editor, p, session, attached, finish)
        progress = await ChatProgress.open(ls, p.work_done_token, lambda: agent.sessions.abort(session.id))
        if progress:
            agent.progress[session.id] = progress
        ask = None if ls.agent_caps["confirmTool"] else agent.ask_by_message()
        result = chat_result(await agent.sessions.chat(session, request, ask))
    finally:
        agent.sessions.release(session)
        stream = agent.streams.pop(session.id, None)  # one per running chat, not one per session ever seen
        if stream:
            stream.flush()
        agent.progress.pop(session.id, None)
    if progress:
        progress.end(summary(result))
    return result.wire()


async def agent_tools(ls: AgentServer, params: Any) -> dict:
    parse(ToolsParams, params)
    agent = agent_of(ls)
    editor = agent.editor()
    ls.layers.workspace_file = await workspace_file_layer(ls, agent, editor.roots)
    offered = await available_tools(ls, agent, editor, ls.layers.resolve({}))
    return ToolsResult(tools=[ToolInfo(name=t.name, kind=t.kind, origin=getattr(t, "origin", "builtin"),
                                       read_only=t.kind in ("read", "search"), description=t.description)
                              for t in offered]).wire()


async def shutdown(ls: AgentServer) -> None:
    """Stop what the agent started (MCP servers) before the process ends."""
    await agent_of(ls).mcp.close()


def new_session(ls: AgentServer, title: str) -> Session:
    """A session of this window: it records the window's workspace folders."""
    return agent_of(ls).sessions.start(title, [root.as_uri() for root in agent_of(ls).editor().roots])


def agent_new_session(ls: AgentServer, params: Any) -> dict:
    session = new_session(ls, parse(NewSessionParams, params).title or "")
    agent_of(ls).current = session.id  # the window's current session: code actions continue it
    return NewSessionResult(session_id=session.id).wire()


def agent_abort(ls: AgentServer, params: Any) -> dict:
    agent = agent_of(ls)
    session = session_of(agent, parse(SessionParams, params).session_id)
    return AbortResult(aborted=agent.sessions.abort(session.id)).wire()


def agent_confirm_tool(ls: AgentServer, params: Any) -> dict:
    p = parse(ConfirmToolParams, params)
    agent = agent_of(ls)
    session_of(agent, p.session_id)
    try:
        agent.sessions.confirm(p.session_id, p.tool_call_id, p.decision, p.message)
    except UnknownToolCall:
        raise JsonRpcInvalidParams(f"Invalid params: toolCallId: no confirmation is pending for {p.tool_call_id!r}",
                                   data={"fields": ["toolCallId"]}) from None
    return ConfirmToolResult().wire()


def agent_sessions(ls: AgentServer, params: Any) -> dict:
    workspace = parse(SessionsParams, params).workspace
    rows = agent_of(ls).sessions.all(lsp_folder_uri(workspace) if workspace is not None else None)
    return SessionsResult(sessions=[
        SessionInfo(session_id=s.id, title=s.title, created_at=s.created_at, updated_at=s.updated_at,
                    turns_count=s.turns_count, workspace=s.workspace_folders[0] if s.workspace_folders else None,
                    usage=chat_usage(s.usage)) for s in rows]).wire()


def agent_history(ls: AgentServer, params: Any) -> dict:
    session = session_of(agent_of(ls), parse(SessionParams, params).session_id)
    entries = render_history(session.history, tools.BY_NAME, session.tool_calls, session.chats)
    return HistoryResult(messages=[history_message(e) for e in entries]).wire()


def agent_delete_session(ls: AgentServer, params: Any) -> dict:
    agent = agent_of(ls)
    session = session_of(agent, parse(SessionParams, params).session_id)
    agent.sessions.delete(session.id)
    return DeleteSessionResult().wire()


async def agent_models(ls: AgentServer, params: Any) -> dict:
    parse(ModelsParams, params)
    found = await catalog(ls.layers.resolve())
    return ModelsResult(models=[ModelEntry(id=m.id, display_name=m.display_name, provider=m.provider,
                                           context_window=m.context_window) for m in found.models],
                        default=found.default, error=found.error).wire()
