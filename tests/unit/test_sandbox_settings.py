"""The `sandbox` setting: checked key by key (a bad key is a warning naming it, the rest applies), stacked key by
key across the layers, and a workspace's settings file that may turn it on, never off."""

from __future__ import annotations

import json

from agent_lsp.config import Layers, clean
from agent_lsp.config.sandbox import SandboxSettings
from agent_lsp.config.workspace_file import read_settings_files


def test_a_valid_setting(tmp_path):
    values, warnings = clean({"sandbox": {"enabled": True, "network": True, "writable": [str(tmp_path)],
                                          "autoAllow": False}}, "initializationOptions")
    assert warnings == []
    assert values == {"sandbox": SandboxSettings(enabled=True, network=True, writable=(str(tmp_path),),
                                                 auto_allow=False)}


def test_each_bad_key_is_named_and_the_others_apply(tmp_path):
    values, warnings = clean({"sandbox": {"enabled": True, "network": "yes", "autoAllow": 1, "net": True,
                                          "writable": [str(tmp_path), f"{tmp_path}/gone", "relative/dir"]}},
                             "initializationOptions")
    assert values == {"sandbox": SandboxSettings(enabled=True, writable=(str(tmp_path),))}
    assert values["sandbox"].model_fields_set == {"enabled", "writable"}  # the bad keys leave the lower layers' own
    assert warnings == [
        "agent-lsp: setting `sandbox` from initializationOptions has problems: `sandbox.network` must be true or "
        "false (its default applies); `sandbox.autoAllow` must be true or false (its default applies); "
        "`sandbox.net` is unknown (enabled, network, writable, autoAllow); the `sandbox.writable` path "
        f"`{tmp_path}/gone` does not exist (left out); the `sandbox.writable` path `relative/dir` is not absolute "
        "(left out)."]


def test_a_setting_that_is_not_an_object():
    assert clean({"sandbox": True}, "the user settings file") == ({}, [
        "agent-lsp: setting `sandbox` from the user settings file must be an object with enabled, network, writable, "
        "autoAllow; using the default instead."])
    assert clean({"sandbox": {"writable": "/tmp"}}, "x")[1] == [
        "agent-lsp: setting `sandbox` from x has problems: `sandbox.writable` must be a list of absolute paths (its "
        "default applies)."]


def test_a_home_relative_writable_path_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".cache").mkdir()
    assert clean({"sandbox": {"writable": ["~/.cache"]}}, "x") == (
        {"sandbox": SandboxSettings(writable=(f"{tmp_path}/.cache",))}, [])


def test_layers_stack_key_by_key():
    assert Layers().resolve().sandbox is None  # no source set it: off
    layers = Layers(user_file=clean({"sandbox": {"network": True, "autoAllow": False}}, "user")[0],
                    initialization_options=clean({"sandbox": {"enabled": True}}, "init")[0],
                    workspace=clean({"sandbox": {"autoAllow": True, "network": "bad"}}, "ws")[0])
    assert layers.resolve().sandbox == SandboxSettings(enabled=True, network=True, auto_allow=True)


def test_a_workspace_file_may_turn_the_sandbox_on_and_tighten_it(tmp_path):
    (tmp_path / ".agent-lsp").mkdir()
    (tmp_path / ".agent-lsp" / "settings.json").write_text(json.dumps(
        {"sandbox": {"enabled": True, "network": False, "autoAllow": False}}))
    layer, warnings = read_settings_files(tmp_path).layer(trusted=False)
    assert (layer, warnings) == ({"sandbox": SandboxSettings(enabled=True, network=False, auto_allow=False)}, [])
    user = clean({"sandbox": {"network": True}}, "user")[0]
    assert Layers(user_file=user, workspace_file=layer).resolve().sandbox == SandboxSettings(
        enabled=True, network=False, auto_allow=False)


def test_a_workspace_file_never_turns_the_sandbox_off_or_loosens_it(tmp_path):
    (tmp_path / ".agent-lsp").mkdir()
    (tmp_path / ".agent-lsp" / "settings.json").write_text(json.dumps(
        {"sandbox": {"enabled": False, "network": True, "writable": [str(tmp_path)], "autoAllow": True}}))
    layer, warnings = read_settings_files(tmp_path).layer(trusted=False)
    source = tmp_path / ".agent-lsp" / "settings.json"
    assert warnings == [f"agent-lsp: `sandbox.{key}` from {source} is ignored: a workspace's settings file may turn "
                        "the sandbox on or tighten it, never turn it off or loosen it."
                        for key in ("enabled", "network", "writable", "autoAllow")]
    user = clean({"sandbox": {"enabled": True, "autoAllow": False}}, "user")[0]
    assert Layers(user_file=user, workspace_file=layer).resolve().sandbox == SandboxSettings(
        enabled=True, auto_allow=False)
