"""Suggestions as you type, replayed: real edits (bench/typing_replay.py) typed into an open buffer at a human pace,
with the request pattern of a real client, against a fake model that answers the true next text after a set
latency (bench/oracle_model.py); agent-lsp beside a naive server (bench/naive_completion_server.py) in the same
run, each with its own copy of the fake.

Writing by accepting (`accepting`): the same edits written by accepting the suggestions that are what the author
wrote next, Neovim's way, for accept → next ghost text beside the same server not asking ahead
(AGENT_LSP_ASK_AHEAD=0) and the naive server.

Client patterns: Neovim 0.12 (`vim.lsp.inline_completion`: a request 200 ms after the last keystroke, none
cancelled while typing, all cancelled when the typing ends) and VS Code (a request per keystroke, the previous one
cancelled first).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Optional

from bench.figures import AGENT, Row, env_for, p99
from bench.oracle_model import Call, OracleModel
from bench.startup import rss_kib
from bench.typing_replay import Edit, edits, keystrokes
from agent_lsp.demo.client import LspClient
from tests.waiting import until

NAIVE = [sys.executable, str(Path(__file__).with_name("naive_completion_server.py"))]
LATENCY = 0.3
"""The fake model's own time to its first byte, in seconds."""


class Client(LspClient):
    """The demo client, with requests that can be cancelled."""

    def send(self, method: str, params: Any) -> tuple[int, asyncio.Future]:
        msg_id = next(self._ids)
        future = self._waiting[msg_id] = asyncio.get_running_loop().create_future()
        self._write({"id": msg_id, "method": method, "params": params})
        return msg_id, future


@dataclass
class Asked:
    version: int
    sent: float
    cursor: int
    """Offset of the cursor in the buffer when asked."""
    done: bool = False


