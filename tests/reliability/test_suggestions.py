"""Suggestions as you type under fire (PROTOCOL §10), on one long-lived server with a chat running beside it all
the while (tests/reliability/suggesting.py's lane: every update, answer and history of each chat checked).

- requests fuzzed: hypothesis params for `textDocument/inlineCompletion` (positions past the end of a line and of
  the document, documents unopened and closed, 10 MB lines, binary text and lone surrogates before the cursor, every
  trigger kind, hostile members) among didOpen/didChange/didClose/$/cancelRequest of any shape; the named cases
  spelled out;
- a thousand requests a second with a didChange between each two (typing, backspace, an edit elsewhere): every
  item is the one for its request's version;
- cancel in every state a request can be in, and storms of them: every request answered, every model request
  closed once no request waits for it;
- the model failing in every way of the fault matrix mid-suggestion, over the Messages API (`anthropic` SDK) and
  the legacy completions shape with `suffix` (`openai` SDK, FIM): `items: []`, one warning per cause, no retry,
  the next suggestion given.

Counts: crashes (the server died), hangs (a suggestion unanswered past `completions.timeout` + 30 s, a chat past
60 s), wrong (an answer §10 does not allow, an item for an older version, a failure shown twice), lost (a chat's
update or history lost).
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import threading
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.fakes.messages_api import FakeMessagesAPI, reply_events
from tests.reliability import strategies as S
from tests.reliability.conftest import server_env, tally
from tests.reliability.rawlsp import NO_ANSWER, RawServer, frame
from tests.reliability.suggesting import (
    BOUND_SLACK, OTHER, TARGET, ChatLane, Typed, Typist, WatchedServer, answer_for, answer_problems, answered,
    completions_settings, configure, expected_item_text, fim_prefix, fim_says, items_of, messages_prefix, messages_says,
    pace, version_problems, warnings)

LONG = "--long" in sys.argv
AREA_FUZZ = "suggestions: requests fuzzed"
AREA_RATE = "suggestions: 1,000 a second, edits between"
AREA_CANCEL = "suggestions: cancel in every state"
AREA_FAULTS = "suggestions: model faults"
AREA_CHATS = "suggestions: chats beside"
TIMEOUT = 30.0
"""completions.timeout where no cell needs it to fire (a ceiling on a loaded machine)."""
SHORT_TIMEOUT = 1.0
"""completions.timeout for the cells where the model stalls."""
FUZZ = settings(deadline=None, database=None, derandomize=not LONG, suppress_health_check=list(HealthCheck),
                print_blob=False, phases=[Phase.explicit, Phase.generate])


def scaled(ci: int, long: int) -> int:
    return long if LONG else ci


class Bench:
    """One server on a loop of its own (hypothesis drives plain functions): a chat model, the two suggestion
    models, the typist, and the chat lane running from start to end."""

    def __init__(self, tmp: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.chat = FakeMessagesAPI().start()
        self.models: dict[str, Any] = {"anthropic": FakeMessagesAPI().start(), "fim": FakeLegacyCompletions().start()}
        self.models["anthropic"].default = lambda body: messages_says(answer_for(messages_prefix(body)))
        self.models["fim"].default = lambda body: fim_says(answer_for(fim_prefix(body)))
        self.root = tmp / "ws"
        self.root.mkdir()
        (self.root / "a.py").write_text("x = 1\n")
        self.tmp = tmp
        self.kind = "anthropic"
        self.server: RawServer = self.run(self._start())
        self.typist = Typist(self.server, self.root)
        self.lane = ChatLane(self.server, self.chat, AREA_CHATS)
        self.run(self._start_lane())

    async def _start(self) -> RawServer:
        server = await WatchedServer.start("--data-dir", str(self.tmp / "state"), env=server_env(
            self.chat.base_url, OPENAI_API_KEY="test-key", AGENT_LSP_DEBUG="1"))
        server.handlers["workspace/applyEdit"] = lambda params: {"applied": True}
        server.handlers["agent/languageFeature"] = lambda params: []
        await server.initialize(self.root, agent={"languageFeatures": ["textDocument/definition"]}, init_options={
            "completions": completions_settings("anthropic", self.models["anthropic"], timeout=TIMEOUT)})
        return server

    async def _start_lane(self) -> None:
        self.lane.phase = "warm-up"
        self.lane.start()
        await self.lane.until_chats(2)
        self.lane.phase = "alone"  # the figures' baseline: chats with no suggestion asked
        await self.lane.until_chats(6)
        self.lane.phase = "beside suggestions"

    def run(self, coroutine, timeout: float = 1800):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def use(self, kind: str, **extra: Any) -> Any:
        """Suggestions from the `kind` model from now on; its fake."""
        self.kind = kind
        configure(self.server, completions_settings(kind, self.models[kind], **{"timeout": TIMEOUT, **extra}))
        return self.models[kind]

    def alive(self) -> bool:
        return self.server.proc.returncode is None

    def stderr(self) -> bytes:
        """What the server wrote to stderr so far (copied on the loop that keeps appending to it)."""
        async def copy() -> bytes:
            return bytes(self.server.stderr)
        return self.run(copy())

    def tail(self) -> str:
        return self.stderr().decode(errors="replace")[-3000:]

    def close(self) -> None:
        try:
            self.run(self.lane.stop())
            stats = self.run(self.server.request("agent/completionStats", {}))["result"]
            figures = {k: v for k, v in self.lane.figures().items() if k != "warm-up"}
            print(f"suggestions: stats {stats}; chats beside (count, median durationMs) {figures}")
            self.run(self.server.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            for fake in (self.chat, *self.models.values()):
                fake.stop()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = Bench(tmp_path_factory.mktemp("suggestions"))
    yield b
    b.close()
    tracebacks = len(b.server.tracebacks)
    tally(AREA_FUZZ, crashes=0 if b.server.proc.returncode == 0 else 1, wrong=tracebacks)
    assert not (b.lane.hangs or b.lane.wrong or b.lane.lost), b.lane.problems
    assert b.server.proc.returncode == 0, b.server.stderr.decode(errors="replace")[-3000:]
    assert not tracebacks, b.server.tracebacks[:3]


# ---- the model failing mid-suggestion ------------------------------------------------------------------------

def status(code: int, kind: str, **headers: str) -> dict:
    return {"status": code, "error": {"type": kind, "message": f"{kind} from the fake"}, "headers": headers}


def raw(body: str, content_type: str = "text/event-stream", code: int = 200) -> dict:
    return {"raw": body, "content_type": content_type, "raw_status": code}


HTML = "<html><body><h1>502 Bad Gateway</h1></body></html>"
SAID = "pute_the_total(alpha, beta, gamma)"
NEVER = threading.Event()
"""A stream paused on this waits until the client goes away."""


def sse(*events: dict) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def chunk(text: Any = "", finish: Optional[str] = None) -> dict:
    return {"id": "cmpl-x", "object": "text_completion", "created": 1700000000, "model": "m",
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]}


def fim_sse(*items: Any, done: bool = True) -> dict:
    lines = [f"data: {json.dumps(i)}\n\n" if isinstance(i, dict) else i for i in items]
    return raw("".join(lines) + ("data: [DONE]\n\n" if done else ""))


MESSAGES_EVENTS = reply_events(messages_says(SAID), 1)
FIM_CHUNKS = 1 + len(SAID.split())
Cell = tuple[str, dict, str]
"""(name, the reply, what it must give: "fails" (no item, one warning), "item", "nothing" (no item, no warning),
"item or fails")."""
CELLS: dict[str, list[Cell]] = {
    "anthropic": [
        ("400", status(400, "invalid_request_error"), "fails"),
        ("401", status(401, "authentication_error"), "fails"),
        ("403", status(403, "permission_error"), "fails"),
        ("404", status(404, "not_found_error"), "fails"),
        ("413", status(413, "request_too_large"), "fails"),
        ("429 with retry-after 0", status(429, "rate_limit_error", **{"retry-after": "0"}), "fails"),
        ("500", status(500, "api_error"), "fails"),
        ("529", status(529, "overloaded_error", **{"retry-after-ms": "10"}), "fails"),
        ("502, an HTML page", raw(HTML, "text/html", 502), "fails"),
        ("200, an HTML page", raw(HTML, "text/html"), "fails"),
        ("200, a JSON message (stream ignored)", raw(json.dumps({"id": "m", "type": "message", "role": "assistant",
                                                                 "content": [{"type": "text", "text": "x"}]}),
                                                     "application/json"), "fails"),
        ("200, an empty stream", raw(""), "fails"),
        ("an error event mid-stream", {"events": MESSAGES_EVENTS[:3] + [
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]}, "fails"),
        ("data not JSON", raw("event: message_start\ndata: {not json\n\n"), "fails"),
        ("no event lines", raw("data: {}\n\ndata: [DONE]\n\n"), "fails"),
        ("deltas without a start", raw(sse(MESSAGES_EVENTS[0], {"type": "content_block_delta", "index": 3,
                                                               "delta": {"type": "text_delta", "text": "x"}})),
         "fails"),
        ("a lone surrogate in a delta", raw(sse(*MESSAGES_EVENTS[:2]) + 'event: content_block_delta\ndata: {"type": '
                                            '"content_block_delta", "index": 0, "delta": {"type": "text_delta", '
                                            '"text": "<completion>a\\ud800b</completion>"}}\n\n'
                                            + sse(*MESSAGES_EVENTS[-3:])), "item"),
        ("no content", {"content": []}, "nothing"),
        ("only whitespace", messages_says("  \n\t "), "nothing"),
        ("a code fence instead of the wrapper", {"content": [{"type": "text", "text": "```python\nx\n```"}]}, "item"),
        ("pings after its end", dict(messages_says(SAID), hang=True), "item"),
        ("stall before the headers", dict(messages_says(SAID), stall=SHORT_TIMEOUT + 2), "fails"),
        ("never answers", {"hold": True}, "fails"),
        ("stalls mid-stream", dict(messages_says(SAID), pause_at=3, resume=NEVER), "fails"),
    ] + [(f"cut after event {k} of {len(MESSAGES_EVENTS)}", dict(messages_says(SAID), cut_after=k),
          "fails" if k < len(MESSAGES_EVENTS) - 1 else "item")  # only message_stop missing: the answer is whole
         for k in range(len(MESSAGES_EVENTS))],
    "fim": [
        ("400", status(400, "invalid_request_error"), "fails"),
        ("401", status(401, "invalid_request_error"), "fails"),
        ("403", status(403, "permission_error"), "fails"),
        ("404, no such model", status(404, "not_found"), "fails"),
        ("413, a plain-text body", raw("Request Entity Too Large", "text/plain", 413), "fails"),
        ("422, a FastAPI body", raw(json.dumps({"detail": [{"loc": ["body", "prompt"], "msg": "field required"}]}),
                                    "application/json", 422), "fails"),
        ("429 with retry-after 0", status(429, "rate_limit_error", **{"retry-after": "0"}), "fails"),
        ("500", status(500, "server_error"), "fails"),
        ("502, an HTML page", raw(HTML, "text/html", 502), "fails"),
        ("503, a plain-text body", raw("upstream connect error", "text/plain", 503), "fails"),
        ("200, an HTML page", raw(HTML, "text/html"), "fails"),
        ("200, a JSON completion (stream ignored)", raw(json.dumps({"id": "x", "object": "text_completion",
                                                                    "choices": [{"text": "x", "index": 0}]}),
                                                        "application/json"), "fails"),
        ("200, an empty stream", raw(""), "fails"),
        ("200, an error object first", fim_sse({"error": {"message": "model is loading", "type": "server_error"}}),
         "fails"),
        ("an error object mid-stream", fim_sse(chunk("pute"), {"error": {"message": "Overloaded upstream"}}), "fails"),
        ("data not JSON mid-stream", fim_sse(chunk("pute"), "data: {not json\n\n"), "fails"),
        # the SSE standard skips it; the `openai` SDK reads it as empty JSON (the chat's client skips it since
        # 344cf6e, and suggestions share that client): either way one answer, and at most one warning
        ("`data:` without payload", fim_sse(chunk("pute_the"), "data:\n\n", chunk("", "stop")), "item or fails"),
        ("text that is a number", fim_sse(chunk("pute"), chunk(7), chunk("", "stop")), "fails"),
        ("choices of null", fim_sse({"id": "x", "choices": None}, chunk("pute"), chunk("", "stop")), "item"),
        ("a lone surrogate in the text", fim_sse('data: {"choices": [{"index": 0, "text": "a\\ud800b"}]}\n\n',
                                                 chunk("", "stop")), "item"),
        ("no [DONE]", fim_sse(chunk("pute_the"), chunk("", "stop"), done=False), "item"),
        ("only whitespace", fim_says("   "), "nothing"),
        ("stall before the headers", dict(fim_says(SAID), stall=SHORT_TIMEOUT + 2), "fails"),
        ("never answers", {"hold": True}, "fails"),
        ("stalls mid-stream", dict(fim_says(SAID), pause_at=1, resume=NEVER), "fails"),
        ("keeps the stream open after the finish", dict(fim_says(SAID), hang=True), "item"),
    ] + [(f"cut after chunk {k} of {FIM_CHUNKS}", dict(fim_says(SAID), cut_after=k), "fails")
         for k in range(FIM_CHUNKS)],
}
STALLS = ("stall", "never answers")


async def fault_cell(bench: Bench, kind: str, n: int, name: str, reply: dict, expect: str) -> list[str]:
    """One cell: the failing reply twice (two requests, each asks the model once), then a good one."""
    server, typist = bench.server, bench.typist
    fake = bench.use(kind, timeout=SHORT_TIMEOUT if name.startswith(STALLS) else TIMEOUT)
    bound = (SHORT_TIMEOUT if name.startswith(STALLS) else TIMEOUT) + BOUND_SLACK
    tag = f"F{n}"
    uri = typist.open(f"fault_{kind}_{n}.py", f"# tag: {tag}\nimport math\n{TARGET[:14]}")
    asked, shown = len(fake.requests), len(warnings(server))
    fake.script[:] = [reply, reply]
    problems, answers = [], []
    for k in (14, 13, 12):  # backspace between: never typing through
        if k != 14:
            typist.edit(uri, 2, k, k + 1, "")
        params, _, future = typist.ask(uri, 2, k)
        answer = await answered(future, bound)
        if answer is None:
            tally(AREA_FAULTS, cases=1, hangs=1)
            problems.append(f"no answer within {bound} s")
            continue
        answers.append(answer)
        problems += answer_problems(answer, params)
        tally(AREA_FAULTS, cases=1)
        if k == 13:
            new = warnings(server)[shown:]
            if expect == "item or fails":
                expect = "fails" if not items_of(answers[0]) else "item"
            if expect == "fails" and len(new) != 1 or expect != "fails" and new:
                problems.append(f"warnings {new} (a failure is shown once per cause)")
            if len(fake.requests) - asked != 2:
                problems.append(f"{len(fake.requests) - asked} model requests for 2 suggestions (no retry)")
            shown = len(warnings(server))
    if len(answers) == 3:
        failing, good = answers[:2], answers[2]
        if expect == "item" and not all(items_of(a) for a in failing):
            problems.append(f"no item: {failing}")
        if expect != "item" and any(items_of(a) for a in failing):
            problems.append(f"an item from a failing model: {failing}")
        if [i["insertText"] for i in items_of(good)] != [expected_item_text(TARGET[:12], tag)]:
            problems.append(f"the next suggestion: {good}")
        if warnings(server)[shown:]:
            problems.append(f"a warning after a good suggestion: {warnings(server)[shown:]}")
    if name.startswith(STALLS):  # a model request nobody waits for is closed
        held = [asked + 1, asked + 2]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bound
        while not set(held) <= set(fake.disconnects) and loop.time() < deadline:
            await asyncio.sleep(0.02)
        if not set(held) <= set(fake.disconnects):
            problems.append(f"model requests {held} left open (closed: {fake.disconnects[-5:]})")
    fake.script.clear()
    typist.close(uri)
    return problems


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_the_model_failing_mid_suggestion(bench, kind):
    failures = []
    for n, (name, reply, expect) in enumerate(CELLS[kind] * scaled(1, 3)):  # --long: the matrix three times
        problems = bench.run(fault_cell(bench, kind, n, name, reply, expect))
        tally(AREA_FAULTS, wrong=1 if problems else 0)
        failures += [f"{kind} {name}: {p}" for p in problems]
    assert bench.alive(), bench.tail()
    assert not failures, "\n".join(failures)


# ---- the findings, each spelled out ------------------------------------------------------------------------------

async def failing_twice_then_good(bench: Bench, kind: str, reply: dict, name: str) -> tuple[list, list[str], Any]:
    """The reply for two suggestions at a fresh place, then the oracle's: (the three answers' items, the warnings
    they brought, the fake)."""
    fake, typist = bench.models[kind], bench.typist
    uri = typist.open(f"finding_{name}_{kind}.py", f"# tag: {name}\n{TARGET[:14]}")
    shown = len(warnings(bench.server))
    fake.script[:] = [reply, reply]
    items = []
    for k in (14, 13, 12):
        if k != 14:
            typist.edit(uri, 1, k, k + 1, "")
        _, _, future = typist.ask(uri, 1, k)
        items.append([i["insertText"] for i in items_of(await answered(future, TIMEOUT + BOUND_SLACK))])
    typist.close(uri)
    return items, [w.replace(getattr(fake, "api_url", fake.base_url), "URL").replace(fake.base_url, "URL")
                   for w in warnings(bench.server)[shown:]], fake


ENDPOINT = {"anthropic": "URL/v1/messages", "fim": "URL/completions"}
CUT = {"anthropic": dict(messages_says(SAID), cut_after=4), "fim": dict(fim_says(SAID), cut_after=2)}


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_a_stream_cut_before_its_end_is_no_suggestion(bench, kind):
    """It was a suggestion of the part that came ("pute_the_total(alpha, beta,"), shown as if whole."""
    bench.use(kind)
    items, shown, _ = bench.run(failing_twice_then_good(bench, kind, CUT[kind], "cut"))
    assert items == [[], [], [expected_item_text(TARGET[:12], "cut")]]
    assert shown == [f"agent-lsp: no suggestions: The model stream from {ENDPOINT[kind]} broke off before its end."]
    tally(AREA_FAULTS, cases=3)


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_a_page_or_nothing_instead_of_a_stream_is_named(bench, kind):
    """Both were no suggestion and no word of why (a `baseUrl` pointing at a web page went unnoticed)."""
    bench.use(kind)
    page, page_shown, _ = bench.run(failing_twice_then_good(bench, kind, raw(HTML, "text/html"), "page"))
    empty, empty_shown, _ = bench.run(failing_twice_then_good(bench, kind, raw(""), "empty"))
    assert page == [[], [], [expected_item_text(TARGET[:12], "page")]]
    assert empty == [[], [], [expected_item_text(TARGET[:12], "empty")]]
    api = "not the Messages API" if kind == "anthropic" else "not an OpenAI-compatible API"
    events = "Messages API events" if kind == "anthropic" else "completions chunks"
    assert page_shown == [f"agent-lsp: no suggestions: {ENDPOINT[kind]} answered 200 with an HTML page (text/html), "
                          f"{api}."]
    assert empty_shown == [f"agent-lsp: no suggestions: {ENDPOINT[kind]} answered 200 (text/event-stream) but sent no "
                           f"{events}."]
    tally(AREA_FAULTS, cases=6)


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_a_stream_kept_open_after_its_end_is_not_waited_for(bench, kind):
    """Pings after message_stop, or a finish chunk and no [DONE]: each suggestion waited out completions.timeout,
    then was nothing and a warning."""
    fake = bench.use(kind)
    reply = dict(messages_says(SAID) if kind == "anthropic" else fim_says(SAID), hang=True)
    before = len(fake.requests)
    items, shown, _ = bench.run(failing_twice_then_good(bench, kind, reply, "open"))
    assert items == [[SAID], [SAID], [expected_item_text(TARGET[:12], "open")]] and shown == []
    bench.run(wait_for(lambda: {before + 1, before + 2} <= set(fake.disconnects)))  # read to its end, then closed
    tally(AREA_FAULTS, cases=3)


JUNK = {"anthropic": [("data not JSON", raw("event: message_start\ndata: {not json\n\n"),
                       "sent something that is not a Messages API event (JSONDecodeError: Expecting"),
                      ("deltas without a start", raw(sse(MESSAGES_EVENTS[0], {
                          "type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}})),
                       "sent something that is not a Messages API event (IndexError")],
        "fim": [("text that is a number", fim_sse(chunk("pute"), chunk(7), chunk("", "stop")),
                 "sent a line that is not a completions chunk after 2 chunks (ValueError: a chunk's text is a JSON "
                 "number)"),
                ("data not JSON", fim_sse(chunk("pute"), "data: {not json\n\n"),
                 "sent a line that is not a completions chunk after 1 chunk (JSONDecodeError: Expecting")]}


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_junk_in_a_stream_is_one_warning_and_no_traceback(bench, kind):
    """Each was a traceback in the log (the pipeline's last resort for a provider's bug) and a warning of the bare
    exception ("TypeError: can only concatenate str (not "int") to str")."""
    bench.use(kind)
    for name, reply, why in JUNK[kind]:
        tracebacks = len(bench.server.tracebacks)
        items, shown, _ = bench.run(failing_twice_then_good(bench, kind, reply, "junk"))
        assert items == [[], [], [expected_item_text(TARGET[:12], "junk")]], name
        assert len(shown) == 1 and shown[0].startswith(
            f"agent-lsp: no suggestions: The model stream from {ENDPOINT[kind]} {why}"), (name, shown)
        assert bench.run(wait_quiet(bench.server)) and bench.server.tracebacks[tracebacks:] == []
        tally(AREA_FAULTS, cases=3)


async def wait_for(predicate, timeout: float = 60.0) -> None:
    """Wait until `predicate()` holds; `timeout` is only a ceiling."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


