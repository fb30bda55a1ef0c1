"""The bodies of the agent/* handlers: parse the params, call the sessions, convert the answer.

Imported on the first agent request (see server.py), with everything the agent needs behind it.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from agent_lsp import tools
from agent_lsp.core.events import Usage
from agent_lsp.core.paths import folder_uri, uri_to_path
from agent_lsp.lsp import plain_clients
from agent_lsp.lsp.connection import Connection, LspChat, connection_of
from agent_lsp.lsp.editor import LspEditor
from agent_lsp.models.catalog import catalog
from agent_lsp.protocol import (
    AbortResult,
    ChatError,
    ChatImage,
    ChatMetadata,
    ChatParams,
    ChatResult,
    ChatUsage,
    CommandInfo,
    CommandsParams,
    CommandsResult,
    ConfirmToolParams,
    ConfirmToolResult,
    DeleteSessionResult,
    HistoryMessage,
    HistoryResult,
    MemoryFileParams,
    MemoryFileResult,
    LanguageStatusParams,
    ModelEntry,
    ModelsParams,
    ModelsResult,
    NewSessionParams,
    NewSessionResult,
    SessionInfo,
    SessionParams,
    SessionsParams,
    SessionsResult,
    SkillInfo,
    SkillsParams,
    SkillsResult,
    ToolInfo,
    ToolsParams,
    ToolsResult,
)
from agent_lsp.sessions.assembly import BadInput, ChatInputs
from agent_lsp.sessions.history import render_history
from agent_lsp.sessions.images import RawImage
from agent_lsp.sessions.mentions import Mention
from agent_lsp.sessions.results import ChatOutcome, HistoryEntry
from agent_lsp.sessions.chat_run import UnknownToolCall
from agent_lsp.sessions.live import SessionBusy, UnknownSession
from agent_lsp.sessions.session import Session
from agent_lsp.tools.memory import memory_file

log = logging.getLogger(__name__)
SESSION_BUSY = -32001


def parse(model: type[BaseModel], params: Any) -> Any:
    """Validate raw params; a mismatch is -32602 naming each field."""
    try:
        return model.model_validate({} if params is None else params)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'params'}: {err['msg']}" for err in e.errors())
        fields = [".".join(map(str, err["loc"])) for err in e.errors()]
        raise JsonRpcInvalidParams(f"Invalid params: {problems}", data={"fields": fields}) from None


def session_of(connection: Connection, session_id: str) -> Session:
    """The session, or -32602 naming sessionId."""
    try:
        return connection.sessions.get(session_id)
    except UnknownSession:
        raise unknown_session(session_id) from None


def unknown_session(session_id: str) -> JsonRpcInvalidParams:
    """-32602 naming sessionId."""
    return JsonRpcInvalidParams(f"Invalid params: sessionId: unknown session {session_id!r}",
                                data={"fields": ["sessionId"]})


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


def chat_usage(usage: Usage) -> ChatUsage:
    """The wire form of a usage count."""
    return ChatUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                     cache_read_input_tokens=usage.cache_read_input_tokens,
                     cache_creation_input_tokens=usage.cache_creation_input_tokens)


def history_message(entry: HistoryEntry) -> HistoryMessage:
    """An agent/history message for a transcript entry."""
    calls = list(entry.tool_calls) if entry.tool_calls else None
    images = [ChatImage(mime_type=i.media_type, data=i.data) for i in entry.images] if entry.images else None
    return HistoryMessage(role=entry.role, content=entry.content, tool_calls=calls,
                          usage=chat_usage(entry.usage) if entry.usage else None, stop_reason=entry.stop_reason,
                          duration_ms=entry.duration_ms, images=images)


def summary(result: ChatResult) -> str:
    """The progress end message."""
    meta = result.metadata
    done = f"{meta.turns_count} turns, {meta.tool_calls_count} tool calls"
    if result.stop_reason == "error":
        return "Failed: " + (result.error.message if result.error else "")
    return {"end_turn": f"Done: {done}", "aborted": f"Stopped: {done}"}.get(result.stop_reason,
                                                                           f"{result.stop_reason}: {done}")


def invalid(field: str, message: str) -> JsonRpcInvalidParams:
    """-32602 naming the field."""
    return JsonRpcInvalidParams(f"Invalid params: {field}: {message}", data={"fields": [field]})


def chat_inputs(connection: Connection, editor: LspEditor, p: ChatParams, session_id: str) -> ChatInputs:
    """An agent/chat in plain terms, for the chat assembly."""
    context = p.context
    mentions = [Mention(kind=m.kind, path=uri_to_path(m.uri) if m.uri else None, name=m.name,
                        lines=(m.range.start.line, m.range.end.line) if m.range else None)
                for m in (context.mentions or [] if context else [])]
    active = context.active_uri if context else None
    active_path = uri_to_path(active) if active else None
    selection = context.selection if context else None
    return ChatInputs(
        message=p.message, editor=editor, session_id=session_id, mentions=mentions, output_schema=p.output_schema,
        chat_settings={"permission_mode": p.permission_mode, "max_turns": p.max_turns, "model": p.model},
        active_path=active_path, active_label=active if active and active_path is None else None,
        selection=(selection.start.line, selection.end.line) if selection else None, ask_trust=connection.ask_trust,
        language=connection.language(editor),
        images=[RawImage(i.mime_type, i.data, f"images.{n}") for n, i in enumerate(p.images or [])])


async def agent_chat(ls: Any, params: Any) -> dict:
    p = parse(ChatParams, params)
    connection = connection_of(ls)
    chat = LspChat(connection, p.work_done_token)
    try:
        inputs = chat_inputs(connection, connection.editor(), p, p.session_id or "")
        outcome = await connection.service.chat(inputs, chat)
    except UnknownSession:
        raise unknown_session(p.session_id) from None
    except BadInput as e:
        raise invalid(e.field, str(e)) from None
    except SessionBusy as e:
        raise JsonRpcException(code=SESSION_BUSY, message=str(e), data={"sessionId": e.session_id}) from None
    finally:
        chat.flush()
    result = chat_result(outcome)
    chat.end(summary(result))
    return result.wire()


async def agent_tools(ls: Any, params: Any) -> dict:
    parse(ToolsParams, params)
    connection = connection_of(ls)
    editor = connection.editor()
    settings = await connection.assembly.settings(editor.roots, connection.ask_trust)
    language = await connection.assembly.language(settings, editor.roots, connection.language(editor))
    offered = await connection.assembly.tools(settings, editor.roots, language=language)
    return ToolsResult(tools=[ToolInfo(name=t.name, kind=t.kind, origin=getattr(t, "origin", "builtin"),
                                       read_only=t.kind in ("read", "search"), description=t.description)
                              for t in offered]).wire()


async def agent_memory_file(ls: Any, params: Any) -> dict:
    """Where the project memory is, by the settings in force (asking no trust question: `memoryFile` needs none),
    so a client opens the file the tools write rather than working its place out again."""
    parse(MemoryFileParams, params)
    connection = connection_of(ls)
    roots = connection.editor().roots
    settings = await connection.assembly.settings(roots)
    memory = memory_file(settings.memory_file, roots, connection.assembly.data_dir)
    return MemoryFileResult(uri=memory.path.as_uri() if memory else None,
                            private=settings.memory_file == "private").wire()


async def agent_commands(ls: Any, params: Any) -> dict:
    parse(CommandsParams, params)
    connection = connection_of(ls)
    # the project's commands asked about first
    found = await connection.assembly.commands(connection.editor().roots, connection.ask_trust)
    return CommandsResult(commands=[CommandInfo(name=c.name, description=c.description, argument_hint=c.argument_hint,
                                                source=c.source) for c in found]).wire()


async def agent_skills(ls: Any, params: Any) -> dict:
    parse(SkillsParams, params)
    connection = connection_of(ls)
    # the project's skills asked about first
    found = await connection.assembly.skills(connection.editor().roots, connection.ask_trust)
    return SkillsResult(skills=[SkillInfo(name=s.name, description=s.description, source=s.source)
                                for s in found]).wire()


async def shutdown(ls: Any) -> None:
    """Stop what the agent started (MCP servers) before the process ends."""
    await connection_of(ls).service.close()


def new_session(ls: Any, title: str) -> Session:
    """A session of this window: it records the window's workspace folders."""
    return connection_of(ls).sessions.start(title, [root.as_uri() for root in connection_of(ls).editor().roots])


