"""The model faults of a remote model, over TLS (tests/fakes/certificate.py), for either provider's fault area: a
TLS handshake that stalls, a reset mid-stream, a stream ended before its end, a certificate that does not verify
(named as such, with the endpoint; nothing sent). Each chat answers and its session's next chat keeps everything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Awaitable, Callable

from tests.fakes.certificate import made
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
        if server.proc.returncode is not None or other.proc.returncode is not None:
            failures.append("a server died")
        if untrusted.requests:
            failures.append(f"sent to an endpoint whose certificate did not verify: {untrusted.requests}")
        return failures
    finally:
        fake.stop()
        untrusted.stop()
