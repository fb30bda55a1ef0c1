"""The `completions` setting checked key by key, its layers, the model suggestions use (completions/choice.py), the
exclusions, what the model sees (completions/context.py), and LSP positions at the edge (lsp/inline_completion.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_lsp.completions.choice import Choice, choose
from agent_lsp.completions.context import excluded, names_before, windows
from agent_lsp.config import Layers, Settings, clean
from agent_lsp.config.completions import CompletionSettings, completion_settings
from agent_lsp.lsp.inline_completion import offset_of, parse

KEY = {"ANTHROPIC_API_KEY": "k"}


def test_each_bad_key_is_a_warning_naming_it_and_the_rest_applies():
    good, warnings = clean({"completions": {"enabled": "yes", "model": " small ", "maxLines": 0, "api": "fim",
                                            "exclude": ["*.secret"], "colour": "red", "timeout": 2.5}}, "the file")
    assert good == {"completions": {"model": "small", "api": "fim", "exclude": ["*.secret"], "timeout": 2.5}}
    assert warnings == ["agent-lsp: setting `completions` from the file has bad values: `completions.enabled` input "
                        "should be a valid boolean; `completions.maxLines` input should be greater than or equal to 1; "
                        "`completions.colour` is not a setting of suggestions (their defaults apply)."]
    assert clean({"completions": [1]}, "x")[1] == [
        "agent-lsp: setting `completions` from x must be an object (enabled, provider, model, baseUrl, api, exclude, "
        "maxLines, timeout); using the default instead."]


def test_each_key_of_a_higher_layer_replaces_only_that_key():
    layers = Layers(user_file=clean({"completions": {"model": "a", "maxLines": 3}}, "u")[0],
                    workspace=clean({"completions": {"model": "b"}}, "w")[0])
    assert completion_settings(layers.resolve().completions) == CompletionSettings(model="b", max_lines=3)
    assert completion_settings({}) == CompletionSettings()


@pytest.mark.parametrize("settings, completions, env, choice", [
    (Settings(), {}, KEY, Choice("anthropic", "claude-haiku-4-5")),
    (Settings(model="claude-sonnet-5-5", base_url="http://127.0.0.1:9"), {}, KEY,
     Choice("anthropic", "claude-haiku-4-5", "http://127.0.0.1:9")),
    (Settings(), {"model": "claude-x", "timeout": 3}, KEY, Choice("anthropic", "claude-x", timeout=3)),
    (Settings(model="demo"), {}, {}, Choice("demo", "demo")),
    (Settings(provider="demo"), {}, {}, Choice("demo", "demo")),
    (Settings(model="script:/s.json"), {}, {}, Choice("script", "script:/s.json")),
    (Settings(model="demo"), {"provider": "anthropic"}, KEY, Choice("anthropic", "claude-haiku-4-5")),
    (Settings(), {}, {}, Choice(None)),
    (Settings(provider="openai", model="qwen2.5-coder:7b", base_url="http://127.0.0.1:11434/v1"), {"api": "fim"}, {},
     Choice("openai", "qwen2.5-coder:7b", "http://127.0.0.1:11434/v1", "not-needed", "fim")),
    (Settings(provider="anthropic"), {"provider": "openai", "baseUrl": "http://127.0.0.1:8/v1", "model": "m"}, KEY,
     Choice("openai", "m", "http://127.0.0.1:8/v1", "not-needed")),
    (Settings(provider="openai"), {}, {"OPENAI_API_KEY": "k"},
     Choice("openai", "gpt-4.1-mini", "https://api.openai.com/v1", "k")),
], ids=["anthropic's small model", "the chat's baseUrl", "completions.model", "demo", "the demo provider", "script",
        "completions.provider over demo", "nothing configured", "fim on Ollama", "their own provider and server",
        "openai's small model"])
def test_the_model_suggestions_use(settings, completions, env, choice):
    assert choose(settings, CompletionSettings(**completions), env) == choice


@pytest.mark.parametrize("settings, completions, env, problem", [
    (Settings(provider="anthropic"), {}, {}, "ANTHROPIC_API_KEY"),
    (Settings(), {"provider": "anthropic", "api": "fim"}, KEY, "`completions.api` \"fim\" needs the openai provider"),
    (Settings(provider="openai", base_url="http://127.0.0.1:1/v1"), {}, {}, "`completions.model`"),
    (Settings(), {"baseUrl": "https://api.example.com"}, {**KEY, "AGENT_LSP_OFFLINE": "1"}, "non-loopback"),
])
def test_a_choice_that_cannot_work_says_why(settings, completions, env, problem):
    choice = choose(settings, CompletionSettings(**completions), env)
    assert choice.problem is not None and problem in choice.problem


@pytest.mark.parametrize("name, patterns, out", [
    (".env", (), True), (".env.local", (), True), ("deploy/server.pem", (), True), ("id_ed25519.pub", (), True),
    ("app.py", (), False), ("secrets/db.py", ("secrets/*",), True), ("src/secrets/db.py", ("secrets/*",), False),
    ("a/b/c.secret.py", ("*.secret.py",), True),
])
def test_exclusions(name, patterns, out):
    root = Path("/ws")
    assert excluded((root / name).as_uri(), root / name, [root], patterns) is out


def test_windows_start_and_end_at_lines():
    text = "".join(f"line {n}\n" for n in range(2000))
    offset = text.index("line 1000\n") + 4
    prefix, suffix, stable = windows(text, offset)
    assert prefix.startswith("line ") and prefix.endswith("\nline") and 5900 < len(prefix) <= 6000
    assert suffix.startswith(" 1000\n") and suffix.endswith(tuple("0123456789")) and 1900 < len(suffix) <= 2000
    assert prefix[stable:] == "line"


def test_names_worth_a_definition():
    line = "result = client.fetch(load_config("
    assert [line[c:].split("(")[0].split(".")[0] for c in names_before(line)] == ["load_config", "fetch", "client"]
    assert names_before("total = amou") == [8]
    assert names_before("   ") == []


@pytest.mark.parametrize("text, line, character, encoding, offset", [
    ("ab\ncd", 1, 1, "utf-16", 4),
    ("ab\ncd", 1, 2, "utf-16", 5),
    ("ab\ncd", 1, 3, "utf-16", None),  # past the end of the line
    ("ab\ncd", 2, 0, "utf-16", None),  # past the end of the document
    ("ab\n", 1, 0, "utf-16", 3),  # the empty last line
    ("x = '😀' + y", 0, 9, "utf-16", 8),  # the emoji is two UTF-16 units
    ("x = '😀' + y", 0, 11, "utf-8", 8),  # and four UTF-8 bytes
    ("x = '😀' + y", 0, 8, "utf-32", 8),
    ("x = '😀'", 0, 6, "utf-16", 5),  # inside the pair: before the character
    ("a\r\nb\rc", 2, 1, "utf-16", 6),  # \r\n and \r end lines too
])
def test_positions(text, line, character, encoding, offset):
    assert offset_of(text, line, character, encoding) == offset


def test_parse_reads_copilot_extras():
    params = {"textDocument": {"uri": "file:///a.py", "version": 4}, "position": {"line": 1, "character": 2},
              "context": {"triggerKind": 1}, "formattingOptions": {"tabSize": 2, "insertSpaces": True}}
    assert parse(params) == ("file:///a.py", 1, 2, 4, "  ")
    assert parse({**params, "formattingOptions": {"tabSize": 8, "insertSpaces": False}})[4] == "\t"
    assert parse({"textDocument": {"uri": "u"}, "position": {"line": 0, "character": 0}}) == ("u", 0, 0, None, None)