# ---- cancel in every state -----------------------------------------------------------------------------------

class Cancels:
    """The named cancel cases on the bench, and what they found."""

    def __init__(self, bench: Bench, kind: str) -> None:
        self.bench, self.kind = bench, kind
        self.fake = bench.use(kind)
        self.typist = bench.typist
        self.problems: list[str] = []
        self.n = 0

    def says(self, text: str, **extra: Any) -> dict:
        return messages_says(text, **extra) if self.kind == "anthropic" else fim_says(text, **extra)

    def paused(self, text: str, resume: threading.Event) -> dict:
        """`text`, the stream paused after its first piece of text until `resume` is set."""
        return self.says(text, pause_at=3 if self.kind == "anthropic" else 1, resume=resume)

    def doc(self, line: str) -> str:
        self.n += 1
        return self.typist.open(f"cancel_{self.kind}_{self.n}.py", f"# tag: C{self.n}\n{line}")

    async def answer(self, future: asyncio.Future, what: str, params: dict, cancelled: bool = True) -> Optional[dict]:
        answer = await answered(future, TIMEOUT + BOUND_SLACK)
        tally(AREA_CANCEL, cases=1)
        if answer is None:
            tally(AREA_CANCEL, hangs=1)
            self.problems.append(f"{what}: no answer")
            return None
        problems = answer_problems(answer, params, cancelled)
        if problems:
            tally(AREA_CANCEL, wrong=1)
            self.problems += [f"{what}: {p}" for p in problems]
        return answer

    def expect(self, what: str, ok: bool, detail: Any = "") -> None:
        if not ok:
            tally(AREA_CANCEL, wrong=1)
            self.problems.append(f"{what}: {detail}")

    async def closed(self, what: str, number: int) -> None:
        """The model request `number` (1-based, as the fake counts) gets closed (ceiling: a hang)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BOUND_SLACK
        while number not in self.fake.disconnects:
            if loop.time() > deadline:
                tally(AREA_CANCEL, hangs=1)
                self.problems.append(f"{what}: model request {number} never closed")
                return
            await asyncio.sleep(0.02)

    async def arrived(self, count: int) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BOUND_SLACK
        while len(self.fake.requests) < count and loop.time() < deadline:
            await asyncio.sleep(0.01)

    async def run(self) -> None:
        t, fake, server = self.typist, self.fake, self.bench.server
        line = TARGET[:14]

        # before the server reads it: the cancel right behind the request
        uri = self.doc(line)
        fake.script[:] = [{"hold": True}]
        asked = len(fake.requests)
        params, msg_id, future = t.ask(uri, 1, 14)
        t.cancel(msg_id)
        await self.answer(future, "cancelled at once", params)
        if len(fake.requests) > asked:
            await self.closed("cancelled at once", asked + 1)
        fake.script.clear()

        # while the editor's definitions are awaited (the client never answers them)
        server.handlers["agent/languageFeature"] = lambda params: NO_ANSWER
        asked, served = len(fake.requests), len(server.server_requests)
        params, msg_id, future = t.ask(uri, 1, 14)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BOUND_SLACK
        while not any(r["method"] == "agent/languageFeature" for r in server.server_requests[served:]):
            if loop.time() > deadline:
                break
            await asyncio.sleep(0.005)
        t.cancel(msg_id)
        answer = await self.answer(future, "cancelled while definitions are awaited", params)
        server.handlers["agent/languageFeature"] = lambda params: []
        if answer is not None and "error" in answer:  # cancelled before its model request
            await asyncio.sleep(0)
        fake.script.clear()

        # waiting for the model's headers, and streaming: the model request is closed after the grace
        for what, reply in (("cancelled while the model has not answered", {"hold": True}),
                            ("cancelled while streaming", self.paused(SAID, NEVER))):
            uri = self.doc(line)
            fake.script[:] = [reply]
            asked = len(fake.requests)
            params, msg_id, future = t.ask(uri, 1, 14)
            await self.arrived(asked + 1)
            t.cancel(msg_id)
            answer = await self.answer(future, what, params)
            self.expect(what, answer is not None and answer.get("error", {}).get("code") == -32800, answer)
            await self.closed(what, asked + 1)

        # VS Code: the older request cancelled as the next one is sent, typing through the stream: it stays open
        resume = threading.Event()
        uri = self.doc(line)
        fake.script[:] = [self.paused(SAID, resume)]
        asked, closed = len(fake.requests), len(fake.disconnects)
        params, msg_id, future = t.ask(uri, 1, 14)
        await self.arrived(asked + 1)
        t.edit(uri, 1, 14, 14, SAID[0])
        t.cancel(msg_id)
        params2, _, future2 = t.ask(uri, 1, 15)
        await self.answer(future, "cancelled, typed through", params)
        resume.set()
        answer = await self.answer(future2, "typing through a cancelled one's stream", params2, cancelled=False)
        self.expect("typing through a cancelled one's stream", items_of(answer) and items_of(answer)[0][
            "insertText"] == SAID[1:] and len(fake.requests) == asked + 1 and len(fake.disconnects) == closed,
                    (answer, len(fake.requests) - asked, fake.disconnects[closed:]))

        # cancelled, then a newer request elsewhere within the grace: the old stream closed, the new one asks
        uri = self.doc(line + "\n" + TARGET[:9])
        fake.script[:] = [{"hold": True}]
        asked = len(fake.requests)
        params, msg_id, future = t.ask(uri, 1, 14)
        await self.arrived(asked + 1)
        t.cancel(msg_id)
        params2, _, future2 = t.ask(uri, 2, 9)
        await self.answer(future, "cancelled, then a request elsewhere", params)
        answer = await self.answer(future2, "a request elsewhere after a cancel", params2, cancelled=False)
        self.expect("a request elsewhere after a cancel", [i["insertText"] for i in items_of(answer)] == [
            expected_item_text(TARGET[:9], f"C{self.n}")], answer)
        await self.closed("cancelled, then a request elsewhere", asked + 1)

        # after its answer, twice, an id never sent, an id of the wrong type: nothing answers a notification
        unmatched = len(server.unmatched)
        params, msg_id, future = t.ask(uri, 2, 9)
        answer = await self.answer(future, "answered before its cancel", params, cancelled=False)
        for stray in (msg_id, msg_id, "never-sent", 424242):
            server.notify("$/cancelRequest", {"id": stray})
        params, msg_id, future = t.ask(uri, 2, 9)
        answer = await self.answer(future, "a request after stray cancels", params, cancelled=False)
        self.expect("stray cancels", len(server.unmatched) == unmatched and items_of(answer),
                    (server.unmatched[unmatched:], answer))

        # superseded, then cancelled; and the document closed under a request, then cancelled
        for what in ("superseded, then cancelled", "its document closed, then cancelled"):
            uri = self.doc(line + "\n" + TARGET[:9])
            fake.script[:] = [{"hold": True}]
            asked = len(fake.requests)
            params, msg_id, future = t.ask(uri, 1, 14)
            await self.arrived(asked + 1)
            if what.startswith("superseded"):
                params2, _, future2 = t.ask(uri, 2, 9)
                answer = await self.answer(future, what, params)
                t.cancel(msg_id)
                self.expect(what, answer == {"jsonrpc": "2.0", "id": msg_id, "result": {"items": []}}, answer)
                answer = await self.answer(future2, "the newer one", params2, cancelled=False)
                self.expect(what, items_of(answer), answer)
            else:
                t.close(uri)
                answer = await self.answer(future, what, params)
                t.cancel(msg_id)
                self.expect(what, answer is not None and answer.get("result") == {"items": []}, answer)
            await self.closed(what, asked + 1)

        # while the model fails
        uri = self.doc(line)
        fake.script[:] = [status(500, "api_error")]
        shown = len(warnings(server))
        params, msg_id, future = t.ask(uri, 1, 14)
        t.cancel(msg_id)
        await self.answer(future, "cancelled as the model fails", params)
        self.expect("cancelled as the model fails", len(warnings(server)) - shown <= 1, warnings(server)[shown:])
        fake.script.clear()
        for uri in [u for u in t.docs if "/cancel_" in u]:
            t.close(uri)


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_cancel_in_every_state(bench, kind):
    cancels = Cancels(bench, kind)
    bench.run(cancels.run())
    assert bench.alive(), bench.tail()
    assert not cancels.problems, "\n".join(cancels.problems)


def test_a_cancel_whose_id_no_request_can_have_is_dropped_quietly(bench):
    """An id that is an object or a list was a traceback in the log ("TypeError: unhashable type: 'dict'")."""
    server, typist = bench.server, bench.typist
    bench.use("anthropic")
    uri = typist.open("stray_cancels.py", f"# tag: S\n{TARGET[:9]}")
    before = len(server.tracebacks)


    async def go() -> Optional[dict]:
        for stray in ({"an": "object"}, [1], True):
            server.notify("$/cancelRequest", {"id": stray})
        return await answered(typist.ask(uri, 1, 9)[2], TIMEOUT + BOUND_SLACK)

    answer = bench.run(go())
    assert [i["insertText"] for i in items_of(answer)] == [expected_item_text(TARGET[:9], "S")]
    assert bench.run(wait_quiet(server)) and server.tracebacks[before:] == []
    typist.close(uri)
    tally(AREA_CANCEL, cases=4)


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
async def test_the_first_suggestion_cancelled_while_the_sdk_loads(tmp_path, kind):
    """Its cancel cancelled the SDK's shared import: no later suggestion, nor any chat, was ever answered (the
    first suggestion of a session is often cancelled: the user typed on)."""
    chat, model = FakeMessagesAPI().start(), (FakeMessagesAPI() if kind == "anthropic" else FakeLegacyCompletions())
    model.start()
    chat.default = {"content": [{"type": "text", "text": "ok"}]}
    model.default = (lambda body: messages_says(answer_for(messages_prefix(body)))) if kind == "anthropic" else (
        lambda body: fim_says(answer_for(fim_prefix(body))))
    root = tmp_path / "ws"
    root.mkdir()
    server = await WatchedServer.start("--data-dir", str(tmp_path / "state"), "--log-level", "INFO",
                                   env=server_env(chat.base_url, OPENAI_API_KEY="test-key"))
    try:
        await server.initialize(root, init_options={"completions": completions_settings(kind, model,
                                                                                       timeout=TIMEOUT)})
        typist = Typist(server, root)
        uri = typist.open("first.py", f"# tag: first\n{TARGET[:9]}")
        params, msg_id, future = typist.ask(uri, 1, 9)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BOUND_SLACK
        while b"imported agent_lsp.completions.suggestions" not in server.stderr and loop.time() < deadline:
            await asyncio.sleep(0.005)
        typist.cancel(msg_id)  # now the request waits for the SDK's import (seconds)
        first = await answered(future, TIMEOUT + BOUND_SLACK)
        assert first is not None and answer_problems(first, params, cancelled=True) == [], first
        answer = await answered(typist.ask(uri, 1, 9)[2], TIMEOUT + BOUND_SLACK)
        assert [i["insertText"] for i in items_of(answer)] == [expected_item_text(TARGET[:9], "first")], answer
        said = await server.request("agent/chat", {"message": "hi"})
        assert said["result"]["finalMessage"] == "ok"
        assert server.tracebacks == []
        tally(AREA_CANCEL, cases=3)
    finally:
        await server.stop()
        chat.stop()
        model.stop()


# ---- a thousand a second, and cancel storms ---------------------------------------------------------------------

def judge(area: str, answers: list[tuple[dict, Optional[dict], str, bool]], problems: list[str]) -> int:
    """Tally (params, answer, expected insertText or "" for none possible, cancelled) under `area`; the items."""
    items = 0
    for params, answer, expected, cancelled in answers:
        tally(area, cases=1)
        if answer is None:
            tally(area, hangs=1)
            problems.append(f"no answer to {json.dumps(params)[:200]}")
            continue
        found = version_problems(answer, params, expected, cancelled)
        items += bool(items_of(answer))
        if found:
            tally(area, wrong=1)
            problems.extend(found[:1])
    return items


async def a_thousand_a_second(bench: Bench, kind: str, count: int, seed: int) -> tuple[list[str], dict]:
    fake = bench.use(kind)
    rng = random.Random(seed)
    doc = Typed(bench.typist, f"rate_{kind}_{seed}.py")
    asked = len(fake.requests)
    loop = asyncio.get_running_loop()
    start, sent = loop.time(), []
    for i in range(count):
        doc.step(rng)
        params, _, future, expected = doc.ask()
        sent.append((params, future, expected))
        await pace(loop, start, i + 1, 1000)
    took = loop.time() - start
    answers = [(p, await answered(f, TIMEOUT + BOUND_SLACK), e, False) for p, f, e in sent]
    params, _, future, expected = doc.ask()  # once the typing stops, the suggestion for where it stopped
    answers.append((params, await answered(future, TIMEOUT + BOUND_SLACK), expected, False))
    problems: list[str] = []
    items = judge(AREA_RATE, answers, problems)
    if not items_of(answers[-1][1]):
        tally(AREA_RATE, wrong=1)
        problems.append(f"no suggestion once the typing stopped: {answers[-1][1]}")
    bench.typist.close(doc.uri)
    return problems, {"requests": count + 1, "sent in s": round(took, 2), "items": items,
                      "model requests": len(fake.requests) - asked}


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_a_thousand_requests_a_second_with_edits_between(bench, kind):
    bench.lane.phase = "beside 1,000 suggestions a second"
    problems, figures = bench.run(a_thousand_a_second(bench, kind, scaled(1000, 10_000), seed=36))
    bench.lane.phase = "beside suggestions"
    print(f"1,000 a second ({kind}): {figures}")
    assert bench.alive(), bench.tail()
    assert not problems, "\n".join(problems[:20])


async def cancel_storm(bench: Bench, kind: str, count: int, seed: int) -> tuple[list[str], dict]:
    """Requests on three documents, a model that answers at once, slowly, or never (by document); half the
    requests cancelled at a random moment (at once, or up to 50 ms on), a document now and then closed and opened
    again. Every request answered; an item only where the model answers, and the one for its version; at the end
    every model request that never answers closed."""
    fake = bench.use(kind, timeout=2.0)
    says = messages_says if kind == "anthropic" else fim_says
    prefix_of = messages_prefix if kind == "anthropic" else fim_prefix
    default = fake.default

    def reply(body: dict) -> dict:
        prefix = prefix_of(body)
        if "# model: never" in prefix:
            return {"hold": True}
        return says(answer_for(prefix), delay=0.01 if "# model: slow" in prefix else 0)

    fake.default = reply
    rng = random.Random(seed)
    docs = {how: Typed(bench.typist, f"storm_{kind}_{how}_{seed}.py", f"# model: {how}")
            for how in ("quick", "slow", "never")}
    asked, loop = len(fake.requests), asyncio.get_running_loop()
    sent, cancels = [], []

    async def cancel_later(msg_id: Any, delay: float) -> None:
        await asyncio.sleep(delay)
        bench.typist.cancel(msg_id)

    start = loop.time()
    for i in range(count):
        how = rng.choice(list(docs))
        doc = docs[how]
        if rng.random() < 0.02:  # closed and opened again: its state starts afresh
            bench.typist.close(doc.uri)
            doc = docs[how] = Typed(bench.typist, doc.uri.rsplit("/", 1)[1], f"# model: {how}")
        doc.step(rng)
        params, msg_id, future, expected = doc.ask()
        cancelled = rng.random() < 0.5
        if cancelled:
            delay = rng.choice([0, 0, 0.001, 0.005, 0.02, 0.05])
            if delay:
                cancels.append(asyncio.ensure_future(cancel_later(msg_id, delay)))
            else:
                bench.typist.cancel(msg_id)
        sent.append((params, future, "" if how == "never" else expected, cancelled))
        await pace(loop, start, i + 1, 500)
    answers = [(p, await answered(f, 2.0 + BOUND_SLACK), e, c) for p, f, e, c in sent]
    await asyncio.gather(*cancels)
    problems: list[str] = []
    items = judge(AREA_CANCEL, answers, problems)
    never = [n + 1 for n, body in enumerate(fake.requests[asked:], asked) if "# model: never" in prefix_of(body)]
    deadline = loop.time() + 2.0 + BOUND_SLACK
    while not set(never) <= set(fake.disconnects) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    left_open = sorted(set(never) - set(fake.disconnects))
    if left_open:
        tally(AREA_CANCEL, wrong=1)
        problems.append(f"model requests left open once no request waits for them: {left_open[:10]}")
    fake.default = default
    for doc in docs.values():
        bench.typist.close(doc.uri)
    return problems, {"requests": count, "cancelled": sum(c for *_, c in sent), "items": items,
                      "model requests": len(fake.requests) - asked, "never answered, closed": len(never)}


@pytest.mark.parametrize("kind", ["anthropic", "fim"])
def test_cancel_storms(bench, kind):
    problems, figures = bench.run(cancel_storm(bench, kind, scaled(500, 5000), seed=36))
    print(f"cancel storm ({kind}): {figures}")
    assert bench.alive(), bench.tail()
    assert not problems, "\n".join(problems[:20])


# ---- requests fuzzed: the named cases, then hypothesis -------------------------------------------------------

MB10 = 10_000_000
DEEPEST = 64
"""Levels of objects and arrays params may have (docs/protocol.md: deeper is -32602 naming where)."""


def minified(size: int) -> str:
    """A minified-JavaScript-like line of `size` characters: names, calls and dots all along."""
    unit = "a.b(c,d);e=f.g(h);"
    return (unit * (size // len(unit) + 1))[:size]


async def edge_answers(bench: Bench) -> list[str]:
    """The edges §10 names, each asked and its whole answer checked."""
    t, server = bench.typist, bench.server
    fake = bench.use("anthropic")
    problems: list[str] = []

    async def check(what: str, uri: str, line: int, character: int, want: Any, trigger: int = 2,
                    **extra: Any) -> Optional[dict]:
        params, _, future = t.ask(uri, line, character, trigger, **extra)
        answer = await answered(future, TIMEOUT + BOUND_SLACK)
        tally(AREA_FUZZ, cases=1)
        if answer is None:
            tally(AREA_FUZZ, hangs=1)
            problems.append(f"{what}: no answer")
            return None
        found = answer_problems(answer, params)
        got = [i["insertText"] for i in items_of(answer)] if "result" in answer else answer["error"]
        if want != got:
            found.append(f"{got!r:.300}, not {want!r:.300}")
        if found:
            tally(AREA_FUZZ, wrong=1)
            problems.extend(f"{what}: {p}" for p in found)
        return answer

    plain = t.open("edge_plain.py", f"# tag: N\nimport math\n{TARGET[:9]}")
    want = [expected_item_text(TARGET[:9], "N")]
    await check("the plain case", plain, 2, 9, want)
    await check("Invoked", plain, 2, 9, want, trigger=1)
    await check("past the end of the line", plain, 1, 12, [])
    await check("past the end of the document", plain, 3, 0, [])
    await check("far past the end", plain, 2 ** 31 - 1, 2 ** 31 - 1, [])
    await check("a version other than the server's", plain, 2, 9, [], textDocument={"uri": plain, "version": 99})
    await check("the server's version", plain, 2, 9, want, textDocument={"uri": plain, "version": 1})
    await check("never opened", (bench.root / "never.py").as_uri(), 0, 0, [])
    closed = t.open("edge_closed.py", "x = ")
    t.close(closed)
    await check("closed", closed, 0, 4, [])
    asked = len(fake.requests)
    secret = t.open(".env", f"# tag: N\n{TARGET[:9]}")
    await check("an excluded file", secret, 1, 9, [])
    if len(fake.requests) != asked:
        problems.append("an excluded file: the model was asked")
    for kind, field in ((0, "context.triggerKind"), (3, "context.triggerKind"), ("2", "context.triggerKind"),
                        (None, "context.triggerKind"), (True, "context.triggerKind")):
        params, _, future = t.ask(plain, 2, 9, trigger=kind)
        answer = await answered(future, TIMEOUT + BOUND_SLACK)
        tally(AREA_FUZZ, cases=1)
        if (answer or {}).get("error", {}).get("data", {}).get("fields") != [field]:
            tally(AREA_FUZZ, wrong=1)
            problems.append(f"triggerKind {kind!r}: {answer}")
    crlf = t.open("edge_crlf.py", f"# tag: R\r\nimport math\r\n{TARGET[:9]}\r\n")
    await check("CRLF line ends", crlf, 2, 9, [expected_item_text(TARGET[:9], "R")])
    surrogate = t.open("edge_surrogate.py", f"# tag: U\nname = 'caf\ud800'\n{TARGET[:9]}")  # arrives as U+FFFD
    await check("a lone surrogate before the cursor", surrogate, 2, 9, [expected_item_text(TARGET[:9], "U")])
    binary = t.open("edge_binary.py", f"\x00\x01\x02ELF\n{TARGET[:9]}")
    await check("binary before the cursor", binary, 1, 9, [])
    emoji = t.open("edge_emoji.py", "# tag: E\nx = '😀'")  # the emoji is two UTF-16 units: 5 and 6 are in it
    await check("inside a surrogate pair", emoji, 1, 6, [OTHER])
    await check("after the pair", emoji, 1, 8, [OTHER])
    for name, line in (("a 10 MB line", "x = " + "a" * (MB10 - 4)), ("a 10 MB minified line", minified(MB10)),
                       ("a 10 MB line of two-unit characters", "😀" * (MB10 // 2))):
        asked = len(fake.requests)
        uri = t.open(f"edge_{len(name)}_{name[-6:].strip()}.js", f"// tag: B\n{line}")
        units = len(line.encode("utf-16-le")) // 2
        await check(f"{name}, at its end", uri, 1, units, [OTHER])
        await check(f"{name}, in its middle", uri, 1, units // 2, [OTHER])
        sent = max((len(json.dumps(body)) for body in fake.requests[asked:]), default=0)
        if sent > 120_000:  # 8,000 characters around the cursor, as \u escapes at worst
            problems.append(f"{name}: a request of {sent} characters (windows are bounded)")
        t.close(uri)
    for uri in (plain, secret, crlf, surrogate, binary, emoji):
        t.close(uri)
    return problems


def test_the_edges_named(bench):
    problems = bench.run(edge_answers(bench))
    assert bench.alive(), bench.tail()
    assert not problems, "\n".join(problems)


def test_a_document_whose_uri_has_escapes_gets_suggestions(bench):
    """Its suggestions were always `items: []`: pygls keeps documents under the unescaped URI, and the edge looked
    them up as sent (a space in a path; every file of VS Code on Windows, `file:///c%3A/...`)."""
    bench.use("anthropic")
    t = bench.typist

    async def go() -> list:
        uris = [t.open("with space.py", f"# tag: W\n{TARGET[:9]}"), t.open("naïve.py", f"# tag: W\n{TARGET[:9]}")]
        windows = "file:///c%3A/Users/me/app.py"
        t.docs[windows] = [1, f"# tag: W\n{TARGET[:9]}"]
        bench.server.notify("textDocument/didOpen", {"textDocument": {
            "uri": windows, "languageId": "python", "version": 1, "text": f"# tag: W\n{TARGET[:9]}"}})
        uris.append(windows)
        got = []
        for uri in uris:
            answer = await answered(t.ask(uri, 1, 9)[2], TIMEOUT + BOUND_SLACK)
            got.append([i["insertText"] for i in items_of(answer)])
            t.close(uri)
        return got

    assert bench.run(go()) == [[expected_item_text(TARGET[:9], "W")]] * 3
    tally(AREA_FUZZ, cases=3)


FUZZ_DOCS = {"fuzz_plain.py": f"# tag: Z\nimport math\n{TARGET[:9]}\n\ndef f(x):\n    return x\n",
             "fuzz_crlf.py": f"# tag: Z\r\n{TARGET[:9]}\r\n\r\n",
             "fuzz_cr.py": f"# tag: Z\r{TARGET[:9]}\r",
             "fuzz_emoji.py": "# tag: Z\ns = '😀é𝕏'\nt = s",
             "fuzz_binary.bin": "\x00\x01ELF\x7f\n" + TARGET[:9],
             "fuzz_surrogate.py": f"# tag: Z\nname = 'caf\ud800'\n{TARGET[:9]}",
             "fuzz_long.js": "// tag: Z\n" + minified(1_000_000),
             "fuzz_lines.py": "".join(f"row_{n} = {n}\n" for n in range(100_000)),
             "fuzz_empty.py": ""}
POOL = [f"fuzz_pool_{n}.py" for n in range(4)]


class Fuzz:
    """The documents the fuzz asks about (FUZZ_DOCS, opened once; a pool it opens, changes and closes itself),
    and the counts."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        bench.use("anthropic")
        self.uris = [bench.typist.open(name, text) for name, text in FUZZ_DOCS.items()]
        self.pool = [(bench.root / name).as_uri() for name in POOL]
        self.problems: list[str] = []

    async def example(self, ops: list[tuple]) -> None:
        server = self.bench.server
        sent: list[tuple[Any, Any, asyncio.Future]] = []
        cancelled: set = set()
        for op in ops:
            if op[0] == "ask":
                msg_id = server.next_id()
                future = asyncio.get_running_loop().create_future()
                server.pending[msg_id] = future
                server.send_raw(frame(S.encode({"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/inlineCompletion",
                                                "params": op[1]})))
                sent.append((msg_id, op[1], future))
            elif op[0] == "cancel":
                if sent:
                    msg_id = sent[op[1] % len(sent)][0]
                    cancelled.add(msg_id)
                    server.notify("$/cancelRequest", {"id": msg_id})
            else:
                server.send_raw(frame(S.encode({"jsonrpc": "2.0", "method": op[1], "params": op[2]})))
        for msg_id, params, future in sent:
            answer = await answered(future, TIMEOUT + BOUND_SLACK)
            tally(AREA_FUZZ, cases=1)
            if answer is None:
                tally(AREA_FUZZ, hangs=1)
                self.problems.append(f"no answer to {json.dumps(params)[:300]}")
                continue
            found = answer_problems(answer, as_sent(params), msg_id in cancelled)
            if found:
                tally(AREA_FUZZ, wrong=1)
                self.problems += found[:1]
        tally(AREA_FUZZ, cases=len(ops) - len(sent))


