"""The first chat's latency, cold (sent at `initialized`) and warm (sent once the SDK was warmed in the
background), through the real anthropic SDK against the fake Messages API; and RSS before and after the warm-up.

Run: python bench/first_chat.py [--runs 5]. Prints medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from agent_lsp.demo.client import LspClient  # noqa: E402
from bench.startup import rss_kib  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI  # noqa: E402


async def once(warm: bool, api: FakeMessagesAPI) -> tuple[float, int, int]:
    """(first chat in s, RSS after initialized KiB, RSS when the chat is sent KiB)."""
    api.add({"content": [{"type": "text", "text": "Hi."}]})
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        env = {**os.environ, "AGENT_LSP_OFFLINE": "1", "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": api.base_url}
        client = await LspClient.spawn(sys.executable, "-m", "agent_lsp", "--data-dir", tmp, "--log-file", str(log),
                                       "--log-level", "INFO", env=env, stderr=asyncio.subprocess.DEVNULL)
        await client.request("initialize", {"processId": os.getpid(), "rootUri": Path(tmp).as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        try:
            await client.request("$/roundTrip", None)
        except RuntimeError:
            pass
        rss_initialized = rss_kib(client.process.pid)
        if warm:
            while not (log.exists() and "warmed the anthropic SDK" in log.read_text()):
                await asyncio.sleep(0.05)
        rss_chat = rss_kib(client.process.pid)
        started = time.perf_counter()
        await client.request("agent/chat", {"message": "hi"})
        elapsed = time.perf_counter() - started
        await client.close()
        return elapsed, rss_initialized, rss_chat


async def main(runs: int) -> None:
    api = FakeMessagesAPI().start()
    results = {True: [], False: []}
    for _ in range(runs):  # interleaved, so both see the same machine load
        for warm in (False, True):
            results[warm].append(await once(warm, api))
    api.stop()
    print(f"{'first chat':<12} {'latency (ms, median)':>22} {'RSS after initialized':>22} {'RSS at the chat':>16}")
    for warm, samples in results.items():
        ms = statistics.median(s[0] for s in samples) * 1000
        mib = [statistics.median(s[i] for s in samples) / 1024 for i in (1, 2)]
        print(f"{'warm' if warm else 'cold':<12} {ms:>22.0f} {mib[0]:>18.1f} MiB {mib[1]:>12.1f} MiB")
    print(f"({runs} runs each)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
