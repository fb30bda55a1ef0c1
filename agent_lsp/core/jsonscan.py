"""The `id` and `method` of a JSON-RPC message too deep for json.loads, found by scanning its top level: both
front ends answer such a request by its id instead of dropping it unanswered."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

MISSING = object()
"""No usable `id` at the top level (a notification, or an id that is not a number, a string or null)."""
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_VALUE = re.compile(r'\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}"|null)\s*[,}]')
"""A member's value when it is one an id or a method can be (bounded: the id is echoed in the answer)."""


def top_level_id(data: bytes) -> tuple[Any, Optional[str]]:
    """The message's `id` (MISSING when it has none usable) and `method` (None when none); the last of a member
    given twice, as json.loads would keep."""
    text = data.decode("utf-8", errors="replace")
    depth, msg_id, method = 0, MISSING, None
    for token in _TOKENS.finditer(text):
        t = token.group()
        if t in "{[":
            depth += 1
        elif t in "}]":
            depth -= 1
        elif depth == 1 and t in ('"id"', '"method"'):
            value = _VALUE.match(text, token.end())
            parsed = json.loads(value.group(1)) if value else MISSING
            if t == '"id"':
                msg_id = parsed
            elif isinstance(parsed, str):
                method = parsed
    return msg_id, method
