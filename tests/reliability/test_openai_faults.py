"""Model faults against the real `openai` SDK and the fake chat.completions API: every cell answers a result the
client can show (a stopReason, and a message naming the cause when it is an error), the session's next chat is a
history the API accepts (tool_call ids answered one-to-one), nothing said is lost, and after an abort no model
request of that chat begins. Stalls before the headers and mid-text are test_stalls.py's.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Optional

import pytest

from tests.e2e.conftest import openai_env, text, tool_use
from tests.fakes.chat_completions import FakeChatCompletions, reply_chunks
from tests.reliability.conftest import tally
from tests.reliability.history_check import chat_history_problems
from tests.reliability.rawlsp import ANSWER_CEILING
from tests.reliability.tls_faults import faults_over_tls
from tests.waiting import until

AREA = "model faults (openai SDK): matrix"
ERROR = {"error"}
OK = text("ok")
APP = "def greet(name)"
"""What read_file of app.py answers: a tool that ran with the arguments the fragments made."""
TOOL_REPLY = {"content": [{"type": "text", "text": "Let me look"},
                          {"type": "tool_use", "name": "read_file", "input": {"path": "app.py"}}]}
TOOL_CHUNKS = reply_chunks(TOOL_REPLY, 1, "gpt-test", include_usage=True)
FINISH_AT = next(n for n, c in enumerate(TOOL_CHUNKS) if c["choices"] and c["choices"][0]["finish_reason"])


# ---- the wire, by hand --------------------------------------------------------------------------------------------

def chunk(delta: Optional[dict] = None, finish: Optional[str] = None, **extra: Any) -> dict:
    choices = [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}]
    return {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
            "choices": choices, **extra}


def fragment(index: Optional[int], id: Optional[str] = None, name: Optional[str] = None,
             arguments: Optional[Any] = None) -> dict:
    """One tool_calls fragment; only the fields given are sent (a real stream sends id and name once)."""
    out: dict[str, Any] = {} if index is None else {"index": index}
    if id is not None:
        out.update(id=id, type="function")
    function = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    if function:
        out["function"] = function
    return out


def calls(*fragments: dict) -> dict:
    return chunk({"tool_calls": list(fragments)})


def say(*words: str) -> list[dict]:
    return [chunk({"role": "assistant", "content": ""})] + [chunk({"content": w}) for w in words]


USAGE = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
         "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
READ = '{"path": "app.py"}'


def raw_sse(*items: Any, done: bool = True, eol: str = "\n") -> dict:
    """A literal text/event-stream body: dicts become `data:` lines, strings go as they are."""
    lines = [f"data: {json.dumps(i)}{eol}{eol}" if isinstance(i, dict) else i for i in items]
    return {"raw": "".join(lines) + (f"data: [DONE]{eol}{eol}" if done else ""), "content_type": "text/event-stream"}


def status(code: int, message: str = "from the fake", kind: str = "api_error", **headers: str) -> dict:
    return {"status": code, "error": {"type": kind, "message": message}, "headers": headers}


def body(code: int, content: str, content_type: str) -> dict:
    return {"raw": content, "raw_status": code, "content_type": content_type}


def split_read(pieces: int) -> list[str]:
    return [READ[len(READ) * k // pieces:len(READ) * (k + 1) // pieces] for k in range(pieces)]


# ---- the matrix: (name, script, stop reasons allowed, what the error message must say, the tool results) ----------
# `tools`: for each tool message of the chat's second request, "ok" (it ran: read_file answered app.py) or "error".

Cell = tuple[str, list[dict], set[str], str, list[str]]
HTML = "<html><body><h1>502 Bad Gateway</h1></body></html>"
CELLS: list[Cell] = [
    # HTTP statuses and bodies
    ("400", [status(400, "bad request from the fake", "invalid_request_error")], ERROR, "400: bad request", []),
    ("401", [status(401, "Incorrect API key", "invalid_request_error")], ERROR, "OPENAI_API_KEY", []),
    ("403", [status(403, "Forbidden region")], ERROR, "403: Forbidden region", []),
    ("404", [status(404, "The model gpt-test does not exist")], ERROR, "Check the `model` setting", []),
    ("413, a plain-text body", [body(413, "Request Entity Too Large", "text/plain")], ERROR, "413", []),
    ("413, context length", [status(413, "This model's maximum context length is 8192 tokens")], {"error"},
     "maximum context length", []),
    ("422, a FastAPI body", [body(422, json.dumps({"detail": [{"loc": ["body", "messages"], "msg": "field required",
                                                               "type": "value_error.missing"}]}),
                                  "application/json")], ERROR, "422", []),
    ("429 with retry-after, then a reply", [status(429, "slow down", **{"retry-after": "0"}), OK], {"end_turn"}, "",
     []),
    ("429 with retry-after of an hour, three times", [status(429, "quota", **{"retry-after": "3600"})] * 3, ERROR,
     "429: quota", []),
    ("408, then a reply", [status(408, "timeout"), OK], {"end_turn"}, "", []),
    ("400, the model has no tools", [status(400, "registry.ollama.ai/library/x does not support tools")], ERROR,
     "does not support tool calls", []),
    ("400, vLLM without tool parsing", [status(400, '"auto" tool choice requires --enable-auto-tool-choice and '
                                                 "--tool-call-parser to be set", "BadRequestError")], ERROR,
     "does not support tool calls", []),
    ("400, llama.cpp without --jinja", [status(400, "tools param requires --jinja flag", "invalid_request_error")],
     ERROR, "does not support tool calls", []),
    ("200, an error object as plain JSON", [body(200, json.dumps({"error": {"message": "model not loaded",
                                                                            "type": "server_error"}}),
                                                 "application/json")], ERROR, "model not loaded", []),
    ("200, an event stream called JSON", [body(200, raw_sse(*say("fine"), chunk({}, "stop"))["raw"],
                                                "application/json")], {"end_turn"}, "", []),
    ("200, an HTML page called an event stream", [body(200, HTML, "text/event-stream")], ERROR,
     "no chat.completions chunks", []),
    ("400, context length", [status(400, "This model's maximum context length is 8192 tokens, you asked 9000")],
     ERROR, "maximum context length", []),
    ("500, an empty body, three times", [body(500, "", "text/plain")] * 3, ERROR, "500", []),
    ("200, an error object first", [raw_sse({"error": {"message": "model is loading", "type": "server_error"}})],
     ERROR, "model is loading", []),
    ("429 without retry-after, three times", [status(429, "rate limited")] * 3, ERROR, "429: rate limited", []),
    ("500, then a reply", [status(500, "boom", **{"retry-after-ms": "10"}), OK], {"end_turn"}, "", []),
    ("500 three times", [status(500, "boom", **{"retry-after-ms": "10"})] * 3, ERROR, "500: boom", []),
    ("400, a 1 MB error message", [status(400, "no " * 350_000, "invalid_request_error")], ERROR, "400: no no", []),
    ("502, an HTML page, three times", [body(502, HTML, "text/html")] * 3, ERROR, "HTML page", []),
    ("503, a plain-text body, three times", [body(503, "upstream connect error", "text/plain")] * 3, ERROR,
     "503", []),
    ("529 three times", [status(529, "overloaded", **{"retry-after-ms": "10"})] * 3, ERROR, "529: overloaded", []),
    ("200, an HTML page", [body(200, HTML, "text/html")], ERROR, "HTML page", []),
    ("200, a JSON completion (stream ignored)", [body(200, json.dumps({"id": "x", "object": "chat.completion",
                                                                     "choices": []}), "application/json")],
     ERROR, "no chat.completions chunks", []),
    ("200, an empty stream", [{"raw": "", "content_type": "text/event-stream"}], ERROR, "no chat.completions", []),
    # damaged SSE
    ("data not JSON mid-stream", [raw_sse(*say("half"), "data: {not json\n\n")], ERROR,
     "sent a line that is not a chat.completions chunk after 2 chunks (JSONDecodeError", []),
    # events without data are no events (the SSE standard); the SDK read each as a chunk of empty JSON and ended
    ("`data:` without payload", [raw_sse(*say("fine"), "data:\n\n", "data: \r\n\r\n", "data\n\n",
                                         chunk({}, "stop"))], {"end_turn"}, "", []),
    ("`event: ping` without data", [raw_sse(*say("fine"), "event: ping\n\n", chunk({}, "stop"))], {"end_turn"}, "",
     []),
    ("`retry:` alone", [raw_sse(*say("fine"), "retry: 3000\n\n", chunk({}, "stop"))], {"end_turn"}, "", []),
    ("`id:` then blank lines", [raw_sse(*say("fine"), f"id: 7\ndata: {json.dumps(chunk({'content': '!'}))}\n\n\n\n",
                                        chunk({}, "stop"))], {"end_turn"}, "", []),
    ("a byte that is not UTF-8", [dict(raw_sse(*say("fine"), 'data: {"choices": [{"index": 0, "delta": '
                                               '{"content": "\xff"}}]}\n\n', chunk({}, "stop")), raw_encoding="latin-1")],
     ERROR, "not a chat.completions chunk after 2 chunks (UnicodeDecodeError", []),
    ("cut mid-line", [{"raw": raw_sse(*say("fine"))["raw"].removesuffix("data: [DONE]\n\n") + 'data: {"choices": [{',
                       "content_type": "text/event-stream"}], ERROR, "no finish_reason after 2 chunks", []),
    ("unknown event and chunk shapes", [raw_sse(*say("fine"), 'event: ping\ndata: {"type": "ping"}\n\n',
                                                {"object": "something.else", "extra": [1]},
                                                {"id": "x", "choices": [{"index": 0, "delta": None}]},
                                                chunk({}, "stop"))], {"end_turn"}, "", []),
    ("comments and CRLF line ends", [raw_sse(*say("fine"), ": keep-alive\r\n\r\n", chunk({}, "stop"), eol="\r\n")],
     {"end_turn"}, "", []),
    ("a lone surrogate in the text", [raw_sse('data: {"choices": [{"index": 0, "delta": {"content": "a\\ud800b"}}]}\n\n',
                                              chunk({}, "stop"))], {"end_turn"}, "", []),
    ("a lone surrogate in a call's name and arguments", [raw_sse(
        'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_\\udc00", "function": '
        '{"name": "read\\ud800", "arguments": "{\\"path\\": \\"\\ud800.py\\"}"}}]}}]}\n\n',
        chunk({}, "tool_calls")), OK], {"end_turn"}, "", ["error"]),
    ("chunks after [DONE] and after the finish", [raw_sse(*say("fine"), chunk({}, "stop"), chunk({"content": " late"}),
                                                          "data: [DONE]\n\n", chunk({"content": " later"}))],
     {"end_turn"}, "", []),
    ("a 200 kB delta", [{"chunks": say("x" * 200_000) + [chunk({}, "stop")]}], {"end_turn"}, "", []),
    ("no [DONE]", [raw_sse(*say("fine"), chunk({}, "stop"), USAGE, done=False)], {"end_turn"}, "", []),
    ("an error object mid-stream", [raw_sse(*say("half"), {"error": {"message": "Overloaded upstream"}})], ERROR,
     "Overloaded upstream", []),
    ("an error object mid-stream, 1 MB", [raw_sse(*say("half"), {"error": {"message": "no " * 350_000}})], ERROR,
     "APIError: no no", []),
    ("content that is a number", [{"chunks": say("fine") + [chunk({"content": 7}), chunk({}, "stop")]}],
     ERROR, "after 3 chunks (ValueError: a delta's text is a JSON number: '7')", []),
    ("content that is an object", [{"chunks": say("fine") + [chunk({"content": {"text": "x"}}), chunk({}, "stop")]}],
     ERROR, "a delta's text is a JSON object", []),
    ("a name that is a number", [{"chunks": [calls(fragment(0, "call_a", 7, READ)), chunk({}, "tool_calls")]}, OK],
     {"end_turn"}, "", ["error"]),
    ("a tool_call of null", [{"chunks": say("fine") + [chunk({"tool_calls": [None]}), chunk({}, "stop")]}, OK],
     ERROR, "a delta's tool_calls is not a list of objects", []),
    ("choices that is not a list", [{"chunks": say("fine") + [{"id": "x", "choices": "oops"}, chunk({}, "stop")]},
                                    OK], ERROR | {"end_turn"}, "", []),
    ("a tool_calls field that is not a list", [{"chunks": say("fine") + [chunk({"tool_calls": {"index": 0}}),
                                                                        chunk({}, "stop")]}, OK],
     ERROR, "a delta's tool_calls is not a list", []),
    # fragmented tool calls
    ("arguments over 19 chunks", [{"content": [dict(TOOL_REPLY["content"][1], pieces=19)]}, OK], {"end_turn"}, "",
     ["ok"]),
    ("id, name and the first fragment in one chunk", [{"chunks": [
        calls(fragment(0, "call_a", "read_file", READ[:5])), calls(fragment(0, arguments=READ[5:])),
        chunk({}, "tool_calls")]}, OK], {"end_turn"}, "", ["ok"]),
    ("an index gap (0, 2)", [{"chunks": [
        calls(fragment(0, "call_a", "read_file", "")), calls(fragment(2, "call_b", "read_file", "")),
        calls(fragment(0, arguments=READ)), calls(fragment(2, arguments=READ)), chunk({}, "tool_calls")]}, OK],
     {"end_turn"}, "", ["ok", "ok"]),
    ("two parallel calls interleaved", [{"chunks": [
        calls(fragment(0, "call_a", "read_file", "")), calls(fragment(1, "call_b", "list_files", "")),
        *[calls(fragment(0, arguments=a), fragment(1, arguments=b))
          for a, b in zip(split_read(4), ["{", '"path"', ': "."', "}"])],
        chunk({}, "tool_calls")]}, OK], {"end_turn"}, "", ["ok", "ok"]),
    ("parallel calls all at index 0 with their own ids", [{"chunks": [
        calls(fragment(0, "call_a", "read_file", READ)), calls(fragment(0, "call_b", "read_file", READ)),
        chunk({}, "tool_calls")]}, OK], {"end_turn"}, "", ["ok", "ok"]),
    ("fragments without an index", [{"chunks": [
        calls(fragment(None, "call_a", "read_file", "")), *[calls(fragment(None, arguments=p)) for p in split_read(3)],
        chunk({}, "tool_calls")]}, OK], {"end_turn"}, "", ["ok"]),
    ("arguments sent as an object", [{"chunks": [
        calls(fragment(0, "call_a", "read_file", {"path": "app.py"})), chunk({}, "tool_calls")]}, OK], {"end_turn"},
     "", ["ok"]),
    # malformed tool calls
    ("arguments not JSON", [{"content": [{"type": "tool_use", "name": "read_file", "arguments": '{"path": app.py'}]},
                            OK], {"end_turn"}, "", ["error"]),
    ("arguments a JSON list", [{"content": [{"type": "tool_use", "name": "read_file", "arguments": '["app.py"]'}]},
                               OK], {"end_turn"}, "", ["error"]),
    ("arguments a JSON string", [{"content": [{"type": "tool_use", "name": "read_file", "arguments": '"app.py"'}]},
                                 OK], {"end_turn"}, "", ["error"]),
    ("arguments nested 500 deep", [{"content": [{"type": "tool_use", "name": "read_file", "arguments":
                                                 '{"path": ' + "[" * 500 + "]" * 500 + "}"}]}, OK],
     {"end_turn"}, "", ["error"]),
    ("arguments nested 100,000 deep", [{"content": [{"type": "tool_use", "name": "read_file", "arguments":
                                                     '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"}]}, OK],
     {"end_turn"}, "", ["error"]),
    ("arguments empty", [{"content": [{"type": "tool_use", "name": "read_file", "arguments": ""}]}, OK],
     {"end_turn"}, "", ["error"]),
    ("an empty name", [{"content": [{"type": "tool_use", "name": "", "input": {"path": "app.py"}}]}, OK],
     {"end_turn"}, "", ["error"]),
    ("an unknown tool", [tool_use("launch_rockets", {"n": 1}), OK], {"end_turn"}, "", ["error"]),
    ("a name OpenAI would not accept", [tool_use("read file!", {"path": "app.py"}), OK], {"end_turn"}, "",
     ["error"]),
    ("a name of 200 characters", [tool_use("x" * 200, {}), OK], {"end_turn"}, "", ["error"]),
    ("no id", [{"chunks": [calls(fragment(0, None, "read_file", READ)), chunk({}, "tool_calls")]}, OK],
     {"end_turn"}, "", ["ok"]),
    ("two calls without ids", [{"chunks": [calls(fragment(0, None, "read_file", READ)),
                                           calls(fragment(1, None, "read_file", READ)),
                                           chunk({}, "tool_calls")]}, OK], {"end_turn"}, "", ["ok", "ok"]),
    ("two calls with one id", [{"content": [
        {"type": "tool_use", "id": "call_same", "name": "read_file", "input": {"path": "app.py"}},
        {"type": "tool_use", "id": "call_same", "name": "list_files", "input": {}}]}, OK], {"end_turn"}, "",
     ["ok", "error"]),
    # finish_reason
    ("finish_reason missing", [{"chunks": say("all", "of", "it")}], ERROR, "finish_reason", []),
    ("finish_reason null, usage sent", [{"chunks": say("all", "of", "it") + [chunk({}, None), USAGE]}], ERROR,
     "finish_reason", []),
    ("finish_reason unknown", [{"chunks": say("fine") + [chunk({}, "eos_token")]}], {"end_turn"}, "", []),
    ("finish_reason stop with a tool call", [dict(tool_use("read_file", {"path": "app.py"}), finish_reason="stop"),
                                             OK], {"end_turn"}, "", ["ok"]),
    ("finish_reason tool_calls without one", [{"chunks": say("fine") + [chunk({}, "tool_calls")]}], {"end_turn"},
     "", []),
    ("finish_reason length mid-text", [{"chunks": say("half") + [chunk({}, "length")]}], {"max_tokens"}, "", []),
    ("finish_reason length mid-tool-call", [{"chunks": say("Let me look") + [
        calls(fragment(0, "call_a", "read_file", '{"pa')), chunk({}, "length")]}], {"max_tokens"}, "", []),
    ("finish_reason content_filter", [{"chunks": say("I") + [chunk({}, "content_filter")]}], {"refusal"}, "", []),
    # other shapes
    ("empty choices only", [{"chunks": [dict(USAGE, usage=None)] * 3}], ERROR, "finish_reason", []),
    ("usage-only chunks mid-stream", [{"chunks": say("fine") + [USAGE, chunk({"content": " more"}), USAGE,
                                                                 chunk({}, "stop"), USAGE]}], {"end_turn"}, "", []),
    ("a refusal delta", [{"chunks": [chunk({"role": "assistant", "content": None, "refusal": "I can't help"}),
                                     chunk({}, "stop")]}], {"refusal"}, "", []),
    ("a second choice", [{"chunks": say("mine") + [{**chunk({"content": "theirs"}), "choices": [
        {"index": 1, "delta": {"content": "theirs"}, "finish_reason": None}]}, chunk({}, "stop")]}], {"end_turn"},
     "", []),
    ("reasoning only", [{"content": [{"type": "thinking", "thinking": "hmm"}]}], {"end_turn"}, "", []),
    ("an empty reply", [{"content": []}], {"end_turn"}, "", []),
    ("a stall after half a tool call (readTimeout 1 s)", [{"chunks": say("Let me look") + [
        calls(fragment(0, "call_a", "read_file", '{"pa'))], "silent_after": 3, "silent_for": 5}], ERROR,
     "stalled: nothing arrived for 1 s", []),
    ("a slow stream through a tool call (0.2 s a chunk)", [{"chunks": say("Let me look") + [
        calls(fragment(0, "call_a", "read_file", '{"pa')), calls(fragment(0, arguments='th": "app.py"}')),
        chunk({}, "tool_calls")], "delay": 0.2}, OK], {"end_turn"}, "", ["ok"]),
] + [
    (f"cut after chunk {k} of {len(TOOL_CHUNKS)}", [dict(TOOL_REPLY, cut_after=k), OK],
     ERROR if k <= FINISH_AT else {"end_turn"}, "finish_reason" if 0 < k <= FINISH_AT else "", [])
    for k in range(len(TOOL_CHUNKS))
]


@pytest.fixture
def chat_api():
    fake = FakeChatCompletions().start()
    yield fake
    fake.stop()


@pytest.fixture
async def server(start_server, chat_api):
    return await start_server(init_options={"readTimeout": 1}, agent={"confirmTool": True},
                              env=openai_env(chat_api.api_url))


def requests_of(chat_api, message: str) -> list[dict]:
    """The model requests whose last user message is `message` (the requests of that chat)."""
    def last_user_text(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        return users[-1] if users and isinstance(users[-1], str) else None
    return [body for body in chat_api.requests if (last_user_text(body) or "").endswith(message)]


async def check_next_chat(server, chat_api, session_id: str, said: list[str]) -> list[str]:
    """The next chat in the session answers, its request is a valid history, and every earlier message is kept."""
    problems = []
    chat_api.script[:] = [OK]
    answer = await server.request("agent/chat", {"sessionId": session_id, "message": "next, please"})
    result = answer.get("result") or {}
    if result.get("stopReason") != "end_turn":
        problems.append(f"next chat: {answer}")
    sent = requests_of(chat_api, "next, please")
    if not sent:
        problems.append("next chat sent no request")
    else:
        problems += chat_history_problems(sent[-1]["messages"])
    history = (await server.request("agent/history", {"sessionId": session_id}))["result"]["messages"]
    users = [m["content"] for m in history if m["role"] == "user"]
    if users != said + ["next, please"]:
        problems.append(f"lost: history has {users}")
    return problems


def tool_results(chat_api, message: str) -> list[str]:
    """The tool messages of the chat's second request: "ok" when read_file/list_files ran, else "error"."""
    sent = requests_of(chat_api, message)
    if len(sent) < 2:
        return []
    answers = []
    for m in reversed(sent[1]["messages"]):
        if m["role"] != "tool":
            break
        answers.insert(0, "error" if m["content"].startswith("Error: ") else "ok")
    return answers


