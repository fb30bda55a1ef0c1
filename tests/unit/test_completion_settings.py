"""The `completions` setting checked key by key, its layers, the exclusions, what the model sees
(completions/context.py), and LSP positions at the edge (lsp/inline_completion.py). Which model suggestions use:
tests/unit/test_resolver.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_lsp.completions.context import excluded, names_before, windows
from agent_lsp.config import Layers, clean
from agent_lsp.config.completions import CompletionsSettings
from agent_lsp.core.positions import offset_of
from agent_lsp.lsp.inline_completion import parse


def test_each_bad_key_is_a_warning_naming_it_and_the_rest_applies():
    good, warnings = clean({"completions": {"enabled": "yes", "model": " small ", "maxLines": 0, "api": "fim",
                                            "exclude": ["*.secret"], "colour": "red", "timeout": 2.5}}, "the file")
    assert good == {"completions": CompletionsSettings(model="small", api="fim", exclude=("*.secret",), timeout=2.5)}
    assert warnings == ["agent-lsp: setting `completions` from the file has problems: `completions.enabled` must be "
                        "true or false (its default applies); `completions.maxLines` must be an integer from 1 to 200 "
                        "(its default applies); `completions.colour` is unknown (enabled, provider, model, baseUrl, "
                        "api, exclude, maxLines, timeout)."]
    assert clean({"completions": [1]}, "x")[1] == [
        "agent-lsp: setting `completions` from x must be an object with enabled, provider, model, baseUrl, api, "
        "exclude, maxLines, timeout; using the default instead."]


def test_a_higher_source_replaces_the_whole_object():
    layers = Layers(user_file=clean({"completions": {"model": "a", "maxLines": 3}}, "u")[0],
                    workspace=clean({"completions": {"model": "b"}}, "w")[0])
    assert layers.resolve().completions == CompletionsSettings(model="b")
    assert Layers().resolve().completions == CompletionsSettings()


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
