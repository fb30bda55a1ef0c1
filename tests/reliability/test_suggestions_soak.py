"""A soak of chats over LSP and ACP, taken in turn, with suggestions asked on the LSP server all the while: RSS,
asyncio tasks, fds and threads of both processes flat after warm-up (threads judged against the default executor's
bound: a bounded pool growing to its bound is not a leak), every chat answered and stored, every suggestion the one
for its version. 3,000 chats with `--long`."""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any, Optional

from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.fakes.messages_api import FakeMessagesAPI
from tests.reliability.conftest import server_env, tally
from tests.reliability.rawacp import RawAcp
from tests.reliability.rawlsp import ANSWER_CEILING, process_counts
from tests.reliability.suggesting import (
    BOUND_SLACK, Typed, Typist, WatchedServer, answer_for, answered, completions_settings, configure, fim_prefix,
    fim_says, items_of, messages_prefix, messages_says, pace, version_problems)
from tests.reliability.test_acp_edge import GOOD

LONG = "--long" in sys.argv
CHATS = 3000 if LONG else 200
LANES = 4
"""Lanes per front end: LSP and ACP lanes run at once, each its chats one after another."""
PER_SESSION = 25 if LONG else 10
"""Chats in a session before the lane starts a new one."""
WARM_UP = 2
"""Chats per lane before the baseline."""
SUGGESTIONS_PER_SECOND = 40
AREA_CHATS = "soak: chats over LSP and ACP in turn"
AREA_SUGGESTIONS = "soak: suggestions all the while"
EXECUTOR = min(32, (os.cpu_count() or 1) + 4)
"""The default executor's bound (asyncio's ThreadPoolExecutor: min(32, cpus + 4) threads, started as needed)."""
OK = {"content": [{"type": "text", "text": "ok"}]}


def chat_reply(body: dict) -> dict:
    """Two tool calls for a user message (every fifth chat a command too), then an answer."""
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return OK
    text = last[-1]["text"] if isinstance(last, list) else last
    calls = [{"type": "tool_use", "name": "read_file", "input": {"path": "a.py"}},
             {"type": "tool_use", "name": "list_files", "input": {}}]
    if int(text.rsplit(" ", 1)[-1]) % 5 == 0:
        calls.append({"type": "tool_use", "name": "run_command", "input": {"command": "echo soak"}})
    return {"content": calls}


