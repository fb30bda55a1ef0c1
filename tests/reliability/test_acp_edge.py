"""The ACP edge under fire: `agent-lsp --acp` driven by a raw client (rawacp.py) that sends exact bytes and answers
the agent's own requests as badly as it likes.

- requests and frames: hypothesis params for every method the agent serves, raw lines (not JSON, not objects,
  batches, partial lines, many-MB lines, blank lines, CRLF, unknown methods, answers to unknown ids, notifications
  with ids); every request answered with a code the contract names, never -32603, never a traceback;
- client answers: fs/*, terminal/* and session/request_permission answered with errors, wrong shapes, huge
  values, malformed errors, or never (then cancelled): the prompt ends with a stop reason, the session goes on;
- cancel in every state (streaming, awaiting permission, an fs call pending, a terminal running, between turns);
- a client that vanishes mid-prompt: the agent exits cleanly and the turn so far loads from a new process;
- SIGKILL mid-prompt again and again on one data dir: every session loads, every finished prompt is there, and
  the stored history is one the Messages API accepts.
"""

from __future__ import annotations

import asyncio
import functools
import json
import signal
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fakes.messages_api import FakeMessagesAPI
from tests.reliability import strategies as S
from tests.reliability.conftest import server_env, tally
from tests.reliability.history_check import history_problems
from tests.reliability.rawacp import ANSWER_CEILING, NO_ANSWER, ErrorAnswer, RawAcp, RawAnswer, line

LONG = "--long" in sys.argv
NAMED_CODES = {-32700, -32600, -32601, -32602}
STOP_REASONS = {"end_turn", "cancelled", "max_tokens", "max_turn_requests", "refusal"}
FUZZ = settings(deadline=None, database=None, derandomize=not LONG, suppress_health_check=list(HealthCheck),
                print_blob=False, phases=[Phase.explicit, Phase.generate])


def scaled(ci: int, long: int) -> int:
    return long if LONG else ci


# ---- the model: replies chosen by a marker in the prompt (order-free, so cases can share one agent) ---------

def reply_for(body: dict) -> dict:
    """`[read]`, `[write]`, `[run]`, `[slow]` in the last prompt ask for that; a tool result gets "done"."""
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    if any(b.get("type") == "tool_result" for b in content):
        return {"content": [{"type": "text", "text": "done"}]}
    said = json.dumps(content)
    if "[read]" in said:
        return {"content": [{"type": "tool_use", "name": "read_file", "input": {"path": "a.py"}}]}
    if "[write]" in said:
        return {"content": [{"type": "tool_use", "name": "write_file", "input": {"path": "b.py", "content": "y = 2\n"}}]}
    if "[run]" in said:
        return {"content": [{"type": "tool_use", "name": "run_command", "input": {"command": "echo hi"}}]}
    if "[slow]" in said:
        return {"content": [{"type": "text", "text": "streaming " * 400}], "delay": 0.02}
    return {"content": [{"type": "text", "text": "ok"}]}


