"""Pydantic models of every agent/* message (PROTOCOL.md §1-§3, §6) — the source of `schemas/`.

Parsing happens at the edge: `lsp/server.py` validates raw params with these models and answers -32602 naming
the field when they do not fit. `python -m agent_lsp.protocol` regenerates `schemas/`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema

from agent_lsp.capabilities import PROTOCOL_VERSION
from agent_lsp.core.events import (
    DECISIONS,
    Decision,
    Notice,
    Plan,
    PlanEntry,
    Range,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    TurnStart,
    Update,
    Usage,
    WireModel,
)
from agent_lsp.core.ports import PermissionRequest
from agent_lsp.sessions.results import HistoryToolCall

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
StopReason = Literal["end_turn", "max_turns", "max_tokens", "refusal", "aborted", "disabled", "error"]
ErrorType = Literal["llm_error", "tool_error", "initialization_failed", "context_overflow"]


SessionId = Annotated[str, Field(min_length=1)]
"""A sessionId a client sends: "" is no session, and never a new one."""


class Params(WireModel):
    """Request params: strict types (a string is not a number), unknown fields ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", defer_build=True)


class Mention(Params):
    """An @-mention the user picked: expanded by the server into the user message, bounded (PROTOCOL §8)."""

    kind: Literal["file", "selection", "diagnostics", "symbol"]
    uri: Optional[str] = None
    range: Optional[Range] = None
    name: Optional[str] = None


class ChatContext(Params):
    active_uri: Optional[str] = None
    selection: Optional[Range] = None
    uris: Optional[list[str]] = None
    mentions: Optional[list[Mention]] = None


class ChatImage(Params):
    """An image sent with the message (PROTOCOL §9 "Images"): checked by the server (type, base64, 5 MiB)."""

    mime_type: str
    """image/png, image/jpeg, image/gif or image/webp; another answers -32602 naming `images.<i>`."""
    data: str
    """The image's bytes, base64."""


class ChatParams(Params):
    """agent/chat params."""

    session_id: Optional[SessionId] = None
    message: str
    context: Optional[ChatContext] = None
    permission_mode: Optional[PermissionMode] = None
    max_turns: Optional[int] = Field(None, ge=-1)
    model: Optional[str] = None
    work_done_token: Optional[Union[int, str]] = None
    output_schema: Optional[dict[str, Any]] = None
    """A JSON Schema: the model is offered a `finish` tool with it; the result carries `structuredOutput`."""
    images: Optional[list[ChatImage]] = None
    """With images, `message` may be empty (the images are the message); without, it must have words."""


