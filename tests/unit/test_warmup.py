"""Which settings warm the anthropic SDK after `initialized`: exactly those whose chats would use it."""

from __future__ import annotations

import pytest

from agent_lsp.config import Settings
from agent_lsp.models.anthropic import AnthropicModel
from agent_lsp.models.resolver import build_model, resolve

KEY = {"ANTHROPIC_API_KEY": "k"}


@pytest.mark.parametrize("settings, env, expected", [
    (Settings(), KEY, True),
    (Settings(), {"ANTHROPIC_AUTH_TOKEN": "t"}, True),
    (Settings(provider="anthropic"), {}, True),  # the chat will say the key is missing; warming is harmless
    (Settings(), {}, False),
    (Settings(model="demo"), KEY, False),
    (Settings(provider="demo"), KEY, False),
    (Settings(model="script:/tmp/x.json"), KEY, False),
    (Settings(provider="openai", model="gpt"), KEY, False),
])
def test_warm_exactly_when_a_chat_would_use_the_sdk(settings, env, expected):
    assert ("anthropic" in resolve(settings, env).sdk) is expected
    if expected and env:
        assert isinstance(build_model(settings, env), AnthropicModel)