GOOD = {
    "fs/read_text_file": lambda p: {"content": "x = 1\n"},
    "fs/write_text_file": lambda p: {},
    "terminal/create": lambda p: {"terminalId": "term-1"},
    "terminal/output": lambda p: {"output": "hi\n", "truncated": False},
    "terminal/wait_for_exit": lambda p: {"exitCode": 0},
    "terminal/kill": lambda p: {},
    "terminal/release": lambda p: {},
    "session/request_permission": lambda p: {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
}
MARKER = {"fs/read_text_file": "[read]", "fs/write_text_file": "[write]", "terminal/create": "[run]",
          "terminal/output": "[run]", "terminal/wait_for_exit": "[run]", "terminal/kill": "[run]",
          "terminal/release": "[run]", "session/request_permission": "[write]"}


class Agent:
    """One `agent-lsp --acp` on a loop of its own (hypothesis drives plain functions), its sessions, the counts."""

    def __init__(self, tmp: Path, area: str) -> None:
        self.area = area
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fake = FakeMessagesAPI().start()
        self.fake.default = reply_for
        self.tmp = tmp
        self.root = tmp / "ws"
        self.root.mkdir()
        (self.root / "a.py").write_text("x = 1\n")
        self.cases = self.crashes = self.hangs = self.wrong = 0
        self.problems: list[str] = []
        self.server: RawAcp = self.run(self._start())

    async def _start(self) -> RawAcp:
        server = await RawAcp.start("--data-dir", str(self.tmp / "state"), env=server_env(self.fake.base_url))
        server.handlers.update(GOOD)
        await server.initialize()
        self.session = await server.new_session(self.root)
        self.asking = await server.new_session(self.root)  # default mode: edits ask
        await server.request("session/set_mode", {"sessionId": self.session, "modeId": "bypassPermissions"})
        return server

    def run(self, coroutine, timeout: float = 600):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def wrong_answer(self, what: str) -> None:
        self.wrong += 1
        if len(self.problems) < 20:
            self.problems.append(what[:600])

    async def answer(self, method: str, future: asyncio.Future) -> dict | None:
        try:
            return await asyncio.wait_for(future, ANSWER_CEILING)
        except asyncio.TimeoutError:
            self.hangs += 1
            self.problems.append(f"no answer to {method}")
        except ConnectionError:
            self.crashes += 1
            self.problems.append(f"the agent died on {method} (exit {self.server.proc.returncode}): "
                                 f"{self.server.stderr.decode(errors='replace')[-1500:]}")
        return None

    def check(self, method: str, answer: dict) -> None:
        text = json.dumps(answer)
        if "Traceback" in text or "site-packages" in text:
            return self.wrong_answer(f"{method}: traceback in the answer: {text}")
        if "error" in answer:
            error = answer["error"]
            if error.get("code") not in NAMED_CODES:
                return self.wrong_answer(f"{method}: unnamed error {text}")
            if error["code"] == -32602 and not (error.get("data") or {}).get("fields") and ":" not in error["message"]:
                return self.wrong_answer(f"{method}: -32602 naming no field: {text}")
            return
        if method == "session/prompt" and (answer.get("result") or {}).get("stopReason") not in STOP_REASONS:
            return self.wrong_answer(f"session/prompt: not a prompt result: {text}")

    async def healthy(self) -> None:
        """A plain prompt still ends its turn."""
        self.cases += 1
        answer = await self.answer("health", self.server.prompt(self.session, "are you there?"))
        if answer is not None and (answer.get("result") or {}).get("stopReason") != "end_turn":
            self.wrong_answer(f"health prompt failed: {answer}")

    def alive(self) -> bool:
        return self.server.proc.returncode is None

    def close(self) -> None:
        try:
            self.run(self.healthy())
            code = self.run(self.server.stop())
            if code != 0:
                self.crashes += 1
            stderr = self.server.stderr.decode(errors="replace")
            if "Traceback" in stderr:
                self.wrong_answer(f"a traceback on stderr: {stderr[-3000:]}")
            if self.server.bad_lines:
                self.wrong_answer(f"lines on stdout that are not JSON: {self.server.bad_lines[:3]}")
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.fake.stop()
        tally(self.area, cases=self.cases, crashes=self.crashes, hangs=self.hangs, wrong=self.wrong)


# ---- requests and frames ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    agent = Agent(tmp_path_factory.mktemp("acp-fuzz"), "ACP: requests and frames")
    yield agent
    agent.close()
    unmatched = [m for m in agent.server.unmatched if m.get("id") is not None]
    assert not unmatched, f"answers to ids never sent: {unmatched[:3]}"
    assert not agent.crashes and not agent.hangs and not agent.wrong, agent.problems


def _method_params(agent: Agent) -> st.SearchStrategy:
    """(method, params) for every method the agent serves, valid or not, some unknown."""
    sessions = st.one_of(S.session_id, st.sampled_from([agent.session, agent.asking]))
    cwd = st.one_of(st.just(str(agent.root)), st.sampled_from(["/", "relative", "/nope/x", "/\x00", "/" + "a" * 5000, ""]))
    blocks = st.lists(st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=60)}),
        st.fixed_dictionaries({"type": st.sampled_from(["resource_link", "resource", "image", "audio", "x"]),
                               "uri": st.sampled_from(["file:///nope", str(agent.root / "a.py"), "x"]),
                               "name": st.text(max_size=5), "data": st.text(max_size=8),
                               "mimeType": st.sampled_from(["image/png", "text/plain", ""])}),
        S.hostile), max_size=3)
    table = {
        "initialize": S.params({"protocolVersion": st.integers(-3, 2**40)},
                               {"clientCapabilities": st.fixed_dictionaries({}, optional={
                                   "fs": st.fixed_dictionaries({"readTextFile": st.booleans()}),
                                   "terminal": st.booleans()}), "clientInfo": S.hostile}),
        "authenticate": S.params({"methodId": st.text(max_size=10)}, {}),
        "session/new": S.params({"cwd": cwd, "mcpServers": st.just([])}, {"additionalDirectories": st.just([])}),
        "session/load": S.params({"cwd": cwd, "sessionId": sessions, "mcpServers": st.just([])}, {}),
        "session/list": st.one_of(st.none(), S.params({}, {"cwd": cwd, "cursor": st.sampled_from(["0", "1", "²", "-1", "x"])})),
        "session/prompt": S.params({"sessionId": sessions, "prompt": blocks}, {}),
        "session/set_mode": S.params({"sessionId": sessions, "modeId": st.sampled_from(
            ["default", "plan", "acceptEdits", "nope"])}, {}),
        "session/set_config_option": S.params({"sessionId": sessions, "configId": st.sampled_from(["model", "x"]),
                                               "value": st.one_of(st.text(max_size=10), st.booleans())},
                                              {"type": st.sampled_from(["boolean", "select"])}),
        "session/close": S.params({"sessionId": sessions}, {}),
        "session/fork": S.params({"sessionId": sessions, "cwd": cwd}, {}),
        "session/nope": S.hostile,
        "_agent-lsp/x": S.hostile,
    }
    return st.sampled_from(sorted(table)).flatmap(lambda m: st.tuples(st.just(m), table[m]))


