"""Hypothesis strategies for hostile input: every agent/* request's params, settings objects, raw frames."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

DEEP = "__deep__"
"""A string value the sender replaces by JSON nested this deep (json.dumps itself cannot nest 2,000 levels)."""

BIG = "__big__"
"""A string value the sender replaces by a string of that many characters (a short repr for hypothesis)."""

surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3)
unicode_text = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=8), surrogates, st.text(max_size=8)),
    st.sampled_from(["", " ", "\x00", "\u202e", "😀" * 3, "a\r\nb", "\ufeff", "\U0010ffff"]),
    st.integers(10_000, 1_500_000).map(lambda n: f"{BIG}{n}"),
)
numbers = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([0, -1, 1, 2**31, 2**63, -(2**63), 1e308, 0.5]))
scalars = st.one_of(st.none(), st.booleans(), numbers, unicode_text)
deep = st.integers(65, 2500).map(lambda depth: f"{DEEP}{depth}")
hostile = st.one_of(
    st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(unicode_text, inner, max_size=4),
                 max_leaves=8),
    deep,
)


def field(valid: st.SearchStrategy) -> st.SearchStrategy:
    """A field's value: valid half the time, anything the rest."""
    return st.one_of(valid, hostile)


def params(required: dict[str, st.SearchStrategy], optional: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """Params objects: fields valid or not, some missing, extra members (`jsonrpc` among them), or no object."""
    fields = st.fixed_dictionaries({k: field(v) for k, v in required.items()},
                                   optional={k: field(v) for k, v in optional.items()})
    with_missing = fields.flatmap(lambda d: (st.sets(st.sampled_from(sorted(d)), max_size=2) if d else st.just(set()))
                                  .map(lambda drop: {k: v for k, v in d.items() if k not in drop}))
    extras = st.dictionaries(st.one_of(unicode_text, st.sampled_from(["jsonrpc", "id", "method", "params"])),
                             hostile, max_size=3)
    return st.one_of(
        with_missing,
        st.builds(lambda d, e: {**d, **e}, with_missing, extras),
        hostile,
    )


session_id = st.one_of(st.text(max_size=20), st.sampled_from(["s-000000000000", "", "s-" + "f" * 12]))
position = st.fixed_dictionaries({"line": st.integers(-5, 2**40), "character": st.integers(-5, 2**40)})
chat_params = params(
    {"message": st.text(min_size=1, max_size=200).filter(str.strip)},
    {"sessionId": session_id,
     "context": st.fixed_dictionaries({}, optional={
         "activeUri": st.sampled_from(["file:///nope.py", "untitled:1", "http://x", ""]),
         "selection": st.fixed_dictionaries({"start": position, "end": position}),
         "uris": st.lists(st.text(max_size=30), max_size=3)}),
     "permissionMode": st.sampled_from(["default", "acceptEdits", "plan", "bypassPermissions"]),
     "maxTurns": st.integers(-1, 100),
     "model": st.sampled_from(["claude-test", "x"]),
     "workDoneToken": st.one_of(st.integers(), st.text(max_size=10))},
)
session_params = params({"sessionId": session_id}, {})
confirm_params = params(
    {"sessionId": session_id, "toolCallId": st.text(max_size=20),
     "decision": st.sampled_from(["allow_once", "allow_always", "reject_once", "reject_always"])},
    {"message": st.text(max_size=50)},
)
settings = params({}, {
    "provider": st.sampled_from(["anthropic", "openai", "demo"]), "model": st.text(max_size=20),
    "baseUrl": st.text(max_size=30), "maxTurns": st.integers(-1, 100),
    "permissionMode": st.sampled_from(["default", "plan"]),
    "thinking": st.one_of(st.just("adaptive"), st.just(False), st.fixed_dictionaries({"budgetTokens": st.integers()})),
    "maxTokens": st.integers(), "contextWindow": st.integers(), "compactThreshold": numbers,
    "readTimeout": numbers, "secretEnv": st.lists(st.text(max_size=10), max_size=3),
})

REQUESTS = {
    "agent/chat": chat_params,
    "agent/abort": session_params,
    "agent/confirmTool": confirm_params,
    "agent/sessions": st.one_of(st.none(), params({}, {"workspace": st.sampled_from(["file:///x", ""])})),
    "agent/newSession": params({}, {"title": st.text(max_size=40)}),
    "agent/history": session_params,
    "agent/deleteSession": session_params,
    "textDocument/hover": hostile,
    "workspace/executeCommand": hostile,
    "workspace/symbol": hostile,
    "agent/nope": hostile,
}
request_case = st.sampled_from(sorted(REQUESTS)).flatmap(lambda m: st.tuples(st.just(m), REQUESTS[m]))
NOTIFICATIONS = {
    "workspace/didChangeConfiguration": st.one_of(st.fixed_dictionaries({"settings": st.fixed_dictionaries(
        {"agentLsp": settings})}), hostile),
    "textDocument/didOpen": hostile,
    "textDocument/didChange": hostile,
    "$/cancelRequest": st.one_of(st.fixed_dictionaries({"id": st.one_of(st.integers(), st.text(max_size=5))}), hostile),
    "$/setTrace": hostile,
    "agent/update": hostile,
}
notification_case = st.sampled_from(sorted(NOTIFICATIONS)).flatmap(lambda m: st.tuples(st.just(m), NOTIFICATIONS[m]))


def encode(message: Any) -> bytes:
    """A message's JSON with every DEEP placeholder replaced by nesting that deep."""
    text = json.dumps(message)
    while BIG in text:
        at = text.index(BIG)
        end = at + len(BIG)
        while text[end].isdigit():
            end += 1
        text = text[:at] + "x" * int(text[at + len(BIG):end]) + text[end:]
    while DEEP in text:
        at = text.index(f'"{DEEP}')
        end = text.index('"', at + 1)
        depth = int(text[at + 1 + len(DEEP):end])
        text = text[:at] + "[" * depth + "]" * depth + text[end + 1:]
    return text.encode()


# ---- raw frames -------------------------------------------------------------------------------------------

def _frame(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


raw_frames = st.one_of(
    st.binary(max_size=60).map(_frame),                                          # not JSON (or not UTF-8)
    st.sampled_from([b"{", b"[", b"nul", b'{"jsonrpc": "2.0", "id": 1,', b"\xff\xfe"]).map(_frame),
    st.tuples(st.integers(1, 40), request_case).map(                             # Content-Length too short
        lambda c: _frame(encode({"jsonrpc": "2.0", "id": "raw-7", "method": c[1][0], "params": c[1][1]}))[:-c[0]]),
    st.tuples(st.integers(1, 40), st.binary(min_size=40, max_size=40)).map(      # too long: junk after the JSON
        lambda c: _frame(b'{"jsonrpc":"2.0","method":"x"}' + c[1][:c[0]])),
    st.lists(request_case, max_size=3).map(lambda cs: _frame(encode(              # a batch
        [{"jsonrpc": "2.0", "method": m, "params": p} for m, p in cs]))),
    st.sampled_from([b"[]", b"42", b'"x"', b"null", b'{"jsonrpc":"1.0","id":"raw-1","method":"agent/sessions"}',
                     b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","id":{"a":1},"method":"agent/sessions"}',
                     b'{"jsonrpc":"2.0","id":true,"method":"agent/sessions"}',
                     b'{"jsonrpc":"2.0","id":"raw-5","method":7}', b'{"jsonrpc":"2.0","id":"raw-9999","result":null}',
                     b'{"jsonrpc":"2.0","method":"agent/sessions"}',                      # a request without id
                     b'{"jsonrpc":"2.0","id":null,"method":"agent/sessions"}',
                     b'{"jsonrpc":"2.0","id":"raw-3","method":"initialized","params":{}}',     # a notification with an id
                     b'{"jsonrpc":"2.0","id":"raw-4","method":"$/cancelRequest","params":{"id":"raw-0"}}',
                     b'{"jsonrpc":"2.0","id":"raw-6","method":"initialize","params":{}}',
                     ]).map(_frame),
    st.sampled_from([b"Content-Length: abc\r\n\r\n{}", b"\r\n\r\n", b"garbage line\r\n",
                     b"Content-Type: application/json\r\n", b"Content-Length: 0\r\n\r\n",
                     b"Content-Length: 1099511627776\r\n\r\n", b"Content-Length: 18446744073709551616\r\n\r\n",
                     b"Content-Length: " + b"9" * 40 + b"\r\n\r\n", b"x" * 20_000 + b"\r\n"]),
)


# ---- the symbol tools' inputs (read_symbol, replace_symbol, insert_symbol, delete_symbol, impact) -------------

NAME_PATHS = ["price", "Cart", "Cart/total", "/Cart/total", "total", "helper", "Cart/nothing"]
"""Name paths of the fuzzed file (tests/reliability/test_symbol_tools.py SHOP), and one it lacks."""
hostile_name_path = st.one_of(
    st.sampled_from(["", "/", "//", "Cart//total", "Cart/", "/Cart/", "\\/", "Cart\\/total", "../price", "*",
                     ".*", "price(", "Cart.total", "\x00", "price\x00", "Cart/total/extra/deeper", " price ",
                     "\ud800", "price\udfff", "𝔭rice", "\u202eecirp", "a" * 10_000]),
    st.text(max_size=30),
    st.builds(lambda a, s: a + s, st.sampled_from(NAME_PATHS), surrogates),
)
name_path = st.one_of(st.sampled_from(NAME_PATHS), st.sampled_from(NAME_PATHS), hostile_name_path)
symbol_path = st.one_of(
    st.sampled_from(["shop.py", "./shop.py", "shop.py"]),
    st.sampled_from(["../outside.py", "/etc/passwd", "link.py", "sub/../../outside.py", "shop.py\x00", "",
                     "nope.py", "~/outside.py", "shop.py/", "\ud800.py", "file:///etc/passwd", ".", "sub"]),
    st.text(max_size=20),
)
body_text = st.one_of(
    st.sampled_from(["def price(item):\n    return 2\n", "def price(item, tax=0):\n    return 1 + tax",
                     "    @property\n    def total(self):\n        return 0\n",
                     "def price(item):\n    return '\ud800'\n", "def price(item):\n    return '\x00'\n",
                     "def price(item):\n    return 'é😀'\n", "def price(item):\n    return (\n",
                     "", "   \n\t\n", "\x00", "\ud800", "def price(item):\r\n    return 3\r\n"]),
    st.integers(1, 1_100_000).map(lambda n: "def price(item):\n    return '" + "x" * n + "'\n"),
    st.text(max_size=60),
)
not_text = st.one_of(st.none(), st.booleans(), st.integers(), st.lists(st.integers(), max_size=3),
                     st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
symbol_line = st.one_of(st.none(), st.none(), st.integers(-3, 20), st.sampled_from([10 ** 12, "3", 2.5, True]))


OWN_TOKEN = "__own__"
"""A token the sender replaces by the current token of the symbol the call names (when it names one)."""


def symbol_call(tokens: list[str]) -> st.SearchStrategy:
    """(tool, input) of one symbol tool call: name paths, paths, tokens (the named symbol's own, OWN_TOKEN;
    `tokens`: the current ones of every symbol, so one of another symbol is tried too), bodies and lines, valid or
    hostile, members missing at times."""
    other = st.sampled_from(tokens or ["0" * 12])
    token = st.one_of(st.just(OWN_TOKEN), other, st.sampled_from(["", "0" * 12, "\ud800", " " * 3]),
                      st.text(max_size=14), not_text)
    body = st.one_of(body_text, body_text, body_text, not_text)
    shop = st.just("shop.py")
    common = {"path": st.one_of(shop, shop, shop, symbol_path, not_text), "line": symbol_line}
    inputs = {
        "read_symbol": {"symbol": name_path, **common},
        "replace_symbol": {"symbol": name_path, "token": token, "body": body, **common},
        "delete_symbol": {"symbol": name_path, "token": token, "force": st.one_of(st.booleans(), not_text),
                          **common},
        "insert_symbol": {"anchor": name_path, "where": st.sampled_from(["before", "after", "inside", ""]),
                          "text": body, **common},
        "impact": {"targets": st.one_of(st.none(), st.lists(st.fixed_dictionaries(
            {"path": symbol_path, "symbol": name_path}), max_size=3), not_text),
            "since": st.sampled_from(["chat", "saved", "yesterday"])},
    }

    def members(tool: str) -> st.SearchStrategy:
        fields = inputs[tool]
        core = {k: v for k, v in fields.items() if k not in ("line", "force")}
        whole = st.fixed_dictionaries(core, optional={k: v for k, v in fields.items() if k not in core})
        return st.one_of(whole, whole, whole, whole, st.fixed_dictionaries({}, optional=fields)).map(
            lambda d: (tool, d))

    names = st.sampled_from(NAME_PATHS)
    typed = st.sampled_from(["def price(item):\n    return 2\n", "@property\ndef total(self):\n    return 0\n",
                             "def helper():\n    return 'é😀'\n", "def price(item):\n    return '\x00'\n",
                             "def extra():\n    return '" + "x" * 1_000_000 + "'\n", "def broken(:\n"])
    well_typed = {  # every member of its type, the values valid or hostile: the calls that reach the tool's logic
        "read_symbol": {"path": st.just("shop.py"), "symbol": names},
        "replace_symbol": {"path": st.just("shop.py"), "symbol": names, "token": st.just(OWN_TOKEN), "body": typed},
        "delete_symbol": {"path": st.just("shop.py"), "symbol": names, "token": st.just(OWN_TOKEN),
                          "force": st.booleans()},
        "insert_symbol": {"path": st.just("shop.py"), "anchor": names, "where": st.sampled_from(["before", "after"]),
                          "text": typed},
        "impact": {"targets": st.lists(st.fixed_dictionaries({"path": st.just("shop.py"), "symbol": names}),
                                       min_size=1, max_size=2)},
    }
    sound = st.sampled_from(sorted(well_typed)).flatmap(
        lambda tool: st.fixed_dictionaries(well_typed[tool]).map(lambda d: (tool, d)))
    return st.one_of(sound, st.sampled_from(sorted(inputs)).flatmap(members))
