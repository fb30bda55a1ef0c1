"""A Markdown file's YAML front matter, read by a small strict parser of the part of YAML that front matter uses:
`key: value` lines whose values are plain, quoted ('…', "…"), block (`|`, `>`) or flow (`[a, b]`, `{k: v}`)
scalars, a block list (`- item`) or a nested mapping. Anything else (anchors, tags, a line that is not `key: value`,
an unclosed quote or bracket, a tab in an indentation, a key given twice) is a ValueError naming its line. Values are
kept as strings (no numbers or booleans): front matter names and describes, it does not compute.

PyYAML is not a dependency of agent-lsp, and front matter needs this much only."""

from __future__ import annotations

import re
from typing import Any, Optional

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*)|)$")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0"}
_HEX = {"x": 2, "u": 4, "U": 8}
_BLOCK = re.compile(r"([|>])([+-]?)([1-9]?)([+-]?)$")


def split_front_matter(text: str) -> tuple[Optional[dict[str, Any]], str]:
    """(the front matter's mapping, or None when the text has none; the body after it). ValueError naming the line
    when the front matter is not what this parser reads."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None, text
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        raise ValueError("its front matter has no closing `---` line")
    return parse_mapping(lines[1:end], 2), "\n".join(lines[end + 1:])


def parse_mapping(lines: list[str], first: int) -> dict[str, Any]:
    """The mapping of `lines` (the first of them line number `first` of the file), all at indentation 0."""
    found: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if _blank(line):
            i += 1
            continue
        if line[0] in " \t":
            raise ValueError(f"line {first + i} is indented where a new `key: value` was expected")
        match = _KEY.match(line.rstrip())
        if not match:
            raise ValueError(f"line {first + i} is not `key: value`")
        key, rest = match.group(1), (match.group(2) or "").strip()
        if key in found:
            raise ValueError(f"line {first + i} gives the key `{key}` a second time")
        j = i + 1
        while j < len(lines) and (_blank(lines[j]) or lines[j][0] in " \t" or (not rest and _item(lines[j]))):
            j += 1
        found[key] = _value(rest, lines[i + 1:j], first + i)
        i = j
    return found


def _item(line: str) -> bool:
    """Whether the line is a list item (`- value`, or `-` alone)."""
    return line.startswith("-") and line[1:2] in ("", " ")


def _blank(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _value(rest: str, block: list[str], number: int) -> Any:
    """The value after `key:` on line `number`, with the indented lines that follow it."""
    if rest[:1] in ("&", "*", "!"):
        raise ValueError(f"line {number}: YAML anchors, aliases and tags are not read here")
    if _BLOCK.match(rest):
        return _block_scalar(rest, block)
    inner = _dedent(block, number + 1)
    if rest[:1] in ("'", '"', "[", "{"):
        if any(not _blank(line) for line in inner):
            raise ValueError(f"line {number}: a quoted or bracketed value must end on its line")
        value, tail = _flow(rest, number)
        if tail and not tail.startswith("#"):
            raise ValueError(f"line {number}: unexpected text after the value: {tail[:40]!r}")
        return value
    if rest and not rest.startswith("#"):
        words = [_plain(rest)] + [_plain(line.strip()) for line in inner if not _blank(line)]
        return " ".join(word for word in words if word)
    content = [line for line in inner if not _blank(line)]
    if not content:
        return None
    if _item(content[0]):
        return _sequence(inner, number + 1)
    return parse_mapping(inner, number + 1)


def _dedent(block: list[str], first: int) -> list[str]:
    """The lines of an indented block without their common indentation (tabs refused)."""
    indents = []
    for n, line in enumerate(block):
        if _blank(line):
            continue
        head = line[:len(line) - len(line.lstrip(" \t"))]
        if "\t" in head:
            raise ValueError(f"line {first + n} is indented with a tab")
        indents.append(len(head))
    cut = min(indents, default=0)
    return [line[cut:] if not _blank(line) else "" for line in block]


def _sequence(lines: list[str], first: int) -> list[Any]:
    items = []
    for n, line in enumerate(lines):
        if _blank(line):
            continue
        if not _item(line):
            raise ValueError(f"line {first + n}: a list holds `- item` lines only")
        item = line[1:].strip()
        if item[:1] in ("'", '"', "[", "{"):
            value, tail = _flow(item, first + n)
            if tail and not tail.startswith("#"):
                raise ValueError(f"line {first + n}: unexpected text after the item: {tail[:40]!r}")
            items.append(value)
        else:
            items.append(_plain(item) or None)
    return items


def _block_scalar(header: str, block: list[str]) -> str:
    """A `|` (lines kept) or `>` (lines folded) scalar; `-` strips the last newline, `+` keeps every one."""
    style, chomp = header[0], "-" if "-" in header else "+" if "+" in header else ""
    lines = [line.rstrip() for line in _dedent_loose(block)]
    while lines and not lines[-1]:
        lines.pop()
    if style == "|":
        text = "\n".join(lines)
    else:
        text, blank = "", False
        for line in lines:
            if not line:
                text, blank = text + "\n", True
            else:
                text += line if not text or blank or text.endswith("\n") else " " + line
                blank = False
    return text if chomp == "-" else text + "\n"


def _dedent_loose(block: list[str]) -> list[str]:
    """A block scalar's lines without their common indentation (its `#` lines are text, not comments)."""
    indents = [len(line) - len(line.lstrip(" ")) for line in block if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in block]


