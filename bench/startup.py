"""Spawn → `initialize` answered, and RSS after `initialized`: agent-lsp beside a bare pygls server.

Run: python bench/startup.py [--runs 15]. Prints medians and the ratio; the goal is ≤ 1.1× on both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from agent_lsp.demo.client import LspClient  # noqa: E402

SERVERS = {
    "bare pygls": [sys.executable, str(Path(__file__).with_name("bare_server.py"))],
    "agent-lsp": [sys.executable, "-m", "agent_lsp"],
}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def once(command: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    client = await LspClient.spawn(*command, env={**os.environ, "AGENT_LSP_OFFLINE": "1"},
                                   stderr=asyncio.subprocess.DEVNULL)
    await client.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
    elapsed = time.perf_counter() - started
    client.notify("initialized", {})
    try:
        await client.request("$/roundTrip", None)  # unknown to both: an error answer, after `initialized` ran
    except RuntimeError:
        pass
    rss = rss_kib(client.process.pid)
    await client.close()
    return elapsed, rss


async def main(runs: int) -> None:
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in SERVERS}
    for _ in range(runs):  # interleaved, so both see the same machine load
        for name, command in SERVERS.items():
            results[name].append(await once(command))
    print(f"{'server':<12} {'initialize (ms, median)':>24} {'RSS after initialized (MiB, median)':>36}")
    medians = {}
    for name, samples in results.items():
        ms = statistics.median(s[0] for s in samples) * 1000
        mib = statistics.median(s[1] for s in samples) / 1024
        medians[name] = (ms, mib)
        print(f"{name:<12} {ms:>24.0f} {mib:>36.1f}")
    (bare_ms, bare_mib), (agent_ms, agent_mib) = medians["bare pygls"], medians["agent-lsp"]
    print(f"ratio        {agent_ms / bare_ms:>23.2f}x {agent_mib / bare_mib:>35.2f}x   ({runs} runs each)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
