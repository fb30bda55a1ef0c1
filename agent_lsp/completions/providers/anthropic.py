"""Suggestions from Claude through the official `anthropic` SDK (imported on first use): the fill-the-hole prompt
(providers/hole.py) streamed with `messages.stream`, the instructions and the file before the cursor's line marked
for the prompt cache, no retries (`max_retries=0`), no `temperature` (the SDK has none); what every model stream
checks from models/streams.py, what its failures say from models/errors.py."""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.completions.providers import hole
from agent_lsp.models import preload
from agent_lsp.models.clients import http_client, shared_client
from agent_lsp.models.errors import anthropic_error, failures
from agent_lsp.models.streams import MESSAGES_API, broke_off, no_events, refuse_page, timeouts

EPHEMERAL = {"type": "ephemeral"}


class AnthropicCompleter:
    """Fills holes with `model`; `base_url` None leaves the SDK's own (ANTHROPIC_BASE_URL)."""

    def __init__(self, model: str, base_url: Optional[str], timeout: float, shape: Any = hole) -> None:
        self.name = model
        self.base_url = base_url
        self.timeout = timeout
        self.shape = shape
        """What is asked: providers/hole.py, or completions/next_edit.py for next edits."""

    def _client(self) -> Any:
        import anthropic

        def make() -> Any:
            options: dict[str, Any] = {"base_url": self.base_url} if self.base_url else {}
            return anthropic.AsyncAnthropic(max_retries=0, timeout=timeouts(self.timeout),
                                            http_client=http_client(anthropic), **options)

        return shared_client("anthropic", ("completions", self.base_url, self.timeout), make)

    async def prepare(self) -> None:
        """The SDK imported off the event loop (once per process, shared with the chats' warm-up)."""
        await preload.imported("anthropic", "httpx2")

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        await self.prepare()
        import anthropic

        client = self._client()
        shape = self.shape
        content = [{"type": "text", "text": shape.context_text(prompt), "cache_control": EPHEMERAL},
                   {"type": "text", "text": shape.hole_text(prompt)}]
        try:
            async with client.messages.stream(
                    model=self.name, max_tokens=shape.max_tokens(prompt), stop_sequences=[shape.STOP],
                    system=[{"type": "text", "text": shape.SYSTEM, "cache_control": EPHEMERAL}],
                    messages=[{"role": "user", "content": content}]) as stream:
                content_type = stream.response.headers.get("content-type", "")
                refuse_page(content_type, self._url(client), MESSAGES_API)
                started = ended = False
                async for event in stream:  # leaving the block closes the response (and its connection)
                    if event.type == "text" and event.text:
                        yield event.text
                    elif event.type == "message_start":
                        started = True
                    elif event.type == "message_delta" and event.delta.stop_reason:
                        ended = True
                    elif event.type == "message_stop":
                        break  # its end, even if the server keeps the stream open
                if not started:
                    raise no_events(self._url(client), content_type, "Messages API events")
                if not ended:
                    raise broke_off(self._url(client))
        except failures(anthropic) as e:
            raise anthropic_error(e, self._url(client), self.timeout, f"{self.shape.SETTING}.timeout", self.name) from None

    @staticmethod
    def _url(client: Any) -> str:
        return f"{str(client.base_url).rstrip('/')}/v1/messages"

