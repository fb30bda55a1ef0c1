"""Translators between agent-lsp's own shapes and ACP's schema types (every function starts with `acp_`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from acp import schema
from acp.helpers import text_block, tool_content, tool_diff_content

from agent_lsp.core.events import (AgentUpdate, Plan, TextDelta, ThinkingDelta, ToolCall, ToolCallUpdate, TurnStart,
                                   Usage)
from agent_lsp.core.paths import uri_to_path
from agent_lsp.sessions.images import RawImage
from agent_lsp.sessions.mentions import Mention
from agent_lsp.sessions.results import HistoryEntry, HistoryToolCall

STOP_REASONS = {"end_turn": "end_turn", "max_turns": "max_turn_requests", "max_tokens": "max_tokens",
                "refusal": "refusal", "aborted": "cancelled", "disabled": "end_turn"}
"""Our stop reasons as ACP's; `error` has none: session/prompt answers a JSON-RPC error instead."""
STATUSES = {"awaiting_confirmation": "pending", "running": "in_progress", "completed": "completed",
            "failed": "failed", "rejected": "failed", "cancelled": "failed"}
"""ACP 0.12's ToolCallStatus has no rejected or cancelled: those end `failed`, their content says which."""
NOTES = {"rejected": "Rejected: ", "cancelled": "Cancelled: "}
MODES = [
    ("default", "Default", "Reads run; edits and commands ask first."),
    ("acceptEdits", "Accept edits", "Reads and edits run; commands ask first."),
    ("plan", "Plan", "Read only: edits and commands are not offered to the model."),
    ("bypassPermissions", "Bypass permissions", "Everything runs without asking."),
]
OPTION_NAMES = {"allow_once": "Allow once", "allow_always": "Allow always", "reject_once": "Reject",
                "reject_always": "Reject always"}


def acp_path(uri: str) -> Optional[str]:
    """The real path of a file: URI (None for other URIs)."""
    path = uri_to_path(uri)
    return str(path) if path is not None else None


def acp_modes(current: str) -> schema.SessionModeState:
    """Our four permission modes as ACP session modes."""
    return schema.SessionModeState(current_mode_id=current, available_modes=[
        schema.SessionMode(id=i, name=n, description=d) for i, n, d in MODES])


def acp_mcp_servers(servers: list[Any]) -> tuple[dict[str, Any], list[str]]:
    """ACP's McpServer entries as the `mcpServers` setting's shape, and a warning for each kind agent-lsp does not
    connect to (SSE)."""
    raw, unsupported = {}, []
    for server in servers:
        kind = getattr(server, "type", None)
        if kind == "http":
            raw[server.name] = {"type": "http", "url": server.url,
                                "headers": {h.name: h.value for h in server.headers or []}}
        elif kind in (None, "stdio") and getattr(server, "command", None):
            raw[server.name] = {"command": server.command, "args": list(server.args or []),
                                "env": {e.name: e.value for e in server.env or []}}
        else:
            unsupported.append(f"agent-lsp: MCP server `{getattr(server, 'name', '?')}` of session/new uses {kind!r}, "
                               "which agent-lsp does not connect to (stdio and http only); it is not started.")
    return raw, unsupported


def acp_model_option(models: list[Any], current: str) -> schema.SessionConfigOptionSelect:
    """The model as a session config option (ACP's model picker); `current` is listed even if the provider's
    list lacks it."""
    options = [schema.SessionConfigSelectOption(value=m.id, name=m.display_name or m.id) for m in models]
    if current and current not in {m.id for m in models}:
        options.insert(0, schema.SessionConfigSelectOption(value=current, name=current))
    return schema.SessionConfigOptionSelect(id="model", name="Model", category="model", type="select",
                                            current_value=current, options=options)


def acp_permission_options() -> list[schema.PermissionOption]:
    """The four decisions; each option's id is the decision itself."""
    return [schema.PermissionOption(option_id=d, name=n, kind=d) for d, n in OPTION_NAMES.items()]


