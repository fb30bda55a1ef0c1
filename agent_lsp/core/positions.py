"""Positions, decided once for every edge (lsp/, sidecar/, completions/, the tools): LSP's lines, columns in
characters (code points) against columns in a negotiated encoding (utf-16 code units by default, utf-8 bytes, or
utf-32, which is characters already), and the one walk over LSP shapes that finds every position and the document
it belongs to.

The walk: every `{line, character}` is a position; it belongs to the nearest enclosing shape's own document (a
Location's `uri`, a LocationLink's `targetUri`, a TextDocumentEdit's `textDocument.uri`), else the request's; a
LocationLink's `originSelectionRange` is in the request's document, an incoming call's `fromRanges` in its caller's,
a WorkspaceEdit's `changes` under their key; `data` is the server's own and left alone.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

ENCODINGS = ("utf-8", "utf-16", "utf-32")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Where LSP ends a line (and nothing else does)."""

Fix = Callable[[str, dict], dict]
"""(uri, position) → the position converted for that document."""
LineOf = Callable[[str, int], Optional[str]]
"""(uri, 0-based line) → that line's text; None when it is not known."""


def encoding_name(negotiated: Any) -> str:
    """The position encoding a peer chose (a string or an enum of one; utf-16 when absent or unknown)."""
    name = str(getattr(negotiated, "value", negotiated) or "utf-16")
    return name if name in ENCODINGS else "utf-16"


def split_lines(text: str) -> list[str]:
    """A text's lines as LSP counts them."""
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The character offset where each LSP line of `text` starts."""
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def line_span(text: str, line: int) -> Optional[tuple[int, int]]:
    """(start, end) of line `line` of `text` without its line break; None past the last line."""
    if line < 0:
        return None
    start = 0
    if "\r" not in text:  # the usual case: one C-speed find per line
        for _ in range(line):
            newline = text.find("\n", start)
            if newline < 0:
                return None
            start = newline + 1
        end = text.find("\n", start)
        return start, len(text) if end < 0 else end
    breaks = LINE_BREAK.finditer(text)
    for _ in range(line):
        found = next(breaks, None)
        if found is None:
            return None
        start = found.end()
    found = next(breaks, None)
    return start, found.start() if found is not None else len(text)


def _width(ch: str, encoding: str) -> int:
    code = ord(ch)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def to_units(line: str, chars: int, encoding: str) -> int:
    """The column `chars` characters into `line`, in `encoding`'s units (past the end: counted on)."""
    if chars <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return chars
    head = line[:chars]
    extra = chars - len(head)
    if encoding == "utf-8":
        return len(head.encode("utf-8", "surrogatepass")) + extra
    return len(head) + sum(1 for ch in head if ord(ch) > 0xFFFF) + extra


def to_chars(line: str, units: int, encoding: str, inside_before: bool = False) -> int:
    """The column `units` of `encoding` into `line`, in characters (past the end: counted on). A unit inside a
    character counts as after it, or before it with `inside_before` (a cursor: what precedes it is whole)."""
    if units <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return units
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += _width(ch, encoding)
        if inside_before and count > units:
            return i
    return len(line) + units - count


def offset_of(text: str, line: int, character: int, encoding: str) -> Optional[int]:
    """The character offset into `text` of a cursor at an LSP position (`character` in `encoding` units); None
    when it is past the end of its line or of the document."""
    span = line_span(text, line)
    if span is None:
        return None
    start, end = span
    column = to_chars(text[start:end], character, encoding, inside_before=True)
    return None if column > end - start else start + column


def position_at(text: str, offset: int, encoding: str) -> dict[str, int]:
    """The LSP position of a character offset into `text`, its column in `encoding` units."""
    if "\r" not in text:
        line, start = text.count("\n", 0, offset), text.rfind("\n", 0, offset) + 1
    else:
        breaks = [m.end() for m in LINE_BREAK.finditer(text, 0, offset)]
        line, start = len(breaks), breaks[-1] if breaks else 0
    column_text = text[start:offset]
    return {"line": line, "character": to_units(column_text, len(column_text), encoding)}


# ---- the walk over LSP shapes ------------------------------------------------------------------------------


def document_uri(params: Any) -> Optional[str]:
    """The document a request is about: its textDocument, or the call hierarchy item it starts from."""
    if not isinstance(params, dict):
        return None
    for key in ("textDocument", "item"):
        inner = params.get(key)
        if isinstance(inner, dict) and isinstance(inner.get("uri"), str):
            return inner["uri"]
    return None


def is_position(value: Any) -> bool:
    """Whether `value` has a whole-number `line` and `character`, as an LSP Position does."""
    return isinstance(value, dict) and all(
        isinstance(value.get(k), int) and not isinstance(value.get(k), bool) for k in ("line", "character"))


def _own_uri(value: dict) -> Optional[str]:
    for key in ("uri", "targetUri"):
        if isinstance(value.get(key), str):
            return value[key]
    doc = value.get("textDocument")
    return doc["uri"] if isinstance(doc, dict) and isinstance(doc.get("uri"), str) else None


def walk(value: Any, uri: Optional[str], fix: Fix) -> Any:
    """A copy of an LSP value with `fix(uri, position)` applied to every Position, `uri` being the document the
    position is in (the module's docstring says which); `uri` given is the request's document."""
    if isinstance(value, list):
        return [walk(v, uri, fix) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 2 and is_position(value):  # nothing else: a shape of more keys is walked into
        return fix(uri, value) if uri is not None else value
    here = _own_uri(value) or uri
    out = {}
    for key, v in value.items():
        if key == "data":  # opaque to us: kept as the server sent it
            out[key] = v
        elif key == "originSelectionRange":  # a LocationLink's origin is in the request's document
            out[key] = walk(v, uri, fix)
        elif key == "fromRanges" and isinstance(value.get("from"), dict):  # an incoming call: in the caller
            out[key] = walk(v, _own_uri(value["from"]) or uri, fix)
        elif key == "changes" and isinstance(v, dict):  # a WorkspaceEdit's {uri: TextEdit[]}
            out[key] = {u: walk(edits, u, fix) for u, edits in v.items()}
        else:
            out[key] = walk(v, here, fix)
    return out


def convert(value: Any, uri: Optional[str], encoding: str, line_of: LineOf, outward: bool) -> Any:
    """`value` with every position's column converted: to `encoding` when `outward`, else to characters, each
    against its own document's line (`line_of`); a position on a line not known is left as it is."""
    if encoding == "utf-32":
        return value
    move = to_units if outward else to_chars

    def fix(doc: str, position: dict) -> dict:
        line = line_of(doc, position["line"])
        if line is None:
            return position
        return {"line": position["line"], "character": move(line, position["character"], encoding)}

    return walk(value, uri, fix)