def judge(name: str, answer: dict, expected: set[str], says: str) -> list[str]:
    if "error" in answer:
        return [f"a JSON-RPC error: {answer['error']}"]
    result = answer.get("result") or {}
    problems = []
    if result.get("stopReason") not in expected:
        problems.append(f"stopReason {result.get('stopReason')} not in {expected}: {answer}")
    if result.get("stopReason") == "error":
        message = (result.get("error") or {}).get("message") or ""
        if not message or "Traceback" in message or (says and says not in message):
            problems.append(f"error message {message[:2000]!r} does not say {says!r}")
        if len(message) > 4000:
            problems.append(f"an error message of {len(message)} characters: {message[:300]!r}…")
    return problems


async def test_fault_matrix(server, chat_api, long_run):
    failures = []
    tracebacks = 0
    rounds = 3 if long_run else 1  # --long: every cell again on the same server, after every other cell
    for round_ in range(rounds):
        for n, (name, script, expected, says, tools) in enumerate(CELLS):
            chat_api.script[:] = json.loads(json.dumps(script))
            message = f"cell {round_}.{n}: {name}"
            try:
                answer = await server.request("agent/chat", {"message": message,
                                                             "permissionMode": "bypassPermissions"})
            except asyncio.TimeoutError:
                tally(AREA, cases=1, hangs=1)
                failures.append(f"{name}: no answer")
                continue
            problems = judge(name, answer, expected, says)
            tracebacks, seen_tracebacks = server.stderr.count(b"Traceback"), tracebacks
            if tracebacks > seen_tracebacks:
                problems.append(f"a traceback in the log: {server.stderr[-1500:].decode(errors='replace')}")
            if tools and tool_results(chat_api, message) != tools:
                problems.append(f"tool results {tool_results(chat_api, message)}, expected {tools}")
            crashed = any("JSON-RPC error" in p or "traceback" in p for p in problems)
            lost_before = len(problems)
            session_id = (answer.get("result") or {}).get("sessionId")
            if session_id:
                problems += await check_next_chat(server, chat_api, session_id, [message])
            tally(AREA, cases=1, crashes=int(crashed), wrong=int(bool(problems) and not crashed),
                  lost=sum("lost" in p for p in problems[lost_before:]))
            failures += [f"{name}: {p}" for p in problems]
    assert server.proc.returncode is None
    tally(AREA, crashes=int(server.proc.returncode is not None))
    assert not failures, "\n".join(failures)