class ChatUsage(WireModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class ChatMetadata(WireModel):
    turns_count: int
    tool_calls_count: int
    denied_tool_calls: int = 0
    duration_ms: int
    usage: ChatUsage


class ChatError(WireModel):
    type: ErrorType
    message: str


class ChatResult(WireModel):
    """agent/chat result: how the loop ended, always with metadata."""

    session_id: str
    stop_reason: StopReason
    final_message: str
    error: Optional[ChatError] = None
    metadata: ChatMetadata
    structured_output: Optional[Any] = None
    """The validated input of the accepted `finish` call (chats with an outputSchema)."""


class SessionParams(Params):
    """Params naming one session: agent/abort, agent/history, agent/deleteSession."""

    session_id: SessionId


class AbortResult(WireModel):
    aborted: bool


class ConfirmToolParams(Params):
    session_id: SessionId
    tool_call_id: str
    decision: Decision
    message: Optional[str] = None


class ConfirmToolResult(WireModel):
    accepted: Literal[True] = True


class NewSessionParams(Params):
    """agent/newSession params."""

    title: Optional[str] = None


class NewSessionResult(WireModel):
    session_id: str


class SessionsParams(Params):
    """agent/sessions params."""

    workspace: Optional[str] = None
    """A workspace folder's URI: only the sessions created in a window that had this folder."""


class SessionInfo(WireModel):
    session_id: str
    title: str
    created_at: str
    updated_at: str
    turns_count: int
    workspace: Optional[str] = None
    """The first workspace folder of the window that created the session (absent for older sessions)."""
    usage: ChatUsage
    """Cumulative over the session's chats."""


class SessionsResult(WireModel):
    sessions: list[SessionInfo]


class HistoryMessage(WireModel):
    role: Literal["user", "assistant"]
    content: str
    tool_calls: Optional[list[HistoryToolCall]] = None
    usage: Optional[ChatUsage] = None
    """On assistant messages: the usage of the chat the message belongs to."""
    stop_reason: Optional[StopReason] = None
    """On assistant messages: how the chat the message belongs to ended."""
    duration_ms: Optional[int] = None
    """On assistant messages: how long the chat the message belongs to ran."""
    images: Optional[list[ChatImage]] = None
    """On user messages that had images (an extension of PROTOCOL §2): each as agent/chat takes it, in the order
    sent; absent when the message had none."""


class HistoryResult(WireModel):
    messages: list[HistoryMessage]
    plan: list[PlanEntry] = []
    """The session's latest plan (`todo_write`); empty when the agent made none."""


class CommandsParams(Params):
    """agent/commands params (none yet)."""


class CommandInfo(WireModel):
    """A slash command the user can run as `/<name> arguments` in agent/chat."""

    name: str
    description: str
    argument_hint: Optional[str] = None
    source: Literal["builtin", "project", "user"]


class CommandsResult(WireModel):
    commands: list[CommandInfo]


class SkillsParams(Params):
    """agent/skills params (none yet)."""


class SkillInfo(WireModel):
    """A skill (PROTOCOL §10): every chat is told its name and description; `/<name>` runs it in agent/chat when
    no command has that name."""

    name: str
    description: str
    source: Literal["project", "user"]


class SkillsResult(WireModel):
    skills: list[SkillInfo]


class DeleteSessionResult(WireModel):
    deleted: Literal[True] = True


class ToolsParams(Params):
    """agent/tools params (none yet)."""


class ToolInfo(WireModel):
    """One tool the model can be offered."""

    name: str
    kind: ToolKind
    origin: str
    """"builtin", or "mcp:<server>" for a tool of an MCP server."""
    read_only: bool
    description: str


class ToolsResult(WireModel):
    tools: list[ToolInfo]


class MemoryFileParams(Params):
    """agent/memoryFile params (none yet)."""


class MemoryFileResult(WireModel):
    """Where the project memory of the window's first workspace folder is, as the `memoryFile` setting in force
    places it: AGENTS.md in the folder, or the private file under the data directory."""

    uri: Optional[str] = None
    """The file (it may not exist yet); null without a workspace folder, or private without a data directory."""
    private: bool


class ModelsParams(Params):
    """agent/models params (none yet)."""


class ModelEntry(WireModel):
    id: str
    display_name: Optional[str] = None
    provider: str
    context_window: Optional[int] = None


class ModelsResult(WireModel):
    """agent/models result: the provider's models, the one a chat uses without `model`, and why the list is
    only the configured model when listing failed."""

    models: list[ModelEntry]
    default: str
    error: Optional[str] = None


class RevertParams(Params):
    """agent/revert params: undo the last chat's edits, or those of every chat after the first `toChat`."""

    session_id: SessionId
    to_chat: Optional[int] = Field(None, ge=0)


class RefusedRevert(WireModel):
    uri: str
    reason: str


class RevertResult(WireModel):
    """agent/revert result: the documents restored, and those left as they are with the reason."""

    reverted: list[str]
    refused: list[RefusedRevert]


class CommandArgument(Params):
    """The argument of the agent.fix / agent.explain / agent.refactor commands of a code action."""

    uri: str
    range: Range
    diagnostics: Optional[list[dict[str, Any]]] = None
    instruction: Optional[str] = None
    """What to do (agent.refactor); clients that can ask the user pass it, others get a sensible default."""


class ConfirmationRequest(Update):
    """The loop waits for the user to allow or reject a tool call."""

    kind: Literal["confirmation_request"] = "confirmation_request"
    tool_call_id: str
    name: str
    title: str
    input: dict[str, Any]
    diff: Optional[str] = None
    command: Optional[str] = None
    options: list[Decision] = Field(default_factory=lambda: list(DECISIONS))

    @classmethod
    def asking(cls, request: PermissionRequest) -> "ConfirmationRequest":
        """The update that shows the user the permission question about `request`."""
        return cls(tool_call_id=request.tool_call_id, name=request.name, title=request.title, input=request.input,
                   diff=request.diff, command=request.command)


WireUpdate = Annotated[
    Union[TurnStart, TextDelta, ThinkingDelta, ToolCall, ToolCallUpdate, ConfirmationRequest, Usage, Notice, Plan],
    Field(discriminator="kind"),
]
"""What agent/update carries: the chat's updates (core/events.py), and the question of a permission."""


class UpdateParams(WireModel):
    """agent/update notification params."""

    session_id: str
    seq: int
    update: WireUpdate


class DiagnosticsParams(WireModel):
    """agent/diagnostics (server -> client) params."""

    uris: Optional[list[str]] = None


class FileDiagnostics(WireModel):
    uri: str
    diagnostics: list[dict[str, Any]]
    """LSP Diagnostic objects, as the editor has them."""


class DiagnosticsResult(WireModel):
    """agent/diagnostics (server -> client) result."""

    items: list[FileDiagnostics]


class LanguageFeatureParams(WireModel):
    """agent/languageFeature (server -> client) params: a standard LSP request for the editor's other language
    servers; the result is that request's result shape (null when none answers)."""

    method: str
    params: dict[str, Any]


class LanguageStatusParams(Params):
    """agent/languageStatus notification params (PROTOCOL §11): how far the editor's language servers have indexed,
    for the editor's route as a whole; `server` names the one it is about, for the message."""

    server: Optional[str] = None
    state: Literal["ready", "loading"]


class CompletionStatsParams(Params):
    """agent/completionStats params (none yet)."""


class NextEditStats(WireModel):
    """agent/completionStats `nextEdits`: next-edit suggestions since the server started (PROTOCOL §11)."""

    requests: int
    model_calls: int
    shown: int
    accepted: int
    """By the command `agent.nextEditAccepted`, or by a didChange that applies exactly the edit offered."""
    stale: int
    """Requests answered with no edit because their document changed (or was at another version)."""
    cancelled: int
    """Requests superseded by a newer one of their document, or cancelled by the client."""
    filtered: int
    """Model answers dropped by a filter (unchanged, whitespace only, ghost text, too large, undoing the user's
    latest change, dismissed before)."""
    errors: int


class CompletionStatsResult(WireModel):
    """agent/completionStats result: suggestions as you type since the server started (PROTOCOL §10)."""

    requests: int
    model_calls: int
    reused: int
    """Requests answered from a suggestion already asked for (typed through), with no model call of their own."""
    cancelled: int
    """Requests superseded by a newer one of their document, or cancelled by the client."""
    stale: int
    """Requests answered with no item because their document changed before the answer was ready."""
    shown: int
    accepted: int
    partially_accepted: int
    errors: int
    next_edits: NextEditStats


class CompletionAcceptedArgument(Params):
    """The one argument of the command `agent.completionAccepted` that an inline completion item carries."""

    id: int


class NextEditAcceptedArgument(Params):
    """The one argument of the command `agent.nextEditAccepted` that a copilotInlineEdit edit carries."""

    id: int


class ClientAgentCapabilities(WireModel):
    """capabilities.experimental.agent of initialize."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    confirm_tool: bool = False
    diagnostics: bool = False
    language_features: Union[list[str], Literal[True]] = []
    """The standard LSP methods the client answers through agent/languageFeature (PROTOCOL §9); `true`: every
    one of the server's `languageMethods`."""


class ServerAgentCapabilities(WireModel):
    """experimental.agent of the server's capabilities."""

    protocol_version: int = PROTOCOL_VERSION
    tools: list[str]
    permission_modes: list[PermissionMode] = ["default", "acceptEdits", "plan", "bypassPermissions"]
    features: list[str] = []
    """Protocol 1.1 additions this server has (PROTOCOL §8)."""
    language_methods: list[str] = []
    """The standard LSP methods the server may ask a client with agent/languageFeature (PROTOCOL §9)."""


SCHEMAS: dict[str, type[WireModel]] = {
    "agent-chat.params": ChatParams,
    "agent-chat.result": ChatResult,
    "agent-abort.params": SessionParams,
    "agent-abort.result": AbortResult,
    "agent-confirmTool.params": ConfirmToolParams,
    "agent-confirmTool.result": ConfirmToolResult,
    "agent-newSession.params": NewSessionParams,
    "agent-newSession.result": NewSessionResult,
    "agent-sessions.params": SessionsParams,
    "agent-sessions.result": SessionsResult,
    "agent-history.params": SessionParams,
    "agent-history.result": HistoryResult,
    "agent-deleteSession.params": SessionParams,
    "agent-deleteSession.result": DeleteSessionResult,
    "agent-commands.params": CommandsParams,
    "agent-commands.result": CommandsResult,
    "agent-skills.params": SkillsParams,
    "agent-skills.result": SkillsResult,
    "agent-tools.params": ToolsParams,
    "agent-tools.result": ToolsResult,
    "agent-memoryFile.params": MemoryFileParams,
    "agent-memoryFile.result": MemoryFileResult,
    "agent-models.params": ModelsParams,
    "agent-models.result": ModelsResult,
    "agent-revert.params": RevertParams,
    "agent-revert.result": RevertResult,
    "agent-command.argument": CommandArgument,
    "agent-update.params": UpdateParams,
    "agent-diagnostics.params": DiagnosticsParams,
    "agent-diagnostics.result": DiagnosticsResult,
    "agent-languageFeature.params": LanguageFeatureParams,
    "agent-languageStatus.params": LanguageStatusParams,
    "agent-completionStats.params": CompletionStatsParams,
    "agent-completionStats.result": CompletionStatsResult,
    "agent-completionAccepted.argument": CompletionAcceptedArgument,
    "agent-nextEditAccepted.argument": NextEditAcceptedArgument,
    "initialize.experimental.agent.client": ClientAgentCapabilities,
    "initialize.experimental.agent.server": ServerAgentCapabilities,
}


SERVER_TO_CLIENT = {name for name in SCHEMAS if name.endswith(".result") and name != "agent-diagnostics.result"} | {
    "agent-update.params", "agent-diagnostics.params", "agent-languageFeature.params",
    "initialize.experimental.agent.server"}
"""What the server sends (the rest is what it receives): described as sent, in serialization mode."""


class SentSchema(GenerateJsonSchema):
    """Schemas of what the server sends with `WireModel.wire()`, which sends every field except those that are
    None: a field is required unless it can be None, so a client's generated types need not guard the rest."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        if self.mode != "serialization":
            return super().field_is_required(field, total)
        schema = field["schema"]
        if schema["type"] == "default":
            if "default" in schema and schema["default"] is None:
                return False
            schema = schema["schema"]
        return schema["type"] != "nullable"


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every message, by file stem: what the server sends as sent, what it receives as
    accepted."""
    from agent_lsp.config import settings_schema

    return {**{name: model.model_json_schema(by_alias=True, schema_generator=SentSchema,
                                             mode="serialization" if name in SERVER_TO_CLIENT else "validation")
               for name, model in SCHEMAS.items()}, "settings": settings_schema()}


def write_schemas(directory: Path) -> None:
    """Regenerate `directory`/*.json from the models."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.json"):
        stale.unlink()
    for name, schema in schemas().items():
        (directory / f"{name}.json").write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas"))