@dataclass
class Replay:
    keys: int = 0
    stale: int = 0
    """Answers with items for an older version, written after the server had read the newer one."""
    crossed: int = 0
    """Answers with items for an older version that crossed the keystroke on the pipe (written before the server read
    it): no server can tell, the client drops them by version."""
    shown: list[float] = field(default_factory=list)
    """Per shown suggestion: request sent → answer, less the model's own time when a model call served it."""
    accepted_chars: int = 0
    matching_chars: int = 0
    calls: int = 0


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _position(text: str, offset: int) -> dict[str, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return {"line": text.count("\n", 0, offset), "character": _utf16(text[line_start:offset])}


@contextlib.asynccontextmanager
async def _serving(server: str, model: OracleModel, root: Path) -> AsyncIterator[tuple[Client, OracleModel]]:
    """`server` started against its own copy of the fake `model`; shut down (else killed) at the end."""
    model.start()
    try:
        async with spawned(server, model, root) as client:
            yield client, model
    finally:
        model.stop()


@contextlib.asynccontextmanager
async def spawned(server: str, model: OracleModel, root: Path, api: str = "fim", base_url: str = "",
                  env: Optional[dict[str, str]] = None) -> AsyncIterator[Client]:
    """`server` started against the started `model` (`_spawn`); shut down (else killed) at the end."""
    client = await _spawn(server, model, root, api, base_url, env)
    try:
        yield client
        await client.close()
    finally:
        if client.process.returncode is None:
            client.process.kill()
            await client.process.wait()


def completions_for(api: str, base_url: str) -> dict[str, str]:
    """The `completions` settings that ask the model at `base_url` (an API URL ending in /v1) with `api`."""
    if api == "anthropic":
        return {"provider": "anthropic", "model": "oracle", "baseUrl": base_url.removesuffix("/v1")}
    return {"provider": "openai", "api": api, "model": "oracle", "baseUrl": base_url}


async def _spawn(server: str, model: OracleModel, root: Path, api: str = "fim", base_url: str = "",
                 env: Optional[dict[str, str]] = None) -> Client:
    """`server` (agent, naive) asking `model` with `api`, at `base_url` (the model's own by default)."""
    base_url = base_url or model.base_url
    if server == "naive":
        command, options = [*NAIVE, base_url, api], None
    else:
        command, options = AGENT, {"completions": completions_for(api, base_url)}
    client = await Client.spawn(*command, env=env or env_for(None), stderr=asyncio.subprocess.DEVNULL)
    client.on_request["window/workDoneProgress/create"] = lambda params: None
    await client.request("initialize", {
        "processId": os.getpid(), "rootUri": root.as_uri(), "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                         "textDocument": {"inlineCompletion": {"dynamicRegistration": False}}},
        "initializationOptions": options})
    client.notify("initialized", {})
    return client


def _opened(client: Client, model: OracleModel, edit: Edit, root: Path) -> str:
    """`edit`'s file as it is before its typing, written and opened in the client; the model told its truth."""
    path = root / edit.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(edit.initial)
    uri = path.as_uri()
    model.truth.final, model.truth.start, model.truth.end = edit.final, edit.start, edit.end
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": edit.initial}})
    return uri


async def _type(client: Client, model: OracleModel, edit: Edit, pattern: str, root: Path, rng: random.Random,
                out: Replay) -> None:
    uri = _opened(client, model, edit, root)
    text, cursor, version = edit.initial, edit.start, 1
    pending: dict[int, tuple[Asked, asyncio.Future]] = {}
    timer: Optional[asyncio.TimerHandle] = None
    probed: set[int] = set()
    """Versions the server is known to have read: a request sent after the version's didChange was answered."""

    def answered(asked: Asked, future: asyncio.Future) -> None:
        asked.done = True
        if future.cancelled() or future.exception() is not None:
            return
        items = (future.result() or {}).get("items") if isinstance(future.result(), dict) else future.result()
        if not items:
            return
        if asked.version != version:
            if asked.version + 1 in probed:
                out.stale += 1
            else:
                out.crossed += 1
            return
        arrived = time.perf_counter()
        served = [c for c in model.calls if asked.sent <= c.arrived and c.finished and c.finished <= arrived]
        out.shown.append(arrived - asked.sent - (served[-1].finished - served[-1].arrived if served else 0.0))
        _judge(items[0], text, asked.cursor, edit, out)

    def ask() -> None:
        asked = Asked(version, time.perf_counter(), cursor)
        msg_id, future = client.send("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": _position(text, cursor), "context": {"triggerKind": 2}})
        pending[msg_id] = (asked, future)
        future.add_done_callback(lambda f, a=asked: answered(a, f))

    def cancel_all() -> None:
        for msg_id, (asked, _) in list(pending.items()):
            if not asked.done:
                client.notify("$/cancelRequest", {"id": msg_id})
        pending.clear()

    for key in keystrokes(edit, rng):
        await asyncio.sleep(key.pause)  # the typist's own pace: this is the workload, not a wait for a result
        start = _position(text, cursor)
        text, cursor, version = text[:cursor] + key.text + text[cursor:], cursor + len(key.text), version + 1
        out.keys += 1
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"range": {"start": start, "end": start},
                                                                     "text": key.text}]})
        if any(not asked.done for asked, _ in pending.values()):
            # Messages are read in order and answers written in order: once this probe is answered, any answer
            # still to come was written after the server read this keystroke.
            _, probe = client.send("$/roundTrip", None)
            probe.add_done_callback(lambda f, v=version: (f.exception(), probed.add(v)))
        if pattern == "vscode":
            cancel_all()
            ask()
        else:
            if timer:
                timer.cancel()
            timer = asyncio.get_running_loop().call_later(0.2, ask)
    if timer:
        timer.cancel()
    futures = [f for _, f in pending.values()]
    cancel_all()
    await _settle(*futures)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


async def _settle(*futures: asyncio.Future) -> None:
    """Wait for the answers of requests that were cancelled or superseded; their errors are expected."""
    if futures:
        await asyncio.wait(futures, timeout=30)
    for future in futures:
        if future.done() and not future.cancelled():
            future.exception()


