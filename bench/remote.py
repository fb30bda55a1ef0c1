"""Suggestions against a remote model: the oracle model (bench/oracle_model.py) over TLS, with a certificate made
for the run and trusted only by the server's process (SSL_CERT_FILE), behind a proxy on 127.0.0.1 that adds a round
trip (tests/fakes/slow_link.py, 20 ms each way); the replayed typing of the suggestion rows (Neovim's pattern), for
the Messages API, OpenAI chat and FIM. agent-lsp beside the same server closing the connection after every early
stop (AGENT_LSP_KEEP_WARM=0, the behaviour before warm connections) and beside the naive server; then a chat after
the suggestions, to the same endpoint. And (`accepting`) accept → next ghost text there, beside the server not
asking ahead (AGENT_LSP_ASK_AHEAD=0) and the naive server. And (`cancelling`) suggestions cancelled while their
model call is out, each followed by one answered, over HTTP/2 (tests/fakes/h2_front.py in front of the oracle)
beside HTTP/1.1 kept warm and closing."""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.figures import Row, env_for, p99
from bench.oracle_model import OracleModel
from bench.suggestions import (
    ACCEPTED_LINES, LATENCY, Client, Replay, _pick, _type, accept_through, accepting_rows, pick_long, spawned)
from tests.fakes.certificate import Certificate, made
from tests.fakes.h2_front import H2Front
from tests.fakes.slow_link import SlowLink
from tests.waiting import until

DELAY = 0.020
"""Each way: a 40 ms round trip."""
APIS = {"anthropic": "Anthropic Messages", "chat": "OpenAI chat", "fim": "FIM"}
SERVERS = ("agent", "closing", "naive")


@dataclass
class Remote:
    replay: Replay = field(default_factory=Replay)
    connections: int = 0
    paused: list[float] = field(default_factory=list)
    """Suggestions asked at a pause, each needing a model call: request → answer less the model's own time."""
    paused_connections: int = 0
    chat_connections: int = 0
    chat: list[float] = field(default_factory=list)
    """A chat's answer less the model's own time."""


def _env(api: str, server: str, cert: Certificate, base_url: str) -> dict[str, str]:
    env = env_for(None)
    env["SSL_CERT_FILE"] = str(cert.authority)  # this process alone trusts the run's certificate
    if api == "anthropic":
        env.update(ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=base_url.removesuffix("/v1"))
    else:
        env.update(AGENT_LSP_PROVIDER="openai", AGENT_LSP_MODEL="oracle", OPENAI_API_KEY="bench",
                   OPENAI_BASE_URL=base_url)
    if server == "closing":
        env["AGENT_LSP_KEEP_WARM"] = "0"
    return env


async def remote_once(api: str, server: str, chosen: list, cert: Certificate, root: Path, chats: int,
                      pauses: int) -> Remote:
    out = Remote()
    model = OracleModel(latency=LATENCY, tls=cert.server_context(), pace=0).start()
    link = SlowLink(model.port, DELAY)
    base_url = link.url(path="/v1")
    try:
        async with spawned("naive" if server == "naive" else "agent", model, root, api, base_url,
                           _env(api, server, cert, base_url)) as client:
            await _warm_up(client, model, root)
            warm = link.connections
            out.paused = await _at_pauses(client, model, root, pauses)
            out.paused_connections = link.connections - warm
            warm, calls = link.connections, len(model.calls)
            rng = random.Random(11)
            for edit in chosen:
                await _type(client, model, edit, "neovim", root, rng, out.replay)
            out.replay.calls = len(model.calls) - calls
            out.connections = link.connections - warm
            if server != "naive" and api != "fim":  # a chat after the suggestions, to the same endpoint
                # (within the pool's keep-alive: an editor's chat follows a pause in typing, not a lunch break)
                for _ in range(chats):
                    before, calls = link.connections, len(model.calls)
                    sent = time.perf_counter()
                    await client.request("agent/chat", {"message": "hi"})
                    took = time.perf_counter() - sent
                    served = [c for c in model.calls[calls:] if c.finished]
                    out.chat.append(took - sum(c.finished - c.arrived for c in served))
                    out.chat_connections += link.connections - before
    finally:
        link.stop()
        model.stop()
    return out


async def _warm_up(client: Client, model: OracleModel, root: Path) -> None:
    """One suggestion asked and answered: the SDK imported, a first connection made (what "once warm" means)."""
    path = root / "warm_up.py"
    path.write_text("def f():\n    \n")
    model.fixed = "return 1"
    client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                            "version": 1, "text": path.read_text()}})
    await client.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": path.as_uri()}, "position": {"line": 1, "character": 4}, "context": {"triggerKind": 1}})
    client.notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})
    model.fixed = None


