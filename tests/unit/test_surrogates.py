"""Lone surrogates mended in decoded JSON of any depth (core/surrogates.py)."""

from __future__ import annotations

import json
import sys

from agent_lsp.core.surrogates import replaced, scrubbed


def test_strings_and_member_names_are_mended_in_order():
    value = json.loads('{"a\\ud800": [1, "x\\udc00", {"b": ["\\ud801", true]}], "c": null}')
    assert replaced(value) == {"a\ufffd": [1, "x\ufffd", {"b": ["\ufffd", True]}], "c": None}
    assert list(replaced(value)) == ["a\ufffd", "c"]
    assert scrubbed(value) == {"a\\ud800": [1, "x\\udc00", {"b": ["\\ud801", True]}], "c": None}
    plain = {"a": [1, {"b": "c"}]}
    assert replaced(plain) == plain and scrubbed(plain) is plain


def test_a_value_deeper_than_the_recursion_limit():
    depth = sys.getrecursionlimit() + 100  # mending it recursively raised RecursionError (over ACP at 900 levels)
    value = "\ud800"
    for _ in range(depth):
        value = [value]
    for mended, inner in ((replaced(value), "\ufffd"), (scrubbed(value), "\\ud800")):
        for _ in range(depth):
            (mended,) = mended
        assert mended == inner