def agent_new_session(ls: Any, params: Any) -> dict:
    session = new_session(ls, parse(NewSessionParams, params).title or "")
    connection_of(ls).current = session.id  # the window's current session: code actions continue it
    return NewSessionResult(session_id=session.id).wire()


def agent_abort(ls: Any, params: Any) -> dict:
    connection = connection_of(ls)
    session = session_of(connection, parse(SessionParams, params).session_id)
    return AbortResult(aborted=connection.service.abort(session.id)).wire()


def agent_language_status(ls: Any, params: Any) -> None:
    """agent/languageStatus (a notification): the editor's word on its language servers' indexing, which the
    `index:` line of the editor's route reports from now on (lsp/language_features.py)."""
    try:
        p = parse(LanguageStatusParams, params)
    except JsonRpcInvalidParams as e:  # a notification has no answer to carry the error
        log.info("agent/languageStatus ignored: %s", e.message)
        return
    ls.language_status = (p.state, p.server)


def agent_confirm_tool(ls: Any, params: Any) -> dict:
    p = parse(ConfirmToolParams, params)
    connection = connection_of(ls)
    session_of(connection, p.session_id)
    try:
        connection.service.confirm(p.session_id, p.tool_call_id, p.decision, p.message)
    except UnknownToolCall:
        raise JsonRpcInvalidParams(f"Invalid params: toolCallId: no confirmation is pending for {p.tool_call_id!r}",
                                   data={"fields": ["toolCallId"]}) from None
    return ConfirmToolResult().wire()


