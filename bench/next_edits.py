"""Next-edit suggestions, replayed: an author's changes (bench/edit_sequences.py: renames carried through a function,
a parameter added at every call site) typed at a human pace, with a real client's request pattern, against a fake
model on 127.0.0.1 that answers the author's true next change when asked (the raw `/completions` wire, as an open
next-edit model is served); agent-lsp beside a naive server (bench/naive_next_edit_server.py) typed to at the same
moments, each with its own copy of the fake.

Client patterns: copilot-lsp (a request 500 ms after the last change, whatever the mode; none cancelled), and the
agent-lsp clients' own: VS Code (500 ms after the last change or move, the older request cancelled) and Neovim
(300 ms after leaving Insert mode, the older request cancelled by the next change).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Optional

from bench.edit_sequences import Sequence, keystrokes, sequences
from bench.figures import AGENT, Row, env_for, p99
from bench.oracle_model import OracleModel
from bench.startup import rss_kib
from bench.suggestions import Client, _ms, _position, _settle, keystroke, open_buffers
from agent_lsp.completions.next_edit import CURSOR, END, START, window_at

NAIVE = [sys.executable, str(Path(__file__).with_name("naive_next_edit_server.py"))]
LATENCY = 0.3
"""The fake model's own time to its first byte, in seconds."""
ABOVE, BELOW = 3, 8
"""The editable window (nextEdits.linesAbove / linesBelow, their defaults): the fake is asked about no other."""
CALLS_WHY = ("a call after each sequence's first change, one after its last (the model must say nothing is left) and "
             "one whenever the author's next change lies outside the kept rewrite's window (3 lines above, 8 below)")
OVERHEAD_WHY = ("THROTTLE: a buffer's model requests begin 0.5 s apart, and these requests pick buffers at random, "
                "some asked less than 0.5 s before")
PAUSE = (1.2, 2.5)
"""Seconds the author spends between two changes (reading, moving to the next place), drawn evenly."""


@dataclass(frozen=True)
class Pattern:
    name: str
    delay: float
    """Seconds after the last change (or move) a request is sent."""
    while_typing: bool
    """Requests also while the author is typing a change (copilot-lsp, VS Code), not only after it (Neovim's
    Normal mode)."""
    cancels: bool
    """A change cancels the requests in flight."""
    on_move: bool = False
    """A cursor move also starts the wait."""


PATTERNS = (
    Pattern("copilot-lsp (500 ms after each change, none cancelled)", 0.5, True, False),
    Pattern("VS Code (500 ms after a change or move, cancelled)", 0.5, True, True, on_move=True),
    Pattern("Neovim (300 ms in Normal mode, cancelled)", 0.3, False, True),
)


@dataclass
class NextEditOracle(OracleModel):
    """The fake model: the window rewritten as the author will leave it after their next changes, as long as they
    lie inside it (the rest of the change being typed, then the following ones), as a next-edit model rewrites its
    whole window; the window as it is when the next change lies outside it. It tells the author's text by the
    excerpt it is sent (`states`: every text the author had, with the number of changes made)."""

    milestones: list[str] = field(default_factory=list)
    """The text before each change and after the last."""
    states: list[tuple[str, int]] = field(default_factory=list)
    rewrite: Optional[Callable[[str], str]] = None
    """Answer the window rewritten by this instead (the scale figure)."""
    judged: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    """Per prompt: (asked between two changes, answered a change)."""

    def answer(self, prompt: str) -> str:
        before, window, after = _excerpt(prompt)
        if self.rewrite is not None:
            return f"{START}\n{self.rewrite(window)}\n"
        new, between = window, False
        whole = before + window + after
        for text, made in reversed(self.states):
            at = text.find(whole)
            if at < 0:
                continue
            between = text == self.milestones[made]
            new = _left_as(text, at + len(before), at + len(before) + len(window), self.milestones[made + 1:])
            break
        self.judged[prompt] = (between, new != window)
        return f"{START}\n{new}\n"


def _left_as(text: str, start: int, end: int, later: list[str]) -> str:
    """text[start:end] as the author leaves it after their next changes, as long as they lie inside it (`later`:
    the texts the author's next changes make, one change each)."""
    for target in later:
        begin, old_end, new_end = _span(text, target)
        if not start <= begin <= old_end <= end:
            break
        text, end = target, end + new_end - old_end
    return text[start:end]


