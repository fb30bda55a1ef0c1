"""Abort → `agent/chat` answered, in each state a chat can be in: p50 and p99 over N aborts per state.

Run: python bench/abort.py [--runs 50] [--provider anthropic|openai]. One real server over stdio, the real SDK
against the fake Messages API (or the fake chat.completions API, which reads the same scripts), a raw LSP client; the clock runs from sending agent/abort to receiving the chat's answer. Goal: p99 ≤ 50 ms.
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
from tests.fakes.messages_api import FakeMessagesAPI  # noqa: E402

EDIT = {"content": [{"type": "tool_use", "name": "edit_file",
                     "input": {"path": "app.py", "old_string": "hi", "new_string": "hello"}}]}
STATES = {
    # state: (fake replies per chat, permissionMode, the update kind / request that says the state is reached)
    "model streaming": ([{"content": [{"type": "text", "text": "Working"}], "hang": True}], "default", "text_delta"),
    "confirmation pending": ([EDIT], "default", "confirmation_request"),
    "command running": ([{"content": [{"type": "tool_use", "name": "run_command",
                                       "input": {"command": "echo go; sleep 30"}}]}], "bypassPermissions", "output"),
    "edit awaiting applyEdit": ([EDIT], "acceptEdits", "applyEdit"),
    "between turns": ([{"content": [{"type": "tool_use", "name": "list_open_buffers", "input": {}}]},
                       {"content": [{"type": "text", "text": "late"}], "stall": 2}], "default", "turn_start:2"),
}


def _is_second_turn(body: dict) -> bool:
    """Whether a Messages API request is a chat's second turn: its last message carries no "go" (the user's
    message; an aborted chat's tool results can share the next chat's first message with it)."""
    content = body["messages"][-1]["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return not any(block.get("type") == "text" and block.get("text", "").strip() == "go" for block in blocks)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(runs: int, provider: str = "anthropic") -> None:
    results = await measure(runs, provider)
    print(f"{'state':<26} {'p50 (ms)':>9} {'p99 (ms)':>9} {'max (ms)':>9}   ({runs} aborts each)")
    for state, samples in results.items():
        print(f"{state:<26} {statistics.median(samples):>9.1f} {percentile(samples, 0.99):>9.1f} "
              f"{max(samples):>9.1f}")


async def measure(runs: int, provider: str = "anthropic") -> dict[str, list[float]]:
    """Milliseconds from agent/abort to the chat's answer, per state."""
    results: dict[str, list[float]] = {}
    root = Path(tempfile.mkdtemp(prefix="agent-lsp-bench-"))
    (root / "app.py").write_text("print('hi')\n")
    if provider == "openai":
        api = FakeChatCompletions().start()
        env = {**os.environ, "AGENT_LSP_PROVIDER": "openai", "AGENT_LSP_MODEL": "bench", "OPENAI_API_KEY": "bench",
               "OPENAI_BASE_URL": api.api_url, "AGENT_LSP_OFFLINE": "1"}
    else:
        api = FakeMessagesAPI().start()
        env = {**os.environ, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": api.base_url,
               "AGENT_LSP_OFFLINE": "1"}
    client = await LspClient.spawn(sys.executable, "-m", "agent_lsp", "--data-dir", str(root / "state"), env=env,
                                   stderr=asyncio.subprocess.DEVNULL)
    seen: list[str] = []
    sessions: list[str] = []

    def on_update(params):
        update = params["update"]
        sessions.append(params["sessionId"])
        seen.append("output" if update.get("output") else
                    f"turn_start:{update['turn']}" if update["kind"] == "turn_start" else update["kind"])

    client.on_notification["agent/update"] = on_update
    never = asyncio.get_running_loop().create_future()

    async def apply_edit(params):
        seen.append("applyEdit")
        return await never  # the editor never answers: only the abort ends the wait

    client.on_request["workspace/applyEdit"] = apply_edit
    await client.request("initialize", {
        "processId": os.getpid(), "rootUri": root.as_uri(), "workspaceFolders": [{"uri": root.as_uri(), "name": "b"}],
        "capabilities": {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
                         "experimental": {"agent": {"confirmTool": True}}}})
    client.notify("initialized", {})
    for state, (replies, mode, marker) in STATES.items():
        samples, session = [], None
        for _ in range(runs):
            seen.clear()
            if provider == "anthropic" and len(replies) > 1:
                # Each request answered by what it asks, not by its place in a queue: the aborted chat's second
                # request can reach the fake after the next chat's replies were queued, and would take the first.
                api.default = lambda body, replies=replies: replies[1] if _is_second_turn(body) else replies[0]
            else:
                api.add(*replies)
            params = {"message": "go", "permissionMode": mode, **({"sessionId": session} if session else {})}
            chat = asyncio.ensure_future(client.request("agent/chat", params))
            deadline = time.perf_counter() + 60
            while marker not in seen:  # a state never reached is a failure, not a hang
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{state}: {marker} never came (saw {seen})")
                await asyncio.sleep(0.002)
            session = sessions[-1]
            started = time.perf_counter()
            abort = asyncio.ensure_future(client.request("agent/abort", {"sessionId": session}))
            result = await chat
            samples.append((time.perf_counter() - started) * 1000)
            await abort
            assert result["stopReason"] == "aborted", result
            api.script.clear()
        results[state] = samples
        api.default = None
    never.set_result({"applied": False})  # the aborted chats' applyEdit questions answered at last: no task left pending
    await client.close()
    api.stop()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--provider", choices=["anthropic", "openai"], default="anthropic")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.provider))
