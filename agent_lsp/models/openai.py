"""Any OpenAI-compatible chat.completions API (OpenAI, Ollama, vLLM, LM Studio, DeepSeek, OpenRouter) through
the official `openai` SDK: streaming text, reasoning and tool calls; retries as models/retry.py says.

The SDK is imported on the first call, not at start-up (`import openai` costs most of a second), and one client
is made per (base URL, key) per process, so that every chat of every session shares its connection pool.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

from agent_lsp.core.ports import ModelError, ModelEvent, ModelInfo, ModelRequest
from agent_lsp.models import preload
from agent_lsp.models.clients import http_client, shared_client
from agent_lsp.models.errors import (
    OPENAI_EXPECTED,
    bounded,
    connection_message,
    describe,
    error_detail,
    failures,
    openai_error,
)
from agent_lsp.models.openai_wire import ReplyBuilder, api_request
from agent_lsp.models.retry import NoAnswer, no_answer, open_with_retries, sdk_delay
from agent_lsp.models.streams import OPENAI_API, READ_TIMEOUT, no_events, refuse_page, timeouts

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "not-needed"
"""Sent when a base URL is set and OPENAI_API_KEY is not: local servers need no key, the SDK insists on one."""
_CONTEXT_FIELDS = ("context_window", "context_length", "max_model_len", "max_context_length")
"""Where compatible servers say a model's context window in /models: Groq, OpenRouter, vLLM, LM Studio."""

def client_for(base_url: str, api_key: str, read_timeout: float = READ_TIMEOUT) -> Any:
    """The process's one `AsyncOpenAI` for this base URL, key and readTimeout (its own retries off: models/retry.py)."""
    def make() -> Any:
        import openai

        return _client_class()(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeouts(read_timeout),
                               http_client=http_client(openai))

    return shared_client("openai", (base_url, api_key, read_timeout), make)


_CLIENT_CLASS: Any = None


def _client_class() -> Any:
    """`AsyncOpenAI` reading event streams as the SSE standard says: an event without data (a bare `data:` line,
    `event: ping` alone, a blank line after an `id:`) is no event. The SDK hands such an event on as a chunk whose
    JSON is empty, fails on it, and its stream cannot go on: one keep-alive of a proxy ended the chat."""
    global _CLIENT_CLASS
    if _CLIENT_CLASS is None:
        import openai
        from openai._streaming import SSEDecoder  # the SDK's decoder; it has no public way to skip empty events

        class StandardDecoder(SSEDecoder):
            def decode(self, line: str) -> Any:
                event = super().decode(line)
                return event if event is not None and event.data else None

        class Client(openai.AsyncOpenAI):
            def _make_sse_decoder(self) -> Any:  # the SDK's own hook for its decoder (no public one)
                return StandardDecoder()

        _CLIENT_CLASS = Client
    return _CLIENT_CLASS


class OpenAIModel:
    """A chat.completions model at `base_url`; `client` is an `AsyncOpenAI` to use instead of the shared one."""

    def __init__(self, model: str, base_url: str, api_key: str, read_timeout: float = READ_TIMEOUT,
                 client: Any = None) -> None:
        self.name = model
        self.base_url = base_url
        self.api_key = api_key
        self.read_timeout = read_timeout
        self._client = client

    def client(self) -> Any:
        return self._client or client_for(self.base_url, self.api_key, self.read_timeout)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await preload.imported("openai", "httpx2")  # the warm-up's import when one is under way, off the loop
        import openai

        kwargs = api_request(self.name, request, self.base_url)
        reply = ReplyBuilder()
        completions = self.client().chat.completions  # made before the wait that readTimeout bounds
        try:
            try:
                stream = await open_with_retries(lambda: completions.create(**kwargs),
                                                 self.read_timeout, lambda e, retry: sdk_delay(openai, e, retry))
            except NoAnswer as e:
                raise ModelError("llm_error", no_answer(self._url(), e.waited, e.attempts)) from None
            except openai.APITimeoutError:
                raise ModelError("llm_error", no_answer(self._url(), self.read_timeout, 1)) from None
            # `async with`: a cancelled task (an abort) closes the HTTP response, which drops the connection.
            async with stream:
                content_type = stream.response.headers.get("content-type", "")
                refuse_page(content_type, self._url(), OPENAI_API, OPENAI_EXPECTED)
                if "json" in content_type and "event-stream" not in content_type:
                    stream = await self._json_answer(stream, content_type)
                async for chunk in stream:
                    for event in reply.add(chunk):
                        yield event
        except failures(openai) as e:
            raise openai_error(e, self._url(), self.read_timeout, "readTimeout", self.name, chunks=reply.chunks,
                               tools=bool(request.tools), images=request.carries_images) from None
        if reply.chunks == 0:
            raise no_events(self._url(), content_type, "chat.completions chunks", OPENAI_EXPECTED)
        yield reply.finish(self._url())

    async def _json_answer(self, stream: Any, content_type: str) -> Any:
        """A 200 labelled JSON, read whole: one object (an error, or a completion though a stream was asked for)
        is a ModelError quoting it; anything else is read as the event stream it is likely to be."""
        import httpx2
        import openai
        from openai.types.chat import ChatCompletionChunk

        raw = await stream.response.aread()
        try:
            answer = json.loads(raw)
        except ValueError:
            return openai.AsyncStream(cast_to=ChatCompletionChunk, client=self.client(), response=httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, content=raw, request=stream.response.request))
        if isinstance(answer, dict):
            error = answer.get("error")
            said = error.get("message") if isinstance(error, dict) else error
            if isinstance(said, str) and said.strip():
                raise ModelError("llm_error", f"{self._url()} answered 200 with an error instead of a stream: "
                                 f"{bounded(said.strip())}")
        shown = raw[:200].decode(errors="replace")
        raise ModelError("llm_error", f"{self._url()} answered 200 ({content_type}) with one JSON value and sent "
                         f"no chat.completions chunks (a stream was asked for): {shown!r}. {OPENAI_EXPECTED}")

    async def list_models(self) -> list[ModelInfo]:
        """The models the API's GET /models lists."""
        return await list_models(self.base_url, self.api_key)

    def _url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"


async def list_models(base_url: str, api_key: str) -> list[ModelInfo]:
    """GET /models; raises ModelError with what was reached when it fails."""
    import openai

    client = client_for(base_url, api_key).with_options(max_retries=1, timeout=15.0)
    url = f"{base_url.rstrip('/')}/models"
    try:
        page = await client.models.list()
        models = []
        for m in page.data:
            extra = getattr(m, "model_extra", None) or {}
            window = next((extra[k] for k in _CONTEXT_FIELDS if isinstance(extra.get(k), int)), None)
            name = extra.get("name") if isinstance(extra.get("name"), str) else None
            models.append(ModelInfo(id=m.id, provider="openai", display_name=name, context_window=window))
        return models
    except openai.APIStatusError as e:
        raise ModelError("llm_error", f"GET {url} answered {e.status_code}: {error_detail(e)}") from None
    except openai.APIConnectionError as e:
        raise ModelError("llm_error", connection_message(e, url)) from None
    except (openai.APIError, ValueError, AttributeError, TypeError) as e:
        raise ModelError("llm_error", f"GET {url} did not answer a model list ({describe(e)}).") from None
