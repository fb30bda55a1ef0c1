"""The exact translation between our transcript and the chat.completions API, both ways.

Out: a `ModelRequest` becomes the keyword arguments of `chat.completions.create`. In: streamed chunks become text
and thinking chunks and, at the end, one `ModelReply` (tool calls assembled from their fragments). No SDK import:
chunks are read by attribute, so the SDK's own types and the tests' plain models both fit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional
from urllib.parse import urlparse

from agent_lsp.core.events import Usage
from agent_lsp.core.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultsMessage,
    ToolUsePart,
    UserMessage,
)
from agent_lsp.core.ports import ModelEvent, ModelReply, ModelRequest, StopReason, TextChunk, ThinkingChunk
from agent_lsp.models.streams import broke_off

ERROR_PREFIX = "Error: "
"""chat.completions has no `is_error` flag on a tool message: an error result says so in its text."""
STOP_REASONS: dict[str, StopReason] = {"length": "max_tokens", "content_filter": "refusal"}
REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where compatible servers stream reasoning: DeepSeek and vLLM `reasoning_content`, OpenRouter `reasoning`."""


def token_limit(base_url: Optional[str]) -> str:
    """The name of chat.completions' limit on the answer's tokens at `base_url` (None: OpenAI's own), for chats and
    suggestions alike: OpenAI itself wants `max_completion_tokens` (its reasoning models refuse `max_tokens`); the
    compatible servers (Ollama, vLLM, LM Studio, DeepSeek, OpenRouter) all read `max_tokens`."""
    host = urlparse(base_url or "https://api.openai.com/v1").hostname or ""
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def api_request(model: str, request: ModelRequest, base_url: Optional[str] = None) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` for a request."""
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": request.system}, *api_messages(request.messages)],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    kwargs[token_limit(base_url)] = request.max_tokens
    if request.tools:
        kwargs["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}}
            for t in request.tools
        ]
        # "auto" is the API's default with tools; sending it makes vLLM demand a server flag, so only "none" goes.
        if request.tool_choice == "none":
            kwargs["tool_choice"] = "none"
    return kwargs


def api_messages(history: list[Message]) -> list[dict[str, Any]]:
    """The chat.completions form of a transcript (without the system message)."""
    out: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, UserMessage):
            text = f"{message.context}\n\n{message.text}" if message.context else message.text
            if message.images:  # content parts only then: some compatible servers take a string alone
                out.append({"role": "user", "content": [
                    *([{"type": "text", "text": text}] if text else []),  # a message of images alone has no text
                    *({"type": "image_url", "image_url": {"url": f"data:{i.media_type};base64,{i.data}"}}
                      for i in message.images)]})
            else:
                out.append({"role": "user", "content": text})
        elif isinstance(message, AssistantMessage):
            # Thinking parts are not sent back: chat.completions has no input field for them, and DeepSeek
            # answers 400 when `reasoning_content` comes back in a request. The transcript keeps them.
            calls = [_tool_call(p) for p in message.tool_uses]
            text = message.text
            if not text and not calls:
                continue  # a thinking-only reply: an assistant message needs content or tool_calls
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        elif isinstance(message, ToolResultsMessage):
            out += [{"role": "tool", "tool_call_id": r.tool_use_id,
                     "content": (ERROR_PREFIX if r.is_error else "") + (r.content or "(no output)")}
                    for r in message.results]
    return out


def _tool_call(part: ToolUsePart) -> dict[str, Any]:
    # A call whose arguments could not be read goes back as `{}` (its tool result quotes what was wrong): some
    # servers (Ollama) parse the arguments of past calls and would refuse every later request of the session.
    return {"id": part.id, "type": "function",
            "function": {"name": wire_name(part.name), "arguments": json.dumps(part.input, ensure_ascii=False)}}


def wire_name(name: str) -> str:
    """A past call's name as the API accepts it (^[A-Za-z0-9_-]{1,64}$): OpenAI answers 400 to a history with an
    empty or odd name, so a call the model named wrongly (answered "Unknown tool") goes back with a cleaned name."""
    if _NAME.match(name):
        return name
    return (re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]) or "unnamed_tool"


_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass
class _Call:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyBuilder:
    """Reads the chunks of one streamed reply: `add` yields what to stream now, `finish` the whole reply."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self.finish_reason: Optional[str] = None
        self.usage = Usage()
        self.chunks = 0
        self.refused = False
        """A `refusal` delta came: OpenAI ends such a reply with "stop", yet it is a refusal."""

    def add(self, chunk: Any) -> Iterator[ModelEvent]:
        """Take one `ChatCompletionChunk`; yield its text and thinking."""
        self.chunks += 1
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0):
                continue  # n=1 is what we ask for; another choice is not ours to mix in
            delta = choice.delta
            if delta is not None:
                extra = getattr(delta, "model_extra", None) or {}
                for name in REASONING_FIELDS:
                    reasoning = extra.get(name, getattr(delta, name, None))
                    if isinstance(reasoning, str) and reasoning:
                        self.thinking.append(reasoning)
                        yield ThinkingChunk(reasoning)
                        break
                refusal = getattr(delta, "refusal", None)
                self.refused = self.refused or bool(refusal)
                for text in (getattr(delta, "content", None), refusal):
                    if text and not isinstance(text, str):
                        raise ValueError(f"a delta's text is a JSON {_JSON_TYPES.get(type(text), 'value')}: "
                                         f"{_quote(json.dumps(text, default=str))}")
                    if text:
                        self.text.append(text)
                        yield TextChunk(text)
                fragments = getattr(delta, "tool_calls", None) or []
                if not isinstance(fragments, list) or not all(_is_object(f) for f in fragments):
                    raise ValueError(f"a delta's tool_calls is not a list of objects: {_quote(repr(fragments))}")
                for fragment in fragments:
                    self._fragment(fragment)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def _fragment(self, fragment: Any) -> None:
        index, new_id = getattr(fragment, "index", None), getattr(fragment, "id", None)
        if isinstance(index, int):
            call = self._by_index.get(index)
        else:  # some proxies send no index: a fragment continues the last call unless it brings a new id
            call = self.calls[-1] if self.calls else None
        if call is None or (new_id and call.id and new_id != call.id):
            # A new call, also when a proxy gives every parallel call index 0 but each its own id.
            call = _Call(index if isinstance(index, int) else len(self.calls))
            if isinstance(index, int):
                self._by_index[index] = call
            self.calls.append(call)
        function = getattr(fragment, "function", None)
        if isinstance(new_id, str) and new_id:
            call.id = new_id
        name = getattr(function, "name", None)
        if isinstance(name, str) and name:
            call.name = name
        arguments = getattr(function, "arguments", None) if function is not None else None
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif isinstance(arguments, dict):  # some proxies send the object itself
            call.arguments.append(json.dumps(arguments))

    def finish(self, url: str) -> ModelReply:
        """The reply from the stream at `url`; one that ended without a finish_reason is a `ModelError` (a cut
        stream)."""
        if self.finish_reason is None:
            raise broke_off(url, f"no finish_reason after {self.chunks} chunks")
        parts: list[Any] = []
        if self.thinking:
            parts.append(ThinkingPart(thinking="".join(self.thinking)))
        if self.text:
            parts.append(TextPart(text="".join(self.text)))
        uses = [tool_use(call, n) for n, call in enumerate(self.calls)]
        parts += uses
        # Whether tools were called is read from the calls, not the finish_reason: some compatible servers end
        # a tool-call reply with "stop".
        stop = STOP_REASONS.get(self.finish_reason) or ("tool_use" if uses else "refusal" if self.refused else
                                                        "end_turn")
        return ModelReply(parts=parts, stop_reason=stop, usage=self.usage)


def tool_use(call: _Call, n: int) -> ToolUsePart:
    """An assembled call; arguments that are not a JSON object leave `input_error` for the loop to answer."""
    raw = "".join(call.arguments)
    call_id = call.id or f"call_{n}"
    if not raw.strip():
        return ToolUsePart(id=call_id, name=call.name, input={})  # a call without arguments
    try:
        value = json.loads(raw)
    except RecursionError:
        problem = "nested too deep"
    except ValueError as e:
        problem = f"not valid JSON ({getattr(e, 'msg', e)}, at character {getattr(e, 'pos', '?')})"
    else:
        if isinstance(value, dict):
            return ToolUsePart(id=call_id, name=call.name, input=value)
        problem = f"a JSON {_JSON_TYPES[type(value)]}, not an object"
    return ToolUsePart(id=call_id, name=call.name, input={}, input_error=f"the arguments are {problem}: {_quote(raw)}")


_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean",
               type(None): "null"}


def _is_object(value: Any) -> bool:
    """A parsed JSON object: the SDK's model of it, or a dict (not null, a string, a number or a list)."""
    return not isinstance(value, (type(None), str, int, float, bool, list, tuple))


def _quote(raw: str, limit: int = 300) -> str:
    return repr(raw if len(raw) <= limit else raw[:limit] + "…")


def _usage(usage: Any) -> Usage:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    prompt = getattr(usage, "prompt_tokens", None) or 0
    return Usage(input_tokens=max(prompt - cached, 0), output_tokens=getattr(usage, "completion_tokens", None) or 0,
                 cache_read_input_tokens=cached)