def notification_case(agent: Agent) -> st.SearchStrategy:
    sessions = st.one_of(S.session_id, st.sampled_from([agent.session, agent.asking]))
    return st.one_of(st.tuples(st.just("session/cancel"), S.params({"sessionId": sessions}, {})),
                     st.tuples(st.sampled_from(["session/nope", "_x/y", "initialized"]), S.hostile))


@functools.lru_cache(maxsize=None)
def method_params(agent: Agent) -> st.SearchStrategy:
    return _method_params(agent)


@settings(FUZZ, max_examples=scaled(60, 400))
@given(data=st.data())
def test_requests_and_notifications(fuzzed, data):
    cases = data.draw(st.lists(st.one_of(method_params(fuzzed).map(lambda c: (*c, False)),
                                         notification_case(fuzzed).map(lambda c: (*c, True))), min_size=8, max_size=14))

    async def go():
        futures = []
        for method, params, notification in cases:
            fuzzed.cases += 1
            message = {"jsonrpc": "2.0", "method": method, "params": params}
            if not notification:
                msg_id = fuzzed.server.next_id()
                future = asyncio.get_running_loop().create_future()
                fuzzed.server.pending[msg_id] = future
                message["id"] = msg_id
                futures.append((method, future))
            fuzzed.server.send_raw(S.encode(message) + b"\n")
        for method, future in futures:
            answer = await fuzzed.answer(method, future)
            if answer is not None:
                fuzzed.check(method, answer)
        # a prompt the fuzz left waiting for permission (the asking session) is let go
        await fuzzed.server.request("session/list", {})
    fuzzed.run(go())
    assert fuzzed.alive(), fuzzed.server.stderr.decode(errors="replace")[-3000:]
    assert not fuzzed.hangs and not fuzzed.wrong, fuzzed.problems