async def test_fragments_make_the_exact_arguments(server, chat_api):
    """Interleaved fragments of two calls, cut mid-token, are read back into the two exact inputs."""
    chat_api.script[:] = [{"chunks": [
        calls(fragment(0, "call_a", "read_file", "")), calls(fragment(1, "call_b", "search", "")),
        *[calls(fragment(0, arguments=a), fragment(1, arguments=b))
          for a, b in zip(split_read(5), ['{"pat', 'tern": "gr', 'eet", "pa', 'th": "', '."}'])],
        chunk({}, "tool_calls")]}, OK]
    answer = await server.request("agent/chat", {"message": "two at once", "permissionMode": "bypassPermissions"})
    assert answer["result"]["stopReason"] == "end_turn"
    second = requests_of(chat_api, "two at once")[1]["messages"]
    assert [c["function"] for c in second[-3]["tool_calls"]] == [
        {"name": "read_file", "arguments": READ}, {"name": "search", "arguments": '{"pattern": "greet", "path": "."}'}]
    assert [(m["tool_call_id"], APP in m["content"]) for m in second[-2:]] == [("call_a", True), ("call_b", True)]
    assert chat_history_problems(second) == []
    tally(AREA, cases=1)


# (name, script, stop reason, model requests the chat sends, least seconds between the first two, the error says)
RETRIES: list[tuple[str, list[dict], str, int, Optional[float], str]] = [
    ("429, retry-after 1 s, then a reply", [status(429, "slow down", **{"retry-after": "1"}), OK], "end_turn", 2,
     1.0, ""),
    ("500, retry-after 1 s, then a reply", [status(500, "boom", **{"retry-after": "1"}), OK], "end_turn", 2, 1.0, ""),
    ("503, retry-after 1 s, then a reply", [status(503, "unavailable", **{"retry-after": "1"}), OK], "end_turn", 2,
     1.0, ""),
    ("503, retry-after-ms 1500, then a reply", [status(503, "unavailable", **{"retry-after-ms": "1500"}), OK],
     "end_turn", 2, 1.5, ""),
    ("429, retry-after an HTTP date 3 s ahead, then a reply", [dict(status(429, "slow down"), retry_after_date=3),
                                                              OK], "end_turn", 2, 1.5, ""),
    ("429, retry-after an hour", [status(429, "quota", **{"retry-after": "3600"}), OK], "error", 1, None,
     "429: quota (the server asks to retry after 3600 s)"),
    ("503, retry-after two minutes", [status(503, "maintenance", **{"retry-after": "120"}), OK], "error", 1, None,
     "503: maintenance (the server asks to retry after 120 s)"),
    ("429 without retry headers, then a reply", [status(429, "rate limited"), OK], "end_turn", 2, None, ""),
    ("500 without retry headers, three times", [status(500, "boom")] * 3 + [OK], "error", 3, None, "500: boom"),
    ("400 without retry headers", [status(400, "bad request from the fake", "invalid_request_error"), OK], "error",
     1, None, "400: bad request from the fake"),
    ("401 without retry headers", [status(401, "Incorrect API key", "invalid_request_error"), OK], "error", 1, None,
     "401: Incorrect API key. Check OPENAI_API_KEY"),
    ("400 with retry-after: not worth retrying", [status(400, "bad", "invalid_request_error",
                                                         **{"retry-after": "0"}), OK], "error", 1, None, "400: bad"),
    ("503 with x-should-retry: false", [status(503, "not now", **{"x-should-retry": "false"}), OK], "error", 1, None,
     "503: not now"),
    ("409 with x-should-retry: true, then a reply", [status(409, "conflict", **{"x-should-retry": "true",
                                                                              "retry-after": "0"}), OK],
     "end_turn", 2, None, ""),
]


