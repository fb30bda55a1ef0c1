"""Columns the model reads are characters, whatever encoding the editor counted them in; folder URIs compare by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_lsp.core.paths import folder_uri
from agent_lsp.core.positions import split_lines, to_chars
from agent_lsp.lsp.convert import lsp_diagnostic

LINE = "a😀é=x"  # 😀: 2 UTF-16 units, 4 UTF-8 bytes; é: 1 and 2


@pytest.mark.parametrize("encoding, character, column", [
    ("utf-16", 0, 0), ("utf-16", 1, 1), ("utf-16", 3, 2), ("utf-16", 4, 3), ("utf-16", 6, 5),
    ("utf-8", 5, 2), ("utf-8", 7, 3), ("utf-8", 9, 5),
    ("utf-32", 4, 4),
    ("utf-16", 2, 2),   # inside a surrogate pair: the character after it
    ("utf-16", 9, 8),   # past the end of the line: counted on
])
def test_to_chars(encoding, character, column):
    assert to_chars(LINE, character, encoding) == column


def test_a_diagnostic_is_converted_with_its_line_and_left_alone_without_it():
    raw = {"range": {"start": {"line": 1, "character": 4}}, "severity": 2, "message": " m "}
    lines = split_lines("first\r\n" + LINE + "\rlast")
    assert lines == ["first", LINE, "last"]
    assert lsp_diagnostic(Path("/w/a.py"), raw, lines, "utf-16").column == 4
    assert lsp_diagnostic(Path("/w/a.py"), raw).column == 5  # no text to count with: as the editor said
    assert lsp_diagnostic(Path("/w/a.py"), {**raw, "range": {"start": {"line": 9, "character": 4}}}, lines).column == 5


def test_folder_uris_compare_by_path():
    assert folder_uri("file:///w/my%20project/") == folder_uri("file:///w/my project") == "file:///w/my%20project"
    assert folder_uri("vscode-remote://ssh/w") == "vscode-remote://ssh/w"
