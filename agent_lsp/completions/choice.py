"""Which model suggestions use (PROTOCOL §10), decided in this one function from the chat's settings and
`completions` (to be folded into the model resolver of models/)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal, Mapping, Optional

from agent_lsp.config import Settings
from agent_lsp.config.completions import CompletionSettings
from agent_lsp.core.ports import ModelError

SMALL_MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4.1-mini"}
"""Each provider's small, fast model: suggestions' default (openai's only on OpenAI's own API; elsewhere the chat's
model, since a local server has only the models it has)."""


@dataclass(frozen=True)
class Choice:
    """The model suggestions use, or why there is none (`problem`; both None: nothing is configured)."""

    provider: Optional[Literal["anthropic", "openai", "demo", "script"]]
    model: str = ""
    base_url: Optional[str] = None
    """None: the SDK's own (ANTHROPIC_BASE_URL)."""
    api_key: Optional[str] = None
    """openai only (the anthropic SDK reads its own)."""
    api: Literal["chat", "fim"] = "chat"
    timeout: float = 10.0
    problem: Optional[str] = None


def choose(settings: Settings, completions: CompletionSettings, env: Mapping[str, str] = os.environ) -> Choice:
    """The model for suggestions: `completions.provider`/`model`/`baseUrl`/`api` where set; otherwise the chat's
    provider and `baseUrl`, and the chat's model when that is `demo` or `script:FILE`, else the provider's small one."""
    from agent_lsp.models.registry import _refuse_paid_api_under_tests, openai_endpoint, provider_of  # one rule

    chat_model = settings.model or ""
    offline = chat_model == "demo" or chat_model.startswith("script:") or settings.provider == "demo"
    model = completions.model or (chat_model or "demo" if offline and not completions.provider else "")
    timeout = completions.timeout
    if model == "demo":
        return Choice("demo", "demo", timeout=timeout)
    if model.startswith("script:"):
        return Choice("script", model, timeout=timeout)
    provider = completions.provider or provider_of(settings, env)
    base_url = completions.base_url or settings.base_url
    if provider not in ("anthropic", "openai"):
        return Choice(None)
    if completions.api == "fim" and provider != "openai":
        return Choice(provider, problem="`completions.api` \"fim\" needs the openai provider (an OpenAI-compatible "
                                        "server's legacy completions endpoint); suggestions are off until it changes.")
    try:
        if provider == "anthropic":
            if not (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")):
                return Choice(provider, problem="Suggestions use the anthropic provider, which needs "
                                                "ANTHROPIC_API_KEY in the environment agent-lsp starts with.")
            _refuse_paid_api_under_tests(base_url or env.get("ANTHROPIC_BASE_URL"), env)
            return Choice(provider, model or SMALL_MODELS[provider], base_url, timeout=timeout)
        url, key = openai_endpoint(replace(settings, base_url=base_url), env)
    except ModelError as e:
        return Choice(provider, problem=str(e))
    from agent_lsp.models.openai import DEFAULT_BASE_URL

    model = model or (SMALL_MODELS[provider] if url == DEFAULT_BASE_URL else chat_model)
    if not model:
        return Choice(provider, problem="Suggestions from an OpenAI-compatible server need the `completions.model` "
                                        "(or `model`) setting: the model's name as the server knows it.")
    return Choice(provider, model, url, key, completions.api, timeout)