async def _at_pauses(client: Client, model: OracleModel, root: Path, count: int) -> list[float]:
    """`count` suggestions one after another, each after a keystroke at another line's end and a pause (a
    keystroke's time, 150 ms), each needing a model call: request → answer less the model's own time."""
    text = "".join(f"def f{n}(items):\n    total = 0\n\n" for n in range(count))
    uri = (root / "pauses.py").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    model.fixed = "return total"
    took = []
    for n in range(count):
        at = {"line": 3 * n + 2, "character": 0}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": n + 2}, "contentChanges": [
            {"range": {"start": at, "end": at}, "text": "    "}]})
        await asyncio.sleep(0.15)  # the typist's pace: the workload, not a wait for a result
        calls = len(model.calls)
        sent = time.perf_counter()
        await client.request("textDocument/inlineCompletion", {
            "textDocument": {"uri": uri}, "position": {"line": 3 * n + 2, "character": 4},
            "context": {"triggerKind": 2}})
        answered = time.perf_counter() - sent
        served = [c for c in model.calls[calls:] if c.finished]
        took.append(answered - sum(c.finished - c.arrived for c in served))
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    model.fixed = None
    return took


async def accepting(quick: bool, root: Path) -> list[Row]:
    """Accept → next ghost text against the remote model (the Messages API: asking ahead saves the round trips of
    the request the client sends next), beside the same server not asking ahead and the naive server."""
    chosen = pick_long(2 if quick else 6)
    cert = made(Path(tempfile.mkdtemp(prefix="agent-lsp-cert-", dir=root)))
    got = {}
    for server in ("agent", "without", "naive"):
        model = OracleModel(latency=LATENCY, lines=ACCEPTED_LINES, tls=cert.server_context(), pace=0).start()
        link = SlowLink(model.port, DELAY)
        base_url = link.url(path="/v1")
        env = _env("anthropic", "naive" if server == "naive" else "agent", cert, base_url)
        if server == "without":
            env["AGENT_LSP_ASK_AHEAD"] = "0"
        try:
            async with spawned("naive" if server == "naive" else "agent", model, root, "anthropic", base_url,
                               env) as client:
                await _warm_up(client, model, root)
                got[server] = await accept_through(client, model, chosen, root)
        finally:
            link.stop()
            model.stop()
    return accepting_rows(f"remote model (Anthropic Messages, TLS, {2 * DELAY * 1000:.0f} ms round trip)",
                          f"model {LATENCY * 1000:.0f} ms to its first byte", got, len(chosen))


async def cancelling(quick: bool, root: Path) -> list[Row]:
    """A suggestion cancelled by the client ($/cancelRequest) while its model call is out, then one at another
    line answered, `count` times, for the Messages API and FIM: new TLS connections per 100 cancelled suggestions,
    and the answered one's request → ghost text less the model's own time; over HTTP/2 beside HTTP/1.1 kept warm
    (which must close a connection whose answer has not ended) and closing (AGENT_LSP_KEEP_WARM=0)."""
    count = 5 if quick else 50
    cert = made(Path(tempfile.mkdtemp(prefix="agent-lsp-cert-", dir=root)))
    rows, rtt = [], 2 * DELAY
    for api in ("anthropic", "fim"):
        got = {}
        for server in ("h2", "agent", "closing"):
            model = OracleModel(latency=LATENCY, tls=None if server == "h2" else cert.server_context(), pace=0).start()
            front = H2Front(model.port, cert) if server == "h2" else None
            link = SlowLink(front.port if front else model.port, DELAY)
            base_url = link.url(path="/v1")
            try:
                async with spawned("agent", model, root, api, base_url,
                                   _env(api, "agent" if server == "h2" else server, cert, base_url)) as client:
                    await _warm_up(client, model, root)
                    warm = link.connections
                    took = await _cancel_then_ask(client, model, root, count)
                    got[server] = (link.connections - warm, took)
            finally:
                link.stop()
                if front:
                    front.stop()
                model.stop()
        per = {server: 100 * n / count for server, (n, _) in got.items()}
        name = f"remote model ({APIS[api]}, TLS, {rtt * 1000:.0f} ms round trip)"
        rows.append(Row(f"{name}: new TLS connections per 100 suggestions cancelled while their model call is out, "
                        f"over HTTP/2 ({count} cancelled)", f"{per['h2']:.1f}",
                        f"{per['agent']:.1f} HTTP/1.1 kept warm; {per['closing']:.1f} closing", None, "≤ 1",
                        per["h2"] <= 1))
        p50 = statistics.median(got["h2"][1])
        rows.append(Row(f"remote model ({APIS[api]}): the suggestion after a cancelled one, request → ghost text less "
                        "the model's own time, over HTTP/2", _ms(got["h2"][1]),
                        f"{_ms(got['agent'][1])} HTTP/1.1 kept warm; {_ms(got['closing'][1])} closing", None,
                        f"p50 ≤ 1.2 round trips ({1.2 * rtt * 1000:.0f} ms)", p50 <= 1.2 * rtt))
    return rows