@functools.lru_cache(maxsize=None)
def raw_lines(agent: Agent) -> st.SearchStrategy:
    big = 5 if not LONG else 20
    request = method_params(agent).map(lambda c: S.encode({"jsonrpc": "2.0", "id": "raw-1", "method": c[0],
                                                          "params": c[1]}))
    return st.one_of(
        st.binary(max_size=60).filter(lambda b: b"\n" not in b).map(lambda b: b + b"\n"),   # not JSON, not UTF-8
        st.sampled_from([b"{", b"[", b"nul", b'{"jsonrpc": "2.0", "id": 1,', b"\xff\xfe", b"[]", b"42", b'"x"',
                         b"null", b"true", b'{"jsonrpc":"2.0"}', b"{}"]).map(lambda b: b + b"\n"),
        st.lists(request, min_size=1, max_size=3).map(lambda rs: b"[" + b",".join(rs) + b"]\n"),  # a batch
        request.map(lambda r: r + b"\r\n"),                                                 # CRLF
        st.tuples(request, st.integers(1, 30)).map(lambda c: c[0][:-c[1]] + b"\n"),         # cut short
        request.map(lambda r: r[: len(r) // 2]),                                            # partial: no newline
        st.sampled_from([b"\n", b"\r\n", b"   \n", b"\n\n\n", b"\t\r\n"]),                   # blank lines
        st.sampled_from([                                                                    # odd messages
            b'{"jsonrpc":"2.0","id":{"a":1},"method":"session/list"}', b'{"jsonrpc":"2.0","id":[1],"result":1}',
            b'{"jsonrpc":"2.0","id":true,"method":"session/list"}', b'{"jsonrpc":"2.0","id":"raw-5","method":7}',
            b'{"jsonrpc":"2.0","id":"raw-9999","result":null}', b'{"jsonrpc":"2.0","id":123456789,"error":5}',
            b'{"jsonrpc":"2.0","id":77777,"error":{"code":"x","message":[]}}',
            b'{"jsonrpc":"2.0","id":"raw-3","method":"session/cancel","params":{"sessionId":"s-1"}}',
            b'{"jsonrpc":"2.0","id":"raw-4","method":"session/update","params":{}}',
            b'{"jsonrpc":"2.0","id":"raw-6","method":"initialize","params":{}}',
            b'{"jsonrpc":"2.0","id":"raw-8","method":"nope/nope","params":{}}',
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}',
            b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"\\ud800"}}',
            b'{"jsonrpc":"2.0","id":"raw-10","method":"session/list","params":{"cursor":"\\udfff"}}',
            b'{"jsonrpc":"2.0","id":"raw-11","method":"session/list","params":{"\\ud800":1}}',
            b'{"jsonrpc":"2.0","id":"raw-12","method":"session/new","params":' + b"[" * 3000 + b"]" * 3000 + b"}",
            b'{"jsonrpc":"2.0","id":"raw-13","method":"session/new","params":{"cwd":"' + b"a" * (big << 20) + b'"}}',
            b"x" * (big << 20),
        ]).map(lambda b: b + b"\n"),
    )


@settings(FUZZ, max_examples=scaled(25, 150))
@given(data=st.data())
def test_raw_lines(fuzzed, data):
    lines = data.draw(st.lists(raw_lines(fuzzed), min_size=3, max_size=8))

    async def go():
        for raw in lines:
            fuzzed.cases += 1
            fuzzed.server.send_raw(raw)
        fuzzed.server.send_raw(b"\n")  # ends a partial line left waiting
        answer = await fuzzed.answer("probe", fuzzed.server.request_future("session/list", {}))
        if answer is not None and "result" not in answer:
            fuzzed.wrong_answer(f"probe after raw lines: {answer}")
        for message in [m for m in fuzzed.server.unmatched if "error" in m]:
            fuzzed.check("raw", message)
        fuzzed.server.unmatched[:] = [m for m in fuzzed.server.unmatched if m.get("id") not in (None, "raw-1")
                                      and not str(m.get("id")).startswith("raw-")]
    fuzzed.run(go())
    assert fuzzed.alive(), fuzzed.server.stderr.decode(errors="replace")[-3000:]
    assert not fuzzed.hangs and not fuzzed.wrong, fuzzed.problems
    fuzzed.run(fuzzed.healthy())


