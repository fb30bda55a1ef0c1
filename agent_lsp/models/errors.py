"""An SDK's exception as the ModelError a user reads, once per provider family (Anthropic's Messages API,
OpenAI-compatible servers) for chats and suggestions alike. What differs between them is passed in, never written
twice: the name of the setting whose timeout ran out (a chat's `readTimeout`, `completions.timeout`), the wire
(`chat.completions`, `completions`), how many chunks came, whether tools or images were sent.

A caller catches `failures(sdk)` (the SDK imported by then) around its stream and raises what `anthropic_error`
or `openai_error` makes of it; a ModelError it raised itself (models/streams.py) is not among them."""

from __future__ import annotations

from typing import Any, Optional

from agent_lsp.core.ports import ModelError, images_refused
from agent_lsp.models.retry import asked_wait, certificate_refused

TOOL_MODELS = "qwen2.5-coder, qwen3, llama3.1, mistral-nemo or gpt-oss on Ollama; gpt-4.1 on OpenAI"
OPENAI_EXPECTED = ("Expected an OpenAI-compatible API; `baseUrl` is its root, usually ending in /v1 "
                   "(Ollama: http://127.0.0.1:11434/v1).")
_ANTHROPIC_OVERFLOW = ("prompt is too long", "context window", "too many tokens", "context_length")
_OPENAI_OVERFLOW = ("context length", "context_length", "context window", "maximum context", "too many tokens",
                    "prompt is too long")


def failures(sdk: Any) -> tuple[type[BaseException], ...]:
    """What a model stream of `sdk` (the `anthropic` or `openai` module) can fail with: the SDK's errors, the
    transport's, and what the SDK raises reading junk (a line not JSON, a delta without its start)."""
    import httpx2

    return (sdk.APIError, httpx2.TransportError, ValueError, LookupError, AssertionError, TypeError, AttributeError)


def anthropic_error(error: BaseException, url: str, timeout: float, setting: str, model: str = "",
                    images: bool = False) -> ModelError:
    """The ModelError for `error` of a Messages API stream at `url`, whose `timeout` is the `setting`'s seconds;
    `images`: the request carried images (a 400 then says the model may not take them)."""
    import anthropic

    common = _common(anthropic, error, url, timeout, setting)
    if common is not None:
        return common
    if isinstance(error, anthropic.APIStatusError):
        said = status_message(error)
        if error.status_code in (400, 413) and any(h in said.lower() for h in _ANTHROPIC_OVERFLOW):
            return ModelError("context_overflow", f"{url} answered {said}")
        if error.status_code == 200:  # an error event in the stream
            return ModelError("llm_error", f"The model stream from {url} sent an error: {said}")
        refused = images_refused(model, error.status_code, said) if images else None
        return refused or ModelError("llm_error", f"{url} answered {said}")
    if isinstance(error, anthropic.APIConnectionError):
        cause = error.__cause__ or error
        return ModelError("llm_error", unverified(error, url)
                          or f"Could not reach the model API at {url} ({describe(cause)}).")
    if isinstance(error, anthropic.APIError):
        return ModelError("llm_error", f"The model stream from {url} failed: {describe(error)}")
    return ModelError("llm_error", f"The model stream from {url} sent something that is not a Messages API event "
                                   f"({describe(error)}).")


def openai_error(error: BaseException, url: str, timeout: float, setting: str, model: str,
                 wire: str = "chat.completions", chunks: int = 0, tools: bool = False,
                 images: bool = False) -> ModelError:
    """The ModelError for `error` of a `wire` stream at `url` after `chunks` chunks, whose `timeout` is the
    `setting`'s seconds; `tools`, `images`: what the request carried (a 400 then names what the model lacks)."""
    import openai

    common = _common(openai, error, url, timeout, setting)
    if common is not None:
        return common
    if isinstance(error, openai.APIStatusError):
        return _status_error(error, model, url, tools, images)
    if isinstance(error, openai.APIConnectionError):
        if chunks:  # reached, then lost: not a wrong address
            return ModelError("llm_error", f"The model stream from {url} broke off after {_chunks(chunks)} "
                                           f"({describe(error.__cause__ or error)}).")
        return ModelError("llm_error", connection_message(error, url))
    if isinstance(error, openai.APIError):
        return ModelError("llm_error", f"The model stream from {url} failed: {describe(error)}")
    if chunks:  # a stream that began well and then broke: not a wrong address
        return ModelError("llm_error", f"The model stream from {url} sent a line that is not a {wire} chunk after "
                                       f"{_chunks(chunks)} ({describe(error)}).")
    return ModelError("llm_error", f"{url} sent something that is not a {wire} stream ({describe(error)}). "
                                   f"{OPENAI_EXPECTED}")