def as_sent(params: Any) -> Any:
    """The params as the server read them (DEEP and BIG placeholders made real); None when nested deeper than
    JSON-RPC params may be (then only -32602 or no item is right)."""
    try:
        sent = json.loads(S.encode(params))
    except RecursionError:
        return None
    level, stack = 0, [(sent, 1)]
    while stack:  # how deep its objects and arrays go, without recursing
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            level = max(level, depth)
            stack += [(v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)]
    return sent if level <= DEEPEST else None


@pytest.fixture(scope="module")
def fuzz(bench):
    f = Fuzz(bench)
    yield f
    for uri in f.uris + f.pool:
        bench.typist.close(uri)


def inline_params(fuzz_uris: list[str]) -> st.SearchStrategy:
    uri = st.one_of(st.sampled_from(fuzz_uris), st.sampled_from(["file:///ws/never.py", "untitled:Untitled-1",
                                                                  "file:///", "file:///%00.py", "x", "file:///c%3A/a.py"]),
                    S.unicode_text)
    line = st.one_of(st.integers(0, 6), st.integers(-2, 2 ** 40), st.sampled_from([2 ** 31 - 1, 2 ** 31, 99_999]))
    character = st.one_of(st.integers(0, 40), st.integers(-2, 2 ** 40), st.sampled_from([999_999, 1_000_000]))
    position = st.fixed_dictionaries({"line": line, "character": character})
    trigger = st.one_of(st.sampled_from([1, 2]), st.sampled_from([0, 3, -1, "2", None, True, 1.5, 2.0]))
    selected = st.fixed_dictionaries({"range": st.fixed_dictionaries({"start": position, "end": position}),
                                      "text": st.text(max_size=10)})
    context = st.fixed_dictionaries({"triggerKind": trigger}, optional={"selectedCompletionInfo": S.field(selected)})
    document = st.fixed_dictionaries({"uri": uri}, optional={"version": S.field(st.integers(-1, 50))})
    formatting = st.fixed_dictionaries({}, optional={"tabSize": S.field(st.integers(-1, 20)),
                                                     "insertSpaces": S.field(st.booleans())})
    return S.params({"textDocument": document, "position": position, "context": context},
                    {"formattingOptions": formatting, "workDoneToken": st.text(max_size=5)})