def test_named_frames(fuzzed):
    """The lines that stopped the agent or went unanswered, each spelled out with its answer."""
    async def go():
        s = fuzzed.server
        expected = [(b"not json\n", -32700), (b"[1,2]\n", -32600), (b"5\n", -32600), (b'"x"\n', -32600),
                    (b'[{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}]\n', -32600),
                    (b'{"jsonrpc":"2.0","id":{},"method":"session/list"}\n', -32600),
                    (b"{}\n", -32600)]
        for raw, code in expected:
            before = len(s.unmatched)
            s.send_raw(raw)
            await s.request("session/list", {})
            answers = [m for m in s.unmatched[before:]]
            assert [(m["id"], m["error"]["code"]) for m in answers] == [(None, code)], (raw, answers)
        for raw in (b'{"jsonrpc":"2.0","id":[1],"result":1}\n', b'{"jsonrpc":"2.0","id":99999,"error":5}\n'):
            s.send_raw(raw)  # an answer nobody asked for, or a malformed one: dropped, the agent serves on
            assert "result" in await s.request("session/list", {})
        bad = await s.request("session/list", {"cursor": "²"})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["fields"] == ["cursor"], bad
        bad = await s.request("session/list", {"cwd": "/a\x00b"})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["fields"] == ["cwd"], bad
        bad = await s.request("session/new", {"cwd": "/" + "a" * 5000, "mcpServers": []})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["fields"] == ["cwd"], bad
        bad = await s.request("session/new", {"cwd": "/tmp\ud800", "mcpServers": []})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["fields"] == ["cwd"], bad
        bad = await s.request("session/set_mode", {"sessionId": fuzzed.session, "modeId": {"a": 1}})
        assert bad["error"] == {"code": -32602, "message": "Invalid params: modeId: Input should be a valid string",
                                "data": {"fields": ["modeId"]}}, bad
        s.send_raw(b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}\n')
        assert "result" in await s.request("session/list", {})
        fuzzed.cases += len(expected) + 8
    fuzzed.run(go())
    stderr = fuzzed.server.stderr.decode(errors="replace")
    assert "Traceback" not in stderr, stderr[stderr.find("Traceback") - 300:][:3000]


async def test_a_first_line_over_the_early_readers_limit(tmp_path):
    """The line `initialize` is looked for in has a limit (acp/initialize.py): past it the agent ended at once."""
    from agent_lsp.acp.initialize import LINE_LIMIT

    agent = await RawAcp.start("--data-dir", str(tmp_path / "state"), env=server_env(None))
    agent.send_raw(b"x" * (LINE_LIMIT + 1024) + b"\n")
    answer = await agent.initialize()
    assert answer["result"]["protocolVersion"] == 1, answer
    assert all(m["id"] is None and m["error"]["code"] == -32700 for m in agent.unmatched), agent.unmatched
    assert await agent.stop() == 0
    assert "Traceback" not in agent.stderr.decode(errors="replace")
    tally("ACP: requests and frames", cases=1)


# ---- client answers and cancel ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    agent = Agent(tmp_path_factory.mktemp("acp-answers"), "ACP: client answers, cancel")
    yield agent
    agent.close()
    assert not agent.crashes and not agent.hangs and not agent.wrong, agent.problems


class Big(dict):
    """A huge answer, shown short."""

    def __repr__(self) -> str:
        return f"Big({', '.join(self)})"


