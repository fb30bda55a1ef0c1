"""Claude through the official `anthropic` SDK: streaming text, thinking and tool use; retries as models/retry.py says.

The SDK is imported on the first call, not at start-up: `import anthropic` alone costs most of a second, and an
editor spawns the server for every window.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Optional

from agent_lsp.core.events import Usage
from agent_lsp.core.messages import (
    AssistantMessage,
    Message,
    RedactedThinkingPart,
    TextPart,
    ThinkingPart,
    ToolResultsMessage,
    ToolUsePart,
    UserMessage,
)
from agent_lsp.core.ports import (
    ModelError,
    ModelEvent,
    ModelInfo,
    ModelReply,
    ModelRequest,
    TextChunk,
    ThinkingChunk,
)
from agent_lsp.models import preload
from agent_lsp.models.clients import http_client, shared_client
from agent_lsp.models.errors import anthropic_error, describe, failures, status_message
from agent_lsp.models.retry import NoAnswer, no_answer, open_with_retries, sdk_delay
from agent_lsp.models.streams import MESSAGES_API, READ_TIMEOUT, broke_off, no_events, refuse_page, timeouts

EPHEMERAL = {"type": "ephemeral"}


class AnthropicModel:
    """A Claude model. `base_url` None leaves the SDK's own resolution (ANTHROPIC_BASE_URL) in charge."""

    def __init__(self, model: str, base_url: Optional[str] = None, read_timeout: float = READ_TIMEOUT) -> None:
        self.name = model
        self.base_url = base_url
        self.read_timeout = read_timeout
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            import anthropic

            kwargs: dict[str, Any] = {"base_url": self.base_url} if self.base_url else {}
            # A stalled stream (no headers, or silence mid-stream) fails after read_timeout instead of holding
            # the chat until the user presses Stop; retries are ours (models/retry.py), never of a timeout.
            kwargs["timeout"] = timeouts(self.read_timeout)
            self._client = shared_client("anthropic", (self.base_url, self.read_timeout),
                                         lambda: anthropic.AsyncAnthropic(max_retries=0, **kwargs,
                                                                          http_client=http_client(anthropic)))
        return self._client

    def url(self) -> str:
        """Where the requests go: the Messages API endpoint."""
        return f"{str(self._sdk().base_url).rstrip('/')}/v1/messages"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await preload.imported("anthropic", "httpx2")  # the warm-up's import when one is under way, off the loop
        import anthropic
        import httpx2

        kwargs = api_request(self.name, request)
        messages = self._sdk().messages  # the client and its resources made before the wait that readTimeout bounds
        started = False
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    stream = await open_with_retries(
                        lambda: stack.enter_async_context(messages.stream(**kwargs)),
                        self.read_timeout, lambda error, retry: sdk_delay(anthropic, error, retry))
                except NoAnswer as e:
                    raise ModelError("llm_error", no_answer(self.url(), e.waited, e.attempts)) from None
                except (anthropic.APITimeoutError, httpx2.TimeoutException):
                    raise ModelError("llm_error", no_answer(self.url(), self.read_timeout, 1)) from None
                content_type = stream.response.headers.get("content-type", "")
                refuse_page(content_type, self.url(), MESSAGES_API)
                async for event in stream:
                    if event.type == "text" and event.text:
                        yield TextChunk(event.text)
                    elif event.type == "thinking" and event.thinking:
                        yield ThinkingChunk(event.thinking)
                    elif event.type in ("message_start", "message_delta"):  # what was used so far, if cut
                        started = True
                        yield _usage(stream.current_message_snapshot.usage)
                if not started:
                    raise no_events(self.url(), content_type, "Messages API events")
                final = await stream.get_final_message()
        except failures(anthropic) as e:
            raise anthropic_error(e, self.url(), self.read_timeout, "readTimeout", self.name,
                                  request.carries_images) from None
        if final.stop_reason is None:
            raise broke_off(self.url(), "no stop reason")
        if final.stop_reason == "model_context_window_exceeded":
            raise ModelError("context_overflow", "The conversation no longer fits the model's context window.")
        yield ModelReply(parts=_parts(final.content), stop_reason=final.stop_reason, usage=_usage(final.usage))

    async def list_models(self) -> list[ModelInfo]:
        """The models the API's GET /v1/models lists (first page: 100)."""
        await preload.imported("anthropic", "httpx2")
        import anthropic
        import httpx2

        try:
            page = await self._sdk().with_options(max_retries=1, timeout=15.0).models.list(limit=100)
        except anthropic.APIStatusError as e:
            raise ModelError("llm_error", f"Listing the models failed: {status_message(e)}") from None
        except (anthropic.APIError, httpx2.TransportError, ValueError) as e:
            raise ModelError("llm_error", f"Listing the models failed: {describe(e)}") from None
        return [ModelInfo(id=m.id, provider="anthropic", display_name=m.display_name,
                          context_window=m.max_input_tokens) for m in page.data]


