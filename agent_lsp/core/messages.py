"""The transcript: what the user said, what the model answered, and what the tools returned."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_lsp.core.surrogates import replaced, usable


class _Model(BaseModel):
    """Transcript models build their validators on first use, not at import (start-up matters)."""

    model_config = ConfigDict(defer_build=True)


class TextPart(_Model):
    """Assistant text."""

    kind: Literal["text"] = "text"
    text: str


class ThinkingPart(_Model):
    """Assistant thinking, kept byte for byte with its signature (the API rejects a modified block)."""

    kind: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingPart(_Model):
    """Thinking the provider encrypted; passed back unchanged."""

    kind: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class ToolUsePart(_Model):
    """A tool call the model made."""

    kind: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    input_error: Optional[str] = None
    """Why the model's arguments could not be read (not JSON, not an object): the loop answers the call with this
    as an error, and `input` is then empty."""

    @model_validator(mode="before")
    @classmethod
    def _object_input(cls, data: Any) -> Any:
        """A model may send a list, a string or a number as input; the API only takes an object back, so the call
        keeps `{}` and says what was wrong."""
        if isinstance(data, dict) and data.get("input") is not None and not isinstance(data["input"], dict):
            kind = {"list": "an array", "str": "a string", "bool": "a boolean"}.get(type(data["input"]).__name__,
                                                                                  "a number")
            data = {**data, "input": {}, "input_error": f"the input must be a JSON object, not {kind}; the call was "
                                                          "not run"}
        elif isinstance(data, dict) and isinstance(data.get("input"), dict) and too_deep(data["input"]):
            # The store's JSON serializer stops at a few hundred levels: such a call could not be saved.
            data = {**data, "input": {}, "input_error": f"the input is nested more than {MAX_INPUT_DEPTH} levels "
                                                          "deep; the call was not run"}
        return data


MAX_INPUT_DEPTH = 64
"""How deep a tool call's input may nest (no tool's schema comes near it)."""


def too_deep(value: Any, limit: int = MAX_INPUT_DEPTH) -> bool:
    """Whether `value` (decoded JSON) nests deeper than `limit` lists and objects. Iterative."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return False


AssistantPart = Annotated[
    Union[TextPart, ThinkingPart, RedactedThinkingPart, ToolUsePart], Field(discriminator="kind")
]


class ToolResult(_Model):
    """The answer to one tool call."""

    tool_use_id: str
    content: str
    is_error: bool = False


class ImagePart(_Model):
    """An image the user attached: its type and its bytes in base64, as both APIs take them."""

    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: str


class UserMessage(_Model):
    """A user turn: the user's message, or a message the loop adds on the user's behalf (nudge, summary)."""

    kind: Literal["user"] = "user"
    text: str
    origin: Literal["user", "nudge", "summary_request", "summary", "revert"] = "user"
    """Who wrote it: the user, or the loop on the user's behalf (hidden from a redrawn history)."""
    context: Optional[str] = None
    """What the editor showed when the user wrote it (open buffers, active file, selection): sent to the model
    with the message, so the system prompt stays the same from chat to chat and the prompt cache holds."""
    images: list[ImagePart] = Field(default_factory=list)
    """Images sent with the message (pasted, attached, or image files mentioned)."""


class AssistantMessage(_Model):
    """One model reply."""

    kind: Literal["assistant"] = "assistant"
    parts: list[AssistantPart]

    @property
    def text(self) -> str:
        """The reply's text parts joined."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_uses(self) -> list[ToolUsePart]:
        """The reply's tool calls, in order."""
        return [p for p in self.parts if isinstance(p, ToolUsePart)]


class ToolResultsMessage(_Model):
    """The results of every tool call of the previous assistant message, in call order."""

    kind: Literal["tool_results"] = "tool_results"
    results: list[ToolResult]


Message = Annotated[Union[UserMessage, AssistantMessage, ToolResultsMessage], Field(discriminator="kind")]


def usable_part(part: Any) -> Any:
    """A reply part with every lone surrogate replaced by U+FFFD (tool inputs are at most MAX_INPUT_DEPTH deep)."""
    if isinstance(part, TextPart) and usable(part.text) is not part.text:
        return part.model_copy(update={"text": usable(part.text)})
    if isinstance(part, ThinkingPart) and usable(part.thinking) is not part.thinking:
        return part.model_copy(update={"thinking": usable(part.thinking)})
    if isinstance(part, ToolUsePart):
        fixed = replaced([part.id, part.name, part.input])
        if fixed != [part.id, part.name, part.input]:
            return part.model_copy(update={"id": fixed[0], "name": fixed[1], "input": fixed[2]})
    return part


def wire_id(model_id: str, earlier: int) -> str:
    """The id a tool call has for the user's editor (updates, confirmations, agent/history): the model's own,
    made unique within the session when a model reuses ids across replies (the demo and scripted models, some
    OpenAI-compatible servers): its later calls become `<id>~2`, `<id>~3`… `earlier` counts the session's
    previous calls with that model id. The model itself always sees its own id."""
    return model_id if earlier == 0 else f"{model_id}~{earlier + 1}"


def call_ids(history: list[Message]) -> dict[tuple[int, str], str]:
    """The wire id of every tool call of `history`, by (message index, model id)."""
    seen: dict[str, int] = {}
    ids = {}
    for index, message in enumerate(history):
        if isinstance(message, AssistantMessage):
            for use in message.tool_uses:
                ids[(index, use.id)] = wire_id(use.id, seen.get(use.id, 0))
                seen[use.id] = seen.get(use.id, 0) + 1
    return ids


def unanswered_tool_uses(history: list[Message]) -> list[ToolUsePart]:
    """Tool calls of the last assistant message that no tool result answers yet."""
    if not history or not isinstance(history[-1], AssistantMessage):
        return []
    return history[-1].tool_uses
