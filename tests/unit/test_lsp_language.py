"""EditorLanguageFeatures: what the client declared, and every position converted between characters and the
negotiated encoding, in the params and in the answer, against the right document's text."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import pytest

from agent_lsp.capabilities import client_agent_capabilities, server_agent_capabilities
from agent_lsp.config import Layers
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.config.user_file import UserSettingsFile
from agent_lsp.core.ports import LANGUAGE_METHODS, LanguageFeatureError, OpenDocument
from agent_lsp.core.positions import to_chars, to_units
from agent_lsp.lsp.language_features import EditorLanguageFeatures

LINE = "a😀é=x"  # 😀: 2 UTF-16 units, 4 UTF-8 bytes; é: 1 and 2


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_to_units_is_the_inverse_of_to_chars(encoding):
    for column in range(len(LINE) + 3):  # past the end too
        assert to_chars(LINE, to_units(LINE, column, encoding), encoding) == column
    assert to_units(LINE, 2, "utf-16") == 3 and to_units(LINE, 3, "utf-8") == 7


def test_the_server_tells_the_client_its_language_methods_and_true_declares_them_all():
    methods = server_agent_capabilities()["languageMethods"]
    assert methods == list(LANGUAGE_METHODS) and len(methods) == 12
    assert client_agent_capabilities({"agent": {"languageFeatures": True}}) == (
        {"confirmTool": False, "diagnostics": False, "updates": True, "languageFeatures": methods}, True)


@pytest.mark.parametrize("agent, methods, well_formed", [
    ({"languageFeatures": ["textDocument/references", "textDocument/frobnicate", "textDocument/references"]},
     ["textDocument/references"], True),
    ({"confirmTool": True}, [], True),
    ({"languageFeatures": "textDocument/references"}, [], False),
    ({"languageFeatures": ["textDocument/hover", 3]}, [], False),
    ({"languageFeatures": False}, [], False),
])
def test_language_features_of_the_client_capabilities(agent, methods, well_formed):
    caps, ok = client_agent_capabilities({"agent": agent})
    assert caps["languageFeatures"] == methods and ok is well_formed


class FakeWorkspace:
    def __init__(self, encoding: str) -> None:
        self.position_encoding = encoding


class FakeProtocol:
    """Answers agent/languageFeature with `answer(params)`; records what was sent."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.sent: list[tuple[str, Any, str]] = []
        self.notified: list[tuple[str, Any]] = []

    def send_request_async(self, method: str, params: Any, msg_id: str):
        self.sent.append((method, params, msg_id))
        future = asyncio.get_running_loop().create_future()
        if self.answer is not None:
            future.set_result(self.answer(params))
        return future

    def notify(self, method: str, params: Any) -> None:
        self.notified.append((method, params))


class FakeServer:
    def __init__(self, methods: list[str], encoding: str, answer) -> None:
        self.agent_caps = {"languageFeatures": methods}
        self.in_force = SettingsInForce(Layers(), lambda warnings: None,
                                        user_file=UserSettingsFile(Path("/nonexistent/agent-lsp/settings.json")))
        self.workspace = FakeWorkspace(encoding)
        self.protocol = FakeProtocol(answer)


