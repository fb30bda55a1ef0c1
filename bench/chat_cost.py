"""What a short text-only chat costs over the model request itself, and how that grows with a session's length.

One agent-lsp server with the fake Messages API. Each sample of agent-lsp is `agent/chat` sent → answered by an
LSP client; each sample of the reference is one line sent → answered to a warm script that makes the same
streamed request with the SDK alone (`messages.stream`, the body agent-lsp sent just before: the same system
prompt, tools and messages), so the difference is agent-lsp's own cost per chat. agent-lsp sends that body made
once per message through the SDK's `post`; the script, as a plain SDK user, lets `messages.stream` copy and encode
it on every request.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.figures import HELLO, Driven, Row, env_for, median, ms, p99
from bench.sdk_alone import SdkAlone
from tests.fakes.messages_api import FakeMessagesAPI

LATE = 5
"""How many of a grown session's last chats are timed."""


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
    over_ms = median(over) * 1000
    ratio = median(late) / median(agent)
    sdk_ratio = median(sdk_late) / median(reference)
    own_late = median([a - r for a, r in zip(late, sdk_late)]) * 1000
    grown = Row(f"chat {length} of one session, vs chat 2 of a new one (short text replies)", ms(late),
                f"{ms(agent)}; the SDK alone, same requests: {ms(sdk_late)} vs {ms(reference)}, {sdk_ratio:.2f}×",
                ratio, "≤ 1.20×", ratio <= 1.2)
    if not grown.met:
        grown.why = (f"agent-lsp's own part is {over_ms:+.1f} ms at chat 2 and {own_late:+.1f} ms at chat {length} "
                     f"(its body is made once per message); the rest grows in the request's round trip, which the "
                     f"SDK alone makes too: {sdk_ratio:.2f}× on the same two requests")
    return [
        Row("text-only chat (2nd of a session): chat answered, minus the same request by the SDK alone",
            f"+{over_ms:.1f} ms (p99 +{p99(over) * 1000:.1f}); chat {ms(agent)}", f"SDK {ms(reference)}", None,
            "≤ 5 ms", over_ms <= 5),
        grown,
    ]