def _judge(item: dict[str, Any], text: str, cursor: int, edit: Edit, out: Replay) -> None:
    """A simulated user accepts a shown suggestion whose first three new characters are what they meant to type;
    of what they accept, how much is what the author really wrote."""
    line_start = text.rfind("\n", 0, cursor) + 1
    start = item.get("range", {}).get("start", {}).get("character")
    retyped = _utf16(text[line_start:cursor]) - start if start is not None else 0
    new = item["insertText"][max(0, retyped):]
    meant = edit.final[cursor:]
    if not new or new[:3] != meant[:3]:
        return
    same = next((n for n, (a, b) in enumerate(zip(new, meant)) if a != b), min(len(new), len(meant)))
    out.accepted_chars += len(new)
    out.matching_chars += same


async def replay_once(server: str, pattern: str, chosen: list[Edit], seed: int, root: Path) -> Replay:
    out = Replay()
    async with _serving(server, OracleModel(latency=LATENCY), root) as (client, model):
        rng = random.Random(seed)
        for edit in chosen:
            await _type(client, model, edit, pattern, root, rng, out)
    out.calls = len(model.calls)
    return out


def _pick(count_keys: int) -> list[Edit]:
    """Real edits, in history order, of at most a third of `count_keys` keystrokes each, until there are that many."""
    chosen, keys = [], 0
    for edit in edits(80):
        n = len(keystrokes(edit, random.Random(0)))
        if n > max(60, count_keys // 3):
            continue
        chosen.append(edit)
        keys += n
        if keys >= count_keys:
            break
    return chosen


def pick_long(count: int) -> list[Edit]:
    """`count` real edits of at least 4 lines, in history order: several accepts each."""
    return [edit for edit in edits(80) if edit.final.count("\n", edit.start, edit.end) >= 3][:count]


def _ms(xs: list[float], high: str = "p95") -> str:
    if not xs:
        return "none"
    q = p99(xs) if high == "p99" else sorted(xs)[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return f"{statistics.median(xs) * 1000:.1f} ms ({high} {q * 1000:.1f})"


async def replay(quick: bool, root: Path) -> list[Row]:
    """The replay rows: model calls, stale answers, latency, stream closing and accepted text, per client pattern."""
    chosen = _pick(60 if quick else 400)
    results: dict[tuple[str, str], Replay] = {}
    for pattern, server in itertools.product(("neovim", "vscode"), ("agent", "naive")):
        results[pattern, server] = await replay_once(server, pattern, chosen, 11, root)
    rows = []
    names = {"neovim": "Neovim 0.12 (200 ms debounce)", "vscode": "VS Code (a request per keystroke, cancelled)"}
    for pattern in ("neovim", "vscode"):
        a, n = results[pattern, "agent"], results[pattern, "naive"]
        per = lambda r: 100 * r.calls / max(1, r.keys)  # noqa: E731
        ratio = per(a) / per(n) if per(n) else None
        rows.append(Row(f"suggestions, {names[pattern]}: model calls per 100 keystrokes ({a.keys} keystrokes of "
                        f"{len(chosen)} real edits), vs a naive server", f"{per(a):.1f}", f"{per(n):.1f}", ratio,
                        "≤ 0.35×", ratio is not None and ratio <= 0.35))
        rows.append(Row(f"suggestions, {names[pattern]}: stale suggestions delivered (besides those that crossed a "
                        "keystroke on the pipe)", f"{a.stale} (crossed {a.crossed})", f"{n.stale} (crossed {n.crossed})",
                        None, "0", a.stale == 0))
        rows.append(Row(f"suggestions, {names[pattern]}: request → ghost text, less the model's own time",
                        _ms(a.shown), _ms(n.shown), None, "", None))
        share = lambda r: f"{100 * r.matching_chars / r.accepted_chars:.0f} % of {r.accepted_chars} chars" \
            if r.accepted_chars else "nothing accepted"  # noqa: E731
        rows.append(Row(f"suggestions, {names[pattern]}: accepted text equal to what the author typed",
                        share(a), share(n), None, "", None))
    return rows


ACCEPTED_LINES = 2
"""Lines of the model's answers when writing by accepting: an edit takes several accepts (the replay's edits are
2 to 12 lines)."""


@dataclass
class Accepting:
    accepts: int = 0
    next_shown: list[float] = field(default_factory=list)
    """Per accepted suggestion whose next request showed ghost text: the accept → that ghost text, model time and
    all (asking ahead overlaps the model's time with the client's pause)."""
    requests: int = 0
    calls: int = 0


async def _accept_through(client: Client, model: OracleModel, edit: Edit, root: Path, out: Accepting) -> None:
    """The edit written by accepting suggestions, Neovim 0.12's way: a request 200 ms after the cursor moved (after
    an accept too), the item applied (its didChange, then its command); where no item is what the author wrote
    next, the author types its next character (Enter with the next line's indentation, as an editor's auto-indent
    brings it; the line opened for the edit comes with its own)."""
    uri = _opened(client, model, edit, root)
    cursor, version, accepted_at = edit.start, 1, None
    text = edit.initial

    def insert(inserted: str) -> None:
        nonlocal text, cursor, version
        start = _position(text, cursor)
        text, cursor, version = text[:cursor] + inserted + text[cursor:], cursor + len(inserted), version + 1
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"range": {"start": start, "end": start},
                                                                     "text": inserted}]})

    if _indentation(edit.final[cursor:edit.end]):
        insert(_indentation(edit.final[cursor:edit.end]))
    while True:  # the client asks after the last accept too: the author goes on from there
        await asyncio.sleep(0.2)  # the client's pause after the cursor moved: the workload, not a wait for a result
        out.requests += 1
        answer = await client.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": _position(text, cursor), "context": {"triggerKind": 2}})
        items = (answer or {}).get("items") or []
        if accepted_at is not None and items:
            out.next_shown.append(time.perf_counter() - accepted_at)
        if cursor >= edit.end:
            break
        new = items[0]["insertText"] if items else ""
        meant = edit.final[cursor:edit.end]
        typed = "\n" + _indentation(meant[1:]) if meant[0] == "\n" else meant[0]
        inserted = new if new and meant.startswith(new) else typed
        accepted_at = time.perf_counter() if inserted == new else None
        insert(inserted)
        if accepted_at is not None:
            out.accepts += 1
            if "command" in items[0]:  # as the editor runs it: after the edit, its answer not waited for
                _, ran = client.send("workspace/executeCommand", {"command": items[0]["command"]["command"],
                                                                  "arguments": items[0]["command"]["arguments"]})
                ran.add_done_callback(lambda f: f.cancelled() or f.exception())
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def _indentation(text: str) -> str:
    """The spaces `text` begins with."""
    return text[:len(text) - len(text.lstrip(" "))]