def hostile_answer(method: str) -> st.SearchStrategy:
    errors = st.builds(ErrorAnswer, st.sampled_from([-32603, -32002, -32602, -32601, 1, 0]), st.text(max_size=30))
    shapes = S.hostile.filter(lambda v: not isinstance(v, str) or not v.startswith((S.DEEP, S.BIG)))
    huge = st.sampled_from([Big({"content": "z" * (3 << 20)}), Big({"output": "z" * (3 << 20), "truncated": True}),
                            Big({"outcome": {"outcome": "selected", "optionId": "o" * 100_000}})])
    raw = st.sampled_from([RawAnswer(b'{"jsonrpc":"2.0","id":$ID,"error":5}\n'),
                           RawAnswer(b'{"jsonrpc":"2.0","id":$ID,"error":{"code":"x"}}\n'),
                           RawAnswer(b'{"jsonrpc":"2.0","id":$ID}\n'),
                           RawAnswer(b'{"jsonrpc":"2.0","id":$ID,"result":{"content":"\\ud800 lone"}}\n'),
                           RawAnswer(b'{"jsonrpc":"2.0","id":$ID,"result":{"outcome":{"outcome":"selected","optionId":"allow_always"}}}\n'),
                           RawAnswer(b'{"jsonrpc":"2.0","id":$ID,"result":{"outcome":{"outcome":"cancelled"}}}\n')])
    return st.one_of(errors, shapes, huge, raw, st.just(NO_ANSWER))


def hostile_case() -> st.SearchStrategy:
    return st.sampled_from(sorted(GOOD)).flatmap(lambda m: st.tuples(st.just(m), hostile_answer(m)))


async def one_answer_case(agent: Agent, method: str, reply: Any) -> None:
    """A prompt whose `method` request gets `reply`; never answered → cancelled once asked. Then a plain prompt."""
    s = agent.server
    agent.cases += 1
    s.handlers[method] = lambda params: reply
    session = agent.asking if method == "session/request_permission" else agent.session
    asked = len([r for r in s.agent_requests if r["method"] == method])
    future = s.prompt(session, f"do it {MARKER[method]}")
    try:
        if reply is NO_ANSWER:
            try:
                await s.until(lambda: len([r for r in s.agent_requests if r["method"] == method]) > asked
                              or future.done())
            except TimeoutError:
                agent.hangs += 1
                agent.problems.append(f"{method} never asked")
            s.notify("session/cancel", {"sessionId": session})
        answer = await agent.answer(f"prompt with {method} answered {reply!r:.80}", future)
    finally:
        s.handlers.update(GOOD)
    if answer is None:
        return
    result = answer.get("result") or {}
    if result.get("stopReason") not in STOP_REASONS:
        agent.wrong_answer(f"the prompt ended {json.dumps(answer)[:400]} when {method} answered {reply!r:.150}")
    if reply is NO_ANSWER and result.get("stopReason") != "cancelled" and not future.done():
        agent.wrong_answer(f"{method} never answered, then cancelled: {answer}")
    for session_id in {session, agent.session}:
        after = await agent.answer("prompt after", s.prompt(session_id, "and now?"))
        if after is not None and (after.get("result") or {}).get("stopReason") != "end_turn":
            agent.wrong_answer(f"after {method} answered {reply!r:.100}: {after}")


@settings(FUZZ, max_examples=scaled(30, 200))
@given(st.lists(hostile_case(), min_size=1, max_size=3))
def test_hostile_client_answers(answered, cases):
    for method, reply in cases:
        answered.run(one_answer_case(answered, method, reply))
    assert answered.alive(), answered.server.stderr.decode(errors="replace")[-3000:]
    assert not answered.hangs and not answered.wrong, answered.problems


def test_every_method_never_answered_then_cancelled(answered):
    for method in sorted(GOOD):
        if method in ("terminal/kill", "terminal/release", "terminal/output"):
            continue  # asked only after the command ended or was cancelled: covered by the fuzz above
        answered.run(one_answer_case(answered, method, NO_ANSWER))
    assert not answered.hangs and not answered.wrong, answered.problems


