"""The loop's output vocabulary: the `AgentUpdate` variants of `agent/update` (PROTOCOL.md §3)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

ToolKind = Literal["read", "search", "edit", "execute", "fetch", "other"]
ToolStatus = Literal["awaiting_confirmation", "running", "completed", "failed", "rejected", "cancelled"]
Decision = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
DECISIONS: list[Decision] = ["allow_once", "allow_always", "reject_once", "reject_always"]


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)

    def wire(self) -> dict[str, Any]:
        """The JSON-ready dict sent to clients (absent optionals omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Position(WireModel):
    """Zero-based line and character, as LSP counts them."""

    line: int
    character: int


class Range(WireModel):
    """An LSP range."""

    start: Position
    end: Position


class Location(WireModel):
    """A place a tool call touches."""

    uri: str
    range: Optional[Range] = None


class Update(WireModel):
    """Base of every AgentUpdate: a subagent's updates carry the id of the `task` call that runs it."""

    parent_tool_call_id: Optional[str] = None


class TurnStart(Update):
    """A model call of the loop begins."""

    kind: Literal["turn_start"] = "turn_start"
    turn: int
    max_turns: int


class TextDelta(Update):
    """Streamed assistant text."""

    kind: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDelta(Update):
    """Streamed assistant thinking."""

    kind: Literal["thinking_delta"] = "thinking_delta"
    text: str


class ToolCall(Update):
    """The model asked for a tool call."""

    kind: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    title: str
    tool_kind: ToolKind
    input: dict[str, Any]
    locations: Optional[list[Location]] = None


class ToolCallUpdate(Update):
    """A tool call changed status, or streamed output."""

    kind: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: ToolStatus
    output: Optional[str] = None
    error: Optional[str] = None
    diff: Optional[str] = None


class Usage(Update):
    """Token usage, cumulative for the chat."""

    kind: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def plus(self, other: "Usage") -> "Usage":
        """The sum of two usages."""
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens + other.cache_creation_input_tokens,
        )


class Notice(Update):
    """Something the user should know: a retry, a compaction, a nudge."""

    kind: Literal["notice"] = "notice"
    level: Literal["info", "warning"] = "info"
    message: str


PlanStatus = Literal["pending", "in_progress", "completed"]


class PlanEntry(WireModel):
    """One step of the agent's plan."""

    content: str
    status: PlanStatus


class Plan(Update):
    """The agent's whole plan, each time it changes (`todo_write`)."""

    kind: Literal["plan"] = "plan"
    entries: list[PlanEntry]


AgentUpdate = Annotated[
    Union[TurnStart, TextDelta, ThinkingDelta, ToolCall, ToolCallUpdate, Usage, Notice, Plan],
    Field(discriminator="kind"),
]
