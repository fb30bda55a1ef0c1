"""Which model a chat uses, from its settings (PROTOCOL §0, §1)."""

from __future__ import annotations

import ipaddress
import os
from typing import Mapping, Optional
from urllib.parse import urlparse

from agent_lsp.config import DEFAULT_MODEL, Settings
from agent_lsp.core.ports import Model, ModelError

NO_PROVIDER = (
    "No model provider is configured. Set ANTHROPIC_API_KEY in the environment the editor starts agent-lsp with, "
    "or choose the offline demo model with `--model demo` (or the `model` setting \"demo\")."
)


def provider_of(settings: Settings, env: Mapping[str, str] = os.environ) -> Optional[str]:
    """The provider chats use: the `provider` setting, else anthropic when its key is in the environment."""
    if settings.provider:
        return settings.provider
    return "anthropic" if env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN") else None


def model_name(settings: Settings, env: Mapping[str, str] = os.environ) -> str:
    """The model chats use by name: the `model` setting, else DEFAULT_MODEL for anthropic, else "" (none).

    The one place the default is decided: build_model, the catalog and `initialize`'s answer all ask here."""
    return settings.model or (DEFAULT_MODEL if provider_of(settings, env) == "anthropic" else "")


def build_model(settings: Settings, env: Mapping[str, str] = os.environ) -> Model:
    """The model the settings choose; raises ModelError("initialization_failed") when none can be had."""
    model = settings.model or ""
    if settings.provider == "demo" or model == "demo":
        from agent_lsp.models.demo import DemoModel

        return DemoModel()
    if model.startswith("script:"):
        from agent_lsp.models.scripted import ScriptedModel

        return ScriptedModel.from_file(model.removeprefix("script:"))
    if settings.provider == "openai":
        base_url, key = openai_endpoint(settings, env)
        if not model:
            raise ModelError("initialization_failed", "The openai provider needs the `model` setting (the model's "
                             "name as the server knows it, e.g. \"qwen2.5-coder:7b\" on Ollama or \"gpt-4.1\").")
        from agent_lsp.models.openai import OpenAIModel

        return OpenAIModel(model, base_url, key, read_timeout=settings.read_timeout)
    has_key = bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))
    if provider_of(settings, env) == "anthropic":
        if not has_key:
            raise ModelError("initialization_failed", "The anthropic provider needs ANTHROPIC_API_KEY. " + NO_PROVIDER)
        _refuse_paid_api_under_tests(settings.base_url or env.get("ANTHROPIC_BASE_URL"), env)
        from agent_lsp.models.anthropic import AnthropicModel

        return AnthropicModel(model_name(settings, env), base_url=settings.base_url,
                              read_timeout=settings.read_timeout)
    raise ModelError("initialization_failed", NO_PROVIDER)


def openai_endpoint(settings: Settings, env: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """The base URL (`baseUrl`, else OPENAI_BASE_URL, else OpenAI's) and key of the openai provider.

    A key comes only from OPENAI_API_KEY; with a base URL set and no key, a placeholder goes (local servers need
    none, the SDK wants one). Raises ModelError("initialization_failed") when neither is there.
    """
    from agent_lsp.models.openai import DEFAULT_BASE_URL, PLACEHOLDER_KEY

    base_url = settings.base_url or env.get("OPENAI_BASE_URL") or None
    key = env.get("OPENAI_API_KEY") or ""
    if not key and not base_url:
        raise ModelError("initialization_failed", "The openai provider needs OPENAI_API_KEY in the environment "
                         "the editor starts agent-lsp with, or the `baseUrl` setting for a local server (Ollama, "
                         "vLLM, LM Studio), which needs no key.")
    _refuse_paid_api_under_tests(base_url or DEFAULT_BASE_URL, env)
    return base_url or DEFAULT_BASE_URL, key or PLACEHOLDER_KEY


def _refuse_paid_api_under_tests(base_url: str | None, env: Mapping[str, str]) -> None:
    """Under AGENT_LSP_OFFLINE=1 (set by the test suites) only a loopback base URL is allowed."""
    if env.get("AGENT_LSP_OFFLINE") != "1":
        return
    host = urlparse(base_url or "https://api.anthropic.com").hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ModelError("initialization_failed", f"AGENT_LSP_OFFLINE=1 refuses the non-loopback model API {base_url}.")
