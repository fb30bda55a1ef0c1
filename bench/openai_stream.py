"""Stream overhead of the openai provider: 5,000 deltas from the fake chat.completions API, read by the SDK alone
and by an LSP client through agent-lsp, against the fake's own emission time. Medians of N runs.

Run: python bench/openai_stream.py [--deltas 5000] [--runs 5] [--delay 0.0002]. `--delay` paces the fake (seconds
between chunks, as a model emits them); `--delay 0` measures throughput instead. Goal: through agent-lsp, the last
delta reaches the client in ≤ 1.10× the fake's emission time.
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
from tests.fakes.chat_completions import FakeChatCompletions  # noqa: E402


def reply(deltas: int, delay: float) -> dict:
    return {"content": [{"type": "text", "text": "w " * deltas}], "delay": delay}


async def sdk_alone(api: FakeChatCompletions, deltas: int, delay: float) -> tuple[float, float]:
    """(emission seconds, seconds from the request to the SDK's last chunk)."""
    import openai

    client = openai.AsyncOpenAI(base_url=api.api_url, api_key="bench")
    api.add(reply(deltas, delay))
    started = time.perf_counter()
    stream = await client.chat.completions.create(model="bench", messages=[{"role": "user", "content": "go"}],
                                                  stream=True, stream_options={"include_usage": True})
    seen = 0
    async with stream:
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                seen += 1
                last = time.perf_counter()
    assert seen == deltas, seen
    await client.close()
    first, done = api.emissions[-1]
    return done - first, last - started


async def through_server(client: LspClient, api: FakeChatCompletions, text: list[str], deltas: int,
                         delay: float) -> tuple[float, float, float]:
    """(emission seconds, seconds from agent/chat to the last text_delta, ... to the chat's answer)."""
    api.add(reply(deltas, delay))
    text.clear()
    started = time.perf_counter()
    result = await client.request("agent/chat", {"message": "go"})
    answered = time.perf_counter()
    assert result["stopReason"] == "end_turn" and len(result["finalMessage"]) == 2 * deltas, result["stopReason"]
    assert "".join(t for t, _ in text) == result["finalMessage"]
    first, done = api.emissions[-1]
    return done - first, text[-1][1] - started, answered - started


async def main(deltas: int, runs: int, delay: float) -> None:
    api = FakeChatCompletions().start()
    root = Path(tempfile.mkdtemp(prefix="agent-lsp-bench-"))
    env = {**os.environ, "AGENT_LSP_PROVIDER": "openai", "AGENT_LSP_MODEL": "bench", "OPENAI_API_KEY": "bench",
           "OPENAI_BASE_URL": api.api_url, "AGENT_LSP_OFFLINE": "1"}
    client = await LspClient.spawn(sys.executable, "-m", "agent_lsp", "--data-dir", str(root / "state"), env=env,
                                   stderr=asyncio.subprocess.DEVNULL)
    text: list[tuple[str, float]] = []

    def on_update(params):
        if params["update"]["kind"] == "text_delta":
            text.append((params["update"]["text"], time.perf_counter()))

    client.on_notification["agent/update"] = on_update
    await client.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
    client.notify("initialized", {})
    await through_server(client, api, text, 10, 0)  # warm-up: the SDK import and the first connection
    sdk, server = [], []
    for _ in range(runs):  # interleaved, so that load on the machine falls on both alike
        sdk.append(await sdk_alone(api, deltas, delay))
        server.append(await through_server(client, api, text, deltas, delay))
    await client.close()
    api.stop()

    def med(rows, i):
        return statistics.median(r[i] for r in rows) * 1000

    ratio = statistics.median(r[1] / r[0] for r in server)
    print(f"{deltas} deltas, delay {delay * 1000:g} ms per chunk, medians of {runs} runs")
    print(f"{'reader':<34} {'emission (ms)':>14} {'last delta (ms)':>16} {'answer (ms)':>12} {'ratio':>7}")
    print(f"{'openai SDK alone':<34} {med(sdk, 0):>14.0f} {med(sdk, 1):>16.0f} {'':>12} "
          f"{statistics.median(r[1] / r[0] for r in sdk):>6.2f}x")
    print(f"{'LSP client through agent-lsp':<34} {med(server, 0):>14.0f} {med(server, 1):>16.0f} "
          f"{med(server, 2):>12.0f} {ratio:>6.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.0002)
    args = parser.parse_args()
    asyncio.run(main(args.deltas, args.runs, args.delay))