def doc_notifications(pool: list[str]) -> st.SearchStrategy:
    uri = st.sampled_from(pool)
    text = st.one_of(st.text(max_size=200), S.unicode_text, st.just(TARGET[:9]),
                     st.sampled_from(["\x00\x00", "a\rb\rc", "😀" * 50, "\ufeffx = 1\n"]))
    position = st.fixed_dictionaries({"line": st.integers(-1, 5), "character": st.integers(-1, 60)})
    opened = st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({
        "uri": uri, "languageId": st.sampled_from(["python", "", "javascript"]), "version": st.integers(0, 9),
        "text": text})})
    change = st.one_of(st.fixed_dictionaries({"text": text}), st.fixed_dictionaries({
        "range": st.fixed_dictionaries({"start": position, "end": position}), "text": text}))
    changed = st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({"uri": uri, "version": st.integers(0, 99)}),
                                     "contentChanges": st.lists(change, min_size=1, max_size=3)})
    closed = st.fixed_dictionaries({"textDocument": st.fixed_dictionaries({"uri": uri})})
    return st.one_of(st.tuples(st.just("notify"), st.just("textDocument/didOpen"), S.field(opened)),
                     st.tuples(st.just("notify"), st.just("textDocument/didChange"), S.field(changed)),
                     st.tuples(st.just("notify"), st.just("textDocument/didClose"), S.field(closed)))