async def cancel_in(agent: Agent, state: str) -> None:
    """Start a prompt, reach `state`, session/cancel: the prompt answers `cancelled`, the next one works."""
    s = agent.server
    agent.cases += 1
    session, text, waiting_for = agent.session, "hello [slow]", None
    if state == "awaiting permission":
        session, text, waiting_for = agent.asking, "edit [write]", "session/request_permission"
    elif state == "fs call pending":
        text, waiting_for = "look [read]", "fs/read_text_file"
    elif state == "terminal running":
        text, waiting_for = "run [run]", "terminal/wait_for_exit"
    if waiting_for:
        s.handlers[waiting_for] = lambda params: NO_ANSWER
    before = len(s.wire)
    asked = len(s.agent_requests)
    try:
        if state == "between turns":
            s.notify("session/cancel", {"sessionId": session})
            answer = await agent.answer("prompt after a cancel between turns", s.prompt(session, "hi"))
            if answer is not None and answer["result"]["stopReason"] != "end_turn":
                agent.wrong_answer(f"a cancel between turns cancelled the next prompt: {answer}")
            return
        future = s.prompt(session, text)
        if waiting_for:
            await s.until(lambda: any(r["method"] == waiting_for for r in s.agent_requests[asked:]))
        else:
            await s.until(lambda: any(m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"]
                                      == "agent_message_chunk" for m in s.wire[before:]))
        s.notify("session/cancel", {"sessionId": session})
        answer = await agent.answer(f"prompt cancelled while {state}", future)
    finally:
        s.handlers.update(GOOD)
    if answer is not None and (answer.get("result") or {}).get("stopReason") != "cancelled":
        agent.wrong_answer(f"cancelled while {state}: {answer}")
    if state == "terminal running":
        asked_after = [r["method"] for r in s.agent_requests[asked:]]
        if "terminal/kill" not in asked_after or "terminal/release" not in asked_after:
            agent.wrong_answer(f"a cancelled terminal was not killed and released: {asked_after}")
    after = await agent.answer("prompt after cancel", s.prompt(session, "and now?"))
    if after is not None and (after.get("result") or {}).get("stopReason") != "end_turn":
        agent.wrong_answer(f"after a cancel while {state}: {after}")


STATES = ["streaming", "awaiting permission", "fs call pending", "terminal running", "between turns"]


def test_cancel_in_every_state(answered):
    for _ in range(scaled(2, 10)):
        for state in STATES:
            answered.run(cancel_in(answered, state))
    assert not answered.hangs and not answered.wrong, answered.problems


# ---- a client that vanishes; SIGKILL ------------------------------------------------------------------------

OK = [{"content": [{"type": "text", "text": "ok"}]}]
SLOW = [{"content": [{"type": "text", "text": "working " * 3000}], "delay": 0.02}]
WRITE = [{"content": [{"type": "tool_use", "name": "write_file", "input": {"path": "b.py", "content": "y = 2\n"}}]}]
RUN = [{"content": [{"type": "tool_use", "name": "run_command", "input": {"command": "sleep 30"}}]}]


async def scripted_agent(data: Path, script: Path, replies: list, **handlers) -> RawAcp:
    """`--model script:` (no SDK to import: these tests start many processes); each prompt reads the file anew."""
    script.write_text(json.dumps(replies))
    agent = await RawAcp.start("--data-dir", str(data), "--model", f"script:{script}", env=server_env(None))
    agent.handlers.update(GOOD)
    agent.handlers.update(handlers)
    await agent.initialize()
    return agent


def stored_history(data: Path, session_id: str) -> list[dict]:
    from agent_lsp.models.anthropic import api_messages
    from agent_lsp.sessions.live import MESSAGE as _MESSAGE

    db = sqlite3.connect(data / "sessions.db")
    try:
        history = [_MESSAGE.validate_json(b) for (b,) in db.execute(
            "SELECT body FROM messages WHERE session_id = ? ORDER BY position", (session_id,))]
    finally:
        db.close()
    return api_messages(history)


async def load(data: Path, script: Path, root: Path, session_id: str) -> tuple[RawAcp, list[str]]:
    """A new process that session/loads the session: the user messages it replays."""
    agent = await scripted_agent(data, script, OK)
    answer = await agent.request("session/load", {"cwd": str(root), "sessionId": session_id, "mcpServers": []})
    assert "result" in answer, answer
    said, current = [], None
    for update in agent.updates(session_id):
        if update["sessionUpdate"] == "user_message_chunk":
            current = update["content"].get("text", "") if current is None else current + update["content"].get("text", "")
        elif current is not None:
            said.append(current)
            current = None
    if current is not None:
        said.append(current)
    return agent, said


