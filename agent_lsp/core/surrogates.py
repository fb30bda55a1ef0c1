"""Lone UTF-16 surrogates in decoded JSON: JSON text may escape one ("\\ud800"), Python keeps it, and it fails
the moment the text is encoded (a log line, a file, a subprocess's environment)."""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

SURROGATE = re.compile("[\ud800-\udfff]")


def usable(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: one character for one, so offsets hold."""
    return text if text.isascii() or not SURROGATE.search(text) else SURROGATE.sub("\ufffd", text)


def replaced(value: Any) -> Any:
    """`value` with every lone surrogate in its strings and member names replaced by U+FFFD (equal to `value`
    when it has none)."""
    return _rebuilt(value, usable)


def _rebuilt(value: Any, text: Callable[[str], str]) -> Any:
    """A copy of decoded JSON with `text` applied to every string and member name. Iterative: a value nested deeper
    than Python's recursion limit (JSON allows it, and json.loads reads 900 levels) must not stop the caller."""
    if isinstance(value, str):
        return text(value)
    if not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else [None] * len(value)
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        for key, item in (source.items() if isinstance(source, dict) else enumerate(source)):
            if isinstance(item, (dict, list)):
                copy: Any = {} if isinstance(item, dict) else [None] * len(item)
                stack.append((item, copy))
            else:
                copy = text(item) if isinstance(item, str) else item
            target[text(key) if isinstance(key, str) else key] = copy
    return root


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
    return value if find_surrogate(value) is None else _rebuilt(value, printable)