def _plain(text: str) -> str:
    """A plain scalar: the text up to a ` #` comment."""
    found = re.search(r"[ \t]#", text)
    return (text[:found.start()] if found else text).strip()


def _flow(text: str, number: int) -> tuple[Any, str]:
    """A quoted scalar, `[a, b]` or `{k: v}` at the start of `text`: (its value, the text after it)."""
    if text[0] == "'":
        end, out = 1, []
        while True:
            quote = text.find("'", end)
            if quote < 0:
                raise ValueError(f"line {number}: a single-quoted value is not closed")
            out.append(text[end:quote])
            if text[quote + 1:quote + 2] == "'":
                out.append("'")
                end = quote + 2
                continue
            return "".join(out), text[quote + 1:].strip()
    if text[0] == '"':
        return _double_quoted(text, number)
    closing = "]" if text[0] == "[" else "}"
    items, pos = [], 1
    while True:
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos >= len(text):
            raise ValueError(f"line {number}: `{text[0]}` is not closed")
        if text[pos] == closing:
            break
        if text[pos] in "'\"":
            item, tail = _flow(text[pos:], number)
            pos = len(text) - len(tail)
        elif text[pos] in "[{":
            raise ValueError(f"line {number}: nested brackets are not read here")
        else:
            stop = pos
            while stop < len(text) and text[stop] not in f",{closing}":
                stop += 1
            item, pos = text[pos:stop].strip(), stop
        items.append(item)
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos >= len(text) or text[pos] != closing:
            raise ValueError(f"line {number}: `{text[0]}` is not closed")
    tail = text[pos + 1:].strip()
    if closing == "]":
        return items, tail
    mapping: dict[str, Any] = {}
    for item in items:
        key, colon, value = str(item).partition(":")
        if not colon or not key.strip():
            raise ValueError(f"line {number}: {item!r} in `{{…}}` is not `key: value`")
        mapping[key.strip()] = value.strip()
    return mapping, tail


def _double_quoted(text: str, number: int) -> tuple[str, str]:
    out, pos = [], 1
    while pos < len(text):
        char = text[pos]
        if char == '"':
            return "".join(out), text[pos + 1:].strip()
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        code = text[pos + 1:pos + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            pos += 2
        elif code in _HEX:
            digits = text[pos + 2:pos + 2 + _HEX[code]]
            if len(digits) != _HEX[code] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError(f"line {number}: `\\{code}` needs {_HEX[code]} hex digits")
            if int(digits, 16) > 0x10FFFF:
                raise ValueError(f"line {number}: `\\{code}{digits}` is not a character")
            out.append(chr(int(digits, 16)))
            pos += 2 + _HEX[code]
        else:
            raise ValueError(f"line {number}: `\\{code}` is not an escape of a double-quoted value")
    raise ValueError(f"line {number}: a double-quoted value is not closed")