async def test_retry_headers(server, chat_api, long_run):
    """Each status with and without retry headers: what is asked again, after the wait the server asked for (a
    wait longer than a minute is not waited: the chat says so at once), and the session goes on."""
    failures = []
    for round_ in range(2 if long_run else 1):
        for name, script, expected, count, gap, says in RETRIES:
            chat_api.script[:] = json.loads(json.dumps(script))
            message = f"retry {round_}: {name}"
            answer = await server.request("agent/chat", {"message": message})
            problems = judge(name, answer, {expected}, says)
            sent = [t for t, body in zip(chat_api.arrivals, chat_api.requests) if body in requests_of(chat_api, message)]
            if len(sent) != count:
                problems.append(f"{len(sent)} model requests, expected {count}")
            elif gap is not None and sent[1] - sent[0] < gap:
                problems.append(f"asked again after {sent[1] - sent[0]:.2f} s, before the {gap} s the server asked")
            session_id = (answer.get("result") or {}).get("sessionId")
            lost = 0
            if session_id:
                after = await check_next_chat(server, chat_api, session_id, [message])
                lost = sum("lost" in p for p in after)
                problems += after
            tally(AREA, cases=1, wrong=int(bool(problems) and not lost), lost=lost)
            failures += [f"{name}: {p}" for p in problems]
    assert not failures, "\n".join(failures)


