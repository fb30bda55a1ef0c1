"""Suggestions from Claude through the official `anthropic` SDK (imported on first use): the fill-the-hole prompt
(providers/hole.py) streamed with `messages.stream`, the instructions and the file before the cursor's line marked
for the prompt cache, no retries (`max_retries=0`), no `temperature` (the SDK has none); what every model stream
checks from models/streams.py."""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.completions.providers import hole
from agent_lsp.core.ports import ModelError
from agent_lsp.models import preload
from agent_lsp.models.clients import http_client, shared_client, unverified
from agent_lsp.models.streams import MESSAGES_API, broke_off, error_body, no_events, refuse_page, timeouts

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
        import httpx2

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
        except anthropic.APIStatusError as e:
            raise ModelError("llm_error", f"{self._url(client)} answered {e.status_code}: "
                                          f"{error_body(e)[1] or getattr(e, 'message', '') or e}") from None
        except (anthropic.APITimeoutError, httpx2.TimeoutException):
            raise ModelError("llm_error", f"{self._url(client)} did not answer within {self.timeout:g} s "
                                          f"({self.shape.SETTING}.timeout).") from None
        except anthropic.APIConnectionError as e:
            cause = e.__cause__ or e
            raise ModelError("llm_error", unverified(e, self._url(client))
                             or f"Could not reach {self._url(client)} ({type(cause).__name__}).") from None
        except (anthropic.APIError, httpx2.TransportError) as e:
            raise ModelError("llm_error", f"{type(e).__name__}: {e}" if str(e) else type(e).__name__) from None
        except (ValueError, LookupError, AssertionError, TypeError, AttributeError) as e:  # the SDK reading junk
            raise ModelError("llm_error", f"The model stream from {self._url(client)} sent something that is not "
                                          f"a Messages API event ({type(e).__name__}).") from None

    @staticmethod
    def _url(client: Any) -> str:
        return f"{str(client.base_url).rstrip('/')}/v1/messages"

