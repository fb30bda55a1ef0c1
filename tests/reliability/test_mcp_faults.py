"""MCP servers that misbehave (tests/fakes/mcp_raw.py, plain JSON-RPC over stdio): a call that never answers, a
50 MB answer, a tool whose input schema is not JSON Schema, a tool the SDK's types refuse (over stdio and over
streamable HTTP), a server that dies in the
middle of a call, servers that never answer `initialize`. Each chat answers, the model reads what went wrong, the
other tools go on, nothing crashes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import text, tool_use
from tests.reliability.conftest import tally
from tests.reliability.rawlsp import ANSWER_CEILING
from tests.waiting import until

AREA = "MCP servers"
ROOT = Path(__file__).resolve().parents[2]


def raw_server(mode: str, out: Path, start_timeout: float = 60, **env: str) -> dict:
    return {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_raw", mode, str(out / mode)],
            "env": {"PYTHONPATH": str(ROOT), **env}, "startTimeout": start_timeout}


def tool_results(fake_api, message: str) -> list[dict]:
    """The tool results the model read in the chat whose user message is `message`."""
    for n, body in enumerate(fake_api.requests):
        texts = [b.get("text") for m in body["messages"] if m["role"] == "user" for b in m["content"]]
        if message in texts and n + 1 < len(fake_api.requests):
            last = fake_api.requests[n + 1]["messages"][-1]["content"]
            return [b for b in last if b["type"] == "tool_result"]
    return []


def warnings(server) -> list[str]:
    return [n["params"]["message"] for n in server.notifications if n["method"] == "window/showMessage"]


async def test_misbehaving_mcp_servers(start_server, fake_api, tmp_path):
    out = tmp_path / "mcp"
    web = subprocess.Popen([sys.executable, "-m", "tests.fakes.mcp_raw", "refused", str(out / "web"), "--http"],
                           cwd=ROOT)
    try:
        await _misbehaving_mcp_servers(start_server, fake_api, out, web)
    finally:
        web.kill()
        web.wait()


async def _misbehaving_mcp_servers(start_server, fake_api, out: Path, web: subprocess.Popen) -> None:
    await until(lambda: (out / "web" / "port").exists() or web.poll() is not None, ANSWER_CEILING,
                "the MCP web server's port")
    url = f"http://127.0.0.1:{(out / 'web' / 'port').read_text()}/mcp"
    size = 50 * 1024 * 1024
    servers = {"web": {"type": "http", "url": url},"schema": raw_server("schema", out), "big": raw_server("big", out, BIG_BYTES=str(size)),
               "die": raw_server("die", out), "hang": raw_server("hang", out), "refused": raw_server("refused", out),
               # never answer `initialize`: one fails within its own startTimeout, the other outlasts the chat's wait
               "mute": raw_server("silent", out / "mute", start_timeout=2),
               "slow": raw_server("silent", out / "slow", start_timeout=600)}
    server = await start_server(init_options={"mcpServers": servers})
    bypass = {"permissionMode": "bypassPermissions"}
    problems: list[str] = []

    async def chat(message: str, *replies: dict) -> dict:
        fake_api.add(*replies)
        return (await server.request("agent/chat", {"message": message, **bypass}))["result"]

    # an invalid input schema: that tool alone is left out, with a warning naming it
    result = await chat("schema", tool_use("mcp__schema__good", {}), text("Good."))
    offered = [t["name"] for t in fake_api.requests[-2]["tools"] if t["name"].startswith("mcp__")]
    if result["stopReason"] != "end_turn" or "mcp__schema__bad" in offered or "mcp__schema__good" not in offered:
        problems.append(f"schema: {result}, offered {offered}")
    if not any("`bad` of the MCP server `schema` has an input schema that is not valid JSON Schema" in w
               for w in warnings(server)):
        problems.append(f"schema: no warning: {warnings(server)}")
    tally(AREA, cases=1)

    # a tool the SDK's own types refuse: that tool alone is left out, the server's others are offered and answer
    result = await chat("refused", tool_use("mcp__refused__good", {}), text("Good."))
    (good,) = tool_results(fake_api, "refused") or [{}]
    offered = [t["name"] for t in fake_api.requests[-2]["tools"] if t["name"].startswith("mcp__refused__")]
    if result["stopReason"] != "end_turn" or offered != ["mcp__refused__good", "mcp__refused__act"] or \
            good.get("content") != "fine" or good.get("is_error"):
        problems.append(f"refused: {result}, offered {offered}, {good}")
    if not any(w.startswith("agent-lsp: the tool `odd` of the MCP server `refused` is not a valid MCP tool "
                            "(`inputSchema.required`") for w in warnings(server)):
        problems.append(f"refused: no warning: {warnings(server)}")
    tally(AREA, cases=1)

    # the same over streamable HTTP: the SDK's own transport, the same look at the listing before the SDK's types
    result = await chat("refused over http", tool_use("mcp__web__good", {}), text("Good."))
    (good,) = tool_results(fake_api, "refused over http") or [{}]
    offered = [t["name"] for t in fake_api.requests[-2]["tools"] if t["name"].startswith("mcp__web__")]
    if result["stopReason"] != "end_turn" or offered != ["mcp__web__good", "mcp__web__act"] or \
            good.get("content") != "fine" or good.get("is_error"):
        problems.append(f"refused over http: {result}, offered {offered}, {good}")
    if not any(w.startswith("agent-lsp: the tool `odd` of the MCP server `web` is not a valid MCP tool "
                            "(`inputSchema.required`") for w in warnings(server)):
        problems.append(f"refused over http: no warning: {warnings(server)}")
    tally(AREA, cases=1)

    # never answering `initialize`: the first chat went on without those tools, a warning each; no later chat waits
    silent = [w for w in warnings(server) if "`mute`" in w or "`slow`" in w]
    if sorted(silent) != sorted([
            f"agent-lsp: the MCP server `mute` ({servers['mute']['command']} {' '.join(servers['mute']['args'])}) "
            "did not start: no answer within 2 s (its `startTimeout`); its tools are not offered.",
            f"agent-lsp: the MCP server `slow` ({servers['slow']['command']} {' '.join(servers['slow']['args'])}) "
            "is still starting after 10 s; this chat goes on without its tools, which are offered once it has "
            "started."]):
        problems.append(f"silent: {silent}")
    tally(AREA, cases=2)

    # a huge answer: the model reads a bounded result (an error naming the size), the server stays within bounds
    result = await chat("big", tool_use("mcp__big__act", {}), text("Big."))
    (big,) = tool_results(fake_api, "big") or [{}]
    if result["stopReason"] != "end_turn" or not 0 < len(big.get("content", "")) < 100_000:
        problems.append(f"big: {result}, result of {len(big.get('content', ''))} characters")
    if not big.get("is_error") or not big.get("content", "").startswith("The MCP server `big` answered an error: "
                                                                          "the answer has ") or \
            "bytes, over agent-lsp's limit of 8388608 for one MCP message" not in big.get("content", ""):
        problems.append(f"big: {big.get('content', '')[:200]}")
    if server.rss_kb() > 1_000_000:
        problems.append(f"big: RSS {server.rss_kb()} kB after a {size} B answer")
    tally(AREA, cases=1)

    # dies in the middle of a call: an error result naming the server, a warning, its tools offered no more
    result = await chat("die", tool_use("mcp__die__act", {}), text("Dead."))
    (died,) = tool_results(fake_api, "die") or [{}]
    if result["stopReason"] != "end_turn" or not died.get("is_error") or \
            not died.get("content", "").startswith("The MCP server `die` failed"):
        problems.append(f"die: {result}, {died}")
    if not any(w.startswith("agent-lsp: the MCP server `die` stopped (") for w in warnings(server)):
        problems.append(f"die: no warning: {warnings(server)}")
    tally(AREA, cases=1)

    # a call that never answers: Stop ends it, the next chat goes on (and no longer offers the dead server's tools,
    # but still those of the one whose answer was too big)
    pending = server.request_future("agent/chat", {"message": "hang", **bypass})
    fake_api.add(tool_use("mcp__hang__act", {}))
    await until((out / "hang" / "started").exists, ANSWER_CEILING, "the hanging MCP call to start")

    def hanging_call() -> list[str]:  # its tool_call update may reach us after the MCP server saw the call
        return [n["params"]["sessionId"] for n in server.notifications if n["method"] == "agent/update"
                and n["params"]["update"]["kind"] == "tool_call" and n["params"]["update"]["name"] == "mcp__hang__act"]

    session_id = (await until(hanging_call, ANSWER_CEILING, "the hanging MCP call's tool_call update"))[0]
    await server.request("agent/abort", {"sessionId": session_id})
    hung = (await asyncio.wait_for(pending, ANSWER_CEILING))["result"]
    if hung["stopReason"] != "aborted":
        problems.append(f"hang: {hung}")
    result = await chat("after", text("Still here."))
    offered = [t["name"] for t in fake_api.requests[-1]["tools"] if t["name"].startswith("mcp__")]
    if result["stopReason"] != "end_turn" or any(n.startswith("mcp__die__") for n in offered) or \
            "mcp__big__act" not in offered:
        problems.append(f"after: {result}, offered {offered}")
    tally(AREA, cases=1)

    assert server.proc.returncode is None
    tally(AREA, wrong=len(problems))
    assert not problems, "\n".join(problems)