def api_request(model: str, request: ModelRequest) -> dict[str, Any]:
    """The keyword arguments of `messages.stream` for a request."""
    messages = api_messages(request.messages)
    # Prompt caching: one breakpoint after the system prompt (it covers the tools, which come first) and one on
    # the last block, so the next request of the session, which only appends, reads this one's prefix from cache.
    messages[-1]["content"][-1] = {**messages[-1]["content"][-1], "cache_control": EPHEMERAL}
    kwargs: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}],
        "messages": messages,
    }
    if request.tools:
        kwargs["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
        ]
        kwargs["tool_choice"] = {"type": request.tool_choice}
    if request.thinking == "adaptive":
        kwargs["thinking"] = {"type": "adaptive"}
    elif isinstance(request.thinking, int):
        kwargs["thinking"] = {"type": "enabled", "budget_tokens": request.thinking}
    return kwargs


def api_messages(history: list[Message]) -> list[dict[str, Any]]:
    """The Messages API form of a transcript; consecutive user turns are merged, tool results first."""
    out: list[dict[str, Any]] = []
    for message in history:
        converted = _convert(message)
        if converted is None:
            continue
        role, blocks = converted
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _convert(message: Message) -> Optional[tuple[str, list[dict[str, Any]]]]:
    """A message's role and blocks; None when nothing of it is sent."""
    if isinstance(message, AssistantMessage):
        # Thinking without a signature came from another provider (chat.completions reasoning): the API
        # rejects an unsigned thinking block, so it stays in the transcript only.
        blocks = [_block(p) for p in message.parts if not (isinstance(p, ThinkingPart) and not p.signature)]
        return ("assistant", blocks) if blocks else None
    if isinstance(message, ToolResultsMessage):
        return "user", [
            {"type": "tool_result", "tool_use_id": r.tool_use_id, "content": r.content or "(no output)",
             **({"is_error": True} if r.is_error else {})}
            for r in message.results
        ]
    if isinstance(message, UserMessage):
        context = [{"type": "text", "text": message.context}] if message.context else []
        images = [{"type": "image", "source": {"type": "base64", "media_type": i.media_type, "data": i.data}}
                  for i in message.images]
        # the API refuses an empty text block: a message of images alone has none
        words = [{"type": "text", "text": message.text}] if message.text or not images else []
        return "user", [*context, *images, *words]
    return None  # pragma: no cover - the union is closed


def _block(part: Any) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ThinkingPart):
        return {"type": "thinking", "thinking": part.thinking, "signature": part.signature}
    if isinstance(part, RedactedThinkingPart):
        return {"type": "redacted_thinking", "data": part.data}
    return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.input}


def _parts(content: list[Any]) -> list[Any]:
    parts: list[Any] = []
    for block in content:
        if block.type == "text":
            parts.append(TextPart(text=block.text))
        elif block.type == "thinking":
            parts.append(ThinkingPart(thinking=block.thinking, signature=block.signature))
        elif block.type == "redacted_thinking":
            parts.append(RedactedThinkingPart(data=block.data))
        elif block.type == "tool_use":
            parts.append(ToolUsePart(id=block.id, name=block.name, input={} if block.input is None else block.input))
    return parts


def _usage(usage: Any) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
    )