def acp_prompt(blocks: list[Any]) -> tuple[str, Optional[str], list[Mention]]:
    """The user's text (resource links inline as Markdown links), the embedded resources as context, and the
    links to files as file mentions (expanded like LSP's @file)."""
    text, attached, mentions = [], [], []
    for index, block in enumerate(blocks):
        kind = getattr(block, "type", None)
        if kind == "text":
            text.append(block.text)
        elif kind == "resource_link":
            text.append(f"[{block.name}]({block.uri})")
            path = acp_path(block.uri)
            if path:
                mentions.append(Mention(kind="file", path=Path(path), lines=None, name=None, origin=f"prompt.{index}"))
        elif kind == "resource":
            resource = block.resource
            body = getattr(resource, "text", None)
            where = acp_path(resource.uri) or resource.uri
            attached.append(f"<file path=\"{where}\">\n{body}\n</file>" if body is not None
                            else f"(binary resource {where} not shown)")
    context = "The user attached these files:\n" + "\n".join(attached) if attached else None
    return "\n".join(text), context, mentions


def acp_images(blocks: list[Any]) -> list[RawImage]:
    """The prompt's image blocks, unchecked (the chat assembly checks them, naming `prompt.<i>`)."""
    return [RawImage(block.mime_type, block.data, f"prompt.{index}") for index, block in enumerate(blocks)
            if getattr(block, "type", None) == "image"]


def _content(status: str, output: Optional[str], error: Optional[str], diff: Optional[str],
             edited: Optional[tuple[str, Optional[str], str]]) -> Optional[list]:
    if status == "completed" and edited is not None:
        path, before, after = edited
        return [tool_diff_content(path, after, before)]
    words = error if status in ("failed", "rejected", "cancelled") else output
    if status in NOTES:
        words = NOTES[status] + (words or "")
    if diff and status != "completed":
        words = f"{words or ''}\n```diff\n{diff}```".strip()
    elif diff:
        words = f"```diff\n{diff}```"
    return [tool_content(text_block(words))] if words else None


def acp_usage(usage: Usage) -> schema.Usage:
    """A chat's token usage as the prompt answer's `usage`: input tokens without the cached ones, which have
    fields of their own; the total counts them all."""
    total = (usage.input_tokens + usage.output_tokens + usage.cache_read_input_tokens
             + usage.cache_creation_input_tokens)
    return schema.Usage(total_tokens=total, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                        cached_read_tokens=usage.cache_read_input_tokens,
                        cached_write_tokens=usage.cache_creation_input_tokens)