async def _cancel_then_ask(client: Client, model: OracleModel, root: Path, count: int) -> list[float]:
    """`count` times: a suggestion asked and cancelled once the model has its call (as VS Code cancels the one in
    flight at a keystroke), then one at the next line asked and answered; the answered ones' request → answer less
    the model's own time."""
    text = "".join(f"def f{n}(items):\n    total = 0\n\n\n" for n in range(count))
    uri = (root / "cancelled.py").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    model.fixed = "return total"
    took, version = [], 1

    def typed(line: int) -> dict:
        """Four spaces typed at `line`: the params of a suggestion asked there."""
        nonlocal version
        version += 1
        at = {"line": line, "character": 0}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"range": {"start": at, "end": at}, "text": "    "}]})
        return {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}, "context": {"triggerKind": 2}}

    for n in range(count):
        calls = len(model.calls)
        msg_id, cancelled = client.send("textDocument/inlineCompletion", typed(4 * n + 2))
        await until(lambda: len(model.calls) > calls)
        client.notify("$/cancelRequest", {"id": msg_id})
        await asyncio.gather(cancelled, return_exceptions=True)  # cancelled, or answered before the cancel
        calls = len(model.calls)
        sent = time.perf_counter()
        await client.request("textDocument/inlineCompletion", typed(4 * n + 3))
        answered = time.perf_counter() - sent
        took.append(answered - sum(c.finished - c.arrived for c in model.calls[calls:] if c.finished))
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    model.fixed = None
    return took


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms (p99 {p99(xs) * 1000:.0f})" if xs else "none"


async def remote(quick: bool, root: Path) -> list[Row]:
    chosen = _pick(60 if quick else 400)
    cert = made(Path(tempfile.mkdtemp(prefix="agent-lsp-cert-", dir=root)))
    rows = []
    rtt = 2 * DELAY
    for api, name in APIS.items():
        got = {server: await remote_once(api, server, chosen, cert, root, 2 if quick else 10, 5 if quick else 50)
               for server in SERVERS}
        a, c, n = got["agent"], got["closing"], got["naive"]
        per = lambda r: 100 * r.paused_connections / max(1, len(r.paused))  # noqa: E731
        said = lambda r: f"{per(r):.1f}"  # noqa: E731
        rows.append(Row(f"remote model ({name}, TLS, {rtt * 1000:.0f} ms round trip): new TLS connections per 100 "
                        f"suggestions asked at a pause, once warm ({len(a.paused)} suggestions)", said(a),
                        f"{said(c)} closing; {said(n)} naive", None, "≤ 1", per(a) <= 1))
        p50 = statistics.median(a.paused) if a.paused else float("inf")
        rows.append(Row(f"remote model ({name}): request → ghost text, less the model's own time", _ms(a.paused),
                        f"{_ms(c.paused)} closing; {_ms(n.paused)} naive", None,
                        f"p50 ≤ 1.2 round trips ({1.2 * rtt * 1000:.0f} ms)", p50 <= 1.2 * rtt))
        replayed = lambda r: f"{100 * r.connections / max(1, r.replay.calls):.1f} ({r.connections} for "\
            f"{r.replay.calls} calls)"  # noqa: E731
        rows.append(Row(f"remote model ({name}): new TLS connections per 100 model calls, Neovim replay (requests "
                        "cancelled when the typing ends)", replayed(a), f"{replayed(c)} closing; {replayed(n)} naive",
                        None, "", None))
        if a.chat:
            rows.append(Row(f"remote model ({name}): a chat after the suggestions — new connections in {len(a.chat)} "
                            "chats; answer less the model's time", f"{a.chat_connections}; {_ms(a.chat)}",
                            f"{c.chat_connections}; {_ms(c.chat)} closing", None, "", None))
    return rows


if __name__ == "__main__":
    sys.exit("run it as `python -m bench --only 'remote model'`")
