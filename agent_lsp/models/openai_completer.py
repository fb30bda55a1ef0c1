"""Suggestions from an OpenAI-compatible server through the official `openai` SDK (imported on first use), no
retries: `chat` asks a chat model with the fill-the-hole prompt (models/hole.py); `fim` posts the text before the
cursor as `prompt` and the text after it as `suffix` to {baseUrl}/completions, the legacy completions shape that
Ollama, llama.cpp's server and DeepSeek's FIM endpoint serve."""

from __future__ import annotations

from typing import Any, AsyncIterator, Literal

from agent_lsp.core.completion import CompletionPrompt
from agent_lsp.core.ports import ModelError
from agent_lsp.models import hole, preload


class OpenAICompleter:
    """Fills holes with `model` at `base_url`, through chat.completions (`chat`) or completions (`fim`)."""

    def __init__(self, model: str, base_url: str, api_key: str, api: Literal["chat", "fim"], timeout: float,
                 shape: Any = hole) -> None:
        self.name = model
        self.base_url = base_url
        self.api_key = api_key
        self.api = api
        self.timeout = timeout
        self.shape = shape
        """What is asked: models/hole.py, or completions/next_edit.py for next edits."""

    async def prepare(self) -> None:
        """The SDK imported off the event loop (once per process, shared with the chats' warm-up)."""
        await preload.imported("openai", "httpx2")

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        await self.prepare()
        import httpx2
        import openai

        from agent_lsp.models.openai import client_for, connection_message, status_error  # the chat's own

        client = client_for(self.base_url, self.api_key, self.timeout)
        try:
            shape = self.shape
            if self.api == "fim":
                stream = await client.completions.create(
                    model=self.name, max_tokens=shape.max_tokens(prompt), stream=True, **shape.fim_arguments(prompt))
            else:
                stream = await client.chat.completions.create(
                    model=self.name, messages=shape.chat_messages(prompt), max_tokens=shape.max_tokens(prompt),
                    stop=[shape.STOP], stream=True)
            async with stream:  # leaving the block closes the response (and its connection)
                content_type = stream.response.headers.get("content-type", "")
                if "html" in content_type:
                    raise ModelError("llm_error", f"{self._url()} answered 200 with an HTML page ({content_type}), "
                                                  "not an OpenAI-compatible API.")
                chunks, finished = 0, False
                async for chunk in stream:
                    chunks += 1
                    text, finished = _text(chunk)
                    if text:
                        yield text
                    if finished:
                        break  # its end, even if the server keeps the stream open
                # a stream cut before its finish reason is a failure: never a suggestion of the part that came
                if not chunks:
                    raise ModelError("llm_error", f"{self._url()} answered 200 ({content_type or 'no content-type'}) "
                                                  "but sent no chunks.")
                if not finished:
                    raise ModelError("llm_error", f"The model stream from {self._url()} broke off before its end.")
        except openai.APIStatusError as e:
            raise status_error(e, self.name, self._url(), had_tools=False) from None
        except (openai.APITimeoutError, httpx2.TimeoutException):
            raise ModelError("llm_error", f"{self._url()} did not answer within {self.timeout:g} s "
                                          f"({self.shape.SETTING}.timeout).") from None
        except openai.APIConnectionError as e:
            raise ModelError("llm_error", connection_message(e, self._url())) from None
        except (openai.APIError, httpx2.TransportError) as e:
            raise ModelError("llm_error", f"{type(e).__name__}: {e}" if str(e) else type(e).__name__) from None
        except (ValueError, LookupError, TypeError, AttributeError) as e:  # the SDK reading junk, or _text
            raise ModelError("llm_error", f"The model stream from {self._url()} sent something that is not a "
                                          f"{'completions' if self.api == 'fim' else 'chat.completions'} chunk "
                                          f"({type(e).__name__}: {str(e)[:200]}).") from None

    def _url(self) -> str:
        return f"{self.base_url.rstrip('/')}/{'completions' if self.api == 'fim' else 'chat/completions'}"


def _text(chunk: Any) -> tuple[str, bool]:
    """(the text, whether it ends the answer) of one streamed chunk: a completion's `text`, a chat delta's
    `content`, and its finish reason; ValueError when the text is not a string."""
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return "", False
    choice = choices[0]
    delta = getattr(choice, "delta", None)
    text = getattr(delta, "content", None) if delta is not None else getattr(choice, "text", None)
    if text is not None and not isinstance(text, str):
        kind = {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}.get(type(text), "value")
        raise ValueError(f"a chunk's text is a JSON {kind}")
    return text or "", getattr(choice, "finish_reason", None) is not None

