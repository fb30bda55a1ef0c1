"""Settings: validation that never raises, and precedence (chat > workspace > initializationOptions > env)."""

from __future__ import annotations

from dataclasses import field

from agent_lsp.config import (Layers, Settings, clean, default_data_dir, effective_max_turns, env_seconds,
                              environment_layer)
from agent_lsp.config.section import Section, integer, switch


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


# ---- the user's settings file (PROTOCOL §9) ----------------------------------------------------------------

def test_the_user_file_is_below_every_other_source(tmp_path):
    from agent_lsp.config import Layers, clean

    def layer(**values):
        return clean(values, "test")[0]

    layers = Layers(user_file=layer(model="user", maxTurns=1, maxTokens=2, contextWindow=3000, thinking="adaptive",
                                    compactThreshold=0.5),
                    environment=layer(model="env", maxTurns=11), initialization_options=layer(maxTokens=12),
                    workspace_file=layer(contextWindow=13000), workspace=layer(compactThreshold=0.6))
    s = layers.resolve({"max_turns": 7})
    assert (s.model, s.max_turns, s.max_tokens, s.context_window, s.compact_threshold, s.thinking) == (
        "env", 7, 12, 13000, 0.6, "adaptive")


def test_the_user_file_is_read_again_when_it_changes_and_warns_once_per_reading(tmp_path):
    import os

    from agent_lsp.config.user_file import UserSettingsFile

    path = tmp_path / "agent-lsp" / "settings.json"
    user = UserSettingsFile(path)
    assert (user.refresh(), user.layer) == ([], {})  # no file: nothing, quietly
    path.parent.mkdir()
    path.write_text('{"model": "a", "maxTurns": "lots"}')
    (warning,) = user.refresh()
    assert str(path) in warning and "`maxTurns`" in warning and "lots" not in warning
    assert user.layer == {"model": "a"}
    assert user.refresh() == []  # unchanged: not read again, not warned again
    path.write_text('{"model": "bb"}')
    os.utime(path, ns=(1, 1))  # a change within the same clock tick is still seen (size and time differ)
    assert (user.refresh(), user.layer) == ([], {"model": "bb"})


def test_a_user_file_that_cannot_be_taken_is_one_warning_naming_it_and_nothing_else(tmp_path):
    from agent_lsp.config.user_file import UserSettingsFile

    cases = {"not json": '{"mcpServers": {"x": {"headers": {"Authorization": "Bearer HIDDEN"}}}',
             "an array": "[1]", "a directory": None}
    for name, content in cases.items():
        path = tmp_path / name / "settings.json"
        path.parent.mkdir()
        path.mkdir() if content is None else path.write_text(content)
        user = UserSettingsFile(path)
        (warning,) = user.refresh()
        assert str(path) in warning and "ignored" in warning and "HIDDEN" not in warning, name
        assert user.layer == {}


def test_the_user_settings_path_follows_xdg_config_home(tmp_path):
    from agent_lsp.config.user_file import user_settings_path

    assert user_settings_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "agent-lsp" / "settings.json"
    assert str(user_settings_path({})).endswith("/.config/agent-lsp/settings.json")


# ---- settings objects (config/section.py) ------------------------------------------------------------------

def test_an_object_setting_keeps_its_good_keys_and_names_each_bad_one():
    good, warnings = clean({"webFetch": {"allowPrivate": "yes", "allowedDomains": ["Docs.Example.com"], "zz": 1,
                                         "timeout": None}}, "s")
    assert good == {"web_fetch": {"allow_private": False, "allowed_domains": ("docs.example.com",), "timeout": 30.0}}
    assert warnings == [
        "agent-lsp: setting `webFetch` from s `allowPrivate` must be true or false; using the default instead.",
        "agent-lsp: setting `webFetch` from s has an unknown key `zz` (allowPrivate, allowedDomains, timeout); "
        "it is ignored."]
    assert clean({"webFetch": "x"}, "s") == ({}, [
        "agent-lsp: setting `webFetch` from s must be an object with allowPrivate, allowedDomains, timeout; using "
        "the default instead."])


class Inner(Section):
    """An object nested in another (as `completions` in Settings)."""

    enabled: switch() = True
    """On."""
    max_lines: integer(1, 100) = 8
    """Lines."""


class Outer(Section):
    """An object holding another."""

    name: integer(0, 9) = 0
    """A digit."""
    inner: Inner = field(default_factory=Inner)
    """The inner object."""


def test_a_nested_section_is_checked_key_by_key_and_read_by_attribute():
    from agent_lsp.config.checks import checked

    outer, names, issues = checked(Outer, {"name": 3, "inner": {"enabled": False, "maxLines": 0}})
    assert (outer.name, outer.inner.enabled, outer.inner.max_lines, names) == (3, False, 8, ["name", "inner"])
    assert [(i.key, i.text, i.outcome) for i in issues] == [
        ("inner", "`maxLines` must be an integer from 1 to 100; using the default instead", "kept")]
    assert Outer() == Outer(name=0, inner=Inner()) and Outer().inner == {"enabled": True, "max_lines": 8}


def test_checking_settings_loads_pydantic_only_when_there_is_a_setting_to_check():
    import subprocess
    import sys

    code = ("import sys; from agent_lsp.config import Layers, clean; clean({}, 's'); clean(None, 's'); "
            "Layers().resolve({'model': 'm'}); print('pydantic' in sys.modules); clean({'model': 'm'}, 's'); "
            "print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_a_wait_from_the_environment_is_seconds_at_least_zero_or_the_default():
    assert [env_seconds("WAIT", 10.0, env) for env in ({}, {"WAIT": "2.5"}, {"WAIT": "0"}, {"WAIT": "-1"},
                                                       {"WAIT": "soon"}, {"WAIT": ""})] == [10.0, 2.5, 0.0, 10.0,
                                                                                            10.0, 10.0]
