"""Positions between the port (characters, i.e. code points) and a language server's negotiated encoding (utf-16
code units by default, utf-8 bytes, or utf-32, which is characters already).

The conversion walks plain LSP shapes: every `position`, and every range under a known key, is converted within
the document it belongs to (the nearest `uri`, `targetUri`, `textDocument.uri`, a WorkspaceEdit's `changes` key,
an incoming call's `from`); `data` is the server's own and left alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Optional
from urllib.parse import unquote, urlparse

RANGES = ("range", "selectionRange", "targetRange", "targetSelectionRange", "fullRange")
_LINES = re.compile(r"\r\n|\r|\n")


def uri_path(uri: str) -> Optional[Path]:
    """The file a file:// URI names, or None."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _width(ch: str, encoding: str) -> int:
    code = ord(ch)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def to_units(line: str, chars: int, encoding: str) -> int:
    """The column `chars` characters into `line`, in `encoding`'s units."""
    if encoding == "utf-32" or line.isascii():
        return chars
    return sum(_width(ch, encoding) for ch in line[:chars]) + max(0, chars - len(line))


def to_chars(line: str, units: int, encoding: str) -> int:
    """The column `units` of `encoding` into `line`, in characters (a unit inside a character rounds up)."""
    if encoding == "utf-32" or line.isascii():
        return units
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += _width(ch, encoding)
    return len(line) + max(0, units - count)


class Texts:
    """The text of each document as the language server sees it: what it was sent, else the file on disk (read on
    first need, once)."""

    def __init__(self, sent: Mapping[Path, str]) -> None:
        self._sent = dict(sent)
        self._lines: dict[Path, list[str]] = {}

    def line(self, uri: Optional[str], number: int) -> str:
        path = uri_path(uri) if uri else None
        if path is None:
            return ""
        lines = self._lines.get(path)
        if lines is None:
            text = self._sent.get(path)
            if text is None:
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except (OSError, UnicodeError, ValueError):  # a name no file can have (a lone surrogate, a NUL)
                    text = ""
            lines = self._lines[path] = _LINES.split(text)
        return lines[number] if 0 <= number < len(lines) else ""


def convert(value: Any, uri: Optional[str], encoding: str, texts: Texts, outward: bool) -> Any:
    """`value` with its positions converted: to the server's `encoding` when `outward`, else to characters.
    `uri` is the document positions without their own belong to (the request's)."""
    if encoding == "utf-32":
        return value
    move = to_units if outward else to_chars

    def position(pos: Any, doc: Optional[str]) -> Any:
        if not (isinstance(pos, dict) and isinstance(pos.get("line"), int)
                and isinstance(pos.get("character"), int)):
            return pos
        return {**pos, "character": move(texts.line(doc, pos["line"]), pos["character"], encoding)}

    def rng(r: Any, doc: Optional[str]) -> Any:
        if not isinstance(r, dict):
            return r
        return {**r, "start": position(r.get("start"), doc), "end": position(r.get("end"), doc)}

    def walk(v: Any, doc: Optional[str]) -> Any:
        if isinstance(v, list):
            return [walk(item, doc) for item in v]
        if not isinstance(v, dict):
            return v
        own = v.get("uri") if isinstance(v.get("uri"), str) else v.get("targetUri")
        if not isinstance(own, str):
            td = v.get("textDocument")
            own = td.get("uri") if isinstance(td, dict) and isinstance(td.get("uri"), str) else doc
        out = {}
        for key, item in v.items():
            if key == "data":
                out[key] = item
            elif key == "position":
                out[key] = position(item, own)
            elif key in RANGES:
                out[key] = rng(item, own)
            elif key == "originSelectionRange":
                out[key] = rng(item, uri)
            elif key == "fromRanges" and isinstance(item, list):
                source = v.get("from", {}).get("uri") if isinstance(v.get("from"), dict) else None
                out[key] = [rng(r, source or own) for r in item]
            elif key == "changes" and isinstance(item, dict):
                out[key] = {u: walk(edits, u) for u, edits in item.items()}
            else:
                out[key] = walk(item, own)
        return out

    return walk(value, uri)

