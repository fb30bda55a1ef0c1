"""The ACP front end: spawn → `initialize` answered and RSS, beside Zed's Claude adapter; cancel → `session/prompt`
answered in each state; what `import acp` costs.

Run: python bench/acp_agent.py [--runs 15] [--cancels 30]. Zed's adapter (`@zed-industries/claude-agent-acp`, pinned
below) is installed with npm into ~/.cache/agent-lsp-bench on first use. Both agents are spawned the same way
(interpreter + script, stdio pipes), interleaved, and answered one `initialize` over the ACP SDK's client side.
Goals: initialize no slower than the adapter and RSS ≤ 0.6× its; cancel p99 ≤ 50 ms in every state.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
import acp  # noqa: E402
from acp import schema  # noqa: E402

from tests.e2e.acp_client import RecordingClient, start_agent, wire_shape  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI  # noqa: E402

ADAPTER = "@zed-industries/claude-agent-acp@0.23.1"
CACHE = Path.home() / ".cache" / "agent-lsp-bench"


def adapter_command() -> list[str]:
    script = CACHE / "node_modules" / "@zed-industries" / "claude-agent-acp" / "dist" / "index.js"
    if not script.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), ADAPTER], check=True,
                       capture_output=True)
    return [shutil.which("node") or "node", str(script)]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def spawn_once(command: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
                                                   env={**os.environ, "AGENT_LSP_OFFLINE": "1"})
    conn = acp.connect_to_agent(RecordingClient(), process.stdin, process.stdout)
    await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=schema.ClientCapabilities(),
                          client_info=schema.Implementation(name="bench", version="1"))
    elapsed = time.perf_counter() - started
    rss = rss_kib(process.pid)
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 10)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
    await conn.close()
    return elapsed, rss


async def startup(runs: int) -> None:
    agents = {"agent-lsp --acp": [sys.executable, "-m", "agent_lsp", "--acp", "--data-dir", tempfile.mkdtemp()],
              "claude-agent-acp": adapter_command()}
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in agents}
    for _ in range(runs):  # interleaved, so both see the same machine load
        for name, command in agents.items():
            results[name].append(await spawn_once(command))
    print(f"{'agent':<18} {'initialize (ms, median)':>24} {'RSS after it (MiB, median)':>28}")
    medians = {}
    for name, samples in results.items():
        medians[name] = (statistics.median(s[0] for s in samples) * 1000, statistics.median(s[1] for s in samples) / 1024)
        print(f"{name:<18} {medians[name][0]:>24.0f} {medians[name][1]:>28.1f}")
    (ours_ms, ours_mib), (theirs_ms, theirs_mib) = medians["agent-lsp --acp"], medians["claude-agent-acp"]
    print(f"{'ratio':<18} {ours_ms / theirs_ms:>23.2f}x {ours_mib / theirs_mib:>27.2f}x   ({runs} runs each)")


def import_cost(runs: int) -> None:
    def run(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return (time.perf_counter() - started) * 1000

    bare = statistics.median(run("pass") for _ in range(runs))
    with_acp = statistics.median(run("import acp") for _ in range(runs))
    print(f"import acp: {with_acp - bare:.0f} ms over a bare interpreter (median of {runs})")


EDIT = {"content": [{"type": "tool_use", "name": "edit_file",
                     "input": {"path": "app.py", "old_string": "hi", "new_string": "hello"}}]}
STATES = {  # state: (fake replies, mode, what in the wire says the state is reached)
    "model streaming": ([{"content": [{"type": "text", "text": "Working"}], "hang": True}], "default",
                        "agent_message_chunk"),
    "awaiting permission": ([EDIT], "default", "session/request_permission"),
    "command running": ([{"content": [{"type": "tool_use", "name": "run_command",
                                       "input": {"command": "echo go; sleep 30"}}]}], "bypassPermissions",
                        "tool_call_update:in_progress"),
}


async def cancels(runs: int) -> None:
    api = FakeMessagesAPI().start()
    root = Path(tempfile.mkdtemp(prefix="agent-lsp-bench-"))
    (root / "ws").mkdir()
    (root / "ws" / "app.py").write_text("print('hi')\n")
    client = RecordingClient()
    agent = await start_agent(api.base_url, root / "state", client, fs=False)
    print(f"{'state':<22} {'p50 (ms)':>9} {'p99 (ms)':>9} {'max (ms)':>9}   ({runs} cancels each)")
    for state, (replies, mode, marker) in STATES.items():
        session_id = (await agent.conn.new_session(cwd=str(root / "ws"), mcp_servers=[])).session_id
        await agent.conn.set_session_mode(session_id=session_id, mode_id=mode)
        samples = []
        for _ in range(runs):
            client.wire.clear()
            api.add(*replies)
            prompt = asyncio.ensure_future(agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("go")]))
            while marker not in wire_shape(client.wire):
                await asyncio.sleep(0.002)
            started = time.perf_counter()
            await agent.conn.cancel(session_id=session_id)
            answer = await prompt
            samples.append((time.perf_counter() - started) * 1000)
            assert answer.stop_reason == "cancelled", answer
            for held in client.held:
                held.set_result(None)
            client.held.clear()
            api.script.clear()
        print(f"{state:<22} {statistics.median(samples):>9.1f} {percentile(samples, 0.99):>9.1f} {max(samples):>9.1f}")
    await agent.stop()
    api.stop()


async def main(runs: int, cancel_runs: int) -> None:
    import_cost(runs)
    await startup(runs)
    await cancels(cancel_runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cancels", type=int, default=30)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.cancels))
