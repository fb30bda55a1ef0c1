"""What every model stream checks, for chats and suggestions of both provider families alike (Anthropic's Messages
API, OpenAI-compatible servers): the timeouts, an HTML page instead of the API (a proxy's login page), an answer
with no events, a stream cut before its end. What an SDK's exception becomes is models/errors.py's."""

from __future__ import annotations

from typing import Any

from agent_lsp.config import READ_TIMEOUT  # noqa: F401 (the models' default, decided in config/)
from agent_lsp.core.ports import ModelError
CONNECT_TIMEOUT = 10.0
"""Seconds at most to connect (never more than the read timeout): a stalled handshake fails fast."""
MESSAGES_API = "the Messages API"
OPENAI_API = "an OpenAI-compatible API"


def timeouts(read: float) -> Any:
    """The SDK clients' timeouts for a read timeout of `read` seconds (the SDK's HTTP library imported here: only
    when a client is made)."""
    import httpx2

    return httpx2.Timeout(read, connect=min(CONNECT_TIMEOUT, read))


def refuse_page(content_type: str, url: str, api: str, advice: str = "") -> None:
    """Raise ModelError when a 200 answer is an HTML page, not `api`."""
    if "html" in content_type:
        raise ModelError("llm_error", f"{url} answered 200 with an HTML page ({content_type}), not {api}."
                                      + (f" {advice}" if advice else ""))


def no_events(url: str, content_type: str, what: str, advice: str = "") -> ModelError:
    """A 200 answer that sent none of `what` (events, chunks)."""
    return ModelError("llm_error", f"{url} answered 200 ({content_type or 'no content-type'}) but sent no {what}."
                                   + (f" {advice}" if advice else ""))


def broke_off(url: str, why: str = "") -> ModelError:
    """A stream cut before its stop or finish reason (`why`: what was missing): a failure, never a chat's reply
    or a suggestion of the part that came."""
    detail = f" ({why})" if why else ""
    return ModelError("llm_error", f"The model stream from {url} broke off before its end{detail}.")