async def accept_through(client: Client, model: OracleModel, chosen: list[Edit], root: Path) -> Accepting:
    """The `chosen` edits written by accepting suggestions (`_accept_through`); the model calls they made."""
    out, calls = Accepting(), len(model.calls)
    for edit in chosen:
        await _accept_through(client, model, edit, root, out)
    out.calls = len(model.calls) - calls
    return out


async def _accepting_once(server: str, chosen: list[Edit], root: Path) -> Accepting:
    env = env_for(None)
    if server == "without":
        env["AGENT_LSP_ASK_AHEAD"] = "0"
    model = OracleModel(latency=LATENCY, lines=ACCEPTED_LINES).start()
    try:
        async with spawned("naive" if server == "naive" else "agent", model, root, env=env) as client:
            return await accept_through(client, model, chosen, root)
    finally:
        model.stop()


async def accepting(quick: bool, root: Path) -> list[Row]:
    """Accept → the next ghost text, beside the same server not asking ahead and the naive server; the model calls
    of the same run."""
    chosen = pick_long(2 if quick else 10)
    got = {server: await _accepting_once(server, chosen, root) for server in ("agent", "without", "naive")}
    return accepting_rows("suggestions", f"model {LATENCY * 1000:.0f} ms to its first byte", got, len(chosen))


