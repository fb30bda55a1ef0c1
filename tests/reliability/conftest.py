"""Reliability fixtures: `--long` for the big counts, the fake model, a raw server, and the summary table."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

import pytest
import pytest_asyncio

from tests.e2e import conftest as e2e
from tests.reliability.rawlsp import ANSWER_CEILING, RawServer
from tests.waiting import until

fake_api, workspace = e2e.fake_api, e2e.workspace  # the e2e tier's fixtures, shared


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False,
                     help="reliability suite at full size (10,000 fuzz cases, 3,000-chat soak, 50 MB inputs)")


@pytest.fixture(scope="session")
def long_run(request) -> bool:
    return bool(request.config.getoption("--long"))


@dataclass
class Row:
    area: str
    cases: int = 0
    crashes: int = 0
    hangs: int = 0
    wrong: int = 0
    lost: int = 0


SUMMARY: dict[str, Row] = {}


def tally(area: str, **counts: int) -> Row:
    """Add to the summary row of `area` (printed at the end of the run)."""
    row = SUMMARY.setdefault(area, Row(area))
    for name, value in counts.items():
        setattr(row, name, getattr(row, name) + value)
    return row


async def abort_latest(server: RawServer, pending: asyncio.Future, area: str, kind: Optional[str] = None,
                       since: int = 0) -> tuple[str, dict]:
    """Abort the session of the latest `agent/update` (of `kind`, when given) among the notifications from index
    `since` on, once there is one, and return that session and the pending chat's result; a chat that does not
    answer within ANSWER_CEILING counts as a hang of `area`. (`since`: the count before the chat was sent, so that
    an update of an earlier chat, still the latest when the fake model has already been asked, is not taken.)"""
    def latest() -> Optional[str]:
        return next((n["params"]["sessionId"] for n in reversed(server.notifications[since:])
                     if n["method"] == "agent/update" and kind in (None, n["params"]["update"]["kind"])), None)

    try:
        session_id = await until(latest, ANSWER_CEILING, "an agent/update of the chat to abort")
    except TimeoutError:
        tally(area, hangs=1)
        raise
    aborted = await server.request("agent/abort", {"sessionId": session_id})
    try:
        return session_id, (await asyncio.wait_for(pending, ANSWER_CEILING))["result"]
    except asyncio.TimeoutError:
        tally(area, hangs=1)
        raise TimeoutError(f"the chat did not answer within {ANSWER_CEILING} s of agent/abort of {session_id} "
                           f"(answered {aborted.get('result', aborted)})") from None


def summary_table() -> str:
    head = "| area | cases | crashes | hangs | wrong answers | lost |\n|---|---:|---:|---:|---:|---:|"
    rows = [f"| {r.area} | {r.cases} | {r.crashes} | {r.hangs} | {r.wrong} | {r.lost} |" for r in SUMMARY.values()]
    total = Row("total")
    for r in SUMMARY.values():
        for f in fields(Row)[1:]:
            setattr(total, f.name, getattr(total, f.name) + getattr(r, f.name))
    rows.append(f"| **total** | {total.cases} | {total.crashes} | {total.hangs} | {total.wrong} | {total.lost} |")
    return "\n".join([head, *rows])


def pytest_terminal_summary(terminalreporter):
    if SUMMARY:
        terminalreporter.write_sep("=", "reliability summary")
        terminalreporter.write_line(summary_table())
        target = os.environ.get("AGENT_LSP_RELIABILITY_TABLE")
        if target:
            Path(target).write_text(summary_table() + "\n")


def server_env(base_url: Optional[str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_LSP_"))}
    env.update(AGENT_LSP_OFFLINE="1", ANTHROPIC_API_KEY="test-key", AGENT_LSP_CLIENT_TIMEOUT="1.5")
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    env.update(extra)
    return env


OK_REPLY = {"content": [{"type": "text", "text": "ok"}]}




@pytest_asyncio.fixture
async def start_server(fake_api, workspace, tmp_path):
    """start_server(*args, data_dir=..., env=..., init_options=..., agent=...) -> an initialized RawServer."""
    servers: list[RawServer] = []

    async def start(*args: str, data_dir: Optional[Path] = None, env: Optional[dict] = None,
                    init_options=None, agent: Optional[dict] = None, preexec_fn=None, **extra_env: str) -> RawServer:
        server = await RawServer.start("--data-dir", str(data_dir or tmp_path / "state"), *args,
                                       env=env or server_env(fake_api.base_url, **extra_env), preexec_fn=preexec_fn)
        servers.append(server)
        server.handlers["workspace/applyEdit"] = lambda params: {"applied": True}
        await server.initialize(workspace, init_options=init_options, agent=agent)
        return server

    yield start
    for server in servers:
        if server.proc.returncode is None:
            server.proc.kill()
        await server.wait_exit()
