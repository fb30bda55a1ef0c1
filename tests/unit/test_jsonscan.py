"""core/jsonscan.py: the id and method of a message too deep to parse, for both front ends' answer."""

from __future__ import annotations

import json

import pytest

from agent_lsp.core.jsonscan import MISSING, top_level_id

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize("body, wanted", [
    ('{"jsonrpc": "2.0", "id": 7, "method": "agent/chat", "params": %s}' % DEEP, (7, "agent/chat")),
    ('{"params": {"id": 1, "method": "inner"}, "method": "m", "id": "a\\"b"}', ('a"b', "m")),
    ('{"method": "session/cancel", "params": %s}' % DEEP, (MISSING, "session/cancel")),
    ('{"id": null, "method": "x"}', (None, "x")),
    ('{"params": {"x": %s}, "id": "r-1", "method": "m"}' % DEEP, ("r-1", "m")),
    ('{"id": [1], "method": 5}', (MISSING, None)),
    ('{"id": true}', (MISSING, None)),
    ('{"id": 1.5, "method": "m"}', (MISSING, "m")),
    ('{"id": 1, "id": 2}', (2, None)),  # the last, as json.loads keeps
    ('{"id": 1234567890123456789012}', (MISSING, None)),  # bounded: the id is echoed back
    ('{"id": "%s"}' % ("x" * 300), (MISSING, None)),
    ('{"id": 3, "method": "\\ud800"}', (3, "\ud800")),
    ('not json at all', (MISSING, None)),
])
def test_the_top_level_members_are_found_and_nothing_below_them(body, wanted):
    assert top_level_id(body.encode()) == wanted


def test_what_it_finds_is_what_json_loads_finds_where_both_can_parse():
    for body in ('{"id": 1, "method": "a", "params": {"id": 2}}', '{"method": "b", "id": "c"}', '{"id": -4}'):
        parsed = json.loads(body)
        assert top_level_id(body.encode()) == (parsed["id"], parsed["method"] if "method" in parsed else None)