def accepting_rows(what: str, model: str, got: dict[str, Accepting], edits: int) -> list[Row]:
    """The rows of writing by accepting: accept → next ghost text, and the model calls, for `got`'s agent beside
    its server not asking ahead (without) and the naive server."""
    a, w, n = got["agent"], got["without"], got["naive"]
    per = lambda r: r.calls / max(1, r.requests)  # noqa: E731
    calls = lambda r: f"{per(r):.2f} ({r.calls} for {r.requests} requests, {r.accepts} accepts)"  # noqa: E731
    return [
        Row(f"{what}: accept → next ghost text, Neovim 0.12 (the next request 200 ms after the accept; {model}; "
            f"{len(a.next_shown)} accepts of {edits} real edits)", _ms(a.next_shown, "p99"),
            f"{_ms(w.next_shown, 'p99')} not asking ahead; {_ms(n.next_shown, 'p99')} naive", None, "", None),
        Row(f"{what}, writing by accepting: model calls per request", calls(a),
            f"{calls(w)} not asking ahead; {calls(n)} naive", per(a) / per(n) if n.calls else None,
            "≤ 1× the naive server's", per(a) <= per(n)),
    ]


async def _closing_once(server: str, rounds: int, root: Path) -> tuple[list[float], list[float]]:
    """Seconds from a `$/cancelRequest`, and from a newer request elsewhere in the document (which cannot use the
    older suggestion), to the older request's model stream closed, as the fake model sees it; inf when it stays open
    for as long as the model takes."""
    async with _serving(server, OracleModel(latency=2.0, fixed="value = compute(items)"), root) as (client, model):
        # a place of its own for every request: a suggestion left at a place would answer a later request there
        text = "".join(f"def f{n}(items):\n    return items\n\n" for n in range(2 * rounds))
        uri = (root / "closing.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": text}})
        cancelled: list[float] = []
        superseded: list[float] = []

        def asking(since: int, at: str) -> Optional[Call]:
            """The first call after the `since`th that asks at the place whose text before ends with `at`."""
            return next((c for c in model.calls[since:] if c.prompt.endswith(at)), None)

        async def closed_after(call: Call, since: float) -> float:
            try:
                await until(lambda: call.closed or call.finished, timeout=5)
            except TimeoutError:
                return float("inf")
            closed = call.closed
            return closed - since if closed is not None else float("inf")

        for n in range(rounds):
            here = {"line": 6 * n + 1, "character": 4}
            ask = {"textDocument": {"uri": uri}, "position": here, "context": {"triggerKind": 2}}
            # a cancelled request's model call can still reach the fake after its answer: each call is told by
            # the place it asks for (the FIM prompt ends at the cursor)
            at = f"def f{2 * n}(items):\n    "
            calls = len(model.calls)
            msg_id, future = client.send("textDocument/inlineCompletion", ask)
            call = await until(lambda: asking(calls, at))
            sent = time.perf_counter()
            client.notify("$/cancelRequest", {"id": msg_id})
            cancelled.append(await closed_after(call, sent))
            await _settle(future)

            calls = len(model.calls)
            _, first = client.send("textDocument/inlineCompletion", ask)
            call = await until(lambda: asking(calls, at))
            there = {"textDocument": {"uri": uri}, "position": {"line": 6 * n + 4, "character": 4},
                     "context": {"triggerKind": 2}}
            sent = time.perf_counter()
            newer_id, newer = client.send("textDocument/inlineCompletion", there)
            superseded.append(await closed_after(call, sent))
            client.notify("$/cancelRequest", {"id": newer_id})
            await _settle(first, newer)
    return cancelled, superseded