def _holds(text: str, taken: str, made: str) -> bool:
    """Whether an edit that turns `text` into `taken` holds the author's next change (`text` into `made`) exactly as
    the author makes it — alone, or with others (the edit covers every change of the model's rewrite): one Tab, and
    what stood where the author changed `text` reads as they made it. The edit is read as a character diff of
    `text`; a piece of it that runs on past the author's change (the next change beside it) counts with the part
    of its new text at its own end."""
    start, old_end, new_end = _span(text, made)
    wanted = made[start:new_end]
    low, high, taken_high = _span(text, taken)
    diff = difflib.SequenceMatcher(None, text[low:high], taken[low:taken_high], autojunk=False).get_opcodes()
    exact, before, after = "", "", ""  # the new text inside the change; what may end it, or begin it, besides
    for tag, i1, i2, j1, j2 in [("equal", 0, low, 0, low), *[(t, i1 + low, i2 + low, j1 + low, j2 + low)
                                                            for t, i1, i2, j1, j2 in diff],
                                ("equal", high, len(text), taken_high, len(taken))]:
        new = taken[j1:j2]
        if tag == "equal":
            a, b = max(i1, start), min(i2, old_end)
            exact += new[a - i1:b - i1] if a < b else ""
        elif i1 < start < i2 and old_end < i2 or i1 == i2 == start == old_end:
            return wanted in new  # one piece holds the whole change
        elif i1 < start < i2 or i1 == i2 == start:
            before = new
        elif i1 < old_end < i2 or i1 == i2 == old_end:
            after = new
        elif start <= i1 and i2 <= old_end:
            exact += new
    return any(wanted[k:k + len(exact)] == exact and before.endswith(wanted[:k]) and
               after.startswith(wanted[k + len(exact):]) for k in range(len(wanted) - len(exact) + 1))


def _excerpt(prompt: str) -> tuple[str, str, str]:
    """(text above the window, the window without the cursor marker, text below) of a next-edit prompt."""
    body = prompt.split("### User Excerpt:\n\n", 1)[1].rsplit("\n\n### Response:", 1)[0]
    body = body.split("\n", 1)[1][:-len("\n```")].removeprefix("<|start_of_file|>\n")
    before, rest = body.split(START + "\n", 1)
    window, after = rest.split("\n" + END, 1)
    return before, window.replace(CURSOR, ""), after


def _span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in old, end in new) of the stretch where `old` and `new` differ."""
    start = len(os.path.commonprefix([old, new]))
    tail = len(os.path.commonprefix([old[start:][::-1], new[start:][::-1]]))
    return start, len(old) - tail, len(new) - tail


def _offset(text: str, position: dict[str, int]) -> int:
    line_start = 0
    for _ in range(position["line"]):
        line_start = text.index("\n", line_start) + 1
    units, at = position["character"], line_start
    while units > 0:
        units -= 2 if ord(text[at]) > 0xFFFF else 1
        at += 1
    return at


@dataclass
class Replay:
    requests: int = 0
    calls: int = 0
    keys: int = 0
    steps: int = 0
    due: int = 0
    """Changes that lay inside the window of a request sent between the change before and them."""
    offered: int = 0
    """Of those, offered (fresh) before the author began them."""
    late: int = 0
    """The author's next change, answered after the author began it."""
    other: int = 0
    """Fresh edits offered between two changes that were not the author's next."""
    stale: int = 0
    crossed: int = 0
    log: Optional[Path] = None
    judged: dict = field(default_factory=dict)
    finished: list = field(default_factory=list)
    """(wall time the model's answer ended, its prompt) per model call."""


@dataclass
class _Asked:
    version: int
    made: int
    between: bool
    done: bool = False
    cancelled: bool = False


