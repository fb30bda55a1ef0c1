"""models/resolver.py: which model the settings choose (chats and suggestions), and what it refuses."""

from __future__ import annotations

import pytest

from agent_lsp.config import Settings
from agent_lsp.core.ports import ModelError
from agent_lsp.models.openai import OpenAIModel
from agent_lsp.models.resolver import build_model

OPENAI = Settings(provider="openai", model="qwen2.5-coder:7b")


def failure(settings: Settings, env: dict) -> ModelError:
    with pytest.raises(ModelError) as error:
        build_model(settings, env)
    assert error.value.type == "initialization_failed"
    return error.value


def test_base_url_setting_beats_the_environment_and_a_local_server_needs_no_key():
    model = build_model(Settings(provider="openai", model="m", base_url="http://127.0.0.1:11434/v1"),
                        {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(model, OpenAIModel)
    assert (model.name, model.base_url, model.api_key) == ("m", "http://127.0.0.1:11434/v1", "not-needed")
    model = build_model(OPENAI, {"OPENAI_BASE_URL": "http://localhost:8000/v1", "OPENAI_API_KEY": "sk-1"})
    assert (model.base_url, model.api_key) == ("http://localhost:8000/v1", "sk-1")
    assert build_model(OPENAI, {"OPENAI_API_KEY": "sk-1"}).base_url == "https://api.openai.com/v1"


def test_the_model_setting_is_required():
    assert "`model` setting" in failure(Settings(provider="openai"), {"OPENAI_API_KEY": "sk"}).message


def test_no_key_and_no_base_url_names_both():
    message = failure(OPENAI, {}).message
    assert "OPENAI_API_KEY" in message and "`baseUrl`" in message


def test_offline_refuses_a_non_loopback_api_as_for_anthropic():
    offline = {"AGENT_LSP_OFFLINE": "1", "OPENAI_API_KEY": "sk"}
    assert "api.openai.com" in failure(OPENAI, offline).message
    assert "example.com" in failure(Settings(provider="openai", model="m", base_url="https://example.com/v1"),
                                    offline).message
    assert build_model(Settings(provider="openai", model="m", base_url="http://[::1]:8080/v1"), offline)


def test_one_sdk_client_per_base_url_and_key_for_the_whole_process():
    import agent_lsp.models.openai as provider
    from agent_lsp.models import clients

    first = build_model(Settings(provider="openai", model="a", base_url="http://127.0.0.1:7/v1"), {})
    second = build_model(Settings(provider="openai", model="b", base_url="http://127.0.0.1:7/v1"), {})
    other = build_model(Settings(provider="openai", model="a", base_url="http://127.0.0.1:7/v1"),
                        {"OPENAI_API_KEY": "sk-2"})
    try:
        client = provider.client_for(first.base_url, first.api_key)
        assert provider.client_for(second.base_url, second.api_key) is client
        assert provider.client_for(other.base_url, other.api_key) is not client
        assert (str(client.base_url), client.api_key) == ("http://127.0.0.1:7/v1/", "not-needed")
    finally:
        clients.forget("openai")


def test_the_openai_sdk_is_warmed_after_initialized_when_chats_would_use_it():
    from agent_lsp.lsp.warmup import WARM_MODULES, warm_modules

    assert warm_modules(OPENAI, {}) == ("agent_lsp.lsp.handlers", "agent_lsp.models.openai", "openai", "httpx2")
    assert warm_modules(Settings(provider="openai", model="demo"), {}) == ()
    assert warm_modules(Settings(), {"ANTHROPIC_API_KEY": "k"}) == WARM_MODULES