def _common(sdk: Any, error: BaseException, url: str, timeout: float, setting: str) -> Optional[ModelError]:
    """What both families say alike: a stream silent for longer than its timeout, a transport failure."""
    import httpx2

    if isinstance(error, (sdk.APITimeoutError, httpx2.TimeoutException)):
        return ModelError("llm_error", f"The model stream from {url} stalled: nothing arrived for {timeout:g} s "
                                       f"(the {setting} setting).")
    if isinstance(error, httpx2.TransportError):
        return ModelError("llm_error", f"The model stream from {url} failed: {describe(error)}")
    return None


def _status_error(error: Any, model: str, url: str, had_tools: bool, had_images: bool = False) -> ModelError:
    """The ModelError for an OpenAI-compatible server's error status, saying what was reached and what to do."""
    status, detail = error.status_code, error_detail(error)
    content_type = error.response.headers.get("content-type", "") if getattr(error, "response", None) else ""
    if "html" in content_type:
        return ModelError("llm_error", f"{url} answered {status} with an HTML page, not an OpenAI-compatible API. "
                          "Expected an OpenAI-compatible API; `baseUrl` is its root, usually ending in /v1.")
    lowered = detail.lower()
    if status in (400, 413) and any(h in lowered for h in _OPENAI_OVERFLOW):
        return ModelError("context_overflow", f"{status}: {detail}")
    if status == 400 and had_tools and "tool" in lowered:
        return ModelError("llm_error", f"The model `{model}` does not support tool calls (the server answered "
                          f"400: {detail}). agent-lsp needs a model with tool support, e.g. {TOOL_MODELS}; "
                          "set the `model` setting.")
    refused = images_refused(model, status, f"{status}: {detail}") if had_images else None
    if refused:
        return refused
    if status == 404:
        return ModelError("llm_error", f"{url} answered 404: {detail}. Check the `model` setting (`{model}`) and "
                          "that `baseUrl` is the root of an OpenAI-compatible API, usually ending in /v1.")
    if status in (401, 403):
        return ModelError("llm_error", f"{url} answered {status}: {detail}. Check OPENAI_API_KEY in the "
                          "environment the editor starts agent-lsp with.")
    return ModelError("llm_error", f"{status}: {detail}{_wait_asked(error)}")


def connection_message(error: Any, url: str) -> str:
    """An OpenAI-compatible server not reached at `url`, and what to check."""
    if said := unverified(error, url):
        return said
    cause = error.__cause__ or error.__context__
    why = describe(cause) if cause else describe(error)
    return (f"Could not reach the model API at {url} ({why}). Expected an OpenAI-compatible server there: check "
            "the `baseUrl` setting (or OPENAI_BASE_URL) and that the server is running.")


def status_message(error: Any) -> str:
    """"429 rate_limit_error: ..." from the API's error body, or the SDK's own words."""
    kind, said = error_body(error)
    message = bounded(said or getattr(error, "message", None) or str(error))
    prefix = " ".join(str(x) for x in (error.status_code if error.status_code != 200 else None, kind) if x)
    return f"{prefix}: {message}" if prefix else message


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


def _wait_asked(error: Any) -> str:
    """What the answer's retry-after asked for, when it did (a wait over a minute is not retried: say it)."""
    response = getattr(error, "response", None)
    asked = asked_wait(response.headers) if response is not None else None
    return f" (the server asks to retry after {round(asked, 1):g} s)" if asked is not None and asked >= 1 else ""


def error_detail(error: Any) -> str:
    """What an API's error says, bounded."""
    return bounded(error_body(error)[1] or getattr(error, "message", None) or str(error))


def _chunks(n: int) -> str:
    return f"{n} chunk" if n == 1 else f"{n} chunks"


def describe(error: Any) -> str:
    """"ReadError: connection reset", or the bare class name when the error says nothing; an HTTP/2 GOAWAY in
    words."""
    if (goaway := _goaway(error)) is not None:
        code = goaway.error_code
        return (f"the endpoint ended its HTTP/2 connection (GOAWAY, {getattr(code, 'name', code)}); the next "
                "request opens a new one")
    return f"{type(error).__name__}: {bounded(str(error))}" if str(error) else type(error).__name__


def _goaway(error: Any) -> Any:
    """The h2 ConnectionTerminated event behind `error` (the HTTP library raises it as its argument), or None."""
    while error is not None:
        if error.args and type(error.args[0]).__name__ == "ConnectionTerminated":
            return error.args[0]
        error = error.__cause__
    return None


def bounded(text: str, limit: int = 1000) -> str:
    """A server's words as far as a message shows them: an error of a megabyte went whole into the chat's result,
    the store and every client."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def unverified(error: BaseException, url: str) -> Optional[str]:
    """What to tell the user when `error` (a connection error, or what caused it) is a TLS certificate of `url`
    that does not verify; None when it is something else. Retrying cannot help, and "could not reach" would send
    them looking at the network."""
    refused = certificate_refused(error)
    if refused is None:
        return None
    return (f"The TLS certificate of {url} does not verify ({refused.verify_message or refused.reason}). If the "
            "endpoint uses a certificate authority of its own, name that authority's certificate in SSL_CERT_FILE "
            "in the environment agent-lsp starts with.")