@contextlib.asynccontextmanager
async def _serving(server: str, model: OracleModel, root: Path, log: Optional[Path] = None) \
        -> AsyncIterator[Client]:
    """`server` started against its own `model`; shut down (else killed) at the end."""
    model.start()
    try:
        if server == "agent":
            command = [*AGENT, *(["--log-level", "DEBUG", "--log-file", str(log)] if log else [])]
            options = {"completions": {"provider": "openai", "api": "fim", "model": "oracle",
                                       "baseUrl": model.base_url}}
        else:
            command, options = [*NAIVE, model.base_url], None
        client = await Client.spawn(*command, env=env_for(None), stderr=asyncio.subprocess.DEVNULL)
        try:
            client.on_request["window/workDoneProgress/create"] = lambda params: None
            await client.request("initialize", {
                "processId": os.getpid(), "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "capabilities": {"general": {"positionEncodings": ["utf-16"]}}, "initializationOptions": options})
            client.notify("initialized", {})
            yield client
            await client.close()
        finally:
            if client.process.returncode is None:
                client.process.kill()
                await client.process.wait()
    finally:
        model.stop()


class _Typist:
    """One author typing `Sequence`s into one server, asking as `pattern`'s client asks; counts into `out`."""

    def __init__(self, client: Client, model: NextEditOracle, pattern: Pattern, out: Replay) -> None:
        self.client, self.model, self.pattern, self.out = client, model, pattern, out
        self.pending: dict[int, tuple[_Asked, asyncio.Future]] = {}
        self.timer: Optional[asyncio.TimerHandle] = None
        self.probed: set[int] = set()

    async def type(self, seq: Sequence, uri: str, plan: list[tuple[float, list]]) -> None:
        texts = self.model.milestones = seq.texts()
        self.texts, self.uri = texts, uri
        self.text, self.version, self.cursor, self.made, self.typing = texts[0], 1, 0, 0, False
        self.due = [False] * len(texts)
        self.offered = [False] * len(texts)
        self.model.states = [(texts[0], 0)]
        self.client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                     "version": 1, "text": texts[0]}})
        for step, (pause, keys) in zip(seq.steps, plan):
            await asyncio.sleep(pause)  # the author's own pace: this is the workload, not a wait for a result
            self.cursor = step.start
            if self.pattern.on_move:
                self._changed()
            for n, key in enumerate(keys):
                await asyncio.sleep(key.pause)
                end = step.end if n == 0 else self.cursor
                self.typing = True
                self._edit(self.cursor, end, key.text)
            self.typing, self.made = False, self.made + 1
            self.model.states[-1] = (self.text, self.made)
            self.out.steps += 1
            if not self.pattern.while_typing:
                self._wait()
        await asyncio.sleep(PAUSE[1])  # the last change's suggestion comes and goes unused
        if self.timer:
            self.timer.cancel()
        futures = [f for _, f in self.pending.values()]
        self._cancel()
        await _settle(*futures)
        self.out.due += sum(self.due)
        self.out.offered += sum(d and o for d, o in zip(self.due, self.offered))
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def _edit(self, start: int, end: int, new: str) -> None:
        """The author's keystroke: text[start:end] replaced by `new`, the cursor after it."""
        range_ = {"start": _position(self.text, start), "end": _position(self.text, end)}
        self.text, self.cursor, self.version = self.text[:start] + new + self.text[end:], start + len(new), \
            self.version + 1
        self.model.states.append((self.text, self.made))
        self.out.keys += 1
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version},
                                                      "contentChanges": [{"range": range_, "text": new}]})
        if any(not asked.done for asked, _ in self.pending.values()):
            # messages are read in order and answered in order: once this probe is answered, an answer still to
            # come was written after the server read this change
            _, probe = self.client.send("$/roundTrip", None)
            probe.add_done_callback(lambda f, v=self.version: (f.exception(), self.probed.add(v)))
        if self.pattern.while_typing:
            self._changed()
        else:
            self._cancel()
            if self.timer:
                self.timer.cancel()

    def _changed(self) -> None:
        if self.pattern.cancels:
            self._cancel()
        self._wait()

    def _wait(self) -> None:
        if self.timer:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(self.pattern.delay, self._ask)

    def _ask(self) -> None:
        between = not self.typing and 0 < self.made < len(self.texts) - 1
        if between:
            window = window_at(self.text, self.cursor, ABOVE, BELOW)
            start, old_end, _ = _span(self.text, self.texts[self.made + 1])
            if window is not None and window.start <= start and old_end <= window.end:
                self.due[self.made] = True
        asked = _Asked(self.version, self.made, between)
        self.out.requests += 1
        msg_id, future = self.client.send("textDocument/copilotInlineEdit", {
            "textDocument": {"uri": self.uri, "version": self.version},
            "position": _position(self.text, self.cursor)})
        self.pending[msg_id] = (asked, future)
        future.add_done_callback(lambda f, a=asked, i=msg_id: self._answered(a, i, f))

    def _cancel(self) -> None:
        for msg_id, (asked, _) in list(self.pending.items()):
            if not asked.done:
                asked.cancelled = True
                self.client.notify("$/cancelRequest", {"id": msg_id})
        self.pending = {k: v for k, v in self.pending.items() if not v[0].done and not v[0].cancelled}

    def _answered(self, asked: _Asked, msg_id: int, future: asyncio.Future) -> None:
        asked.done = True
        self.pending.pop(msg_id, None)
        if future.cancelled() or future.exception() is not None or asked.cancelled:
            return  # a client drops what it cancelled
        edits = (future.result() or {}).get("edits") or []
        if not edits:
            return
        if asked.version != self.version:
            if asked.between and asked.made + 1 < len(self.texts) and self.made == asked.made and \
                    _holds(self.texts[asked.made], self._applied(self.texts[asked.made], edits[0]),
                           self.texts[asked.made + 1]):
                self.out.late += 1
            if asked.version + 1 in self.probed:
                self.out.stale += 1
            else:
                self.out.crossed += 1
            return
        if not asked.between or self.typing or self.made != asked.made:
            return
        if _holds(self.text, self._applied(self.text, edits[0]), self.texts[self.made + 1]):
            self.offered[self.made] = True
        else:
            self.out.other += 1

    @staticmethod
    def _applied(text: str, edit: dict[str, Any]) -> str:
        start, end = _offset(text, edit["range"]["start"]), _offset(text, edit["range"]["end"])
        return text[:start] + edit["text"] + text[end:]