def agent_sessions(ls: Any, params: Any) -> dict:
    workspace = parse(SessionsParams, params).workspace
    rows = connection_of(ls).sessions.all(folder_uri(workspace) if workspace is not None else None)
    return SessionsResult(sessions=[
        SessionInfo(session_id=s.id, title=s.title, created_at=s.created_at, updated_at=s.updated_at,
                    turns_count=s.turns_count, workspace=s.workspace_folders[0] if s.workspace_folders else None,
                    usage=chat_usage(s.usage)) for s in rows]).wire()


def agent_history(ls: Any, params: Any) -> dict:
    session = session_of(connection_of(ls), parse(SessionParams, params).session_id)
    entries = render_history(session.history, tools.BY_NAME, session.tool_calls, session.chats)
    return HistoryResult(messages=[history_message(e) for e in entries], plan=session.plan).wire()


def agent_delete_session(ls: Any, params: Any) -> dict:
    connection = connection_of(ls)
    session = session_of(connection, parse(SessionParams, params).session_id)
    connection.sessions.delete(session.id)
    plain_clients.forget(ls, session.id)
    return DeleteSessionResult().wire()


async def agent_models(ls: Any, params: Any) -> dict:
    parse(ModelsParams, params)
    found = await catalog(ls.in_force.current(connection_of(ls).editor().roots))  # listing models asks no question
    return ModelsResult(models=[ModelEntry(id=m.id, display_name=m.display_name, provider=m.provider,
                                           context_window=m.context_window) for m in found.models],
                        default=found.default, error=found.error).wire()