class Buffers:
    """The open documents, as LspEditor.open_document answers them."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.roots: list[Path] = []

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        text = self.texts.get(path)
        return OpenDocument(path.as_uri(), path, "python", 1, text, True) if text is not None else None


def pos(line: int, character: int) -> dict:
    return {"line": line, "character": character}


def rng(line: int, start: int, end: int) -> dict:
    return {"start": pos(line, start), "end": pos(line, end)}


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")  # the buffer below wins over this
    b.write_text('print("😀😀"); load()\n')
    return a, b


async def test_positions_convert_per_document_both_ways(files):
    a, b = files
    buffers = Buffers({a: 's = "😀"; load()\n'})
    answer = [
        {"uri": b.as_uri(), "range": rng(0, 18, 22)},  # UTF-16: after two emoji
        {"originSelectionRange": rng(0, 11, 15), "targetUri": b.as_uri(), "targetRange": rng(0, 0, 25),
         "targetSelectionRange": rng(0, 18, 22)},
        {"uri": "untitled:1", "range": rng(0, 9, 9)},  # no text to count with: as the editor said
        {"uri": a.as_uri(), "range": rng(7, 3, 3)},  # past the end: as the editor said
    ]
    server = FakeServer(["textDocument/references", "textDocument/bogus"], "utf-16", lambda params: answer)
    features = EditorLanguageFeatures(server, buffers)
    assert features.methods() == {"textDocument/references": "editor"}
    params = {"textDocument": {"uri": a.as_uri()}, "position": pos(0, 10), "context": {"includeDeclaration": True}}
    result = await features.request("textDocument/references", params, a)
    (method, sent, _), = server.protocol.sent
    assert method == "agent/languageFeature"
    assert sent == {"method": "textDocument/references",
                    "params": {"textDocument": {"uri": a.as_uri()}, "position": pos(0, 11),
                               "context": {"includeDeclaration": True}}}
    assert result == [
        {"uri": b.as_uri(), "range": rng(0, 16, 20)},
        {"originSelectionRange": rng(0, 10, 14), "targetUri": b.as_uri(), "targetRange": rng(0, 0, 23),
         "targetSelectionRange": rng(0, 16, 20)},
        {"uri": "untitled:1", "range": rng(0, 9, 9)},
        {"uri": a.as_uri(), "range": rng(7, 3, 3)},
    ]
    assert params["position"] == pos(0, 10)  # the caller's params are left alone


async def test_workspace_edits_and_call_hierarchy_ranges_convert_in_their_own_documents(files):
    a, b = files
    buffers = Buffers({a: 's = "😀"; load()\n'})
    item_b = {"name": "load", "uri": b.as_uri(), "range": rng(0, 18, 24), "selectionRange": rng(0, 18, 22),
              "data": {"line": 0, "character": 18}}
    edit = {"changes": {a.as_uri(): [{"range": rng(0, 11, 15), "newText": "f"}],
                        b.as_uri(): [{"range": rng(0, 18, 22), "newText": "f"}]},
            "documentChanges": [{"textDocument": {"uri": b.as_uri(), "version": None},
                                 "edits": [{"range": rng(0, 18, 22), "newText": "f"}]}]}
    answers = {"textDocument/rename": edit,
               "callHierarchy/incomingCalls": [{"from": item_b, "fromRanges": [rng(0, 18, 22)]}],
               "callHierarchy/outgoingCalls": [{"to": item_b, "fromRanges": [rng(0, 11, 15)]}]}
    server = FakeServer(list(answers), "utf-16", None)
    features = EditorLanguageFeatures(server, buffers)
    server.protocol.answer = lambda params: answers[params["method"]]
    renamed = await features.request("textDocument/rename", {"textDocument": {"uri": a.as_uri()},
                                                             "position": pos(0, 10), "newName": "f"}, a)
    assert renamed["changes"][a.as_uri()][0]["range"] == rng(0, 10, 14)
    assert renamed["changes"][b.as_uri()][0]["range"] == rng(0, 16, 20)
    assert renamed["documentChanges"][0]["edits"][0]["range"] == rng(0, 16, 20)

    item_a = {"name": "main", "uri": a.as_uri(), "range": rng(0, 0, 15), "selectionRange": rng(0, 0, 1)}
    incoming = await features.request("callHierarchy/incomingCalls", {"item": item_a}, a)
    assert incoming[0]["from"]["selectionRange"] == rng(0, 16, 20)
    assert incoming[0]["from"]["data"] == {"line": 0, "character": 18}  # opaque, kept
    assert incoming[0]["fromRanges"] == [rng(0, 16, 20)]  # in the caller's document
    outgoing = await features.request("callHierarchy/outgoingCalls", {"item": item_a}, a)
    assert outgoing[0]["to"]["selectionRange"] == rng(0, 16, 20)
    assert outgoing[0]["fromRanges"] == [rng(0, 10, 14)]  # in the item's own document


async def test_utf8_and_utf32_encodings(files):
    _, b = files
    answer = [{"uri": b.as_uri(), "range": rng(0, 22, 26)}]  # UTF-8 bytes after two 4-byte emoji
    server = FakeServer(["textDocument/references"], "utf-8", lambda params: answer)
    result = await EditorLanguageFeatures(server, Buffers({})).request(
        "textDocument/references", {"textDocument": {"uri": b.as_uri()}, "position": pos(0, 16)}, b)
    assert result == [{"uri": b.as_uri(), "range": rng(0, 16, 20)}]
    assert server.protocol.sent[0][1]["params"]["position"] == pos(0, 22)
    server = FakeServer(["textDocument/references"], "utf-32", lambda params: answer)
    result = await EditorLanguageFeatures(server, Buffers({})).request(
        "textDocument/references", {"textDocument": {"uri": b.as_uri()}, "position": pos(0, 16)}, b)
    assert result == answer


async def test_an_undeclared_method_is_refused_without_asking(files):
    server = FakeServer(["textDocument/hover"], "utf-16", lambda params: None)
    with pytest.raises(LanguageFeatureError, match="do not answer textDocument/references"):
        await EditorLanguageFeatures(server, Buffers({})).request("textDocument/references", {}, None)
    assert server.protocol.sent == []
    assert EditorLanguageFeatures(FakeServer([], "utf-16", None), Buffers({})).methods() == {}