VANISH = [("streaming", SLOW, {}, "agent_message_chunk"),
          ("awaiting permission", WRITE, {"session/request_permission": lambda p: NO_ANSWER}, "session/request_permission"),
          ("a terminal running", RUN, {"terminal/wait_for_exit": lambda p: NO_ANSWER}, "terminal/wait_for_exit")]


@pytest.mark.parametrize("how", ["stdin closed", "stdin and stdout closed"])
async def test_a_client_that_vanishes_mid_prompt(tmp_path, how):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    data, script = tmp_path / "state", tmp_path / "script.json"
    for state, replies, handlers, sign in VANISH:
        agent = await scripted_agent(data, script, replies, **handlers)
        session = await agent.new_session(root)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "default" if state ==
                                                 "awaiting permission" else "bypassPermissions"})
        agent.prompt(session, f"vanish while {state}")
        await agent.until(lambda: any(m.get("method") == sign or (m.get("method") == "session/update" and m["params"][
            "update"]["sessionUpdate"] == sign) for m in agent.wire))
        await agent.close_stdin()
        if how == "stdin and stdout closed":
            agent.proc._transport.get_pipe_transport(1).close()  # the agent's next write meets a broken pipe
        code = await agent.wait_exit(ANSWER_CEILING)
        stderr = agent.stderr.decode(errors="replace")
        assert code == 0 and "Traceback" not in stderr, (state, code, stderr[-3000:])
        again, said = await load(data, script, root, session)
        assert said == [f"vanish while {state}"], (state, said)
        assert history_problems(stored_history(data, session)) == [], state
        answer = await again.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go on"}]})
        assert answer["result"]["stopReason"] == "end_turn", answer
        assert await again.stop() == 0
        tally("ACP: client gone, SIGKILL", cases=1)


async def test_sigkill_mid_prompt_again_and_again(tmp_path):
    kills = scaled(4, 20)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    data, script = tmp_path / "killed", tmp_path / "script.json"
    finished: dict[str, list[str]] = {}
    session = None
    for n in range(kills):
        agent = await scripted_agent(data, script, OK, **{"terminal/wait_for_exit": lambda p: NO_ANSWER})
        if session is None or n % 2 == 0:
            session = await agent.new_session(root)
        else:
            assert "result" in await agent.request("session/load", {"cwd": str(root), "sessionId": session,
                                                                    "mcpServers": []})
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        answer = await agent.request("session/prompt", {"sessionId": session,
                                                        "prompt": [{"type": "text", "text": f"finished {n}"}]})
        assert answer["result"]["stopReason"] == "end_turn", answer
        finished.setdefault(session, []).append(f"finished {n}")
        script.write_text(json.dumps(SLOW if n % 2 else RUN))  # dies mid-text, or with a command running
        agent.prompt(session, f"interrupted {n}")
        sign = "agent_message_chunk" if n % 2 else "terminal/wait_for_exit"
        await agent.until(lambda: any(m.get("method") == sign or (m.get("method") == "session/update" and m["params"][
            "update"]["sessionUpdate"] == sign) for m in agent.wire))
        agent.proc.send_signal(signal.SIGKILL)
        await agent.wait_exit()
    db = sqlite3.connect(data / "sessions.db")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    for session_id, messages in finished.items():
        agent, said = await load(data, script, root, session_id)
        assert [m for m in said if m.startswith("finished")] == messages, (session_id, said)
        assert history_problems(stored_history(data, session_id)) == [], session_id
        answer = await agent.request("session/prompt", {"sessionId": session_id,
                                                        "prompt": [{"type": "text", "text": "go on"}]})
        assert answer["result"]["stopReason"] == "end_turn", answer
        assert history_problems(stored_history(data, session_id)) == [], session_id
        assert await agent.stop() == 0
    tally("ACP: client gone, SIGKILL", cases=kills)
