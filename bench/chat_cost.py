"""What a short text-only chat costs over the model request itself, and how that grows with a session's length.

One agent-lsp server with the fake Messages API. Each sample of agent-lsp is `agent/chat` sent → answered by an
LSP client; each sample of the reference is one line sent → answered to a warm script that makes the same
streamed request with the SDK alone (`messages.stream`, the body agent-lsp sent just before: the same system
prompt, tools and messages), so the difference is agent-lsp's own cost per chat. What a person would notice is
chat 100 taking 50 ms more than chat 2; the rest is recorded.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.figures import HELLO, Driven, Row, env_for, median, ms, p99, recorded
from bench.sdk_alone import SdkAlone
from tests.fakes.messages_api import FakeMessagesAPI

LATE = 5
"""How many of a grown session's last chats are timed."""
NOTICED = 0.050
"""Seconds more than chat 2 that chat 100 may take before a person would notice."""


async def _timed_chat(d: Driven, **params) -> tuple[float, dict]:
    started = time.perf_counter()
    result = await d.chat(HELLO, **params)
    return time.perf_counter() - started, result


async def chat_cost(samples: int, length: int, sessions: int, root: Path) -> list[Row]:
    """`samples` chats (each the second of a new session: the first also creates it) beside the SDK making the same
    request; then `sessions` sessions grown to `length` chats, whose last LATE chats are each timed beside a new
    session's second chat, each with the SDK making the same request too."""
    api = FakeMessagesAPI().start()
    sdk = await SdkAlone().start(api, env_for(api))
    agent, reference, late, sdk_late = [], [], [], []
    try:
        async with Driven(api, root, state="state-chat-cost") as d:
            for _ in range(3):  # warm: the SDK imported, the tools and prompt built once
                await _timed_chat(d)
                await sdk.request(api.requests[-1])
            for _ in range(samples):
                _, result = await _timed_chat(d)
                elapsed, _ = await _timed_chat(d, sessionId=result["sessionId"])
                agent.append(elapsed)
                reference.append(await sdk.request(api.requests[-1]))
            for _ in range(sessions):
                _, result = await _timed_chat(d)
                for n in range(2, length + 1):
                    elapsed, _ = await _timed_chat(d, sessionId=result["sessionId"])
                    if n > length - LATE:
                        late.append(elapsed)
                        sdk_late.append(await sdk.request(api.requests[-1]))
                        _, fresh = await _timed_chat(d)  # interleaved: a new session's second chat
                        elapsed, _ = await _timed_chat(d, sessionId=fresh["sessionId"])
                        agent.append(elapsed)
                        reference.append(await sdk.request(api.requests[-1]))
    finally:
        await sdk.close()
        api.stop()
    over = [a - r for a, r in zip(agent, reference)]
    grown = median(late) - median(agent)
    sdk_ratio = median(sdk_late) / median(reference)
    return [
        recorded(Row("text-only chat (2nd of a session): chat answered, minus the same request by the SDK alone",
                     f"{median(over) * 1000:+.1f} ms (p99 {p99(over) * 1000:+.1f}); chat {ms(agent)}",
                     f"SDK {ms(reference)}", None, "", None)),
        Row(f"chat {length} of one session, vs chat 2 of a new one (short text replies)",
            f"{ms(late)}, {grown * 1000:+.1f} ms",
            f"{ms(agent)}; the SDK alone, same requests: {ms(sdk_late)} vs {ms(reference)}, {sdk_ratio:.2f}×",
            median(late) / median(agent), f"≤ +{NOTICED * 1000:.0f} ms", grown <= NOTICED),
    ]