async def _warm(client: Client, root: Path) -> None:
    """One request answered before the replay: an editor's session has its model SDK loaded."""
    uri = (root / "ne_warm.py").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": "x = 1\n"}})
    await client.request("textDocument/copilotInlineEdit", {"textDocument": {"uri": uri, "version": 1},
                                                           "position": {"line": 0, "character": 0}})
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def _plan(seq: Sequence, rng: random.Random) -> list[tuple[float, list]]:
    return [(rng.uniform(*PAUSE), keystrokes(step, rng)) for step in seq.steps]


async def _replay_pattern(pattern: Pattern, chosen: list[Sequence], root: Path, tag: str) -> dict[str, Replay]:
    """Both servers typed to at the same moments (the same plan, each with its own fake)."""
    rng = random.Random(17)
    plans = [_plan(seq, rng) for seq in chosen]
    results = {"agent": Replay(log=root / f"next-edits-{tag}.log"), "naive": Replay()}

    async def one(server: str) -> None:
        out = results[server]
        model = NextEditOracle(latency=LATENCY, piece=64)
        async with _serving(server, model, root, out.log) as client:
            await _warm(client, root)
            model.calls.clear()
            typist = _Typist(client, model, pattern, out)
            for n, (seq, plan) in enumerate(zip(chosen, plans)):
                await typist.type(seq, (root / f"ne{n}_{Path(seq.path).name}").as_uri(), plan)
        out.calls = len(model.calls)
        out.judged = model.judged
        out.finished = [(c.finished_wall, c.prompt) for c in model.calls if c.finished_wall is not None]

    await asyncio.gather(one("agent"), one("naive"))
    return results


LOGGED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) DEBUG agent_lsp\.completions\.next_edits: "
                    r"no next edit in (\S+): (.+)$")


def _filters(out: Replay) -> tuple[Counter, Counter]:
    """Per filter, how many model answers it dropped, and how many of those were a change the author then makes
    that is not ghost text (a change at the cursor, which inline completions offer): each log line is paired with
    the latest model answer for its file that ended before it (the fake's clock stamps an answer's end after its
    last byte went, which the server may have read and logged already: 50 ms of slack, while one file's answers
    are a second apart or more); the warm-up's line, whose answer is not the replay's, is left out."""
    fired, wrong = Counter(), Counter()
    if out.log is None or not out.log.exists():
        return fired, wrong
    answers = sorted(out.finished)
    used: set[int] = set()
    for line in out.log.read_text().splitlines():
        match = LOGGED.match(line)
        if not match:
            continue
        why, fence = match.group(3), f"```{Path(match.group(2)).name}\n"
        stamp = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        candidates = [n for n, (ended, prompt) in enumerate(answers)
                      if fence in prompt and ended <= stamp + 0.05 and n not in used]
        if not candidates:
            continue
        fired[why] += 1
        used.add(candidates[-1])
        between, changed = out.judged.get(answers[candidates[-1]][1], (False, False))
        if changed and (between or why != "insertion at the cursor"):
            wrong[why] += 1
    return fired, wrong


