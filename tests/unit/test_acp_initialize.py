"""The `initialize` answered before the ACP SDK loads is the one the SDK would send."""

from __future__ import annotations

import acp
from acp import schema
from acp.utils import normalize_result

from agent_lsp.acp.initialize import PROTOCOL_VERSION, initialize_request, initialize_result


def test_the_early_answer_is_what_the_sdk_would_serialise():
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    for requested in (1, 2, 0, -3):
        early = initialize_result(requested)
        assert normalize_result(schema.InitializeResponse.model_validate(early)) == early
    assert initialize_result(7)["protocolVersion"] == 1 and initialize_result(0)["protocolVersion"] == 1


def test_only_a_well_formed_initialize_is_answered_early():
    good = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}'
    assert initialize_request(good)["id"] == 0
    for line in (b"not json", b"[]", b'{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}',
                 b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}',
                 b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1"}}',
                 b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":true}}',
                 b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":3}}'):
        assert initialize_request(line) is None, line
