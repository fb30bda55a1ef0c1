"""The `languageServers` and `languageTimeout` settings, checked; the sidecar's position conversion; ports
combined."""

from __future__ import annotations

import pytest

from agent_lsp.config import GATED, Layers, clean
from agent_lsp.config.language_servers import LanguageServerConfig
from agent_lsp.core.ports import LanguageFeatureError
from agent_lsp.sessions.combined_language import combined
from agent_lsp.core.positions import convert, to_chars, to_units
from agent_lsp.sidecar.positions import Texts

PYRIGHT = {"command": ["pyright-langserver", "--stdio"], "languages": ["python", ".pyi"],
           "settings": {"python": {"analysis": {"typeCheckingMode": "basic"}}}}


def language_servers(value: object) -> tuple[dict, list[str]]:
    """The `languageServers` setting as a settings layer takes it (config.clean): the servers kept, the warnings."""
    good, warnings = clean({"languageServers": value}, "the user settings file")
    return good.get("language_servers", {}), warnings


def test_a_good_value_gives_one_config_per_server():
    assert language_servers({"pyright": PYRIGHT}) == ({"pyright": LanguageServerConfig(
        command=("pyright-langserver", "--stdio"), languages=("python", ".pyi"), initialization_options=None,
        settings={"python": {"analysis": {"typeCheckingMode": "basic"}}})}, [])


@pytest.mark.parametrize("entry, message", [
    ({"languages": ["go"]}, "`command` must be a non-empty list of non-empty strings"),
    ({"command": "gopls", "languages": ["go"]}, "`command` must be a non-empty list of non-empty strings"),
    ({"command": [], "languages": ["go"]}, "`command` must be a non-empty list of non-empty strings"),
    ({"command": ["gopls"]}, "`languages` must be a non-empty list of non-empty strings"),
    ({"command": ["gopls"], "languages": ["go lang"]}, "`languages` holds 'go lang'"),
    ({"command": ["gopls"], "languages": ["go"], "settings": []}, "`settings` must be an object"),
    ({"command": ["gopls"], "languages": ["go"], "args": ["serve"]}, "unknown field `args`"),
    ({"command": ["gopls"], "languages": ["go"], "startTimeout": 0}, "`startTimeout` must be a number of seconds "
                                                                       "from 1 to 600"),
    ({"command": ["gopls"], "languages": ["go"], "startTimeout": "60"}, "`startTimeout` must be a number"),
    ({"command": ["gopls"], "languages": ["go"], "startTimeout": True}, "`startTimeout` must be a number"),
    ("gopls", "must be an object with `command` and `languages`"),
])
def test_a_bad_server_is_named_and_the_good_ones_are_kept(entry, message):
    servers, warnings = language_servers({"pyright": PYRIGHT, "gopls": entry})
    assert len(warnings) == 1 and f"language server `gopls`: {message}" in warnings[0]
    assert list(servers) == ["pyright"]


def test_start_timeout_is_30_s_unless_set():
    servers, _ = language_servers({"pyright": PYRIGHT, "rust": {"command": ["rust-analyzer"],
                                                                "languages": ["rust"], "startTimeout": 120}})
    assert (servers["pyright"].start_timeout, servers["rust"].start_timeout) == (30.0, 120.0)


def test_the_settings_layer_warns_and_keeps_the_good_servers():
    good, warnings = clean({"languageServers": {"pyright": PYRIGHT, "bad": {"command": ["x"]}},
                            "languageTimeout": 500}, "the user settings file")
    assert list(good) == ["language_servers"] and list(good["language_servers"]) == ["pyright"]
    assert warnings == [
        "agent-lsp: setting `languageServers` from the user settings file language server `bad`: `languages` must "
        "be a non-empty list of non-empty strings (that server is not used).",
        "agent-lsp: setting `languageTimeout` from the user settings file must be a number of seconds from 1 to "
        "120; using the default instead."]