async def test_events_without_data_are_skipped_and_nothing_said_is_lost(server, chat_api):
    """An empty `data:` line (a proxy's keep-alive), `event: ping` alone, a blank line after an `id:`: the reply
    around them arrives whole (the SDK used to end the chat at the first)."""
    chat_api.script[:] = [raw_sse(*say("one", " two"), "data:\n\n", "event: ping\n\n", "id: 1\n\n\n",
                                  chunk({"content": " three"}), "data: \n\n", chunk({}, "stop"), USAGE)]
    answer = await server.request("agent/chat", {"message": "keep-alives"})
    result = answer["result"]
    assert (result["stopReason"], result["finalMessage"]) == ("end_turn", "one two three"), answer
    assert result["metadata"]["usage"]["outputTokens"] == 2  # the usage chunk after them was read too
    history = (await server.request("agent/history", {"sessionId": result["sessionId"]}))["result"]["messages"]
    assert [(m["role"], m["content"]) for m in history] == [("user", "keep-alives"), ("assistant", "one two three")]
    assert chat_history_problems(requests_of(chat_api, "keep-alives")[0]["messages"]) == []
    tally(AREA, cases=1)


# ---- stop means stop ----------------------------------------------------------------------------------------------


async def test_abort_in_every_fault_state(server, chat_api, long_run):
    first = await server.request("agent/chat", {"message": "hello"})
    chat_api.script[:] = []
    session_id = first["result"]["sessionId"]
    said = ["hello"]
    half_call = say("Let me look") + [calls(fragment(0, "call_a", "read_file", '{"pa'))]

    def updates():
        return [n["params"]["update"] for n in server.notifications if n["method"] == "agent/update"
                and n["params"]["sessionId"] == session_id]

    def asked(k: int):
        return lambda: len(chat_api.requests) >= k

    cells = [
        ("before the headers", [{"hold": True}], lambda k: asked(k)),
        ("during the text", [dict(text("Working on it"), hang=True)],
         lambda k: lambda: any(u["kind"] == "text_delta" for u in updates())),
        ("during a slow stream", [dict(text("one two three four five six"), delay=0.3)],
         lambda k: lambda: any(u["kind"] == "text_delta" for u in updates())),
        ("mid-tool-call", [{"chunks": half_call, "hang": True}],
         lambda k: lambda: any(u["kind"] == "text_delta" for u in updates())),
        ("waiting to retry a 429", [status(429, "slow down", **{"retry-after": "3"}), OK], lambda k: asked(k)),
        # a retry-after as long as the 429's: our own back-off alone is short enough for both retries to go out
        # before the abort arrives on a loaded machine
        ("waiting to retry a 503", [status(503, "upstream connect error", **{"retry-after": "3"})] * 3,
         lambda k: asked(k)),
        ("after a cut stream's tool call ran", [dict(TOOL_REPLY, cut_after=FINISH_AT + 1),
                                                dict(text("and then"), hang=True)], lambda k: asked(k + 1)),
    ]
    for name, script, ready in [cell for _ in range(3 if long_run else 1) for cell in cells]:
        message = f"abort {name} ({len(said)})"
        chat_api.script[:] = json.loads(json.dumps(script))
        server.notifications.clear()
        k = len(chat_api.requests) + 1
        condition = ready(k)
        future = server.request_future("agent/chat", {"sessionId": session_id, "message": message,
                                                      "permissionMode": "bypassPermissions"})
        await until(condition, ANSWER_CEILING, f"{name}: the chat to get to the point of the abort")
        aborted_at = time.monotonic()
        assert (await server.request("agent/abort", {"sessionId": session_id}))["result"] == {"aborted": True}
        result = (await asyncio.wait_for(future, ANSWER_CEILING))["result"]
        late = [body for t, body in zip(chat_api.arrivals, chat_api.requests)
                if t > aborted_at and body in requests_of(chat_api, message)]
        said.append(message)
        problems = [] if result["stopReason"] == "aborted" else [f"stopReason {result['stopReason']}"]
        problems += [f"{len(late)} model request(s) began after the abort"] if late else []
        problems += await check_next_chat(server, chat_api, session_id, said)
        said.append("next, please")
        tally(AREA + ": abort", cases=1, wrong=int(bool(problems)), lost=sum("lost" in p for p in problems))
        assert not problems, (name, problems)



async def test_faults_over_tls(start_server, tmp_path):
    """A remote model's edges (tests/reliability/tls_faults.py), through the openai SDK."""
    cells = [("a reply", [OK], {"end_turn"}), ("a reset mid-stream", [dict(TOOL_REPLY, reset_after=3)], ERROR),
             ("ended before its finish reason", [dict(TOOL_REPLY, cut_after=2)], ERROR),
             ("a reply after the reset", [OK], {"end_turn"})]
    failures = await faults_over_tls(start_server, tmp_path, AREA, lambda tls: FakeChatCompletions(tls=tls).start(),
                                     lambda url, ca: openai_env(url, SSL_CERT_FILE=ca), lambda api: api.api_url,
                                     "/chat/completions", cells, check_next_chat)
    assert not failures, "\n".join(failures)
