"""The model faults of a remote model, over TLS (tests/fakes/certificate.py), for either provider's fault area: a
TLS handshake that stalls, a reset mid-stream, a stream ended before its end, a certificate that does not verify
(named as such, with the endpoint; nothing sent), and over HTTP/2 (tests/fakes/h2_front.py) a GOAWAY between chats
and in the middle of an answer. Each chat answers and its session's next chat keeps everything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Awaitable, Callable

from tests.fakes.certificate import Certificate, made
from tests.fakes.h2_front import H2Front
from tests.reliability.conftest import tally


async def faults_over_tls(start_server: Callable[..., Awaitable[Any]], tmp_path: Path, area: str,
                          make_fake: Callable[..., Any], env_for: Callable[[str, str], dict], url: Callable[[Any], str],
                          endpoint: str, cells: list[tuple[str, list[dict], set[str]]],
                          check_next_chat: Callable[..., Awaitable[list[str]]]) -> list[str]:
    """The problems found; `make_fake(tls=...)` a started fake, `env_for(url, authority)` the server's environment,
    `url(fake)` the URL the server is given, `endpoint` the path its error names after it."""
    cert, stranger = made(tmp_path / "cert"), made(tmp_path / "stranger")
    fake, untrusted = make_fake(tls=cert.server_context()), make_fake(tls=stranger.server_context())
    try:
        server = await start_server(init_options={"readTimeout": 1}, env=env_for(url(fake), str(cert.authority)))
        failures = []
        fake.httpd.handshake_stall = 3.0  # beyond the connect timeout (min(10 s, readTimeout)): the first chat's
        stalled = await server.request("agent/chat", {"message": "a stalled handshake"})  # connection is new
        fake.httpd.handshake_stall = 0.0
        result = stalled.get("result") or {}
        if result.get("stopReason") != "error" or url(fake) not in result.get("error", {}).get("message", ""):
            failures.append(f"stalled handshake: {stalled}")
        failures += await check_next_chat(server, fake, result.get("sessionId"), ["a stalled handshake"])
        tally(area, cases=1, wrong=1 if failures else 0)
        for n, (name, script, expected) in enumerate(cells):
            fake.script[:] = json.loads(json.dumps(script))
            message = f"tls cell {n}: {name}"
            answer = await server.request("agent/chat", {"message": message, "permissionMode": "bypassPermissions"})
            result = answer.get("result") or {}
            problems = [] if result.get("stopReason") in expected else [f"stopReason: {answer}"]
            problems += await check_next_chat(server, fake, result.get("sessionId"), [message])
            tally(area, cases=1, wrong=1 if problems else 0, lost=sum("lost" in p for p in problems))
            failures += [f"over TLS, {name}: {p}" for p in problems]

        other = await start_server(init_options={"readTimeout": 1},
                                   env=env_for(url(untrusted), str(cert.authority)))
        refused = await other.request("agent/chat", {"message": "an unverified certificate"})
        said = (refused.get("result") or {}).get("error", {}).get("message", "")
        if f"The TLS certificate of {url(untrusted)}{endpoint} does not verify" not in said:
            failures.append(f"unverified certificate: {refused}")
        tally(area, cases=1, wrong=0 if said else 1)
        failures += await _goaway(start_server, area, cert, make_fake, env_for, url, cells[0][1][0], check_next_chat)
        if server.proc.returncode is not None or other.proc.returncode is not None:
            failures.append("a server died")
        if untrusted.requests:
            failures.append(f"sent to an endpoint whose certificate did not verify: {untrusted.requests}")
        return failures
    finally:
        fake.stop()
        untrusted.stop()


async def _goaway(start_server: Callable[..., Awaitable[Any]], area: str, cert: Certificate,
                  make_fake: Callable[..., Any], env_for: Callable[[str, str], dict], url: Callable[[Any], str],
                  reply: dict, check_next_chat: Callable[..., Awaitable[list[str]]]) -> list[str]:
    """An HTTP/2 endpoint's GOAWAY: between two chats (the second answers on a new connection), then after the
    first piece of an answer (that chat ends in an error naming the GOAWAY; the next chat answers)."""
    fake = make_fake(tls=None)
    front = H2Front(fake.httpd.server_address[1], cert)
    try:
        server = await start_server(init_options={"readTimeout": 1},
                                    env=env_for(url(fake).replace(fake.httpd.base_url, front.url()),
                                                str(cert.authority)))
        failures = []
        fake.script[:] = [reply, reply, reply]
        first = (await server.request("agent/chat", {"message": "over HTTP/2"})).get("result") or {}
        front.goaway()
        second = (await server.request("agent/chat", {"sessionId": first.get("sessionId"),
                                                      "message": "after a GOAWAY"})).get("result") or {}
        if (first.get("stopReason"), second.get("stopReason"), front.connections) != ("end_turn", "end_turn", 2):
            failures.append(f"a GOAWAY between chats: {first}, {second}, {front.connections} connections")
        tally(area, cases=1, wrong=1 if failures else 0)
        front.goaway_after_data = 1
        cut = (await server.request("agent/chat", {"message": "a GOAWAY mid-answer"})).get("result") or {}
        problems = [] if cut.get("stopReason") == "error" and "(GOAWAY, NO_ERROR)" in cut.get("error", {}).get(
            "message", "") else [f"stopReason: {cut}"]
        problems += await check_next_chat(server, fake, cut.get("sessionId"), ["a GOAWAY mid-answer"])
        if front.connections != 3:
            problems.append(f"{front.connections} connections after two GOAWAYs")
        tally(area, cases=1, wrong=1 if problems else 0, lost=sum("lost" in p for p in problems))
        if server.proc.returncode is not None:
            problems.append("the server died")
        return failures + [f"over HTTP/2, a GOAWAY mid-answer: {p}" for p in problems]
    finally:
        front.stop()
        fake.stop()
