"""What every model stream checks, for chats and suggestions of both provider families alike (Anthropic's Messages
API, OpenAI-compatible servers): the timeouts, an HTML page instead of the API (a proxy's login page), an answer
with no events, a stream cut before its end, and what an API's error body says."""

from __future__ import annotations

from typing import Any, Optional

from agent_lsp.core.ports import ModelError

READ_TIMEOUT = 120.0
"""Seconds a chat's model stream may stay silent (the readTimeout setting's default)."""
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


def broke_off(url: str) -> ModelError:
    """A stream cut before its stop or finish reason: a failure, never a suggestion of the part that came."""
    return ModelError("llm_error", f"The model stream from {url} broke off before its end.")


def error_body(error: Any) -> tuple[Optional[str], Optional[str]]:
    """(type, message) that an SDK's API error's body says (`{"error": {"type", "message"}}`, or those at its top,
    or a string), each None when it does not say."""
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, dict):
        kind, message = inner.get("type"), inner.get("message")
        return (str(kind) if kind else None), (str(message) if message else None)
    if isinstance(inner, str) and inner.strip():
        return None, inner.strip()
    return None, None