class Soak:
    """The two processes, their fakes, and what was done and seen."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "ws"
        self.root.mkdir()
        (self.root / "a.py").write_text("x = 1\n")
        self.chat = FakeMessagesAPI().start()
        self.chat.default = chat_reply
        self.models: dict[str, Any] = {"anthropic": FakeMessagesAPI().start(), "fim": FakeLegacyCompletions().start()}
        self.models["anthropic"].default = lambda body: messages_says(answer_for(messages_prefix(body)))
        self.models["fim"].default = lambda body: fim_says(answer_for(fim_prefix(body)))
        self.sessions: dict[str, dict[str, int]] = {"lsp": {}, "acp": {}}
        """Per front end: session -> chats sent to it."""
        self.chats = 0
        self.problems: list[str] = []
        self.suggestions = self.items = 0
        self.samples: list[tuple[int, dict, dict]] = []

    async def start(self) -> None:
        env = server_env(self.chat.base_url, OPENAI_API_KEY="test-key", AGENT_LSP_DEBUG="1")
        self.lsp = await WatchedServer.start("--data-dir", str(self.tmp / "lsp-state"), env=env)
        self.lsp.handlers["workspace/applyEdit"] = lambda params: {"applied": True}
        await self.lsp.initialize(self.root, init_options={
            "completions": completions_settings("anthropic", self.models["anthropic"], timeout=30)})
        self.acp = await RawAcp.start("--data-dir", str(self.tmp / "acp-state"), env=env)
        self.acp.handlers.update(GOOD)  # a client that answers fs/*, terminal/* and permissions well
        await self.acp.initialize()
        self.typist = Typist(self.lsp, self.root)
        uri = self.typist.open("warm.py", "x = ")
        for kind in ("fim", "anthropic"):  # each wire's SDK loaded before the baseline: its import is no leak
            configure(self.lsp, completions_settings(kind, self.models[kind], timeout=30))
            await answered(self.typist.ask(uri, 0, 4)[2], 30 + BOUND_SLACK)
        self.typist.close(uri)

    async def stop(self) -> None:
        await self.lsp.stop()
        await self.acp.stop()
        for fake in (self.chat, *self.models.values()):
            fake.stop()

    def problem(self, what: str) -> None:
        if len(self.problems) < 30:
            self.problems.append(what[:600])

    # ---- chats -----------------------------------------------------------------------------------------

    async def lsp_lane(self, lane: int, count: int, state: dict) -> None:
        for _ in range(count):
            n = self._next()
            if state.get("chats", 0) % PER_SESSION == 0:
                state["session"] = None
            params = {"message": f"lsp lane {lane} chat {n}", "permissionMode": "bypassPermissions"}
            if state.get("session"):
                params["sessionId"] = state["session"]
            try:
                answer = await self.lsp.request("agent/chat", params)
            except asyncio.TimeoutError:
                tally(AREA_CHATS, cases=1, hangs=1)
                self.problem(f"lsp chat {n}: no answer within {ANSWER_CEILING} s")
                continue
            result = answer.get("result") or {}
            self._judge("lsp", n, result.get("sessionId"), result.get("stopReason") == "end_turn"
                        and result["metadata"]["toolCallsCount"] >= 2, answer)
            state["session"], state["chats"] = result.get("sessionId"), state.get("chats", 0) + 1

    async def acp_lane(self, lane: int, count: int, state: dict) -> None:
        for _ in range(count):
            n = self._next()
            if state.get("chats", 0) % PER_SESSION == 0:
                state["session"] = await self.acp.new_session(self.root)
                await self.acp.request("session/set_mode", {"sessionId": state["session"],
                                                            "modeId": "bypassPermissions"})
            try:
                answer = await asyncio.wait_for(self.acp.prompt(state["session"], f"acp lane {lane} chat {n}"),
                                                ANSWER_CEILING)
            except asyncio.TimeoutError:
                tally(AREA_CHATS, cases=1, hangs=1)
                self.problem(f"acp chat {n}: no answer within {ANSWER_CEILING} s")
                continue
            self._judge("acp", n, state["session"], (answer.get("result") or {}).get("stopReason") == "end_turn",
                        answer)
            state["chats"] = state.get("chats", 0) + 1
            if state["chats"] % PER_SESSION == 0:  # its updates are no longer needed here
                self.acp.notifications[:] = [x for x in self.acp.notifications
                                             if x.get("params", {}).get("sessionId") != state["session"]]

    def _next(self) -> int:
        self.chats += 1
        return self.chats

    def _judge(self, front: str, n: int, session: Optional[str], ok: bool, answer: dict) -> None:
        tally(AREA_CHATS, cases=1, wrong=0 if ok else 1)
        if not ok:
            self.problem(f"{front} chat {n}: {answer}")
        if session:
            self.sessions[front][session] = self.sessions[front].get(session, 0) + 1
        if front == "lsp":  # its updates are checked by the chats-beside lane of test_suggestions.py; here, memory
            self.lsp.notifications.clear()

    async def lanes(self, count: int, states: list[dict]) -> None:
        """Each front end's lanes, `count` chats each, all at once (chats numbered in turn: LSP, ACP, LSP, ...)."""
        await asyncio.gather(*(self.lsp_lane(n, count, states[n]) for n in range(LANES)),
                             *(self.acp_lane(n, count, states[LANES + n]) for n in range(LANES)))

    # ---- suggestions all the while -------------------------------------------------------------------------

    async def typing(self, stop: asyncio.Event) -> None:
        """Type and ask for suggestions at SUGGESTIONS_PER_SECOND until `stop`, a fifth of them cancelled at once,
        a document closed and another opened every 200, the model switched between the two wires every 500."""
        rng = random.Random(36)
        loop = asyncio.get_running_loop()
        start, sent, pending, docs = loop.time(), 0, [], 0
        doc = Typed(self.typist, "soak_0.py")
        while not stop.is_set():
            if sent % 500 == 0:
                kind = ("anthropic", "fim")[sent // 500 % 2]
                configure(self.lsp, completions_settings(kind, self.models[kind], timeout=30))
            if sent and sent % 200 == 0:
                self.typist.close(doc.uri)
                docs += 1
                doc = Typed(self.typist, f"soak_{docs}.py")
            doc.step(rng)
            params, msg_id, future, expected = doc.ask()
            cancelled = rng.random() < 0.2
            if cancelled:
                self.typist.cancel(msg_id)
            pending.append((params, future, expected, cancelled))
            sent += 1
            if len(pending) >= 50:
                await self._judge_suggestions(pending)
                pending = []
            await pace(loop, start, sent, SUGGESTIONS_PER_SECOND)
        await self._judge_suggestions(pending)
        self.typist.close(doc.uri)

    async def _judge_suggestions(self, pending: list) -> None:
        for params, future, expected, cancelled in pending:
            answer = await answered(future, 30 + BOUND_SLACK)
            self.suggestions += 1
            if answer is None:
                tally(AREA_SUGGESTIONS, cases=1, hangs=1)
                self.problem(f"suggestion: no answer to {params}")
                continue
            found = version_problems(answer, params, expected, cancelled)
            self.items += bool(items_of(answer))
            tally(AREA_SUGGESTIONS, cases=1, wrong=1 if found else 0)
            if found:
                self.problem(f"suggestion: {found[0]}")

    # ---- what it costs --------------------------------------------------------------------------------------

    async def counts(self) -> tuple[dict, dict]:
        """(the LSP server's, the ACP agent's) RSS kB, fds, threads, children from /proc, and tasks and threads from
        inside (AGENT_LSP_DEBUG)."""
        lsp = {**process_counts(self.lsp.proc.pid), **(await self.lsp.request("agent/_debugCounts", {}))["result"]}
        inside = (await self.acp.request("_agent-lsp/debugCounts", {}))["result"]
        acp = {**process_counts(self.acp.proc.pid), "tasks": inside["tasks"]}
        return lsp, acp

    async def settled(self, baseline: tuple[dict, dict]) -> tuple[dict, dict]:
        """The counts once the tasks are back to the baseline's (what was under way has ended), or after a ceiling."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ANSWER_CEILING
        while True:
            now = await self.counts()
            if all(n["tasks"] <= b["tasks"] for n, b in zip(now, baseline)) or loop.time() > deadline:
                return now
            await asyncio.sleep(0.1)

    def stored(self, front: str) -> dict[str, list[str]]:
        """Per session, the stop reason of each chat the store holds (read once the process has exited)."""
        db = sqlite3.connect(f"file:{self.tmp / f'{front}-state' / 'sessions.db'}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT session_id, stop_reason FROM chats ORDER BY session_id, first_message")
            out: dict[str, list[str]] = {}
            for session, stop in rows:
                out.setdefault(session, []).append(stop)
            return out
        finally:
            db.close()


def flat(before: dict, after: dict) -> list[str]:
    """Why `after` is not flat against `before` (empty when it is)."""
    problems = []
    if after["fds"] > before["fds"] + 4:
        problems.append(f"fds {before['fds']} -> {after['fds']}")
    if after["threads"] > max(before["threads"] + 2, 3 + EXECUTOR):
        problems.append(f"threads {before['threads']} -> {after['threads']} (the executor's bound is {EXECUTOR})")
    if after["children"]:
        problems.append(f"{after['children']} child processes left")
    if after["tasks"] > before["tasks"]:
        problems.append(f"asyncio tasks {before['tasks']} -> {after['tasks']}")
    if after.get("requests", 0) > before.get("requests", 0) + 1:  # pygls's table of requests being handled
        problems.append(f"requests being handled {before['requests']} -> {after['requests']}")
    if after["rss_kb"] - before["rss_kb"] > 40_000:
        problems.append(f"RSS {before['rss_kb']} kB -> {after['rss_kb']} kB")
    return problems


async def test_soak_chats_over_lsp_and_acp_with_suggestions_all_the_while(tmp_path):
    soak = Soak(tmp_path)
    await soak.start()
    states = [{} for _ in range(2 * LANES)]
    stop_typing = asyncio.Event()
    try:
        typing = asyncio.ensure_future(soak.typing(stop_typing))
        await soak.lanes(WARM_UP, states)
        stop_typing.set()
        await typing
        baseline = await soak.counts()
        soak.samples.append((soak.chats, *baseline))
        per_lane = CHATS // (2 * LANES) - WARM_UP
        stop_typing.clear()
        typing = asyncio.ensure_future(soak.typing(stop_typing))
        step = max(1, per_lane // 5)
        for done in range(0, per_lane, step):  # a sample after each fifth
            await soak.lanes(min(step, per_lane - done), states)
            soak.samples.append((soak.chats, *await soak.counts()))
        stop_typing.set()
        await typing
        end = await soak.settled(baseline)
        soak.samples.append((soak.chats, *end))
    finally:
        stop_typing.set()
        await soak.stop()
    print("soak (chats, LSP server, ACP agent):")
    for chats, lsp, acp in soak.samples:
        print(f"  {chats}: lsp {lsp}; acp {acp}")
    print(f"soak: {soak.chats} chats, {soak.suggestions} suggestions ({soak.items} items)")
    lost = 0
    for front in ("lsp", "acp"):
        stored = soak.stored(front)
        for session, sent in soak.sessions[front].items():
            if stored.get(session, []) != ["end_turn"] * sent:
                lost += 1
                soak.problem(f"{front} session {session}: {sent} chats sent, the store has {stored.get(session)}")
    tally(AREA_CHATS, lost=lost)
    leaks = [f"lsp: {p}" for p in flat(baseline[0], end[0])] + [f"acp: {p}" for p in flat(baseline[1], end[1])]
    assert soak.chats == CHATS and not soak.problems and not leaks, (soak.problems, leaks)
    assert soak.lsp.tracebacks == [], soak.lsp.tracebacks[:3]
