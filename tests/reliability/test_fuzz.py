"""Fuzz one long-lived real server: hostile params for every request, settings, raw JSON-RPC frames.

Each case is pipelined with the others of its example; each request must be answered (a result, or an error with
a code the contract names: -32602 naming the field, -32601, -32600, -32700, -32001), never -32603, never a
traceback; notifications must be ignored quietly. A normal chat must still succeed after every few examples and
at the end. Counts: >= 2,000 cases in CI, 10,000 with --long.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fakes.messages_api import FakeMessagesAPI
from tests.reliability import strategies as S
from tests.reliability.conftest import OK_REPLY, server_env, tally
from tests.reliability.rawlsp import ANSWER_CEILING, RawServer, frame

NAMED_CODES = {-32700, -32600, -32601, -32602, -32001}
CHAT_KEYS = {"sessionId", "stopReason", "finalMessage", "metadata"}


class Campaign:
    """One server on a loop of its own (hypothesis drives a plain function), and the counts."""

    def __init__(self, tmp: Path, long_run: bool) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.fake = FakeMessagesAPI().start()
        self.fake.default = OK_REPLY
        self.tmp = tmp
        self.long = long_run
        self.cases = self.crashes = self.hangs = self.wrong = 0
        self.problems: list[str] = []
        self.examples = 0
        root = tmp / "ws"
        root.mkdir()
        (root / "a.py").write_text("x = 1\n")
        self.server: RawServer = self.run(self._start(root))

    async def _start(self, root: Path) -> RawServer:
        server = await RawServer.start("--data-dir", str(self.tmp / "state"), env=server_env(self.fake.base_url))
        server.handlers["workspace/applyEdit"] = lambda params: {"applied": True}
        await server.initialize(root, init_options={"maxTurns": "many", "readTimeout": [1], "x": {"deep": [[]]}})
        return server

    def run(self, coroutine, timeout: float = 600):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def wrong_answer(self, what: str) -> None:
        self.wrong += 1
        if len(self.problems) < 20:
            self.problems.append(what[:500])

    # ---- one example: a list of cases, pipelined --------------------------------------------------------

    async def requests(self, cases: list[tuple[str, object, bool]]) -> None:
        futures = []
        for method, params, as_notification in cases:
            self.cases += 1
            if as_notification:
                self.server.send_raw(frame(S.encode({"jsonrpc": "2.0", "method": method, "params": params})))
                continue
            msg_id = self.server.next_id()
            future = asyncio.get_running_loop().create_future()
            self.server.pending[msg_id] = future
            self.server.send_raw(frame(S.encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})))
            futures.append((method, params, future))
        for method, params, future in futures:
            await self.judge(method, future)

    async def judge(self, method: str, future: asyncio.Future) -> None:
        try:
            answer = await asyncio.wait_for(future, ANSWER_CEILING)
        except asyncio.TimeoutError:
            self.hangs += 1
            self.problems.append(f"no answer to {method}")
            return
        except ConnectionError:
            self.crashes += 1
            return
        self.check_answer(method, answer)

    def check_answer(self, method: str, answer: dict) -> None:
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
        if method == "agent/chat" and not CHAT_KEYS <= set(answer.get("result") or {}):
            return self.wrong_answer(f"agent/chat: not a chat result: {text}")

    async def health(self) -> None:
        """A normal chat still succeeds."""
        self.cases += 1
        answer = await self.server.request("agent/chat", {"message": "are you there?"})
        result = answer.get("result") or {}
        if result.get("stopReason") != "end_turn" or result.get("finalMessage") != "ok":
            self.wrong_answer(f"health chat failed: {answer}")

    async def raw(self, frames: list[bytes]) -> None:
        """Raw frames, then a line that ends any frame left waiting for bytes, then a probe that must answer."""
        for data in frames:
            self.cases += 1
            self.server.send_raw(data)
        self.server.send_raw(b" " * 64 + b"\r\n")
        answer = await self.server.request("agent/sessions", {})
        if "result" not in answer:
            self.wrong_answer(f"probe after raw frames: {answer}")

    def alive(self) -> bool:
        return self.server.proc.returncode is None

    def close(self) -> None:
        try:
            self.run(self.health())
            self.run(self.server.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.fake.stop()


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, request):
    c = Campaign(tmp_path_factory.mktemp("fuzz"), bool(request.config.getoption("--long")))
    yield c
    c.close()
    tally("fuzz: requests, settings, frames", cases=c.cases, crashes=c.crashes + (0 if c.server.proc.returncode == 0
                                                                                      else 1), hangs=c.hangs,
          wrong=c.wrong)
    unmatched = [m for m in c.server.unmatched if m.get("id") is not None and not str(m["id"]).startswith("raw-")]
    assert not unmatched, f"answers to ids never sent: {unmatched[:3]}"
    assert c.server.proc.returncode == 0, c.server.stderr.decode(errors="replace")[-3000:]


def scaled(ci: int, long: int):
    """Examples for CI, or for --long (decided when the module is collected)."""
    import sys
    return long if "--long" in sys.argv else ci


case = st.one_of(
    S.request_case.map(lambda c: (c[0], c[1], False)),
    S.notification_case.map(lambda c: (c[0], c[1], True)),
)
FUZZ = settings(deadline=None, database=None, derandomize="--long" not in __import__("sys").argv,
                suppress_health_check=list(HealthCheck), print_blob=False,
                phases=[Phase.explicit, Phase.generate])  # no shrinking: the failing example is printed as is


@settings(FUZZ, max_examples=scaled(100, 450))
@given(st.lists(case, min_size=15, max_size=20))
def test_requests_and_notifications(campaign, cases):
    campaign.examples += 1
    campaign.run(campaign.requests(cases))
    if campaign.examples % 15 == 0:
        campaign.run(campaign.health())
    assert campaign.alive(), campaign.server.stderr.decode(errors="replace")[-3000:]
    assert not campaign.hangs and not campaign.wrong, campaign.problems


@settings(FUZZ, max_examples=scaled(45, 200))
@given(st.lists(S.raw_frames, min_size=4, max_size=8))
def test_raw_frames(campaign, frames):
    campaign.run(campaign.raw(frames))
    assert campaign.alive(), campaign.server.stderr.decode(errors="replace")[-3000:]
    assert not campaign.hangs and not campaign.wrong, campaign.problems


@settings(FUZZ, max_examples=scaled(35, 150))
@given(st.lists(S.settings, min_size=3, max_size=6))
def test_settings(campaign, objects):
    async def go():
        for value in objects:
            campaign.cases += 1
            campaign.server.send_raw(frame(S.encode({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                                                     "params": {"settings": {"agentLsp": value}}})))
        campaign.server.notify("workspace/didChangeConfiguration", {"settings": {"agentLsp": {}}})
        await campaign.health()
    campaign.run(go())
    assert campaign.alive() and not campaign.wrong, campaign.problems


def test_named_findings(campaign):
    """The cases found from outside, each spelled out."""
    async def go():
        s = campaign.server
        cases = [
            ("agent/chat", {"message": "hi \ud800 there"}, "message"),
            ("agent/chat", {"message": "x", "sessionId": "s-\udfff"}, "sessionId"),
            ("agent/chat", {"message": "x", "context": {"activeUri": "file:///a\ud83d.py"}}, "context.activeUri"),
            ("agent/history", {"sessionId": "\ud800"}, "sessionId"),
        ]
        for method, params, field in cases:
            answer = await s.request(method, params)
            assert answer["error"]["code"] == -32602 and answer["error"]["data"]["fields"] == [field], answer
            assert "lone UTF-16 surrogate" in answer["error"]["message"]
        empty = [("agent/chat", {"message": "x", "sessionId": ""}), ("agent/history", {"sessionId": ""}),
                 ("agent/abort", {"sessionId": ""}), ("agent/deleteSession", {"sessionId": ""}),
                 ("agent/revert", {"sessionId": ""}),
                 ("agent/confirmTool", {"sessionId": "", "toolCallId": "t", "decision": "allow_once"})]
        for method, params in empty:  # "" is no session: never a new one, never "not found"
            answer = await s.request(method, params)
            assert answer["error"]["code"] == -32602 and answer["error"]["data"]["fields"] == ["sessionId"], answer
        sessions = (await s.request("agent/sessions", {}))["result"]["sessions"]
        assert all(x["sessionId"] for x in sessions)
        answer = await s.request("agent/chat", {"message": "x", "jsonrpc": "2.0", "id": 5, "method": "exit"})
        assert answer["result"]["stopReason"] == "end_turn"
        for method in ("textDocument/hover", "workspace/executeCommand", "textDocument/completion"):
            for params in (None, [1], {"jsonrpc": "2.0"}, "x"):
                answer = await s.request(method, params)
                assert answer["error"]["code"] in (-32601, -32602), answer
        assert (await s.request("textDocument/completion", {}))["error"]["code"] == -32601
        s.send_raw(frame(S.encode({"jsonrpc": "2.0", "id": 424242, "method": "agent/chat",
                                   "params": {"message": "x", "context": S.DEEP + "2000"}})))
        s.pending[424242] = asyncio.get_running_loop().create_future()
        deep = await asyncio.wait_for(s.pending[424242], ANSWER_CEILING)
        assert deep["error"]["code"] == -32602 and "nested deeper" in deep["error"]["message"]
        before = len(s.unmatched)
        for length in (2**40, 2**64):
            s.send_raw(b"Content-Length: %d\r\n\r\n" % length)
        await s.request("agent/sessions", {})
        too_large = [m for m in s.unmatched[before:] if m["error"]["code"] == -32600]
        assert len(too_large) == 2 and "over the limit" in too_large[0]["error"]["message"]
        assert s.rss_kb() < 400_000
        campaign.cases += len(cases) + len(empty) + 16
    campaign.run(go())
    assert campaign.alive()
