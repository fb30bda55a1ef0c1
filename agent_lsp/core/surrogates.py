"""Lone UTF-16 surrogates in decoded JSON: JSON text may escape one ("\\ud800"), Python keeps it, and it fails
the moment the text is encoded (a log line, a file, a subprocess's environment)."""

from __future__ import annotations

import re
from typing import Any, Optional

SURROGATE = re.compile("[\ud800-\udfff]")


def usable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: one character for one, so offsets hold."""
    return text if text.isascii() or not SURROGATE.search(text) else SURROGATE.sub("\ufffd", text)


def replaced(value: Any) -> Any:
    """`value` with every lone surrogate in its strings and member names replaced by U+FFFD (equal to `value`
    when it has none)."""
    if isinstance(value, str):
        return usable(value)
    if isinstance(value, dict):
        return {usable(k) if isinstance(k, str) else k: replaced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replaced(v) for v in value]
    return value


def printable(text: str) -> str:
    """`text` with each lone surrogate written as its \\u escape, safe to encode and show."""
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def find_surrogate(value: Any, path: str = "") -> Optional[str]:
    """The printable path (`a.b[2]`) of the first member name or string in `value` holding a lone surrogate, or
    None. Iterative: a deep value must not exhaust the stack."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and SURROGATE.search(item):
                return printable(where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and SURROGATE.search(key):
                    return printable(name)
                stack.append((inner, name))
        elif isinstance(item, list):
            stack.extend((inner, f"{where}[{i}]") for i, inner in enumerate(item))
    return None


def scrubbed(value: Any) -> Any:
    """`value` with every lone surrogate in its strings and member names written as its \\u escape (`value`
    itself when it has none): an answer from outside made safe to encode, log and send on."""
    if find_surrogate(value) is None:
        return value
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrubbed(v) for v in value]
    return value