async def closing(quick: bool, root: Path) -> list[Row]:
    """How soon a suggestion nobody will see stops costing the model: after a cancel, and after a newer request."""
    rounds = 4 if quick else 30
    agent = await _closing_once("agent", rounds, root)
    naive = await _closing_once("naive", rounds, root)

    def shown(xs: list[float]) -> str:
        closed = [x for x in xs if x != float("inf")]
        left = len(xs) - len(closed)
        return _ms(closed, "p99") + (f"; {left} of {len(xs)} left open" if left else "")

    rows = []
    for k, what in enumerate(("`$/cancelRequest`", "a newer request elsewhere in the document")):
        xs = agent[k]
        rows.append(Row(f"suggestions: {what} → the older model stream closed", shown(xs), shown(naive[k]) +
                        " (naive)", None, "≤ 20 ms (p99)", p99(xs) <= 0.020))
    return rows


def open_buffers(client: Client, root: Path, count: int, prefix: str) -> list[list]:
    """`count` buffers of 240 lines opened: [uri, text, version] each."""
    body = "".join(f"def f{n}(items):\n    total = 0\n    for x in items:\n        total += x\n    return total\n\n"
                   for n in range(40))
    docs = []
    for n in range(count):
        uri = (root / f"{prefix}_{n}.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": body}})
        docs.append([uri, body, 1])
    return docs


def keystroke(client: Client, doc: list, offset: int, char: str) -> dict[str, int]:
    """`char` typed at `offset` of the open buffer `doc` ([uri, text, version]), its didChange sent; the cursor
    after it."""
    start = _position(doc[1], offset)
    doc[1], doc[2] = doc[1][:offset] + char + doc[1][offset:], doc[2] + 1
    client.notify("textDocument/didChange", {"textDocument": {"uri": doc[0], "version": doc[2]},
                                             "contentChanges": [{"range": {"start": start, "end": start},
                                                                 "text": char}]})
    return _position(doc[1], offset + len(char))


async def _scale_once(server: str, buffers: int, requests: int, root: Path) -> tuple[list[float], int, int]:
    """`requests` suggestions one after another at random places of `buffers` open buffers, each after a keystroke;
    the overhead of each (answer time less the model's) and the RSS before and after, in KiB."""
    async with _serving(server, OracleModel(latency=0.0, fixed="value = compute(items)"), root) as (client, model):
        rng = random.Random(5)
        docs = open_buffers(client, root, buffers, "scale")
        overheads: list[float] = []
        rss_before = 0
        for n in range(requests + 200):
            if n == 200:  # after a warm-up
                rss_before = rss_kib(client.process.pid)
            doc = rng.choice(docs)
            line = rng.randrange(doc[1].count("\n"))
            offset = [i for i, ch in enumerate(doc[1]) if ch == "\n"][line]
            cursor = keystroke(client, doc, offset, "x")
            calls = len(model.calls)
            sent = time.perf_counter()
            await client.request("textDocument/inlineCompletion", {
                "textDocument": {"uri": doc[0]}, "position": cursor, "context": {"triggerKind": 2}})
            took = time.perf_counter() - sent
            served = model.calls[calls:]
            if served and served[-1].finished:
                took -= served[-1].finished - served[-1].arrived
            overheads.append(took)
        rss_after = rss_kib(client.process.pid)
    return overheads[200:], rss_before, rss_after


async def scale(quick: bool, root: Path) -> list[Row]:
    """Server overhead per suggestion with many open buffers, and RSS growth over many suggestions."""
    buffers, requests = (50, 300) if quick else (1000, 10_000)
    agent = await _scale_once("agent", buffers, requests, root)
    naive = await _scale_once("naive", buffers, requests, root)
    growth = lambda r: (r[2] - r[1]) / 1024  # noqa: E731
    p50 = statistics.median(agent[0])
    return [
        Row(f"suggestion overhead (answer less the model's time), {buffers:,} open buffers", _ms(agent[0], "p99"),
            _ms(naive[0], "p99") + " (naive)", None, "p50 ≤ 3 ms, p99 ≤ 15 ms",
            p50 <= 0.003 and p99(agent[0]) <= 0.015),
        Row(f"RSS growth over {requests:,} suggestions", f"{growth(agent):+.1f} MiB",
            f"{growth(naive):+.1f} MiB (naive)", None, "≤ 5 MiB", growth(agent) <= 5),
    ]
