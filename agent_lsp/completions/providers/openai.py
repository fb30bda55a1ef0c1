"""Suggestions from an OpenAI-compatible server through the official `openai` SDK (imported on first use), no
retries: `chat` asks a chat model with the fill-the-hole prompt (providers/hole.py), its token limit named as for
chats; `fim` posts the text before the cursor as `prompt` and the text after it as `suffix` to {baseUrl}/completions,
the legacy completions shape that Ollama, llama.cpp's server and DeepSeek's FIM endpoint serve. What every model
stream checks comes from models/streams.py, what its failures say from models/errors.py."""

from __future__ import annotations

from typing import Any, AsyncIterator, Literal

from agent_lsp.completions.prompt import CompletionPrompt
from agent_lsp.completions.providers import hole
from agent_lsp.models import preload
from agent_lsp.models.errors import failures, openai_error
from agent_lsp.models.streams import OPENAI_API, broke_off, no_events, refuse_page


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
        """What is asked: providers/hole.py, or completions/next_edit.py for next edits."""

    async def prepare(self) -> None:
        """The SDK imported off the event loop (once per process, shared with the chats' warm-up)."""
        await preload.imported("openai", "httpx2")

    async def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]:
        await self.prepare()
        import openai

        from agent_lsp.models.openai import client_for  # the chats' clients

        client = client_for(self.base_url, self.api_key, self.timeout)
        chunks = 0
        try:
            shape = self.shape
            if self.api == "fim":
                stream = await client.completions.create(
                    model=self.name, max_tokens=shape.max_tokens(prompt), stream=True, **shape.fim_arguments(prompt))
            else:
                stream = await client.chat.completions.create(**chat_request(self.name, prompt, self.base_url, shape))
            async with stream:  # leaving the block closes the response (and its connection)
                content_type = stream.response.headers.get("content-type", "")
                refuse_page(content_type, self._url(), OPENAI_API)
                finished = False
                async for chunk in stream:
                    chunks += 1
                    text, finished = _text(chunk)
                    if text:
                        yield text
                    if finished:
                        break  # its end, even if the server keeps the stream open
                if not chunks:
                    raise no_events(self._url(), content_type, f"{self._wire()} chunks")
                if not finished:
                    raise broke_off(self._url())
        except failures(openai) as e:
            raise openai_error(e, self._url(), self.timeout, f"{self.shape.SETTING}.timeout", self.name, self._wire(),
                               chunks) from None

    def _url(self) -> str:
        return f"{self.base_url.rstrip('/')}/{'completions' if self.api == 'fim' else 'chat/completions'}"

    def _wire(self) -> str:
        return "completions" if self.api == "fim" else "chat.completions"


def chat_request(model: str, prompt: CompletionPrompt, base_url: str, shape: Any = hole) -> dict[str, Any]:
    """The keyword arguments of `chat.completions.create` for a suggestion of `shape`'s kind (the hole, or a next
    edit's window): the token limit named as for chats (models/openai_wire.py `token_limit`: OpenAI's reasoning
    models refuse `max_tokens`)."""
    from agent_lsp.models.openai_wire import token_limit

    return {"model": model, "messages": shape.chat_messages(prompt), "stop": [shape.STOP], "stream": True,
            token_limit(base_url): shape.max_tokens(prompt)}


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

