"""The SDK alone, warm: a script that makes one streamed request (`messages.stream`, every event consumed, as a
plain SDK user does) per line it reads, timed from the benchmark's side as an LSP request is."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Optional

from tests.fakes.messages_api import FakeMessagesAPI

SDK_SERVER = """
import asyncio, json, sys
async def main():
    import anthropic
    client = anthropic.AsyncAnthropic(base_url=sys.argv[1], api_key="bench", max_retries=0)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        body = json.loads(line)
        body.pop("stream", None)
        async with client.messages.stream(**body) as stream:
            async for event in stream:
                pass
        print("done", flush=True)
asyncio.run(main())
"""


class SdkAlone:
    """A warm script that makes one streamed request per line it reads (a request body as JSON)."""

    async def start(self, api: FakeMessagesAPI, env: dict[str, str]) -> "SdkAlone":
        self.api = api
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", SDK_SERVER, api.base_url, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, env=env)
        return self

    async def request(self, body: dict, reply: Optional[dict] = None) -> float:
        """Line sent → "done" read: the request made (the fake answers `reply`, a short text by default) and its
        stream consumed."""
        self.api.add(reply or {"content": [{"type": "text", "text": "Hello there."}]})
        line = json.dumps(body).encode() + b"\n"
        started = self.sent_at = time.perf_counter()
        self.process.stdin.write(line)
        answer = await self.process.stdout.readline()
        elapsed = time.perf_counter() - started
        if answer.strip() != b"done":
            raise RuntimeError(f"the SDK script failed: {answer!r}")
        return elapsed

    async def close(self) -> None:
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
