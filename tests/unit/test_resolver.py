"""models/resolver.py: which model the settings choose (chats and suggestions), and what it refuses."""

from __future__ import annotations

import pytest

from agent_lsp.config import DEFAULT_MODEL, Settings
from agent_lsp.core.ports import ModelError
from agent_lsp.models.openai import OpenAIModel
from agent_lsp.models.resolver import (SDK_MODULES, SUGGESTION_MODELS, ModelChoice, build, build_model, resolve,
                                       resolve_completions)

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


KEY = {"ANTHROPIC_API_KEY": "k"}


def test_one_answer_for_a_chat_the_provider_model_endpoint_key_and_sdk():
    anthropic = resolve(Settings(), {"ANTHROPIC_AUTH_TOKEN": "t", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert anthropic == ModelChoice("anthropic", DEFAULT_MODEL, None, "http://127.0.0.1:9", "ANTHROPIC_AUTH_TOKEN",
                                    SDK_MODULES["anthropic"])
    assert resolve(Settings(model="demo", provider="openai"), KEY) == ModelChoice("demo", "demo")
    assert resolve(Settings(provider="demo", model="script:/x.json"), {}) == ModelChoice("demo", "demo")
    assert resolve(Settings(model="script:/x.json"), KEY) == ModelChoice("scripted", "script:/x.json")
    assert resolve(OPENAI, {"OPENAI_API_KEY": "sk"}) == ModelChoice(
        "openai", "qwen2.5-coder:7b", "https://api.openai.com/v1", "https://api.openai.com/v1", "OPENAI_API_KEY",
        SDK_MODULES["openai"])
    none = resolve(Settings(model="claude-x"), {})
    assert (none.provider, none.model, none.endpoint, none.sdk, none.lacks) == ("none", "claude-x", None, (), "provider")
    assert none.problem.startswith("No model provider is configured. Set ANTHROPIC_API_KEY")


def test_what_is_missing_is_named_in_the_order_a_user_fixes_it():
    assert resolve(Settings(provider="anthropic"), {}).lacks == "key"
    assert resolve(Settings(provider="openai"), {}).lacks == "key"  # the key before the model
    assert resolve(Settings(provider="openai"), {"OPENAI_API_KEY": "sk"}).lacks == "model"
    offline = resolve(Settings(), {**KEY, "AGENT_LSP_OFFLINE": "1"})
    assert (offline.lacks, offline.problem) == (
        "loopback", "AGENT_LSP_OFFLINE=1 refuses the non-loopback model API https://api.anthropic.com.")
    assert resolve(Settings(base_url="http://localhost:8/"), {**KEY, "AGENT_LSP_OFFLINE": "1"}).problem is None


def test_suggestions_default_to_the_chats_provider_and_its_small_fast_model():
    haiku = resolve_completions(Settings(base_url="http://127.0.0.1:5"), env=KEY)
    assert (haiku.provider, haiku.model, haiku.base_url, haiku.api, haiku.problem) == (
        "anthropic", SUGGESTION_MODELS["anthropic"], "http://127.0.0.1:5", "chat", None)
    assert resolve_completions(Settings(model="claude-opus-x"), model="claude-y", env=KEY).model == "claude-y"
    assert resolve_completions(Settings(model="demo"), env=KEY) == ModelChoice("demo", "demo")
    assert resolve_completions(Settings(model="script:/s.json"), env=KEY).model == "script:/s.json"


def test_suggestions_from_openai_take_the_chats_model_or_need_their_own():
    local = Settings(provider="openai", model="qwen2.5-coder:7b", base_url="http://127.0.0.1:11434/v1")
    fim = resolve_completions(local, api="fim", env={})
    assert (fim.provider, fim.model, fim.base_url, fim.key, fim.api, fim.problem) == (
        "openai", "qwen2.5-coder:7b", "http://127.0.0.1:11434/v1", None, "fim", None)
    assert resolve_completions(local, model="qwen2.5-coder:1.5b-base", env={}).model == "qwen2.5-coder:1.5b-base"
    # chats on anthropic, suggestions on a local server: the chat's model and baseUrl are not the server's
    other = resolve_completions(Settings(base_url="http://127.0.0.1:5"), provider="openai",
                                base_url="http://127.0.0.1:11434/v1", env=KEY)
    assert (other.provider, other.lacks) == ("openai", "model") and "`completions.model`" in other.problem
    assert resolve_completions(Settings(base_url="http://127.0.0.1:5"), provider="openai", model="m",
                               env={**KEY, "OPENAI_API_KEY": "sk"}).base_url == "https://api.openai.com/v1"


def test_fim_is_for_openai_only():
    refused = resolve_completions(Settings(), api="fim", env=KEY)
    assert (refused.provider, refused.lacks) == ("anthropic", "api") and "openai" in refused.problem
    with pytest.raises(ModelError):
        build(refused, KEY)


def test_the_default_suggestion_model_is_the_newest_haiku_the_sdk_knows():
    """The fast model, current: of the Haiku names the installed `anthropic` SDK lists, the newest (a newer SDK
    with a newer Haiku makes this fail until the default follows)."""
    import re
    import typing

    from anthropic.types.model import Model

    names = [n for arg in typing.get_args(Model) for n in typing.get_args(arg) if isinstance(n, str)]
    haikus = [n for n in names if re.fullmatch(r"claude-haiku-\d+(-\d+)?", n)]
    newest = max(haikus, key=lambda n: tuple(int(x) for x in n.split("-")[2:]))
    assert SUGGESTION_MODELS["anthropic"] == newest


@pytest.mark.parametrize("base_url, name", [("https://api.openai.com/v1", "max_completion_tokens"),
                                            ("http://127.0.0.1:11434/v1", "max_tokens")])
def test_suggestions_name_the_token_limit_as_chats_do(base_url, name):
    """OpenAI's reasoning models refuse `max_tokens`: a suggestion asks as a chat does at the same URL."""
    from agent_lsp.completions.prompt import CompletionPrompt
    from agent_lsp.completions.providers.openai import chat_request
    from agent_lsp.core.ports import ModelRequest
    from agent_lsp.models.openai_wire import api_request

    suggestion = chat_request("o4-mini", CompletionPrompt("a.py", "python", "x = ", "\n"), base_url)
    chat = api_request("o4-mini", ModelRequest(system="s", messages=[], tools=[]), base_url)
    assert name in suggestion and name in chat
    assert {"max_tokens", "max_completion_tokens"} - {name} & (suggestion.keys() | chat.keys()) == set()