def test_a_wrong_type_is_a_warning_and_the_default():
    good, warnings = clean({"languageServers": ["pyright"], "languageTimeout": 12}, "initializationOptions")
    assert good == {"language_timeout": 12.0}
    assert warnings == ["agent-lsp: setting `languageServers` from initializationOptions must be an object of "
                        "language servers by name; using the default instead."]
    settings = Layers(initialization_options=good).resolve()
    assert (settings.language_servers, settings.language_timeout) == ({}, 12.0)


def test_a_workspace_file_sets_language_servers_only_once_trusted():
    assert "languageServers" in GATED and "languageTimeout" not in GATED


# ---- positions --------------------------------------------------------------------------------------------

LINE = 'x = "😀é"; load(x)'  # "load" starts at character 11: utf-16 unit 12, utf-8 byte 15


@pytest.mark.parametrize("encoding, units", [("utf-16", 12), ("utf-8", 15), ("utf-32", 11)])
def test_a_column_converts_both_ways(encoding, units):
    assert to_units(LINE, 11, encoding) == units
    assert to_chars(LINE, units, encoding) == 11
    assert to_chars(LINE, to_units(LINE, len(LINE), encoding), encoding) == len(LINE)


def test_a_unit_inside_a_character_rounds_up():
    assert to_chars(LINE, 6, "utf-16") == 6  # the emoji's second unit: after the emoji


def test_every_position_of_a_result_converts_within_its_own_document(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    b.write_text("ok\n😀😀 = load\n")  # on disk only: read for the conversion
    texts = Texts({a: LINE + "\n"})

    def rng(line, start, end):
        return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}

    edit = {"documentChanges": [{"textDocument": {"uri": b.as_uri(), "version": 1},
                                 "edits": [{"range": rng(1, 7, 11), "newText": "fetch"}]}],
            "changes": {a.as_uri(): [{"range": rng(0, 12, 16), "newText": "fetch"}]}}
    assert convert(edit, a.as_uri(), "utf-16", texts.line, outward=False) == {
        "documentChanges": [{"textDocument": {"uri": b.as_uri(), "version": 1},
                             "edits": [{"range": rng(1, 5, 9), "newText": "fetch"}]}],
        "changes": {a.as_uri(): [{"range": rng(0, 11, 15), "newText": "fetch"}]}}
    incoming = [{"from": {"uri": b.as_uri(), "name": "f", "range": rng(1, 0, 11), "selectionRange": rng(1, 7, 11),
                          "data": {"range": rng(1, 7, 11)}}, "fromRanges": [rng(1, 7, 11)]}]
    assert convert(incoming, a.as_uri(), "utf-16", texts.line, outward=False) == [
        {"from": {"uri": b.as_uri(), "name": "f", "range": rng(1, 0, 9), "selectionRange": rng(1, 5, 9),
                  "data": {"range": rng(1, 7, 11)}}, "fromRanges": [rng(1, 5, 9)]}]
    asked = {"textDocument": {"uri": a.as_uri()}, "position": {"line": 0, "character": 11}}
    assert convert(asked, None, "utf-8", texts.line, outward=True)["position"] == {"line": 0, "character": 15}


# ---- ports combined ---------------------------------------------------------------------------------------


class Port:
    def __init__(self, origin, methods):
        self.origin, self.names, self.asked = origin, methods, []

    def methods(self, path=None):
        return {m: self.origin for m in self.names}

    async def request(self, method, params, path=None):
        self.asked.append(method)
        return self.origin


async def test_the_editor_answers_first_and_the_sidecar_what_it_cannot():
    editor = Port("editor", ["textDocument/definition"])
    sidecar = Port("languageServer:jedi", ["textDocument/definition", "textDocument/references"])
    port = combined(editor, None, sidecar)
    assert port.methods() == {"textDocument/definition": "editor", "textDocument/references": "languageServer:jedi"}
    assert await port.request("textDocument/definition", {}) == "editor"
    assert await port.request("textDocument/references", {}) == "languageServer:jedi"
    assert (editor.asked, sidecar.asked) == (["textDocument/definition"], ["textDocument/references"])
    with pytest.raises(LanguageFeatureError, match="nothing can answer textDocument/hover here"):
        await port.request("textDocument/hover", {})
    assert combined(None, sidecar) is sidecar and combined(None) is None