class UpdateConverter:
    """Turns one session's core updates into ACP session updates (remembering each call's file for its diff)."""

    def __init__(self, edited: dict[Path, tuple[Optional[str], str]],
                 context_window: Callable[[], int] = lambda: 200_000) -> None:
        self._edited = edited
        self._context_window = context_window
        self._usage = Usage()
        """The chat's usage as last sent (cumulative): a model call's own is the difference."""
        self._calling = False
        """A model call began (turn_start) and its usage has not come yet."""
        self._paths: dict[str, Optional[str]] = {}
        self.running_command: Optional[str] = None
        """The execute call in progress (commands run one at a time): where a client terminal is embedded."""
        self.terminals: dict[str, str] = {}
        self._kinds: dict[str, str] = {}

    def convert(self, update: AgentUpdate) -> Optional[Any]:
        """The ACP update for `update`; None for what ACP has no place for (turn starts, notices, a subagent's
        text: its report is the `task` call's result). A model call's usage is a `usage_update`: the context it
        filled (what it was sent and what it answered) of the context window. A subagent's tool calls are tool
        calls of the session whose `_meta` names the `task` call (`parentToolCallId`)."""
        parent = update.parent_tool_call_id
        if parent is not None and not isinstance(update, (ToolCall, ToolCallUpdate)):
            return None
        converted = self._convert(update)
        if parent is not None and converted is not None:
            converted.field_meta = {**(converted.field_meta or {}), "parentToolCallId": parent}
        return converted

    def _convert(self, update: AgentUpdate) -> Optional[Any]:
        if isinstance(update, TurnStart):
            if update.turn == 1:
                self._usage = Usage()
            self._calling = True
            return None
        if isinstance(update, Usage):
            return self._context(update)
        if isinstance(update, Plan):
            return acp_plan(update.entries)
        if isinstance(update, TextDelta):
            return schema.AgentMessageChunk(session_update="agent_message_chunk", content=text_block(update.text))
        if isinstance(update, ThinkingDelta):
            return schema.AgentThoughtChunk(session_update="agent_thought_chunk", content=text_block(update.text))
        if isinstance(update, ToolCall):
            paths = [p for p in (acp_path(loc.uri) for loc in update.locations or []) if p]
            self._paths[update.tool_call_id] = paths[0] if paths else None
            self._kinds[update.tool_call_id] = update.tool_kind
            return schema.ToolCallStart(
                session_update="tool_call", tool_call_id=update.tool_call_id, title=update.title,
                kind=update.tool_kind, status="pending", raw_input=update.input,
                locations=[schema.ToolCallLocation(path=p) for p in paths] or None)
        if isinstance(update, ToolCallUpdate):
            if update.status == "running" and self._kinds.get(update.tool_call_id) == "execute":
                self.running_command = update.tool_call_id
            if update.tool_call_id in self.terminals and update.status in ("running", "completed"):
                return schema.ToolCallProgress(  # the terminal shows the output; the content keeps showing it
                    session_update="tool_call_update", tool_call_id=update.tool_call_id,
                    status=STATUSES[update.status], content=[acp_terminal(self.terminals[update.tool_call_id])])
            path = self._paths.get(update.tool_call_id)
            edited = None
            if update.diff and path and Path(path) in self._edited:
                before, after = self._edited[Path(path)]
                edited = (path, before, after)
            return schema.ToolCallProgress(
                session_update="tool_call_update", tool_call_id=update.tool_call_id,
                status=STATUSES[update.status],
                content=_content(update.status, update.output, update.error, update.diff, edited))
        return None

    def _context(self, usage: Usage) -> Optional[schema.UsageUpdate]:
        """The `usage_update` after a model call: what that call was sent and answered. Usage that comes
        otherwise (a subagent's, added while tools run) only moves the baseline."""
        before, self._usage = self._usage, usage
        if not self._calling:
            return None
        self._calling = False
        used = sum(max(getattr(usage, f) - getattr(before, f), 0) for f in (
            "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        return schema.UsageUpdate(session_update="usage_update", used=used, size=max(self._context_window(), used))


def acp_plan(entries: list[Any]) -> schema.AgentPlanUpdate:
    """The agent's plan (entries with content and status); ACP wants a priority, which todo_write has not."""
    return schema.AgentPlanUpdate(session_update="plan", entries=[
        schema.PlanEntry(content=e.content, status=e.status, priority="medium") for e in entries])


def acp_commands(commands: list[Any]) -> schema.AvailableCommandsUpdate:
    """The slash commands, for `available_commands_update`."""
    return schema.AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[
        schema.AvailableCommand(name=c.name, description=c.description, input=schema.AvailableCommandInput(
            root=schema.UnstructuredCommandInput(hint=c.argument_hint)) if c.argument_hint else None)
        for c in commands])


def acp_terminal(terminal_id: str) -> Any:
    """Tool call content showing a client terminal."""
    return schema.TerminalToolCallContent(type="terminal", terminal_id=terminal_id)


def terminal_update(tool_call_id: str, terminal_id: str) -> Any:
    """The update embedding a client terminal in a running call."""
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=tool_call_id,
                                   status="in_progress", content=[acp_terminal(terminal_id)])


def acp_replay(entries: list[HistoryEntry]) -> Iterator[Any]:
    """A transcript as the session/update notifications session/load replays: a user message as its text, then
    each of its images as an `image` block, in the order sent (a message of images alone has no text chunk)."""
    for entry in entries:
        if entry.role == "user":
            if entry.content or not entry.images:
                yield schema.UserMessageChunk(session_update="user_message_chunk", content=text_block(entry.content))
            for image in entry.images or []:
                yield schema.UserMessageChunk(session_update="user_message_chunk", content=schema.ImageContentBlock(
                    type="image", mime_type=image.media_type, data=image.data))
            continue
        if entry.content:
            yield schema.AgentMessageChunk(session_update="agent_message_chunk", content=text_block(entry.content))
        for call in entry.tool_calls or []:
            yield _replayed_call(call)


def _replayed_call(call: HistoryToolCall) -> Any:
    return schema.ToolCallStart(
        session_update="tool_call", tool_call_id=call.tool_call_id, title=call.title,
        kind=call.tool_kind if call.tool_kind in ("read", "search", "edit", "execute", "fetch") else "other",
        status=STATUSES.get(call.status, "failed"), raw_input=call.input,
        content=_content(call.status, call.output, call.error, call.diff, None))
