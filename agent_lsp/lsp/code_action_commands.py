"""The commands agent-lsp's code actions run (agent.fix / agent.explain / agent.refactor): a chat in the window's
current session, asked in the user's words (PROTOCOL §8)."""

from __future__ import annotations

from typing import Any, Optional

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.core.paths import display, is_inside, uri_to_path
from agent_lsp.core.ports import DiagnosticsReport
from agent_lsp.lsp import plain_clients
from agent_lsp.lsp.code_actions import EXPLAIN, FIX
from agent_lsp.lsp.connection import connection_of
from agent_lsp.lsp.handlers import agent_chat
from agent_lsp.protocol import CommandArgument
from agent_lsp.sessions.live import UnknownSession


def command_message(command: str, argument: CommandArgument, name: str,
                    found: Optional[DiagnosticsReport] = None) -> str:
    """What a code action asks the agent, in the user's words; `found`: the diagnostics gathered at the range for
    a "Fix with agent" that came without any."""
    first, last = argument.range.start.line + 1, argument.range.end.line + 1
    where = f"{name}, line {first}" if first == last else f"{name}, lines {first}-{last}"
    if command == FIX:
        problems = [str(d.get("message", "")).strip() for d in argument.diagnostics or [] if isinstance(d, dict)]
        if found is not None and not argument.diagnostics:
            problems = [f"line {d.line}: {d.message}" + (f" ({d.source})" if d.source else "") for d in found.items]
            if not problems:
                seen = ("the editor reports no diagnostic there" if found.from_editor else "the server's syntax "
                        "check finds nothing there, and the editor's diagnostics were not available")
                return (f"Fix the problem in {where} ({seen}): read the code, find what is wrong, make the "
                        "smallest change that fixes it, then check the diagnostics.")
        listed = "\n".join(f"- {p}" for p in problems if p) or "- (the diagnostic at that place)"
        return (f"Fix this problem in {where}:\n{listed}\nMake the smallest change that fixes it, then check the "
                "diagnostics.")
    if command == EXPLAIN:
        return f"Explain what the selected code in {where} does, and anything surprising about it."
    wanted = argument.instruction or "make it clearer and simpler without changing its behaviour"
    return f"Refactor the selected code in {where}: {wanted}."


async def execute_command(ls: Any, params: types.ExecuteCommandParams) -> dict:
    """connection.fix / connection.explain / connection.refactor: a chat in the window's current session (a new one when there
    is none or it is busy), answered with the agent/chat result when the chat ends."""
    arguments = list(params.arguments or [])
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise JsonRpcInvalidParams("Invalid params: arguments: expected one object {uri, range, diagnostics?}",
                                   data={"fields": ["arguments"]})
    try:
        argument = CommandArgument.model_validate(arguments[0])
    except ValidationError as e:
        fields = [".".join(map(str, ("arguments", 0, *err["loc"]))) for err in e.errors()]
        raise JsonRpcInvalidParams(f"Invalid params: {', '.join(fields)}: "
                                   f"{'; '.join(err['msg'] for err in e.errors())}", data={"fields": fields}) from None
    connection = connection_of(ls)
    editor = connection.editor()
    path = uri_to_path(argument.uri)
    known = path is not None and (editor.open_document(path) is not None or path.is_file())
    if not known or not any(is_inside(path, root) for root in editor.roots):
        raise JsonRpcInvalidParams(f"Invalid params: arguments.0.uri: {argument.uri} is not a document of this "
                                   "workspace", data={"fields": ["arguments.0.uri"]})
    session_id = connection.current
    if session_id is not None:
        try:
            if connection.sessions.get(session_id).busy:
                session_id = None
        except UnknownSession:
            session_id = None
    found = None
    if params.command == FIX and not argument.diagnostics:  # "fix this" on a plain line: what is known there
        report = await editor.diagnostics([path])
        first, last = argument.range.start.line + 1, argument.range.end.line + 1
        found = DiagnosticsReport(items=[d for d in report.items if first <= d.line <= last],
                                  from_editor=report.from_editor)
    chat = {"message": command_message(params.command, argument, display(editor.roots, path), found),
            "context": {"activeUri": argument.uri, "selection": argument.range.wire()}}
    if session_id:
        chat["sessionId"] = session_id
    if params.work_done_token is not None:
        chat["workDoneToken"] = params.work_done_token
    result = await agent_chat(ls, chat)
    if not ls.agent_caps["updates"]:  # a plain client draws no agent/update and drops this result: show it
        await plain_clients.show_answer(ls, connection.sessions.get(result["sessionId"]), result,
                                {row.id for row in connection.sessions.all()})
    return result
