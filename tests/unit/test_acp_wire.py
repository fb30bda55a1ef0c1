"""acp/wire.py: what each hostile line becomes (a message for the SDK, or an answer on the wire), over real pipes."""

from __future__ import annotations

import asyncio
import json
import os

from agent_lsp.acp.wire import StdioWire, _top_level_id


async def wire_over_pipes():
    """A StdioWire reading one pipe and writing another; returns (wire, feed, written lines)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    reader_in, reader_out = os.pipe()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(reader_in, "rb", 0))
    out_r, out_w = os.pipe()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(out_w, "wb", 0))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    got = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(got), os.fdopen(out_r, "rb", 0))
    feed = os.fdopen(reader_out, "wb", 0)
    return StdioWire(reader, writer), feed, got


async def test_each_hostile_line_is_answered_or_dropped_and_good_ones_pass():
    wire, feed, got = await wire_over_pipes()
    deep = b'{"jsonrpc":"2.0","method":"session/new","params":' + b"[" * 3000 + b"]" * 3000 + b',"id":9}'
    feed.write(b"\n\r\nnot json\n[1,2]\n5\n" + deep + b'\n{"jsonrpc":"2.0","id":[1],"result":1}\n'
               b'{"jsonrpc":"2.0","id":3,"method":7}\n{"jsonrpc":"2.0","method":"session/nope"}\n'
               b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}\n'
               b'{"jsonrpc":"2.0","id":4,"method":"session/list","params":{"cwd":"\\ud800"}}\n'
               b'{"jsonrpc":"2.0","id":5,"error":5}\r\n'
               b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s-\\udfff"}}\n'
               b'{"jsonrpc":"2.0","id":6,"method":"session/list","params":{}}')  # the last line has no newline
    feed.close()
    passed = []
    while (message := await wire.receive()) is not None:
        passed.append(message)
    assert passed == [
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "a malformed error: 5"}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-\ufffd"}},
        {"jsonrpc": "2.0", "id": 6, "method": "session/list", "params": {}},
    ]
    answers = []
    while len(answers) < 7:
        answers.append(json.loads(await got.readline()))
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, -32700), (None, -32600), (None, -32600), (9, -32602), (None, -32600), (3, -32600), (4, -32602)]
    assert answers[6]["error"]["data"] == {"fields": ["cwd"]}


async def test_the_sdks_invalid_params_said_with_the_field_and_nothing_after_the_client_left():
    wire, feed, got = await wire_over_pipes()
    errors = [{"type": "string_type", "loc": ("prompt", 0, "text"), "msg": "Input should be a valid string",
               "input": "x" * 100_000, "ctx": {"error": ValueError("not JSON")}}]
    await wire.send({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params",
                                                          "data": {"errors": errors}}})
    assert json.loads(await got.readline())["error"] == {
        "code": -32602, "message": "Invalid params: prompt[0].text: Input should be a valid string",
        "data": {"fields": ["prompt[0].text"]}}
    got.feed_eof()
    wire._writer.close()
    await wire.send({"jsonrpc": "2.0", "id": 2, "result": {}})  # an answer to a client gone: dropped
    try:
        await wire.send({"jsonrpc": "2.0", "id": 3, "method": "fs/read_text_file", "params": {}})
    except ConnectionError:
        pass
    else:
        raise AssertionError("a request to a client gone must fail")
    feed.close()


def test_the_id_of_a_line_too_deep_to_parse():
    assert _top_level_id(b'{"a":' + b"[" * 3000 + b"]" * 3000 + b',"id":"r-1"}') == "r-1"
    assert _top_level_id(b'{"params":{"id":5},"x":' + b"[" * 3000 + b"]" * 3000 + b"}") is None
