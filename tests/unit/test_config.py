"""Settings: validation that never raises, and precedence (chat > workspace > initializationOptions > env)."""

from __future__ import annotations

from agent_lsp.config import Layers, Settings, clean, default_data_dir, effective_max_turns, environment_layer


def test_precedence_highest_first():
    layers = Layers(
        environment=clean({"model": "env-model", "maxTurns": 5, "provider": "demo"}, "env")[0],
        initialization_options=clean({"model": "init-model", "maxTurns": 6, "permissionMode": "plan"}, "init")[0],
        workspace=clean({"model": "ws-model", "permissionMode": "acceptEdits"}, "ws")[0],
    )
    assert layers.resolve() == Settings(provider="demo", model="ws-model", max_turns=6, permission_mode="acceptEdits")
    chat = layers.resolve({"model": "chat-model", "max_turns": None, "permission_mode": "bypassPermissions"})
    assert (chat.model, chat.max_turns, chat.permission_mode) == ("chat-model", 6, "bypassPermissions")


def test_bad_values_are_warnings_naming_the_field_and_never_raise():
    values, warnings = clean({"maxTurns": 101, "thinking": {"budgetTokens": 10}, "provider": "gpt", "x": 1,
                              "compactThreshold": 0.5, "baseUrl": "  "}, "initializationOptions")
    assert values == {"compact_threshold": 0.5}
    assert warnings == [
        "agent-lsp: setting `maxTurns` from initializationOptions must be an integer from -1 to 100; using the default instead.",
        'agent-lsp: setting `thinking` from initializationOptions must be {"budgetTokens": N} with N >= 1024, '
        '"adaptive", or false; using the default instead.',
        "agent-lsp: setting `provider` from initializationOptions must be one of anthropic, openai, demo; "
        "using the default instead.",
        "agent-lsp: unknown setting `x` from initializationOptions is ignored.",
        "agent-lsp: setting `baseUrl` from initializationOptions must be a non-empty string; using the default instead.",
    ]
    assert clean(["not", "an", "object"], "workspace configuration") == (
        {}, ["agent-lsp: the settings from workspace configuration must be an object; they are ignored."])
    assert clean(None, "x") == ({}, [])


def test_the_clients_own_keys_are_ignored_without_a_warning():
    section = {"serverCommand": "~/.venvs/agent-lsp/bin/agent-lsp", "serverArgs": ["--log-level", "INFO"],
               "trace": {"server": "verbose"}, "model": "claude-x"}
    assert clean(section, "workspace configuration") == ({"model": "claude-x"}, [])


def test_thinking_forms():
    assert clean({"thinking": {"budgetTokens": 2048}}, "s")[0] == {"thinking": 2048}
    assert clean({"thinking": "adaptive"}, "s")[0] == {"thinking": "adaptive"}
    assert clean({"thinking": False}, "s")[0] == {"thinking": None}


def test_environment_and_command_line():
    env = {"AGENT_LSP_MODEL": "m1", "AGENT_LSP_PROVIDER": "demo"}
    assert environment_layer(None, env) == {"provider": "demo", "model": "m1"}
    assert environment_layer("demo", env)["model"] == "demo"


def test_max_turns_unlimited_is_the_hard_cap():
    assert [effective_max_turns(v) for v in (-1, 0, 7, 100)] == [100, 0, 7, 100]


def test_default_data_dir():
    assert str(default_data_dir({"XDG_STATE_HOME": "/x/state"})) == "/x/state/agent-lsp"
    assert str(default_data_dir({})).endswith(".local/state/agent-lsp")