async def replay(quick: bool, root: Path) -> list[Row]:
    """Per client pattern: the author's next edits offered in time, stale edits, model calls; where the filters
    fired."""
    chosen = sequences(2 if quick else 10, 3 if quick else 6)
    rows: list[Row] = []
    fired, wrong = Counter(), Counter()
    if quick:  # the three at once: a smoke run judges no figure
        runs = await asyncio.gather(*(_replay_pattern(p, chosen, root, str(n)) for n, p in enumerate(PATTERNS)))
    else:
        runs = [await _replay_pattern(p, chosen, root, str(n)) for n, p in enumerate(PATTERNS)]
    for pattern, results in zip(PATTERNS, runs):
        a, b = results["agent"], results["naive"]
        f, w = _filters(a)
        fired, wrong = fired + f, wrong + w
        name = f"next edits, {pattern.name}"
        share = lambda r: (f"{100 * r.offered / r.due:.0f} % of {r.due}" if r.due else "none due") + \
            (f"; {r.late} too late" if r.late else "") + (f"; {r.other} other edits" if r.other else "")  # noqa: E731
        met = a.due > 0 and a.offered / a.due >= 0.95
        rows.append(Row(f"{name}: the author's next changes inside the window when asked after a change, offered "
                        f"before the author makes them ({a.steps} changes of {len(chosen)} real files)",
                        share(a), share(b) + " (naive)", None, "≥ 95 %", met))
        rows.append(Row(f"{name}: stale edits offered (besides those that crossed a change on the pipe)",
                        f"{a.stale} (crossed {a.crossed})", f"{b.stale} (crossed {b.crossed}) (naive)", None, "0",
                        a.stale == 0))
        ratio = a.calls / b.calls if b.calls else None
        rows.append(Row(f"{name}: model calls ({a.requests} requests, {a.keys} keystrokes)", f"{a.calls}",
                        f"{b.calls} (naive)", ratio, "≤ 0.35×", ratio is not None and ratio <= 0.35, CALLS_WHY))
    shown = lambda c: ", ".join(f"{why} {k}" for why, k in c.most_common()) or "none"  # noqa: E731
    rows.append(Row("next edits: the model's answers each filter dropped on the replay (all three patterns); of "
                    "them, changes the author then makes (not ghost text)", shown(fired), f"wrongly: {shown(wrong)}",
                    None, "0 wrongly dropped", sum(wrong.values()) == 0))
    return rows


def _rename_total(window: str) -> str:
    return window.replace("total", "subtotal", 1)


async def _scale_once(server: str, buffers: int, timed: int, requests: int, root: Path) \
        -> tuple[list[float], int, int]:
    """`timed` requests one after another at random places of `buffers` open buffers, each after a keystroke
    there, after as many to warm up: the overhead of each (answer time less the model's); then `requests` more, 20
    documents at a time, and the RSS before and after them (KiB)."""
    model = NextEditOracle(latency=0.0, piece=4096, rewrite=_rename_total)
    async with _serving(server, model, root) as client:
        rng = random.Random(5)
        docs = open_buffers(client, root, buffers, "ne_scale")

        async def one(doc: list) -> float:
            offset = -1  # a keystroke at the end of one of the first lines
            for _ in range(rng.randrange(1, 7)):
                offset = doc[1].index("\n", offset + 1)
            cursor = keystroke(client, doc, offset, "q")
            calls = len(model.calls)
            sent = time.perf_counter()
            await client.request("textDocument/copilotInlineEdit", {
                "textDocument": {"uri": doc[0], "version": doc[2]}, "position": cursor})
            took = time.perf_counter() - sent
            served = [c for c in model.calls[calls:] if c.finished]
            return took - (served[-1].finished - served[-1].arrived if served else 0.0)

        warm = min(50, timed)
        overheads = [await one(rng.choice(docs)) for _ in range(warm + timed)][warm:]
        rss_before = rss_kib(client.process.pid)
        for _ in range(requests // 20):
            await asyncio.gather(*(one(doc) for doc in rng.sample(docs, 20)))
        rss_after = rss_kib(client.process.pid)
    return overheads, rss_before, rss_after


async def scale(quick: bool, root: Path) -> list[Row]:
    """Server overhead per next edit with many open buffers, and RSS growth over many requests."""
    buffers, timed, requests = (50, 40, 200) if quick else (1000, 1000, 10_000)
    agent = await _scale_once("agent", buffers, timed, requests, root)
    naive = await _scale_once("naive", buffers, timed, requests, root)
    growth = lambda r: (r[2] - r[1]) / 1024  # noqa: E731
    ratio = statistics.median(agent[0]) / statistics.median(naive[0])
    return [
        Row(f"next-edit overhead (answer less the model's time), {buffers:,} open buffers", _ms(agent[0], "p99"),
            _ms(naive[0], "p99") + " (naive)", ratio, "≤ 1.5× at p50, p99 ≤ 20 ms",
            ratio <= 1.5 and p99(agent[0]) <= 0.020, OVERHEAD_WHY),
        Row(f"RSS growth over {requests:,} next-edit requests", f"{growth(agent):+.1f} MiB",
            f"{growth(naive):+.1f} MiB (naive)", None, "≤ 5 MiB", growth(agent) <= 5),
    ]