@settings(FUZZ, max_examples=scaled(120, 1200))
@given(data=st.data())
def test_requests_fuzzed(fuzz, data):
    asks = inline_params(fuzz.uris + fuzz.pool).map(lambda p: ("ask", p))
    cancels = st.integers(0, 50).map(lambda n: ("cancel", n))
    ops = data.draw(st.lists(st.one_of(asks, asks, asks, doc_notifications(fuzz.pool), cancels),
                             min_size=10, max_size=20))
    fuzz.bench.run(fuzz.example(ops))
    assert fuzz.bench.alive(), fuzz.bench.tail()
    assert not fuzz.problems, fuzz.problems[:10]


async def wait_quiet(server: RawServer) -> bool:
    """Wait until what the server logged before now has been read: it logs an answer to no request of its own
    (pygls: "Received response to unknown message id"), and that line is awaited on stderr."""
    probe = f"quiet-{server.next_id()}"
    server.send({"jsonrpc": "2.0", "id": probe, "result": None})
    await wait_for(lambda: probe.encode() in server.stderr)
    return True


def test_keystrokes_leave_nothing_behind(bench):
    """Each didChange (and didOpen, didClose) left a future in pygls's table of requests being handled, for good: a
    keystroke's worth of memory, for as long as the editor stays open."""
    t = bench.typist

    async def go() -> tuple[int, int]:
        before = (await bench.server.request("agent/_debugCounts", {}))["result"]["requests"]
        uri = t.open("keystrokes.py", "")
        for n in range(300):
            t.edit(uri, 0, n, n, "x")
        t.close(uri)
        return before, (await bench.server.request("agent/_debugCounts", {}))["result"]["requests"]

    before, after = bench.run(go())
    assert after <= before + 1, (before, after)  # + this probe itself, still being handled as it counts
    tally(AREA_FUZZ, cases=302)
